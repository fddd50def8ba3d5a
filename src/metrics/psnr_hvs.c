/*
 * PSNR-HVS ("psnr_hvs": psnr_hvs_y, psnr_hvs_cb, psnr_hvs_cr, psnr_hvs), as
 * libvmaf computes it with Xiph's algorithm (Egiazarian, Ponomarenko et al.,
 * with Xiph's masking constant).
 *
 * Each plane is cut into 8x8 blocks whose top-left corners step by 7 in
 * both directions (x, y = 0, 7, 14, ... while the block fits).  For every
 * block of the reference and of the distorted picture:
 *   - the variance of the whole block and of its four 4x4 quadrants, each
 *     the unbiased estimate (sum of squared deviations * n / (n - 1)), and
 *     the ratio vq = (sum of the quadrant variances) / (block variance)
 *     when the block variance is positive;
 *   - Xiph's integer 8x8 DCT (Daala's lifting od_bin_fdct8x8);
 *   - the masking energy m = sqrt(vq * sum_{AC} c^2 * mask) / 32, with
 *     mask = (0.3885746225901003 * csf)^2.
 * With M the larger of the two maskings, every coefficient adds
 *   (csf * e)^2,  e = |c_ref - c_dist|, less M / mask for the AC
 *                 coefficients (and 0 if that goes negative),
 * to a float sum.  The plane's score is sum / (64 * blocks) / peak^2,
 * peak = 2^bitdepth - 1, and its key 10 * -log10(score).  psnr_hvs is
 * the dB of 0.8 * score_y + 0.1 * (score_cb + score_cr).  Every chroma
 * plane uses the 4:2:0 Cb and Cr tables, whatever the subsampling.
 *
 * Floating-point types and orders are libvmaf's: the block statistics, the
 * masking and the error sum are float (the error sum runs over the whole
 * plane in block-raster, then coefficient-raster order), the square root
 * of the masking and the final mixing are double.  The DCT is exact
 * integer arithmetic.
 *
 * Formats: 4:0:0 and bit depths above 12 are refused, as libvmaf refuses
 * them.  A plane smaller than 8x8 has no block (libvmaf divides 0 by 0 and
 * writes NaN); such pictures are refused.  Planes are scored at the
 * sizes of the picture: (w + 1) / 2 for odd subsampled widths, where
 * libvmaf's pictures have w / 2 (its CLI cannot read odd-sized 4:2:0 or
 * 4:2:2 files consistently), so odd sizes are not comparable with it.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"
#include "metric.h"

#if defined(__GNUC__)
#define HVS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define HVS_ALWAYS_INLINE inline
#endif

/* The DCT rounds negative products with an arithmetic right shift. */
_Static_assert((-3 >> 1) == -2, "arithmetic right shift of negative values");

#define HVS_BLOCK 8
#define HVS_STEP 7
#define HVS_MAX_BITDEPTH 12u
/* Xiph's constant: csf * 0.38857 squared gives the masking table of the
 * PSNR-HVS-M paper. */
#define HVS_MASK_SCALE 0.3885746225901003

/*
 * Contrast sensitivity: the normalised inverse quantisation matrices at the
 * point of transparency, [vertical frequency][horizontal frequency], from
 * Xiph's implementation (data, reproduced as libvmaf has them).  Double
 * literals rounded to float by the initialiser, as in libvmaf: a decimal
 * rounded straight to float could differ in the last bit.
 */
static const float hvs_csf[3][64] = {
    { /* Y */
        1.6193873005, 2.2901594831, 2.08509755623, 1.48366094411,
        1.00227514334, 0.678296995242, 0.466224900598, 0.3265091542,
        2.2901594831, 1.94321815382, 2.04793073064, 1.68731108984,
        1.2305666963, 0.868920337363, 0.61280991668, 0.436405793551,
        2.08509755623, 2.04793073064, 1.34329019223, 1.09205635862,
        0.875748795257, 0.670882927016, 0.501731932449, 0.372504254596,
        1.48366094411, 1.68731108984, 1.09205635862, 0.772819797575,
        0.605636379554, 0.48309405692, 0.380429446972, 0.295774038565,
        1.00227514334, 1.2305666963, 0.875748795257, 0.605636379554,
        0.448996256676, 0.352889268808, 0.283006984131, 0.226951348204,
        0.678296995242, 0.868920337363, 0.670882927016, 0.48309405692,
        0.352889268808, 0.27032073436, 0.215017739696, 0.17408067321,
        0.466224900598, 0.61280991668, 0.501731932449, 0.380429446972,
        0.283006984131, 0.215017739696, 0.168869545842, 0.136153931001,
        0.3265091542, 0.436405793551, 0.372504254596, 0.295774038565,
        0.226951348204, 0.17408067321, 0.136153931001, 0.109083846276,
    },
    { /* Cb, 4:2:0 */
        1.91113096927, 2.46074210438, 1.18284184739, 1.14982565193,
        1.05017074788, 0.898018824055, 0.74725392039, 0.615105596242,
        2.46074210438, 1.58529308355, 1.21363250036, 1.38190029285,
        1.33100189972, 1.17428548929, 0.996404342439, 0.830890433625,
        1.18284184739, 1.21363250036, 0.978712413627, 1.02624506078,
        1.03145147362, 0.960060382087, 0.849823426169, 0.731221236837,
        1.14982565193, 1.38190029285, 1.02624506078, 0.861317501629,
        0.801821139099, 0.751437590932, 0.685398513368, 0.608694761374,
        1.05017074788, 1.33100189972, 1.03145147362, 0.801821139099,
        0.676555426187, 0.605503172737, 0.55002013668, 0.495804539034,
        0.898018824055, 1.17428548929, 0.960060382087, 0.751437590932,
        0.605503172737, 0.514674450957, 0.454353482512, 0.407050308965,
        0.74725392039, 0.996404342439, 0.849823426169, 0.685398513368,
        0.55002013668, 0.454353482512, 0.389234902883, 0.342353999733,
        0.615105596242, 0.830890433625, 0.731221236837, 0.608694761374,
        0.495804539034, 0.407050308965, 0.342353999733, 0.295530605237,
    },
    { /* Cr, 4:2:0 */
        2.03871978502, 2.62502345193, 1.26180942886, 1.11019789803,
        1.01397751469, 0.867069376285, 0.721500455585, 0.593906509971,
        2.62502345193, 1.69112867013, 1.17180569821, 1.3342742857,
        1.28513006198, 1.13381474809, 0.962064122248, 0.802254508198,
        1.26180942886, 1.17180569821, 0.944981930573, 0.990876405848,
        0.995903384143, 0.926972725286, 0.820534991409, 0.706020324706,
        1.11019789803, 1.3342742857, 0.990876405848, 0.831632933426,
        0.77418706195, 0.725539939514, 0.661776842059, 0.587716619023,
        1.01397751469, 1.28513006198, 0.995903384143, 0.77418706195,
        0.653238524286, 0.584635025748, 0.531064164893, 0.478717061273,
        0.867069376285, 1.13381474809, 0.926972725286, 0.725539939514,
        0.584635025748, 0.496936637883, 0.438694579826, 0.393021669543,
        0.721500455585, 0.962064122248, 0.820534991409, 0.661776842059,
        0.531064164893, 0.438694579826, 0.375820256136, 0.330555063063,
        0.593906509971, 0.802254508198, 0.706020324706, 0.587716619023,
        0.478717061273, 0.393021669543, 0.330555063063, 0.285345396658,
    },
};

enum { HVS_KEY_Y, HVS_KEY_CB, HVS_KEY_CR, HVS_KEY_ALL, HVS_KEY_COUNT };

static const char *const psnr_hvs_keys[HVS_KEY_COUNT + 1] = {
    "psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs", NULL,
};

typedef struct PsnrHvsState {
    unsigned bitdepth;
    unsigned key[HVS_KEY_COUNT];
    /* (csf * HVS_MASK_SCALE)^2 per plane, formed in double, kept in float */
    float mask[3][64];
} PsnrHvsState;

/* ---- Xiph's integer DCT ------------------------------------------------- */

/* One lifting step: v * c / 2^shift, rounded half up. */
static inline int32_t hvs_lift(int32_t v, int32_t c, int shift)
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
static HVS_ALWAYS_INLINE void hvs_fdct8(int32_t *out, const int32_t *x, ptrdiff_t stride)
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
static void hvs_fdct8_columns(int32_t *restrict out, const int32_t *restrict in)
{
    for (int c = 0; c < 8; c++) hvs_fdct8(out + c, in + c, 8);
}

static void hvs_transpose8x8(int32_t *restrict out, const int32_t *restrict in)
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
static void hvs_fdct8x8(int32_t blk[64])
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
static HVS_ALWAYS_INLINE void hvs_deviations(const int32_t *v, float mean, float qmean,
                                             float *var, float *qvar)
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
static HVS_ALWAYS_INLINE void hvs_variance_ratios(const HvsBlockPair blk, float ratio[2])
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
static HVS_ALWAYS_INLINE float hvs_masking(HvsBlockPair blk, const float mask[64])
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

/* ---- one plane ---------------------------------------------------------- */

static HVS_ALWAYS_INLINE void hvs_load_block(int32_t blk[64], const uint8_t *p, ptrdiff_t stride,
                                             bool hbd)
{
    for (int i = 0; i < 8; i++, p += stride) {
        if (hbd) {
            const uint16_t *row = (const uint16_t *)p;
            for (int j = 0; j < 8; j++) blk[8 * i + j] = row[j];
        } else {
            for (int j = 0; j < 8; j++) blk[8 * i + j] = p[j];
        }
    }
}

/*
 * The float error sum of a plane over every block, libvmaf's order, and
 * the number of coefficients it saw.  w and h are at least 8.
 */
static HVS_ALWAYS_INLINE float hvs_plane_sum(const uint8_t *ref, ptrdiff_t ref_stride,
                                             const uint8_t *dis, ptrdiff_t dis_stride,
                                             unsigned w, unsigned h, const float csf[64],
                                             const float mask[64], bool hbd, uint64_t *count)
{
    const size_t bytes = hbd ? 2 : 1;
    float sum = 0.f;
    uint64_t blocks = 0;
    for (unsigned y = 0; y + HVS_BLOCK <= h; y += HVS_STEP) {
        for (unsigned x = 0; x + HVS_BLOCK <= w; x += HVS_STEP) {
            HvsBlockPair blk;
            hvs_load_block(blk[0], ref + (ptrdiff_t)y * ref_stride + x * bytes, ref_stride, hbd);
            hvs_load_block(blk[1], dis + (ptrdiff_t)y * dis_stride + x * bytes, dis_stride, hbd);
            const float m = hvs_masking(blk, mask);

            /* DC: the plain difference; AC: what exceeds the masking
             * threshold m / mask, or 0.  libvmaf's e < t ? 0 : e - t is
             * max(e - t, 0) bit for bit (e - t is never -0 or NaN). */
            const float dc = (float)abs(blk[0][0] - blk[1][0]);
            sum += (dc * csf[0]) * (dc * csf[0]);
            for (int k = 1; k < 64; k++) {
                const float over = (float)abs(blk[0][k] - blk[1][k]) - m / mask[k];
                const float e = over > 0.f ? over : 0.f;
                sum += (e * csf[k]) * (e * csf[k]);
            }
            blocks++;
        }
    }
    *count = 64 * blocks;
    return sum;
}

static float hvs_plane_sum_8(const uint8_t *ref, ptrdiff_t ref_stride, const uint8_t *dis,
                             ptrdiff_t dis_stride, unsigned w, unsigned h, const float csf[64],
                             const float mask[64], uint64_t *count)
{
    return hvs_plane_sum(ref, ref_stride, dis, dis_stride, w, h, csf, mask, false, count);
}

static float hvs_plane_sum_16(const uint8_t *ref, ptrdiff_t ref_stride, const uint8_t *dis,
                              ptrdiff_t dis_stride, unsigned w, unsigned h, const float csf[64],
                              const float mask[64], uint64_t *count)
{
    return hvs_plane_sum(ref, ref_stride, dis, dis_stride, w, h, csf, mask, true, count);
}

/* 10 * -log10(score), libvmaf's convert_score_db with weight 1. */
static double hvs_db(double score)
{
    return 10. * -log10(score);
}

/* ---- descriptor ----------------------------------------------------------- */

static int psnr_hvs_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    PsnrHvsState *s = state;
    if (f->bitdepth > HVS_MAX_BITDEPTH) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "psnr_hvs: %u-bit video is not supported (at most %u bits, as libvmaf)",
                         f->bitdepth, HVS_MAX_BITDEPTH);
        return -EINVAL;
    }
    if (f->chroma == QUALE_CHROMA_400) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "psnr_hvs: 4:0:0 video is not supported: it scores Cb and Cr too");
        return -EINVAL;
    }
    const unsigned cw = f->chroma == QUALE_CHROMA_444 ? f->width : (f->width + 1) / 2;
    const unsigned ch = f->chroma == QUALE_CHROMA_420 ? (f->height + 1) / 2 : f->height;
    if (cw < HVS_BLOCK || ch < HVS_BLOCK || f->width < HVS_BLOCK || f->height < HVS_BLOCK) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "psnr_hvs: a %ux%u %s picture has a plane smaller than its 8x8 block "
                         "(chroma %ux%u; libvmaf would write NaN)",
                         f->width, f->height, quale_chroma_name(f->chroma), cw, ch);
        return -EINVAL;
    }

    s->bitdepth = f->bitdepth;
    for (int p = 0; p < 3; p++) {
        for (int k = 0; k < 64; k++) {
            const double c = hvs_csf[p][k] * HVS_MASK_SCALE;
            s->mask[p][k] = (float)(c * c);
        }
    }

    int err = 0;
    for (unsigned k = 0; k < HVS_KEY_COUNT && !err; k++)
        err = feature_sink_declare(sink, psnr_hvs_keys[k], &s->key[k]);
    return err;
}

static int psnr_hvs_extract(const void *state, void *scratch, const MetricFrame *frame,
                            FeatureSink *sink)
{
    const PsnrHvsState *s = state;
    const QualePicture *ref = frame->ref, *dis = frame->dist;
    const bool hbd = s->bitdepth > 8;
    /* int32 in libvmaf, converted to float for the division */
    const int32_t peak = (int32_t)(1u << s->bitdepth) - 1;

    double score[3];
    for (unsigned p = 0; p < 3; p++) {
        uint64_t count;
        float sum = (hbd ? hvs_plane_sum_16 : hvs_plane_sum_8)(
            ref->data[p], ref->stride[p], dis->data[p], dis->stride[p],
            ref->plane_width[p], ref->plane_height[p], hvs_csf[p], s->mask[p], &count);
        sum /= (float)count;
        sum /= (float)(peak * peak);
        score[p] = sum;
        int err = feature_sink_put(sink, s->key[p], frame->index, hvs_db(score[p]));
        if (err) return err;
    }
    const double all = score[0] * .8 + .1 * (score[1] + score[2]);
    return feature_sink_put(sink, s->key[HVS_KEY_ALL], frame->index, hvs_db(all));
}

const Metric metric_psnr_hvs = {
    .name = "psnr_hvs",
    .keys = psnr_hvs_keys,
    .state_size = sizeof(PsnrHvsState),
    .init = psnr_hvs_init,
    .extract = psnr_hvs_extract,
};
