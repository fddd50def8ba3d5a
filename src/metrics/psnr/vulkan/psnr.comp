#version 450
// PSNR's Vulkan twin: the sum of squared errors of each plane, exactly, as
// 64-bit integers.  Workgroup (x, p) sums rows x * rows_per_group ... of
// plane p and writes one partial; the host adds a plane's partials.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) writeonly buffer Partials { uvec2 partials[]; };

layout(push_constant) uniform Push {
    uint ref_offset[3]; // bytes; plane 0 is in the ring, planes 1-2 in frames
    uint dist_offset[3];
    uint stride[3];
    uint width[3];
    uint height[3];
    uint rows_per_group;
    uint bytes_per_sample;
    uint out_offset; // index of this slot's first partial
} pc;

shared uvec2 sums[256];

void main()
{
    const uint p = gl_WorkGroupID.y;
    const uint y0 = gl_WorkGroupID.x * pc.rows_per_group;
    const uint bps = pc.bytes_per_sample;
    uvec2 sse = uvec2(0u);
    for (uint y = y0; y < y0 + pc.rows_per_group && y < pc.height[p]; y++) {
        const uint ref_row = pc.ref_offset[p] + y * pc.stride[p];
        const uint dist_row = pc.dist_offset[p] + y * pc.stride[p];
        for (uint x = gl_LocalInvocationID.x; x < pc.width[p]; x += 256u) {
            const uint a = p == 0u ? SAMPLE(ring_words, ref_row + x * bps, bps)
                                   : SAMPLE(frame_words, ref_row + x * bps, bps);
            const uint b = SAMPLE(frame_words, dist_row + x * bps, bps);
            const uint e = a > b ? a - b : b - a;
            sse = u64_add(sse, uvec2(e * e, 0u)); // e * e < 2^32 for 16-bit samples
        }
    }
    sums[gl_LocalInvocationID.x] = sse;
    barrier();
    for (uint half_size = 128u; half_size > 0u; half_size >>= 1) {
        if (gl_LocalInvocationID.x < half_size)
            sums[gl_LocalInvocationID.x] = u64_add(sums[gl_LocalInvocationID.x],
                                                   sums[gl_LocalInvocationID.x + half_size]);
        barrier();
    }
    if (gl_LocalInvocationID.x == 0u)
        partials[pc.out_offset + p * gl_NumWorkGroups.x + gl_WorkGroupID.x] = sums[0];
}
