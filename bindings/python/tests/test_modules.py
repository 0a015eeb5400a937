"""The package's structure: no module imports another in a cycle, none imports inside a function
to dodge one, and stop strings are the library's (a stop string split across tokens never shows
in part, in a whole answer or a stream)."""

import ast
from pathlib import Path

import mint

PKG = Path(mint.__file__).resolve().parent


def _imports():
    """{module: {modules of the package it imports at module level}}, and the function-level
    relative imports [(module, line)]."""
    graph, inner = {}, []
    for f in sorted(PKG.glob("*.py")):
        tree = ast.parse(f.read_text())
        deps = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                deps |= {node.module} if node.module else {a.name for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.ImportFrom) and sub.level == 1:
                        what = sub.module or ",".join(a.name for a in sub.names)
                        inner.append((f.stem, sub.lineno, what))
        graph[f.stem] = deps
    return graph, inner


def test_no_import_cycle_between_modules():
    graph, _ = _imports()
    state = {}

    def visit(m, path):
        state[m] = "open"
        for d in sorted(graph.get(m, ())):
            assert state.get(d) != "open", f"import cycle: {' -> '.join(path + [d])}"
            if d not in state:
                visit(d, path + [d])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert "model" not in graph["openai"] and "model" not in graph["context"]


def test_no_import_inside_a_function():
    _, inner = _imports()
    # _lib's optional _config (written at install time; absent in a checkout) is the one kind.
    assert [i for i in inner if i[2] != "_config"] == []


def test_openai_methods_are_the_mixins_not_rebound_functions():
    from mint.openai import OpenAIMixin

    assert issubclass(mint.Model, OpenAIMixin)
    assert mint.Model.create_completion is OpenAIMixin.create_completion
    assert mint.Model.__call__ is OpenAIMixin.create_completion


def test_stop_string_split_across_tokens_never_shows(stories):
    whole = stories.create_completion("Once upon a time", max_tokens=30, temperature=0)
    text = whole["choices"][0]["text"]
    assert text.startswith(", there was a little girl")
    # " little g" spans the tokens " little" and " g": cut before it, nothing of it shown.
    r = stories.create_completion("Once upon a time", max_tokens=30, temperature=0, stop=" little g")
    assert r["choices"][0]["text"] == ", there was a"
    assert r["choices"][0]["finish_reason"] == "stop"
    chunks = list(stories.create_completion("Once upon a time", max_tokens=30, temperature=0,
                                            stop=" little g", stream=True))  # fmt: skip
    assert "".join(c["choices"][0]["text"] for c in chunks) == ", there was a"
    assert all(" little" not in c["choices"][0]["text"] for c in chunks)
    # A held-back prefix that turns out not to be a stop string is released whole.
    r = stories.create_completion("Once upon a time", max_tokens=30, temperature=0, stop=" little boy")
    assert r["choices"][0]["text"] == text
