// handlers_tokens.c - /tokenize and /detokenize (llama-server's shapes): text to token ids (with
// their pieces on request) and back.
#include "handlers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A text's token ids in a malloc'd array (*ids, *n): most texts need at most a token per byte
// (+ BOS), but byte fallback and BPE can need more; the library then says how many, and the call
// is made again with that room.
mint_status serve_tokenize(const mint_model *m, const char *text, size_t len, bool add_special,
                           bool special, int32_t **ids, size_t *n, mint_err *err) {
    size_t cap = len + 8;
    *ids = NULL;
    *n = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        int32_t *buf = malloc(cap * sizeof *buf);
        if (!buf) {
            snprintf(err->msg, sizeof err->msg, "out of memory");
            return err->code = MINT_E_NOMEM;
        }
        mint_status st = mint_tokenize(m, text, len, add_special, special, buf, cap, n, err);
        if (st == MINT_OK) {
            *ids = buf;
            return MINT_OK;
        }
        free(buf);
        if (st != MINT_E_LIMIT || *n <= cap) return st;
        cap = *n;
    }
    return err->code;
}

enum MHD_Result handle_tokenize(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    enum MHD_Result ret;
    json_object *o = reply_body_object(c, r->body, r->len, &ret), *content, *v;
    if (!o) return ret;
    if (!json_object_object_get_ex(o, "content", &content) ||
        !json_object_is_type(content, json_type_string)) {
        json_object_put(o);
        return reply_error(c, 400, "invalid_request_error", "content",
                           "'content' must be a string");
    }
    const bool add_special =
        json_object_object_get_ex(o, "add_special", &v) && json_object_get_boolean(v);
    const bool pieces =
        json_object_object_get_ex(o, "with_pieces", &v) && json_object_get_boolean(v);
    const size_t n = (size_t)json_object_get_string_len(content);
    int32_t *ids;
    size_t k = 0;
    mint_err err;
    const mint_model *m = sched_model(h->e);
    if (serve_tokenize(m, json_object_get_string(content), n, add_special, false, &ids, &k, &err) !=
        MINT_OK) {
        json_object_put(o);
        return reply_error(c, 400, "invalid_request_error", "content", "%s", err.msg);
    }
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < k; i++) {
        if (!pieces) {
            json_object_array_add(arr, json_object_new_int(ids[i]));
            continue;
        }
        char buf[256];
        size_t pn = mint_token_to_piece(m, ids[i], true, buf, sizeof buf);
        json_object *t = json_object_new_object();
        json_object_object_add(t, "id", json_object_new_int(ids[i]));
        json_object_object_add(t, "piece", reply_utf8_string(buf, pn < sizeof buf ? pn : 0));
        json_object_array_add(arr, t);
    }
    free(ids);
    json_object_put(o);
    json_object *out = json_object_new_object();
    json_object_object_add(out, "tokens", arr);
    return reply_json(c, 200, out);
}

enum MHD_Result handle_detokenize(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    enum MHD_Result ret;
    json_object *o = reply_body_object(c, r->body, r->len, &ret), *toks;
    if (!o) return ret;
    if (!json_object_object_get_ex(o, "tokens", &toks) ||
        !json_object_is_type(toks, json_type_array)) {
        json_object_put(o);
        return reply_error(c, 400, "invalid_request_error", "tokens",
                           "'tokens' must be a list of token ids");
    }
    const mint_model *m = sched_model(h->e);
    char *s = NULL;
    size_t sl = 0;
    FILE *f = open_memstream(&s, &sl);
    bool ok = f != NULL;
    // A vocabulary that puts a space before the text (SentencePiece's "▁") gives the first
    // word's piece a space the text did not have: dropped, so that /detokenize undoes /tokenize
    // (as llama.cpp does).
    bool strip_space = h->space_prefix;
    for (size_t i = 0; ok && i < json_object_array_length(toks); i++) {
        json_object *t = json_object_array_get_idx(toks, i);
        const int64_t id = json_object_get_int64(t);
        if (!json_object_is_type(t, json_type_int) || id < 0 || id >= h->n_vocab) {
            fclose(f);
            free(s);
            json_object_put(o);
            return reply_error(c, 400, "invalid_request_error", "tokens",
                               "token %zu is not an id in 0..%d", i, h->n_vocab - 1);
        }
        char buf[256];
        size_t pn = mint_token_to_piece(m, (int32_t)id, false, buf, sizeof buf);
        pn = pn < sizeof buf ? pn : 0;
        const size_t skip = strip_space && pn > 0 && buf[0] == ' ';
        if (pn > 0) strip_space = false;
        fwrite(buf + skip, 1, pn - skip, f);
    }
    if (f) fclose(f);
    json_object *out = json_object_new_object();
    json_object_object_add(out, "content", reply_utf8_string(s ? s : "", sl));
    free(s);
    json_object_put(o);
    return reply_json(c, 200, out);
}
