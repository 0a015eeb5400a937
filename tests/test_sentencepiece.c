// test_sentencepiece.c - tokenizer.model: the real Llama file against llama.cpp's vocab GGUF,
// the writer round trip, and hostile protobuf bytes (truncations, corruptions, crafted records).
#include "formats/protobuf.h"
#include "formats/sentencepiece.h"
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The Llama 2 tokenizer.model holds, entry by entry, what llama.cpp's converter wrote into
// ggml-vocab-llama-spm.gguf (tokenizer.ggml.tokens / scores / token_type).
Test(sentencepiece, llama_model_equals_vocab_gguf) {
    mint_err err;
    mint_spm_model m;
    cr_assert_eq(mint_spm_load(mt_data_path("tokenizer.model"), &m, &err), MINT_OK, "%s", err.msg);
    mint_file *g = NULL;
    cr_assert_eq(mint_file_open(mt_data_path("ggml-vocab-llama-spm.gguf"), &g, &err), MINT_OK, "%s",
                 err.msg);
    const mint_kv *tokens = mint_file_find_kv(g, "tokenizer.ggml.tokens");
    const mint_kv *scores = mint_file_find_kv(g, "tokenizer.ggml.scores");
    const mint_kv *types = mint_file_find_kv(g, "tokenizer.ggml.token_type");
    cr_assert(tokens && scores && types);
    cr_assert_eq(m.n_pieces, 32000);
    cr_assert_eq(tokens->n, 32000);
    const mint_str *text = tokens->arr;
    const float *score = scores->arr;
    const int32_t *type = types->arr;
    int counts[7] = {0};
    for (uint32_t i = 0; i < m.n_pieces; i++) {
        const mint_spm_piece *p = &m.pieces[i];
        cr_assert_eq(p->text.len, text[i].len, "piece %u length", i);
        cr_assert(memcmp(p->text.p, text[i].p, text[i].len) == 0, "piece %u text", i);
        cr_assert(memcmp(&p->score, &score[i], 4) == 0, "piece %u score %g vs %g", i, p->score,
                  score[i]);
        cr_assert_eq(p->type, type[i], "piece %u type", i);
        counts[p->type]++;
    }
    // README: 1 UNKNOWN, 2 CONTROL, 256 BYTE, 31741 NORMAL; spot values.
    cr_assert_eq(counts[MINT_SPM_UNKNOWN], 1);
    cr_assert_eq(counts[MINT_SPM_CONTROL], 2);
    cr_assert_eq(counts[MINT_SPM_BYTE], 256);
    cr_assert_eq(counts[MINT_SPM_NORMAL], 31741);
    cr_assert_str_eq(m.pieces[15043].text.p, "\xe2\x96\x81Hello");
    cr_assert_eq(m.pieces[15043].score, -14784.0f);
    cr_assert_eq(m.pieces[29871].score, -1e9f);
    // trainer_spec / normalizer_spec (data README: BPE, byte_fallback, identity normaliser).
    cr_assert_eq(m.model_type, 2);
    cr_assert_eq(m.vocab_size, 32000);
    cr_assert(m.byte_fallback);
    cr_assert_eq(m.unk_id, 0);
    cr_assert_eq(m.bos_id, 1);
    cr_assert_eq(m.eos_id, 2);
    cr_assert_eq(m.pad_id, -1);
    cr_assert_eq(m.normalizer_name.len, 8);
    cr_assert(memcmp(m.normalizer_name.p, "identity", 8) == 0);
    cr_assert(m.add_dummy_prefix);
    cr_assert(!m.remove_extra_whitespaces);
    mint_file_close(g);
    mint_spm_free(&m);
}

static void assert_same_model(const mint_spm_model *a, const mint_spm_model *b) {
    cr_assert_eq(a->n_pieces, b->n_pieces);
    for (uint32_t i = 0; i < a->n_pieces; i++) {
        cr_assert_eq(a->pieces[i].text.len, b->pieces[i].text.len);
        cr_assert(memcmp(a->pieces[i].text.p, b->pieces[i].text.p, a->pieces[i].text.len) == 0);
        cr_assert(memcmp(&a->pieces[i].score, &b->pieces[i].score, 4) == 0);
        cr_assert_eq(a->pieces[i].type, b->pieces[i].type);
    }
    cr_assert_eq(a->model_type, b->model_type);
    cr_assert_eq(a->vocab_size, b->vocab_size);
    cr_assert_eq(a->byte_fallback, b->byte_fallback);
    cr_assert_eq(a->unk_id, b->unk_id);
    cr_assert_eq(a->bos_id, b->bos_id);
    cr_assert_eq(a->eos_id, b->eos_id);
    cr_assert_eq(a->pad_id, b->pad_id);
    cr_assert_eq(a->add_dummy_prefix, b->add_dummy_prefix);
    cr_assert_eq(a->remove_extra_whitespaces, b->remove_extra_whitespaces);
    cr_assert_eq(a->escape_whitespaces, b->escape_whitespaces);
}

Test(sentencepiece, writer_round_trip_of_the_llama_model) {
    mint_err err;
    mint_spm_model m, back;
    cr_assert_eq(mint_spm_load(mt_data_path("tokenizer.model"), &m, &err), MINT_OK, "%s", err.msg);
    uint8_t *buf;
    size_t len;
    cr_assert_eq(mint_spm_encode(&m, &buf, &len, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_spm_parse(buf, len, "encoded", &back, &err), MINT_OK, "%s", err.msg);
    assert_same_model(&m, &back);
    // The file on disk reads back the same.
    const char *path = mt_path(mt_tmpdir(), "tok.model");
    cr_assert_eq(mint_spm_write_file(&m, path, &err), MINT_OK, "%s", err.msg);
    mint_spm_free(&back);
    cr_assert_eq(mint_spm_load(path, &back, &err), MINT_OK, "%s", err.msg);
    assert_same_model(&m, &back);
    free(buf);
    mint_spm_free(&back);
    mint_spm_free(&m);
}

// A small model written by the writer: n pieces "<unk>", "<s>", "</s>", then "p3", "p4", ...
static uint8_t *small_model(uint32_t n, size_t *len) {
    mint_spm_model m = {0};
    char(*names)[16] = calloc(n, 16);
    m.pieces = calloc(n, sizeof *m.pieces);
    m.n_pieces = n;
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0)
            strcpy(names[i], "<unk>");
        else if (i == 1)
            strcpy(names[i], "<s>");
        else if (i == 2)
            strcpy(names[i], "</s>");
        else
            snprintf(names[i], 16, "p%u", i);
        m.pieces[i].text = (mint_str){names[i], strlen(names[i])};
        m.pieces[i].score = -(float)i;
        m.pieces[i].type = i == 0 ? MINT_SPM_UNKNOWN : i < 3 ? MINT_SPM_CONTROL : MINT_SPM_NORMAL;
    }
    m.model_type = 2;
    m.vocab_size = (int32_t)n;
    m.unk_id = 0;
    m.bos_id = 1;
    m.eos_id = 2;
    m.pad_id = -1;
    m.add_dummy_prefix = true;
    uint8_t *buf;
    mint_err err;
    cr_assert_eq(mint_spm_encode(&m, &buf, len, &err), MINT_OK);
    free(m.pieces);
    free(names);
    return buf;
}

// Every proper prefix of a valid file is refused with a message (never read as a smaller
// vocabulary, never a crash): all prefixes of a small file and the first 4 KiB of the real one.
Test(sentencepiece, truncation_at_every_offset_is_a_format_error) {
    size_t len;
    uint8_t *buf = small_model(300, &len);
    mint_err err;
    mint_spm_model m;
    cr_assert_eq(mint_spm_parse(buf, len, "full", &m, &err), MINT_OK, "%s", err.msg);
    mint_spm_free(&m);
    for (size_t k = 0; k < len; k++) {
        uint8_t *cut = malloc(k ? k : 1); // exact size, so ASan sees any overread
        memcpy(cut, buf, k);
        mint_status st = mint_spm_parse(cut, k, "cut", &m, &err);
        cr_assert_eq(st, MINT_E_FORMAT, "prefix of %zu bytes: status %d", k, st);
        cr_assert(err.msg[0], "prefix of %zu bytes: no message", k);
        free(cut);
    }
    free(buf);

    size_t real_len;
    uint8_t *real = mt_read_file(mt_data_path("tokenizer.model"), &real_len);
    cr_assert(real && real_len > 4096);
    for (size_t k = 0; k <= 4096; k++) {
        uint8_t *cut = malloc(k ? k : 1);
        memcpy(cut, real, k);
        cr_assert_eq(mint_spm_parse(cut, k, "cut", &m, &err), MINT_E_FORMAT, "prefix %zu", k);
        free(cut);
    }
    free(real);
}

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

// Random byte corruptions: any outcome but a crash or a failure without a message.
Test(sentencepiece, random_corruptions_never_crash) {
    size_t len;
    uint8_t *buf = small_model(500, &len);
    uint8_t *work = malloc(len);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int failed = 0;
    for (int iter = 0; iter < 4000; iter++) {
        memcpy(work, buf, len);
        int flips = 1 + (int)(rng_next(&seed) % 8);
        for (int k = 0; k < flips; k++) work[rng_next(&seed) % len] = (uint8_t)rng_next(&seed);
        mint_err err = {0};
        mint_spm_model m;
        mint_status st = mint_spm_parse(work, len, "corrupt", &m, &err);
        if (st != MINT_OK) {
            failed++;
            cr_assert(err.msg[0], "iteration %d: failure without a message", iter);
        }
        mint_spm_free(&m);
    }
    cr_assert_gt(failed, 100, "corruptions should mostly be caught (%d)", failed);
    free(work);
    free(buf);

    // A few on the real 0.5 MB file too.
    uint8_t *real = mt_read_file(mt_data_path("tokenizer.model"), &len);
    cr_assert(real);
    work = malloc(len);
    for (int iter = 0; iter < 100; iter++) {
        memcpy(work, real, len);
        for (int k = 0; k < 4; k++) work[rng_next(&seed) % len] = (uint8_t)rng_next(&seed);
        mint_err err = {0};
        mint_spm_model m;
        if (mint_spm_parse(work, len, "corrupt", &m, &err) != MINT_OK)
            cr_assert(err.msg[0], "real file, iteration %d: failure without a message", iter);
        mint_spm_free(&m);
    }
    free(work);
    free(real);
}

// Builds a ModelProto from pieces given as (text, type) and a trainer_spec writer.
static void put_piece(mint_pb_writer *w, const char *text, int type) {
    mint_pb_writer p = {0};
    mint_pb_put_bytes_field(&p, 1, text, strlen(text));
    mint_pb_put_float_field(&p, 2, 0.0f);
    if (type) mint_pb_put_int32_field(&p, 3, type);
    mint_pb_put_message_field(w, 1, &p);
    mint_pb_writer_free(&p);
}

static void put_specs(mint_pb_writer *w, int32_t unk_id) {
    mint_pb_writer t = {0}, n = {0};
    mint_pb_put_int32_field(&t, 40, unk_id);
    mint_pb_put_int32_field(&t, 41, -1);
    mint_pb_put_int32_field(&t, 42, -1);
    mint_pb_put_message_field(w, 2, &t);
    mint_pb_put_varint_field(&n, 3, 0);
    mint_pb_put_message_field(w, 3, &n);
    mint_pb_writer_free(&t);
    mint_pb_writer_free(&n);
}

static void expect_refused(mint_pb_writer *w, const char *needle) {
    mint_err err;
    mint_spm_model m;
    cr_assert_eq(mint_spm_parse(w->p, w->len, "crafted", &m, &err), MINT_E_FORMAT,
                 "expected a failure mentioning '%s'", needle);
    cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    mint_pb_writer_free(w);
}

Test(sentencepiece, crafted_records_are_refused_with_messages) {
    mint_pb_writer w = {0};
    // A valid two-piece model first: pieces default to NORMAL, the unk id is honoured.
    put_piece(&w, "<unk>", 2);
    put_piece(&w, "a", 0);
    put_specs(&w, 0);
    mint_err err;
    mint_spm_model m;
    cr_assert_eq(mint_spm_parse(w.p, w.len, "ok", &m, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(m.pieces[1].type, MINT_SPM_NORMAL);
    cr_assert(!m.add_dummy_prefix);
    cr_assert_eq(m.bos_id, -1);
    mint_spm_free(&m);
    mint_pb_writer_free(&w);

    put_piece(&w, "a", 0);
    put_piece(&w, "a", 0);
    put_specs(&w, 0);
    expect_refused(&w, "duplicates piece 0");

    put_piece(&w, "", 0);
    put_specs(&w, 0);
    expect_refused(&w, "empty text");

    put_piece(&w, "a", 9);
    put_specs(&w, 0);
    expect_refused(&w, "outside 1..6");

    put_piece(&w, "a", 0);
    put_specs(&w, 5);
    expect_refused(&w, "unk_id = 5");

    put_piece(&w, "a", 0);
    expect_refused(&w, "no trainer_spec");

    put_specs(&w, -1);
    expect_refused(&w, "no pieces");

    // Wire-level damage: a group (wire type 3), a varint of 11 bytes, a length past the end,
    // field number 0, a string where the schema has a float.
    put_piece(&w, "a", 0);
    uint8_t group[] = {0x0b};
    mint_pb_writer_free(&w);
    w = (mint_pb_writer){0};
    mint_pb_put_bytes_field(&w, 9, group, 0);
    w.p[0] = (uint8_t)(1 << 3 | 3);
    expect_refused(&w, "wire type 3");

    mint_err e2;
    uint8_t longv[] = {0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    cr_assert_eq(mint_spm_parse(longv, sizeof longv, "long", &m, &e2), MINT_E_FORMAT);
    cr_assert(strstr(e2.msg, "varint"), "%s", e2.msg);

    uint8_t past[] = {0x0a, 0x7f, 0x00};
    cr_assert_eq(mint_spm_parse(past, sizeof past, "past", &m, &e2), MINT_E_FORMAT);
    cr_assert(strstr(e2.msg, "past the end"), "%s", e2.msg);

    uint8_t zero[] = {0x02, 0x00};
    cr_assert_eq(mint_spm_parse(zero, sizeof zero, "zero", &m, &e2), MINT_E_FORMAT);
    cr_assert(strstr(e2.msg, "field number 0"), "%s", e2.msg);

    mint_pb_writer p = {0};
    mint_pb_put_bytes_field(&p, 1, "a", 1);
    mint_pb_put_bytes_field(&p, 2, "xx", 2); // score as bytes
    mint_pb_put_message_field(&w, 1, &p);
    mint_pb_writer_free(&p);
    put_specs(&w, 0);
    expect_refused(&w, "score");
}
