// rstate.c - per-sequence recurrent state and its checkpoints (runtime/engine/rstate.h).
#include "runtime/engine/rstate.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

mint_status mint_rs_init(mint_rstate *rs, int32_t n_seq, int32_t n_layer, size_t layer_floats,
                         int32_t n_ckpt, int32_t n_snap, mint_err *err) {
    memset(rs, 0, sizeof *rs);
    if (n_layer <= 0 || layer_floats == 0) return MINT_OK;
    rs->n_seq = n_seq;
    rs->n_layer = n_layer;
    rs->layer_floats = layer_floats;
    rs->seq_floats = (size_t)n_layer * layer_floats;
    rs->n_ckpt = n_ckpt < 3 ? 3 : n_ckpt; // (dropping needs an inner one)
    const size_t per = rs->seq_floats * sizeof(float);
    rs->live = calloc((size_t)n_seq, per);
    rs->ckpt = calloc((size_t)n_seq * (size_t)rs->n_ckpt, per);
    rs->ckpt_pos = malloc((size_t)n_seq * (size_t)rs->n_ckpt * sizeof *rs->ckpt_pos);
    rs->ckpt_slot = malloc((size_t)n_seq * (size_t)rs->n_ckpt * sizeof *rs->ckpt_slot);
    rs->n_snap = n_snap > 0 ? n_snap : 1;
    rs->snap = malloc((size_t)rs->n_snap * per);
    rs->snap_key = calloc((size_t)rs->n_snap, sizeof *rs->snap_key);
    rs->snap_used = calloc((size_t)rs->n_snap, sizeof *rs->snap_used);
    if (!rs->live || !rs->ckpt || !rs->ckpt_pos || !rs->ckpt_slot || !rs->snap || !rs->snap_key ||
        !rs->snap_used) {
        mint_rs_free(rs);
        return mint_fail(err, MINT_E_NOMEM,
                         "out of memory for the recurrent state (%zu bytes "
                         "per sequence, %d checkpoints)",
                         per, n_ckpt);
    }
    for (int32_t i = 0; i < n_seq * rs->n_ckpt; i++) {
        rs->ckpt_pos[i] = -1;
        rs->ckpt_slot[i] = i % rs->n_ckpt;
    }
    return MINT_OK;
}

void mint_rs_free(mint_rstate *rs) {
    free(rs->live);
    free(rs->ckpt);
    free(rs->ckpt_pos);
    free(rs->ckpt_slot);
    free(rs->snap);
    free(rs->snap_key);
    free(rs->snap_used);
    memset(rs, 0, sizeof *rs);
}

uint64_t mint_rs_bytes(const mint_rstate *rs) {
    return ((uint64_t)rs->n_seq * (uint64_t)(1 + rs->n_ckpt) + (uint64_t)rs->n_snap) *
           rs->seq_floats * sizeof(float);
}

// The copy of entry i of seq's checkpoints.
static float *ckpt_of(const mint_rstate *rs, int32_t seq, int32_t i) {
    const int32_t slot = rs->ckpt_slot[seq * rs->n_ckpt + i];
    return rs->ckpt + ((size_t)seq * (size_t)rs->n_ckpt + (size_t)slot) * rs->seq_floats;
}

void mint_rs_clear(mint_rstate *rs, int32_t seq) {
    if (!rs->n_layer) return;
    memset(mint_rs_layer(rs, seq, 0), 0, rs->seq_floats * sizeof(float));
    for (int32_t i = 0; i < rs->n_ckpt; i++) rs->ckpt_pos[seq * rs->n_ckpt + i] = -1;
}

void mint_rs_fork(mint_rstate *rs, int32_t src, int32_t dst) {
    if (!rs->n_layer || src == dst) return;
    const size_t bytes = rs->seq_floats * sizeof(float);
    memcpy(mint_rs_layer(rs, dst, 0), mint_rs_layer(rs, src, 0), bytes);
    for (int32_t i = 0; i < rs->n_ckpt; i++) { // the entries in use, in dst's own slots
        const int32_t pos = rs->ckpt_pos[src * rs->n_ckpt + i];
        rs->ckpt_pos[dst * rs->n_ckpt + i] = pos;
        if (pos >= 0) memcpy(ckpt_of(rs, dst, i), ckpt_of(rs, src, i), bytes);
    }
}

// Moves entry `from` of seq's list to index `to` (shifting the ones between), with its slot.
static void move_entry(mint_rstate *rs, int32_t seq, int32_t from, int32_t to) {
    int32_t *p = rs->ckpt_pos + seq * rs->n_ckpt, *sl = rs->ckpt_slot + seq * rs->n_ckpt;
    const int32_t pos = p[from], slot = sl[from];
    if (from < to) {
        memmove(p + from, p + from + 1, (size_t)(to - from) * sizeof *p);
        memmove(sl + from, sl + from + 1, (size_t)(to - from) * sizeof *sl);
    } else if (from > to) {
        memmove(p + to + 1, p + to, (size_t)(from - to) * sizeof *p);
        memmove(sl + to + 1, sl + to, (size_t)(from - to) * sizeof *sl);
    }
    p[to] = pos;
    sl[to] = slot;
}

void mint_rs_checkpoint(mint_rstate *rs, int32_t seq, int32_t pos) {
    if (!rs->n_layer || pos <= 0) return; // position 0 is the zero state, always at hand
    int32_t *p = rs->ckpt_pos + seq * rs->n_ckpt;
    const size_t bytes = rs->seq_floats * sizeof(float);
    int32_t used = 0;
    while (used < rs->n_ckpt && p[used] >= 0) used++;
    int32_t at = used; // where the new one goes, keeping the positions ascending
    for (int32_t i = 0; i < used; i++)
        if (p[i] >= pos) {
            at = i;
            break;
        }
    if (at < used && p[at] == pos) { // the same position again: its state is the same
        memcpy(ckpt_of(rs, seq, at), mint_rs_layer(rs, seq, 0), bytes);
        return;
    }
    if (used == rs->n_ckpt) { // full: drop the inner one whose neighbours are closest
        int32_t drop = -1, best = 0;
        for (int32_t i = 1; i + 1 < used; i++) {
            const int32_t gap = p[i + 1] - p[i - 1];
            if (drop < 0 || gap < best) {
                drop = i;
                best = gap;
            }
        }
        if (at == used && pos - p[used - 2] < best) // the new one is the newest: the old
            drop = used - 1;                        // newest becomes inner
        move_entry(rs, seq, drop, used - 1);        // its slot to the end, free
        p[used - 1] = -1;
        used--;
        if (at > drop) at--;
    }
    // The free entry `used` (its slot unused) moves to `at`.
    move_entry(rs, seq, used, at);
    memcpy(ckpt_of(rs, seq, at), mint_rs_layer(rs, seq, 0), bytes);
    p[at] = pos;
}

int32_t mint_rs_restore(mint_rstate *rs, int32_t seq, int32_t n_keep) {
    if (!rs->n_layer) return n_keep;
    int32_t *p = rs->ckpt_pos + seq * rs->n_ckpt;
    int32_t best = -1;
    for (int32_t i = 0; i < rs->n_ckpt && p[i] >= 0; i++) {
        if (p[i] <= n_keep)
            best = i;
        else
            p[i] = -1; // after n_keep: gone with the positions
    }
    rs->restores++;
    if (best < 0) {
        memset(mint_rs_layer(rs, seq, 0), 0, rs->seq_floats * sizeof(float));
        return 0;
    }
    memcpy(mint_rs_layer(rs, seq, 0), ckpt_of(rs, seq, best), rs->seq_floats * sizeof(float));
    return p[best];
}

int32_t mint_rs_snap_take(mint_rstate *rs) {
    int32_t best = 0;
    for (int32_t i = 0; i < rs->n_snap; i++) {
        if (!rs->snap_used[i]) {
            best = i;
            break;
        }
        if (rs->snap_used[i] < rs->snap_used[best]) best = i;
    }
    rs->snap_used[best] = ++rs->clock;
    rs->snap_key[best] = 0; // not findable until published
    return best;
}

void mint_rs_snap_publish(mint_rstate *rs, int32_t i, uint64_t key) {
    const int32_t have = mint_rs_snap_find(rs, key);
    if (have >= 0 && have != i) {
        rs->snap_used[i] = 0;
        return;
    }
    rs->snap_key[i] = key;
    rs->snap_used[i] = ++rs->clock;
}

int32_t mint_rs_snap_find(mint_rstate *rs, uint64_t key) {
    for (int32_t i = 0; i < rs->n_snap; i++)
        if (rs->snap_used[i] && rs->snap_key[i] == key && key != 0) {
            rs->snap_used[i] = ++rs->clock;
            return i;
        }
    return -1;
}
