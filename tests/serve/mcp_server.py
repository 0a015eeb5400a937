#!/usr/bin/env python3
"""mcp_server.py - a small MCP server (JSON-RPC 2.0, one message per line on stdin/stdout) for
tests/test_serve_mcp.c. Its behaviour is picked by the first argument:

  plain       tools echo (echoes "message"), add (a + b), flaky (an error the first time per process),
              oops (a result with isError), pid (the process id, to see a respawn)
  noisy       as plain, but each answer comes after a notification, a line of junk and an answer
              to another id, all in one write: the client must skip them
  slow        tool nap sleeps "seconds" before answering
  exit        as plain; tool bye answers, then the process exits
  grandchild  as plain, after starting a child that keeps stdin/stdout/stderr open for 60 s
  silent      reads and never answers
"""
import json
import os
import subprocess
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "plain"

TOOLS = [
    {"name": "echo", "description": "Echoes its message",
     "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                     "required": ["message"]}},
    {"name": "add", "description": "Adds two numbers",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                      "b": {"type": "number"}}}},
    {"name": "flaky", "description": "Fails once"},  # no inputSchema: the client makes one
    {"name": "oops", "description": "Reports a failure", "inputSchema": {"type": "object"}},
    {"name": "pid", "description": "Its process id", "inputSchema": {"type": "object"}},
    {"name": "nap", "description": "Sleeps", "inputSchema": {"type": "object"}},
    {"name": "bye", "description": "Answers, then exits", "inputSchema": {"type": "object"}},
    {"description": "a tool without a name is left out"},
]

failed_once = False


def text(s):
    return {"content": [{"type": "text", "text": s}]}


def call(name, args):
    global failed_once
    if name == "echo":
        return text("echo: " + str(args.get("message", ""))), None
    if name == "add":
        return text(str(args.get("a", 0) + args.get("b", 0))), None
    if name == "flaky":
        if not failed_once:
            failed_once = True
            return None, {"code": -32000, "message": "flaky: first call fails"}
        return text("flaky: fine now"), None
    if name == "oops":
        return {"content": [{"type": "text", "text": "it broke"}], "isError": True}, None
    if name == "pid":
        return text(str(os.getpid())), None
    if name == "nap":
        time.sleep(float(args.get("seconds", 1)))
        return text("rested"), None
    if name == "bye":
        return text("bye"), None
    return None, {"code": -32602, "message": "no tool " + str(name)}


def answer(req):
    rid, method = req.get("id"), req.get("method")
    params = req.get("params") or {}
    result, error = None, None
    if method == "initialize":
        result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "mint-test", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result, error = call(params.get("name"), params.get("arguments") or {})
    else:
        error = {"code": -32601, "message": "no method " + str(method)}
    msg = {"jsonrpc": "2.0", "id": rid}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result
    return json.dumps(msg) + "\n"


def main():
    if MODE == "grandchild":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    out = sys.stdout.buffer
    for line in sys.stdin:
        if MODE == "silent":
            continue
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if "id" not in req:
            continue  # a notification: no answer
        data = answer(req)
        if MODE == "noisy":
            data = (json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progress": 1}}) + "\n" + "not json at all\n" +
                    json.dumps({"jsonrpc": "2.0", "id": 999999, "result": {}}) + "\n" + data)
        out.write(data.encode())
        out.flush()
        params = req.get("params") or {}
        if MODE == "exit" and params.get("name") == "bye":
            os._exit(0)


if __name__ == "__main__":
    main()
