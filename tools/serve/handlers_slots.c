// handlers_slots.c - llama-server's slot actions, POST /slots/N?action=save|restore|erase with
// --slot-save-path: save writes slot N's tokens to a file there, restore puts a file's tokens
// into slot N, erase empties it. Each is a job pinned to slot N (the scheduler runs it when the
// slot is free, between steps); restore evaluates the tokens again (see tools/common/slot_file.h
// for why no KV data is stored), so a later request that shares their prefix evaluates only the
// rest, as after llama-server's restore.
#include "handlers.h"
#include "slot_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// Waits (without a time limit of its own: the scheduler ends the job at its deadline) for j.
static void wait_done(job *j) {
    pthread_mutex_lock(&j->mu);
    while (j->state != JOB_DONE) pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
}

// The file's path under --slot-save-path (llama-server joins them as strings; a '/' is added
// when the folder's name has none at its end).
static void file_path(const serve_config *cfg, const char *name, char *out, size_t cap) {
    const size_t n = strlen(cfg->slot_save_path);
    const bool sep = n > 0 && cfg->slot_save_path[n - 1] == '/';
    snprintf(out, cap, "%s%s%s", cfg->slot_save_path, sep ? "" : "/", name);
}

// Writes the file whole or not at all: a temporary file, then a rename.
static bool write_file(const char *path, const uint8_t *buf, size_t n, char *msg, size_t cap) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(buf, 1, n, f) == n;
    ok = (f && fclose(f) == 0) && ok;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok) {
        snprintf(msg, cap, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    return ok;
}

static uint8_t *read_file(const char *path, size_t *len, char *msg, size_t cap) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) buf = malloc(size ? (size_t)size : 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        snprintf(msg, cap, "cannot read %s: %s", path, f ? "read failed" : strerror(errno));
        free(buf);
        buf = NULL;
    }
    if (f) fclose(f);
    *len = buf ? (size_t)size : 0;
    return buf;
}

// Runs j (already filled) in its slot; false when the server is busy or stopping.
static bool run(serve_http *h, job *j) {
    j->deadline = j->t_created + h->cfg->timeout;
    if (!sched_submit(h->e, &j, 1)) return false;
    wait_done(j);
    return true;
}

enum MHD_Result handle_slot_action(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    const serve_config *cfg = h->cfg;
    if (!cfg->slot_save_path)
        return reply_error(c, 501, "not_supported_error", NULL,
                           "This server does not support slots action. Start it with "
                           "`--slot-save-path`");
    const char *id_text = r->url + strlen("/slots/");
    char *end = NULL;
    errno = 0;
    const long id = strtol(id_text, &end, 10);
    if (!*id_text || *end || errno || id < 0 || id > 1 << 20)
        return reply_error(c, 400, "invalid_request_error", NULL, "Invalid slot ID");
    const int slot = (int)(id % cfg->parallel); // llama-server wraps an id past the last slot
    const char *action = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "action");
    job_action act = !action                      ? JOB_GENERATE
                     : !strcmp(action, "save")    ? JOB_SLOT_SAVE
                     : !strcmp(action, "restore") ? JOB_SLOT_RESTORE
                     : !strcmp(action, "erase")   ? JOB_SLOT_ERASE
                                                  : JOB_GENERATE;
    if (act == JOB_GENERATE)
        return reply_error(c, 400, "invalid_request_error", NULL, "Invalid action");
    char name[300] = "", path[4200] = "", msg[600];
    if (act != JOB_SLOT_ERASE) {
        json_object *body = r->body ? json_tokener_parse(r->body) : NULL, *fn = NULL;
        const bool named = json_object_object_get_ex(body, "filename", &fn) &&
                           json_object_is_type(fn, json_type_string);
        if (named) snprintf(name, sizeof name, "%s", json_object_get_string(fn));
        json_object_put(body);
        if (!named)
            return reply_error(c, 400, "invalid_request_error", "filename",
                               "the body needs {\"filename\": NAME}");
        if (!slot_file_name_ok(name) || strlen(name) > 255)
            return reply_error(c, 400, "invalid_request_error", "filename", "Invalid filename");
        file_path(cfg, name, path, sizeof path);
    }
    const double t0 = serve_now();
    job *j = job_new();
    if (!j) return reply_error(c, 500, "server_error", NULL, "out of memory");
    j->id = atomic_fetch_add(&h->next_id, 1);
    j->want_slot = slot;
    j->action = act;
    size_t n_read = 0;
    if (act == JOB_SLOT_RESTORE) {
        uint8_t *buf = read_file(path, &n_read, msg, sizeof msg);
        int n = 0;
        if (!buf || !slot_file_read(buf, n_read, h->n_vocab, cfg->n_ctx - 1, &j->prompt, &n, msg,
                                    sizeof msg)) {
            free(buf);
            job_release(j);
            return reply_error(c, 400, "invalid_request_error", "filename",
                               "Unable to restore slot: %s", msg);
        }
        free(buf);
        j->n_prompt = n;
        j->max_tokens = 1;
        j->sp = mint_sampler_default_params();
        if (n == 0) j->action = JOB_SLOT_ERASE; // an empty slot file empties the slot
    }
    if (!run(h, j)) {
        job_release(j);
        return reply_busy(c);
    }
    if (strcmp(j->finish, "stop") != 0) {
        const bool timeout = !strcmp(j->finish, "timeout");
        snprintf(msg, sizeof msg, "%s", j->error[0] ? j->error : j->finish);
        job_release(j);
        return reply_error(c, timeout ? 504 : 500, "server_error", NULL, "slot %d: %s", slot, msg);
    }
    json_object *o = json_object_new_object(), *t = json_object_new_object();
    json_object_object_add(o, "id_slot", json_object_new_int(slot));
    if (act == JOB_SLOT_ERASE) {
        json_object_object_add(o, "n_erased", json_object_new_int(j->n_saved));
        json_object_put(t);
        job_release(j);
        return reply_json(c, 200, o);
    }
    json_object_object_add(o, "filename", json_object_new_string(name));
    if (act == JOB_SLOT_SAVE) {
        const size_t size = slot_file_size(j->n_saved);
        uint8_t *buf = malloc(size);
        if (!buf) snprintf(msg, sizeof msg, "out of memory");
        const bool ok = buf && (slot_file_write(buf, j->saved, j->n_saved), true) &&
                        write_file(path, buf, size, msg, sizeof msg);
        free(buf);
        if (!ok) {
            json_object_put(o);
            json_object_put(t);
            job_release(j);
            return reply_error(c, 500, "server_error", NULL, "Unable to save slot: %s", msg);
        }
        json_object_object_add(o, "n_saved", json_object_new_int(j->n_saved));
        json_object_object_add(o, "n_written", json_object_new_int64((int64_t)size));
        json_object_object_add(t, "save_ms", json_object_new_double((serve_now() - t0) * 1e3));
    } else {
        json_object_object_add(o, "n_restored", json_object_new_int(j->n_prompt));
        json_object_object_add(o, "n_read", json_object_new_int64((int64_t)n_read));
        json_object_object_add(t, "restore_ms", json_object_new_double((serve_now() - t0) * 1e3));
    }
    json_object_object_add(o, "timings", t);
    job_release(j);
    return reply_json(c, 200, o);
}
