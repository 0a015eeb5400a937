#!/bin/sh
# test_floors.sh - tools/scripts/check-floors.sh passes on a copy of the tree and fails, naming the
# files, on the same copy with violations planted in it: a base/ function calling runtime/engine/
# (an upward call that no #include shows: mint.h is allowed everywhere), two ops/ files calling each
# other, two base/ headers including each other, and two Python modules importing each other.
# The copy's objects are the build's own (MINT_BIN_DIR), plus the planted files compiled here, so
# nothing is rebuilt. ctest runs it (CMakeLists.txt) with MINT_SOURCE_DIR and MINT_BIN_DIR set.
set -eu
src=${MINT_SOURCE_DIR:?MINT_SOURCE_DIR is not set (ctest sets it)}
bin=${MINT_BIN_DIR:?MINT_BIN_DIR is not set (ctest sets it)}
objs="$bin/CMakeFiles/mint_objects.dir"
[ -d "$objs" ] || { echo "test_floors: no objects in $objs (build the library first)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0
failed=0
ok() { echo "PASS: $1"; passed=$((passed + 1)); }
ko() { echo "FAIL: $1"; failed=$((failed + 1)); }

# The tree as git knows it (a copy without .git: the checker then lists the files itself).
tree="$tmp/tree"
mkdir -p "$tree"
(cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$tree")
mkdir -p "$tree/build/CMakeFiles"
cp -R "$objs" "$tree/build/CMakeFiles/"
check() { MINT_FLOORS_NO_BUILD=1 "$tree/tools/scripts/check-floors.sh" "$@" >"$tmp/out" 2>&1; }

# 1. The clean tree passes: includes, calls, circles.
if check --includes && check --symbols build; then ok "clean tree"; else
    cat "$tmp/out"
    ko "clean tree"
fi

# 2. An upward call: base/ calls mint_ctx_free, which runtime/engine/context.c defines.
cat >"$tree/base/planted_up.c" <<'C'
#include "mint.h"
void mint_planted_up(void);
void mint_planted_up(void) { mint_ctx_free(NULL); }
C
# 3. A circle of two files on one floor: ops/planted_a.c and ops/planted_b.c call each other.
cat >"$tree/ops/planted_a.c" <<'C'
int mint_planted_a(int n);
int mint_planted_b(int n);
int mint_planted_a(int n) { return n > 0 ? mint_planted_b(n - 1) : 0; }
C
cat >"$tree/ops/planted_b.c" <<'C'
int mint_planted_a(int n);
int mint_planted_b(int n);
int mint_planted_b(int n) { return n > 0 ? mint_planted_a(n - 1) : 1; }
C
for f in base/planted_up ops/planted_a ops/planted_b; do
    mkdir -p "$tree/build/CMakeFiles/mint_objects.dir/$(dirname $f)"
    ${CC:-cc} -c -I"$tree" -I"$tree/include" -o "$tree/build/CMakeFiles/mint_objects.dir/$f.c.o" \
        "$tree/$f.c"
done
if check --symbols build; then ko "planted calls are not found"; else
    cat "$tmp/out"
    if grep -q "^check-floors: base/planted_up.c (floor base/) calls mint_ctx_free of runtime/engine/context.c (floor runtime/engine/)$" "$tmp/out"; then
        ok "upward call named"
    else ko "upward call named"; fi
    if grep -q "^check-floors: circle of files.*ops/planted_a.c -> ops/planted_b.c -> ops/planted_a.c" "$tmp/out"; then
        ok "circle of calls named"
    else ko "circle of calls named"; fi
fi

# 4. Two headers of base/ that include each other.
printf '#include "base/planted_y.h"\n' >"$tree/base/planted_x.h"
printf '#include "base/planted_x.h"\n' >"$tree/base/planted_y.h"
if check --includes; then ko "planted include circle is not found"; else
    cat "$tmp/out"
    if grep -q "^check-floors: circle of #includes: base/planted_x.h -> base/planted_y.h -> base/planted_x.h" "$tmp/out"; then
        ok "include circle named"
    else ko "include circle named"; fi
fi

# 5. Two Python modules that import each other (one inside a function), and a borrowed method.
py="$tree/bindings/python/mint"
printf 'from . import planted_q\n\n\nclass P:\n    f = planted_q.g\n' >"$py/planted_p.py"
printf 'def g(self):\n    from .planted_p import P\n    return P\n' >"$py/planted_q.py"
if MINT_FLOORS_PYTHON=fail check --python; then ko "planted Python circle is not found"; else
    cat "$tmp/out"
    if grep -q "circle of Python imports: .*planted_p.py -> .*planted_q.py -> .*planted_p.py" "$tmp/out"; then
        ok "Python circle named"
    else ko "Python circle named"; fi
    if grep -q "planted_p.py:5: class P binds planted_q.g as its method f" "$tmp/out"; then
        ok "borrowed method named"
    else ko "borrowed method named"; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
