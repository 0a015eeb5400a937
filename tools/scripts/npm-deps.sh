#!/bin/sh
# npm-deps.sh - installs the Node packages the server's client tests use (OpenAI's official client
# `openai`, and `playwright-core` to drive Debian's Chromium) OUTSIDE the repository, into
# $MINT_NPM_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/mint/npm), and prints that folder. The
# tests find the packages in <that folder>/node_modules. Nothing is downloaded when the pinned
# versions are there complete. playwright-core brings no browser of its own.
#
# Safe to run several at once (Criterion runs the test cases in parallel processes): one holds
# an exclusive lock on <folder>/.lock while it checks and installs, the others wait and then find
# the install done. npm installs into a temporary folder beside node_modules, which is renamed
# into place only once the packages load, with a marker written last that lists the files: a run
# killed halfway, or a node_modules damaged since (no marker, a file missing or of another size)
# is installed again instead of used.
set -eu
dir=${MINT_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mint/npm}
# Pinned: the tests were written against these.
openai=5.7.0
playwright=1.65.1
pins="openai@$openai playwright-core@$playwright"
marker=.mint-npm-deps # in node_modules, holding $pins
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "npm-deps.sh: node or npm not found (Debian: apt-get install nodejs npm)" >&2
    exit 2
fi
if ! command -v flock >/dev/null; then
    echo "npm-deps.sh: flock not found (Debian: apt-get install util-linux)" >&2
    exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
exec 9>"$dir/.lock"
if ! flock -w 900 9; then
    echo "npm-deps.sh: waited 900 s for another install into $dir (lock $dir/.lock)" >&2
    exit 1
fi

# The files under NODE_MODULES with their sizes, as one checksum (the marker is left out).
listing() {
    (cd "$1" && find . ! -name "$marker" \( -type f -o -type l \) -printf '%P %s\n') |
        LC_ALL=C sort | cksum
}

# usable NODE_MODULES: the marker names these pins and the files that were there when the
# install finished, every one still there with its size (a few ms for its ~1800 files).
usable() {
    [ -f "$1/$marker" ] && [ "$(cat "$1/$marker")" = "$pins
$(listing "$1")" ]
}

# loads NODE_MODULES: both packages are these versions and load (require() runs their main
# files, which is where a half-copied package fails); seconds, so only for a new install.
# shellcheck disable=SC2086 # $pins: one argument per package
loads() {
    node -e '
const { createRequire } = require("node:module");
const { readFileSync } = require("node:fs");
const [dir, ...want] = process.argv.slice(1);
const r = createRequire(dir + "/x.js");
for (const w of want) {
  const at = w.lastIndexOf("@"), name = w.slice(0, at);
  const v = JSON.parse(readFileSync(dir + "/" + name + "/package.json", "utf8")).version;
  if (v !== w.slice(at + 1)) throw new Error(name + " is " + v);
  r(name);
}' "$1" $pins 9>&-
}

if ! usable "$dir/node_modules"; then
    # Leftovers of runs killed before they finished (none is running: we hold the lock).
    rm -rf "$dir"/.install.* "$dir"/.old.* 2>/dev/null || :
    tmp=$(mktemp -d "$dir/.install.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 1' INT TERM HUP
    # Its own package.json, or npm would walk up and install into $dir.
    echo '{"name":"mint-test-deps","private":true}' >"$tmp/package.json"
    (cd "$tmp" && npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error \
        "openai@$openai" "playwright-core@$playwright" >&2 9>&-)
    if ! loads "$tmp/node_modules" >&2; then
        echo "npm-deps.sh: npm installed $pins into $tmp but they do not load" >&2
        exit 1
    fi
    # Last: what makes the install usable.
    sum=$(listing "$tmp/node_modules")
    printf '%s\n%s\n' "$pins" "$sum" >"$tmp/node_modules/$marker"
    # A directory cannot be renamed over a non-empty one: the damaged one goes aside first.
    if [ -e "$dir/node_modules" ] || [ -L "$dir/node_modules" ]; then
        old=$(mktemp -d "$dir/.old.XXXXXX")
        mv "$dir/node_modules" "$old/"
    fi
    mv "$tmp/node_modules" "$dir/node_modules"
    rm -rf "$tmp" ${old:+"$old"}
fi
echo "$dir"
