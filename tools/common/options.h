// options.h - the one option parser of the programs: each program describes its options in one
// table (spellings, value type, range, default, the struct field it fills, help text), and from
// that table come the parsing, the range messages and the --help text.
//
// A command line is read left to right. An argument that starts with '-' (and is not "-" alone)
// is a flag: one of the table's spellings, or an error. A flag that takes a value takes the next
// argument whatever it looks like ("-n -1" works), unless its value is optional (.bare): then the
// next argument is its value unless it starts with '-' (or there is none). Any other argument
// fills the next positional entry of the table, in table order. Repeating a flag: the last value
// wins, except OPT_STRS, which collects one value per occurrence. "--flag=value" is not accepted
// (nor was it before the table; llama.cpp's programs take the value as the next argument).
//
// llama.cpp's flags that mean nothing to mint (-ngl: mint runs on the CPU only) are rows too, with
// a .note: the value is checked like any other, stored nowhere when the row has no field, and
// opt_main prints one line "NAME: FLAG VALUE NOTE" for each such flag given, so a llama.cpp
// command line runs and says what mint does instead. A table lists them, and the llama.cpp
// spellings mint honours (-fa for --attention, ...), after a heading OPT_COMPAT_HEADING.
//
// Exit codes the programs use around it: 2 for any bad argument (opt_parse's OPT_BAD, and the
// program's own checks of combinations), 1 for a failure at run time, 0 for success, --help and
// --version.
#ifndef MINT_OPTIONS_H
#define MINT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define OPT_INTS_MAX 16 // values an OPT_INTS list holds at most
#define OPT_STRS_MAX 64 // values an OPT_STRS / OPT_NAMES field holds at most

// A comma-separated list of integers (or of names, stored as their index).
typedef struct opt_ints {
    int v[OPT_INTS_MAX]; // [n] values
    int n;               // how many
} opt_ints;

// Strings: one per occurrence of a repeatable flag, or the names of a comma-separated list.
typedef struct opt_strs {
    const char *v[OPT_STRS_MAX]; // [n] the arguments themselves (or the table's names)
    int n;                       // how many
} opt_strs;

typedef enum opt_kind {
    OPT_HELP,    // -h / --help: parsing stops and reports OPT_HELP_ASKED
    OPT_VERSION, // --version: parsing stops and reports OPT_VERSION_ASKED
    OPT_SECTION, // no option: a heading line in --help (.help is the heading)
    OPT_FLAG,    // no value; sets a bool field to true
    OPT_INT,     // an integer in [.min, .max] into an integer field of any size (bool to int64)
    OPT_FLOAT,   // a finite number in [.fmin, .fmax] into a float or double field
    OPT_STRING,  // the argument itself into a const char * field
    OPT_STRS,    // the argument appended to an opt_strs field (repeatable, at most .max)
    OPT_ENUM,    // one of .names (any case) into an integer field: its index in .names
    OPT_CHOICE,  // one of .names (any case) into a const char * field: the table's spelling
    OPT_INTS,    // comma-separated integers in [.min, .max] (or .names) into an opt_ints field
    OPT_NAMES,   // comma-separated .names into an opt_strs field (the table's spellings)
    OPT_NUMS,    // numbers in [.fmin, .fmax] separated by ',' or '/' ("3,1"): the argument itself
                 // into a const char * field, once checked
} opt_kind;

typedef struct opt {
    const char *flags;        // spellings, space-separated ("-m --model"); NULL: a positional
    opt_kind kind;            // the value's type
    size_t offset;            // the field filled, offsetof into the program's options struct
    size_t size;              // its sizeof (picks int / int64 / bool, float / double)
    const char *arg;          // the value's name in --help ("N", "FILE"); a positional's name
    long long min, max;       // OPT_INT, OPT_INTS: the range; OPT_STRS, OPT_NAMES: most values
    double fmin, fmax;        // OPT_FLOAT: the range
    const char *const *names; // OPT_ENUM, OPT_CHOICE, OPT_NAMES, OPT_INTS of names: NULL-ended
    const char *def;          // the default, written as on the command line; NULL: zero
    const char *noun;         // a positional in messages ("file", "file type"); else unused
    const char *help;         // the help text ('\n' starts a continuation line); NULL: .note
    // Accepted for llama.cpp compatibility with no effect: the words after the flag (and its
    // value) in the line opt_main prints when it is given ("ignored: mint runs on the CPU only").
    const char *note;
    // OPT_ENUM, OPT_CHOICE: the value when no value follows, i.e. the next argument starts with
    // '-' or there is none (llama.cpp's "-fa" alone, before it took on|off|auto); NULL: a value
    // is required.
    const char *bare;
} opt;

// The heading of the section of llama.cpp's spellings (notes and honoured aliases) in --help.
#define OPT_COMPAT_HEADING "accepted for llama.cpp compatibility:"

// A table row: --version.
// clang-format off
#define OPT_VERSION_ROW                                                                            \
    {"--version", OPT_VERSION, .help = "print the version, the commit and the kernel level"}
// clang-format on

// The field an entry fills: OPT_FIELD(run_options, n_ctx).
#define OPT_FIELD(type, member)                                                                    \
    .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)

typedef struct opt_program {
    const char *name;  // "mint-run": the prefix of every message
    const char *usage; // the usage line(s) after "usage: " (more lines: '\n' + "       ")
    const char *about; // a paragraph after the usage line, or NULL
    const opt *opts;   // [n_opts] the table, in --help order
    size_t n_opts;
    // Checks combinations after a successful parse (not after --help): false and one line in
    // err for a bad one. NULL: none.
    bool (*check)(void *options, char *err, size_t errlen);
    const char *epilogue; // text after the options in --help, or NULL
} opt_program;

typedef enum opt_result {
    OPT_OK = 0,            // options filled
    OPT_HELP_ASKED = 1,    // -h / --help seen: print opt_help, exit 0
    OPT_BAD = 2,           // one line in err: exit 2
    OPT_VERSION_ASKED = 3, // --version seen: print opt_version, exit 0
} opt_result;

// Fills options (a struct the table describes) with the defaults, then from argv[1..argc).
opt_result opt_parse(const opt_program *p, int argc, char **argv, void *options, char *err,
                     size_t errlen);

// Writes the --help text generated from the table.
void opt_help(const opt_program *p, FILE *out);

// Writes the one --version line: "NAME VERSION (commit C, kernels K)", the commit the build was
// configured from ("unknown" outside a git checkout) and the kernel level this machine gets.
void opt_version(const opt_program *p, FILE *out);

// The whole of a program's argument handling for main: parses; prints --help or --version
// (returns 0) or the error line "NAME: message" (returns 2); on success prints the line of each
// compatibility flag given (.note) on stderr and returns -1: the program should go on.
int opt_main(const opt_program *p, int argc, char **argv, void *options);

// The index of name in a NULL-ended list (any case), or -1.
int opt_name_index(const char *const *names, const char *name);

#endif // MINT_OPTIONS_H
