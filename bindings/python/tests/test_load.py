"""How the weights come into memory: Model(no_mmap=True) reads the file instead of mapping it,
Model(mlock=True) locks the weights in RAM (mint_model_params.no_mmap / .mlock). Neither changes
a bit of the logits or a generated token; a lock that is not allowed is a warning, not an error."""

import array
import warnings

import pytest

import mint


def bits(logits):
    return array.array("f", logits).tobytes()


@pytest.mark.parametrize("ftype", ["Q4_0", "F16"])
def test_no_mmap_gives_the_same_logits_and_tokens(tmp_path, ftype):
    # Q4_0 is repacked in the background (the file's copy must survive it), F16 is read in place.
    p = tmp_path / f"small-{ftype}.gguf"
    mint.synth_write(p, preset="small", ftype=ftype, seed=5, n_threads=1)
    ids = [1, 40, 41, 42, 43]
    with mint.Model(p, n_threads=2) as mapped, mint.Model(p, n_threads=2, no_mmap=True) as read:
        mapped.repack_wait()
        read.repack_wait()
        with mapped.context() as a, read.context() as b:
            a.eval(ids)
            b.eval(ids)
            assert bits(a.logits()) == bits(b.logits())
        want = mapped.generate("Once upon a time", max_tokens=12, temperature=0)
        assert read.generate("Once upon a time", max_tokens=12, temperature=0) == want


def test_mlock_opens_whether_or_not_locking_is_allowed(tmp_path):
    p = tmp_path / "small-q4_0.gguf"
    mint.synth_write(p, preset="small", ftype="Q4_0", seed=5, n_threads=1)
    with mint.Model(p, n_threads=1) as plain:
        assert plain.info.locked is False and plain.info.lock_error is None
        want = plain.generate("Once", max_tokens=6, temperature=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with mint.Model(p, n_threads=1, mlock=True, no_mmap=True) as m:
            # Locked, or (without the right to lock) a warning saying why.
            assert m.info.locked == (m.info.lock_error is None)
            assert bool(caught) == (not m.info.locked)
            assert m.generate("Once", max_tokens=6, temperature=0) == want


@pytest.mark.parametrize("arg", ["no_mmap", "mlock"])
def test_flags_must_be_bools(tmp_path, arg):
    p = tmp_path / "small-q4_0.gguf"
    mint.synth_write(p, preset="small", ftype="Q4_0", seed=5, n_threads=1)
    with pytest.raises(mint.MintTypeError, match=arg):
        mint.Model(p, **{arg: "yes"})
