#!/bin/sh
# make_imatrix_llama.sh - remakes imatrix_llama.json: llama-imatrix's sums on three tiny synthetic
# models (dense, a mixture, one with an output head) and 20000 bytes of WikiText-2, reduced to a
# few numbers per matrix (counts, the sum of in_sum2, six columns) for tests/test_imatrix_llama.c.
#   tests/reference/make_imatrix_llama.sh LLAMA_BIN_DIR MINT_BUILD_DIR DATA_DIR
# F32 K/V cache and no flash attention: the configuration mint's F32 path agrees with to float
# rounding (docs/tolerances.md).
set -eu
llama=$1 mint=$2 data=$3
out=$(cd "$(dirname "$0")" && pwd)/imatrix_llama.json
tmp=$(mktemp -d)
head -c 20000 "$data/wiki.test.raw" >"$tmp/wiki20k.txt"
for arch in llama3 qwen3moe phi3; do
    "$mint/mint-quantize" --synthetic $arch --shape tiny --type F32 --seed 1 -o "$tmp/$arch.gguf" >/dev/null
    extra=""
    [ $arch = phi3 ] && extra=--process-output
    "$llama/llama-imatrix" -m "$tmp/$arch.gguf" -f "$tmp/wiki20k.txt" -c 128 --chunks 4 -b 128 -t 1 \
        -ctk f32 -ctv f32 -fa off $extra -o "$tmp/$arch.imatrix.gguf" >/dev/null 2>&1
done
python3 - "$tmp" "$out" "$(cd "$llama/../.." && git rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY'
import array, hashlib, json, struct, sys
tmp, out, commit = sys.argv[1:4]
def read_gguf(path):
    b = open(path, 'rb').read(); o = 4
    def take(f):
        nonlocal o; v = struct.unpack_from('<' + f, b, o)[0]; o += struct.calcsize(f); return v
    def s():
        nonlocal o; n = take('Q'); v = b[o:o + n].decode(); o += n; return v
    fm = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}
    def val(t):
        if t == 8: return s()
        if t == 9:
            et = take('I'); n = take('Q'); return [val(et) for _ in range(n)]
        return take(fm[t])
    take('I'); nt = take('Q'); nkv = take('Q'); kv = {}
    for _ in range(nkv):
        k = s(); kv[k] = val(take('I'))
    ts = []
    for _ in range(nt):
        n = s(); nd = take('I'); ne = [take('Q') for _ in range(nd)]; take('I'); ts.append((n, ne, take('Q')))
    al = kv.get('general.alignment', 32); data = (o + al - 1) // al * al; t = {}
    for n, ne, off in ts:
        c = 1
        for x in ne: c *= x
        a = array.array('f'); a.frombytes(b[data + off:data + off + 4 * c]); t[n] = list(a)
    return kv, t
cases = []
for arch in ['llama3', 'qwen3moe', 'phi3']:
    kv, t = read_gguf(f'{tmp}/{arch}.imatrix.gguf')
    entries = {}
    for n in sorted(t):
        if not n.endswith('.in_sum2'): continue
        name = n[:-len('.in_sum2')]; v = t[n]; c = t[name + '.counts']
        cols = sorted(set([0, 1, 2, len(v) // 3, len(v) // 2, len(v) - 1]))
        entries[name] = {'n_vals': len(v), 'counts': [int(x) for x in c], 'sum': sum(v),
                         'columns': cols, 'values': [v[i] for i in cols]}
    sha = hashlib.sha256(open(f'{tmp}/{arch}.gguf', 'rb').read()).hexdigest()
    cases.append({'synthetic': arch, 'shape': 'tiny', 'type': 'F32', 'seed': 1, 'sha256': sha,
                  'process_output': arch == 'phi3', 'chunk_count': kv['imatrix.chunk_count'],
                  'chunk_size': kv['imatrix.chunk_size'], 'entries': entries})
doc = {'format': 'mint-imatrix-reference/1',
       'llama_cpp': commit,
       'text': 'the first 20000 bytes of wiki.test.raw (MINT_TEST_DATA)',
       'command': 'llama-imatrix -m ARCH.gguf -f wiki20k.txt -c 128 --chunks 4 -b 128 -t 1 '
                  '-ctk f32 -ctv f32 -fa off [--process-output for phi3] -o ARCH.imatrix.gguf; '
                  'ARCH.gguf: mint-quantize --synthetic ARCH --shape tiny --type F32 --seed 1',
       'made_by': 'tests/reference/make_imatrix_llama.sh',
       'n_ctx': 128, 'chunks': 4, 'cases': cases}
json.dump(doc, open(out, 'w'), indent=1)
PY
rm -rf "$tmp"
echo "wrote $out"
