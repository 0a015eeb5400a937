#!/bin/sh
# fuzz.sh - builds the libFuzzer harnesses with clang into build-fuzz/, prepares their corpora
# and runs each for a given time, MINT_FUZZ_JOBS of them side by side (default: one per core).
#
#   tools/scripts/fuzz.sh TARGET|all SECONDS [LIBFUZZER_ARG...]
#
# TARGET is gguf, safetensors and hf (Hugging Face folders' JSON files; both once
# formats/safetensors.h exists), tokenizer, bpe (byte-level BPE), chat, chat_parse (a model's
# output read back as content, reasoning and tool calls), jinja (chat templates), json_schema
# (JSON Schemas to grammars), run_args, quantize_args, options (the option parser over several
# tables), serve_request (mint-serve's request bodies), anthropic (Anthropic's Messages bodies),
# responses (OpenAI's Responses API bodies),
# slot_file (llama-server's slot files, POST /slots/N?action=restore), preset_ini (router
# mode's --models-preset files), mcp (MCP server configurations and the lines a server writes
# back), infill (mint-serve's POST /infill bodies made into a prompt) or grammar (GBNF
# grammars, then a few matching steps) or imatrix (importance matrices: llama-imatrix's GGUF and
# legacy .dat files, tests/reference/imatrix/ the seeds). Extra arguments go to every
# harness (e.g. -runs=1000000 to stop after that many executions; SECONDS still bounds the time).
# Seeds are made afresh from MINT_TEST_DATA (or ../shared/data) and tests/fuzz/seeds into
# build-fuzz/corpus/TARGET.seeds/; what the fuzzer finds accumulates in build-fuzz/corpus/TARGET/
# across runs. Logs go to build-fuzz/logs/, crash inputs to build-fuzz/artifacts/TARGET/. Prints
# executions and corpus size per harness; exits 1 when any harness found a crash, a leak, a hang
# (-timeout) or ran out of memory.
# Environment: CC (default clang), MINT_FUZZ_DIR (default build-fuzz), MINT_FUZZ_JOBS (default nproc).
set -eu
cd "$(dirname "$0")/../.."
if [ $# -lt 2 ]; then
    echo "usage: tools/scripts/fuzz.sh TARGET|all SECONDS [LIBFUZZER_ARG...]" >&2
    exit 2
fi
what=$1
seconds=$2
shift 2
case $seconds in
'' | *[!0-9]*)
    echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2
    exit 2
    ;;
esac
dir=${MINT_FUZZ_DIR:-build-fuzz}
all="gguf tokenizer bpe chat chat_parse jinja json_schema run_args quantize_args options serve_request anthropic grammar slot_file preset_ini mcp agent_request responses infill imatrix"
[ -f formats/safetensors.h ] &&
    all="gguf safetensors hf tokenizer bpe chat chat_parse jinja json_schema run_args quantize_args options serve_request anthropic grammar slot_file preset_ini mcp agent_request responses infill imatrix"
if [ "$what" = all ]; then
    targets=$all
else
    case " $all " in
    *" $what "*) targets=$what ;;
    *)
        echo "fuzz.sh: unknown target '$what' (one of: $all, all)" >&2
        exit 2
        ;;
    esac
fi
if [ -z "${MINT_TEST_DATA:-}" ] && [ -d ../shared/data ]; then
    MINT_TEST_DATA=$(cd ../shared/data && pwd)
fi
export MINT_TEST_DATA="${MINT_TEST_DATA:-}"
[ -n "$MINT_TEST_DATA" ] || echo "fuzz.sh: MINT_TEST_DATA is not set: synthetic seeds only" >&2

# Build: the whole project with clang (MINT_FUZZ needs it), only the fuzz targets.
if ! command -v "${CC:-clang}" >/dev/null; then
    echo "fuzz.sh: ${CC:-clang} not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
    exit 2
fi
cmake -S . -B "$dir" -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMINT_FUZZ=ON -DMINT_TESTS=OFF >/dev/null
cmake --build "$dir" --target fuzz -j"$(nproc)" >/dev/null
bin=$dir/tests/fuzz

# Longest input each harness is given: a GGUF header with a cut vocabulary, a JSON header, a
# prompt, an argument list.
max_len() {
    case $1 in
    gguf) echo 32768 ;;
    safetensors) echo 8192 ;;
    hf) echo 16384 ;;
    tokenizer) echo 1024 ;;
    chat) echo 1024 ;;
    chat_parse) echo 2048 ;;
    jinja) echo 16384 ;;
    json_schema) echo 8192 ;;
    serve_request) echo 4096 ;;
    anthropic) echo 4096 ;;
    responses) echo 4096 ;;
    slot_file) echo 4096 ;;
    mcp) echo 4096 ;;
    grammar) echo 2048 ;;
    imatrix) echo 8192 ;;
    agent_request) echo 4096 ;;
    infill) echo 4096 ;;
    *) echo 1024 ;;
    esac
}

seed() {
    t=$1
    out=$dir/corpus/$t.seeds
    rm -rf "$out"
    mkdir -p "$out"
    case $t in
    gguf | tokenizer | safetensors) "$bin/fuzz_make_seeds" "$t" "$out" "$MINT_TEST_DATA" ;;
    chat) "$bin/fuzz_make_seeds" chat "$out" tests/fuzz/seeds/chat ;;
    bpe) # llama.cpp's tokenizer test strings, when the data is there
        for f in "$MINT_TEST_DATA"/vocab/*.inp; do [ -f "$f" ] && cp "$f" "$out/"; done ;;
    jinja) # the repository's seeds (crashes found before among them), and the real templates
        cp tests/fuzz/seeds/jinja/* "$out/"
        if [ -d "$MINT_TEST_DATA/templates" ]; then cp "$MINT_TEST_DATA"/templates/*.jinja "$out/"; fi ;;
    run_args | quantize_args | options) "$bin/fuzz_make_seeds" args "$out" "tests/fuzz/seeds/$t" ;;
    slot_file) cp tests/fuzz/seeds/slot_file/*.seed "$out/" ;; # packed, plain, empty, with an image
    imatrix) cp tests/reference/imatrix/*.gguf tests/reference/imatrix/*.dat "$out/" ;; # llama-imatrix's
    esac >/dev/null
    # Hand-written seeds kept as they are (text files, used byte for byte).
    if [ -d "tests/fuzz/seeds/$t" ]; then
        for f in tests/fuzz/seeds/"$t"/*.txt; do
            [ -f "$f" ] && cp "$f" "$out/"
        done
    fi
    return 0
}

# One harness: seeds, run, and its result line in $dir/logs/TARGET.result (failures also in
# TARGET.failed), so that lanes running side by side do not interleave their output.
fuzz_one() {
    t=$1
    shift
    seed "$t"
    mkdir -p "$dir/corpus/$t" "$dir/artifacts/$t"
    log=$dir/logs/$t.log
    rm -f "$dir/logs/$t.failed"
    dict=""
    [ -f "tests/fuzz/dict/$t.dict" ] && dict="-dict=tests/fuzz/dict/$t.dict"
    t0=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    "$bin/fuzz_$t" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t/" $dict \
        "$@" "$dir/corpus/$t" "$dir/corpus/$t.seeds" >"$log" 2>&1 || rc=$?
    took=$(($(date +%s) - t0))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    files=$(find "$dir/corpus/$t" -type f | wc -l)
    bytes=$(find "$dir/corpus/$t" -type f -exec cat {} + | wc -c)
    result=ok
    if [ "$rc" -ne 0 ]; then
        result="FAILED (exit $rc): $(grep -m1 -E '^FUZZ_CHECK failed|^==[0-9]+==ERROR|^SUMMARY|runtime error|deadly signal|timeout|out-of-memory' "$log" || echo "see $log")"
        : >"$dir/logs/$t.failed"
    fi
    printf '%-14s %8s %10s %8s %16s  %s\n' "$t" "$took" "${execs:-?}" \
        "$(( ${execs:-0} / (took > 0 ? took : 1) ))" "$files/$bytes" "$result" >"$dir/logs/$t.result"
}

# The harnesses run in MINT_FUZZ_JOBS lanes side by side (default: the number of cores; each
# harness is one process on one core), each lane taking every MINT_FUZZ_JOBS-th target in turn:
# on CI's 2 cores the step takes half the time for the same seconds per harness.
jobs=${MINT_FUZZ_JOBS:-$(nproc)}
case $jobs in '' | *[!0-9]* | 0) jobs=1 ;; esac
mkdir -p "$dir/logs"
for t in $targets; do rm -f "$dir/logs/$t.result" "$dir/logs/$t.failed"; done
printf '%-14s %8s %10s %8s %16s  %s\n' target seconds execs exec/s 'corpus files/B' result
lane=0
pids=""
while [ "$lane" -lt "$jobs" ]; do
    (
        i=0
        for t in $targets; do
            [ $((i % jobs)) -eq "$lane" ] && fuzz_one "$t" "$@"
            i=$((i + 1))
        done
    ) &
    pids="$pids $!"
    lane=$((lane + 1))
done
for p in $pids; do wait "$p" || true; done
failed=""
for t in $targets; do
    cat "$dir/logs/$t.result" 2>/dev/null || echo "$t: no result (see $dir/logs/$t.log)"
    if [ -f "$dir/logs/$t.failed" ] || [ ! -f "$dir/logs/$t.result" ]; then
        failed="$failed $t"
        # A clean clone's CI keeps only this output: the input itself, so that it can be replayed.
        for a in "$dir/artifacts/$t"/*; do
            [ -f "$a" ] || continue
            echo "fuzz.sh: $t input $(basename "$a") ($(wc -c <"$a") bytes, first 3000 as base64):" >&2
            head -c 3000 "$a" | base64 >&2
        done
    fi
done
if [ -n "$failed" ]; then
    echo "fuzz.sh: failures in:$failed (inputs in $dir/artifacts/, logs in $dir/logs/)" >&2
    exit 1
fi
