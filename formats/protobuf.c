// protobuf.c - wire-format reading (every byte checked against the end of its message) and
// writing.
#include "formats/protobuf.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

mint_pb_reader mint_pb_reader_at(const uint8_t *base, size_t begin, size_t end, const char *what,
                                 mint_err *err) {
    return (mint_pb_reader){base, begin, end, what, err};
}

// A varint: 7 bits per byte, least significant group first; at most 10 bytes for 64 bits, and
// the tenth byte may only carry the top bit.
static mint_status read_varint(mint_pb_reader *r, const char *what, uint64_t *out) {
    size_t at = r->pos;
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (r->pos >= r->end)
            return mint_fail(r->err, MINT_E_FORMAT,
                             "protobuf: %s: truncated %s varint at byte %zu (message ends at byte "
                             "%zu)",
                             r->what, what, at, r->end);
        uint8_t b = r->base[r->pos++];
        if (i == 9 && b > 1)
            return mint_fail(r->err, MINT_E_FORMAT,
                             "protobuf: %s: %s varint at byte %zu overflows 64 bits", r->what, what,
                             at);
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return MINT_OK;
        }
    }
    return mint_fail(r->err, MINT_E_FORMAT,
                     "protobuf: %s: %s varint at byte %zu is longer than 10 bytes", r->what, what,
                     at);
}

static uint64_t load_le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

mint_status mint_pb_next(mint_pb_reader *r, mint_pb_field *out) {
    memset(out, 0, sizeof *out);
    out->at = r->pos;
    uint64_t key;
    mint_status st = read_varint(r, "field key", &key);
    if (st != MINT_OK) return st;
    uint64_t number = key >> 3;
    out->wire = (uint32_t)(key & 7);
    if (number == 0 || number > 0x1fffffff)
        return mint_fail(r->err, MINT_E_FORMAT,
                         "protobuf: %s: field number %llu at byte %zu is outside 1..536870911",
                         r->what, (unsigned long long)number, out->at);
    out->number = (uint32_t)number;
    size_t left = r->end - r->pos;
    switch (out->wire) {
    case MINT_PB_VARINT:
        return read_varint(r, "value", &out->u);
    case MINT_PB_I64:
    case MINT_PB_I32: {
        int n = out->wire == MINT_PB_I64 ? 8 : 4;
        if (left < (size_t)n)
            return mint_fail(r->err, MINT_E_FORMAT,
                             "protobuf: %s: field %u at byte %zu needs %d bytes, only %zu remain "
                             "in the message",
                             r->what, out->number, out->at, n, left);
        out->u = load_le(r->base + r->pos, n);
        r->pos += (size_t)n;
        return MINT_OK;
    }
    case MINT_PB_LEN: {
        uint64_t len;
        st = read_varint(r, "length", &len);
        if (st != MINT_OK) return st;
        left = r->end - r->pos;
        if (len > left)
            return mint_fail(r->err, MINT_E_FORMAT,
                             "protobuf: %s: field %u at byte %zu has length %llu, past the end of "
                             "the message (%zu bytes remain)",
                             r->what, out->number, out->at, (unsigned long long)len, left);
        out->len_at = r->pos;
        out->len = (size_t)len;
        r->pos += (size_t)len;
        return MINT_OK;
    }
    default:
        return mint_fail(r->err, MINT_E_FORMAT,
                         "protobuf: %s: field %u at byte %zu has wire type %u (groups 3/4 and "
                         "types 6/7 are not supported)",
                         r->what, out->number, out->at, out->wire);
    }
}

static const char *wire_name(uint32_t wire) {
    switch (wire) {
    case MINT_PB_VARINT:
        return "varint";
    case MINT_PB_I64:
        return "fixed64";
    case MINT_PB_LEN:
        return "length-delimited";
    case MINT_PB_I32:
        return "fixed32";
    }
    return "?";
}

mint_status mint_pb_expect(const mint_pb_reader *r, const mint_pb_field *f, uint32_t wire,
                           const char *field_name) {
    if (f->wire == wire) return MINT_OK;
    return mint_fail(r->err, MINT_E_FORMAT,
                     "protobuf: %s.%s (field %u) at byte %zu is %s, expected %s", r->what,
                     field_name, f->number, f->at, wire_name(f->wire), wire_name(wire));
}

mint_status mint_pb_int32(const mint_pb_reader *r, const mint_pb_field *f, const char *field_name,
                          int32_t *out) {
    mint_status st = mint_pb_expect(r, f, MINT_PB_VARINT, field_name);
    if (st != MINT_OK) return st;
    int64_t v = (int64_t)f->u;
    if (v < INT32_MIN || v > INT32_MAX)
        return mint_fail(r->err, MINT_E_FORMAT,
                         "protobuf: %s.%s at byte %zu = %lld does not fit an int32", r->what,
                         field_name, f->at, (long long)v);
    *out = (int32_t)v;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Writer

static void put(mint_pb_writer *w, const void *src, size_t n) {
    if (w->oom || n == 0) return;
    if (w->cap - w->len < n) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap - w->len < n) {
            if (cap > SIZE_MAX / 2) {
                w->oom = true;
                return;
            }
            cap *= 2;
        }
        uint8_t *p = realloc(w->p, cap);
        if (!p) {
            w->oom = true;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

static void put_varint(mint_pb_writer *w, uint64_t v) {
    uint8_t b[10];
    int n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b[n] |= 0x80;
        n++;
    } while (v);
    put(w, b, (size_t)n);
}

static void put_key(mint_pb_writer *w, uint32_t number, uint32_t wire) {
    put_varint(w, (uint64_t)number << 3 | wire);
}

void mint_pb_put_varint_field(mint_pb_writer *w, uint32_t number, uint64_t v) {
    put_key(w, number, MINT_PB_VARINT);
    put_varint(w, v);
}

void mint_pb_put_int32_field(mint_pb_writer *w, uint32_t number, int32_t v) {
    mint_pb_put_varint_field(w, number, (uint64_t)(int64_t)v);
}

void mint_pb_put_float_field(mint_pb_writer *w, uint32_t number, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    put_key(w, number, MINT_PB_I32);
    put(w, b, 4);
}

void mint_pb_put_bytes_field(mint_pb_writer *w, uint32_t number, const void *p, size_t n) {
    put_key(w, number, MINT_PB_LEN);
    put_varint(w, n);
    put(w, p, n);
}

mint_status mint_pb_writer_status(const mint_pb_writer *w) {
    return w->oom ? MINT_E_NOMEM : MINT_OK;
}

void mint_pb_writer_free(mint_pb_writer *w) {
    free(w->p);
    memset(w, 0, sizeof *w);
}
