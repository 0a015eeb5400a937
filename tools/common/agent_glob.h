// agent_glob.h - glob patterns as llama-server's agent tools match them (file_glob_search's and
// grep_search's include and exclude), kept apart from the server for the fuzz harness
// (tests/fuzz/fuzz_agent_request.c).
#ifndef MINT_AGENT_GLOB_H
#define MINT_AGENT_GLOB_H

#include <stdbool.h>

#define AGENT_GLOB_MAX 512 // bytes of a pattern; a longer one matches nothing

// Whether pattern matches rel (a relative path, '/' separated): a pattern without '/' is
// matched against the last component; else against the whole path, "**/" put before it unless
// it starts with "**" or '/'. '*' matches within a component, "**" across them, "**/" also no
// folder at all (so "src/*.c" matches "src/a.c" as well as "lib/src/a.c": llama-server's tool
// wants a folder before "src" there), '?' one byte but '/', [...] a class ([!...] or [^...]
// negated, a-z ranges).
bool agent_glob_match(const char *pattern, const char *rel);

#endif // MINT_AGENT_GLOB_H
