// gguf.c - the GGUF reader: every length, count, type, shape and offset is checked here, once,
// against the bytes that remain, before anything is allocated for it. Later code trusts it.
#include "formats/gguf.h"

#include "quant/types.h"
#include "runtime/error.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

// A read position in the file image. Every read checks the bytes remaining and reports the
// field it was reading and the offset where it started.
typedef struct cursor {
    const uint8_t *base; // [size] the whole file
    size_t size;         // file size
    size_t pos;          // next byte to read
    mint_err *err;       // where failures go
} cursor;

static size_t remaining(const cursor *c) {
    return c->size - c->pos;
}

static mint_status need(cursor *c, size_t n, const char *what) {
    if (remaining(c) < n)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: truncated: %s at byte %zu needs %zu bytes, only %zu remain", what,
                         c->pos, n, remaining(c));
    return MINT_OK;
}

// Little-endian loads from possibly unaligned bytes.
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

// A GGUF string: u64 length, then the bytes. The result points into the image.
static mint_status read_str(cursor *c, const char *what, uint64_t max_len, mint_str *out) {
    size_t at = c->pos;
    uint64_t len;
    mint_status st = read_u64(c, what, &len);
    if (st != MINT_OK) return st;
    if (len > max_len)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: %s at byte %zu: length %" PRIu64 " exceeds the limit of %" PRIu64,
                         what, at, len, max_len);
    if (len > remaining(c))
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: %s at byte %zu: length %" PRIu64 " is past the end of the file "
                         "(%zu bytes remain)",
                         what, at, len, remaining(c));
    out->p = (const char *)c->base + c->pos;
    out->len = len;
    c->pos += len;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Metadata

// Reads one scalar of a fixed-size type into the entry and advances.
static void decode_scalar(mint_kv *kv, const uint8_t *p) {
    switch (kv->type) {
    case MINT_VAL_U8:
    case MINT_VAL_BOOL:
        kv->v.u = p[0];
        break;
    case MINT_VAL_I8:
        kv->v.i = (int8_t)p[0];
        break;
    case MINT_VAL_U16:
        kv->v.u = (uint16_t)(p[0] | p[1] << 8);
        break;
    case MINT_VAL_I16:
        kv->v.i = (int16_t)(uint16_t)(p[0] | p[1] << 8);
        break;
    case MINT_VAL_U32:
        kv->v.u = load_u32(p);
        break;
    case MINT_VAL_I32:
        kv->v.i = (int32_t)load_u32(p);
        break;
    case MINT_VAL_U64:
        kv->v.u = load_u64(p);
        break;
    case MINT_VAL_I64:
        kv->v.i = (int64_t)load_u64(p);
        break;
    case MINT_VAL_F32: {
        uint32_t b = load_u32(p);
        float x;
        memcpy(&x, &b, 4);
        kv->v.f = x;
        break;
    }
    case MINT_VAL_F64: {
        uint64_t b = load_u64(p);
        memcpy(&kv->v.f, &b, 8);
        break;
    }
    default:
        break;
    }
}

static mint_status read_array(cursor *c, mint_file *f, mint_kv *kv) {
    size_t at = c->pos;
    uint32_t et;
    uint64_t n;
    mint_status st = read_u32(c, "array element type", &et);
    if (st == MINT_OK) st = read_u64(c, "array length", &n);
    if (st != MINT_OK) return st;
    if (et == MINT_VAL_ARRAY)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: metadata '%s': nested array at byte %zu (arrays of arrays are not "
                         "supported)",
                         kv->key, at);
    if (et > MINT_VAL_F64)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: metadata '%s': array element type %u at byte %zu is not a GGUF "
                         "value type (0..12)",
                         kv->key, et, at);
    if (n > MINT_MAX_ARRAY)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: metadata '%s': array length %" PRIu64 " at byte %zu exceeds the "
                         "limit of %llu",
                         kv->key, n, at + 4, MINT_MAX_ARRAY);
    // Each element takes at least its size (8 bytes for a string's length field).
    size_t es = et == MINT_VAL_STRING ? 8 : mint_value_type_size(et);
    if (n > remaining(c) / es)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: metadata '%s': array of %" PRIu64 " %s at byte %zu needs at least "
                         "%" PRIu64 " bytes, only %zu remain",
                         kv->key, n, mint_value_type_name(et), at + 4, n * es, remaining(c));
    kv->elem_type = et;
    kv->n = n;
    if (et == MINT_VAL_STRING) {
        mint_str *a = mint_arena_alloc(&f->arena, n * sizeof *a + 1);
        if (!a) return mint_fail(c->err, MINT_E_NOMEM, "gguf: out of memory");
        for (uint64_t i = 0; i < n; i++) {
            st = read_str(c, "array string", MINT_MAX_STRING, &a[i]);
            if (st != MINT_OK) {
                mint_err_prefix(c->err, "metadata '%s' element %" PRIu64, kv->key, i);
                return st;
            }
        }
        kv->arr = a;
        return MINT_OK;
    }
    // Copy numeric arrays out of the map: metadata has no alignment, and callers want native
    // aligned elements.
    uint8_t *a = mint_arena_alloc(&f->arena, n * es + 1);
    if (!a) return mint_fail(c->err, MINT_E_NOMEM, "gguf: out of memory");
    const uint8_t *p = c->base + c->pos;
    for (uint64_t i = 0; i < n; i++) {
        mint_kv one = {.type = et};
        decode_scalar(&one, p + i * es);
        void *dst = a + i * es;
        switch (et) {
        case MINT_VAL_U8:
        case MINT_VAL_BOOL:
            *(uint8_t *)dst = (uint8_t)one.v.u;
            break;
        case MINT_VAL_I8:
            *(int8_t *)dst = (int8_t)one.v.i;
            break;
        case MINT_VAL_U16:
            *(uint16_t *)dst = (uint16_t)one.v.u;
            break;
        case MINT_VAL_I16:
            *(int16_t *)dst = (int16_t)one.v.i;
            break;
        case MINT_VAL_U32:
            *(uint32_t *)dst = (uint32_t)one.v.u;
            break;
        case MINT_VAL_I32:
            *(int32_t *)dst = (int32_t)one.v.i;
            break;
        case MINT_VAL_U64:
            *(uint64_t *)dst = one.v.u;
            break;
        case MINT_VAL_I64:
            *(int64_t *)dst = one.v.i;
            break;
        case MINT_VAL_F32:
            *(float *)dst = (float)one.v.f;
            break;
        case MINT_VAL_F64:
            *(double *)dst = one.v.f;
            break;
        default:
            break;
        }
    }
    c->pos += n * es;
    kv->arr = a;
    return MINT_OK;
}

static mint_status read_kv(cursor *c, mint_file *f, uint64_t index, mint_kv *kv) {
    memset(kv, 0, sizeof *kv);
    kv->file_offset = c->pos;
    mint_str key;
    mint_status st = read_str(c, "metadata key", MINT_MAX_KEY, &key);
    if (st != MINT_OK) {
        mint_err_prefix(c->err, "metadata entry %" PRIu64, index);
        return st;
    }
    if (key.len == 0)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: metadata entry %" PRIu64 " at byte %" PRIu64 ": empty key", index,
                         kv->file_offset);
    if (memchr(key.p, '\0', key.len))
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: metadata entry %" PRIu64 " at byte %" PRIu64
                         ": key contains a NUL byte",
                         index, kv->file_offset);
    kv->key = mint_arena_strndup(&f->arena, key.p, key.len);
    if (!kv->key) return mint_fail(c->err, MINT_E_NOMEM, "gguf: out of memory");
    size_t type_at = c->pos;
    uint32_t type;
    st = read_u32(c, "metadata value type", &type);
    if (st != MINT_OK) return st;
    if (type > MINT_VAL_F64)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: metadata '%s': value type %u at byte %zu is not a GGUF value type "
                         "(0..12)",
                         kv->key, type, type_at);
    kv->type = type;
    kv->n = 1;
    if (type == MINT_VAL_ARRAY) return read_array(c, f, kv);
    if (type == MINT_VAL_STRING) {
        mint_str s;
        st = read_str(c, "metadata string value", MINT_MAX_STRING, &s);
        if (st != MINT_OK) {
            mint_err_prefix(c->err, "metadata '%s'", kv->key);
            return st;
        }
        kv->str = mint_arena_strndup(&f->arena, s.p, s.len);
        if (!kv->str) return mint_fail(c->err, MINT_E_NOMEM, "gguf: out of memory");
        kv->n = s.len;
        return MINT_OK;
    }
    size_t es = mint_value_type_size(type);
    st = need(c, es, "metadata value");
    if (st != MINT_OK) {
        mint_err_prefix(c->err, "metadata '%s'", kv->key);
        return st;
    }
    decode_scalar(kv, c->base + c->pos);
    c->pos += es;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Tensor infos

static mint_status read_tensor_info(cursor *c, mint_file *f, uint64_t index, mint_tdesc *t) {
    memset(t, 0, sizeof *t);
    size_t at = c->pos;
    mint_str name;
    mint_status st = read_str(c, "tensor name", UINT64_MAX, &name);
    if (st != MINT_OK) {
        mint_err_prefix(c->err, "tensor %" PRIu64, index);
        return st;
    }
    if (name.len == 0 || name.len > MINT_MAX_NAME)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: tensor %" PRIu64 " at byte %zu: name length %" PRIu64
                         " is outside 1..%d",
                         index, at, name.len, MINT_MAX_NAME);
    if (memchr(name.p, '\0', name.len))
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: tensor %" PRIu64 " at byte %zu: name contains a NUL byte", index,
                         at);
    t->name = mint_arena_strndup(&f->arena, name.p, name.len);
    if (!t->name) return mint_fail(c->err, MINT_E_NOMEM, "gguf: out of memory");

    size_t dims_at = c->pos;
    st = read_u32(c, "tensor n_dims", &t->n_dims);
    if (st != MINT_OK) return st;
    if (t->n_dims < 1 || t->n_dims > 4)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: tensor '%s': n_dims = %u at byte %zu is outside 1..4", t->name,
                         t->n_dims, dims_at);
    uint64_t count = 1;
    for (int d = 0; d < 4; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        size_t ne_at = c->pos;
        uint64_t ne;
        st = read_u64(c, "tensor ne", &ne);
        if (st != MINT_OK) return st;
        if (ne < 1 || ne > INT64_MAX)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "gguf: tensor '%s': ne[%u] = %" PRId64 " at byte %zu, must be >= 1",
                             t->name, d, (int64_t)ne, ne_at);
        if (__builtin_mul_overflow(count, ne, &count) || count > INT64_MAX)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "gguf: tensor '%s': element count overflows int64 at ne[%u] = "
                             "%" PRIu64 " (byte %zu)",
                             t->name, d, ne, ne_at);
        t->ne[d] = (int64_t)ne;
    }
    size_t type_at = c->pos;
    st = read_u32(c, "tensor type", &t->type);
    if (st != MINT_OK) return st;
    const mint_type_traits *tt = mint_type_get(t->type);
    if (!tt)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: tensor '%s': type code %u at byte %zu is not a known ggml type",
                         t->name, t->type, type_at);
    if (t->ne[0] % tt->blck != 0)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: tensor '%s': row length ne[0] = %" PRId64 " is not a multiple of "
                         "the %s block size %u",
                         t->name, t->ne[0], tt->name, tt->blck);
    // nbytes <= count * 4.5-ish bytes, but compute it exactly with overflow checks.
    uint64_t row = (uint64_t)(t->ne[0] / tt->blck) * tt->size;
    uint64_t rows = count / (uint64_t)t->ne[0];
    if (__builtin_mul_overflow(row, rows, &t->nbytes))
        return mint_fail(c->err, MINT_E_FORMAT, "gguf: tensor '%s': byte size overflows", t->name);
    size_t off_at = c->pos;
    st = read_u64(c, "tensor offset", &t->offset);
    if (st != MINT_OK) return st;
    t->file_offset = off_at; // fixed up to the data position once data_start is known
    return MINT_OK;
}

// (offset, tensor index) pairs sorted by offset for the overlap check.
typedef struct span {
    uint64_t offset; // tensor offset in the data section
    uint64_t index;  // tensor index
} span;

static int cmp_span(const void *a, const void *b) {
    uint64_t x = ((const span *)a)->offset, y = ((const span *)b)->offset;
    return x < y ? -1 : x > y;
}

static mint_status check_data(cursor *c, mint_file *f, uint64_t data_start) {
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        mint_tdesc *t = &f->t[i];
        size_t info_off_at = (size_t)t->file_offset;
        if (t->offset % f->alignment != 0)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "gguf: tensor '%s': offset %" PRIu64 " (byte %zu) is not a multiple "
                             "of the alignment %u",
                             t->name, t->offset, info_off_at, f->alignment);
        uint64_t avail = c->size - data_start;
        if (t->offset > avail || t->nbytes > avail - t->offset)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "gguf: tensor '%s': data [%" PRIu64 ", +%" PRIu64 ") (offset at byte "
                             "%zu) is past the end of the data section (%" PRIu64 " bytes)",
                             t->name, t->offset, t->nbytes, info_off_at, avail);
        t->file_offset = data_start + t->offset;
        t->data = c->base + t->file_offset;
        if (t->offset + t->nbytes > f->data_size) f->data_size = t->offset + t->nbytes;
    }
    // No two tensors may share bytes: sort by offset and compare neighbours.
    if (f->n_tensors < 2) return MINT_OK;
    span *order = malloc(f->n_tensors * sizeof *order);
    if (!order) return mint_fail(c->err, MINT_E_NOMEM, "gguf: out of memory");
    for (uint64_t i = 0; i < f->n_tensors; i++) order[i] = (span){f->t[i].offset, i};
    qsort(order, f->n_tensors, sizeof *order, cmp_span);
    mint_status st = MINT_OK;
    for (uint64_t k = 1; k < f->n_tensors; k++) {
        const mint_tdesc *a = &f->t[order[k - 1].index], *b = &f->t[order[k].index];
        if (a->offset + a->nbytes > b->offset) {
            st = mint_fail(c->err, MINT_E_FORMAT,
                           "gguf: tensors '%s' [%" PRIu64 ", +%" PRIu64 ") and '%s' [%" PRIu64
                           ", +%" PRIu64 ") overlap in the data section",
                           a->name, a->offset, a->nbytes, b->name, b->offset, b->nbytes);
            break;
        }
    }
    free(order);
    return st;
}

// ---------------------------------------------------------------------------------------------
// The whole file

static mint_status parse(cursor *c, mint_file *f) {
    uint32_t magic, version;
    mint_status st = read_u32(c, "magic", &magic);
    if (st != MINT_OK) return st;
    if (magic != MINT_GGUF_MAGIC)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: bad magic %02x %02x %02x %02x at byte 0, expected 47 47 55 46 "
                         "(\"GGUF\")",
                         c->base[0], c->base[1], c->base[2], c->base[3]);
    st = read_u32(c, "version", &version);
    if (st != MINT_OK) return st;
    if (version == 1)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: version 1 (byte 4) is not supported: it used 32-bit counts; "
                         "re-convert the model with a current llama.cpp");
    if (version != 2 && version != 3) {
        if ((version & 0xffff) == 0)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "gguf: version 0x%08x at byte 4 looks byte-swapped: big-endian GGUF "
                             "files are not supported",
                             version);
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: version %u at byte 4 is not supported (mint reads 2 and 3)",
                         version);
    }
    f->version = version;
    uint64_t n_tensors, n_kv;
    st = read_u64(c, "tensor count", &n_tensors);
    if (st == MINT_OK) st = read_u64(c, "metadata count", &n_kv);
    if (st != MINT_OK) return st;
    // Smallest possible records: a KV is 8 (key length) + 1 + 4 (type) + 1 bytes; a tensor info
    // is 8 (name length) + 1 + 4 (n_dims) + 8 (ne) + 4 (type) + 8 (offset) bytes.
    uint64_t rem = remaining(c);
    if (n_kv > MINT_MAX_KV || n_kv > rem / 14)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: metadata count %" PRIu64 " at byte 16 exceeds what the remaining "
                         "%" PRIu64 " bytes can hold (limit %" PRIu64 ")",
                         n_kv, rem, rem / 14 < MINT_MAX_KV ? rem / 14 : MINT_MAX_KV);
    if (n_tensors > MINT_MAX_TENSORS || n_tensors > rem / 33)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: tensor count %" PRIu64 " at byte 8 exceeds what the remaining "
                         "%" PRIu64 " bytes can hold (limit %" PRIu64 ")",
                         n_tensors, rem, rem / 33 < MINT_MAX_TENSORS ? rem / 33 : MINT_MAX_TENSORS);

    f->kv = calloc(n_kv ? n_kv : 1, sizeof *f->kv);
    f->t = calloc(n_tensors ? n_tensors : 1, sizeof *f->t);
    if (!f->kv || !f->t) return mint_fail(c->err, MINT_E_NOMEM, "gguf: out of memory");
    f->alignment = MINT_GGUF_DEFAULT_ALIGNMENT;
    for (uint64_t i = 0; i < n_kv; i++) {
        st = read_kv(c, f, i, &f->kv[i]);
        if (st != MINT_OK) return st;
        f->n_kv = i + 1;
        const mint_kv *kv = &f->kv[i];
        if (strcmp(kv->key, "general.alignment") == 0) {
            if (kv->type != MINT_VAL_U32)
                return mint_fail(c->err, MINT_E_FORMAT,
                                 "gguf: general.alignment at byte %" PRIu64 " is a %s, must be u32",
                                 kv->file_offset, mint_value_type_name(kv->type));
            uint64_t a = kv->v.u;
            if (a == 0 || (a & (a - 1)) != 0 || a > MINT_MAX_ALIGNMENT)
                return mint_fail(c->err, MINT_E_FORMAT,
                                 "gguf: general.alignment = %" PRIu64 " at byte %" PRIu64
                                 " is not a power of two in 1..%u",
                                 a, kv->file_offset, MINT_MAX_ALIGNMENT);
            f->alignment = (uint32_t)a;
        }
    }
    for (uint64_t i = 0; i < n_tensors; i++) {
        st = read_tensor_info(c, f, i, &f->t[i]);
        if (st != MINT_OK) return st;
        f->n_tensors = i + 1;
    }
    st = mint_file_build_index(f, c->err);
    if (st != MINT_OK) {
        mint_err_prefix(c->err, "gguf");
        return st;
    }
    uint64_t data_start = c->pos + (f->alignment - c->pos % f->alignment) % f->alignment;
    f->data_offset = data_start;
    if (n_tensors > 0 && data_start > c->size)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "gguf: data section would start at byte %" PRIu64
                         " (header end %zu aligned to %u), past the end of the %zu-byte file",
                         data_start, c->pos, f->alignment, c->size);
    if (n_tensors > 0) return check_data(c, f, data_start);
    return MINT_OK;
}

mint_status mint_gguf_parse(const void *data, size_t size, const char *name, mint_file **out,
                            mint_err *err) {
    *out = NULL;
    mint_file *f = mint_file_new(MINT_FORMAT_GGUF);
    if (!f) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", name);
    cursor c = {data, size, 0, err};
    f->file_size = size;
    mint_status st = parse(&c, f);
    if (st != MINT_OK) {
        mint_err_prefix(err, "%s", name);
        mint_file_close(f);
        return st;
    }
    *out = f;
    return MINT_OK;
}

mint_status mint_gguf_open(const char *path, mint_file **out, mint_err *err) {
    *out = NULL;
    mint_mapped_file map;
    mint_status st = mint_mapped_file_open(path, &map, err);
    if (st != MINT_OK) return st;
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
    *out = f;
    return MINT_OK;
}
