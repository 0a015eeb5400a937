#!/bin/sh
# bench-tokenize.sh - times mint-tokenize against llama.cpp's llama-tokenize on one file: the
# whole program each time (loading the vocabulary, tokenizing, printing the ids), the median of
# N runs each (wall time, and CPU time user + system where /usr/bin/time exists: on a shared
# machine wall time includes waiting for a core), and the ratios. Also checks that both print
# the same ids.
#
#   tools/bench/bench-tokenize.sh [-n RUNS] [-m VOCAB] [-f FILE] [LLAMA_TOKENIZE]
#
# Defaults: 5 runs, $MINT_TEST_DATA/vocab/ggml-vocab-llama-bpe.gguf (Llama 3) on
# $MINT_TEST_DATA/wiki.test.raw; llama-tokenize from the argument, else $LLAMA_TOKENIZE.
# mint-tokenize from $MINT_BUILD_DIR (default build/). Not a test: timings on a shared machine
# are noisy, so nothing is asserted.
set -eu
cd "$(dirname "$0")/../.."
runs=5
data=${MINT_TEST_DATA:-../shared/data}
vocab=$data/vocab/ggml-vocab-llama-bpe.gguf
file=$data/wiki.test.raw
while [ $# -gt 0 ]; do
    case $1 in
    -n)
        runs=$2
        shift 2
        ;;
    -m)
        vocab=$2
        shift 2
        ;;
    -f)
        file=$2
        shift 2
        ;;
    -h | --help)
        sed -n '2,13p' "$0"
        exit 0
        ;;
    -*)
        echo "bench-tokenize.sh: unknown option '$1' (see --help)" >&2
        exit 2
        ;;
    *)
        LLAMA_TOKENIZE=$1
        shift
        ;;
    esac
done
case $runs in '' | *[!0-9]* | 0)
    echo "bench-tokenize.sh: -n wants a positive whole number, got '$runs'" >&2
    exit 2
    ;;
esac
mint=${MINT_BUILD_DIR:-build}/mint-tokenize
llama=${LLAMA_TOKENIZE:-}
for f in "$vocab" "$file"; do
    [ -r "$f" ] || { echo "bench-tokenize.sh: cannot read $f" >&2 && exit 1; }
done
[ -x "$mint" ] || {
    echo "bench-tokenize.sh: $mint not built (tools/scripts/build.sh)" >&2
    exit 1
}
if [ -z "$llama" ] || [ ! -x "$llama" ]; then
    echo "bench-tokenize.sh: give llama-tokenize's path (argument or LLAMA_TOKENIZE)" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median() prints the median of the numbers on stdin.
median() {
    sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# run NAME CMD...: runs CMD $runs times (stdout to $tmp/NAME.out); records each run's wall time
# in ms ($tmp/NAME.wall) and, with /usr/bin/time, its CPU time, user + system ($tmp/NAME.cpu).
run() {
    name=$1
    shift
    : >"$tmp/$name.wall"
    : >"$tmp/$name.cpu"
    i=0
    while [ $i -lt "$runs" ]; do
        t0=$(date +%s%N)
        if [ -x /usr/bin/time ]; then
            /usr/bin/time -f '%U %S' -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
                fail=1
            awk '{printf "%d\n", ($1 + $2) * 1000}' "$tmp/$name.time" >>"$tmp/$name.cpu"
        else
            "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || fail=1
        fi
        t1=$(date +%s%N)
        if [ "${fail:-0}" = 1 ]; then
            echo "bench-tokenize.sh: $name failed: $(head -c 300 "$tmp/$name.err")" >&2
            exit 1
        fi
        echo $(((t1 - t0) / 1000000)) >>"$tmp/$name.wall"
        i=$((i + 1))
    done
}

echo "vocabulary: $vocab"
echo "text:       $file ($(wc -c <"$file") bytes), median of $runs runs"
run mint "$mint" -m "$vocab" -f "$file" --ids
run llama "$llama" -m "$vocab" -f "$file" --ids --log-disable
n=$(tr -cd ',' <"$tmp/mint.out" | wc -c)
echo "tokens:     $((n + 1))"
printf '%-16s %10s %10s\n' "" "wall ms" "cpu ms"
for name in mint llama; do
    cpu=-
    [ -s "$tmp/$name.cpu" ] && cpu=$(median <"$tmp/$name.cpu")
    printf '%-16s %10s %10s\n' "$name-tokenize" "$(median <"$tmp/$name.wall")" "$cpu"
done
awk -v m="$(median <"$tmp/mint.wall")" -v l="$(median <"$tmp/llama.wall")" \
    'BEGIN { printf "ratio (wall)     %9.2fx  llama-tokenize / mint-tokenize\n", (m > 0 ? l / m : 0) }'
if [ -s "$tmp/mint.cpu" ]; then
    awk -v m="$(median <"$tmp/mint.cpu")" -v l="$(median <"$tmp/llama.cpu")" \
        'BEGIN { printf "ratio (cpu)      %9.2fx\n", (m > 0 ? l / m : 0) }'
fi
# llama-tokenize may print log lines before the list: compare the lists only.
if [ "$(grep '^\[' "$tmp/mint.out")" = "$(grep '^\[' "$tmp/llama.out")" ]; then
    echo "ids:             identical"
else
    echo "ids:             DIFFER (mint $tmp/mint.out vs llama $tmp/llama.out)"
    cp "$tmp/mint.out" /tmp/bench-tokenize.mint.out
    cp "$tmp/llama.out" /tmp/bench-tokenize.llama.out
    echo "                 (copies in /tmp/bench-tokenize.{mint,llama}.out)"
fi
