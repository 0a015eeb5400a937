// mint-tokenize - the token ids of a text, as llama-tokenize prints them.
//
//   mint-tokenize -m MODEL -p TEXT [--ids] [--pieces] [--no-bos] [--parse-special]
//
// Only the vocabulary is loaded (a vocab-only GGUF works too). One id per line by default; --ids
// prints them as one list ([1, 15043, 3186]); --pieces adds each token's text.
#include "cli.h"
#include "mint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "mint-tokenize"

typedef struct options {
    const char *model, *prompt, *file;
    bool ids, pieces, no_bos, parse_special, stdin_text;
} options;

static void usage(FILE *out) {
    fprintf(out, "usage: mint-tokenize -m MODEL (-p TEXT | -f FILE | --stdin) [options]\n"
                 "\n"
                 "  -m, --model FILE     model or vocab-only GGUF\n"
                 "  -p, --prompt TEXT    text to tokenize\n"
                 "  -f, --file FILE      read the text from a file\n"
                 "      --stdin          read the text from standard input\n"
                 "      --ids            print the ids as one list: [1, 15043, 3186]\n"
                 "      --pieces         print each token's text next to its id\n"
                 "      --no-bos         do not add BOS (even if the vocabulary asks for it)\n"
                 "      --parse-special  turn control-token text such as </s> into the token\n"
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
        else if (!strcmp(a, "-m") || !strcmp(a, "--model") || !strcmp(a, "-p") ||
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
    if (!!o->prompt + !!o->file + o->stdin_text != 1) {
        snprintf(err, n, "give exactly one of -p TEXT, -f FILE and --stdin");
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
    if (o.file)
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
