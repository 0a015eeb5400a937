#!/bin/sh
# llama-server-suite.sh - runs llama.cpp's own server test suite (tools/server/tests/unit of the
# llama.cpp release that ../shared/tools/peer builds) against mint-serve, with every flag the
# suite passes unchanged and only the models resolved offline:
#   tools/scripts/llama-server-suite.sh [BUILD_DIR] [pytest args, e.g. unit/test_completion.py]
# The models the tests name on Hugging Face are laid out in a Hugging Face cache folder
# (LLAMA_CACHE) from $MINT_TEST_DATA (stories260K.gguf stands for ggml-org's stories260K test
# models); mint-serve finds them there as llama-server would after downloading. Tests whose model
# is not there are skipped with its name (tools/scripts/llama_server_suite_plugin.py).
#
# The llama.cpp source: $LLAMA_CPP_SRC, else ../peer/llama.cpp, else the release inside the npm
# package node-llama-cpp (as ../shared/tools/peer/setup.sh pins it), unpacked outside the
# repository into ${XDG_CACHE_HOME:-$HOME/.cache}/mint/llama-server-suite.
#
# Prints pytest's summary; exits 0 when every test that failed is listed, with its reason, in
# tests/llama-server-suite.expected (a test listed there that passes is reported, not failed).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
build=$(cd "$build" && pwd)
[ -x "$build/mint-serve" ] || { echo "llama-server-suite.sh: no $build/mint-serve (build first)" >&2; exit 2; }
data=${MINT_TEST_DATA:?set MINT_TEST_DATA to the test data folder (../shared/data)}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/mint/llama-server-suite
mkdir -p "$cache"

src=${LLAMA_CPP_SRC:-}
if [ -z "$src" ] && [ -d "$root/../peer/llama.cpp/tools/server/tests" ]; then
    src=$root/../peer/llama.cpp
fi
if [ -z "$src" ]; then
    src=$cache/llama.cpp
    if [ ! -d "$src/tools/server/tests" ]; then
        pin=3.21.1 # ../shared/tools/peer/package.json
        (cd "$cache" && rm -rf pkg && mkdir pkg && cd pkg &&
            npm pack -q "node-llama-cpp@$pin" >/dev/null &&
            tar xzf node-llama-cpp-$pin.tgz package/llama/gitRelease.bundle)
        rm -rf "$src"
        git clone -q "$cache/pkg/package/llama/gitRelease.bundle" "$src"
        rm -rf "$cache/pkg"
    fi
fi
tests=$src/tools/server/tests
[ -d "$tests/unit" ] || { echo "llama-server-suite.sh: no $tests/unit" >&2; exit 2; }

# The Hugging Face cache: models--OWNER--NAME/refs/main and snapshots/<commit>/<file>.
hf=$cache/hf
rm -rf "$hf"
put() { # put OWNER/NAME FILE-IN-REPO SOURCE
    d=$hf/models--$(echo "$1" | sed 's|/|--|')
    mkdir -p "$d/refs" "$(dirname "$d/snapshots/local/$2")"
    printf 'local' >"$d/refs/main"
    ln -sf "$3" "$d/snapshots/local/$2"
}
put ggml-org/models tinyllamas/stories260K.gguf "$data/stories260K.gguf"
put ggml-org/test-model-stories260K stories260K.gguf "$data/stories260K.gguf"
# Router mode lists cache models by the quant in their file names (owner/name:QUANT), and its
# tests ask for three: stories260K's test models under their F32 names (the infill one is
# stories260K again, without its fill-in-the-middle tokens), and tinygemma3, which is not in the
# test data: a synthetic Gemma 3 (tiny shape, stories260K's vocabulary, random weights: its text
# is noise) made here by mint-quantize stands in for it.
put ggml-org/test-model-stories260K stories260K-F32.gguf "$data/stories260K.gguf"
put ggml-org/test-model-stories260K-infill stories260K-infill-F32.gguf "$data/stories260K.gguf"
if [ -x "$build/mint-quantize" ]; then
    "$build/mint-quantize" --synthetic gemma3 --shape tiny --type Q8_0 --overwrite \
        --vocab "$data/stories260K.gguf" -o "$cache/tinygemma3-synthetic-Q8_0.gguf" 2>/dev/null &&
        put ggml-org/tinygemma3-GGUF tinygemma3-Q8_0.gguf "$cache/tinygemma3-synthetic-Q8_0.gguf"
fi

[ $# -gt 0 ] || set -- unit
xml=$cache/results.xml
cd "$tests"
set +e
LLAMA_SERVER_BIN_PATH=$build/mint-serve LLAMA_CACHE=$hf \
    PYTHONPATH="$root/tools/scripts:$tests${PYTHONPATH:+:$PYTHONPATH}" \
    timeout 2400 /usr/bin/python3 -m pytest -p llama_server_suite_plugin -q -rfE \
    --junitxml="$xml" -o junit_family=xunit1 --timeout=300 "$@" 2>&1 |
    tail -n 200
rc=$?
set -e
/usr/bin/python3 "$root/tools/scripts/llama_server_suite_check.py" "$xml" \
    "$root/tests/llama-server-suite.expected"
