// mint-tokenize - the token ids of a text, as llama-tokenize prints them.
//
//   mint-tokenize -m MODEL -p TEXT [--ids] [--pieces] [--no-bos] [--parse-special]
//   mint-tokenize -m MODEL --messages FILE.json [--chat-template-file FILE.jinja]
//                 [--no-generation-prompt] [--ids]
//
// Only the vocabulary is loaded (a vocab-only GGUF works too). One id per line by default; --ids
// prints them as one list ([1, 15043, 3186]); --pieces adds each token's text. --messages shows
// what a chat model is given: the conversation (an OpenAI-shaped [{"role", "content"}] list)
// rendered with the model's chat template (or the file's), as mint-run -cnv and mint-serve
// render it; with --ids, the ids of that prompt as they tokenize it (control tokens parsed, BOS
// added unless the text starts with it).
#include "cli.h"
#include "mint.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "mint-tokenize"

typedef struct options {
    const char *model, *prompt, *file;
    const char *messages, *template_file; // --messages FILE.json, --chat-template-file FILE
    bool ids, pieces, no_bos, parse_special, stdin_text;
    bool no_generation_prompt; // --no-generation-prompt
} options;

static void usage(FILE *out) {
    fprintf(out, "usage: mint-tokenize -m MODEL (-p TEXT | -f FILE | --stdin) [options]\n"
                 "       mint-tokenize -m MODEL --messages FILE.json [--chat-template-file FILE]"
                 " [--no-generation-prompt] [--ids]\n"
                 "\n"
                 "  -m, --model FILE     model or vocab-only GGUF\n"
                 "  -p, --prompt TEXT    text to tokenize\n"
                 "  -f, --file FILE      read the text from a file\n"
                 "      --stdin          read the text from standard input\n"
                 "      --ids            print the ids as one list: [1, 15043, 3186]\n"
                 "      --pieces         print each token's text next to its id\n"
                 "      --no-bos         do not add BOS (even if the vocabulary asks for it)\n"
                 "      --parse-special  turn control-token text such as </s> into the token\n"
                 "      --messages FILE.json  print the chat prompt of these messages (a list of\n"
                 "                       {\"role\", \"content\"}); with --ids, its token ids\n"
                 "      --chat-template-file FILE  a Jinja chat template instead of the model's\n"
                 "      --no-generation-prompt  end after the last message (no assistant header)\n"
                 "  -h, --help           this help\n");
}

static bool parse(int argc, char **argv, options *o, char *err, size_t n) {
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--ids"))
            o->ids = true;
        else if (!strcmp(a, "--pieces"))
            o->pieces = true;
        else if (!strcmp(a, "--no-bos"))
            o->no_bos = true;
        else if (!strcmp(a, "--parse-special"))
            o->parse_special = true;
        else if (!strcmp(a, "--stdin"))
            o->stdin_text = true;
        else if (!strcmp(a, "--no-generation-prompt"))
            o->no_generation_prompt = true;
        else if (!strcmp(a, "--messages") || !strcmp(a, "--chat-template-file")) {
            if (i + 1 >= argc) {
                snprintf(err, n, "%s needs a value (see --help)", a);
                return false;
            }
            if (a[2] == 'm')
                o->messages = argv[++i];
            else
                o->template_file = argv[++i];
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model") || !strcmp(a, "-p") ||
                   !strcmp(a, "--prompt") || !strcmp(a, "-f") || !strcmp(a, "--file")) {
            if (i + 1 >= argc) {
                snprintf(err, n, "%s needs a value (see --help)", a);
                return false;
            }
            const char *v = argv[++i];
            if (a[1] == 'm' || !strcmp(a, "--model"))
                o->model = v;
            else if (a[1] == 'p' || !strcmp(a, "--prompt"))
                o->prompt = v;
            else
                o->file = v;
        } else {
            snprintf(err, n, "unknown option '%s' (see --help)", a);
            return false;
        }
    }
    if (!o->model) {
        snprintf(err, n, "no model given: use -m MODEL (see --help)");
        return false;
    }
    if (!!o->prompt + !!o->file + o->stdin_text + !!o->messages != 1) {
        snprintf(err, n, "give exactly one of -p TEXT, -f FILE, --stdin and --messages FILE");
        return false;
    }
    if (!o->messages && (o->template_file || o->no_generation_prompt)) {
        snprintf(err, n, "--chat-template-file and --no-generation-prompt need --messages");
        return false;
    }
    return true;
}

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
    json_object *root = json_object_from_file(o->messages);
    if (!root) {
        snprintf(msg, cap, "%s: not a readable JSON file (%s)", o->messages,
                 json_util_get_last_err() ? json_util_get_last_err() : "?");
        return NULL;
    }
    char *text = NULL, *tmpl = NULL;
    size_t n = json_object_is_type(root, json_type_array) ? json_object_array_length(root) : 0;
    mint_chat_msg *msgs = calloc(n + 1, sizeof *msgs);
    if (!json_object_is_type(root, json_type_array)) {
        snprintf(msg, cap, "%s: expected a JSON list of {\"role\", \"content\"} objects",
                 o->messages);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(root, i), *r, *c;
        if (!json_object_is_type(e, json_type_object) ||
            !json_object_object_get_ex(e, "role", &r) ||
            !json_object_object_get_ex(e, "content", &c) ||
            !json_object_is_type(r, json_type_string) ||
            !json_object_is_type(c, json_type_string)) {
            snprintf(msg, cap, "%s: message %zu needs string \"role\" and \"content\"", o->messages,
                     i);
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
    options o;
    char msg[600];
    if (!parse(argc, argv, &o, msg, sizeof msg)) {
        fprintf(stderr, TOOL ": %s\n", msg);
        return 2;
    }
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
    if (o.messages) {
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
        o.parse_special = true;
        o.no_bos = o.no_bos || (bos && *bos && strncmp(text, bos, strlen(bos)) == 0);
    } else if (o.file)
        text = owned = cli_read_file(o.file, &len, msg, sizeof msg);
    else if (o.stdin_text)
        text = owned = read_stdin(&len);
    else
        len = strlen(text);
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
