#!/bin/sh
# bench-under-load.sh - generation speed on a busy machine: N busy loops (`yes >/dev/null`) run
# beside the benchmark, and each round runs mint-bench at -t 1 and -t 2 and, when a llama.cpp
# build is given, llama-bench at -t 2 (-mmp 0), interleaved; the table gives per cell the median
# of the rounds and their range (the measure of the thread pool: a waiting thread must not
# stall the step when the thread it waits for has no core).
#
#   tools/bench/bench-under-load.sh MODEL [--llama LLAMA_BIN_DIR] [--rounds 5] [--busy 2] [-n 128]
#
# Each mint-bench and llama-bench run is -p 0 -n N -r 3 and gives the median (mint) or mean
# (llama-bench, which prints no median) of its three repetitions; the rounds' figures are what
# the table summarises. The busy loops are stopped on exit. Progress goes to stderr.
set -eu
if [ $# -lt 1 ]; then
    sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
model=$1
shift
llama="" rounds=5 busy=2 ngen=128
while [ $# -gt 0 ]; do
    case $1 in
    --llama) llama=${2:?--llama needs a folder}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a count}; shift 2 ;;
    --busy) busy=${2:?--busy needs a count}; shift 2 ;;
    -n) ngen=${2:?-n needs a count}; shift 2 ;;
    *) echo "bench-under-load.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
case $rounds$busy$ngen in *[!0-9]*)
    echo "bench-under-load.sh: --rounds, --busy and -n take whole numbers" >&2; exit 2 ;;
esac
[ "$rounds" -ge 3 ] || { echo "bench-under-load.sh: --rounds $rounds: at least 3" >&2; exit 2; }
[ -r "$model" ] || { echo "bench-under-load.sh: cannot read model '$model'" >&2; exit 1; }
bin=${MINT_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
[ -x "$bin/mint-bench" ] || { echo "bench-under-load.sh: no $bin/mint-bench (build first)" >&2; exit 1; }
if [ -n "$llama" ] && [ ! -x "$llama/llama-bench" ]; then
    echo "bench-under-load.sh: no llama-bench in '$llama'" >&2; exit 1
fi

pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || :; done; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
i=0
while [ "$i" -lt "$busy" ]; do
    yes >/dev/null &
    pids="$pids $!"
    i=$((i + 1))
done

# The median tg figure of one mint-bench run (its "median X" in the progress line).
mint_tg() {
    "$bin/mint-bench" -m "$model" -p 0 -n "$ngen" -r 3 -t "$1" --membw-gib 0 2>&1 >/dev/null |
        sed -n 's/.* tg[0-9]* .*median \([0-9.]*\).*/\1/p' | tail -1
}
# The mean tg figure of one llama-bench run (its markdown row: "| ... | tgN | X ± Y |").
llama_tg() {
    "$llama/llama-bench" -m "$model" -p 0 -n "$ngen" -r 3 -t "$1" -mmp 0 2>/dev/null |
        awk -F'|' '/ tg[0-9]+ / { v = $(NF - 1); sub(/±.*/, "", v); gsub(/ /, "", v); print v }' |
        tail -1
}

results=$(mktemp)
r=1
while [ "$r" -le "$rounds" ]; do
    echo "bench-under-load: round $r of $rounds ($busy busy loops)" >&2
    echo "mint_t1 $(mint_tg 1)" >>"$results"
    echo "mint_t2 $(mint_tg 2)" >>"$results"
    [ -n "$llama" ] && echo "llama_t2 $(llama_tg 2)" >>"$results"
    r=$((r + 1))
done

echo "tg$ngen tokens/s on $(basename "$model") with $busy busy loops, $rounds rounds, $(date -u +%F):"
echo "median (range) per cell; llama-bench with -mmp 0"
echo
echo "| runtime | threads | median | range | rounds |"
echo "|---|---|---|---|---|"
awk '
    { v[$1] = v[$1] " " $2 }
    END {
        n = split("mint_t1 mint_t2 llama_t2", keys, " ")
        for (k = 1; k <= n; k++) {
            if (!(keys[k] in v)) continue
            m = split(substr(v[keys[k]], 2), x, " ")
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
            med = m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
            split(keys[k], rt, "_")
            printf "| %s | %s | %.1f | %.1f-%.1f | %s |\n", rt[1] == "mint" ? "mint" : "llama.cpp", substr(rt[2], 2), med, x[1], x[m], substr(v[keys[k]], 2)
        }
    }' "$results"
rm -f "$results"
