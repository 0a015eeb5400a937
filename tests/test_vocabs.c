// test_vocabs.c - every vocabulary of MINT_TEST_DATA's vocab/ folder (and the Llama 2 one)
// against llama.cpp's test-tokenizer-0 vectors, plus byte-level BPE's own rules on small
// synthetic vocabularies: the byte map, pre-tokenizer table, flags, special tokens, invalid
// UTF-8, detokenize's clean-up, and the one-line errors for vocabularies mint cannot honour.
//
// test-tokenizer-0 reads NAME.gguf.inp (strings separated by "\n__ggml_vocab_test__\n") and
// NAME.gguf.out (one line of space-separated ids per string) and tokenizes each string with
// add_special = false and parse_special = false: no BOS. Its detokenization is llama_detokenize
// with remove_special = false and unparse_special = true; it gives the input back except where
// the vocabulary cleans spaces (clean_spaces: " ?" " !" " ." " ," " 's" ... lose the space),
// so that is the rule checked here: detokenize(expected ids) = input, cleaned when the
// vocabulary cleans.
#include "formats/gguf.h"
#include "helpers/helpers.h"
#include "helpers/vocab_test.h"
#include "runtime/text/bpe.h"
#include "runtime/text/byte_unicode.h"
#include "runtime/text/pretokenize.h"
#include "runtime/text/vocab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Helpers

static void assert_ids(const int32_t *got, size_t n, const int32_t *want, size_t n_want,
                       const char *what) {
    cr_assert_eq(n, n_want, "%s: %zu tokens, expected %zu", what, n, n_want);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "%s: token %zu is %d, expected %d", what, i, got[i], want[i]);
}

// ---------------------------------------------------------------------------------------------
// llama.cpp's vectors

typedef struct vec_result {
    int cases;     // strings in the .inp file
    int identical; // strings whose ids are exactly the .out line
    int back;      // strings whose expected ids detokenize to the input itself
} vec_result;

// llama.cpp's clean-up of a detokenized text, written out independently of tokenizer.c's (the
// three passes over a copy: punctuation, lone quote, contractions).
static size_t cleaned(const char *in, size_t n, char *out) {
    char *a = malloc(n + 1), *b = malloc(n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) { // " ?" " !" " ." " ,"
        if (i > 0 && in[i - 1] == ' ' && strchr("?!.,", in[i]) && in[i]) m--;
        a[m++] = in[i];
    }
    size_t k = 0;
    for (size_t i = 0; i < m; i++) { // " ' " -> "'" (the next byte seen as NUL after it)
        if (i > 0 && i + 1 < m && a[i] == '\'' && a[i - 1] == ' ' && a[i + 1] == ' ') {
            k--;
            b[k++] = '\'';
            a[i + 1] = '\0';
            i++;
            continue;
        }
        b[k++] = a[i];
    }
    size_t o = 0;
    for (size_t i = 0; i < k; i++) { // " 's" " 'm" " 're" " 've"
        if (i > 0 && b[i - 1] == ' ' && b[i] == '\'' && i + 1 < k) {
            char x = b[i + 1], y = i + 2 < k ? b[i + 2] : 0;
            if (x == 's' || x == 'm' || ((x == 'r' || x == 'v') && y == 'e')) o--;
        }
        out[o++] = b[i];
    }
    free(a);
    free(b);
    return o;
}

static vec_result run_vectors(const char *name, int n_expected) {
    char rel[256];
    snprintf(rel, sizeof rel, "%s", name);
    mint_vocab *v = mt_vocab_load(rel);
    size_t inp_len, out_len;
    snprintf(rel, sizeof rel, "%s.inp", name);
    char *inp = (char *)mt_read_file(mt_data_path(rel), &inp_len);
    snprintf(rel, sizeof rel, "%s.out", name);
    char *out = (char *)mt_read_file(mt_data_path(rel), &out_len);
    cr_assert(inp && out, "%s: cannot read the .inp/.out files", name);
    const char *sep = "\n__ggml_vocab_test__\n";
    size_t sep_len = strlen(sep);
    vec_result r = {0};
    char *line = out;
    for (char *p = inp, *end; p < inp + inp_len; p = end + sep_len) {
        end = memmem(p, inp_len - (size_t)(p - inp), sep, sep_len);
        if (!end) end = inp + inp_len;
        char *eol = strchr(line, '\n');
        cr_assert(eol, "%s: the .out file has fewer lines than the .inp file has strings", name);
        *eol = '\0';
        int32_t *want = malloc((strlen(line) / 2 + 1) * sizeof *want);
        size_t n_want = 0;
        for (char *q = line, *next;; q = next) {
            long id = strtol(q, &next, 10);
            if (next == q) break;
            want[n_want++] = (int32_t)id;
        }
        size_t len = (size_t)(end - p), n;
        int32_t *ids = mt_vocab_tok(v, p, len, false, false, &n);
        bool same = n == n_want && !memcmp(ids, want, n * sizeof *ids);
        cr_expect(same, "%s: string %d '%.*s' does not give the expected ids", name, r.cases,
                  (int)len, p);
        r.identical += same;
        // Detokenizing the expected ids: the input, cleaned as llama.cpp cleans.
        size_t back_len;
        char *back = mt_vocab_detok(v, want, n_want, false, true, &back_len);
        char *ref = malloc(len + 1);
        size_t ref_len = v->clean_spaces ? cleaned(p, len, ref) : (memcpy(ref, p, len), len);
        cr_expect(back_len == ref_len && !memcmp(back, ref, ref_len),
                  "%s: string %d detokenizes to '%s', not '%.*s'", name, r.cases, back,
                  (int)ref_len, ref);
        r.back += back_len == len && !memcmp(back, p, len);
        free(ref);
        free(back);
        free(ids);
        free(want);
        line = eol + 1;
        r.cases++;
        if (end == inp + inp_len) break;
    }
    cr_expect_eq(r.cases, n_expected, "%s: %d strings, expected %d", name, r.cases, n_expected);
    cr_assert_eq(r.identical, r.cases, "%s: %d of %d strings identical", name, r.identical,
                 r.cases);
    cr_log_info("%s: %d/%d identical, %d give the input back", name, r.identical, r.cases, r.back);
    free(inp);
    free(out);
    mint_vocab_free(v);
    return r;
}

#define VECTORS(test, file, n)                                                                     \
    Test(vectors, test) {                                                                          \
        run_vectors(file, n);                                                                      \
    }

VECTORS(llama_spm, "ggml-vocab-llama-spm.gguf", 46)
VECTORS(llama_bpe, "vocab/ggml-vocab-llama-bpe.gguf", 46)
VECTORS(qwen2, "vocab/ggml-vocab-qwen2.gguf", 46)
VECTORS(qwen35, "vocab/ggml-vocab-qwen35.gguf", 50)
VECTORS(gpt_2, "vocab/ggml-vocab-gpt-2.gguf", 46)
VECTORS(phi_3, "vocab/ggml-vocab-phi-3.gguf", 46)
VECTORS(deepseek_llm, "vocab/ggml-vocab-deepseek-llm.gguf", 46)
VECTORS(deepseek_coder, "vocab/ggml-vocab-deepseek-coder.gguf", 46)
VECTORS(falcon, "vocab/ggml-vocab-falcon.gguf", 46)
VECTORS(starcoder, "vocab/ggml-vocab-starcoder.gguf", 46)
VECTORS(mpt, "vocab/ggml-vocab-mpt.gguf", 46)
VECTORS(refact, "vocab/ggml-vocab-refact.gguf", 46)
VECTORS(command_r, "vocab/ggml-vocab-command-r.gguf", 46)
VECTORS(gemma_4, "vocab/ggml-vocab-gemma-4.gguf", 46)

// ---------------------------------------------------------------------------------------------
// Flags and special tokens of the real vocabularies

Test(flags, defaults_per_pre_tokenizer) {
    // Llama 3: add_bos from the pre-tokenizer (no key), spaces cleaned.
    mint_vocab *v = mt_vocab_load("vocab/ggml-vocab-llama-bpe.gguf");
    cr_assert(v->kind == MINT_VOCAB_BPE && mint_vocab_add_bos(v) && !mint_vocab_add_eos(v));
    cr_assert(!mint_vocab_add_space_prefix(v) && v->clean_spaces);
    cr_assert_eq(mint_vocab_bos(v), 128000);
    cr_assert_eq(mint_vocab_eos(v), 128001);
    size_t n;
    int32_t *ids = mt_vocab_tok(v, "Hello", 5, true, false, &n);
    assert_ids(ids, n, (int32_t[]){128000, 9906}, 2, "llama-bpe Hello with BOS");
    free(ids);
    mint_vocab_free(v);
    // GPT-2: no BOS by default, spaces cleaned.
    v = mt_vocab_load("vocab/ggml-vocab-gpt-2.gguf");
    cr_assert(!mint_vocab_add_bos(v) && v->clean_spaces);
    ids = mt_vocab_tok(v, "Hello", 5, true, false, &n);
    assert_ids(ids, n, (int32_t[]){15496}, 1, "gpt-2 Hello with add_special");
    free(ids);
    mint_vocab_free(v);
    // Qwen 2: no clean-up; Gemma 4: BOS forced, SentencePiece-style.
    v = mt_vocab_load("vocab/ggml-vocab-qwen2.gguf");
    cr_assert(!v->clean_spaces && !mint_vocab_add_bos(v));
    mint_vocab_free(v);
    v = mt_vocab_load("vocab/ggml-vocab-gemma-4.gguf");
    cr_assert(mint_vocab_add_bos(v) && (v->pre_flags & MINT_PRE_ESCAPE));
    cr_assert_eq(mint_vocab_bos(v), 2);
    mint_vocab_free(v);
}

Test(flags, parse_special_splits_control_tokens) {
    mint_vocab *v = mt_vocab_load("vocab/ggml-vocab-llama-bpe.gguf");
    const char *text = "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>";
    size_t n;
    int32_t *ids = mt_vocab_tok(v, text, strlen(text), true, true, &n);
    assert_ids(ids, n, (int32_t[]){128000, 128006, 882, 128007, 271, 13347, 128009}, 7,
               "llama-bpe chat header, parse_special");
    free(ids);
    // Without parse_special the control texts are plain text.
    ids = mt_vocab_tok(v, "<|eot_id|>", 10, false, false, &n);
    cr_assert_gt(n, 1);
    for (size_t i = 0; i < n; i++) cr_assert_lt(ids[i], 128000);
    size_t len;
    char *s = mt_vocab_detok(v, ids, n, false, false, &len);
    cr_assert_str_eq(s, "<|eot_id|>");
    free(s);
    free(ids);
    // Control tokens are rendered only with unparse_special.
    int32_t eot = 128009;
    s = mt_vocab_detok(v, &eot, 1, false, false, &len);
    cr_assert_eq(len, 0);
    free(s);
    s = mt_vocab_detok(v, &eot, 1, false, true, &len);
    cr_assert_str_eq(s, "<|eot_id|>");
    free(s);
    mint_vocab_free(v);
}

Test(flags, user_defined_tokens_split_without_parse_special) {
    // Qwen 2's 290 USER_DEFINED tokens are split out always, as HF tokenizers do.
    mint_vocab *v = mt_vocab_load("vocab/ggml-vocab-qwen2.gguf");
    int32_t id = mint_vocab_find(v, "<|im_start|>", 12);
    cr_assert_geq(id, 0);
    uint32_t attr = mint_vocab_token_attr(v, id);
    size_t n;
    int32_t *ids = mt_vocab_tok(v, "<|im_start|>", 12, false, false, &n);
    if (attr & MINT_TOKEN_ATTR_USER_DEFINED) {
        cr_assert_eq(n, 1);
        cr_assert_eq(ids[0], id);
    } else {
        cr_assert_gt(n, 1);
    }
    free(ids);
    ids = mt_vocab_tok(v, "<|im_start|>", 12, false, true, &n);
    assert_ids(ids, n, &id, 1, "qwen2 <|im_start|> with parse_special");
    free(ids);
    mint_vocab_free(v);
}

// ---------------------------------------------------------------------------------------------
// Invalid UTF-8: each bad byte reads as U+FFFD (llama.cpp's unicode_cpts_from_utf8), nothing
// crashes, and the result is what tokenizing the U+FFFD text gives.

Test(utf8, invalid_bytes_tokenize_as_replacement_characters) {
    const char *names[] = {"vocab/ggml-vocab-llama-bpe.gguf", "vocab/ggml-vocab-gpt-2.gguf",
                           "vocab/ggml-vocab-gemma-4.gguf"};
    for (int k = 0; k < 3; k++) {
        mint_vocab *v = mt_vocab_load(names[k]);
        const char bad[] = "a\xff b\xc3 c\x80\xe2\x82 d\xf5\x80\x80\x80";
        const char fixed[] = "a\xEF\xBF\xBD b\xEF\xBF\xBD c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD d"
                             "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD";
        size_t n1, n2;
        int32_t *a = mt_vocab_tok(v, bad, sizeof bad - 1, false, false, &n1);
        int32_t *b = mt_vocab_tok(v, fixed, sizeof fixed - 1, false, false, &n2);
        assert_ids(a, n1, b, n2, names[k]);
        free(a);
        free(b);
        // Overlong forms are decoded, not refused: C1 81 is 'A'.
        a = mt_vocab_tok(v, "\xC1\x81", 2, false, false, &n1);
        b = mt_vocab_tok(v, "A", 1, false, false, &n2);
        assert_ids(a, n1, b, n2, names[k]);
        free(a);
        free(b);
        // Surrogates and NULs go through too.
        a = mt_vocab_tok(v, "x\xED\xA0\x80y\0z", 6, false, false, &n1);
        cr_assert_gt(n1, 2);
        free(a);
        mint_vocab_free(v);
    }
}

Test(utf8, lenient_decoder) {
    uint32_t k;
    cr_assert_eq(mint_utf8_decode("\xE2\x82\xAC", 3, &k), 0x20AC);
    cr_assert_eq(k, 3);
    cr_assert_eq(mint_utf8_decode("\xE2\x82", 2, &k), 0xFFFD); // cut short
    cr_assert_eq(k, 1);
    cr_assert_eq(mint_utf8_decode("\x80", 1, &k), 0xFFFD); // stray continuation
    cr_assert_eq(mint_utf8_decode("\xF8\x80\x80\x80", 4, &k), 0xFFFD);
    cr_assert_eq(mint_utf8_decode("\xF4\x90\x80\x80", 4, &k), 0xFFFD); // past U+10FFFF
    cr_assert_eq(k, 1);
    cr_assert_eq(mint_utf8_decode("\xED\xA0\x80", 3, &k), 0xD800); // surrogate: kept
    cr_assert_eq(mint_utf8_decode("\xC0\x80", 2, &k), 0);          // overlong: kept
}

// ---------------------------------------------------------------------------------------------
// The byte map

Test(byte_map, is_a_bijection_onto_printable_characters) {
    bool seen[512] = {0};
    for (int b = 0; b < 256; b++) {
        uint32_t cp = mint_byte_to_cp((uint8_t)b);
        cr_assert_lt(cp, 512);
        cr_assert(!seen[cp], "byte %d maps to U+%04X twice", b, cp);
        seen[cp] = true;
        cr_assert_eq(mint_cp_to_byte(cp), b);
        cr_assert(cp > 0x20 && cp != 0x7F && cp != 0xAD && !(cp >= 0x80 && cp <= 0xA0));
    }
    cr_assert_eq(mint_byte_to_cp(' '), 0x120);  // "Ġ"
    cr_assert_eq(mint_byte_to_cp('\n'), 0x10A); // "Ċ"
    cr_assert_eq(mint_byte_to_cp('A'), 'A');
    cr_assert_eq(mint_byte_to_cp(0xAD), 0x143);
    cr_assert_eq(mint_cp_to_byte(0x144), -1);
    cr_assert_eq(mint_cp_to_byte(0x2581), -1);
}

Test(byte_map, decode_text_and_unknown_characters) {
    char out[128];
    size_t n = mint_bpe_decode_text("\xC4\xA0Hello\xC4\x8A", 9, 0, out);
    cr_assert_eq(n, 7);
    cr_assert(!memcmp(out, " Hello\n", 7));
    n = mint_bpe_decode_text("\xC4\xA0\xC4\xA0x", 5, 1, out); // one leading space dropped
    cr_assert_eq(n, 2);
    cr_assert(!memcmp(out, " x", 2));
    // A character outside the map: llama.cpp's marker, with the whole token text.
    n = mint_bpe_decode_text("a\xE2\x96\x81", 4, 0, out);
    out[n] = '\0';
    cr_assert_str_eq(out, "a[UNK_BYTE_0xe29681a\xE2\x96\x81]");
}

// ---------------------------------------------------------------------------------------------
// Synthetic byte-level vocabularies: merges, fallback, clean-up, bad files

typedef struct synth {
    mint_gguf_writer *w; // metadata being built
    uint8_t *image;      // written GGUF
    mint_file *f;        // parsed file
} synth;

// Tokens: the 256 byte-map characters (ids 0..255), then extra texts.
static synth synth_bpe(const char *model, const char *pre, const char *const *extra, int n_extra,
                       const char *const *merges, int n_merges) {
    synth s = {mint_gguf_writer_create(), NULL, NULL};
    mint_gguf_add_str(s.w, "tokenizer.ggml.model", model);
    if (pre) mint_gguf_add_str(s.w, "tokenizer.ggml.pre", pre);
    static char chars[256][4];
    mint_str toks[256 + 16];
    for (int b = 0; b < 256; b++) {
        uint32_t k = mint_utf8_encode(mint_byte_to_cp((uint8_t)b), chars[b]);
        toks[b] = (mint_str){chars[b], k};
    }
    for (int i = 0; i < n_extra; i++) toks[256 + i] = (mint_str){extra[i], strlen(extra[i])};
    mint_gguf_add_arr_str(s.w, "tokenizer.ggml.tokens", toks, (uint64_t)(256 + n_extra));
    if (merges) {
        mint_str m[16];
        for (int i = 0; i < n_merges; i++) m[i] = (mint_str){merges[i], strlen(merges[i])};
        mint_gguf_add_arr_str(s.w, "tokenizer.ggml.merges", m, (uint64_t)n_merges);
    }
    return s;
}

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

// "Ġ" is C4 A0.
static const char *const tiny_extra[] = {"he",        "ll", "hell",        "hello",
                                         "\xC4\xA0w", "or", "\xC4\xA0wor", "<|end|>"};
static const char *const tiny_merges[] = {"h e",        "l l", "he ll",       "hell o",
                                          "\xC4\xA0 w", "o r", "\xC4\xA0w or"};

Test(synthetic, merges_by_rank_and_pre_tokenizer) {
    synth s = synth_bpe("gpt2", "gpt-2", tiny_extra, 8, tiny_merges, 7);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
    size_t n;
    int32_t *ids = mt_vocab_tok(v, "hello world", 11, false, false, &n);
    // "hello" | " world": " wor" then 'l' 'd' (no merge for "wor"+"l").
    assert_ids(ids, n, (int32_t[]){256 + 3, 256 + 6, 'l', 'd'}, 4, "hello world");
    size_t len;
    char *back = mt_vocab_detok(v, ids, n, false, false, &len);
    cr_assert_str_eq(back, "hello world");
    free(back);
    free(ids);
    // Default BPE flags: BOS/EOS id 11, no BOS added, spaces cleaned on the way back.
    cr_assert_eq(mint_vocab_bos(v), 11);
    cr_assert(!mint_vocab_add_bos(v) && v->clean_spaces);
    ids = mt_vocab_tok(v, "a , b 's", 8, false, false, &n);
    back = mt_vocab_detok(v, ids, n, false, false, &len);
    cr_assert_str_eq(back, "a, b's");
    // The first call on a short buffer gives the uncleaned length, an upper bound.
    cr_assert_eq(mint_vocab_detokenize(v, ids, n, false, false, NULL, 0), 8);
    free(back);
    free(ids);
    synth_end(&s, v);
}

// gpt-oss's o200k pre-tokenizer ("gpt-4o"): no vocabulary file of it is in the test data, so its
// splits are checked against Python's `regex` module running tokenizer.json's original regex
// (\p{Lu}... classes, case-insensitive contractions), which on these texts (ASCII letters, whose
// case is plain) agrees with the rewrite llama.cpp and mint use.
Test(synthetic, gpt4o_pre_tokenizer_splits_as_o200k) {
    static const struct {
        const char *text;
        const char *pieces[12];
    } cases[] = {
        {"Hello world's HTTPServer 1234567 test\n\n  x",
         {"Hello", " world's", " HTTPServer", " ", "123", "456", "7", " test", "\n\n", " ", " x"}},
        {"I'LL GO, don't!! a/b\r\n\tend  ",
         {"I'LL", " GO", ",", " don't", "!!", " a", "/b", "\r\n", "\tend", "  "}},
        {"camelCaseWORDS 3.14159 ...\n\n\n",
         {"camel", "Case", "WORDS", " ", "3", ".", "141", "59", " ...\n\n\n"}},
        {"  leading spaces and trailing   ",
         {" ", " leading", " spaces", " and", " trailing", "   "}},
    };
    mint_pretok *p = NULL;
    uint32_t flags = 0;
    mint_err err;
    cr_assert_eq(mint_pretok_create("gpt-4o", 6, &p, &flags, &err), MINT_OK, "%s", err.msg);
    cr_assert(flags & MINT_PRE_KEEP_SPACES); // llama.cpp: clean_spaces = false
    mint_pretok_work w = {0};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *t = cases[c].text;
        cr_assert_eq(mint_pretok_split(p, &w, t, strlen(t), &err), MINT_OK, "%s", err.msg);
        size_t n = 0;
        while (n < 12 && cases[c].pieces[n]) n++;
        cr_assert_eq(w.n_cut, n, "case %zu: %zu pieces, want %zu", c, w.n_cut, n);
        for (size_t i = 0, at = 0; i < n; at = w.cut[i++]) {
            const size_t len = w.cut[i] - at;
            cr_assert(len == strlen(cases[c].pieces[i]) &&
                          memcmp(t + at, cases[c].pieces[i], len) == 0,
                      "case %zu piece %zu: '%.*s', want '%s'", c, i, (int)len, t + at,
                      cases[c].pieces[i]);
        }
    }
    mint_pretok_work_free(&w);
    mint_pretok_free(p);
}

Test(synthetic, unknown_pre_tokenizer_is_one_clear_line) {
    synth s = synth_bpe("gpt2", "foo", tiny_extra, 8, tiny_merges, 7);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_UNSUPPORTED);
    cr_assert_null(v);
    cr_assert(strstr(err.msg, "tokenizer.ggml.pre is 'foo'; mint knows: default, llama3"), "%s",
              err.msg);
    cr_assert_null(strchr(err.msg, '\n'));
    synth_end(&s, v);
}

Test(synthetic, missing_or_bad_merges) {
    synth s = synth_bpe("gpt2", "gpt-2", tiny_extra, 8, NULL, 0);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_NOT_FOUND);
    cr_assert(strstr(err.msg, "tokenizer.ggml.merges is missing"), "%s", err.msg);
    synth_end(&s, v);
    const char *bad[] = {"h e", "hello"};
    s = synth_bpe("gpt2", "gpt-2", tiny_extra, 8, bad, 2);
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "tokenizer.ggml.merges[1] is 'hello'"), "%s", err.msg);
    synth_end(&s, v);
    // Merges of another type.
    s = synth_bpe("gpt2", "gpt-2", tiny_extra, 8, NULL, 0);
    int32_t nums[2] = {1, 2};
    mint_gguf_add_arr(s.w, "tokenizer.ggml.merges", MINT_VAL_I32, nums, 2);
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_TYPE);
    cr_assert(strstr(err.msg, "tokenizer.ggml.merges"), "%s", err.msg);
    synth_end(&s, v);
}

Test(synthetic, missing_pre_is_default_and_unknown_model_fails) {
    synth s = synth_bpe("gpt2", NULL, tiny_extra, 8, tiny_merges, 7);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
    size_t n;
    int32_t *ids = mt_vocab_tok(v, "hello", 5, false, false, &n);
    assert_ids(ids, n, (int32_t[]){256 + 3}, 1, "default pre-tokenizer");
    free(ids);
    synth_end(&s, v);
    s = synth_bpe("bert", NULL, tiny_extra, 8, tiny_merges, 7);
    cr_assert_eq(synth_load(&s, &v, &err), MINT_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "tokenizer.ggml.model is 'bert'"), "%s", err.msg);
    synth_end(&s, v);
}

Test(synthetic, special_tokens_and_lone_bytes) {
    synth s = synth_bpe("gpt2", "llama-bpe", tiny_extra, 8, tiny_merges, 7);
    int32_t types[256 + 8];
    for (int i = 0; i < 256 + 8; i++) types[i] = 1;
    types[256 + 7] = 3; // <|end|>: CONTROL
    mint_gguf_add_arr(s.w, "tokenizer.ggml.token_type", MINT_VAL_I32, types, 256 + 8);
    mint_gguf_add_u32(s.w, "tokenizer.ggml.bos_token_id", 256);
    mint_vocab *v = NULL;
    mint_err err;
    cr_assert_eq(synth_load(&s, &v, &err), MINT_OK, "%s", err.msg);
    cr_assert(mint_vocab_add_bos(v)); // llama3-style pre-tokenizers add BOS by default
    size_t n;
    int32_t *ids = mt_vocab_tok(v, "hello<|end|>", 12, true, true, &n);
    assert_ids(ids, n, (int32_t[]){256, 256 + 3, 256 + 7}, 3, "BOS hello <|end|>");
    free(ids);
    // ignore_merges: a word that is a token is taken whole.
    ids = mt_vocab_tok(v, "hell", 4, false, false, &n);
    assert_ids(ids, n, (int32_t[]){256 + 2}, 1, "hell");
    free(ids);
    // Every byte has its character token: arbitrary bytes never fail.
    char all[256];
    for (int i = 0; i < 256; i++) all[i] = (char)i;
    ids = mt_vocab_tok(v, all, 256, false, false, &n);
    cr_assert_gt(n, 0);
    free(ids);
    synth_end(&s, v);
}

// ---------------------------------------------------------------------------------------------
// mint-tokenize on byte-level vocabularies

Test(cli, tokenize_gpt2_and_refuse_bad_pre) {
    char cmd[2048], *out = NULL, *errs = NULL;
    snprintf(cmd, sizeof cmd, "%s -m %s -p 'Hello world' --ids", mt_bin("mint-tokenize"),
             mt_data_path("vocab/ggml-vocab-gpt-2.gguf"));
    cr_assert_eq(mt_run(cmd, &out, &errs), 0, "%s", errs);
    cr_assert_str_eq(out, "[15496, 995]\n");
    free(out);
    free(errs);
    // A vocabulary with an unknown pre-tokenizer: one line, exit 1.
    synth s = synth_bpe("gpt2", "foo", tiny_extra, 8, tiny_merges, 7);
    mint_gguf_add_str(s.w, "general.architecture", "gpt2");
    mint_err err;
    const char *path = mt_path(mt_tmpdir(), "bad-pre.gguf");
    cr_assert_eq(mint_gguf_writer_write_file(s.w, path, &err), MINT_OK, "%s", err.msg);
    mint_gguf_writer_free(s.w);
    snprintf(cmd, sizeof cmd, "%s -m %s -p x", mt_bin("mint-tokenize"), path);
    cr_assert_eq(mt_run(cmd, &out, &errs), 1);
    cr_assert(strstr(errs, "tokenizer.ggml.pre is 'foo'; mint knows:"), "%s", errs);
    char *nl = strchr(errs, '\n');
    cr_assert(nl && nl[1] == '\0', "more than one line: %s", errs);
    free(out);
    free(errs);
}
