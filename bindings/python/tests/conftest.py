"""Fixtures for the Python bindings' tests.

- Real data (stories260K.gguf, tinystories_val.txt) comes from MINT_TEST_DATA: a test that needs
  it is skipped with a message when the variable is unset, and fails when CI is set; without the
  variable, stories260K.gguf comes from the repository's own copy (models/).
- The programs (mint-run, mint-perplexity, ...) come from MINT_BIN_DIR, else the build/ folder
  of the checkout; likewise skipped, or failed under CI, when absent.
- Tests without data run on a synthetic model written once per session with mint.synth_write
  (the C API's mint_synth_write, preset "small": 256 wide, 4 layers, GQA, random weights).
- C programs (the ABI test, the C side of the logits comparison) are compiled against the
  header next to the loaded library (P/include/mint.h for an installed prefix, include/mint.h
  for a build tree) and linked with that library.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import mint

REPO = Path(__file__).resolve().parents[3]


def pytest_report_header(config):
    try:
        lib = mint.library_path()
    except mint.MintError as e:
        lib = f"not found: {e}"
    return [f"mint package: {os.path.dirname(mint.__file__)}", f"libmint: {lib}"]


def _missing(what):
    if os.environ.get("CI"):
        pytest.fail(f"{what} (CI is set, so this fails instead of skipping)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def data_dir():
    return _data_dir()


def _data_dir():
    d = os.environ.get("MINT_TEST_DATA")
    if not d:
        _missing("MINT_TEST_DATA is not set: tests on real model data are skipped")
    p = Path(d)
    if not p.is_dir():
        _missing(f"MINT_TEST_DATA={d} is not a folder")
    return p


def _data_file(data_dir, name):
    p = data_dir / name
    if not p.exists():
        _missing(f"{p} is missing")
    return p


@pytest.fixture(scope="session")
def stories_path():
    # The repository carries this one model (models/README.md): without MINT_TEST_DATA its copy
    # is used, so a fresh clone runs every test that needs only stories260K.
    if not os.environ.get("MINT_TEST_DATA") and (REPO / "models" / "stories260K.gguf").exists():
        return REPO / "models" / "stories260K.gguf"
    return _data_file(_data_dir(), "stories260K.gguf")


@pytest.fixture(scope="session")
def tinystories_text(data_dir):
    return _data_file(data_dir, "tinystories_val.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def stories(stories_path):
    m = mint.Model(stories_path, n_threads=1)
    yield m
    m.close()


@pytest.fixture(scope="session")
def synth_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("synth") / "small-f32.gguf"
    mint.synth_write(p, preset="small", ftype="F32", seed=7, n_threads=1)
    return p


@pytest.fixture(scope="session")
def synth(synth_path):
    m = mint.Model(synth_path, n_threads=1, n_ctx=256)
    yield m
    m.close()


@pytest.fixture(scope="session")
def bin_dir():
    d = os.environ.get("MINT_BIN_DIR")
    p = Path(d) if d else REPO / "build"
    if not (p / "mint-run").exists():
        _missing(f"no mint-run in {p} (set MINT_BIN_DIR to the folder holding mint's programs)")
    return p


def run_tool(bin_dir, name, *args, stdin=None, check=True):
    """Runs one of mint's programs; returns the CompletedProcess (bytes)."""
    r = subprocess.run(
        [str(bin_dir / name), *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    if check and r.returncode != 0:
        raise AssertionError(f"{name} {' '.join(map(str, args))}: status {r.returncode}\n"
                             f"{r.stderr.decode(errors='replace')}")  # fmt: skip
    return r


@pytest.fixture(scope="session")
def c_api():
    """Compiles C programs against the header of the loaded library and links that library:
    c_api(source, tmp_path) -> path of the executable."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        _missing("no C compiler (cc) to build the C side of the comparison")
    lib = Path(mint.library_path()).resolve()
    libdir = lib.parent
    candidates = [libdir.parent / "include", REPO / "include"]
    if os.environ.get("MINT_INCLUDE_DIR"):
        candidates.insert(0, Path(os.environ["MINT_INCLUDE_DIR"]))
    inc = next((c for c in candidates if (c / "mint.h").exists()), None)
    if inc is None:
        _missing(f"no mint.h next to {lib} (set MINT_INCLUDE_DIR)")

    def build(source, tmp_path, name="prog"):
        src = tmp_path / f"{name}.c"
        src.write_text(source)
        exe = tmp_path / name
        cmd = [cc, "-std=c11", "-Wall", "-Werror", "-D_GNU_SOURCE", f"-I{inc}", str(src),
               str(lib), f"-Wl,-rpath,{libdir}", "-lm", "-o", str(exe)]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
        return exe

    build.include_dir = inc
    return build
