"""Bad paths, bad types, bad values and closed handles raise clean exceptions carrying mint's
one-line message; none reaches libmint in a state that could crash the process. Most run on the
synthetic model, so they need no shared data."""

import os
import subprocess
import sys

import pytest

import mint


def one_line(e):
    s = str(e.value)
    assert s and "\n" not in s, repr(s)
    return s


def test_a_missing_file_is_an_io_error_naming_it(tmp_path):
    p = tmp_path / "missing.gguf"
    with pytest.raises(mint.MintIOError) as e:
        mint.Model(p)
    assert isinstance(e.value, OSError) and isinstance(e.value, mint.MintError)
    assert e.value.status == "io" and e.value.code == 1
    assert str(p) in one_line(e)


def test_a_malformed_file_is_a_format_error(tmp_path):
    p = tmp_path / "bad.gguf"
    p.write_bytes(b"GGUF" + b"\xff" * 60)
    with pytest.raises(mint.MintFormatError) as e:
        mint.Model(p)
    assert isinstance(e.value, ValueError) and e.value.status == "format"
    assert "bad.gguf" in one_line(e)
    p.write_bytes(b"not a model at all")
    with pytest.raises(mint.MintError) as e:
        mint.inspect(p)
    one_line(e)


@pytest.mark.parametrize("path", [123, None, 4.5, ["a.gguf"], b"bad\0path"])
def test_a_path_of_the_wrong_type(path):
    with pytest.raises((TypeError, ValueError)) as e:
        mint.Model(path)
    assert isinstance(e.value, mint.MintError)
    one_line(e)


def test_bad_model_arguments(synth_path):
    with pytest.raises(mint.MintArgumentError, match="kv_type 'f8'"):
        mint.Model(synth_path, kv_type="f8")
    with pytest.raises(mint.MintArgumentError, match="attention"):
        mint.Model(synth_path, attention="fast")
    with pytest.raises(TypeError, match="n_ctx must be an int"):
        mint.Model(synth_path, n_ctx="big")
    with pytest.raises(TypeError):
        mint.Model(synth_path, n_threads=1.5)
    with pytest.raises(ValueError, match="n_ctx"):
        mint.Model(synth_path, n_ctx=10**12)
    # A context length mint refuses: its own message.
    m = mint.Model(synth_path, n_ctx=10**9)
    with pytest.raises(mint.MintError) as e:
        m.generate("a", max_tokens=1)
    assert "context length" in one_line(e)
    m.close()


def test_bad_generation_arguments(synth):
    with pytest.raises(TypeError):
        synth.tokenize(5)
    with pytest.raises(TypeError):
        synth.tokenize("a", add_bos="yes")
    with pytest.raises(TypeError):
        synth.generate("a", max_tokens="ten")
    with pytest.raises(TypeError):
        synth.generate("a", temperature="hot")
    with pytest.raises(ValueError):
        synth.generate("a", temperature=float("nan"))
    with pytest.raises(TypeError):
        synth.generate(["a", "b"])
    with pytest.raises(ValueError, match="outside"):
        synth.generate([1, 10**6])
    with pytest.raises(mint.MintLimitError, match="no room"):
        synth.generate([1] * 300)  # the context holds 256
    with pytest.raises(TypeError):
        synth.create_chat_completion("hello", chat_template="chatml")
    with pytest.raises(ValueError, match="role"):
        synth.create_chat_completion([{"role": "bot", "content": "x"}], chat_template="chatml")
    with pytest.raises(TypeError, match="content"):
        synth.create_chat_completion([{"role": "user", "content": 3}], chat_template="chatml")
    with pytest.raises(TypeError, match="stop"):
        synth.create_completion("a", stop=3)
    with pytest.raises(ValueError, match="outside"):
        synth.token_text(10**6)


def test_bad_context_calls(synth):
    with synth.context(n_threads=1, n_ctx=64) as ctx:
        with pytest.raises(mint.MintArgumentError, match="row"):
            ctx.logits()  # nothing evaluated yet
        with pytest.raises(mint.MintArgumentError):
            ctx.eval([])
        with pytest.raises(mint.MintError) as e:
            ctx.eval([10**6])
        one_line(e)
        with pytest.raises(mint.MintLimitError) as e:
            ctx.eval(list(range(1, 70)))
        one_line(e)
        assert ctx.n_past == 0  # nothing changed
        ctx.eval([1, 2])
        with pytest.raises(mint.MintArgumentError):
            ctx.logits(5)
        with pytest.raises(mint.MintError):
            ctx.fork(0, 3)
        with pytest.raises(mint.MintArgumentError):
            ctx.seq_n_past(7)
        with pytest.raises(mint.MintError):
            ctx.decode([(1, 5, 0, True)])  # position 5 does not continue sequence 0
        with pytest.raises(TypeError):
            ctx.decode([1, 2, 3])
        with pytest.raises(mint.MintError):
            ctx.beam_search([1, 2], n_beams=4)  # n_seq_max is 1
        with pytest.raises(ValueError):
            ctx.capture_attention(0)
        assert ctx.n_past == 2
    with pytest.raises(mint.MintError):
        synth.context(n_seq_max=100000)
    with pytest.raises(mint.MintError):
        synth.context(isa="quantum")


def test_bad_sampler_calls(synth):
    s = synth.sampler(temperature=0)
    with pytest.raises(ValueError, match="values"):
        s.sample([0.0] * 3)
    with pytest.raises(TypeError):
        s.sample("logits")
    with pytest.raises(TypeError):
        synth.sampler(top_k=2.5)
    with pytest.raises(ValueError):
        synth.sampler(seed=-1)
    s.close()
    with pytest.raises(mint.ClosedError):
        s.sample([0.0] * synth.n_vocab)


def test_closed_models_and_contexts(synth_path):
    m = mint.Model(synth_path, n_threads=1)
    ctx = m.context()
    ctx.eval([1, 2])
    m.close()
    m.close()  # idempotent
    assert m.closed and ctx.closed
    for call in (
        lambda: m.tokenize("a"),
        lambda: m.generate("a"),
        lambda: m.create_completion("a"),
        lambda: m.context(),
        lambda: m.token_bytes(1),
        lambda: ctx.logits(),
        lambda: ctx.eval([3]),
        lambda: ctx.n_past,
    ):
        with pytest.raises(mint.ClosedError) as e:
            call()
        assert isinstance(e.value, ValueError) and "closed" in one_line(e)
    with mint.Model(synth_path, n_threads=1) as m2:
        assert not m2.closed
    assert m2.closed and "closed" in repr(m2)


def test_a_second_stream_while_one_is_open(synth):
    a = synth.generate([1, 2], max_tokens=4, stream=True, ignore_eos=True)
    next(a)
    b = synth.generate([1, 2], max_tokens=4, stream=True)
    with pytest.raises(mint.MintArgumentError, match="already generating"):
        next(b)
    assert len(list(a)) == 3
    assert len(synth.generate([1, 2], max_tokens=4, temperature=0, ignore_eos=True)) > 0


def test_callback_exceptions_come_back_to_the_caller(stories, tinystories_text):
    def boom(i, n, ppl):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        mint.perplexity(stories, tinystories_text[:4000], n_ctx=64, on_chunk=boom)


def test_bad_tool_arguments(synth_path, tmp_path):
    with pytest.raises(mint.MintError) as e:
        mint.quantize(synth_path, tmp_path / "x.gguf", "Q9_9")
    assert "Q9_9" in one_line(e)
    with pytest.raises(mint.MintIOError):
        mint.quantize(tmp_path / "none.gguf", tmp_path / "y.gguf", "Q8_0")
    with pytest.raises(TypeError):
        mint.quantize(synth_path, tmp_path / "z.gguf", 8)
    with pytest.raises(mint.MintError) as e:
        mint.synth_write(tmp_path / "s.gguf", preset="huge")
    one_line(e)
    with pytest.raises(mint.MintError) as e:
        mint.perplexity(synth_path, "too short", n_ctx=128)
    one_line(e)
    with mint.File(synth_path) as f:
        with pytest.raises(mint.MintNotFoundError) as e:
            f.get("no.such.key")
        assert isinstance(e.value, LookupError)
        with pytest.raises(mint.MintNotFoundError):
            f.tensor("no.such.tensor")
    with pytest.raises(mint.ClosedError):
        f.keys()


def run_py(code, **env):
    e = dict(os.environ)
    e.pop("MINT_LIBRARY", None)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e)


def test_library_lookup_order():
    # MINT_LIBRARY wins, and a wrong one is an error naming it (never another library).
    r = run_py("import mint\ntry:\n mint.version()\nexcept mint.LibraryNotFoundError as e:\n"
               " print('LNF', e)", MINT_LIBRARY="/nonexistent/libmint.so")  # fmt: skip
    assert r.returncode == 0 and r.stdout.startswith("LNF") and "MINT_LIBRARY" in r.stdout
    loaded = mint.library_path()
    r = run_py("import mint; print(mint.library_path())", MINT_LIBRARY=loaded)
    assert r.returncode == 0 and r.stdout.strip() == loaded
    # Without MINT_LIBRARY: the prefix recorded at install time, when there is one.
    try:
        from mint import _config
    except ImportError:
        pytest.skip("the package was not installed with a recorded prefix")
    if not _config.LIBDIR:
        pytest.skip("the package was installed without a prefix")
    r = run_py("import mint; print(mint.library_path())")
    assert r.returncode == 0, r.stderr
    assert os.path.dirname(r.stdout.strip()) == _config.LIBDIR


SWEEP = r'''
import sys, mint
m = mint.Model(sys.argv[1], n_threads=1, n_ctx=64)
ctx = m.context(n_seq_max=2)
V = m.n_vocab
calls = [
    lambda: ctx.prefix(5, [1, 2]), lambda: ctx.truncate(0, -1), lambda: ctx.truncate(0, 1000),
    lambda: ctx.decode([(1, 0, -1, True)]), lambda: ctx.decode([(-3, 0, 0, True)]),
    lambda: ctx.decode([(1, -1, 0, True)]), lambda: ctx.decode([(1, i, 0, False) for i in range(600)]),
    lambda: ctx.eval([1], pos=10), lambda: ctx.fork(-1, 0), lambda: ctx.logits(2**31 - 1),
    lambda: ctx.capture_attention(60000), lambda: ctx.beam_search([1, 2], n_beams=2, max_tokens=2**31 - 1),
    lambda: m.context(n_threads=1000), lambda: m.context(max_memory=1),
    lambda: mint.Sampler(0), lambda: mint.Sampler(V, top_p=5.0), lambda: mint.Sampler(V, repeat_last_n=-5),
    lambda: m.token_bytes(-5), lambda: m.detokenize([10**6]), lambda: m.beam_search([1, 2], n_beams=0),
    lambda: m.speculative([1, 2, 1, 2], n_draft=0), lambda: m.speculative([1, 2, 1, 2], lookup_n=-1),
    lambda: mint.perplexity(m, "ab " * 200, n_ctx=1), lambda: mint.perplexity(m, "ab " * 200, n_ctx=10**6),
    lambda: mint.perplexity(m, "ab " * 200, n_ctx=16, kld_base_in="/nonexistent"),
    lambda: mint.quantize(sys.argv[1], sys.argv[1], "Q8_0"),
    lambda: mint.quantize(sys.argv[1], sys.argv[2], "Q8_0", overrides=["blk=Q99"]),
    lambda: m.create_chat_completion([{"role": "user", "content": "x"}]),
    lambda: m.generate_many([1], 0), lambda: mint.File("/"), lambda: mint.Model("/"),
    lambda: mint.synth_write(sys.argv[2], ftype="Q99"), lambda: mint.measure_read_bandwidth(0),
]
for i, f in enumerate(calls):
    try:
        f()
        print("no error from call", i)
    except mint.MintError as e:
        assert str(e) and "\n" not in str(e), (i, str(e))
print("survived", len(calls))
'''


def test_a_sweep_of_bad_calls_raises_and_never_crashes(synth_path, tmp_path):
    """In a child process, so that a crash would show as a signal here instead of killing
    pytest."""
    r = subprocess.run([sys.executable, "-c", SWEEP, str(synth_path), str(tmp_path / "out.gguf")],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, f"status {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert r.stdout.strip() == "survived 33", r.stdout
