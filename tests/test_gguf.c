// test_gguf.c - the GGUF reader on real files and the typed metadata getters.
//
// Expected values come from shared/data/README.md and from an independent Python walk of the
// files (offsets of every metadata record, header ends). The writer is tested in
// test_gguf_write.c, malformed files in test_gguf_malformed.c.
#include "formats/gguf.h"
#include "helpers/helpers.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static mint_file *open_data(const char *rel) {
    mint_err err = {0};
    mint_file *f = NULL;
    mint_status st = mint_file_open(mt_data_path(rel), &f, &err);
    cr_assert_eq(st, MINT_OK, "%s: %s", rel, err.msg);
    cr_assert_not_null(f);
    return f;
}

static float bits_to_f32(const void *p) {
    float x;
    memcpy(&x, p, 4);
    return x;
}

// ---------------------------------------------------------------------------------------------
// stories260K.gguf

typedef struct kv_expect {
    const char *key;
    mint_value_type type;
    mint_value_type elem_type; // for arrays
    uint64_t n;                // array length, string length, or 1
    uint64_t file_offset;      // where the record starts
} kv_expect;

static const kv_expect stories_kv[19] = {
    {"tokenizer.ggml.tokens", MINT_VAL_ARRAY, MINT_VAL_STRING, 512, 24},
    {"tokenizer.ggml.scores", MINT_VAL_ARRAY, MINT_VAL_F32, 512, 6470},
    {"tokenizer.ggml.token_type", MINT_VAL_ARRAY, MINT_VAL_I32, 512, 8563},
    {"tokenizer.ggml.model", MINT_VAL_STRING, 0, 5, 10660},
    {"general.architecture", MINT_VAL_STRING, 0, 5, 10705},
    {"general.name", MINT_VAL_STRING, 0, 5, 10750},
    {"tokenizer.ggml.unknown_token_id", MINT_VAL_U32, 0, 1, 10787},
    {"tokenizer.ggml.bos_token_id", MINT_VAL_U32, 0, 1, 10834},
    {"tokenizer.ggml.eos_token_id", MINT_VAL_U32, 0, 1, 10877},
    {"tokenizer.ggml.seperator_token_id", MINT_VAL_U32, 0, 1, 10920},
    {"tokenizer.ggml.padding_token_id", MINT_VAL_U32, 0, 1, 10969},
    {"llama.context_length", MINT_VAL_U32, 0, 1, 11016},
    {"llama.embedding_length", MINT_VAL_U32, 0, 1, 11052},
    {"llama.feed_forward_length", MINT_VAL_U32, 0, 1, 11090},
    {"llama.attention.head_count", MINT_VAL_U32, 0, 1, 11131},
    {"llama.attention.head_count_kv", MINT_VAL_U32, 0, 1, 11173},
    {"llama.block_count", MINT_VAL_U32, 0, 1, 11218},
    {"llama.rope.dimension_count", MINT_VAL_U32, 0, 1, 11251},
    {"llama.attention.layer_norm_rms_epsilon", MINT_VAL_F32, 0, 1, 11293},
};

// The values of the u32 entries 6..17 above, in order.
static const uint32_t stories_u32[12] = {0,  1,   2, 4294967295u, 4294967295u, 2048,
                                         64, 172, 8, 4,           5,           8};

Test(gguf_stories, header) {
    mint_file *f = open_data("stories260K.gguf");
    mint_file_info info;
    mint_file_get_info(f, &info);
    cr_assert_eq(info.format, MINT_FORMAT_GGUF);
    cr_assert_eq(info.version, 3);
    cr_assert_eq(info.file_size, 1185376);
    cr_assert_eq(info.n_kv, 19);
    cr_assert_eq(info.n_tensors, 48);
    cr_assert_eq(info.alignment, 32);
    cr_assert_eq(info.header_size, 14152);
    cr_assert_eq(info.data_offset, 14176);
    cr_assert_eq(info.data_size, 1171200); // the last tensor ends at the end of the file
    cr_assert_eq(info.data_offset + info.data_size, info.file_size);
    mint_file_close(f);
}

Test(gguf_stories, every_metadata_key_type_and_offset) {
    mint_file *f = open_data("stories260K.gguf");
    for (uint64_t i = 0; i < 19; i++) {
        mint_kv_info kv;
        cr_assert_eq(mint_file_kv(f, i, &kv), MINT_OK);
        cr_assert_str_eq(kv.key, stories_kv[i].key);
        cr_assert_eq(kv.type, stories_kv[i].type, "%s", kv.key);
        if (kv.type == MINT_VAL_ARRAY) cr_assert_eq(kv.elem_type, stories_kv[i].elem_type);
        cr_assert_eq(kv.n, stories_kv[i].n, "%s", kv.key);
        cr_assert_eq(kv.file_offset, stories_kv[i].file_offset, "%s", kv.key);
    }
    mint_kv_info kv;
    cr_assert_eq(mint_file_kv(f, 19, &kv), MINT_E_ARG);
    for (int i = 0; i < 12; i++) {
        uint32_t v = 0;
        mint_err err = {0};
        cr_assert_eq(mint_file_get_u32(f, stories_kv[6 + i].key, &v, &err), MINT_OK, "%s", err.msg);
        cr_assert_eq(v, stories_u32[i], "%s = %u", stories_kv[6 + i].key, v);
    }
    float eps = 0;
    cr_assert_eq(mint_file_get_f32(f, "llama.attention.layer_norm_rms_epsilon", &eps, NULL),
                 MINT_OK);
    cr_assert_eq(eps, 1e-5f);
    const char *s;
    uint64_t len;
    const char *strs[3][2] = {{"tokenizer.ggml.model", "llama"},
                              {"general.architecture", "llama"},
                              {"general.name", "llama"}};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(mint_file_get_str(f, strs[i][0], &s, &len, NULL), MINT_OK);
        cr_assert_eq(len, strlen(strs[i][1]));
        cr_assert_eq(memcmp(s, strs[i][1], len), 0);
        cr_assert_eq(s[len], '\0'); // stored NUL-terminated for convenience
    }
    mint_file_close(f);
}

Test(gguf_stories, vocabulary_arrays) {
    mint_file *f = open_data("stories260K.gguf");
    mint_value_type et;
    uint64_t n;
    const void *data;
    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.tokens", &et, &n, &data, NULL), MINT_OK);
    cr_assert_eq(et, MINT_VAL_STRING);
    cr_assert_eq(n, 512);
    cr_assert_null(data); // string elements go through mint_file_get_arr_str
    const char *want[] = {"<unk>", "<s>", "</s>", "<0x00>"};
    for (int i = 0; i < 4; i++) {
        const char *s;
        uint64_t len;
        cr_assert_eq(mint_file_get_arr_str(f, "tokenizer.ggml.tokens", (uint64_t)i, &s, &len, NULL),
                     MINT_OK);
        cr_assert_eq(len, strlen(want[i]));
        cr_assert_eq(memcmp(s, want[i], len), 0);
    }
    const char *s;
    uint64_t len;
    cr_assert_eq(mint_file_get_arr_str(f, "tokenizer.ggml.tokens", 259, &s, &len, NULL), MINT_OK);
    cr_assert_eq(len, 4);
    cr_assert_eq(memcmp(s, "\xe2\x96\x81t", 4), 0); // "▁t", the first merge
    cr_assert_eq(mint_file_get_arr_str(f, "tokenizer.ggml.tokens", 264, &s, &len, NULL), MINT_OK);
    cr_assert_eq(memcmp(s, "nd", 2), 0);
    mint_err err = {0};
    cr_assert_eq(mint_file_get_arr_str(f, "tokenizer.ggml.tokens", 512, &s, &len, &err),
                 MINT_E_ARG);
    cr_assert(strstr(err.msg, "512"), "%s", err.msg);

    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.scores", &et, &n, &data, NULL), MINT_OK);
    cr_assert_eq(et, MINT_VAL_F32);
    cr_assert_eq(n, 512);
    const float *scores = data;
    for (int i = 0; i < 259; i++) cr_assert_eq(scores[i], 0.0f, "score %d", i);
    // Merge token i has score -(i - 259).
    for (int i = 259; i < 512; i++)
        cr_assert_eq(scores[i], -(float)(i - 259), "score %d = %g", i, scores[i]);

    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.token_type", &et, &n, &data, NULL), MINT_OK);
    cr_assert_eq(et, MINT_VAL_I32);
    cr_assert_eq(n, 512);
    const int32_t *types = data;
    int count[8] = {0};
    for (int i = 0; i < 512; i++) {
        cr_assert(types[i] >= 1 && types[i] <= 6, "type %d", types[i]);
        count[types[i]]++;
    }
    cr_assert_eq(count[2], 1);   // UNKNOWN
    cr_assert_eq(count[3], 2);   // CONTROL
    cr_assert_eq(count[6], 256); // BYTE
    cr_assert_eq(count[1], 253); // NORMAL
    cr_assert_eq(types[0], 2);
    cr_assert_eq(types[1], 3);
    cr_assert_eq(types[3], 6);
    cr_assert_eq(types[259], 1);
    mint_file_close(f);
}

// Offsets of the 11 tensors of a block relative to its start, and the block size.
static const struct {
    const char *suffix;
    int64_t ne0, ne1;
    uint64_t rel;
} block_tensors[11] = {
    {"attn_q.weight", 64, 64, 0},        {"attn_k.weight", 64, 32, 16384},
    {"attn_v.weight", 64, 32, 24576},    {"attn_output.weight", 64, 64, 32768},
    {"attn_norm.weight", 64, 1, 49152},  {"ffn_gate.weight", 64, 172, 49408},
    {"ffn_down.weight", 172, 64, 93440}, {"ffn_up.weight", 64, 172, 137472},
    {"ffn_norm.weight", 64, 1, 181504},
};

Test(gguf_stories, every_tensor_name_shape_type_offset) {
    mint_file *f = open_data("stories260K.gguf");
    size_t len;
    uint8_t *file = mt_read_file(mt_data_path("stories260K.gguf"), &len);
    cr_assert_not_null(file);
    struct {
        const char *name;
        int64_t ne0, ne1;
        uint64_t offset;
    } want[48] = {{"token_embd.weight", 64, 512, 0},
                  {"output_norm.weight", 64, 1, 131072},
                  {"output.weight", 64, 512, 131328}};
    static char names[48][64];
    for (int b = 0; b < 5; b++)
        for (int k = 0; k < 9; k++) {
            int i = 3 + b * 9 + k;
            snprintf(names[i], sizeof names[i], "blk.%d.%s", b, block_tensors[k].suffix);
            want[i].name = names[i];
            want[i].ne0 = block_tensors[k].ne0;
            want[i].ne1 = block_tensors[k].ne1;
            want[i].offset = 262400 + (uint64_t)b * 181760 + block_tensors[k].rel;
        }
    uint64_t params = 0;
    for (uint64_t i = 0; i < 48; i++) {
        mint_tensor_info t;
        cr_assert_eq(mint_file_tensor(f, i, &t), MINT_OK);
        cr_assert_str_eq(t.name, want[i].name);
        cr_assert_eq(t.type, MINT_TYPE_F32, "%s", t.name);
        cr_assert(t.type_known && t.type_computable);
        cr_assert_eq(t.n_dims, want[i].ne1 == 1 ? 1u : 2u, "%s", t.name);
        cr_assert_eq(t.ne[0], want[i].ne0, "%s", t.name);
        cr_assert_eq(t.ne[1], want[i].ne1, "%s", t.name);
        cr_assert_eq(t.ne[2], 1);
        cr_assert_eq(t.ne[3], 1);
        cr_assert_eq(t.offset, want[i].offset, "%s offset %llu", t.name,
                     (unsigned long long)t.offset);
        cr_assert_eq(t.file_offset, 14176 + want[i].offset);
        cr_assert_eq(t.nbytes, (uint64_t)(want[i].ne0 * want[i].ne1 * 4));
        cr_assert_eq(memcmp(t.data, file + t.file_offset, t.nbytes), 0, "%s bytes", t.name);
        params += (uint64_t)(t.ne[0] * t.ne[1]);
        mint_tensor_info by_name;
        cr_assert_eq(mint_file_find_tensor(f, t.name, &by_name), MINT_OK);
        cr_assert_eq(by_name.offset, t.offset);
    }
    cr_assert_eq(params, 292800);
    mint_tensor_info t;
    cr_assert_eq(mint_file_tensor(f, 48, &t), MINT_E_ARG);
    cr_assert_eq(mint_file_find_tensor(f, "blk.5.attn_q.weight", &t), MINT_E_NOT_FOUND);

    // The first weights, bit for bit, and llama2.c's tied output: same bytes as the embedding.
    mint_tensor_info emb, out;
    mint_file_find_tensor(f, "token_embd.weight", &emb);
    mint_file_find_tensor(f, "output.weight", &out);
    cr_assert_eq(bits_to_f32(emb.data), -0.29474878311157227f);
    cr_assert_eq(bits_to_f32((const char *)emb.data + 4), 0.5618956089019775f);
    cr_assert_eq(memcmp(emb.data, out.data, emb.nbytes), 0);
    mint_tensor_info norm;
    mint_file_find_tensor(f, "output_norm.weight", &norm);
    cr_assert_eq(bits_to_f32(norm.data), 2.4583089351654053f);
    free(file);
    mint_file_close(f);
}

Test(gguf_stories, getter_errors) {
    mint_file *f = open_data("stories260K.gguf");
    mint_err err = {0};
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    float f32;
    bool b;
    const char *s;
    cr_assert_eq(mint_file_get_u32(f, "llama.rope.freq_base", &u32, &err), MINT_E_NOT_FOUND);
    cr_assert_eq(err.code, MINT_E_NOT_FOUND);
    cr_assert(strstr(err.msg, "'llama.rope.freq_base'") && strstr(err.msg, "missing"), "%s",
              err.msg);
    cr_assert_eq(mint_file_get_f32(f, "tokenizer.ggml.add_bos_token", &f32, &err),
                 MINT_E_NOT_FOUND);
    cr_assert(strstr(err.msg, "tokenizer.ggml.add_bos_token"), "%s", err.msg);
    // Wrong types name the key, the stored type and the wanted one.
    cr_assert_eq(mint_file_get_bool(f, "llama.context_length", &b, &err), MINT_E_TYPE);
    cr_assert_eq(err.code, MINT_E_TYPE);
    cr_assert(strstr(err.msg, "'llama.context_length'") && strstr(err.msg, "u32") &&
                  strstr(err.msg, "bool"),
              "%s", err.msg);
    cr_assert_eq(mint_file_get_u32(f, "general.name", &u32, &err), MINT_E_TYPE);
    cr_assert(strstr(err.msg, "'general.name'") && strstr(err.msg, "str"), "%s", err.msg);
    cr_assert_eq(mint_file_get_str(f, "llama.block_count", &s, NULL, &err), MINT_E_TYPE);
    cr_assert_eq(mint_file_get_f32(f, "llama.block_count", &f32, &err), MINT_E_TYPE);
    cr_assert_eq(mint_file_get_arr(f, "general.name", NULL, NULL, NULL, &err), MINT_E_TYPE);
    cr_assert_eq(mint_file_get_arr_str(f, "tokenizer.ggml.scores", 0, &s, NULL, &err), MINT_E_TYPE);
    cr_assert(strstr(err.msg, "arr[str]"), "%s", err.msg);
    // Integer getters take any integer type whose value fits, and refuse one that does not.
    cr_assert_eq(mint_file_get_u64(f, "llama.context_length", &u64, &err), MINT_OK);
    cr_assert_eq(u64, 2048);
    cr_assert_eq(mint_file_get_i32(f, "llama.block_count", &i32, &err), MINT_OK);
    cr_assert_eq(i32, 5);
    cr_assert_eq(mint_file_get_i32(f, "tokenizer.ggml.padding_token_id", &i32, &err), MINT_E_TYPE);
    cr_assert(strstr(err.msg, "4294967295") && strstr(err.msg, "i32"), "%s", err.msg);
    mint_file_close(f);
}

Test(gguf_stories, kv_format) {
    mint_file *f = open_data("stories260K.gguf");
    char buf[256];
    mint_file_kv_format(f, 0, buf, sizeof buf, 64, 3);
    cr_assert_str_eq(buf, "[str; 512] \"<unk>\", \"<s>\", \"</s>\", ...");
    mint_file_kv_format(f, 1, buf, sizeof buf, 64, 2);
    cr_assert_str_eq(buf, "[f32; 512] 0, 0, ...");
    mint_file_kv_format(f, 2, buf, sizeof buf, 64, 0);
    cr_assert_str_eq(buf, "[i32; 512] ...");
    mint_file_kv_format(f, 4, buf, sizeof buf, 64, 3);
    cr_assert_str_eq(buf, "\"llama\"");
    mint_file_kv_format(f, 4, buf, sizeof buf, 2, 3);
    cr_assert_str_eq(buf, "\"ll\"...");
    mint_file_kv_format(f, 11, buf, sizeof buf, 64, 3);
    cr_assert_str_eq(buf, "2048");
    mint_file_kv_format(f, 18, buf, sizeof buf, 64, 3);
    cr_assert_str_eq(buf, "9.99999975e-06");
    // A small buffer is cut (and NUL-terminated); the length wanted is returned.
    size_t want = mint_file_kv_format(f, 0, buf, 8, 64, 3);
    cr_assert_eq(want, strlen("[str; 512] \"<unk>\", \"<s>\", \"</s>\", ..."));
    cr_assert_str_eq(buf, "[str; 5");
    mint_file_close(f);
}

// ---------------------------------------------------------------------------------------------
// ggml-vocab-llama-spm.gguf: 32000 tokens, no tensors, and no padding after the header

Test(gguf_vocab, header_and_vocabulary) {
    mint_file *f = open_data("ggml-vocab-llama-spm.gguf");
    mint_file_info info;
    mint_file_get_info(f, &info);
    cr_assert_eq(info.version, 3);
    cr_assert_eq(info.n_kv, 22);
    cr_assert_eq(info.n_tensors, 0);
    cr_assert_eq(info.file_size, 723869);
    cr_assert_eq(info.header_size, 723869);
    cr_assert_eq(info.data_offset, 723872); // past the end, which is fine without tensors
    cr_assert_eq(info.data_size, 0);

    const struct {
        const char *key;
        uint32_t v;
    } u32s[] = {{"llama.block_count", 32},
                {"llama.context_length", 4096},
                {"llama.embedding_length", 4096},
                {"llama.feed_forward_length", 11008},
                {"llama.attention.head_count", 32},
                {"llama.attention.head_count_kv", 32},
                {"general.file_type", 1},
                {"llama.vocab_size", 32000},
                {"llama.rope.dimension_count", 128},
                {"tokenizer.ggml.bos_token_id", 1},
                {"tokenizer.ggml.eos_token_id", 2},
                {"tokenizer.ggml.unknown_token_id", 0}};
    for (size_t i = 0; i < sizeof u32s / sizeof *u32s; i++) {
        uint32_t v = 99;
        cr_assert_eq(mint_file_get_u32(f, u32s[i].key, &v, NULL), MINT_OK, "%s", u32s[i].key);
        cr_assert_eq(v, u32s[i].v, "%s = %u", u32s[i].key, v);
    }
    bool add_bos = false, add_eos = true;
    cr_assert_eq(mint_file_get_bool(f, "tokenizer.ggml.add_bos_token", &add_bos, NULL), MINT_OK);
    cr_assert_eq(mint_file_get_bool(f, "tokenizer.ggml.add_eos_token", &add_eos, NULL), MINT_OK);
    cr_assert(add_bos && !add_eos);
    const char *s;
    uint64_t len;
    cr_assert_eq(mint_file_get_str(f, "general.name", &s, &len, NULL), MINT_OK);
    cr_assert_str_eq(s, "llama-spm");
    cr_assert_eq(mint_file_get_str(f, "tokenizer.ggml.pre", &s, &len, NULL), MINT_OK);
    cr_assert_str_eq(s, "default");
    float eps;
    cr_assert_eq(mint_file_get_f32(f, "llama.attention.layer_norm_rms_epsilon", &eps, NULL),
                 MINT_OK);
    cr_assert_eq(eps, 1e-5f);

    uint64_t n;
    const void *data;
    mint_value_type et;
    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.tokens", &et, &n, NULL, NULL), MINT_OK);
    cr_assert_eq(n, 32000);
    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.scores", &et, &n, &data, NULL), MINT_OK);
    cr_assert_eq(et, MINT_VAL_F32);
    cr_assert_eq(n, 32000);
    const float *scores = data;
    const struct {
        uint64_t id;
        const char *piece;
        float score;
    } pieces[] = {{15043, "\xe2\x96\x81Hello", -14784.0f},
                  {3186, "\xe2\x96\x81world", -2927.0f},
                  {259, "\xe2\x96\x81\xe2\x96\x81", -1e9f},
                  {29871, "\xe2\x96\x81", -1e9f},
                  {13, "<0x0A>", 0.0f},
                  {31999, "\xe7\xbb\x99", -31740.0f}};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        cr_assert_eq(
            mint_file_get_arr_str(f, "tokenizer.ggml.tokens", pieces[i].id, &s, &len, NULL),
            MINT_OK);
        cr_assert_eq(len, strlen(pieces[i].piece), "token %llu", (unsigned long long)pieces[i].id);
        cr_assert_eq(memcmp(s, pieces[i].piece, len), 0);
        cr_assert_eq(scores[pieces[i].id], pieces[i].score, "score of %s = %g", pieces[i].piece,
                     scores[pieces[i].id]);
    }
    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.token_type", &et, &n, &data, NULL), MINT_OK);
    cr_assert_eq(et, MINT_VAL_I32);
    const int32_t *types = data;
    int count[8] = {0};
    for (uint64_t i = 0; i < n; i++) {
        cr_assert(types[i] >= 1 && types[i] <= 6);
        count[types[i]]++;
    }
    cr_assert_eq(count[1], 31741);
    cr_assert_eq(count[2], 1);
    cr_assert_eq(count[3], 2);
    cr_assert_eq(count[6], 256);
    mint_file_close(f);
}

// ---------------------------------------------------------------------------------------------
// llama-2-tiny-random.gguf: F16 matrices

Test(gguf_tiny_random, f16_tensors) {
    mint_file *f = open_data("llama-2-tiny-random.gguf");
    mint_file_info info;
    mint_file_get_info(f, &info);
    cr_assert_eq(info.n_kv, 18);
    cr_assert_eq(info.n_tensors, 12);
    cr_assert_eq(info.header_size, 724398);
    cr_assert_eq(info.data_offset, 724416);
    cr_assert_eq(info.file_size, 1750560);
    const struct {
        const char *name;
        uint32_t type;
        int64_t ne0, ne1;
        uint64_t offset;
    } want[] = {{"token_embd.weight", MINT_TYPE_F16, 8, 32000, 0},
                {"blk.0.attn_q.weight", MINT_TYPE_F16, 8, 8, 512000},
                {"blk.0.ffn_gate.weight", MINT_TYPE_F16, 8, 32, 512512},
                {"blk.0.ffn_down.weight", MINT_TYPE_F16, 32, 8, 513536},
                {"blk.0.attn_norm.weight", MINT_TYPE_F32, 8, 1, 514048},
                {"output_norm.weight", MINT_TYPE_F32, 8, 1, 514112},
                {"output.weight", MINT_TYPE_F16, 8, 32000, 514144}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        mint_tensor_info t;
        cr_assert_eq(mint_file_find_tensor(f, want[i].name, &t), MINT_OK, "%s", want[i].name);
        cr_assert_eq(t.type, want[i].type, "%s", t.name);
        cr_assert_eq(t.ne[0], want[i].ne0);
        cr_assert_eq(t.ne[1], want[i].ne1);
        cr_assert_eq(t.offset, want[i].offset, "%s", t.name);
        cr_assert_eq(t.nbytes, (uint64_t)(want[i].ne0 * want[i].ne1) *
                                   (want[i].type == MINT_TYPE_F16 ? 2 : 4));
    }
    mint_tensor_info t;
    mint_file_find_tensor(f, "blk.0.attn_q.weight", &t);
    const uint8_t *q = t.data;
    cr_assert_eq(q[0] | q[1] << 8, 0x2636); // first f16 weight, as stored
    mint_file_find_tensor(f, "output_norm.weight", &t);
    for (int i = 0; i < 8; i++) cr_assert_eq(bits_to_f32((const char *)t.data + 4 * i), 1.0f);
    uint32_t n_ctx;
    cr_assert_eq(mint_file_get_u32(f, "llama.context_length", &n_ctx, NULL), MINT_OK);
    cr_assert_eq(n_ctx, 4096);
    mint_file_close(f);
}
