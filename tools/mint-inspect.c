// mint-inspect - show what a model file holds: header, metadata, tensor table, totals.
//
//   mint-inspect [--json] [--hash] FILE|FOLDER
//
// FILE is a GGUF or a .safetensors file, FOLDER a Hugging Face Llama checkpoint (config.json +
// safetensors), shown as the GGUF convert_hf_to_gguf.py would make of it.
//
// Every file is fully validated on open; a malformed one is reported in one line and the exit
// status is 1. --hash adds the XXH3-64 of each tensor's bytes and of the whole data section, so
// two files can be compared tensor by tensor (`diff <(mint-inspect --hash a) <(... b)`). For a
// safetensors file or a folder the "data" hash is over the list of tensor hashes.
#include "mint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES 64

typedef struct options {
    const char *path; // model file
    bool json;        // machine-readable output
    bool hash;        // per-tensor XXH3-64
} options;

static void usage(FILE *out) {
    fprintf(out, "usage: mint-inspect [--json] [--hash] FILE|FOLDER\n"
                 "\n"
                 "Shows the header, metadata (arrays summarised), tensor table and totals of a\n"
                 "GGUF or safetensors file, or of a Hugging Face Llama checkpoint folder. Every\n"
                 "field is validated; a malformed file exits 1 with the reason.\n"
                 "\n"
                 "  --json   one JSON object on stdout instead of text\n"
                 "  --hash   XXH3-64 of every tensor's bytes and of the whole data section\n"
                 "  -h       this help\n");
}

static int parse_args(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0)
            o->json = true;
        else if (strcmp(a, "--hash") == 0)
            o->hash = true;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "mint-inspect: unknown option '%s' (see --help)\n", a);
            return 2;
        } else if (o->path) {
            fprintf(stderr, "mint-inspect: more than one file given ('%s' and '%s')\n", o->path, a);
            return 2;
        } else
            o->path = a;
    }
    if (!o->path) {
        fprintf(stderr, "mint-inspect: no file given (see --help)\n");
        return 2;
    }
    return 0;
}

static const char *format_name(mint_file_format f) {
    switch (f) {
    case MINT_FORMAT_GGUF:
        return "gguf";
    case MINT_FORMAT_SAFETENSORS:
        return "safetensors";
    case MINT_FORMAT_HF_DIR:
        return "hf-checkpoint";
    }
    return "?";
}

// Prints s as a JSON string literal.
static void json_str(FILE *out, const char *s, size_t n) {
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c == '\r')
            fputs("\\r", out);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

typedef struct totals {
    uint64_t params;               // elements over all tensors
    uint64_t bytes;                // tensor bytes
    uint64_t count[MAX_TYPES + 1]; // tensors per type code (last slot: unknown)
    uint64_t elems[MAX_TYPES + 1]; // elements per type code
} totals;

static void add_totals(totals *t, const mint_tensor_info *ti) {
    uint64_t n = 1;
    for (int d = 0; d < 4; d++) n *= (uint64_t)ti->ne[d];
    t->params += n;
    t->bytes += ti->nbytes;
    unsigned k = ti->type < MAX_TYPES ? ti->type : MAX_TYPES;
    t->count[k]++;
    t->elems[k] += n;
}

static void shape_str(const mint_tensor_info *ti, char *buf, size_t cap) {
    size_t len = 0;
    for (uint32_t d = 0; d < ti->n_dims && len < cap; d++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, d ? ", " : "[", ti->ne[d]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
}

static uint64_t data_hash(const mint_file *f, const mint_file_info *info) {
    if (info->n_tensors == 0) return mint_hash64("", 0);
    if (info->format != MINT_FORMAT_GGUF) {
        // safetensors / checkpoint folders: tensors may live in several files or in memory the
        // reader made (permuted q/k), so hash the list of per-tensor hashes instead.
        uint64_t *h = malloc(info->n_tensors * sizeof *h);
        if (!h) return 0;
        for (uint64_t i = 0; i < info->n_tensors; i++) {
            mint_tensor_info t;
            mint_file_tensor(f, i, &t);
            h[i] = mint_hash64(t.data, t.nbytes);
        }
        uint64_t r = mint_hash64(h, info->n_tensors * sizeof *h);
        free(h);
        return r;
    }
    // The data section is contiguous in the map from the first tensor's byte.
    mint_tensor_info t0;
    mint_file_tensor(f, 0, &t0);
    const char *base = (const char *)t0.data - t0.offset;
    return mint_hash64(base, info->data_size);
}

static void print_text(const mint_file *f, const options *o) {
    mint_file_info info;
    mint_file_get_info(f, &info);
    printf("file:        %s\n", o->path);
    printf("format:      %s", format_name(info.format));
    if (info.format == MINT_FORMAT_GGUF) printf(" v%u", info.version);
    printf("\nsize:        %" PRIu64 " bytes\n", info.file_size);
    if (info.format == MINT_FORMAT_GGUF)
        printf("alignment:   %u\ndata:        byte %" PRIu64 ", %" PRIu64 " bytes\n",
               info.alignment, info.data_offset, info.data_size);
    else if (info.format == MINT_FORMAT_SAFETENSORS)
        printf("data:        byte %" PRIu64 ", %" PRIu64 " bytes\n", info.data_offset,
               info.data_size);
    else
        printf("data:        %" PRIu64 " bytes of tensors\n", info.data_size);
    printf("\nmetadata (%" PRIu64 " entries):\n", info.n_kv);
    char buf[1024];
    for (uint64_t i = 0; i < info.n_kv; i++) {
        mint_kv_info kv;
        mint_file_kv(f, i, &kv);
        mint_file_kv_format(f, i, buf, sizeof buf, 64, 5);
        printf("  %-44s %s\n", kv.key, buf);
    }
    printf("\ntensors (%" PRIu64 "):\n", info.n_tensors);
    printf("  %-4s %-32s %-8s %-22s %12s %12s%s\n", "#", "name", "type", "shape", "offset", "bytes",
           o->hash ? "  xxh3" : "");
    totals tot = {0};
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        mint_tensor_info t;
        mint_file_tensor(f, i, &t);
        add_totals(&tot, &t);
        char shape[96];
        shape_str(&t, shape, sizeof shape);
        char type[32];
        snprintf(type, sizeof type, "%s%s", mint_type_name(t.type), t.type_computable ? "" : "*");
        printf("  %-4" PRIu64 " %-32s %-8s %-22s %12" PRIu64 " %12" PRIu64, i, t.name, type, shape,
               t.offset, t.nbytes);
        if (o->hash) printf("  %016" PRIx64, mint_hash64(t.data, t.nbytes));
        printf("\n");
    }
    printf("\ntotals:\n");
    printf("  parameters:      %" PRIu64 "\n", tot.params);
    printf("  tensor bytes:    %" PRIu64 " (%.2f MiB)\n", tot.bytes, tot.bytes / 1048576.0);
    printf("  bits per weight: %.4f\n", tot.params ? 8.0 * tot.bytes / tot.params : 0.0);
    printf("  types:          ");
    for (unsigned k = 0; k <= MAX_TYPES; k++)
        if (tot.count[k])
            printf(" %s×%" PRIu64, k < MAX_TYPES ? mint_type_name(k) : "other", tot.count[k]);
    printf("\n");
    bool unknown = false;
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        mint_tensor_info t;
        mint_file_tensor(f, i, &t);
        unknown |= !t.type_computable;
    }
    if (unknown) printf("  (* = a type mint lists but cannot compute with)\n");
    if (o->hash) printf("  data xxh3:       %016" PRIx64 "\n", data_hash(f, &info));
}

static void print_json(const mint_file *f, const options *o) {
    mint_file_info info;
    mint_file_get_info(f, &info);
    printf("{\"file\":");
    json_str(stdout, o->path, strlen(o->path));
    printf(",\"format\":\"%s\",\"version\":%u,\"size\":%" PRIu64 ",\"alignment\":%u,"
           "\"data_offset\":%" PRIu64 ",\"data_size\":%" PRIu64 ",\"metadata\":[",
           format_name(info.format), info.version, info.file_size, info.alignment, info.data_offset,
           info.data_size);
    char *buf = malloc(1 << 16);
    for (uint64_t i = 0; i < info.n_kv && buf; i++) {
        mint_kv_info kv;
        mint_file_kv(f, i, &kv);
        printf("%s{\"key\":", i ? "," : "");
        json_str(stdout, kv.key, strlen(kv.key));
        printf(",\"type\":\"%s\"", kv.type == MINT_VAL_ARRAY ? "arr" : "scalar");
        if (kv.type == MINT_VAL_ARRAY) printf(",\"n\":%" PRIu64, kv.n);
        size_t n = mint_file_kv_format(f, i, buf, 1 << 16, 256, 8);
        printf(",\"value\":");
        json_str(stdout, buf, n < (1 << 16) ? n : (1 << 16) - 1);
        printf(",\"offset\":%" PRIu64 "}", kv.file_offset);
    }
    free(buf);
    printf("],\"tensors\":[");
    totals tot = {0};
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        mint_tensor_info t;
        mint_file_tensor(f, i, &t);
        add_totals(&tot, &t);
        printf("%s{\"name\":", i ? "," : "");
        json_str(stdout, t.name, strlen(t.name));
        printf(",\"type\":\"%s\",\"computable\":%s,\"ne\":[", mint_type_name(t.type),
               t.type_computable ? "true" : "false");
        for (uint32_t d = 0; d < t.n_dims; d++) printf("%s%" PRId64, d ? "," : "", t.ne[d]);
        printf("],\"offset\":%" PRIu64 ",\"bytes\":%" PRIu64, t.offset, t.nbytes);
        if (o->hash) printf(",\"xxh3\":\"%016" PRIx64 "\"", mint_hash64(t.data, t.nbytes));
        printf("}");
    }
    printf("],\"totals\":{\"parameters\":%" PRIu64 ",\"bytes\":%" PRIu64
           ",\"bpw\":%.4f,\"types\":{",
           tot.params, tot.bytes, tot.params ? 8.0 * tot.bytes / tot.params : 0.0);
    bool first = true;
    for (unsigned k = 0; k <= MAX_TYPES; k++) {
        if (!tot.count[k]) continue;
        printf("%s\"%s\":%" PRIu64, first ? "" : ",", k < MAX_TYPES ? mint_type_name(k) : "other",
               tot.count[k]);
        first = false;
    }
    printf("}");
    if (o->hash) printf(",\"data_xxh3\":\"%016" PRIx64 "\"", data_hash(f, &info));
    printf("}}\n");
}

int main(int argc, char **argv) {
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc;
    mint_err err;
    mint_file *f = NULL;
    if (mint_file_open(o.path, &f, &err) != MINT_OK) {
        fprintf(stderr, "mint-inspect: %s\n", err.msg);
        return 1;
    }
    if (o.json)
        print_json(f, &o);
    else
        print_text(f, &o);
    mint_file_close(f);
    return fflush(stdout) == 0 ? 0 : 1;
}
