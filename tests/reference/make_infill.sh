#!/bin/sh
# make_infill.sh MINT_BUILD LLAMA_BIN DATA > infill.json - llama-server's answers to POST /infill
# (tests/test_serve_infill.c's oracle; tests/reference/README.md). Writes four synthetic models
# (random weights over real vocabularies) into a temporary folder, starts LLAMA_BIN/llama-server
# on each with the flags of a case, posts the bodies with "n_predict": 1 and keeps
# tokens_evaluated and the prompt as llama-server shows it (its tokens' text), or the error
# (its message, and n_prompt_tokens for a prompt longer than the context).
set -eu
build=$1 llama=$2 data=$3
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
pid=
synth() { "$build/mint-quantize" --synthetic qwen2 --shape tiny --vocab "$data/vocab/$1" -o "$tmp/$2" 2>/dev/null; }
synth ggml-vocab-starcoder.gguf sc.gguf        # <fim_prefix>... found by text; no repo/file tokens
synth ggml-vocab-deepseek-coder.gguf ds.gguf   # <｜fim▁begin｜>... by text, and BOS
synth ggml-vocab-gpt-2.gguf nofim.gguf         # no FIM tokens
# sc.gguf with tokenizer.ggml.fim_rep_token_id / fim_sep_token_id (<repo_name> 5, <file_sep> 6)
# put in front of the other keys, padded to the data alignment so the rest is copied as it is.
python3 - "$tmp/sc.gguf" "$tmp/screp.gguf" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
assert magic == b"GGUF" and version == 3
def rec(k, typ, payload):
    kb = k.encode()
    return struct.pack("<Q", len(kb)) + kb + struct.pack("<I", typ) + payload
ins = rec("tokenizer.ggml.fim_rep_token_id", 4, struct.pack("<I", 5))
ins += rec("tokenizer.ggml.fim_sep_token_id", 4, struct.pack("<I", 6))
pad = (-(len(ins) + len(rec("general.comment", 8, struct.pack("<Q", 0))))) % 32
ins += rec("general.comment", 8, struct.pack("<Q", pad) + b"x" * pad)
open(sys.argv[2], "wb").write(struct.pack("<4sIQQ", magic, version, n_tensors, n_kv + 3) + ins + data[24:])
PY
python3 - > "$tmp/bodies.json" <<'PY'
import json
pre = "".join(f"line {i} = compute({i}, 'alpha beta')\n" for i in range(40))
suf = "".join(f"assert check({i})\n" for i in range(30))
extra = [{"filename": f"mod{k}.py", "text": "".join(f"def f{k}_{i}(x): return x*{i}\n" for i in range(25))} for k in range(4)]
print(json.dumps({
    "small": {"input_prefix": "def fib(n):\n    if n < 2:\n        return n\n", "input_suffix": "\nprint(fib(10))\n",
              "input_extra": [{"filename": "util.py", "text": "import os\n"}, {"text": "x = 1\n"}], "prompt": "    return"},
    "long": {"input_prefix": pre, "input_suffix": suf, "input_extra": extra, "prompt": "    # <fim_pad> next"},
    "mixed": {"input_prefix": ["abc ", 17, "def"], "input_suffix": [5, "ghi"]},
}))
PY
port=18321
echo '{"bodies":'; cat "$tmp/bodies.json"; echo ',"cases":['
sep=
while read -r model flags; do
    "$llama/llama-server" -m "$tmp/$model" --no-mmap --host 127.0.0.1 --port $port -t 1 \
        --parallel 1 $flags >"$tmp/log" 2>&1 &
    pid=$!
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.2; done
    for body in small long mixed; do
        req=$(python3 -c "import json,sys; b=json.load(open(sys.argv[1]))[sys.argv[2]]; b.update(n_predict=1, temperature=0); print(json.dumps(b))" "$tmp/bodies.json" $body)
        ans=$(curl -s -w '\n%{http_code}' "http://127.0.0.1:$port/infill" -d "$req")
        printf '%s' "$sep"; sep=,
        printf '%s' "$ans" | python3 -c "
import json, sys
text, status = sys.stdin.read().rsplit('\n', 1)
d = json.loads(text)
out = {'model': sys.argv[1], 'flags': sys.argv[2], 'body': sys.argv[3], 'status': int(status)}
if 'error' in d: out.update(message=d['error']['message'], n_prompt_tokens=d['error'].get('n_prompt_tokens'))
else: out.update(tokens_evaluated=d['tokens_evaluated'], prompt=d['prompt'])
print(json.dumps(out, ensure_ascii=False))" "$model" "$flags" $body
    done
    kill $pid; wait $pid 2>/dev/null || true; pid=
done <<'CASES'
sc.gguf -c 512 -b 64 -n 100
sc.gguf -c 512
screp.gguf -c 512 -b 64 -n 100
screp.gguf -c 1024 -b 128
ds.gguf -c 512 -b 64 --spm-infill
nofim.gguf -c 512
CASES
echo ']}'
