#version 450
// Float VIF's Vulkan twin, the statistics of one scale: the port of
// src/cuda/float_vif.cu's rows kernel.  The scale's Gaussian filter,
// vertically then horizontally (taps summed from the first, edges
// mirrored: -1 reads 1, n reads n - 2), over the means, squares and
// product of the two pictures; libvmaf's statistic of each sample
// (float_vif_statistic(), float_vif.h); and each row's numerator and
// denominator summed in float from its first column to its last, as the
// C reference sums them.  The host adds the rows in float in row order
// (float_vif_write_rows()).
//
// Workgroup x takes rows [x * ROWS, (x + 1) * ROWS), cut in segments of
// SEGMENT columns; per segment:
//   0: the vertical pass of the five quantities at the segment's columns
//      and `radius` (mirrored or neighbouring) columns on each side, into
//      shared memory;
//   1: at each column, the horizontal pass and the statistic, num and den
//      kept by the invocation, then (after a barrier) written over the
//      vertical pass, which is no longer read;
//   2: one invocation per row and sum adds the segment's values to the
//      row's float sum, in column order.
//
// Float arithmetic is the reference's, operation by operation, and every
// result is `precise` (no fused multiply-add); where the reference divides
// floats, the quotient is the double quotient rounded to float (the same
// number: a correctly rounded double quotient rounds to the correctly
// rounded float one), since Vulkan's float division need not be correctly
// rounded; the reference's double steps are doubles (shaderFloat64).
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"

#define SEGMENT 256
#define ROWS 2
#define MAX_TAPS 65
#define MAX_HALF (MAX_TAPS / 2)
layout(local_size_x = 256) in;

layout(std430, binding = 2) readonly buffer Scaled { float scaled[]; };
layout(std430, binding = 4) writeonly buffer Rows { float rows[]; };

#include "float_vif.glsl"

layout(push_constant) uniform Push {
    double sigma_nsq;      // vif_sigma_nsq
    VifSource src;         // the scale's pictures
    int width;             // the scale's
    int height;
    uint filter_first;     // the scale's filter in the table
    uint taps;
    float gain_limit;      // (float)vif_enhn_gain_limit
    float sigma_max_inv;   // vif_sigma_nsq^2 / 255^2
    uint out_offset;       // the row sums of this scale, in Rows
} pc;

shared float filter_taps[MAX_TAPS];
// Phase 0's vertical pass [5][ROWS][SEGMENT + 2 radius]; phase 1's num and
// den [2][ROWS][SEGMENT] after it.
shared float work[5 * ROWS * (SEGMENT + 2 * MAX_HALF)];

// libvmaf's log2 approximation (float_vif_log2()): the exponent plus the
// polynomial of the mantissa in [1, 2).
float vif_log2(float x)
{
    if (x == 0.0) return uintBitsToFloat(0xff800000u);
    if (x < 0.0) return uintBitsToFloat(0x7fc00000u);
    const uint bits = floatBitsToUint(x);
    const int exponent = int((bits & 0x7f800000u) >> 23);
    const float mantissa = uintBitsToFloat((bits & 0x007fffffu) | 0x3f800000u);
    const float log_base = float(exponent - 127);
    precise float t = mantissa - 1.0;
    precise float poly = 0.0;
    for (uint i = 0u; i < 9u; i++) poly = poly * t + table[VIF_TABLE_POLY + i];
    precise float result = log_base + poly;
    return result;
}

// float_vif_statistic(): the numerator and denominator of one sample.
void vif_statistic(float mu1, float mu2, float xx_f, float yy_f, float xy_f, out float num,
                   out float den)
{
    const float eps = table[VIF_TABLE_EPS];
    precise float mu1_sq = mu1 * mu1;
    precise float mu2_sq = mu2 * mu2;
    precise float mu1_mu2 = mu1 * mu2;
    precise float sigma1_sq = xx_f - mu1_sq;
    precise float sigma2_sq = yy_f - mu2_sq;
    precise float sigma12 = xy_f - mu1_mu2;

    sigma1_sq = sigma1_sq > 0.0 ? sigma1_sq : 0.0;
    sigma2_sq = sigma2_sq > 0.0 ? sigma2_sq : 0.0;

    if (double(sigma1_sq < eps ? 0.0 : sigma1_sq) < pc.sigma_nsq) {
        precise float flat_num = 1.0 - sigma2_sq * pc.sigma_max_inv;
        num = flat_num;
        den = 1.0;
        return;
    }
    precise float divisor = sigma1_sq + eps;
    precise float g = float(double(sigma12) / double(divisor));
    precise float sv_sq = sigma2_sq - g * sigma12;
    if (sigma1_sq < eps) {
        g = 0.0;
        sv_sq = sigma2_sq;
        sigma1_sq = 0.0;
    }
    if (sigma2_sq < eps) {
        g = 0.0;
        sv_sq = 0.0;
    }
    if (g < 0.0) {
        sv_sq = sigma2_sq;
        g = 0.0;
    }
    sv_sq = sv_sq > eps ? sv_sq : eps;
    g = g < pc.gain_limit ? g : pc.gain_limit;

    // a float numerator over a double denominator, the sum in double, the
    // logarithm of its float
    if (sigma12 < 0.0) {
        num = 0.0;
    } else {
        precise float gain = g * g * sigma1_sq;
        precise double ratio = double(gain) / (double(sv_sq) + pc.sigma_nsq);
        precise double sum = 1.0lf + ratio;
        num = vif_log2(float(sum));
    }
    precise double den_ratio = double(sigma1_sq) / pc.sigma_nsq;
    precise double den_sum = 1.0lf + den_ratio;
    den = vif_log2(float(den_sum));
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const int taps = int(pc.taps), radius = taps / 2;
    const int vw = SEGMENT + 2 * radius;
    const int y0 = int(gl_WorkGroupID.x) * ROWS;
    const int segments = (pc.width + SEGMENT - 1) / SEGMENT;
    for (uint k = lid; k < uint(taps); k += gl_WorkGroupSize.x)
        filter_taps[k] = table[pc.filter_first + k];
    barrier();

    // Invocations 0 .. 2 ROWS - 1 sum row lid / 2's numerator (lid even)
    // or denominator.
    const int sum_row = int(lid) / 2, sum_which = int(lid) % 2;
    precise float acc = 0.0;

    for (int seg = 0; seg < segments; seg++) {
        const int x0 = seg * SEGMENT, n = min(SEGMENT, pc.width - x0);
        const int cols = n + 2 * radius;
        // 0: the vertical pass (float_vif.c's vertical5()).
        for (int e = int(lid); e < ROWS * cols; e += int(gl_WorkGroupSize.x)) {
            const int row = e / cols, i = e % cols, y = y0 + row;
            if (y >= pc.height) continue;
            const int x = vif_mirror(x0 - radius + i, pc.width);
            precise float m1 = 0.0, m2 = 0.0, xx = 0.0, yy = 0.0, xy = 0.0;
            for (int k = 0; k < taps; k++) {
                const int yk = vif_mirror(y - radius + k, pc.height);
                const float fk = filter_taps[k];
                const float p = vif_load(pc.src, true, x, yk), d = vif_load(pc.src, false, x, yk);
                m1 += fk * p;
                m2 += fk * d;
                xx += fk * (p * p);
                yy += fk * (d * d);
                xy += fk * (p * d);
            }
            work[(0 * ROWS + row) * vw + i] = m1;
            work[(1 * ROWS + row) * vw + i] = m2;
            work[(2 * ROWS + row) * vw + i] = xx;
            work[(3 * ROWS + row) * vw + i] = yy;
            work[(4 * ROWS + row) * vw + i] = xy;
        }
        barrier();
        // 1: the horizontal pass (filter_row()) and the statistic; ROWS x
        // SEGMENT is twice the workgroup, so two samples an invocation.
        float num[2], den[2];
        for (int it = 0; it < 2; it++) {
            const int e = int(lid) + it * int(gl_WorkGroupSize.x);
            const int row = e / n, i = e % n;
            num[it] = 0.0;
            den[it] = 0.0;
            if (e >= ROWS * n || y0 + row >= pc.height) continue;
            float q[5];
            for (int c = 0; c < 5; c++) {
                precise float acc_c = 0.0;
                const int base = (c * ROWS + row) * vw + i;
                for (int k = 0; k < taps; k++) acc_c += filter_taps[k] * work[base + k];
                q[c] = acc_c;
            }
            vif_statistic(q[0], q[1], q[2], q[3], q[4], num[it], den[it]);
        }
        barrier();
        for (int it = 0; it < 2; it++) {
            const int e = int(lid) + it * int(gl_WorkGroupSize.x);
            if (e >= ROWS * n) continue;
            const int row = e / n, i = e % n;
            work[row * SEGMENT + i] = num[it];
            work[(ROWS + row) * SEGMENT + i] = den[it];
        }
        barrier();
        // 2: the row sums, in column order.
        if (lid < 2u * ROWS && y0 + sum_row < pc.height) {
            const int base = (sum_which * ROWS + sum_row) * SEGMENT;
            for (int i = 0; i < n; i++) acc += work[base + i];
        }
        barrier();
    }
    if (lid < 2u * ROWS && y0 + sum_row < pc.height)
        rows[pc.out_offset + uint(2 * (y0 + sum_row) + sum_which)] = acc;
}
