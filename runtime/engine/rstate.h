// rstate.h - the recurrent state of a hybrid model's sequences, beside the paged KV cache.
//
// An attention layer's past is a list of keys and values, one row per position, which the KV
// cache can share between sequences, cut at any position and extend. A recurrent layer's past is
// one state per sequence that each token overwrites (LFM2's short convolution keeps the last
// L - 1 inputs of bx): it cannot be cut, only replaced by an earlier copy. So each sequence has
// its live state and a few checkpoints, copies of it taken at positions it held; going back to
// a position (mint_seq_truncate) restores the latest checkpoint at or before it, and the tokens
// between are evaluated again (runtime/engine/decode.c), which gives the same bits as the first
// time (results never depend on how rows are batched).
//
// Beside them, a store of snapshots shared by every sequence, for the prefix cache: the state
// after each full KV block a sequence evaluates, keyed by that block's prefix-chain key
// (runtime/engine/kvcache.h), taken by the recurrent op as its rows cross the block boundary. A
// sequence that takes another's cached blocks (mint_seq_prefix) starts from the snapshot of the
// last one it takes, so a shared prefix is computed once for the recurrent layers too. The store
// has a fixed number of slots, the least recently used given up first.
//
// Checkpoints are taken where sequences go back to: before a batch of several of a sequence's
// tokens (speculative decoding's drafts are rejected from there; a chat's next turn starts after
// a prompt), and where one token at a time reaches a KV block boundary (runtime/engine/decode.c:
// a state can be megabytes, too much to copy before every token). When a sequence's slots are full,
// the checkpoint that leaves the smallest gap between its neighbours is dropped (never the oldest
// or the newest), so the positions kept thin out towards the start and going back far costs a
// replay of about as far as the distance gone back.
#ifndef MINT_RSTATE_H
#define MINT_RSTATE_H

#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// A snapshot the recurrent ops take during a batch: sequence seq's whole state once it holds pos
// positions (a KV block boundary), written into dst ([seq_floats], a slot of the store).
typedef struct mint_rs_snap_req {
    int32_t seq;  // the sequence
    int32_t pos;  // positions held when taken (a multiple of the KV block)
    int32_t slot; // the store's slot dst is
    float *dst;   // [seq_floats]
} mint_rs_snap_req;

typedef struct mint_rstate {
    int32_t n_seq;       // sequences (ids 0 .. n_seq - 1)
    int32_t n_layer;     // recurrent layers
    size_t layer_floats; // floats of one layer's state of one sequence
    size_t seq_floats;   // n_layer * layer_floats: one sequence's whole state
    float *live;         // [n_seq][seq_floats] each sequence's state now
    int32_t n_ckpt;      // checkpoint slots per sequence
    float *ckpt;         // [n_seq][n_ckpt][seq_floats] the copies
    int32_t *ckpt_pos;   // [n_seq][n_ckpt] positions held when each was taken, ascending per
                         // sequence from entry 0; -1 for an empty entry (the empty ones last)
    int32_t *ckpt_slot;  // [n_seq][n_ckpt] the copy (slot of ckpt) of each entry: entries move,
                         // the copies stay where they are
    int32_t n_snap;      // snapshot slots of the shared store
    float *snap;         // [n_snap][seq_floats] states after a full KV block
    uint64_t *snap_key;  // [n_snap] the block's prefix-chain key (valid when snap_used > 0)
    uint64_t *snap_used; // [n_snap] when it was last written or read (0: empty)
    uint64_t clock;      // counts snapshot uses, for the least recently used
    uint64_t snap_hits;  // snapshots a sequence started from since creation
    uint64_t restores;   // checkpoints restored since creation
    uint64_t replayed;   // tokens evaluated again after a restore since creation
} mint_rstate;

// A state of n_layer layers of layer_floats each for n_seq sequences with n_ckpt checkpoints
// each and n_snap shared snapshots (n_layer 0: an empty state, every call a no-op).
mint_status mint_rs_init(mint_rstate *rs, int32_t n_seq, int32_t n_layer, size_t layer_floats,
                         int32_t n_ckpt, int32_t n_snap, mint_err *err);
void mint_rs_free(mint_rstate *rs);

// Bytes of live state and checkpoints together.
uint64_t mint_rs_bytes(const mint_rstate *rs);

// Layer `layer`'s live state of sequence seq: [layer_floats].
static inline float *mint_rs_layer(const mint_rstate *rs, int32_t seq, int32_t layer) {
    return rs->live + (size_t)seq * rs->seq_floats + (size_t)layer * rs->layer_floats;
}

// Empties seq: a zero state (no token seen), no checkpoints.
void mint_rs_clear(mint_rstate *rs, int32_t seq);
// dst's state and checkpoints become copies of src's.
void mint_rs_fork(mint_rstate *rs, int32_t src, int32_t dst);
// Copies seq's live state as the checkpoint at position pos (the positions it holds), replacing
// one at pos or, with the slots full, the one whose loss leaves the smallest gap.
void mint_rs_checkpoint(mint_rstate *rs, int32_t seq, int32_t pos);
// Sets seq's live state to its latest checkpoint at a position <= n_keep (a zero state, position
// 0, when there is none) and drops the checkpoints after n_keep. Returns that position: the
// tokens from it to n_keep must be evaluated again.
int32_t mint_rs_restore(mint_rstate *rs, int32_t seq, int32_t n_keep);

// A snapshot slot to write a state into (an empty one, or the least recently used, which is
// given up); its key is set by mint_rs_snap_publish once the block is committed.
int32_t mint_rs_snap_take(mint_rstate *rs);
// The state in slot i: [seq_floats].
static inline float *mint_rs_snap(const mint_rstate *rs, int32_t i) {
    return rs->snap + (size_t)i * rs->seq_floats;
}
// Files slot i under the block's prefix-chain key (a slot already under that key is kept and i
// is emptied: the two hold the same state).
void mint_rs_snap_publish(mint_rstate *rs, int32_t i, uint64_t key);
// The slot holding the state after the block keyed `key`, or -1.
int32_t mint_rs_snap_find(mint_rstate *rs, uint64_t key);

#endif // MINT_RSTATE_H
