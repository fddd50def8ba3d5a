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
 * integer arithmetic.  The arithmetic of one block position is in
 * psnr_hvs_tmpl.h, instantiated in psnr_hvs.h (which the CUDA twin
 * compiles too) and on vectors of neighbouring block positions by the
 * x86 kernels (PsnrHvsDsp): a block row's terms come from the kernel, and
 * the plane's float sum adds them here, in libvmaf's order.
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
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "cpu.h"
#include "metric.h"
#include "psnr_hvs.h"
#include "metrics/common/scratch.h"

/* The DCT rounds negative products with an arithmetic right shift. */
_Static_assert((-3 >> 1) == -2, "arithmetic right shift of negative values");

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

static const char *const psnr_hvs_keys[HVS_KEY_COUNT + 1] = {
    "psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs", NULL,
};

/* ---- the C kernel ------------------------------------------------------ */

static void psnr_hvs_block_terms_c(const int32_t *ref, const int32_t *dist, ptrdiff_t stride,
                              unsigned count, const float csf[64], const float mask[64],
                              float *terms, size_t terms_stride)
{
    for (unsigned i = 0; i < count; i++) {
        HvsBlockPair blk;
        for (int r = 0; r < HVS_BLOCK; r++) {
            for (int j = 0; j < HVS_BLOCK; j++) {
                blk[0][8 * r + j] = ref[r * stride + HVS_STEP * i + j];
                blk[1][8 * r + j] = dist[r * stride + HVS_STEP * i + j];
            }
        }
        float t[64];
        hvs_block_terms(blk, csf, mask, t);
        for (int k = 0; k < 64; k++) terms[k * terms_stride + i] = t[k];
    }
}

/* The dsp of one instruction set's kernels. */
#define PSNR_HVS_KERNELS(isa) (PsnrHvsDsp){ .block_terms = psnr_hvs_block_terms_##isa }

void psnr_hvs_dsp_init(PsnrHvsDsp *dsp, unsigned cpu_flags)
{
    CPU_PICK_KERNELS(*dsp, PSNR_HVS_KERNELS, cpu_flags);
}

/* ---- one plane ---------------------------------------------------------- */

/* Per worker: 8 rows of int32 samples of each picture (a block row), and
 * the terms of a block row. */
typedef struct PsnrHvsScratch {
    int32_t *strip[2];
    size_t strip_stride;
    float *terms;
    size_t terms_stride;
} PsnrHvsScratch;

/* Rows y .. y + 7 of a plane as int32. */
HVS_ALWAYS_INLINE void hvs_strip(const uint8_t *plane, ptrdiff_t stride, unsigned y,
                                        unsigned w, bool hbd, int32_t *strip, size_t strip_stride)
{
    for (unsigned r = 0; r < HVS_BLOCK; r++) {
        const uint8_t *p = plane + (ptrdiff_t)(y + r) * stride;
        int32_t *restrict out = strip + r * strip_stride;
        if (hbd) {
            const uint16_t *restrict row = (const uint16_t *)p;
            /* Samples above HVS_MAX_BITDEPTH bits, which only an API caller
             * can send (the readers clamp), would overflow the int32 DCT;
             * in-range samples are unchanged. */
            const int32_t top = (int32_t)((1u << HVS_MAX_BITDEPTH) - 1);
            for (unsigned x = 0; x < w; x++) out[x] = row[x] > top ? top : row[x];
        } else {
            const uint8_t *restrict row = p;
            for (unsigned x = 0; x < w; x++) out[x] = row[x];
        }
    }
}

/*
 * The float error sum of a plane over every block, libvmaf's order (block
 * raster, then each block's terms in coefficient raster), and the number
 * of terms it added.  w and h are at least 8.
 */
HVS_ALWAYS_INLINE float hvs_plane_sum(const PsnrHvsState *s, PsnrHvsScratch *t,
                                             const uint8_t *ref, ptrdiff_t ref_stride,
                                             const uint8_t *dis, ptrdiff_t dis_stride,
                                             unsigned w, unsigned h, const float csf[64],
                                             const float mask[64], bool hbd, uint64_t *count)
{
    const unsigned cols = hvs_positions(w);
    const size_t ts = t->terms_stride;
    float sum = 0.f;
    uint64_t blocks = 0;
    for (unsigned y = 0; y + HVS_BLOCK <= h; y += HVS_STEP) {
        hvs_strip(ref, ref_stride, y, w, hbd, t->strip[0], t->strip_stride);
        hvs_strip(dis, dis_stride, y, w, hbd, t->strip[1], t->strip_stride);
        s->dsp.block_terms(t->strip[0], t->strip[1], (ptrdiff_t)t->strip_stride, cols, csf, mask,
                           t->terms, ts);
        for (unsigned i = 0; i < cols; i++)
            for (unsigned k = 0; k < 64; k++) sum += t->terms[k * ts + i];
        blocks += cols;
    }
    *count = 64 * blocks;
    return sum;
}

static float hvs_plane_sum_8(const PsnrHvsState *s, PsnrHvsScratch *t, const uint8_t *ref,
                             ptrdiff_t ref_stride, const uint8_t *dis, ptrdiff_t dis_stride,
                             unsigned w, unsigned h, const float csf[64], const float mask[64],
                             uint64_t *count)
{
    return hvs_plane_sum(s, t, ref, ref_stride, dis, dis_stride, w, h, csf, mask, false, count);
}

static float hvs_plane_sum_16(const PsnrHvsState *s, PsnrHvsScratch *t, const uint8_t *ref,
                              ptrdiff_t ref_stride, const uint8_t *dis, ptrdiff_t dis_stride,
                              unsigned w, unsigned h, const float csf[64], const float mask[64],
                              uint64_t *count)
{
    return hvs_plane_sum(s, t, ref, ref_stride, dis, dis_stride, w, h, csf, mask, true, count);
}

/* 10 * -log10(score), libvmaf's convert_score_db with weight 1. */
static double hvs_db(double score)
{
    return 10. * -log10(score);
}

/* ---- shared with the twins ------------------------------------------------ */

int psnr_hvs_check_format(const QualeVideoFormat *f, char *error, size_t error_size)
{
    if (f->bitdepth > HVS_MAX_BITDEPTH) {
        snprintf(error, error_size,
                 "psnr_hvs: %u-bit video is not supported (at most %u bits, as libvmaf)",
                 f->bitdepth, HVS_MAX_BITDEPTH);
        return -EINVAL;
    }
    if (f->chroma == QUALE_CHROMA_400) {
        snprintf(error, error_size,
                 "psnr_hvs: 4:0:0 video is not supported: it scores Cb and Cr too");
        return -EINVAL;
    }
    const unsigned cw = f->chroma == QUALE_CHROMA_444 ? f->width : (f->width + 1) / 2;
    const unsigned ch = f->chroma == QUALE_CHROMA_420 ? (f->height + 1) / 2 : f->height;
    if (cw < HVS_BLOCK || ch < HVS_BLOCK || f->width < HVS_BLOCK || f->height < HVS_BLOCK) {
        snprintf(error, error_size,
                 "psnr_hvs: a %ux%u %s picture has a plane smaller than its 8x8 block "
                 "(chroma %ux%u; libvmaf would write NaN)",
                 f->width, f->height, quale_chroma_name(f->chroma), cw, ch);
        return -EINVAL;
    }
    return 0;
}

void psnr_hvs_layout(const QualeVideoFormat *f, PsnrHvsLayout *l)
{
    /* the picture's plane sizes (picture.c) */
    const unsigned ss_x = f->chroma == QUALE_CHROMA_420 || f->chroma == QUALE_CHROMA_422;
    const unsigned ss_y = f->chroma == QUALE_CHROMA_420;
    l->total = 0;
    for (unsigned p = 0; p < 3; p++) {
        l->width[p] = p ? (f->width + ss_x) >> ss_x : f->width;
        l->height[p] = p ? (f->height + ss_y) >> ss_y : f->height;
        l->cols[p] = hvs_positions(l->width[p]);
        l->blocks[p] = l->cols[p] * hvs_positions(l->height[p]);
        l->base[p] = l->total;
        l->total += l->blocks[p];
    }
}

void psnr_hvs_values(const PsnrHvsState *s, const float sum[3], const uint64_t count[3],
                     double value[HVS_KEY_COUNT])
{
    /* int32 in libvmaf, converted to float for the division */
    const int32_t peak = (int32_t)(1u << s->bitdepth) - 1;
    double score[3];
    for (unsigned p = 0; p < 3; p++) {
        float v = sum[p];
        v /= (float)count[p];
        v /= (float)(peak * peak);
        score[p] = v;
        value[p] = hvs_db(score[p]);
    }
    const double all = score[0] * .8 + .1 * (score[1] + score[2]);
    value[HVS_KEY_ALL] = hvs_db(all);
}

int psnr_hvs_write(const PsnrHvsState *s, FeatureSink *sink, unsigned index, const float sum[3],
                   const uint64_t count[3])
{
    double value[HVS_KEY_COUNT];
    psnr_hvs_values(s, sum, count, value);
    int err = 0;
    for (unsigned k = 0; k < HVS_KEY_COUNT && !err; k++)
        err = feature_sink_put(sink, s->key[k], index, value[k]);
    return err;
}

void psnr_hvs_frame_sums(const PsnrHvsState *s, void *scratch, const QualePicture *ref,
                         const QualePicture *dis, float sum[3], uint64_t count[3])
{
    const bool hbd = s->bitdepth > 8;
    for (unsigned p = 0; p < 3; p++) {
        sum[p] = (hbd ? hvs_plane_sum_16 : hvs_plane_sum_8)(
            s, scratch, ref->data[p], ref->stride[p], dis->data[p], dis->stride[p],
            ref->plane_width[p], ref->plane_height[p], s->csf[p], s->mask[p], &count[p]);
    }
}

void psnr_hvs_tables(unsigned plane, float csf[64], float mask[64])
{
    for (int k = 0; k < 64; k++) {
        csf[k] = hvs_csf[plane][k];
        const double c = hvs_csf[plane][k] * HVS_MASK_SCALE;
        mask[k] = (float)(c * c);
    }
}

/* ---- descriptor ----------------------------------------------------------- */

static int psnr_hvs_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    PsnrHvsState *s = state;
    char error[256];
    int err = psnr_hvs_check_format(f, error, sizeof(error));
    if (err) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s", error);
        return err;
    }

    s->bitdepth = f->bitdepth;
    s->width = f->width;
    psnr_hvs_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));
    for (unsigned p = 0; p < 3; p++) psnr_hvs_tables(p, s->csf[p], s->mask[p]);

    return feature_sink_declare_keys(sink, psnr_hvs_keys, HVS_KEY_COUNT, s->key);
}

static void psnr_hvs_scratch_free(void *scratch)
{
    PsnrHvsScratch *t = scratch;
    SCRATCH_FREE(t, t->strip[0], t->strip[1], t->terms);
}

static int psnr_hvs_scratch_alloc(const void *state, void **scratch)
{
    const PsnrHvsState *s = state;
    PsnrHvsScratch *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    /* the luma plane is the widest */
    t->strip_stride = quale_align(s->width, QUALE_ALIGNMENT / sizeof(int32_t));
    t->terms_stride = quale_align(hvs_positions(s->width), HVS_TERMS_ALIGN);
    for (int b = 0; b < 2; b++)
        t->strip[b] = quale_aligned_alloc(HVS_BLOCK * t->strip_stride * sizeof(int32_t));
    t->terms = quale_aligned_alloc(64 * t->terms_stride * sizeof(float));
    return scratch_hand_over(scratch, t, t->strip[0] && t->strip[1] && t->terms,
                             psnr_hvs_scratch_free);
}

static int psnr_hvs_extract(const void *state, void *scratch, const MetricFrame *frame,
                            FeatureSink *sink)
{
    const PsnrHvsState *s = state;
    float sum[3];
    uint64_t count[3];
    psnr_hvs_frame_sums(s, scratch, frame->ref, frame->dist, sum, count);
    return psnr_hvs_write(s, sink, frame->index, sum, count);
}

static const MetricModelFeature psnr_hvs_model_features[] = {
    { "psnr_hvs_y", "psnr_hvs_y" },
    { "psnr_hvs_cb", "psnr_hvs_cb" },
    { "psnr_hvs_cr", "psnr_hvs_cr" },
    { "psnr_hvs", "psnr_hvs" },
    { NULL, NULL },
};

const Metric metric_psnr_hvs = {
    .name = "psnr_hvs",
    .keys = psnr_hvs_keys,
    .model_features = psnr_hvs_model_features,
    .state_size = sizeof(PsnrHvsState),
    .init = psnr_hvs_init,
    .scratch_alloc = psnr_hvs_scratch_alloc,
    .scratch_free = psnr_hvs_scratch_free,
    .extract = psnr_hvs_extract,
};
