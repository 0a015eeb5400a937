// logprobs.c - the k most likely tokens of a row of logits, and its log-softmax at given ids: the
// one implementation behind mint-run --json, mint-serve's logprobs, beam search's expansions and
// the Python bindings' log-probabilities.
#include "mint.h"

#include <math.h>

int32_t mint_top_k(const float *logits, int32_t n_vocab, int32_t k, int32_t *ids) {
    // Contract: ids[0..min(k, n_vocab)) = the highest logits, best first, the lower id on a tie.
    // Insertion into a sorted list of at most k: O(n_vocab * k), and k is small (<= 64 here).
    if (k <= 0 || n_vocab <= 0) return 0;
    int32_t n = 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        if (n == k && !(logits[i] > logits[ids[n - 1]])) continue; // not better than the last
        int32_t j = n < k ? n++ : k - 1;
        while (j > 0 && logits[i] > logits[ids[j - 1]]) {
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = i;
    }
    return n;
}

void mint_log_softmax(const float *logits, int32_t n_vocab, const int32_t *ids, int32_t n,
                      double *out) {
    // Contract: out[i] = log softmax(logits)[ids[i]], computed as (l - max) - log(sum exp(l - max))
    // in double with the sum in id order: the digits mint-run --json has always printed.
    if (n <= 0 || n_vocab <= 0) return;
    float max = logits[0];
    for (int32_t i = 1; i < n_vocab; i++) max = logits[i] > max ? logits[i] : max;
    double sum = 0;
    for (int32_t i = 0; i < n_vocab; i++) sum += exp((double)logits[i] - max);
    const double log_sum = log(sum);
    for (int32_t i = 0; i < n; i++) out[i] = (double)logits[ids[i]] - max - log_sum;
}
