// synth_presets.c - the tables of mint-quantize --synthetic's shapes (runtime/filetools/
// synth_presets.h): each architecture's real, tiny and micro presets, the mixtures' experts and
// the hybrids' layers.
#include "runtime/filetools/synth_presets.h"

#include "runtime/engine/arch.h"

#include <stdio.h>
#include <string.h>

// llama.cpp gives special tokens Phi-3's strip attributes when general.name contains "phi3" or
// "phi-3", looking up <|endoftext|> by text, which the built-in vocabulary lacks: the name of a
// synthetic Phi-3 says "Phi 3" instead.
#define PHI3_TITLE "Phi 3"

// TinyLlama-1.1B (its config.json), a small model with 256-aligned shapes, so every K-quant
// applies (tiny256's shapes), and a small multi-head one; then per architecture the shapes of
// the small model people run (Llama-3.2-1B, Qwen2.5-0.5B, Qwen3-0.6B: their config.json) and a
// tiny one with 256-aligned rows for tests. The tiny Qwen3 keeps the real one's trait of a head
// size that is not n_embd / n_head.
static const preset presets[] = {
    {"tinyllama", "real", "llama", 2048, 5632, 22, 32, 4, 64, 2048, 32000, 1e4f, 1e-5f, false,
     false, 0, NULL, false},
    {"small", "real", "llama", 256, 768, 4, 4, 2, 64, 512, 512, 1e4f, 1e-5f, false, false, 0, NULL,
     false},
    // multi-head attention (as many KV heads as query heads) and a long context: the attention
    // tests' other layout
    {"mha", "real", "llama", 128, 384, 2, 4, 4, 32, 2048, 512, 1e4f, 1e-5f, false, false, 0, NULL,
     false},
    {"llama3", "real", "llama", 2048, 8192, 16, 32, 8, 64, 131072, 128256, 5e5f, 1e-5f, true, true,
     0, NULL, false},
    {"llama3", "tiny", "llama", 256, 768, 2, 4, 2, 64, 1024, 512, 5e5f, 1e-5f, true, true, 0, NULL,
     false},
    {"qwen2", "real", "qwen2", 896, 4864, 24, 14, 2, 64, 32768, 151936, 1e6f, 1e-6f, true, false, 0,
     NULL, false},
    {"qwen2", "tiny", "qwen2", 256, 768, 2, 4, 2, 64, 1024, 512, 1e6f, 1e-6f, true, false, 0, NULL,
     false},
    {"qwen3", "real", "qwen3", 1024, 3072, 28, 16, 8, 128, 40960, 151936, 1e6f, 1e-6f, true, false,
     0, NULL, false},
    {"qwen3", "tiny", "qwen3", 256, 768, 2, 4, 2, 128, 1024, 512, 1e6f, 1e-6f, true, false, 0, NULL,
     false},
    {"phi3", "real", "phi3", 3072, 8192, 32, 32, 32, 96, 4096, 32064, 1e4f, 1e-5f, false, false, 0,
     PHI3_TITLE, true},
    // the tiny Phi-3 has Phi-3.5-mini's LongRoPE: a context of 256 positions or fewer takes the
    // short factors, a longer one the long factors
    {"phi3", "tiny", "phi3", 256, 768, 2, 4, 4, 64, 1024, 512, 1e4f, 1e-5f, false, false, 256,
     PHI3_TITLE, true},
    {"gpt2", "real", "gpt2", 768, 3072, 12, 12, 12, 64, 1024, 50257, 1e4f, 1e-5f, false, false, 0,
     NULL, false},
    {"gpt2", "tiny", "gpt2", 256, 1024, 2, 4, 4, 64, 1024, 512, 1e4f, 1e-5f, false, false, 0, NULL,
     false},
    {"gemma2", "real", "gemma2", 2304, 9216, 26, 8, 4, 256, 8192, 256000, 1e4f, 1e-6f, true, false,
     0, NULL, false},
    {"gemma2", "tiny", "gemma2", 256, 768, 2, 4, 2, 128, 1024, 512, 1e4f, 1e-6f, true, false, 0,
     NULL, false},
    {"gemma3", "real", "gemma3", 1152, 6912, 26, 4, 1, 256, 32768, 262144, 1e6f, 1e-6f, true, false,
     0, NULL, false},
    {"gemma3", "tiny", "gemma3", 256, 768, 2, 4, 2, 128, 1024, 512, 1e6f, 1e-6f, true, false, 0,
     NULL, false},
    // micro: one 8-wide layer and the 259-token byte vocabulary, about 25 KB: the GGUF fuzz
    // harness's seeds of each architecture (tests/fuzz/make_seeds.c)
    {"llama3", "micro", "llama", 8, 16, 1, 2, 1, 4, 16, 259, 5e5f, 1e-5f, true, true, 0, NULL,
     false},
    {"qwen2", "micro", "qwen2", 8, 16, 1, 2, 1, 4, 16, 259, 1e6f, 1e-6f, true, false, 0, NULL,
     false},
    {"qwen3", "micro", "qwen3", 8, 16, 1, 2, 1, 8, 16, 259, 1e6f, 1e-6f, true, false, 0, NULL,
     false},
    {"phi3", "micro", "phi3", 8, 16, 1, 2, 2, 4, 16, 259, 1e4f, 1e-5f, false, false, 8, PHI3_TITLE,
     true},
    {"gpt2", "micro", "gpt2", 8, 16, 1, 2, 2, 4, 16, 259, 1e4f, 1e-5f, false, false, 0, NULL,
     false},
    {"gemma2", "micro", "gemma2", 8, 16, 2, 2, 1, 8, 16, 259, 1e4f, 1e-6f, true, false, 0, NULL,
     false},
    {"gemma3", "micro", "gemma3", 8, 16, 2, 2, 1, 8, 16, 259, 1e6f, 1e-6f, true, false, 0, NULL,
     false},
    // Qwen3-30B-A3B (its config.json): 48 layers, 128 experts of 768, 8 used; tiny: 16 of 256,
    // 4 used (llama-quantize has a rule of its own for 8 experts, which this one does not meet)
    {"qwen3moe", "real", "qwen3moe", 2048, 6144, 48, 32, 4, 128, 40960, 151936, 1e6f, 1e-6f, false,
     false, 0, NULL, false},
    {"qwen3moe", "tiny", "qwen3moe", 256, 768, 2, 4, 2, 128, 1024, 512, 1e6f, 1e-6f, false, false,
     0, NULL, false},
    {"qwen3moe", "micro", "qwen3moe", 8, 16, 1, 2, 1, 8, 16, 259, 1e6f, 1e-6f, true, false, 0, NULL,
     false},
    // Qwen1.5-MoE-A2.7B (its config.json): Qwen2's attention, 60 experts of 1408, 4 used, a
    // shared expert of 5632
    {"qwen2moe", "real", "qwen2moe", 2048, 5632, 24, 16, 16, 128, 8192, 151936, 1e6f, 1e-6f, false,
     false, 0, NULL, false},
    {"qwen2moe", "tiny", "qwen2moe", 256, 512, 2, 4, 2, 64, 1024, 512, 1e6f, 1e-6f, false, false, 0,
     NULL, false},
    {"qwen2moe", "micro", "qwen2moe", 8, 16, 1, 2, 1, 4, 16, 259, 1e6f, 1e-6f, false, false, 0,
     NULL, false},
    // OLMoE-1B-7B (its config.json): 64 experts of 1024 (feed_forward_length), 8 used,
    // multi-head attention
    {"olmoe", "real", "olmoe", 2048, 1024, 16, 16, 16, 128, 4096, 50304, 1e4f, 1e-5f, false, false,
     0, NULL, false},
    {"olmoe", "tiny", "olmoe", 256, 256, 2, 4, 4, 64, 1024, 512, 1e4f, 1e-5f, false, false, 0, NULL,
     false},
    {"olmoe", "micro", "olmoe", 8, 16, 1, 2, 2, 4, 16, 259, 1e4f, 1e-5f, false, false, 0, NULL,
     false},
    // Mixtral-8x7B (its config.json): llama's block with 8 experts of feed_forward_length, 2
    // used; tiny: the same 8 and 2, so llama-quantize's 8-expert rules apply
    {"mixtral", "real", "llama", 4096, 14336, 32, 32, 8, 128, 32768, 32000, 1e6f, 1e-5f, false,
     false, 0, NULL, false},
    {"mixtral", "tiny", "llama", 256, 768, 2, 4, 2, 64, 1024, 512, 1e6f, 1e-5f, false, false, 0,
     NULL, false},
    // gpt-oss-20b (its config.json): 24 layers 2880 wide, 64 query heads of 64, 8 KV heads, YaRN
    // (factor 32 over 4096 positions), 32 experts of 2880, 4 used; tiny: 16 experts of 256
    {"gpt-oss", "real", "gpt-oss", 2880, 2880, 24, 64, 8, 64, 131072, 201088, 150000.0f, 1e-5f,
     false, false, 0, NULL, false},
    {"gpt-oss", "tiny", "gpt-oss", 256, 256, 2, 4, 2, 64, 1024, 512, 150000.0f, 1e-5f, false, false,
     0, NULL, false},
    {"gpt-oss", "micro", "gpt-oss", 8, 16, 2, 2, 1, 4, 16, 259, 150000.0f, 1e-5f, false, false, 0,
     NULL, false},
    {"mixtral", "micro", "llama", 8, 16, 1, 2, 1, 4, 16, 259, 1e6f, 1e-5f, true, false, 0, NULL,
     false},
    // LFM2-1.2B (its config.json; block_ff_dim 12288 auto-adjusted to 8192 as its converter
    // does): 16 layers, attention in 6 (hybrid_shapes below), 32 query heads, 8 KV heads; tied
    {"lfm2", "real", "lfm2", 2048, 8192, 16, 32, 8, 64, 128000, 65536, 1e6f, 1e-5f, true, false, 0,
     NULL, false},
    {"lfm2", "tiny", "lfm2", 256, 768, 4, 4, 2, 64, 1024, 512, 1e6f, 1e-5f, true, false, 0, NULL,
     false},
    {"lfm2", "micro", "lfm2", 8, 16, 2, 2, 1, 4, 16, 259, 1e6f, 1e-5f, true, false, 0, NULL, false},
    // Qwen3.5-2B's shape as llama.cpp's loader tells the sizes apart (24 layers, 2048 wide; its
    // config.json is not at hand here): attention in every fourth layer, 8 query heads of 256
    // over 2 KV heads, RoPE over a quarter of a head; delta nets of 16 key and value heads of 128
    {"qwen35", "real", "qwen35", 2048, 6144, 24, 8, 2, 256, 262144, 248320, 1e7f, 1e-6f, true,
     false, 0, NULL, false},
    {"qwen35", "tiny", "qwen35", 256, 768, 4, 4, 2, 64, 1024, 512, 1e7f, 1e-6f, true, false, 0,
     NULL, false},
    {"qwen35", "micro", "qwen35", 8, 16, 2, 2, 1, 4, 16, 259, 1e7f, 1e-6f, true, false, 0, NULL,
     false},
    // Gemma-4-E2B as we know its config.json (not checked against a released file): 35 layers
    // 1536 wide, 8 query heads and 1 KV head of 512 (full layers) or 256 (window layers, 4 of
    // every 5), feed-forward 6144 (12288 in the 20 layers sharing KV); tied. gemma4_shapes below
    // has the rest.
    {"gemma4", "real", "gemma4", 1536, 6144, 35, 8, 1, 512, 131072, 262144, 1e6f, 1e-6f, true,
     false, 0, NULL, false},
    {"gemma4", "tiny", "gemma4", 256, 768, 8, 4, 2, 128, 1024, 512, 1e6f, 1e-6f, true, false, 0,
     NULL, false},
    {"gemma4", "micro", "gemma4", 8, 16, 2, 2, 1, 8, 16, 259, 1e6f, 1e-6f, true, false, 0, NULL,
     false},
};

static const hybrid_shape hybrid_shapes[] = {
    // clang-format off
    {"lfm2", "real", "..A..A..A.A.A.A.", 3, 0, 0, 0, 0, 0}, // LFM2's full_attn_idxs 2, 5, 8, ...
    {"lfm2", "tiny", "..A.", 3, 0, 0, 0, 0, 0},
    {"lfm2", "micro", ".A", 3, 0, 0, 0, 0, 0},
    {"qwen35", "real", "...A...A...A...A...A...A", 4, 4, 64, 16, 16, 128},
    {"qwen35", "tiny", "...A", 4, 4, 16, 2, 4, 32}, // 4 value heads over 2 key heads
    {"qwen35", "micro", ".A", 4, 2, 2, 1, 2, 4},
    // clang-format on
};

const hybrid_shape *hybrid_of(const preset *p) {
    for (size_t i = 0; i < sizeof hybrid_shapes / sizeof *hybrid_shapes; i++)
        if (!strcmp(hybrid_shapes[i].name, p->name) && !strcmp(hybrid_shapes[i].shape, p->shape))
            return &hybrid_shapes[i];
    return NULL;
}

static const moe_shape moe_shapes[] = {
    // clang-format off
    {"qwen3moe", "real", 128, 8, 768, 0},
    {"qwen3moe", "tiny", 16, 4, 256, 0},
    {"qwen3moe", "micro", 4, 2, 16, 0},
    {"qwen2moe", "real", 60, 4, 1408, 5632},
    {"qwen2moe", "tiny", 16, 4, 256, 512},
    {"qwen2moe", "micro", 4, 2, 16, 16},
    {"olmoe", "real", 64, 8, 1024, 0},
    {"olmoe", "tiny", 16, 4, 256, 0},
    {"olmoe", "micro", 4, 2, 16, 0},
    {"mixtral", "real", 8, 2, 14336, 0},
    {"mixtral", "tiny", 8, 2, 768, 0},
    {"mixtral", "micro", 4, 2, 16, 0},
    {"gpt-oss", "real", 32, 4, 2880, 0},
    {"gpt-oss", "tiny", 16, 4, 256, 0},
    {"gpt-oss", "micro", 4, 2, 16, 0},
    // clang-format on
};

const moe_shape *moe_of(const preset *p) {
    for (size_t i = 0; i < sizeof moe_shapes / sizeof *moe_shapes; i++)
        if (!strcmp(moe_shapes[i].name, p->name) && !strcmp(moe_shapes[i].shape, p->shape))
            return &moe_shapes[i];
    return NULL;
}

static const yarn_scaling yarn_scalings[] = {
    {"gpt-oss", 32.0f, 4096}, // gpt-oss's converter: YaRN 32 over 4096 (every shape)
};

const yarn_scaling *yarn_of(const preset *p) {
    for (size_t i = 0; i < sizeof yarn_scalings / sizeof *yarn_scalings; i++)
        if (!strcmp(yarn_scalings[i].name, p->name)) return &yarn_scalings[i];
    return NULL;
}

bool has_shapes(const char *name) {
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
        if (strcmp(presets[i].name, name) == 0 && strcmp(presets[i].shape, "tiny") == 0)
            return true;
    return false;
}

void preset_names(char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++) seen |= strcmp(presets[j].name, presets[i].name) == 0;
        if (!seen && len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", presets[i].name);
    }
}

const preset *mint_synth_preset(const char *name, const char *shape, bool *known_name) {
    const preset *pr = NULL;
    *known_name = false;
    for (size_t i = 0; name && i < sizeof presets / sizeof *presets; i++)
        if (strcmp(name, presets[i].name) == 0) {
            *known_name = true;
            if (strcmp(shape, presets[i].shape) == 0) pr = &presets[i];
        }
    return pr;
}

static const layer_shape gemma4_shapes[] = {
    {"real", "SSSSFSSSSFSSSSFssssfssssfssssfssssf", 256, 256, 512, true, -1},
    {"tiny", "SSFSFssf", 64, 64, 8, true, 1},
    {"micro", "SF", 4, 4, 4, false, -1},
};

const layer_shape *layer_shape_of(const preset *p) {
    if (!mint_arch_find(p->arch)->layer_shapes) return NULL;
    for (size_t i = 0; i < sizeof gemma4_shapes / sizeof *gemma4_shapes; i++)
        if (!strcmp(gemma4_shapes[i].shape, p->shape)) return &gemma4_shapes[i];
    return NULL;
}
