// fuzz_slot_file.c - llama-server's slot files as mint-serve reads them (tools/common/slot_file.c:
// POST /slots/N?action=restore reads any file under --slot-save-path) on arbitrary bytes, in a
// buffer of exactly their length, so that a read past the end is caught; and slot file names.
//
// Checked: a refused file leaves a one-line message and no tokens; a read file's tokens are in
// the vocabulary and within the limit, and written back they read back the same; a name that is
// accepted has no path in it.
#include "fuzz_util.h"
#include "slot_file.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf = malloc(size ? size : 1);
    FUZZ_CHECK(buf);
    if (size) memcpy(buf, data, size);
    const int32_t n_vocab = 512;
    const int max_tokens = 1000;
    int32_t *tok = NULL;
    int n = -1;
    char msg[300] = "";
    if (slot_file_read(buf, size, n_vocab, max_tokens, &tok, &n, msg, sizeof msg)) {
        FUZZ_CHECK(n >= 0 && n <= max_tokens && (n == 0) == (tok == NULL));
        for (int i = 0; i < n; i++) FUZZ_CHECK(tok[i] >= 0 && tok[i] < n_vocab);
        const size_t len = slot_file_size(n);
        uint8_t *out = malloc(len);
        FUZZ_CHECK(out);
        slot_file_write(out, tok, n);
        int32_t *again = NULL;
        int n2 = -1;
        FUZZ_CHECK(slot_file_read(out, len, n_vocab, max_tokens, &again, &n2, msg, sizeof msg));
        FUZZ_CHECK(n2 == n && (n == 0 || !memcmp(again, tok, (size_t)n * sizeof *tok)));
        free(again);
        free(out);
    } else {
        FUZZ_CHECK(tok == NULL && n == 0 && msg[0] && !strchr(msg, '\n'));
    }
    free(tok);
    // The same bytes as a file name (up to the first NUL).
    char name[300];
    const size_t k = size < sizeof name - 1 ? size : sizeof name - 1;
    memcpy(name, data, k);
    name[k] = '\0';
    if (slot_file_name_ok(name))
        FUZZ_CHECK(!strchr(name, '/') && strcmp(name, "..") && strcmp(name, ".") && name[0]);
    free(buf);
    return 0;
}
