#!/bin/sh
# bench-vs-llama.sh - mint against a native llama.cpp build on the same machine, in one run, and
# the markdown tables of the README's Speed section. Builds nothing: it runs mint's programs
# from MINT_BIN_DIR (default: the repository's build/) and llama.cpp's from the folder given.
#
#   tools/bench/bench-vs-llama.sh LLAMA_BIN_DIR MODELS_DIR [options] > table.md
#
# MODELS_DIR holds NAME-<TYPE>.gguf for each NAME of --names (default tinyllama: mint-quantize
# --synthetic tinyllama --type TYPE --vocab tokenizer.model --seed 1; the type is also looked
# up in lower case, as in llama3-real-q4_k_m.gguf).
#
# Rounds. The machine this runs on is shared and its speed drifts by more than the differences
# measured, so everything is measured in --rounds rounds (at least 3). Within a round, type by
# type, llama.cpp's llama-bench (with -mmp 0: no mmap; on these VMs its mmap-backed weights slow
# down within a run), ik_llama.cpp's with --ik, and mint-bench run one after the other, in
# reverse order every second round (-p 512 -n 128 -t 1,2 -r N, f16 KV cache for all, as
# llama-bench's default). A round's figure is the median of its -r repetitions; a cell is the
# median of the rounds' figures with their range, "42.4 (38.5-44.0)". mint / llama.cpp is the
# ratio of the medians, called "ahead" only when mint's slowest round beats the other's median,
# "behind" when mint's fastest round is below it, "even" otherwise. --quick allows fewer rounds
# (default 1) for a smoke run of the script, and its table says that one round proves nothing.
#
# The bound. Generation reads every weight once per token, so memory bandwidth bounds it. In
# every round, mint-bench measures, before it loads the model and at each thread count, what a
# one-token matmul can read: its thread pool streams a 1 GiB buffer (8 times a large last-level
# cache) split as a matmul of one token splits its weight rows (a contiguous share per thread,
# summed with the vector loads of the kernel level in use), 5 passes, each on a buffer of its
# own, and reports their median (with min and max: runtime/measure/membw.c). The bound in tokens
# per second is that round's median / the bytes a generated token reads (mint-bench's figure for
# the file: every weight once plus the K and V rows attended to, used for every runtime since
# they read the same file), and each runtime's share of it is, round by round, its tokens/s x
# those bytes / that round's bandwidth; the table shows the median share and its range, and
# below it the range of the probe's single passes.
#
# Second table: time to first token (the wall time of a process that loads the model and
# evaluates one 16-token prompt, no warm-up: llama-bench / mint-bench -p 16 -n 0 -r 1
# --no-warmup -t 2, mint with --no-repack-wait since its repacking runs in the background;
# the first run of each is dropped so that the page cache is warm) and the peak resident
# memory of a tg128 run (-p 0 -n 128 -r 1), against file + KV cache + 64 MiB.
# With --ppl TEXT, a third: llama-perplexity vs mint-perplexity on the Q4_K_M file (-c 512
# --chunks 4 -t 2, wall time with load).
#
# With --ik IK_BIN_DIR, ik_llama.cpp's llama-bench (its fastest CPU fork, run with -rtr 1 -fmoe 1
# -mmp 0: its run-time repacking, its fused mixture-of-experts path, no mmap) takes its turn in every round too, and the first table gains
# its columns and mint's ratio to it.
# Options: -r N (repetitions per round, default 5), --rounds N (default 3), --quick, --types
# "Q4_0 ..." (default Q4_0 Q4_K_M Q5_K_M Q6_K Q8_0 F16), --names "llama3-real qwen2-real ..."
# (default tinyllama; with more than one, the first table gains a model column), --ttft-runs N
# (default 5), --ppl TEXT, --no-ttft, --ik DIR. Needs python3 (standard library only). Progress
# goes to stderr.
set -eu
if [ $# -lt 2 ]; then
    sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
MINT_BIN=${MINT_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
export LD_LIBRARY_PATH="$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec python3 - "$0" "$MINT_BIN" "$@" <<'PYTHON'
import datetime, json, os, shlex, statistics, subprocess, sys, time

script, mint_bin, llama_bin, models_dir = sys.argv[1:5]
args = sys.argv[5:]
MIN_ROUNDS = 3


def usage_error(msg):
    print("bench-vs-llama: " + msg, file=sys.stderr)
    sys.exit(2)


def count(opt, v):
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n < 1:
        usage_error("%s wants a whole number of at least 1, not %r" % (opt, v))
    return n


reps, rounds, ttft_runs, ppl, do_ttft, ik_bin, quick = 5, None, 5, None, True, None, False
types = "Q4_0 Q4_K_M Q5_K_M Q6_K Q8_0 F16".split()
names = ["tinyllama"]
i = 0
while i < len(args):
    a = args[i]
    if a == "--no-ttft" or a == "--quick":
        do_ttft, quick = do_ttft and a != "--no-ttft", quick or a == "--quick"
        i += 1
        continue
    if a not in ("-r", "--rounds", "--types", "--names", "--ttft-runs", "--ppl", "--ik"):
        usage_error("unknown option " + a)
    if i + 1 >= len(args):
        usage_error("%s needs a value" % a)
    v = args[i + 1]
    if a == "-r": reps = count(a, v)
    elif a == "--rounds": rounds = count(a, v)
    elif a == "--types": types = v.split()
    elif a == "--names": names = v.split()
    elif a == "--ttft-runs": ttft_runs = count(a, v)
    elif a == "--ppl": ppl = v
    else: ik_bin = v
    i += 2
if rounds is None:
    rounds = 1 if quick else MIN_ROUNDS
if rounds < MIN_ROUNDS and not quick:
    usage_error("--rounds %d: fewer than %d rounds cannot tell a difference from the machine's "
                "drift (--quick runs them anyway, for a smoke test)" % (rounds, MIN_ROUNDS))

llama_bench = os.path.join(llama_bin, "llama-bench")
mint_bench = os.path.join(mint_bin, "mint-bench")
ik_bench = os.path.join(ik_bin, "llama-bench") if ik_bin else None
for p in (llama_bench, mint_bench, ik_bench):
    if p and not os.access(p, os.X_OK):
        usage_error("%s not found (build it first)" % p)
# ik_llama.cpp's own libllama / libggml, found from its binary's run path, not llama.cpp's.
ik_env = dict(os.environ, LD_LIBRARY_PATH="") if ik_bin else None


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


NAN = float("nan")


def stats(xs):
    """(median, min, max) of the per-round figures that were measured; NaNs when none was."""
    xs = [x for x in xs if x == x]
    if not xs:
        return NAN, NAN, NAN
    return statistics.median(xs), min(xs), max(xs)


def cell(xs, fmt="%.2f", scale=1.0, unit=""):
    """'median (min-max)' of the rounds' figures, e.g. '42.40 (38.50-44.00)'; '-' if none."""
    med, lo, hi = stats(xs)
    if med != med:
        return "-"
    f = lambda x: fmt % (x * scale)
    if lo == hi:  # one round (--quick)
        return f(med) + unit
    return "%s%s (%s-%s%s)" % (f(med), unit, f(lo), f(hi), unit)


def versus(mint, peer):
    """mint's ratio to a peer from the medians, and whether its rounds clear the peer's median."""
    m, m_lo, m_hi = stats(mint)
    p = stats(peer)[0]
    if m != m or p != p or p <= 0:
        return "-"
    word = "ahead" if m_lo > p else "behind" if m_hi < p else "even"
    return "%.2f× %s" % (m / p, word)


# --- measuring --------------------------------------------------------------------------------

started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

common = ["-p", "512", "-n", "128", "-t", "1,2", "-r", str(reps)]
no_mmap = ["-mmp", "0"]
runtimes = [("llama", "llama.cpp")] + ([("ik", "ik_llama.cpp")] if ik_bin else []) + [("mint", "mint")]


def llama_tps(out):
    """{(threads, test): median t/s of the repetitions} from llama-bench's JSON."""
    tps = {}
    for e in json.loads(out):
        test = ("pp%d" % e["n_prompt"]) if e["n_gen"] == 0 else ("tg%d" % e["n_gen"])
        tps[(e["n_threads"], test)] = statistics.median(e["samples_ts"])
    return tps


def measure_round(model, order):
    """One round on one file, the runtimes in the given order: {runtime: {key: t/s}}, and
    mint-bench's {key: its JSON entry}."""
    tps, mint = {}, {}
    for who in order:
        if who == "llama":
            tps[who] = llama_tps(run([llama_bench, "-m", model, "-o", "json"] + no_mmap + common)[0])
        elif who == "ik":
            out = run([ik_bench, "-m", model, "-o", "json", "-rtr", "1", "-fmoe", "1"] + no_mmap
                      + common, env=ik_env)[0]
            tps[who] = llama_tps(out)
        else:
            out = run([mint_bench, "-m", model, "-o", "json", "--kv-type", "f16"] + common)[0]
            mint = {(e["threads"], e["test"]): e for e in json.loads(out)}
            tps[who] = {k: e["tps_median"] for k, e in mint.items()}
    return tps, mint


def model_path(name, t):
    for cand in ("%s-%s.gguf" % (name, t), "%s-%s.gguf" % (name, t.lower())):
        if os.path.exists(os.path.join(models_dir, cand)):
            return os.path.join(models_dir, cand)
    return None


files = []  # (name, type, tag, path)
for name, t in [(n, t) for n in names for t in types]:
    model = model_path(name, t)
    if model is None:
        log("skipping %s %s (no %s-%s.gguf in %s)" % (name, t, name, t, models_dir))
        continue
    files.append((name, t, t if len(names) == 1 else "%s %s" % (name, t), model))

if not files:
    sys.exit("bench-vs-llama: no file of --types %s for --names %s in %s"
             % (" ".join(types), " ".join(names), models_dir))

# Per file and (threads, test): per runtime, its t/s in each round; for tg, the probe's bandwidth
# in each round (and its passes' range) and the bytes a token reads.
cells = {f[3]: {} for f in files}
for r in range(rounds):
    for name, t, tag, model in files:
        # Every second round runs the runtimes in reverse, so that going first favours no one.
        order = [w for w, _ in runtimes][:: -1 if r % 2 else 1]
        log("%s round %d/%d: %s" % (tag, r + 1, rounds, ", ".join(dict(runtimes)[w] for w in order)))
        tps, mint = measure_round(model, order)
        for key, e in mint.items():
            c = cells[model].setdefault(key, {"tps": {w: [] for w, _ in runtimes}, "bw": [],
                                              "bw_lo": [], "bw_hi": [], "bytes": e["bytes_per_token"],
                                              "kvpos": e["kv_bytes_per_position"]})
            for w, _ in runtimes:
                c["tps"][w].append(tps[w].get(key, NAN))
            c["bw"].append(e["membw_gbps"])
            c["bw_lo"].append(e.get("membw_min_gbps", e["membw_gbps"]))
            c["bw_hi"].append(e.get("membw_max_gbps", e["membw_gbps"]))

extra = []  # ttft / rss per file
for name, t, tag, model in files if do_ttft else []:
    size = os.path.getsize(model)
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
    kvpos = max([c["kvpos"] for c in cells[model].values()] + [0])  # the tg rows carry it
    extra.append({"type": tag, "size": size, "ttft": {w: statistics.median(v) for w, v in walls.items()},
                  "rss": rss, "kv": kvpos * 128})

# --- the tables -------------------------------------------------------------------------------

command = " ".join(shlex.quote(x) for x in [script] + sys.argv[3:])
if "MINT_BIN_DIR" in os.environ:
    command = "MINT_BIN_DIR=%s %s" % (shlex.quote(os.environ["MINT_BIN_DIR"]), command)
peers_run = "; ".join(["llama.cpp's llama-bench without mmap (-mmp 0)"] +
                      (["ik_llama.cpp's with -rtr 1 -fmoe 1 -mmp 0"] if ik_bin else []) + ["mint-bench"])
print("`%s`" % command)
print()
print("- Run %s, %d round%s. In each, type by type: %s, in reverse order every second round; "
      "-p 512 -n 128 -t 1,2 -r %d, f16 KV cache." % (started, rounds, "" if rounds == 1 else "s",
                                                     peers_run, reps))
print("- A cell is the median of the rounds' figures (each the median of its -r repetitions), "
      "their range in brackets. A ratio is of the medians: \"ahead\" when mint's slowest round "
      "beat the other's median, \"behind\" when mint's fastest round fell below it, else \"even\".")
print("- The bound: each round's bandwidth probe (mint-bench, before it loads the model, at that "
      "thread count: a 1 GiB buffer streamed as a one-token matmul streams weights, median of 5 "
      "passes) / the bytes a generated token reads (mint-bench's figure for the file, used for "
      "every runtime). A share is that round's tokens/s x bytes / that round's bandwidth.")
if rounds < MIN_ROUNDS:
    print("- **Warning: --quick, %d round%s: a smoke run of the script. One round proves nothing; "
          "ahead and behind need %d rounds or more.**" % (rounds, "" if rounds == 1 else "s",
                                                          MIN_ROUNDS))
print()

multi = len(names) > 1
peers = [(w, h) for w, h in runtimes if w != "mint"]
head = (["model"] if multi else []) + ["type", "file", "test", "threads"]
head += ["%s t/s" % h for _, h in runtimes] + ["mint / %s" % h for _, h in peers]
head += ["probe GB/s", "bound t/s"] + ["%s of bound" % h for _, h in runtimes]
print("| " + " | ".join(head) + " |")
print("|" + "|".join("---" if h in ("model", "type", "test") else "---:" for h in head) + "|")
probe_ranges = {}  # threads -> [lowest pass, highest pass] over the rounds
for name, t, tag, model in files:
    keys = sorted(cells[model], key=lambda k: (not k[1].startswith("pp"), k[1], k[0]))
    for key in keys:
        th, test = key
        c = cells[model][key]
        row = ([name] if multi else []) + [t, "%.2f GiB" % (os.path.getsize(model) / 2**30), test, str(th)]
        row += [cell(c["tps"][w]) for w, _ in runtimes]
        row += [versus(c["tps"]["mint"], c["tps"][w]) for w, _ in peers]
        if test.startswith("tg") and any(bw > 0 for bw in c["bw"]):
            b = c["bytes"]
            row += [cell(c["bw"], "%.1f"), cell(c["bw"], "%.1f", 1e9 / b)]
            row += [cell([x * b / (bw * 1e9) if bw > 0 else NAN for x, bw in zip(c["tps"][w], c["bw"])],
                         "%.0f", 100, "%") for w, _ in runtimes]
            rng = probe_ranges.setdefault(th, [min(c["bw_lo"]), max(c["bw_hi"])])
            rng[0], rng[1] = min(rng[0], min(c["bw_lo"])), max(rng[1], max(c["bw_hi"]))
        else:
            row += ["-"] * (2 + len(runtimes))
        print("| " + " | ".join(row) + " |")
if probe_ranges:
    print()
    print("The probe's single passes ranged %s." % "; ".join(
        "%.1f-%.1f GB/s with %d thread%s" % (lo, hi, th, "" if th == 1 else "s")
        for th, (lo, hi) in sorted(probe_ranges.items())))

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
