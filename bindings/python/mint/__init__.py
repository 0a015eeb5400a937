"""mint: Python bindings for libmint, a small CPU runtime for Llama-family models.

A pure-Python package over libmint.so through ctypes. The high level, in llama-cpp-python's
shape:

    import mint
    with mint.Model("stories260K.gguf") as m:
        print(m.generate("Once upon a time", max_tokens=32, temperature=0))
        r = m.create_chat_completion([{"role": "user", "content": "Hi"}], chat_template="zephyr")

The low level: Model.context() gives a Context (eval, logits, KV cache sequences, decode
batches, fork / truncate / prefix, beam search, speculative decoding, tracing, attention
capture); Sampler is mint's sampler chain; Grammar constrains it with a GBNF grammar. Tools: perplexity(), quantize(), inspect(), File,
synth_write(). Errors are mint.MintError subclasses carrying mint's one-line message.

The library is found through MINT_LIBRARY, then the prefix recorded at install time, then the
system's loader (see mint._lib); library_path() says which file was loaded.
"""

from ._lib import library_path
from .context import BatchEntry, Context, SampleInfo, Sampler, SpecStats, TraceNode
from .errors import (
    ClosedError,
    LibraryNotFoundError,
    MintArgumentError,
    MintError,
    MintFormatError,
    MintIOError,
    MintLimitError,
    MintMemoryError,
    MintNotFoundError,
    MintTypeError,
    MintUnsupportedError,
)
from .files import (
    File,
    hash64,
    inspect,
    isa,
    measure_read_bandwidth,
    perplexity,
    quantize,
    synth_write,
    type_name,
    version,
)
from .grammar import Grammar, json_schema_to_grammar
from .model import Model, ModelInfo, Token

__version__ = "0.2.0"

ATTENTION_ALGORITHMS = ("naive", "rowwise", "flash")

__all__ = [
    "Model", "ModelInfo", "Token", "Context", "Sampler", "SampleInfo", "Grammar",
    "json_schema_to_grammar", "BatchEntry",
    "TraceNode",
    "SpecStats", "File", "inspect", "quantize", "perplexity", "synth_write", "version", "isa",
    "type_name", "hash64", "measure_read_bandwidth", "library_path", "MintError", "MintIOError",
    "MintFormatError", "MintUnsupportedError", "MintMemoryError", "MintArgumentError",
    "MintLimitError", "MintNotFoundError", "MintTypeError", "ClosedError",
    "LibraryNotFoundError", "ATTENTION_ALGORITHMS",
]  # fmt: skip
