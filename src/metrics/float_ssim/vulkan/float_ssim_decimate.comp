#version 450
// The decimations of float_ssim and float_ms_ssim on Vulkan, as
// src/metrics/iqa.c's iqa_decimate_row() of the rows their C references
// mirror and pad (and as the CUDA twins' fssim_decimate, fms_decimate):
// sample (x, y) of the smaller pictures is the taps x taps kernel centred
// on sample (x factor, y factor) of the larger ones, rows and columns
// mirrored at the borders (-1 reads 0, n reads n - 1), float products in
// a double sum, row by row, rounded to float.  float_ssim's automatic
// downscale is a box (every weight 1 / factor^2, factor taps); MS-SSIM's
// is libvmaf's 9 x 9 low-pass at every other sample.
//
// Both kernels are symmetric (w[v][u] = w[taps-1-v][u] = w[u][v]), so the
// push constants carry one weight per orbit: weight[index(v, u)] (the host
// checks the symmetry of the table it sends).  One invocation per output
// sample, both pictures; the pictures are the frame's luma (converted as
// picture_float_row() does, offset 0) or float planes.
#extension GL_GOOGLE_include_directive : require
#define PICTURE_FLOAT_PAIR
#include "gpu/vulkan/common.glsl"
#include "metrics/common/vulkan/picture_float.glsl"

#define GROUP 64u
#define MAX_ORBITS 15 // taps <= 10: five distances from the edge, paired

layout(local_size_x = GROUP) in;


layout(push_constant) uniform Push {
    uint ref_offset;  // luma: bytes in the ring; float plane: index in planes
    uint dist_offset; // luma: bytes in frames; float plane: index in planes
    uint stride;      // luma: bytes; float plane: floats
    int width;        // of the larger pictures
    int height;
    uint bytes_per_sample; // 1 or 2 for luma, 0 for float planes
    float inv_scaler;      // 2^-(bitdepth - 8)
    uint dst_ref, dst_dist; // indices in planes of the smaller pictures
    uint dst_width, dst_height; // dense rows
    int taps, factor;
    float weight[MAX_ORBITS];
} pc;

int mirror(int i, int n)
{
    return i < 0 ? -1 - i : i >= n ? 2 * n - 1 - i : i;
}

// The orbit of tap (v, u) under the kernel's symmetries.
int orbit(int v, int u)
{
    const int a = min(v, pc.taps - 1 - v), b = min(u, pc.taps - 1 - u);
    const int lo = min(a, b), hi = max(a, b);
    return hi * (hi + 1) / 2 + lo;
}

float sample_at(bool ref, int x, int y)
{
    return picture_float_pair(ref, pc.ref_offset, pc.dist_offset, pc.stride, pc.bytes_per_sample,
                              pc.inv_scaler, x, y);
}

void main()
{
    const uint x = gl_GlobalInvocationID.x, y = gl_WorkGroupID.y;
    if (x >= pc.dst_width) return;
    const int centre = pc.taps / 2;
    precise double sr = 0.0, sd = 0.0;
    for (int v = 0; v < pc.taps; v++) {
        const int row = mirror(int(y) * pc.factor + v - centre, pc.height);
        for (int u = 0; u < pc.taps; u++) {
            const int col = mirror(int(x) * pc.factor + u - centre, pc.width);
            const float k = pc.weight[orbit(v, u)];
            precise float pr = sample_at(true, col, row) * k;
            precise float pd = sample_at(false, col, row) * k;
            sr += double(pr);
            sd += double(pd);
        }
    }
    const uint i = y * pc.dst_width + x;
    planes[pc.dst_ref + i] = float(sr);
    planes[pc.dst_dist + i] = float(sd);
}
