/*
 * Integer ADM: libvmaf's "adm" extractor (integer_adm.c), bit-exact.
 *
 * Keys: integer_adm2 (the detail loss measure, DLM), integer_aim (the
 * additive impairment measure), integer_adm3 (their blend) and
 * integer_adm_scale0..3; with debug also integer_adm, integer_adm_num,
 * integer_adm_den and the numerator and denominator of every scale.
 *
 * Four levels of a Daubechies-2 DWT of the luma plane.  At every level:
 *  1. DWT of the reference (o) and the distorted (t) picture into an
 *     approximation band a and detail bands h, v, d.
 *  2. Decoupling: per orientation, the restored part of the distortion
 *     r = clamp(t / o, 0, 1) * o, allowed to grow up to adm_enhn_gain_limit
 *     times (never past t) where the (h, v) vectors of o and t point within
 *     one degree of each other; the additive impairment is t - r.
 *  3. CSF weighting of every orientation (Watson's wavelet noise
 *     thresholds by default), and a contrast-masking threshold: the sum
 *     over h, v, d of the weighted impairment's 3x3 neighbourhood
 *     (|x| / 30 around, |x| / 15 at the centre).
 *  4. num = (sum of max(|csf(r)| - threshold, 0)^3)^(1/3) + noise floor,
 *     den = (sum of |csf(o)|^3)^(1/3) + noise floor, per orientation, over
 *     the picture less a 10% border.
 * AIM does step 3 and 4 the other way round: the additive impairment
 * against the masking of the restored part, without noise floor.
 *   adm2 = sum num / sum den, aim = sum aim_num / sum den,
 *   adm3 = max(adm2 * w + (1 - aim) * (1 - w), adm_min_val),
 *   w = adm_dlm_weight.
 *
 * libvmaf runs level 0 in 16-bit arithmetic (int16 bands, Q15 gains) and
 * levels 1..3 in 32-bit arithmetic (int32 bands, Q32 gains), each with its
 * own rounding shifts; every one of them is reproduced here, quirks
 * included (the scale 1..3 "round half" constants that subtract, the
 * 65535 rounding term of the diagonal CSF, the asymmetric mirroring of the
 * masking window).  Where libvmaf's C lets an intermediate wrap, this code
 * wraps the same way through unsigned arithmetic instead of relying on
 * signed overflow.  Bands are kept in int32 at every level; the level-0
 * values are narrowed to int16 wherever libvmaf stores them in int16.
 *
 * A level is computed row by row, in row bands that run on idle workers
 * (level_band), through a table of row kernels (AdmDsp, integer_adm.h):
 * the C ones here, AVX2 and AVX-512 ones in x86/, picked at init from the
 * CPU flags and all giving the same bits.
 *
 * The float part (CSF weights, cube roots, the final ratios) follows
 * libvmaf's expression types and order: float where it computes in float,
 * double where it promotes, with the same libm calls.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/common/adm_csf.h"
#include "common.h"
#include "integer_adm_private.h"
#include "integer_adm.h"
#include "metric.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif


/* ---- keys ------------------------------------------------------------------ */

enum {
    KEY_ADM2, KEY_AIM, KEY_ADM3, KEY_SCALE0,
    KEY_ADM = KEY_SCALE0 + ADM_SCALES, KEY_NUM, KEY_DEN, KEY_NUM_SCALE0,
    KEY_COUNT = KEY_NUM_SCALE0 + 2 * ADM_SCALES,
    KEY_MAIN_COUNT = KEY_ADM,
};
_Static_assert(KEY_COUNT == ADM_KEY_COUNT && KEY_MAIN_COUNT == ADM_KEY_MAIN_COUNT,
               "integer_adm.h counts the keys");

static const char *const adm_keys[] = {
    "integer_adm2", "integer_aim", "integer_adm3",
    "integer_adm_scale0", "integer_adm_scale1", "integer_adm_scale2", "integer_adm_scale3",
    /* with debug */
    "integer_adm", "integer_adm_num", "integer_adm_den",
    "integer_adm_num_scale0", "integer_adm_den_scale0",
    "integer_adm_num_scale1", "integer_adm_den_scale1",
    "integer_adm_num_scale2", "integer_adm_den_scale2",
    "integer_adm_num_scale3", "integer_adm_den_scale3",
    NULL,
};

/* ---- state and options ----------------------------------------------------- */

/* AdmState: integer_adm.h */

static const MetricOption adm_options[] = {
    { .name = "debug", .help = "debug mode: enable additional output",
      .offset = offsetof(AdmState, debug), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "adm_csf_scale", .alias = "scf",
      .help = "scale coefficient for the horizontal & vertical direction terms of CSF",
      .offset = offsetof(AdmState, csf_scale), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.0, .max = 50.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_csf_diag_scale", .alias = "scfd",
      .help = "scale coefficient for the diagonal direction term of CSF",
      .offset = offsetof(AdmState, csf_diag_scale), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.0, .max = 50.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_dlm_weight", .alias = "dlmw",
      .help = "linear weighting between DLM and AIM; 1 corresponds to DLM-only",
      .offset = offsetof(AdmState, dlm_weight), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.5, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_enhn_gain_limit", .alias = "egl",
      .help = "enhancement gain imposed on adm, must be >= 1.0, "
              "where 1.0 means the gain is completely disabled",
      .offset = offsetof(AdmState, enhn_gain_limit), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 100.0, .min = 1.0, .max = 100.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_norm_view_dist", .alias = "nvd",
      .help = "normalized viewing distance = viewing distance / ref display's physical height",
      .offset = offsetof(AdmState, norm_view_dist), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 3.0, .min = 0.75, .max = 24.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_ref_display_height", .alias = "rdh",
      .help = "reference display height in pixels",
      .offset = offsetof(AdmState, ref_display_height), .type = QUALE_OPTION_INT,
      .default_value.i = 1080, .min = 1, .max = 4320, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_csf_mode", .alias = "csf",
      .help = "contrast sensitivity function",
      .offset = offsetof(AdmState, csf_mode), .type = QUALE_OPTION_INT,
      .default_value.i = ADM_CSF_WATSON97, .min = 0, .max = 3, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_noise_weight", .alias = "nw", .help = "noise weight",
      .offset = offsetof(AdmState, noise_weight), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.03125, .min = 0.0, .max = 1500.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_skip_aim", .help = "skip the calculation of AIM",
      .offset = offsetof(AdmState, skip_aim), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "adm_skip_scale0", .alias = "ssz", .help = "skip the calculation of scale 0",
      .offset = offsetof(AdmState, skip_scale0), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_min_val", .alias = "min",
      .help = "minimum value allowed; lower values will be clipped to this value",
      .offset = offsetof(AdmState, min_val), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.0, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

/* The scored region: the picture less 10% on every side (libvmaf's
 * ADM_BORDER_FACTOR), or that region grown by the filter taps of the
 * 3x3 masking window (one sample before, two after). */

AdmRect adm_rect_scored(int w, int h)
{
    Rect r;
    r.left = (int)(w * 0.1 - 0.5);
    r.top = (int)(h * 0.1 - 0.5);
    r.right = w - r.left;
    r.bottom = h - r.top;
    return r;
}

AdmRect adm_rect_with_taps(int w, int h)
{
    Rect r;
    r.left = (int)(w * 0.1 - 0.5 - 1);
    r.top = (int)(h * 0.1 - 0.5 - 1);
    r.right = w - r.left + 2;
    r.bottom = h - r.top + 2;
    r.left = QUALE_MAX(r.left, 0);
    r.top = QUALE_MAX(r.top, 0);
    r.right = QUALE_MIN(r.right, w);
    r.bottom = QUALE_MIN(r.bottom, h);
    return r;
}

/* ---- contrast sensitivity ---------------------------------------------------- */

/* Barten/Watson blends, tabulated per display: [0] h and v, [1] d, per
 * level.  The _MAE set comes with the models of libvmaf 1.0.17 and later. */
typedef float BlendTable[2][ADM_SCALES];

static const BlendTable blend_1080_3h = { { 0.01183, 0.025026, 0.04295, 0.058621 },
                                          { 0.004302, 0.011778, 0.023918, 0.035901 } };
static const BlendTable blend_1080_5h = { { 0.004212, 0.014809, 0.029642, 0.047464 },
                                          { 0.000984, 0.005852, 0.0146, 0.027574 } };
static const BlendTable blend_2160_3h = { { 0.00226, 0.01183, 0.025026, 0.04295 },
                                          { 0.000479, 0.004302, 0.011778, 0.023918 } };
static const BlendTable blend_2160_5h = { { 0.000092, 0.004212, 0.014809, 0.029642 },
                                          { 0.000050, 0.000984, 0.005852, 0.0146 } };
static const BlendTable blend_720_3h = { { 0.018715, 0.035637, 0.052798, 0.061509 },
                                         { 0.007999, 0.018396, 0.031851, 0.037718 } };
static const BlendTable blend_720_5h = { { 0.010144, 0.022561, 0.040309, 0.05672 },
                                         { 0.003463, 0.010282, 0.021839, 0.034641 } };
static const BlendTable blend_480_3h = { { 0.027961, 0.045875, 0.060275, 0.056234 },
                                         { 0.013572, 0.026277, 0.036959, 0.034511 } };
static const BlendTable blend_480_5h = { { 0.016781, 0.032822, 0.05032, 0.061594 },
                                         { 0.00691, 0.016545, 0.029917, 0.037777 } };

static const BlendTable blend_mae_1080_3h = { { 0.011249, 0.022606, 0.035930, 0.045673 },
                                              { 0.004097, 0.010921, 0.021430, 0.031313 } };
static const BlendTable blend_mae_1080_5h = { { 0.004052, 0.013939, 0.026298, 0.038833 },
                                              { 0.000927, 0.005544, 0.013415, 0.024515 } };
static const BlendTable blend_mae_2160_3h = { { 0.002166, 0.011249, 0.022606, 0.035930 },
                                              { 0.000447, 0.004097, 0.010921, 0.021430 } };
static const BlendTable blend_mae_2160_5h = { { 0.000077, 0.004052, 0.013939, 0.026298 },
                                              { 0.000045, 0.000927, 0.005544, 0.013415 } };
static const BlendTable blend_mae_720_3h = { { 0.017329, 0.030870, 0.042134, 0.047410 },
                                             { 0.007509, 0.016707, 0.028072, 0.032722 } };
static const BlendTable blend_mae_720_5h = { { 0.009689, 0.020577, 0.034162, 0.044523 },
                                             { 0.003302, 0.009579, 0.019661, 0.030318 } };
static const BlendTable blend_mae_480_3h = { { 0.024969, 0.037825, 0.046676, 0.043974 },
                                             { 0.012511, 0.023424, 0.032139, 0.030166 } };
static const BlendTable blend_mae_480_5h = { { 0.015665, 0.028766, 0.040612, 0.047483 },
                                             { 0.006514, 0.015107, 0.026476, 0.032776 } };

/* The blend table of a display, NULL where libvmaf has none (it then uses
 * -EINVAL as the CSF weight, which its fixed point cannot represent). */
static const BlendTable *blend_table(bool mae, double view_dist, int display_height)
{
    static const struct {
        int height;
        double dist;
        const BlendTable *legacy, *mae;
    } displays[] = {
        { 1080, 3.0, &blend_1080_3h, &blend_mae_1080_3h },
        { 1080, 5.0, &blend_1080_5h, &blend_mae_1080_5h },
        /* 2160 at 1.5H has the pixels per degree of 1080 at 3H */
        { 2160, 1.5, &blend_1080_3h, &blend_mae_1080_3h },
        { 2160, 3.0, &blend_2160_3h, &blend_mae_2160_3h },
        { 2160, 5.0, &blend_2160_5h, &blend_mae_2160_5h },
        { 720, 3.0, &blend_720_3h, &blend_mae_720_3h },
        { 720, 5.0, &blend_720_5h, &blend_mae_720_5h },
        { 480, 3.0, &blend_480_3h, &blend_mae_480_3h },
        { 480, 5.0, &blend_480_5h, &blend_mae_480_5h },
    };
    for (unsigned i = 0; i < QUALE_ARRAY_SIZE(displays); i++)
        if (display_height == displays[i].height && view_dist == displays[i].dist)
            return mae ? displays[i].mae : displays[i].legacy;
    return NULL;
}

/* The CSF weight of a level for h and v (diag false) or d (diag true). */
static float csf_weight(const AdmState *s, int scale, bool diag)
{
    switch (s->csf_mode) {
    case ADM_CSF_BARTEN:
        return adm_csf_barten(scale, s->norm_view_dist, s->ref_display_height, 100.0,
                          diag ? s->csf_diag_scale : s->csf_scale);
    case ADM_CSF_BARTEN_WATSON_BLEND:
    case ADM_CSF_BARTEN_WATSON_BLEND_MAE: {
        const BlendTable *t = blend_table(s->csf_mode == ADM_CSF_BARTEN_WATSON_BLEND_MAE,
                                          s->norm_view_dist, s->ref_display_height);
        return (*t)[diag][scale];
    }
    default:
        return 1.0f / adm_csf_watson_quant_step(scale, diag ? 2 : 1, s->norm_view_dist,
                                        s->ref_display_height);
    }
}

/* ---- one frame ----------------------------------------------------------------- */

/* A level is computed row by row: the DWT of both pictures makes one row of
 * each band; the approximation goes to its plane (the next level's input),
 * the details only to row buffers, which the decoupling, the masking and
 * the sums read while they are in the cache.  The masked sums of a row
 * need the masking of the rows above and below it, so the decoupled rows
 * and the masking rows are kept in rings of three rows. */
enum { RING = 3 };

/* An approximation plane of int32 samples. */
typedef struct AdmPlane {
    int32_t *data;
    ptrdiff_t stride; /* in samples */
} AdmPlane;

typedef struct AdmScratch {
    /* The approximation bands of ref and dist: level 0 and 2 in [0],
     * level 1 and 3 in [1] (a level reads one while it writes the other,
     * so that its row bands can run at once).  Only the scratch of a
     * thread running extract() has them (made on its first frame): the
     * bands other threads run write to that one's. */
    AdmPlane approx[2][2];
    void *planes;
    int32_t *details[2][3];      /* one row of ref's and dist's h, v, d */
    int32_t *rst[RING][3];       /* restored details h, v, d, by row % RING */
    int32_t *add[RING][3];       /* additive impairment h, v, d */
    int32_t *around[2][RING];    /* masking of add (DLM) and of rst (AIM) */
    int32_t *centre[2][RING];
    int32_t *lo, *hi;            /* one row of the vertical DWT pass */
    uint32_t *col;               /* one row of masking column sums */
    int32_t *spare;              /* the approximation of a row another band writes */
    void *block;
} AdmScratch;

/* Rows i - 1 and i + 1 of the masking window (n rows), mirrored: -1 -> 1,
 * n -> n - 1. */
static inline int window_up(int i)
{
    return i == 0 ? 1 : i - 1;
}

static inline int window_down(int i, int n)
{
    return i == n - 1 ? n - 1 : i + 1;
}

/*
 * A level's rows are cut into bands that run as tasks (metric_run_tasks()),
 * so that one large frame spreads over the idle workers.  A band makes the
 * approximation rows [y0, y1) of the level and scores its rows of the
 * scored region; the masking window of its first and last scored rows
 * reads one row on either side, whose details the band makes again for
 * itself (the DWT, decoupling and masking of two rows).  A band needs the
 * row buffers of the thread that runs it and writes only its own rows of
 * the approximation planes (extract()'s scratch); its nine sums are
 * 64-bit integers, which the level adds in any order to the same total.
 * So neither the band size nor the thread count can change a digit, and
 * the bands follow the thread count (metric_band_rows()).
 */
enum { ADM_BAND_MIN_ROWS = 32 };

typedef struct AdmLevel {
    const AdmState *s;
    int scale;
    int w, h;                      /* the level's input */
    const QualePicture *pics[2];   /* level 0's input */
    AdmPlane in[2], out[2];        /* levels 1..3 read in; every level writes out */
    int band_rows, bands;
    uint64_t sums[METRIC_MAX_BANDS][ADM_LEVEL_SUMS];
} AdmLevel;

/* The bands of a level of `rows` rows: band_rows given (tests), or from
 * the thread count; never more than METRIC_MAX_BANDS of them. */
static void level_plan(AdmLevel *l, const MetricFrame *frame, int rows, unsigned band_rows)
{
    if (!band_rows) band_rows = metric_band_rows(frame, (unsigned)rows, ADM_BAND_MIN_ROWS);
    band_rows = QUALE_MAX(band_rows, ((unsigned)rows + METRIC_MAX_BANDS - 1) / METRIC_MAX_BANDS);
    l->band_rows = (int)QUALE_MIN(band_rows, (unsigned)rows);
    l->bands = (rows + l->band_rows - 1) / l->band_rows;
}

/* One band of a level (scale): the DWT rows [y0, y1) of the w x h input
 * (level 0: the pictures, levels 1..3: the previous approximation planes)
 * into the level's approximation planes, and, unless scale 0 is skipped,
 * the band's part of the level's nine sums (see ADM_LEVEL_SUMS). */
static void level_band(void *arg, unsigned band, void *scratch)
{
    AdmLevel *l = arg;
    AdmScratch *b = scratch;
    const AdmState *s = l->s;
    const AdmDsp *dsp = &s->dsp;
    const int scale = l->scale, w = l->w, h = l->h;
    const bool level0 = scale == 0;
    const bool score = !(level0 && s->skip_scale0);
    const int bw = adm_half(w), bh = adm_half(h);
    const int y0 = (int)band * l->band_rows, y1 = QUALE_MIN(y0 + l->band_rows, bh);
    const Rect r = adm_rect_scored(bw, bh);
    /* the band's scored rows, and the rows their masking windows read */
    const int s0 = QUALE_MAX(y0, r.top), s1 = QUALE_MIN(y1, r.bottom);
    const bool scored = score && s0 < s1;
    const int d0 = scored ? QUALE_MAX(s0 - 1, 0) : y0, d1 = scored ? QUALE_MIN(s1 + 1, bh) : y0;
    /* the columns the masking window reads */
    const int c0 = QUALE_MAX(r.left - 1, 0), c1 = QUALE_MIN(r.right + 1, bw);
    const uint32_t csf[3] = {
        level0 ? s->csf_q0[0] : s->csf_q32[scale][0],
        level0 ? s->csf_q0[1] : s->csf_q32[scale][1],
        level0 ? s->csf_q0[2] : s->csf_q32[scale][2],
    };
    const AdmDecoupleRowFn decouple = level0 ? dsp->decouple_row0 : dsp->decouple_row123;
    const AdmMaskingRowFn masking = level0 ? dsp->masking_row0 : dsp->masking_row123;
    const AdmMaskedRowFn masked = level0 ? dsp->masked_row0 : dsp->masked_row123;
    const AdmDenRowFn den = level0 ? dsp->den_row0 : dsp->den_row123;
    AdmDenShifts dp;
    AdmMaskedShifts mp;
    adm_den_shifts(level0, scale, bw, bh, &dp);
    adm_masked_shifts(level0, bw, bh, &mp);

    uint64_t *sums = l->sums[band];
    memset(sums, 0, ADM_LEVEL_SUMS * sizeof(*sums));
    int next = s0; /* the next row of the masked sums */
    for (int k = QUALE_MIN(y0, d0); k < QUALE_MAX(y1, d1); k++) {
        const bool details = k >= d0 && k < d1;
        /* a row of another band: only its details are needed here */
        const bool own = k >= y0 && k < y1;
        for (int p = 0; p < 2; p++) {
            int32_t *const out[4] = { own ? l->out[p].data + k * l->out[p].stride : b->spare,
                                      b->details[p][0], b->details[p][1], b->details[p][2] };
            if (level0) {
                const QualePicture *pic = l->pics[p];
                const uint8_t *const rows[4] = {
                    pic->data[0] + mirror(2 * k - 1, h) * pic->stride[0],
                    pic->data[0] + mirror(2 * k, h) * pic->stride[0],
                    pic->data[0] + mirror(2 * k + 1, h) * pic->stride[0],
                    pic->data[0] + mirror(2 * k + 2, h) * pic->stride[0],
                };
                /* the two rows the next output row reads first */
                for (int row_ahead = 3; row_ahead <= 4; row_ahead++) {
                    const uint8_t *ahead = pic->data[0] + mirror(2 * k + row_ahead, h) * pic->stride[0];
                    const size_t bytes = (size_t)pic->plane_width[0] << (s->bitdepth > 8);
                    for (size_t i = 0; i < bytes; i += 64) __builtin_prefetch(ahead + i);
                }
                (s->bitdepth == 8 ? dsp->dwt_row0_8 : dsp->dwt_row0_16)(
                    rows, s->bitdepth, w, details, out, b->lo, b->hi);
            } else {
                const int32_t *a = l->in[p].data;
                const ptrdiff_t stride = l->in[p].stride;
                const int32_t *const rows[4] = {
                    a + mirror(2 * k - 1, h) * stride, a + mirror(2 * k, h) * stride,
                    a + mirror(2 * k + 1, h) * stride, a + mirror(2 * k + 2, h) * stride,
                };
                dsp->dwt_row123(rows, w, scale, details, out, b->lo, b->hi);
            }
        }
        if (!details) continue;

        const int32_t *const ref[3] = { b->details[0][0], b->details[0][1], b->details[0][2] };
        const int32_t *const dis[3] = { b->details[1][0], b->details[1][1], b->details[1][2] };
        int32_t *const *rst = b->rst[k % RING], *const *add = b->add[k % RING];
        decouple(s->div_lookup, s->cos_1deg_sq, s->enhn_gain_limit, ref, dis, rst, add, c0, c1);
        if (k >= s0 && k < s1) {
            uint64_t row[3];
            den(&dp, ref, r.left, r.right, row);
            for (int o = 0; o < 3; o++) sums[o] += (row[o] + dp.row_add) >> dp.row_shift;
        }
        const int32_t *const add_in[3] = { add[0], add[1], add[2] };
        const int32_t *const rst_in[3] = { rst[0], rst[1], rst[2] };
        masking(csf, add_in, b->around[0][k % RING], b->centre[0][k % RING], c0, c1);
        if (!s->skip_aim)
            masking(csf, rst_in, b->around[1][k % RING], b->centre[1][k % RING], c0, c1);

        /* the rows whose masking window is complete */
        for (; next < s1 && window_down(next, bh) <= k; next++) {
            const int i = next, up = window_up(i) % RING, down = window_down(i, bh) % RING;
            const int32_t *const rst_i[3] = { b->rst[i % RING][0], b->rst[i % RING][1],
                                              b->rst[i % RING][2] };
            const int32_t *const add_i[3] = { b->add[i % RING][0], b->add[i % RING][1],
                                              b->add[i % RING][2] };
            /* DLM: the restored part against the additive impairment's
             * masking; AIM the other way round */
            for (int m = 0; m < (s->skip_aim ? 1 : 2); m++) {
                const int32_t *const around[3] = { b->around[m][up], b->around[m][i % RING],
                                                   b->around[m][down] };
                uint64_t row[3];
                masked(csf, &mp, m ? add_i : rst_i, around, b->centre[m][i % RING], bw, r.left,
                       r.right, b->col, row);
                for (int o = 0; o < 3; o++)
                    sums[3 + 3 * m + o] +=
                        (uint64_t)((int64_t)(row[o] + (uint64_t)mp.row_add) >> mp.row_shift);
            }
        }
    }
}

/* The approximation planes of b, made on first use: level 0's (w x h) and
 * level 1's.  Every sample a level reads is one it wrote: no clearing. */
static int scratch_planes(const AdmState *s, AdmScratch *b)
{
    if (b->planes) return 0;
    const size_t w = (size_t)adm_half(s->width), h = (size_t)adm_half(s->height);
    const size_t w1 = (size_t)adm_half((int)w), h1 = (size_t)adm_half((int)h);
    const size_t stride = quale_align(w, QUALE_ALIGNMENT / sizeof(int32_t));
    const size_t stride1 = quale_align(w1, QUALE_ALIGNMENT / sizeof(int32_t));
    const size_t plane = stride * h * sizeof(int32_t), plane1 = stride1 * h1 * sizeof(int32_t);
    uint8_t *p = b->planes = quale_aligned_alloc(2 * plane + 2 * plane1);
    if (!p) return -ENOMEM;
    for (int i = 0; i < 2; i++, p += plane)
        b->approx[0][i] = (AdmPlane){ (int32_t *)p, (ptrdiff_t)stride };
    for (int i = 0; i < 2; i++, p += plane1)
        b->approx[1][i] = (AdmPlane){ (int32_t *)p, (ptrdiff_t)stride1 };
    return 0;
}

/* Every level's sums of a frame, each level's bands run through
 * metric_run_tasks() with the scratch of the thread that runs it; the
 * approximation planes are those of `b`, extract()'s.  band_rows: 0 to
 * size the bands from the thread count. */
static int frame_sums(const AdmState *s, AdmScratch *b, const MetricFrame *frame,
                      unsigned band_rows, uint64_t sums[ADM_SUMS])
{
    AdmLevel l = { .s = s, .w = s->width, .h = s->height,
                   .pics = { frame->ref, frame->dist } };
    int err = scratch_planes(s, b);
    for (int scale = 0; scale < ADM_SCALES && !err; scale++) {
        l.scale = scale;
        for (int p = 0; p < 2; p++) {
            l.in[p] = b->approx[(scale + 1) % 2][p];
            l.out[p] = b->approx[scale % 2][p];
        }
        level_plan(&l, frame, adm_half(l.h), band_rows);
        err = metric_run_tasks(frame, b, (unsigned)l.bands, level_band, &l);
        uint64_t *level = sums + scale * ADM_LEVEL_SUMS;
        memset(level, 0, ADM_LEVEL_SUMS * sizeof(*level));
        for (int i = 0; i < l.bands; i++)
            for (int k = 0; k < ADM_LEVEL_SUMS; k++) level[k] += l.sums[i][k];
        l.w = adm_half(l.w);
        l.h = adm_half(l.h);
    }
    return err;
}

void adm_scores(const AdmState *s, const uint64_t sums[ADM_SUMS], float num[ADM_SCALES],
                float aim[ADM_SCALES], float den[ADM_SCALES])
{
    int w = s->width, h = s->height;
    for (int scale = 0; scale < ADM_SCALES; scale++) {
        const uint64_t *level = sums + scale * ADM_LEVEL_SUMS;
        const bool level0 = scale == 0;
        w = (w + 1) / 2;
        h = (h + 1) / 2;
        if (level0 && s->skip_scale0) {
            num[scale] = 0.0f;
            aim[scale] = 0.0f;
            den[scale] = 1e-10f; /* libvmaf's guard against a zero denominator */
            continue;
        }
        AdmDenShifts dp;
        AdmMaskedShifts mp;
        adm_den_shifts(level0, scale, w, h, &dp);
        adm_masked_shifts(level0, w, h, &mp);
        den[scale] = adm_den_finish(s, level0, scale, w, h, &dp, level);
        num[scale] = adm_masked_finish(s, level0, scale, w, h, &mp, s->noise_weight, level + 3);
        aim[scale] = s->skip_aim ? 0.0f
                                 : adm_masked_finish(s, level0, scale, w, h, &mp, 0.0, level + 6);
    }
}

static int adm_extract(const void *state, void *scratch, const MetricFrame *frame,
                       FeatureSink *sink)
{
    const AdmState *s = state;
    uint64_t sums[ADM_SUMS];
    float num[ADM_SCALES], aim[ADM_SCALES], den[ADM_SCALES];
    const int err = frame_sums(s, scratch, frame, 0, sums);
    if (err) return err;
    adm_scores(s, sums, num, aim, den);
    return adm_write_frame(s, sink, frame->index, num, aim, den);
}

void adm_frame_values(const AdmState *s, const float num_scale[ADM_SCALES],
                      const float aim_scale[ADM_SCALES], const float den_scale[ADM_SCALES],
                      double values[ADM_KEY_COUNT])
{
    double num = 0, den = 0, aim_num = 0;
    for (int scale = 0; scale < ADM_SCALES; scale++) {
        num += num_scale[scale];
        den += den_scale[scale];
        aim_num += aim_scale[scale];
    }

    const double numden_limit = 1e-10 * (s->width * s->height) / (1920.0 * 1080.0);
    num = num < numden_limit ? 0 : num;
    den = den < numden_limit ? 0 : den;
    /* libvmaf leaves AIM unset when the denominator is 0 (only possible
     * with adm_noise_weight=0 on a flat reference); 0 keeps adm3 at 1. */
    double adm2 = 1.0, aim = 0.0;
    if (den != 0.0) {
        aim = aim_num / den;
        adm2 = num / den;
    }
    const double adm3 = QUALE_MAX(adm2 * s->dlm_weight + (1 - aim) * (1 - s->dlm_weight),
                                  s->min_val);

    values[KEY_ADM2] = adm2;
    values[KEY_AIM] = aim;
    values[KEY_ADM3] = adm3;
    for (int i = 0; i < ADM_SCALES; i++)
        values[KEY_SCALE0 + i] = (double)num_scale[i] / den_scale[i];
    values[KEY_ADM] = adm2;
    values[KEY_NUM] = num;
    values[KEY_DEN] = den;
    for (int i = 0; i < ADM_SCALES; i++) {
        values[KEY_NUM_SCALE0 + 2 * i] = num_scale[i];
        values[KEY_NUM_SCALE0 + 2 * i + 1] = den_scale[i];
    }
}

int adm_write_frame(const AdmState *s, FeatureSink *sink, unsigned frame,
                    const float num[ADM_SCALES], const float aim[ADM_SCALES],
                    const float den[ADM_SCALES])
{
    double values[KEY_COUNT];
    adm_frame_values(s, num, aim, den, values);
    const unsigned keys = s->debug ? KEY_COUNT : KEY_MAIN_COUNT;
    int err = 0;
    for (unsigned i = 0; i < keys && !err; i++)
        err = feature_sink_put(sink, s->key[i], frame, values[i]);
    return err;
}

/* ---- setup --------------------------------------------------------------------- */

void adm_div_lookup_init(int32_t table[ADM_DIV_LOOKUP_SIZE])
{
    table[32768] = 0;
    for (int i = 1; i <= 32768; i++) {
        const int32_t recip = (int32_t)(1073741824 / i);
        table[32768 + i] = recip;
        table[32768 - i] = -recip;
    }
}

void adm_dsp_init(AdmDsp *dsp, unsigned cpu_flags)
{
    adm_dsp_init_c(dsp);
#if defined(__x86_64__) /* src/meson.build builds the x86 kernels there */
    if (cpu_flags & QUALE_CPU_AVX2) adm_dsp_init_avx2(dsp);
    if (cpu_flags & QUALE_CPU_AVX512) adm_dsp_init_avx512(dsp);
#else
    (void)cpu_flags;
#endif
}

int adm_check_size(unsigned width, unsigned height, char *error, size_t error_size)
{
    if (width >= ADM_MIN_SIZE && height >= ADM_MIN_SIZE) return 0;
    snprintf(error, error_size,
             "adm: %ux%u is too small; its four DWT levels need a luma plane of at least %dx%d",
             width, height, ADM_MIN_SIZE, ADM_MIN_SIZE);
    return -EINVAL;
}

static int adm_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    AdmState *s = state;

    char message[256];
    if (adm_check_size(f->width, f->height, message, sizeof(message))) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s", message);
        return -EINVAL;
    }
    /* libvmaf refuses these in every extract(): its 16-bit level 0 cannot
     * hold the CSF weights of a lower angular frequency. */
    if (s->norm_view_dist * s->ref_display_height < 3.0 * 1080) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "adm: adm_norm_view_dist * adm_ref_display_height is %g; the "
                         "integer ADM needs at least 3240 (1080 lines at 3H)",
                         s->norm_view_dist * s->ref_display_height);
        return -EINVAL;
    }
    if ((s->csf_mode == ADM_CSF_BARTEN_WATSON_BLEND ||
         s->csf_mode == ADM_CSF_BARTEN_WATSON_BLEND_MAE) &&
        !blend_table(false, s->norm_view_dist, s->ref_display_height)) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "adm: adm_csf_mode=%d has CSF tables for adm_ref_display_height "
                         "480, 720, 1080, 2160 at adm_norm_view_dist 3 or 5 (and 2160 at "
                         "1.5), not %d at %g", s->csf_mode, s->ref_display_height,
                         s->norm_view_dist);
        return -EINVAL;
    }

    s->width = (int)f->width;
    s->height = (int)f->height;
    s->bitdepth = (int)f->bitdepth;
    s->cos_1deg_sq = cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0);

    for (int scale = 0; scale < ADM_SCALES; scale++) {
        const float hv = csf_weight(s, scale, false), d = csf_weight(s, scale, true);
        s->csf[scale][0] = s->csf[scale][1] = hv;
        s->csf[scale][2] = d;
        for (int b = 0; b < 3; b++)
            s->csf_q32[scale][b] = double_to_u32(s->csf[scale][b] * pow(2, 32));
    }
    if (s->csf_mode == ADM_CSF_WATSON97 &&
        fabs(s->norm_view_dist * s->ref_display_height - 3.0 * 1080) < 1.0e-8) {
        /* libvmaf's constants for the default display */
        s->csf_q0[0] = s->csf_q0[1] = 36453;
        s->csf_q0[2] = 49417;
    } else {
        s->csf_q0[0] = s->csf_q0[1] = double_to_u16(s->csf[0][0] * pow(2, 21));
        s->csf_q0[2] = double_to_u16(s->csf[0][2] * pow(2, 23));
    }

    adm_div_lookup_init(s->div_lookup);
    adm_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));

    return feature_sink_declare_keys(sink, adm_keys, s->debug ? KEY_COUNT : KEY_MAIN_COUNT,
                                     s->key);
}

static int adm_scratch_alloc(const void *state, void **scratch)
{
    const AdmState *s = state;
    const size_t w = (size_t)adm_half(s->width);
    /* rows: ADM_ROW_PAD samples of slack on either side; the vertical DWT
     * rows span the picture width, the others a level-0 band */
    const size_t dwt_row = quale_align(((size_t)s->width + 2 * ADM_ROW_PAD) * sizeof(int32_t),
                                       QUALE_ALIGNMENT);
    const size_t row = quale_align((w + 2 * ADM_ROW_PAD) * sizeof(int32_t), QUALE_ALIGNMENT);
    enum { ROWS = 2 * 3 + 2 * RING * 3 + 2 * 2 * RING + 2 };

    AdmScratch *b = calloc(1, sizeof(*b));
    if (!b) return -ENOMEM;
    const size_t size = 2 * dwt_row + ROWS * row;
    uint8_t *p = b->block = quale_aligned_alloc(size);
    if (!p) {
        free(b);
        return -ENOMEM;
    }
    /* SIMD kernels load whole vectors; the lanes past a row's end read its
     * slack and are then discarded.  Zeroed once, the slack is defined for
     * memory checkers (which do not follow the discarding). */
    memset(p, 0, size);
    b->lo = (int32_t *)p + ADM_ROW_PAD;
    p += dwt_row;
    b->hi = (int32_t *)p + ADM_ROW_PAD;
    p += dwt_row;
    for (int i = 0; i < 2; i++)
        for (int o = 0; o < 3; o++, p += row) b->details[i][o] = (int32_t *)p + ADM_ROW_PAD;
    for (int k = 0; k < RING; k++) {
        for (int o = 0; o < 3; o++, p += row) b->rst[k][o] = (int32_t *)p + ADM_ROW_PAD;
        for (int o = 0; o < 3; o++, p += row) b->add[k][o] = (int32_t *)p + ADM_ROW_PAD;
    }
    for (int m = 0; m < 2; m++) {
        for (int k = 0; k < RING; k++, p += row) b->around[m][k] = (int32_t *)p + ADM_ROW_PAD;
        for (int k = 0; k < RING; k++, p += row) b->centre[m][k] = (int32_t *)p + ADM_ROW_PAD;
    }
    b->spare = (int32_t *)p + ADM_ROW_PAD;
    p += row;
    b->col = (uint32_t *)p + ADM_ROW_PAD;
    *scratch = b;
    return 0;
}

static void adm_scratch_free(void *scratch)
{
    AdmScratch *b = scratch;
    if (!b) return;
    quale_aligned_free(b->planes);
    quale_aligned_free(b->block);
    free(b);
}

int adm_reference_sums_banded(const AdmState *s, const QualePicture *ref,
                              const QualePicture *dist, unsigned band_rows,
                              uint64_t sums[ADM_SUMS])
{
    void *scratch = NULL;
    int err = adm_scratch_alloc(s, &scratch);
    if (err) return err;
    /* outside a context: every band on this thread, in order */
    const MetricFrame frame = { .ref = ref, .dist = dist };
    err = frame_sums(s, scratch, &frame, band_rows, sums);
    adm_scratch_free(scratch);
    return err;
}

int adm_reference_sums(const AdmState *s, const QualePicture *ref, const QualePicture *dist,
                       uint64_t sums[ADM_SUMS])
{
    return adm_reference_sums_banded(s, ref, dist, 0, sums);
}

static const MetricModelFeature integer_adm_model_features[] = {
    { "VMAF_integer_feature_adm2_score", "integer_adm2" },
    { "VMAF_integer_feature_aim_score", "integer_aim" },
    { "VMAF_integer_feature_adm3_score", "integer_adm3" },
    { "integer_adm_scale0", "integer_adm_scale0" },
    { "integer_adm_scale1", "integer_adm_scale1" },
    { "integer_adm_scale2", "integer_adm_scale2" },
    { "integer_adm_scale3", "integer_adm_scale3" },
    { "integer_adm", "integer_adm" },
    { "integer_adm_num", "integer_adm_num" },
    { "integer_adm_den", "integer_adm_den" },
    { "integer_adm_num_scale0", "integer_adm_num_scale0" },
    { "integer_adm_den_scale0", "integer_adm_den_scale0" },
    { "integer_adm_num_scale1", "integer_adm_num_scale1" },
    { "integer_adm_den_scale1", "integer_adm_den_scale1" },
    { "integer_adm_num_scale2", "integer_adm_num_scale2" },
    { "integer_adm_den_scale2", "integer_adm_den_scale2" },
    { "integer_adm_num_scale3", "integer_adm_num_scale3" },
    { "integer_adm_den_scale3", "integer_adm_den_scale3" },
    { NULL, NULL },
};

const Metric metric_integer_adm = {
    .name = "adm",
    .keys = adm_keys,
    .model_features = integer_adm_model_features,
    .options = adm_options,
    .state_size = sizeof(AdmState),
    .flags = METRIC_LUMA_ONLY,
    .init = adm_init,
    .scratch_alloc = adm_scratch_alloc,
    .scratch_free = adm_scratch_free,
    .extract = adm_extract,
};
