#!/bin/sh
# experiments.sh - runs mint's small experiments on this machine and writes docs/experiments.md
# from what they print: naive vs KV-cache decoding, the three attention algorithms (largest
# difference, scratch memory, speed against depth), the quantization table of mint-quantize
# --compare, and one prompt under several sampler settings. Nothing is typed in by hand.
#
#   tools/bench/experiments.sh [BUILD_DIR]        (default build; about 10-15 minutes on 2 cores)
#
# Needs MINT_TEST_DATA (default ../shared/data: stories260K.gguf, tinystories_val.txt,
# tokenizer.model) and writes a TinyLlama-shaped Q4_0 model with random weights into
# BUILD_DIR/models/ once, as tools/scripts/quickstart.sh does.
set -eu
cd "$(dirname "$0")/../.."
B=$(cd "${1:-build}" && pwd)
D=$(cd "${MINT_TEST_DATA:-../shared/data}" && pwd)
T=${MINT_THREADS:-2}
out=docs/experiments.md
tmp=$(mktemp "${out}.XXXXXX")
chmod 644 "$tmp"
trap 'rm -f "$tmp" "$tmp.json" "$tmp.trace"' EXIT
mkdir -p "$B/models"
TINY="$B/models/tinyllama-Q4_0.gguf"
[ -f "$TINY" ] || "$B/mint-quantize" --synthetic tinyllama --type Q4_0 --vocab "$D/tokenizer.model" \
    --seed 1 -o "$TINY" --no-progress >/dev/null
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
say() { printf '%s\n' "$*" >>"$tmp"; }

say "# Experiments"
say ""
isa=$("$B/mint-run" -m "$D/stories260K.gguf" -p hi -n 1 -t 1 -v 2>&1 >/dev/null |
    sed -n 's/.*: kernels \([a-z0-9]*\),.*/\1/p')
say "Written by \`tools/bench/experiments.sh\` on $(date -u +%Y-%m-%d) ($cpu, $(nproc) cores,"
say "$T threads, kernels $isa). Every figure below is printed by a"
say "command shown with it; rerun the script to see them on your machine. The TinyLlama-shaped file"
say "has TinyLlama-1.1B's shapes and vocabulary with random weights: its speed is real, its text is"
say "noise. The machine is shared, so single timings vary by 10-20%."
say ""

# ---------------------------------------------------------------------------------------------
say "## Naive vs KV-cache decoding"
say ""
say "\"Deep learning is\", 50 greedy tokens: \`mint-run --no-kv-cache\` recomputes the whole sequence"
say "at every step, then times the same tokens again with the KV cache."
say ""
say "| model | naive (tokens/s) | KV cache (tokens/s) | speed-up | same tokens |"
say "|---|---:|---:|---:|---|"
for m in "$D/stories260K.gguf" "$TINY"; do
    err=$("$B/mint-run" -m "$m" -p "Deep learning is" -n 50 --temp 0 --ignore-eos -t "$T" \
        --no-kv-cache 2>&1 >/dev/null)
    naive=$(printf '%s\n' "$err" | sed -n 's/^naive gen .*, *\([0-9.]*\) tokens per second)/\1/p')
    kv=$(printf '%s\n' "$err" | sed -n 's/^kv-cache gen .*, *\([0-9.]*\) tokens per second)/\1/p')
    up=$(printf '%s\n' "$err" | sed -n 's/^speed-up *= *\([0-9.]*\)x/\1/p')
    same=$(printf '%s\n' "$err" | sed -n 's/^greedy tokens *= *//p')
    say "| $(basename "$m") | $naive | $kv | ${up}x | $same |"
done
say ""

# ---------------------------------------------------------------------------------------------
say "## Three attention algorithms"
say ""
say "Naive keeps a head's whole score matrix (queries x keys), row-wise one row of scores at a"
say "time, flash one block of keys with a running maximum and sum. Largest difference between them"
say "(\`tests/test_attention.c\`: logits of the last token, relative to the largest logit; the"
say "greedy tokens are the same):"
say ""
MINT_TEST_DATA="$D" MINT_SOURCE_DIR=$(pwd) "$B/test_attention" --verbose 2>&1 |
    sed -n 's/^\[----\] \(.*positions: .*\)$/- \1/p' >>"$tmp"
say ""
say "Scratch memory per thread (\`mint-run -v\`, TinyLlama shape, context 2048, batch 512):"
say ""
for a in naive rowwise flash; do
    kib=$("$B/mint-run" -m "$TINY" -p hi -n 1 -c 2048 -t "$T" --attention "$a" -v 2>&1 >/dev/null |
        sed -n 's/.*attention [a-z]* (\([0-9.]*\) KiB of scratch.*/\1/p')
    say "- $a: $kib KiB"
done
say ""
say "Speed against depth, TinyLlama-shaped Q4_0 (\`mint-bench -t $T -p 512 -n 64 -r 3 -d 0,512,2048"
say "--attention naive,rowwise,flash\`, tokens/s, median of 3):"
say ""
"$B/mint-bench" -m "$TINY" -t "$T" -p 512 -n 64 -r 3 -d 0,512,2048 --attention naive,rowwise,flash \
    --membw-gib 0 -o json 2>/dev/null >"$tmp.json"
say "| algorithm | pp512 | tg64 | pp512 @ d512 | tg64 @ d512 | pp512 @ d2048 | tg64 @ d2048 |"
say "|---|---:|---:|---:|---:|---:|---:|"
for a in naive rowwise flash; do
    row="| $a"
    for d in 0 512 2048; do
        for t in pp512 tg64; do
            v=$(grep "\"attention\":\"$a\"" "$tmp.json" | grep "\"depth\":$d," |
                grep "\"test\":\"$t\"" | sed -n 's/.*"tps_median":\([0-9.]*\).*/\1/p')
            row="$row | $(printf '%.1f' "${v:-0}")"
        done
    done
    say "$row |"
done
rm -f "$tmp.json"
say ""

# ---------------------------------------------------------------------------------------------
say "## Quantization"
say ""
say "stories260K quantized to each type and measured on tinystories_val.txt (\`mint-quantize"
say "--compare F16,Q8_0,Q5_1,Q5_0,Q4_1,Q4_0 --text tinystories_val.txt --ctx 128 --chunks 200\`):"
say ""
"$B/mint-quantize" --compare F16,Q8_0,Q5_1,Q5_0,Q4_1,Q4_0 --text "$D/tinystories_val.txt" --ctx 128 \
    --chunks 200 -t "$T" "$D/stories260K.gguf" 2>/dev/null | grep '^|' >>"$tmp"
say ""

# ---------------------------------------------------------------------------------------------
say "## One prompt, several sampler settings"
say ""
say "stories260K, \"Once upon a time, there was a\", 40 tokens, seed 7. The candidates are what the sampler's"
say "steps left for the first token (\`--trace-json\`): all 512, after top-k, top-p, min-p."
say ""
say "| settings | candidates | text |"
say "|---|---|---|"
for s in "--temp 0" "--temp 0.8" "--temp 1.5" "--temp 0.8 --top-k 5" "--temp 0.8 --top-p 0.5" \
    "--temp 0.8 --min-p 0.3" "--temp 1.0 --top-k 0 --top-p 1 --min-p 0"; do
    # shellcheck disable=SC2086
    text=$("$B/mint-run" -m "$D/stories260K.gguf" -p "Once upon a time, there was a" -n 40 -s 7 -t 1 $s \
        --trace-json "$tmp.trace" 2>/dev/null | tr '\n' ' ' | sed 's/|/\\|/g')
    cand=$(grep '"event":"sample"' "$tmp.trace" | head -n 1 |
        sed -n 's/.*"n_vocab":\([0-9]*\),"top_k":\([0-9]*\),"top_p":\([0-9]*\),"min_p":\([0-9]*\).*/\1 → \2 → \3 → \4/p')
    say "| \`$s\` | $cand | $text |"
done
rm -f "$tmp.trace"
say ""
mv "$tmp" "$out"
trap - EXIT
echo "experiments.sh: wrote $out"
