// byte_unicode.h - the two Unicode rules byte-level BPE vocabularies rest on, as llama.cpp
// applies them:
//
// 1. Lenient UTF-8. Text is read as code points: a well-formed lead byte with enough
//    continuation bytes gives its code point (overlong forms and surrogates are NOT refused);
//    anything else (a stray continuation byte, a lead byte cut short, 0xF8..0xFF) is one U+FFFD
//    for that one byte, and decoding goes on with the next byte. The tokenizer works on the text
//    re-encoded from those code points.
// 2. The GPT-2 byte <-> character map. Every byte gets a printable character: '!'..'~',
//    0xA1..0xAC and 0xAE..0xFF stand for themselves, the 68 others (0x00..0x20, 0x7F..0xA0, 0xAD)
//    become U+0100 + their rank among those 68. Token texts of "gpt2" vocabularies are written in
//    these characters, so the space before a word is "Ġ" (U+0120).
#ifndef MINT_BYTE_UNICODE_H
#define MINT_BYTE_UNICODE_H

#include <stddef.h>
#include <stdint.h>

// Decodes one code point at s[0..n) (n >= 1) by rule 1; *len gets the bytes consumed (1..4).
// U+FFFD for an invalid sequence (then *len is 1). Code points above U+10FFFF, which llama.cpp
// cannot encode again (it aborts), are invalid here too.
uint32_t mint_utf8_decode(const char *s, size_t n, uint32_t *len);

// Writes the UTF-8 form of cp (at most U+10FFFF; surrogates are written like any other code
// point) to out, returns its length (1..4).
uint32_t mint_utf8_encode(uint32_t cp, char *out);

// The code point that stands for byte b (rule 2).
uint32_t mint_byte_to_cp(uint8_t b);

// The byte a code point stands for, or -1 when it stands for none.
int mint_cp_to_byte(uint32_t cp);

#endif // MINT_BYTE_UNICODE_H
