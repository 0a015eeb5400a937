"""Argument checks and conversions shared by the API modules: every value that reaches a C call
has been checked here first, so a wrong type or range raises a Python exception instead of
reaching libmint."""

import array
import ctypes
import math
import numbers
import operator

from . import _lib
from .errors import MintArgumentError, MintTypeError

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def as_int(v, what, lo=INT32_MIN, hi=INT32_MAX):
    if isinstance(v, bool) or isinstance(v, float):
        raise MintTypeError(f"{what} must be an int, not {type(v).__name__}")
    try:
        i = operator.index(v)
    except TypeError:
        raise MintTypeError(f"{what} must be an int, not {type(v).__name__}") from None
    if i < lo or i > hi:
        raise MintArgumentError(f"{what} {i} is outside {lo}..{hi}")
    return i


MAX_TOKENS = 1 << 24  # mint-run's -n limit


def max_tokens(v):
    """A max_tokens argument as mint-run's -n takes it: None or -1 for no limit (None is
    returned), else 0..2^24."""
    if v is None:
        return None
    n = as_int(v, "max_tokens")
    if n < -1 or n > MAX_TOKENS:
        raise MintArgumentError(f"max_tokens {n} is outside -1..{MAX_TOKENS} (-1 or None: no limit)")
    return None if n == -1 else n


def opt_int(v, what, lo=INT32_MIN, hi=INT32_MAX):
    return None if v is None else as_int(v, what, lo, hi)


def as_float(v, what):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise MintTypeError(f"{what} must be a number, not {type(v).__name__}")
    f = float(v)
    if math.isnan(f):
        raise MintArgumentError(f"{what} is NaN")
    return f


def as_bool(v, what):
    if not isinstance(v, bool):
        raise MintTypeError(f"{what} must be True or False, not {type(v).__name__}")
    return v


def choice(v, table, what):
    if not isinstance(v, str):
        raise MintTypeError(f"{what} must be a str ({', '.join(table)}), not {type(v).__name__}")
    key = v.lower()
    if key not in table:
        raise MintArgumentError(f"{what} '{v}' is not one of {', '.join(table)}")
    return table[key]


def token_array(tokens, what="tokens"):
    """A sequence of token ids (list, tuple, range, array, numpy array) as a C int32 array."""
    if isinstance(tokens, (str, bytes)):
        raise MintTypeError(f"{what} must be a sequence of token ids (ints), not {type(tokens).__name__}")
    try:
        seq = list(tokens)
    except TypeError:
        raise MintTypeError(f"{what} must be a sequence of token ids, not {type(tokens).__name__}") from None
    out = (ctypes.c_int32 * len(seq))()
    for i, t in enumerate(seq):
        out[i] = as_int(t, f"{what}[{i}]")
    return out, len(seq)


def float_array(values, n, what="logits"):
    """n float32 values (array('f'), numpy float32 array, memoryview, list) as a C float array."""
    if isinstance(values, (str, bytes)):
        raise MintTypeError(f"{what} must be a sequence of {n} floats, not {type(values).__name__}")
    try:
        mv = memoryview(values)
    except TypeError:
        mv = None
    if mv is not None and mv.format in ("f", "<f", "=f") and mv.c_contiguous:
        if mv.nbytes != 4 * n:
            raise MintArgumentError(f"{what} has {mv.nbytes // 4} values; {n} expected (n_vocab)")
        return (ctypes.c_float * n).from_buffer_copy(mv)
    try:
        seq = list(values)
    except TypeError:
        raise MintTypeError(f"{what} must be a sequence of {n} floats, not {type(values).__name__}") from None
    if len(seq) != n:
        raise MintArgumentError(f"{what} has {len(seq)} values; {n} expected (n_vocab)")
    try:
        return (ctypes.c_float * n)(*seq)
    except TypeError:
        raise MintTypeError(f"{what} must hold numbers") from None


def floats_at(ptr, n):
    """A copy of n floats at a C pointer, as array('f')."""
    a = array.array("f")
    a.frombytes(ctypes.string_at(ptr, 4 * n))
    return a


def err():
    return _lib.mint_err()


class Closable:
    """What every handle-owning class (Model, Context, Sampler, File) shares: a context manager
    that closes on exit, and a close when garbage-collected. Subclasses define close()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # a half-built object, or the interpreter shutting down
            pass


class ModelBase(Closable):
    """What a Context needs of the model it belongs to: _handle(), n_vocab and the set of its
    open contexts (_contexts). mint.Model (model.py) is the subclass; context.py checks against
    this base, so it does not import model.py (which imports it)."""
