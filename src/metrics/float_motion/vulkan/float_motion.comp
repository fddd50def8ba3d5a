#version 450
// float_motion's Vulkan twin: the SADs of src/metrics/float_motion.c, bit
// for bit, with the CUDA twin's decomposition (src/cuda/float_motion.cu);
// the host adds the rows' float sums in row order.
//
// Frame i >= 1 reads the reference luma of frames i - 1 (prev), i (cur)
// and, from i = 2 on, i - 2 (prev2) where the backend's ring keeps them,
// and blurs each again.  Workgroup b computes rows b * ROWS ... in segments
// of SEGMENT columns; per segment:
//   1. the vertical pass of the blur at the segment's columns and `radius`
//      mirrored or neighbouring columns each side, every picture, into
//      shared memory;
//   2. the horizontal pass at each column of the segment and |prev - cur|
//      (and |prev - prev2|), into shared memory;
//   3. one invocation per row and SAD adds the segment's values to the
//      row's float sum, in column order (a sequential float sum in the C
//      reference, whose value depends on its order).
// Then those invocations write SAD(prev, cur) = score[i] and SAD(prev,
// prev2) = score[i - 1] of their rows (|a - b| = |b - a| exactly).  The C
// reference adds fabs() of each float difference through double into a
// float: the sum of two floats rounded to double and then to float is
// their float sum (53 >= 2 * 24 + 2 bits), so this adds in float.  The
// blur's taps are summed from 0.0 in the C's order, vertical pass first,
// `precise` (no contraction).
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "metrics/common/vulkan/picture_float.glsl"

#define GROUP 256
#define ROWS 2
#define SEGMENT 256
#define MAX_RADIUS 2
#define VW (SEGMENT + 2 * MAX_RADIUS)

layout(local_size_x = GROUP) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) writeonly buffer RowSums { float row_sums[]; };

layout(push_constant) uniform Push {
    uint pic_offset[3]; // bytes, in the ring: prev, cur, prev2
    uint stride;
    int width;
    int height;
    int taps;           // 5, or 3 (motion_filter_size 3)
    int pictures;       // 2, or 3 with prev2
    uint bytes_per_sample;
    float inv_scaler;   // 2^-(bitdepth - 8)
    float weight[5]; // the blur's taps
    uint out_offset;    // index of this slot's first row sum
} pc;

shared float v[3][ROWS][VW];        // vertical passes
shared float diffs[2][ROWS][SEGMENT]; // |prev - cur|, |prev - prev2|

int mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

// The vertical pass of picture p at column x (inside) of row y.
float vertical(int p, int x, int y)
{
    const int r = pc.taps / 2;
    const uint bps = pc.bytes_per_sample;
    precise float acc = 0.0;
    for (int k = 0; k < pc.taps; k++) {
        const uint byte = pc.pic_offset[p] + uint(mirror(y - r + k, pc.height)) * pc.stride + uint(x) * bps;
        const float s = picture_float(SAMPLE(ring_words, byte, bps), pc.inv_scaler, -128.0);
        acc += pc.weight[k] * s;
    }
    return acc;
}

// The horizontal pass at column x0 + i of the segment.
float horizontal(int p, int row, int i)
{
    precise float acc = 0.0;
    for (int k = 0; k < pc.taps; k++) acc += pc.weight[k] * v[p][row][i + k];
    return acc;
}

void main()
{
    const int r = pc.taps / 2, P = pc.pictures, sads = P - 1;
    const int y0 = int(gl_WorkGroupID.x) * ROWS;
    const int t = int(gl_LocalInvocationID.x);
    // invocation t < 2 ROWS keeps the sum of row t / 2, SAD t % 2
    const int sum_row = t / 2, sum_sad = t % 2;
    const bool summer = t < 2 * ROWS && y0 + sum_row < pc.height && sum_sad < sads;
    precise float acc = 0.0;

    for (int x0 = 0; x0 < pc.width; x0 += SEGMENT) {
        const int n = min(pc.width - x0, SEGMENT), cols = n + 2 * r;
        for (int e = t; e < P * ROWS * cols; e += GROUP) {
            const int p = e / (ROWS * cols), row = e / cols % ROWS, i = e % cols;
            if (y0 + row < pc.height) v[p][row][i] = vertical(p, mirror(x0 - r + i, pc.width), y0 + row);
        }
        barrier();
        for (int e = t; e < ROWS * n; e += GROUP) {
            const int row = e / n, i = e % n;
            if (y0 + row >= pc.height) continue;
            const float prev = horizontal(0, row, i);
            const float cur = horizontal(1, row, i);
            precise float d = prev - cur;
            diffs[0][row][i] = abs(d);
            if (sads > 1) {
                const float prev2 = horizontal(2, row, i);
                precise float d2 = prev - prev2;
                diffs[1][row][i] = abs(d2);
            }
        }
        barrier();
        // the next segment's vertical pass writes only v; its horizontal
        // pass, which writes diffs, comes after a barrier
        if (summer)
            for (int i = 0; i < n; i++) acc += diffs[sum_sad][sum_row][i];
    }
    if (summer) row_sums[pc.out_offset + 2u * uint(y0 + sum_row) + uint(sum_sad)] = acc;
}
