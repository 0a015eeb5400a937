// models_list.c - router mode's model list, built as llama-server builds it: the Hugging Face
// cache's GGUF files ("owner/name:QUANT", the quant read from the file name as llama.cpp's
// downloader reads it), --models-dir's .gguf files and folders (named by the file's stem or the
// folder), and --models-preset's sections ("[*]" applies to all; a section named like a cache or
// folder model adds to it). A preset key is a mint-serve flag without its dashes ("ctx-size = 512",
// "jinja = false") or one of the preset-only keys (load-on-startup, stop-timeout,
// dedup-cache-models); any other key fails the list, as in llama.cpp, so that a typo is not
// silently a model running with other settings.
#include "cli.h"
#include "hf_cache.h"
#include "models.h"
#include "preset_ini.h"
#include "serve_options.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static bool push(char ***v, int *n, const char *s) {
    char **g = realloc(*v, (size_t)(*n + 1) * sizeof *g);
    if (!g) return false;
    *v = g;
    if (!(g[*n] = strdup(s))) return false;
    (*n)++;
    return true;
}

void models_spec_free(model_spec *m) {
    for (int i = 0; i < m->n_args; i++) free(m->args[i]);
    for (int i = 0; i < m->n_aliases; i++) free(m->aliases[i]);
    for (int i = 0; i < m->n_tags; i++) free(m->tags[i]);
    free(m->args), free(m->aliases), free(m->tags);
    free(m->name), free(m->ini), free(m->path);
    memset(m, 0, sizeof *m);
}

void models_list_free(model_specs *s) {
    for (int i = 0; i < s->n; i++) models_spec_free(&s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static model_spec *find(model_specs *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].name, name)) return &s->v[i];
    return NULL;
}

static model_spec *add(model_specs *s, const char *name, model_source src) {
    model_spec *g = realloc(s->v, (size_t)(s->n + 1) * sizeof *g);
    if (!g) return NULL;
    s->v = g;
    model_spec *m = &g[s->n];
    memset(m, 0, sizeof *m);
    m->source = src;
    m->stop_timeout = 10; // llama-server's default
    if (!(m->name = strdup(name))) return NULL;
    s->n++;
    return m;
}

// The quant tag of a GGUF file name as llama.cpp's downloader reads it: the upper-cased run of
// letters, digits and '_' after the last '-' or '.' of the stem (a split file's -0000N-of-0000M
// removed first); "" when none. *first: false for the later parts of a split file.
static void quant_tag(const char *file, char *tag, size_t cap, bool *first) {
    char stem[512];
    snprintf(stem, sizeof stem, "%s", file);
    size_t n = strlen(stem);
    if (n > 5) stem[n -= 5] = '\0'; // ".gguf"
    *first = true;
    const char *of = n > 15 ? stem + n - 15 : NULL; // "-00001-of-00003"
    if (of && of[0] == '-' && !strncmp(of + 6, "-of-", 4)) {
        *first = !strncmp(of + 1, "00001", 5);
        stem[n -= 15] = '\0';
    }
    size_t i = n;
    while (i > 0 && (isalnum((unsigned char)stem[i - 1]) || stem[i - 1] == '_')) i--;
    tag[0] = '\0';
    if (i > 0 && i < n && (stem[i - 1] == '-' || stem[i - 1] == '.') && n - i < cap) {
        for (size_t k = i; k <= n; k++) tag[k - i] = (char)toupper((unsigned char)stem[k]);
    }
}

static bool gguf_name(const char *f) {
    const size_t n = strlen(f);
    return n > 5 && !strcasecmp(f + n - 5, ".gguf") && !strstr(f, "mmproj") &&
           strncmp(f, "mtp-", 4) && strncmp(f, "eagle3-", 7) && strncmp(f, "dflash-", 7) &&
           strncmp(f, "dspark-", 7);
}

// Adds the cache's models of one snapshot folder (and its subfolders, one level: a repository's
// files may sit in folders) under repo.
static bool scan_snapshot(model_specs *s, const char *repo, const char *dir, int depth) {
    DIR *d = opendir(dir);
    if (!d) return true;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth == 0) ok = scan_snapshot(s, repo, path, 1);
            continue;
        }
        char tag[64];
        bool first;
        if (!gguf_name(e->d_name)) continue;
        quant_tag(e->d_name, tag, sizeof tag, &first);
        if (!first || !tag[0]) continue;
        char name[600];
        snprintf(name, sizeof name, "%s:%s", repo, tag);
        if (find(s, name)) continue;
        model_spec *m = add(s, name, MODEL_SOURCE_CACHE);
        ok = m && push(&m->args, &m->n_args, "-hf") && push(&m->args, &m->n_args, name) &&
             (m->path = strdup(path));
    }
    closedir(d);
    return ok;
}

// The cache's folders models--owner--name, each at the commit refs/main names.
static bool scan_cache(model_specs *s) {
    char base[1024];
    if (!hf_cache_dir(base, sizeof base)) return true;
    DIR *d = opendir(base);
    if (!d) return true;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (strncmp(e->d_name, "models--", 8)) continue;
        char repo[512], ref[1400], commit[128] = "";
        const char *sep = strstr(e->d_name + 8, "--");
        if (!sep || strlen(e->d_name) >= sizeof repo) continue;
        snprintf(repo, sizeof repo, "%.*s/%s", (int)(sep - e->d_name - 8), e->d_name + 8, sep + 2);
        snprintf(ref, sizeof ref, "%s/%s/refs/main", base, e->d_name);
        FILE *f = fopen(ref, "r");
        if (!f) continue;
        if (!fgets(commit, sizeof commit, f)) commit[0] = '\0';
        fclose(f);
        commit[strcspn(commit, "\r\n")] = '\0';
        if (!commit[0] || strchr(commit, '/') || commit[0] == '.') continue;
        snprintf(ref, sizeof ref, "%s/%s/snapshots/%s", base, e->d_name, commit);
        ok = scan_snapshot(s, repo, ref, 0);
    }
    closedir(d);
    return ok;
}

// --models-dir: DIR/NAME.gguf is model NAME; DIR/NAME/ holding .gguf files is model NAME (the
// first part of a split file, else its one model file).
static bool scan_dir(model_specs *s, const char *dir, char *err, size_t errlen) {
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "--models-dir %s: not a readable folder", dir);
        return false;
    }
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[2048], pick[2560] = "";
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
        struct stat st;
        if (stat(path, &st) != 0) continue;
        char name[512];
        snprintf(name, sizeof name, "%s", e->d_name);
        if (S_ISDIR(st.st_mode)) {
            DIR *sub = opendir(path);
            for (struct dirent *f; sub && (f = readdir(sub));)
                if (gguf_name(f->d_name) &&
                    (!strstr(f->d_name, "-of-") || strstr(f->d_name, "-00001-of-")))
                    if ((!pick[0] || strstr(f->d_name, "-00001-of-")) &&
                        strlen(path) + strlen(f->d_name) + 2 <= sizeof pick)
                        snprintf(pick, sizeof pick, "%.2047s/%.255s", path, f->d_name);
            if (sub) closedir(sub);
        } else if (gguf_name(e->d_name)) {
            snprintf(pick, sizeof pick, "%s", path);
            name[strlen(name) - 5] = '\0';
        }
        if (!pick[0] || find(s, name)) continue;
        model_spec *m = add(s, name, MODEL_SOURCE_DIR);
        ok = m && push(&m->args, &m->n_args, "-m") && push(&m->args, &m->n_args, pick) &&
             (m->path = strdup(pick));
    }
    closedir(d);
    if (!ok) snprintf(err, errlen, "out of memory");
    return ok;
}

static bool truthy(const char *v) {
    return !strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
           !strcasecmp(v, "yes") || !strcasecmp(v, "enabled");
}

// The row of mint-serve's table spelled -key or --key, or NULL.
static const opt *flag_row(const char *key) {
    for (size_t i = 0; i < serve_program.n_opts; i++) {
        const char *f = serve_program.opts[i].flags;
        for (const char *p = f; p && *p;) {
            const size_t n = strcspn(p, " ");
            const char *w = p;
            while (*w == '-' && w < p + n) w++;
            if (w > p && (size_t)(p + n - w) == strlen(key) && !strncmp(w, key, strlen(key)))
                return &serve_program.opts[i];
            p += n + (p[n] == ' ');
        }
    }
    return NULL;
}

static void split_list(char ***v, int *n, const char *list) {
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        const char *a = p;
        while (k && (*a == ' ' || *a == '\t')) a++, k--;
        while (k && (a[k - 1] == ' ' || a[k - 1] == '\t')) k--;
        if (k) {
            char one[512];
            snprintf(one, sizeof one, "%.*s", (int)(k < 511 ? k : 511), a);
            push(v, n, one);
        }
        p += strcspn(p, ",");
        p += *p == ',';
    }
}

// Applies one preset section to m: its flags become child arguments (after the source's, so
// they win), its preset-only keys set m's fields. false with err on a key that is neither.
static bool apply_section(model_spec *m, const preset_ini_section *sec, char *err, size_t n) {
    for (int i = 0; i < sec->n_pair; i++) {
        const char *k = sec->pair[i].key, *v = sec->pair[i].value;
        if (!strcmp(k, "version")) continue;
        if (!strcmp(k, "load-on-startup")) {
            m->startup = truthy(v);
        } else if (!strcmp(k, "stop-timeout")) {
            m->stop_timeout = atoi(v) > 0 ? atoi(v) : 10;
        } else if (!strcmp(k, "dedup-cache-models")) {
            m->dedup = truthy(v);
        } else if (!strcmp(k, "alias") || !strcmp(k, "a")) {
            split_list(&m->aliases, &m->n_aliases, v);
        } else if (!strcmp(k, "tags")) {
            split_list(&m->tags, &m->n_tags, v);
        } else if (!strcmp(k, "host") || !strcmp(k, "port") || !strncmp(k, "models-", 7) ||
                   !strncmp(k, "api-key", 7) || !strcmp(k, "no-models-autoload")) {
            continue; // the router's own settings: a child never takes them (llama.cpp's too)
        } else {
            const opt *row = flag_row(k);
            if (!row || row->kind == OPT_HELP || row->kind == OPT_VERSION) {
                snprintf(err, n, "option '%s' not recognized in preset '%s'", k, sec->name);
                return false;
            }
            char flag[300];
            if (row->kind == OPT_FLAG) {
                snprintf(flag, sizeof flag, "--%s%s", truthy(v) ? "" : "no-", k);
                // a false flag without a --no- form is left out, as llama.cpp leaves it out
                if (!truthy(v) && !flag_row(flag + 2)) continue;
                push(&m->args, &m->n_args, flag);
            } else {
                snprintf(flag, sizeof flag, "--%s", k);
                if (strlen(k) <= 2 || !strcmp(k, "hf") || !strcmp(k, "hfr"))
                    snprintf(flag, sizeof flag, "-%s", k);
                push(&m->args, &m->n_args, flag);
                push(&m->args, &m->n_args, v);
            }
        }
    }
    // The section as GET /models shows it.
    size_t len = strlen(sec->name) + 4;
    for (int i = 0; i < sec->n_pair; i++)
        len += strlen(sec->pair[i].key) + strlen(sec->pair[i].value) + 5;
    char *ini = malloc(len + 1);
    if (ini) {
        size_t o = (size_t)sprintf(ini, "[%s]\n", sec->name);
        for (int i = 0; i < sec->n_pair; i++)
            o += (size_t)sprintf(ini + o, "%s = %s\n", sec->pair[i].key, sec->pair[i].value);
        free(m->ini);
        m->ini = ini;
    }
    return true;
}

// The file a preset's hf-repo (and hf-file) names in the cache, or "".
static void preset_path(const preset_ini_section *sec, char *out, size_t cap) {
    const char *repo = preset_ini_get(sec, "hf-repo");
    if (!repo) repo = preset_ini_get(sec, "hf");
    if (!repo) repo = preset_ini_get(sec, "hfr");
    const char *file = preset_ini_get(sec, "hf-file");
    char err[600];
    if (!repo || !hf_cache_find(repo, file, out, cap, err, sizeof err)) out[0] = '\0';
}

static bool load_preset(const serve_config *cfg, model_specs *s, char *err, size_t errlen) {
    size_t len;
    char msg[600];
    char *text = cli_read_file(cfg->models_preset, &len, msg, sizeof msg);
    if (!text) {
        snprintf(err, errlen, "--models-preset: %s", msg);
        return false;
    }
    preset_ini ini;
    bool ok = preset_ini_parse(text, len, &ini, msg, sizeof msg);
    free(text);
    if (!ok) {
        snprintf(err, errlen, "--models-preset %s: %s", cfg->models_preset, msg);
        return false;
    }
    const preset_ini_section *global = NULL;
    for (int i = 0; i < ini.n_sec; i++)
        if (!strcmp(ini.sec[i].name, "*")) global = &ini.sec[i];
    // "[*]" first, under every model of every source
    for (int i = 0; ok && global && i < s->n; i++)
        ok = apply_section(&s->v[i], global, err, errlen);
    char hide[64][2048];
    int n_hide = 0;
    const bool global_dedup = global && preset_ini_get(global, "dedup-cache-models") &&
                              truthy(preset_ini_get(global, "dedup-cache-models"));
    for (int i = 0; ok && i < ini.n_sec; i++) {
        const preset_ini_section *sec = &ini.sec[i];
        if (sec == global || (!strcmp(sec->name, "default") && sec->n_pair == 0)) continue;
        model_spec *m = find(s, sec->name);
        if (m) {
            m->source = MODEL_SOURCE_PRESET;
        } else if (!(m = add(s, sec->name, MODEL_SOURCE_PRESET))) {
            snprintf(err, errlen, "out of memory");
            ok = false;
            break;
        } else if (global) {
            ok = apply_section(m, global, err, errlen);
        }
        ok = ok && apply_section(m, sec, err, errlen);
        if (ok && (m->dedup || (global_dedup && !preset_ini_get(sec, "dedup-cache-models"))) &&
            n_hide < 64) {
            preset_path(sec, hide[n_hide], sizeof hide[n_hide]);
            if (hide[n_hide][0]) n_hide++;
        }
    }
    for (int i = 0; ok && i < s->n; i++)
        for (int k = 0; k < n_hide; k++)
            if (s->v[i].source == MODEL_SOURCE_CACHE && s->v[i].path &&
                !strcmp(s->v[i].path, hide[k]))
                s->v[i].hidden = true;
    preset_ini_free(&ini);
    return ok;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const model_spec *)a)->name, ((const model_spec *)b)->name);
}

bool models_list_build(const serve_config *cfg, model_specs *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    bool ok = scan_cache(out);
    if (!ok) snprintf(err, errlen, "out of memory");
    if (ok && cfg->models_dir) ok = scan_dir(out, cfg->models_dir, err, errlen);
    if (ok && cfg->models_preset) ok = load_preset(cfg, out, err, errlen);
    for (int i = 0; ok && i < out->n; i++)
        for (int a = 0; a < out->v[i].n_aliases; a++)
            for (int k = 0; k < out->n; k++)
                if (!strcmp(out->v[k].name, out->v[i].aliases[a]) ||
                    (k != i && out->v[k].n_aliases &&
                     !strcmp(out->v[k].aliases[0], out->v[i].aliases[a]))) {
                    snprintf(err, errlen, "alias '%s' of model '%s' is already a model's name",
                             out->v[i].aliases[a], out->v[i].name);
                    ok = false;
                }
    if (!ok) {
        models_list_free(out);
        return false;
    }
    if (out->n > 1) qsort(out->v, (size_t)out->n, sizeof *out->v, by_name); // v is NULL when empty
    return true;
}

int models_list_reserved(int argc, char **argv, int i) {
    static const char *const with_value[] = {
        "--host", "--port", "--models-dir", "--models-preset", "--models-max", "--api-key",
        "--api-key-file", "-m", "--model", "-hf", "-hfr", "--hf-repo", "-hff", "--hf-file", "-a",
        "--alias", "--tags",
        // the router answers /tools itself
        "--tools", "--tools-runtime", "--mcp-servers-config", "--mcp-servers-json", NULL};
    static const char *const bare[] = {"--models-autoload",
                                       "--no-models-autoload",
                                       "--ui-mcp-proxy",
                                       "--webui-mcp-proxy",
                                       "--no-ui-mcp-proxy",
                                       "--no-webui-mcp-proxy",
                                       NULL};
    for (int k = 0; with_value[k]; k++)
        if (!strcmp(argv[i], with_value[k])) return i + 1 < argc ? 2 : 1;
    for (int k = 0; bare[k]; k++)
        if (!strcmp(argv[i], bare[k])) return 1;
    return 0;
}
