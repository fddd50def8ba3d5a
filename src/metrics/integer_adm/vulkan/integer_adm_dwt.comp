#version 450
// Integer ADM's Vulkan twin, one level of the DWT: libvmaf's Daubechies-2
// analysis filters in Q15, vertically then horizontally, exactly as
// dwt_level0() and dwt_level123() (src/metrics/integer_adm.c) compute them.
//   Level 0, from the frame's samples: vertical sums in 32-bit unsigned
//   arithmetic (wrapping as libvmaf's), (sum + 2^(bd-1)) >> bd narrowed to
//   int16; horizontal sums in 32 bits, (sum + 2^15) >> 16 narrowed to int16.
//   Levels 1..3, from the previous level's approximation band: 64-bit sums
//   with the level's rounding shifts.
// Rows and columns reflect across the first sample (-1 reads 1) and the
// end (n reads n - 1, n + 1 reads n - 2).
//
// Workgroup (x, y) makes output row y, columns [x * 127, (x + 1) * 127) of
// the reference (y < the output height; after it, row y - height of the
// distorted picture): the vertical pass of the 2 * 127 + 2 source columns
// they read goes to shared memory (two a invocation), then each invocation
// makes one sample of the four bands a, h, v, d.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"

#define THREADS 128
#define SEGMENT 127
layout(local_size_x = THREADS) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
// The previous level's planes (levels 1..3), and this level's.
layout(std430, binding = 2) readonly buffer Source { int src_words[]; };
layout(std430, binding = 3) writeonly buffer Bands { int band_words[]; };

layout(push_constant) uniform Push {
    uint ref_offset;       // level 0: bytes in the ring; else words in Source
    uint dis_offset;       // level 0: bytes in Frames; else words in Source (both with
                           // the base of the frame's region of the level above)
    uint stride;           // bytes or words
    int width;             // of the source
    int height;
    uint bytes_per_sample; // 1 or 2 at level 0, 0 after
    uint bitdepth;
    uint scale;            // 0..3
    uint plane_words;      // of this level's planes
    uint out_stride;       // words
    int out_width;
    int out_height;
    uint out_base;         // words: where the frame's region of Bands starts
} pc;

shared int lo[2 * SEGMENT + 2];
shared int hi[2 * SEGMENT + 2];

int mirror(int k, int n)
{
    return k < 0 ? -k : k >= n ? 2 * n - k - 1 : k;
}

int narrow16(int v)
{
    return (v << 16) >> 16;
}

uint load_sample(bool ref, int row, int col)
{
    const uint byte = (ref ? pc.ref_offset : pc.dis_offset) + uint(row) * pc.stride +
                      uint(col) * pc.bytes_per_sample;
    return ref ? SAMPLE(ring_words, byte, pc.bytes_per_sample)
               : SAMPLE(frame_words, byte, pc.bytes_per_sample);
}

// 15826 t0 + 27411 t1 + 7345 t2 - 4240 t3 and 27411 t2 - 4240 t0 - 7345 t1
// - 15826 t3, in 64 bits.
uvec2 filter_lo64(int t0, int t1, int t2, int t3)
{
    return u64_add(u64_add(i64_mul(15826, t0), i64_mul(27411, t1)),
                   u64_add(i64_mul(7345, t2), i64_mul(-4240, t3)));
}

uvec2 filter_hi64(int t0, int t1, int t2, int t3)
{
    return u64_add(u64_add(i64_mul(27411, t2), i64_mul(-4240, t0)),
                   u64_add(i64_mul(-7345, t1), i64_mul(-15826, t3)));
}

int filter_lo32(int t0, int t1, int t2, int t3)
{
    return 15826 * t0 + 27411 * t1 + 7345 * t2 - 4240 * t3;
}

int filter_hi32(int t0, int t1, int t2, int t3)
{
    return 27411 * t2 - 4240 * t0 - 7345 * t1 - 15826 * t3;
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const bool ref = gl_WorkGroupID.y < uint(pc.out_height);
    const int i = int(gl_WorkGroupID.y) - (ref ? 0 : pc.out_height);
    const int j0 = int(gl_WorkGroupID.x) * SEGMENT;
    const int n = min(SEGMENT, pc.out_width - j0);
    const bool level0 = pc.bytes_per_sample != 0u;
    int rows[4];
    for (int k = 0; k < 4; k++) rows[k] = mirror(2 * i - 1 + k, pc.height);

    // Vertical pass of source columns 2 j0 - 1 .. 2 (j0 + n - 1) + 2.
    const int columns = 2 * n + 2;
    for (int c = int(lid); c < columns; c += THREADS) {
        const int col = mirror(2 * j0 - 1 + c, pc.width);
        if (level0) {
            const uint s0 = load_sample(ref, rows[0], col), s1 = load_sample(ref, rows[1], col);
            const uint s2 = load_sample(ref, rows[2], col), s3 = load_sample(ref, rows[3], col);
            const uint round_v = 1u << (pc.bitdepth - 1u);
            const uint offset = 46342u * round_v; // the low-pass taps' sum times the rounding
            const uint l = 15826u * s0 + 27411u * s1 + 7345u * s2 - 4240u * s3 - offset;
            const uint d = 27411u * s2 - 4240u * s0 - 7345u * s1 - 15826u * s3;
            lo[c] = narrow16(int(l + round_v) >> pc.bitdepth);
            hi[c] = narrow16(int(d + round_v) >> pc.bitdepth);
        } else {
            const uint base = ref ? pc.ref_offset : pc.dis_offset;
            const int t0 = src_words[base + uint(rows[0]) * pc.stride + uint(col)];
            const int t1 = src_words[base + uint(rows[1]) * pc.stride + uint(col)];
            const int t2 = src_words[base + uint(rows[2]) * pc.stride + uint(col)];
            const int t3 = src_words[base + uint(rows[3]) * pc.stride + uint(col)];
            const uint add = pc.scale == 1u ? 0u : 32768u, shift = pc.scale == 1u ? 0u : 16u;
            lo[c] = int(i64_sar(u64_add(filter_lo64(t0, t1, t2, t3), uvec2(add, 0u)), shift).x);
            hi[c] = int(i64_sar(u64_add(filter_hi64(t0, t1, t2, t3), uvec2(add, 0u)), shift).x);
        }
    }
    barrier();
    if (int(lid) >= n) return;

    const uint c = 2u * lid;
    int a, h, v, d;
    if (level0) {
        a = narrow16((filter_lo32(lo[c], lo[c + 1u], lo[c + 2u], lo[c + 3u]) + 32768) >> 16);
        v = narrow16((filter_hi32(lo[c], lo[c + 1u], lo[c + 2u], lo[c + 3u]) + 32768) >> 16);
        h = narrow16((filter_lo32(hi[c], hi[c + 1u], hi[c + 2u], hi[c + 3u]) + 32768) >> 16);
        d = narrow16((filter_hi32(hi[c], hi[c + 1u], hi[c + 2u], hi[c + 3u]) + 32768) >> 16);
    } else {
        const uvec2 add = uvec2(pc.scale == 2u ? 32768u : 16384u, 0u);
        const uint shift = pc.scale == 2u ? 16u : 15u;
        a = int(i64_sar(u64_add(filter_lo64(lo[c], lo[c + 1u], lo[c + 2u], lo[c + 3u]), add), shift).x);
        v = int(i64_sar(u64_add(filter_hi64(lo[c], lo[c + 1u], lo[c + 2u], lo[c + 3u]), add), shift).x);
        h = int(i64_sar(u64_add(filter_lo64(hi[c], hi[c + 1u], hi[c + 2u], hi[c + 3u]), add), shift).x);
        d = int(i64_sar(u64_add(filter_hi64(hi[c], hi[c + 1u], hi[c + 2u], hi[c + 3u]), add), shift).x);
    }
    // Planes 0..3: the reference's a, h, v, d; 4..7: the distorted's.
    const uint x = uint(i) * pc.out_stride + uint(j0) + lid;
    const uint first = pc.out_base + (ref ? 0u : 4u * pc.plane_words);
    band_words[first + x] = a;
    band_words[first + pc.plane_words + x] = h;
    band_words[first + 2u * pc.plane_words + x] = v;
    band_words[first + 3u * pc.plane_words + x] = d;
}
