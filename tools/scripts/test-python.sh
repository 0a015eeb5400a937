#!/bin/sh
# test-python.sh - the Python bindings as a user meets them, then their tests and the notebook:
#   1. libmint installed into a temporary prefix (cmake --install of $MINT_BUILD_DIR, default
#      build/, which must be built: tools/scripts/build.sh);
#   2. bindings/python pip-installed offline with Debian's pip into a temporary target, the
#      prefix recorded in the package (MINT_PREFIX), nothing else on the library path; then the
#      README's two install lines in every other interpreter a user may have (a venv of Debian's
#      Python, and pyenv's Python when there is one), each with a short generation;
#   3. pytest on bindings/python/tests (mint's programs from the installed prefix);
#   4. docs/notebooks/tour.ipynb executed by nbconvert into the temporary folder (the checked-in
#      notebook is left as it is); it fails on any error in a cell.
# Real data from MINT_TEST_DATA, else ../shared/data when it exists (as tools/scripts/test.sh); with
# CI set, tests fail instead of skipping when it is missing. Installs the Debian packages it needs.
# Environment: MINT_BUILD_DIR, MINT_PYTEST_ARGS (extra pytest arguments, e.g. "-k chat").
set -eu
cd "$(dirname "$0")/../.."
tools/scripts/deps.sh python3-pip python3-venv python3-pytest python3-numpy python3-matplotlib \
    python3-ipykernel jupyter-nbconvert
PY=/usr/bin/python3 # Debian's interpreter, whose packages the above installed
build=${MINT_BUILD_DIR:-build}
if [ ! -e "$build/libmint.so.0" ]; then
    echo "test-python: no $build/libmint.so.0; build first (tools/scripts/build.sh)" >&2
    exit 1
fi
if [ -z "${MINT_TEST_DATA:-}" ] && [ -d ../shared/data ]; then
    MINT_TEST_DATA=$(cd ../shared/data && pwd)
    export MINT_TEST_DATA
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# pip builds in the folder it is given: a copy keeps build/ and *.egg-info out of the checkout.
cp -r bindings/python "$tmp/src"
rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info "$tmp/src/mint/_config.py"
MINT_PREFIX="$tmp/prefix" $PY -m pip install --quiet --no-index --no-deps \
    --root-user-action=ignore --target "$tmp/site" "$tmp/src"

# The same two lines in other interpreters (the package's own build backend needs nothing from
# the index): a fresh venv of Debian's Python, and pyenv's Python in a venv when it is there.
smoke='import mint, sys
m = mint.Model(sys.argv[1], n_threads=1)
t = m.generate("Once upon a time", max_tokens=8, temperature=0)
assert isinstance(t, str) and t, t
print("test-python:", sys.executable, sys.version.split()[0], "->", repr(t))'
n=0
for interp in $PY "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python3; do
    [ -x "$interp" ] || continue
    # Only those the package supports (pyproject.toml: requires-python >= 3.9).
    "$interp" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null || continue
    n=$((n + 1))
    venv="$tmp/venv-$n"
    "$interp" -m venv "$venv"
    MINT_PREFIX="$tmp/prefix" "$venv/bin/python" -m pip install --quiet --no-index "$tmp/src"
    model="$tmp/smoke.gguf"
    [ -f "$model" ] || "$venv/bin/python" -c 'import mint, sys; mint.synth_write(sys.argv[1], "small", "F32", seed=1)' "$model"
    (unset MINT_LIBRARY LD_LIBRARY_PATH PYTHONPATH; cd "$tmp" && "$venv/bin/python" -c "$smoke" "$model")
done

unset MINT_LIBRARY LD_LIBRARY_PATH
export PYTHONPATH="$tmp/site" PYTHONDONTWRITEBYTECODE=1 MINT_BIN_DIR="$tmp/prefix/bin"
# shellcheck disable=SC2086
$PY -m pytest -q -p no:cacheprovider ${MINT_PYTEST_ARGS:-} bindings/python/tests

start=$(date +%s)
# Jupyter's, IPython's and matplotlib's state in the temporary folder, not in $HOME.
export JUPYTER_RUNTIME_DIR="$tmp/jupyter" IPYTHONDIR="$tmp/ipython" MPLCONFIGDIR="$tmp/mpl"
PYDEVD_DISABLE_FILE_VALIDATION=1 $PY -m nbconvert --to notebook --execute \
    --ExecutePreprocessor.timeout=300 --output-dir "$tmp/nb" docs/notebooks/tour.ipynb
echo "test-python: docs/notebooks/tour.ipynb ran in $(($(date +%s) - start)) s"
