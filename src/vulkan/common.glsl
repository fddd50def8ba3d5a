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
