/*
 * CAMBI ("cambi"): libvmaf's Contrast Aware Multiscale Banding Index, a
 * no-reference banding score of the luma plane (0 = no visible banding),
 * bit for bit.  With full_ref the reference is scored too: cambi_source is
 * its score and cambi_full_reference = max(0, cambi - cambi_source).
 *
 * One picture is scored so:
 *
 *  1. Preprocessing.  The luma plane is brought to 10 bits (8 and 9 bits
 *     shifted up, 11 and more rounded down with (v + half) >> shift) and,
 *     when enc_width x enc_height is smaller than the picture, resampled to
 *     it by nearest neighbour with libvmaf's float source positions.  When
 *     the encode had fewer than 10 bits (enc_bitdepth, by default the
 *     input's), an anti-dithering filter replaces each sample by the mean
 *     (rounded down) of itself and its right, lower and lower-right
 *     neighbours (two of them on the last row and column).
 *
 *  2. The spatial mask, once, at the full encoding size: a sample is
 *     "flat" when it equals its right and its lower neighbour (a missing
 *     neighbour counts as equal); a sample is in the mask when more than
 *     mask_index of the samples of the 7x7 square around it (clipped to
 *     the picture) are flat, with
 *         mask_index = (49 + 3 (ceil_log2((w >> 6) (h >> 6)) - 11) - 1) / 2.
 *
 *  3. Five scales.  From the second on (from the first with
 *     cambi_high_res_speedup), picture and mask keep every other row and
 *     column, (n + 1) / 2 of each.  At each scale the picture goes through a
 *     3x3 mode filter (horizontal then vertical mode of three, the
 *     duplicate if two are equal, else the smallest; first and last rows
 *     and columns are left as they are, in place, so the next scale is
 *     decimated from the filtered picture), then every masked sample of
 *     value v gets the c-value
 *         c = max over d < num_diffs, where v + num_diffs <= tvi[d] and
 *                 v + num_diffs + d + 1 > vlt_luma, of
 *             weight[d] p0 p / (p0 + p)
 *     where p0 counts the masked samples equal to v in the window x window
 *     square around it (clipped), and p the larger count of v + d + 1 and
 *     v - d - 1 in the same square.  weight[] is the suprathreshold
 *     contrast response, tvi[d] the largest 10-bit value at which a step of
 *     d + 1 codes is still visible under BT.1886 (or PQ) with
 *     tvi_threshold, plus num_diffs.  The division is libvmaf's: the
 *     integer product in float times a float reciprocal table
 *     (cambi_tables.h).  Unmasked samples have c = 0.
 *     The window is window_size scaled by (w + h) / (3840 + 2160), odd.
 *
 *  4. Pooling: the score of a scale is the mean of its largest
 *     k = topk * (w h) c-values (topk when set, else cambi_topk), which
 *     libvmaf finds with a quickselect and sums, in double, in the order
 *     the quickselect leaves them.  Another order could change the last
 *     bits of that sum, so where they could differ we run the same
 *     quickselect.  Usually they cannot: at most k c-values are non-zero
 *     (banding is rare; most samples are masked out), so the k largest are
 *     all of them, and when every partial sum of them is exact in double
 *     (checked from their count, largest value and smallest ulp), their
 *     sum in picture order is libvmaf's to the bit.  The picture's score is
 *     sum(scale score * {16, 8, 4, 2, 1}) / window^2, capped at
 *     cambi_max_val.
 *
 * The window counts come from libvmaf's sliding histograms: one row of
 * counters per 10-bit value in the band of values a c-value can read, one
 * counter per column.  Moving down a row subtracts the row that leaves the
 * window and adds the row that enters it, each sample adding one to the
 * window-wide range of columns around it in its value's row (a run of
 * samples of one value adds its whole profile in one pass: integer sums,
 * in any order).  Stretches of masked-out samples are skipped at once.
 *
 * The row loops are the kernels of a CambiDsp (cambi.h): this file's C
 * ones (built from cambi_tmpl.c) or src/metrics/x86/cambi_<isa>.c's, all
 * integer arithmetic but the c-values, whose float steps they share.
 *
 * Limits, as libvmaf's: the encoding size must reach 216 samples in width
 * or height, and window^2 must stay inside the reciprocal table (window
 * <= 65, i.e. about w + h <= 6092 at the default window_size).  Beyond
 * libvmaf: its histogram loops read outside the picture (rows and columns
 * left over from the previous scale, or past the buffer) when the smallest
 * scale is narrower or lower than half the window; such sizes (very thin
 * pictures, e.g. 1920x100) are refused rather than scored on stale data.
 *
 * Where libvmaf crashes, with cambi_vis_lum_threshold so high that no
 * value can be both visible and above it (its band size wraps around),
 * every c-value is 0 here, and so is the score.
 *
 * Options libvmaf has and quale does not: heatmaps_path (writes files).
 * eotf and cambi_eotf are choices (bt1886, pq); cambi_eotf wins when it is
 * not at its default, as in libvmaf.  libvmaf appends the suffixes of
 * non-default options to "cambi" only, not to cambi_source and
 * cambi_full_reference, and so do we.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cambi.h"
#include "cambi_tables.h"
#include "common.h"
#include "cpu.h"
#include "metric.h"

#define CAMBI_SCALES 5
/* Rows of flat flags kept for the mask: the square's 7 and the next. */
#define CAMBI_FLAT_ROWS (CAMBI_MASK_SIDE + 1)
/* The encoding size must reach this in width or height. */
#define CAMBI_MIN_SIDE 216u
#define CAMBI_DEFAULT_TOPK 0.6
#define CAMBI_DEFAULT_WINDOW 65
/* 10-bit limited range, where the EOTFs are evaluated. */
#define CAMBI_LUMA_FOOT 64
#define CAMBI_LUMA_HEAD 940
#define CAMBI_LUMA_MAX 1023

static const int cambi_scale_weight[CAMBI_SCALES] = { 16, 8, 4, 2, 1 };

/* Suprathreshold contrast response, by contrast step - 1. */
static const int cambi_contrast_weight[CAMBI_MAX_DIFFS] = {
    1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8,
    8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
};

enum CambiEotf {
    CAMBI_EOTF_BT1886 = 0,
    CAMBI_EOTF_PQ,
};

enum CambiKey {
    CAMBI_KEY_SCORE,
    CAMBI_KEY_SOURCE,
    CAMBI_KEY_FULL_REFERENCE,
    CAMBI_KEY_COUNT,
};

static const char *const cambi_keys[CAMBI_KEY_COUNT + 1] = {
    "cambi", "cambi_source", "cambi_full_reference", NULL,
};

/* How one input (distorted or, with full_ref, reference) is scored. */
typedef struct CambiGeometry {
    unsigned width, height;  /* the scored size: encoding (or source) size */
    unsigned window;         /* odd side of the histogram square */
    uint16_t mask_index;
} CambiGeometry;

typedef struct CambiState {
    /* options, as parsed.  The key suffixes are read from these after
     * init, so init keeps what it derives from them apart. */
    double max_val;
    int enc_width, enc_height, enc_bitdepth;
    int src_width, src_height;
    int window_size;
    double topk, cambi_topk;
    double tvi_threshold;
    double vis_lum_threshold;
    int max_log_contrast;
    bool full_ref;
    int high_res_speedup;
    int eotf_option, cambi_eotf_option; /* indices into cambi_eotf_names */

    /* set by init */
    enum CambiEotf eotf;

    /* set by init */
    CambiGeometry dist, ref;
    bool anti_dither;
    bool speedup;
    double pool_topk;
    unsigned num_diffs;
    int tvi[CAMBI_MAX_DIFFS];   /* in value + num_diffs units, as libvmaf */
    int vlt_luma;
    /* The band of 10-bit values that the histograms keep. */
    int band_base, band_size;
    unsigned alloc_w, alloc_h;
    CambiCValueParams c_params; /* what the c-value kernels read */
    CambiDsp dsp;
    unsigned key[CAMBI_KEY_COUNT];
} CambiState;

/* In enum CambiEotf order. */
static const char *const cambi_eotf_names[] = { "bt1886", "pq", NULL };

static const MetricOption cambi_options[] = {
    { .name = "cambi_max_val", .alias = "cmxv",
      .help = "maximum value allowed; larger values are clipped to it",
      .offset = offsetof(CambiState, max_val), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1000.0, .min = 0.0, .max = 1000.0,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "enc_width", .alias = "encw",
      .help = "encoding width: the picture is scored at this width when smaller (0: its own)",
      .offset = offsetof(CambiState, enc_width), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 180, .max = 7680, .flags = OPTION_FEATURE_PARAM },
    { .name = "enc_height", .alias = "ench",
      .help = "encoding height: the picture is scored at this height when smaller (0: its own)",
      .offset = offsetof(CambiState, enc_height), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 150, .max = 7680, .flags = OPTION_FEATURE_PARAM },
    { .name = "enc_bitdepth", .alias = "encbd",
      .help = "encoding bit depth; below 10 an anti-dithering filter runs first (0: the input's)",
      .offset = offsetof(CambiState, enc_bitdepth), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 6, .max = 16, .flags = OPTION_FEATURE_PARAM },
    { .name = "src_width", .alias = "srcw",
      .help = "source width, with full_ref only (0: the picture's)",
      .offset = offsetof(CambiState, src_width), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 320, .max = 7680, .flags = OPTION_FEATURE_PARAM },
    { .name = "src_height", .alias = "srch",
      .help = "source height, with full_ref only (0: the picture's)",
      .offset = offsetof(CambiState, src_height), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 200, .max = 4320, .flags = OPTION_FEATURE_PARAM },
    { .name = "window_size", .alias = "ws",
      .help = "window size of the c-values at 4K (65 is about 1 degree), scaled to the picture",
      .offset = offsetof(CambiState, window_size), .type = QUALE_OPTION_INT,
      .default_value.i = CAMBI_DEFAULT_WINDOW, .min = 15, .max = 127,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "topk",
      .help = "ratio of the largest c-values pooled, 0 < topk <= 1 "
              "(used when not at its default, else cambi_topk)",
      .offset = offsetof(CambiState, topk), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = CAMBI_DEFAULT_TOPK, .min = 0.0001, .max = 1.0,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "cambi_topk", .alias = "ctpk",
      .help = "ratio of the largest c-values pooled, 0 < cambi_topk <= 1",
      .offset = offsetof(CambiState, cambi_topk), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = CAMBI_DEFAULT_TOPK, .min = 0.0001, .max = 1.0,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "tvi_threshold", .alias = "tvit",
      .help = "visibility threshold of a luminance step: dL < tvi_threshold * L",
      .offset = offsetof(CambiState, tvi_threshold), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.019, .min = 0.0001, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "cambi_vis_lum_threshold", .alias = "vlt",
      .help = "luminance (cd/m2) below which banding is taken as invisible",
      .offset = offsetof(CambiState, vis_lum_threshold), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.0, .min = 0.0, .max = 300.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "max_log_contrast", .alias = "mlc",
      .help = "largest contrast step, log2 of 10-bit codes (2: 4 codes at 10 bits, 1 at 8)",
      .offset = offsetof(CambiState, max_log_contrast), .type = QUALE_OPTION_INT,
      .default_value.i = 2, .min = 0, .max = 5, .flags = OPTION_FEATURE_PARAM },
    { .name = "eotf", .choices = cambi_eotf_names,
      .help = "the EOTF of the visibility thresholds",
      .offset = offsetof(CambiState, eotf_option), .type = QUALE_OPTION_CHOICE,
      .default_value.i = CAMBI_EOTF_BT1886, .flags = OPTION_FEATURE_PARAM },
    { .name = "cambi_eotf", .alias = "ceot", .choices = cambi_eotf_names,
      .help = "the EOTF of the visibility thresholds; wins over eotf when set",
      .offset = offsetof(CambiState, cambi_eotf_option), .type = QUALE_OPTION_CHOICE,
      .default_value.i = CAMBI_EOTF_BT1886, .flags = OPTION_FEATURE_PARAM },
    { .name = "full_ref",
      .help = "also score the reference: cambi_source and cambi_full_reference",
      .offset = offsetof(CambiState, full_ref), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "cambi_high_res_speedup", .alias = "hrs",
      .help = "1080, 1440 or 2160: from encodes of that many samples (1920x1080, ...) on, "
              "score a half-size picture after the spatial mask (faster, less exact); "
              "0 or another value: never",
      .offset = offsetof(CambiState, high_res_speedup), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 0, .max = 2160, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

/* ---- visibility thresholds ---------------------------------------------- */

static double cambi_bt1886_eotf(double v)
{
    const double gamma = 2.4, lw = 300.0, lb = 0.01;
    const double a = pow(pow(lw, 1.0 / gamma) - pow(lb, 1.0 / gamma), gamma);
    const double b = pow(lb, 1.0 / gamma) / (pow(lw, 1.0 / gamma) - pow(lb, 1.0 / gamma));
    const double x = v + b;
    return a * pow(x > 0 ? x : 0, gamma);
}

static double cambi_pq_eotf(double v)
{
    const double m1 = 0.1593017578125, m2 = 78.84375;
    const double c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875;
    const double num = pow(v, 1.0 / m2) - c1;
    const double den = c2 - c3 * pow(v, 1.0 / m2);
    return 10000 * pow((num > 0 ? num : 0) / den, 1.0 / m1);
}

/* The luminance of a 10-bit limited-range sample (clipped to the range). */
static double cambi_luminance(int sample, enum CambiEotf eotf)
{
    const int clipped = QUALE_MIN(QUALE_MAX(sample, CAMBI_LUMA_FOOT), CAMBI_LUMA_HEAD);
    const double v = (double)(clipped - CAMBI_LUMA_FOOT) / (CAMBI_LUMA_HEAD - CAMBI_LUMA_FOOT);
    return eotf == CAMBI_EOTF_PQ ? cambi_pq_eotf(v) : cambi_bt1886_eotf(v);
}

/* Whether a step of diff codes above sample is visible. */
static bool cambi_step_visible(int sample, int diff, double threshold, enum CambiEotf eotf)
{
    const double base = cambi_luminance(sample, eotf);
    const double stepped = cambi_luminance(sample + diff, eotf);
    return stepped - base > threshold * base;
}

/* Where sample stands against the last sample at which the step is
 * visible: below it (-1), at it (0) or above it (1). */
static int cambi_tvi_side(int sample, int diff, double threshold, enum CambiEotf eotf)
{
    if (!cambi_step_visible(sample, diff, threshold, eotf)) return 1;
    if (cambi_step_visible(sample + 1, diff, threshold, eotf)) return -1;
    return 0;
}

/* The largest 10-bit sample at which a step of diff codes is visible, by
 * bisection over the limited range, as libvmaf: 0 when none is, 1023 when
 * all are.  -EDOM if the visibility is not monotonic in the sample. */
static int cambi_tvi_for_diff(int diff, double threshold, enum CambiEotf eotf)
{
    int lo = CAMBI_LUMA_FOOT, hi = CAMBI_LUMA_HEAD - diff - 1;

    int side = cambi_tvi_side(lo, diff, threshold, eotf);
    if (side > 0) return 0;
    if (side == 0) return lo;
    side = cambi_tvi_side(hi, diff, threshold, eotf);
    if (side < 0) return CAMBI_LUMA_MAX;
    if (side == 0) return hi;

    /* lo is below the answer and hi above it: 10 halvings of the range
     * find it when the visibility is monotonic. */
    for (unsigned step = 0; step < 64; step++) {
        const int mid = lo + (hi - lo) / 2;
        side = cambi_tvi_side(mid, diff, threshold, eotf);
        if (side == 0) return mid;
        if (side > 0) hi = mid;
        else lo = mid;
    }
    return -EDOM;
}

/* The smallest sample at or above the luminance threshold (0 when the
 * foot of the range already is); -EDOM if no sample of the range is. */
static int cambi_vlt_luma(double threshold, enum CambiEotf eotf)
{
    for (int sample = CAMBI_LUMA_FOOT; sample <= CAMBI_LUMA_HEAD; sample++) {
        if (cambi_luminance(sample, eotf) >= threshold)
            return sample == CAMBI_LUMA_FOOT ? 0 : sample;
    }
    return -EDOM;
}

/* ---- geometry ----------------------------------------------------------- */

/* window_size scaled by (w + h) / (3840 + 2160) = (w + h) / 375 / 16, in
 * libvmaf's integer steps (16-bit result), halved with the speed-up, odd. */
static unsigned cambi_window(int window_size, unsigned w, unsigned h, bool speedup)
{
    unsigned win = (uint16_t)(((unsigned)window_size * (w + h) / 375) >> 4);
    if (speedup) win = (win + 1) >> 1;
    return win | 1;
}

static unsigned cambi_ceil_log2(uint32_t n)
{
    unsigned bits = 0;
    for (uint32_t t = n ? n - 1 : 0; t; t >>= 1) bits++;
    return bits;
}

static uint16_t cambi_mask_index(unsigned w, unsigned h)
{
    const uint32_t blocks = (w >> 6) * (h >> 6);
    const int side2 = CAMBI_MASK_SIDE * CAMBI_MASK_SIDE;
    return (uint16_t)((side2 + 3 * ((int)cambi_ceil_log2(blocks) - 11) - 1) >> 1);
}

static unsigned cambi_halve(unsigned n)
{
    return (n + 1) >> 1;
}

static int cambi_geometry(const CambiState *s, CambiGeometry *g, unsigned w, unsigned h,
                          const char *what, FeatureSink *sink)
{
    g->width = w;
    g->height = h;
    g->window = cambi_window(s->window_size, w, h, s->speedup);
    g->mask_index = cambi_mask_index(w, h);

    /* libvmaf's histogram loops read the first window / 2 columns and rows
     * of every scale, inside the picture or not. */
    unsigned sw = w, sh = h;
    const unsigned halvings = CAMBI_SCALES - 1 + (s->speedup ? 1 : 0);
    for (unsigned k = 0; k < halvings; k++) {
        sw = cambi_halve(sw);
        sh = cambi_halve(sh);
    }
    const unsigned pad = g->window / 2;
    if (sw < pad || sh < pad) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: a %ux%u %s is too thin: its smallest scale (%ux%u) "
                         "is narrower or lower than half the %u-sample window, where "
                         "libvmaf reads outside the picture", w, h, what, sw, sh,
                         g->window);
        return -EINVAL;
    }
    return 0;
}

/* ---- init --------------------------------------------------------------- */

static int cambi_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    CambiState *s = state;
    const unsigned w = f->width, h = f->height;
    s->eotf = (enum CambiEotf)(s->cambi_eotf_option != CAMBI_EOTF_BT1886 ? s->cambi_eotf_option
                                                                          : s->eotf_option);

    unsigned enc_w = (unsigned)s->enc_width, enc_h = (unsigned)s->enc_height;
    if (!enc_w || !enc_h) {
        enc_w = w;
        enc_h = h;
    }
    unsigned src_w = (unsigned)s->src_width, src_h = (unsigned)s->src_height;
    if (!src_w || !src_h) {
        src_w = w;
        src_h = h;
    }
    /* A downscaled encode is not scored back at its encoding size. */
    if (enc_w > w || enc_h > h) {
        enc_w = w;
        enc_h = h;
    }

    if (enc_w < CAMBI_MIN_SIDE && enc_h < CAMBI_MIN_SIDE) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: a %ux%u encode is too small: cambi needs %u samples "
                         "in width or height", enc_w, enc_h, CAMBI_MIN_SIDE);
        return -EINVAL;
    }
    if (src_w < CAMBI_MIN_SIDE && src_h < CAMBI_MIN_SIDE) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: a %ux%u source is too small: cambi needs %u samples "
                         "in width or height", src_w, src_h, CAMBI_MIN_SIDE);
        return -EINVAL;
    }
    if ((src_w > enc_w && src_h < enc_h) || (src_w < enc_w && src_h > enc_h)) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: the source size %ux%u and the encoding size %ux%u "
                         "must not be larger each in one direction", src_w, src_h,
                         enc_w, enc_h);
        return -EINVAL;
    }

    const uint64_t enc_pixels = (uint64_t)enc_w * enc_h;
    switch (s->high_res_speedup) {
    case 1080: s->speedup = enc_pixels >= 1920u * 1080u; break;
    case 1440: s->speedup = enc_pixels >= 2560u * 1440u; break;
    case 2160: s->speedup = enc_pixels >= 3840u * 2160u; break;
    default: s->speedup = false; break;
    }

    int err = cambi_geometry(s, &s->dist, enc_w, enc_h, "picture", sink);
    if (err) return err;
    /* libvmaf sizes the source window whether full_ref is set or not. */
    const unsigned src_window = cambi_window(s->window_size, src_w, src_h, s->speedup);
    const unsigned max_window = QUALE_MAX(s->dist.window, src_window);
    if (max_window * max_window >= CAMBI_RECIPROCAL_SIZE) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: the %u-sample window of a %ux%u picture is too large "
                         "for libvmaf's reciprocal table (at most 65: lower window_size, "
                         "or set enc_width and enc_height)", max_window,
                         s->dist.window == max_window ? enc_w : src_w,
                         s->dist.window == max_window ? enc_h : src_h);
        return -EINVAL;
    }
    if (s->full_ref) {
        err = cambi_geometry(s, &s->ref, src_w, src_h, "source", sink);
        if (err) return err;
    }

    s->anti_dither = (s->enc_bitdepth ? (unsigned)s->enc_bitdepth : f->bitdepth) < 10;
    /* topk wins when set, else cambi_topk. */
    s->pool_topk = s->topk != CAMBI_DEFAULT_TOPK ? s->topk : s->cambi_topk;

    s->num_diffs = 1u << s->max_log_contrast;
    int band_top = 0;
    for (unsigned d = 0; d < s->num_diffs; d++) {
        const int tvi = cambi_tvi_for_diff((int)d + 1, s->tvi_threshold, s->eotf);
        if (tvi < 0) {
            feature_sink_log(sink, QUALE_LOG_ERROR,
                             "cambi: no visibility threshold for a step of %u codes "
                             "with tvi_threshold %g", d + 1, s->tvi_threshold);
            return -EINVAL;
        }
        s->tvi[d] = tvi + (int)s->num_diffs;
        band_top = QUALE_MAX(band_top, s->tvi[d]);
    }
    s->vlt_luma = cambi_vlt_luma(s->vis_lum_threshold, s->eotf);
    if (s->vlt_luma < 0) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "cambi: cambi_vis_lum_threshold %g is above the peak luminance",
                         s->vis_lum_threshold);
        return -EINVAL;
    }
    /* A c-value reads the counts of values v - num_diffs .. v + num_diffs
     * for v with v + num_diffs <= tvi[d] and v + num_diffs + d + 1 >
     * vlt_luma: these bounds keep every count it can read (and no other),
     * as libvmaf's. */
    s->band_base = QUALE_MAX(0, s->vlt_luma - 3 * (int)s->num_diffs + 1);
    s->band_size = QUALE_MAX(0, band_top + 1 - s->band_base);

    s->c_params = (CambiCValueParams){
        .num_diffs = (int)s->num_diffs,
        .band_base = s->band_base,
        .band_size = s->band_size,
        .vlt_luma = s->vlt_luma,
    };
    for (unsigned d = 0; d < s->num_diffs; d++) s->c_params.tvi[d] = s->tvi[d];
    cambi_c_value_tables(&s->c_params, NULL);
    cambi_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));

    s->alloc_w = s->dist.width;
    s->alloc_h = s->dist.height;
    if (s->full_ref) {
        s->alloc_w = QUALE_MAX(s->alloc_w, s->ref.width);
        s->alloc_h = QUALE_MAX(s->alloc_h, s->ref.height);
    }

    err = feature_sink_declare(sink, cambi_keys[CAMBI_KEY_SCORE], &s->key[CAMBI_KEY_SCORE]);
    if (!err && s->full_ref) {
        err = feature_sink_declare_plain(sink, cambi_keys[CAMBI_KEY_SOURCE],
                                         &s->key[CAMBI_KEY_SOURCE]);
        if (!err)
            err = feature_sink_declare_plain(sink, cambi_keys[CAMBI_KEY_FULL_REFERENCE],
                                             &s->key[CAMBI_KEY_FULL_REFERENCE]);
    }
    return err;
}

/* ---- per-thread buffers ------------------------------------------------- */

typedef struct CambiScratch {
    uint16_t *image;      /* the picture of the current scale, rows packed */
    uint8_t *mask;        /* its mask, same layout */
    float *c_values;      /* same layout */
    uint16_t *histograms; /* band_size rows of one counter per column */
    uint16_t *mode_rows;  /* 3 horizontally filtered rows */
    uint32_t *src_x;      /* resampling: source column of each column */
    uint8_t *flat;        /* CAMBI_FLAT_ROWS rows of flat flags */
    uint8_t *flat_count;  /* flat samples of each column in the mask's rows */
} CambiScratch;

static int cambi_scratch_alloc(const void *state, void **scratch)
{
    const CambiState *s = state;
    const size_t w = s->alloc_w, plane = (size_t)s->alloc_w * s->alloc_h;
    const size_t sizes[] = {
        plane * sizeof(uint16_t),
        plane,
        plane * sizeof(float),
        (size_t)QUALE_MAX(s->band_size, 1) * w * sizeof(uint16_t) + CAMBI_HISTOGRAM_SLACK,
        3 * w * sizeof(uint16_t),
        w * sizeof(uint32_t),
        CAMBI_FLAT_ROWS * w,
        w + 2 * CAMBI_MASK_PAD,
    };
    size_t total = quale_align(sizeof(CambiScratch), QUALE_ALIGNMENT);
    for (unsigned i = 0; i < QUALE_ARRAY_SIZE(sizes); i++)
        total += quale_align(sizes[i], QUALE_ALIGNMENT);

    uint8_t *base = quale_aligned_alloc(total);
    if (!base) return -ENOMEM;
    CambiScratch *t = (CambiScratch *)base;
    uint8_t *p = base + quale_align(sizeof(CambiScratch), QUALE_ALIGNMENT);
    void **slots[] = {
        (void **)&t->image, (void **)&t->mask, (void **)&t->c_values,
        (void **)&t->histograms, (void **)&t->mode_rows, (void **)&t->src_x,
        (void **)&t->flat, (void **)&t->flat_count,
    };
    for (unsigned i = 0; i < QUALE_ARRAY_SIZE(sizes); i++) {
        *slots[i] = p;
        p += quale_align(sizes[i], QUALE_ALIGNMENT);
    }
    *scratch = t;
    return 0;
}

static void cambi_scratch_free(void *scratch)
{
    quale_aligned_free(scratch);
}

/* ---- preprocessing ------------------------------------------------------ */

/* libvmaf's nearest-neighbour positions: a float walk from
 * ratio / 2 - 0.5 in steps of ratio = in / out, each rounded half up. */
static void cambi_source_positions(uint32_t *pos, unsigned in, unsigned out)
{
    const float ratio = (float)in / (float)out;
    float x = (float)((double)(ratio / 2) - 0.5);
    for (unsigned i = 0; i < out; i++) {
        const unsigned p = (unsigned)(int)((double)x + 0.5);
        pos[i] = QUALE_MIN(p, in - 1);
        x += ratio;
    }
}

static inline uint16_t cambi_to_10bit(unsigned v, unsigned bitdepth)
{
    if (bitdepth < 10) return (uint16_t)(v << (10 - bitdepth));
    const unsigned shift = bitdepth - 10;
    const unsigned round = shift ? 1u << (shift - 1) : 0;
    return (uint16_t)((v + round) >> shift);
}

/* The luma plane, at 10 bits and the scored size, into image (rows of w). */
static void cambi_load(const QualePicture *pic, uint16_t *image, unsigned w, unsigned h,
                       uint32_t *src_x)
{
    const unsigned in_w = pic->plane_width[0], in_h = pic->plane_height[0];
    const unsigned bd = pic->format.bitdepth;
    const uint8_t *data = pic->data[0];
    const ptrdiff_t stride = pic->stride[0];
    const bool resample = in_w != w || in_h != h;

    if (resample) cambi_source_positions(src_x, in_w, w);
    const float ratio_y = (float)in_h / (float)h;
    float y = (float)((double)(ratio_y / 2) - 0.5);

    for (unsigned i = 0; i < h; i++) {
        unsigned row = i;
        if (resample) {
            row = QUALE_MIN((unsigned)(int)((double)y + 0.5), in_h - 1);
            y += ratio_y;
        }
        uint16_t *out = image + (size_t)i * w;
        if (bd == 8) {
            const uint8_t *in = data + (ptrdiff_t)row * stride;
            if (resample)
                for (unsigned j = 0; j < w; j++) out[j] = (uint16_t)(in[src_x[j]] << 2);
            else
                for (unsigned j = 0; j < w; j++) out[j] = (uint16_t)(in[j] << 2);
        } else {
            const uint16_t *in = (const uint16_t *)(data + (ptrdiff_t)row * stride);
            if (resample)
                for (unsigned j = 0; j < w; j++) out[j] = cambi_to_10bit(in[src_x[j]], bd);
            else if (bd == 10)
                memcpy(out, in, w * sizeof(uint16_t));
            else
                for (unsigned j = 0; j < w; j++) out[j] = cambi_to_10bit(in[j], bd);
        }
    }
}

/* ---- the C kernels -------------------------------------------------------- */

#define CAMBI_FN(name) cambi_##name##_c
#include "cambi_tmpl.c"
#undef CAMBI_FN

void cambi_dsp_init(CambiDsp *dsp, unsigned cpu_flags)
{
#define CAMBI_SET_KERNELS(isa)                              \
    do {                                                    \
        dsp->anti_dither_row = cambi_anti_dither_row_##isa; \
        dsp->flat_row = cambi_flat_row_##isa;               \
        dsp->mask_row = cambi_mask_row_##isa;               \
        dsp->decimate_row16 = cambi_decimate_row16_##isa;   \
        dsp->decimate_row8 = cambi_decimate_row8_##isa;     \
        dsp->mode_row = cambi_mode_row_##isa;               \
        dsp->mode_column = cambi_mode_column_##isa;         \
        dsp->slide_row = cambi_slide_row_##isa;             \
        dsp->c_values_row = cambi_c_values_row_##isa;       \
    } while (0)
    CAMBI_SET_KERNELS(c);
#if QUALE_X86_SIMD
    if (cpu_flags & QUALE_CPU_AVX2) CAMBI_SET_KERNELS(avx2);
    if (cpu_flags & QUALE_CPU_AVX512) CAMBI_SET_KERNELS(avx512);
#else
    (void)cpu_flags;
#endif
#undef CAMBI_SET_KERNELS
}

void cambi_c_value_tables(CambiCValueParams *p, unsigned *reciprocal_size)
{
    p->weight = cambi_contrast_weight;
    p->reciprocal = cambi_reciprocal;
    if (reciprocal_size) *reciprocal_size = CAMBI_RECIPROCAL_SIZE;
}

/* Each sample becomes the mean, rounded down, of itself and its right,
 * lower and lower-right neighbours (those that exist), in place: every
 * sample read is still the original. */
static void cambi_anti_dither(const CambiState *s, uint16_t *image, unsigned w, unsigned h)
{
    for (unsigned i = 0; i + 1 < h; i++)
        s->dsp.anti_dither_row(image + (size_t)i * w, image + (size_t)(i + 1) * w, w);
    s->dsp.anti_dither_row(image + (size_t)(h - 1) * w, NULL, w);
}

/* ---- spatial mask ------------------------------------------------------- */

/* flat[j] = sample (r, j) equals its right and lower neighbours. */
static void cambi_flat_row(const CambiState *s, const uint16_t *image, unsigned w, unsigned h,
                           unsigned r, uint8_t *flat)
{
    const uint16_t *a = image + (size_t)r * w;
    s->dsp.flat_row(a, r + 1 < h ? a + w : NULL, flat, w);
}

/* mask = more than mask_index flat samples in the 7x7 square (clipped).
 * count holds, for each column, the flat samples of the square's rows,
 * with CAMBI_MASK_PAD zero columns on each side; each row of flat flags is
 * computed once, into a ring of CAMBI_FLAT_ROWS rows. */
static void cambi_spatial_mask(const CambiState *s, const uint16_t *image, uint8_t *mask,
                               unsigned w, unsigned h, unsigned mask_index, uint8_t *flat_ring,
                               uint8_t *count_buf)
{
    const unsigned pad = CAMBI_MASK_PAD;
    uint8_t *count = count_buf + pad;
    memset(count_buf, 0, w + 2 * pad);
    for (unsigned r = 0; r < pad && r < h; r++) {
        uint8_t *flat = flat_ring + (size_t)(r % CAMBI_FLAT_ROWS) * w;
        cambi_flat_row(s, image, w, h, r, flat);
        for (unsigned j = 0; j < w; j++) count[j] += flat[j];
    }
    for (unsigned i = 0; i < h; i++) {
        uint8_t *add = NULL;
        const uint8_t *sub = NULL;
        if (i + pad < h) {
            add = flat_ring + (size_t)((i + pad) % CAMBI_FLAT_ROWS) * w;
            cambi_flat_row(s, image, w, h, i + pad, add);
        }
        if (i > pad) sub = flat_ring + (size_t)((i - pad - 1) % CAMBI_FLAT_ROWS) * w;
        s->dsp.mask_row(count, add, sub, mask + (size_t)i * w, w, mask_index);
    }
}

/* ---- scales ------------------------------------------------------------- */

/* Keeps every other row and column, in place: rows of w become rows of
 * (w + 1) / 2, and every read is at or after the write it feeds (row 0
 * onto itself, the others into rows already read). */
static void cambi_decimate16(const CambiState *s, uint16_t *p, unsigned w, unsigned h)
{
    const unsigned dw = cambi_halve(w), dh = cambi_halve(h);
    for (unsigned j = 0; j < dw; j++) p[j] = p[2 * j];
    for (unsigned i = 1; i < dh; i++)
        s->dsp.decimate_row16(p + (size_t)2 * i * w, p + (size_t)i * dw, dw);
}

static void cambi_decimate8(const CambiState *s, uint8_t *p, unsigned w, unsigned h)
{
    const unsigned dw = cambi_halve(w), dh = cambi_halve(h);
    for (unsigned j = 0; j < dw; j++) p[j] = p[2 * j];
    for (unsigned i = 1; i < dh; i++)
        s->dsp.decimate_row8(p + (size_t)2 * i * w, p + (size_t)i * dw, dw);
}

/* 3x3 mode filter in place, separable: the vertical mode of three
 * horizontally filtered rows; first and last rows stay. */
static void cambi_mode_filter(const CambiState *s, uint16_t *image, unsigned w, unsigned h,
                              uint16_t *rows)
{
    if (h < 3) return;
    s->dsp.mode_row(image, rows, w);
    s->dsp.mode_row(image + w, rows + w, w);
    for (unsigned i = 2; i < h; i++) {
        /* Row i is read before row i - 1 is written. */
        s->dsp.mode_row(image + (size_t)i * w, rows + (size_t)(i % 3) * w, w);
        s->dsp.mode_column(rows, rows + w, rows + 2 * w, image + (size_t)(i - 1) * w, w);
    }
}

/* ---- c-values ----------------------------------------------------------- */

/* What pooling needs to know of the non-zero c-values of a scale. */
typedef struct CambiNonZero {
    double sum;          /* in the order of the picture */
    unsigned count;
    float smallest, largest;
} CambiNonZero;

/* Adds a row's non-zero c-values to nz, in order (only masked samples
 * can have one: runs of 16 masked out are skipped). */
static void cambi_non_zero_row(const float *c_values, const uint8_t *mask, unsigned w,
                               CambiNonZero *nz)
{
    for (unsigned j0 = 0; j0 < w; j0 += 16) {
        const unsigned j1 = QUALE_MIN(j0 + 16, w);
        if (!cambi_any_masked_c(mask, j0, j1)) continue;
        for (unsigned j = j0; j < j1; j++) {
            const float c = c_values[j];
            if (c > 0.0f) {
                nz->sum += c;
                nz->count++;
                if (c < nz->smallest) nz->smallest = c;
                if (c > nz->largest) nz->largest = c;
            }
        }
    }
}

static void cambi_c_values(const CambiState *s, CambiScratch *t, unsigned w, unsigned h,
                           unsigned window, CambiNonZero *nz)
{
    const unsigned pad = window / 2;
    *nz = (CambiNonZero){ .sum = 0.0, .count = 0, .smallest = INFINITY, .largest = 0.0f };
    if (s->band_size == 0) {
        memset(t->c_values, 0, sizeof(float) * w * h);
        return;
    }
    memset(t->histograms, 0, sizeof(uint16_t) * w * (size_t)s->band_size);
    const CambiCValueParams *p = &s->c_params;

    /* The window of row i holds rows i - pad .. i + pad. */
    for (unsigned r = 0; r < pad && r < h; r++)
        s->dsp.slide_row(t->histograms, p, NULL, NULL, t->image + (size_t)r * w,
                         t->mask + (size_t)r * w, w, pad);
    for (unsigned i = 0; i < h; i++) {
        const size_t leave = (size_t)(i - pad - 1) * w, enter = (size_t)(i + pad) * w;
        const bool leaves = i > pad, enters = i + pad < h;
        if (leaves || enters)
            s->dsp.slide_row(t->histograms, p, leaves ? t->image + leave : NULL,
                             leaves ? t->mask + leave : NULL, enters ? t->image + enter : NULL,
                             enters ? t->mask + enter : NULL, w, pad);
        const size_t row = (size_t)i * w;
        s->dsp.c_values_row(p, t->histograms, t->image + row, t->mask + row,
                            t->c_values + row, w);
        cambi_non_zero_row(t->c_values + row, t->mask + row, w, nz);
    }
}

/* ---- pooling ------------------------------------------------------------ */

/* libvmaf's quickselect (Hoare partitions, descending): afterwards the k
 * largest values are v[0 .. k-1], in an order the sum depends on. */
static void cambi_quickselect(float *v, int n, int k)
{
    if (n == k) return;
    int left = 0, right = n - 1;
    while (left < right) {
        const float pivot = v[k];
        int i = left, j = right;
        do {
            while (v[i] > pivot) i++;
            while (v[j] < pivot) j--;
            if (i <= j) {
                const float tmp = v[i];
                v[i] = v[j];
                v[j] = tmp;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < k) left = i;
        if (k < i) right = j;
    }
}

/* Whether every partial sum of the non-zero values, in any order, is exact
 * in double: all are multiples of the ulp of the smallest, 2^(e - 24), and
 * no sum exceeds count * largest; below 2^52 such ulps, a double holds
 * them all (the one bit to spare covers the rounding of the product). */
static bool cambi_sum_is_exact(const CambiNonZero *nz)
{
    if (!nz->count) return true;
    int e;
    frexpf(nz->smallest, &e);
    return (double)nz->count * nz->largest < ldexp(1.0, e - 24 + 52);
}

static double cambi_pool(float *c_values, unsigned w, unsigned h, double topk,
                         const CambiNonZero *nz)
{
    const int n = (int)(w * h);
    const double want = topk * n;
    /* libvmaf converts to int, then clamps to 1 .. n. */
    int k = (int)want;
    k = QUALE_MIN(QUALE_MAX(k, 1), n);

    /* libvmaf averages the k largest values in the order its quickselect
     * leaves them.  When they are all the non-zero values and zeros, and
     * their sum is exact whatever the order (the usual case: banding
     * leaves most c-values at 0), that sum is the one already made. */
    if (nz->count <= (unsigned)k && cambi_sum_is_exact(nz)) return nz->sum / k;

    cambi_quickselect(c_values, n, k);
    double sum = 0;
    for (int i = 0; i < k; i++) sum += c_values[i];
    return sum / k;
}

/* ---- scoring ------------------------------------------------------------ */

static double cambi_score(const CambiState *s, const CambiGeometry *g, const QualePicture *pic,
                          CambiScratch *t)
{
    unsigned w = g->width, h = g->height;
    cambi_load(pic, t->image, w, h, t->src_x);
    if (s->anti_dither) cambi_anti_dither(s, t->image, w, h);
    cambi_spatial_mask(s, t->image, t->mask, w, h, g->mask_index, t->flat, t->flat_count);

    double scale_score[CAMBI_SCALES];
    for (unsigned scale = 0; scale < CAMBI_SCALES; scale++) {
        if (scale > 0 || s->speedup) {
            cambi_decimate16(s, t->image, w, h);
            cambi_decimate8(s, t->mask, w, h);
            w = cambi_halve(w);
            h = cambi_halve(h);
        }
        cambi_mode_filter(s, t->image, w, h, t->mode_rows);
        CambiNonZero nz;
        cambi_c_values(s, t, w, h, g->window, &nz);
        scale_score[scale] = cambi_pool(t->c_values, w, h, s->pool_topk, &nz);
    }

    double score = 0.0;
    for (unsigned scale = 0; scale < CAMBI_SCALES; scale++)
        score += scale_score[scale] * cambi_scale_weight[scale];
    /* libvmaf's window area is a 16-bit count. */
    const uint16_t area = (uint16_t)(g->window * g->window);
    return score / area;
}

static int cambi_extract(const void *state, void *scratch, const MetricFrame *frame,
                         FeatureSink *sink)
{
    const CambiState *s = state;
    CambiScratch *t = scratch;

    const double dist = cambi_score(s, &s->dist, frame->dist, t);
    int err = feature_sink_put(sink, s->key[CAMBI_KEY_SCORE], frame->index,
                               QUALE_MIN(dist, s->max_val));
    if (err || !s->full_ref) return err;

    const double src = cambi_score(s, &s->ref, frame->ref, t);
    err = feature_sink_put(sink, s->key[CAMBI_KEY_SOURCE], frame->index,
                           QUALE_MIN(src, s->max_val));
    if (err) return err;
    const double combined = QUALE_MAX(0.0, dist - src);
    return feature_sink_put(sink, s->key[CAMBI_KEY_FULL_REFERENCE], frame->index,
                            QUALE_MIN(combined, s->max_val));
}

const Metric metric_cambi = {
    .name = "cambi",
    .keys = cambi_keys,
    .options = cambi_options,
    .state_size = sizeof(CambiState),
    .flags = METRIC_LUMA_ONLY,
    .init = cambi_init,
    .scratch_alloc = cambi_scratch_alloc,
    .scratch_free = cambi_scratch_free,
    .extract = cambi_extract,
};
