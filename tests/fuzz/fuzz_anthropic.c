// fuzz_anthropic.c - mint-serve's translation of Anthropic's Messages API bodies into OpenAI chat
// bodies (tools/common/anthropic.c) on arbitrary bytes; the checks are fuzz_translate.h's.
#include "anthropic.h"
#include "fuzz_translate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_translate(anthropic_to_openai, data, size);
    return 0;
}
