#!/bin/sh
# count-tests.sh - how many Criterion cases each suite runs with and without MINT_TEST_DATA (the
# README's figures). Runs every suite twice; needs a built tree (default: build).
#   tools/scripts/count-tests.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
src=$(pwd)
data=${MINT_TEST_DATA:-$(cd ../shared/data 2>/dev/null && pwd || true)}
tested() { sed -n 's/.*Tested: \([0-9]*\).*/\1/p' | tail -n 1; }
with_all=0 without_all=0
printf '%-20s %10s %13s\n' suite "with data" "without data"
for t in "$build"/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    w=-
    if [ -n "$data" ]; then
        w=$(cd "$build" && MINT_TEST_DATA="$data" MINT_SOURCE_DIR="$src" MINT_BIN_DIR="$build" \
            "$t" -j2 2>&1 | tested)
        with_all=$((with_all + w))
    fi
    wo=$(cd "$build" && env -u MINT_TEST_DATA -u CI MINT_SOURCE_DIR="$src" MINT_BIN_DIR="$build" \
        "$t" -j2 2>&1 | tested)
    without_all=$((without_all + wo))
    printf '%-20s %10s %13s\n' "$name" "$w" "$wo"
done
printf '%-20s %10s %13s\n' total "$with_all" "$without_all"
