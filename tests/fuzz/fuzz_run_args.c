// fuzz_run_args.c - mint-run's option table (tools/common/run_args.c) through the option parser
// (tools/common/options.c) on arbitrary argument lists. The input is the arguments after
// argv[0], separated by NUL bytes.
//
// Checked: a failure leaves a non-empty, NUL-terminated message in the error buffer (it quotes
// the argument as given, newlines included); a success gives options inside their documented
// ranges, strings that are the arguments themselves, and the combination rules (one prompt
// source, --n-probs needs --json, ...); a chat template is one of the library's preset names
// (its spelling) or a Jinja template given as is; parsing is deterministic. A --prompt-ids value
// also goes through cli_parse_ids, as mint-run does.
#include "chat_arg.h"
#include "cli.h"
#include "fuzz_util.h"
#include "mint.h"
#include "options.h"
#include "run_args.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_fields in;
    FUZZ_CHECK(fuzz_split(data, size, MAX_ARGS, &in));
    char *argv[MAX_ARGS + 2];
    int argc = fuzz_argv(&in, "mint-run", argv);

    run_options o, again;
    memset(&o, 0, sizeof o); // padding too: the two results are compared byte for byte
    memset(&again, 0, sizeof again);
    char err[256], err2[256];
    memset(err, 0x5A, sizeof err);
    opt_result r = opt_parse(&run_program, argc, argv, &o, err, sizeof err);
    opt_result r2 = opt_parse(&run_program, argc, argv, &again, err2, sizeof err2);
    FUZZ_CHECK(r == r2);
    if (r == OPT_BAD) {
        size_t len = strnlen(err, sizeof err);
        FUZZ_CHECK(len > 0 && len < sizeof err && strcmp(err, err2) == 0);
        fuzz_fields_free(&in);
        return 0;
    }
    if (r == OPT_HELP_ASKED || r == OPT_VERSION_ASKED) {
        fuzz_fields_free(&in);
        return 0;
    }
    FUZZ_CHECK(r == OPT_OK && memcmp(&o, &again, sizeof o) == 0);
    FUZZ_CHECK(o.kv_type >= 0 && o.kv_type <= 3 && !(o.escape && o.no_escape));
    FUZZ_CHECK(!o.chat_template || mint_chat_preset(o.chat_template) ||
               (cli_chat_is_jinja(o.chat_template) && fuzz_is_field(&in, o.chat_template)));
    FUZZ_CHECK(o.attention >= 0 && o.attention <= 3);
    const char *strs[] = {o.model,  o.prompt,     o.prompt_file, o.prompt_ids,
                          o.system, o.trace_json, o.report,      o.compare_model};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        FUZZ_CHECK(fuzz_is_field(&in, strs[i]));
    FUZZ_CHECK(o.model != NULL);
    FUZZ_CHECK(o.n_predict >= -1 && o.n_predict <= (1 << 24));
    FUZZ_CHECK(o.n_ctx >= 0 && o.n_ctx <= (1 << 20));
    FUZZ_CHECK(o.n_threads >= 0 && o.n_threads <= 256);
    FUZZ_CHECK(o.n_batch >= 0 && o.n_batch <= (1 << 20));
    FUZZ_CHECK(o.seed >= -1);
    FUZZ_CHECK(o.temp >= 0 && o.temp <= 1e6f);
    FUZZ_CHECK(o.top_k >= 0 && o.top_k <= (1 << 30));
    FUZZ_CHECK(o.top_p >= 0 && o.top_p <= 1 && o.min_p >= 0 && o.min_p <= 1);
    FUZZ_CHECK(o.repeat_penalty >= 1e-3f && o.repeat_penalty <= 1e3f);
    FUZZ_CHECK(o.repeat_last_n >= 0 && o.repeat_last_n <= (1 << 20));
    FUZZ_CHECK(o.n_probs >= 0 && o.n_probs <= 1000 && (o.n_probs == 0 || o.json));
    FUZZ_CHECK(!!o.prompt + !!o.prompt_file + !!o.prompt_ids <= 1);
    FUZZ_CHECK(!o.chat || (!o.prompt_ids && !o.no_kv_cache));
    if (o.prompt_ids) {
        size_t n = 0;
        char e[256];
        int32_t *ids = cli_parse_ids("--prompt-ids", o.prompt_ids, &n, e, sizeof e);
        if (ids) {
            FUZZ_CHECK(n >= 1);
            for (size_t i = 0; i < n; i++) FUZZ_CHECK(ids[i] >= 0);
        } else {
            FUZZ_CHECK(strnlen(e, sizeof e) < sizeof e);
        }
        free(ids);
    }
    fuzz_fields_free(&in);
    return 0;
}
