#!/usr/bin/env python3
"""check_floors.py - the floors and circles checker behind tools/scripts/check-floors.sh.

Modes (docs/design.md, "What the checker checks"):
  includes       every quoted #include points to the file's own floor or below; no source file over
                 800 lines; no circle of #includes; include/ (the contract) declares and defines
                 no function. Needs no build (CI's first step).
  symbols DIR    reads `nm` of every object in the build directory DIR that was compiled from a
                 source of the tree: each undefined symbol that another object of the tree defines
                 must be defined on the user's floor or below (mint.h declares, it does not
                 define: a call is judged by where the function lives); and the file graph (edges
                 from #includes and from undefined -> defined symbols) has no circle.
  python         bindings/python/mint/*.py: the import graph (top-level and function-level
                 imports) has no circle, and no class binds another module's function as a
                 method.
Prints one line per violation (prefixed "check-floors:"); exits 1 when there was one. With
--warn, Python findings are printed as warnings and do not fail.
"""
import ast
import os
import re
import subprocess
import sys

FLOORS = [  # (folder prefix, floor); the longest prefix wins
    ("include/", -1),
    ("base/", 0),
    ("quant/", 1),
    ("formats/", 2),
    ("ops/", 3),
    ("runtime/template/", 4),
    ("runtime/text/", 4),
    ("runtime/engine/", 5),
    ("runtime/decoding/", 6),
    ("runtime/filetools/", 6),
    ("runtime/measure/", 6),
    ("tools/", 7),
    ("tests/", 8),
]
FLOOR_NAMES = {-1: "contract include/", 0: "base/", 1: "quant/", 2: "formats/", 3: "ops/",
               4: "runtime/text/ and runtime/template/", 5: "runtime/engine/", 6: "runtime/decoding/, filetools/ or measure/", 7: "tools/",
               8: "tests/"}
MAX_LINES = 800
# Where a quoted include is looked for, after the including file's own folder (CMake's include
# directories of the targets).
INCLUDE_DIRS = ["", "include", "tools/common", "tools/run", "tools/serve", "tests/helpers",
                "tests/fuzz"]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
CONTRACT_BODY_RE = re.compile(r"^\s*(static|inline)\b|\)\s*\{")
DEFINED = set("TDBRCVWGSui")  # nm -P types of a global definition (u: GNU unique)
PY_PACKAGE = "bindings/python/mint"

# Circles known and being removed by work under way, reported as warnings until then: each entry
# is the set of files of the circle and who removes it. A circle with any other file fails.
PENDING_CIRCLES = [
]

problems = []
warnings = []


def fail(msg):
    problems.append("check-floors: " + msg)


def floor_of(path):
    best = None
    for prefix, floor in FLOORS:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, floor)
    return None if best is None else best[1]


def tree_files():
    """The tree's files: git's list inside a work tree, else every file under the folders."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True)
        files = [f for f in out.stdout.decode().split("\0") if f]
        if files:
            return [f for f in files if os.path.isfile(f)]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for top, dirs, names in os.walk("."):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "node_modules"]
        files += [os.path.relpath(os.path.join(top, n)) for n in names]
    return sorted(files)


def c_sources(files):
    return [f for f in files if f.endswith((".c", ".h")) and floor_of(f) is not None]


def resolve_include(src, inc, known):
    for base in [os.path.dirname(src)] + INCLUDE_DIRS:
        cand = os.path.normpath(os.path.join(base, inc))
        if cand in known:
            return cand
    return None


def include_edges(srcs):
    known = set(srcs)
    edges = {}
    for f in srcs:
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        out = []
        for inc in INCLUDE_RE.findall(text):
            target = resolve_include(f, inc, known)
            if target is not None:
                out.append((inc, target))
        edges[f] = (out, text.count("\n"))
    return edges


def cycles(graph):
    """Tarjan's strongly connected components; yields one cycle (a list of nodes) per component
    of two or more nodes (or a node with an edge to itself)."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    for comp in comps:
        members = set(comp)
        if len(comp) == 1 and comp[0] not in graph.get(comp[0], ()):
            continue
        # One concrete cycle through the smallest member: breadth-first back to it.
        start = min(comp)
        prev = {start: None}
        queue = [start]
        end = None
        while queue and end is None:
            v = queue.pop(0)
            for w in sorted(graph.get(v, ())):
                if w == start:
                    end = v
                    break
                if w in members and w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = []
        while end is not None:
            path.append(end)
            end = prev[end]
        path.reverse()
        yield path + [start], sorted(comp)


def report_cycles(graph, what):
    for path, comp in cycles(graph):
        extra = ""
        if len(comp) > len(path) - 1:
            extra = " (all files of this circle: %s)" % " ".join(comp)
        line = "circle of %s: %s%s" % (what, " -> ".join(path), extra)
        pending = [why for files, why in PENDING_CIRCLES if set(comp) <= files]
        if pending:
            warnings.append("check-floors: warning: %s (pending: %s)" % (line, pending[0]))
        else:
            fail(line)


def check_includes(files):
    srcs = c_sources(files)
    edges = include_edges(srcs)
    graph = {}
    for f in srcs:
        own = floor_of(f)
        incs, lines = edges[f]
        for inc, target in incs:
            tf = floor_of(target)
            if tf is not None and tf > own:
                fail("%s (floor %s) includes %s (floor %s)" % (f, FLOOR_NAMES[own], inc,
                                                                FLOOR_NAMES[tf]))
            graph.setdefault(f, set()).add(target)
        if lines > MAX_LINES:
            fail("%s has %d lines (over %d)" % (f, lines, MAX_LINES))
        if own == -1:
            # The contract declares; a body (a static or inline function) would be code on no
            # floor, callable from every floor.
            with open(f, encoding="utf-8", errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    if CONTRACT_BODY_RE.search(line):
                        fail("%s:%d: the contract defines a function (declarations only)" % (f, n))
    report_cycles(graph, "#includes")
    return edges


def object_source(build, obj):
    """The tree path an object was compiled from (CMake: <subdir>/CMakeFiles/<target>.dir/<path
    relative to subdir>.o, with ".." spelt "__"), or None."""
    rel = os.path.relpath(obj, build)
    parts = rel.split(os.sep)
    if "CMakeFiles" not in parts:
        return None
    i = parts.index("CMakeFiles")
    if i + 2 >= len(parts) or not parts[i + 1].endswith(".dir"):
        return None
    inner = [".." if p == "__" else p for p in parts[i + 2:]]
    src = os.path.normpath(os.path.join(*(parts[:i] + inner)))
    return src[:-2] if src.endswith(".o") else None


def run_nm(objs):
    out = []
    step = 200
    for k in range(0, len(objs), step):
        r = subprocess.run(["nm", "-P", "-A"] + objs[k:k + step], capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            fail("nm failed on the objects of the build directory")
            return []
        out += r.stdout.splitlines()
    return out


def check_symbols(files, build):
    srcs = set(c_sources(files))
    objs = {}  # source -> [objects]
    for top, _, names in os.walk(build):
        for n in names:
            if n.endswith(".o"):
                obj = os.path.join(top, n)
                src = object_source(build, obj)
                if src in srcs:
                    objs.setdefault(src, []).append(obj)
    if not any(floor_of(s) is not None and floor_of(s) <= 6 for s in objs):
        fail("no object of the library in %s (build it: cmake --build %s --target mint_objects)"
             % (build, build))
        return
    obj_src = {o: s for s, os_ in objs.items() for o in os_}
    defs, undefs = {}, {}
    for line in run_nm(sorted(obj_src)):
        # "path.o: symbol T value size"
        head, _, rest = line.partition(": ")
        fields = rest.split()
        if len(fields) < 2 or head not in obj_src:
            continue
        sym, kind = fields[0], fields[1]
        src = obj_src[head]
        if kind == "U":
            undefs.setdefault(src, set()).add(sym)
        elif kind in DEFINED and sym != "main":
            defs.setdefault(sym, set()).add(src)
    graph = {}
    for src in sorted(undefs):
        own = floor_of(src)
        for sym in sorted(undefs[src]):
            where = defs.get(sym)
            if not where or src in where:
                continue  # not the tree's (libc, libxxhash, ...) or its own
            if min(floor_of(w) for w in where) > own:
                w = min(where, key=floor_of)
                fail("%s (floor %s) calls %s of %s (floor %s)" % (
                    src, FLOOR_NAMES[own], sym, w, FLOOR_NAMES[floor_of(w)]))
            for w in where:
                graph.setdefault(src, set()).add(w)
    for f, (incs, _) in include_edges(sorted(srcs)).items():
        for _, target in incs:
            graph.setdefault(f, set()).add(target)
    report_cycles(graph, "files (#includes and calls)")


# ---------------------------------------------------------------------------------------------
# Python


def check_python(files):
    mods = {}
    for f in files:
        if os.path.dirname(f) == PY_PACKAGE and f.endswith(".py"):
            mods[os.path.basename(f)[:-3]] = f
    graph, found = {}, []
    for name, path in sorted(mods.items()):
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        imported_modules = {}  # local name -> module
        imported_names = {}  # local name -> "module.name"
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and not node.module:
                    for a in node.names:
                        if a.name in mods:
                            targets.append(a.name)
                            imported_modules[a.asname or a.name] = a.name
                elif (node.level == 1 and node.module) or (node.level == 0 and node.module
                                                           and node.module.startswith("mint.")):
                    mod = node.module.split(".")[-1]
                    if mod in mods:
                        targets.append(mod)
                        for a in node.names:
                            imported_names[a.asname or a.name] = "%s.%s" % (mod, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("mint.") and a.name.split(".")[1] in mods:
                        targets.append(a.name.split(".")[1])
            for t in targets:
                if t != name:
                    graph.setdefault(name, set()).add(t)
        # A class whose body says `meth = other_module.func` (or a name imported from another
        # module), or a module that says `Class.meth = other_module.func`, borrows that function
        # as a method.
        def origin_of(v):
            if (isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name)
                    and v.value.id in imported_modules):
                return "%s.%s" % (imported_modules[v.value.id], v.attr)
            if isinstance(v, ast.Name) and v.id in imported_names:
                return imported_names[v.id]
            return None

        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                origin = origin_of(stmt.value) if isinstance(stmt, ast.Assign) else None
                if origin:
                    tnames = ", ".join(t.id for t in stmt.targets if isinstance(t, ast.Name))
                    found.append("%s:%d: class %s binds %s as its method %s" % (
                        path, stmt.lineno, node.name, origin, tnames))
        for stmt in tree.body:
            if not isinstance(stmt, ast.Assign) or not origin_of(stmt.value):
                continue
            for t in stmt.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    found.append("%s:%d: %s.%s is bound to %s" % (
                        path, stmt.lineno, t.value.id, t.attr, origin_of(stmt.value)))
    for path, comp in cycles(graph):
        extra = ""
        if len(comp) > len(path) - 1:
            extra = " (all files of this circle: %s)" % " ".join(
                "%s/%s.py" % (PY_PACKAGE, m) for m in comp)
        found.append("circle of Python imports: %s%s" % (" -> ".join(
            "%s/%s.py" % (PY_PACKAGE, m) for m in path), extra))
    return found


def main(argv):
    warn = "--warn" in argv
    args = [a for a in argv if a != "--warn"]
    if not args or args[0] not in ("includes", "symbols", "python"):
        sys.stderr.write("usage: check_floors.py includes | symbols BUILD_DIR | python [--warn]\n")
        return 2
    files = tree_files()
    if args[0] == "includes":
        check_includes(files)
    elif args[0] == "symbols":
        if len(args) < 2:
            sys.stderr.write("check_floors.py symbols: missing BUILD_DIR\n")
            return 2
        check_symbols(files, args[1])
    else:
        for line in check_python(files):
            if warn:
                warnings.append("check-floors: warning: " + line)
            else:
                fail(line)
    for w in warnings:
        sys.stderr.write(w + "\n")
    for p in problems:
        sys.stderr.write(p + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
