// fuzz_responses.c - mint-serve's translation of OpenAI Responses API bodies into OpenAI chat
// bodies (tools/common/responses.c) on arbitrary bytes; the checks are fuzz_translate.h's.
#include "fuzz_translate.h"
#include "responses.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_translate(responses_to_openai, data, size);
    return 0;
}
