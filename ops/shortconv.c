// shortconv.c - LFM2's double-gated short convolution, the token mixer of its recurrent layers.
//
// in_proj turns each token's normalised residual into three n-wide parts b, c and x. The
// convolution runs over bx = b * x, per channel, over the last L values of bx in the sequence
// (depthwise and causal), and its output is gated by c: y = c * conv(bx). What a sequence must
// remember between calls is the L - 1 values of bx before the next token: its state. Nothing else
// of the past matters, which is what makes the layer recurrent: each token overwrites the state.
//
// The sum over the L taps is in order, oldest input first, each term a fused multiply-add (ggml's
// ssm_conv sums the same way and is built with FP contraction), so a channel's result does not
// depend on how channels are split across threads or how the rows are batched.
#include "ops/ops.h"

#include <math.h>
#include <string.h>

enum { MAX_TAPS = 64 }; // runtime/engine/hybrid.c refuses longer convolutions

void mint_shortconv(const float *in, size_t in_stride, float *y, size_t y_stride, int32_t n_rows,
                    const float *w, int taps, float *state, int64_t n, long c0, long c1) {
    const int hist = taps - 1; // the state's rows
    for (long ch = c0; ch < c1; ch++) {
        float win[MAX_TAPS]; // the channel's last `taps` values of bx, oldest first
        for (int j = 0; j < hist; j++) win[j] = state[(size_t)j * (size_t)n + (size_t)ch];
        const float *wc = w + (size_t)ch * (size_t)taps;
        for (int32_t t = 0; t < n_rows; t++) {
            const float *row = (const float *)((const char *)in + (size_t)t * in_stride);
            win[hist] = row[ch] * row[2 * n + ch]; // b * x
            float sum = 0.0f;
            for (int k = 0; k < taps; k++) sum = fmaf(win[k], wc[k], sum);
            float *out = (float *)((char *)y + (size_t)t * y_stride);
            out[ch] = row[n + ch] * sum; // c * conv(bx)
            memmove(win, win + 1, (size_t)hist * sizeof *win);
        }
        for (int j = 0; j < hist; j++) state[(size_t)j * (size_t)n + (size_t)ch] = win[j];
    }
}
