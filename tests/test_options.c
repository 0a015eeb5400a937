// test_options.c - the option parser of the programs (tools/common/options.c): every kind of
// value with its range and default, spellings and aliases, repeated flags, positionals, the
// one-line messages, the generated --help, optional values and llama.cpp's flags (a note, no
// field); then the seven programs as a user runs them: exit 2 for a bad argument, 1 for a file
// that cannot be opened, 0 for --help and --version; llama.cpp's common flags accepted with one
// line each, or honoured; and the README's flag lists against each program's --help, so that
// neither can drift from the tables.
#include "helpers/helpers.h"
#include "helpers/tool.h"
#include "mint.h"
#include "options.h"
#include "quantize_args.h"
#include "run_args.h"

#include <criterion/criterion.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// A table with every kind of value

typedef struct every {
    const char *in;   // IN
    int n;            // N (positional)
    int i;            // -i / --int / --alias
    int64_t big;      // --big
    float x;          // -x
    double d;         // -d
    const char *s;    // -s
    opt_strs strs;    // --str (repeatable, at most 3)
    int e;            // -e (enum)
    bool b;           // -b (enum into a bool)
    const char *c;    // -c (choice)
    opt_ints l;       // -l
    opt_ints ln;      // --ln (names)
    opt_strs nm;      // --nm (names)
    bool f;           // -f
    const char *both; // --both (checked with -f)
    int fa;           // --fa (enum, value optional)
    const char *ts;   // --ts (numbers)
} every;

#define F(member) OPT_FIELD(every, member)
static const char *const numbers[] = {"one", "two", "three", NULL};
static const char *const greek[] = {"alpha", "beta", NULL};
static const char *const offon[] = {"off", "on", NULL};
static const opt every_opts[] = {
    {.arg = "IN", .kind = OPT_STRING, F(in), .noun = "input", .help = "the input"},
    {.arg = "N", .kind = OPT_INT, F(n), .min = 1, .max = 9, .help = "a count"},
    {.kind = OPT_SECTION, .help = "flags:"},
    {"-i --int --alias", OPT_INT, F(i), "N", -5, 5, .def = "1", .help = "an int"},
    {"--big", OPT_INT, F(big), "N", -1, INT64_MAX, .help = "an int64"},
    {"-x", OPT_FLOAT, F(x), "F", .fmin = 0, .fmax = 1, .def = "0.25", .help = "a float"},
    {"-d", OPT_FLOAT, F(d), "F", .fmin = -2, .fmax = 2, .help = "a double"},
    {"-s", OPT_STRING, F(s), "S", .def = "dflt", .help = "a string"},
    {"--str", OPT_STRS, F(strs), "S", .max = 3, .help = "strings\nover two lines"},
    {"-e", OPT_ENUM, F(e), .names = numbers, .def = "two", .help = "an enum"},
    {"-b", OPT_ENUM, F(b), .names = offon, .help = "an enum into a bool"},
    {"-c", OPT_CHOICE, F(c), "NAME", .names = greek, .help = "a choice"},
    {"-l", OPT_INTS, F(l), "LIST", 0, 100, .def = "1,2", .help = "ints"},
    {"--ln", OPT_INTS, F(ln), "LIST", .names = numbers, .help = "ints of names"},
    {"--nm", OPT_NAMES, F(nm), "LIST", .names = greek, .max = 2, .help = "names"},
    {"-f --flag", OPT_FLAG, F(f), .help = "a flag"},
    {"--both", OPT_STRING, F(both), "S", .help = "needs -f"},
    {"--fa", OPT_ENUM, F(fa), .names = offon, .bare = "on", .help = "value optional"},
    {"--ts", OPT_NUMS, F(ts), "LIST", .fmin = 0, .fmax = 10, .help = "numbers"},
    {"--gpu", OPT_INT, .arg = "N", .min = -1, .max = 9, .note = "ignored: no GPU here"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
};

static bool every_check(void *parsed, char *err, size_t n) {
    const every *o = parsed;
    if (o->both && !o->f) {
        snprintf(err, n, "--both needs -f");
        return false;
    }
    return true;
}

static const opt_program every_program = {
    .name = "every",
    .usage = "every [options] IN [N]",
    .about = "Every kind of value.",
    .opts = every_opts,
    .n_opts = sizeof every_opts / sizeof *every_opts,
    .check = every_check,
    .epilogue = "the end\n",
};

static char err_line[512];

// Parses a space-separated command line (no quoting) into o.
static opt_result parse(every *o, const char *line) {
    static char buf[1024];
    char *argv[64] = {"every"};
    int argc = 1;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " ")) argv[argc++] = t;
    memset(o, 0x7F, sizeof *o); // the parser must set every field the table names
    return opt_parse(&every_program, argc, argv, o, err_line, sizeof err_line);
}

static void expect_bad(const char *line, const char *want) {
    every o;
    cr_assert_eq(parse(&o, line), OPT_BAD, "'%s' was accepted", line);
    cr_assert(strstr(err_line, want), "'%s': '%s' lacks '%s'", line, err_line, want);
    cr_assert_null(strchr(err_line, '\n'), "'%s': more than one line: %s", line, err_line);
}

Test(options, defaults_fill_every_field) {
    every o;
    cr_assert_eq(parse(&o, ""), OPT_OK, "%s", err_line);
    cr_assert_null(o.in);
    cr_assert_eq(o.n, 0);
    cr_assert_eq(o.i, 1);
    cr_assert_eq(o.big, 0);
    cr_assert_float_eq(o.x, 0.25f, 0);
    cr_assert_float_eq(o.d, 0.0, 0);
    cr_assert_str_eq(o.s, "dflt");
    cr_assert_eq(o.strs.n, 0);
    cr_assert_eq(o.e, 1, "'two' is index 1");
    cr_assert_eq(o.b, false);
    cr_assert_null(o.c);
    cr_assert_eq(o.l.n, 2);
    cr_assert_eq(o.l.v[0], 1);
    cr_assert_eq(o.l.v[1], 2);
    cr_assert_eq(o.ln.n, 0);
    cr_assert_eq(o.nm.n, 0);
    cr_assert_eq(o.f, false);
}

Test(options, every_type_and_alias) {
    every o;
    cr_assert_eq(parse(&o, "-i -5 --big 9223372036854775807 -x 1 -d -1.5 -s hi -e THREE -b on "
                           "-c Beta -l 0,100,7 --ln three,one --nm beta,alpha -f"),
                 OPT_OK, "%s", err_line);
    cr_assert_eq(o.i, -5);
    cr_assert_eq(o.big, INT64_MAX);
    cr_assert_float_eq(o.x, 1.0f, 0);
    cr_assert_float_eq(o.d, -1.5, 0);
    cr_assert_str_eq(o.s, "hi");
    cr_assert_eq(o.e, 2, "names match in any case");
    cr_assert_eq(o.b, true);
    cr_assert_str_eq(o.c, "beta", "a choice stores the table's spelling");
    cr_assert_eq(o.c, greek[1]);
    cr_assert_eq(o.l.n, 3);
    cr_assert(o.l.v[0] == 0 && o.l.v[1] == 100 && o.l.v[2] == 7);
    cr_assert(o.ln.n == 2 && o.ln.v[0] == 2 && o.ln.v[1] == 0);
    cr_assert(o.nm.n == 2 && o.nm.v[0] == greek[1] && o.nm.v[1] == greek[0]);
    cr_assert(o.f);
    cr_assert_eq(parse(&o, "--int 3"), OPT_OK);
    cr_assert_eq(o.i, 3);
    cr_assert_eq(parse(&o, "--alias 4"), OPT_OK);
    cr_assert_eq(o.i, 4);
    cr_assert_eq(parse(&o, "--flag"), OPT_OK);
    cr_assert(o.f);
}

Test(options, repeated_flags) {
    every o;
    cr_assert_eq(parse(&o, "-i 2 --int 3 -i 4"), OPT_OK);
    cr_assert_eq(o.i, 4, "the last value wins");
    cr_assert_eq(parse(&o, "-l 1,2,3 -l 9"), OPT_OK);
    cr_assert(o.l.n == 1 && o.l.v[0] == 9, "a list replaces the earlier one");
    cr_assert_eq(parse(&o, "--str a --str b --str a"), OPT_OK);
    cr_assert(o.strs.n == 3 && !strcmp(o.strs.v[0], "a") && !strcmp(o.strs.v[1], "b"));
    expect_bad("--str a --str b --str c --str d", "--str: at most 3 values");
    expect_bad("--nm alpha,beta,alpha", "--nm: at most 2 values");
    expect_bad("-l 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "-l: at most 16 values");
}

Test(options, positionals) {
    every o;
    cr_assert_eq(parse(&o, "a.gguf -i 2 7"), OPT_OK, "%s", err_line);
    cr_assert_str_eq(o.in, "a.gguf");
    cr_assert_eq(o.n, 7);
    cr_assert_eq(o.i, 2);
    expect_bad("a.gguf 7 extra", "too many arguments ('extra')");
    expect_bad("a.gguf 0", "N expects an integer in 1..9, got '0'");
    cr_assert_eq(parse(&o, "-"), OPT_OK, "'-' alone is an argument (stdin, by convention)");
    cr_assert_str_eq(o.in, "-");
}

Test(options, ranges_name_flag_value_and_range) {
    expect_bad("-i 6", "-i expects an integer in -5..5, got '6'");
    expect_bad("--alias -6", "--alias expects an integer in -5..5, got '-6'");
    expect_bad("-i 1.5", "-i expects an integer in -5..5, got '1.5'");
    expect_bad("-i ''", "-i expects an integer");
    expect_bad("--big 9223372036854775808", "--big expects an integer in -1..9223372036854775807");
    expect_bad("-x 1.01", "-x expects a number in 0..1, got '1.01'");
    expect_bad("-x nan", "-x expects a number in 0..1, got 'nan'");
    expect_bad("-d inf", "-d expects a number in -2..2, got 'inf'");
    expect_bad("-e four", "-e expects one, two or three, got 'four'");
    expect_bad("-c gamma", "-c expects alpha or beta, got 'gamma'");
    expect_bad("-l 1,x", "-l expects an integer in 0..100, got 'x'");
    expect_bad("-l 1,,2", "-l expects an integer in 0..100, got ''");
    expect_bad("-l 101", "-l expects an integer in 0..100, got '101'");
    expect_bad("--ln one,four",
               "--ln expects a comma-separated list of one, two or three, got 'four'");
    expect_bad("--nm alpha,", "--nm expects a comma-separated list of alpha or beta, got ''");
}

Test(options, unknown_missing_and_combinations) {
    expect_bad("--bogus", "unknown option '--bogus' (see --help)");
    expect_bad("--bogus 3", "unknown option '--bogus'");
    expect_bad("-i=3", "unknown option '-i=3'");
    expect_bad("--int=3", "unknown option '--int=3'"); // no --flag=value, as before the table
    expect_bad("-i", "-i needs a value (see --help)");
    expect_bad("-f -s", "-s needs a value");
    expect_bad("--both x", "--both needs -f");
    every o;
    cr_assert_eq(parse(&o, "--both x -f"), OPT_OK, "combinations are checked after all flags");
    cr_assert_eq(parse(&o, "-i -1"), OPT_OK, "a value may start with '-'");
    cr_assert_eq(o.i, -1);
    cr_assert_eq(parse(&o, "-i 2 --help --bogus"), OPT_HELP_ASKED, "--help stops the parse");
    cr_assert_eq(parse(&o, "-h"), OPT_HELP_ASKED);
}

Test(options, optional_values) {
    every o;
    cr_assert_eq(parse(&o, "--fa"), OPT_OK, "%s", err_line);
    cr_assert_eq(o.fa, 1, "alone: the .bare value");
    cr_assert_eq(parse(&o, "--fa off"), OPT_OK);
    cr_assert_eq(o.fa, 0);
    cr_assert_eq(parse(&o, "--fa -i 2"), OPT_OK, "a flag after it is not its value");
    cr_assert(o.fa == 1 && o.i == 2);
    cr_assert_eq(parse(&o, "a.gguf --fa ON"), OPT_OK);
    cr_assert_eq(o.fa, 1);
    expect_bad("--fa maybe", "--fa expects off or on, got 'maybe'");
}

Test(options, number_lists) {
    every o;
    cr_assert_eq(parse(&o, "--ts 3,1"), OPT_OK, "%s", err_line);
    cr_assert_str_eq(o.ts, "3,1");
    cr_assert_eq(parse(&o, "--ts 0.5/0.25/10"), OPT_OK, "%s", err_line);
    cr_assert_str_eq(o.ts, "0.5/0.25/10");
    expect_bad("--ts 1,x", "--ts expects numbers in 0..10 separated by ',' or '/', got '1,x'");
    expect_bad("--ts 11", "--ts expects numbers in 0..10");
    expect_bad("--ts 1,,2", "--ts expects numbers");
    expect_bad("--ts 1,", "--ts expects numbers");
    expect_bad("--ts", "--ts needs a value");
}

// A llama.cpp flag with a note and no field: its value is checked, and nothing is stored.
Test(options, notes_check_the_value_and_store_nothing) {
    every plain, with;
    cr_assert_eq(parse(&plain, "a.gguf"), OPT_OK);
    cr_assert_eq(parse(&with, "a.gguf --gpu 9"), OPT_OK, "%s", err_line);
    cr_assert_eq(memcmp(&plain, &with, sizeof plain), 0, "--gpu changed a field");
    expect_bad("--gpu abc", "--gpu expects an integer in -1..9, got 'abc'");
    expect_bad("--gpu 10", "--gpu expects an integer in -1..9, got '10'");
    expect_bad("--gpu", "--gpu needs a value");
}

Test(options, version_stops_the_parse) {
    every o;
    cr_assert_eq(parse(&o, "-i 2 --version --bogus"), OPT_VERSION_ASKED);
    cr_assert_eq(parse(&o, "--help --version"), OPT_HELP_ASKED, "the first wins");
}

static char *help_of(const opt_program *p) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert(out);
    opt_help(p, out);
    fclose(out);
    return text;
}

Test(options, help_is_generated_from_the_table) {
    char *h = help_of(&every_program);
    static const char *const want[] = {
        "usage: every [options] IN [N]\n\nEvery kind of value.\n\n",
        "  IN                      the input\n",
        "  N                       a count\n",
        "flags:\n",
        "  -i, --int, --alias N    an int (default 1)\n",
        "      --big N             an int64\n",
        "  -x F                    a float (default 0.25)\n",
        "      --str S             strings\n                          over two lines\n",
        "  -e one|two|three        an enum (default two)\n",
        "  -c NAME                 a choice:\n                          alpha | beta\n",
        "      --ln LIST           ints of names:\n                          one | two | three\n",
        "      --nm LIST           names\n", // the list of names once: after -c's
        "  -f, --flag              a flag\n",
        "      --fa [off|on]       value optional\n",
        "      --ts LIST           numbers\n",
        "      --gpu N             ignored: no GPU here\n", // a note is its help
        "      --version           print the version, the commit and the kernel level\n",
        "  -h, --help              this help\n\nthe end\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(strstr(h, want[i]), "--help lacks:\n%s\nin:\n%s", want[i], h);
    free(h);
}

// Every table's defaults parse (a default is checked like a typed value), and with only the
// required arguments the mint-run and mint-quantize tables give the documented values.
Test(options, program_tables) {
    run_options r;
    char *argv[] = {"mint-run", "-m", "m.gguf", NULL};
    cr_assert_eq(opt_parse(&run_program, 3, argv, &r, err_line, sizeof err_line), OPT_OK, "%s",
                 err_line);
    cr_assert(r.n_predict == -1 && r.seed == -1 && r.top_k == 40 && r.repeat_last_n == 64);
    cr_assert_float_eq(r.temp, 0.8f, 0);
    cr_assert_float_eq(r.top_p, 0.95f, 0);
    cr_assert_float_eq(r.min_p, 0.05f, 0);
    cr_assert(r.kv_type == 0 && r.attention == 0 && r.draft_n == 8 && !r.chat);
    char *chat[] = {"mint-run", "-m", "m", "--conversation", "--kv-type", "f16", NULL};
    cr_assert_eq(opt_parse(&run_program, 6, chat, &r, err_line, sizeof err_line), OPT_OK);
    cr_assert(r.chat && r.kv_type == MINT_KV_F16, "--conversation is -cnv's llama.cpp alias");
    // llama-cli's spellings: -fa and -ctk/-ctv fold into --attention and --kv-type, -sys is
    // --system, and the GPU flags change nothing.
    char *cli[] = {"mint-run", "-m", "m",    "-fa", "on",  "-ctk", "q8_0", "-ctv", "q8_0",
                   "-sys",     "S",  "-ngl", "99",  "-sm", "row",  "-ts",  "3,1",  NULL};
    cr_assert_eq(opt_parse(&run_program, 17, cli, &r, err_line, sizeof err_line), OPT_OK, "%s",
                 err_line);
    cr_assert_eq(r.attention, MINT_ATTENTION_FLASH);
    cr_assert_eq(r.kv_type, MINT_KV_Q8_0);
    cr_assert_str_eq(r.system, "S");
    char *bare[] = {"mint-run", "-m", "m", "-fa", "-ctv", "f16", "-ctk", "f16", NULL};
    cr_assert_eq(opt_parse(&run_program, 8, bare, &r, err_line, sizeof err_line), OPT_OK, "%s",
                 err_line);
    cr_assert(r.attention == MINT_ATTENTION_FLASH && r.kv_type == MINT_KV_F16, "-fa alone is on");
    char *off[] = {"mint-run", "-m", "m", "-fa", "off", "--attention", "rowwise", NULL};
    cr_assert_eq(opt_parse(&run_program, 7, off, &r, err_line, sizeof err_line), OPT_OK);
    cr_assert_eq(r.attention, MINT_ATTENTION_ROWWISE, "-fa off leaves a non-flash choice");
    quantize_options q;
    char *qa[] = {"mint-quantize", "in", "out", "q4_k_m", "3", "--tensor-type", "x=Q8_0", NULL};
    cr_assert_eq(opt_parse(&quantize_program, 7, qa, &q, err_line, sizeof err_line), OPT_OK, "%s",
                 err_line);
    cr_assert(q.mode == QUANTIZE_CONVERT && !strcmp(q.in, "in") && !strcmp(q.out, "out"));
    cr_assert_str_eq(q.type, "Q4_K_M");
    cr_assert(q.n_threads == 3 && q.overrides.n == 1 && q.seed == 1 && q.ctx == 128);
    char *qs[] = {"mint-quantize", "--synthetic", "small", "-o", "x.gguf", NULL};
    cr_assert_eq(opt_parse(&quantize_program, 5, qs, &q, err_line, sizeof err_line), OPT_OK);
    cr_assert(q.mode == QUANTIZE_SYNTHETIC && !strcmp(q.type, "F32"));
    char *qt[] = {"mint-quantize", "in", "out", "Q2_K_T", NULL};
    cr_assert_eq(opt_parse(&quantize_program, 4, qt, &q, err_line, sizeof err_line), OPT_BAD);
    cr_assert(strstr(err_line, "file type 'Q2_K_T' is unknown; valid: F32, F16,"), "%s", err_line);
    // Q2_K_S parses; llama-quantize makes it only with --imatrix, which the library checks.
    char *qi[] = {"mint-quantize", "--imatrix", "m.gguf", "in", "out", "Q2_K_S", NULL};
    cr_assert_eq(opt_parse(&quantize_program, 6, qi, &q, err_line, sizeof err_line), OPT_OK);
    cr_assert(!strcmp(q.type, "Q2_K_S") && !strcmp(q.imatrix, "m.gguf"));
}

// ---------------------------------------------------------------------------------------------
// The eight programs: exit codes

static const char *const programs[] = {"mint-run",        "mint-serve",  "mint-tokenize",
                                       "mint-quantize",   "mint-bench",  "mint-inspect",
                                       "mint-perplexity", "mint-imatrix"};

Test(programs, exit_codes, .timeout = MT_HANG(300)) {
    char readme[4200];
    snprintf(readme, sizeof readme, "%s/README.md", getenv("MINT_SOURCE_DIR"));
    const char *out_path = keep(mt_path(mt_tmpdir(), "q.gguf"));
    // Arguments naming a file that does not exist: each program must fail at run time (1).
    const char *missing[] = {
        "-m /nonexistent/m.gguf -n 1",
        "-m /nonexistent/m.gguf --port 0",
        "-m /nonexistent/m.gguf -p hi",
        NULL, // mint-quantize: below (needs OUT)
        "-m /nonexistent/m.gguf -r 1 -n 1 -p 0",
        "/nonexistent/m.gguf",
        NULL, // mint-perplexity: below (needs a text)
        NULL, // mint-imatrix: likewise
    };
    for (size_t i = 0; i < sizeof programs / sizeof *programs; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, programs[i], "--bogus-flag");
        expect_one_line_error(rc, out, err, "unknown option '--bogus-flag'", programs[i]);
        cr_assert_eq(rc, 2, "%s --bogus-flag: exit %d", programs[i], rc);
        free(out);
        free(err);
        rc = run_tool(&out, &err, programs[i], "--help");
        cr_assert_eq(rc, 0, "%s --help: exit %d: %s", programs[i], rc, err);
        cr_assert(strncmp(out, "usage: ", 7) == 0 && strstr(out, programs[i]), "%s", out);
        cr_assert_str_eq(err, "");
        free(out);
        free(err);
        char args[4400];
        if (strcmp(programs[i], "mint-quantize") == 0)
            snprintf(args, sizeof args, "--no-progress /nonexistent/m.gguf '%s' Q4_0", out_path);
        else if (strcmp(programs[i], "mint-perplexity") == 0 ||
                 strcmp(programs[i], "mint-imatrix") == 0)
            snprintf(args, sizeof args, "-m /nonexistent/m.gguf -f '%s'", readme);
        else
            snprintf(args, sizeof args, "%s", missing[i]);
        rc = run_tool(&out, &err, programs[i], "%s", args);
        expect_one_line_error(rc, out, err, "/nonexistent/m.gguf", programs[i]);
        cr_assert_eq(rc, 1, "%s %s: exit %d", programs[i], args, rc);
        free(out);
        free(err);
    }
}

Test(programs, bad_combinations_and_values_exit_2) {
    static const struct {
        const char *tool, *args, *needle;
    } cases[] = {
        {"mint-run", "-m x -n -2", "-n expects an integer in -1..16777216, got '-2'"},
        {"mint-run", "-m x --prompt-ids 1,x", "--prompt-ids expects"},
        {"mint-run", "-m x -p a -f b", "only one of"},
        {"mint-serve", "-m x --port 70000", "--port expects an integer in 0..65535"},
        {"mint-serve", "-m x --api-key ''", "--api-key must not be empty"},
        {"mint-tokenize", "-m x", "give exactly one of"},
        {"mint-quantize", "in out Q4_X", "file type 'Q4_X' is unknown"},
        {"mint-quantize", "--synthetic small --compare F16 -o x", "only one of"},
        {"mint-quantize", "--synthetic small --imatrix m -o x", "--imatrix is for a conversion"},
        {"mint-bench", "-m x --attention naive,bogus", "--attention expects"},
        {"mint-inspect", "a b", "more than one file given ('a' and 'b')"},
        {"mint-perplexity", "-m x -f y --kv-type q8", "--kv-type expects f32, f16, q8_0 or q4_0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, cases[i].tool, "%s", cases[i].args);
        expect_one_line_error(rc, out, err, cases[i].needle, cases[i].args);
        cr_assert_eq(rc, 2, "%s %s: exit %d", cases[i].tool, cases[i].args, rc);
        free(out);
        free(err);
    }
}

// --version: one line on stdout, "NAME VERSION (commit C, kernels K)", exit 0, for every program;
// the version and the kernel level as the library reports them here.
Test(programs, version_of_every_program) {
    regex_t re;
    cr_assert_eq(regcomp(&re,
                         "^(mint-[a-z]+) ([0-9][0-9.]*) \\(commit ([0-9a-f]{4,40}|unknown), "
                         "kernels ([a-z0-9]+)\\)\n$",
                         REG_EXTENDED),
                 0);
    // The commit the programs name is the one they were built from (git_commit.cmake reads it at
    // every build, not only at configure time), where the source is a git checkout.
    char cmd[4200], *head = NULL;
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --short HEAD 2>/dev/null",
             getenv("MINT_SOURCE_DIR") ? getenv("MINT_SOURCE_DIR") : ".");
    if (mt_run(cmd, &head, NULL) != 0 && head) head[0] = '\0';
    cr_assert(head);
    head[strcspn(head, "\n")] = '\0';
    for (size_t i = 0; i < sizeof programs / sizeof *programs; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, programs[i], "--version");
        cr_assert_eq(rc, 0, "%s --version: exit %d: %s", programs[i], rc, err);
        cr_assert_str_eq(err, "", "%s --version wrote on stderr", programs[i]);
        regmatch_t m[5];
        cr_assert_eq(regexec(&re, out, 5, m, 0), 0, "%s --version: '%s'", programs[i], out);
        cr_assert(strncmp(out, programs[i], strlen(programs[i])) == 0, "%s", out);
        cr_assert_eq((size_t)(m[2].rm_eo - m[2].rm_so), strlen(mint_version()), "%s", out);
        cr_assert(strncmp(out + m[2].rm_so, mint_version(), strlen(mint_version())) == 0, "%s",
                  out);
        cr_assert_eq((size_t)(m[4].rm_eo - m[4].rm_so), strlen(mint_isa_name()), "%s", out);
        cr_assert(strncmp(out + m[4].rm_so, mint_isa_name(), strlen(mint_isa_name())) == 0,
                  "%s: the kernel level is %s here", out, mint_isa_name());
        if (head[0])
            cr_assert(strncmp(out + m[3].rm_so, head, strlen(head)) == 0 &&
                          (size_t)(m[3].rm_eo - m[3].rm_so) == strlen(head),
                      "%s: the source is at commit %s", out, head);
        free(out);
        free(err);
        // --version wins over what follows, as --help does.
        rc = run_tool(&out, &err, programs[i], "--version --bogus-flag");
        cr_assert_eq(rc, 0, "%s --version --bogus-flag: exit %d", programs[i], rc);
        cr_assert_eq(count_lines(out), 1);
        free(out);
        free(err);
    }
    free(head);
    regfree(&re);
}

// Whether err holds line (a whole line, once).
static bool has_line_once(const char *err, const char *line) {
    const char *at = NULL;
    for (const char *s = err; (s = strstr(s, line)) != NULL; s++) {
        if ((s == err || s[-1] == '\n') && s[strlen(line)] == '\n') {
            if (at) return false;
            at = s;
        }
    }
    return at != NULL;
}

// llama.cpp's flags that mean nothing on a CPU-only runtime run, each with one line on stderr
// saying what mint does instead, in every program whose llama.cpp counterpart takes them.
Test(programs, llama_cpp_flags_run_with_a_note, .timeout = MT_HANG(300)) {
    const char *model = keep(mt_data_path("stories260K.gguf"));
    const char *text = keep(mt_data_path("tinystories_val.txt"));
    const char *synth = keep(mt_synth("small", "F32"));
    static const char *cpu = "ignored: mint runs on the CPU only";
    char *out, *err;
    // mint-run (llama-cli): -fa and -ctk/-ctv are honoured silently; the rest get a line each.
    int rc = run_tool(&out, &err, "mint-run",
                      "-m '%s' -p 'Once upon a time' -n 4 --temp 0 -t 1 -ngl 99 -mg 0 -sm layer "
                      "-ts 3,1 -nkvo -ngld 0 --color --no-warmup --log-disable -fa on -ctk f16 "
                      "-ctv f16 -no-cnv",
                      model);
    cr_assert_eq(rc, 0, "%s", err);
    static const char *run_notes[] = {"-ngl 99", "-mg 0", "-sm layer", "-ts 3,1", "-ngld 0"};
    char line[256];
    for (size_t i = 0; i < sizeof run_notes / sizeof *run_notes; i++) {
        snprintf(line, sizeof line, "mint-run: %s %s", run_notes[i], cpu);
        cr_assert(has_line_once(err, line), "no line '%s' in:\n%s", line, err);
    }
    cr_assert(has_line_once(err, "mint-run: -nkvo ignored: the KV cache is in RAM already"), "%s",
              err);
    cr_assert(has_line_once(err, "mint-run: --color ignored: mint-run prints plain text"), "%s",
              err);
    cr_assert(has_line_once(err, "mint-run: --no-warmup ignored: mint does no warm-up run"), "%s",
              err);
    cr_assert(has_line_once(err, "mint-run: --log-disable ignored: mint has no log to disable"),
              "%s", err);
    cr_assert_null(strstr(err, "-fa"), "-fa is honoured, not noted:\n%s", err);
    cr_assert_null(strstr(err, "-ctk"), "-ctk is honoured, not noted:\n%s", err);
    cr_assert(strncmp(out, "Once upon a time", 16) == 0, "%s", out);
    free(out);
    free(err);
    // mint-perplexity (llama-perplexity), -fa alone (llama.cpp's older spelling: on).
    rc =
        run_tool(&out, &err, "mint-perplexity",
                 "-m '%s' -f '%s' -c 128 --chunks 2 -t 1 -ngl 999 -fa -sm none -ts 1/1 --no-warmup",
                 model, text);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "Final estimate: PPL = "), "%s", out);
    snprintf(line, sizeof line, "mint-perplexity: -ngl 999 %s", cpu);
    cr_assert(has_line_once(err, line), "%s", err);
    snprintf(line, sizeof line, "mint-perplexity: -sm none %s", cpu);
    cr_assert(has_line_once(err, line), "%s", err);
    cr_assert(has_line_once(err, "mint-perplexity: --no-warmup ignored: mint does no warm-up run"),
              "%s", err);
    free(out);
    free(err);
    // mint-bench (llama-bench: lists).
    rc = run_tool(&out, &err, "mint-bench",
                  "-m '%s' -t 1 -p 8 -n 4 -r 1 --membw-gib 0 -o json -ngl 99 -fa 0,1 -ctk q8_0 "
                  "-sm row -ts 1/1 -nkvo 1",
                  synth);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "\"test\":\"tg4\""), "%s", out);
    snprintf(line, sizeof line, "mint-bench: -ngl 99 %s", cpu);
    cr_assert(has_line_once(err, line), "%s", err);
    cr_assert(has_line_once(err, "mint-bench: -fa 0,1 ignored: mint-bench measures each algorithm "
                                 "of --attention (flash among them)"),
              "%s", err);
    cr_assert(has_line_once(err, "mint-bench: -ctk q8_0 ignored: mint-bench's --kv-type sets the "
                                 "K and V caches together"),
              "%s", err);
    free(out);
    free(err);
    // mint-serve (llama-server): the notes come before the model is opened; a missing model is
    // then the run-time failure it always is (exit 1), not a usage error.
    rc = run_tool(
        &out, &err, "mint-serve",
        "-m /nonexistent/m.gguf --port 0 -ngl 99 -fa on -ctk q8_0 -ctv q8_0 --log-disable");
    cr_assert_eq(rc, 1, "%s", err);
    snprintf(line, sizeof line, "mint-serve: -ngl 99 %s", cpu);
    cr_assert(has_line_once(err, line), "%s", err);
    cr_assert(has_line_once(err, "mint-serve: -fa on ignored: mint-serve picks the attention "
                                 "algorithm per batch"),
              "%s", err);
    cr_assert(has_line_once(err, "mint-serve: --log-disable ignored: mint has no log to disable"),
              "%s", err);
    cr_assert_eq(count_lines(err), 4, "three notes and the error:\n%s", err);
    free(out);
    free(err);
}

// Their values are still checked: a bad one is a usage error (one line, exit 2), as are
// llama.cpp flags mint cannot honour as given.
Test(programs, llama_cpp_flag_values_are_checked) {
    static const struct {
        const char *tool, *args, *needle;
    } cases[] = {
        {"mint-run", "-m x -ngl abc", "-ngl expects an integer in -1..2147483647, got 'abc'"},
        {"mint-run", "-m x -sm diagonal", "-sm expects none, layer or row, got 'diagonal'"},
        {"mint-run", "-m x -ts 1,x", "-ts expects numbers"},
        {"mint-run", "-m x -fa maybe", "-fa expects auto, off or on, got 'maybe'"},
        {"mint-run", "-m x --color always", "--color expects auto, off or on, got 'always'"},
        {"mint-run", "-m x -ctk bf16", "-ctk expects f32, f16, q8_0 or q4_0, got 'bf16'"},
        {"mint-run", "-m x -ctk q8_0 -ctv f16", "-ctk q8_0 and -ctv f16 differ"},
        {"mint-run", "-m x -ctk q8_0", "-ctk q8_0 alone leaves the other cache at llama.cpp's f16"},
        {"mint-run", "-m x -ctv q4_0 -ctk q4_0 --kv-type f16", "--kv-type f16 disagree"},
        {"mint-run", "-m x -fa on --attention naive", "-fa on and --attention naive disagree"},
        {"mint-run", "-m x -fa off --attention flash", "-fa off and --attention flash disagree"},
        {"mint-run", "-m x -cnv -no-cnv", "give only one of -cnv and -no-cnv"},
        {"mint-run", "-m x -e --no-escape", "give only one of -e and --no-escape"},
        {"mint-run", "-m x -ngld", "-ngld needs a value"},
        {"mint-serve", "-m x -ngl 1.5", "-ngl expects an integer"},
        {"mint-serve", "-m x -ctk q4_0 -ctv f16", "-ctk q4_0 and -ctv f16 differ"},
        {"mint-serve", "-m x -fa sometimes", "-fa expects auto, off or on"},
        {"mint-perplexity", "-m x -f y -mg gpu0", "-mg expects an integer"},
        {"mint-perplexity", "-m x -f y -fa on --attention rowwise", "disagree"},
        {"mint-bench", "-m x -ngl 1,x", "-ngl expects an integer"},
        {"mint-bench", "-m x -fa 2", "-fa expects an integer in 0..1, got '2'"},
        {"mint-bench", "-m x -ctk q8", "-ctk expects a comma-separated list of f32, f16"},
        {"mint-bench", "-m x -sm layer,diagonal", "-sm expects a comma-separated list of none"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, cases[i].tool, "%s", cases[i].args);
        expect_one_line_error(rc, out, err, cases[i].needle, cases[i].args);
        cr_assert_eq(rc, 2, "%s %s: exit %d", cases[i].tool, cases[i].args, rc);
        free(out);
        free(err);
    }
}

// mint-bench checks its models before the bandwidth probe: the only line is the error (the
// probe, at its default size, would print a bandwidth line first).
Test(programs, bench_checks_the_model_before_measuring) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-bench", "-m /nope.gguf");
    expect_one_line_error(rc, out, err, "/nope.gguf", "mint-bench -m /nope.gguf");
    cr_assert_eq(rc, 1);
    free(out);
    free(err);
}

Test(programs, run_without_a_prompt_says_what_it_does) {
    const char *model = keep(mt_synth("small", "F32"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -n 3 -t 1 --temp 0", model);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "mint-run: no prompt given: generating from BOS for 3 tokens\n"), "%s",
              err);
    free(out);
    free(err);
}

// The unknown-type message of mint-quantize lists exactly the types of its --help (one table).
Test(programs, quantize_lists_one_set_of_types) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-quantize", "in out Q4_X");
    cr_assert_eq(rc, 2, "%s", err);
    const char *valid = strstr(err, "valid: ");
    cr_assert(valid, "%s", err);
    char want[1024] = "";
    for (int i = 0; quantize_ftypes[i]; i++) {
        size_t len = strlen(want);
        snprintf(want + len, sizeof want - len, "%s%s",
                 i == 0                   ? ""
                 : quantize_ftypes[i + 1] ? ", "
                                          : " or ",
                 quantize_ftypes[i]);
    }
    cr_assert(strncmp(valid + 7, want, strlen(want)) == 0, "%s\nwant %s", valid, want);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-quantize", "--help");
    cr_assert_eq(rc, 0);
    for (int i = 0; quantize_ftypes[i]; i++) {
        char name[32];
        snprintf(name, sizeof name, " %s ", quantize_ftypes[i]);
        char last[32];
        snprintf(last, sizeof last, " %s\n", quantize_ftypes[i]);
        cr_assert(strstr(out, name) || strstr(out, last), "--help lacks %s:\n%s", name, out);
    }
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// README: the Programs table names exactly the flags of each program's --help

// Whether flag is a line of set (a list of "flag\n" lines).
static bool in_set(const char *set, const char *flag) {
    const size_t n = strlen(flag);
    for (const char *s = set; *s; s = strchr(s, '\n') + 1)
        if (strncmp(s, flag, n) == 0 && s[n] == '\n') return true;
    return false;
}

// Adds the flags ("-m", "--top-k", "-cnv") found in text to set, but -h, --help and --version
// (every program has them; the README says so once).
static void collect_flags(const char *text, char *set, size_t cap) {
    regex_t re;
    cr_assert_eq(regcomp(&re, "(^|[][ `/|(,])(--?[a-zA-Z][a-zA-Z0-9-]*)", REG_EXTENDED), 0);
    regmatch_t m[3];
    for (const char *p = text; regexec(&re, p, 3, m, p == text ? 0 : REG_NOTBOL) == 0;
         p += m[2].rm_eo) {
        char flag[64];
        snprintf(flag, sizeof flag, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), p + m[2].rm_so);
        if (!strcmp(flag, "-h") || !strcmp(flag, "--help") || !strcmp(flag, "--version") ||
            in_set(set, flag))
            continue;
        cr_assert_lt(strlen(set) + strlen(flag) + 2, cap);
        strcat(strcat(set, flag), "\n");
    }
    regfree(&re);
}

Test(programs, readme_lists_the_flags_of_each_help) {
    char path[4200];
    snprintf(path, sizeof path, "%s/README.md", getenv("MINT_SOURCE_DIR"));
    size_t len;
    char *readme = (char *)mt_read_file(path, &len);
    cr_assert(readme, "%s", path);
    for (size_t i = 0; i < sizeof programs / sizeof *programs; i++) {
        // The README's rows of the program: lines starting "| `mint-NAME".
        static char doc[8192], help[8192];
        doc[0] = help[0] = '\0';
        char head[64];
        snprintf(head, sizeof head, "\n| `%s ", programs[i]);
        for (const char *l = strstr(readme, head); l; l = strstr(l + 1, head)) {
            const char *eol = strchr(l + 1, '\n');
            char *row = strndup(l + 1, eol ? (size_t)(eol - l - 1) : strlen(l + 1));
            collect_flags(row, doc, sizeof doc);
            free(row);
        }
        cr_assert(doc[0], "README has no row for %s", programs[i]);
        char *out, *err;
        cr_assert_eq(run_tool(&out, &err, programs[i], "--help"), 0);
        // llama.cpp's spellings (notes and aliases) are their own section, which the README
        // describes in a sentence rather than in each row.
        char *compat = strstr(out, "\n" OPT_COMPAT_HEADING "\n");
        if (compat) compat[1] = '\0';
        collect_flags(out, help, sizeof help);
        free(out);
        free(err);
        for (char *f = help; *f; f = strchr(f, '\n') + 1) {
            char flag[64];
            snprintf(flag, sizeof flag, "%.*s", (int)(strchr(f, '\n') - f), f);
            cr_assert(in_set(doc, flag), "README's %s row lacks %s (in its --help)", programs[i],
                      flag);
        }
        for (char *f = doc; *f; f = strchr(f, '\n') + 1) {
            char flag[64];
            snprintf(flag, sizeof flag, "%.*s", (int)(strchr(f, '\n') - f), f);
            cr_assert(in_set(help, flag), "README's %s row names %s, which its --help lacks",
                      programs[i], flag);
        }
    }
    free(readme);
}
