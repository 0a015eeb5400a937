// fuzz_gguf.c - the GGUF reader on arbitrary bytes. The input is the whole file image (libFuzzer
// hands it over in a heap block of exactly its size, so AddressSanitizer sees any read past it).
//
// A rejected file must come with a one-line message that starts with the file's name. An
// accepted one is walked completely, checking what the reader promises: every metadata entry
// through mint_file_kv, every typed getter (each must agree with the stored type) and
// mint_file_kv_format at several buffer sizes (a short buffer holds a prefix of the full text);
// every tensor through mint_file_tensor and mint_file_find_tensor, its bytes inside the image,
// aligned, sized as its type and shape say, and read once (a hash). Then the vocabulary loader
// runs on the metadata, and when it accepts it, the tokenizer on a fixed text; and the model
// binder, and for a model it accepts one token of the plain forward pass.
#include "formats/gguf.h"
#include "fuzz_util.h"
#include "quant/types.h"
#include "runtime/engine/model.h"
#include "runtime/text/vocab.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t *image_lo, *image_hi; // the input, for "inside the image" checks

// Every getter on one key; each succeeds exactly when the stored type allows it.
static void walk_getters(const mint_file *f, const mint_kv_info *kv) {
    mint_err err;
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    float f32;
    bool b;
    bool is_int = kv->type <= MINT_VAL_I32 || kv->type == MINT_VAL_U64 || kv->type == MINT_VAL_I64;
    mint_status st = mint_file_get_u32(f, kv->key, &u32, &err);
    FUZZ_CHECK(st == MINT_OK || (st == MINT_E_TYPE && err.code == MINT_E_TYPE));
    FUZZ_CHECK(st != MINT_OK || is_int);
    st = mint_file_get_i32(f, kv->key, &i32, &err);
    FUZZ_CHECK(st == MINT_OK || st == MINT_E_TYPE);
    FUZZ_CHECK(st != MINT_OK || is_int);
    st = mint_file_get_u64(f, kv->key, &u64, &err);
    FUZZ_CHECK(st == MINT_OK || st == MINT_E_TYPE);
    FUZZ_CHECK(st != MINT_OK || is_int);
    st = mint_file_get_f32(f, kv->key, &f32, &err);
    FUZZ_CHECK((st == MINT_OK) == (kv->type == MINT_VAL_F32 || kv->type == MINT_VAL_F64));
    st = mint_file_get_bool(f, kv->key, &b, &err);
    FUZZ_CHECK((st == MINT_OK) == (kv->type == MINT_VAL_BOOL));

    const char *s;
    uint64_t len;
    st = mint_file_get_str(f, kv->key, &s, &len, &err);
    FUZZ_CHECK((st == MINT_OK) == (kv->type == MINT_VAL_STRING));
    if (st == MINT_OK) FUZZ_CHECK(len == kv->n && s[len] == '\0'); // the arena copy ends in NUL

    mint_value_type et;
    uint64_t n;
    const void *data;
    st = mint_file_get_arr(f, kv->key, &et, &n, &data, &err);
    FUZZ_CHECK((st == MINT_OK) == (kv->type == MINT_VAL_ARRAY));
    if (st != MINT_OK) return;
    FUZZ_CHECK(et == kv->elem_type && n == kv->n && et != MINT_VAL_ARRAY && et <= MINT_VAL_F64);
    if (et == MINT_VAL_STRING) {
        FUZZ_CHECK(data == NULL);
        // All elements of short arrays; the first and last 16 of long ones.
        for (uint64_t i = 0; i < n; i = (i == 15 && n > 32) ? n - 16 : i + 1) {
            st = mint_file_get_arr_str(f, kv->key, i, &s, &len, &err);
            FUZZ_CHECK(st == MINT_OK);
            FUZZ_CHECK((const uint8_t *)s >= image_lo && len <= (uint64_t)(image_hi - image_lo));
            FUZZ_CHECK((const uint8_t *)s + len <= image_hi);
        }
        FUZZ_CHECK(mint_file_get_arr_str(f, kv->key, n, &s, &len, &err) == MINT_E_ARG);
    } else {
        size_t es = mint_value_type_size(et);
        FUZZ_CHECK(es > 0 && (n == 0 || data != NULL));
        volatile uint8_t sink = 0;
        const uint8_t *p = data;
        for (uint64_t i = 0; i < n * es; i++) sink ^= p[i]; // every byte readable
        (void)sink;
    }
}

// mint_file_kv_format at several sizes: the full text, then shorter buffers that must hold its
// prefix and a NUL.
static void walk_format(const mint_file *f, uint64_t i) {
    static const size_t limits[][2] = {{0, 0}, {8, 2}, {64, 8}, {1 << 20, 1 << 20}};
    for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
        size_t max_str = limits[k][0], max_items = limits[k][1];
        size_t want = mint_file_kv_format(f, i, NULL, 0, max_str, max_items);
        FUZZ_CHECK(want > 0);
        if (want > (1u << 24)) continue; // a huge array rendered in full: not worth the time
        char *full = malloc(want + 1);
        FUZZ_CHECK(full);
        FUZZ_CHECK(mint_file_kv_format(f, i, full, want + 1, max_str, max_items) == want);
        FUZZ_CHECK(strlen(full) == want);
        size_t caps[] = {1, want / 2 + 1, want};
        for (size_t c = 0; c < 3; c++) {
            char *part = malloc(caps[c]);
            FUZZ_CHECK(part);
            FUZZ_CHECK(mint_file_kv_format(f, i, part, caps[c], max_str, max_items) == want);
            FUZZ_CHECK(strlen(part) == caps[c] - 1 && memcmp(part, full, caps[c] - 1) == 0);
            free(part);
        }
        free(full);
    }
}

static void walk_tensors(const mint_file *f, const mint_file_info *info) {
    for (uint64_t i = 0; i < info->n_tensors; i++) {
        mint_tensor_info t, t2;
        FUZZ_CHECK(mint_file_tensor(f, i, &t) == MINT_OK);
        FUZZ_CHECK(t.name && strlen(t.name) >= 1 && strlen(t.name) <= MINT_MAX_NAME);
        FUZZ_CHECK(mint_file_find_tensor(f, t.name, &t2) == MINT_OK);
        FUZZ_CHECK(t2.offset == t.offset && t2.nbytes == t.nbytes && t2.type == t.type);
        FUZZ_CHECK(t.type_known && t.n_dims >= 1 && t.n_dims <= 4);
        uint64_t count = 1;
        for (int d = 0; d < 4; d++) {
            FUZZ_CHECK(t.ne[d] >= 1 && (d < (int)t.n_dims || t.ne[d] == 1));
            FUZZ_CHECK(!__builtin_mul_overflow(count, (uint64_t)t.ne[d], &count));
        }
        FUZZ_CHECK(count <= INT64_MAX);
        FUZZ_CHECK(t.nbytes == mint_type_nbytes(t.type, count));
        FUZZ_CHECK(t.offset % info->alignment == 0);
        FUZZ_CHECK(t.file_offset == info->data_offset + t.offset);
        FUZZ_CHECK(t.offset + t.nbytes <= info->data_size);
        const uint8_t *p = t.data;
        FUZZ_CHECK(p >= image_lo && p <= image_hi && t.nbytes <= (uint64_t)(image_hi - p));
        (void)mint_hash64(p, t.nbytes);
        (void)mint_type_name(t.type);
    }
    mint_tensor_info t;
    FUZZ_CHECK(mint_file_tensor(f, info->n_tensors, &t) == MINT_E_ARG);
}

// The vocabulary loader on whatever metadata the file has; when it accepts it, the tokenizer on
// a fixed text and on the input's last bytes (so the fuzzer can shape the text to the vocabulary).
static void try_vocab(const mint_file *f, const uint8_t *data, size_t size) {
    mint_vocab *v = NULL;
    mint_err err;
    mint_status st = mint_vocab_load(f, &v, &err);
    FUZZ_CHECK((st == MINT_OK) == (v != NULL));
    if (st != MINT_OK) {
        FUZZ_CHECK(err.code == st && err.msg[0] != '\0');
        return;
    }
    static const char fixed[] = " Hello <s>world</s>\n\xE2\x96\x81\xFF\x00 <unk>x";
    size_t tail = size < 64 ? size : 64;
    int32_t ids[256];
    for (int k = 0; k < 4; k++) {
        bool ps = k & 1;
        const char *text = k < 2 ? fixed : (const char *)data + size - tail;
        size_t len = k < 2 ? sizeof fixed - 1 : tail;
        size_t n = 0;
        st = mint_vocab_tokenize(v, text, len, true, ps, ids, 256, &n, &err);
        FUZZ_CHECK(st == MINT_OK || st == MINT_E_UNSUPPORTED || st == MINT_E_LIMIT);
        if (st == MINT_E_LIMIT) n = 256;
        if (st == MINT_E_UNSUPPORTED) n = 0;
        for (size_t j = 0; j < n; j++) FUZZ_CHECK(ids[j] >= 0 && ids[j] < v->n);
        char out[512];
        (void)mint_vocab_detokenize(v, ids, n, ps, ps, out, sizeof out);
    }
    mint_vocab_free(v);
}

// The model binder on the same bytes (an architecture's row, its hyper-parameters and tensors:
// runtime/engine/model.c), without the background repacking: a refusal is one line naming the
// file; a model it accepts runs one token through the plain forward pass (reference kernels,
// every bound tensor read), which must not read outside what was bound.
static void try_model(const uint8_t *data, size_t size) {
    mint_file *f = NULL;
    mint_err err;
    if (mint_gguf_parse(data, size, "fuzz.gguf", &f, &err) != MINT_OK) return;
    mint_model_params mp = {.no_repack = true};
    mint_model *m = NULL;
    mint_status st = mint_model_open_file(f, "fuzz.gguf", &mp, &m, &err);
    if (st != MINT_OK) {
        FUZZ_CHECK(m == NULL && err.code == st);
        FUZZ_CHECK(strncmp(err.msg, "fuzz.gguf", 9) == 0 && !strchr(err.msg, '\n'));
        return;
    }
    // One token, when the model is small enough to run at fuzzing speed and its matrices are
    // float ones: quantized weights would round the activations to integers, and a mutated
    // weight's NaN would make that conversion undefined behaviour (a NaN costs a float model
    // nothing but NaN logits).
    bool floats = true;
    for (uint64_t i = 0; i < m->file->n_tensors; i++) {
        const uint32_t t = m->file->t[i].type;
        floats &= t == MINT_TYPE_F32 || t == MINT_TYPE_F16 || t == MINT_TYPE_BF16;
    }
    if (floats && m->weight_bytes <= (1u << 20)) {
        mint_plain *p = NULL;
        if (mint_plain_create(m, 4, &p, &err) == MINT_OK) {
            float *logits = malloc((size_t)m->hp.n_vocab * sizeof *logits);
            if (logits) FUZZ_CHECK(mint_plain_forward(p, 0, 0, logits, &err) == MINT_OK);
            free(logits);
            mint_plain_free(p);
        }
    }
    mint_model_close(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    image_lo = data;
    image_hi = data + size;
    mint_file *f = NULL;
    mint_err err;
    mint_status st = mint_gguf_parse(data, size, "fuzz.gguf", &f, &err);
    if (st != MINT_OK) {
        FUZZ_CHECK(f == NULL && err.code == st);
        FUZZ_CHECK(strncmp(err.msg, "fuzz.gguf: ", 11) == 0 && !strchr(err.msg, '\n'));
        return 0;
    }
    FUZZ_CHECK(f != NULL);
    mint_file_info info;
    mint_file_get_info(f, &info);
    FUZZ_CHECK(info.format == MINT_FORMAT_GGUF && (info.version == 2 || info.version == 3));
    FUZZ_CHECK(info.file_size == size && info.header_size <= size);
    FUZZ_CHECK(info.alignment >= 1 && (info.alignment & (info.alignment - 1)) == 0);
    FUZZ_CHECK(info.data_offset >= info.header_size && info.data_offset % info.alignment == 0);
    FUZZ_CHECK(info.n_tensors == 0 || info.data_offset + info.data_size <= size);

    for (uint64_t i = 0; i < info.n_kv; i++) {
        mint_kv_info kv;
        FUZZ_CHECK(mint_file_kv(f, i, &kv) == MINT_OK);
        FUZZ_CHECK(kv.key && kv.key[0] != '\0' && kv.type <= MINT_VAL_F64);
        FUZZ_CHECK(mint_file_find_kv(f, kv.key) == &f->kv[i]); // keys are unique
        walk_getters(f, &kv);
        walk_format(f, i);
    }
    mint_kv_info kv;
    FUZZ_CHECK(mint_file_kv(f, info.n_kv, &kv) == MINT_E_ARG);
    walk_tensors(f, &info);

    const char *tmpl;
    if (mint_file_get_str(f, "tokenizer.chat_template", &tmpl, NULL, NULL) == MINT_OK)
        (void)mint_chat_detect(tmpl);
    try_vocab(f, data, size);
    mint_file_close(f);
    try_model(data, size);
    return 0;
}
