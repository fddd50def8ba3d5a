#version 450
// float_psnr's Vulkan twin: the noise sum of src/metrics/float_psnr.c as an
// exact integer in units of 2^-2(bitdepth - 8), as the CUDA twin computes
// it (src/cuda/float_psnr.cu):
//   - up to 12 bits (picture_float_sums_exact) the integer SSE, which the
//     C reference sums too;
//   - at 16 bits libvmaf's float squares, (float)a / s - (float)b / s
//     squared in float, times s^2: an integer, whose sum is the C's double
//     sum while that stays below 2^53 units.
// Workgroup x sums rows x * rows_per_group ... of the luma and writes one
// partial; the host adds them (integers: any order gives the same sum).
#extension GL_GOOGLE_include_directive : require
#define LUMA_SUMS
#include "gpu/vulkan/common.glsl"
#include "metrics/common/vulkan/picture_float.glsl"

void main()
{
    const uint bps = pc.bytes_per_sample;
    const uint y0 = gl_WorkGroupID.x * pc.rows_per_group;
    uvec2 sum = uvec2(0u);
    for (uint y = y0; y < y0 + pc.rows_per_group && y < pc.height; y++) {
        const uint ref_row = pc.ref_offset + y * pc.stride;
        const uint dist_row = pc.dist_offset + y * pc.stride;
        for (uint x = gl_LocalInvocationID.x; x < pc.width; x += LUMA_SUMS_GROUP) {
            const uint a = SAMPLE(ring_words, ref_row + x * bps, bps);
            const uint b = SAMPLE(frame_words, dist_row + x * bps, bps);
            sum = u64_add(sum, uvec2(luma_sums_square(a, b), 0u));
        }
    }
    sum = luma_sums_group(sum);
    if (gl_LocalInvocationID.x == 0u) partials[pc.out_offset + gl_WorkGroupID.x] = sum;
}
