// sentencepiece.c - tokenizer.model: protobuf ModelProto -> mint_spm_model, and back.
//
// Reading is two passes over the top-level records: the first counts the pieces (so the piece
// array is sized once) and decodes trainer_spec / normalizer_spec, the second decodes the pieces.
// Every byte goes through formats/protobuf.c, which checks it against the end of its message.
#include "formats/sentencepiece.h"

#include "base/error.h"
#include "base/fileio.h"
#include "base/strmap.h"
#include "formats/mapped_file.h"
#include "formats/protobuf.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Sub-messages

static mint_status parse_trainer_spec(mint_pb_reader r, mint_spm_model *m) {
    mint_pb_field f;
    mint_status st = MINT_OK;
    while (st == MINT_OK && !mint_pb_done(&r)) {
        st = mint_pb_next(&r, &f);
        if (st != MINT_OK) break;
        switch (f.number) {
        case 3:
            st = mint_pb_int32(&r, &f, "model_type", &m->model_type);
            break;
        case 4:
            st = mint_pb_int32(&r, &f, "vocab_size", &m->vocab_size);
            break;
        case 35:
            st = mint_pb_expect(&r, &f, MINT_PB_VARINT, "byte_fallback");
            m->byte_fallback = f.u != 0;
            break;
        case 40:
            st = mint_pb_int32(&r, &f, "unk_id", &m->unk_id);
            break;
        case 41:
            st = mint_pb_int32(&r, &f, "bos_id", &m->bos_id);
            break;
        case 42:
            st = mint_pb_int32(&r, &f, "eos_id", &m->eos_id);
            break;
        case 43:
            st = mint_pb_int32(&r, &f, "pad_id", &m->pad_id);
            break;
        default:
            break; // the trainer's many other settings do not change how text is tokenized
        }
    }
    return st;
}

static mint_status parse_normalizer_spec(mint_pb_reader r, mint_spm_model *m) {
    mint_pb_field f;
    mint_status st = MINT_OK;
    while (st == MINT_OK && !mint_pb_done(&r)) {
        st = mint_pb_next(&r, &f);
        if (st != MINT_OK) break;
        switch (f.number) {
        case 1:
            st = mint_pb_expect(&r, &f, MINT_PB_LEN, "name");
            if (st != MINT_OK) break;
            m->normalizer_name.p =
                mint_arena_strndup(&m->arena, (const char *)r.base + f.len_at, f.len);
            m->normalizer_name.len = f.len;
            if (!m->normalizer_name.p) st = mint_fail(r.err, MINT_E_NOMEM, "out of memory");
            break;
        case 3:
            st = mint_pb_expect(&r, &f, MINT_PB_VARINT, "add_dummy_prefix");
            m->add_dummy_prefix = f.u != 0;
            break;
        case 4:
            st = mint_pb_expect(&r, &f, MINT_PB_VARINT, "remove_extra_whitespaces");
            m->remove_extra_whitespaces = f.u != 0;
            break;
        case 5:
            st = mint_pb_expect(&r, &f, MINT_PB_VARINT, "escape_whitespaces");
            m->escape_whitespaces = f.u != 0;
            break;
        default:
            break; // precompiled_charsmap etc.: normalisation tables mint does not apply
        }
    }
    return st;
}

static mint_status parse_piece(mint_pb_reader r, mint_spm_model *m, uint32_t id) {
    mint_spm_piece *p = &m->pieces[id];
    p->type = MINT_SPM_NORMAL;
    bool have_text = false;
    size_t msg_at = r.pos, type_at = r.pos;
    mint_pb_field f;
    while (!mint_pb_done(&r)) {
        mint_status st = mint_pb_next(&r, &f);
        if (st != MINT_OK) return st;
        switch (f.number) {
        case 1:
            st = mint_pb_expect(&r, &f, MINT_PB_LEN, "piece");
            if (st != MINT_OK) return st;
            p->text.p = mint_arena_strndup(&m->arena, (const char *)r.base + f.len_at, f.len);
            if (!p->text.p) return mint_fail(r.err, MINT_E_NOMEM, "out of memory");
            p->text.len = f.len;
            have_text = true;
            break;
        case 2:
            st = mint_pb_expect(&r, &f, MINT_PB_I32, "score");
            if (st != MINT_OK) return st;
            p->score = mint_pb_float(&f);
            break;
        case 3:
            st = mint_pb_int32(&r, &f, "type", &p->type);
            if (st != MINT_OK) return st;
            type_at = f.at;
            break;
        default:
            break;
        }
    }
    if (!have_text || p->text.len == 0)
        return mint_fail(r.err, MINT_E_FORMAT,
                         "sentencepiece: piece %" PRIu32 " (message at byte %zu) has %s text", id,
                         msg_at, have_text ? "empty" : "no");
    if (p->type < MINT_SPM_NORMAL || p->type > MINT_SPM_BYTE)
        return mint_fail(r.err, MINT_E_FORMAT,
                         "sentencepiece: piece %" PRIu32 " '%.*s': type %d at byte %zu is outside "
                         "1..6 (NORMAL..BYTE)",
                         id, (int)(p->text.len < 64 ? p->text.len : 64), p->text.p, p->type,
                         type_at);
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// ModelProto

static mint_status check_id(const mint_spm_model *m, int32_t id, const char *field, mint_err *err) {
    if (id >= -1 && (id < 0 || (uint32_t)id < m->n_pieces)) return MINT_OK;
    return mint_fail(err, MINT_E_FORMAT,
                     "sentencepiece: trainer_spec.%s = %d is outside -1..%" PRIu32
                     " (the vocabulary has %" PRIu32 " pieces)",
                     field, id, m->n_pieces - 1, m->n_pieces);
}

static mint_status check_unique(const mint_spm_model *m, mint_err *err) {
    mint_strmap seen;
    if (mint_strmap_init(&seen, m->n_pieces) != MINT_OK)
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    mint_status st = MINT_OK;
    for (uint32_t i = 0; i < m->n_pieces && st == MINT_OK; i++) {
        const mint_spm_piece *p = &m->pieces[i];
        int32_t prev;
        st = mint_strmap_put(&seen, p->text.p, p->text.len, (int32_t)i, &prev);
        if (st == MINT_E_ARG)
            st = mint_fail(err, MINT_E_FORMAT,
                           "sentencepiece: piece %" PRIu32 " '%.*s' duplicates piece %d", i,
                           (int)(p->text.len < 64 ? p->text.len : 64), p->text.p, prev);
        else if (st != MINT_OK)
            st = mint_fail(err, st, "out of memory");
    }
    mint_strmap_free(&seen);
    return st;
}

static mint_status parse_model(const uint8_t *data, size_t size, mint_spm_model *m, mint_err *err) {
    // Defaults from the schema.
    m->model_type = 1;
    m->unk_id = 0;
    m->bos_id = 1;
    m->eos_id = 2;
    m->pad_id = -1;
    m->add_dummy_prefix = true;
    m->remove_extra_whitespaces = true;
    m->escape_whitespaces = true;

    // Pass 1: count pieces, decode the specs.
    bool have_trainer = false, have_normalizer = false;
    uint64_t n = 0;
    mint_pb_reader r = mint_pb_reader_at(data, 0, size, "ModelProto", err);
    mint_pb_field f;
    while (!mint_pb_done(&r)) {
        mint_status st = mint_pb_next(&r, &f);
        if (st != MINT_OK) return st;
        if (f.number == 1) {
            st = mint_pb_expect(&r, &f, MINT_PB_LEN, "pieces");
            n++;
        } else if (f.number == 2) {
            st = mint_pb_expect(&r, &f, MINT_PB_LEN, "trainer_spec");
            if (st == MINT_OK)
                st = parse_trainer_spec(
                    mint_pb_reader_at(data, f.len_at, f.len_at + f.len, "TrainerSpec", err), m);
            have_trainer = true;
        } else if (f.number == 3) {
            st = mint_pb_expect(&r, &f, MINT_PB_LEN, "normalizer_spec");
            if (st == MINT_OK)
                st = parse_normalizer_spec(
                    mint_pb_reader_at(data, f.len_at, f.len_at + f.len, "NormalizerSpec", err), m);
            have_normalizer = true;
        }
        if (st != MINT_OK) return st;
    }
    // SentencePiece always writes both specs after the pieces, so a file cut at a record boundary
    // is caught here rather than read as a smaller vocabulary.
    if (!have_trainer || !have_normalizer)
        return mint_fail(err, MINT_E_FORMAT,
                         "sentencepiece: no %s (field %d) in %zu bytes: the file is truncated or "
                         "not a tokenizer.model",
                         have_trainer ? "normalizer_spec" : "trainer_spec", have_trainer ? 3 : 2,
                         size);
    if (n == 0)
        return mint_fail(err, MINT_E_FORMAT, "sentencepiece: the model has no pieces (field 1)");
    if (n > INT32_MAX)
        return mint_fail(err, MINT_E_FORMAT, "sentencepiece: %" PRIu64 " pieces exceed %d", n,
                         INT32_MAX);
    m->n_pieces = (uint32_t)n;
    m->pieces = mint_arena_zalloc(&m->arena, n * sizeof *m->pieces);
    if (!m->pieces) return mint_fail(err, MINT_E_NOMEM, "out of memory for %" PRIu64 " pieces", n);

    // Pass 2: the pieces, in order (pass 1 already checked every record's framing).
    r = mint_pb_reader_at(data, 0, size, "ModelProto", err);
    uint32_t id = 0;
    while (!mint_pb_done(&r)) {
        mint_status st = mint_pb_next(&r, &f);
        if (st != MINT_OK) return st;
        if (f.number != 1) continue;
        st = parse_piece(mint_pb_reader_at(data, f.len_at, f.len_at + f.len, "SentencePiece", err),
                         m, id);
        if (st != MINT_OK) return st;
        id++;
    }
    mint_status st = check_id(m, m->unk_id, "unk_id", err);
    if (st == MINT_OK) st = check_id(m, m->bos_id, "bos_id", err);
    if (st == MINT_OK) st = check_id(m, m->eos_id, "eos_id", err);
    if (st == MINT_OK) st = check_id(m, m->pad_id, "pad_id", err);
    if (st == MINT_OK) st = check_unique(m, err);
    return st;
}

mint_status mint_spm_parse(const void *data, size_t size, const char *name, mint_spm_model *out,
                           mint_err *err) {
    memset(out, 0, sizeof *out);
    if (size > MINT_SPM_MAX_FILE)
        return mint_fail(err, MINT_E_LIMIT,
                         "%s: %zu bytes exceed the tokenizer.model limit of %llu", name, size,
                         MINT_SPM_MAX_FILE);
    mint_status st = parse_model(data, size, out, err);
    if (st != MINT_OK) {
        mint_err_prefix(err, "%s", name);
        mint_spm_free(out);
    }
    return st;
}

mint_status mint_spm_load(const char *path, mint_spm_model *out, mint_err *err) {
    memset(out, 0, sizeof *out);
    mint_mapped_file map;
    mint_status st = mint_mapped_file_open(path, &map, err);
    if (st != MINT_OK) return st;
    st = mint_spm_parse(map.data, map.size, path, out, err);
    mint_mapped_file_close(&map);
    return st;
}

void mint_spm_free(mint_spm_model *m) {
    if (!m) return;
    mint_arena_free(&m->arena);
    memset(m, 0, sizeof *m);
}

// ---------------------------------------------------------------------------------------------
// Writer

mint_status mint_spm_encode(const mint_spm_model *m, uint8_t **buf, size_t *len, mint_err *err) {
    *buf = NULL;
    *len = 0;
    mint_pb_writer w = {0}, sub = {0};
    for (uint32_t i = 0; i < m->n_pieces; i++) {
        const mint_spm_piece *p = &m->pieces[i];
        sub.len = 0;
        mint_pb_put_bytes_field(&sub, 1, p->text.p, (size_t)p->text.len);
        mint_pb_put_float_field(&sub, 2, p->score);
        // NORMAL is the default; SentencePiece leaves it out too.
        if (p->type != MINT_SPM_NORMAL) mint_pb_put_int32_field(&sub, 3, p->type);
        mint_pb_put_message_field(&w, 1, &sub);
    }
    sub.len = 0;
    mint_pb_put_int32_field(&sub, 3, m->model_type);
    mint_pb_put_int32_field(&sub, 4, m->vocab_size);
    mint_pb_put_varint_field(&sub, 35, m->byte_fallback);
    mint_pb_put_int32_field(&sub, 40, m->unk_id);
    mint_pb_put_int32_field(&sub, 41, m->bos_id);
    mint_pb_put_int32_field(&sub, 42, m->eos_id);
    mint_pb_put_int32_field(&sub, 43, m->pad_id);
    mint_pb_put_message_field(&w, 2, &sub);
    sub.len = 0;
    if (m->normalizer_name.len)
        mint_pb_put_bytes_field(&sub, 1, m->normalizer_name.p, (size_t)m->normalizer_name.len);
    mint_pb_put_varint_field(&sub, 3, m->add_dummy_prefix);
    mint_pb_put_varint_field(&sub, 4, m->remove_extra_whitespaces);
    mint_pb_put_varint_field(&sub, 5, m->escape_whitespaces);
    mint_pb_put_message_field(&w, 3, &sub);
    mint_status st = mint_pb_writer_status(&w);
    if (st == MINT_OK) st = mint_pb_writer_status(&sub);
    mint_pb_writer_free(&sub);
    if (st != MINT_OK) {
        mint_pb_writer_free(&w);
        return mint_fail(err, st, "sentencepiece writer: out of memory");
    }
    *buf = w.p;
    *len = w.len;
    return MINT_OK;
}

mint_status mint_spm_write_file(const mint_spm_model *m, const char *path, mint_err *err) {
    uint8_t *buf;
    size_t len;
    mint_status st = mint_spm_encode(m, &buf, &len, err);
    if (st != MINT_OK) return st;
    mint_atomic_file *af = NULL;
    st = mint_atomic_file_begin(path, &af, err);
    if (st == MINT_OK) st = mint_atomic_file_write(af, buf, len, err);
    free(buf);
    if (st == MINT_OK) return mint_atomic_file_commit(af, err);
    mint_atomic_file_abort(af);
    return st;
}
