// fuzz_safetensors.c - the safetensors reader on arbitrary bytes: u64 header length, JSON header,
// data buffer (formats/safetensors.h). Built only once formats/safetensors.h is in the tree.
//
// A rejected file must come with a one-line message that starts with the file's name. An
// accepted one is walked: every tensor through mint_file_tensor and mint_file_find_tensor, with
// a known ggml type, ne in ggml order, nbytes = elements x element size, data_offsets inside the
// data buffer, and data that holds exactly the file's bytes there (an unaligned tensor is a copy,
// which must be aligned to its element size); every "__metadata__" entry is a string, read
// through the getters and rendered with mint_file_kv_format. The JSON parser also runs on the
// whole input as a document of its own (config.json and tokenizer files go through it).
#include "formats/json_doc.h"
#include "formats/safetensors.h"
#include "fuzz_util.h"

#include <stdbool.h>
#include <string.h>

static void walk_tensors(const mint_file *f, const uint8_t *data, size_t size) {
    mint_file_info info;
    mint_file_get_info(f, &info);
    FUZZ_CHECK(info.format == MINT_FORMAT_SAFETENSORS && info.file_size == size);
    FUZZ_CHECK(info.data_offset >= 8 && info.data_offset <= size);
    uint64_t buf_size = size - info.data_offset;
    FUZZ_CHECK(info.data_size <= buf_size);
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        mint_tensor_info t, t2;
        FUZZ_CHECK(mint_file_tensor(f, i, &t) == MINT_OK);
        FUZZ_CHECK(t.name && t.name[0] != '\0');
        FUZZ_CHECK(mint_file_find_tensor(f, t.name, &t2) == MINT_OK && t2.offset == t.offset);
        const mint_st_dtype *dt = mint_st_dtype_of_type(t.type);
        FUZZ_CHECK(t.type_known && dt != NULL && t.n_dims >= 1 && t.n_dims <= 4);
        uint64_t count = 1;
        for (int d = 0; d < 4; d++) {
            FUZZ_CHECK(t.ne[d] >= 0 && (d < (int)t.n_dims || t.ne[d] == 1));
            count *= (uint64_t)t.ne[d]; // bounded: the reader checked the non-zero product
        }
        FUZZ_CHECK(t.nbytes == count * dt->size);
        FUZZ_CHECK(t.offset <= buf_size && t.nbytes <= buf_size - t.offset);
        FUZZ_CHECK(t.file_offset == info.data_offset + t.offset);
        FUZZ_CHECK(t.nbytes == 0 || (uintptr_t)t.data % dt->size == 0);
        FUZZ_CHECK(t.nbytes == 0 || memcmp(t.data, data + t.file_offset, t.nbytes) == 0);
    }
    mint_tensor_info t;
    FUZZ_CHECK(mint_file_tensor(f, info.n_tensors, &t) == MINT_E_ARG);
    for (uint64_t i = 0; i < info.n_kv; i++) {
        mint_kv_info kv;
        FUZZ_CHECK(mint_file_kv(f, i, &kv) == MINT_OK && kv.type == MINT_VAL_STRING);
        const char *s;
        uint64_t len;
        FUZZ_CHECK(mint_file_get_str(f, kv.key, &s, &len, NULL) == MINT_OK && len == kv.n);
        size_t want = mint_file_kv_format(f, i, NULL, 0, 64, 8);
        char *buf = malloc(want + 1);
        FUZZ_CHECK(buf);
        FUZZ_CHECK(mint_file_kv_format(f, i, buf, want + 1, 64, 8) == want);
        FUZZ_CHECK(strlen(buf) == want);
        free(buf);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)mint_safetensors_sniff(data, size);
    mint_file *f = NULL;
    mint_err err;
    mint_status st = mint_safetensors_parse(data, size, "fuzz.safetensors", &f, &err);
    if (st != MINT_OK) {
        FUZZ_CHECK(f == NULL && err.code == st);
        FUZZ_CHECK(strncmp(err.msg, "fuzz.safetensors: ", 18) == 0);
        FUZZ_CHECK(!strchr(err.msg, '\n'));
    } else {
        FUZZ_CHECK(f != NULL);
        walk_tensors(f, data, size);
        mint_file_close(f);
    }
    // The same bytes as a JSON document of their own.
    json_object *doc = NULL;
    st = mint_json_parse((const char *)data, size, "fuzz.json", 0, &doc, &err);
    // Success gives a value, except for the text `null` (json-c's null is the NULL pointer).
    FUZZ_CHECK(st == MINT_OK || doc == NULL);
    if (doc) json_object_put(doc);
    return 0;
}
