// fuzz_options.c - the option parser (tools/common/options.c) on arbitrary argument lists and
// any table: mint-run's, mint-quantize's, or one here with every kind of value. The input is
// NUL-separated fields: the first picks the table ("run", "quantize", anything else: every
// kind), the rest are the arguments after argv[0].
//
// Checked, for every table: a failure leaves one non-empty NUL-terminated message; parsing is
// deterministic; after a success every field the table names holds its default or a value the
// table allows (integers and numbers in range, enum indexes and names from the table's list,
// lists no longer than their limit, optional values and number lists too); a row without a field
// (a llama.cpp flag's note) changes nothing; --help is written without a fault.
#include "fuzz_util.h"
#include "options.h"
#include "quantize_args.h"
#include "run_args.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { MAX_ARGS = 96 };

// A table with every kind of value.
typedef struct every {
    const char *pos1; // first positional
    int n;            // second positional
    int i;            // -i
    int64_t big;      // --big
    float x;          // -x
    double d;         // -d
    const char *s;    // -s
    opt_strs strs;    // --str (repeatable)
    int e;            // -e (enum)
    const char *c;    // -c (choice)
    opt_ints l;       // -l (ints)
    opt_ints ln;      // --ln (ints of names)
    opt_strs nm;      // --nm (names)
    bool f;           // -f
    int fa;           // --fa (enum, value optional)
    const char *ts;   // --ts (numbers)
} every;

#define F(member) OPT_FIELD(every, member)
static const char *const numbers[] = {"one", "two", "three", NULL};
static const char *const greek[] = {"alpha", "beta", NULL};
static const opt every_opts[] = {
    {.arg = "A", .kind = OPT_STRING, F(pos1), .noun = "first", .help = "first"},
    {.arg = "N", .kind = OPT_INT, F(n), .min = -3, .max = 3, .help = "second"},
    {.kind = OPT_SECTION, .help = "flags:"},
    {"-i --int", OPT_INT, F(i), "N", -5, 5, .def = "1", .help = "int"},
    {"--big", OPT_INT, F(big), "N", INT64_MIN, INT64_MAX, .help = "int64"},
    {"-x", OPT_FLOAT, F(x), "F", .fmin = 0, .fmax = 1, .def = "0.25", .help = "float"},
    {"-d", OPT_FLOAT, F(d), "F", .fmin = -1e300, .fmax = 1e300, .help = "double"},
    {"-s", OPT_STRING, F(s), "S", .def = "dflt", .help = "string"},
    {"--str", OPT_STRS, F(strs), "S", .max = 3, .help = "strings"},
    {"-e", OPT_ENUM, F(e), .names = numbers, .def = "two", .help = "enum"},
    {"-c", OPT_CHOICE, F(c), "NAME", .names = greek, .help = "choice"},
    {"-l", OPT_INTS, F(l), "LIST", 0, 100, .def = "1,2", .help = "ints"},
    {"--ln", OPT_INTS, F(ln), "LIST", .names = numbers, .help = "ints of names"},
    {"--nm", OPT_NAMES, F(nm), "LIST", .names = greek, .max = 4, .help = "names"},
    {"-f --flag", OPT_FLAG, F(f), .help = "flag"},
    {"--fa", OPT_ENUM, F(fa), .names = greek, .bare = "beta", .help = "value optional"},
    {"--ts", OPT_NUMS, F(ts), "LIST", .fmin = 0, .fmax = 10, .help = "numbers"},
    {"--gpu", OPT_INT, .arg = "N", .min = -1, .max = 9, .note = "ignored"},
    {"--sm", OPT_NAMES, .arg = "LIST", .names = numbers, .note = "ignored"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "help"},
};
static const opt_program every_program = {
    .name = "every",
    .usage = "every [options] A [N]",
    .opts = every_opts,
    .n_opts = sizeof every_opts / sizeof *every_opts,
};

static long long get_int(const void *field, size_t size) {
    if (size == sizeof(int64_t)) return *(const int64_t *)field;
    if (size == sizeof(int32_t)) return *(const int32_t *)field;
    return *(const bool *)field;
}

static bool in_names(const char *const *names, const char *p) {
    for (int i = 0; names[i]; i++)
        if (names[i] == p) return true;
    return false;
}

static int count(const char *const *names) {
    int n = 0;
    while (names[n]) n++;
    return n;
}

// Every field e fills: its default (in dflt) or an allowed value.
static void check_entry(const opt *e, const char *o, const char *dflt) {
    if (!e->size) return; // no field: checked, stored nowhere
    const void *f = o + e->offset;
    const bool is_default = memcmp(f, dflt + e->offset, e->size) == 0;
    long long v;
    switch (e->kind) {
    case OPT_INT:
        v = get_int(f, e->size);
        FUZZ_CHECK(is_default || (v >= e->min && v <= e->max));
        break;
    case OPT_FLOAT: {
        double x = e->size == sizeof(float) ? *(const float *)f : *(const double *)f;
        FUZZ_CHECK(is_default || (x >= e->fmin && x <= e->fmax));
        break;
    }
    case OPT_ENUM:
        v = get_int(f, e->size);
        FUZZ_CHECK(v >= 0 && v < count(e->names));
        break;
    case OPT_CHOICE:
        FUZZ_CHECK(is_default || in_names(e->names, *(const char *const *)f));
        break;
    case OPT_INTS: {
        const opt_ints *l = f;
        FUZZ_CHECK(is_default || (l->n >= 1 && l->n <= OPT_INTS_MAX));
        for (int i = 0; !is_default && i < l->n; i++)
            FUZZ_CHECK(e->names ? l->v[i] >= 0 && l->v[i] < count(e->names)
                                : l->v[i] >= e->min && l->v[i] <= e->max);
        break;
    }
    case OPT_STRS:
    case OPT_NAMES: {
        const opt_strs *s = f;
        FUZZ_CHECK(s->n >= 0 && s->n <= OPT_STRS_MAX && (e->max <= 0 || s->n <= e->max));
        for (int i = 0; e->kind == OPT_NAMES && i < s->n; i++)
            FUZZ_CHECK(in_names(e->names, s->v[i]));
        break;
    }
    default:
        break;
    }
}

static void check_table(const opt_program *p, int argc, char **argv, size_t size) {
    char *o = calloc(2, size), *again = calloc(2, size), *dflt = calloc(2, size);
    FUZZ_CHECK(o && again && dflt);
    char err[256], err2[256], derr[256];
    memset(err, 0x5A, sizeof err);
    opt_result r = opt_parse(p, argc, argv, o, err, sizeof err);
    opt_result r2 = opt_parse(p, argc, argv, again, err2, sizeof err2);
    FUZZ_CHECK(r == r2);
    char *prog[] = {argv[0], NULL};
    opt_parse(p, 1, prog, dflt, derr, sizeof derr); // the defaults (its checks may fail)
    if (r == OPT_BAD) {
        size_t len = strnlen(err, sizeof err);
        FUZZ_CHECK(len > 0 && len < sizeof err && strcmp(err, err2) == 0);
    } else if (r == OPT_OK) {
        FUZZ_CHECK(memcmp(o, again, size) == 0);
        for (size_t i = 0; i < p->n_opts; i++) check_entry(&p->opts[i], o, dflt);
    } else if (r == OPT_VERSION_ASKED) {
        FILE *out = fopen("/dev/null", "w");
        FUZZ_CHECK(out);
        opt_version(p, out);
        fclose(out);
    } else {
        FUZZ_CHECK(r == OPT_HELP_ASKED);
        FILE *out = fopen("/dev/null", "w");
        FUZZ_CHECK(out);
        opt_help(p, out);
        fclose(out);
    }
    free(o);
    free(again);
    free(dflt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_fields in;
    FUZZ_CHECK(fuzz_split(data, size, MAX_ARGS, &in));
    const char *which = in.n > 0 ? in.field[0] : "";
    fuzz_fields rest = in;
    if (in.n > 0) rest.field++, rest.len++, rest.n--;
    char *argv[MAX_ARGS + 2];
    int argc = fuzz_argv(&rest, "prog", argv);
    if (strcmp(which, "run") == 0)
        check_table(&run_program, argc, argv, sizeof(run_options));
    else if (strcmp(which, "quantize") == 0)
        check_table(&quantize_program, argc, argv, sizeof(quantize_options));
    else
        check_table(&every_program, argc, argv, sizeof(every));
    fuzz_fields_free(&in);
    return 0;
}
