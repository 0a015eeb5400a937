// greedy.c - the smallest program on libmint: load a model, evaluate a prompt, print 32 greedy
// tokens. Build against an installed mint:  cc greedy.c $(pkg-config --cflags --libs mint)
#include <mint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *prompt = argc > 2 ? argv[2] : "Once upon a time";
    mint_err err;
    mint_model *m;
    mint_ctx *c;
    if (argc < 2 || mint_model_open(argv[1], NULL, &m, &err) != MINT_OK)
        return fprintf(stderr, "usage: greedy MODEL.gguf [PROMPT]%s%s\n", argc < 2 ? "" : ": ",
                       argc < 2 ? "" : err.msg),
               1;
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_ctx = 256;
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0; // greedy
    mint_sampler *s;
    int32_t ids[256];
    size_t n;
    if (mint_ctx_create(m, &cp, &c, &err) || mint_sampler_create(&sp, d.n_vocab, &s, &err) ||
        mint_tokenize(m, prompt, strlen(prompt), true, false, ids, 256, &n, &err) ||
        mint_eval(c, ids, (int32_t)n, 0, false, &err))
        return fprintf(stderr, "greedy: %s\n", err.msg), 1;
    printf("%s", prompt);
    for (int i = 0; i < 32; i++) {
        int32_t t = mint_sampler_sample(s, mint_get_logits(c, -1));
        char piece[64];
        size_t len = mint_token_to_piece(m, t, false, piece, sizeof piece);
        printf("%.*s", (int)(len < sizeof piece ? len : 0), piece);
        if (mint_token_is_eog(m, t) || mint_eval(c, &t, 1, (int32_t)n + i, false, &err)) break;
    }
    printf("\n");
    mint_sampler_free(s);
    mint_ctx_free(c);
    mint_model_close(m);
    return 0;
}
