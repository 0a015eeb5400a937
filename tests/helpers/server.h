// server.h - mint-serve as a child process of a test, and HTTP requests to it through curl.
//
// The server listens on a free loopback port (--port 0; the port is read from its first stderr
// line) and dies with the test process (PR_SET_PDEATHSIG), so a failed assertion leaves no server
// behind. Every wait is bounded: a server that does not start within 60 s, a request that takes
// longer than its limit, or a server that does not exit fails the test.
#ifndef MINT_TEST_SERVER_H
#define MINT_TEST_SERVER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

typedef struct mt_server {
    pid_t pid;
    int port;
    char log[4096]; // its stderr, a file in mt_tmpdir()
    char url[64];   // http://127.0.0.1:PORT
} mt_server;

// Starts mint-serve with these arguments (printf-style; --port 0 is added) and waits until it
// listens.
void mt_server_start(mt_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Sends sig and waits up to `seconds` for the exit; returns the exit status (128+signal).
int mt_server_stop(mt_server *s, int sig, double seconds);
// Its stderr so far (malloc'd).
char *mt_server_log(const mt_server *s);

typedef struct mt_resp {
    int status;    // HTTP status; 0 when curl got none (connection refused, timeout)
    int curl_rc;   // curl's exit status
    char *body;    // the response body (malloc'd, NUL-terminated)
    char *headers; // the response headers (malloc'd)
} mt_resp;

// One request: method, path, a body (sent as is, JSON content type; NULL for none) and extra
// curl arguments (shell words, e.g. "-H 'Authorization: Bearer k'"; NULL for none). Bounded by
// 120 s.
mt_resp mt_http(const mt_server *s, const char *method, const char *path, const char *body,
                const char *curl_args);
void mt_resp_free(mt_resp *r);
// A POST that must answer 200 with a JSON object; returns it (the caller puts it).
json_object *mt_post_json(const mt_server *s, const char *path, const char *body);
// The value of a sample line "NAME VALUE" (NAME with its labels) of /metrics; -1 when absent.
double mt_metric(const mt_server *s, const char *name);
// Polls mt_metric until it equals want or `seconds` pass; returns the last value.
double mt_metric_wait(const mt_server *s, const char *name, double want, double seconds);
// A JSON string member of an object, or "" (no assertion).
const char *mt_jstr(json_object *o, const char *key);

// Runs a shell command line in the background (stdout and stderr to files named by the caller's
// redirections), dying with the test; returns its pid.
pid_t mt_spawn(const char *cmdline);
// Waits up to `seconds` for it; returns its exit status (128+signal). Fails the test on timeout
// (after killing it).
int mt_wait(pid_t pid, double seconds);

#endif // MINT_TEST_SERVER_H
