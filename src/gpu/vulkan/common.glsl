// Shared by quale's compute shaders.  Samples are read from 32-bit words
// (planes and rows start on 64-byte boundaries), so no device needs the
// 8- or 16-bit storage features; 64-bit integers are pairs of 32-bit words
// with explicit carries, so no device needs shaderInt64.  Integer
// arithmetic only here: these give the same bits on every device.

// The sample at byte offset `byte` of a word array, 8 or 16 bits wide.
#define SAMPLE(words, byte, bytes_per_sample)                                        \
    ((bytes_per_sample) == 1u                                                        \
         ? ((words[(byte) >> 2] >> (((byte) & 3u) * 8u)) & 0xffu)                    \
         : ((words[(byte) >> 2] >> (((byte) & 2u) * 8u)) & 0xffffu))

// Unsigned 64-bit: x the low word, y the high word.
uvec2 u64_add(uvec2 a, uvec2 b)
{
    uint carry;
    const uint lo = uaddCarry(a.x, b.x, carry);
    return uvec2(lo, a.y + b.y + carry);
}

// Signed 64-bit, two's complement: x the low word, y the high word.
uvec2 i64_from_int(int v)
{
    return uvec2(uint(v), v < 0 ? 0xffffffffu : 0u);
}

uvec2 i64_mul(int a, int b)
{
    int hi, lo;
    imulExtended(a, b, hi, lo);
    return uvec2(uint(lo), uint(hi));
}

// a >> s (arithmetic, 0 < s < 32) when the result fits 32 bits.
int i64_shr_to_int(uvec2 a, uint s)
{
    return int((a.x >> s) | (a.y << (32u - s)));
}

// ---- more 64-bit integers (uvec2: x the low word, y the high word) ------

uvec2 u64_sub(uvec2 a, uvec2 b)
{
    uint borrow;
    const uint lo = usubBorrow(a.x, b.x, borrow);
    return uvec2(lo, a.y - b.y - borrow);
}

bool u64_lt(uvec2 a, uvec2 b)
{
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

bool i64_lt(uvec2 a, uvec2 b)
{
    return int(a.y) < int(b.y) || (a.y == b.y && a.x < b.x);
}

bool i64_is_negative(uvec2 a)
{
    return int(a.y) < 0;
}

// a * b, both unsigned 32-bit: the exact 64-bit product.
uvec2 u64_mul32(uint a, uint b)
{
    uint hi, lo;
    umulExtended(a, b, hi, lo);
    return uvec2(lo, hi);
}

// a * b modulo 2^64 (unsigned; also right for two's complement a).
uvec2 u64_mul_lo(uvec2 a, uint b)
{
    uvec2 p = u64_mul32(a.x, b);
    p.y += a.y * b;
    return p;
}

// Signed a times unsigned b: the exact 64-bit two's-complement product.
uvec2 i64_mul_iu(int a, uint b)
{
    const uvec2 p = u64_mul32(a < 0 ? 0u - uint(a) : uint(a), b);
    return a < 0 ? u64_sub(uvec2(0u), p) : p;
}

uvec2 i64_neg(uvec2 a)
{
    return u64_sub(uvec2(0u), a);
}

// Logical shifts, 0 <= s < 64.
uvec2 u64_shr(uvec2 a, uint s)
{
    if (s == 0u) return a;
    if (s >= 32u) return uvec2(a.y >> (s - 32u), 0u);
    return uvec2((a.x >> s) | (a.y << (32u - s)), a.y >> s);
}

uvec2 u64_shl(uvec2 a, uint s)
{
    if (s == 0u) return a;
    if (s >= 32u) return uvec2(0u, a.x << (s - 32u));
    return uvec2(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}

// Arithmetic shift right of a signed 64-bit integer, 0 <= s < 64.
uvec2 i64_sar(uvec2 a, uint s)
{
    if (s == 0u) return a;
    if (s >= 32u) {
        const int hi = int(a.y);
        return uvec2(uint(hi >> (s - 32u)), uint(hi >> 31));
    }
    return uvec2((a.x >> s) | (a.y << (32u - s)), uint(int(a.y) >> s));
}

// The number of significant bits: 0 for 0, 64 for 2^63 and above.
int u64_bitlen(uvec2 a)
{
    return a.y != 0u ? 33 + findMSB(a.y) : 1 + findMSB(a.x);
}

// ---- 96-bit unsigned integers (uvec3, x the lowest word) ------------------

uvec3 u96_add(uvec3 a, uvec3 b)
{
    uint c0, c1, c2, c3;
    const uint x = uaddCarry(a.x, b.x, c0);
    const uint y0 = uaddCarry(a.y, b.y, c1);
    const uint y = uaddCarry(y0, c0, c2);
    return uvec3(x, y, a.z + b.z + c1 + c2);
}

// ---- 128-bit unsigned integers (uvec4, x the lowest word) -----------------

uvec4 u128_mul64(uvec2 a, uvec2 b)
{
    const uvec2 p00 = u64_mul32(a.x, b.x), p01 = u64_mul32(a.x, b.y);
    const uvec2 p10 = u64_mul32(a.y, b.x), p11 = u64_mul32(a.y, b.y);
    uint c1, c2, c3, c4, c5;
    const uint w1a = uaddCarry(p00.y, p01.x, c1);
    const uint w1 = uaddCarry(w1a, p10.x, c2);
    const uint w2a = uaddCarry(p01.y, p10.y, c3);
    const uint w2b = uaddCarry(w2a, p11.x, c4);
    const uint w2 = uaddCarry(w2b, c1 + c2, c5);
    return uvec4(p00.x, w1, w2, p11.y + c3 + c4 + c5);
}

// ---- integers to float ----------------------------------------------------

// v rounded to float, to nearest with ties to even, as C's (float) of an
// integer: built from its bits (Vulkan leaves the rounding of a conversion
// unspecified).
float f32_from_u32(uint v)
{
    if (v < 0x1000000u) return float(v); // exact
    const int msb = findMSB(v);
    const uint s = uint(msb - 23);
    uint m = v >> s;
    const uint rest = v & ((1u << s) - 1u), half_ulp = 1u << (s - 1u);
    if (rest > half_ulp || (rest == half_ulp && (m & 1u) != 0u)) m += 1u;
    // m is 2^23 .. 2^24: at 2^24 the mantissa's carry moves to the exponent.
    return uintBitsToFloat((uint(127 + msb) << 23) + (m - 0x800000u));
}

// ---- IEEE binary64 arithmetic in integers ----------------------------------
//
// Where a C reference computes a per-sample statistic in double, its twin
// computes the same roundings with these: a value is m * 2^e with m an
// integer of 53 significant bits (2^52 <= m < 2^53), or zero (m = 0).
// Only what the twins need: non-negative finite values far from overflow
// and underflow, round to nearest with ties to even, as x86-64's SSE2 does
// (and as every IEEE 754 double does).  Float (binary32) values are the
// same numbers rounded to 24 bits first.

struct SDouble {
    uvec2 m;
    int e;
};

const int SD_ZERO_EXP = -100000;

SDouble sd_zero()
{
    return SDouble(uvec2(0u), SD_ZERO_EXP);
}

bool sd_is_zero(SDouble a)
{
    return a.m == uvec2(0u);
}

// v * 2^e rounded to `bits` significant bits (24 for a float, 53 for a
// double), ties to even, as a normalised SDouble.  `sticky`: v stands for a
// value a little above it (nonzero bits below v's lowest); it only matters
// when v has more than `bits` bits.
SDouble sd_round64(uvec2 v, int e, bool sticky, uint bits)
{
    const int len = u64_bitlen(v);
    if (len == 0) return sd_zero();
    uvec2 m = v;
    int ee = e;
    if (len > int(bits)) {
        const uint s = uint(len) - bits;
        const uvec2 half_m = u64_shr(v, s - 1u); // m and the guard bit
        m = u64_shr(half_m, 1u);
        ee += int(s);
        const bool rest = sticky || u64_shl(half_m, s - 1u) != v;
        if ((half_m.x & 1u) != 0u && (rest || (m.x & 1u) != 0u)) {
            m = u64_add(m, uvec2(1u, 0u));
            if (u64_bitlen(m) > int(bits)) {
                m = u64_shr(m, 1u);
                ee += 1;
            }
        }
    }
    const int len_m = u64_bitlen(m);
    return SDouble(u64_shl(m, uint(53 - len_m)), ee - (53 - len_m));
}

SDouble sd_from_u32(uint v)
{
    if (v == 0u) return sd_zero();
    const int b = findMSB(v);
    return SDouble(u64_shl(uvec2(v, 0u), uint(52 - b)), b - 52);
}

// A non-negative 64-bit integer rounded to `bits` bits: 53 for (double),
// 24 for (float).
SDouble sd_from_u64(uvec2 v, uint bits)
{
    return sd_round64(v, 0, false, bits);
}

// a * 2^k, exactly.
SDouble sd_ldexp(SDouble a, int k)
{
    return sd_is_zero(a) ? a : SDouble(a.m, a.e + k);
}

SDouble sd_mul(SDouble a, SDouble b)
{
    if (sd_is_zero(a) || sd_is_zero(b)) return sd_zero();
    // The product is in [2^104, 2^106): keep its top 54 or 55 bits (w >>
    // 51) and whether anything below them is set.
    const uvec4 w = u128_mul64(a.m, b.m);
    const uvec2 top = uvec2((w.y >> 19) | (w.z << 13), (w.z >> 19) | (w.w << 13));
    const bool low = w.x != 0u || (w.y & 0x7ffffu) != 0u;
    return sd_round64(top, a.e + b.e + 51, low, 53u);
}

// a / b, b not zero: long division of the mantissas in three 19-bit digits
// (floor(a.m * 2^57 / b.m), 57 or 58 bits), each digit estimated in float
// and then made exact by its remainder (kept in [0, b.m); while a digit is
// off by a few units the remainder fits 64 bits), then rounded.  Float
// only guesses: the result does not depend on its precision.
SDouble sd_div(SDouble a, SDouble b)
{
    if (sd_is_zero(a)) return a;
    const float inv = 524288.0 / (float(b.m.y) * 4294967296.0 + float(b.m.x)); // 2^19 / b.m
    uvec2 r = a.m, q = uvec2(0u);
    for (int k = 0; k < 3; k++) {
        uint digit = uint(max((float(r.y) * 4294967296.0 + float(r.x)) * inv, 0.0));
        uvec2 rem = u64_sub(u64_shl(r, 19u), u64_mul_lo(b.m, digit));
        for (int n = 0; n < 64 && i64_is_negative(rem); n++) {
            digit--;
            rem = u64_add(rem, b.m);
        }
        for (int n = 0; n < 64 && !u64_lt(rem, b.m); n++) {
            digit++;
            rem = u64_sub(rem, b.m);
        }
        q = u64_add(u64_shl(q, 19u), uvec2(digit, 0u));
        r = rem;
    }
    return sd_round64(q, a.e - b.e - 57, r != uvec2(0u), 53u);
}

bool sd_lt(SDouble a, SDouble b)
{
    return a.e < b.e || (a.e == b.e && u64_lt(a.m, b.m));
}

// The integer part of a non-negative value below 2^64.
uvec2 sd_trunc_u64(SDouble a)
{
    if (sd_is_zero(a)) return uvec2(0u);
    if (a.e >= 0) return u64_shl(a.m, uint(a.e));
    return -a.e >= 64 ? uvec2(0u) : u64_shr(a.m, uint(-a.e));
}

#ifdef QUALE_FLOAT64
// (Shaders for devices with shaderFloat64 define QUALE_FLOAT64.)  A
// normal or zero SDouble as the device's double: its bits, so exact.
double sd_to_double(SDouble a)
{
    if (sd_is_zero(a)) return 0.0lf;
    return packDouble2x32(uvec2(a.m.x, (a.m.y & 0xfffffu) | (uint(a.e + 1075) << 20)));
}
#endif
