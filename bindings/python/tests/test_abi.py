"""The ctypes mirrors against mint.h: a change to the header that the bindings miss fails here.

- Layout: a C program compiled against the header prints sizeof and every field's offsetof of
  each struct the bindings mirror; they must equal ctypes.sizeof / the field offsets.
- Fields: the header's field names of each struct, in order, must equal the mirror's (a field
  added into trailing padding changes no size, but changes this list).
- Structs: every struct typedef'd in mint.h is mirrored.
- Enums: the values of the constants the bindings use, as the compiler sees them.
- Functions: every MINT_API function is bound (or listed as deliberately unbound), with the
  header's number of parameters.
"""

import re
import subprocess

import pytest

from mint import _lib


def _header(c_api):
    # mint.h and the headers it includes at its end (one per concern), read as one text.
    top = (c_api.include_dir / "mint.h").read_text()
    parts = re.findall(r'^#include "(mint_\w+\.h)"$', top, re.M)
    assert parts, "mint.h includes no part"
    return top + "".join((c_api.include_dir / h).read_text() for h in parts)


def _strip_comments(s):
    s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
    return re.sub(r"//[^\n]*", "", s)


def header_structs(text):
    """{typedef name: [field names in order]} of every `typedef struct X { ... } X;`."""
    text = _strip_comments(text)
    out = {}
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        body, name = m.group(2), m.group(3)
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
            if fp:  # a function pointer
                fields.append(fp.group(1))
                continue
            decl = re.sub(r"\[[^\]]*\]", "", decl)
            parts = decl.split(",")
            first = re.findall(r"\w+", parts[0])[-1]
            fields.append(first)
            for p in parts[1:]:
                fields.append(re.findall(r"\w+", p)[-1])
        out[name] = fields
    return out


def header_functions(text):
    """{function name: number of parameters} of every MINT_API declaration."""
    text = _strip_comments(text)
    out = {}
    for m in re.finditer(r"MINT_API\s+[^;{]*?\b(mint_\w+)\s*\(([^;]*?)\)\s*;", text, re.S):
        args = " ".join(m.group(2).split())
        n = 0 if args in ("", "void") else len(args.split(","))
        out[m.group(1)] = n
    return out


def test_every_struct_of_the_header_is_mirrored_with_its_fields_in_order(c_api):
    structs = header_structs(_header(c_api))
    assert len(structs) >= 20, sorted(structs)
    mirrored = {s._c_name_: s for s in _lib.STRUCTS}
    assert sorted(structs) == sorted(mirrored), "structs in mint.h vs the bindings' mirrors"
    for name, fields in structs.items():
        py = [f for f, _ in mirrored[name]._fields_]
        assert py == fields, f"{name}: mint.h has {fields}, the bindings {py}"


def test_sizes_and_offsets_match_the_compiler(c_api, tmp_path):
    lines = ['#include <mint.h>', "#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    for s in _lib.STRUCTS:
        c = s._c_name_
        lines.append(f'    printf("{c} sizeof %zu align %zu\\n", sizeof({c}), _Alignof({c}));')
        for f, _ in s._fields_:
            lines.append(f'    printf("{c}.{f} %zu\\n", offsetof({c}, {f}));')
    lines += ["    return 0;", "}"]
    exe = c_api("\n".join(lines) + "\n", tmp_path, "layout")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    want = {}
    for line in out.splitlines():
        parts = line.split()
        if parts[1] == "sizeof":
            want[parts[0]] = (int(parts[2]), int(parts[4]))
        else:
            want[parts[0]] = int(parts[1])
    for s in _lib.STRUCTS:
        c = s._c_name_
        assert (ctypes_sizeof(s), ctypes_alignment(s)) == want[c], f"sizeof/alignof {c}"
        for f, _ in s._fields_:
            assert getattr(s, f).offset == want[f"{c}.{f}"], f"offsetof({c}, {f})"


def ctypes_sizeof(s):
    import ctypes

    return ctypes.sizeof(s)


def ctypes_alignment(s):
    import ctypes

    return ctypes.alignment(s)


def test_enum_values_match_the_header(c_api, tmp_path):
    lines = ["#include <mint.h>", "#include <stdio.h>", "int main(void) {"]
    for name in _lib.ENUM_VALUES:
        lines.append(f'    printf("{name} %d\\n", (int){name});')
    lines += ["    return 0;", "}"]
    exe = c_api("\n".join(lines) + "\n", tmp_path, "enums")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    got = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    assert got == _lib.ENUM_VALUES
    assert _lib.KV_TYPES == {"f32": got["MINT_KV_F32"], "f16": got["MINT_KV_F16"],
                            "q8_0": got["MINT_KV_Q8_0"], "q4_0": got["MINT_KV_Q4_0"]}
    assert _lib.ATTENTION["flash"] == got["MINT_ATTENTION_FLASH"]


def test_every_function_is_bound_with_the_headers_parameter_count(c_api):
    funcs = header_functions(_header(c_api))
    assert len(funcs) == _header(c_api).count("\nMINT_API "), "the parser missed a declaration"
    bound = set(_lib.PROTOTYPES)
    assert not bound & _lib.UNBOUND
    assert sorted(set(funcs) - bound - _lib.UNBOUND) == [], "declared in mint.h, not bound"
    assert sorted(bound - set(funcs)) == [], "bound, but no longer in mint.h"
    for name, (_, args) in _lib.PROTOTYPES.items():
        assert len(args) == funcs[name], f"{name}: {funcs[name]} parameters in mint.h"


def test_the_loaded_library_exports_every_bound_function():
    lib = _lib.load()
    for name in _lib.PROTOTYPES:
        assert hasattr(lib, name), name


@pytest.mark.parametrize(
    "decl,fields",
    [
        ("typedef struct a { int32_t bos, eos; bool x; } a;", ["bos", "eos", "x"]),
        ("typedef struct b { void (*cb)(void *u, int n); const char *const *o; } b;", ["cb", "o"]),
        ("typedef struct c { int64_t ne[4]; // c\n char msg[N]; } c;", ["ne", "msg"]),
    ],
)
def test_the_header_parser(decl, fields):
    assert list(header_structs(decl).values())[0] == fields


def test_the_package_version_is_the_librarys():
    """A release of libmint and its bindings share one version (CMakeLists.txt's project
    version, pyproject.toml's and mint.__version__)."""
    import re as _re

    import mint
    from conftest import REPO

    assert mint.__version__ == mint.version()
    py = (REPO / "bindings" / "python" / "pyproject.toml").read_text()
    assert _re.search(r'^version = "([^"]+)"', py, _re.M).group(1) == mint.__version__
