#version 450
// float_moment's Vulkan twin: the sums of src/metrics/float_moment.c as
// exact integers, as the CUDA twin computes them (src/cuda/float_moment.cu):
//   - first: the sum of the samples (the C's double sum of the converted
//     samples is exact at every bit depth: it is this sum over scaler);
//   - second: up to 12 bits (picture_float_sums_exact) the sum of the
//     squared samples; at 16 bits libvmaf's float squares ((float)d / s
//     squared in float) times s^2, integers, whose sum is the C's double
//     sum while that stays below 2^53 units.
// Workgroup (x, p) sums rows x * rows_per_group ... of picture p (0 the
// reference, in the ring; 1 the distorted, in frames) and writes its two
// partials; the host adds them (integers: any order gives the same sums).
#extension GL_GOOGLE_include_directive : require
#define LUMA_SUMS
#include "gpu/vulkan/common.glsl"
#include "metrics/common/vulkan/picture_float.glsl"

void main()
{
    const uint p = gl_WorkGroupID.y;
    const uint bps = pc.bytes_per_sample;
    const uint y0 = gl_WorkGroupID.x * pc.rows_per_group;
    uvec2 first = uvec2(0u), second = uvec2(0u);
    for (uint y = y0; y < y0 + pc.rows_per_group && y < pc.height; y++) {
        const uint row = (p == 0u ? pc.ref_offset : pc.dist_offset) + y * pc.stride;
        for (uint x = gl_LocalInvocationID.x; x < pc.width; x += LUMA_SUMS_GROUP) {
            const uint d = p == 0u ? SAMPLE(ring_words, row + x * bps, bps)
                                   : SAMPLE(frame_words, row + x * bps, bps);
            first = u64_add(first, uvec2(d, 0u));
            second = u64_add(second, uvec2(luma_sums_square(d, 0u), 0u));
        }
    }
    first = luma_sums_group(first);
    second = luma_sums_group(second);
    // [picture][first, second][group], as the host reads them
    const uint groups = gl_NumWorkGroups.x;
    if (gl_LocalInvocationID.x == 0u) {
        partials[pc.out_offset + (2u * p) * groups + gl_WorkGroupID.x] = first;
        partials[pc.out_offset + (2u * p + 1u) * groups + gl_WorkGroupID.x] = second;
    }
}
