// search.h - the scale searches shared by the reference weight quantizers (quant/search_ref.c):
// given a group of values (and per-value weights), find the levels and the scale (and min) that
// fit them best, as llama.cpp's quantizers do, operation for operation, so that the bytes agree.
//
// Internal to quant/. Every search leaves the levels it chose in L and returns the scale; the
// callers (quant/quant_legacy_ref.c, quant/quant_k_ref.c) then store the scale (rounded) and
// re-quantize or pack the levels.
#ifndef MINT_QUANT_SEARCH_H
#define MINT_QUANT_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

// Below this, a group's largest |x| counts as zero (ggml's GROUP_MAX_EPS).
#define MINT_GROUP_MAX_EPS 1e-15f

static inline int mint_clampi(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

// Symmetric levels -nmax..nmax-1 for n values with weights qw[i], or x_i^2 when qw is NULL.
// Starts from iscale = -nmax/max (max = signed value of largest |x|), then tries iscale =
// -(nmax + 0.1k)/max for k = -9..9 and keeps the levels of the best weighted least-squares fit.
// Writes L[i] = level + nmax (0..2*nmax-1) and returns the scale (x ~ scale * level). An
// all-zero group gives L = 0 (not nmax) and scale 0.
float mint_make_qx_quants(int n, int nmax, const float *restrict x, int8_t *restrict L,
                          const float *restrict qw);

// Q3_K's plain search: levels -nmax..nmax-1 from iscale = -nmax/max with weights x_i^2, then up
// to 5 passes of coordinate descent moving one level at a time. L[i] = level + nmax.
float mint_make_q3_quants(int n, int nmax, const float *restrict x, int8_t *restrict L);

// Asymmetric levels 0..nmax with a min: x ~ scale * L + min, min <= 0. Starts from the plain
// min/max grid, then for nstep+1 candidate grids iscale = (rmin + rdelta*is + nmax)/(max - min)
// fits scale and min by weighted least squares and keeps the candidate with the smallest
// weighted error (|.| if use_mad, else squared). Writes L (0..nmax), *the_min = -min (>= 0),
// returns the scale. Laux is scratch of n bytes. (ggml's make_qkx2_quants and, given weights,
// make_qkx3_quants: the two are the same computation.)
float mint_make_qkx_quants(int n, int nmax, const float *restrict x, const float *restrict w,
                           uint8_t *restrict L, float *restrict the_min, uint8_t *restrict Laux,
                           float rmin, float rdelta, int nstep, bool use_mad);

// Non-negative levels 0..nmax for n non-negative values (the sub-block scales or mins of a
// super-block) with weights qw: iscale = (nmax + 0.1k)/max for k = -4..4, the one with the least
// weighted squared error, then up to 5 passes of coordinate descent. Returns the scale. Levels
// are stored in bytes as ggml stores them: a negative level (only from a negative value) wraps.
float mint_make_qp_quants(int n, int nmax, const float *restrict x, uint8_t *restrict L,
                          const float *restrict qw);

// Q4_K/Q5_K's 12 scale bytes from the 8 6-bit scales ls and mins lm (the inverse of
// quant/unpack.h's mint_k4_scale_min): the j < 4 stores write bytes 0..7 whole before the
// j >= 4 ones OR their top 2 bits into them.
void mint_k4_pack_scale_min(uint8_t *q, const uint8_t *ls, const uint8_t *lm);

// Packs 2-bit levels L[0..256) as Q2_K/Q3_K's qs: byte 32n + l holds elements 128n + l + 32j in
// bits 2j..2j+1.
void mint_pack_2bit(uint8_t *qs, const uint8_t *L);

#endif // MINT_QUANT_SEARCH_H
