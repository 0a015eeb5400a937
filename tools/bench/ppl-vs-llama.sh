#!/bin/sh
# ppl-vs-llama.sh - mint-perplexity against llama-perplexity on the same files, and the markdown
# rows of the perplexity table in docs/architectures.md. Builds nothing.
#
#   tools/bench/ppl-vs-llama.sh LLAMA_BIN_DIR TEXT FILE... > rows.md
#
# Each file is scored three times, with the same chunks (-c 512 --chunks 4 -t 2, override with
# PPL_ARGS): llama-perplexity with its plain attention (-fa off), llama-perplexity with its flash
# attention (-fa on), and mint-perplexity; llama.cpp without mmap (on these VMs its mapped weights
# slow down within a run) and with an F32 K/V cache, as mint's default. A row gives the three
# perplexities, mint's relative difference from llama.cpp's plain run, and llama.cpp's own
# difference between its two attention paths: the spread that a change of summation order alone
# makes on that file. On random weights of a real shape that spread is wide wherever activations
# are quantized (a rounding flipped by one ulp is carried through every later layer), so the
# quantized rows are read against it; on F32 files the arithmetic is the same and the 0.1% bar
# applies. Progress goes to stderr.
set -eu
if [ $# -lt 3 ]; then
    sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
LLAMA_BIN=$1
TEXT=$2
shift 2
MINT_BIN=${MINT_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
for p in "$LLAMA_BIN/llama-perplexity" "$MINT_BIN/mint-perplexity" "$TEXT"; do
    [ -e "$p" ] || { echo "ppl-vs-llama: $p not found" >&2; exit 2; }
done
ARGS=${PPL_ARGS:--c 512 --chunks 4 -t 2}
export LD_LIBRARY_PATH="$LLAMA_BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# final FILE: the PPL of a "Final estimate: PPL = X +/- E" line, or a failure.
final() {
    v=$(sed -n 's/.*Final estimate: PPL = \([0-9.eE+-]*\).*/\1/p' "$1" | tail -n 1)
    [ -n "$v" ] || { echo "ppl-vs-llama: no final estimate in:" >&2; tail -n 5 "$1" >&2; exit 1; }
    echo "$v"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "| file | llama.cpp -fa off | llama.cpp -fa on | mint | mint vs -fa off | -fa on vs -fa off |"
echo "|---|---|---|---|---|---|"
for f in "$@"; do
    echo "ppl-vs-llama: $f" >&2
    # shellcheck disable=SC2086 # ARGS is a list of words
    "$LLAMA_BIN/llama-perplexity" -m "$f" -f "$TEXT" $ARGS --no-mmap -ctk f32 -ctv f32 -fa off \
        > "$log" 2>&1 || { tail -n 5 "$log" >&2; exit 1; }
    off=$(final "$log")
    # shellcheck disable=SC2086
    "$LLAMA_BIN/llama-perplexity" -m "$f" -f "$TEXT" $ARGS --no-mmap -ctk f32 -ctv f32 -fa on \
        > "$log" 2>&1 || { tail -n 5 "$log" >&2; exit 1; }
    on=$(final "$log")
    # shellcheck disable=SC2086
    "$MINT_BIN/mint-perplexity" -m "$f" -f "$TEXT" $ARGS > "$log" 2>&1 ||
        { tail -n 5 "$log" >&2; exit 1; }
    mint=$(final "$log")
    awk -v f="$(basename "$f")" -v off="$off" -v on="$on" -v m="$mint" 'BEGIN {
        printf "| %s | %s | %s | %s | %+.4f%% | %+.4f%% |\n", f, off, on, m,
               100 * (m - off) / off, 100 * (on - off) / off }'
done
