// exec_hybrid.h - the executor's runners of a hybrid model's recurrent mixers (runtime/engine/
// exec_hybrid.c): LFM2's short convolution and Qwen3.5's gated delta net with its attention's gate,
// each called by runtime/engine/exec.c's table for its node on threads ith of nth.
#ifndef MINT_EXEC_HYBRID_H
#define MINT_EXEC_HYBRID_H

#include "runtime/engine/exec.h"

void mint_run_shortconv(const mint_node *n, const mint_exec *e, int node, int ith, int nth);
void mint_run_q_split(const mint_node *n, const mint_exec *e, int node, int ith, int nth);
void mint_run_sigmoid_gate(const mint_node *n, const mint_exec *e, int node, int ith, int nth);
void mint_run_delta_gates(const mint_node *n, const mint_exec *e, int node, int ith, int nth);
void mint_run_conv1d(const mint_node *n, const mint_exec *e, int node, int ith, int nth);
void mint_run_l2_norm(const mint_node *n, const mint_exec *e, int node, int ith, int nth);
void mint_run_delta_net(const mint_node *n, const mint_exec *e, int node, int ith, int nth);
void mint_run_norm_gated(const mint_node *n, const mint_exec *e, int node, int ith, int nth);

#endif // MINT_EXEC_HYBRID_H
