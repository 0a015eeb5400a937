// byte_unicode.c - lenient UTF-8 and the GPT-2 byte map (see byte_unicode.h).
#include "runtime/text/byte_unicode.h"

static int is_cont(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

uint32_t mint_utf8_decode(const char *s, size_t n, uint32_t *len) {
    const unsigned char *u = (const unsigned char *)s;
    unsigned char c = u[0];
    *len = 1;
    if (c < 0x80) return c;
    // The sequence length follows from the lead byte's high bits; only the continuation bytes'
    // own top two bits are checked, as llama.cpp's decoder does.
    uint32_t k = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (k == 0 || k > n) return 0xFFFD; // stray continuation byte, 0xF8.., or cut short
    for (uint32_t i = 1; i < k; i++)
        if (!is_cont(u[i])) return 0xFFFD;
    uint32_t cp = k == 2 ? c & 0x1Fu : k == 3 ? c & 0x0Fu : c & 0x07u;
    for (uint32_t i = 1; i < k; i++) cp = cp << 6 | (u[i] & 0x3Fu);
    if (cp > 0x10FFFF) return 0xFFFD;
    *len = k;
    return cp;
}

uint32_t mint_utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

// The 68 bytes without a printable stand-in, in order: 0x00..0x20 (33), 0x7F..0xA0 (34), 0xAD.
static int printable(uint32_t b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

uint32_t mint_byte_to_cp(uint8_t b) {
    if (printable(b)) return b;
    if (b <= 0x20) return 0x100u + b;
    if (b >= 0x7F && b <= 0xA0) return 0x100u + 33 + (b - 0x7Fu);
    return 0x100u + 33 + 34; // 0xAD
}

int mint_cp_to_byte(uint32_t cp) {
    if (cp <= 0xFF) return printable(cp) ? (int)cp : -1;
    if (cp < 0x100 + 33) return (int)(cp - 0x100);
    if (cp < 0x100 + 33 + 34) return (int)(cp - 0x100 - 33 + 0x7F);
    if (cp == 0x100 + 33 + 34) return 0xAD;
    return -1;
}
