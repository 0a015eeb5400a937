// test_jinja.c - the Jinja engine for chat templates (runtime/template/jinja*.c) against jinja2:
// every template in MINT_TEST_DATA/templates, mint's presets (llama.cpp's built-in names) and
// the three families' sources, with several conversations, rendered by mint_chat_apply and by
// tests/chat/render_ref.py (jinja2 set up as transformers sets it up) must give byte-identical
// text, or both refuse (a template's raise_exception with the same message). Plus the engine's
// pieces on small templates whose expected text was produced by python3-jinja2 3.1, and its
// bounds on hostile templates.
#include "helpers/helpers.h"
#include "mint.h"
#include "runtime/text/chat.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const mint_chat_msg unit_msgs[] = {{"system", "S"}, {"user", "Hi"}};

typedef struct unit_case {
    const char *tmpl; // template source
    const char *want; // jinja2's output, or raise_exception's message
    bool raises;      // the template raises
} unit_case;

// Generated once with python3-jinja2 3.1.2 (Debian) through tests/chat/render_ref.py's environment
// (messages = unit_msgs, add_generation_prompt = True, bos "<s>", eos "</s>").
static const unit_case unit_cases[] = {
    {"a\n  {% if true %}\n  b\n  {% endif %}\nc", "a\n  b\nc", false},
    // Methods that would change a dict or list are undefined (jinja2's sandbox), printed as
    // nothing; fuzz_jinja found the dict message built with its arguments swapped (a crash).
    {"[{{ messages[0].pop }}|{{ {}.update }}|{{ [].append }}]", "[||]", false},
    {"a  {%- if true -%}  b  {%- endif -%}  c", "abc", false},
    {"x {{- ' y ' -}} z", "x y z", false},
    {"{# comment #}\nA{#- c -#}  B", "AB", false},
    {"  {%+ if true %}k{% endif %}", "  k", false},
    {"line\n{% raw %}{{ not evaluated }}{% endraw %}\n", "line\n{{ not evaluated }}", false},
    {"trailing newline dropped\n", "trailing newline dropped", false},
    {"{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ "
     "loop.length }}{{ loop.revindex }};{% endfor %}",
     "10TrueFalse22;21FalseTrue21;", false},
    {"{% for x in [1,2,3,4] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% "
     "endif %}{{ x }}{% endfor %}",
     "13", false},
    {"{% for x in [] %}a{% else %}empty{% endfor %}", "empty", false},
    {"{% for k, v in {'a': 1, 'b': [2]}.items() %}{{ k }}={{ v }} {% endfor %}", "a=1 b=[2] ",
     false},
    {"{% for x in range(6) if x is odd %}{{ x }}{{ loop.length }} {% endfor %}", "13 33 53 ",
     false},
    {"{% for x in 'ab' %}{{ loop.previtem is defined }}{{ loop.nextitem }}|{% endfor %}",
     "Falseb|True|", false},
    {"{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}", "1", false},
    {"{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ "
     "ns.n }}",
     "6", false},
    {"{% set t %}  block {{ 1 + 1 }} {% endset %}[{{ t }}]", "[  block 2 ]", false},
    {"{% set a, b = 1, 'two' %}{{ a }}{{ b }}", "1two", false},
    {"{% macro greet(name, punct='!') %}Hello {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} "
     "{{ greet('B', punct='?') }} {{ greet(name='C') }}",
     "Hello A! Hello B? Hello C!", false},
    {"{% macro outer() %}[{{ caller() }}]{% endmacro %}{% call outer() %}inside{% endcall %}",
     "[inside]", false},
    {"{{ [1, 'a', none, true, 1.5, {'k': 'v'}] }}", "[1, 'a', None, True, 1.5, {'k': 'v'}]", false},
    {"{{ ('x',) }} {{ (1, 2) }} {{ \"it's\" }} {{ ['it\\'s', \"q\\\"\"] }}",
     "('x',) (1, 2) it's [\"it's\", 'q\"']", false},
    {"{{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 1e20 }} "
     "{{ 0.1 + 0.2 }} {{ 1.0 }} {{ 3 * 'ab' }}",
     "3.5 3 -4 2 1024 0.5 1e+20 0.30000000000000004 1.0 ababab", false},
    {"{{ 1 ~ 2 ~ none ~ true }} {{ 'a' + 'b' }} {{ [1] + [2] }}", "12NoneTrue ab [1, 2]", false},
    {"{{ 'abcdef'[1:4] }} {{ 'abcdef'[::-1] }} {{ [1,2,3,4][-2:] }} {{ 'abc'[-1] }} {{ "
     "[1,2,3][::2] }}",
     "bcd fedcba [3, 4] c [1, 3]", false},
    {"{{ 1 < 2 < 3 }} {{ 'a' in 'cat' }} {{ 3 not in [1,2] }} {{ 'k' in {'k': 1} }} {{ not none }}",
     "True True True True True", false},
    {"{{ 'yes' if messages else 'no' }} {{ none or 'dflt' }} {{ 0 and 1 }} {{ [] or {} }}",
     "yes dflt 0 {}", false},
    {"{{ '\\u00e9\\x41\\n\\t|' }}", "\303\251A\n\t|", false},
    {"[{{ nothing }}] {{ nothing is defined }} {{ nothing is undefined }} {{ messages[0].nope is "
     "defined }} {{ nothing | default('d') }} {{ '' | default('e', true) }} {{ nothing | length }}",
     "[] False True False d e 0", false},
    {"{{ none.attr is defined }} {{ messages[5] is defined }}", "False False", false},
    // llama.cpp's lenience (render_ref.py's _Environment): string + undefined/None is the string.
    {"{{ 'a' + nothing }}|{{ none + 'b' }}|{{ 'c' ~ none }}", "a|b|cNone", false},
    {"{{ 1 is number }}{{ 1 is integer }}{{ 1.0 is float }}{{ true is boolean }}{{ 'a' is string "
     "}}{{ {} is mapping }}{{ [] is iterable }}{{ 'a' is sequence }}{{ none is none }}{{ 4 is even "
     "}}{{ 9 is divisibleby 3 }}{{ 'a' is in 'abc' }}{{ 2 is eq 2 }}{{ false is false }}{{ true is "
     "true }}",
     "TrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrue", false},
    {"{{ '  x  ' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ 'hello world' | upper }}|{{ 'HeLLo' | "
     "lower }}|{{ 'hello WORLD' | capitalize }}|{{ 'hello big-world' | title }}|{{ 'aaa' | "
     "replace('a', 'b', 2) }}",
     "x|hi|HELLO WORLD|hello|Hello world|Hello Big-World|bba", false},
    {"{{ {'a': '\303\251', 'b': [1, 2.5, none, true]} | tojson }}|{{ {'a': {'b': []}} | "
     "tojson(indent=2) }}|{{ 'x\"\\n' | tojson }}",
     "{\"a\": \"\303\251\", \"b\": [1, 2.5, null, true]}|{\n  \"a\": {\n    \"b\": []\n  "
     "}\n}|\"x\\\"\\n\"",
     false},
    {"{{ [3, 1, 2] | sort }} {{ ['b', 'A', 'c'] | sort }} {{ [3,1,2] | sort(reverse=true) | list "
     "}} {{ [1,2,3] | reverse | list }} {{ ['a','A','b'] | unique | list }}",
     "[1, 2, 3] ['A', 'b', 'c'] [3, 2, 1] [3, 2, 1] ['a', 'b']", false},
    {"{{ messages | map(attribute='role') | join(', ') }} {{ messages | selectattr('role', "
     "'equalto', 'user') | list | length }} {{ messages | rejectattr('role', 'eq', 'user') | "
     "map(attribute='content') | first }}",
     "system, user 1 S", false},
    {"{{ [1, 2, 3, 4] | select('even') | list }} {{ [1, 2, 3] | reject('odd') | list }} {{ [1,2] | "
     "first }} {{ [1,2] | last }} {{ 'abc' | list }} {{ {'b': 1, 'a': 2} | items | list }} {{ "
     "{'b': 1, 'a': 2} | dictsort }}",
     "[2, 4] [2] 1 2 ['a', 'b', 'c'] [('b', 1), ('a', 2)] [('a', 2), ('b', 1)]", false},
    {"{{ '12' | int + 1 }} {{ 'x' | int }} {{ '2.5' | float }} {{ -3 | abs }} {{ 3.7 | int }} {{ 5 "
     "| string ~ 'x' }} {{ [1,2,3] | sum }} {{ [4,2,8] | max }} {{ [4,2,8] | min }}",
     "13 0 2.5 3 3 5x 6 8 2", false},
    {"{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(4, true) }}|{{ '<a href=\"x\">&' | e "
     "}}|{{ 'ok' | safe }}",
     "a\n  b\n\n  c|    a\n    b|&lt;a href=&#34;x&#34;&gt;&amp;|ok", false},
    {"{{ 'a,b,,c'.split(',') }} {{ '  a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ "
     "'a.b.c'.rsplit('.', 1) }}",
     "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c'] ['a.b', 'c']", false},
    {"{{ '  x '.strip() }}|{{ '--x--'.lstrip('-') }}|{{ '--x--'.rstrip('-') }}|{{ "
     "'abc'.startswith('ab') }}{{ 'abc'.endswith(('x', 'c')) }}|{{ 'hello'.find('l') }}{{ "
     "'hello'.find('z') }}|{{ 'hi there'.title() }}|{{ 'Ab'.upper() }}{{ 'Ab'.lower() }}|{{ "
     "'a-a'.replace('-', '+') }}",
     "x|x--|--x|TrueTrue|2-1|Hi There|ABab|a+a", false},
    {"{{ '{} and {}'.format('x', 1) }}|{{ '{0}{0}'.format('y') }}|{{ '{n}!'.format(n='z') }}|{{ ', "
     "'.join(['a', 'b']) }}",
     "x and 1|yy|z!|a, b", false},
    {"{{ {'a': 1}.get('a') }} {{ {'a': 1}.get('b') }} {{ {'a': 1}.get('b', 2) }} {{ {'a': 1, 'b': "
     "2}.keys() | list }} {{ {'a': 1}.values() | list }}",
     "1 None 2 ['a', 'b'] [1]", false},
    {"{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ dict(a=1) }} {{ add_generation_prompt "
     "}} {{ bos_token }}{{ eos_token }} {{ tools }}",
     "[0, 1, 2] [1, 3, 5] {'a': 1} True <s></s> None", false},
    {"{{ raise_exception('custom refusal') }}", "custom refusal", true},
    {"{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% "
     "endif %}",
     "System role not supported", true},
};

static const char *const error_cases[] = {
    "{% for %}",
    "{{ 1 + }}",
    "{{ x | nosuchfilter }}",
    "{% include 'x' %}",
    "{{ nothing.attr }}",
    "{{ nothing + 1 }}",
    "{{ [].append(1) }}",
    "{% if true %}",
    "{{ 'a' ~ }}",
    "{{ 1 / 0 }}",
    "{{ undefined_fn() }}",
    // fuzz_jinja found this: the message quoted a key with a line break in it.
    "{{ messages[0][\"a\\nb\"].x }}",
    // ... and this: a slice inside a tuple subscript had no object to slice (a null node).
    "{{ messages[0:1, 2] }}",
};

static mint_status apply(const char *tmpl, const mint_chat_msg *m, size_t n, char **out,
                         mint_err *err) {
    size_t len;
    return mint_chat_apply(tmpl, m, n, true, "<s>", "</s>", out, &len, err);
}

Test(jinja, pieces_render_as_jinja2) {
    for (size_t i = 0; i < sizeof unit_cases / sizeof unit_cases[0]; i++) {
        const unit_case *u = &unit_cases[i];
        char *out = NULL;
        mint_err err;
        mint_status st = apply(u->tmpl, unit_msgs, 2, &out, &err);
        if (u->raises) {
            cr_expect_eq(st, MINT_E_ARG, "case %zu should raise: %s", i, u->tmpl);
            cr_expect_str_eq(err.msg, u->want, "case %zu: %s", i, u->tmpl);
        } else {
            cr_expect_eq(st, MINT_OK, "case %zu: %s -> %s", i, u->tmpl, err.msg);
            if (st == MINT_OK) cr_expect_str_eq(out, u->want, "case %zu: %s", i, u->tmpl);
        }
        mint_chat_free(out);
    }
}

Test(jinja, template_errors_are_one_line) {
    for (size_t i = 0; i < sizeof error_cases / sizeof error_cases[0]; i++) {
        char *out = (char *)1;
        mint_err err;
        mint_status st = apply(error_cases[i], unit_msgs, 2, &out, &err);
        cr_expect_eq(st, MINT_E_FORMAT, "%s: %s", error_cases[i], err.msg);
        cr_expect_null(out);
        cr_expect(strlen(err.msg) > 0 && !strchr(err.msg, '\n'), "%s: '%s'", error_cases[i],
                  err.msg);
    }
}

Test(jinja, a_missing_construct_is_named_with_its_line) {
    char *out;
    mint_err err;
    cr_assert_eq(apply("line one\n{% include 'other.jinja' %}", unit_msgs, 2, &out, &err),
                 MINT_E_FORMAT);
    cr_expect_str_eq(err.msg, "chat template: template line 2: unsupported construct 'include'");
    cr_assert_eq(apply("a\nb\n{{ x | nosuch }}", unit_msgs, 2, &out, &err), MINT_E_FORMAT);
    cr_expect_str_eq(err.msg, "chat template: template line 3: no filter named 'nosuch'");
    // jinja2 defers an unknown filter inside an if to when it runs.
    cr_assert_eq(apply("{% if false %}{{ x | from_json }}{% endif %}ok", unit_msgs, 2, &out, &err),
                 MINT_OK);
    cr_expect_str_eq(out, "ok");
    mint_chat_free(out);
}

Test(jinja, hostile_templates_stop_at_the_bounds, .timeout = MT_HANG(60)) {
    static const char *const hostile[] = {
        "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
        "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
        "{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}",
        "{% set ns = namespace(s='xx') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}"
        "{% endfor %}{{ ns.s | length }}",
        "{{ range(1000000) | list }}",
        "{{ 2 ** 64 }}",
        // Values nested deeper than the bound: printing, comparing, JSON.
        "{% set ns = namespace(l=[]) %}{% for i in range(5000) %}{% set ns.l = [ns.l] %}"
        "{% endfor %}{{ ns.l < [ns.l] }}",
        "{% set ns = namespace(d={}) %}{% for i in range(5000) %}{% set ns.d = {'a': ns.d} %}"
        "{% endfor %}{{ ns.d }}",
        "{% set ns = namespace(d={}) %}{% for i in range(5000) %}{% set ns.d = {'a': ns.d} %}"
        "{% endfor %}{{ ns.d | tojson }}",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        char *out = NULL;
        mint_err err;
        cr_expect_eq(apply(hostile[i], unit_msgs, 2, &out, &err), MINT_E_FORMAT, "%s", hostile[i]);
        cr_expect_null(out);
    }
    // Deep nesting of the source itself.
    size_t n = 20000;
    char *deep = malloc(6 * n + 16);
    size_t k = 0;
    k += (size_t)sprintf(deep + k, "{{ ");
    for (size_t i = 0; i < n; i++) deep[k++] = '(';
    deep[k++] = '1';
    for (size_t i = 0; i < n; i++) deep[k++] = ')';
    k += (size_t)sprintf(deep + k, " }}");
    char *out = NULL;
    mint_err err;
    cr_expect_eq(apply(deep, unit_msgs, 2, &out, &err), MINT_E_FORMAT);
    free(deep);
}

Test(jinja, no_template_names_the_flags) {
    char *out = NULL;
    mint_err err;
    cr_assert_eq(apply(NULL, unit_msgs, 2, &out, &err), MINT_E_NOT_FOUND);
    cr_expect(strstr(err.msg, "--chat-template NAME") && strstr(err.msg, "--chat-template-file"),
              "%s", err.msg);
}

Test(jinja, presets_are_jinja_sources) {
    cr_expect_not_null(mint_chat_preset("zephyr"));
    cr_expect_not_null(mint_chat_preset("llama2"));
    cr_expect_not_null(mint_chat_preset("chatml"));
    cr_expect_not_null(mint_chat_preset("vicuna"));
    cr_expect_null(mint_chat_preset("nope"));
    cr_expect_null(mint_chat_preset(NULL));
    // Every preset renders a conversation (test_chat_presets holds the texts to llama.cpp's).
    size_t n = 0;
    for (const char *name; (name = mint_chat_preset_name(n)) != NULL; n++) {
        char *a = NULL;
        mint_err err;
        cr_assert_eq(apply(mint_chat_preset(name), unit_msgs, 2, &a, &err), MINT_OK, "%s: %s", name,
                     err.msg);
        cr_expect_gt(strlen(a), 0, "%s", name);
        mint_chat_free(a);
    }
    cr_expect_geq(n, 54);
    // mint_chat_render renders the families' sources (the templates the models ship).
    const mint_chat_template fam[] = {MINT_CHAT_ZEPHYR, MINT_CHAT_LLAMA2, MINT_CHAT_CHATML};
    for (int i = 0; i < 3; i++) {
        char *a = NULL, buf[512];
        mint_err err;
        cr_assert_eq(apply(mint_chat_family_jinja(fam[i]), unit_msgs + 1, 1, &a, &err), MINT_OK);
        size_t len =
            mint_chat_render(fam[i], unit_msgs + 1, 1, true, "<s>", "</s>", buf, sizeof buf);
        cr_expect_eq(len, strlen(a));
        cr_expect_str_eq(buf, a);
        mint_chat_free(a);
    }
}

// ---------------------------------------------------------------------------------------------
// Every real template against jinja2

typedef struct conv {
    const char *name;         // for the report
    const mint_chat_msg *msg; // [n]
    size_t n;
} conv;

static const mint_chat_msg c_sys_user[] = {{"system", "You are a helpful assistant."},
                                           {"user", "Hello!"}};
static const mint_chat_msg c_multi[] = {{"system", "Be brief."},
                                        {"user", "Hi"},
                                        {"assistant", "Hello! How can I help?"},
                                        {"user", "Tell me a joke."},
                                        {"assistant", "Why did the chicken cross the road?"},
                                        {"user", "Why?"}};
static const mint_chat_msg c_lone[] = {{"user", "What is 2+2?"}};
static const mint_chat_msg c_nonascii[] = {
    {"user", "Gr\xc3\xbc\xc3\x9f"
             "e, \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe2\x80\x94 "
             "\xe2\x80\x9cquotes\xe2\x80\x9d \xf0\x9f\x98\x80\n  new line\ttab"}};
static const mint_chat_msg c_jinjaish[] = {
    {"user", "{{ x }} {% if y %}z{% endif %} {# c #} ' \" \\ </s>"}};
static const mint_chat_msg c_spaces[] = {
    {"user", "a"}, {"assistant", " spaced reply  "}, {"user", "  b  "}};
static const conv convs[] = {
    {"system+user", c_sys_user, 2}, {"multi-turn", c_multi, 6},         {"lone user", c_lone, 1},
    {"non-ASCII", c_nonascii, 1},   {"Jinja-like text", c_jinjaish, 1}, {"spaces", c_spaces, 3},
};
#define N_CONVS (sizeof convs / sizeof convs[0])

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static json_object *messages_json(const conv *c) {
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < c->n; i++) {
        json_object *m = json_object_new_object();
        json_object_object_add(m, "role", json_object_new_string(c->msg[i].role));
        json_object_object_add(m, "content", json_object_new_string(c->msg[i].content));
        json_object_array_add(a, m);
    }
    return a;
}

// Debian's python3 (with python3-jinja2) when it is there, else the first python3 on PATH.
static const char *python(void) {
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

Test(jinja, every_template_renders_as_jinja2, .timeout = MT_HANG(900)) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", mt_data_path("templates"));
    char probe[256];
    snprintf(probe, sizeof probe, "%s -c 'import jinja2' 2>/dev/null", python());
    if (mt_run(probe, NULL, NULL) != 0) {
        if (getenv("CI"))
            cr_assert_fail("python3-jinja2 is missing (apt-get install python3-jinja2)");
        cr_skip_test("python3-jinja2 is not installed: the oracle cannot run "
                     "(apt-get install python3-jinja2)");
    }
    // Templates: the files, then the presets.
    char *names[256], *srcs[256];
    size_t n_t = 0;
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n_t < 200) {
        size_t l = strlen(de->d_name);
        if (l > 6 && strcmp(de->d_name + l - 6, ".jinja") == 0) names[n_t++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n_t, sizeof *names, by_name);
    cr_assert_eq(n_t, 68, "expected the 68 templates of MINT_TEST_DATA/templates, found %zu", n_t);
    for (size_t i = 0; i < n_t; i++) {
        size_t len;
        srcs[i] = (char *)mt_read_file(mt_path(dir, names[i]), &len);
        cr_assert_not_null(srcs[i]);
        srcs[i] = realloc(srcs[i], len + 1);
        srcs[i][len] = '\0';
    }
    // Every llama.cpp name's preset, then the three families' sources.
    for (size_t i = 0; mint_chat_preset_name(i) && n_t < 250; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "preset %s", mint_chat_preset_name(i));
        names[n_t] = strdup(nm);
        srcs[n_t++] = strdup(mint_chat_preset(mint_chat_preset_name(i)));
    }
    const mint_chat_template fam[] = {MINT_CHAT_ZEPHYR, MINT_CHAT_LLAMA2, MINT_CHAT_CHATML};
    for (int i = 0; i < 3; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "family %s", mint_chat_name(fam[i]));
        names[n_t] = strdup(nm);
        srcs[n_t++] = strdup(mint_chat_family_jinja(fam[i]));
    }
    // One batch for the oracle.
    json_object *cases = json_object_new_array();
    for (size_t t = 0; t < n_t; t++)
        for (size_t c = 0; c < N_CONVS; c++)
            for (int g = 1; g >= 0; g--) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "template", json_object_new_string(srcs[t]));
                json_object_object_add(o, "messages", messages_json(&convs[c]));
                json_object_object_add(o, "add_generation_prompt", json_object_new_boolean(g));
                json_object_object_add(o, "bos_token", json_object_new_string("<s>"));
                json_object_object_add(o, "eos_token", json_object_new_string("</s>"));
                json_object_array_add(cases, o);
            }
    const char *tmp = mt_tmpdir();
    const char *in = mt_path(tmp, "cases.json"), *outp = mt_path(tmp, "oracle.json");
    cr_assert(json_object_to_file_ext(in, cases, JSON_C_TO_STRING_PLAIN) == 0);
    char cmd[4096];
    const char *src = getenv("MINT_SOURCE_DIR");
    snprintf(cmd, sizeof cmd, "%s '%s/tests/chat/render_ref.py' --batch < '%s' > '%s'", python(),
             src ? src : "..", in, outp);
    char *py_err = NULL;
    cr_assert_eq(mt_run(cmd, NULL, &py_err), 0, "the oracle failed: %s", py_err);
    free(py_err);
    json_object *want = json_object_from_file(outp);
    cr_assert_not_null(want);
    cr_assert_eq(json_object_array_length(want), json_object_array_length(cases));
    // Compare.
    size_t k = 0, n_bad_templates = 0, n_rendered = 0, n_raised = 0, n_failed = 0;
    for (size_t t = 0; t < n_t; t++) {
        size_t bad = 0;
        char first[700] = "";
        for (size_t c = 0; c < N_CONVS; c++)
            for (int g = 1; g >= 0; g--, k++) {
                json_object *w = json_object_array_get_idx(want, k);
                bool ok = json_object_get_boolean(mt_jget(w, "ok"));
                char *out = NULL;
                size_t len = 0;
                mint_err err;
                mint_status st = mint_chat_apply(srcs[t], convs[c].msg, convs[c].n, g, "<s>",
                                                 "</s>", &out, &len, &err);
                bool same;
                if (ok) {
                    const char *text = json_object_get_string(mt_jget(w, "text"));
                    size_t tl = (size_t)json_object_get_string_len(mt_jget(w, "text"));
                    same = st == MINT_OK && len == tl && memcmp(out, text, tl) == 0;
                    n_rendered++;
                } else if (json_object_get_boolean(mt_jget(w, "raised"))) {
                    same = st == MINT_E_ARG &&
                           strcmp(err.msg, json_object_get_string(mt_jget(w, "error"))) == 0;
                    n_raised++;
                } else {
                    same = st == MINT_E_FORMAT;
                    n_failed++;
                }
                if (!same && bad++ == 0)
                    snprintf(first, sizeof first, "%s, %s: jinja2 %s / mint %s", convs[c].name,
                             g ? "generation prompt" : "no generation prompt",
                             ok ? "renders" : json_object_get_string(mt_jget(w, "error")),
                             st == MINT_OK ? "renders (differently)" : err.msg);
                mint_chat_free(out);
            }
        if (bad) {
            n_bad_templates++;
            cr_log_error("%s: %zu of %zu cases differ; first: %s", names[t], bad, 2 * N_CONVS,
                         first);
        }
    }
    cr_log_info("%zu templates x %zu conversations x 2: %zu rendered, %zu raised, %zu failed "
                "in both; %zu templates differ",
                n_t, N_CONVS, n_rendered, n_raised, n_failed, n_bad_templates);
    cr_expect_eq(n_bad_templates, 0);
    for (size_t t = 0; t < n_t; t++) {
        free(names[t]);
        free(srcs[t]);
    }
    json_object_put(cases);
    json_object_put(want);
}

// ---------------------------------------------------------------------------------------------
// A model without a chat template: mint-run -cnv, mint-tokenize --messages and mint-serve's chat
// endpoint all give the library's refusal (the Python binding raises it too:
// bindings/python/tests/test_openai.py).

#include "helpers/server.h"

// mint-run and mint-tokenize refuse a model without a template, in the library's words;
// mint-serve, a drop-in llama-server, falls back to ChatML as llama-server does.
Test(jinja, no_template_is_refused_alike_by_every_program, .timeout = MT_HANG(300)) {
    char want[MINT_ERR_MSG_MAX];
    {
        char *out = NULL;
        mint_err err;
        cr_assert_eq(mint_chat_apply(NULL, unit_msgs, 2, true, "", "", &out, NULL, &err),
                     MINT_E_NOT_FOUND);
        snprintf(want, sizeof want, "%s", err.msg);
    }
    const char *model = mt_synth("small", "F32"); // no tokenizer.chat_template
    const char *dir = mt_tmpdir();
    const char *msgs = mt_path(dir, "msgs.json");
    const char *j = "[{\"role\": \"user\", \"content\": \"hi\"}]";
    cr_assert(mt_write_file(msgs, j, strlen(j)));
    char cmd[8192], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "echo hi | '%s' -m '%s' -cnv -n 4", mt_bin("mint-run"), model);
    cr_expect_eq(mt_run(cmd, &out, &err), 1);
    cr_expect(strstr(err, want), "mint-run: %s", err);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "'%s' -m '%s' --messages '%s'", mt_bin("mint-tokenize"), model, msgs);
    cr_expect_eq(mt_run(cmd, &out, &err), 1);
    cr_expect(strstr(err, want), "mint-tokenize: %s", err);
    free(out);
    free(err);
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1", model);
    mt_resp r = mt_http(&s, "POST", "/apply-template",
                        "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}", NULL);
    cr_expect_eq(r.status, 200);
    cr_expect(strstr(r.body, "<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n"),
              "mint-serve: %s", r.body);
    mt_resp_free(&r);
    mt_server_stop(&s, 15, 30);
}

Test(jinja, template_file_and_tokenize_show_the_prompt, .timeout = MT_HANG(120)) {
    const char *model = mt_synth("small", "F32");
    const char *dir = mt_tmpdir();
    const char *msgs = mt_path(dir, "msgs.json"), *tmpl = mt_path(dir, "t.jinja");
    const char *j = "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", "
                    "\"content\": \"h\\u00e9\"}]";
    const char *t = "{% for m in messages %}[{{ m.role | upper }}] {{ m.content }}\n{% endfor %}"
                    "{% if add_generation_prompt %}[ASSISTANT]{% endif %}";
    cr_assert(mt_write_file(msgs, j, strlen(j)));
    cr_assert(mt_write_file(tmpl, t, strlen(t)));
    char cmd[8192], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "'%s' -m '%s' --messages '%s' --chat-template-file '%s'",
             mt_bin("mint-tokenize"), model, msgs, tmpl);
    cr_assert_eq(mt_run(cmd, &out, &err), 0, "%s", err);
    cr_expect_str_eq(out, "[SYSTEM] S\n[USER] h\xc3\xa9\n[ASSISTANT]");
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd,
             "'%s' -m '%s' --messages '%s' --chat-template-file '%s' --no-generation-prompt",
             mt_bin("mint-tokenize"), model, msgs, tmpl);
    cr_assert_eq(mt_run(cmd, &out, &err), 0, "%s", err);
    cr_expect_str_eq(out, "[SYSTEM] S\n[USER] h\xc3\xa9\n");
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "'%s' -m '%s' --messages '%s' --chat-template-file '%s' --ids",
             mt_bin("mint-tokenize"), model, msgs, tmpl);
    cr_assert_eq(mt_run(cmd, &out, &err), 0, "%s", err);
    cr_expect(out[0] == '[' && strchr(out, ']'), "%s", out);
    free(out);
    free(err);
}
