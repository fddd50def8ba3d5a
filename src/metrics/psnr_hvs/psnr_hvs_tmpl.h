/*
 * PSNR-HVS's arithmetic of one block position, written once for a scalar
 * and for SIMD vectors: psnr_hvs.h instantiates it on int32_t and float
 * (the C reference and the CUDA twin), src/metrics/x86/psnr_hvs_<isa>.c on
 * GCC vectors whose lanes are neighbouring block positions.  Every lane
 * runs the scalar code's operations in its order, so each term is the
 * same float.
 *
 * The includer defines, before including:
 *   HT(name)    the name of a function of this instantiation
 *   HT_FN       its qualifiers
 *   VI, VF      N int32, N floats (N = 1: int32_t, float)
 *   VU          N uint32: bit patterns and lane masks (all ones for true)
 *   HT_MF(c)    the VU mask of a comparison of VF values
 *   HT_FBITS(x), HT_FLOAT(u)   VF <-> VU, reinterpreting the bits
 *   HT_I2F(x)   int32 -> float, lane by lane
 *   HT_SQRTF(x) float square root
 * Scalars mix with vectors of their type.  Integer division by 2 rounds
 * toward zero and >> of a negative value is arithmetic for both.
 */

/* ---- Xiph's integer DCT ------------------------------------------------- */

/* One lifting step: v * c / 2^shift, rounded half up.  (Negative products
 * round with an arithmetic right shift: checked in psnr_hvs.c.) */
HT_FN VI HT(lift)(VI v, int32_t c, int shift)
{
    return (v * c + (1 << (shift - 1))) >> shift;
}

/*
 * The 8-point type-II DCT of Daala (od_bin_fdct8): +/-1 butterflies, an
 * embedded 4-point DCT made of a 2-point DCT and a 2-point type-IV DST,
 * and a 4-point type-IV DST, every rotation a chain of three lifting steps
 * with 2^-13 .. 2^-15 constants.  Halvings round toward zero, as Daala's
 * OD_DCT_RSHIFT does (C's integer division).  Reads x[0], x[stride], ...
 * and writes out[0], out[stride], ...
 */
HT_FN void HT(fdct8)(VI *out, const VI *x, ptrdiff_t stride)
{
    /* Daala's variable names: t_k ends as coefficient k. */
    VI t0 = x[0 * stride], t4 = x[1 * stride];
    VI t2 = x[2 * stride], t6 = x[3 * stride];
    VI t7 = x[4 * stride], t3 = x[5 * stride];
    VI t5 = x[6 * stride], t1 = x[7 * stride];

    /* butterflies: differences keep their full value, sums lose half */
    t1 = t0 - t1;
    const VI t1h = t1 / 2;
    t0 -= t1h;
    t4 += t5;
    const VI t4h = t4 / 2;
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= t3 / 2;
    t6 += t7;
    const VI t6h = t6 / 2;
    t7 = t6h - t7;

    /* embedded 4-point DCT */
    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;
    /* its 2-point DCT: rotation by pi/4 (tan(pi/8), sin(pi/4)) */
    t0 -= HT(lift)(t4, 13573, 15);
    t4 += HT(lift)(t0, 11585, 14);
    t0 -= HT(lift)(t4, 13573, 15);
    /* its 2-point type-IV DST: rotation by 3pi/8 */
    t6 -= HT(lift)(t2, 21895, 15);
    t2 += HT(lift)(t6, 15137, 14);
    t6 -= HT(lift)(t2, 21895, 15);

    /* 4-point type-IV DST */
    t3 += HT(lift)(t5, 19195, 15);
    t5 += HT(lift)(t3, 11585, 14);
    t3 -= HT(lift)(t5, 7489, 13);
    t7 = t5 / 2 - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;
    /* rotation by pi/16 */
    t7 += HT(lift)(t1, 3227, 15);
    t1 -= HT(lift)(t7, 6393, 15);
    t7 += HT(lift)(t1, 3227, 15);
    /* rotation by 3pi/16 */
    t5 += HT(lift)(t3, 2485, 13);
    t3 -= HT(lift)(t5, 18205, 15);
    t5 += HT(lift)(t3, 2485, 13);

    out[0 * stride] = t0; out[1 * stride] = t1;
    out[2 * stride] = t2; out[3 * stride] = t3;
    out[4 * stride] = t4; out[5 * stride] = t5;
    out[6 * stride] = t6; out[7 * stride] = t7;
}

/* The 1-D DCT of the 8 columns of a block, in[8 r + c] -> out[8 k + c]. */
HT_FN void HT(fdct8_columns)(VI *HVS_RESTRICT out, const VI *HVS_RESTRICT in)
{
    for (int c = 0; c < 8; c++) HT(fdct8)(out + c, in + c, 8);
}

HT_FN void HT(transpose8x8)(VI *HVS_RESTRICT out, const VI *HVS_RESTRICT in)
{
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) out[8 * c + r] = in[8 * r + c];
}

/*
 * The 2-D transform in place, Daala's od_bin_fdct8x8: the columns first,
 * then the rows of the result, so blk[8 v + u] ends as vertical frequency
 * v, horizontal frequency u.  (Integer arithmetic: how the 1-D transforms
 * are laid out does not change a bit.)
 */
HT_FN void HT(fdct8x8)(VI blk[64])
{
    VI a[64], b[64];
    HT(fdct8_columns)(a, blk); /* a[8 v + x]: vertical frequency v of column x */
    HT(transpose8x8)(b, a);
    HT(fdct8_columns)(a, b);   /* a[8 u + v]: horizontal frequency u of row v */
    HT(transpose8x8)(blk, a);
}

/* ---- one block pair ------------------------------------------------------- */

/* Adds the squared deviations of half a block row (4 samples, one
 * quadrant) from the block mean and from the quadrant mean. */
HT_FN void HT(deviations)(const VI *v, VF mean, VF qmean, VF *var, VF *qvar)
{
    for (int j = 0; j < 4; j++) {
        const VF d = HT_I2F(v[j]) - mean;
        const VF dq = HT_I2F(v[j]) - qmean;
        *var += d * d;
        *qvar += dq * dq;
    }
}

/*
 * The variance ratio of each block: the sum of its four 4x4 quadrant
 * variances over the variance of the whole block (the block variance
 * itself when that is not positive).  Quadrant q of sample (i, j) is
 * libvmaf's ((i & 12) >> 2) + ((j & 12) >> 1): (i >= 4) + 2 * (j >= 4).
 */
HT_FN void HT(variance_ratios)(VI blk[2][64], VF ratio[2])
{
    for (int b = 0; b < 2; b++) {
        const VI *v = blk[b];
        /* libvmaf sums the samples in float; at most 64 samples of 16
         * bits, every partial sum is an integer below 2^24 and exact, so
         * integer sums give the same means. */
        VI sum = v[0] - v[0], qsum[4];
        for (int q = 0; q < 4; q++) qsum[q] = sum;
        for (int i = 0; i < 8; i++) {
            for (int j = 0; j < 8; j++) {
                sum += v[8 * i + j];
                qsum[(i >> 2) + ((j >> 2) << 1)] += v[8 * i + j];
            }
        }
        const VF mean = HT_I2F(sum) / 64.f;
        VF qmean[4];
        for (int q = 0; q < 4; q++) qmean[q] = HT_I2F(qsum[q]) / 16.f;

        /* float sums of squares, each in raster order as libvmaf's */
        const VF zero = HT_I2F(v[0] - v[0]);
        VF var = zero, qvar[4] = { zero, zero, zero, zero };
        for (int i = 0; i < 8; i++) {
            const int q = i >> 2;
            HT(deviations)(v + 8 * i, mean, qmean[q], &var, &qvar[q]);
            HT(deviations)(v + 8 * i + 4, mean, qmean[q + 2], &var, &qvar[q + 2]);
        }
        /* n / (n - 1) as libvmaf writes it: float(1 / 63) * 64 */
        var *= 1 / 63.f * 64;
        for (int q = 0; q < 4; q++) qvar[q] *= 1 / 15.f * 16;
        /* var > 0: the quadrants over it (a lane whose var is 0 divides
         * by it and drops the result) */
        const VF quads = (qvar[0] + qvar[1] + qvar[2] + qvar[3]) / var;
        const VU positive = HT_MF(var > 0.f);
        ratio[b] = HT_FLOAT((HT_FBITS(quads) & positive) | (HT_FBITS(var) & ~positive));
    }
}

/*
 * The masking of a block position: the larger of the two blocks' masking
 * sqrt(ratio * AC energy) / 32.  Transforms both blocks in place.
 *
 * libvmaf takes the square root of the float product in double, divides
 * by 32 and rounds to float; that is the float square root divided by 32
 * (a double has more than twice a float's precision, so rounding the
 * double root to float gives the correctly rounded float root, and /32
 * is exact both ways: the root of a float is far from float's smallest
 * normal), which is what is computed.
 */
HT_FN VF HT(masking)(VI blk[2][64], const float mask[64])
{
    VF ratio[2];
    HT(variance_ratios)(blk, ratio);
    HT(fdct8x8)(blk[0]);
    HT(fdct8x8)(blk[1]);

    /* AC energy: the products are exact integers, each converted to float
     * before it meets the mask; each sum in raster order */
    const VF zero = HT_I2F(blk[0][0] - blk[0][0]);
    VF energy[2] = { zero, zero };
    for (int k = 1; k < 64; k++) {
        for (int b = 0; b < 2; b++) energy[b] += HT_I2F(blk[b][k] * blk[b][k]) * mask[k];
    }
    VF m[2];
    for (int b = 0; b < 2; b++) m[b] = HT_SQRTF(energy[b] * ratio[b]) / 32.0f;
    const VU second = HT_MF(m[1] > m[0]);
    return HT_FLOAT((HT_FBITS(m[1]) & second) | (HT_FBITS(m[0]) & ~second));
}

/* |a - b| of two int32 lanes (the DCT's coefficients are far from
 * INT32_MIN). */
HT_FN VI HT(abs_diff)(VI a, VI b)
{
    const VI d = a - b;
    const VI sign = d >> 31;
    return (d ^ sign) - sign;
}

/*
 * The error terms of a block position whose blocks are transformed and
 * whose masking is m, in the order the plane's float sum adds them: DC
 * the plain difference, AC k = 1 .. 63 what exceeds the masking threshold
 * m / mask, or 0 (libvmaf's e < t ? 0 : e - t is max(e - t, 0) bit for
 * bit: e - t is never -0 or NaN), each weighted (csf e)^2.
 */
HT_FN VF HT(dc_term)(VI blk[2][64], const float csf[64])
{
    const VF dc = HT_I2F(HT(abs_diff)(blk[0][0], blk[1][0]));
    return (dc * csf[0]) * (dc * csf[0]);
}

HT_FN VF HT(ac_term)(VI blk[2][64], VF m, const float csf[64], const float mask[64], int k)
{
    const VF over = HT_I2F(HT(abs_diff)(blk[0][k], blk[1][k])) - m / mask[k];
    const VF e = HT_FLOAT(HT_FBITS(over) & HT_MF(over > 0.f));
    return (e * csf[k]) * (e * csf[k]);
}

/* All 64 terms of a block position, in order.  Transforms the blocks in
 * place. */
HT_FN void HT(block_terms)(VI blk[2][64], const float csf[64], const float mask[64],
                           VF terms[64])
{
    const VF m = HT(masking)(blk, mask);
    terms[0] = HT(dc_term)(blk, csf);
    for (int k = 1; k < 64; k++) terms[k] = HT(ac_term)(blk, m, csf, mask, k);
}
