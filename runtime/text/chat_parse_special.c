// chat_parse_special.c - the formats that are not a row of chat_parse.c's table: gpt-oss's
// harmony messages (each "<|channel|>NAME [to=RECIPIENT]<|message|>BODY<|end|>": analysis is the
// reasoning, final and commentary without a recipient the content, commentary to=functions.NAME
// a call), Functionary v3.2's ">>>RECIPIENT\nBODY" segments, and what follows Llama 3's
// <|python_tag|> (a call as JSON, a built-in tool's NAME.call(k="v"), or Python code).
#include "runtime/text/chat_parse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// ---------------------------------------------------------------------------------------------
// Harmony (gpt-oss)

static const char *const h_ends[] = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};
#define N_ENDS 4

// The end of a message body from p: *body_end where it stops, *next after its end marker (both
// in->n when the text stops inside it).
static void h_body(const cp_in *in, size_t p, size_t *body_end, size_t *next) {
    *body_end = *next = in->n;
    for (int k = 0; k < N_ENDS; k++) {
        size_t at = cp_find(in, p, h_ends[k]);
        if (at < *body_end) {
            *body_end = at;
            // <|start|> opens the next message: it is not consumed here.
            *next = k == 3 ? at : at + strlen(h_ends[k]);
        }
    }
}

// Where partial text must stop in an open body: before a possible end marker's first bytes and
// an incomplete character.
static size_t h_certain(const cp_in *in, size_t from) {
    size_t stop = in->n;
    if (in->n - from > 16) from = in->n - 16; // the end markers are shorter
    for (size_t i = from; i < in->n && stop == in->n; i++)
        for (int k = 0; k < N_ENDS; k++)
            if (cp_at_prefix(in, i, h_ends[k])) {
                stop = i;
                break;
            }
    return stop - cp_utf8_tail(in->s, from, stop);
}

// A header word after `key` ("<|channel|>", "to="): up to whitespace or a marker.
static bool h_word(const cp_in *in, size_t from, size_t to, const char *key, size_t *a, size_t *b) {
    size_t k = strlen(key);
    for (size_t i = from; i + k <= to; i++)
        if (memcmp(in->s + i, key, k) == 0) {
            *a = i + k;
            *b = *a;
            while (*b < to && !ws(in->s[*b]) && in->s[*b] != '<') ++*b;
            return true;
        }
    return false;
}

static void trim_put(cp_out *out, cp_buf *dst, const char *p, size_t n) {
    while (n && ws(p[0])) {
        p++;
        n--;
    }
    while (n && ws(p[n - 1])) n--;
    cp_put(out, dst, p, n);
}

void cp_harmony(const cp_in *in, bool reasoning, cp_out *out) {
    cp_buf think = {0};
    size_t p = 0;
    while (p < in->n) {
        size_t msg = p;
        if (cp_at(in, p, "<|start|>")) {
            p += strlen("<|start|>");
            msg = p;
            // The role ("assistant") runs to the header's first marker or recipient.
            while (p < in->n && in->s[p] != '<' && !cp_at(in, p, " to=")) p++;
            msg = p;
        }
        size_t h = cp_find(in, p, "<|message|>");
        if (h == SIZE_MAX) {
            if (!in->partial) cp_content(in, p, in->n, out); // no message: the text as it is
            break;
        }
        size_t ca = 0, cb = 0, ra = 0, rb = 0;
        bool has_channel = h_word(in, p, h, "<|channel|>", &ca, &cb);
        bool has_to = h_word(in, p, h, "to=", &ra, &rb);
        size_t body = h + strlen("<|message|>"), body_end, next;
        h_body(in, body, &body_end, &next);
        bool open = body_end == in->n;
        bool call =
            has_to && rb - ra > 10 && rb - ra <= 266 && memcmp(in->s + ra, "functions.", 10) == 0;
        for (size_t i = ra; call && i < rb; i++)
            call = (unsigned char)in->s[i] >= 0x20; // a name holds no control byte
        bool analysis = has_channel && cb - ca == 8 && memcmp(in->s + ca, "analysis", 8) == 0;
        if (call) {
            size_t keep = out->n_calls, q = cp_skip_ws(in, body), e;
            cp_res r = q < body_end ? cp_json_value(in->s, body_end, q, &e) : CP_MORE;
            if (r == CP_OK && cp_skip_ws(in, e) < body_end &&
                !(open && in->partial && h_certain(in, cp_skip_ws(in, e)) == cp_skip_ws(in, e)))
                r = CP_BAD; // text after the arguments (but an end marker's first bytes)
            if (r == CP_MORE && !open) r = CP_BAD;
            if (r == CP_MORE && !in->partial) r = CP_BAD;
            if (r != CP_BAD && (q >= body_end || in->s[q] == '{')) {
                cp_call *c = cp_new_call(out);
                if (!c) break;
                cp_put(out, &c->name, in->s + ra + 10, rb - ra - 10);
                size_t stop = r == CP_OK ? e : h_certain(in, q);
                while (r != CP_OK && stop > q && ws(in->s[stop - 1])) stop--;
                if (q < stop) cp_put(out, &c->args, in->s + q, stop - q);
            } else {
                cp_drop_calls(out, keep);
                cp_content(in, body, body_end, out); // malformed arguments: text
            }
        } else if (analysis && reasoning) {
            size_t stop = open && in->partial ? h_certain(in, body) : body_end;
            cp_put(out, &think, in->s + body, stop - body);
        } else {
            // Without reasoning extraction the analysis message stays as written.
            size_t from = analysis ? msg : body;
            size_t stop = open && in->partial ? h_certain(in, body) : body_end;
            if (analysis && in->partial && open && stop < body) stop = body;
            cp_content(in, from, stop, out);
            if (analysis && !open) cp_content(in, body_end, next, out);
        }
        if (open) break;
        p = next;
    }
    if (think.p) trim_put(out, &out->reasoning, think.p, think.n);
    free(think.p);
}

// ---------------------------------------------------------------------------------------------
// Functionary v3.2: the prompt ends with ">>>", the text starts with a recipient.

void cp_functionary_v3_2(const cp_in *in, cp_out *out) {
    size_t p = 0;
    if (cp_at(in, p, ">>>")) p += 3;
    while (p < in->n) {
        size_t nl = cp_find(in, p, "\n");
        if (nl == SIZE_MAX) {
            if (!in->partial) cp_content(in, p, in->n, out);
            return;
        }
        size_t a = p, b = nl;
        while (a < b && ws(in->s[a])) a++;
        while (b > a && ws(in->s[b - 1])) b--;
        size_t body = nl + 1, next = cp_find(in, body, ">>>");
        if (b - a == 3 && memcmp(in->s + a, "all", 3) == 0) {
            size_t stop = next;
            if (stop == SIZE_MAX) {
                stop = in->n;
                if (in->partial) {
                    for (size_t i = in->n - body > 3 ? in->n - 3 : body; i < in->n; i++)
                        if (cp_at_prefix(in, i, ">>>")) {
                            stop = i;
                            break;
                        }
                    stop -= cp_utf8_tail(in->s, body, stop);
                }
            }
            cp_content(in, body, stop, out);
            if (next == SIZE_MAX) return;
            p = next + 3;
            continue;
        }
        size_t q = cp_skip_ws(in, body), e;
        cp_res r = q < in->n ? cp_json_value(in->s, in->n, q, &e) : CP_MORE;
        bool name = a < b;
        for (size_t i = a; i < b; i++) {
            char ch = in->s[i];
            if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
                name = false;
        }
        if (!name || (q < in->n && in->s[q] != '{') || r == CP_BAD ||
            (r == CP_MORE && !in->partial)) {
            cp_content(in, p, in->n, out); // not a call: the rest is text
            return;
        }
        if (q >= in->n) return; // the arguments have not started: nothing is certain
        cp_call *c = cp_new_call(out);
        if (!c) return;
        cp_put(out, &c->name, in->s + a, b - a);
        if (r == CP_MORE) {
            size_t stop = in->n - cp_utf8_tail(in->s, q, in->n);
            while (stop > q && ws(in->s[stop - 1])) stop--;
            cp_put(out, &c->args, in->s + q, stop - q);
            return;
        }
        cp_put(out, &c->args, in->s + q, e - q);
        p = cp_skip_ws(in, e);
        if (cp_at(in, p, ">>>"))
            p += 3;
        else if (p < in->n) {
            if (in->partial && cp_at_prefix(in, p, ">>>")) return;
            cp_content(in, p, in->n, out);
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Llama 3's <|python_tag|>

static bool ident(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// NAME.call(k="v", n=1) with Python string and number literals: its arguments as JSON.
static cp_res builtin(const cp_in *in, size_t q, cp_out *out) {
    size_t a = q;
    while (q < in->n && (ident(in->s[q]) || in->s[q] == '.')) q++;
    if (q >= in->n) return in->partial ? CP_MORE : CP_BAD;
    if (q - a < 6 || memcmp(in->s + q - 5, ".call", 5) != 0) return CP_BAD;
    size_t name_end = q - 5;
    if (in->s[q] != '(') return CP_BAD;
    cp_buf args = {0};
    cp_puts(out, &args, "{");
    q++;
    for (size_t count = 0;; count++) {
        q = cp_skip_ws(in, q);
        if (q < in->n && in->s[q] == ')') break;
        if (count) {
            if (q >= in->n || in->s[q] != ',') goto more_or_bad;
            q = cp_skip_ws(in, q + 1);
        }
        size_t k = q;
        while (q < in->n && ident(in->s[q])) q++;
        if (q == k) goto more_or_bad;
        size_t ke = q;
        q = cp_skip_ws(in, q);
        if (q >= in->n || in->s[q] != '=') goto more_or_bad;
        q = cp_skip_ws(in, q + 1);
        if (q >= in->n) goto more_or_bad;
        cp_puts(out, &args, count ? ",\"" : "\"");
        cp_put(out, &args, in->s + k, ke - k);
        cp_puts(out, &args, "\":");
        char quote = in->s[q];
        if (quote == '"' || quote == '\'') {
            size_t v = ++q;
            while (q < in->n && in->s[q] != quote) q += in->s[q] == '\\' ? 2 : 1;
            if (q >= in->n) goto more_or_bad;
            cp_puts(out, &args, "\"");
            cp_put_json_str(out, &args, in->s + v, q - v);
            cp_puts(out, &args, "\"");
            q++;
        } else {
            size_t v = q;
            while (q < in->n && in->s[q] != ',' && in->s[q] != ')' && !ws(in->s[q])) q++;
            if (q >= in->n || !cp_json_whole(in->s, v, q)) goto more_or_bad;
            cp_put(out, &args, in->s + v, q - v);
        }
    }
    cp_puts(out, &args, "}");
    cp_call *c = cp_new_call(out);
    if (c) {
        cp_put(out, &c->name, in->s + a, name_end - a);
        cp_put(out, &c->args, args.p, args.n);
    }
    free(args.p);
    return CP_OK;
more_or_bad:
    free(args.p);
    return q >= in->n && in->partial ? CP_MORE : CP_BAD;
}

cp_res cp_python_tag(const cp_in *in, size_t at, size_t *end, cp_out *out) {
    size_t q = cp_skip_ws(in, at + strlen(in->spec->python_tag));
    if (q >= in->n) return in->partial ? CP_MORE : CP_BAD;
    if (in->s[q] == '{') {
        cp_in j = *in;
        cp_spec sp = *in->spec;
        sp.call_open = "{";
        sp.call_close = NULL;
        sp.kind = CP_JSON_OBJECT;
        j.spec = &sp;
        return cp_calls_block(&j, q, end, out);
    }
    cp_res r = builtin(in, q, out);
    if (r != CP_BAD) {
        *end = in->n;
        return r;
    }
    // Python code for the code interpreter: the rest of the text.
    cp_call *c = cp_new_call(out);
    if (!c) return CP_BAD;
    cp_puts(out, &c->name, "python");
    size_t stop = in->n - (in->partial ? cp_utf8_tail(in->s, q, in->n) : 0);
    cp_puts(out, &c->args, "{\"code\":\"");
    cp_put_json_str(out, &c->args, in->s + q, stop - q);
    if (!in->partial) cp_puts(out, &c->args, "\"}");
    *end = in->n;
    return in->partial ? CP_MORE : CP_OK;
}
