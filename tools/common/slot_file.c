// slot_file.c - llama-server's slot files: see slot_file.h for the layout and why mint writes no
// KV data after the tokens.
#include "slot_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t word(const uint8_t *p) {
    uint32_t w;
    memcpy(&w, p, sizeof w); // host order, as llama.cpp reads and writes them
    return w;
}

static void put(uint8_t **p, uint32_t w) {
    memcpy(*p, &w, sizeof w);
    *p += sizeof w;
}

size_t slot_file_size(int n) {
    return 4 * (3 + 4 + (size_t)n); // header, then the packed list's marker, version, n, tokens, 0
}

void slot_file_write(uint8_t *buf, const int32_t *tokens, int n) {
    uint8_t *p = buf;
    put(&p, SLOT_FILE_MAGIC);
    put(&p, SLOT_FILE_VERSION);
    put(&p, (uint32_t)n + 4);
    put(&p, UINT32_MAX); // -1: the packed format's marker (no token is negative)
    put(&p, SLOT_TOKENS_VER);
    put(&p, (uint32_t)n);
    if (n > 0) memcpy(p, tokens, (size_t)n * 4);
    p += (size_t)n * 4;
    put(&p, 0); // no images
}

bool slot_file_read(const uint8_t *data, size_t len, int32_t n_vocab, int max_tokens,
                    int32_t **tokens, int *n, char *msg, size_t cap) {
    *tokens = NULL;
    *n = 0;
    if (len < 12 || word(data) != SLOT_FILE_MAGIC) {
        snprintf(msg, cap, "not a slot file (no 'ggsq' sequence-state header)");
        return false;
    }
    if (word(data + 4) != SLOT_FILE_VERSION) {
        snprintf(msg, cap, "a slot file of version %u (version %u is read)", word(data + 4),
                 SLOT_FILE_VERSION);
        return false;
    }
    const uint64_t count = word(data + 8);
    if (count > (len - 12) / 4) {
        snprintf(msg, cap, "the slot file says %llu tokens, but holds %zu bytes",
                 (unsigned long long)count, len);
        return false;
    }
    const uint8_t *w = data + 12;
    uint64_t first = 0, k = count;            // the tokens: words first .. first + k - 1
    if (count > 0 && word(w) == UINT32_MAX) { // llama-server's packed list
        if (count < 4 || word(w + 4) != SLOT_TOKENS_VER) {
            snprintf(msg, cap, "the slot file's token list is of an unknown format");
            return false;
        }
        k = word(w + 8);
        if (k > count - 4) {
            snprintf(msg, cap, "the slot file's token list runs past its %llu words",
                     (unsigned long long)count);
            return false;
        }
        first = 3;
        if (word(w + 4 * (3 + k)) != 0) {
            snprintf(msg, cap, "the slot file holds images: mint-serve reads text only");
            return false;
        }
    }
    if (k > (uint64_t)max_tokens) {
        snprintf(msg, cap, "the slot file's %llu tokens do not fit a slot of %d positions",
                 (unsigned long long)k, max_tokens);
        return false;
    }
    int32_t *t = malloc(k ? (size_t)k * sizeof *t : 1);
    if (!t) {
        snprintf(msg, cap, "out of memory");
        return false;
    }
    for (uint64_t i = 0; i < k; i++) {
        t[i] = (int32_t)word(w + 4 * (first + i));
        if (t[i] < 0 || t[i] >= n_vocab) {
            snprintf(msg, cap, "token %d at %llu of the slot file is not in the vocabulary (%d)",
                     t[i], (unsigned long long)i, n_vocab);
            free(t);
            return false;
        }
    }
    if (k == 0) {
        free(t);
        t = NULL;
    }
    *tokens = t;
    *n = (int)k;
    return true;
}

bool slot_file_name_ok(const char *name) {
    const size_t n = strlen(name);
    if (n == 0 || n > 255 || !strcmp(name, ".") || !strcmp(name, "..")) return false;
    if (name[0] == ' ' || name[n - 1] == ' ' || name[n - 1] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        const unsigned char ch = (unsigned char)name[i];
        if (ch < 0x20 || ch == 0x7f || ch == '/' || ch == '\\') return false;
    }
    return true;
}
