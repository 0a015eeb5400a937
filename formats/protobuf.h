// protobuf.h - the protocol buffers wire format, just enough for SentencePiece's tokenizer.model:
// a bounds-checked reader over a byte range and an appending writer.
//
// Wire format (protobuf.dev/programming-guides/encoding): a message is a sequence of records, each
// a varint key (field_number << 3 | wire_type) followed by the value: wire type 0 a varint (at most
// 10 bytes, 7 bits per byte, little-endian groups, high bit = more), 1 eight little-endian bytes,
// 2 a varint length and that many bytes (strings, bytes, sub-messages), 5 four little-endian bytes.
// Types 3 and 4 (groups) are deprecated; SentencePiece never writes them and the reader refuses
// them. Fields may come in any order and repeat; for a scalar the last one wins.
#ifndef MINT_PROTOBUF_H
#define MINT_PROTOBUF_H

#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    MINT_PB_VARINT = 0,
    MINT_PB_I64 = 1,
    MINT_PB_LEN = 2,
    MINT_PB_I32 = 5,
};

// A read position inside one message. `base` is the start of the whole buffer, so offsets in
// error messages are absolute.
typedef struct mint_pb_reader {
    const uint8_t *base; // the whole buffer
    size_t pos;          // next byte to read (absolute)
    size_t end;          // end of this message (absolute, <= buffer size)
    const char *what;    // message name for errors ("ModelProto", "SentencePiece", ...)
    mint_err *err;       // where failures go
} mint_pb_reader;

// One decoded record. For LEN records `sub` is the byte range of the payload.
typedef struct mint_pb_field {
    uint32_t number; // field number (1 .. 2^29-1)
    uint32_t wire;   // wire type
    size_t at;       // absolute offset of the key
    uint64_t u;      // VARINT value, or the raw bits of I32/I64
    size_t len_at;   // LEN: absolute offset of the payload
    size_t len;      // LEN: payload length in bytes
} mint_pb_field;

// A reader over base[begin, end).
mint_pb_reader mint_pb_reader_at(const uint8_t *base, size_t begin, size_t end, const char *what,
                                 mint_err *err);

static inline bool mint_pb_done(const mint_pb_reader *r) {
    return r->pos >= r->end;
}

// Reads the next record. MINT_E_FORMAT (naming the message, the field and the byte offset) for a
// truncated key or value, an over-long varint, field number 0, a group, or an unknown wire type.
mint_status mint_pb_next(mint_pb_reader *r, mint_pb_field *out);

// Checks that a known field has the wire type the schema says; MINT_E_FORMAT otherwise.
mint_status mint_pb_expect(const mint_pb_reader *r, const mint_pb_field *f, uint32_t wire,
                           const char *field_name);

// int32 as protobuf encodes it: a varint of the value sign-extended to 64 bits. MINT_E_FORMAT when
// the 64-bit value does not fit an int32.
mint_status mint_pb_int32(const mint_pb_reader *r, const mint_pb_field *f, const char *field_name,
                          int32_t *out);

static inline float mint_pb_float(const mint_pb_field *f) {
    union {
        uint32_t u;
        float x;
    } v = {(uint32_t)f->u};
    return v.x;
}

// ---------------------------------------------------------------------------------------------
// Writer: appends records to a growable buffer; an allocation failure is sticky and reported by
// mint_pb_writer_status.

typedef struct mint_pb_writer {
    uint8_t *p; // [cap] bytes
    size_t len; // bytes written
    size_t cap; // bytes allocated
    bool oom;   // an append failed
} mint_pb_writer;

void mint_pb_put_varint_field(mint_pb_writer *w, uint32_t number, uint64_t v);
// int32 fields: negative values take 10 bytes (sign extension), as protobuf specifies.
void mint_pb_put_int32_field(mint_pb_writer *w, uint32_t number, int32_t v);
void mint_pb_put_float_field(mint_pb_writer *w, uint32_t number, float v);
void mint_pb_put_bytes_field(mint_pb_writer *w, uint32_t number, const void *p, size_t n);
// A sub-message is a bytes field holding another writer's output.
static inline void mint_pb_put_message_field(mint_pb_writer *w, uint32_t number,
                                             const mint_pb_writer *sub) {
    mint_pb_put_bytes_field(w, number, sub->p, sub->len);
}
mint_status mint_pb_writer_status(const mint_pb_writer *w);
void mint_pb_writer_free(mint_pb_writer *w);

#endif // MINT_PROTOBUF_H
