// mint-tokenize - the token ids of a text, as llama-tokenize prints them.
//
//   mint-tokenize -m MODEL (-p TEXT | -f FILE | --stdin) [--ids] [--pieces] [--no-bos]
//                 [--no-parse-special]
//   mint-tokenize -m MODEL --messages FILE.json [--chat-template-file FILE.jinja]
//                 [--no-generation-prompt] [--ids]
//
// Only the vocabulary is loaded (a vocab-only GGUF works too). One id per line by default; --ids
// prints them as one list ([1, 15043, 3186]); --pieces adds each token's text. Control-token
// text such as <|im_start|> is parsed into the token, as llama-tokenize does (--no-parse-special:
// tokenized as plain text). --messages shows
// what a chat model is given: the conversation (an OpenAI-shaped [{"role", "content"}] list)
// rendered with the model's chat template (or the file's), as mint-run -cnv and mint-serve
// render it; with --ids, the ids of that prompt as they tokenize it (control tokens parsed, BOS
// added unless the text starts with it).
#include "cli.h"
#include "mint.h"
#include "options.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "mint-tokenize"

typedef struct options {
    const char *model;         // -m: model or vocab-only GGUF
    const char *prompt;        // -p: the text
    const char *file;          // -f: the text from a file
    bool stdin_text;           // --stdin: the text from standard input
    bool ids;                  // --ids: one list
    bool pieces;               // --pieces: each token's text too
    bool no_bos;               // --no-bos
    bool no_parse_special;     // --no-parse-special: control-token text tokenized as text
    bool parse_special;        // --parse-special (the default; kept for older command lines)
    const char *messages_file; // --messages FILE: chat messages (JSON) to render and tokenize
    const char *template_file; // --chat-template-file FILE: a Jinja template instead of the model's
    bool no_generation_prompt; // --no-generation-prompt: no assistant header after them
} options;

#define F(member) OPT_FIELD(options, member)

static const opt opts[] = {
    {"-m --model", OPT_STRING, F(model), "FILE", .help = "model or vocab-only GGUF"},
    {"-p --prompt", OPT_STRING, F(prompt), "TEXT", .help = "text to tokenize"},
    {"-f --file", OPT_STRING, F(file), "FILE", .help = "read the text from a file"},
    {"--stdin", OPT_FLAG, F(stdin_text), .help = "read the text from standard input"},
    {"--messages", OPT_STRING, F(messages_file), "FILE",
     .help = "chat messages (JSON) rendered with the model's template"},
    {"--chat-template-file", OPT_STRING, F(template_file), "FILE",
     .help = "with --messages: a Jinja chat template instead of the model's"},
    {"--no-generation-prompt", OPT_FLAG, F(no_generation_prompt),
     .help = "with --messages: no assistant header at the end"},
    {"--ids", OPT_FLAG, F(ids), .help = "print the ids as one list: [1, 15043, 3186]"},
    {"--pieces", OPT_FLAG, F(pieces), .help = "print each token's text next to its id"},
    {"--no-bos", OPT_FLAG, F(no_bos),
     .help = "do not add BOS (even if the vocabulary asks for it)"},
    {"--no-parse-special", OPT_FLAG, F(no_parse_special),
     .help = "tokenize control-token text such as <|im_start|> as\n"
             "plain text (default: into the token, as llama-tokenize)"},
    {"--parse-special", OPT_FLAG, F(parse_special),
     .help = "control-token text into the token (the default)"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
};

static bool check(void *parsed, char *err, size_t n) {
    const struct options *o = parsed;
    if (!o->model) {
        snprintf(err, n, "no model given: use -m MODEL (see --help)");
        return false;
    }
    if (!!o->prompt + !!o->file + o->stdin_text + !!o->messages_file != 1) {
        snprintf(err, n, "give exactly one of -p TEXT, -f FILE, --stdin and --messages FILE");
        return false;
    }
    if (o->parse_special && o->no_parse_special) {
        snprintf(err, n, "give only one of --parse-special and --no-parse-special");
        return false;
    }
    if (!o->messages_file && (o->template_file || o->no_generation_prompt)) {
        snprintf(err, n, "--chat-template-file and --no-generation-prompt need --messages FILE");
        return false;
    }
    return true;
}

static const opt_program program = {
    .name = TOOL,
    .usage = "mint-tokenize -m MODEL (-p TEXT | -f FILE | --stdin | --messages FILE) [options]",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};

static char *read_stdin(size_t *len) {
    size_t cap = 1 << 16, n = 0, k;
    char *buf = malloc(cap);
    while (buf && (k = fread(buf + n, 1, cap - n, stdin)) > 0) {
        n += k;
        if (n == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    *len = n;
    return buf;
}

// The chat prompt of --messages: NULL and a line in msg on failure.
static char *chat_prompt(const options *o, const mint_model *m, char *msg, size_t cap) {
    json_object *root = json_object_from_file(o->messages_file);
    if (!root) {
        snprintf(msg, cap, "%s: not a readable JSON file (%s)", o->messages_file,
                 json_util_get_last_err() ? json_util_get_last_err() : "?");
        return NULL;
    }
    char *text = NULL, *tmpl = NULL;
    size_t n = json_object_is_type(root, json_type_array) ? json_object_array_length(root) : 0;
    mint_chat_msg *msgs = calloc(n + 1, sizeof *msgs);
    if (!json_object_is_type(root, json_type_array)) {
        snprintf(msg, cap, "%s: expected a JSON list of {\"role\", \"content\"} objects",
                 o->messages_file);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(root, i), *r, *c;
        if (!json_object_is_type(e, json_type_object) ||
            !json_object_object_get_ex(e, "role", &r) ||
            !json_object_object_get_ex(e, "content", &c) ||
            !json_object_is_type(r, json_type_string) ||
            !json_object_is_type(c, json_type_string)) {
            snprintf(msg, cap, "%s: message %zu needs string \"role\" and \"content\"",
                     o->messages_file, i);
            goto done;
        }
        msgs[i] = (mint_chat_msg){json_object_get_string(r), json_object_get_string(c)};
    }
    mint_model_desc d;
    mint_model_describe(m, &d);
    const char *src = d.chat_template;
    if (o->template_file) {
        size_t len;
        src = tmpl = cli_read_file(o->template_file, &len, msg, cap);
        if (!tmpl) goto done;
    }
    const char *bos = d.bos >= 0 ? mint_token_text(m, d.bos) : "";
    const char *eos = d.eos >= 0 ? mint_token_text(m, d.eos) : "";
    mint_err err;
    size_t len;
    if (mint_chat_apply(src, msgs, n, !o->no_generation_prompt, bos ? bos : "", eos ? eos : "",
                        &text, &len, &err) != MINT_OK)
        snprintf(msg, cap, "%s", err.msg);
done:
    free(tmpl);
    free(msgs);
    // text is malloc'd by the library (mint_chat_free is free); the JSON strings it came from go.
    json_object_put(root);
    return text;
}

int main(int argc, char **argv) {
    options o = {0};
    char msg[600];
    int done = opt_main(&program, argc, argv, &o);
    if (done >= 0) return done;
    mint_err err;
    mint_model *m;
    mint_model_params mp = {.vocab_only = true};
    if (mint_model_open(o.model, &mp, &m, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return 1;
    }
    size_t len = 0;
    char *owned = NULL;
    const char *text = o.prompt;
    if (o.messages_file) {
        text = owned = chat_prompt(&o, m, msg, sizeof msg);
        if (!text) {
            fprintf(stderr, TOOL ": %s\n", msg);
            mint_model_close(m);
            return 1;
        }
        len = strlen(text);
        if (!o.ids && !o.pieces) {
            fwrite(text, 1, len, stdout);
            free(owned);
            mint_model_close(m);
            return 0;
        }
        // The ids as mint-run -cnv makes them: control tokens parsed, BOS unless present.
        mint_model_desc d;
        mint_model_describe(m, &d);
        const char *bos = d.bos >= 0 ? mint_token_text(m, d.bos) : NULL;
        o.parse_special = true; // as mint-run -cnv and mint-serve, whatever --no-parse-special says
        o.no_bos = o.no_bos || (bos && *bos && strncmp(text, bos, strlen(bos)) == 0);
    } else if (o.file)
        text = owned = cli_read_file(o.file, &len, msg, sizeof msg);
    else if (o.stdin_text)
        text = owned = read_stdin(&len);
    else
        len = strlen(text);
    if (!o.messages_file) o.parse_special = !o.no_parse_special; // llama-tokenize's default
    if (!text) {
        fprintf(stderr, TOOL ": %s\n", o.file ? msg : "cannot read standard input");
        mint_model_close(m);
        return 1;
    }
    // add_special adds BOS as the vocabulary asks; --no-bos drops it again.
    size_t cap = len + 8, n = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    mint_status st =
        ids ? mint_tokenize(m, text, len, true, o.parse_special, ids, cap, &n, &err) : MINT_E_NOMEM;
    if (st == MINT_E_LIMIT) { // more tokens than bytes (byte fallback): n is the count
        int32_t *more = realloc(ids, n * sizeof *ids);
        st = more ? mint_tokenize(m, text, len, true, o.parse_special, more, n, &n, &err)
                  : MINT_E_NOMEM;
        ids = more ? more : ids;
    }
    int rc = 0;
    if (st != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", st == MINT_E_NOMEM ? "out of memory" : err.msg);
        rc = 1;
    } else {
        mint_model_desc d;
        mint_model_describe(m, &d);
        size_t first = o.no_bos && n > 0 && ids[0] == d.bos ? 1 : 0;
        if (o.ids) printf("[");
        for (size_t i = first; i < n; i++) {
            if (o.ids) {
                printf("%s%d", i > first ? ", " : "", ids[i]);
                continue;
            }
            printf("%6d", ids[i]);
            if (o.pieces) {
                const char *t = mint_token_text(m, ids[i]);
                printf(" -> ");
                cli_json_str(stdout, t ? t : "", t ? strlen(t) : 0);
            }
            printf("\n");
        }
        if (o.ids) printf("]\n");
    }
    free(ids);
    free(owned);
    mint_model_close(m);
    return rc;
}
