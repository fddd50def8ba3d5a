#version 450
// float_ansnr's Vulkan twin: the rows' float sums of
// src/metrics/float_ansnr.c, bit for bit, as the CUDA twin computes them
// (src/cuda/float_ansnr.cu); the host adds the rows in float in row order.
//
// Every value is a float formed by the C reference's operations in its
// order (`precise`: no contraction):
//   - samples converted as picture_float_row() with offset -128;
//   - each filtered sample a float sum over the kernel's rows (from 0) of
//     float sums along the row (from 0) of weight * sample, libvmaf's
//     mirror at the edges (-i reads i, n - 1 + i reads n - i);
//   - per row, sig_row = sum of r * r and noise_row = sum of (r - d) *
//     (r - d), each a float sum from x = 0 to w - 1: sequential in the C
//     reference, so one invocation adds each in that order (the noise in
//     another subgroup, beside it).
// Workgroup y computes row y in passes of CHUNK columns: the pass's
// converted source samples (3 reference rows, 5 distorted rows, mirrored
// columns) are staged in shared memory, then every invocation filters
// columns into the pass's squares, then two invocations add them to the
// row's sums.  It writes sig_row at row_sums[y], noise_row at
// row_sums[h + y] (from out_offset).
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "metrics/common/vulkan/picture_float.glsl"

#define GROUP 128u
#define CHUNK 256
#define PAD 2 // half the 5-tap filter
#define PITCH (CHUNK + 2 * PAD)

layout(local_size_x = GROUP) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) writeonly buffer RowSums { float row_sums[]; };

layout(push_constant) uniform Push {
    uint ref_offset;  // bytes, in the ring
    uint dist_offset; // bytes, in frames
    uint stride;
    int width;
    int height;
    uint bytes_per_sample;
    float inv_scaler; // 2^-(bitdepth - 8)
    uint out_offset;  // index of this slot's first row sum
    // the distorted filter's distinct weights (float_ansnr.h's
    // ANSNR_DIS_WEIGHT of 2, 7, 12, 31, 52, 127), as the C rounds them
    float dis_weight[6];
} pc;

// The 5 x 5 filter's weights, row-major, as indices into dis_weight.
const int dis_index[25] = int[25](0, 1, 2, 1, 0,
                                  1, 3, 4, 3, 1,
                                  2, 4, 5, 4, 2,
                                  1, 3, 4, 3, 1,
                                  0, 1, 2, 1, 0);
// The 3 x 3 filter's: [1 2 1]^T [1 2 1] / 16, exact.
const float ref_weight[9] = float[9](0.0625, 0.125, 0.0625,
                                     0.125, 0.25, 0.125,
                                     0.0625, 0.125, 0.0625);

shared float sh_ref[3][PITCH];
shared float sh_dis[5][PITCH];
shared float sh_sig[CHUNK];
shared float sh_noise[CHUNK];

int mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 1 : i;
}

float load(bool ref, uint row, int x)
{
    const uint bps = pc.bytes_per_sample;
    const uint byte = row + uint(x) * bps;
    const uint d = ref ? SAMPLE(ring_words, byte, bps) : SAMPLE(frame_words, byte, bps);
    return picture_float(d, pc.inv_scaler, -128.0);
}

// float_ansnr.c's filter_row() at column x0 + i of the staged rows.
float filter_ref(int i)
{
    precise float out_v = 0.0;
    for (int r = 0; r < 3; r++) {
        precise float inner = 0.0;
        for (int j = 0; j < 3; j++) inner += ref_weight[r * 3 + j] * sh_ref[r][i + PAD - 1 + j];
        out_v += inner;
    }
    return out_v;
}

float filter_dis(int i)
{
    precise float out_v = 0.0;
    for (int r = 0; r < 5; r++) {
        precise float inner = 0.0;
        for (int j = 0; j < 5; j++) inner += pc.dis_weight[dis_index[r * 5 + j]] * sh_dis[r][i + j];
        out_v += inner;
    }
    return out_v;
}

void main()
{
    const int y = int(gl_WorkGroupID.x);
    const int w = pc.width, h = pc.height;
    const uint t = gl_LocalInvocationID.x;
    uint ref_row[3], dis_row[5];
    for (int i = 0; i < 3; i++) ref_row[i] = pc.ref_offset + uint(mirror(y - 1 + i, h)) * pc.stride;
    for (int i = 0; i < 5; i++) dis_row[i] = pc.dist_offset + uint(mirror(y - 2 + i, h)) * pc.stride;

    precise float sig_row = 0.0, noise_row = 0.0;
    for (int x0 = 0; x0 < w; x0 += CHUNK) {
        const int n = min(w - x0, CHUNK);
        // stage (the previous pass's sums read only sh_sig and sh_noise)
        for (int i = int(t); i < n + 2 * PAD; i += int(GROUP)) {
            const int c = mirror(x0 - PAD + i, w);
            for (int r = 0; r < 3; r++) sh_ref[r][i] = load(true, ref_row[r], c);
            for (int r = 0; r < 5; r++) sh_dis[r][i] = load(false, dis_row[r], c);
        }
        barrier();
        // fill
        for (int i = int(t); i < n; i += int(GROUP)) {
            precise float r = filter_ref(i);
            precise float d = filter_dis(i);
            precise float e = r - d;
            precise float sig = r * r;
            precise float noise = e * e;
            sh_sig[i] = sig;
            sh_noise[i] = noise;
        }
        barrier();
        // sums, in column order
        if (t == 0u) {
            for (int i = 0; i < n; i++) sig_row += sh_sig[i];
        } else if (t == GROUP / 2u) {
            for (int i = 0; i < n; i++) noise_row += sh_noise[i];
        }
    }
    if (t == 0u)
        row_sums[pc.out_offset + uint(y)] = sig_row;
    else if (t == GROUP / 2u)
        row_sums[pc.out_offset + uint(h + y)] = noise_row;
}
