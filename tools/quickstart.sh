#!/bin/sh
# quickstart.sh - the README's first command: installs what is missing, builds, and runs mint's
# main job on a default model.
#   tools/quickstart.sh [MODEL.gguf]
# The model is, in order: the argument, $MINT_MODEL, stories260K.gguf from $MINT_TEST_DATA or
# ../shared/data (a real tiny model), else none yet.
set -eu
cd "$(dirname "$0")/.."
tools/deps.sh
tools/build.sh >/dev/null
build=${MINT_BUILD_DIR:-build}
model=${1:-${MINT_MODEL:-}}
why="given on the command line or in MINT_MODEL"
if [ -z "$model" ]; then
    for d in "${MINT_TEST_DATA:-}" ../shared/data; do
        if [ -n "$d" ] && [ -f "$d/stories260K.gguf" ]; then
            model="$d/stories260K.gguf"
            why="the real tiny model found in $d"
            break
        fi
    done
fi
if [ -z "$model" ]; then
    echo "mint: no model given; pass a GGUF file: tools/quickstart.sh MODEL.gguf" >&2
    exit 1
fi
echo "mint: model $model ($why)" >&2
exec "$build/mint-run" -m "$model" -p "${MINT_PROMPT:-Once upon a time}" -n "${MINT_N:-128}" \
    --temp 0 -v
