"""mint_build: the package's own PEP 517 build backend, in the standard library only.

Why not setuptools: pip builds a package in an isolated environment and installs the backend's
requirements into it from the package index. Offline, that works only when the interpreter's own
setuptools and wheel happen to be usable (Debian's, with --no-build-isolation); a venv or a
pyenv interpreter has neither, and `pip install ./bindings/python` fails with "invalid command
'bdist_wheel'". mint's package is pure Python (ctypes over libmint), so a wheel is a zip of
mint/*.py plus three metadata files: this module writes it with zipfile and declares no build
requirement, so pip needs neither the network nor another package, in any interpreter.

At build time it records where libmint.so.0 is installed (mint/_config.py: LIBDIR), from
MINT_PREFIX (the prefix given to `cmake --install build --prefix P`), else from
`pkg-config --variable=libdir mint`; with neither, LIBDIR is None and mint falls back to
MINT_LIBRARY and the system's loader at run time (mint/_lib.py).
"""

import base64
import glob
import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import zipfile

NAME = "mint"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bindings/python
TAG = "py3-none-any"


def _version():
    # The one version number lives in pyproject.toml; read it without tomllib (Python < 3.11).
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        m = re.search(r'^version\s*=\s*"([^"]+)"', f.read(), re.M)
    if not m:
        raise RuntimeError("mint_build: no version = \"...\" in pyproject.toml")
    return m.group(1)


def _libdir():
    prefix = os.environ.get("MINT_PREFIX")
    if prefix:
        hits = sorted(glob.glob(os.path.join(prefix, "lib*", "libmint.so.0")) +
                      glob.glob(os.path.join(prefix, "lib*", "*", "libmint.so.0")))
        if not hits:
            raise RuntimeError(f"MINT_PREFIX={prefix}: no lib*/libmint.so.0 under it "
                               f"(run `cmake --install build --prefix {prefix}` first)")
        return os.path.dirname(os.path.abspath(hits[0]))
    if shutil.which("pkg-config"):
        r = subprocess.run(["pkg-config", "--variable=libdir", "mint"], capture_output=True,
                           text=True)
        d = r.stdout.strip()
        if r.returncode == 0 and d and os.path.exists(os.path.join(d, "libmint.so.0")):
            return d
    return None


def _metadata(version):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
            "Summary: Python bindings (ctypes, no compiled extension) for libmint, a CPU "
            "runtime for Llama-family models\n"
            "License: MIT\nRequires-Python: >=3.9\n"
            "Provides-Extra: numpy\nRequires-Dist: numpy; extra == \"numpy\"\n"
            "Provides-Extra: test\nRequires-Dist: pytest; extra == \"test\"\n"
            "Description-Content-Type: text/markdown\n\n" + readme)


def _sources():
    # Every module of the package, sorted so that two builds give the same wheel.
    pkg = os.path.join(HERE, NAME)
    return sorted(p for p in os.listdir(pkg) if p.endswith(".py") and p != "_config.py")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, editable):
    version = _version()
    dist_info = f"{NAME}-{version}.dist-info"
    files = []  # (path in the wheel, bytes)
    if editable:
        # A .pth line puts the source folder on sys.path: edits take effect without a rebuild.
        files.append((f"__editable__.{NAME}.pth", (HERE + "\n").encode()))
    else:
        for name in _sources():
            with open(os.path.join(HERE, NAME, name), "rb") as f:
                files.append((f"{NAME}/{name}", f.read()))
        config = ("# Written by bindings/python/backend/mint_build.py at install time: where "
                  f"libmint.so.0 was found.\nLIBDIR = {_libdir()!r}\n")
        files.append((f"{NAME}/_config.py", config.encode()))
    files.append((f"{dist_info}/METADATA", _metadata(version).encode()))
    files.append((f"{dist_info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: mint_build\n"
                                         f"Root-Is-Purelib: true\nTag: {TAG}\n").encode()))
    record = [_record_line(p, d) for p, d in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))

    wheel = f"{NAME}-{version}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel


# PEP 517 / PEP 660 hooks.
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, editable=False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, editable=True)


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = f"{NAME}-{version}"
    name = f"{base}.tar.gz"
    members = ["pyproject.toml", "README.md", "backend/mint_build.py"] + \
        [f"{NAME}/{n}" for n in _sources()]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for m in members:
            with open(os.path.join(HERE, m), "rb") as f:
                data = f.read()
            info = tarfile.TarInfo(f"{base}/{m}")
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
        pkg_info = _metadata(version).encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        t.addfile(info, io.BytesIO(pkg_info))
    return name
