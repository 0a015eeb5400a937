// jinja.h - the Jinja engine for chat templates (internal): the subset of jinja2 that models'
// tokenizer.chat_template strings use, with jinja2's semantics as Hugging Face configures it
// (trim_blocks, lstrip_blocks, the loopcontrols extension, an immutable sandbox, a tojson that
// keeps non-ASCII text, the globals raise_exception and strftime_now).
//
// One render is one arena: the lexer's tokens, the syntax tree and every value live in it and go
// at once. Every bound (arena bytes, output bytes, loop iterations, call and nesting depth) ends
// the render with one line in the error, never a hang or a crash.
//
//   jinja_lex.c     template text -> tokens (whitespace control, trim/lstrip blocks)
//   jinja_parse.c   tokens -> syntax tree (statements and expressions)
//   jinja_value.c   values: arena, strings, lists, dicts, Python's str()/repr() and JSON
//   jinja_eval.c    expressions and statements -> output
//   jinja_filters.c filters, tests, and methods of strings and dicts
//   jinja_json.c    JSON text to values (a request's messages, tools and keyword arguments)
#ifndef MINT_JINJA_H
#define MINT_JINJA_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Bounds of one render.
#define JJ_MAX_ARENA  (256u << 20) // bytes of tokens, tree and values
#define JJ_MAX_OUTPUT (16u << 20)  // bytes of rendered text
#define JJ_MAX_STEPS  10000000     // loop iterations + calls + output pieces
#define JJ_MAX_DEPTH  500          // nesting of the parser and of macro calls
#define JJ_MAX_RANGE  100000       // items of range(), as jinja2's sandbox

// ---------------------------------------------------------------------------------------------
// Arena and errors

typedef struct jj_block jj_block;

typedef struct jj_ctx {
    jj_block *blocks; // arena blocks, newest first
    size_t used;      // arena bytes handed out so far (against JJ_MAX_ARENA)
    jmp_buf fail;     // jj_fail longjmps here
    char err[512];    // the one-line error
    bool raised;      // the error is a raise_exception() message, verbatim
    char *out;        // [out_cap] rendered text (malloc, grows)
    size_t out_len;   // bytes of out used
    size_t out_cap;   // bytes of out allocated
    long steps;       // work done (against JJ_MAX_STEPS)
    int depth;        // current nesting (against JJ_MAX_DEPTH)
    const char *src;  // template text (for line numbers)
    int64_t now;      // strftime_now's time (seconds since the epoch); 0: the clock's
} jj_ctx;

void *jj_alloc(jj_ctx *c, size_t n);
void jj_arena_free(jj_ctx *c);
_Noreturn void jj_fail(jj_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jj_step(jj_ctx *c);
void jj_enter(jj_ctx *c);
void jj_leave(jj_ctx *c);

// ---------------------------------------------------------------------------------------------
// Values

typedef enum jj_type {
    JV_UNDEF, // jinja2's Undefined: falsy, renders empty, iterates as empty
    JV_NONE,  // Python None
    JV_BOOL,  // b
    JV_INT,   // i (int64; overflow fails the render)
    JV_FLOAT, // f
    JV_STR,   // s (UTF-8, immutable)
    JV_LIST,  // l (list, tuple or generator: see jj_list.kind)
    JV_DICT,  // d (dict, or a namespace() object when d->ns)
    JV_MACRO, // m (a macro, callable)
    JV_FUNC,  // fn (a global function or a bound method: self + name)
    JV_LOOP,  // lp (the loop object of a for)
} jj_type;

typedef struct jj_str {
    const char *p; // bytes (not NUL-terminated)
    size_t n;      // length
} jj_str;

typedef struct jj_list jj_list;
typedef struct jj_dict jj_dict;
typedef struct jj_node jj_node;
typedef struct jj_loop jj_loop;
typedef struct jj_frame jj_frame;
typedef struct jj_value jj_value;

typedef struct jj_macro {
    jj_node *def;      // the macro statement
    jj_frame *closure; // frame it was defined in (read live at call time)
} jj_macro;

typedef struct jj_func {
    const char *name; // global name ("range") or method name ("strip")
    jj_value *self;   // the object of a bound method, NULL for a global
} jj_func;

struct jj_value {
    jj_type t; // which member holds the value
    bool safe; // JV_STR: a markupsafe Markup (from |safe or |escape): adding a plain string to it
               //   escapes that string's HTML characters, as jinja2 does
    union {
        bool b;
        int64_t i;
        double f;
        jj_str s; // JV_STR text; for JV_UNDEF the name it stands for (for errors)
        jj_list *l;
        jj_dict *d;
        jj_macro *m;
        jj_func fn;
        jj_loop *lp;
    };
};

typedef enum jj_list_kind {
    JL_LIST,  // Python list: prints [a, b]
    JL_TUPLE, // Python tuple: prints (a, b)
    JL_GEN,   // generator/iterator (select, map, reverse...): always true, no length
} jj_list_kind;

struct jj_list {
    jj_value *v;       // [n] items
    size_t n, cap;     // used / allocated
    jj_list_kind kind; // how it prints and behaves
};

struct jj_dict {
    jj_value *k, *v; // [n] keys and values, in insertion order
    size_t n, cap;   // used / allocated
    bool ns;         // a namespace(): attributes are assignable, prints as <Namespace ...>
};

struct jj_loop {
    jj_list *items; // the (filtered) items iterated
    size_t i;       // current index0
};

#define JJ_UNDEF ((jj_value){.t = JV_UNDEF})
#define JJ_NONE  ((jj_value){.t = JV_NONE})

jj_value jj_bool(bool b);
jj_value jj_int(int64_t i);
jj_value jj_float(double f);
jj_value jj_strn(jj_ctx *c, const char *p, size_t n); // copies
jj_value jj_strz(const char *p);                      // borrows a static/arena string
jj_value jj_list_new(jj_ctx *c, jj_list_kind kind);
void jj_list_push(jj_ctx *c, jj_list *l, jj_value v);
jj_value jj_dict_new(jj_ctx *c);
void jj_dict_set(jj_ctx *c, jj_dict *d, jj_value k, jj_value v);
jj_value *jj_dict_get(jj_dict *d, jj_value k); // NULL when absent
jj_value *jj_dict_getz(jj_dict *d, const char *k);

const char *jj_type_name(jj_value v); // Python's type name ("str", "dict", ...)
bool jj_truthy(jj_value v);
bool jj_equal(jj_value a, jj_value b);
int jj_compare(jj_ctx *c, jj_value a, jj_value b, const char *op); // <0, 0, >0; fails if unordered
bool jj_is_number(jj_value v);
double jj_num(jj_value v);
bool jj_str_eq(jj_value v, const char *z);

// Text building on the arena.
typedef struct jj_buf {
    char *p;       // bytes
    size_t n, cap; // used / allocated
} jj_buf;
void jj_buf_put(jj_ctx *c, jj_buf *b, const char *p, size_t n);
void jj_buf_puts(jj_ctx *c, jj_buf *b, const char *z);
jj_value jj_buf_value(jj_buf *b);

void jj_str_of(jj_ctx *c, jj_buf *b, jj_value v);  // Python str()
void jj_repr_of(jj_ctx *c, jj_buf *b, jj_value v); // Python repr()
jj_str jj_to_str(jj_ctx *c, jj_value v);           // str() as a string
void jj_json(jj_ctx *c, jj_buf *b, jj_value v, int indent, int level, const char *item_sep,
             const char *key_sep, bool sort_keys);
void jj_float_repr(double f, char *out, size_t cap);
jj_list *jj_iterate(jj_ctx *c, jj_value v); // items of an iterable (dict: keys); fails otherwise
// JSON text[n] as Python's json.loads reads it (jinja_json.c); fails naming `what` and the byte.
jj_value jj_from_json(jj_ctx *c, const char *text, size_t n, const char *what);
int64_t jj_length(jj_ctx *c, jj_value v); // len(); fails when it has none

// ---------------------------------------------------------------------------------------------
// Lexer

typedef enum jj_tok_type {
    TK_EOF,
    TK_DATA,      // template text
    TK_VAR_BEGIN, // {{
    TK_VAR_END,   // }}
    TK_BLOCK_BEGIN,
    TK_BLOCK_END,
    TK_NAME,
    TK_STRING, // value already unescaped
    TK_INT,
    TK_FLOAT,
    TK_OP, // operator text in s
} jj_tok_type;

typedef struct jj_tok {
    jj_tok_type t; // kind
    jj_str s;      // text (data, name, unescaped string, operator)
    int64_t i;     // TK_INT value
    double f;      // TK_FLOAT value
    int line;      // 1-based line in the template
} jj_tok;

// Tokenizes the template; returns the tokens ending with TK_EOF.
jj_tok *jj_lex(jj_ctx *c, const char *src, size_t n, size_t *n_tok);

// ---------------------------------------------------------------------------------------------
// Syntax tree

typedef enum jj_node_type {
    // statements
    N_BODY,        // kids[n]: statements in order
    N_DATA,        // s: literal text
    N_OUTPUT,      // a: expression to print
    N_FOR,         // target (a), iter (b), filter (c), body (d), else (e)
    N_IF,          // cond (a), then (b), else (c: N_IF for elif, or N_BODY)
    N_SET,         // target (a), value (b)
    N_SETBLOCK,    // target (a), body (b), filter chain (c, applied to the text, may be NULL)
    N_MACRO,       // name s, params kids (N_NAME, default in their a), body b
    N_CALLBLOCK,   // call (a), body (b): {% call m() %}...{% endcall %}
    N_FILTERBLOCK, // filter chain (a, applied to N_NAME placeholder), body (b)
    N_BREAK,
    N_CONTINUE,
    // expressions
    N_CONST,   // v
    N_NAME,    // s
    N_ATTR,    // a.s
    N_ITEM,    // a[b]
    N_SLICE,   // a[b:c:d] (NULL parts absent)
    N_CALL,    // a(kids...), keyword args have s set and value in a
    N_FILTER,  // a | s(kids...)
    N_TEST,    // a is [not: flag] s(kids...)
    N_BINOP,   // a op b (op in s)
    N_UNARY,   // op s a
    N_AND,     // a and b
    N_OR,      // a or b
    N_NOT,     // not a
    N_COMPARE, // a, then kids: each N_UNARY-like with op s and operand a
    N_COND,    // b if a else c
    N_LIST,    // kids
    N_TUPLE,   // kids
    N_DICT,    // kids: pairs (even key, odd value)
    N_CONCAT,  // kids joined with ~
    N_KWARG,   // s = a (in a call's kids)
} jj_node_type;

struct jj_node {
    jj_node_type t;             // which node
    int line;                   // template line
    jj_str s;                   // name / operator / text
    jj_value v;                 // N_CONST value
    bool flag;                  // N_TEST negated; N_FOR recursive
    jj_node *a, *b, *c, *d, *e; // children as the type says
    jj_node **kids;             // [n_kids] list children
    size_t n_kids;              // count
};

jj_node *jj_parse(jj_ctx *c, const jj_tok *toks, size_t n_tok);

// ---------------------------------------------------------------------------------------------
// Evaluation

struct jj_frame {
    jj_frame *parent; // enclosing scope (NULL for the globals)
    jj_dict *vars;    // names set in this scope
};

typedef struct jj_env {
    jj_ctx *c;         // arena, errors, output
    jj_frame *globals; // the render's variables
    int ctl;           // 1 after {% break %}, 2 after {% continue %}, until the loop sees it
    jj_value caller;   // the body of a {% call %} for the macro it calls next (else undefined)
} jj_env;

void jj_emit(jj_env *e, jj_buf *out, const char *p, size_t n); // bounded by JJ_MAX_OUTPUT

jj_value jj_eval(jj_env *e, jj_frame *f, jj_node *n);
void jj_exec(jj_env *e, jj_frame *f, jj_node *n, jj_buf *out);
jj_value jj_call_value(jj_env *e, jj_frame *f, jj_value fn, jj_value *args, size_t n_args,
                       jj_str *kw_names, jj_value *kw_vals, size_t n_kw, int line);

// Filters and tests (jinja_filters.c). Known names are checked when parsing, as jinja2 does
// when it compiles a template.
bool jj_filter_known(jj_str name);
bool jj_test_known(jj_str name);
jj_value jj_filter(jj_env *e, jj_frame *f, jj_str name, jj_value v, jj_value *args, size_t n,
                   jj_str *kw_names, jj_value *kw_vals, size_t n_kw, int line);
bool jj_test(jj_env *e, jj_str name, jj_value v, jj_value *args, size_t n, int line);
// Attribute lookup: dict keys, methods of str/dict/list, loop and namespace attributes.
jj_value jj_getattr(jj_env *e, jj_value obj, jj_str name, int line);
jj_value jj_getitem(jj_env *e, jj_value obj, jj_value key, int line);
jj_value jj_call_method(jj_env *e, jj_value self, const char *name, jj_value *args, size_t n,
                        jj_str *kw_names, jj_value *kw_vals, size_t n_kw, int line);

// String helpers shared by methods and filters (jinja_methods.c). Case mapping is ASCII's;
// stripping without chars strips Python's whitespace.
jj_value jj_s_upper(jj_ctx *c, jj_str s);
jj_value jj_s_lower(jj_ctx *c, jj_str s);
jj_value jj_s_capitalize(jj_ctx *c, jj_str s);
jj_value jj_s_strip(jj_ctx *c, jj_str s, const jj_str *chars, bool left, bool right);
jj_value jj_s_replace(jj_ctx *c, jj_str s, jj_str old, jj_str rep, int64_t count);
bool jj_s_has(jj_str s, jj_str sub, size_t *at); // first occurrence
// HTML-escaped text, as markupsafe's escape (& < > " ' as entities); not marked safe.
jj_value jj_html_escape(jj_ctx *c, jj_str s);

#endif // MINT_JINJA_H
