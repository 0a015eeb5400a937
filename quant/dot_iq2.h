// dot_iq2.h - the SIMD kernels of IQ2_XXS, IQ2_XS and IQ2_S against Q8_K (quant/dot_iq2_avx2.c,
// quant/dot_iq2_neon.h), declared apart from the levels' shared headers.
//
// Every level computes each super-block's integer sum exactly, as the reference does
// (quant/quant_iq2_ref.c), and then, per row and column in a scalar f32, sum += (d_w * d_a) *
// bsum and 0.125 * sum at the end: the reference's operations in its order, so every level, tile
// shape and thread count gives the reference's bits.
#ifndef MINT_QUANT_DOT_IQ2_H
#define MINT_QUANT_DOT_IQ2_H

#include "quant/kernels.h"

MINT_DECLARE_DOT(iq2_xxs_q8_K, avx2)
MINT_DECLARE_DOT(iq2_xs_q8_K, avx2)
MINT_DECLARE_DOT(iq2_s_q8_K, avx2)
MINT_DECLARE_DOT(iq2_xxs_q8_K, neon)
MINT_DECLARE_DOT(iq2_xs_q8_K, neon)
MINT_DECLARE_DOT(iq2_s_q8_K, neon)
MINT_DECLARE_DOT(iq2_xxs_q8_K, neondot)
MINT_DECLARE_DOT(iq2_xs_q8_K, neondot)
MINT_DECLARE_DOT(iq2_s_q8_K, neondot)

#endif // MINT_QUANT_DOT_IQ2_H
