// test_tokenizer.c - the SentencePiece-BPE vocabulary and tokenizer against llama.cpp's own
// outputs: test-tokenizer-0's .inp/.out vectors, llama-tokenize ids for two vocabularies
// (reference/tokenizer.json), llama-perplexity's token counts, round trips on text and on
// random bytes, worst-case input sizes, and vocabulary validation on synthetic files.
#include "formats/gguf.h"
#include "helpers/helpers.h"
#include "helpers/vocab_test.h"
#include "runtime/text/vocab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// ---------------------------------------------------------------------------------------------
// Helpers

static void assert_ids(const int32_t *got, size_t n_got, json_object *want, const char *what) {
    size_t n = json_object_array_length(want);
    cr_assert_eq(n_got, n, "%s: %zu tokens, expected %zu", what, n_got, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], json_object_get_int(mt_jidx(want, i)), "%s: token %zu is %d, not %d",
                     what, i, got[i], json_object_get_int(mt_jidx(want, i)));
}

static size_t hex_decode(const char *hex, char *out) {
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        cr_assert_eq(sscanf(hex + 2 * i, "%2x", &b), 1);
        out[i] = (char)b;
    }
    return n;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { // xorshift64*
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// ---------------------------------------------------------------------------------------------
// llama.cpp's test-tokenizer-0 vectors

// test-tokenizer-0 tokenizes each string with add_special = false and parse_special = false.
Test(tokenizer, llama_spm_inp_out_all_46_cases) {
    mint_vocab *v = mt_vocab_load("ggml-vocab-llama-spm.gguf");
    size_t inp_len, out_len;
    char *inp = (char *)mt_read_file(mt_data_path("ggml-vocab-llama-spm.gguf.inp"), &inp_len);
    char *out = (char *)mt_read_file(mt_data_path("ggml-vocab-llama-spm.gguf.out"), &out_len);
    cr_assert(inp && out);
    const char *sep = "\n__ggml_vocab_test__\n";
    size_t sep_len = strlen(sep), n_cases = 0;
    char *p = inp, *line = out;
    for (char *end; (end = memmem(p, inp_len - (size_t)(p - inp), sep, sep_len));
         p = end + sep_len) {
        char *eol = strchr(line, '\n');
        cr_assert(eol, "the .out file has fewer lines than the .inp file has cases");
        *eol = '\0';
        size_t n;
        int32_t *ids = mt_vocab_tok(v, p, (size_t)(end - p), false, false, &n);
        size_t k = 0;
        for (char *q = line, *next; *q; q = next) {
            long want = strtol(q, &next, 10);
            if (next == q) break;
            cr_assert_lt(k, n, "case %zu: more ids expected than the %zu produced", n_cases, n);
            cr_assert_eq(ids[k], want, "case %zu '%.*s': token %zu is %d, expected %ld", n_cases,
                         (int)(end - p), p, k, ids[k], want);
            k++;
        }
        cr_assert_eq(k, n, "case %zu: %zu tokens, expected %zu", n_cases, n, k);
        free(ids);
        line = eol + 1;
        n_cases++;
    }
    cr_assert_eq(n_cases, 46);
    free(inp);
    free(out);
    mint_vocab_free(v);
}

// ---------------------------------------------------------------------------------------------
// llama-tokenize outputs (reference/tokenizer.json): ids with BOS, both parse_special settings,
// and the vocabulary pieces

static void check_reference_vocab(const char *file) {
    json_object *ref = mt_json_data("reference/tokenizer.json");
    mint_vocab *v = mt_vocab_load(file);
    json_object *info = mt_jget(mt_jget(ref, "vocabs"), file);
    cr_assert_eq(mint_vocab_n_tokens(v), json_object_get_int(mt_jget(info, "n_tokens")));
    json_object *cases = mt_jget(ref, "cases");
    size_t n_cases = json_object_array_length(cases);
    cr_assert_eq(n_cases, 20);
    for (size_t c = 0; c < n_cases; c++) {
        json_object *cs = mt_jidx(cases, c);
        const char *hex = json_object_get_string(mt_jget(cs, "utf8_hex"));
        char *text = malloc(strlen(hex) / 2 + 1);
        size_t len = hex_decode(hex, text);
        json_object *want = mt_jget(cs, file);
        size_t n;
        int32_t *ids = mt_vocab_tok(v, text, len, true, true, &n);
        assert_ids(ids, n, mt_jget(want, "parse_special"),
                   json_object_get_string(mt_jget(cs, "text")));
        free(ids);
        ids = mt_vocab_tok(v, text, len, true, false, &n);
        assert_ids(ids, n, mt_jget(want, "no_parse_special"),
                   json_object_get_string(mt_jget(cs, "text")));
        json_object *pieces = mt_jget(want, "pieces_no_parse_special");
        cr_assert_eq(json_object_array_length(pieces), n);
        for (size_t i = 0; i < n; i++) {
            size_t plen;
            const char *piece = mint_vocab_token_text(v, ids[i], &plen);
            const char *exp = json_object_get_string(mt_jidx(pieces, i));
            cr_assert(plen == strlen(exp) && memcmp(piece, exp, plen) == 0,
                      "case %zu token %zu: piece '%s', expected '%s'", c, i, piece, exp);
        }
        free(ids);
        free(text);
    }
    mint_vocab_free(v);
    json_object_put(ref);
}

Test(tokenizer, reference_llama_spm_32000) {
    check_reference_vocab("ggml-vocab-llama-spm.gguf");
}

Test(tokenizer, reference_stories260K_512) {
    check_reference_vocab("stories260K.gguf");
}

// llama-perplexity tokenizes each text once with BOS and parse_special off; the reference
// records the counts for stories260K's 512-token vocabulary (docs/tolerances.md 1.5).
Test(tokenizer, perplexity_texts_token_counts) {
    mint_vocab *v = mt_vocab_load("stories260K.gguf");
    const struct {
        const char *file;
        size_t tokens;
    } texts[] = {{"wiki.test.raw", 809290}, {"tinystories_val.txt", 393019}};
    for (size_t i = 0; i < 2; i++) {
        size_t len, n;
        char *text = (char *)mt_read_file(mt_data_path(texts[i].file), &len);
        cr_assert(text);
        double t0 = now();
        int32_t *ids = mt_vocab_tok(v, text, len, true, false, &n);
        double dt = now() - t0;
        cr_assert_eq(n, texts[i].tokens, "%s: %zu tokens, llama.cpp made %zu", texts[i].file, n,
                     texts[i].tokens);
        cr_assert_eq(ids[0], 1);
        cr_log_info("%s: %zu bytes -> %zu tokens in %.3f s", texts[i].file, len, n, dt);
        free(ids);
        free(text);
    }
    mint_vocab_free(v);
}

// ---------------------------------------------------------------------------------------------
// Vocabulary facts and decoding

Test(tokenizer, llama_spm_vocabulary_facts) {
    mint_vocab *v = mt_vocab_load("ggml-vocab-llama-spm.gguf");
    cr_assert_eq(mint_vocab_n_tokens(v), 32000);
    cr_assert_eq(mint_vocab_bos(v), 1);
    cr_assert_eq(mint_vocab_eos(v), 2);
    cr_assert_eq(mint_vocab_unk(v), 0);
    cr_assert_eq(mint_vocab_eot(v), -1);
    cr_assert(mint_vocab_add_bos(v) && !mint_vocab_add_eos(v) && mint_vocab_add_space_prefix(v));
    cr_assert_str_eq(mint_vocab_token_text(v, 1, NULL), "<s>");
    cr_assert_str_eq(mint_vocab_token_text(v, 13, NULL), "<0x0A>");
    cr_assert_str_eq(mint_vocab_token_text(v, 15043, NULL), "\xE2\x96\x81Hello");
    cr_assert_null(mint_vocab_token_text(v, 32000, NULL));
    cr_assert_null(mint_vocab_token_text(v, -1, NULL));
    cr_assert_eq(mint_vocab_token_attr(v, 0), MINT_TOKEN_ATTR_UNKNOWN);
    cr_assert_eq(mint_vocab_token_attr(v, 2), MINT_TOKEN_ATTR_CONTROL);
    cr_assert_eq(mint_vocab_token_attr(v, 3), MINT_TOKEN_ATTR_BYTE);
    cr_assert_eq(mint_vocab_token_attr(v, 15043), MINT_TOKEN_ATTR_NORMAL);
    cr_assert_eq(mint_vocab_token_score(v, 15043), -14784.0f);
    cr_assert_eq(mint_vocab_token_score(v, 29871), -1e9f);
    cr_assert(mint_vocab_is_eog(v, 2));
    cr_assert(!mint_vocab_is_eog(v, 1) && !mint_vocab_is_eog(v, 0) && !mint_vocab_is_eog(v, -5));
    cr_assert_eq(mint_vocab_find(v, "<0xFF>", 6), 258);
    cr_assert_eq(mint_vocab_find(v, "nope-not-a-token", 16), -1);
    mint_vocab_free(v);
}

Test(tokenizer, token_to_piece_by_type) {
    mint_vocab *v = mt_vocab_load("ggml-vocab-llama-spm.gguf");
    char buf[16];
    cr_assert_eq(mint_vocab_token_to_piece(v, 15043, false, 0, buf, sizeof buf), 6);
    cr_assert(memcmp(buf, " Hello", 6) == 0);
    cr_assert_eq(mint_vocab_token_to_piece(v, 15043, false, 1, buf, sizeof buf), 5);
    cr_assert(memcmp(buf, "Hello", 5) == 0);
    cr_assert_eq(mint_vocab_token_to_piece(v, 259, false, 5, buf, sizeof buf), 0); // "▁▁"
    cr_assert_eq(mint_vocab_token_to_piece(v, 259, false, 1, buf, sizeof buf), 1);
    cr_assert_eq(mint_vocab_token_to_piece(v, 13, false, 0, buf, sizeof buf), 1);
    cr_assert_eq(buf[0], '\n');
    cr_assert_eq(mint_vocab_token_to_piece(v, 3, false, 0, buf, sizeof buf), 1); // <0x00>
    cr_assert_eq(buf[0], '\0');
    cr_assert_eq(mint_vocab_token_to_piece(v, 258, false, 0, buf, sizeof buf), 1);
    cr_assert_eq((unsigned char)buf[0], 0xFF);
    cr_assert_eq(mint_vocab_token_to_piece(v, 2, false, 0, buf, sizeof buf), 0);
    cr_assert_eq(mint_vocab_token_to_piece(v, 2, true, 0, buf, sizeof buf), 4);
    cr_assert(memcmp(buf, "</s>", 4) == 0);
    cr_assert_eq(mint_vocab_token_to_piece(v, 0, true, 0, buf, sizeof buf), 5); // <unk>
    cr_assert_eq(mint_vocab_token_to_piece(v, 40000, true, 0, buf, sizeof buf), 0);
    // Too small: the length wanted comes back and nothing is written.
    memset(buf, 'x', sizeof buf);
    cr_assert_eq(mint_vocab_token_to_piece(v, 15043, false, 0, buf, 3), 6);
    cr_assert_eq(buf[0], 'x');
    mint_vocab_free(v);
}

// detokenize follows llama.cpp: the space prefix is removed from the first piece unless a
// leading BOS was removed (then the text keeps it), and control tokens need unparse_special.
Test(tokenizer, detokenize_leading_space_rules) {
    mint_vocab *v = mt_vocab_load("ggml-vocab-llama-spm.gguf");
    const int32_t with_bos[] = {1, 15043, 3186, 2};
    size_t len;
    char *s = mt_vocab_detok(v, with_bos + 1, 2, false, false, &len);
    cr_assert_str_eq(s, "Hello world");
    free(s);
    s = mt_vocab_detok(v, with_bos, 3, true, false, &len);
    cr_assert_str_eq(s, " Hello world");
    free(s);
    s = mt_vocab_detok(v, with_bos, 3, false, false,
                       &len); // BOS renders empty but still uses the strip
    cr_assert_str_eq(s, " Hello world");
    free(s);
    s = mt_vocab_detok(v, with_bos, 4, false, true, &len);
    cr_assert_str_eq(s, "<s> Hello world</s>");
    free(s);
    s = mt_vocab_detok(v, with_bos, 4, true, true, &len); // add_eos is false: the EOS stays
    cr_assert_str_eq(s, " Hello world</s>");
    free(s);
    const int32_t bad[] = {-3, 15043, 99999};
    s = mt_vocab_detok(v, bad, 3, false, false, &len);
    cr_assert_str_eq(s, " Hello");
    free(s);
    // A buffer too small gets whole pieces only and the full length comes back.
    char buf[8];
    cr_assert_eq(mint_vocab_detokenize(v, with_bos + 1, 2, false, false, buf, 8), 11);
    cr_assert(memcmp(buf, "Hello", 5) == 0);
    mint_vocab_free(v);
}

// ---------------------------------------------------------------------------------------------
// Round trips

static const char *const texts[] = {
    "Hello world",
    " Hello world",
    "   three leading spaces and trailing   ",
    "line one\nline two\r\n\ttabbed\n\n",
    "Once upon a time, there was a little girl named Lily.",
    ("Emoji: \xF0\x9F\xA6\x99\xF0\x9F\x94\xA5 CJK: \xE4\xBD\xA0\xE5\xA5\xBD "
     "\xE6\x97\xA5\xE6\x9C\xAC"),
    "Accents: caf\xC3\xA9 na\xC3\xAFve \xC3\x85ngstr\xC3\xB6m; Greek \xCE\xB1\xCE\xB2\xCE\xB3",
    "Numbers 1234567890 3.14159 -42 and punctuation !?.,;:'\"()[]{}<>@#$%^&*_+=~`|\\/",
    "The end.</s> Then <s>more</s>",
    "",
    " ",
    "\n",
};

// Without BOS, detokenize(tokenize(s)) == s for any text that does not itself contain U+2581
// (which the tokenizer cannot tell from an escaped space).
Test(tokenizer, round_trip_texts_both_vocabularies) {
    const char *files[] = {"ggml-vocab-llama-spm.gguf", "stories260K.gguf"};
    for (int f = 0; f < 2; f++) {
        mint_vocab *v = mt_vocab_load(files[f]);
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
            size_t n, len;
            int32_t *ids = mt_vocab_tok(v, texts[i], strlen(texts[i]), false, false, &n);
            char *s = mt_vocab_detok(v, ids, n, false, false, &len);
            cr_assert(len == strlen(texts[i]) && memcmp(s, texts[i], len) == 0,
                      "%s: '%s' came back as '%s'", files[f], texts[i], s);
            free(s);
            free(ids);
            // With BOS the text comes back with its space prefix, as in llama.cpp.
            ids = mt_vocab_tok(v, texts[i], strlen(texts[i]), true, false, &n);
            s = mt_vocab_detok(v, ids, n, true, false, &len);
            if (texts[i][0]) {
                cr_assert(len == strlen(texts[i]) + 1 && s[0] == ' ' &&
                              memcmp(s + 1, texts[i], len - 1) == 0,
                          "%s: '%s' came back as '%s'", files[f], texts[i], s);
            }
            free(s);
            free(ids);
        }
        mint_vocab_free(v);
    }
}

// What llama.cpp decodes a text back to (no BOS, no parse_special). Spaces are escaped to
// U+2581 before the text is cut into characters by lead byte, so an invalid lead byte (C0-FF)
// can swallow the first bytes of an escaped space; that character is no token and falls back
// to byte tokens, so those three bytes come back as E2 96 81 instead of a space. Every other
// byte comes back as it was. Returns a malloc'd buffer; *n_swallowed counts such spaces.
static char *expected_decode(const char *text, size_t len, size_t *out_len, size_t *n_swallowed) {
    char *esc = malloc(3 * len + 3);
    bool *from_space = calloc(3 * len + 3, 1); // byte starts an escaped space
    size_t n = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == 0 || text[i - 1] == ' ') {
            from_space[n] = true;
            memcpy(esc + n, "\xE2\x96\x81", 3);
            n += 3;
        } else {
            esc[n++] = text[i - 1];
        }
    }
    static const uint8_t utf8_len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    char *out = malloc(n + 1);
    size_t o = 0;
    *n_swallowed = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len[(unsigned char)esc[i] >> 4];
        if (k > n - i) k = n - i;
        if (from_space[i]) { // a whole escaped space: a token that decodes to ' '
            out[o++] = ' ';
        } else {
            for (size_t j = 0; j < k; j++) {
                if (from_space[i + j]) ++*n_swallowed;
                out[o++] = esc[i + j];
            }
        }
        i += k;
    }
    free(esc);
    free(from_space);
    *out_len = o - 1; // the first piece loses the prefix space
    memmove(out, out + 1, o - 1);
    return out;
}

// Random byte strings: invalid UTF-8, NULs, stray continuation bytes, truncated sequences,
// spaces and fragments of special tokens. Tokenizing never fails; without parse_special the
// text comes back exactly, except for the spaces swallowed by invalid lead bytes (see above).
Test(tokenizer, random_bytes_round_trip) {
    const char *files[] = {"ggml-vocab-llama-spm.gguf", "stories260K.gguf"};
    static const char *const bits[] = {"</s>",     "<s>",  "<unk>", " ",  "  ",     "\xE2\x96",
                                       "\xF0\x9F", "\xC3", "\x80",  "\0", "<0x41>", "the"};
    for (int f = 0; f < 2; f++) {
        mint_vocab *v = mt_vocab_load(files[f]);
        rng_state = 0x5EED0000u + (uint64_t)f;
        size_t n_cases = 3000, total_tokens = 0, n_exact = 0;
        for (size_t c = 0; c < n_cases; c++) {
            char text[200];
            size_t len = 0, target = rnd() % 120;
            while (len < target) {
                if (rnd() % 4 == 0) {
                    const char *b = bits[rnd() % 12];
                    size_t k = b[0] ? strlen(b) : 1;
                    memcpy(text + len, b, k);
                    len += k;
                } else {
                    text[len++] = (char)(rnd() & 0xFF);
                }
            }
            // U+2581 in the input would decode as a space: break such sequences up.
            for (size_t i = 0; i + 2 < len; i++)
                if (memcmp(text + i, "\xE2\x96\x81", 3) == 0) text[i + 2] = 'x';
            size_t n, out_len, want_len, swallowed;
            int32_t *ids = mt_vocab_tok(v, text, len, false, false, &n);
            char *s = mt_vocab_detok(v, ids, n, false, false, &out_len);
            char *want = expected_decode(text, len, &want_len, &swallowed);
            cr_assert(out_len == want_len && memcmp(s, want, want_len) == 0,
                      "%s case %zu: %zu bytes came back as %zu", files[f], c, want_len, out_len);
            if (swallowed == 0) {
                cr_assert(out_len == len && memcmp(s, text, len) == 0);
                n_exact++;
            }
            total_tokens += n;
            free(want);
            free(s);
            free(ids);
            ids = mt_vocab_tok(v, text, len, true, true, &n); // must not fail either
            cr_assert_geq(n, 1);
            free(ids);
        }
        cr_log_info("%s: %zu random cases (%zu without swallowed spaces, byte-exact), %zu tokens",
                    files[f], n_cases, n_exact, total_tokens);
        cr_assert_gt(n_exact, n_cases / 2);
        mint_vocab_free(v);
    }
}

// ---------------------------------------------------------------------------------------------
// Limits and worst cases

Test(tokenizer, small_buffer_reports_limit_and_count) {
    mint_vocab *v = mt_vocab_load("ggml-vocab-llama-spm.gguf");
    int32_t ids[2];
    size_t n = 0;
    mint_err err;
    cr_assert_eq(mint_vocab_tokenize(v, "Hello world", 11, true, false, ids, 2, &n, &err),
                 MINT_E_LIMIT);
    cr_assert_eq(n, 3);
    cr_assert_eq(err.code, MINT_E_LIMIT);
    cr_assert_eq(ids[0], 1);
    cr_assert_eq(ids[1], 15043);
    cr_assert_eq(mint_vocab_tokenize(v, NULL, 0, true, false, ids, 2, &n, &err), MINT_OK);
    cr_assert_eq(n, 1);
    cr_assert_eq(mint_vocab_tokenize(v, NULL, 0, false, false, NULL, 0, &n, &err), MINT_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(mint_vocab_tokenize(v, NULL, 5, false, false, ids, 2, &n, &err), MINT_E_ARG);
    mint_vocab_free(v);
}

// 1 MB inputs of the kinds that hurt naive BPE (one long run of a character merges into
// ever longer symbols; random bytes fall back to byte tokens) finish in well under a second;
// a quadratic tokenizer would take minutes.
Test(tokenizer, one_megabyte_inputs_are_fast, .timeout = MT_HANG(120)) {
    mint_vocab *v = mt_vocab_load("ggml-vocab-llama-spm.gguf");
    size_t len = 1 << 20;
    char *text = malloc(len);
    const char *kinds[] = {"spaces", "letter a", "random bytes", "words", "special tokens"};
    rng_state = 42;
    for (int k = 0; k < 5; k++) {
        for (size_t i = 0; i < len; i++) {
            switch (k) {
            case 0:
                text[i] = ' ';
                break;
            case 1:
                text[i] = 'a';
                break;
            case 2:
                text[i] = (char)(rnd() & 0xFF);
                break;
            case 3:
                text[i] = "the cat sat on a mat. "[i % 22];
                break;
            default:
                text[i] = "x</s>"[i % 5];
            }
        }
        for (size_t i = 0; i + 2 < len; i++) // no U+2581 in the input (see above)
            if (memcmp(text + i, "\xE2\x96\x81", 3) == 0) text[i + 2] = 'x';
        size_t n;
        double t0 = now();
        int32_t *ids = mt_vocab_tok(v, text, len, true, true, &n);
        double dt = now() - t0;
        cr_log_info("1 MiB of %s: %zu tokens in %.3f s", kinds[k], n, dt);
        cr_assert_lt(dt, 20.0, "1 MiB of %s took %.1f s", kinds[k], dt);
        if (k != 4) {
            size_t out_len, want_len, swallowed;
            char *s = mt_vocab_detok(v, ids, n, true, false, &out_len);
            char *want = expected_decode(text, len, &want_len, &swallowed);
            cr_assert(out_len == want_len + 1 && memcmp(s + 1, want, want_len) == 0);
            cr_assert(k == 2 || swallowed == 0);
            free(want);
            free(s);
        }
        free(ids);
    }
    free(text);
    mint_vocab_free(v);
}

// ---------------------------------------------------------------------------------------------
// Synthetic vocabularies: defaults and validation

typedef struct synth {
    mint_gguf_writer *w; // metadata being built
    uint8_t *image;      // written GGUF (kept alive while the file is open)
    mint_file *f;        // parsed file
} synth;

static void synth_tokens(synth *s, const char *const *tokens, size_t n) {
    mint_str *strs = calloc(n + 1, sizeof *strs);
    for (size_t i = 0; i < n; i++) strs[i] = (mint_str){tokens[i], strlen(tokens[i])};
    cr_assert_eq(mint_gguf_add_arr_str(s->w, "tokenizer.ggml.tokens", strs, n), MINT_OK);
    free(strs);
}

static synth synth_begin(const char *model) {
    synth s = {mint_gguf_writer_create(), NULL, NULL};
    if (model) cr_assert_eq(mint_gguf_add_str(s.w, "tokenizer.ggml.model", model), MINT_OK);
    return s;
}

// Writes and parses the file, then loads the vocabulary; returns the status.
static mint_status synth_load(synth *s, mint_vocab **v, mint_err *err) {
    size_t len;
    cr_assert_eq(mint_gguf_writer_write_mem(s->w, &s->image, &len, err), MINT_OK, "%s", err->msg);
    cr_assert_eq(mint_gguf_parse(s->image, len, "synthetic", &s->f, err), MINT_OK, "%s", err->msg);
    return mint_vocab_load(s->f, v, err);
}

static void synth_end(synth *s, mint_vocab *v) {
    mint_vocab_free(v);
    mint_file_close(s->f);
    free(s->image);
    mint_gguf_writer_free(s->w);
}

static const char *const tiny[] = {"<unk>", "<s>", "</s>", "a", "b", "\xE2\x96\x81", "ab"};

Test(vocab, defaults_when_keys_are_missing) {
    synth s = synth_begin("llama");
    synth_tokens(&s, tiny, 7);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_vocab_bos(v), 1);
    cr_assert_eq(mint_vocab_eos(v), 2);
    cr_assert_eq(mint_vocab_unk(v), 0);
    cr_assert(mint_vocab_add_bos(v) && !mint_vocab_add_eos(v) && mint_vocab_add_space_prefix(v));
    cr_assert_eq(mint_vocab_token_attr(v, 1), MINT_TOKEN_ATTR_NORMAL); // types missing
    cr_assert_eq(mint_vocab_token_score(v, 6), 0.0f);                  // scores missing
    // "</s>" is end-of-generation by its text, and is made CONTROL as llama.cpp does.
    cr_assert(mint_vocab_is_eog(v, 2));
    cr_assert_eq(mint_vocab_token_attr(v, 2), MINT_TOKEN_ATTR_NORMAL | MINT_TOKEN_ATTR_CONTROL);
    size_t n;
    int32_t *ids = mt_vocab_tok(v, "ab", 2, true, false, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(ids[1], 5); // "▁": no merge with "a" exists
    cr_assert_eq(ids[2], 6); // "ab"
    free(ids);
    // No byte tokens and 'c' is not a token: an error, not a crash.
    size_t need;
    cr_assert_eq(mint_vocab_tokenize(v, "c", 1, false, false, NULL, 0, &need, &err),
                 MINT_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "0x63"), "%s", err.msg);
    synth_end(&s, v);
}

Test(vocab, special_ids_keys_and_out_of_range) {
    synth s = synth_begin("llama");
    synth_tokens(&s, tiny, 7);
    mint_gguf_add_u32(s.w, "tokenizer.ggml.bos_token_id", 4);
    mint_gguf_add_u32(s.w, "tokenizer.ggml.eos_token_id", 4294967295u); // ignored: default kept
    mint_gguf_add_u32(s.w, "tokenizer.ggml.padding_token_id", 99);
    mint_gguf_add_bool(s.w, "tokenizer.ggml.add_eos_token", true);
    mint_gguf_add_bool(s.w, "tokenizer.ggml.add_space_prefix", false);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_vocab_bos(v), 4);
    cr_assert_eq(mint_vocab_eos(v), 2);
    size_t n;
    int32_t *ids = mt_vocab_tok(v, "ab", 2, true, false, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(ids[0], 4);
    cr_assert_eq(ids[1], 6);
    cr_assert_eq(ids[2], 2);
    free(ids);
    synth_end(&s, v);
}

Test(vocab, empty_tokens_are_renamed) {
    const char *toks[] = {"<unk>", "", "x", ""};
    synth s = synth_begin("llama");
    synth_tokens(&s, toks, 4);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
    cr_assert_str_eq(mint_vocab_token_text(v, 1, NULL), "[EMPTY_1]");
    cr_assert_str_eq(mint_vocab_token_text(v, 3, NULL), "[EMPTY_3]");
    cr_assert_eq(mint_vocab_find(v, "", 0), -1);
    synth_end(&s, v);
}

Test(vocab, rejects_other_models) {
    synth s = synth_begin("bert"); // WordPiece ("gpt2" is byte-level BPE: tests/test_vocabs.c)
    synth_tokens(&s, tiny, 7);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_UNSUPPORTED);
    cr_assert_null(v);
    cr_assert(strstr(err.msg, "'bert'") && strstr(err.msg, "tokenizer.ggml.model"), "%s", err.msg);
    synth_end(&s, v);
}

Test(vocab, rejects_missing_model_and_tokens) {
    synth s = synth_begin(NULL);
    synth_tokens(&s, tiny, 7);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_NOT_FOUND);
    cr_assert(strstr(err.msg, "tokenizer.ggml.model"), "%s", err.msg);
    synth_end(&s, v);
    s = synth_begin("llama");
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_NOT_FOUND);
    cr_assert(strstr(err.msg, "tokenizer.ggml.tokens"), "%s", err.msg);
    synth_end(&s, v);
}

Test(vocab, rejects_empty_and_duplicate_tokens) {
    synth s = synth_begin("llama");
    synth_tokens(&s, tiny, 0);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "empty"), "%s", err.msg);
    synth_end(&s, v);
    const char *dup[] = {"<unk>", "a\nb", "c", "a\nb"};
    s = synth_begin("llama");
    synth_tokens(&s, dup, 4);
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "token 3 'a\\x0Ab' duplicates token 1"), "%s", err.msg);
    synth_end(&s, v);
}

Test(vocab, rejects_mismatched_scores_and_types) {
    float scores[6] = {0};
    int32_t types[7] = {2, 3, 3, 1, 1, 1, 1};
    synth s = synth_begin("llama");
    synth_tokens(&s, tiny, 7);
    mint_gguf_add_arr(s.w, "tokenizer.ggml.scores", MINT_VAL_F32, scores, 6);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "tokenizer.ggml.scores") && strstr(err.msg, "6 entries"), "%s",
              err.msg);
    synth_end(&s, v);
    s = synth_begin("llama");
    synth_tokens(&s, tiny, 7);
    mint_gguf_add_arr(s.w, "tokenizer.ggml.token_type", MINT_VAL_F32, types, 7);
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_TYPE);
    cr_assert(strstr(err.msg, "tokenizer.ggml.token_type"), "%s", err.msg);
    synth_end(&s, v);
    s = synth_begin("llama");
    synth_tokens(&s, tiny, 7);
    mint_gguf_add_str(s.w, "tokenizer.ggml.bos_token_id", "1");
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_TYPE);
    synth_end(&s, v);
}

Test(vocab, add_bos_without_a_bos_token) {
    const char *one[] = {"<unk>"};
    synth s = synth_begin("llama");
    synth_tokens(&s, one, 1);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "add_bos_token"), "%s", err.msg);
    synth_end(&s, v);
    s = synth_begin("llama");
    synth_tokens(&s, one, 1);
    mint_gguf_add_bool(s.w, "tokenizer.ggml.add_bos_token", false);
    cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_vocab_bos(v), -1);
    cr_assert_eq(mint_vocab_eos(v), -1);
    synth_end(&s, v);
}

// USER_DEFINED texts are split out even without parse_special; the text after any special
// token gets the space prefix; phi-3 models make special tokens eat whitespace on their right.
Test(vocab, user_defined_tokens_and_rstrip) {
    const char *toks[] = {"<unk>", "<s>", "</s>",          "<|user|>",       "\xE2\x96\x81",
                          "h",     "i",   "\xE2\x96\x81h", "\xE2\x96\x81hi", "<|end|>"};
    int32_t types[] = {2, 3, 3, 4, 1, 1, 1, 1, 1, 3};
    float scores[] = {0, 0, 0, 0, -1, -2, -3, -4, -5, 0};
    for (int phi3 = 0; phi3 < 2; phi3++) {
        synth s = synth_begin("llama");
        synth_tokens(&s, toks, 10);
        mint_gguf_add_arr(s.w, "tokenizer.ggml.token_type", MINT_VAL_I32, types, 10);
        mint_gguf_add_arr(s.w, "tokenizer.ggml.scores", MINT_VAL_F32, scores, 10);
        if (phi3) mint_gguf_add_str(s.w, "general.name", "Phi-3-mini");
        mint_vocab *v = NULL;
        mint_err err;
        cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
        cr_assert(mint_vocab_is_eog(v, 9)); // <|end|> by its text
        cr_assert_eq(mint_vocab_eot(v), 9);
        size_t n;
        int32_t *ids = mt_vocab_tok(v, "hi<|user|>hi", 12, false, false, &n);
        // <|user|> is split out without parse_special, and the text after it gets a space.
        cr_assert_eq(n, 3);
        cr_assert_eq(ids[0], 8); // "▁hi"
        cr_assert_eq(ids[1], 3); // <|user|>
        cr_assert_eq(ids[2], 8);
        free(ids);
        const char *text = "hi<|user|>  hi<|end|> hi";
        ids = mt_vocab_tok(v, text, strlen(text), false, true, &n);
        if (!phi3) {
            // "▁hi" <|user|> "▁" "▁" "▁hi" <|end|> "▁" "▁hi"
            const int32_t want[] = {8, 3, 4, 4, 8, 9, 4, 8};
            cr_assert_eq(n, 8);
            for (size_t i = 0; i < n; i++) cr_assert_eq(ids[i], want[i], "token %zu", i);
        } else {
            // RSTRIP eats the spaces after each special token: "▁hi" <|user|> "▁hi" ...
            const int32_t want[] = {8, 3, 8, 9, 8};
            cr_assert_eq(n, 5);
            for (size_t i = 0; i < n; i++) cr_assert_eq(ids[i], want[i], "token %zu", i);
        }
        free(ids);
        synth_end(&s, v);
    }
}

// BPE word by word (mint_vocab.space_runs_lead) must give exactly the tokens of BPE over the
// whole fragment, as llama.cpp runs it. Both vocabularies qualify; turning the flag off runs
// the whole-fragment path on the same texts.
Test(tokenizer, word_by_word_bpe_equals_whole_fragment_bpe) {
    const char *files[] = {"ggml-vocab-llama-spm.gguf", "stories260K.gguf"};
    for (int f = 0; f < 2; f++) {
        mint_vocab *v = mt_vocab_load(files[f]);
        cr_assert(v->space_runs_lead, "%s", files[f]);
        size_t len;
        char *text = (char *)mt_read_file(mt_data_path("wiki.test.raw"), &len);
        len = 300000; // a quarter of the file keeps the whole-fragment run quick
        rng_state = 7;
        for (size_t i = 0; i < 2000; i++) text[rnd() % len] = (char)(rnd() & 0xFF); // noise
        size_t n_words, n_whole;
        int32_t *words = mt_vocab_tok(v, text, len, true, true, &n_words);
        v->space_runs_lead = false;
        int32_t *whole = mt_vocab_tok(v, text, len, true, true, &n_whole);
        v->space_runs_lead = true;
        cr_assert_eq(n_words, n_whole, "%s: %zu tokens vs %zu", files[f], n_words, n_whole);
        cr_assert(memcmp(words, whole, n_words * sizeof *words) == 0, "%s", files[f]);
        free(words);
        free(whole);
        free(text);
        mint_vocab_free(v);
    }
}

// A vocabulary with a token that has "▁" inside ("a▁b") must merge across words.
Test(vocab, inner_space_token_disables_word_by_word_bpe) {
    const char *toks[] = {"<unk>",
                          "<s>",
                          "</s>",
                          "a",
                          "b",
                          "\xE2\x96\x81",
                          "a\xE2\x96\x81",
                          ("a\xE2\x96\x81"
                           "b")};
    float scores[] = {0, 0, 0, -1, -1, -1, -2, -3};
    synth s = synth_begin("llama");
    synth_tokens(&s, toks, 8);
    mint_gguf_add_arr(s.w, "tokenizer.ggml.scores", MINT_VAL_F32, scores, 8);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
    cr_assert(!v->space_runs_lead);
    size_t n;
    int32_t *ids = mt_vocab_tok(v, "a b", 3, false, false, &n); // "▁", "a▁b"
    cr_assert_eq(n, 2);
    cr_assert_eq(ids[0], 5);
    cr_assert_eq(ids[1], 7);
    free(ids);
    synth_end(&s, v);
}
