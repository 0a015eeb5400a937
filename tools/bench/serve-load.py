#!/usr/bin/env python3
"""serve-load.py - a bounded load generator for OpenAI-compatible servers (mint-serve,
llama-server), Python 3 standard library only.

    tools/bench/serve-load.py --url http://127.0.0.1:8080 [-n 200] [-c 8] [--max-tokens 32]

First each distinct prompt is asked alone (temperature 0, one body): its single-request answer.
Then -n streamed /v1/completions requests go out from -c client threads (mixed prompts,
temperature 0), and each answer is checked against its single-request answer. Prints one line
of figures: errors, mismatches, latency p50/p99, time to first token p50, aggregate generated
tokens per second over the whole run; --json writes them as JSON too. Exits 1 on any error (or
mismatch, unless --allow-mismatch).

--ttft N instead measures time to first token on an idle server: N requests one after another,
each a prompt of --prompt-tokens fresh token ids (no shared prefix to reuse), max_tokens 1.

Only loopback or the URL given is contacted; every request has a timeout (--timeout), and the
run is bounded by --deadline seconds.
"""
import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

PROMPTS = [
    "Once upon a time",
    "The little dog",
    "Lily and Tom went to the park",
    "One day, a big red ball",
    "There was a girl named Sue who liked to sing",
    "The sun was hot and the sky was blue",
    "Tim had a toy car",
    "In a small house lived an old cat",
    "Sam liked to read books about ships",
    "The bird flew over the tree",
    "Anna found a shiny stone",
    "A boy wanted to fly a kite on a windy day",
    "The frog jumped",
    "Max and his friend built a castle of sand by the sea",
    "Once there was a sad little fish",
    "The king had a big garden",
]


def percentile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class Client:
    def __init__(self, url, timeout, api_key=None, retries=0):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port or 80
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = "Bearer " + api_key
        self.retries = retries
        self.local = threading.local()

    def conn(self, fresh=False):
        c = getattr(self.local, "c", None)
        if c is None or fresh:
            if c is not None:
                c.close()
            c = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.local.c = c
        return c

    def post(self, path, body, stream, rid=None):
        """One request (with retries on connection errors and 5xx); returns (text, tokens,
        ttft, attempts). Raises on failure."""
        last = None
        for attempt in range(self.retries + 1):
            try:
                return self._post(path, body, stream, rid) + (attempt + 1,)
            except Exception as e:  # noqa: BLE001 - every failure is retried the same way
                last = e
                self.conn(fresh=True)
                time.sleep(0.2 * (attempt + 1))
        raise last

    def _post(self, path, body, stream, rid):
        headers = dict(self.headers)
        if rid:
            headers["X-Request-Id"] = rid
        c = self.conn()
        t0 = time.monotonic()
        try:
            c.request("POST", path, json.dumps(body), headers)
            r = c.getresponse()
        except (ConnectionError, http.client.HTTPException, OSError):
            c = self.conn(fresh=True)  # a kept-alive connection the server closed: once more
            t0 = time.monotonic()
            c.request("POST", path, json.dumps(body), headers)
            r = c.getresponse()
        if r.status != 200:
            data = r.read()
            raise RuntimeError("HTTP %d: %s" % (r.status, data[:200]))
        if not stream:
            o = json.loads(r.read())
            return o["choices"][0]["text"], o["usage"]["completion_tokens"], None
        text, ttft, tokens, usage, done = [], None, 0, None, False
        while True:
            line = r.readline()
            if not line:
                break
            line = line.strip()
            if not line:
                continue
            if not line.startswith(b"data: "):
                raise RuntimeError("not an SSE data line: %r" % line[:100])
            data = line[6:]
            if data == b"[DONE]":
                done = True
                break
            o = json.loads(data)
            if o.get("usage"):
                usage = o["usage"]["completion_tokens"]
            for ch in o.get("choices") or []:
                piece = ch.get("text") or ""
                if piece and ttft is None:
                    ttft = time.monotonic() - t0
                if piece:
                    tokens += 1
                text.append(piece)
        if not done:
            raise RuntimeError("the stream ended without [DONE]")
        r.read()
        return "".join(text), usage if usage is not None else tokens, ttft


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("-n", "--requests", type=int, default=200)
    ap.add_argument("-c", "--concurrency", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--deadline", type=float, default=1800, help="bound on the whole run (s)")
    ap.add_argument("--retries", type=int, default=0, help="per request, on errors and 5xx")
    ap.add_argument("--api-key")
    ap.add_argument("--no-stream", action="store_true", help="one body per answer (no TTFT)")
    ap.add_argument("--allow-mismatch", action="store_true")
    ap.add_argument("--id-prefix", default="", help="send X-Request-Id: PREFIX<i> (same on retries)")
    ap.add_argument("--ttft", type=int, default=0, metavar="N")
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--vocab-from", type=int, default=100)
    ap.add_argument("--vocab-to", type=int, default=500)
    ap.add_argument("--label", default="")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    cl = Client(a.url, a.timeout, a.api_key, a.retries)
    start = time.monotonic()
    out = {"label": a.label}

    if a.ttft:
        rng = random.Random(1)
        ttfts = []
        for _ in range(a.ttft):
            ids = [1] + [rng.randrange(a.vocab_from, a.vocab_to) for _ in range(a.prompt_tokens - 1)]
            body = {"prompt": ids, "max_tokens": 1, "temperature": 0, "stream": True}
            _, _, ttft, _ = cl.post("/v1/completions", body, True)
            ttfts.append(ttft)
        out.update(ttft_n=a.ttft, prompt_tokens=a.prompt_tokens,
                   ttft_p50_ms=1000 * statistics.median(ttfts),
                   ttft_min_ms=1000 * min(ttfts), ttft_max_ms=1000 * max(ttfts))
        print("%s ttft: %d requests of %d prompt tokens: p50 %.1f ms (min %.1f, max %.1f)"
              % (a.label, a.ttft, a.prompt_tokens, out["ttft_p50_ms"], out["ttft_min_ms"],
                 out["ttft_max_ms"]))
    else:
        stream = not a.no_stream
        ref = {}
        for p in PROMPTS:  # the single-request answers
            body = {"prompt": p, "max_tokens": a.max_tokens, "temperature": 0}
            ref[p] = cl.post("/v1/completions", body, False)[0]
        lat, ttfts, toks, errors, mismatches, attempts = [], [], [], [], [], []
        lock = threading.Lock()

        def one(i):
            if time.monotonic() - start > a.deadline:
                raise RuntimeError("deadline passed")
            p = PROMPTS[(i * 7) % len(PROMPTS)]
            body = {"prompt": p, "max_tokens": a.max_tokens, "temperature": 0, "stream": stream}
            if stream:
                body["stream_options"] = {"include_usage": True}
            t0 = time.monotonic()
            try:
                text, n, ttft, k = cl.post("/v1/completions", body, stream,
                                           a.id_prefix + str(i) if a.id_prefix else None)
            except Exception as e:  # noqa: BLE001
                with lock:
                    errors.append("%d: %s" % (i, e))
                return
            with lock:
                lat.append(time.monotonic() - t0)
                toks.append(n)
                attempts.append(k)
                if ttft is not None:
                    ttfts.append(ttft)
                if text != ref[p]:
                    mismatches.append("%d (%r): %r != %r" % (i, p, text[:60], ref[p][:60]))

        t0 = time.monotonic()
        with ThreadPoolExecutor(a.concurrency) as ex:
            list(ex.map(one, range(a.requests)))
        wall = time.monotonic() - t0
        out.update(requests=a.requests, concurrency=a.concurrency, max_tokens=a.max_tokens,
                   ok=len(lat), errors=len(errors), mismatches=len(mismatches),
                   retried=sum(1 for k in attempts if k > 1), wall_s=wall,
                   latency_p50_ms=1000 * percentile(lat, 0.5),
                   latency_p99_ms=1000 * percentile(lat, 0.99),
                   ttft_p50_ms=1000 * percentile(ttfts, 0.5) if ttfts else None,
                   tokens=sum(toks), tokens_per_s=sum(toks) / wall if wall > 0 else 0)
        print("%s load: %d requests at concurrency %d, max_tokens %d: %d ok, %d errors, "
              "%d mismatches, %d retried; latency p50 %.0f ms p99 %.0f ms; ttft p50 %s; "
              "%d tokens in %.2f s = %.1f tokens/s"
              % (a.label, a.requests, a.concurrency, a.max_tokens, len(lat), len(errors),
                 len(mismatches), out["retried"], out["latency_p50_ms"], out["latency_p99_ms"],
                 "%.0f ms" % out["ttft_p50_ms"] if ttfts else "-", out["tokens"], wall,
                 out["tokens_per_s"]))
        for e in errors[:5]:
            print("  error " + e, file=sys.stderr)
        for m in mismatches[:5]:
            print("  mismatch " + m, file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    if out.get("errors") or (out.get("mismatches") and not a.allow_mismatch):
        sys.exit(1)


if __name__ == "__main__":
    main()
