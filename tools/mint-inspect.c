// mint-inspect - show what a model file holds: header, metadata, tensor table, totals.
//
//   mint-inspect [--json] [--hash] [--verify] FILE|FOLDER
//
// FILE is a GGUF or a .safetensors file, FOLDER a Hugging Face checkpoint (config.json +
// safetensors), shown as the GGUF convert_hf_to_gguf.py would make of it.
//
// Every file is fully validated on open; a malformed one is reported in one line on stderr and
// the exit status is 1 (2 for bad arguments). --hash adds the XXH3-64 of each tensor's bytes and
// of the whole data section, one line each, so two files can be compared tensor by tensor:
//   diff <(mint-inspect --hash a.gguf | grep '^  xxh3') <(mint-inspect --hash b.gguf | grep ...)
// For a safetensors file or a folder the "data" hash is over the list of tensor hashes.
#include "mint.h"
#include "options.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES  64   // type codes counted one by one; larger codes go to "other"
#define JSON_STR   4096 // bytes of a string value shown in --json (the length is given too)
#define JSON_ITEMS 8    // first elements of an array shown in --json

typedef struct options {
    const char *path; // model file
    bool json;        // machine-readable output
    bool hash;        // per-tensor XXH3-64
    bool verify;      // check the tensor hashes mint-quantize recorded
} options;

#define F(member) OPT_FIELD(options, member)

static const opt opts[] = {
    {.arg = "FILE|FOLDER",
     .kind = OPT_STRING,
     F(path),
     .noun = "file",
     .help = "a GGUF or safetensors file, or a Hugging Face folder"},
    {"--json", OPT_FLAG, F(json), .help = "one JSON object on stdout instead of text"},
    {"--hash", OPT_FLAG, F(hash),
     .help = "XXH3-64 of every tensor's bytes and of the whole data section"},
    {"--verify", OPT_FLAG, F(verify),
     .help = "check every tensor against the XXH3-64 mint-quantize recorded in\n"
             "the file's metadata (exit 1 on a mismatch)"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
};

static bool check(void *parsed, char *err, size_t n) {
    if (!((options *)parsed)->path) {
        snprintf(err, n, "no file given (see --help)");
        return false;
    }
    return true;
}

static const opt_program program = {
    .name = "mint-inspect",
    .usage = "mint-inspect [--json] [--hash] [--verify] FILE|FOLDER",
    .about = "Shows the header, metadata (arrays summarised), tensor table and totals of a\n"
             "GGUF or safetensors file, or of a Hugging Face checkpoint folder. Every\n"
             "field is validated; a malformed file exits 1 with the reason.",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};

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

static const char *value_type_name(mint_value_type t) {
    static const char *names[] = {"u8",   "i8",  "u16", "i16", "u32", "i32", "f32",
                                  "bool", "str", "arr", "u64", "i64", "f64"};
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

// Prints text from the file (a key, a tensor name) with control characters as '?', so one
// record stays on one line.
static void print_clean(const char *s, int width) {
    int n = 0;
    for (; s[n]; n++) putchar((unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n]);
    for (; n < width; n++) putchar(' ');
}

// Prints n bytes as a JSON string literal.
static void json_str(const char *s, size_t n) {
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '\t')
            fputs("\\t", stdout);
        else if (c == '\r')
            fputs("\\r", stdout);
        else if (c < 0x20 || c == 0x7f)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

// Prints a float as a JSON number, or as a string for the values JSON has no number for.
static void json_double(double x, int digits) {
    if (isfinite(x))
        printf("%.*g", digits, x);
    else
        printf("\"%s\"", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

// ---------------------------------------------------------------------------------------------
// Totals and hashes

typedef struct totals {
    uint64_t params;               // elements over all tensors
    uint64_t bytes;                // tensor bytes
    uint64_t count[MAX_TYPES + 1]; // tensors per type code (last slot: codes >= MAX_TYPES)
    bool any_uncomputable;         // some tensor has a type mint lists but cannot compute with
} totals;

static void sum_totals(const mint_file *f, uint64_t n_tensors, totals *t) {
    memset(t, 0, sizeof *t);
    for (uint64_t i = 0; i < n_tensors; i++) {
        mint_tensor_info ti;
        mint_file_tensor(f, i, &ti);
        uint64_t n = 1;
        for (int d = 0; d < 4; d++) n *= (uint64_t)ti.ne[d]; // the reader bounded this by 2^63
        t->params += n;
        t->bytes += ti.nbytes;
        t->count[ti.type < MAX_TYPES ? ti.type : MAX_TYPES]++;
        t->any_uncomputable |= !ti.type_computable;
    }
}

static double bits_per_weight(const totals *t) {
    return t->params ? 8.0 * (double)t->bytes / (double)t->params : 0.0;
}

static const char *count_name(unsigned k) {
    return k < MAX_TYPES ? mint_type_name(k) : "other";
}

// XXH3-64 of the data section: from its first byte to the end of the last tensor.
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

// ---------------------------------------------------------------------------------------------
// Text

static void shape_str(const mint_tensor_info *ti, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < ti->n_dims && len < cap; d++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, d ? ", " : "[", ti->ne[d]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
}

static void print_text(const mint_file *f, const options *o) {
    mint_file_info info;
    mint_file_get_info(f, &info);
    printf("file:        %s\n", o->path);
    printf("format:      %s", format_name(info.format));
    if (info.format == MINT_FORMAT_GGUF) printf(" v%" PRIu32, info.version);
    printf("\nsize:        %" PRIu64 " bytes\n", info.file_size);
    if (info.format != MINT_FORMAT_HF_DIR)
        printf("header:      %" PRIu64 " bytes (%" PRIu64 " metadata entries, %" PRIu64
               " tensor infos)\n",
               info.header_size, info.n_kv, info.n_tensors);
    if (info.format == MINT_FORMAT_GGUF) printf("alignment:   %" PRIu32 "\n", info.alignment);
    if (info.format == MINT_FORMAT_HF_DIR)
        printf("data:        %" PRIu64 " bytes of tensors\n", info.data_size);
    else
        printf("data:        byte %" PRIu64 ", %" PRIu64 " bytes\n", info.data_offset,
               info.data_size);

    printf("\nmetadata (%" PRIu64 " entries):\n", info.n_kv);
    char buf[1024];
    for (uint64_t i = 0; i < info.n_kv; i++) {
        mint_kv_info kv;
        mint_file_kv(f, i, &kv);
        mint_file_kv_format(f, i, buf, sizeof buf, 64, 5);
        printf("  ");
        print_clean(kv.key, 44);
        printf(" %-4s %s\n", kv.type == MINT_VAL_ARRAY ? "arr" : value_type_name(kv.type), buf);
    }

    printf("\ntensors (%" PRIu64 "):\n", info.n_tensors);
    printf("  %-4s %-32s %-8s %-22s %12s %12s\n", "#", "name", "type", "shape", "offset", "bytes");
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        mint_tensor_info t;
        mint_file_tensor(f, i, &t);
        char shape[96], type[32];
        shape_str(&t, shape, sizeof shape);
        snprintf(type, sizeof type, "%s%s", mint_type_name(t.type), t.type_computable ? "" : "*");
        printf("  %-4" PRIu64 " ", i);
        print_clean(t.name, 32);
        printf(" %-8s %-22s %12" PRIu64 " %12" PRIu64 "\n", type, shape, t.offset, t.nbytes);
    }

    totals tot;
    sum_totals(f, info.n_tensors, &tot);
    printf("\ntotals:\n");
    printf("  parameters:      %" PRIu64 "\n", tot.params);
    printf("  tensor bytes:    %" PRIu64 " (%.2f MiB)\n", tot.bytes, (double)tot.bytes / 1048576.0);
    printf("  bits per weight: %.4f\n", bits_per_weight(&tot));
    printf("  types:          ");
    for (unsigned k = 0; k <= MAX_TYPES; k++)
        if (tot.count[k]) printf(" %sx%" PRIu64, count_name(k), tot.count[k]);
    printf("%s\n", info.n_tensors ? "" : " (none)");
    if (tot.any_uncomputable)
        printf("  * = a type mint lists but has no kernels for (such a file cannot be run)\n");

    if (o->hash) {
        printf("\nhashes (XXH3-64):\n");
        for (uint64_t i = 0; i < info.n_tensors; i++) {
            mint_tensor_info t;
            mint_file_tensor(f, i, &t);
            printf("  xxh3 %016" PRIx64 "  ", mint_hash64(t.data, t.nbytes));
            print_clean(t.name, 0);
            printf("\n");
        }
        printf("  xxh3 %016" PRIx64 "  [data section: byte %" PRIu64 ", %" PRIu64 " bytes]\n",
               data_hash(f, &info), info.data_offset, info.data_size);
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

// One array element as JSON: numbers as numbers, bools as booleans, strings as strings.
static void json_elem(mint_value_type et, const void *arr, uint64_t j) {
    const char *p = (const char *)arr;
    switch (et) {
    case MINT_VAL_U8:
        printf("%u", ((const uint8_t *)p)[j]);
        break;
    case MINT_VAL_I8:
        printf("%d", ((const int8_t *)p)[j]);
        break;
    case MINT_VAL_U16:
        printf("%u", ((const uint16_t *)p)[j]);
        break;
    case MINT_VAL_I16:
        printf("%d", ((const int16_t *)p)[j]);
        break;
    case MINT_VAL_U32:
        printf("%" PRIu32, ((const uint32_t *)p)[j]);
        break;
    case MINT_VAL_I32:
        printf("%" PRId32, ((const int32_t *)p)[j]);
        break;
    case MINT_VAL_U64:
        printf("%" PRIu64, ((const uint64_t *)p)[j]);
        break;
    case MINT_VAL_I64:
        printf("%" PRId64, ((const int64_t *)p)[j]);
        break;
    case MINT_VAL_F32:
        json_double(((const float *)p)[j], 9);
        break;
    case MINT_VAL_F64:
        json_double(((const double *)p)[j], 17);
        break;
    case MINT_VAL_BOOL:
        printf("%s", ((const uint8_t *)p)[j] ? "true" : "false");
        break;
    default:
        printf("null");
        break;
    }
}

// Cuts a string shown in JSON at JSON_STR bytes, backing off to a UTF-8 character boundary.
static size_t json_cut(const char *s, uint64_t len) {
    if (len <= JSON_STR) return (size_t)len;
    size_t n = JSON_STR;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    return n;
}

static void json_value(const mint_file *f, uint64_t i, const mint_kv_info *kv) {
    if (kv->type == MINT_VAL_STRING) {
        const char *s;
        uint64_t len;
        mint_file_get_str(f, kv->key, &s, &len, NULL);
        printf(",\"len\":%" PRIu64 ",\"value\":", len);
        json_str(s, json_cut(s, len));
        return;
    }
    if (kv->type == MINT_VAL_ARRAY) {
        printf(",\"elem_type\":\"%s\",\"n\":%" PRIu64 ",\"head\":[", value_type_name(kv->elem_type),
               kv->n);
        uint64_t m = kv->n < JSON_ITEMS ? kv->n : JSON_ITEMS;
        const void *data = NULL;
        if (kv->elem_type != MINT_VAL_STRING)
            mint_file_get_arr(f, kv->key, NULL, NULL, &data, NULL);
        for (uint64_t j = 0; j < m; j++) {
            if (j) putchar(',');
            if (kv->elem_type == MINT_VAL_STRING) {
                const char *s;
                uint64_t len;
                mint_file_get_arr_str(f, kv->key, j, &s, &len, NULL);
                json_str(s, json_cut(s, len));
            } else {
                json_elem(kv->elem_type, data, j);
            }
        }
        putchar(']');
        return;
    }
    // Scalars: the library's rendering is already a JSON number or boolean, except for the
    // floats JSON cannot write.
    char buf[64];
    mint_file_kv_format(f, i, buf, sizeof buf, 0, 0);
    printf(",\"value\":");
    if (kv->type == MINT_VAL_F32 || kv->type == MINT_VAL_F64)
        json_double(strtod(buf, NULL), kv->type == MINT_VAL_F32 ? 9 : 17);
    else
        fputs(buf, stdout);
}

static void print_json(const mint_file *f, const options *o) {
    mint_file_info info;
    mint_file_get_info(f, &info);
    printf("{\"file\":");
    json_str(o->path, strlen(o->path));
    printf(",\"format\":\"%s\",\"version\":%" PRIu32 ",\"size\":%" PRIu64
           ",\"header_size\":%" PRIu64 ",\"alignment\":%" PRIu32 ",\"data_offset\":%" PRIu64
           ",\"data_size\":%" PRIu64 ",\"n_kv\":%" PRIu64 ",\"n_tensors\":%" PRIu64
           ",\"metadata\":[",
           format_name(info.format), info.version, info.file_size, info.header_size, info.alignment,
           info.data_offset, info.data_size, info.n_kv, info.n_tensors);
    for (uint64_t i = 0; i < info.n_kv; i++) {
        mint_kv_info kv;
        mint_file_kv(f, i, &kv);
        printf("%s{\"key\":", i ? "," : "");
        json_str(kv.key, strlen(kv.key));
        printf(",\"type\":\"%s\",\"offset\":%" PRIu64, value_type_name(kv.type), kv.file_offset);
        json_value(f, i, &kv);
        putchar('}');
    }
    printf("],\"tensors\":[");
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        mint_tensor_info t;
        mint_file_tensor(f, i, &t);
        printf("%s{\"name\":", i ? "," : "");
        json_str(t.name, strlen(t.name));
        printf(",\"type\":\"%s\",\"type_code\":%" PRIu32 ",\"computable\":%s,\"ne\":[",
               mint_type_name(t.type), t.type, t.type_computable ? "true" : "false");
        for (uint32_t d = 0; d < t.n_dims; d++) printf("%s%" PRId64, d ? "," : "", t.ne[d]);
        printf("],\"offset\":%" PRIu64 ",\"bytes\":%" PRIu64, t.offset, t.nbytes);
        if (o->hash) printf(",\"xxh3\":\"%016" PRIx64 "\"", mint_hash64(t.data, t.nbytes));
        putchar('}');
    }
    totals tot;
    sum_totals(f, info.n_tensors, &tot);
    printf("],\"totals\":{\"parameters\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"bpw\":%.4f"
           ",\"types\":{",
           tot.params, tot.bytes, bits_per_weight(&tot));
    bool first = true;
    for (unsigned k = 0; k <= MAX_TYPES; k++) {
        if (!tot.count[k]) continue;
        printf("%s\"%s\":%" PRIu64, first ? "" : ",", count_name(k), tot.count[k]);
        first = false;
    }
    printf("}}");
    if (o->hash) printf(",\"data_xxh3\":\"%016" PRIx64 "\"", data_hash(f, &info));
    printf("}\n");
}

int main(int argc, char **argv) {
    options o;
    int done = opt_main(&program, argc, argv, &o);
    if (done >= 0) return done;
    mint_err err;
    mint_file *f = NULL;
    if (mint_file_open(o.path, &f, &err) != MINT_OK) {
        fprintf(stderr, "mint-inspect: %s\n", err.msg);
        return 1;
    }
    if (o.verify) {
        uint64_t n = 0;
        mint_status st = mint_verify_hashes(f, &n, &err);
        mint_file_close(f);
        if (st != MINT_OK) {
            fprintf(stderr, "mint-inspect: %s: %s\n", o.path, err.msg);
            return 1;
        }
        printf("%s: all %llu tensors match their recorded XXH3-64\n", o.path,
               (unsigned long long)n);
        return 0;
    }
    if (o.json)
        print_json(f, &o);
    else
        print_text(f, &o);
    mint_file_close(f);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "mint-inspect: cannot write the output\n");
        return 1;
    }
    return 0;
}
