/*
 * PSNR-HVS: the steps the C reference (psnr_hvs.c) and its GPU twins
 * share.
 *
 * The first part is arithmetic that device compilers read too (nvcc
 * includes this file from src/cuda/psnr_hvs.cu): Xiph's integer DCT, the
 * block statistics and the masking, and the 64 error terms of one block
 * position, in libvmaf's float operations and order.  The C reference adds
 * the terms of a plane into one float in block-raster, then
 * coefficient-raster order; a twin must reproduce that sum bit for bit
 * (see psnr_hvs.cu).
 *
 * The second part (hidden from nvcc) is the host's: the state, the format
 * check and its message, and the step from the planes' float sums to the
 * keys.
 */
#ifndef QUALE_SRC_METRICS_PSNR_HVS_H
#define QUALE_SRC_METRICS_PSNR_HVS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

/* On the host, plain static functions (left to the compiler to inline, as
 * the C reference always had them: `inline` makes gcc inline differently,
 * and the reference slower) and the ones that were always inlined; unused
 * where a file includes this header for its other parts. */
#if defined(__CUDACC__)
#define HVS_INLINE static inline __host__ __device__
#define HVS_ALWAYS_INLINE static __forceinline__ __host__ __device__
#elif defined(__GNUC__)
#define HVS_INLINE static __attribute__((unused))
#define HVS_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define HVS_INLINE static
#define HVS_ALWAYS_INLINE static inline
#endif
/* C's restrict, spelled so that C++ and nvcc read it too. */
#define HVS_RESTRICT __restrict__

#define HVS_BLOCK 8
#define HVS_STEP 7
#define HVS_MAX_BITDEPTH 12u
/* Xiph's constant: csf * 0.38857 squared gives the masking table of the
 * PSNR-HVS-M paper. */
#define HVS_MASK_SCALE 0.3885746225901003

/* Block positions along a side of n samples: 0, 7, 14, ... while the
 * block fits. */
HVS_INLINE unsigned hvs_positions(unsigned n)
{
    return n < HVS_BLOCK ? 0u : (n - HVS_BLOCK) / HVS_STEP + 1;
}

/* ---- Xiph's integer DCT ------------------------------------------------- */

/* One lifting step: v * c / 2^shift, rounded half up.  (Negative products
 * round with an arithmetic right shift: checked in psnr_hvs.c.) */
HVS_INLINE int32_t hvs_lift(int32_t v, int32_t c, int shift)
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
HVS_ALWAYS_INLINE void hvs_fdct8(int32_t *out, const int32_t *x, ptrdiff_t stride)
{
    /* Daala's variable names: t_k ends as coefficient k. */
    int32_t t0 = x[0 * stride], t4 = x[1 * stride];
    int32_t t2 = x[2 * stride], t6 = x[3 * stride];
    int32_t t7 = x[4 * stride], t3 = x[5 * stride];
    int32_t t5 = x[6 * stride], t1 = x[7 * stride];

    /* butterflies: differences keep their full value, sums lose half */
    t1 = t0 - t1;
    const int32_t t1h = t1 / 2;
    t0 -= t1h;
    t4 += t5;
    const int32_t t4h = t4 / 2;
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= t3 / 2;
    t6 += t7;
    const int32_t t6h = t6 / 2;
    t7 = t6h - t7;

    /* embedded 4-point DCT */
    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;
    /* its 2-point DCT: rotation by pi/4 (tan(pi/8), sin(pi/4)) */
    t0 -= hvs_lift(t4, 13573, 15);
    t4 += hvs_lift(t0, 11585, 14);
    t0 -= hvs_lift(t4, 13573, 15);
    /* its 2-point type-IV DST: rotation by 3pi/8 */
    t6 -= hvs_lift(t2, 21895, 15);
    t2 += hvs_lift(t6, 15137, 14);
    t6 -= hvs_lift(t2, 21895, 15);

    /* 4-point type-IV DST */
    t3 += hvs_lift(t5, 19195, 15);
    t5 += hvs_lift(t3, 11585, 14);
    t3 -= hvs_lift(t5, 7489, 13);
    t7 = t5 / 2 - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;
    /* rotation by pi/16 */
    t7 += hvs_lift(t1, 3227, 15);
    t1 -= hvs_lift(t7, 6393, 15);
    t7 += hvs_lift(t1, 3227, 15);
    /* rotation by 3pi/16 */
    t5 += hvs_lift(t3, 2485, 13);
    t3 -= hvs_lift(t5, 18205, 15);
    t5 += hvs_lift(t3, 2485, 13);

    out[0 * stride] = t0; out[1 * stride] = t1;
    out[2 * stride] = t2; out[3 * stride] = t3;
    out[4 * stride] = t4; out[5 * stride] = t5;
    out[6 * stride] = t6; out[7 * stride] = t7;
}

/* The 1-D DCT of the 8 columns of a block, in[8 r + c] -> out[8 k + c].
 * The columns are independent and run side by side (SIMD lanes). */
HVS_INLINE void hvs_fdct8_columns(int32_t *HVS_RESTRICT out, const int32_t *HVS_RESTRICT in)
{
    for (int c = 0; c < 8; c++) hvs_fdct8(out + c, in + c, 8);
}

HVS_INLINE void hvs_transpose8x8(int32_t *HVS_RESTRICT out, const int32_t *HVS_RESTRICT in)
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
HVS_INLINE void hvs_fdct8x8(int32_t blk[64])
{
    int32_t a[64], b[64];
    hvs_fdct8_columns(a, blk); /* a[8 v + x]: vertical frequency v of column x */
    hvs_transpose8x8(b, a);
    hvs_fdct8_columns(a, b);   /* a[8 u + v]: horizontal frequency u of row v */
    hvs_transpose8x8(blk, a);
}

/* ---- one block pair ------------------------------------------------------- */

/* The reference and distorted blocks at one position, side by side: libvmaf
 * computes their statistics in the same loops. */
typedef int32_t HvsBlockPair[2][64];

/* Adds the squared deviations of half a block row (4 samples, one
 * quadrant) from the block mean and from the quadrant mean. */
HVS_ALWAYS_INLINE void hvs_deviations(const int32_t *v, float mean, float qmean, float *var,
                                      float *qvar)
{
    for (int j = 0; j < 4; j++) {
        const float d = v[j] - mean;
        const float dq = v[j] - qmean;
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
HVS_ALWAYS_INLINE void hvs_variance_ratios(const int32_t blk[2][64], float ratio[2])
{
    for (int b = 0; b < 2; b++) {
        const int32_t *v = blk[b];
        /* libvmaf sums the samples in float; at most 64 samples of 16
         * bits, every partial sum is an integer below 2^24 and exact, so
         * integer sums give the same means. */
        int32_t sum = 0, qsum[4] = { 0, 0, 0, 0 };
        for (int i = 0; i < 8; i++) {
            for (int j = 0; j < 8; j++) {
                sum += v[8 * i + j];
                qsum[(i >> 2) + ((j >> 2) << 1)] += v[8 * i + j];
            }
        }
        const float mean = (float)sum / 64.f;
        float qmean[4];
        for (int q = 0; q < 4; q++) qmean[q] = (float)qsum[q] / 16.f;

        /* float sums of squares, each in raster order as libvmaf's */
        float var = 0.f, qvar[4] = { 0.f, 0.f, 0.f, 0.f };
        for (int i = 0; i < 8; i++) {
            const int q = i >> 2;
            hvs_deviations(v + 8 * i, mean, qmean[q], &var, &qvar[q]);
            hvs_deviations(v + 8 * i + 4, mean, qmean[q + 2], &var, &qvar[q + 2]);
        }
        /* n / (n - 1) as libvmaf writes it: float(1 / 63) * 64 */
        var *= 1 / 63.f * 64;
        for (int q = 0; q < 4; q++) qvar[q] *= 1 / 15.f * 16;
        if (var > 0) var = (qvar[0] + qvar[1] + qvar[2] + qvar[3]) / var;
        ratio[b] = var;
    }
}

/*
 * The masking of a block position: the larger of the two blocks' masking
 * sqrt(ratio * AC energy) / 32.  Transforms both blocks in place.
 */
HVS_ALWAYS_INLINE float hvs_masking(HvsBlockPair blk, const float mask[64])
{
    float ratio[2];
    hvs_variance_ratios(blk, ratio);
    hvs_fdct8x8(blk[0]);
    hvs_fdct8x8(blk[1]);

    /* AC energy: the products are exact integers, each converted to float
     * before it meets the mask; each sum in raster order */
    float energy[2] = { 0.f, 0.f };
    for (int k = 1; k < 64; k++) {
        for (int b = 0; b < 2; b++) energy[b] += (float)(blk[b][k] * blk[b][k]) * mask[k];
    }
    float m[2];
    for (int b = 0; b < 2; b++) m[b] = (float)(sqrt((double)(energy[b] * ratio[b])) / 32.0);
    return m[1] > m[0] ? m[1] : m[0];
}

/* The 8x8 block at p (samples of 8 bits, or of 16 when hbd). */
HVS_ALWAYS_INLINE void hvs_load_block(int32_t blk[64], const uint8_t *p, ptrdiff_t stride,
                                      bool hbd)
{
    for (int i = 0; i < 8; i++, p += stride) {
        if (hbd) {
            const uint16_t *row = (const uint16_t *)p;
            /* Samples above HVS_MAX_BITDEPTH bits, which only an API caller
             * can send (the readers clamp), would overflow the int32 DCT;
             * in-range samples are unchanged. */
            const int32_t top = (int32_t)((1u << HVS_MAX_BITDEPTH) - 1);
            for (int j = 0; j < 8; j++) blk[8 * i + j] = row[j] > top ? top : row[j];
        } else {
            for (int j = 0; j < 8; j++) blk[8 * i + j] = p[j];
        }
    }
}

/*
 * The error terms of a block position whose blocks are transformed and
 * whose masking is m, in the order the plane's float sum adds them: DC
 * the plain difference, AC k = 1 .. 63 what exceeds the masking threshold
 * m / mask, or 0 (libvmaf's e < t ? 0 : e - t is max(e - t, 0) bit for
 * bit: e - t is never -0 or NaN), each weighted (csf e)^2.
 */
HVS_ALWAYS_INLINE float hvs_dc_term(const int32_t blk[2][64], const float csf[64])
{
    const float dc = (float)abs(blk[0][0] - blk[1][0]);
    return (dc * csf[0]) * (dc * csf[0]);
}

HVS_ALWAYS_INLINE float hvs_ac_term(const int32_t blk[2][64], float m, const float csf[64],
                                    const float mask[64], int k)
{
    const float over = (float)abs(blk[0][k] - blk[1][k]) - m / mask[k];
    const float e = over > 0.f ? over : 0.f;
    return (e * csf[k]) * (e * csf[k]);
}

/* All 64 terms of a block position, in order.  Transforms the blocks in
 * place. */
HVS_ALWAYS_INLINE void hvs_block_terms(HvsBlockPair blk, const float csf[64],
                                       const float mask[64], float terms[64])
{
    const float m = hvs_masking(blk, mask);
    terms[0] = hvs_dc_term(blk, csf);
    for (int k = 1; k < 64; k++) terms[k] = hvs_ac_term(blk, m, csf, mask, k);
}

#if !defined(__CUDACC__)
/* ---- the host's part ---------------------------------------------------- */

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { HVS_KEY_Y, HVS_KEY_CB, HVS_KEY_CR, HVS_KEY_ALL, HVS_KEY_COUNT };

typedef struct PsnrHvsState {
    unsigned bitdepth;
    unsigned key[HVS_KEY_COUNT];
    /* Contrast sensitivity per plane (Xiph's tables, as float), and
     * (csf * HVS_MASK_SCALE)^2, formed in double, kept in float. */
    float csf[3][64];
    float mask[3][64];
} PsnrHvsState;

/* The block positions of a frame, as the GPU twins number them: each
 * plane's size (the picture's), block positions per row and in all, and
 * the index of each plane's first one, the planes numbered in turn. */
typedef struct PsnrHvsLayout {
    unsigned width[3], height[3];
    unsigned cols[3], blocks[3], base[3];
    unsigned total;
} PsnrHvsLayout;

void psnr_hvs_layout(const QualeVideoFormat *format, PsnrHvsLayout *layout);

/* 0 if the metric scores this format; otherwise -EINVAL and the reason in
 * error (the message the CPU logs). */
int psnr_hvs_check_format(const QualeVideoFormat *format, char *error, size_t error_size);

/* Each plane's float sum of terms, as the C reference adds them, and the
 * number of terms (64 per block position). */
void psnr_hvs_frame_sums(const PsnrHvsState *s, const QualePicture *ref, const QualePicture *dist,
                         float sum[3], uint64_t count[3]);

/* The values of the keys, in key order (HVS_KEY_Y .. HVS_KEY_ALL), from
 * the planes' sums and counts. */
void psnr_hvs_values(const PsnrHvsState *s, const float sum[3], const uint64_t count[3],
                     double value[HVS_KEY_COUNT]);

/* Writes the frame's keys from the planes' sums and counts. */
int psnr_hvs_write(const PsnrHvsState *s, FeatureSink *sink, unsigned index, const float sum[3],
                   const uint64_t count[3]);

extern const Metric metric_psnr_hvs;

#ifdef __cplusplus
}
#endif
#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_PSNR_HVS_H */
