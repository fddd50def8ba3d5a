#version 450
// PSNR-HVS, pass 1 of 4: one invocation per block position (of the three
// planes, numbered after the planes before): its 64 terms, the very floats
// of the C reference (hvs_block_terms() of src/metrics/psnr_hvs.h: Xiph's
// integer DCT, float statistics in the same order, the masking's double
// square root, float divisions), and their sum in double, an estimate for
// the later passes.
//
// Floats: every float operation is precise (no fused multiply-add, no
// reassociation), + - * are correctly rounded on every device; the
// divisions and the square root, and conversions that round, are settled
// exactly by fp64.glsl.
#extension GL_GOOGLE_include_directive : require
#include "psnr_hvs.glsl"

layout(local_size_x = HVS_THREADS) in;

// The reference and distorted blocks (hvs_load_block's layout: [8 i + j]).
int blk[2][64];

// C's t / 2: toward zero.
int half_toward_zero(int t)
{
    return (t + int(uint(t) >> 31)) >> 1;
}

// One lifting step: v * c / 2^shift, rounded half up (arithmetic shift).
int lift(int v, int c, int shift)
{
    return (v * c + (1 << (shift - 1))) >> shift;
}

// Daala's od_bin_fdct8 on x[0..7] (hvs_fdct8 of psnr_hvs.h, step for step;
// the names are Daala's: t_k ends as coefficient k).
void fdct8(inout int x[8])
{
    int t0 = x[0], t4 = x[1], t2 = x[2], t6 = x[3];
    int t7 = x[4], t3 = x[5], t5 = x[6], t1 = x[7];

    t1 = t0 - t1;
    const int t1h = half_toward_zero(t1);
    t0 -= t1h;
    t4 += t5;
    const int t4h = half_toward_zero(t4);
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= half_toward_zero(t3);
    t6 += t7;
    const int t6h = half_toward_zero(t6);
    t7 = t6h - t7;

    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;
    t0 -= lift(t4, 13573, 15);
    t4 += lift(t0, 11585, 14);
    t0 -= lift(t4, 13573, 15);
    t6 -= lift(t2, 21895, 15);
    t2 += lift(t6, 15137, 14);
    t6 -= lift(t2, 21895, 15);

    t3 += lift(t5, 19195, 15);
    t5 += lift(t3, 11585, 14);
    t3 -= lift(t5, 7489, 13);
    t7 = half_toward_zero(t5) - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;
    t7 += lift(t1, 3227, 15);
    t1 -= lift(t7, 6393, 15);
    t7 += lift(t1, 3227, 15);
    t5 += lift(t3, 2485, 13);
    t3 -= lift(t5, 18205, 15);
    t5 += lift(t3, 2485, 13);

    x[0] = t0; x[1] = t1; x[2] = t2; x[3] = t3;
    x[4] = t4; x[5] = t5; x[6] = t6; x[7] = t7;
}

// od_bin_fdct8x8 in place: the columns, then the rows of the result, so
// blk[b][8 v + u] ends as vertical frequency v, horizontal frequency u.
// (Integers: the layout of the 1-D transforms changes no bit.)
void fdct8x8(uint b)
{
    int v[8];
    for (uint c = 0u; c < 8u; c++) {
        for (uint r = 0u; r < 8u; r++) v[r] = blk[b][8u * r + c];
        fdct8(v);
        for (uint r = 0u; r < 8u; r++) blk[b][8u * r + c] = v[r];
    }
    for (uint r = 0u; r < 8u; r++) {
        for (uint c = 0u; c < 8u; c++) v[c] = blk[b][8u * r + c];
        fdct8(v);
        for (uint c = 0u; c < 8u; c++) blk[b][8u * r + c] = v[c];
    }
}

// The variance ratio of block b (hvs_variance_ratios): the sum of its four
// 4x4 quadrant variances over its variance, or that variance if it is not
// positive; each a float sum of squares in raster order.
float variance_ratio(uint b)
{
    int sum = 0;
    int qsum[4] = int[4](0, 0, 0, 0);
    for (uint i = 0u; i < 8u; i++) {
        for (uint j = 0u; j < 8u; j++) {
            sum += blk[b][8u * i + j];
            qsum[(i >> 2) + ((j >> 2) << 1)] += blk[b][8u * i + j];
        }
    }
    // exact: integers below 2^24 over powers of two
    precise float mean = float(sum) * 0.015625;
    precise float qmean[4];
    for (uint q = 0u; q < 4u; q++) qmean[q] = float(qsum[q]) * 0.0625;
    precise float var = 0.0;
    precise float qvar[4] = float[4](0.0, 0.0, 0.0, 0.0);
    for (uint i = 0u; i < 8u; i++) {
        for (uint half_row = 0u; half_row < 2u; half_row++) {
            const uint q = (i >> 2) + 2u * half_row;
            for (uint j = 0u; j < 4u; j++) {
                precise float v = float(blk[b][8u * i + 4u * half_row + j]);
                precise float d = v - mean;
                precise float dq = v - qmean[q];
                var = var + d * d;
                qvar[q] = qvar[q] + dq * dq;
            }
        }
    }
    var = var * HVS_BLOCK_SCALE;
    for (uint q = 0u; q < 4u; q++) qvar[q] = qvar[q] * HVS_QUADRANT_SCALE;
    if (var > 0.0) {
        precise float quadrants = ((qvar[0] + qvar[1]) + qvar[2]) + qvar[3];
        var = f32_div(quadrants, var);
    }
    return var;
}

void main()
{
    const uint g = hvs_global_index();
    if (g >= pc.total) return;
    const uint p = g >= pc.base[2] ? 2u : g >= pc.base[1] ? 1u : 0u;
    const uint i = g - pc.base[p];
    const uint x = (i % pc.cols[p]) * HVS_STEP, y = (i / pc.cols[p]) * HVS_STEP;
    const uint bps = pc.bytes_per_sample;
    for (uint r = 0u; r < 8u; r++) {
        const uint ref_row = pc.ref_offset[p] + (y + r) * pc.stride[p] + x * bps;
        const uint dist_row = pc.dist_offset[p] + (y + r) * pc.stride[p] + x * bps;
        for (uint c = 0u; c < 8u; c++) {
            const uint a = p == 0u ? SAMPLE(ring_words, ref_row + c * bps, bps)
                                   : SAMPLE(frame_words, ref_row + c * bps, bps);
            const uint d = SAMPLE(frame_words, dist_row + c * bps, bps);
            blk[0][8u * r + c] = min(int(a), HVS_MAX_SAMPLE);
            blk[1][8u * r + c] = min(int(d), HVS_MAX_SAMPLE);
        }
    }

    // hvs_masking(): the ratios, the transforms, the AC energies (exact
    // integer squares rounded to float, times the mask, summed in raster
    // order), sqrt(ratio * energy) / 32 rounded to float, the larger one
    precise float ratio0 = variance_ratio(0u);
    precise float ratio1 = variance_ratio(1u);
    fdct8x8(0u);
    fdct8x8(1u);
    precise float energy0 = 0.0, energy1 = 0.0;
    for (uint k = 1u; k < 64u; k++) {
        energy0 = energy0 + f32_from_int(blk[0][k] * blk[0][k]) * HVS_MASK(p, k);
        energy1 = energy1 + f32_from_int(blk[1][k] * blk[1][k]) * HVS_MASK(p, k);
    }
    // (float)(sqrt((double)x) / 32.0) is the float root of x over 32: the
    // division is exact, and rounding a double root to float is innocuous
    precise float m0 = f32_sqrt_rn(double(energy0 * ratio0)) * 0.03125;
    precise float m1 = f32_sqrt_rn(double(energy1 * ratio1)) * 0.03125;
    const float m = m1 > m0 ? m1 : m0;

    // the terms (hvs_dc_term, hvs_ac_term), and their sum in double
    precise double estimate = 0.0LF;
    for (uint q = 0u; q < 16u; q++) {
        precise vec4 t;
        for (uint c = 0u; c < 4u; c++) {
            const uint k = 4u * q + c;
            precise float e = float(abs(blk[0][k] - blk[1][k]));
            if (k > 0u) {
                precise float over = e - f32_div(m, HVS_MASK(p, k));
                e = over > 0.0 ? over : 0.0;
            }
            precise float weighted = e * HVS_CSF(p, k);
            t[c] = weighted * weighted;
            estimate = estimate + double(t[c]);
        }
        terms[g * 16u + q] = t;
    }
    prefix[g] = estimate;
}
