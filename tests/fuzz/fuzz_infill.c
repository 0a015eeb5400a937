// fuzz_infill.c - mint-serve's /infill bodies (tools/common/infill_prompt.c) over a micro
// synthetic model (259 byte tokens, written once to a temporary file). The first byte picks the
// budgets (n_batch, n_ctx, n_predict), --spm-infill and whether the vocabulary has the
// repository-level tokens; the body is the bytes after it, in a buffer of exactly its length.
//
// Checked: checking and building are deterministic; a refused body names a field and says why
// in one line; an accepted one always builds (every text has byte fallback), into ids inside
// the vocabulary that end with the middle token and hold the prefix and suffix tokens.
#include "fuzz_util.h"
#include "infill_prompt.h"

#include <stdio.h>
#include <unistd.h>

static mint_model *model; // the micro model, opened at the first input

static mint_model *open_model(void) {
    char path[] = "/tmp/fuzz-infill-XXXXXX";
    int fd = mkstemp(path);
    FUZZ_CHECK(fd >= 0);
    close(fd);
    mint_synth_params p = {
        .preset = "llama3", .ftype = "F32", .seed = 1, .n_threads = 1, .shape = "micro"};
    mint_err err;
    mint_model *m = NULL;
    FUZZ_CHECK(mint_synth_write(&p, path, &err) == MINT_OK);
    FUZZ_CHECK(mint_model_open(path, NULL, &m, &err) == MINT_OK);
    unlink(path);
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (!model) model = open_model();
    const uint8_t mode = data[0];
    static const int batches[] = {0, 4, 16, 64};
    const infill_limits lim = {.n_batch = batches[mode & 3],
                               .n_ctx = 64 << ((mode >> 2) & 3),
                               .n_predict = (mode & 16) ? 8 : -1,
                               .spm = mode & 32};
    // Byte tokens 3.. stand for the FIM tokens (the micro vocabulary has none of its own).
    const mint_fim_tokens fim = {3, 4, 5, -1, (mode & 64) ? 6 : -1, (mode & 128) ? 7 : -1};
    char *body = malloc(size - 1 ? size - 1 : 1);
    FUZZ_CHECK(body);
    if (size > 1) memcpy(body, data + 1, size - 1);
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, body, (int)(size - 1));
    json_tokener_free(tok);
    free(body);
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return 0;
    }
    const int32_t n_vocab = 259;
    const char *param = NULL, *param2 = NULL;
    const char *bad = infill_check(o, n_vocab, &param);
    FUZZ_CHECK(bad == infill_check(o, n_vocab, &param2) && param == param2);
    if (bad) {
        FUZZ_CHECK(*bad && !strchr(bad, '\n') && param && *param);
        json_object_put(o);
        return 0;
    }
    int32_t *ids = NULL, *again = NULL;
    int n = 0, n2 = 0;
    char msg[256] = "", msg2[256] = "";
    const bool ok = infill_tokens(model, &fim, o, &lim, &ids, &n, msg, sizeof msg);
    const bool ok2 = infill_tokens(model, &fim, o, &lim, &again, &n2, msg2, sizeof msg2);
    FUZZ_CHECK(ok && ok2);
    {
        FUZZ_CHECK(n == n2 && n >= 3 && memcmp(ids, again, (size_t)n * sizeof *ids) == 0);
        FUZZ_CHECK(ids[n - 1] == fim.mid);
        bool pre = false, suf = false;
        for (int k = 0; k < n; k++) {
            FUZZ_CHECK(ids[k] >= 0 && ids[k] < n_vocab);
            pre |= ids[k] == fim.pre;
            suf |= ids[k] == fim.suf;
        }
        FUZZ_CHECK(pre && suf);
    }
    free(ids);
    free(again);
    json_object_put(o);
    return 0;
}
