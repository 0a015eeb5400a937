#!/bin/sh
# check-floors.sh - the floors of docs/design.md, checked. The floors, bottom up:
#   include/mint.h (the contract: declarations only)  0 base/  1 quant/  2 formats/  3 ops/
#   4 runtime/template/ and runtime/text/  5 runtime/engine/  6 runtime/{decoding,filetools,measure}/  7 tools/  8 tests/
# A file includes and calls only its own floor and the floors below; no circle between files.
#
#   tools/scripts/check-floors.sh [BUILD_DIR]   everything below (BUILD_DIR: default
#                                               $MINT_BUILD_DIR or build/; its object library
#                                               is built first when needed)
#   tools/scripts/check-floors.sh --includes    includes, sizes, include circles: no build
#                                               (CI's step 0)
#   tools/scripts/check-floors.sh --symbols [BUILD_DIR]   calls (nm) and circles of files
#   tools/scripts/check-floors.sh --python      the Python bindings' imports and borrowed methods
#
# MINT_FLOORS_NO_BUILD=1 reads the objects as they are (tests/test_floors.sh plants its own).
# One line per violation on stderr, exit status 1 when there is one. The checks themselves are in
# tools/scripts/check_floors.py (docs/design.md says what each one looks at).
set -eu
cd "$(dirname "$0")/../.."

# The Python bindings' import circle is being removed (model.py / context.py / openai.py); until
# then Python findings are printed as warnings and do not fail. Once it is gone, change the
# default below from warn to fail (MINT_FLOORS_PYTHON=fail does it for one run).
PYTHON_FINDINGS=${MINT_FLOORS_PYTHON:-fail}

mode=all
case "${1:-}" in
--includes | --symbols | --python)
    mode=${1#--}
    shift
    ;;
-h | --help)
    sed -n '2,17p' "$0"
    exit 0
    ;;
-*)
    echo "check-floors: unknown option $1 (see tools/scripts/check-floors.sh --help)" >&2
    exit 2
    ;;
esac
build=${1:-${MINT_BUILD_DIR:-build}}

# Brings the library's objects up to date (configuring a build directory when there is none):
# the symbol check reads what the current sources compile to.
objects() {
    [ "${MINT_FLOORS_NO_BUILD:-0}" = 1 ] && return 0
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMINT_TESTS=OFF >/dev/null
    fi
    cmake --build "$build" -j"$(nproc)" --target mint_objects >/dev/null ||
        { echo "check-floors: building the objects in $build failed" >&2; exit 1; }
}

bad=0
run() { python3 tools/scripts/check_floors.py "$@" || bad=1; }
case $mode in
includes) run includes ;;
symbols)
    objects
    run symbols "$build"
    ;;
python) if [ "$PYTHON_FINDINGS" = fail ]; then run python; else run python --warn; fi ;;
all)
    run includes
    objects
    run symbols "$build"
    if [ "$PYTHON_FINDINGS" = fail ]; then run python; else run python --warn; fi
    ;;
esac
if [ "$bad" -ne 0 ]; then
    echo "check-floors: FAILED (docs/design.md: the floors)" >&2
    exit 1
fi
case $mode in
includes) echo "check-floors: every include points down a floor, no include circle, no file over 800 lines" ;;
symbols) echo "check-floors: every call points down a floor, no circle between files ($build)" ;;
python) echo "check-floors: Python imports checked (findings: $PYTHON_FINDINGS)" ;;
all) echo "check-floors: includes and calls point down a floor, no circle between files ($build); Python findings: $PYTHON_FINDINGS" ;;
esac
