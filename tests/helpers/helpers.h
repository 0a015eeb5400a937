// helpers.h - shared test helpers: finding real data, running the tools, reading JSON.
//
// Real data lives outside the repository, in the folder named by MINT_TEST_DATA (.ci/run sets it
// to ../shared/data). A test that needs a file calls mt_data_path(): when the variable is unset
// the test is skipped with a message saying so; when CI is set and the file is missing the test
// fails, so CI can never pass by skipping.
#ifndef MINT_TEST_HELPERS_H
#define MINT_TEST_HELPERS_H

#include "hang.h"
#include "mint.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Full path of a file under MINT_TEST_DATA, in a static rotating buffer (8 deep). Skips or fails
// the running test as described above.
const char *mt_data_path(const char *rel);

// Path of a tool binary in the build folder (MINT_BIN_DIR), e.g. mt_bin("mint-run").
const char *mt_bin(const char *tool);

// A fresh private temporary folder for the running test (removed by the OS's tmp cleaning; tests
// run in their own processes). Returns a path like /tmp/mint-test-XXXXXX.
const char *mt_tmpdir(void);
// Joins mt_tmpdir() (or any dir) and a name, in a rotating static buffer.
const char *mt_path(const char *dir, const char *name);

// A synthetic model (mint_synth_write: random weights, real shapes) of a preset ("small":
// 256 wide, 4 layers, 4 query / 2 KV heads, 512-token built-in vocabulary; "tinyllama") and file
// type ("F32", "Q4_K_M", ...), written once per test process into mt_tmpdir(). These make the
// forward-pass suites independent of MINT_TEST_DATA.
const char *mt_synth(const char *preset, const char *ftype);
// mt_synth opened as a model (the test closes it).
mint_model *mt_synth_model(const char *preset, const char *ftype);

// Greedy continuation of a prompt: up to n tokens (an end-of-generation token ends it and is
// kept), evaluated one at a time in a fresh context of `threads` threads; returns how many. The
// total log-probability of the tokens goes to *logprob when it is not NULL.
int mt_greedy(mint_model *m, int threads, const int32_t *prompt, int n_prompt, int n, int32_t *out,
              double *logprob);

// Runs a shell command line; returns the exit status (or 128+signal), capturing stdout and stderr
// into malloc'd strings when the pointers are not NULL.
int mt_run(const char *cmdline, char **out, char **err);

// mint-run -v's line of one chat turn, "[turn N: E new tokens evaluated, R reused from the
// cache]", found in err and read into *evaluated and *reused (the test fails when it is absent).
void mt_turn_counts(const char *err, int turn, long *evaluated, long *reused);

// Reads a whole file; NULL when it cannot. *len gets the size.
uint8_t *mt_read_file(const char *path, size_t *len);
bool mt_write_file(const char *path, const void *data, size_t len);

// Parses a JSON file under MINT_TEST_DATA (skipping/failing like mt_data_path). Caller puts it.
json_object *mt_json_data(const char *rel);
// Parses a JSON file of the repository (rel relative to MINT_SOURCE_DIR, "." when unset),
// failing the test when it cannot; parsed once per path and process, kept (do not put it).
json_object *mt_json_source(const char *rel);
// Member lookups that fail the test when absent.
json_object *mt_jget(json_object *o, const char *key);
json_object *mt_jidx(json_object *a, size_t i);
// A member by a dotted path of keys and indexes ("choices.0.text"), asserting each step exists;
// the same as a string and as an integer (asserting the type).
json_object *mt_jpath(json_object *o, const char *path);
const char *mt_jpath_str(json_object *o, const char *path);
int mt_jpath_int(json_object *o, const char *path);

#endif // MINT_TEST_HELPERS_H
