#!/usr/bin/env python3
"""serve-soak.py - mint-serve under a steady mixed load for a long while (not part of CI), Python 3
standard library only.

    tools/bench/serve-soak.py [--bin build/mint-serve] [--model models/stories260K.gguf]
                        [--minutes 30] [--clients 8] [--parallel 8]

It starts mint-serve itself on a free loopback port (--parallel slots, --chat-template zephyr for
a model without a template) and keeps --clients threads busy with a mix of requests: streamed and
whole completions and chats at temperature 0 (each answer checked against the same request's
answer alone, asked before the load), streams the client abandons after two chunks, requests over
the limits (a body past --max-body: 413; max_tokens past --max-tokens: 400), and /metrics
scrapes. Every minute it samples the server's resident memory and open descriptors
(/proc/PID/status, /proc/PID/fd) and the minute's latency percentiles, one line each. At the end:
memory and descriptors after the warm-up minute against the last minute, errors and mismatches.
Exits 1 on any unexpected status, any mismatch, or growth of memory beyond --rss-slack MiB or of
descriptors beyond --fd-slack after the warm-up.

Only 127.0.0.1 is contacted. Every request has a timeout, and the run ends after --minutes.
"""
import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time

PROMPTS = ["Once upon a time", "The little dog", "Lily and Tom went to the park",
           "One day, a big red ball", "Tim had a toy car", "In a small house lived an old cat"]


def request(port, method, path, body=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        c.request(method, path, body=data, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def stream_text(port, path, body, abandon_after=None, timeout=60):
    """A streamed request's text (or None when abandoned on purpose)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("POST", path, body=json.dumps(dict(body, stream=True)).encode(),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            return r.status, None
        text, chunks = [], 0
        for line in r:
            line = line.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            chunks += 1
            if abandon_after is not None and chunks >= abandon_after:
                c.sock.shutdown(socket.SHUT_RDWR)  # the client leaves mid-answer
                return 200, None
            ch = json.loads(line[6:])["choices"][0]
            text.append(ch.get("text") or (ch.get("delta") or {}).get("content") or "")
        return 200, "".join(text)
    finally:
        c.close()


def answer_of(payload, chat):
    o = json.loads(payload)["choices"][0]
    return o["message"]["content"] if chat else o["text"]


def proc_sample(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024.0
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/mint-serve")
    ap.add_argument("--model", default="models/stories260K.gguf")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--rss-slack", type=float, default=16, help="MiB of growth allowed")
    ap.add_argument("--fd-slack", type=int, default=8)
    a = ap.parse_args()

    srv = subprocess.Popen([a.bin, "-m", a.model, "--port", "0", "-t", str(a.threads),
                            "--parallel", str(a.parallel), "--chat-template", "zephyr",
                            "--max-tokens", "256", "--max-body", "65536"],
                           stderr=subprocess.PIPE, text=True)
    try:
        line = srv.stderr.readline()
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
    except (IndexError, ValueError):
        srv.kill()
        sys.exit(f"serve-soak: mint-serve did not start: {line.strip()}")
    threading.Thread(target=lambda: [None for _ in srv.stderr], daemon=True).start()
    print(f"serve-soak: mint-serve pid {srv.pid} on port {port}, {a.minutes:g} min, "
          f"{a.clients} clients, {a.parallel} slots", flush=True)

    # The answers alone, before the load: what every answer under load must equal.
    jobs = [(p, chat) for p in PROMPTS for chat in (False, True)]
    alone = {}
    for p, chat in jobs:
        path, body = job_body(p, chat, a.max_tokens)
        st, payload = request(port, "POST", path, body)
        if st != 200:
            srv.kill()
            sys.exit(f"serve-soak: the single request {path} answered {st}: {payload[:200]}")
        alone[(p, chat)] = answer_of(payload, chat)

    lock = threading.Lock()
    stats = {"requests": 0, "errors": 0, "mismatches": 0, "lat": []}
    stop = time.monotonic() + a.minutes * 60
    errors = []

    def note(ok, lat=None, what=""):
        with lock:
            stats["requests"] += 1
            if lat is not None:
                stats["lat"].append(lat)
            if not ok:
                stats["errors"] += 1
                if len(errors) < 20:
                    errors.append(what)

    def client(seed):
        rnd = random.Random(seed)
        while time.monotonic() < stop:
            kind = rnd.random()
            p, chat = rnd.choice(jobs)
            path, body = job_body(p, chat, a.max_tokens)
            t0 = time.monotonic()
            try:
                if kind < 0.40:  # streamed, checked
                    st, text = stream_text(port, path, body)
                    same = st == 200 and text == alone[(p, chat)]
                    if st == 200 and not same:
                        with lock:
                            stats["mismatches"] += 1
                    note(same, time.monotonic() - t0, f"stream {path} {st}")
                elif kind < 0.60:  # whole, checked
                    st, payload = request(port, "POST", path, body)
                    same = st == 200 and answer_of(payload, chat) == alone[(p, chat)]
                    if st == 200 and not same:
                        with lock:
                            stats["mismatches"] += 1
                    note(same, time.monotonic() - t0, f"whole {path} {st}")
                elif kind < 0.75:  # the client leaves mid-answer
                    st, _ = stream_text(port, path, dict(body, max_tokens=128), abandon_after=2)
                    note(st == 200, None, f"abandoned {path} {st}")
                elif kind < 0.85:  # over the limits
                    if rnd.random() < 0.5:
                        st, _ = request(port, "POST", path, b"{\"prompt\": \"" + b"a" * 70000 + b"\"}")
                        note(st == 413, None, f"over --max-body: {st}")
                    else:
                        st, _ = request(port, "POST", path, dict(body, max_tokens=100000))
                        note(st == 400, None, f"over --max-tokens: {st}")
                else:  # /metrics scraped
                    st, _ = request(port, "GET", "/metrics")
                    note(st == 200, None, f"metrics {st}")
            except (OSError, http.client.HTTPException) as e:
                note(False, None, f"{path}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(a.clients)]
    for t in threads:
        t.start()
    samples = []
    minute = 0
    while time.monotonic() < stop and srv.poll() is None:
        time.sleep(min(60, max(0.0, stop - time.monotonic())))
        minute += 1
        rss, fds = proc_sample(srv.pid)
        with lock:
            lat, stats["lat"] = stats["lat"], []
            req, err, mis = stats["requests"], stats["errors"], stats["mismatches"]
        p50 = statistics.median(lat) * 1000 if lat else float("nan")
        p99 = sorted(lat)[int(0.99 * (len(lat) - 1))] * 1000 if lat else float("nan")
        samples.append((rss, fds))
        print(f"minute {minute:3d}: rss {rss:7.1f} MiB, fds {fds:4d}, requests {req:6d}, "
              f"errors {err}, mismatches {mis}, latency p50 {p50:6.0f} ms p99 {p99:6.0f} ms",
              flush=True)
    for t in threads:
        t.join(timeout=120)
    alive = srv.poll() is None
    srv.terminate()
    try:
        code = srv.wait(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        code = "killed"
    base = samples[1] if len(samples) > 2 else samples[0] if samples else (0, 0)
    last = samples[-1] if samples else (0, 0)
    ok = (alive and stats["errors"] == 0 and stats["mismatches"] == 0 and
          last[0] - base[0] <= a.rss_slack and last[1] - base[1] <= a.fd_slack)
    print(f"serve-soak: {stats['requests']} requests, {stats['errors']} unexpected, "
          f"{stats['mismatches']} mismatches; rss {base[0]:.1f} -> {last[0]:.1f} MiB, "
          f"fds {base[1]} -> {last[1]} (after the first minute); server exit {code}")
    for e in errors:
        print(f"serve-soak: {e}")
    sys.exit(0 if ok else 1)


def job_body(prompt, chat, max_tokens):
    if chat:
        return "/v1/chat/completions", {"messages": [{"role": "user", "content": prompt}],
                                        "max_tokens": max_tokens, "temperature": 0}
    return "/v1/completions", {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0}


if __name__ == "__main__":
    main()
