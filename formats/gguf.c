// gguf.c - the GGUF reader: every length, count, type, shape and offset is checked here, once,
// against the bytes that remain, before anything is allocated for it. Later code trusts it.
//
// Messages read "<file>: <record>: <field> <value> at byte <offset> <problem> (<limit>)", where
// <record> is "header", "metadata entry 3", "metadata 'llama.block_count'", "tensor 7" or
// "tensor 'blk.0.attn_k.weight'". Bytes taken from the file (keys, names) are printed with
// control characters replaced, so a message is always one line. A file that ends before what
// its header and records claim reads "file is truncated: it ends at byte <N>, inside <section>
// (<the field's message>)"; counts and lengths above the hard limits are refused as such.
#include "formats/gguf.h"

#include "base/error.h"
#include "quant/types.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

// A read position in the file image. Every read checks the bytes remaining and reports the
// record it belongs to, the field, and the offset where the field starts.
typedef struct cursor {
    const uint8_t *base; // [size] the whole file
    size_t size;         // file size
    size_t pos;          // next byte to read
    mint_err *err;       // where failures go
    char where[128];     // the record being read, for messages ("tensor 'output.weight'")
    bool truncated;      // the last failure was the file ending inside a field
} cursor;

static size_t remaining(const cursor *c) {
    return c->size - c->pos;
}

// Fails when fewer than n bytes remain: the file ends inside the field (parse() words that as
// truncation, naming the section).
static mint_status need(cursor *c, size_t n, const char *what) {
    if (remaining(c) < n) {
        c->truncated = true;
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: %s at byte %zu needs %zu bytes, only %zu remain", c->where, what,
                         c->pos, n, remaining(c));
    }
    return MINT_OK;
}

// Little-endian loads from possibly unaligned bytes.
static uint16_t load_u16(const uint8_t *p) {
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t load_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t load_u64(const uint8_t *p) {
    return (uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32;
}

static mint_status read_u32(cursor *c, const char *what, uint32_t *out) {
    mint_status st = need(c, 4, what);
    if (st != MINT_OK) return st;
    *out = load_u32(c->base + c->pos);
    c->pos += 4;
    return MINT_OK;
}

static mint_status read_u64(cursor *c, const char *what, uint64_t *out) {
    mint_status st = need(c, 8, what);
    if (st != MINT_OK) return st;
    *out = load_u64(c->base + c->pos);
    c->pos += 8;
    return MINT_OK;
}

// A GGUF string: u64 length, then the bytes. The result points into the image. `what` names the
// string ("key", "tensor name"); its length field is reported as "<what> length".
static mint_status read_str(cursor *c, const char *what, uint64_t max_len, mint_str *out) {
    size_t at = c->pos;
    char field[64];
    snprintf(field, sizeof field, "%s length", what);
    uint64_t len;
    mint_status st = read_u64(c, field, &len);
    if (st != MINT_OK) return st;
    if (len > max_len)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: %s %" PRIu64 " at byte %zu exceeds the limit of %" PRIu64, c->where,
                         field, len, at, max_len);
    if (len > remaining(c)) {
        c->truncated = true; // a length under the limit that the file ends inside
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: %s %" PRIu64 " at byte %zu runs past the end of the file (%zu bytes "
                         "remain)",
                         c->where, field, len, at, remaining(c));
    }
    out->p = (const char *)c->base + c->pos;
    out->len = len;
    c->pos += len;
    return MINT_OK;
}

// Sets the record name used in messages; `name` may come from the file, so it is cut and its
// control characters replaced.
static void set_where(cursor *c, const char *kind, const char *name, size_t len) {
    char clean[96];
    size_t n = len < sizeof clean - 1 ? len : sizeof clean - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)name[i];
        clean[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    clean[n] = '\0';
    snprintf(c->where, sizeof c->where, "%s '%s%s'", kind, clean, n < len ? "..." : "");
}

// ---------------------------------------------------------------------------------------------
// Metadata

// Decodes one little-endian scalar of a fixed-size type into its native C type at dst.
static void decode_native(mint_value_type type, const uint8_t *p, void *dst) {
    switch (type) {
    case MINT_VAL_U8:
    case MINT_VAL_I8:
    case MINT_VAL_BOOL:
        *(uint8_t *)dst = p[0];
        break;
    case MINT_VAL_U16:
    case MINT_VAL_I16: {
        uint16_t v = load_u16(p);
        memcpy(dst, &v, 2);
        break;
    }
    case MINT_VAL_U32:
    case MINT_VAL_I32:
    case MINT_VAL_F32: {
        uint32_t v = load_u32(p);
        memcpy(dst, &v, 4);
        break;
    }
    case MINT_VAL_U64:
    case MINT_VAL_I64:
    case MINT_VAL_F64: {
        uint64_t v = load_u64(p);
        memcpy(dst, &v, 8);
        break;
    }
    default:
        break;
    }
}

// Fills kv->v from one scalar: unsigned types (and BOOL's raw byte) in v.u, signed ones
// sign-extended in v.i, floats in v.f.
static void decode_scalar(mint_kv *kv, const uint8_t *p) {
    union {
        uint8_t u8;
        int8_t i8;
        uint16_t u16;
        int16_t i16;
        uint32_t u32;
        int32_t i32;
        uint64_t u64;
        int64_t i64;
        float f32;
        double f64;
    } x;
    decode_native(kv->type, p, &x);
    switch (kv->type) {
    case MINT_VAL_U8:
    case MINT_VAL_BOOL:
        kv->v.u = x.u8;
        break;
    case MINT_VAL_I8:
        kv->v.i = x.i8;
        break;
    case MINT_VAL_U16:
        kv->v.u = x.u16;
        break;
    case MINT_VAL_I16:
        kv->v.i = x.i16;
        break;
    case MINT_VAL_U32:
        kv->v.u = x.u32;
        break;
    case MINT_VAL_I32:
        kv->v.i = x.i32;
        break;
    case MINT_VAL_U64:
        kv->v.u = x.u64;
        break;
    case MINT_VAL_I64:
        kv->v.i = x.i64;
        break;
    case MINT_VAL_F32:
        kv->v.f = x.f32; // exact: every float is a double
        break;
    case MINT_VAL_F64:
        kv->v.f = x.f64;
        break;
    default:
        break;
    }
}

static mint_status read_array(cursor *c, mint_file *f, mint_kv *kv) {
    size_t et_at = c->pos;
    uint32_t et;
    uint64_t n;
    mint_status st = read_u32(c, "array element type", &et);
    if (st != MINT_OK) return st;
    if (et == MINT_VAL_ARRAY)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: array element type 9 (arr) at byte %zu: arrays of arrays are not "
                         "supported",
                         c->where, et_at);
    if (et > MINT_VAL_F64)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: array element type %" PRIu32 " at byte %zu is not a GGUF value type "
                         "(0..12)",
                         c->where, et, et_at);
    size_t n_at = c->pos;
    st = read_u64(c, "array length", &n);
    if (st != MINT_OK) return st;
    if (n > MINT_MAX_ARRAY)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: array length %" PRIu64 " at byte %zu exceeds the limit of %llu",
                         c->where, n, n_at, MINT_MAX_ARRAY);
    // Each element takes at least its size (8 bytes for a string's length field); n <= 2^30 and
    // es <= 8, so n * es cannot overflow.
    size_t es = et == MINT_VAL_STRING ? 8 : mint_value_type_size(et);
    if (n * es > remaining(c)) {
        c->truncated = true;
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: array length %" PRIu64 " at byte %zu needs at least %" PRIu64
                         " bytes of %s, only %zu remain",
                         c->where, n, n_at, (uint64_t)(n * es), mint_value_type_name(et),
                         remaining(c));
    }
    kv->elem_type = et;
    kv->n = n;
    if (et == MINT_VAL_STRING) {
        mint_str *a = mint_arena_alloc(&f->arena, n * sizeof *a + 1);
        if (!a) return mint_fail(c->err, MINT_E_NOMEM, "%s: out of memory", c->where);
        for (uint64_t i = 0; i < n; i++) {
            char what[48];
            snprintf(what, sizeof what, "element %" PRIu64, i);
            st = read_str(c, what, MINT_MAX_STRING, &a[i]);
            if (st != MINT_OK) return st;
        }
        kv->arr = a;
        return MINT_OK;
    }
    // Numeric arrays are copied out of the map: metadata has no alignment, and callers want
    // native, aligned elements.
    uint8_t *a = mint_arena_alloc(&f->arena, n * es + 1);
    if (!a) return mint_fail(c->err, MINT_E_NOMEM, "%s: out of memory", c->where);
    const uint8_t *p = c->base + c->pos;
    for (uint64_t i = 0; i < n; i++) decode_native(et, p + i * es, a + i * es);
    c->pos += n * es;
    kv->arr = a;
    return MINT_OK;
}

static mint_status read_kv(cursor *c, mint_file *f, uint64_t index, mint_kv *kv) {
    memset(kv, 0, sizeof *kv);
    kv->file_offset = c->pos;
    snprintf(c->where, sizeof c->where, "metadata entry %" PRIu64, index);
    mint_str key;
    mint_status st = read_str(c, "key", MINT_MAX_KEY, &key);
    if (st != MINT_OK) return st;
    if (key.len == 0)
        return mint_fail(c->err, MINT_E_FORMAT, "%s: key at byte %" PRIu64 " is empty", c->where,
                         kv->file_offset);
    if (memchr(key.p, '\0', key.len))
        return mint_fail(c->err, MINT_E_FORMAT, "%s: key at byte %" PRIu64 " contains a NUL byte",
                         c->where, kv->file_offset);
    kv->key = mint_arena_strndup(&f->arena, key.p, key.len);
    if (!kv->key) return mint_fail(c->err, MINT_E_NOMEM, "%s: out of memory", c->where);
    int32_t prev;
    st = mint_strmap_put(&f->kv_index, kv->key, key.len, (int32_t)index, &prev);
    if (st == MINT_E_ARG)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: key '%s' at byte %" PRIu64 " duplicates metadata entry %" PRId32,
                         c->where, kv->key, kv->file_offset, prev);
    if (st != MINT_OK) return mint_fail(c->err, MINT_E_NOMEM, "%s: out of memory", c->where);
    set_where(c, "metadata", key.p, key.len);

    size_t type_at = c->pos;
    uint32_t type;
    st = read_u32(c, "value type", &type);
    if (st != MINT_OK) return st;
    if (type > MINT_VAL_F64)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: value type %" PRIu32 " at byte %zu is not a GGUF value type (0..12)",
                         c->where, type, type_at);
    kv->type = type;
    kv->n = 1;
    if (type == MINT_VAL_ARRAY) return read_array(c, f, kv);
    if (type == MINT_VAL_STRING) {
        mint_str s;
        st = read_str(c, "string", MINT_MAX_STRING, &s);
        if (st != MINT_OK) return st;
        kv->str = mint_arena_strndup(&f->arena, s.p, s.len);
        if (!kv->str) return mint_fail(c->err, MINT_E_NOMEM, "%s: out of memory", c->where);
        kv->n = s.len;
        return MINT_OK;
    }
    size_t es = mint_value_type_size(type);
    char what[32];
    snprintf(what, sizeof what, "%s value", mint_value_type_name(type));
    st = need(c, es, what);
    if (st != MINT_OK) return st;
    decode_scalar(kv, c->base + c->pos);
    c->pos += es;
    return MINT_OK;
}

// general.alignment decides where the data section starts, so it is checked as soon as it is
// read: a u32 power of two (ggml's rule) no larger than MINT_MAX_ALIGNMENT.
static mint_status check_alignment_kv(cursor *c, mint_file *f, const mint_kv *kv) {
    if (kv->type != MINT_VAL_U32)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "metadata 'general.alignment' at byte %" PRIu64 ": type %s, must be u32",
                         kv->file_offset, mint_value_type_name(kv->type));
    uint64_t a = kv->v.u;
    if (a == 0 || (a & (a - 1)) != 0 || a > MINT_MAX_ALIGNMENT)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "metadata 'general.alignment' at byte %" PRIu64 ": value %" PRIu64
                         " is not a power of two in 1..%u",
                         kv->file_offset, a, MINT_MAX_ALIGNMENT);
    f->alignment = (uint32_t)a;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Tensor infos

static mint_status read_tensor_info(cursor *c, mint_file *f, uint64_t index, mint_tdesc *t) {
    memset(t, 0, sizeof *t);
    size_t at = c->pos;
    snprintf(c->where, sizeof c->where, "tensor %" PRIu64, index);
    mint_str name;
    mint_status st = read_str(c, "name", MINT_MAX_NAME, &name);
    if (st != MINT_OK) return st;
    if (name.len == 0)
        return mint_fail(c->err, MINT_E_FORMAT, "%s: name at byte %zu is empty (length 0)",
                         c->where, at);
    if (memchr(name.p, '\0', name.len))
        return mint_fail(c->err, MINT_E_FORMAT, "%s: name at byte %zu contains a NUL byte",
                         c->where, at);
    t->name = mint_arena_strndup(&f->arena, name.p, name.len);
    if (!t->name) return mint_fail(c->err, MINT_E_NOMEM, "%s: out of memory", c->where);
    int32_t prev;
    st = mint_strmap_put(&f->t_index, t->name, name.len, (int32_t)index, &prev);
    if (st == MINT_E_ARG)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: name '%s' at byte %zu duplicates tensor %" PRId32, c->where, t->name,
                         at, prev);
    if (st != MINT_OK) return mint_fail(c->err, MINT_E_NOMEM, "%s: out of memory", c->where);
    set_where(c, "tensor", name.p, name.len);

    size_t dims_at = c->pos;
    st = read_u32(c, "n_dims", &t->n_dims);
    if (st != MINT_OK) return st;
    if (t->n_dims < 1 || t->n_dims > 4)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: n_dims %" PRIu32 " at byte %zu is outside 1..4", c->where, t->n_dims,
                         dims_at);
    uint64_t count = 1;
    for (int d = 0; d < 4; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        size_t ne_at = c->pos;
        uint64_t ne;
        st = read_u64(c, "ne", &ne);
        if (st != MINT_OK) return st;
        // ggml reads ne as int64 and allows 0; mint has no use for empty tensors.
        if (ne < 1 || ne > INT64_MAX)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "%s: ne[%" PRIu32 "] = %" PRId64 " at byte %zu is outside 1..%" PRId64,
                             c->where, d, (int64_t)ne, ne_at, INT64_MAX);
        if (__builtin_mul_overflow(count, ne, &count) || count > INT64_MAX)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "%s: ne[%" PRIu32 "] = %" PRIu64 " at byte %zu makes the element "
                             "count overflow the limit of %" PRId64,
                             c->where, d, ne, ne_at, INT64_MAX);
        t->ne[d] = (int64_t)ne;
    }
    size_t type_at = c->pos;
    st = read_u32(c, "type", &t->type);
    if (st != MINT_OK) return st;
    const mint_type_traits *tt = mint_type_get(t->type);
    if (!tt)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: type code %" PRIu32 " at byte %zu is not a ggml type with a known "
                         "layout (codes 0..%d, less removed ones and 40, NVFP4)",
                         c->where, t->type, type_at, MINT_TYPE_COUNT - 1);
    if (t->ne[0] % tt->blck != 0)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: row length ne[0] = %" PRId64 " is not a multiple of the %s block "
                         "size %" PRIu32,
                         c->where, t->ne[0], tt->name, tt->blck);
    // Exact byte size with overflow checks: (ne0 / block) * block bytes * (the other dims).
    uint64_t row = (uint64_t)(t->ne[0] / tt->blck) * tt->size;
    uint64_t rows = count / (uint64_t)t->ne[0];
    if (__builtin_mul_overflow(row, rows, &t->nbytes) || t->nbytes > SIZE_MAX)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "%s: byte size of %" PRIu64 " rows of %" PRIu64 " bytes overflows",
                         c->where, rows, row);
    size_t off_at = c->pos;
    st = read_u64(c, "offset", &t->offset);
    if (st != MINT_OK) return st;
    t->file_offset = off_at; // the field's position, until check_data knows data_start
    return MINT_OK;
}

// (offset, tensor index) pairs sorted by offset for the range and overlap checks.
typedef struct span {
    uint64_t offset; // tensor offset in the data section
    uint64_t index;  // tensor index
} span;

static int cmp_span(const void *a, const void *b) {
    uint64_t x = ((const span *)a)->offset, y = ((const span *)b)->offset;
    return x < y ? -1 : x > y;
}

// Every tensor lies inside the file, at an aligned offset, and no two share a byte. (ggml's
// reader also demands that tensors follow each other in info order; mint accepts any order.)
// A tensor that runs past the end where a writer would put it (packed after the one before it
// in offset order) means the file was cut short; one anywhere else has a bad offset.
static mint_status check_data(cursor *c, mint_file *f, uint64_t data_start) {
    uint64_t avail = c->size - data_start; // data_start <= size was checked
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        mint_tdesc *t = &f->t[i];
        set_where(c, "tensor", t->name, strlen(t->name));
        if (t->offset % f->alignment != 0)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "%s: offset %" PRIu64 " at byte %" PRIu64 " is not a multiple of "
                             "the alignment %" PRIu32,
                             c->where, t->offset, t->file_offset, f->alignment);
    }
    span *order = malloc(f->n_tensors * sizeof *order);
    if (!order) return mint_fail(c->err, MINT_E_NOMEM, "out of memory");
    for (uint64_t i = 0; i < f->n_tensors; i++) order[i] = (span){f->t[i].offset, i};
    qsort(order, f->n_tensors, sizeof *order, cmp_span);
    mint_status st = MINT_OK;
    uint64_t packed = 0; // where a writer packing the tensors in this order puts the next one
    for (uint64_t k = 0; k < f->n_tensors && st == MINT_OK; k++) {
        mint_tdesc *t = &f->t[order[k].index];
        set_where(c, "tensor", t->name, strlen(t->name));
        uint64_t field_at = t->file_offset;
        if (t->offset > avail || t->nbytes > avail - t->offset) {
            if (t->offset == packed)
                st = mint_fail(c->err, MINT_E_FORMAT,
                               "file is truncated: it ends at byte %zu, inside the data of %s "
                               "(offset %" PRIu64 " at byte %" PRIu64 " + %" PRIu64 " bytes: "
                               "the data section holds %" PRIu64 " bytes from byte %" PRIu64
                               ", the file would need at least %" PRIu64 " bytes)",
                               c->size, c->where, t->offset, field_at, t->nbytes, avail, data_start,
                               data_start + t->offset + t->nbytes);
            else
                st = mint_fail(c->err, MINT_E_FORMAT,
                               "%s: offset %" PRIu64 " at byte %" PRIu64 " + %" PRIu64 " bytes "
                               "runs past the end of the data section (the data section holds "
                               "%" PRIu64 " bytes from byte %" PRIu64 ")",
                               c->where, t->offset, field_at, t->nbytes, avail, data_start);
            break;
        }
        // In range, so neither sum below overflows.
        const mint_tdesc *a = k ? &f->t[order[k - 1].index] : NULL;
        if (a && a->offset + a->nbytes > t->offset) {
            char an[80], bn[80];
            snprintf(an, sizeof an, "%s", a->name);
            snprintf(bn, sizeof bn, "%s", t->name);
            st = mint_fail(c->err, MINT_E_FORMAT,
                           "tensors '%s' (offset %" PRIu64 ", %" PRIu64 " bytes) and '%s' (offset "
                           "%" PRIu64 ", %" PRIu64 " bytes) overlap in the data section",
                           an, a->offset, a->nbytes, bn, t->offset, t->nbytes);
            break;
        }
        t->file_offset = data_start + t->offset;
        t->data = c->base + t->file_offset;
        uint64_t end = t->offset + t->nbytes;
        if (end > f->data_size) f->data_size = end;
        packed = end + (f->alignment - end % f->alignment) % f->alignment;
    }
    free(order);
    return st;
}

// ---------------------------------------------------------------------------------------------
// The whole file

// The smallest metadata record is 8 (key length) + 1 (key) + 4 (type) + 1 (a u8) bytes; the
// smallest tensor info is 8 (name length) + 1 + 4 (n_dims) + 8 (ne) + 4 (type) + 8 (offset).
enum { MIN_KV = 14, MIN_TENSOR = 33 };

// Refuses counts the rem bytes after the header cannot hold even as the smallest records, or
// above the hard limits: the metadata count when it alone is too large, else the tensor count.
static mint_status count_error(cursor *c, uint64_t n_kv, uint64_t n_tensors, uint64_t rem) {
    uint64_t kv_limit = rem / MIN_KV < MINT_MAX_KV ? rem / MIN_KV : MINT_MAX_KV;
    if (n_kv > kv_limit)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "header: metadata count %" PRIu64 " at byte 16 exceeds the limit of "
                         "%" PRIu64 " (%" PRIu64 " bytes remain, a record takes at least %d; "
                         "hard limit %u)",
                         n_kv, kv_limit, rem, MIN_KV, MINT_MAX_KV);
    rem -= n_kv * MIN_KV;
    uint64_t t_limit = rem / MIN_TENSOR < MINT_MAX_TENSORS ? rem / MIN_TENSOR : MINT_MAX_TENSORS;
    return mint_fail(c->err, MINT_E_FORMAT,
                     "header: tensor count %" PRIu64 " at byte 8 exceeds the limit of %" PRIu64
                     " (%" PRIu64 " bytes remain after the smallest metadata, a tensor info "
                     "takes at least %d; hard limit %u)",
                     n_tensors, t_limit, rem, MIN_TENSOR, MINT_MAX_TENSORS);
}

static mint_status read_header(cursor *c, mint_file *f, uint64_t *n_tensors, uint64_t *n_kv) {
    snprintf(c->where, sizeof c->where, "header");
    uint32_t magic, version;
    mint_status st = read_u32(c, "magic", &magic);
    if (st != MINT_OK) return st;
    if (magic != MINT_GGUF_MAGIC)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "header: magic %02x %02x %02x %02x at byte 0 is not \"GGUF\" (47 47 55 "
                         "46)",
                         c->base[0], c->base[1], c->base[2], c->base[3]);
    st = read_u32(c, "version", &version);
    if (st != MINT_OK) return st;
    if (version == 1)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "header: version 1 at byte 4 is unsupported (GGUF v1 used 32-bit "
                         "counts; mint reads versions 2 and 3; re-convert the model)");
    // A v2/v3 file written on a big-endian machine reads as 0x02000000 / 0x03000000 here.
    if (version != 0 && (version & 0xffff) == 0)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "header: version 0x%08" PRIx32 " at byte 4 looks byte-swapped: "
                         "big-endian GGUF files are unsupported (mint reads versions 2 and 3)",
                         version);
    if (version != 2 && version != 3)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "header: version %" PRIu32 " at byte 4 is unsupported (mint reads "
                         "versions 2 and 3)",
                         version);
    f->version = version;
    st = read_u64(c, "tensor count", n_tensors);
    if (st == MINT_OK) st = read_u64(c, "metadata count", n_kv);
    if (st != MINT_OK) return st;
    // Counts above the hard limits are refused whatever the file's size. The ones the remaining
    // bytes cannot hold are left to parse(): a file cut short has them too.
    if (*n_kv > MINT_MAX_KV || *n_tensors > MINT_MAX_TENSORS)
        return count_error(c, *n_kv, *n_tensors, remaining(c));
    return MINT_OK;
}

// The message of a failure inside a section of n records (at record i): the file ending inside
// a field is reported as truncation; when the header's counts need more bytes than the file has
// (too_short) any other failure is reported as the count that caused it (the records read past
// the real ones are other bytes); else the record's own message stands.
typedef struct section {
    const char *name;   // "the metadata", "the tensor table"
    const char *record; // "entry", "tensor"
    uint64_t i, n;      // failing record, records the header claims
    bool too_short;     // the counts need more bytes than remained after the header
    uint64_t n_kv, n_t; // the header's counts
    uint64_t rem;       // bytes after the header
} section;

static mint_status fail_in(cursor *c, mint_status st, const section *s) {
    if (st != MINT_E_FORMAT) return st;
    if (c->truncated) {
        if (c->err) {
            char detail[400];
            snprintf(detail, sizeof detail, "%.399s", c->err->msg);
            if (s)
                mint_fail(c->err, MINT_E_FORMAT,
                          "file is truncated: it ends at byte %zu, inside %s at %s %" PRIu64
                          " of the %" PRIu64 " the header claims (%s)",
                          c->size, s->name, s->record, s->i, s->n, detail);
            else
                mint_fail(c->err, MINT_E_FORMAT,
                          "file is truncated: it ends at byte %zu, inside the header (%s)", c->size,
                          detail);
        }
        return MINT_E_FORMAT;
    }
    if (s && s->too_short) return count_error(c, s->n_kv, s->n_t, s->rem);
    return st;
}

// Fails as truncation: the bytes left (fewer than min_size, when the capacity below is used up)
// cannot hold the smallest record of its kind.
static mint_status short_of(cursor *c, uint64_t min_size, const char *kind) {
    c->truncated = true;
    return mint_fail(c->err, MINT_E_FORMAT,
                     "%s at byte %zu: %zu bytes remain, the smallest %s takes %" PRIu64, c->where,
                     c->pos, remaining(c), kind, min_size);
}

// Records a section holds room for: n, or fewer when the bytes left cannot hold n records of at
// least min_size bytes (then reading ends in a failure before the last slot is used).
static uint64_t capacity(const cursor *c, uint64_t n, uint64_t min_size) {
    uint64_t fit = remaining(c) / min_size;
    return n < fit ? n : fit;
}

static mint_status parse(cursor *c, mint_file *f) {
    uint64_t n_tensors, n_kv;
    mint_status st = read_header(c, f, &n_tensors, &n_kv);
    if (st != MINT_OK) return fail_in(c, st, NULL);
    const uint64_t rem = remaining(c);
    // Both counts are at most 2^20 here, so the sum cannot overflow. Arrays are sized for the
    // records the bytes can hold, never for a count the file cannot back.
    section s = {.too_short = n_kv * MIN_KV + n_tensors * MIN_TENSOR > rem,
                 .n_kv = n_kv,
                 .n_t = n_tensors,
                 .rem = rem};
    uint64_t cap = capacity(c, n_kv, MIN_KV);
    f->kv = calloc(cap ? cap : 1, sizeof *f->kv);
    if (!f->kv || mint_strmap_init(&f->kv_index, cap) != MINT_OK)
        return mint_fail(c->err, MINT_E_NOMEM, "out of memory for %" PRIu64 " metadata entries",
                         cap);
    f->alignment = MINT_GGUF_DEFAULT_ALIGNMENT;
    s.name = "the metadata", s.record = "entry", s.n = n_kv;
    for (uint64_t i = 0; i < n_kv; i++) {
        s.i = i;
        if (i >= cap) { // fewer than MIN_KV bytes remain: no record fits
            snprintf(c->where, sizeof c->where, "metadata entry %" PRIu64, i);
            st = short_of(c, MIN_KV, "metadata record");
        } else {
            st = read_kv(c, f, i, &f->kv[i]);
            if (st == MINT_OK) f->n_kv = i + 1;
            if (st == MINT_OK && strcmp(f->kv[i].key, "general.alignment") == 0)
                st = check_alignment_kv(c, f, &f->kv[i]);
        }
        if (st != MINT_OK) return fail_in(c, st, &s);
    }
    cap = capacity(c, n_tensors, MIN_TENSOR);
    f->t = calloc(cap ? cap : 1, sizeof *f->t);
    if (!f->t || mint_strmap_init(&f->t_index, cap) != MINT_OK)
        return mint_fail(c->err, MINT_E_NOMEM, "out of memory for %" PRIu64 " tensors", cap);
    s.name = "the tensor table", s.record = "tensor", s.n = n_tensors;
    for (uint64_t i = 0; i < n_tensors; i++) {
        s.i = i;
        if (i >= cap) {
            snprintf(c->where, sizeof c->where, "tensor %" PRIu64, i);
            st = short_of(c, MIN_TENSOR, "tensor info");
        } else {
            st = read_tensor_info(c, f, i, &f->t[i]);
            if (st == MINT_OK) f->n_tensors = i + 1;
        }
        if (st != MINT_OK) return fail_in(c, st, &s);
    }
    f->header_size = c->pos;
    uint64_t data_start = c->pos + (f->alignment - c->pos % f->alignment) % f->alignment;
    f->data_offset = data_start;
    if (n_tensors == 0) return MINT_OK; // vocab-only files may end without the padding
    if (data_start > c->size)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "file is truncated: it ends at byte %zu, before the data section, which "
                         "would start at byte %" PRIu64 " (header end %zu aligned to %" PRIu32 ")",
                         c->size, data_start, c->pos, f->alignment);
    return check_data(c, f, data_start);
}

mint_status mint_gguf_parse(const void *data, size_t size, const char *name, mint_file **out,
                            mint_err *err) {
    *out = NULL;
    if (!name) name = "gguf";
    mint_file *f = mint_file_new(MINT_FORMAT_GGUF);
    if (!f) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", name);
    cursor c = {.base = data, .size = size, .pos = 0, .err = err};
    f->file_size = size;
    mint_status st = parse(&c, f);
    if (st != MINT_OK) {
        mint_err_prefix(err, "%s", name);
        mint_err_one_line(err); // names from the file may hold control bytes
        mint_file_close(f);
        return st;
    }
    *out = f;
    return MINT_OK;
}

mint_status mint_gguf_open(const char *path, bool no_mmap, mint_file **out, mint_err *err) {
    *out = NULL;
    mint_mapped_file map;
    mint_status st = mint_mapped_file_load(path, no_mmap, &map, err);
    if (st != MINT_OK) {
        mint_err_one_line(err); // names from the file may hold control bytes
        return st;
    }
    mint_file *f = NULL;
    st = mint_gguf_parse(map.data, map.size, path, &f, err);
    if (st != MINT_OK) {
        mint_mapped_file_close(&map);
        return st;
    }
    f->maps = malloc(sizeof *f->maps);
    if (!f->maps) {
        mint_mapped_file_close(&map);
        mint_file_close(f);
        return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", path);
    }
    f->maps[0] = map;
    f->n_maps = 1;
    f->no_mmap = no_mmap;
    *out = f;
    return MINT_OK;
}
