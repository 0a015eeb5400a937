// kernels_avx512.c - the avx512 table: AVX-512 F/BW/VL/DQ (Skylake-X; Zen 4 and Ice Lake take
// the avx512vnni table, which starts from this one).
#include "quant/avx512_parts.h"

void mint_kernels_init_avx512(mint_kernels *k) {
    mint_x512_set_float_avx512(k);
    mint_x512_set_act_avx512(k);
    mint_x512_set_legacy_avx512(k);
    mint_x512_set_kquant_avx512(k);
    mint_x512_set_vec_avx512(k);
    mint_x512_set_attn_avx512(k);
}
