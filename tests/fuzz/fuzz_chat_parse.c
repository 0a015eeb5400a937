// fuzz_chat_parse.c - reading a model's output back (mint_chat_parse, mint_chat_diff) on
// arbitrary bytes.
//
// Input: byte 0 picks the format (modulo the number of formats), byte 1 the options (bit 0:
// reasoning left open by the prompt, bit 1: --reasoning-format none, bit 2: tools off, bit 3:
// the request's tools given); the rest is the model's text, NUL bytes and all.
//
// Checked: a final parse always succeeds, and every call it reports has a name and arguments that
// are one strict JSON object (what a server passes on as OpenAI's arguments); partial parses at
// many cuts succeed with lengths in bounds; mint_chat_diff between two successive parses either
// accepts them or refuses (never crashes), and when it accepts, its deltas point inside the newer
// parse; a parse of the same text twice is the same.
#include "fuzz_util.h"
#include "mint.h"

#include <json-c/json.h>
#include <string.h>

static const char *const TOOLS =
    "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": "
    "\"object\", \"properties\": {\"s\": {\"type\": \"string\"}, \"n\": {\"type\": "
    "\"integer\"}}}}}]";

static void check_parsed(const mint_chat_parsed *p, bool final) {
    FUZZ_CHECK(p->content && p->reasoning_content);
    FUZZ_CHECK(p->content[p->content_len] == '\0' &&
               p->reasoning_content[p->reasoning_len] == '\0');
    for (size_t i = 0; i < p->n_tool_calls; i++) {
        const mint_chat_tool_call *c = &p->tool_calls[i];
        FUZZ_CHECK(c->id && c->name && c->arguments && c->name[0]);
        if (!final) continue;
        json_tokener *tok = json_tokener_new_ex(1024); // mint reads 512 levels
        FUZZ_CHECK(tok);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        int n = (int)strlen(c->arguments);
        json_object *o = json_tokener_parse_ex(tok, c->arguments, n);
        bool whole = o && json_tokener_get_error(tok) == json_tokener_success &&
                     json_object_is_type(o, json_type_object);
        // Nothing after the object but whitespace.
        for (size_t k = json_tokener_get_parse_end(tok); whole && k < (size_t)n; k++)
            whole = c->arguments[k] == ' ' || c->arguments[k] == '\n' || c->arguments[k] == '\t' ||
                    c->arguments[k] == '\r';
        FUZZ_CHECK(whole);
        json_object_put(o);
        json_tokener_free(tok);
    }
}

static bool same_parse(const mint_chat_parsed *a, const mint_chat_parsed *b) {
    if (a->content_len != b->content_len || a->reasoning_len != b->reasoning_len ||
        a->n_tool_calls != b->n_tool_calls || memcmp(a->content, b->content, a->content_len) ||
        memcmp(a->reasoning_content, b->reasoning_content, a->reasoning_len))
        return false;
    for (size_t i = 0; i < a->n_tool_calls; i++)
        if (strcmp(a->tool_calls[i].name, b->tool_calls[i].name) ||
            strcmp(a->tool_calls[i].arguments, b->tool_calls[i].arguments) ||
            strcmp(a->tool_calls[i].id, b->tool_calls[i].id))
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    mint_chat_format f = (mint_chat_format)(data[0] % MINT_CHAT_FORMAT_COUNT);
    mint_chat_parse_opts po = mint_chat_default_parse_opts();
    po.reasoning_open = data[1] & 1;
    po.reasoning_format = data[1] & 2 ? MINT_REASONING_FORMAT_NONE : MINT_REASONING_FORMAT_AUTO;
    po.parse_tools = !(data[1] & 4);
    po.tools = data[1] & 8 ? TOOLS : NULL;
    const char *text = (const char *)data + 2;
    size_t n = size - 2;

    mint_chat_parsed whole, again;
    FUZZ_CHECK(mint_chat_parse(f, text, n, false, &po, &whole, NULL) == MINT_OK);
    check_parsed(&whole, true);
    FUZZ_CHECK(mint_chat_parse(f, text, n, false, &po, &again, NULL) == MINT_OK);
    FUZZ_CHECK(same_parse(&whole, &again));
    mint_chat_parsed_free(&again);

    // Partial parses at up to 64 cuts (every byte of a short text), each diffed with the one
    // before, the final parse last.
    size_t step = n <= 64 ? 1 : n / 64;
    mint_chat_parsed prev = {0};
    bool have = false;
    for (size_t k = 0; k <= n; k += step) {
        mint_chat_parsed cur;
        FUZZ_CHECK(mint_chat_parse(f, text, k, true, &po, &cur, NULL) == MINT_OK);
        check_parsed(&cur, false);
        FUZZ_CHECK(cur.content_len <= 8 * k + 64 && cur.reasoning_len <= k + 64);
        mint_chat_delta d[16];
        size_t nd = 0;
        mint_status st = mint_chat_diff(have ? &prev : NULL, &cur, d, 16, &nd, NULL);
        FUZZ_CHECK(st == MINT_OK || st == MINT_E_ARG || st == MINT_E_LIMIT);
        for (size_t i = 0; st == MINT_OK && i < nd; i++) {
            if (d[i].kind == MINT_DELTA_CONTENT)
                FUZZ_CHECK(d[i].text >= cur.content &&
                           d[i].text + d[i].len == cur.content + cur.content_len);
            if (d[i].kind == MINT_DELTA_TOOL_CALL) FUZZ_CHECK(d[i].tool_index < cur.n_tool_calls);
        }
        if (have) mint_chat_parsed_free(&prev);
        prev = cur;
        have = true;
    }
    if (have) {
        mint_chat_delta d[16];
        size_t nd = 0;
        mint_status st = mint_chat_diff(&prev, &whole, d, 16, &nd, NULL);
        FUZZ_CHECK(st == MINT_OK || st == MINT_E_ARG || st == MINT_E_LIMIT);
        mint_chat_parsed_free(&prev);
    }
    mint_chat_parsed_free(&whole);
    return 0;
}
