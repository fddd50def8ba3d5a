#version 450
// Integer VIF's Vulkan twin, the step to the next scale: the low-pass
// filter of scale s (1..3) over both pictures of scale s - 1, kept at the
// even rows and columns, exactly as vif_decimate() (integer_vif.c): the
// vertical pass (sum + 2^(shift - 1)) >> shift (shift: the bit depth from
// the frame, 16 after), the horizontal pass (sum + 2^15) >> 16, 16 bits
// kept, rows and columns mirrored (-1 reads 1, w reads w - 2).  Unsigned
// 32-bit sums that never wrap, so the order of the taps does not matter.
//
// Workgroup (x, y) makes output row y, columns [x * 128, (x + 1) * 128):
// the vertical pass of the source columns they read goes to shared memory,
// then each invocation filters one output horizontally.  The output is one
// 32-bit word per sample in Scaled.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define SEGMENT 128
#define MAX_HALF 4
layout(local_size_x = SEGMENT) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) buffer Scaled { uint scaled_words[]; };

layout(push_constant) uniform Push {
    uint ref_offset; // the source: bytes in the ring (scale 0), or words in Scaled
    uint dis_offset; // bytes in Frames (scale 0), or words in Scaled
    uint stride;     // bytes or words
    int width;       // of the source
    int height;
    uint bytes_per_sample; // 1 or 2 from the frame, 0 from Scaled
    uint shift;
    uint out_ref; // words in Scaled
    uint out_dis;
    uint out_stride; // words
    int out_width;
    int out_height;
    uint taps;     // the filter of the scale made (integer_vif.h)
    uint coeff[9];
} pc;

shared uint low_ref[2 * SEGMENT + 2 * MAX_HALF];
shared uint low_dis[2 * SEGMENT + 2 * MAX_HALF];

int mirror(int i, int size)
{
    if (i < 0) return -i;
    if (i >= size) return 2 * (size - 1) - i;
    return i;
}

uint load_ref(int row, int col)
{
    if (pc.bytes_per_sample == 0u) return scaled_words[pc.ref_offset + uint(row) * pc.stride + uint(col)];
    return SAMPLE(ring_words, pc.ref_offset + uint(row) * pc.stride + uint(col) * pc.bytes_per_sample,
                  pc.bytes_per_sample);
}

uint load_dis(int row, int col)
{
    if (pc.bytes_per_sample == 0u) return scaled_words[pc.dis_offset + uint(row) * pc.stride + uint(col)];
    return SAMPLE(frame_words, pc.dis_offset + uint(row) * pc.stride + uint(col) * pc.bytes_per_sample,
                  pc.bytes_per_sample);
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint fw = pc.taps;
    const int half_fw = int(fw / 2u);
    const int y = int(gl_WorkGroupID.y);
    const int x0 = int(gl_WorkGroupID.x) * SEGMENT;
    const int n = min(SEGMENT, pc.out_width - x0);
    // Source columns 2 x0 - half .. 2 (x0 + n - 1) + half.
    const int columns = 2 * n - 1 + 2 * half_fw;
    const uint round_v = 1u << (pc.shift - 1u);
    for (int i = int(lid); i < columns; i += SEGMENT) {
        const int col = mirror(2 * x0 - half_fw + i, pc.width);
        uint sum_ref = 0u, sum_dis = 0u;
        for (uint k = 0u; k < fw; k++) {
            const int row = mirror(2 * y - half_fw + int(k), pc.height);
            const uint c = pc.coeff[k];
            sum_ref += c * load_ref(row, col);
            sum_dis += c * load_dis(row, col);
        }
        low_ref[i] = ((sum_ref + round_v) >> pc.shift) & 0xffffu;
        low_dis[i] = ((sum_dis + round_v) >> pc.shift) & 0xffffu;
    }
    barrier();
    if (int(lid) < n) {
        uint sum_ref = 0u, sum_dis = 0u;
        for (uint k = 0u; k < fw; k++) {
            const uint i = 2u * lid + k, c = pc.coeff[k];
            sum_ref += c * low_ref[i];
            sum_dis += c * low_dis[i];
        }
        const uint out_index = uint(y) * pc.out_stride + uint(x0) + lid;
        scaled_words[pc.out_ref + out_index] = ((sum_ref + 32768u) >> 16) & 0xffffu;
        scaled_words[pc.out_dis + out_index] = ((sum_dis + 32768u) >> 16) & 0xffffu;
    }
}
