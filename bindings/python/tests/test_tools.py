"""inspect / File, perplexity (and KL divergence), quantize and synth_write against the programs
that drive the same C functions (mint-inspect, mint-perplexity, mint-quantize)."""

import json
import re

import mint
from conftest import run_tool


def test_inspect_is_mint_inspects(stories_path, bin_dir):
    want = json.loads(run_tool(bin_dir, "mint-inspect", "--json", stories_path).stdout)
    got = mint.inspect(stories_path)
    info = got["info"]
    assert info["format"] == want["format"] == "gguf"
    for k_py, k_c in [("version", "version"), ("file_size", "size"), ("n_kv", "n_kv"),
                      ("n_tensors", "n_tensors"), ("alignment", "alignment"),
                      ("header_size", "header_size"), ("data_offset", "data_offset"),
                      ("data_size", "data_size")]:  # fmt: skip
        assert info[k_py] == want[k_c], k_py
    assert [m["key"] for m in got["metadata"]] == [m["key"] for m in want["metadata"]]
    for m_py, m_c in zip(got["metadata"], want["metadata"]):
        if isinstance(m_c.get("value"), float):  # mint-inspect prints %.9g
            assert float(format(m_py["value"], ".9g")) == m_c["value"], m_py["key"]
        elif "value" in m_c:
            assert m_py["value"] == m_c["value"], m_py["key"]
    assert [t["name"] for t in got["tensors"]] == [t["name"] for t in want["tensors"]]
    assert [t["type"] for t in got["tensors"]] == [t["type"] for t in want["tensors"]]
    assert got["types"] == {"F32": 48}
    assert got["n_params"] == 292800


def test_file_values_and_tensor_bytes(stories_path):
    with mint.File(stories_path) as f:
        toks = f.get("tokenizer.ggml.tokens")
        assert len(toks) == 512 and toks[:3] == ["<unk>", "<s>", "</s>"]
        assert f.get("llama.context_length") == 2048
        assert f.get("general.architecture") == "llama"
        assert len(f.get("tokenizer.ggml.scores")) == 512
        t = f.tensor("token_embd.weight")
        assert t["shape"] == (64, 512) and t["type"] == "F32"
        b = f.tensor_bytes("token_embd.weight")
        assert len(b) == t["nbytes"] == 64 * 512 * 4
        assert mint.hash64(b) == mint.hash64(bytearray(b))


def perplexity_line(stderr):
    m = re.search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", stderr)
    return float(m.group(1)), float(m.group(2))


def test_perplexity_is_mint_perplexitys(stories, stories_path, data_dir, tinystories_text, bin_dir):
    r = run_tool(bin_dir, "mint-perplexity", "-m", stories_path, "-f",
                 data_dir / "tinystories_val.txt", "-c", 128, "--chunks", 6, "-t", 1)  # fmt: skip
    want = perplexity_line(r.stdout.decode() + r.stderr.decode())
    seen = []
    got = mint.perplexity(stories, tinystories_text, n_ctx=128, n_chunks=6, n_threads=1,
                          on_chunk=lambda i, n, p: seen.append((i, n)))  # fmt: skip
    assert (round(got["ppl"], 4), round(got["ppl_err"], 5)) == want
    assert got["n_chunks"] == 6 and got["count"] == 6 * 63 and not got["has_kld"]
    assert [i for i, _ in seen] == list(range(1, 7)) or [i for i, _ in seen] == list(range(6))


def test_quantize_then_kl_divergence_against_f32(stories_path, tinystories_text, tmp_path, bin_dir):
    q = tmp_path / "stories-q8_0.gguf"
    decisions = mint.quantize(stories_path, q, "Q8_0", n_threads=1)
    assert len(decisions) == 48
    assert {d["from"] for d in decisions} == {"F32"}
    assert "Q8_0" in {d["to"] for d in decisions} and all(d["reason"] for d in decisions)
    with mint.File(q) as f:
        assert f.verify_hashes() == 48
    # The same bytes as mint-quantize writes.
    q2 = tmp_path / "by-tool.gguf"
    run_tool(bin_dir, "mint-quantize", stories_path, q2, "Q8_0", 1)
    assert q.read_bytes() == q2.read_bytes()
    base = tmp_path / "base.kld"
    f32 = mint.perplexity(stories_path, tinystories_text, n_ctx=128, n_chunks=4, n_threads=1,
                          kld_base_out=base)  # fmt: skip
    assert base.exists()
    r = mint.perplexity(q, tinystories_text, n_ctx=128, n_chunks=4, n_threads=1, kld_base_in=base)
    assert r["has_kld"]
    assert abs(r["ppl_base"] - f32["ppl"]) < 1e-5 * f32["ppl"]  # from the 16-bit base file
    assert 0 < r["kld"] < 0.05 and r["same_top"] > 0.9
    assert r["kld_pct"]["max"] >= r["kld_pct"]["median"] >= r["kld_pct"]["min"] > -1e-4


def test_synthetic_models_quantize_and_run(tmp_path):
    """No shared data: write a model, quantize it, run both."""
    src = mint.synth_write(tmp_path / "s.gguf", preset="small", ftype="F16", seed=3, n_threads=1)
    info = mint.inspect(src)
    assert info["info"]["format"] == "gguf" and "F16" in info["types"]
    dst = tmp_path / "s-q4_0.gguf"
    mint.quantize(src, dst, "Q4_0", n_threads=1)
    outs = []
    for p in (src, dst):
        with mint.Model(p, n_threads=1, n_ctx=64) as m:
            assert m.info.n_embd == 256
            with m.context() as ctx:
                ctx.eval([1, 2, 3])
                outs.append(ctx.logits())
    assert outs[0] != outs[1]  # another type, other numbers
    assert mint.version().count(".") == 2 and mint.isa()
    assert mint.type_name(2) == "Q4_0"


def test_quantize_with_an_importance_matrix(tmp_path):
    """llama-imatrix's matrix for the tiny llama3 (tests/reference/imatrix_quant): the weighted
    quantizers for the tensors it covers, the filters, llama-quantize's metadata keys."""
    import pathlib

    import pytest

    ref = pathlib.Path(__file__).resolve().parents[3] / "tests/reference/imatrix_quant"
    src = mint.synth_write(tmp_path / "l.gguf", "llama3", "F32", seed=1, n_threads=1, shape="tiny")
    dst = tmp_path / "l-q4_k_m.gguf"
    plain = tmp_path / "l-plain.gguf"
    mint.quantize(src, plain, "Q4_K_M", n_threads=1)
    im = ref / "llama3-tiny.imatrix.gguf"
    got = mint.quantize(src, dst, "Q4_K_M", n_threads=1, imatrix=im, exclude_weights="blk.0")
    why = {d["name"]: d["reason"] for d in got}
    assert "weighted by the imatrix" in why["blk.1.ffn_down.weight"]
    assert "no imatrix entry" in why["blk.0.ffn_down.weight"]
    with mint.File(dst) as f, mint.File(plain) as g:
        assert f.get("quantize.imatrix.entries_count") == 7
        assert f.get("quantize.imatrix.dataset") == "tinystories20k.txt"
        q0, q1 = "blk.0.attn_q.weight", "blk.1.attn_q.weight"
        assert f.tensor_bytes(q0) == g.tensor_bytes(q0)  # excluded: as without a matrix
        assert f.tensor_bytes(q1) != g.tensor_bytes(q1)
    with pytest.raises(mint.MintArgumentError):
        mint.quantize(src, dst, "Q4_K_M", imatrix=im, include_weights="attn", exclude_weights="ffn")
