#!/bin/sh
# check-floors.sh - fails when an #include runs back up a floor, or a source file passes 800
# lines (docs/design.md). The floors, bottom up:
#   0 base/  1 quant/  2 formats/  3 ops/  4 runtime/text/  5 runtime/engine/
#   6 runtime/drivers/  7 tools/  8 tests/
# A file may include headers of its own floor and of floors below it. include/mint.h, the public
# contract (declarations only, no includes of mint's own), may be included from every floor.
set -eu
cd "$(dirname "$0")/.."

floor_of() {
    case "$1" in
    base/*) echo 0 ;;
    quant/*) echo 1 ;;
    formats/*) echo 2 ;;
    ops/*) echo 3 ;;
    runtime/text/*) echo 4 ;;
    runtime/engine/*) echo 5 ;;
    runtime/drivers/*) echo 6 ;;
    tools/*) echo 7 ;;
    tests/*) echo 8 ;;
    *) echo "" ;;
    esac
}

bad=0
files=$(git ls-files '*.c' '*.h')
for f in $files; do
    own=$(floor_of "$f")
    [ -n "$own" ] || continue
    # Every quoted include that names a floor folder.
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case "$inc" in
        mint.h | include/mint.h) continue ;;
        esac
        target=$(floor_of "$inc")
        [ -n "$target" ] || continue
        if [ "$target" -gt "$own" ]; then
            echo "check-floors: $f (floor $own) includes $inc (floor $target)" >&2
            bad=1
        fi
    done
    lines=$(wc -l <"$f")
    if [ "$lines" -gt 800 ]; then
        echo "check-floors: $f has $lines lines (over 800)" >&2
        bad=1
    fi
done
if [ "$bad" -ne 0 ]; then
    echo "check-floors: FAILED (see docs/design.md)" >&2
    exit 1
fi
echo "check-floors: every include points down a floor; no file over 800 lines"
