// slot_file.h - llama-server's slot files (POST /slots/N?action=save|restore, --slot-save-path):
// a slot's tokens in the layout llama-server writes and reads, so a file moves between the two.
//
// The layout (32-bit words, host byte order as llama.cpp writes them): llama.cpp's sequence-state
// header, magic 'ggsq' (0x67677371), version 3, a word count W, then W words; llama-server packs
// its tokens into those words as [-1 (a marker), 1 (its format version), n, n tokens, 0 (no
// images)], and older servers wrote the n tokens alone. After the words llama.cpp appends the
// sequence's KV data; mint writes none and ignores what is there: mint-serve restores a slot by
// evaluating its tokens again, which gives the same KV (mint's results do not depend on how
// tokens are batched), so its files are small and independent of the KV type.
#ifndef MINT_SLOT_FILE_H
#define MINT_SLOT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLOT_FILE_MAGIC   0x67677371u // 'ggsq'
#define SLOT_FILE_VERSION 3u          // llama.cpp's LLAMA_STATE_SEQ_VERSION
#define SLOT_TOKENS_VER   1u          // llama-server's packed token format

// Bytes of the file of n tokens.
size_t slot_file_size(int n);

// Writes the file of tokens[0..n) into buf (slot_file_size(n) bytes).
void slot_file_write(uint8_t *buf, const int32_t *tokens, int n);

// Reads a slot file of len bytes: *tokens (malloc'd, [*n]; NULL when n is 0) are its tokens,
// each below n_vocab, at most max_tokens of them. False with one line in msg when the bytes are
// no slot file, hold images, or their tokens do not fit this model or its slots.
bool slot_file_read(const uint8_t *data, size_t len, int32_t n_vocab, int max_tokens,
                    int32_t **tokens, int *n, char *msg, size_t cap);

// Whether name may be a slot file's name under --slot-save-path: 1 to 255 bytes of printable
// text, no '/' or '\\', not "." or "..", no leading or trailing space or trailing dot.
bool slot_file_name_ok(const char *name);

#endif
