#version 450
// SSIM on Vulkan, for float_ssim and float_ms_ssim (one dispatch a picture
// pair, a scale): libvmaf's IQA SSIM of src/metrics/iqa.c, every value
// formed by the same float and double operations in the same order as the
// C reference (`precise`: no contraction); only the sums of the
// per-position terms are added in another order (per invocation, then a
// fixed tree, then by the host in workgroup order), as in the CUDA twin
// (src/cuda/float_ssim.cu).
//
// Workgroup (sx, sy) takes the STRIP columns of positions from sx * STRIP
// and the rows_per_group rows of positions from sy * rows_per_group (a
// position is where the 11 x 11 window fits: (w - 10) x (h - 10) of them).
// It streams the input rows its windows cover, top to bottom: each row of
// both pictures (its STRIP + 10 columns) goes to shared memory, invocation
// c filters it horizontally at column c (mu1, mu2, ref^2, dist^2,
// ref*dist: float products, double sums in tap order, rounded to float)
// into its column of a ring of the last 11 such rows, and from the 11th row
// on filters that column vertically (likewise) into one position, takes
// its SSIM terms as iqa_ssim_terms() (iqa.h) does and adds l c s, l, c and
// s to its own double sums.  Only invocation c reads and writes column c
// of the ring.  Double-buffered input rows need one barrier a row.
//
// Pictures are the frame's luma (converted as picture_float_row() does,
// offset 0) or float planes (float_ssim's downscale, MS-SSIM's scales).
#extension GL_GOOGLE_include_directive : require
#define PICTURE_FLOAT_PAIR
#include "gpu/vulkan/common.glsl"
#include "metrics/common/vulkan/picture_float.glsl"
#include "gpu/vulkan/fp64.glsl"

#define STRIP 64
#define TAPS 11
#define IN_W (STRIP + TAPS - 1)

layout(local_size_x = STRIP) in;

layout(std430, binding = 3) writeonly buffer Partials { double partials[]; };

layout(push_constant) uniform Push {
    uint ref_offset;   // luma: bytes in the ring; float plane: index in planes
    uint dist_offset;  // luma: bytes in frames; float plane: index in planes
    uint stride;       // luma: bytes; float plane: floats
    int width;
    int height;
    uint bytes_per_sample; // 1 or 2 for luma, 0 for float planes
    float inv_scaler;      // 2^-(bitdepth - 8)
    int rows_per_group;    // of positions
    uint out_offset;       // this pair's first partial (4 per workgroup)
    float c1, c2, c3;      // IQA_SSIM_C1 .. C3
    float g[TAPS];         // IQA_GAUSSIAN_WINDOW
} pc;

shared float in_ref[2][IN_W];
shared float in_dist[2][IN_W];
// [slot][quantity][column], as float bits; at the end the invocations'
// sums, as double words
shared uint ring[TAPS * 5 * STRIP];

float sample_at(bool ref, int x, int y)
{
    return picture_float_pair(ref, pc.ref_offset, pc.dist_offset, pc.stride, pc.bytes_per_sample,
                              pc.inv_scaler, x, y);
}

uint ring_index(int slot, int q, int c)
{
    return uint((slot * 5 + q) * STRIP + c);
}

// The SSIM terms of one position: iqa_ssim_terms() of iqa.h.
void ssim_terms(float mu1, float mu2, float rr, float cc, float rc, out double l, out double c,
                out double s)
{
    precise float sigma1_sq = rr - mu1 * mu1;
    precise float sigma2_sq = cc - mu2 * mu2;
    // libvmaf's MAX(0.0, v): a NaN stays
    sigma1_sq = 0.0 > sigma1_sq ? 0.0 : sigma1_sq;
    sigma2_sq = 0.0 > sigma2_sq ? 0.0 : sigma2_sq;
    precise float sigma12 = rc - mu1 * mu2;
    precise float product = sigma1_sq * sigma2_sq;
    const float sigma1_sigma2 = f32_sqrt_rn(double(product));
    precise double l_num = 2.0lf * double(mu1) * double(mu2) + double(pc.c1);
    precise float l_den = mu1 * mu1 + mu2 * mu2 + pc.c1;
    precise double c_num = 2.0lf * double(sigma1_sigma2) + double(pc.c2);
    precise float c_den = sigma1_sq + sigma2_sq + pc.c2;
    // (correctly rounded, as C's double division, whatever the driver's)
    const double l_q = f64_div(l_num, double(l_den));
    const double c_q = f64_div(c_num, double(c_den));
    l = l_q;
    c = c_q;
    const float sigma12_clamped = sigma12 < 0.0 && sigma1_sigma2 <= 0.0 ? 0.0 : sigma12;
    precise float s_num = sigma12_clamped + pc.c3;
    precise float s_den = sigma1_sigma2 + pc.c3;
    s = double(f32_div(s_num, s_den));
}

void main()
{
    const int c = int(gl_LocalInvocationID.x);
    const int x0 = int(gl_WorkGroupID.x) * STRIP;
    const int y0 = int(gl_WorkGroupID.y) * pc.rows_per_group;
    const int out_w = pc.width - (TAPS - 1), out_h = pc.height - (TAPS - 1);
    const int last = min(y0 + pc.rows_per_group + TAPS - 1, pc.height); // input rows [y0, last)
    const bool inside = x0 + c < out_w;
    precise double sum_lcs = 0.0, sum_l = 0.0, sum_c = 0.0, sum_s = 0.0;

    for (int y = y0; y < last; y++) {
        const int buf = y & 1;
        // the row's STRIP + 10 columns; outside the picture (never used) 0
        for (int i = c; i < IN_W; i += STRIP) {
            const int x = x0 + i;
            in_ref[buf][i] = x < pc.width ? sample_at(true, x, y) : 0.0;
            in_dist[buf][i] = x < pc.width ? sample_at(false, x, y) : 0.0;
        }
        barrier(); // the row is there; the other buffer's readers are done
        if (!inside) continue;

        // iqa.c's gaussian_row() at column c of the five quantities
        precise double h0 = 0.0, h1 = 0.0, h2 = 0.0, h3 = 0.0, h4 = 0.0;
        for (int u = 0; u < TAPS; u++) {
            const float a = in_ref[buf][c + u], b = in_dist[buf][c + u], g = pc.g[u];
            precise float aa = a * a, bb = b * b, ab = a * b;
            precise float t0 = a * g, t1 = b * g, t2 = aa * g, t3 = bb * g, t4 = ab * g;
            h0 += double(t0);
            h1 += double(t1);
            h2 += double(t2);
            h3 += double(t3);
            h4 += double(t4);
        }
        const int slot = (y - y0) % TAPS;
        ring[ring_index(slot, 0, c)] = floatBitsToUint(float(h0));
        ring[ring_index(slot, 1, c)] = floatBitsToUint(float(h1));
        ring[ring_index(slot, 2, c)] = floatBitsToUint(float(h2));
        ring[ring_index(slot, 3, c)] = floatBitsToUint(float(h3));
        ring[ring_index(slot, 4, c)] = floatBitsToUint(float(h4));
        if (y - y0 < TAPS - 1) continue;

        // iqa.c's gaussian_column() for position row y - 10
        precise double v0 = 0.0, v1 = 0.0, v2 = 0.0, v3 = 0.0, v4 = 0.0;
        for (int v = 0; v < TAPS; v++) {
            const int r = (y - y0 - (TAPS - 1) + v) % TAPS;
            const float g = pc.g[v];
            precise float t0 = uintBitsToFloat(ring[ring_index(r, 0, c)]) * g;
            precise float t1 = uintBitsToFloat(ring[ring_index(r, 1, c)]) * g;
            precise float t2 = uintBitsToFloat(ring[ring_index(r, 2, c)]) * g;
            precise float t3 = uintBitsToFloat(ring[ring_index(r, 3, c)]) * g;
            precise float t4 = uintBitsToFloat(ring[ring_index(r, 4, c)]) * g;
            v0 += double(t0);
            v1 += double(t1);
            v2 += double(t2);
            v3 += double(t3);
            v4 += double(t4);
        }
        double l, cs, s;
        ssim_terms(float(v0), float(v1), float(v2), float(v3), float(v4), l, cs, s);
        // as iqa.c sums: l c s (left to right), l, c, s
        precise double lcs = l * cs * s;
        sum_lcs += lcs;
        sum_l += l;
        sum_c += cs;
        sum_s += s;
    }

    // the invocations' sums: a fixed tree over the ring's memory
    barrier();
    const uint base = uint(c) * 8u;
    uvec2 w;
    w = unpackDouble2x32(sum_lcs); ring[base + 0u] = w.x; ring[base + 1u] = w.y;
    w = unpackDouble2x32(sum_l);   ring[base + 2u] = w.x; ring[base + 3u] = w.y;
    w = unpackDouble2x32(sum_c);   ring[base + 4u] = w.x; ring[base + 5u] = w.y;
    w = unpackDouble2x32(sum_s);   ring[base + 6u] = w.x; ring[base + 7u] = w.y;
    barrier();
    for (int half_size = STRIP / 2; half_size > 0; half_size >>= 1) {
        if (c < half_size) {
            const uint other = uint(c + half_size) * 8u;
            for (uint k = 0u; k < 8u; k += 2u) {
                precise double total = packDouble2x32(uvec2(ring[base + k], ring[base + k + 1u])) +
                                       packDouble2x32(uvec2(ring[other + k], ring[other + k + 1u]));
                w = unpackDouble2x32(total);
                ring[base + k] = w.x;
                ring[base + k + 1u] = w.y;
            }
        }
        barrier();
    }
    if (c == 0) {
        const uint out_i = pc.out_offset + 4u * (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
        for (uint k = 0u; k < 4u; k++)
            partials[out_i + k] = packDouble2x32(uvec2(ring[2u * k], ring[2u * k + 1u]));
    }
}
