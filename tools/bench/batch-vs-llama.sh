#!/bin/sh
# batch-vs-llama.sh - many sequences decoded together, mint against a native llama.cpp build in
# one run: the many-sequences table of docs/many-sequences.md. Builds nothing: mint-bench comes
# from MINT_BIN_DIR (default: the repository's build/), llama-batched-bench from the folder
# given.
#
#   tools/bench/batch-vs-llama.sh LLAMA_BIN_DIR MODELS_DIR [options] > table.md
#
# MODELS_DIR holds tinyllama-<TYPE>.gguf (mint-quantize --synthetic tinyllama --type TYPE
# --vocab tokenizer.model --seed 1). Per type and round, llama-batched-bench (-c 4096 -b 2048
# -ub 512 -npp 128 -ntg 64 -npl LIST -t T --no-mmap: on these VMs its mmap-backed weights slow
# down within a run; f16 KV cache, its default) and mint-bench (-p 0 -n 64 --n-seq LIST
# --seq-prompt 128 --kv-type f16 -t T -r 1) alternate. A cell is the aggregate generation speed
# (tokens/s of all sequences together; llama.cpp's S_TG), the rounds' figures side by side;
# the last columns are mint / llama.cpp and mint / mint's own single stream at 8 and 16
# sequences, from the rounds' medians.
#
# Options: --types "Q4_0 ..." (default Q4_0 Q4_K_M Q8_0), --name NAME (MODELS_DIR holds
# NAME-<TYPE>.gguf instead, e.g. olmoe-real), --npl LIST (default 1,2,4,8,16),
# --rounds N (default 2), -t N (default 2). Needs python3 (standard library only). Progress
# goes to stderr.
set -eu
if [ $# -lt 2 ]; then
    sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
LLAMA_BIN=$1
MODELS=$2
shift 2
MINT_BIN=${MINT_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
for p in "$LLAMA_BIN/llama-batched-bench" "$MINT_BIN/mint-bench"; do
    [ -x "$p" ] || { echo "batch-vs-llama: $p not found (build it first)" >&2; exit 2; }
done
export LD_LIBRARY_PATH="$LLAMA_BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec python3 - "$LLAMA_BIN" "$MODELS" "$MINT_BIN" "$@" <<'PYTHON'
import json, os, statistics, subprocess, sys

llama_bin, models_dir, mint_bin = sys.argv[1:4]
args = sys.argv[4:]
types, npl, rounds, threads = "Q4_0 Q4_K_M Q8_0".split(), "1,2,4,8,16", 2, "2"
name = "tinyllama"
i = 0
while i < len(args):
    a = args[i]
    if i + 1 >= len(args):
        sys.exit("batch-vs-llama: %s needs a value" % a)
    v = args[i + 1]
    if a == "--types":
        types = v.split()
    elif a == "--npl":
        npl = v
    elif a == "--rounds":
        rounds = int(v)
    elif a == "-t":
        threads = v
    elif a == "--name":
        name = v
    else:
        sys.exit("batch-vs-llama: unknown option %s" % a)
    i += 2
seqs = [int(x) for x in npl.split(",")]


def run(cmd):
    print("batch-vs-llama: " + " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("batch-vs-llama: %s failed (exit %d): %s" % (cmd[0], p.returncode,
                                                              p.stderr.strip()[-400:]))
    return p.stdout + p.stderr


def llama(model):
    out = run([os.path.join(llama_bin, "llama-batched-bench"), "-m", model, "-c", "4096", "-b",
               "2048", "-ub", "512", "-npp", "128", "-ntg", "64", "-npl", npl, "-t", threads,
               "--no-mmap"])
    got = {}
    for line in out.splitlines():
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(f) == 10 and f[2].isdigit():
            got[int(f[2])] = float(f[7])  # B, S_TG t/s
    return got


def mint(model):
    out = run([os.path.join(mint_bin, "mint-bench"), "-m", model, "-o", "json", "-t", threads,
               "-p", "0", "-n", "64", "--n-seq", npl, "--seq-prompt", "128", "--kv-type", "f16",
               "-r", "1", "--membw-gib", "0"])
    got = {}
    for e in json.loads(out[out.index("["):out.rindex("]") + 1]):
        if " x" in e["test"]:
            got[e["n_seq"]] = e["tps_median"]
    return got


print("| type | runtime | " + " | ".join(str(s) for s in seqs) +
      " | mint / llama.cpp at 8, 16 | mint / own single stream at 8, 16 |")
print("|---|---|" + "---|" * len(seqs) + "---|---|")
for t in types:
    model = os.path.join(models_dir, "%s-%s.gguf" % (name, t))
    if not os.path.exists(model):
        sys.exit("batch-vs-llama: %s not found" % model)
    res = {"mint": [], "llama.cpp": []}
    for r in range(rounds):
        res["llama.cpp"].append(llama(model))
        res["mint"].append(mint(model))
    med = {k: {s: statistics.median(x[s] for x in v) for s in seqs} for k, v in res.items()}

    def ratio(a, b, s):
        return "%.2fx" % (a[s] / b[s]) if s in a and s in b and b[s] > 0 else "-"

    for k in ("mint", "llama.cpp"):
        cells = [" / ".join("%.0f" % x[s] for x in res[k]) for s in seqs]
        extra = ["", ""]
        if k == "mint":
            extra = [", ".join(ratio(med["mint"], med["llama.cpp"], s) for s in (8, 16)),
                     ", ".join("%.2fx" % (med["mint"][s] / med["mint"][1])
                               if s in med["mint"] and 1 in med["mint"] else "-"
                               for s in (8, 16))]
        print("| %s | %s | %s | %s |" % (t, k, " | ".join(cells), " | ".join(extra)))
    sys.stdout.flush()
PYTHON
