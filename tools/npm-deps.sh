#!/bin/sh
# npm-deps.sh - installs the Node packages the server's client tests use (OpenAI's official client
# `openai`, and `playwright-core` to drive Debian's Chromium) OUTSIDE the repository, into
# $MINT_NPM_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/mint/npm), and prints that folder. The
# tests find the packages through NODE_PATH=<that folder>/node_modules. Nothing is downloaded
# when the pinned versions are already there. playwright-core brings no browser of its own.
set -eu
dir=${MINT_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mint/npm}
# Pinned: the tests were written against these.
openai=5.7.0
playwright=1.65.1
if ! command -v npm >/dev/null; then
    echo "npm-deps.sh: npm not found (Debian: apt-get install nodejs npm)" >&2
    exit 2
fi
mkdir -p "$dir"
have() { # name version
    f=$dir/node_modules/$1/package.json
    [ -f "$f" ] && grep -q "\"version\": *\"$2\"" "$f"
}
if ! have openai "$openai" || ! have playwright-core "$playwright"; then
    [ -f "$dir/package.json" ] || echo '{"name":"mint-test-deps","private":true}' >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error \
        "openai@$openai" "playwright-core@$playwright" >&2)
fi
echo "$dir"
