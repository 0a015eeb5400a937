// fuzz_quantize_args.c - mint-quantize's argument parser on arbitrary argument lists. The input is
// the arguments after argv[0], separated by NUL bytes.
//
// Checked: a failure leaves a non-empty, NUL-terminated message in the error buffer (it quotes
// the argument as given, newlines included); a success gives what its mode needs (IN OUT TYPE;
// -o for --synthetic; one input and --text for --compare), options inside their ranges, at most
// QUANTIZE_MAX_OVERRIDES overrides and QUANTIZE_MAX_COMPARE non-empty comparison types without
// commas.
#include "fuzz_util.h"
#include "quantize_args.h"

#include <stdbool.h>
#include <string.h>

enum { MAX_ARGS = 96 }; // room for more than QUANTIZE_MAX_OVERRIDES --tensor-type pairs

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_fields in;
    FUZZ_CHECK(fuzz_split(data, size, MAX_ARGS, &in));
    char *argv[MAX_ARGS + 2];
    int argc = fuzz_argv(&in, "mint-quantize", argv);

    quantize_options o;
    char err[256];
    memset(err, 0x5A, sizeof err);
    bool ok = quantize_parse_args(argc, argv, &o, err, sizeof err);
    if (!ok) {
        size_t len = strnlen(err, sizeof err);
        FUZZ_CHECK(len > 0 && len < sizeof err);
        fuzz_fields_free(&in);
        return 0;
    }
    if (o.help) {
        fuzz_fields_free(&in);
        return 0;
    }
    const char *strs[] = {o.in,     o.out,   o.output_type, o.token_embd_type,
                          o.preset, o.vocab, o.text,        o.work_dir};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        FUZZ_CHECK(fuzz_is_field(&in, strs[i]));
    FUZZ_CHECK(!o.type || fuzz_is_field(&in, o.type) ||
               strcmp(o.type, "F32") == 0); // --synthetic default
    FUZZ_CHECK(o.n_threads >= 0 && o.n_threads <= 256);
    FUZZ_CHECK(o.ctx >= 8 && o.ctx <= (1 << 16) && o.chunks >= 0 && o.chunks <= (1 << 24));
    FUZZ_CHECK(o.n_overrides >= 0 && o.n_overrides <= QUANTIZE_MAX_OVERRIDES);
    for (int i = 0; i < o.n_overrides; i++) FUZZ_CHECK(fuzz_is_field(&in, o.overrides[i]));
    switch (o.mode) {
    case QUANTIZE_CONVERT:
        FUZZ_CHECK(o.in && o.out && o.type && fuzz_is_field(&in, o.type));
        break;
    case QUANTIZE_SYNTHETIC:
        FUZZ_CHECK(o.out && o.preset && o.type);
        break;
    case QUANTIZE_COMPARE:
        FUZZ_CHECK(o.in && o.text);
        FUZZ_CHECK(o.n_compare >= 1 && o.n_compare <= QUANTIZE_MAX_COMPARE);
        for (int i = 0; i < o.n_compare; i++) {
            const char *c = o.compare[i];
            FUZZ_CHECK(c >= o.compare_buf && c < o.compare_buf + sizeof o.compare_buf);
            FUZZ_CHECK(c[0] != '\0' && !strchr(c, ','));
        }
        break;
    default:
        FUZZ_CHECK(0);
    }
    fuzz_fields_free(&in);
    return 0;
}
