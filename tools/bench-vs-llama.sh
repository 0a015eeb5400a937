#!/bin/sh
# bench-vs-llama.sh - mint against a native llama.cpp build on the same machine, in one run, and
# the markdown tables of the README's Speed section. Builds nothing: it runs mint's programs
# from MINT_BIN_DIR (default: build/ next to this script) and llama.cpp's from the folder given.
#
#   tools/bench-vs-llama.sh LLAMA_BIN_DIR MODELS_DIR [options] > table.md
#
# MODELS_DIR holds NAME-<TYPE>.gguf for each NAME of --names (default tinyllama: mint-quantize
# --synthetic tinyllama --type TYPE --vocab tokenizer.model --seed 1; the type is also looked
# up in lower case, as in llama3-real-q4_k_m.gguf). Per model, llama-bench (with -mmp 0: on
# these VMs its mmap-backed weights slow down within a run) and mint-bench alternate (-p 512
# -n 128 -t 1,2, f16 KV cache for both, as llama-bench's default) for --rounds rounds of -r
# repetitions each; a cell is the median of the per-round medians. mint-bench measures the
# machine's read bandwidth at each thread count in the same process, and reports the bytes a
# generated token reads (every weight once, plus the KV rows it attends to); the bound is
# bandwidth / bytes, and each tg cell shows its share of it.
#
# Second table: time to first token (the wall time of a process that loads the model and
# evaluates one 16-token prompt, no warm-up: llama-bench / mint-bench -p 16 -n 0 -r 1
# --no-warmup -t 2, mint with --no-repack-wait since its repacking runs in the background;
# the first run of each is dropped so that the page cache is warm) and the peak resident
# memory of a tg128 run (-p 0 -n 128 -r 1), against file + KV cache + 64 MiB.
# With --ppl TEXT, a third: llama-perplexity vs mint-perplexity on the Q4_K_M file (-c 512
# --chunks 4 -t 2, wall time with load).
#
# With --ik IK_BIN_DIR, ik_llama.cpp's llama-bench (its fastest CPU fork, run with -rtr 1 -mmp 0:
# its run-time repacking, no mmap) takes its turn in every round too, and the first table gains
# its column and mint's ratio to it.
# Options: -r N (repetitions per round, default 5), --rounds N (default 1), --types "Q4_0 ..."
# (default Q4_0 Q4_K_M Q5_K_M Q6_K Q8_0 F16), --names "llama3-real qwen2-real ..." (default
# tinyllama; with more than one, the first table gains a model column), --ttft-runs N (default
# 5), --ppl TEXT, --no-ttft, --ik DIR. Needs python3 (standard library only). Progress goes to
# stderr.
set -eu
if [ $# -lt 2 ]; then
    sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
LLAMA_BIN=$1
MODELS=$2
shift 2
MINT_BIN=${MINT_BIN_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}
for p in "$LLAMA_BIN/llama-bench" "$MINT_BIN/mint-bench"; do
    [ -x "$p" ] || { echo "bench-vs-llama: $p not found (build it first)" >&2; exit 2; }
done
export LD_LIBRARY_PATH="$LLAMA_BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec python3 - "$LLAMA_BIN" "$MODELS" "$MINT_BIN" "$@" <<'PYTHON'
import json, os, statistics, subprocess, sys, time

llama_bin, models_dir, mint_bin = sys.argv[1:4]
args = sys.argv[4:]
reps, rounds, ttft_runs, ppl, do_ttft, ik_bin = 5, 1, 5, None, True, None
types = "Q4_0 Q4_K_M Q5_K_M Q6_K Q8_0 F16".split()
names = ["tinyllama"]
i = 0
while i < len(args):
    a = args[i]
    if a == "--no-ttft":
        do_ttft = False
        i += 1
        continue
    if i + 1 >= len(args):
        sys.exit("bench-vs-llama: %s needs a value" % a)
    v = args[i + 1]
    if a == "-r": reps = int(v)
    elif a == "--rounds": rounds = int(v)
    elif a == "--types": types = v.split()
    elif a == "--names": names = v.split()
    elif a == "--ttft-runs": ttft_runs = int(v)
    elif a == "--ppl": ppl = v
    elif a == "--ik": ik_bin = v
    else: sys.exit("bench-vs-llama: unknown option " + a)
    i += 2

def log(*x):
    print("bench-vs-llama:", *x, file=sys.stderr, flush=True)

def run(cmd, env=None):
    """Runs cmd; returns (stdout, wall seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.communicate()
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("bench-vs-llama: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, err[-2000:]))
    return out, wall

def run_rss(cmd):
    """Runs cmd with output discarded; returns (wall seconds, peak RSS bytes)."""
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        try:
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("bench-vs-llama: %s failed" % " ".join(cmd))
    return wall, ru.ru_maxrss * 1024

llama_bench = os.path.join(llama_bin, "llama-bench")
mint_bench = os.path.join(mint_bin, "mint-bench")
common = ["-p", "512", "-n", "128", "-t", "1,2", "-r", str(reps)]
no_mmap = ["-mmp", "0"]
ik_bench, ik_env = None, None
if ik_bin:
    ik_bench = os.path.join(ik_bin, "llama-bench")
    if not os.access(ik_bench, os.X_OK):
        sys.exit("bench-vs-llama: %s not found" % ik_bench)
    # ik_llama.cpp's own libllama / libggml, found from its binary's run path, not llama.cpp's.
    ik_env = dict(os.environ)
    ik_env["LD_LIBRARY_PATH"] = ""

def llama_rows(out, into):
    for e in json.loads(out):
        test = ("pp%d" % e["n_prompt"]) if e["n_gen"] == 0 else ("tg%d" % e["n_gen"])
        into.setdefault((e["n_threads"], test), []).append(statistics.median(e["samples_ts"]))

def model_path(name, t):
    for cand in ("%s-%s.gguf" % (name, t), "%s-%s.gguf" % (name, t.lower())):
        if os.path.exists(os.path.join(models_dir, cand)):
            return os.path.join(models_dir, cand)
    return None

rows = []   # one per (model, type, threads, test)
extra = []  # ttft / rss per model and type
for name, t in [(n, t) for n in names for t in types]:
    model = model_path(name, t)
    if model is None:
        log("skipping %s %s (no %s-%s.gguf in %s)" % (name, t, name, t, models_dir))
        continue
    tag = t if len(names) == 1 else "%s %s" % (name, t)
    size = os.path.getsize(model)
    lm = {}   # (threads, test) -> [round medians]
    ik = {}
    mm = {}
    info = {}
    for r in range(rounds):
        log("%s round %d/%d: llama-bench" % (tag, r + 1, rounds))
        out, _ = run([llama_bench, "-m", model, "-o", "json"] + no_mmap + common)
        llama_rows(out, lm)
        if ik_bench:
            log("%s round %d/%d: ik_llama.cpp llama-bench" % (tag, r + 1, rounds))
            out, _ = run([ik_bench, "-m", model, "-o", "json", "-rtr", "1"] + no_mmap + common,
                         env=ik_env)
            llama_rows(out, ik)
        log("%s round %d/%d: mint-bench" % (tag, r + 1, rounds))
        out, _ = run([mint_bench, "-m", model, "-o", "json", "--kv-type", "f16"] + common)
        for e in json.loads(out):
            key = (e["threads"], e["test"])
            mm.setdefault(key, []).append(e["tps_median"])
            info.setdefault(key, []).append(e)
    for key in sorted(mm, key=lambda k: (k[1][:2] != "pp", k[0])):
        th, test = key
        l = statistics.median(lm.get(key, [float("nan")]))
        m = statistics.median(mm[key])
        row = {"name": name, "type": t, "size": size, "threads": th, "test": test, "llama": l, "mint": m,
               "ik": statistics.median(ik.get(key, [float("nan")]))}
        if test.startswith("tg"):
            es = info[key]
            row["bytes"] = statistics.median(e["bytes_per_token"] for e in es)
            row["bw"] = statistics.median(e["membw_gbps"] for e in es)
            row["kvpos"] = es[0]["kv_bytes_per_position"]
        rows.append(row)
    if do_ttft:
        cmds = {
            "llama": [llama_bench, "-m", model, "-p", "16", "-n", "0", "-r", "1", "--no-warmup",
                      "-t", "2"] + no_mmap,
            "mint": [mint_bench, "-m", model, "-p", "16", "-n", "0", "-r", "1", "--no-warmup",
                     "-t", "2", "--membw-gib", "0", "--no-repack-wait"],
        }
        rss_cmds = {
            "llama": [llama_bench, "-m", model, "-p", "0", "-n", "128", "-r", "1", "-t", "2"] + no_mmap,
            "mint": [mint_bench, "-m", model, "-p", "0", "-n", "128", "-r", "1", "-t", "2",
                     "--membw-gib", "0", "--kv-type", "f16"],
        }
        log("%s: time to first token (%d runs each) and resident memory" % (tag, ttft_runs))
        walls = {"llama": [], "mint": []}
        for k in range(ttft_runs + 1):
            for who in ("llama", "mint"):
                w, _ = run_rss(cmds[who])
                if k > 0:
                    walls[who].append(w)
        rss = {who: run_rss(rss_cmds[who])[1] for who in ("llama", "mint")}
        kvpos = next((r["kvpos"] for r in rows
                      if r["name"] == name and r["type"] == t and "kvpos" in r), 0)
        extra.append({"type": tag, "size": size, "ttft": {w: statistics.median(v) for w, v in walls.items()},
                      "rss": rss, "kv": kvpos * 128})

def fmt_ratio(m, l):
    return "%.2f×" % (m / l) if l == l and l > 0 else "-"

multi = len(names) > 1
ikh = " ik_llama.cpp t/s | mint / ik_llama.cpp |" if ik_bench else ""
print("| %stype | file | test | threads | llama.cpp t/s | mint t/s | mint / llama.cpp |%s bound t/s (bw GB/s) | llama.cpp: GB/s, share | mint: GB/s, share |" % ("model | " if multi else "", ikh))
print("|%s---|---:|---|---:|---:|---:|---:|%s---:|---:|---:|" % ("---|" if multi else "", "---:|---:|" if ik_bench else ""))
for r in rows:
    cells = ["", "", ""]
    if "bytes" in r:
        b, bw = r["bytes"], r["bw"]
        bound = bw * 1e9 / b
        cells = ["%.1f (%.1f)" % (bound, bw),
                 "%.1f, %.0f%%" % (r["llama"] * b / 1e9, 100 * r["llama"] / bound),
                 "%.1f, %.0f%%" % (r["mint"] * b / 1e9, 100 * r["mint"] / bound)]
    else:
        cells = ["-", "-", "-"]
    ikc = " %.2f | %s |" % (r["ik"], fmt_ratio(r["mint"], r["ik"])) if ik_bench else ""
    print("| %s%s | %.2f GiB | %s | %d | %.2f | %.2f | %s |%s %s | %s | %s |" % (
        (r["name"] + " | ") if multi else "", r["type"], r["size"] / 2**30, r["test"], r["threads"], r["llama"], r["mint"],
        fmt_ratio(r["mint"], r["llama"]), ikc, cells[0], cells[1], cells[2]))

if extra:
    print()
    print("| type | time to first token, llama.cpp | mint | peak RSS, llama.cpp | mint | mint − (file + KV) | limit |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for e in extra:
        over = e["rss"]["mint"] - e["size"] - e["kv"]
        print("| %s | %.2f s | %.2f s | %.0f MiB | %.0f MiB | %+.0f MiB | +64 MiB |" % (
            e["type"], e["ttft"]["llama"], e["ttft"]["mint"], e["rss"]["llama"] / 2**20,
            e["rss"]["mint"] / 2**20, over / 2**20))

if ppl:
    model = model_path(names[0], "Q4_K_M")
    lp = os.path.join(llama_bin, "llama-perplexity")
    mp = os.path.join(mint_bin, "mint-perplexity")
    if model and os.path.exists(lp):
        log("perplexity: 3 runs each")
        walls = {"llama": [], "mint": []}
        for k in range(3):
            walls["llama"].append(run([lp, "-m", model, "-f", ppl, "-c", "512", "--chunks", "4",
                                       "-t", "2", "--no-mmap"])[1])
            walls["mint"].append(run([mp, "-m", model, "-f", ppl, "-c", "512", "--chunks", "4",
                                      "-t", "2"])[1])
        l, m = statistics.median(walls["llama"]), statistics.median(walls["mint"])
        print()
        print("| perplexity, Q4_K_M, -c 512, 4 chunks, 2 threads | llama.cpp | mint | speed-up |")
        print("|---|---:|---:|---:|")
        print("| wall time with load (median of 3) | %.1f s | %.1f s | %.2f× |" % (l, m, l / m))
PYTHON
