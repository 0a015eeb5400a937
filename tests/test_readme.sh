#!/bin/sh
# test_readme.sh - the README's examples, run as a reader would run them from a fresh clone.
# Every fenced block of README.md and of the docs pages (docs/*.md; not docs/formats.md, whose
# blocks are byte layouts and formulas, not commands) is recognised by its content and either run
# and checked, or named with the reason it is not run here (it downloads a model, it is the
# command running this test, or it needs llama.cpp); a block this script does not recognise
# fails it, so a new example comes with its check. What is checked:
#   - the set-up block: tools/scripts/quickstart.sh (on this build, 24 tokens) prints
#     stories260K's text;
#   - "Run a model you downloaded": its mint-run lines, on models/stories260K.gguf in place of the
#     downloaded file: the -p line prints the prompt and goes on, the -cnv line answers a turn
#     read from stdin (with the zephyr template, which stories260K lacks);
#   - a "$ command" transcript: the command's output begins with the text shown (up to "...");
#   - the --trace sample: mint-run --trace prints the same kinds of lines (header, kv, sample);
#   - the mint-serve block: the server and the curl line, on a free loopback port, answer JSON;
#   - the C fragments: compiled against include/mint.h and run on models/stories260K.gguf inside
#     a small main() that declares what they use (model, ctx, sampler, prompt, next, pos, err);
#   - the Python lines: libmint installed into a temporary prefix, the package installed with
#     pip --no-index --target, and the Python example run: its first print is the README's ids.
# ctest runs it with MINT_SOURCE_DIR and MINT_BIN_DIR (CMakeLists.txt); nothing outside the
# repository is needed, no network, and every server is on 127.0.0.1 with a time bound.
set -eu
src=${MINT_SOURCE_DIR:?MINT_SOURCE_DIR is not set (ctest sets it)}
bin=${MINT_BIN_DIR:?MINT_BIN_DIR is not set (ctest sets it)}
bin=$(cd "$bin" && pwd)
cd "$src"
tmp=$(mktemp -d)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
passed=0
failed=0
ok() { echo "PASS: $1"; passed=$((passed + 1)); }
ko() { echo "FAIL: $1"; failed=$((failed + 1)); }
skip() { echo "NOT RUN HERE: $1"; }
model=models/stories260K.gguf

# This build's settings, so that tools/scripts/build.sh (run by the quick start) finds nothing
# to do.
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$bin/CMakeCache.txt"; }
build_type=$(cache_get CMAKE_BUILD_TYPE)
werror=$(cache_get MINT_WERROR)
sanitize=$(cache_get MINT_SANITIZE)
san_flags=""
[ -n "$sanitize" ] && san_flags="-fsanitize=$sanitize"

# The blocks: $tmp/blocks/NN/LINE.LANG, NN the page's rank (README.md first, then docs/*.md in
# name order), LINE the fence's line in it; $tmp/blocks/NN/page holds the page's path.
pages="README.md"
for d in docs/*.md; do
    case $d in docs/formats.md) ;; *) pages="$pages $d" ;; esac
done
n=0
for page in $pages; do
    n=$((n + 1))
    dir=$(printf '%s/blocks/%02d' "$tmp" "$n")
    mkdir -p "$dir"
    echo "$page" >"$dir/page"
    awk -v dir="$dir" '
        /^```/ && !inb { inb = 1; lang = substr($0, 4); if (lang == "") lang = "text";
                         f = sprintf("%s/%04d.%s", dir, NR, lang); printf "" > f; next }
        /^```/ && inb { inb = 0; close(f); next }
        inb { print > f }
    ' "$page"
done

# tools/scripts/quickstart.sh on this build: it builds (nothing to do) and prints the default
# model's text.
run_setup() {
    out=$(MINT_BUILD_DIR="$bin" MINT_BUILD_TYPE="$build_type" MINT_WERROR="${werror:-OFF}" \
        MINT_N=24 tools/scripts/quickstart.sh 2>"$tmp/qs.err") || {
        cat "$tmp/qs.err"
        ko "$1 tools/scripts/quickstart.sh exits 0"
        return
    }
    if printf '%s' "$out" | head -n 1 | grep -q '^Once upon a time' &&
        grep -q "mint: model $model" "$tmp/qs.err"; then
        ok "$1 tools/scripts/quickstart.sh generates from $model"
    else
        printf '%s\n' "$out"
        cat "$tmp/qs.err"
        ko "$1 tools/scripts/quickstart.sh generates from $model"
    fi
    skip "$1 tools/scripts/test.sh (the command that runs this test)"
}

# "$ command" then its output: the output begins with the text shown before "...", compared with
# the README's line breaks (it wraps at 100 columns) taken as spaces.
run_transcript() {
    cmd=$(head -n 1 "$2" | sed 's/^\$ //; s#^build/#'"$bin"'/#')
    expect=$(sed -n '2,$p' "$2" | sed '/^\.\.\.$/,$d' | tr '\n' ' ' | tr -s ' ' | sed 's/ $//')
    got=$(sh -c "$cmd" 2>/dev/null | tr '\n' ' ' | tr -s ' ')
    case $got in
    "$expect"*) ok "$1 '$(head -n 1 "$2")' prints the text shown" ;;
    *)
        printf 'expected: %s\ngot:      %s\n' "$expect" "$got"
        ko "$1 '$(head -n 1 "$2")' prints the text shown"
        ;;
    esac
}

# "Run a model you downloaded": each build/mint-run line on the tiny model instead of the file the
# reader downloaded; the -cnv line gets a turn on stdin, and the zephyr template (the tiny model
# has none) and a bound on the reply.
run_downloaded() {
    i=0
    while IFS= read -r l; do
        case $l in build/mint-run\ *) ;; *) continue ;; esac
        i=$((i + 1))
        cmd=$(printf '%s' "$l" | sed 's#^build/#'"$bin"'/#; s#-m [^ ]*\.gguf#-m '"$model"'#')
        case $l in
        *-cnv*)
            got=$(echo "Tell me a story" | timeout 60 sh -c "$cmd --chat-template zephyr -n 16" 2>"$tmp/dl.err") ||
                got=""
            if [ -n "$(printf '%s' "$got" | tr -d '[:space:]')" ]; then
                ok "$1 '$l' answers a turn (on $model)"
            else
                cat "$tmp/dl.err"
                ko "$1 '$l' answers a turn (on $model)"
            fi
            ;;
        *)
            prompt=$(printf '%s' "$l" | sed -n 's/.* -p "\([^"]*\)".*/\1/p')
            got=$(timeout 60 sh -c "$cmd" 2>"$tmp/dl.err") || got=""
            case $got in
            "$prompt"?*) ok "$1 '$l' generates (on $model)" ;;
            *)
                cat "$tmp/dl.err"
                printf 'got: %s\n' "$got"
                ko "$1 '$l' generates (on $model)"
                ;;
            esac
            ;;
        esac
    done <"$2"
    [ "$i" -gt 0 ] || ko "$1 a mint-run block without a build/mint-run line"
}

# The --trace sample: the same kinds of line come out of a real run.
run_trace() {
    "$bin/mint-run" -m "$model" -p "Once upon a time" -n 2 --trace >/dev/null 2>"$tmp/trace" || true
    missing=""
    for pat in '^\[trace\] batch [0-9]+: [0-9]+ tokens? at positions' \
        '^\[trace\] +# +op +name +rows +width +weight +act +MB read +ms +thr' \
        '^\[trace\] +[0-9]+ +MATMUL +blk\.0\.attn_q ' \
        '^\[trace\] kv cache: [0-9]+ positions held; blocks of [0-9]+:' \
        '^\[trace\] sample 1: [0-9]+ candidates -> top-k [0-9]+ -> top-p [0-9]+ -> min-p [0-9]+; drew token'; do
        grep -Eq "$pat" "$tmp/trace" || missing="$missing
  $pat"
    done
    if [ -z "$missing" ]; then ok "$1 mint-run --trace prints the lines shown"; else
        head -n 20 "$tmp/trace"
        ko "$1 mint-run --trace lacks:$missing"
    fi
}

# The mint-serve lines, on a free loopback port instead of 8080.
run_serve() {
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    start=$(grep 'mint-serve' "$2" | sed 's/ &$//; s#^build/#'"$bin"'/#')
    req=$(sed -n '/^curl/,$p' "$2" | sed 's/\\$//' | tr '\n' ' ' | sed "s/localhost:8080/127.0.0.1:$port/")
    # shellcheck disable=SC2086
    sh -c "exec $start --host 127.0.0.1 --port $port" >/dev/null 2>"$tmp/serve.err" &
    server=$!
    up=0
    for _ in $(seq 1 100); do
        curl -sf "127.0.0.1:$port/health" >/dev/null 2>&1 && { up=1; break; }
        sleep 0.1
    done
    got=""
    [ "$up" = 1 ] && got=$(timeout 60 sh -c "$req" || true)
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=""
    if printf '%s' "$got" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["choices"][0]["message"]["content"]' 2>/dev/null; then
        ok "$1 mint-serve and the curl line answer a chat completion"
    else
        cat "$tmp/serve.err"
        printf 'answer: %s\n' "$got"
        ko "$1 mint-serve and the curl line answer a chat completion"
    fi
}

# A C fragment inside a main() that opens the model and declares what the fragments use.
run_c() {
    cat >"$tmp/frag.c" <<EOF
#include <mint.h>
#include <stdio.h>
int main(void) {
    mint_err err;
    mint_model *model;
    if (mint_model_open("$model", NULL, &model, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    mint_model_desc d;
    mint_model_describe(model, &d);
    const int32_t prompt[] = {1, 403, 407, 261, 378}; // "Once upon a time"
    const int32_t n_prompt = 5;
    int32_t next[4] = {261, 262, 263, 264}, pos = n_prompt;
    mint_ctx_params cp0 = mint_ctx_default_params();
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0;
    mint_ctx *ctx;
    mint_sampler *sampler;
    if (mint_ctx_create(model, &cp0, &ctx, &err) || mint_sampler_create(&sp, d.n_vocab, &sampler, &err) ||
        mint_eval(ctx, prompt, n_prompt, 0, false, &err))
        return fprintf(stderr, "%s\n", err.msg), 1;
    {
#include "$2"
    }
    (void)next, (void)pos;
    mint_sampler_free(sampler);
    mint_ctx_free(ctx);
    mint_model_close(model);
    printf("\n[fragment done]\n");
    return 0;
}
EOF
    # shellcheck disable=SC2086
    if ! cc -std=c11 -Wall -Werror $san_flags -I include "$tmp/frag.c" -o "$tmp/frag" \
        -L"$bin" -lmint -Wl,-rpath,"$bin" 2>"$tmp/cc.err"; then
        cat "$tmp/cc.err"
        ko "$1 the C fragment compiles against include/mint.h"
        return
    fi
    # The fragments are excerpts: the decode one does not free the context it makes.
    if ASAN_OPTIONS=detect_leaks=0 "$tmp/frag" >"$tmp/frag.out" 2>"$tmp/frag.err" && grep -q '^\[fragment done\]$' "$tmp/frag.out"; then
        ok "$1 the C fragment compiles and runs on $model"
    else
        cat "$tmp/frag.err"
        ko "$1 the C fragment runs on $model"
        return
    fi
    # The generation loop prints the greedy continuation mint-run prints.
    if grep -q mint_gen_step "$2"; then
        text=$(sed '/^\[fragment done\]$/d' "$tmp/frag.out" | tr '\n' ' ' | tr -s ' ' | sed 's/ *$//')
        run=$("$bin/mint-run" -m "$model" -p "Once upon a time" -n 64 --temp 0 2>/dev/null | tr '\n' ' ' | tr -s ' ')
        case $run in
        "Once upon a time$text"*) ok "$1 the generation loop prints mint-run's greedy text" ;;
        *)
            printf 'loop:     %s\nmint-run: %s\n' "$text" "$run"
            ko "$1 the generation loop prints mint-run's greedy text"
            ;;
        esac
    fi
}

# The Python install lines with P and DIR in a temporary directory, then the Python example.
py_site=""
run_py_install() {
    if [ -n "$sanitize" ]; then
        skip "$1 Python install (a sanitized libmint needs its runtime preloaded into Python)"
        return
    fi
    P="$tmp/prefix"
    if cmake --install "$bin" --prefix "$P" >"$tmp/inst.log" 2>&1 &&
        MINT_PREFIX=$P python3 -m pip install -q --no-index --target "$tmp/site" ./bindings/python \
            >>"$tmp/inst.log" 2>&1; then
        py_site="$tmp/site"
        ok "$1 libmint and the Python package install offline (prefix and --target)"
    else
        cat "$tmp/inst.log"
        ko "$1 libmint and the Python package install offline (prefix and --target)"
    fi
}
run_python() {
    if [ -z "$py_site" ]; then
        skip "$1 the Python example (its install block did not run)"
        return
    fi
    want=$(grep -m 1 'print(m.tokenize' "$2" | sed 's/.*# *//')
    if PYTHONPATH="$py_site" timeout 120 python3 "$2" >"$tmp/py.out" 2>"$tmp/py.err" &&
        [ "$(head -n 1 "$tmp/py.out")" = "$want" ]; then
        ok "$1 the Python example runs; its first line is $want"
    else
        cat "$tmp/py.out" "$tmp/py.err"
        ko "$1 the Python example runs; its first line is $want"
    fi
}

# The pages' order, and each page's: the Python example needs its install block first.
for f in "$tmp"/blocks/*/*.*; do
    base=$(basename "$f")
    line=${base%%.*}
    line=${line#"${line%%[!0]*}"}
    lang=${base#*.}
    where="$(cat "$(dirname "$f")/page"):$line"
    case $lang in
    sh)
        if grep -q 'tools/scripts/quickstart.sh' "$f"; then run_setup "$where"
        elif grep -Eq 'huggingface\.co|huggingface-cli' "$f"; then
            skip "$where downloading a model from Hugging Face (hundreds of MB; this test runs offline, so nothing is downloaded here: the next block runs on the tiny model instead)"
        elif grep -q 'mint-serve' "$f"; then run_serve "$where" "$f"
        elif grep -q '^build/mint-run ' "$f"; then run_downloaded "$where" "$f"
        elif grep -q 'pip install' "$f"; then run_py_install "$where"
        elif grep -q 'bench-vs-llama' "$f"; then
            skip "$where tools/bench/bench-vs-llama.sh (needs a llama.cpp build and model files)"
        elif grep -q 'cmake --install build' "$f" && grep -q pkg-config "$f"; then
            skip "$where system-wide install (tests/test_install.c runs these lines into a temporary prefix)"
        else ko "$where an sh block this test does not know: give it a check here"; fi
        ;;
    c) run_c "$where" "$f" ;;
    python) run_python "$where" "$f" ;;
    text)
        if head -n 1 "$f" | grep -q '^\$ '; then run_transcript "$where" "$f"
        elif grep -q '^\[trace\]' "$f"; then run_trace "$where"
        else ko "$where a block this test does not know: give it a check here"; fi
        ;;
    *) ko "$where a $lang block this test does not know: give it a check here" ;;
    esac
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
