#version 450
// Float ADM's Vulkan twin, one level of the DWT: the Daubechies-2 analysis
// of both pictures as float_adm.c's dwt_row() (and src/cuda/float_adm.cu's
// dwt kernel) makes it: at band sample (j, y), the vertical pass of the
// source columns 2j - 1 .. 2j + 2 over rows 2y - 1 .. 2y + 2 (low and
// high), then the horizontal pass over those four columns: a = lo * lo,
// v = hi * lo, h = lo * hi, d = hi * hi (horizontal filter first), each
// sum's taps added in order from 0.0, every float `precise`.  Indices
// reflect as -1 -> 1, n -> n - 1, n + 1 -> n - 2.
//
// Workgroup (x, y) makes band row y, columns [x * SEGMENT, (x + 1) *
// SEGMENT) of the reference (y < the band height; after it, row y - height
// of the distorted picture): the vertical pass of the source columns they
// read goes to shared memory, then each invocation makes its sample of the
// bands (only a where the level is not scored: a skipped scale 0).
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "float_adm.glsl"

#define SEGMENT 128
layout(local_size_x = SEGMENT) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
// The previous level's bands (levels 1..3), and this level's.
layout(std430, binding = 2) readonly buffer Source { float source[]; };
layout(std430, binding = 3) writeonly buffer Bands { float bands[]; };

layout(push_constant) uniform Push {
    vec4 dwt_lo;           // FLOAT_ADM_DWT_LO, the C reference's floats
    vec4 dwt_hi;           // FLOAT_ADM_DWT_HI
    uint ref_offset;       // level 0: bytes in the ring; else floats in Source
    uint dis_offset;       // level 0: bytes in Frames; else floats in Source
    uint stride;           // bytes or floats
    int width;             // of the level's input
    int height;
    uint bytes_per_sample; // 1 or 2 at level 0, 0 for Source's floats
    float inv_scaler;      // 2^-(bitdepth - 8)
    uint details;          // 0: band a only
    uint plane_words;      // of this level's planes
    int out_width;         // this level's bands
    int out_height;
} pc;

shared float lo[2 * SEGMENT + 2];
shared float hi[2 * SEGMENT + 2];

int dwt_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 1 : i;
}

// Sample (x, y) of the level's input: the frame's on the 8-bit scale less
// 128 as picture_float_row() makes it (the division by 2^(bitdepth - 8) is
// exact, so it is the product with its inverse), or the previous level's
// band a.
float load_sample(bool ref, int x, int y)
{
    const uint offset = ref ? pc.ref_offset : pc.dis_offset;
    if (pc.bytes_per_sample == 0u) return source[offset + uint(y) * pc.stride + uint(x)];
    const uint byte = offset + uint(y) * pc.stride + uint(x) * pc.bytes_per_sample;
    const uint v = ref ? SAMPLE(ring_words, byte, pc.bytes_per_sample)
                       : SAMPLE(frame_words, byte, pc.bytes_per_sample);
    precise float value = float(v) * pc.inv_scaler + -128.0;
    return value;
}

// sum over k of c[k] * x[k], from 0.0, in order.
float taps4(vec4 c, float x0, float x1, float x2, float x3)
{
    precise float acc = 0.0;
    acc += c.x * x0;
    acc += c.y * x1;
    acc += c.z * x2;
    acc += c.w * x3;
    return acc;
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const bool ref = int(gl_WorkGroupID.y) < pc.out_height;
    const int y = ref ? int(gl_WorkGroupID.y) : int(gl_WorkGroupID.y) - pc.out_height;
    const int x0 = int(gl_WorkGroupID.x) * SEGMENT;
    const int n = min(SEGMENT, pc.out_width - x0);

    // Source columns 2 x0 - 1 .. 2 (x0 + n - 1) + 2.
    const int r0 = dwt_mirror(2 * y - 1, pc.height), r1 = dwt_mirror(2 * y, pc.height);
    const int r2 = dwt_mirror(2 * y + 1, pc.height), r3 = dwt_mirror(2 * y + 2, pc.height);
    for (int i = int(lid); i < 2 * n + 2; i += SEGMENT) {
        const int x = dwt_mirror(2 * x0 - 1 + i, pc.width);
        const float s0 = load_sample(ref, x, r0), s1 = load_sample(ref, x, r1);
        const float s2 = load_sample(ref, x, r2), s3 = load_sample(ref, x, r3);
        lo[i] = taps4(pc.dwt_lo, s0, s1, s2, s3);
        hi[i] = taps4(pc.dwt_hi, s0, s1, s2, s3);
    }
    barrier();
    if (int(lid) >= n) return;
    const uint i = 2u * lid;
    const uint at = uint(y) * uint(pc.out_width) + uint(x0) + lid;
    const uint picture = ref ? 0u : 1u;
    bands[(BAND_A_REF + picture) * pc.plane_words + at] =
        taps4(pc.dwt_lo, lo[i], lo[i + 1u], lo[i + 2u], lo[i + 3u]);
    if (pc.details == 0u) return;
    const uint details = ref ? BAND_REF : BAND_DIS;
    bands[(details + 0u) * pc.plane_words + at] = taps4(pc.dwt_lo, hi[i], hi[i + 1u], hi[i + 2u], hi[i + 3u]);
    bands[(details + 1u) * pc.plane_words + at] = taps4(pc.dwt_hi, lo[i], lo[i + 1u], lo[i + 2u], lo[i + 3u]);
    bands[(details + 2u) * pc.plane_words + at] = taps4(pc.dwt_hi, hi[i], hi[i + 1u], hi[i + 2u], hi[i + 3u]);
}
