#!/bin/sh
# serve-bench.sh - mint-serve against llama-server on one model with the same load
# (tools/bench/serve-load.py): time to first token of five 128-token prompts on the idle server,
# then 8 concurrent clients sending -n streamed /v1/completions requests of mixed prompts at
# temperature 0, then the same five prompts again (the repeat: a prompt cache that outlives the
# slots answers it from memory). llama-server runs with --no-mmap (on these VMs its mapped
# weights slow down within a run), mint-serve with --kv-type f16 (llama-server's cache type).
# Each server runs alone, on loopback, with the same threads and slots; runs alternate between
# the two servers and the script prints every run's line and the medians.
#
#   tools/bench/serve-bench.sh MODEL [REQUESTS] [REPEATS]
#
# Environment: LLAMA_SERVER (default /work/peer/llama.cpp/build/bin/llama-server; its folder
# is put on LD_LIBRARY_PATH), THREADS (default 2), PARALLEL (default 8), MAX_TOKENS (32),
# MINT_BUILD_DIR (build), OUT (a folder for logs and JSON; default a temporary one).
set -eu
cd "$(dirname "$0")/../.."
model=$1
requests=${2:-200}
repeats=${3:-3}
threads=${THREADS:-2}
parallel=${PARALLEL:-8}
max_tokens=${MAX_TOKENS:-32}
llama=${LLAMA_SERVER:-/work/peer/llama.cpp/build/bin/llama-server}
out=${OUT:-$(mktemp -d /tmp/serve-bench-XXXXXX)}
mkdir -p "$out"
vocab_to=500 # fresh prompt tokens for the TTFT runs come from ids 100..499 (any vocabulary)

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_up() { # url pid
    i=0
    until curl -sf "$1/health" >/dev/null 2>&1; do
        kill -0 "$2" 2>/dev/null || { echo "serve-bench: the server exited" >&2; exit 1; }
        i=$((i + 1))
        [ $i -lt 600 ] || { echo "serve-bench: the server did not start" >&2; exit 1; }
        sleep 0.2
    done
}

run() { # name round
    name=$1
    port=$(free_port)
    if [ "$name" = mint ]; then
        # -c is all slots together for both (llama-server's meaning): 8192 positions in all.
        "${MINT_BUILD_DIR:-build}/mint-serve" -m "$model" --port "$port" -t "$threads" \
            --parallel "$parallel" -c 8192 --kv-type f16 >"$out/$name.$2.log" 2>&1 &
    else
        LD_LIBRARY_PATH=$(dirname "$llama") "$llama" -m "$model" --port "$port" -t "$threads" \
            --parallel "$parallel" -c 8192 --no-mmap >"$out/$name.$2.log" 2>&1 &
    fi
    pid=$!
    url=http://127.0.0.1:$port
    wait_up "$url" "$pid"
    mismatch=""
    [ "$name" = llama ] && mismatch=--allow-mismatch # reported, not fatal, for the peer
    python3 tools/bench/serve-load.py --url "$url" --ttft 5 --prompt-tokens 128 \
        --vocab-to $vocab_to --label "$name" --json "$out/$name.ttft.$2.json" || true
    python3 tools/bench/serve-load.py --url "$url" -n "$requests" -c 8 --max-tokens "$max_tokens" \
        --deadline 1500 --label "$name" --json "$out/$name.load.$2.json" $mismatch || true
    # The same five prompts again (serve-load.py draws them from a fixed seed), after the load
    # went through every slot: what a prompt cache beyond the slots saves.
    python3 tools/bench/serve-load.py --url "$url" --ttft 5 --prompt-tokens 128 \
        --vocab-to $vocab_to --label "$name" --json "$out/$name.again.$2.json" || true
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

for r in $(seq "$repeats"); do
    run mint "$r"
    run llama "$r"
done
python3 - "$out" "$repeats" <<'EOF'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
def med(name, kind, key):
    xs = []
    for r in range(1, n + 1):
        try:
            v = json.load(open("%s/%s.%s.%d.json" % (out, name, kind, r))).get(key)
        except OSError:
            v = None
        if v is not None:
            xs.append(v)
    return statistics.median(xs) if xs else float("nan")
print("median of %d runs (logs and JSON in %s):" % (n, out))
print("%-6s %10s %8s %8s %10s %12s %13s %10s" % ("server", "tokens/s", "p50 ms", "p99 ms",
      "ttft ms", "idle ttft ms", "repeat ttft ms", "mismatch"))
for s in ("mint", "llama"):
    print("%-6s %10.1f %8.0f %8.0f %10.0f %12.1f %13.1f %10.0f" % (s,
          med(s, "load", "tokens_per_s"), med(s, "load", "latency_p50_ms"),
          med(s, "load", "latency_p99_ms"), med(s, "load", "ttft_p50_ms"),
          med(s, "ttft", "ttft_p50_ms"), med(s, "again", "ttft_p50_ms"),
          med(s, "load", "mismatches")))
EOF
