// make_seeds.c - writes the seed inputs of the fuzz harnesses (tools/scripts/fuzz.sh runs it before
// fuzzing). Seeds are made at run time from MINT_TEST_DATA's real files and from the small
// hand-written texts in tests/fuzz/seeds; nothing from the data folder is committed.
//
//   fuzz_make_seeds gguf OUT_DIR [DATA_DIR]         real GGUF files shrunk to valid small ones
//                                                   (every metadata entry, arrays cut to 300
//                                                   items, every tensor cut to one block of its
//                                                   real bytes), their headers cut short, and
//                                                   synthetic files (v2, other alignment)
//   fuzz_make_seeds tokenizer OUT_DIR [DATA_DIR]    llama.cpp's tokenizer test strings and lines
//                                                   of TinyStories and WikiText
//   fuzz_make_seeds safetensors OUT_DIR [DATA_DIR]  small tensors of the real models written as
//                                                   safetensors, and hand-made headers
//   fuzz_make_seeds chat OUT_DIR SRC_DIR            every SRC_DIR/*.jinja template followed by
//                                                   NUL-separated conversations
//   fuzz_make_seeds args OUT_DIR SRC_DIR            every SRC_DIR/*.args (one argument per line)
//                                                   as NUL-separated arguments
//
// DATA_DIR defaults to $MINT_TEST_DATA; without it only the synthetic seeds are written.
#include "formats/gguf.h"
#include "mint.h"
#ifdef MINT_FUZZ_SAFETENSORS
#include "formats/safetensors.h"
#endif

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KEEP_ITEMS = 300 };   // array items kept when shrinking a GGUF
enum { HEAD_BYTES = 16384 }; // a cut-short header seed holds at most this many bytes
enum { MAX_SEED = 1 << 20 }; // larger generated seeds are skipped

static const char *out_dir;
static int n_written;
static void gguf_architectures(void);

static void write_seed(const char *name, const void *data, size_t len) {
    if (len > MAX_SEED) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "fuzz_make_seeds: cannot write %s\n", path);
        exit(1);
    }
    n_written++;
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *b = realloc(buf, 2 * cap + 1);
            if (!b) free(buf);
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

static const char *data_path(const char *data_dir, const char *rel) {
    static char path[4096];
    if (!data_dir) return NULL;
    snprintf(path, sizeof path, "%s/%s", data_dir, rel);
    return path;
}

// ---------------------------------------------------------------------------------------------
// GGUF

// A valid copy of f: every metadata entry (arrays cut to KEEP_ITEMS), and every tensor with its
// dimensions cut to one block by one row, holding the first bytes of its real data.
static bool shrink_gguf(const mint_file *f, uint32_t version, uint32_t alignment, uint8_t **buf,
                        size_t *len) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    if (!w) return false;
    mint_gguf_writer_set_version(w, version);
    mint_status st = MINT_OK;
    for (uint64_t i = 0; i < f->n_kv && st == MINT_OK; i++) {
        const mint_kv *kv = &f->kv[i];
        if (kv->type == MINT_VAL_ARRAY && kv->n > KEEP_ITEMS) {
            if (kv->elem_type == MINT_VAL_STRING)
                st = mint_gguf_add_arr_str(w, kv->key, kv->arr, KEEP_ITEMS);
            else
                st = mint_gguf_add_arr(w, kv->key, kv->elem_type, kv->arr, KEEP_ITEMS);
        } else {
            st = mint_gguf_add_kv_from(w, f, i);
        }
    }
    if (alignment && st == MINT_OK) st = mint_gguf_add_u32(w, "general.alignment", alignment);
    for (uint64_t i = 0; i < f->n_tensors && st == MINT_OK; i++) {
        const mint_tdesc *t = &f->t[i];
        int64_t ne[4] = {mint_type_block_size(t->type), 1, 1, 1};
        uint64_t nbytes = mint_type_nbytes(t->type, (uint64_t)ne[0]);
        st = mint_gguf_add_tensor(w, t->name, t->type, t->n_dims, ne, t->data, nbytes);
    }
    mint_err err;
    if (st == MINT_OK) st = mint_gguf_writer_write_mem(w, buf, len, &err);
    mint_gguf_writer_free(w);
    return st == MINT_OK;
}

static void gguf_from_file(const char *data_dir, const char *rel, const char *tag) {
    const char *path = data_path(data_dir, rel);
    mint_file *f = NULL;
    mint_err err;
    if (!path || mint_gguf_open(path, false, &f, &err) != MINT_OK) return;
    char name[256];
    uint8_t *buf;
    size_t len;
    if (shrink_gguf(f, 3, 0, &buf, &len)) {
        snprintf(name, sizeof name, "%s-small.gguf", tag);
        write_seed(name, buf, len);
        // The same, cut inside the last tensor info's offset field (a truncated file).
        mint_file *small = NULL;
        if (mint_gguf_parse(buf, len, name, &small, &err) == MINT_OK && small->n_tensors > 0) {
            snprintf(name, sizeof name, "%s-small-cut.gguf", tag);
            write_seed(name, buf, (size_t)small->header_size - 5);
        }
        mint_file_close(small);
        free(buf);
    }
    // The real header, cut short.
    size_t head = f->header_size < HEAD_BYTES ? (size_t)f->header_size : HEAD_BYTES;
    snprintf(name, sizeof name, "%s-head.gguf", tag);
    write_seed(name, f->maps[0].data, head);
    mint_file_close(f);
}

// A small llama-like file made from nothing: every value type, a vocabulary, tensors of several
// types; written as v3 and v2 and with another alignment.
static void gguf_synthetic(void) {
    const char *toks[] = {"<unk>", "<s>", "</s>", "<0x0A>", "\xE2\x96\x81", "a", "b", "ab"};
    mint_str strs[8];
    for (int i = 0; i < 8; i++) strs[i] = (mint_str){toks[i], strlen(toks[i])};
    float scores[8] = {0, 0, 0, 0, -1, -2, -3, -4};
    int32_t types[8] = {2, 3, 3, 6, 1, 1, 1, 1};
    for (int variant = 0; variant < 3; variant++) {
        mint_gguf_writer *w = mint_gguf_writer_create();
        if (variant == 1) mint_gguf_writer_set_version(w, 2);
        mint_gguf_add_str(w, "general.architecture", "llama");
        mint_gguf_add_str(w, "general.name", "synthetic");
        if (variant == 2) mint_gguf_add_u32(w, "general.alignment", 64);
        mint_gguf_add_u32(w, "llama.context_length", 128);
        mint_gguf_add_u32(w, "llama.embedding_length", 32);
        mint_gguf_add_u32(w, "llama.block_count", 1);
        mint_gguf_add_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
        mint_gguf_add_bool(w, "tokenizer.ggml.add_bos_token", true);
        uint8_t u8 = 7;
        int8_t i8 = -7;
        uint16_t u16 = 65535;
        int16_t i16 = -32768;
        int32_t i32 = -1;
        uint64_t u64 = UINT64_MAX;
        int64_t i64 = INT64_MIN;
        double f64 = 0.1;
        mint_gguf_add_scalar(w, "test.u8", MINT_VAL_U8, &u8);
        mint_gguf_add_scalar(w, "test.i8", MINT_VAL_I8, &i8);
        mint_gguf_add_scalar(w, "test.u16", MINT_VAL_U16, &u16);
        mint_gguf_add_scalar(w, "test.i16", MINT_VAL_I16, &i16);
        mint_gguf_add_scalar(w, "test.i32", MINT_VAL_I32, &i32);
        mint_gguf_add_scalar(w, "test.u64", MINT_VAL_U64, &u64);
        mint_gguf_add_scalar(w, "test.i64", MINT_VAL_I64, &i64);
        mint_gguf_add_scalar(w, "test.f64", MINT_VAL_F64, &f64);
        mint_gguf_add_str(w, "tokenizer.ggml.model", "llama");
        mint_gguf_add_arr_str(w, "tokenizer.ggml.tokens", strs, 8);
        mint_gguf_add_arr(w, "tokenizer.ggml.scores", MINT_VAL_F32, scores, 8);
        mint_gguf_add_arr(w, "tokenizer.ggml.token_type", MINT_VAL_I32, types, 8);
        mint_gguf_add_str(w, "tokenizer.chat_template", "{{'<|im_start|>'}}<|im_end|>");
        static const uint32_t tensor_types[] = {0, 1, 2, 8, 12, 14, 30};
        for (int i = 0; i < 7; i++) {
            char name[32];
            snprintf(name, sizeof name, "blk.0.t%d.weight", i);
            uint32_t t = tensor_types[i];
            int64_t ne[2] = {mint_type_block_size(t), 2};
            mint_gguf_add_tensor(w, name, t, 2, ne, NULL, mint_type_nbytes(t, (uint64_t)ne[0] * 2));
        }
        uint8_t *buf;
        size_t len;
        mint_err err;
        if (mint_gguf_writer_write_mem(w, &buf, &len, &err) == MINT_OK) {
            char name[64];
            snprintf(name, sizeof name, "synthetic-%d.gguf", variant);
            write_seed(name, buf, len);
            free(buf);
        }
        mint_gguf_writer_free(w);
    }
}

static void seeds_gguf(const char *data_dir) {
    static const char *const files[][2] = {
        {"stories260K.gguf", "stories260K"},
        {"ggml-vocab-llama-spm.gguf", "vocab-llama-spm"},
        {"llama-2-tiny-random.gguf", "llama-2-tiny-random"},
        {"quant/stories260K-q4_0.gguf", "stories260K-q4_0"},
        {"quant/stories260K-q8_0.gguf", "stories260K-q8_0"},
        {"quant/stories260K-f16.gguf", "stories260K-f16"},
        {"quant/tiny256-q4_k_m.gguf", "tiny256-q4_k_m"},
        {"quant/tiny256-q2_k.gguf", "tiny256-q2_k"},
        {"quant/tiny256-q6_k.gguf", "tiny256-q6_k"},
        {"quant/tiny256-bf16.gguf", "tiny256-bf16"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        gguf_from_file(data_dir, files[i][0], files[i][1]);
    gguf_synthetic();
    gguf_architectures();
}

// A whole model of each architecture of runtime/engine/arch.c, as small as one goes (synth.c's
// "micro" shape: one 8-wide layer, ~25 KB), so the harness's model binder and plain forward
// pass start from files they accept, and mutations reach the architecture-specific keys and
// tensors (key_length, rope_freqs, LongRoPE's factors and attn_factor, the fused and bias
// tensors, position_embd, the experts' counts and stacked tensors, a hybrid's per-layer KV heads
// and short convolutions, Gemma 4's per-layer arrays and inputs).
static void gguf_architectures(void) {
    static const char *const arches[] = {"llama3",   "qwen2",   "qwen3",    "phi3",    "gpt2",
                                         "gemma2",   "gemma3",  "qwen3moe", "mixtral", "olmoe",
                                         "qwen2moe", "gpt-oss", "lfm2",     "qwen35",  "gemma4"};
    for (size_t i = 0; i < sizeof arches / sizeof *arches; i++) {
        char name[64];
        snprintf(name, sizeof name, "micro-%s.gguf", arches[i]);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", out_dir, name);
        mint_synth_params p = {
            .preset = arches[i], .ftype = "F32", .seed = 1, .n_threads = 1, .shape = "micro"};
        mint_err err;
        if (mint_synth_write(&p, path, &err) != MINT_OK) {
            fprintf(stderr, "fuzz_make_seeds: %s\n", err.msg);
            exit(1);
        }
        n_written++;
    }
}
// ---------------------------------------------------------------------------------------------
// Tokenizer texts

static void seeds_tokenizer(const char *data_dir) {
    size_t len;
    const char *path = data_path(data_dir, "ggml-vocab-llama-spm.gguf.inp");
    char *inp = path ? read_all(path, &len) : NULL;
    // Test strings are separated by "\n__ggml_vocab_test__\n".
    static const char sep[] = "\n__ggml_vocab_test__\n";
    int k = 0;
    for (char *p = inp; p && *p;) {
        char *end = strstr(p, sep);
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[64];
        snprintf(name, sizeof name, "inp-%02d.txt", k++);
        write_seed(name, p, n);
        if (!end) break;
        p = end + sizeof sep - 1;
    }
    free(inp);
    // A few lines of running text, in chunks of at most 512 bytes.
    static const char *const texts[][2] = {{"tinystories_val.txt", "tinystories"},
                                           {"wiki.test.raw", "wiki"}};
    for (int t = 0; t < 2; t++) {
        path = data_path(data_dir, texts[t][0]);
        char *txt = path ? read_all(path, &len) : NULL;
        for (int i = 0; txt && i < 8 && (size_t)(i + 1) * 4096 <= len; i++) {
            char name[64];
            snprintf(name, sizeof name, "%s-%d.txt", texts[t][1], i);
            write_seed(name, txt + (size_t)i * 4096, 64 + 64 * (size_t)i);
        }
        free(txt);
    }
}

// ---------------------------------------------------------------------------------------------
// safetensors

#ifdef MINT_FUZZ_SAFETENSORS
static void st_from_gguf(const char *data_dir, const char *rel, const char *tag) {
    const char *path = data_path(data_dir, rel);
    mint_file *f = NULL;
    mint_err err;
    if (!path || mint_gguf_open(path, false, &f, &err) != MINT_OK) return;
    mint_st_writer *w = mint_st_writer_create();
    mint_st_writer_add_meta(w, "format", "pt");
    int kept = 0;
    for (uint64_t i = 0; i < f->n_tensors && kept < 16; i++) {
        const mint_tdesc *t = &f->t[i];
        if (!mint_st_dtype_of_type(t->type)) continue;
        // Two rows of at most 8 elements, in the tensor's own dimensionality.
        int64_t ne[4] = {t->ne[0] < 8 ? t->ne[0] : 8, t->ne[1] < 2 ? t->ne[1] : 2, 1, 1};
        uint64_t nbytes = mint_type_nbytes(t->type, (uint64_t)(ne[0] * ne[1]));
        if (mint_st_writer_add(w, t->name, t->type, t->n_dims, ne, t->data, nbytes, &err) ==
            MINT_OK)
            kept++;
    }
    uint8_t *buf;
    size_t len;
    if (kept && mint_st_writer_write_mem(w, &buf, &len, &err) == MINT_OK) {
        char name[128];
        snprintf(name, sizeof name, "%s.safetensors", tag);
        write_seed(name, buf, len);
        free(buf);
    }
    mint_st_writer_free(w);
    mint_file_close(f);
}

// A header written by hand after its u64 length, then `data_len` bytes of data.
static void st_by_hand(const char *name, const char *json, size_t data_len) {
    size_t n = strlen(json);
    uint8_t *buf = calloc(1, 8 + n + data_len);
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(buf + 8, json, n);
    for (size_t i = 0; i < data_len; i++) buf[8 + n + i] = (uint8_t)(i * 37);
    write_seed(name, buf, 8 + n + data_len);
    free(buf);
}

static void seeds_safetensors(const char *data_dir) {
    st_from_gguf(data_dir, "stories260K.gguf", "stories260K");
    st_from_gguf(data_dir, "quant/stories260K-f16.gguf", "stories260K-f16");
    st_from_gguf(data_dir, "quant/tiny256-bf16.gguf", "tiny256-bf16");
    // Unaligned tensors (copied by the reader), a 0-d scalar, an empty tensor, metadata.
    st_by_hand("unaligned.safetensors",
               "{\"a\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[1,7]},"
               "\"b\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[7,11]},"
               "\"c\":{\"dtype\":\"I64\",\"shape\":[0,5],\"data_offsets\":[11,11]},"
               "\"__metadata__\":{\"format\":\"pt\",\"note\":\"\\u00e9\\n\"}}",
               16);
    st_by_hand("dtypes.safetensors",
               "{\"w\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]},"
               "\"x\":{\"dtype\":\"I8\",\"shape\":[1,1,1,3],\"data_offsets\":[8,11]},"
               "\"y\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[16,24]},"
               "\"z\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[24,32]}}   ",
               32);
    st_by_hand("refused.safetensors",
               "{\"u\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4);
}
#endif

// ---------------------------------------------------------------------------------------------
// Chat and argument lists from the committed text files

// (role, content) pairs, NUL-separated. A one-byte role is the harness's short name: "\x01" is
// "user", "\x02" "assistant" ("\x00", "system", cannot be spelled inside a string here).
#define CONVERSATION(s)                                                                            \
    { s, sizeof s - 1 }
static const struct {
    const char *p; // [n] bytes
    size_t n;      // length, NULs included
} conversations[] = {
    CONVERSATION("system\0You are a helpful assistant.\0user\0Hello!"),
    CONVERSATION("user\0Hi\0assistant\0  Hello, how can I help?  \0user\0Tell me a story."),
    CONVERSATION("\x01\0What is 2+2?\0\x02\0"
                 "4</s>\0\x01\0\xE3\x80\x80 spaced \xC2\xA0"),
    CONVERSATION("system\0\0user\0\0assistant\0"),
};

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

// Calls fn(name, text, len) for every SRC_DIR/*<suffix> file.
static void for_each_file(const char *src_dir, const char *suffix,
                          void (*fn)(const char *, const char *, size_t)) {
    DIR *d = opendir(src_dir);
    if (!d) {
        fprintf(stderr, "fuzz_make_seeds: cannot open %s\n", src_dir);
        exit(1);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, suffix)) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", src_dir, e->d_name);
        size_t len;
        char *text = read_all(path, &len);
        if (text) fn(e->d_name, text, len);
        free(text);
    }
    closedir(d);
}

static void chat_seeds_of(const char *name, const char *text, size_t len) {
    write_seed(name, text, len); // the template alone
    for (size_t c = 0; c < sizeof conversations / sizeof conversations[0]; c++) {
        size_t n = len + 1 + conversations[c].n;
        char *buf = malloc(n);
        memcpy(buf, text, len);
        buf[len] = '\0';
        memcpy(buf + len + 1, conversations[c].p, conversations[c].n);
        char seed[300];
        snprintf(seed, sizeof seed, "%s-%zu", name, c);
        write_seed(seed, buf, n);
        free(buf);
    }
}

static void args_seed_of(const char *name, const char *text, size_t len) {
    char *buf = malloc(len + 1);
    memcpy(buf, text, len);
    if (len > 0 && buf[len - 1] == '\n') len--; // no empty argument after the last line
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\n') buf[i] = '\0';
    write_seed(name, buf, len);
    free(buf);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: fuzz_make_seeds gguf|tokenizer|safetensors OUT_DIR [DATA_DIR]\n"
                        "       fuzz_make_seeds chat|args OUT_DIR SRC_DIR\n");
        return 2;
    }
    const char *what = argv[1];
    out_dir = argv[2];
    const char *dir = argc > 3 ? argv[3] : getenv("MINT_TEST_DATA");
    if (dir && !*dir) dir = NULL;
    if (strcmp(what, "gguf") == 0)
        seeds_gguf(dir);
    else if (strcmp(what, "tokenizer") == 0)
        seeds_tokenizer(dir);
#ifdef MINT_FUZZ_SAFETENSORS
    else if (strcmp(what, "safetensors") == 0)
        seeds_safetensors(dir);
#endif
    else if (strcmp(what, "chat") == 0 && dir)
        for_each_file(dir, ".jinja", chat_seeds_of);
    else if (strcmp(what, "args") == 0 && dir)
        for_each_file(dir, ".args", args_seed_of);
    else {
        fprintf(stderr, "fuzz_make_seeds: unknown target '%s' (or SRC_DIR missing)\n", what);
        return 2;
    }
    printf("%s: %d seeds in %s\n", what, n_written, out_dir);
    return 0;
}
