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
#define PICTURE_FLOAT_GROUP 256u
#include "common.glsl"
#include "picture_float.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) writeonly buffer Partials { uvec2 partials[]; };

layout(push_constant) uniform Push {
    uint ref_offset;  // bytes, in the ring
    uint dist_offset; // bytes, in frames
    uint stride;
    uint width;
    uint height;
    uint rows_per_group;
    uint bytes_per_sample;
    uint float_squares; // 0: exact e^2; 1: libvmaf's float squares
    float inv_scaler;   // 2^-(bitdepth - 8)
    float scaler_sq;    // 2^2(bitdepth - 8)
    uint out_offset;    // index of this slot's first partial
} pc;

void main()
{
    const uint bps = pc.bytes_per_sample;
    const uint y0 = gl_WorkGroupID.x * pc.rows_per_group;
    uvec2 sum = uvec2(0u);
    for (uint y = y0; y < y0 + pc.rows_per_group && y < pc.height; y++) {
        const uint ref_row = pc.ref_offset + y * pc.stride;
        const uint dist_row = pc.dist_offset + y * pc.stride;
        for (uint x = gl_LocalInvocationID.x; x < pc.width; x += 256u) {
            const uint a = SAMPLE(ring_words, ref_row + x * bps, bps);
            const uint b = SAMPLE(frame_words, dist_row + x * bps, bps);
            uint square;
            if (pc.float_squares == 0u) {
                const uint e = a > b ? a - b : b - a;
                square = e * e; // < 2^32 for 16-bit samples
            } else {
                precise float diff = picture_float(a, pc.inv_scaler, 0.0) -
                                     picture_float(b, pc.inv_scaler, 0.0);
                square = picture_float_square_units(diff, pc.scaler_sq);
            }
            sum = u64_add(sum, uvec2(square, 0u));
        }
    }
    sum = picture_float_group_sum(sum);
    if (gl_LocalInvocationID.x == 0u) partials[pc.out_offset + gl_WorkGroupID.x] = sum;
}
