// json_schema_double.c - a double's shortest decimal digits as llama.cpp's JSON library
// (nlohmann's to_chars) finds them, by Grisu2 (Florian Loitsch, "Printing Floating-Point Numbers
// Quickly and Accurately with Integers", PLDI 2010) with the same parameters: the product's
// binary exponent kept in [-60, -32], powers of ten every 8 decades, the last digit walked toward
// the value. The digits always read back as the double, and are nearly always the shortest such
// digits; where they are not, a const or enum value's text in the grammar must still be the
// server's, so the converter cannot use another shortest-digits method.
#include "runtime/text/json_schema.h"

#include <string.h>

// f * 2^e, f an unsigned 64-bit significand.
typedef struct diyfp {
    uint64_t f; // significand
    int e;      // binary exponent
} diyfp;

// x * y with the upper 64 bits of the 128-bit product kept, rounded (ties up).
static diyfp mul(diyfp x, diyfp y) {
    uint64_t a = x.f >> 32, b = x.f & 0xFFFFFFFFu, c = y.f >> 32, d = y.f & 0xFFFFFFFFu;
    uint64_t ac = a * c, bc = b * c, ad = a * d, bd = b * d;
    uint64_t mid = (bd >> 32) + (ad & 0xFFFFFFFFu) + (bc & 0xFFFFFFFFu) + (1ull << 31);
    return (diyfp){ac + (ad >> 32) + (bc >> 32) + (mid >> 32), x.e + y.e + 64};
}

static diyfp normalize(diyfp x) {
    while (!(x.f >> 63)) x.f <<= 1, x.e--;
    return x;
}

// 10^k for k = -300, -292, ..., 324: the 64-bit significand rounded to nearest (ties up) and its
// binary exponent, made with exact arithmetic (the doubles of the reference cases exercise them).
static const struct {
    uint64_t f; // significand, top bit set
    int e;      // binary exponent
} POW10[] = {
    {0xAB70FE17C79AC6CAULL, -1060}, {0xFF77B1FCBEBCDC4FULL, -1034}, {0xBE5691EF416BD60CULL, -1007},
    {0x8DD01FAD907FFC3CULL, -980},  {0xD3515C2831559A83ULL, -954},  {0x9D71AC8FADA6C9B5ULL, -927},
    {0xEA9C227723EE8BCBULL, -901},  {0xAECC49914078536DULL, -874},  {0x823C12795DB6CE57ULL, -847},
    {0xC21094364DFB5637ULL, -821},  {0x9096EA6F3848984FULL, -794},  {0xD77485CB25823AC7ULL, -768},
    {0xA086CFCD97BF97F4ULL, -741},  {0xEF340A98172AACE5ULL, -715},  {0xB23867FB2A35B28EULL, -688},
    {0x84C8D4DFD2C63F3BULL, -661},  {0xC5DD44271AD3CDBAULL, -635},  {0x936B9FCEBB25C996ULL, -608},
    {0xDBAC6C247D62A584ULL, -582},  {0xA3AB66580D5FDAF6ULL, -555},  {0xF3E2F893DEC3F126ULL, -529},
    {0xB5B5ADA8AAFF80B8ULL, -502},  {0x87625F056C7C4A8BULL, -475},  {0xC9BCFF6034C13053ULL, -449},
    {0x964E858C91BA2655ULL, -422},  {0xDFF9772470297EBDULL, -396},  {0xA6DFBD9FB8E5B88FULL, -369},
    {0xF8A95FCF88747D94ULL, -343},  {0xB94470938FA89BCFULL, -316},  {0x8A08F0F8BF0F156BULL, -289},
    {0xCDB02555653131B6ULL, -263},  {0x993FE2C6D07B7FACULL, -236},  {0xE45C10C42A2B3B06ULL, -210},
    {0xAA242499697392D3ULL, -183},  {0xFD87B5F28300CA0EULL, -157},  {0xBCE5086492111AEBULL, -130},
    {0x8CBCCC096F5088CCULL, -103},  {0xD1B71758E219652CULL, -77},   {0x9C40000000000000ULL, -50},
    {0xE8D4A51000000000ULL, -24},   {0xAD78EBC5AC620000ULL, 3},     {0x813F3978F8940984ULL, 30},
    {0xC097CE7BC90715B3ULL, 56},    {0x8F7E32CE7BEA5C70ULL, 83},    {0xD5D238A4ABE98068ULL, 109},
    {0x9F4F2726179A2245ULL, 136},   {0xED63A231D4C4FB27ULL, 162},   {0xB0DE65388CC8ADA8ULL, 189},
    {0x83C7088E1AAB65DBULL, 216},   {0xC45D1DF942711D9AULL, 242},   {0x924D692CA61BE758ULL, 269},
    {0xDA01EE641A708DEAULL, 295},   {0xA26DA3999AEF774AULL, 322},   {0xF209787BB47D6B85ULL, 348},
    {0xB454E4A179DD1877ULL, 375},   {0x865B86925B9BC5C2ULL, 402},   {0xC83553C5C8965D3DULL, 428},
    {0x952AB45CFA97A0B3ULL, 455},   {0xDE469FBD99A05FE3ULL, 481},   {0xA59BC234DB398C25ULL, 508},
    {0xF6C69A72A3989F5CULL, 534},   {0xB7DCBF5354E9BECEULL, 561},   {0x88FCF317F22241E2ULL, 588},
    {0xCC20CE9BD35C78A5ULL, 614},   {0x98165AF37B2153DFULL, 641},   {0xE2A0B5DC971F303AULL, 667},
    {0xA8D9D1535CE3B396ULL, 694},   {0xFB9B7CD9A4A7443CULL, 720},   {0xBB764C4CA7A44410ULL, 747},
    {0x8BAB8EEFB6409C1AULL, 774},   {0xD01FEF10A657842CULL, 800},   {0x9B10A4E5E9913129ULL, 827},
    {0xE7109BFBA19C0C9DULL, 853},   {0xAC2820D9623BF429ULL, 880},   {0x80444B5E7AA7CF85ULL, 907},
    {0xBF21E44003ACDD2DULL, 933},   {0x8E679C2F5E44FF8FULL, 960},   {0xD433179D9C8CB841ULL, 986},
    {0x9E19DB92B4E31BA9ULL, 1013},
};

// The digits of v's shortest-ish decimal form: writes them to buf (at most 17) and returns
// their count; v = digits * 10^*exp10. v must be finite and > 0.
int js_grisu2(double v, char *buf, int *exp10) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t E = bits >> 52, F = bits & ((1ull << 52) - 1);
    diyfp w = E ? (diyfp){F + (1ull << 52), (int)E - 1075} : (diyfp){F, -1074};
    // The boundaries halfway to the neighbouring doubles (the lower one is closer at a power of
    // two, except for the smallest normal exponent).
    bool lower_closer = F == 0 && E > 1;
    diyfp plus = normalize((diyfp){2 * w.f + 1, w.e - 1});
    diyfp minus = lower_closer ? (diyfp){4 * w.f - 1, w.e - 2} : (diyfp){2 * w.f - 1, w.e - 1};
    minus = (diyfp){minus.f << (minus.e - plus.e), plus.e};
    w = normalize(w);
    // A cached power c ~ 10^-k that brings plus's exponent into [-60, -32].
    int f = -60 - plus.e - 1;
    int k = (f * 78913) / (1 << 18) + (f > 0);
    int idx = (300 + k + 7) / 8;
    diyfp c = {POW10[idx].f, POW10[idx].e};
    int k10 = -300 + 8 * idx;
    diyfp W = mul(w, c), Mm = mul(minus, c), Mp = mul(plus, c);
    Mm.f += 1, Mp.f -= 1; // stay strictly inside the rounding interval
    *exp10 = -k10;
    uint64_t delta = Mp.f - Mm.f, dist = Mp.f - W.f;
    int sh = -Mp.e;
    uint64_t one = 1ull << sh;
    uint32_t p1 = (uint32_t)(Mp.f >> sh);
    uint64_t p2 = Mp.f & (one - 1);
    int len = 0;
    uint32_t pow10 = 1;
    int n = 1;
    while (n < 10 && p1 >= pow10 * 10u) pow10 *= 10, n++;
    uint64_t rest, unit;
    for (;;) { // the integral part's digits, stopping as soon as the rest fits in the interval
        buf[len++] = (char)('0' + p1 / pow10);
        p1 %= pow10;
        n--;
        rest = ((uint64_t)p1 << sh) + p2;
        if (rest <= delta) {
            *exp10 += n;
            unit = (uint64_t)pow10 << sh;
            goto round;
        }
        if (n == 0) break;
        pow10 /= 10;
    }
    for (int m = 0;;) { // then fractional digits
        p2 *= 10;
        buf[len++] = (char)('0' + (p2 >> sh));
        p2 &= one - 1;
        m++;
        delta *= 10;
        dist *= 10;
        if (p2 <= delta) {
            *exp10 -= m;
            rest = p2;
            unit = one;
            break;
        }
    }
round: // walk the last digit down while that brings the digits closer to w
    while (rest < dist && delta - rest >= unit &&
           (rest + unit < dist || dist - rest > rest + unit - dist)) {
        buf[len - 1]--;
        rest += unit;
    }
    return len;
}
