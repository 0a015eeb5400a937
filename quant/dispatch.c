// dispatch.c - choosing the kernel table once, from the CPU's features and MINT_ISA.
#include "quant/kernels.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <strings.h>

#if defined(MINT_ARCH_arm) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1 << 10)
#endif
#endif

static const char *isa_names[MINT_ISA_COUNT] = {"ref",        "avx2", "avx512",
                                                "avx512vnni", "neon", "neondot"};

const char *mint_isa_str(mint_isa isa) {
    return isa >= 0 && isa < MINT_ISA_COUNT ? isa_names[isa] : "?";
}

#if defined(MINT_ARCH_x86)
#include <cpuid.h>

// x86 features from CPUID, plus XGETBV to check that the OS saves the YMM / ZMM registers
// (a CPU can have AVX-512 that the kernel has not enabled). Read directly rather than through
// __builtin_cpu_supports, whose feature names differ between GCC and clang.
typedef struct x86_features {
    bool avx2, fma, f16c, bmi2, avx512f, avx512bw, avx512vl, avx512dq, avx512vnni;
} x86_features;

static x86_features x86_detect(void) {
    x86_features f = {0};
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    bool osxsave = c & (1u << 27), fma = c & (1u << 12), f16c = c & (1u << 29);
    if (!osxsave) return f;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    bool ymm = (lo & 0x6) == 0x6, zmm = (lo & 0xe6) == 0xe6;
    if (!ymm || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
    f.fma = fma;
    f.f16c = f16c;
    f.avx2 = b & (1u << 5);
    f.bmi2 = b & (1u << 8);
    if (zmm) {
        f.avx512f = b & (1u << 16);
        f.avx512dq = b & (1u << 17);
        f.avx512bw = b & (1u << 30);
        f.avx512vl = b & (1u << 31);
        f.avx512vnni = c & (1u << 11);
    }
    return f;
}
#endif

// Whether this CPU (and build) can run a level.
static bool isa_supported(mint_isa isa) {
#if defined(MINT_ARCH_x86)
    x86_features f = x86_detect();
    bool avx2 = f.avx2 && f.fma && f.f16c && f.bmi2;
    bool avx512 = avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq;
#endif
    switch (isa) {
    case MINT_ISA_REF:
        return true;
#if defined(MINT_ARCH_x86)
    case MINT_ISA_AVX2:
        return avx2;
    case MINT_ISA_AVX512:
        return avx512;
    case MINT_ISA_AVX512VNNI:
        return avx512 && f.avx512vnni;
#endif
#if defined(MINT_ARCH_arm)
    case MINT_ISA_NEON:
        return true; // baseline on aarch64
    case MINT_ISA_NEONDOT:
#if defined(__linux__)
        return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) && (getauxval(AT_HWCAP) & HWCAP_ASIMDHP);
#else
        return false;
#endif
#endif
    default:
        return false;
    }
}

int mint_isa_from_name(const char *name) {
    for (int i = 0; name && i < MINT_ISA_COUNT; i++)
        if (strcasecmp(name, isa_names[i]) == 0) return i;
    return -1;
}

mint_isa mint_isa_detect(void) {
    for (int i = MINT_ISA_COUNT - 1; i > 0; i--)
        if (isa_supported((mint_isa)i)) return (mint_isa)i;
    return MINT_ISA_REF;
}

// Each level's own table (quant/kernels_<level>.c) and the level it stands on; the reference
// stands on nothing. A level not built for this architecture has no table.
static const struct {
    const mint_kernels *own; // what the level implements (0 entries: taken from below)
    mint_isa below;          // the level under it
} levels[MINT_ISA_COUNT] = {
    [MINT_ISA_REF] = {&mint_kernels_ref, MINT_ISA_REF},
#if defined(MINT_ARCH_x86)
    [MINT_ISA_AVX2] = {&mint_kernels_avx2, MINT_ISA_REF},
    [MINT_ISA_AVX512] = {&mint_kernels_avx512, MINT_ISA_AVX2},
    [MINT_ISA_AVX512VNNI] = {&mint_kernels_avx512vnni, MINT_ISA_AVX512},
#endif
#if defined(MINT_ARCH_arm)
    [MINT_ISA_NEON] = {&mint_kernels_neon, MINT_ISA_REF},
    [MINT_ISA_NEONDOT] = {&mint_kernels_neondot, MINT_ISA_NEON},
#endif
};

// A function pointer of `own` when it has one, else the one from below.
#define TAKE(k, own, field)                                                                        \
    do {                                                                                           \
        if ((own)->field) (k)->field = (own)->field;                                               \
    } while (0)

// Puts a level's own entries over the table of the levels below it (the rule of
// quant/kernels.h: a type's vec_dot brings its gemm, gemm_packed and token_block, 0 included).
static void apply(mint_kernels *k, const mint_kernels *own) {
    for (int i = 0; i < MINT_TYPE_COUNT; i++) {
        mint_type_kernels *t = &k->t[i];
        const mint_type_kernels *o = &own->t[i];
        TAKE(t, o, to_float);
        TAKE(t, o, from_float);
        if (o->vec_dot) {
            t->vec_dot = o->vec_dot;
            t->gemm = o->gemm;
            t->gemm_packed = o->gemm_packed;
            t->token_block = o->token_block;
        }
    }
    TAKE(k, own, vec.exp);
    TAKE(k, own, vec.max);
    TAKE(k, own, vec.exp_sum);
    TAKE(k, own, vec.scale);
    TAKE(k, own, vec.round_f16);
    TAKE(k, own, vec.qk_f32);
    TAKE(k, own, vec.qk_f16);
    TAKE(k, own, vec.pv_f32);
    TAKE(k, own, vec.pv_f16);
    TAKE(k, own, vec.pv_q8_0);
    TAKE(k, own, vec.pv_q4_0);
    TAKE(k, own, vec.delta_step);
    k->isa = own->isa;
    k->name = own->name;
}

// Builds the table of one level: the reference, then every level on the way up to it.
static void build(mint_kernels *k, mint_isa isa) {
    if (isa == MINT_ISA_REF) {
        *k = mint_kernels_ref;
        return;
    }
    build(k, levels[isa].below);
    apply(k, levels[isa].own);
}

static mint_kernels tables[MINT_ISA_COUNT];
static bool table_ok[MINT_ISA_COUNT];
static mint_isa chosen;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_tables(void) {
    for (int i = 0; i < MINT_ISA_COUNT; i++) {
        table_ok[i] = isa_supported((mint_isa)i);
        if (table_ok[i]) build(&tables[i], (mint_isa)i);
    }
    chosen = mint_isa_detect();
    // MINT_ISA may only lower the level: a forced level the CPU lacks falls back to the best
    // available one below it.
    const char *env = getenv("MINT_ISA");
    if (env && *env) {
        for (int i = 0; i < MINT_ISA_COUNT; i++) {
            if (strcasecmp(env, isa_names[i]) != 0) continue;
            int want = i;
            while (want > 0 && !table_ok[want]) want--;
            if (want <= (int)chosen) chosen = (mint_isa)want;
        }
    }
}

const mint_kernels *mint_kernels_get(void) {
    pthread_once(&once, init_tables);
    return &tables[chosen];
}

const mint_kernels *mint_kernels_for(mint_isa isa) {
    pthread_once(&once, init_tables);
    if (isa < 0 || isa >= MINT_ISA_COUNT || !table_ok[isa]) return NULL;
    return &tables[isa];
}
