// chat_parse_calls.c - the call blocks of the formats that are a row of chat_parse.c's table:
// JSON objects (Hermes' <tool_call>{...}</tool_call>, Llama 3's bare object), JSON arrays after
// a marker (Mistral Nemo, Command R7B, Firefunction, Granite, Apriel, Apertus), a name then JSON
// arguments (DeepSeek, Functionary v3.1, Kimi K2, Magistral) and XML-like parameters
// (Qwen3-Coder, Seed-OSS, GLM 4.5, MiniMax M2), each partial-text-safe (chat_parse.h).
#include "runtime/text/chat_parse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Partial text that ends at q, or inside one of the markers there: the block may go on.
static bool may_continue(const cp_in *in, size_t q, const char *a, const char *b) {
    if (!in->partial) return false;
    if (q >= in->n) return true;
    return (a && a[0] && cp_at_prefix(in, q, a)) || (b && b[0] && cp_at_prefix(in, q, b));
}

// s[from..to) without a trailing incomplete UTF-8 character and trailing whitespace.
static size_t certain_end(const cp_in *in, size_t from, size_t to) {
    to -= cp_utf8_tail(in->s, from, to);
    while (to > from && ws(in->s[to - 1])) to--;
    return to;
}

// Arguments given as a JSON value at [at, end): an object's own text, or a string holding one.
static bool whole_args(const cp_in *in, size_t at, size_t end, cp_out *out, cp_call *c) {
    if (in->s[at] == '{') {
        cp_put(out, &c->args, in->s + at, end - at);
        return true;
    }
    if (in->s[at] != '"') return false;
    cp_buf tmp = {0};
    cp_json_unquote(out, &tmp, in->s, at, end);
    size_t k = 0, t = tmp.n;
    while (k < t && ws(tmp.p[k])) k++;
    while (t > k && ws(tmp.p[t - 1])) t--;
    bool ok = tmp.p && k < t && tmp.p[k] == '{' && cp_json_whole(tmp.p, k, t);
    if (ok) cp_put(out, &c->args, tmp.p + k, t - k);
    free(tmp.p);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// One call as a JSON object

static cp_res call_object(const cp_in *in, size_t at, size_t *end, cp_out *out) {
    const cp_spec *s = in->spec;
    cp_jobject o;
    cp_res r = cp_json_object(in->s, in->n, at, &o);
    if (r == CP_BAD) return CP_BAD;
    const cp_jmember *nm = NULL, *am = NULL, *im = NULL;
    if (s->name_is_key) {
        if (o.n_m > 1 || (r == CP_OK && o.n_m != 1)) return CP_BAD;
        am = o.n_m ? &o.m[0] : NULL;
    } else {
        nm = cp_jmember_get(in->s, &o, s->name_key);
        am = cp_jmember_get(in->s, &o, s->args_key);
        if (!am && s->args_key2) am = cp_jmember_get(in->s, &o, s->args_key2);
        if (s->id_key) im = cp_jmember_get(in->s, &o, s->id_key);
        if (nm && nm->whole && in->s[nm->v_at] != '"') return CP_BAD;
    }
    bool named = s->name_is_key ? am != NULL : nm && nm->whole;
    if (r == CP_OK && (!named || !am || !am->whole)) return CP_BAD;
    if (am && am->whole && in->s[am->v_at] != '{' && in->s[am->v_at] != '"') return CP_BAD;
    if (!named) return r;
    cp_call *c = cp_new_call(out);
    if (!c) return CP_BAD;
    if (s->name_is_key)
        cp_put(out, &c->name, in->s + am->k_at, am->k_len);
    else
        cp_json_unquote(out, &c->name, in->s, nm->v_at, nm->v_end);
    if (!c->name.p || c->name.n == 0 || memchr(c->name.p, '\0', c->name.n)) {
        cp_drop_calls(out, out->n_calls - 1); // no name, or one no C string can hold
        return CP_BAD;
    }
    if (im && im->whole) {
        if (in->s[im->v_at] == '"')
            cp_json_unquote(out, &c->id, in->s, im->v_at, im->v_end);
        else
            cp_put(out, &c->id, in->s + im->v_at, im->v_end - im->v_at);
    }
    if (am && am->whole) {
        if (!whole_args(in, am->v_at, am->v_end, out, c)) {
            cp_drop_calls(out, out->n_calls - 1);
            return CP_BAD;
        }
    } else if (am && in->s[am->v_at] == '{') {
        size_t e = certain_end(in, am->v_at, in->n);
        cp_put(out, &c->args, in->s + am->v_at, e - am->v_at);
    }
    if (r == CP_OK) *end = o.end;
    return r;
}

// After a whole call or section: its closing marker (optional unless the text may still be
// writing it).
static cp_res closing(const cp_in *in, size_t *p, const char *close) {
    if (!close) return CP_OK;
    size_t q = cp_skip_ws(in, *p);
    if (cp_at(in, q, close)) {
        *p = q + strlen(close);
        return CP_OK;
    }
    return may_continue(in, q, close, NULL) ? CP_MORE : CP_OK;
}

static cp_res json_object_block(const cp_in *in, size_t at, size_t *end, cp_out *out) {
    const cp_spec *s = in->spec;
    size_t p = at;
    if (s->call_open && strcmp(s->call_open, "{") != 0)
        p = cp_skip_ws(in, at + strlen(s->call_open));
    if (p >= in->n) return in->partial ? CP_MORE : CP_BAD;
    if (in->s[p] != '{') return CP_BAD;
    cp_res r = call_object(in, p, &p, out);
    if (r != CP_OK) return r;
    r = closing(in, &p, s->call_close);
    if (r == CP_OK && !s->call_close) {
        // Bare objects (Llama 3) may be separated by a comma or a semicolon.
        size_t q = cp_skip_ws(in, p);
        if (q < in->n && (in->s[q] == ',' || in->s[q] == ';')) {
            size_t k = cp_skip_ws(in, q + 1);
            if (k < in->n && in->s[k] == '{')
                p = k;
            else if (k >= in->n && in->partial)
                r = CP_MORE;
        }
    }
    *end = p;
    return r;
}

static cp_res json_array_block(const cp_in *in, size_t at, size_t *end, cp_out *out) {
    const cp_spec *s = in->spec;
    size_t p = cp_skip_ws(in, at + strlen(s->section_open));
    if (p >= in->n) return in->partial ? CP_MORE : CP_BAD;
    // The objects are in brackets, or (MiniMax M1) only separated by commas before the
    // section's closing.
    bool bracket = in->s[p] == '[';
    if (!bracket && (in->s[p] != '{' || !s->section_close)) return CP_BAD;
    p += bracket;
    for (bool first = true;; first = false) {
        p = cp_skip_ws(in, p);
        if (p >= in->n) return in->partial ? CP_MORE : CP_BAD;
        if (first && bracket && in->s[p] == ']') break;
        if (in->s[p] != '{') return CP_BAD;
        cp_res r = call_object(in, p, &p, out);
        if (r != CP_OK) return r;
        p = cp_skip_ws(in, p);
        if (p >= in->n) return in->partial ? CP_MORE : CP_BAD;
        if (bracket ? in->s[p] == ']' : cp_at(in, p, s->section_close)) break;
        if (!bracket && may_continue(in, p, s->section_close, NULL)) return CP_MORE;
        if (in->s[p] != ',' && !(!bracket && in->s[p] == '{')) return CP_BAD;
        p += in->s[p] == ',';
    }
    p += bracket;
    cp_res r = closing(in, &p, s->section_close);
    *end = p;
    return r;
}

// ---------------------------------------------------------------------------------------------
// A name, then JSON arguments

// Magistral's names have no opening marker: a name is a run of name characters right before
// name_close (or id_open). Returns where it ends, SIZE_MAX when s[q..] is no name, or in->n
// when partial text may still be writing one.
static size_t bare_name_end(const cp_in *in, size_t q) {
    const cp_spec *s = in->spec;
    for (size_t i = q; i < in->n && i - q <= 256; i++) {
        if (cp_at(in, i, s->name_close) || (s->id_open && cp_at(in, i, s->id_open)))
            return i > q ? i : SIZE_MAX;
        if (in->s[i] == '[')
            return may_continue(in, i, s->name_close, s->id_open) ? in->n : SIZE_MAX;
        char c = in->s[i];
        if (ws(c) || c == '{' || c == '"' || c == '<') return SIZE_MAX;
    }
    return in->partial && in->n - q <= 256 ? in->n : SIZE_MAX;
}

static size_t first_of(const cp_in *in, size_t from, const char *a, const char *b, const char *c) {
    size_t m = SIZE_MAX;
    const char *z[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        if (!z[k] || !z[k][0]) continue;
        size_t at = cp_find(in, from, z[k]);
        if (at < m) m = at;
    }
    return m;
}

// The name at [q, e), trimmed; false when empty, too long, or holding a control byte.
static bool put_name(const cp_in *in, size_t q, size_t e, cp_out *out, cp_call *c) {
    while (q < e && ws(in->s[q])) q++;
    while (e > q && ws(in->s[e - 1])) e--;
    for (size_t i = q; i < e; i++)
        if ((unsigned char)in->s[i] < 0x20) return false; // one line, no control bytes
    if (q == e || e - q > 256) return false;
    if (in->spec->kimi_ids) {
        // "functions.NAME:INDEX": the whole is the id.
        cp_put(out, &c->id, in->s + q, e - q);
        const char *colon = NULL;
        for (size_t i = e; i > q; i--)
            if (in->s[i - 1] == ':') {
                colon = in->s + i - 1;
                break;
            }
        if (e - q > 10 && memcmp(in->s + q, "functions.", 10) == 0 && colon) {
            q += 10;
            e = (size_t)(colon - in->s);
        }
    }
    cp_put(out, &c->name, in->s + q, e - q);
    return true;
}

static cp_res name_args_block(const cp_in *in, size_t at, size_t *end, cp_out *out) {
    const cp_spec *s = in->spec;
    size_t p = at;
    bool section = false;
    if (s->section_open && cp_at(in, p, s->section_open)) {
        p += strlen(s->section_open);
        section = true;
    }
    for (size_t done = 0;; done++) {
        size_t q = cp_skip_ws(in, p);
        if (section && s->section_close && cp_at(in, q, s->section_close)) {
            *end = q + strlen(s->section_close);
            return done ? CP_OK : CP_BAD;
        }
        if (s->repeat_open && done && cp_at(in, q, s->section_open))
            q = cp_skip_ws(in, q + strlen(s->section_open));
        size_t e;
        if (s->call_open[0]) {
            if (!cp_at(in, q, s->call_open)) {
                if (may_continue(in, q, s->call_open, section ? s->section_close : NULL))
                    return CP_MORE;
                if (done && !(section && s->section_close)) {
                    *end = p;
                    return CP_OK;
                }
                return CP_BAD;
            }
            q += strlen(s->call_open);
            e = first_of(in, q, s->name_close, s->id_open, NULL);
            if (e == SIZE_MAX) return in->partial && in->n - q <= 256 ? CP_MORE : CP_BAD;
        } else {
            if (q >= in->n || (s->repeat_open && cp_at_prefix(in, q, s->section_open)))
                return in->partial ? CP_MORE : done ? (*end = p, CP_OK) : CP_BAD;
            e = bare_name_end(in, q);
            if (e == in->n) return CP_MORE;
            if (e == SIZE_MAX) {
                if (!done) return CP_BAD;
                *end = p;
                return CP_OK;
            }
        }
        cp_call *c = cp_new_call(out);
        if (!c) return CP_BAD;
        if (!put_name(in, q, e, out, c)) {
            cp_drop_calls(out, out->n_calls - 1);
            return CP_BAD;
        }
        q = e;
        if (s->id_open && cp_at(in, q, s->id_open)) {
            q += strlen(s->id_open);
            size_t ie = cp_find(in, q, s->name_close);
            if (ie == SIZE_MAX) {
                cp_drop_calls(out, out->n_calls - 1);
                return in->partial ? CP_MORE : CP_BAD;
            }
            size_t a = cp_skip_ws(in, q), b = ie;
            while (b > a && ws(in->s[b - 1])) b--;
            cp_put(out, &c->id, in->s + a, b - a);
            q = ie;
        }
        q = cp_skip_ws(in, q + strlen(s->name_close));
        if (q >= in->n) return in->partial ? CP_MORE : CP_BAD;
        cp_res r = cp_json_value(in->s, in->n, q, &e);
        if (r == CP_BAD || in->s[q] != '{') {
            cp_drop_calls(out, out->n_calls - 1);
            return CP_BAD;
        }
        if (r == CP_MORE) {
            size_t ce = certain_end(in, q, in->n);
            cp_put(out, &c->args, in->s + q, ce - q);
            return CP_MORE;
        }
        cp_put(out, &c->args, in->s + q, e - q);
        q = e;
        if (s->call_close) {
            size_t k = cp_skip_ws(in, q);
            if (cp_at(in, k, s->call_close))
                q = k + strlen(s->call_close);
            else if (may_continue(in, k, s->call_close, NULL))
                return CP_MORE;
        }
        p = q;
        if (!section && !s->repeat_open) {
            *end = p;
            return CP_OK;
        }
        if (section && !s->section_close && !s->repeat_open) {
            *end = p;
            return CP_OK;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// XML-like parameters

// Whether the request's tools say that parameter `key` of function `name` is a string: 1 yes,
// 0 no, -1 unknown (no such tool or parameter).
static int string_param(const cp_in *in, const char *name, const char *key, size_t key_len) {
    if (!in->tools || !json_object_is_type(in->tools, json_type_array)) return -1;
    for (size_t i = 0; i < json_object_array_length(in->tools); i++) {
        json_object *t = json_object_array_get_idx(in->tools, i), *fn, *nm, *ps, *props, *prop,
                    *type;
        if (!json_object_object_get_ex(t, "function", &fn) ||
            !json_object_object_get_ex(fn, "name", &nm) ||
            strcmp(json_object_get_string(nm), name) != 0)
            continue;
        if (!json_object_object_get_ex(fn, "parameters", &ps) ||
            !json_object_object_get_ex(ps, "properties", &props) ||
            !json_object_is_type(props, json_type_object))
            return -1;
        char k[256];
        if (key_len >= sizeof k) return -1;
        memcpy(k, key, key_len);
        k[key_len] = '\0';
        if (!json_object_object_get_ex(props, k, &prop)) return -1;
        if (!json_object_object_get_ex(prop, "type", &type)) return 0;
        if (json_object_is_type(type, json_type_string))
            return strcmp(json_object_get_string(type), "string") == 0;
        if (json_object_is_type(type, json_type_array))
            for (size_t j = 0; j < json_object_array_length(type); j++)
                if (!strcmp(json_object_get_string(json_object_array_get_idx(type, j)), "string"))
                    return 1;
        return 0;
    }
    return -1;
}

// The value at [a, b) with one newline stripped on each side.
static void strip_nl(const cp_in *in, size_t *a, size_t *b) {
    if (*a < *b && in->s[*a] == '\n')
        ++*a;
    else if (*b - *a >= 2 && in->s[*a] == '\r' && in->s[*a + 1] == '\n')
        *a += 2;
    if (*b > *a && in->s[*b - 1] == '\n') --*b;
    if (*b > *a && in->s[*b - 1] == '\r') --*b;
}

// One parameter at q (at param_open) of call c; *q moves past it.
static cp_res xml_param(const cp_in *in, size_t *qp, size_t count, cp_out *out, cp_call *c) {
    const cp_spec *s = in->spec;
    size_t q = *qp + strlen(s->param_open), ke = cp_find(in, q, s->param_name_close);
    if (ke == SIZE_MAX) return in->partial ? CP_MORE : CP_BAD;
    size_t k0 = q, k1 = ke;
    while (k0 < k1 && ws(in->s[k0])) k0++;
    while (k1 > k0 && ws(in->s[k1 - 1])) k1--;
    if (k0 == k1) return CP_BAD;
    q = ke + strlen(s->param_name_close);
    if (s->value_open) {
        size_t v = cp_skip_ws(in, q);
        if (cp_at(in, v, s->value_open))
            q = v + strlen(s->value_open);
        else
            return may_continue(in, v, s->value_open, NULL) ? CP_MORE : CP_BAD;
    }
    int is_str = string_param(in, c->name.p, in->s + k0, k1 - k0);
    size_t ve = cp_find(in, q, s->param_close), a = q, b;
    if (ve == SIZE_MAX) {
        if (!in->partial) return CP_BAD;
        if (is_str != 1) return CP_MORE; // a number or object is given whole
        // Stream the string: held back are the closing's first bytes, the newline that may be
        // stripped, an incomplete character.
        const char *m = s->param_close;
        b = in->n;
        size_t from = in->n - a > strlen(m) ? in->n - strlen(m) : a;
        for (size_t i = from; i < in->n; i++)
            if (cp_at_prefix(in, i, m)) {
                b = i;
                break;
            }
        if (b > a && in->s[b - 1] == '\n') b--;
        if (b > a && in->s[b - 1] == '\r') b--;
        if (a < b && in->s[a] == '\n')
            a++;
        else if (a == b && a < in->n && in->s[a] == '\n')
            a++;
        if (b < a) b = a;
        b -= cp_utf8_tail(in->s, a, b);
        cp_puts(out, &c->args, count ? ",\"" : "\"");
        cp_put_json_str(out, &c->args, in->s + k0, k1 - k0);
        cp_puts(out, &c->args, "\":\"");
        cp_put_json_str(out, &c->args, in->s + a, b - a);
        return CP_MORE;
    }
    b = ve;
    strip_nl(in, &a, &b);
    cp_puts(out, &c->args, count ? ",\"" : "\"");
    cp_put_json_str(out, &c->args, in->s + k0, k1 - k0);
    cp_puts(out, &c->args, "\":");
    size_t ta = a, tb = b;
    while (ta < tb && ws(in->s[ta])) ta++;
    while (tb > ta && ws(in->s[tb - 1])) tb--;
    if (is_str != 1 && cp_json_whole(in->s, ta, tb)) {
        cp_put(out, &c->args, in->s + ta, tb - ta);
    } else {
        cp_puts(out, &c->args, "\"");
        cp_put_json_str(out, &c->args, in->s + a, b - a);
        cp_puts(out, &c->args, "\"");
    }
    *qp = ve + strlen(s->param_close);
    return CP_OK;
}

static cp_res xml_block(const cp_in *in, size_t at, size_t *end, cp_out *out) {
    const cp_spec *s = in->spec;
    size_t p = at;
    bool section = false;
    if (s->section_open && cp_at(in, p, s->section_open)) {
        p += strlen(s->section_open);
        section = true;
    }
    for (size_t done = 0;; done++) {
        size_t q = cp_skip_ws(in, p);
        if (section && cp_at(in, q, s->section_close)) {
            *end = q + strlen(s->section_close);
            return done ? CP_OK : CP_BAD;
        }
        if (!cp_at(in, q, s->call_open)) {
            if (may_continue(in, q, s->call_open, section ? s->section_close : NULL))
                return CP_MORE;
            if (done && !section) {
                *end = p;
                return CP_OK;
            }
            return CP_BAD;
        }
        q += strlen(s->call_open);
        size_t e = first_of(in, q, s->name_close, s->param_open, s->call_close);
        if (e == SIZE_MAX) return in->partial && in->n - q <= 256 ? CP_MORE : CP_BAD;
        cp_call *c = cp_new_call(out);
        if (!c) return CP_BAD;
        if (!put_name(in, q, e, out, c) || memchr(c->name.p, '<', c->name.n)) {
            cp_drop_calls(out, out->n_calls - 1);
            return CP_BAD;
        }
        q = e;
        if (cp_at(in, q, s->name_close)) q += strlen(s->name_close);
        cp_puts(out, &c->args, "{");
        for (size_t count = 0;; count++) {
            q = cp_skip_ws(in, q);
            if (cp_at(in, q, s->call_close)) {
                q += strlen(s->call_close);
                cp_puts(out, &c->args, "}");
                break;
            }
            if (!cp_at(in, q, s->param_open)) {
                if (may_continue(in, q, s->call_close, s->param_open)) return CP_MORE;
                cp_drop_calls(out, out->n_calls - 1);
                return CP_BAD;
            }
            cp_res r = xml_param(in, &q, count, out, c);
            if (r == CP_MORE && in->partial) return CP_MORE;
            if (r != CP_OK) {
                cp_drop_calls(out, out->n_calls - 1);
                return CP_BAD;
            }
        }
        p = q;
        if (!section) {
            *end = p;
            return CP_OK;
        }
    }
}

cp_res cp_calls_block(const cp_in *in, size_t at, size_t *end, cp_out *out) {
    switch (in->spec->kind) {
    case CP_JSON_OBJECT:
        return json_object_block(in, at, end, out);
    case CP_JSON_ARRAY:
        return json_array_block(in, at, end, out);
    case CP_NAME_ARGS:
        return name_args_block(in, at, end, out);
    case CP_XML:
        return xml_block(in, at, end, out);
    case CP_NONE:
    case CP_SPECIAL:
        break;
    }
    return CP_BAD;
}
