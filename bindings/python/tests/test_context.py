"""The low-level Context and Sampler: logits bit for bit equal to a C program's through the same
calls, and the context's sequences, batches, attention algorithms, tracing and capture."""

import math
import struct
import subprocess

import pytest

import mint

C_LOGITS = r"""
#include <mint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// argv: model, then token ids. Evaluates them as one batch with every row's logits, then one
// more token (the argmax) at the next position; prints every row as hex float bits.
int main(int argc, char **argv) {
    mint_err err;
    mint_model *m;
    mint_ctx *c;
    if (mint_model_open(argv[1], NULL, &m, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = 1;
    cp.n_ctx = 256;
    if (mint_ctx_create(m, &cp, &c, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    int n = argc - 2;
    int32_t ids[256];
    for (int i = 0; i < n; i++) ids[i] = atoi(argv[2 + i]);
    if (mint_eval(c, ids, n, 0, true, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    int rows = mint_get_n_logits(c);
    int32_t best = 0;
    for (int r = 0; r < rows; r++) {
        const float *l = mint_get_logits(c, r);
        for (int v = 0; v < d.n_vocab; v++) {
            uint32_t b;
            memcpy(&b, &l[v], 4);
            printf("%08x%c", b, v + 1 < d.n_vocab ? ' ' : '\n');
            if (r == rows - 1 && l[v] > l[best]) best = v;
        }
    }
    if (mint_eval(c, &best, 1, n, false, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    const float *l = mint_get_logits(c, -1);
    for (int v = 0; v < d.n_vocab; v++) {
        uint32_t b;
        memcpy(&b, &l[v], 4);
        printf("%08x%c", b, v + 1 < d.n_vocab ? ' ' : '\n');
    }
    mint_ctx_free(c);
    mint_model_close(m);
    return 0;
}
"""


def bits(row):
    return [format(struct.unpack("<I", struct.pack("<f", x))[0], "08x") for x in row]


def c_logits(c_api, tmp_path, model_path, ids):
    exe = c_api(C_LOGITS, tmp_path, "logits")
    out = subprocess.run([str(exe), str(model_path), *map(str, ids)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    return [line.split() for line in out.splitlines()]


def py_logits(model, ids):
    with model.context(n_threads=1, n_ctx=256) as ctx:
        ctx.eval(ids, all_logits=True)
        assert ctx.n_logits == len(ids) and ctx.n_past == len(ids)
        rows = [bits(ctx.logits(r)) for r in range(len(ids))]
        last = ctx.logits()
        best = max(range(len(last)), key=lambda v: (last[v], -v))
        ctx.eval([best])
        assert ctx.n_past == len(ids) + 1
        rows.append(bits(ctx.logits()))
    return rows


def test_logits_are_the_c_apis_bit_for_bit_synthetic(synth, synth_path, c_api, tmp_path):
    ids = [1, 40, 41, 42, 43, 44, 45]
    assert py_logits(synth, ids) == c_logits(c_api, tmp_path, synth_path, ids)


def test_logits_are_the_c_apis_bit_for_bit_stories(stories, stories_path, c_api, tmp_path):
    ids = stories.tokenize("Once upon a time, there was a little")
    assert py_logits(stories, ids) == c_logits(c_api, tmp_path, stories_path, ids)


def test_logits_buffer_works_with_and_without_numpy(synth):
    with synth.context(n_threads=1) as ctx:
        ctx.eval([1, 2, 3])
        lg = ctx.logits()
        assert lg.typecode == "f" and len(lg) == synth.n_vocab
        mv = memoryview(lg)
        assert mv.format == "f" and mv.nbytes == 4 * synth.n_vocab
        np = pytest.importorskip("numpy")
        a = np.asarray(lg)
        assert a.dtype == np.float32 and a.shape == (synth.n_vocab,)
        assert float(a[5]) == lg[5]


def test_batch_equals_token_by_token_and_threads_do_not_matter(synth):
    ids = [1, 30, 31, 32, 33]
    with synth.context(n_threads=1) as a, synth.context(n_threads=2) as b:
        a.eval(ids)
        for i, t in enumerate(ids):
            b.eval([t], pos=i)
        assert bits(a.logits()) == bits(b.logits())


def test_repacked_and_file_layout_give_the_same_bits(tmp_path):
    # A block-quantized model: repacked in the background (waited for) or never, same logits.
    p = tmp_path / "small-q4_0.gguf"
    mint.synth_write(p, preset="small", ftype="Q4_0", seed=3, n_threads=1)
    ids = [1, 40, 41, 42]
    with mint.Model(p, n_threads=2) as packed, mint.Model(p, n_threads=2, repack=False) as plain:
        packed.repack_wait()
        with packed.context() as a, plain.context() as b:
            a.eval(ids)
            b.eval(ids)
            assert bits(a.logits()) == bits(b.logits())


@pytest.mark.parametrize("arch", ["llama3", "qwen2", "qwen3", "phi3", "gpt2", "gemma2", "gemma3"])
def test_every_architecture_runs_from_python(tmp_path, arch):
    # A tiny synthetic file of each architecture of the table: it opens, says what it is, and
    # its logits do not depend on the batch shape.
    p = tmp_path / f"{arch}.gguf"
    mint.synth_write(p, preset=arch, shape="tiny", seed=1, n_threads=1)
    with mint.Model(p, n_threads=2) as m:
        assert m.info.arch == ("llama" if arch == "llama3" else arch)
        ids = m.tokenize("Once upon a time")
        with m.context() as a, m.context() as b:
            a.eval(ids)
            for i, t in enumerate(ids):
                b.eval([t], pos=i)
            assert bits(a.logits()) == bits(b.logits())
    with pytest.raises(mint.MintArgumentError, match="no shape 'huge'"):
        mint.synth_write(tmp_path / "x.gguf", preset=arch, shape="huge")


def test_the_three_attention_algorithms_agree(stories):
    ids = stories.tokenize("Once upon a time, there was a little girl named Lily")
    rows = {}
    for alg in mint.ATTENTION_ALGORITHMS:
        with stories.context(n_threads=1, attention=alg) as ctx:
            ctx.eval(ids, all_logits=True)
            assert ctx.attention == alg
            rows[alg] = [ctx.logits(r) for r in range(len(ids))]
    ref = rows["naive"]
    for alg in ("rowwise", "flash"):
        for r, row in enumerate(rows[alg]):
            scale = max(abs(x) for x in ref[r])
            err = max(abs(x - y) for x, y in zip(row, ref[r]))
            assert err <= 1e-5 * scale, (alg, r, err)


def test_sequences_decode_fork_truncate_prefix(synth):
    prompt = list(range(1, 41))  # 40 tokens: one full KV block of 32, and some
    with synth.context(n_threads=1, n_seq_max=3, kv_block=32) as ctx:
        assert ctx.n_seq == 3
        ctx.eval(prompt)
        ref = ctx.logits()
        ctx.fork(0, 1)
        assert ctx.seq_n_past(1) == 40 and ctx.seq_tokens(1) == prompt
        # One batch continuing sequences 0 and 1 with different tokens.
        ctx.decode([mint.BatchEntry(50, 40, 0, True), (51, 40, 1, True)])
        assert ctx.n_logits == 2 and ctx.seq_n_past(0) == 41 and ctx.seq_n_past(1) == 41
        r0, r1 = ctx.logits(0), ctx.logits(1)
        assert r0 != r1
        # Truncating back and evaluating again reproduces the prompt's logits.
        ctx.truncate(1, 39)
        ctx.decode([(40, 39, 1, True)])
        assert bits(ctx.logits(0)) == bits(ref)
        # Sequence 2 finds the prompt's full block in the prefix cache.
        ctx.truncate(0, 0)
        ctx.truncate(1, 0)
        held = ctx.prefix(2, prompt)
        assert held == 32
        ctx.decode([(t, 32 + i, 2, i == 7) for i, t in enumerate(prompt[32:])])
        assert bits(ctx.logits(0)) == bits(ref)
        info = ctx.cache_info()
        assert info["block"] == 32 and info["prefix_hits"] >= 1


def test_sampler_steps_and_defaults(stories):
    with stories.context(n_threads=1) as ctx:
        ctx.eval(stories.tokenize("Once upon a time"))
        logits = ctx.logits()
    s = stories.sampler(temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, seed=3)
    info = s.sample_info(logits)
    assert isinstance(info, mint.SampleInfo) and not info.greedy
    assert info.n_vocab == 512 >= info.n_top_k and info.n_top_k == 40
    assert info.n_top_k >= info.n_top_p >= info.n_min_p >= 1 and 0 < info.p <= 1
    g = stories.sampler(temperature=0).sample_info(logits)
    assert g.greedy and g.p == 1 and g.token == max(range(512), key=lambda v: (logits[v], -v))
    assert stories.sampler(temperature=0).sample(list(logits)) == g.token
    # The Python defaults are mint's.
    d = mint.Sampler(512, seed=0xC0FFEE).params
    lib = mint._lib.load().mint_sampler_default_params()
    for k in ("top_k", "repeat_last_n", "seed"):
        assert d[k] == getattr(lib, k)
    for k in ("temp", "top_p", "min_p", "repeat_penalty"):
        assert math.isclose(d[k], getattr(lib, k), rel_tol=1e-7)


def test_trace_nodes_and_graph(synth):
    with synth.context(n_threads=1) as ctx:
        assert ctx.last_trace() == []
        ctx.trace = True
        ctx.eval([1, 2, 3])
        nodes = ctx.last_trace()
        assert nodes and all(isinstance(n, mint.TraceNode) for n in nodes)
        assert nodes[-1].name == "output" and nodes[-1].op == "MATMUL"
        assert any(n.op == "ATTENTION" for n in nodes)
        assert all(n.rows >= 1 and n.seconds >= 0 for n in nodes)
        assert "output" in ctx.graph_text()
        assert ctx.isa and ctx.attention_scratch > 0


def test_attention_capture_rows_are_distributions(stories):
    ids = stories.tokenize("Once upon a time")
    with stories.context(n_threads=1) as ctx:
        ctx.capture_attention(8)
        ctx.eval(ids)
        w = ctx.attention_weights()
        info = stories.info
        assert w.shape == (info.n_layer, info.n_head, 8, 8)
        for layer in range(info.n_layer):
            for h in range(info.n_head):
                for p in range(len(ids)):
                    row = [w[layer, h, p, k] for k in range(p + 1)]
                    assert abs(sum(row) - 1) < 1e-5 and min(row) >= 0
        ctx.capture_attention(None)
        with pytest.raises(mint.MintArgumentError):
            ctx.attention_weights()


def test_routing_capture_of_a_mixture(tmp_path):
    path = mint.synth_write(tmp_path / "qwen3moe.gguf", preset="qwen3moe", shape="tiny", seed=1)
    with mint.Model(path, n_threads=1, n_ctx=64) as m:
        assert (m.info.n_expert, m.info.n_expert_used) == (16, 4)
        ids = m.tokenize("Once upon a time")
        with m.context(n_threads=1) as ctx:
            ctx.capture_routing(8)
            ctx.eval(ids[:8])
            experts, weights = ctx.routing()
            assert experts.shape == (m.info.n_layer, 8, 4)
            for layer in range(m.info.n_layer):
                for p in range(min(len(ids), 8)):
                    chosen = [experts[layer, p, j] for j in range(4)]
                    w = [weights[layer, p, j] for j in range(4)]
                    assert len(set(chosen)) == 4 and all(0 <= e < 16 for e in chosen)
                    assert abs(sum(w) - 1) < 1e-5 and w == sorted(w, reverse=True)
            ctx.capture_routing(None)
            with pytest.raises(mint.MintArgumentError):
                ctx.routing()


def test_state_capture_of_a_hybrid(tmp_path):
    path = mint.synth_write(tmp_path / "qwen35.gguf", preset="qwen35", shape="tiny", seed=1)
    with mint.Model(path, n_threads=1, n_ctx=64) as m:
        assert (m.info.n_layer_recurrent, m.info.n_state_heads) == (3, 4)
        assert m.info.state_bytes > 0
        ids = m.tokenize("Once upon a time")
        with m.context(n_threads=1) as ctx:
            ctx.capture_state(8)
            ctx.eval(ids[:8])
            norms = ctx.state_norms()
            assert norms.shape == (3, 4, 8)
            # a delta net's state starts at zero: every head holds something after a token
            assert all(norms[r, h, p] > 0 for r in range(3) for h in range(4) for p in range(8))
            # the norms do not depend on how the tokens were batched
            with m.context(n_threads=1) as one:
                one.capture_state(8)
                for p, t in enumerate(ids[:8]):
                    one.eval([t], pos=p)
                assert one.state_norms().tolist() == norms.tolist()
            ctx.capture_state(None)
            with pytest.raises(mint.MintArgumentError):
                ctx.state_norms()


def test_context_low_level_beam_and_speculative(stories):
    ids = stories.tokenize("Once upon a time")
    with stories.context(n_threads=1, n_seq_max=2) as ctx:
        toks, lp = ctx.beam_search(ids, n_beams=2, max_tokens=8)
        assert len(toks) == 8 and lp < 0
    seen = []
    with stories.context(n_threads=1) as ctx, stories.sampler(temperature=0) as s:
        toks, st = ctx.speculative(s, ids, max_tokens=10, on_token=lambda t: seen.append(t) or len(seen) < 5)
        assert toks == seen and len(toks) == 5 and st.generated == 5
