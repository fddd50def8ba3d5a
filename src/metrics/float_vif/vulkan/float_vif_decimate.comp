#version 450
// Float VIF's Vulkan twin, the step to the next scale: both pictures of
// one scale blurred by the next scale's filter and kept at their even rows
// and columns, as float_vif.c's decimate() (and src/cuda/float_vif.cu's
// vdec and hdec kernels) make them: the vertical pass at row 2i, then the
// horizontal pass of those sums at column 2j, taps summed from the first,
// edges mirrored (-1 reads 1, n reads n - 2), every float `precise`.
//
// Workgroup (x, i) makes row i, columns [x * SEGMENT, (x + 1) * SEGMENT)
// of the next scale: the vertical pass of the columns they read goes to
// shared memory, then each invocation makes one sample of each picture.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"

#define SEGMENT 128
#define MAX_TAPS 65
#define MAX_HALF (MAX_TAPS / 2)
layout(local_size_x = SEGMENT) in;

layout(std430, binding = 2) buffer Scaled { float scaled[]; };

#include "float_vif.glsl"

layout(push_constant) uniform Push {
    VifSource src;         // the scale decimated
    int width;             // its size
    int height;
    uint filter_first;     // the next scale's filter in the table
    uint taps;
    uint out_ref;          // the next scale's pictures: floats in Scaled
    uint out_dis;
    uint out_stride;       // floats
    int out_width;
    int out_height;
} pc;

shared float filter_taps[MAX_TAPS];
shared float low_ref[2 * SEGMENT + 2 * MAX_HALF];
shared float low_dis[2 * SEGMENT + 2 * MAX_HALF];

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const int taps = int(pc.taps), radius = taps / 2;
    const int i = int(gl_WorkGroupID.y);
    const int x0 = int(gl_WorkGroupID.x) * SEGMENT;
    const int n = min(SEGMENT, pc.out_width - x0);
    for (uint k = lid; k < uint(taps); k += gl_WorkGroupSize.x)
        filter_taps[k] = table[pc.filter_first + k];
    barrier();

    // Source columns 2 x0 - radius .. 2 (x0 + n - 1) + radius.
    const int columns = 2 * n - 1 + 2 * radius;
    for (int c = int(lid); c < columns; c += SEGMENT) {
        const int x = vif_mirror(2 * x0 - radius + c, pc.width);
        precise float s1 = 0.0, s2 = 0.0;
        for (int k = 0; k < taps; k++) {
            const int y = vif_mirror(2 * i - radius + k, pc.height);
            s1 += filter_taps[k] * vif_load(pc.src, true, x, y);
            s2 += filter_taps[k] * vif_load(pc.src, false, x, y);
        }
        low_ref[c] = s1;
        low_dis[c] = s2;
    }
    barrier();
    if (int(lid) < n) {
        precise float s1 = 0.0, s2 = 0.0;
        for (int k = 0; k < taps; k++) {
            s1 += filter_taps[k] * low_ref[2 * int(lid) + k];
            s2 += filter_taps[k] * low_dis[2 * int(lid) + k];
        }
        const uint at = uint(i) * pc.out_stride + uint(x0) + lid;
        scaled[pc.out_ref + at] = s1;
        scaled[pc.out_dis + at] = s2;
    }
}
