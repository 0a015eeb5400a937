#!/bin/sh
# quickstart.sh - the README's first command: installs what is missing, builds, and generates
# text with a default model.
#   tools/scripts/quickstart.sh [MODEL]
# The model is, in order: the argument, $MINT_MODEL, the real tiny model the repository carries
# (models/stories260K.gguf), else a TinyLlama-shaped Q4_0 model with random weights that mint
# writes itself once into build/models/ (its text is noise; its speed is real).
# MINT_MODEL=synthetic asks for that last one by name.
set -eu
cd "$(dirname "$0")/../.."
tools/scripts/deps.sh
# The first build takes a few minutes on two cores: show its progress (CMake's percentages), one
# line at a time, rather than minutes of silence.
echo "mint: building (a first build takes about 2-4 minutes on 2 cores)" >&2
st=$(mktemp)
{ tools/scripts/build.sh 2>&1; echo $? >"$st"; } |
    grep --line-buffered -E '^\[ *[0-9]+%\] (Built target|Linking)|error|warning' >&2 || true
rc=$(cat "$st")
rm -f "$st"
[ "$rc" = 0 ] || {
    echo "mint: the build failed (exit $rc); rerun tools/scripts/build.sh to see why" >&2
    exit 1
}
build=${MINT_BUILD_DIR:-build}
model=${1:-${MINT_MODEL:-}}
why="given on the command line or in MINT_MODEL"
prompt=${MINT_PROMPT:-Once upon a time}
if [ -z "$model" ] && [ -f models/stories260K.gguf ]; then
    model=models/stories260K.gguf
    why="the real tiny model the repository carries (models/README.md): it writes children's stories"
fi
if [ -z "$model" ] || [ "$model" = synthetic ]; then
    model="$build/models/synthetic-tinyllama-q4_0.gguf"
    why="no model given or found: mint's own TinyLlama-shaped Q4_0 model with random weights, so the text is noise but the speed is real"
    if [ ! -f "$model" ]; then
        mkdir -p "$build/models"
        "$build/mint-quantize" --synthetic tinyllama --type Q4_0 --seed 1 -o "$model"
    fi
fi
echo "mint: model $model ($why)" >&2
exec "$build/mint-run" -m "$model" -p "$prompt" -n "${MINT_N:-128}" --temp 0 -v
