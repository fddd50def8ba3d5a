/*
 * Float ADM: libvmaf's "float_adm" extractor (adm2, aim, adm3,
 * adm_scale0..3), the floating-point additive detail measure of the luma.
 *
 * The samples become floats on the 8-bit scale less 128
 * (picture_float.h).  Four levels of a Daubechies-2 DWT (vertical pass
 * first, taps summed from the first, source indices mirrored as
 * -1 -> 1, n -> n - 1, n + 1 -> n - 2) of the reference (o) and the
 * distorted picture (t); at every level, per sample and orientation
 * h, v, d:
 *  - decoupling: the restored part r = clamp(t / o, 0, 1) * o (the
 *    division by reciprocal, see adm_div() below), allowed to grow up to
 *    adm_enhn_gain_limit times, never past t, where the (h, v) vectors of
 *    o and t point within one degree of each other; the additive
 *    impairment a = t - r;
 *  - CSF weighting (Watson's wavelet noise thresholds by default,
 *    adm_csf_mode 1: Barten's CSF at 100 cd/m2, 2: the DLM paper's);
 *  - contrast masking: a threshold from the 3x3 neighbourhood of the other
 *    part's CSF weights, |x| / 30 around and |x| / 15 at the centre, summed
 *    over h, v, d (rows mirrored -1 -> 1 and n -> n - 1, columns alike);
 *  - over the picture less 10% on each side, per orientation,
 *      num = (sum of max(|csf(r)| - thr(a), 0)^3)^(1/3) + noise floor,
 *      aim = (sum of max(|csf(a)| - thr(r), 0)^3)^(1/3),
 *      den = (sum of |csf(o)|^3)^(1/3) + noise floor,
 *    (adm_p_norm instead of 3), summed in float row by row.
 *   adm2 = sum num / sum den (1 if the denominator is 0),
 *   aim = min(sum aim / sum den, 1), both sums without the scale
 *         adm_skip_aim_scale,
 *   adm3 = max(adm2 w + (1 - aim)(1 - w), adm_min_val), w = adm_dlm_weight
 *          (or their harmonic mean with adm_adm3_apply_hm),
 *   adm_scale<s> = num / den of the scale.
 * With debug also adm, adm_num, adm_den and every scale's num and den.
 *
 * Every float operation is libvmaf's, with its types (float bands, double
 * constants where libvmaf's are double, its libm calls) and its order.
 * The order of work differs: each level is made row by row, in row bands
 * that run on idle workers, and its decoupling, CSF and masking follow
 * three rows behind, so only the approximation bands are kept whole; each
 * row's sums are kept, and added in row order at the end.
 *
 * libvmaf divides by reciprocal (rcpss and one Newton step) wherever SSE2
 * exists, as x86-64 always has it: so does this file; elsewhere, as
 * libvmaf there, it divides.  The rcpss approximation is the CPU's, and
 * AMD's differs from Intel's in the last bits: on the same CPU the scores
 * equal libvmaf's bit for bit; the golden scores, made on an AMD EPYC,
 * differ on Intel by up to about 1e-7.
 *
 * Where gcc or clang vectors exist, four samples at a time go through the
 * same operations lane by lane (rcpps gives each lane what rcpss gives);
 * the sums stay sequential, in libvmaf's order.
 *
 * float_adm.h holds what the CUDA twin (src/cuda/float_adm.cu) shares with
 * this file: the state, the decoupling and masking sums of one sample, the
 * scores from a level's sums, the keys, the reciprocal.
 *
 * Sizes: the DWT's mirror needs two samples in its input and the masking
 * window two in its output at every level: 17x17 and more.  libvmaf reads
 * outside its pictures below that; smaller pictures are refused.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "float_adm_private.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common.h"
#include "metric.h"
#include "metrics/common/adm_csf.h"
#include "float_adm.h"
#include "metrics/common/picture_float.h"

#include "float_adm_private.h"


/* ---- keys ------------------------------------------------------------------ */

enum {
    KEY_ADM2 = FLOAT_ADM_KEY_ADM2, KEY_AIM = FLOAT_ADM_KEY_AIM, KEY_ADM3 = FLOAT_ADM_KEY_ADM3,
    KEY_SCALE0 = FLOAT_ADM_KEY_SCALE0, KEY_ADM = FLOAT_ADM_KEY_ADM, KEY_NUM = FLOAT_ADM_KEY_NUM,
    KEY_DEN = FLOAT_ADM_KEY_DEN, KEY_NUM_SCALE0 = FLOAT_ADM_KEY_NUM_SCALE0,
    KEY_COUNT = FLOAT_ADM_KEY_COUNT,
};

static const char *const adm_keys[KEY_COUNT + 1] = {
    "adm2", "aim", "adm3", "adm_scale0", "adm_scale1", "adm_scale2", "adm_scale3",
    /* with debug */
    "adm", "adm_num", "adm_den",
    "adm_num_scale0", "adm_den_scale0", "adm_num_scale1", "adm_den_scale1",
    "adm_num_scale2", "adm_den_scale2", "adm_num_scale3", "adm_den_scale3",
    NULL,
};

/* ---- state and options ----------------------------------------------------- */

/* FloatAdmState: float_adm.h */

#define F_OPTION(n, a, h, field)                                                     \
    { .name = n, .alias = a, .help = h, .offset = offsetof(FloatAdmState, field),   \
      .type = QUALE_OPTION_DOUBLE, .default_value.d = -1.0, .min = -1.0, .max = 10.0, \
      .flags = OPTION_FEATURE_PARAM }

static const MetricOption adm_options[] = {
    { .name = "debug", .help = "debug mode: enable additional output",
      .offset = offsetof(FloatAdmState, debug), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "adm_enhn_gain_limit", .alias = "egl",
      .help = "enhancement gain imposed on adm, must be >= 1.0, "
              "where 1.0 means the gain is completely disabled",
      .offset = offsetof(FloatAdmState, enhn_gain_limit), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 100.0, .min = 1.0, .max = 100.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_norm_view_dist", .alias = "nvd",
      .help = "normalized viewing distance = viewing distance / ref display's physical height",
      .offset = offsetof(FloatAdmState, norm_view_dist), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 3.0, .min = 0.75, .max = 24.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_noise_weight", .alias = "nw", .help = "noise weight",
      .offset = offsetof(FloatAdmState, noise_weight), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.03125, .min = 0.0, .max = 1500.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_csf_scale", .alias = "scf", .help = "scale factor for the CSF",
      .offset = offsetof(FloatAdmState, csf_scale), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.0, .max = 50.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_csf_diag_scale", .alias = "scfd", .help = "scale factor for the CSF diag",
      .offset = offsetof(FloatAdmState, csf_diag_scale), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 1.0, .min = 0.0, .max = 50.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_ref_display_height", .alias = "rdf",
      .help = "reference display height in pixels",
      .offset = offsetof(FloatAdmState, ref_display_height), .type = QUALE_OPTION_INT,
      .default_value.i = 1080, .min = 1, .max = 4320, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_csf_mode", .alias = "csf",
      .help = "contrast sensitivity function (0: Watson, 1: Barten, 2: ADM; others: Watson)",
      .offset = offsetof(FloatAdmState, csf_mode), .type = QUALE_OPTION_INT,
      .default_value.i = ADM_CSF_WATSON97, .min = 0, .max = 9, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_bypass_cm", .alias = "bcm", .help = "bypass contrast masking (CM)",
      .offset = offsetof(FloatAdmState, bypass_cm), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 0, .max = 1, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_adm3_apply_hm", .alias = "aah",
      .help = "apply harmonic mean to combine DLM and AIM",
      .offset = offsetof(FloatAdmState, adm3_apply_hm), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_p_norm", .alias = "apn", .help = "p-norm for energy vector",
      .offset = offsetof(FloatAdmState, p_norm), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 3.0, .min = 1.0, .max = 20.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_dlm_weight", .alias = "dlmw",
      .help = "linear weighting between DLM and AIM; 1 corresponds to DLM-only",
      .offset = offsetof(FloatAdmState, dlm_weight), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.5, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_min_val", .alias = "min",
      .help = "minimum value allowed; lower values will be clipped to this value",
      .offset = offsetof(FloatAdmState, min_val), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 0.0, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },
    F_OPTION("adm_f1s0", "f1s0", "factor1 scale0", factor1[0]),
    F_OPTION("adm_f1s1", "f1s1", "factor1 scale1", factor1[1]),
    F_OPTION("adm_f1s2", "f1s2", "factor1 scale2", factor1[2]),
    F_OPTION("adm_f1s3", "f1s3", "factor1 scale3", factor1[3]),
    F_OPTION("adm_f2s0", "f2s0", "factor2 scale0", factor2[0]),
    F_OPTION("adm_f2s1", "f2s1", "factor2 scale1", factor2[1]),
    F_OPTION("adm_f2s2", "f2s2", "factor2 scale2", factor2[2]),
    F_OPTION("adm_f2s3", "f2s3", "factor2 scale3", factor2[3]),
    /* libvmaf's default -1 lies outside its own range: only 0..3 can be set */
    { .name = "adm_skip_aim_scale", .alias = "sasc",
      .help = "when set, skip AIM calculations for that scale",
      .offset = offsetof(FloatAdmState, skip_aim_scale), .type = QUALE_OPTION_INT,
      .default_value.i = -1, .min = 0, .max = 3, .flags = OPTION_FEATURE_PARAM },
    { .name = "adm_skip_scale0", .alias = "ssz", .help = "skip the calculation of scale 0",
      .offset = offsetof(FloatAdmState, skip_scale0), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

#undef F_OPTION

/* ---- contrast sensitivity ---------------------------------------------------- */

/* The CSF weight of a scale: h and v (diag false) or d. */
static float csf_weight(const FloatAdmState *s, int scale, bool diag)
{
    float f;
    switch (s->csf_mode) {
    case ADM_CSF_BARTEN:
        f = adm_csf_barten(scale, s->norm_view_dist, s->ref_display_height, ADM_LUMINANCE_LEVEL,
                       diag ? s->csf_diag_scale : s->csf_scale);
        break;
    case ADM_CSF_ADM:
        f = adm_csf_dlm(scale, s->norm_view_dist, s->ref_display_height, diag ? 45 : 0);
        break;
    default:
        f = 1.0f / adm_csf_watson_quant_step(scale, diag ? 2 : 1, s->norm_view_dist,
                                     s->ref_display_height);
        break;
    }
    const double forced = diag ? s->factor2[scale] : s->factor1[scale];
    return forced >= 0 ? (float)forced : f;
}

/* ---- small helpers ------------------------------------------------------------ */


bool float_adm_divides_by_reciprocal(void)
{
#if defined(__SSE2__)
    return true;
#else
    return false;
#endif
}

float float_adm_reciprocal(float d)
{
#if defined(__SSE2__)
    return _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(d)));
#else
    return 1.0f / d;
#endif
}

/* The table of float_adm_reciprocal_table(), made once per process.  The
 * host's rcpss depends on the leading 11 bits of the mantissa on the Intel
 * CPUs measured (2048 entries); the table is as fine as the host needs,
 * 2^23 entries at most. */
static pthread_once_t rcp_once = PTHREAD_ONCE_INIT;
static struct {
    bool exact;          /* the reference divides exactly */
    bool usable;         /* the table reproduces the host's reciprocal */
    unsigned shift;
    size_t count;
    uint32_t *table;
} rcp;

static bool rcp_matches(uint32_t x)
{
    const float d = bitcast_bits_float(x);
    return bitcast_float_bits(float_adm_reciprocal_from_table(rcp.table, rcp.shift, d)) ==
           bitcast_float_bits(float_adm_reciprocal(d));
}

static void rcp_build(void)
{
    if (!float_adm_divides_by_reciprocal()) {
        rcp.exact = rcp.usable = true;
        return;
    }
    /* The finest table the host needs: where the result on [1, 2) changes,
     * the mantissa's lower bits below the change do not matter. */
    unsigned shift = 23;
    uint32_t prev = bitcast_float_bits(float_adm_reciprocal(1.0f));
    for (uint32_t m = 1; m < (1u << 23); m++) {
        const uint32_t r = bitcast_float_bits(float_adm_reciprocal(bitcast_bits_float(0x3F800000u | m)));
        if (r != prev) {
            const unsigned tz = (unsigned)__builtin_ctz(m);
            if (tz < shift) shift = tz;
            prev = r;
        }
    }
    rcp.shift = shift;
    rcp.count = (size_t)1 << (23 - shift);
    rcp.table = malloc(rcp.count * sizeof(uint32_t));
    if (!rcp.table) return;
    for (size_t k = 0; k < rcp.count; k++)
        rcp.table[k] = bitcast_float_bits(
            float_adm_reciprocal(bitcast_bits_float(0x3F800000u | (uint32_t)(k << shift))));

    /* Every exponent, both signs: edge mantissas and a spread of others.
     * The divisors are band values plus 1e-30: the exponents of zeros and
     * subnormals (a band value within 2^-126 of -1e-30) and of 2^126 and
     * more (no band of samples on the 8-bit scale comes near) do not
     * occur, so only the normal range must match; the others are x86's
     * rules, which Intel's CPUs follow. */
    static const uint32_t edges[] = { 0, 1, 2, 3, 0x7FFFFF, 0x7FFFFE, 0x400000, 0x3FFFFF,
                                      0x400001, 0x000FFF, 0x001000, 0x7FF000 };
    bool ok = true;
    for (uint32_t e = 1; e <= 252 && ok; e++) {
        for (uint32_t sign = 0; sign < 2 && ok; sign++) {
            const uint32_t top = sign << 31 | e << 23;
            for (size_t i = 0; i < QUALE_ARRAY_SIZE(edges) && ok; i++)
                ok = rcp_matches(top | edges[i]);
            for (uint32_t i = 0; i < 4096 && ok; i++)
                ok = rcp_matches(top | ((i * 2654435761u) >> 9 & 0x7FFFFFu));
        }
    }
    /* and the whole binade of 1e-30 (the eps alone: flat areas divide by
     * it), [1, 2) being the table itself */
    for (uint32_t m = 0; m < (1u << 23) && ok; m++) ok = rcp_matches((27u << 23) | m);
    rcp.usable = ok;
}

const uint32_t *float_adm_reciprocal_table(unsigned *shift, size_t *count, bool *usable)
{
    pthread_once(&rcp_once, rcp_build);
    *shift = rcp.shift;
    *count = rcp.count;
    *usable = rcp.usable && (rcp.exact || rcp.table);
    return rcp.exact ? NULL : rcp.table;
}

/* ---- per worker ---------------------------------------------------------------- */


static void adm_scratch_free(void *scratch)
{
    FloatAdmScratch *t = scratch;
    if (!t) return;
    quale_aligned_free(t->frame_memory);
    quale_aligned_free(t->block);
    free(t);
}

/* The approximation planes and row sums of t, made on first use.  Every
 * value a level reads is one it wrote: no clearing. */
static int scratch_frame_memory(const FloatAdmState *s, FloatAdmScratch *t)
{
    if (t->frame_memory) return 0;
    int w = (s->w + 1) / 2, h = (s->h + 1) / 2;
    size_t plane[2], sums[ADM_SCALES], total = 0;
    for (int i = 0; i < 2; i++) {
        t->stride[i] = quale_align((size_t)w, QUALE_ALIGNMENT / sizeof(float));
        plane[i] = quale_align(t->stride[i] * (size_t)h * sizeof(float), QUALE_ALIGNMENT);
        total += 2 * plane[i];
        w = (w + 1) / 2;
        h = (h + 1) / 2;
    }
    h = s->h;
    for (int k = 0; k < ADM_SCALES; k++) {
        h = (h + 1) / 2;
        sums[k] = quale_align((size_t)h * FLOAT_ADM_SUMS * sizeof(float), QUALE_ALIGNMENT);
        total += sums[k];
    }
    uint8_t *p = t->frame_memory = quale_aligned_alloc(total);
    if (!p) return -ENOMEM;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++, p += plane[i]) t->approx[i][k] = (float *)p;
    for (int k = 0; k < ADM_SCALES; k++) {
        t->row_sums[k] = (float *)p;
        p += sums[k];
    }
    return 0;
}

static int adm_scratch_alloc(const void *state, void **scratch)
{
    const FloatAdmState *s = state;
    const size_t w1 = (size_t)(s->w + 1) / 2;
    const size_t stride = quale_align(w1, QUALE_ALIGNMENT / sizeof(float));
    const size_t row = quale_align((size_t)s->w * sizeof(float), QUALE_ALIGNMENT);
    const size_t half_row = stride * sizeof(float);
    enum { FULL_ROWS = 2 * 4 + 2, HALF_ROWS = 2 * ORIENTATIONS + 3 * 4 * ORIENTATIONS + 6 + 1 };

    FloatAdmScratch *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    uint8_t *p = t->block = quale_aligned_alloc(FULL_ROWS * row + HALF_ROWS * half_row);
    if (!p) {
        free(t);
        return -ENOMEM;
    }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++, p += row) t->source[i][k] = (float *)p;
    t->lo = (float *)p;
    p += row;
    t->hi = (float *)p;
    p += row;
    for (int i = 0; i < 2; i++)
        for (int o = 0; o < ORIENTATIONS; o++, p += half_row) t->band[i][o] = (float *)p;
    for (int r = 0; r < 3; r++) {
        for (int o = 0; o < ORIENTATIONS; o++) {
            t->ring[r].csf_r[o] = (float *)p;
            p += half_row;
            t->ring[r].csf_a[o] = (float *)p;
            p += half_row;
            t->ring[r].flt_r[o] = (float *)p;
            p += half_row;
            t->ring[r].flt_a[o] = (float *)p;
            p += half_row;
        }
    }
    for (int i = 0; i < 6; i++, p += half_row) t->masked[i] = (float *)p;
    t->spare = (float *)p;
    *scratch = t;
    return 0;
}

/* ---- one level ------------------------------------------------------------------------ */

/*
 * A level's rows are cut into bands that run as tasks (metric_run_tasks()),
 * so that one large frame spreads over the idle workers.  A band makes the
 * approximation rows [y0, y1) of the level and the sums of its scored rows;
 * the masking window of its first and last scored rows reads one row on
 * either side, whose details the band makes again for itself.  Each row's
 * sums are made whole by one band, the same whoever makes them, and
 * float_adm_write_rows() adds them in row order as libvmaf does, so
 * neither the band size nor the thread count changes a digit; the bands
 * follow the thread count (metric_band_rows(): one band on one thread, no
 * row made twice).  A band writes only its own rows of extract()'s planes and sums,
 * and uses the row buffers of the thread that runs it.
 */
enum { ADM_BAND_MIN_ROWS = 32 };

typedef struct AdmBands {
    const FloatAdmState *s;
    const MetricFrame *frame;
    int scale, w, h;           /* the level's input */
    bool scored;
    const float *in[2];        /* levels 1..3: the previous approximation */
    size_t in_stride;
    float *out[2];             /* the level's approximation */
    size_t out_stride;
    float *row_sums;           /* FLOAT_ADM_SUMS a row */
    int band_rows;
} AdmBands;

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

static void adm_level_band(void *arg, unsigned band, void *scratch)
{
    const AdmBands *b = arg;
    const FloatAdmState *s = b->s;
    FloatAdmScratch *t = scratch;
    const int scale = b->scale, w = b->w, h = b->h;
    const int w2 = (w + 1) / 2, h2 = (h + 1) / 2;
    const int y0 = (int)band * b->band_rows, y1 = QUALE_MIN(y0 + b->band_rows, h2);
    const Rect rc = rect_scored(w2, h2);
    const int col_lo = QUALE_MAX(rc.left - 1, 0), col_hi = QUALE_MIN(rc.right + 1, w2);
    /* the band's scored rows, and the rows their masking windows read */
    const int s0 = QUALE_MAX(y0, rc.top), s1 = QUALE_MIN(y1, rc.bottom);
    const bool scored = b->scored && s0 < s1;
    const int d0 = scored ? QUALE_MAX(s0 - 1, 0) : y0, d1 = scored ? QUALE_MIN(s1 + 1, h2) : y0;
    const float *csf = s->csf[scale];
    const QualePicture *pics[2] = { b->frame->ref, b->frame->dist };

    if (scale == 0)
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 4; k++) t->source_row[i][k] = -1;

    int next = s0; /* the next row of the masked sums */
    for (int y = QUALE_MIN(y0, d0); y < QUALE_MAX(y1, d1); y++) {
        const bool details = y >= d0 && y < d1;
        const int rows[4] = { dwt_mirror(2 * y - 1, h), dwt_mirror(2 * y, h),
                              dwt_mirror(2 * y + 1, h), dwt_mirror(2 * y + 2, h) };
        for (int i = 0; i < 2; i++) {
            const float *src[4];
            for (int k = 0; k < 4; k++)
                src[k] = scale == 0 ? source_row(t, i, pics[i], rows[k])
                                    : b->in[i] + (size_t)rows[k] * b->in_stride;
            /* a row of another band: only its details are needed here */
            float *a = y >= y0 && y < y1 ? b->out[i] + (size_t)y * b->out_stride : t->spare;
            dwt_row(src, w, t->lo, t->hi, a, details ? t->band[i][O_H] : NULL, t->band[i][O_V],
                    t->band[i][O_D]);
        }
        if (!details) continue;

        const float *const o[ORIENTATIONS] = { t->band[0][O_H], t->band[0][O_V], t->band[0][O_D] };
        const float *const d[ORIENTATIONS] = { t->band[1][O_H], t->band[1][O_V], t->band[1][O_D] };
        decouple_row(s, o, d, csf, col_lo, col_hi, &t->ring[y % 3]);
        float *sums = b->row_sums + (size_t)y * FLOAT_ADM_SUMS;
        if (y >= s0 && y < s1) {
            float den[3] = { 0, 0, 0 };
            den_row(s, o, csf, rc.left, rc.right, den);
            for (int k = 0; k < 3; k++) sums[FLOAT_ADM_SUM_DEN_H + k] = den[k];
        }

        /* the rows whose masking window is complete */
        for (; next < s1 && window_down(next, h2) <= y; next++) {
            const int m = next;
            float num[3] = { 0, 0, 0 }, aim[3] = { 0, 0, 0 };
            mask_row(s, &t->ring[window_up(m) % 3], &t->ring[m % 3],
                     &t->ring[window_down(m, h2) % 3], w2, rc.left, rc.right, t->masked, num, aim);
            float *m_sums = b->row_sums + (size_t)m * FLOAT_ADM_SUMS;
            for (int k = 0; k < 3; k++) {
                m_sums[FLOAT_ADM_SUM_NUM_H + k] = num[k];
                m_sums[FLOAT_ADM_SUM_AIM_H + k] = aim[k];
            }
        }
    }
}

FloatAdmLevel float_adm_level(const FloatAdmState *s, int w2, int h2, bool scored,
                              const float sums[FLOAT_ADM_SUMS])
{
    FloatAdmLevel out = { 0.0f, 1e-10f, 0.0f }; /* libvmaf's values for a skipped scale 0 */
    if (scored) {
        const Rect rc = rect_scored(w2, h2);
        const int cw = rc.right - rc.left, ch = rc.bottom - rc.top;
        out.num = pooled(sums + FLOAT_ADM_SUM_NUM_H,
                         noise_floor(cw, ch, s->noise_weight, s->p_norm), s->p_norm);
        out.aim = pooled(sums + FLOAT_ADM_SUM_AIM_H, noise_floor(cw, ch, 0.0, s->p_norm),
                         s->p_norm);
        out.den = pooled(sums + FLOAT_ADM_SUM_DEN_H,
                         noise_floor(cw, ch, s->noise_weight, s->p_norm), s->p_norm);
    }
    return out;
}

/* ---- the metric --------------------------------------------------------------------------- */

static int adm_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    FloatAdmState *s = state;
    int err = picture_float_check(f, "float_adm", sink);
    if (err) return err;
    if (f->width < ADM_MIN_SIZE || f->height < ADM_MIN_SIZE) {
        feature_sink_log(sink, QUALE_LOG_ERROR,
                         "float_adm: cannot score %ux%u video: its four DWT levels need a "
                         "luma plane of at least %dx%d (libvmaf reads outside the picture "
                         "below that)", f->width, f->height, ADM_MIN_SIZE, ADM_MIN_SIZE);
        return -EINVAL;
    }

    s->w = (int)f->width;
    s->h = (int)f->height;
    s->cos_1deg_sq = cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0);
    for (int scale = 0; scale < ADM_SCALES; scale++) {
        s->csf[scale][O_H] = s->csf[scale][O_V] = csf_weight(s, scale, false);
        s->csf[scale][O_D] = csf_weight(s, scale, true);
    }

    const unsigned keys = s->debug ? KEY_COUNT : KEY_ADM;
    for (unsigned k = 0; k < keys; k++) {
        /* libvmaf's "adm" debug key is not among its provided features, so
         * it never takes the option suffix the others take. */
        err = k == KEY_ADM ? feature_sink_declare_plain(sink, adm_keys[k], &s->key[k])
                           : feature_sink_declare(sink, adm_keys[k], &s->key[k]);
        if (err) return err;
    }
    return 0;
}

static int adm_extract(const void *state, void *scratch, const MetricFrame *frame,
                       FeatureSink *sink)
{
    const FloatAdmState *s = state;
    FloatAdmScratch *t = scratch;
    int err = scratch_frame_memory(s, t);
    if (err) return err;

    AdmBands b = { .s = s, .frame = frame, .w = s->w, .h = s->h };
    for (int scale = 0; scale < ADM_SCALES && !err; scale++) {
        b.scale = scale;
        b.scored = scale > 0 || !s->skip_scale0;
        /* levels 0 and 2 write approx[0], 1 and 3 approx[1] */
        for (int i = 0; i < 2; i++) {
            b.in[i] = t->approx[(scale + 1) % 2][i];
            b.out[i] = t->approx[scale % 2][i];
        }
        b.in_stride = t->stride[(scale + 1) % 2];
        b.out_stride = t->stride[scale % 2];
        b.row_sums = t->row_sums[scale];
        const int rows = (b.h + 1) / 2;
        b.band_rows = (int)metric_band_rows(frame, (unsigned)rows, ADM_BAND_MIN_ROWS);
        err = metric_run_tasks(frame, t, (unsigned)((rows + b.band_rows - 1) / b.band_rows),
                               adm_level_band, &b);
        b.w = (b.w + 1) / 2;
        b.h = (b.h + 1) / 2;
    }
    if (err) return err;
    const float *const rows[ADM_SCALES] = { t->row_sums[0], t->row_sums[1], t->row_sums[2],
                                            t->row_sums[3] };
    return float_adm_write_rows(s, sink, frame->index, rows);
}

int float_adm_write(const FloatAdmState *s, FeatureSink *sink, unsigned f,
                    const FloatAdmLevel levels[ADM_SCALES])
{
    float num_scale[ADM_SCALES], den_scale[ADM_SCALES];
    double num = 0, den = 0, aim_num = 0, aim_den = 0;
    for (int scale = 0; scale < ADM_SCALES; scale++) {
        const FloatAdmLevel l = levels[scale];
        num += l.num;
        den += l.den;
        if (s->skip_aim_scale != scale) {
            aim_den += l.den;
            aim_num += l.aim;
        }
        num_scale[scale] = l.num;
        den_scale[scale] = l.den;
    }

    const double numden_limit = 1e-10 * (s->w * s->h) / (1920.0 * 1080.0);
    num = num < numden_limit ? 0 : num;
    den = den < numden_limit ? 0 : den;
    /* libvmaf leaves aim unset when the denominator is 0 (a flat reference
     * with adm_noise_weight=0); 0 here */
    double adm2 = 1.0, aim = 0.0;
    if (den != 0.0) {
        aim = QUALE_MIN(aim_num / aim_den, 1.0f);
        adm2 = num / den;
    }
    const double adm3 = s->adm3_apply_hm
                      ? QUALE_MAX(2 * adm2 * aim / (adm2 + aim), s->min_val)
                      : QUALE_MAX(adm2 * s->dlm_weight + (1 - aim) * (1 - s->dlm_weight),
                                  s->min_val);

    int err = feature_sink_put(sink, s->key[KEY_ADM2], f, adm2);
    if (!err) err = feature_sink_put(sink, s->key[KEY_AIM], f, aim);
    if (!err) err = feature_sink_put(sink, s->key[KEY_ADM3], f, adm3);
    for (int i = 0; i < ADM_SCALES && !err; i++)
        err = feature_sink_put(sink, s->key[KEY_SCALE0 + i], f,
                               (double)num_scale[i] / den_scale[i]);
    if (err || !s->debug) return err;

    err = feature_sink_put(sink, s->key[KEY_ADM], f, adm2);
    if (!err) err = feature_sink_put(sink, s->key[KEY_NUM], f, num);
    if (!err) err = feature_sink_put(sink, s->key[KEY_DEN], f, den);
    for (int i = 0; i < ADM_SCALES && !err; i++) {
        err = feature_sink_put(sink, s->key[KEY_NUM_SCALE0 + 2 * i], f, num_scale[i]);
        if (!err) err = feature_sink_put(sink, s->key[KEY_NUM_SCALE0 + 2 * i + 1], f, den_scale[i]);
    }
    return err;
}

int float_adm_write_rows(const FloatAdmState *s, FeatureSink *sink, unsigned f,
                         const float *const rows[ADM_SCALES])
{
    FloatAdmLevel levels[ADM_SCALES];
    int w = s->w, h = s->h;
    for (int k = 0; k < ADM_SCALES; k++) {
        const int w2 = (w + 1) / 2, h2 = (h + 1) / 2;
        const bool scored = k > 0 || !s->skip_scale0;
        float sums[FLOAT_ADM_SUMS] = { 0 };
        if (scored) {
            const Rect rc = rect_scored(w2, h2);
            for (int m = rc.top; m < rc.bottom; m++)
                for (int j = 0; j < FLOAT_ADM_SUMS; j++) sums[j] += rows[k][(size_t)m * FLOAT_ADM_SUMS + j];
        }
        levels[k] = float_adm_level(s, w2, h2, scored, sums);
        w = w2;
        h = h2;
    }
    return float_adm_write(s, sink, f, levels);
}

static const MetricModelFeature float_adm_model_features[] = {
    { "VMAF_feature_adm2_score", "adm2" },
    { "VMAF_feature_aim_score", "aim" },
    { "VMAF_feature_adm3_score", "adm3" },
    { "VMAF_feature_adm_scale0_score", "adm_scale0" },
    { "VMAF_feature_adm_scale1_score", "adm_scale1" },
    { "VMAF_feature_adm_scale2_score", "adm_scale2" },
    { "VMAF_feature_adm_scale3_score", "adm_scale3" },
    { "adm_num", "adm_num" },
    { "adm_den", "adm_den" },
    { "adm_scale0", "adm_scale0" },
    { "adm_num_scale0", "adm_num_scale0" },
    { "adm_den_scale0", "adm_den_scale0" },
    { "adm_num_scale1", "adm_num_scale1" },
    { "adm_den_scale1", "adm_den_scale1" },
    { "adm_num_scale2", "adm_num_scale2" },
    { "adm_den_scale2", "adm_den_scale2" },
    { "adm_num_scale3", "adm_num_scale3" },
    { "adm_den_scale3", "adm_den_scale3" },
    { NULL, NULL },
};

const Metric metric_float_adm = {
    .name = "float_adm",
    .keys = adm_keys,
    .model_features = float_adm_model_features,
    .options = adm_options,
    .state_size = sizeof(FloatAdmState),
    .flags = METRIC_LUMA_ONLY,
    .init = adm_init,
    .scratch_alloc = adm_scratch_alloc,
    .scratch_free = adm_scratch_free,
    .extract = adm_extract,
};
