// mix.c - llama-quantize's choice of a type for every tensor of a model (see mix.h).
// (The file types themselves, names and numbers, are runtime/filetools/ftype.c.)
//
// The rules below restate what llama.cpp's src/llama-quant.cpp decides, limited to the dense
// architectures of runtime/engine/arch.c and the file types mint can compute. The rules are
// keyed by a tensor's role (its category: attn_v, ffn_down, output, ...); what they need of the
// architecture (the layer count of its 70B type) is in its row of the table. Where the rule depends
// on "the i-th tensor of a category" the counter advances in llama-quantize's processing order,
// exactly as there.
#include "runtime/filetools/mix.h"

#include "base/error.h"
#include "quant/kernels.h"
#include "quant/types.h"

#include <ctype.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// ---------------------------------------------------------------------------------------------
// Parameters

mint_mix_params mint_mix_default_params(mint_ftype ftype) {
    return (mint_mix_params){.ftype = ftype, .output_type = -1, .token_embd_type = -1};
}

// A type a tensor may be given: one mint can multiply with.
static bool type_usable(int type) {
    const mint_type_traits *t = type >= 0 ? mint_type_get((uint32_t)type) : NULL;
    return t && t->computable;
}

static mint_status check_type(int type, const char *what, mint_err *err) {
    if (type_usable(type)) return MINT_OK;
    const mint_type_traits *t = type >= 0 ? mint_type_get((uint32_t)type) : NULL;
    if (!t) return mint_fail(err, MINT_E_ARG, "%s: type code %d is unknown", what, type);
    return mint_fail(err, MINT_E_UNSUPPORTED,
                     "%s: mint cannot compute %s (it can: F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 "
                     "MXFP4 Q2_K Q3_K Q4_K Q5_K Q6_K TQ1_0 TQ2_0 IQ4_NL IQ4_XS IQ3_XXS IQ3_S "
                     "IQ2_XXS IQ2_XS IQ2_S IQ1_S IQ1_M Q1_0 Q2_0)",
                     what, t->name);
}

// Compiles a --tensor-type pattern. std::regex (ECMAScript) is what llama.cpp uses; POSIX ERE
// covers the patterns people write (literals, '.', classes, '|', '+', '*'), and glibc knows
// \w \s \b; \d and \D, which it does not, are rewritten as bracket expressions first.
static mint_status mix_regex_compile(const char *pattern, regex_t *re, mint_err *err) {
    size_t n = strlen(pattern);
    char *p = malloc(n * 6 + 1);
    if (!p) return mint_fail(err, MINT_E_NOMEM, "--tensor-type: out of memory");
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (pattern[i] == '\\' && (pattern[i + 1] == 'd' || pattern[i + 1] == 'D')) {
            const char *cls = pattern[i + 1] == 'd' ? "[0-9]" : "[^0-9]";
            memcpy(p + j, cls, strlen(cls));
            j += strlen(cls);
            i++;
        } else {
            p[j++] = pattern[i];
            if (pattern[i] == '\\' && i + 1 < n) p[j++] = pattern[++i];
        }
    }
    p[j] = '\0';
    int rc = regcomp(re, p, REG_EXTENDED | REG_NOSUB);
    free(p);
    if (rc != 0) {
        char msg[128];
        regerror(rc, re, msg, sizeof msg);
        return mint_fail(err, MINT_E_ARG, "--tensor-type pattern '%s': %s", pattern, msg);
    }
    return MINT_OK;
}

mint_status mint_mix_override_parse(const char *arg, mint_mix_override *out, mint_err *err) {
    const char *eq = arg ? strchr(arg, '=') : NULL;
    if (!eq) return mint_fail(err, MINT_E_ARG, "--tensor-type '%s': expected PATTERN=TYPE", arg);
    size_t len = (size_t)(eq - arg);
    if (len == 0) return mint_fail(err, MINT_E_ARG, "--tensor-type '%s': empty pattern", arg);
    if (eq[1] == '\0') return mint_fail(err, MINT_E_ARG, "--tensor-type '%s': empty type", arg);
    if (len >= MINT_MIX_PATTERN_MAX)
        return mint_fail(err, MINT_E_LIMIT, "--tensor-type: pattern of %zu bytes, limit %d", len,
                         MINT_MIX_PATTERN_MAX - 1);
    // llama-quantize lower-cases the pattern (tensor names are lower case).
    for (size_t i = 0; i < len; i++) out->pattern[i] = (char)tolower((unsigned char)arg[i]);
    out->pattern[len] = '\0';
    out->type = mint_type_from_name(eq + 1);
    if (out->type < 0)
        return mint_fail(
            err, MINT_E_ARG,
            "--tensor-type '%s': unknown type '%s'; valid: F32 F16 BF16 Q4_0 Q4_1 "
            "Q5_0 Q5_1 Q8_0 MXFP4 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS IQ3_XXS IQ3_S",
            arg, eq + 1);
    mint_status st = check_type(out->type, "--tensor-type", err);
    if (st != MINT_OK) return st;
    regex_t re;
    st = mix_regex_compile(out->pattern, &re, err);
    if (st == MINT_OK) regfree(&re);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Which tensors are quantized at all

// ggml_n_dims: the number of dimensions up to the last one larger than 1.
static int n_dims(const int64_t ne[4]) {
    for (int i = 3; i >= 1; i--)
        if (ne[i] > 1) return i + 1;
    return 1;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

// Names llama.cpp never quantizes even when they look like matrices: norms and MoE routers
// anywhere in a name, learned positions (GPT-2) and token types (BERT) by their whole name.
// (It has a longer list for other architectures' small tensors - RWKV, Mamba, T5, Gemma-3n,
// vision towers - none of which the architectures of runtime/engine/arch.c hold), the small
// convolution taps of the recurrent mixers (LFM2's shortconv.conv, Mamba's and Qwen3.5's
// ssm_conv1d), and Gemma 4's per_layer_model_proj ("not too big": kept as it is).
static const char *const never_quantized[] = {"_norm.weight", "ffn_gate_inp.weight",
                                              "shortconv.conv.weight", "ssm_conv1d",
                                              "per_layer_model_proj"};
static const char *const never_quantized_names[] = {"position_embd.weight", "token_types.weight"};

// NULL when the tensor is quantized, else why not.
static const char *why_not_quantized(const mint_mix_tensor *t, const mint_mix_params *p) {
    if (n_dims(t->ne) < 2) return "1-D";
    if (!ends_with(t->name, "weight")) return "name does not end in 'weight'";
    if (p->leave_output && strcmp(t->name, "output.weight") == 0) return "--leave-output-tensor";
    for (size_t i = 0; i < sizeof never_quantized / sizeof never_quantized[0]; i++)
        if (strstr(t->name, never_quantized[i]))
            return i == 0 ? "norm weight" : i == 1 ? "MoE router" : i == 4 ? "kept" : "conv taps";
    for (size_t i = 0; i < sizeof never_quantized_names / sizeof never_quantized_names[0]; i++)
        if (strcmp(t->name, never_quantized_names[i]) == 0)
            return i == 0 ? "learned positions" : "token types";
    return NULL;
}

// ---------------------------------------------------------------------------------------------
// Categories and the processing order

typedef enum category {
    CAT_OTHER,
    CAT_TOKEN_EMBD,
    CAT_OUTPUT,
    CAT_ATTN_QKV,
    CAT_ATTN_KV_B,
    CAT_ATTN_V,
    CAT_ATTN_K,
    CAT_ATTN_Q,
    CAT_ATTN_OUTPUT,
    CAT_FFN_UP,
    CAT_FFN_GATE,
    CAT_FFN_DOWN,
} category;

static const char *const category_names[] = {
    [CAT_OTHER] = "other",       [CAT_TOKEN_EMBD] = "token_embd", [CAT_OUTPUT] = "output",
    [CAT_ATTN_QKV] = "attn_qkv", [CAT_ATTN_KV_B] = "attn_kv_b",   [CAT_ATTN_V] = "attn_v",
    [CAT_ATTN_K] = "attn_k",     [CAT_ATTN_Q] = "attn_q",         [CAT_ATTN_OUTPUT] = "attn_output",
    [CAT_FFN_UP] = "ffn_up",     [CAT_FFN_GATE] = "ffn_gate",     [CAT_FFN_DOWN] = "ffn_down",
};

// First match wins, in llama.cpp's order (attn_qkv before attn_v, ffn_up before ffn_gate).
static category category_of(const char *name) {
    if (strcmp(name, "output.weight") == 0) return CAT_OUTPUT;
    if (strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0)
        return CAT_TOKEN_EMBD;
    static const struct {
        const char *needle;
        category cat;
    } needles[] = {
        {"attn_qkv.weight", CAT_ATTN_QKV},
        {"attn_kv_b.weight", CAT_ATTN_KV_B},
        {"attn_v.weight", CAT_ATTN_V},
        {"attn_k.weight", CAT_ATTN_K},
        {"attn_q.weight", CAT_ATTN_Q},
        {"attn_output.weight", CAT_ATTN_OUTPUT},
        {"ffn_up", CAT_FFN_UP},
        {"ffn_gate", CAT_FFN_GATE},
        {"ffn_down", CAT_FFN_DOWN},
    };
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
        if (strstr(name, needles[i].needle)) return needles[i].cat;
    return CAT_OTHER;
}

// Fused QKV and MLA's kv_b carry V, so they count (and are treated) as attn_v.
static bool is_attn_v_like(category c) {
    return c == CAT_ATTN_V || c == CAT_ATTN_QKV || c == CAT_ATTN_KV_B;
}

// llama.cpp's weights map orders names by the block number ("blk.%d.", -1 outside blocks),
// then bytewise; so output.weight, output_norm.weight, token_embd.weight, blk.0.*, blk.1.*, ...
typedef struct order_key {
    long layer;       // block number, -1 outside blocks
    const char *name; // tensor name
    size_t index;     // position in the caller's list
} order_key;

static long block_of(const char *name) {
    if (strncmp(name, "blk.", 4) != 0) return -1;
    char *end;
    long v = strtol(name + 4, &end, 10);
    return end == name + 4 ? -1 : v;
}

static int order_cmp(const void *a, const void *b) {
    const order_key *x = a, *y = b;
    if (x->layer != y->layer) return x->layer < y->layer ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

// ---------------------------------------------------------------------------------------------
// The rules
//
// For a dense llama model (i = the tensor's index within its category, n = n_layer;
// "more bits" = use_more_bits(i, n); every file type gives output.weight Q6_K, or Q8_0 for Q8_0
// and when the row does not fit the base type's block):
//
//   file type  attn_v                          ffn_down                      attn_output  rest
//   Q2_K       Q4_K if n_gqa >= 4, else Q3_K   Q3_K                          Q3_K         Q2_K
//   Q2_K_S     Q4_K if n_gqa >= 4              Q4_K if i < n/8               -            Q2_K
//   Q3_K_S     -                               -                             -            Q3_K
//   Q3_K_M     Q5_K if i < 2, else Q4_K        Q5_K if i < n/16, else Q4_K   Q4_K         Q3_K
//   Q3_K_L     Q5_K                            Q5_K                          Q5_K         Q3_K
//   Q4_K_S     Q5_K if i < 4                   Q5_K if i < n/8               -            Q4_K
//   Q4_K_M     Q6_K if more bits               Q6_K if more bits             -            Q4_K
//   Q5_K_S     -                               -                             -            Q5_K
//   Q5_K_M     Q6_K if more bits               Q6_K if more bits             -            Q5_K
//   IQ4_NL/XS  Q5_K if n_gqa >= 4              Q5_K if i < n/8 (no imatrix)  -            base
//   IQ3_XXS    Q4_K if n_gqa >= 4, else IQ3_S  (no imatrix) Q4_K if i < n/8, IQ3_S        IQ3_XXS
//              (IQ3_XXS with an imatrix)       else Q3_K
//   IQ3_XS     Q4_K if n_gqa >= 4              -                             -            IQ3_S
//   IQ3_S      Q4_K if n_gqa >= 4              -                             -            IQ3_S
//   IQ3_M      Q4_K                            Q4_K if i < n/8               Q4_K         IQ3_S
//   others     -                               -                             -            base
//
// plus, on a 70B model (llama: 80 layers with GQA; qwen2: 80 layers), attn_v that came out Q3_K
// or Q4_K becomes Q5_K. A fused attn_qkv (Phi-3, GPT-2) counts and is treated as attn_v. With 8
// experts (Mixtral) attn_v and attn_k become Q8_0 and the low-bit mixes' attn_output Q5_K (IQ3_M:
// also ffn_down in the more-bits layers Q4_K). IQ3_XXS: output Q5_K, token_embd IQ3_S, attn_q
// and attn_k IQ2_S; IQ3_XS: attn_q, attn_k, and ffn_gate / ffn_up outside the first and last
// eighth IQ3_XXS (a type llama-quantize makes only with an importance matrix).

typedef struct mix_state {
    const mint_mix_params *p; // what was asked
    int base;                 // the file type's base type
    int n_gqa;                // n_head / n_head_kv
    bool is_70b;              // llama.cpp's LLM_TYPE_70B (the architecture's quant_70b_*)
    bool tied;                // no output.weight: token_embd follows the output rules
    int n_attention_wv;       // attn_v-like tensors in the model
    int i_attention_wv;       // attn_v-like tensors the mix rules have seen so far
    int n_ffn_down;           // = n_layer (llama.cpp does not count them)
    int i_ffn_down;           // ffn_down tensors the mix rules have seen so far
    int i_ffn_gate, i_ffn_up; // ffn_gate / ffn_up tensors the mix rules have seen so far (their
                              // n is n_ffn_down's)
    int n_expert;             // expert_count (0: dense)
    int layer;                // the block of the tensor being chosen (-1 outside blocks)
    regex_t *re;              // [p->n_overrides] compiled override patterns
} mix_state;

static void why(mint_mix_choice *c, const char *fmt, ...) MINT_PRINTF(2, 3);
static void why(mint_mix_choice *c, const char *fmt, ...) {
    size_t len = strlen(c->reason);
    if (len && len + 2 < sizeof c->reason) {
        memcpy(c->reason + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->reason + len, sizeof c->reason - len, fmt, ap);
    va_end(ap);
}

static const char *tn(int type) {
    return mint_type_name((uint32_t)type);
}

// The layers llama.cpp spends more bits on: the first and last eighth, and every third layer
// in between.
static bool use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 ||
           (i_layer - n_layers / 8) % 3 == 2;
}

// The 1- and 2-bit file types, which llama.cpp gives rules of their own (rule_low_bit).
static bool low_bit(mint_ftype f) {
    return f == MINT_FTYPE_IQ2_XXS || f == MINT_FTYPE_IQ2_XS || f == MINT_FTYPE_IQ2_S ||
           f == MINT_FTYPE_IQ2_M || f == MINT_FTYPE_IQ1_S || f == MINT_FTYPE_IQ1_M;
}

// IQ2_S and IQ2_M spend IQ3_S where the others spend Q2_K.
static int low_bit_more(mint_ftype f) {
    return f == MINT_FTYPE_IQ2_S || f == MINT_FTYPE_IQ2_M ? MINT_TYPE_IQ3_S : MINT_TYPE_Q2_K;
}

static int rule_output(mix_state *s, const mint_mix_tensor *t, category cat, int type,
                       mint_mix_choice *c) {
    const char *what = cat == CAT_OUTPUT ? "output" : "token_embd (tied to output)";
    uint32_t blck = mint_type_block_size((uint32_t)type);
    if (s->p->output_type >= 0) { // reached only by a tied token_embd
        why(c, "%s: --output-tensor-type -> %s", what, tn(s->p->output_type));
        return s->p->output_type;
    }
    if (s->p->ftype == MINT_FTYPE_MXFP4_MOE) // before the shape test, as llama.cpp has it
        return why(c, "%s: MXFP4_MOE -> Q8_0", what), MINT_TYPE_Q8_0;
    if (t->ne[0] % blck != 0) {
        why(c, "%s: ne[0] %lld not a multiple of %s's %u -> Q8_0", what, (long long)t->ne[0],
            tn(type), blck);
        return MINT_TYPE_Q8_0;
    }
    if (low_bit(s->p->ftype) || s->p->ftype == MINT_FTYPE_IQ3_XXS) {
        why(c, "%s: %s -> Q5_K", what, mint_ftype_name(s->p->ftype));
        return MINT_TYPE_Q5_K;
    }
    if (type == MINT_TYPE_Q8_0) {
        why(c, "%s: Q8_0", what);
        return type;
    }
    why(c, "%s: Q6_K", what);
    return MINT_TYPE_Q6_K;
}

static int rule_attn_v(mix_state *s, category cat, int type, mint_mix_choice *c) {
    const char *what = category_names[cat];
    int i = s->i_attention_wv, n = s->n_attention_wv;
    switch (s->p->ftype) {
    case MINT_FTYPE_Q2_K:
        type = s->n_gqa >= 4 ? MINT_TYPE_Q4_K : MINT_TYPE_Q3_K;
        why(c, "%s: Q2_K, n_gqa %d %s 4 -> %s", what, s->n_gqa, s->n_gqa >= 4 ? ">=" : "<",
            tn(type));
        break;
    case MINT_FTYPE_Q2_K_S:
        if (s->n_gqa >= 4) type = MINT_TYPE_Q4_K;
        why(c, "%s: Q2_K_S, n_gqa %d %s 4 -> %s", what, s->n_gqa, s->n_gqa >= 4 ? ">=" : "<",
            tn(type));
        break;
    case MINT_FTYPE_Q3_K_M:
        type = i < 2 ? MINT_TYPE_Q5_K : MINT_TYPE_Q4_K;
        why(c, "%s: Q3_K_M, i_attention_wv %d %s 2 -> %s", what, i, i < 2 ? "<" : ">=", tn(type));
        break;
    case MINT_FTYPE_Q3_K_L:
        type = MINT_TYPE_Q5_K;
        why(c, "%s: Q3_K_L -> Q5_K", what);
        break;
    case MINT_FTYPE_Q4_K_M:
    case MINT_FTYPE_Q5_K_M:
        if (use_more_bits(i, n)) type = MINT_TYPE_Q6_K;
        why(c, "%s: use_more_bits(%d, %d) %s -> %s", what, i, n, use_more_bits(i, n) ? "yes" : "no",
            tn(type));
        break;
    case MINT_FTYPE_IQ4_NL:
    case MINT_FTYPE_IQ4_XS:
        if (s->n_gqa >= 4) type = MINT_TYPE_Q5_K;
        why(c, "%s: %s, n_gqa %d %s 4 -> %s", what, mint_ftype_name(s->p->ftype), s->n_gqa,
            s->n_gqa >= 4 ? ">=" : "<", tn(type));
        break;
    case MINT_FTYPE_Q4_K_S:
        if (i < 4) type = MINT_TYPE_Q5_K;
        why(c, "%s: Q4_K_S, i_attention_wv %d %s 4 -> %s", what, i, i < 4 ? "<" : ">=", tn(type));
        break;
    case MINT_FTYPE_IQ3_XXS:
        type = s->n_gqa >= 4        ? MINT_TYPE_Q4_K
               : !s->p->has_imatrix ? MINT_TYPE_IQ3_S
                                    : MINT_TYPE_IQ3_XXS;
        why(c, "%s: IQ3_XXS, n_gqa %d%s -> %s", what, s->n_gqa,
            s->p->has_imatrix ? ", imatrix" : "", tn(type));
        break;
    case MINT_FTYPE_IQ3_XS:
    case MINT_FTYPE_IQ3_S:
        if (s->n_gqa >= 4) type = MINT_TYPE_Q4_K;
        why(c, "%s: %s, n_gqa %d %s 4 -> %s", what, mint_ftype_name(s->p->ftype), s->n_gqa,
            s->n_gqa >= 4 ? ">=" : "<", tn(type));
        break;
    case MINT_FTYPE_IQ3_M:
        type = MINT_TYPE_Q4_K;
        why(c, "%s: IQ3_M -> Q4_K", what);
        break;
    default:
        why(c, "%s: base type %s", what, tn(type));
        break;
    }
    // A 70B model shares each V across 8 heads, so its attn_v is small: more bits cost little.
    if (s->is_70b && (type == MINT_TYPE_Q3_K || type == MINT_TYPE_Q4_K)) {
        why(c, "70B: %s -> Q5_K", tn(type));
        type = MINT_TYPE_Q5_K;
    }
    if (s->n_expert == 8) { // Mixtral's layout: V is small beside eight experts
        why(c, "8 experts: %s -> Q8_0", tn(type));
        type = MINT_TYPE_Q8_0;
    }
    s->i_attention_wv++;
    return type;
}

static int rule_ffn_down(mix_state *s, int type, mint_mix_choice *c) {
    // With experts llama.cpp takes the layer from the name (a mixture may hold several ffn_down
    // tensors per block: the experts', a shared expert's), else it counts them.
    int i = s->n_expert > 1 ? s->layer : s->i_ffn_down, n = s->n_ffn_down;
    switch (s->p->ftype) {
    case MINT_FTYPE_Q2_K:
        type = MINT_TYPE_Q3_K;
        why(c, "ffn_down: Q2_K -> Q3_K");
        break;
    case MINT_FTYPE_Q2_K_S:
        if (i < n / 8) type = MINT_TYPE_Q4_K;
        why(c, "ffn_down: Q2_K_S, layer %d %s n/8 = %d -> %s", i, i < n / 8 ? "<" : ">=", n / 8,
            tn(type));
        break;
    case MINT_FTYPE_Q3_K_M:
        type = i < n / 16 ? MINT_TYPE_Q5_K : MINT_TYPE_Q4_K;
        why(c, "ffn_down: Q3_K_M, layer %d %s n/16 = %d -> %s", i, i < n / 16 ? "<" : ">=", n / 16,
            tn(type));
        break;
    case MINT_FTYPE_Q3_K_L:
        type = MINT_TYPE_Q5_K;
        why(c, "ffn_down: Q3_K_L -> Q5_K");
        break;
    case MINT_FTYPE_Q4_K_M:
    case MINT_FTYPE_Q5_K_M:
        if (use_more_bits(i, n)) type = MINT_TYPE_Q6_K;
        why(c, "ffn_down: use_more_bits(%d, %d) %s -> %s", i, n, use_more_bits(i, n) ? "yes" : "no",
            tn(type));
        break;
    case MINT_FTYPE_Q4_K_S:
        if (i < n / 8) type = MINT_TYPE_Q5_K;
        why(c, "ffn_down: Q4_K_S, layer %d %s n/8 = %d -> %s", i, i < n / 8 ? "<" : ">=", n / 8,
            tn(type));
        break;
    case MINT_FTYPE_IQ4_NL:
    case MINT_FTYPE_IQ4_XS:
        if (i < n / 8 && !s->p->has_imatrix) type = MINT_TYPE_Q5_K;
        why(c, "ffn_down: %s, layer %d %s n/8 = %d%s -> %s", mint_ftype_name(s->p->ftype), i,
            i < n / 8 ? "<" : ">=", n / 8, s->p->has_imatrix ? ", imatrix" : "", tn(type));
        break;
    case MINT_FTYPE_IQ3_XXS:
        if (!s->p->has_imatrix) type = i < n / 8 ? MINT_TYPE_Q4_K : MINT_TYPE_Q3_K;
        why(c, "ffn_down: IQ3_XXS, layer %d %s n/8 = %d%s -> %s", i, i < n / 8 ? "<" : ">=", n / 8,
            s->p->has_imatrix ? ", imatrix" : "", tn(type));
        break;
    case MINT_FTYPE_IQ3_M:
        if (i < n / 8 || (s->n_expert == 8 && use_more_bits(i, n))) type = MINT_TYPE_Q4_K;
        why(c, "ffn_down: IQ3_M, layer %d of %d -> %s", i, n, tn(type));
        break;
    case MINT_FTYPE_Q4_0: // only with an importance matrix (Q4_1/Q5_1 are safe without one)
    case MINT_FTYPE_Q5_0:
        if (s->p->has_imatrix && i < n / 8) {
            type = s->p->ftype == MINT_FTYPE_Q4_0 ? MINT_TYPE_Q4_1 : MINT_TYPE_Q5_1;
            why(c, "ffn_down: imatrix, layer %d < n/8 = %d -> %s", i, n / 8, tn(type));
        } else {
            why(c, "ffn_down: base type %s", tn(type));
        }
        break;
    default:
        why(c, "ffn_down: base type %s", tn(type));
        break;
    }
    s->i_ffn_down++;
    return type;
}

static int rule_attn_output(mix_state *s, int type, mint_mix_choice *c) {
    int was = type;
    const mint_ftype f = s->p->ftype;
    if (s->n_expert == 8) { // Mixtral's layout: the low-bit mixes take Q5_K
        if (f == MINT_FTYPE_Q2_K || f == MINT_FTYPE_Q3_K_S || f == MINT_FTYPE_Q3_K_M ||
            f == MINT_FTYPE_Q4_K_S || f == MINT_FTYPE_Q4_K_M || f == MINT_FTYPE_IQ4_NL ||
            f == MINT_FTYPE_IQ4_XS || f == MINT_FTYPE_IQ3_XS || f == MINT_FTYPE_IQ3_XXS ||
            f == MINT_FTYPE_IQ3_S || f == MINT_FTYPE_IQ3_M)
            type = MINT_TYPE_Q5_K;
    } else {
        if (f == MINT_FTYPE_Q2_K) type = MINT_TYPE_Q3_K;
        if (f == MINT_FTYPE_IQ3_XXS) type = MINT_TYPE_IQ3_S;
        if (f == MINT_FTYPE_Q3_K_M || f == MINT_FTYPE_IQ3_M) type = MINT_TYPE_Q4_K;
        if (f == MINT_FTYPE_Q3_K_L) type = MINT_TYPE_Q5_K;
    }
    if (type != was)
        why(c, "attn_output: %s -> %s", mint_ftype_name(s->p->ftype), tn(type));
    else
        why(c, "attn_output: base type %s", tn(type));
    return type;
}

// attn_k (below 8 experts), attn_q, ffn_gate and ffn_up: only the IQ3 file types change them
// (IQ3_XS: IQ3_XXS, for ffn_gate / ffn_up outside the first and last eighth of the layers, the
// layer taken from the name with experts; IQ3_XXS: attn_q and attn_k IQ2_S).
static int rule_iq3_small(mix_state *s, category cat, int type) {
    const mint_ftype f = s->p->ftype;
    if (cat == CAT_ATTN_K || cat == CAT_ATTN_Q) {
        if (f == MINT_FTYPE_IQ3_XS) return MINT_TYPE_IQ3_XXS;
        if (f == MINT_FTYPE_IQ3_XXS) return MINT_TYPE_IQ2_S;
        return type;
    }
    int *count = cat == CAT_FFN_GATE ? &s->i_ffn_gate : &s->i_ffn_up;
    const int i = s->n_expert > 1 ? s->layer : *count, n = s->n_ffn_down;
    if (f == MINT_FTYPE_IQ3_XS && i >= n / 8 && i < 7 * n / 8) type = MINT_TYPE_IQ3_XXS;
    (*count)++;
    return type;
}

// The low-bit file types' own branch of llama_tensor_get_type_impl (after the output and the
// token embeddings): attn_v-like Q4_K with GQA >= 4 or >= 4 experts, else the "more" type; attn_k
// Q4_K with 8 experts; ffn_down the "more" type in the first eighth (counted, not by layer);
// attn_output Q5_K with 8 experts, else IQ2_XXS (IQ1 files) or IQ3_S (IQ2_S, IQ2_M) or the base.
static int rule_low_bit(mix_state *s, category cat, int type, mint_mix_choice *c) {
    const mint_ftype f = s->p->ftype;
    const char *fname = mint_ftype_name(f) ? mint_ftype_name(f) : "IQ1";
    const int was = type;
    if (is_attn_v_like(cat)) {
        const bool many = s->n_gqa >= 4 || s->n_expert >= 4;
        type = many ? MINT_TYPE_Q4_K : low_bit_more(f);
        why(c, "%s: %s, n_gqa %d, n_expert %d -> %s", category_names[cat], fname, s->n_gqa,
            s->n_expert, tn(type));
        s->i_attention_wv++;
        return type;
    }
    if (cat == CAT_ATTN_K && s->n_expert == 8) {
        type = MINT_TYPE_Q4_K;
    } else if (cat == CAT_FFN_DOWN) {
        const int i = s->i_ffn_down, n = s->n_ffn_down;
        if (i < n / 8) type = low_bit_more(f);
        why(c, "ffn_down: %s, i_ffn_down %d %s n/8 = %d -> %s", fname, i,
            i < n / 8 ? "<" : ">=", n / 8, tn(type));
        s->i_ffn_down++;
        return type;
    } else if (cat == CAT_ATTN_OUTPUT) {
        if (s->n_expert == 8)
            type = MINT_TYPE_Q5_K;
        else if (f == MINT_FTYPE_IQ1_S || f == MINT_FTYPE_IQ1_M)
            type = MINT_TYPE_IQ2_XXS;
        else if (f == MINT_FTYPE_IQ2_S || f == MINT_FTYPE_IQ2_M)
            type = MINT_TYPE_IQ3_S;
    }
    if (type != was)
        why(c, "%s: %s -> %s", category_names[cat], fname, tn(type));
    else
        why(c, "%s: base type %s", category_names[cat], tn(type));
    return type;
}

// llama_tensor_get_type_impl for mint's file types (Falcon's rules do not apply: mint has no
// Falcon); attn_k also changes with 8 experts.
static int mix_rule(mix_state *s, const mint_mix_tensor *t, category cat, int type,
                    mint_mix_choice *c) {
    if (cat == CAT_OUTPUT || (s->tied && cat == CAT_TOKEN_EMBD))
        return rule_output(s, t, cat, type, c);
    if (s->p->ftype == MINT_FTYPE_MXFP4_MOE) { // the experts' stacks MXFP4, the rest Q8_0
        type = t->ne[2] > 1 ? MINT_TYPE_MXFP4 : MINT_TYPE_Q8_0;
        return why(c, "MXFP4_MOE: ne[2] = %lld -> %s", (long long)t->ne[2], tn(type)), type;
    }
    if (cat == CAT_TOKEN_EMBD &&
        (s->p->ftype == MINT_FTYPE_TQ1_0 || s->p->ftype == MINT_FTYPE_TQ2_0 ||
         s->p->ftype == MINT_FTYPE_Q2_0)) {
        why(c, "token_embd: %s -> Q4_K", mint_ftype_name(s->p->ftype));
        return MINT_TYPE_Q4_K;
    }
    if (cat == CAT_TOKEN_EMBD && s->p->ftype == MINT_FTYPE_IQ3_XXS) {
        why(c, "token_embd: IQ3_XXS -> IQ3_S");
        return MINT_TYPE_IQ3_S;
    }
    if (cat == CAT_TOKEN_EMBD && low_bit(s->p->ftype)) {
        const int to = low_bit_more(s->p->ftype);
        why(c, "token_embd: %s -> %s", mint_ftype_name(s->p->ftype), tn(to));
        return to;
    }
    if (low_bit(s->p->ftype)) return rule_low_bit(s, cat, type, c);
    if (cat == CAT_ATTN_K && s->n_expert == 8) {
        why(c, "attn_k: 8 experts -> Q8_0");
        return MINT_TYPE_Q8_0;
    }
    if (cat == CAT_ATTN_K || cat == CAT_ATTN_Q || cat == CAT_FFN_GATE || cat == CAT_FFN_UP) {
        type = rule_iq3_small(s, cat, type);
        why(c, "%s: %s", category_names[cat], tn(type));
        return type;
    }
    if (is_attn_v_like(cat)) return rule_attn_v(s, cat, type, c);
    if (cat == CAT_FFN_DOWN) return rule_ffn_down(s, type, c);
    if (cat == CAT_ATTN_OUTPUT) return rule_attn_output(s, type, c);
    why(c, "%s: base type %s", category_names[cat], tn(type));
    return type;
}

// A type whose block does not divide the row is replaced by one whose block does (llama.cpp's
// tensor_type_fallback): K-quants and IQ4_XS by the 32-element type of about the same size,
// 32-element types by F16, and F16 when even the replacement does not fit.
static int shape_fallback(const mint_mix_tensor *t, int type, mint_mix_choice *c) {
    uint32_t blck = mint_type_block_size((uint32_t)type);
    if (t->ne[0] % blck == 0) return type;
    int to;
    const char *note = "";
    switch (type) {
    case MINT_TYPE_IQ3_XXS:
    case MINT_TYPE_IQ3_S:
    case MINT_TYPE_IQ4_XS:
    case MINT_TYPE_IQ2_XXS:
    case MINT_TYPE_IQ2_XS:
    case MINT_TYPE_IQ2_S:
    case MINT_TYPE_IQ1_S:
    case MINT_TYPE_IQ1_M:
        to = MINT_TYPE_IQ4_NL;
        break;
    case MINT_TYPE_TQ1_0:
    case MINT_TYPE_TQ2_0:
    case MINT_TYPE_Q2_0:
        to = MINT_TYPE_Q4_0;
        break;
    case MINT_TYPE_Q2_K:
    case MINT_TYPE_Q3_K:
        // llama.cpp releases up to early 2026 fell back to IQ4_NL here; newer ones (the peer
        // this file follows) take Q4_0, the same 4.5 bits per weight without the table.
        to = MINT_TYPE_Q4_0;
        note = " (older llama.cpp: IQ4_NL)";
        break;
    case MINT_TYPE_Q4_K:
        to = MINT_TYPE_Q5_0;
        break;
    case MINT_TYPE_Q5_K:
        to = MINT_TYPE_Q5_1;
        break;
    case MINT_TYPE_Q6_K:
        to = MINT_TYPE_Q8_0;
        break;
    default:
        to = MINT_TYPE_F16;
        break;
    }
    if (t->ne[0] % mint_type_block_size((uint32_t)to) != 0) {
        to = MINT_TYPE_F16;
        note = "";
    }
    why(c, "fallback: ne[0] %lld not a multiple of %u (%s) -> %s%s", (long long)t->ne[0], blck,
        tn(type), tn(to), note);
    c->fallback = true;
    return to;
}

static mint_status user_type_fits(const mint_mix_tensor *t, int type, const char *flag,
                                  mint_err *err) {
    uint32_t blck = mint_type_block_size((uint32_t)type);
    if (t->ne[0] % blck == 0) return MINT_OK;
    return mint_fail(err, MINT_E_ARG,
                     "%s: %s %s needs a row length that is a multiple of %u, ne[0] = %lld", t->name,
                     flag, tn(type), blck, (long long)t->ne[0]);
}

// The whole decision for one tensor (llama.cpp's llama_tensor_get_type).
static mint_status choose(mix_state *s, const mint_mix_tensor *t, mint_mix_choice *c,
                          mint_err *err) {
    const mint_mix_params *p = s->p;
    memset(c, 0, sizeof *c);
    c->type = t->type;
    const char *skip = why_not_quantized(t, p);
    if (skip) {
        why(c, "kept %s: %s", tn((int)t->type), skip);
        return MINT_OK;
    }
    category cat = category_of(t->name);
    int type = s->base;
    if (p->token_embd_type >= 0 && cat == CAT_TOKEN_EMBD) {
        type = p->token_embd_type;
        why(c, "--token-embedding-type %s", tn(type));
        mint_status st = user_type_fits(t, type, "--token-embedding-type", err);
        if (st != MINT_OK) return st;
    } else if (p->output_type >= 0 && cat == CAT_OUTPUT) {
        type = p->output_type;
        why(c, "--output-tensor-type %s", tn(type));
        mint_status st = user_type_fits(t, type, "--output-tensor-type", err);
        if (st != MINT_OK) return st;
    } else if (!mint_type_get((uint32_t)type)->is_quant) {
        why(c, "%s file: %s", mint_ftype_name(p->ftype), tn(type));
    } else {
        bool manual = false;
        for (size_t i = 0; i < p->n_overrides && !manual; i++) {
            if (regexec(&s->re[i], t->name, 0, NULL, 0) == 0) {
                type = p->overrides[i].type;
                why(c, "--tensor-type '%s' -> %s", p->overrides[i].pattern, tn(type));
                manual = true;
            }
        }
        if (!manual && p->pure) why(c, "--pure: %s", tn(type));
        s->layer = (int)block_of(t->name);
        if (!manual && !p->pure && s->n_expert > 1 && cat == CAT_FFN_DOWN &&
            (s->layer < 0 || s->layer >= s->n_ffn_down))
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: no block number below %d in the name (llama-quantize refuses "
                             "it too)",
                             t->name, s->n_ffn_down);
        if (!manual && !p->pure) type = mix_rule(s, t, cat, type, c);
        // Q1_0's 128-element block has no smaller type to fall back to: llama-quantize stops.
        if (type == MINT_TYPE_Q1_0 && t->ne[0] % mint_type_block_size(MINT_TYPE_Q1_0) != 0)
            return mint_fail(err, MINT_E_ARG,
                             "%s: ne[0] = %lld is not a multiple of Q1_0's 128 and Q1_0 has no "
                             "fallback type (llama-quantize refuses it too)",
                             t->name, (long long)t->ne[0]);
        type = shape_fallback(t, type, c);
    }
    // llama.cpp refuses Q2_K tensors in a Q2_K_S file without an importance matrix.
    if (!p->has_imatrix && p->ftype == MINT_FTYPE_Q2_K_S && type == MINT_TYPE_Q2_K &&
        cat != CAT_TOKEN_EMBD && cat != CAT_OUTPUT)
        return mint_fail(err, MINT_E_ARG,
                         "%s: Q2_K in a Q2_K_S file needs an importance matrix (llama-quantize "
                         "refuses without --imatrix too)",
                         t->name);
    // And every tensor of a type whose search needs one (llama.cpp's tensor_requires_imatrix:
    // IQ3_XXS, the IQ2 and IQ1 types), before writing anything.
    if (!p->has_imatrix && type != MINT_TYPE_Q2_K && mint_mix_requires_imatrix(type, p->ftype) &&
        cat != CAT_TOKEN_EMBD && cat != CAT_OUTPUT)
        return mint_fail(err, MINT_E_ARG,
                         "%s: %s needs an importance matrix (llama-quantize: \"this quantization "
                         "requires an imatrix!\")",
                         t->name, tn(type));
    // A rule may name a type mint cannot compute (IQ3_XXS's attn_q / attn_k IQ2_S).
    if (!type_usable(type)) return check_type(type, t->name, err);
    c->type = (uint32_t)type;
    c->quantize = c->type != t->type;
    return MINT_OK;
}

static mint_status check_params(const mint_mix_model *m, const mint_mix_params *p, mint_err *err) {
    if (mint_ftype_base_type((int)p->ftype) < 0)
        return mint_fail(err, MINT_E_ARG, "mix: file type %d is not one mint knows", (int)p->ftype);
    if (m->n_layer <= 0 || m->n_head <= 0 || m->n_head_kv < 0)
        return mint_fail(err, MINT_E_ARG,
                         "mix: model n_layer %d, n_head %d, n_head_kv %d (need > 0, > 0, >= 0)",
                         m->n_layer, m->n_head, m->n_head_kv);
    mint_status st = MINT_OK;
    if (p->output_type >= 0) st = check_type(p->output_type, "--output-tensor-type", err);
    if (st == MINT_OK && p->token_embd_type >= 0)
        st = check_type(p->token_embd_type, "--token-embedding-type", err);
    for (size_t i = 0; st == MINT_OK && i < p->n_overrides; i++)
        st = check_type(p->overrides[i].type, "--tensor-type", err);
    return st;
}

mint_status mint_mix_plan(const mint_mix_model *model, const mint_mix_tensor *tensors, size_t n,
                          const mint_mix_params *params, mint_mix_choice *out, size_t *order,
                          mint_err *err) {
    mint_status st = check_params(model, params, err);
    if (st != MINT_OK) return st;

    const mint_arch *arch = model->arch ? model->arch : mint_arch_find("llama");
    mix_state s = {
        .p = params,
        .base = mint_ftype_base_type((int)params->ftype),
        .n_gqa = model->n_head_kv > 0 ? model->n_head / model->n_head_kv : 0,
        .is_70b = arch->quant_70b_layers && model->n_layer == arch->quant_70b_layers &&
                  (!arch->quant_70b_gqa || model->n_head != model->n_head_kv),
        .tied = true,
        .n_ffn_down = model->n_layer,
        .n_expert = model->n_expert,
    };
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tensors[i].name, "output.weight") == 0) s.tied = false;
        if (is_attn_v_like(category_of(tensors[i].name))) s.n_attention_wv++;
    }
    // use_more_bits counts attn_v layers against n_attention_wv, the attn_v tensors there are
    // (a hybrid has fewer than its layers, as llama.cpp counts them too).

    order_key *keys = malloc((n ? n : 1) * sizeof *keys);
    s.re = calloc(params->n_overrides ? params->n_overrides : 1, sizeof *s.re);
    size_t n_re = 0;
    if (!keys || !s.re) {
        st = mint_fail(err, MINT_E_NOMEM, "mix: out of memory for %zu tensors", n);
        goto done;
    }
    for (; n_re < params->n_overrides; n_re++) {
        st = mix_regex_compile(params->overrides[n_re].pattern, &s.re[n_re], err);
        if (st != MINT_OK) goto done;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (order_key){block_of(tensors[i].name), tensors[i].name, i};
    qsort(keys, n, sizeof *keys, order_cmp);
    for (size_t k = 0; k < n && st == MINT_OK; k++) {
        size_t i = keys[k].index;
        if (order) order[k] = i;
        st = choose(&s, &tensors[i], &out[i], err);
    }
done:
    for (size_t i = 0; i < n_re; i++) regfree(&s.re[i]);
    free(s.re);
    free(keys);
    return st;
}
