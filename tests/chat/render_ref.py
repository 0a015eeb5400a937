#!/usr/bin/python3
"""render_ref.py - the oracle for mint's Jinja engine: renders a chat template with jinja2 set up
the way Hugging Face transformers' apply_chat_template sets it up (ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, loopcontrols, the {% generation %} tag rendering its body, a tojson
filter with ensure_ascii=False, the globals raise_exception and strftime_now; variables messages,
tools=None, documents=None, add_generation_prompt, bos_token, eos_token), plus llama.cpp's one
lenience: a string plus an undefined value or None is the string (see _Environment).

  render_ref.py TEMPLATE.jinja CONVERSATION.json [--no-generation-prompt] [--bos T] [--eos T]
      prints the rendered text; on an error prints "raise: MSG" (the template's own
      raise_exception) or "error: MSG" to stderr and exits 1.
  render_ref.py --batch < CASES.json
      CASES: [{"template": TEXT, "messages": [...], "add_generation_prompt": bool,
               "bos_token": T, "eos_token": T, "vars": {...}, "now": SECONDS}, ...]; prints
      one JSON list of {"ok": true, "text": ...} or {"ok": false, "raised": bool, "error": MSG}.
      "vars" (optional) are variables given after the others, replacing them (a request's
      messages with tool calls, tools, enable_thinking, keyword arguments: what
      mint_chat_apply_ex passes); "now" (optional) is the time strftime_now formats (seconds
      since the epoch, local time).
"""
import json
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class _Raised(jinja2.exceptions.TemplateError):
    """raise_exception's error (a TemplateError, as transformers raises)."""


class Generation(Extension):
    """{% generation %}...{% endgeneration %}: transformers marks assistant text with it; when
    no assistant mask is asked for, it renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_body", []), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def raise_exception(message):
    raise _Raised(message)


NOW = [None]


def strftime_now(format):
    return (datetime.fromtimestamp(NOW[0]) if NOW[0] else datetime.now()).strftime(format)


class _Environment(ImmutableSandboxedEnvironment):
    """Hugging Face's environment with one lenience of llama.cpp's engine (the one llama-server
    renders with): a string plus an undefined value or None is the string, where jinja2 raises.
    Templates written for llama-server rely on it (firefunction-v2 adds an undefined
    `functions`); a template that renders under plain jinja2 renders the same here."""

    intercepted_binops = frozenset(["+"])

    def call_binop(self, context, operator, left, right):
        if operator == "+":
            missing = (jinja2.Undefined, type(None))
            if isinstance(left, str) and isinstance(right, missing):
                return left
            if isinstance(right, str) and isinstance(left, missing):
                return right
        return super().call_binop(context, operator, left, right)


def environment():
    env = _Environment(trim_blocks=True, lstrip_blocks=True,
                       extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, template, messages, add_generation_prompt, bos, eos, extra=None, now=None):
    NOW[0] = now
    try:
        t = env.from_string(template)
        variables = dict(messages=messages, tools=None, documents=None,
                         add_generation_prompt=add_generation_prompt, bos_token=bos,
                         eos_token=eos)
        variables.update(extra or {})
        text = t.render(**variables)
        return {"ok": True, "text": text}
    except _Raised as e:
        return {"ok": False, "raised": True, "error": str(e.message)}
    except Exception as e:  # every other failure: the test only needs both sides to fail
        return {"ok": False, "raised": False, "error": f"{type(e).__name__}: {e}"}


def main(argv):
    env = environment()
    if argv[1:2] == ["--batch"]:
        cases = json.load(sys.stdin)
        out = [render(env, c["template"], c.get("messages", []), c.get("add_generation_prompt", True),
                      c.get("bos_token", "<s>"), c.get("eos_token", "</s>"), c.get("vars"),
                      c.get("now")) for c in cases]
        sys.stdout.write(json.dumps(out, ensure_ascii=False))
        return 0
    args = argv[1:]
    gen, bos, eos = True, "<s>", "</s>"
    pos = []
    i = 0
    while i < len(args):
        if args[i] == "--no-generation-prompt":
            gen = False
        elif args[i] in ("--bos", "--eos") and i + 1 < len(args):
            if args[i] == "--bos":
                bos = args[i + 1]
            else:
                eos = args[i + 1]
            i += 1
        else:
            pos.append(args[i])
        i += 1
    if len(pos) != 2:
        sys.stderr.write(__doc__)
        return 2
    with open(pos[0], encoding="utf-8") as f:
        template = f.read()
    with open(pos[1], encoding="utf-8") as f:
        messages = json.load(f)
    r = render(env, template, messages, gen, bos, eos)
    if r["ok"]:
        sys.stdout.write(r["text"])
        return 0
    sys.stderr.write(("raise: " if r["raised"] else "error: ") + r["error"] + "\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
