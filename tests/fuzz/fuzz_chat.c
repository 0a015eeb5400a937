// fuzz_chat.c - chat template detection and rendering on arbitrary bytes.
//
// The input is NUL-separated fields: field 0 is a Jinja template for mint_chat_detect, and also a
// template name for mint_chat_from_name; the fields after it are (role, content) pairs. A role of
// exactly one byte stands for "system", "user", "assistant" or no role (NULL) by its low two
// bits, so short inputs reach every branch; longer roles are taken as they are.
//
// Every template (the three known ones, and UNKNOWN) renders the messages with and without the
// generation prompt. Checked: the length reported is the length written when the buffer is large
// enough; a short buffer holds a NUL-terminated prefix of the full text; UNKNOWN renders
// nothing; and for every cut k, mint_chat_render_range(k) is a suffix of the full rendering
// (chat.h's contract: full = head + tail), for one known template per input. mint_chat_render
// renders the preset's Jinja source with the Jinja engine: whenever that succeeds it must equal
// the direct C rendering (it fails, giving 0, where jinja2 fails too: a NULL role or content,
// Llama-2 roles that do not alternate).
#include "fuzz_util.h"
#include "mint.h"
#include "runtime/text/chat.h"

#include <stdbool.h>
#include <string.h>

enum { MAX_FIELDS = 65 }; // the template and up to 32 messages

static char *render(mint_chat_template t, const mint_chat_msg *m, size_t n, size_t from,
                    bool add_assistant, size_t *len) {
    *len = mint_chat_render_range(t, m, n, from, add_assistant, "<s>", "</s>", NULL, 0);
    char *buf = malloc(*len + 1);
    FUZZ_CHECK(buf);
    size_t again =
        mint_chat_render_range(t, m, n, from, add_assistant, "<s>", "</s>", buf, *len + 1);
    FUZZ_CHECK(again == *len && buf[*len] == '\0');
    return buf;
}

static void check_template(mint_chat_template t, const mint_chat_msg *m, size_t n,
                           bool add_assistant, bool cuts) {
    size_t len;
    char *full = render(t, m, n, 0, add_assistant, &len);
    if (t == MINT_CHAT_UNKNOWN) FUZZ_CHECK(len == 0);
    // mint_chat_render is the range from 0.
    char small[16];
    size_t want = mint_chat_render(t, m, n, add_assistant, "<s>", "</s>", small, sizeof small);
    FUZZ_CHECK(want == len || want == 0);
    if (want == len) {
        size_t shown = len < sizeof small ? len : sizeof small - 1;
        FUZZ_CHECK(memcmp(small, full, shown) == 0 && small[shown] == '\0');
        // A short heap buffer: a prefix and a NUL, nothing past it.
        size_t cap = len / 2 + 1;
        char *part = malloc(cap);
        FUZZ_CHECK(part);
        FUZZ_CHECK(mint_chat_render(t, m, n, add_assistant, "<s>", "</s>", part, cap) == len);
        FUZZ_CHECK(memcmp(part, full, cap - 1) == 0 && part[cap - 1] == '\0');
        free(part);
    }
    // Every cut renders a suffix of the whole.
    for (size_t from = 1; cuts && from <= n + 1; from++) {
        size_t tail_len;
        char *tail = render(t, m, n, from, add_assistant, &tail_len);
        FUZZ_CHECK(tail_len <= len);
        FUZZ_CHECK(memcmp(full + (len - tail_len), tail, tail_len) == 0);
        free(tail);
    }
    free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_fields in;
    FUZZ_CHECK(fuzz_split(data, size, MAX_FIELDS, &in));
    const char *jinja = in.field[0];
    mint_chat_template detected = mint_chat_detect(jinja);
    FUZZ_CHECK(detected >= MINT_CHAT_UNKNOWN && detected <= MINT_CHAT_CHATML);
    FUZZ_CHECK(mint_chat_name(detected) != NULL);
    mint_chat_template named = mint_chat_from_name(jinja);
    if (named != MINT_CHAT_UNKNOWN) FUZZ_CHECK(strcmp(mint_chat_name(named), jinja) == 0);

    static const char *const roles[] = {"system", "user", "assistant", NULL};
    mint_chat_msg msgs[MAX_FIELDS / 2];
    size_t n = 0;
    for (size_t i = 1; i < in.n && n < MAX_FIELDS / 2; i += 2) {
        const char *role = in.field[i];
        if (in.len[i] == 1) role = roles[(unsigned char)role[0] & 3];
        // A last field without its pair is a message with no content (NULL).
        msgs[n].role = role;
        msgs[n].content = i + 1 < in.n ? in.field[i + 1] : NULL;
        n++;
    }
    // Every template renders; the cuts (n + 1 more renderings each) are checked for one of the
    // known ones per input, to keep the harness fast.
    int cut_template = MINT_CHAT_ZEPHYR + (int)(size % 3);
    for (int t = MINT_CHAT_UNKNOWN; t <= MINT_CHAT_CHATML; t++)
        for (int add = 0; add < 2; add++)
            check_template((mint_chat_template)t, msgs, n, add, t == cut_template);
    // No messages at all, and a NULL list.
    FUZZ_CHECK(mint_chat_render(detected, NULL, 3, true, NULL, NULL, NULL, 0) ==
               mint_chat_render(detected, msgs, 0, true, NULL, NULL, NULL, 0));
    FUZZ_CHECK(mint_chat_render(MINT_CHAT_UNKNOWN, msgs, n, true, NULL, NULL, NULL, 0) == 0);
    fuzz_fields_free(&in);
    return 0;
}
