"""mint's errors as Python exceptions.

Every failing libmint call returns a mint_status and fills a mint_err with one line naming the
field, the value and the limit. The bindings raise the exception class of that status with that
line as its message (str(e)), and keep the status on the exception:

    try:
        mint.Model("missing.gguf")
    except mint.MintError as e:
        print(e.status, e)   # "io" "missing.gguf: cannot open: No such file or directory"

Each class also derives from the built-in exception a Python programmer would expect (a file
that cannot be read is an OSError, a bad argument a ValueError, ...), so ordinary `except`
clauses work too. Mistakes caught before any C call (a wrong Python type, a closed model) raise
the same classes with a message written here.
"""

STATUS_NAMES = {
    0: "ok",
    1: "io",
    2: "format",
    3: "unsupported",
    4: "nomem",
    5: "arg",
    6: "limit",
    7: "not_found",
    8: "type",
}


class MintError(Exception):
    """Base class of every error the bindings raise for mint. `status` is mint's status name
    ("io", "format", "arg", ...), `code` its number (the mint_status value)."""

    code = -1
    status = "error"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
            self.status = STATUS_NAMES.get(code, "error")

    def __str__(self):
        return self.message


class MintIOError(MintError, OSError):
    """MINT_E_IO: open / read / write / mmap / rename failed."""

    code, status = 1, "io"


class MintFormatError(MintError, ValueError):
    """MINT_E_FORMAT: the file is malformed."""

    code, status = 2, "format"


class MintUnsupportedError(MintError):
    """MINT_E_UNSUPPORTED: well-formed, but mint cannot do it."""

    code, status = 3, "unsupported"


class MintMemoryError(MintError, MemoryError):
    """MINT_E_NOMEM: an allocation failed."""

    code, status = 4, "nomem"


class MintArgumentError(MintError, ValueError):
    """MINT_E_ARG: a bad argument (also raised by the bindings for a bad value)."""

    code, status = 5, "arg"


class MintLimitError(MintError):
    """MINT_E_LIMIT: a limit was reached (context full, too large)."""

    code, status = 6, "limit"


class MintNotFoundError(MintError, LookupError):
    """MINT_E_NOT_FOUND: a metadata key or tensor is absent."""

    code, status = 7, "not_found"


class MintTypeError(MintError, TypeError):
    """MINT_E_TYPE: a metadata value of another type; also a Python argument of the wrong
    type."""

    code, status = 8, "type"


class ClosedError(MintError, ValueError):
    """The model, context, sampler or file was closed."""

    status = "closed"


class LibraryNotFoundError(MintError, OSError):
    """libmint.so could not be found or loaded (see mint.library_path's lookup order)."""

    status = "library"


_BY_CODE = {
    c.code: c
    for c in (
        MintIOError,
        MintFormatError,
        MintUnsupportedError,
        MintMemoryError,
        MintArgumentError,
        MintLimitError,
        MintNotFoundError,
        MintTypeError,
    )
}


def error_for(code, message):
    """The exception for a mint_status and its message."""
    cls = _BY_CODE.get(code, MintError)
    e = cls(message)
    if cls is MintError:
        e.code, e.status = code, STATUS_NAMES.get(code, "error")
    return e
