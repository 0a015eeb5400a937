// fuzz_quantize_args.c - mint-quantize's option table (tools/common/quantize_args.c) through the
// option parser on arbitrary argument lists. The input is the arguments after argv[0],
// separated by NUL bytes.
//
// Checked: a failure leaves a non-empty, NUL-terminated message in the error buffer (it quotes
// the argument as given, newlines included); a success gives what its mode needs (IN OUT TYPE;
// -o for --synthetic; one input and --text for --compare), options inside their ranges, at most
// QUANTIZE_MAX_OVERRIDES overrides (and --include-weights / --exclude-weights), file types from
// quantize_ftypes only (TYPE, --type and each of at most QUANTIZE_MAX_COMPARE --compare types),
// --imatrix only in a conversion or --compare (never --synthetic), and the weight filters only
// with it, never both kinds.
#include "fuzz_util.h"
#include "quantize_args.h"

#include <stdbool.h>
#include <string.h>

enum { MAX_ARGS = 96 }; // room for more than QUANTIZE_MAX_OVERRIDES --tensor-type pairs

// Whether s is one of the table's file type names (the pointer itself, not a copy).
static bool is_ftype(const char *s) {
    for (int i = 0; quantize_ftypes[i]; i++)
        if (s == quantize_ftypes[i]) return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_fields in;
    FUZZ_CHECK(fuzz_split(data, size, MAX_ARGS, &in));
    char *argv[MAX_ARGS + 2];
    int argc = fuzz_argv(&in, "mint-quantize", argv);

    quantize_options o;
    char err[256];
    memset(err, 0x5A, sizeof err);
    opt_result r = opt_parse(&quantize_program, argc, argv, &o, err, sizeof err);
    if (r == OPT_BAD) {
        size_t len = strnlen(err, sizeof err);
        FUZZ_CHECK(len > 0 && len < sizeof err);
        fuzz_fields_free(&in);
        return 0;
    }
    if (r == OPT_HELP_ASKED || r == OPT_VERSION_ASKED) {
        fuzz_fields_free(&in);
        return 0;
    }
    const char *strs[] = {o.in,    o.out,  o.output_type, o.token_embd_type, o.preset,
                          o.vocab, o.text, o.work_dir,    o.imatrix};
    // (o.type is checked below: it is the table's spelling, not the argument)
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        FUZZ_CHECK(fuzz_is_field(&in, strs[i]));
    FUZZ_CHECK(o.n_threads >= 0 && o.n_threads <= 256);
    FUZZ_CHECK(o.ctx >= 8 && o.ctx <= (1 << 16) && o.chunks >= 0 && o.chunks <= (1 << 24));
    FUZZ_CHECK(o.seed >= 0);
    FUZZ_CHECK(o.overrides.n >= 0 && o.overrides.n <= QUANTIZE_MAX_OVERRIDES);
    for (int i = 0; i < o.overrides.n; i++) FUZZ_CHECK(fuzz_is_field(&in, o.overrides.v[i]));
    const opt_strs *filters[] = {&o.include_weights, &o.exclude_weights};
    for (int k = 0; k < 2; k++) {
        FUZZ_CHECK(filters[k]->n >= 0 && filters[k]->n <= QUANTIZE_MAX_OVERRIDES);
        for (int i = 0; i < filters[k]->n; i++) FUZZ_CHECK(fuzz_is_field(&in, filters[k]->v[i]));
        FUZZ_CHECK(filters[k]->n == 0 || o.imatrix);
    }
    FUZZ_CHECK(!(o.include_weights.n && o.exclude_weights.n));
    FUZZ_CHECK(!o.imatrix || o.mode != QUANTIZE_SYNTHETIC);
    switch (o.mode) {
    case QUANTIZE_CONVERT:
        FUZZ_CHECK(o.in && o.out && o.type && is_ftype(o.type));
        break;
    case QUANTIZE_SYNTHETIC:
        FUZZ_CHECK(o.out && o.preset && o.type && is_ftype(o.type));
        break;
    case QUANTIZE_COMPARE:
        FUZZ_CHECK(o.in && o.text);
        FUZZ_CHECK(o.compare.n >= 1 && o.compare.n <= QUANTIZE_MAX_COMPARE);
        for (int i = 0; i < o.compare.n; i++) FUZZ_CHECK(is_ftype(o.compare.v[i]));
        break;
    default:
        FUZZ_CHECK(0);
    }
    fuzz_fields_free(&in);
    return 0;
}
