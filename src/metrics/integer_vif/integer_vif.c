/*
 * Integer VIF ("vif"): libvmaf's fixed-point visual information fidelity,
 * bit for bit (integer_vif_scale0 .. integer_vif_scale3).
 *
 * Four scales of the luma plane.  At each scale, with the scale's Gaussian
 * filter (17, 9, 5 and 3 taps, 16-bit coefficients summing to 65536), a
 * vertical then a horizontal pass give the local means mu1, mu2 and the
 * filtered squares and product; from them the variances sigma1_sq,
 * sigma2_sq and the covariance sigma12 in fixed point.  Each sample adds to
 *   den += log2(1 + sigma1_sq / sigma_nsq)
 *   num += log2(1 + g^2 sigma1_sq / (sv_sq + sigma_nsq)),
 *          g = sigma12 / sigma1_sq, sv_sq = sigma2_sq - g sigma12
 * (logs from a 2048-per-octave table of 16-bit mantissas) where sigma1_sq
 * reaches sigma_nsq = 2 in 16.16, and to a linear term elsewhere.  The
 * next scale is the filtered picture of the current one with every other
 * row and column kept.  The score of a scale is num / den, in float as
 * libvmaf writes it.
 *
 * Rows and columns outside the picture mirror it without repeating the
 * edge: index -1 reads 1 and index w reads w - 2.  libvmaf builds these
 * mirrors by copying, one step at a time, in padding that is only right
 * when every scale is at least 2 samples wide and high; below 16x16 its
 * smallest scale reads padding left from earlier rows or frames, so such
 * pictures are refused.
 *
 * The passes are the kernels of a VifDsp table (integer_vif.h), C here
 * and SIMD in src/metrics/x86/integer_vif_<isa>.c, picked in init.  The
 * vertical passes, which read samples, are in integer_vif_tmpl.c, once
 * for uint8_t and once for uint16_t; they hand a row to the horizontal
 * passes as 16-bit planes.  integer_vif.h holds what the GPU twins share
 * with this file: the statistic of one filtered sample (vif_pixel), the
 * state, and the step from a frame's integer sums to its values.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cpu.h"
#include "integer_vif.h"
#include "metric.h"

/* Columns per block of the filter passes: their sums stay in the
 * first-level cache. */
#define VIF_BLOCK 256

/*
 * The function that adds one pair of taps to a block of sums.  Kept out of
 * line: inlined into its loop over the taps, compilers fuse two taps into
 * one loop (unroll-and-jam) that they then leave scalar.  Inside, a full
 * block is a loop of constant length, which they vectorise even at -O2.
 */
#if defined(__GNUC__)
#define VIF_TAPS_FUNCTION __attribute__((noinline))
#else
#define VIF_TAPS_FUNCTION
#endif

/* libvmaf's filters (integer_vif.h). */
static const uint16_t vif_filter17[17] = { VIF_FILTER17 };
static const uint16_t vif_filter9[9] = { VIF_FILTER9 };
static const uint16_t vif_filter5[5] = { VIF_FILTER5 };
static const uint16_t vif_filter3[3] = { VIF_FILTER3 };

const uint16_t *vif_filter(unsigned fw)
{
    return fw == 17 ? vif_filter17 : fw == 9 ? vif_filter9 : fw == 5 ? vif_filter5 : vif_filter3;
}

/* In libvmaf's order of writing. */
static const char *const vif_keys[VIF_KEY_COUNT + 1] = {
    "integer_vif_scale0", "integer_vif_scale1",
    "integer_vif_scale2", "integer_vif_scale3",
    "integer_vif", "integer_vif_num", "integer_vif_den",
    "integer_vif_num_scale0", "integer_vif_den_scale0",
    "integer_vif_num_scale1", "integer_vif_den_scale1",
    "integer_vif_num_scale2", "integer_vif_den_scale2",
    "integer_vif_num_scale3", "integer_vif_den_scale3",
    NULL,
};

static const MetricOption vif_options[] = {
    { .name = "debug", .help = "debug mode: enable additional output",
      .offset = offsetof(VifState, debug), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { .name = "vif_enhn_gain_limit", .alias = "egl",
      .help = "enhancement gain imposed on vif, must be >= 1.0, "
              "where 1.0 means the gain is completely disabled",
      .offset = offsetof(VifState, enhn_gain_limit), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = VIF_DEFAULT_GAIN_LIMIT, .min = 1.0, .max = VIF_DEFAULT_GAIN_LIMIT,
      .flags = OPTION_FEATURE_PARAM },
    { .name = "vif_skip_scale0", .alias = "ssclz",
      .help = "when set, skip scale 0 calculations",
      .offset = offsetof(VifState, skip_scale0), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

/* ---- the C kernels -------------------------------------------------------- */

#define BITDEPTH 8
#include "integer_vif_tmpl.c"
#undef BITDEPTH
#define BITDEPTH 16
#include "integer_vif_tmpl.c"
#undef BITDEPTH

/* The five 32-bit lines of a block of columns, with the mirror samples of
 * the widest filter on each side: line[i] is column x0 + i - 8. */
#define VIF_LINE_REACH 8
typedef struct VifLines {
    uint32_t mu1[VIF_BLOCK + 2 * VIF_LINE_REACH], mu2[VIF_BLOCK + 2 * VIF_LINE_REACH];
    uint32_t xx[VIF_BLOCK + 2 * VIF_LINE_REACH], yy[VIF_BLOCK + 2 * VIF_LINE_REACH];
    uint32_t xy[VIF_BLOCK + 2 * VIF_LINE_REACH];
} VifLines;

/* Horizontal sums of a block of columns of one row. */
typedef struct VifBlock {
    uint32_t mu1[VIF_BLOCK], mu2[VIF_BLOCK];
    uint64_t xx[VIF_BLOCK], yy[VIF_BLOCK], xy[VIF_BLOCK];
} VifBlock;

/* The five lines of a row, from a column on. */
typedef struct VifLinesAt {
    const uint32_t *mu1, *mu2, *xx, *yy, *xy;
} VifLinesAt;

/* Adds the pair of taps of coefficient c, columns i - off and i + off of
 * the lines, to n columns of the sums. */
static inline void vif_horizontal_stats_taps_n(VifBlock *restrict b, const uint32_t *restrict m1,
                                               const uint32_t *restrict m2,
                                               const uint32_t *restrict xx,
                                               const uint32_t *restrict yy,
                                               const uint32_t *restrict xy,
                                               ptrdiff_t off, uint32_t c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const ptrdiff_t l = (ptrdiff_t)i - off, r = (ptrdiff_t)i + off;
        b->mu1[i] += c * (m1[l] + m1[r]);
        b->mu2[i] += c * (m2[l] + m2[r]);
        b->xx[i] += (uint64_t)c * xx[l] + (uint64_t)c * xx[r];
        b->yy[i] += (uint64_t)c * yy[l] + (uint64_t)c * yy[r];
        b->xy[i] += (uint64_t)c * xy[l] + (uint64_t)c * xy[r];
    }
}

static VIF_TAPS_FUNCTION void vif_horizontal_stats_taps(VifBlock *b, const VifLinesAt *in,
                                                        ptrdiff_t off, uint32_t c, unsigned n)
{
    if (n == VIF_BLOCK)
        vif_horizontal_stats_taps_n(b, in->mu1, in->mu2, in->xx, in->yy, in->xy, off, c,
                                    VIF_BLOCK);
    else
        vif_horizontal_stats_taps_n(b, in->mu1, in->mu2, in->xx, in->yy, in->xy, off, c, n);
}

/* The 32-bit value of a square or product from its planes. */
static inline uint32_t vif_plane_pair(const int16_t *hi, const int16_t *lo, ptrdiff_t i)
{
    return vif_plane_sample(hi[i]) << 16 | vif_plane_sample(lo[i]);
}

/* Horizontal pass of the statistics of one row, and the statistic of its
 * samples: means in 32 bits, squares and product in 64, a block of
 * columns at a time. */
static void vif_horizontal_stats_c(const int16_t *const planes[VIF_PLANES], unsigned n,
                                   unsigned fw, const uint16_t *table, double gain_limit,
                                   VifSums *sums)
{
    const unsigned half = fw / 2;
    const uint16_t *const c = vif_filter(fw);
    VifLines lines;
    VifBlock b;
    VifSums row = { 0 };
    for (unsigned x0 = 0; x0 < n; x0 += VIF_BLOCK) {
        const unsigned nb = QUALE_MIN(VIF_BLOCK, n - x0);
        /* the block's lines back in 32 bits, with their neighbours */
        for (ptrdiff_t i = -(ptrdiff_t)half; i < (ptrdiff_t)(nb + half); i++) {
            const ptrdiff_t x = (ptrdiff_t)x0 + i, at = i + VIF_LINE_REACH;
            lines.mu1[at] = vif_plane_sample(planes[VIF_PLANE_MU1][x]);
            lines.mu2[at] = vif_plane_sample(planes[VIF_PLANE_MU2][x]);
            lines.xx[at] = vif_plane_pair(planes[VIF_PLANE_XX_HI], planes[VIF_PLANE_XX_LO], x);
            lines.yy[at] = vif_plane_pair(planes[VIF_PLANE_YY_HI], planes[VIF_PLANE_YY_LO], x);
            lines.xy[at] = vif_plane_pair(planes[VIF_PLANE_XY_HI], planes[VIF_PLANE_XY_LO], x);
        }
        const VifLinesAt in = {
            lines.mu1 + VIF_LINE_REACH, lines.mu2 + VIF_LINE_REACH, lines.xx + VIF_LINE_REACH,
            lines.yy + VIF_LINE_REACH, lines.xy + VIF_LINE_REACH,
        };

        const uint32_t cc = c[half];
        for (unsigned i = 0; i < nb; i++) {
            b.mu1[i] = cc * in.mu1[i];
            b.mu2[i] = cc * in.mu2[i];
            b.xx[i] = (uint64_t)cc * in.xx[i];
            b.yy[i] = (uint64_t)cc * in.yy[i];
            b.xy[i] = (uint64_t)cc * in.xy[i];
        }
        for (unsigned k = 0; k < half; k++)
            vif_horizontal_stats_taps(&b, &in, (ptrdiff_t)(half - k), c[k], nb);

        /* vif_pixel(), integer_vif.h, is what the GPU twins run too */
        for (unsigned i = 0; i < nb; i++)
            vif_pixel(b.mu1[i], b.mu2[i], b.xx[i], b.yy[i], b.xy[i], table, gain_limit, &row);
    }
    sums->num_log += row.num_log;
    sums->den_log += row.den_log;
    sums->num_non_log += row.num_non_log;
    sums->den_non_log += row.den_non_log;
}

/* Horizontal pass of the low-pass filter, at the even columns only: the
 * decimated row. */
void vif_horizontal_lowpass_c(const int16_t *ref, const int16_t *dis, unsigned n_out,
                                     unsigned fw, uint16_t *ref_out, uint16_t *dis_out)
{
    const unsigned half = fw / 2;
    const uint16_t *const c = vif_filter(fw);
    for (unsigned x = 0; x < n_out; x++) {
        const ptrdiff_t j = 2 * (ptrdiff_t)x;
        uint32_t sum1 = c[half] * vif_plane_sample(ref[j]);
        uint32_t sum2 = c[half] * vif_plane_sample(dis[j]);
        for (unsigned k = 0; k < half; k++) {
            const ptrdiff_t off = half - k;
            sum1 += c[k] * (vif_plane_sample(ref[j - off]) + vif_plane_sample(ref[j + off]));
            sum2 += c[k] * (vif_plane_sample(dis[j - off]) + vif_plane_sample(dis[j + off]));
        }
        ref_out[x] = (uint16_t)((sum1 + 32768) >> 16);
        dis_out[x] = (uint16_t)((sum2 + 32768) >> 16);
    }
}

void vif_dsp_init(VifDsp *dsp, unsigned cpu_flags)
{
    dsp->vertical_stats[0] = vif_vertical_stats_c_8;
    dsp->vertical_stats[1] = vif_vertical_stats_c_16;
    dsp->horizontal_stats = vif_horizontal_stats_c;
    dsp->vertical_lowpass[0] = vif_vertical_lowpass_c_8;
    dsp->vertical_lowpass[1] = vif_vertical_lowpass_c_16;
    dsp->horizontal_lowpass = vif_horizontal_lowpass_c;
#if QUALE_X86_SIMD
    /* each level needs the ones below it: --cpumask 24 means C */
    if (!(cpu_flags & QUALE_CPU_AVX2)) return;
    vif_dsp_init_avx2(dsp);
    if (!(cpu_flags & QUALE_CPU_AVX512)) return;
    vif_dsp_init_avx512(dsp);
    if (!(cpu_flags & QUALE_CPU_AVX512ICL)) return;
    vif_dsp_init_avx512icl(dsp);
#else
    (void)cpu_flags;
#endif
}

/* ---- buffers ------------------------------------------------------------ */

/* The two pictures of one scale. */
typedef struct VifSource {
    const void *ref, *dis;
    ptrdiff_t ref_stride, dis_stride; /* in bytes */
    unsigned w, h;
} VifSource;

typedef struct VifScratch {
    int16_t *planes[VIF_PLANES]; /* a row between the passes, padded */
    int16_t *low_ref, *low_dis;  /* low-pass rows, padded like the planes */
    /* Decimated pictures: [0] holds scales 1 and 3, [1] scale 2. */
    uint16_t *scaled_ref[2], *scaled_dis[2];
    ptrdiff_t scaled_stride[2]; /* in bytes */
    void *memory;
} VifScratch;

/*
 * Row `row` of a picture of h rows, mirrored about the first and the last
 * row.  One reflection suffices: every filter's half width is below the
 * height of the scale it reads (init refuses smaller pictures).
 */
static inline const void *vif_row(const void *base, ptrdiff_t stride, int row, unsigned h)
{
    if (row < 0)
        row = -row;
    else if (row >= (int)h)
        row = 2 * ((int)h - 1) - row;
    return (const uint8_t *)base + row * stride;
}

/* The rows under the taps of a filter of fw taps centred on row y. */
static void vif_rows(const VifSource *src, unsigned y, unsigned fw,
                     const void *ref[VIF_MAX_TAPS], const void *dis[VIF_MAX_TAPS])
{
    for (unsigned k = 0; k < fw; k++) {
        const int row = (int)y - (int)(fw / 2) + (int)k;
        ref[k] = vif_row(src->ref, src->ref_stride, row, src->h);
        dis[k] = vif_row(src->dis, src->dis_stride, row, src->h);
    }
}

/* Mirrors a plane into its padding: p[-f] = p[f], p[w-1+f] = p[w-1-f]. */
static void vif_mirror_plane(int16_t *p, unsigned w, unsigned half)
{
    for (unsigned f = 1; f <= half; f++) {
        p[-(ptrdiff_t)f] = p[f];
        p[w - 1 + f] = p[w - 1 - f];
    }
}

/* ---- one scale ------------------------------------------------------------ */

/*
 * A scale's rows are cut into bands that run as tasks (metric_run_tasks()),
 * so one large frame spreads over idle workers.  A band needs only its
 * thread's line buffers; its sums are integers, added in any order to the
 * same total, and its decimated rows go straight to the frame's pictures
 * (the scratch of the thread that runs extract()).  So neither the band
 * size nor the thread count can change a digit.
 *
 * A band also makes the rows of the next scale that are centred on its
 * own even rows: their low-pass filter reads rows the statistics have
 * just read, still in cache, where a pass of its own would read the
 * whole scale again from memory.
 */
enum { VIF_BAND_ROWS = 32, VIF_MAX_BANDS = 64 };

typedef struct VifBands {
    const VifState *s;
    VifSource src, dst; /* dst: the next scale, in extract()'s scratch */
    bool wide;
    unsigned scale;
    bool stats, decimate; /* what the bands make: sums, the next scale */
    unsigned rows, band_rows, count;
    VifSums sums[VIF_MAX_BANDS];
} VifBands;

/* Bands of at least VIF_BAND_ROWS rows, at most VIF_MAX_BANDS of them. */
static void vif_bands_plan(VifBands *b, unsigned rows)
{
    unsigned band_rows = (rows + VIF_MAX_BANDS - 1) / VIF_MAX_BANDS;
    if (band_rows < VIF_BAND_ROWS) band_rows = VIF_BAND_ROWS;
    b->rows = rows;
    b->band_rows = band_rows;
    b->count = (rows + band_rows - 1) / band_rows;
}

VifShift vif_shift(unsigned bitdepth, unsigned scale)
{
    VifShift sh = { 32768, 16, 32768, 16 };
    if (scale == 0) {
        /* The samples' own precision: means to 16 bits, squares to 32. */
        const unsigned bd = bitdepth;
        sh.mu_round = 1u << (bd - 1);
        sh.mu_shift = bd;
        sh.sq_shift = 2 * (bd - 8);
        sh.sq_round = bd == 8 ? 0 : UINT64_C(1) << (sh.sq_shift - 1);
    }
    return sh;
}

/* The statistics of row y of a scale, added to *sums. */
static void vif_stats_row(const VifBands *b, const VifScratch *t, unsigned y, VifSums *sums)
{
    const VifState *s = b->s;
    const unsigned fw = VIF_FILTER_WIDTH(b->scale);
    const VifShift sh = vif_shift(s->bitdepth, b->scale);
    const void *ref[VIF_MAX_TAPS], *dis[VIF_MAX_TAPS];
    vif_rows(&b->src, y, fw, ref, dis);
    s->dsp.vertical_stats[b->wide](ref, dis, fw, b->src.w, &sh, t->planes);
    for (unsigned p = 0; p < VIF_PLANES; p++) vif_mirror_plane(t->planes[p], b->src.w, fw / 2);
    s->dsp.horizontal_stats((const int16_t *const *)t->planes, b->src.w, fw, s->log2_table,
                            s->enhn_gain_limit, sums);
}

/* Row y of the next scale: rows about 2y of this one low-passed with the
 * next scale's filter, every other column kept. */
static void vif_decimate_row(const VifBands *b, const VifScratch *t, unsigned y)
{
    const VifState *s = b->s;
    const unsigned next = b->scale + 1, fw = VIF_FILTER_WIDTH(next);
    /* From the picture, the samples' precision; after, 16 bits. */
    const unsigned shift = next == 1 ? s->bitdepth : 16;
    const void *ref[VIF_MAX_TAPS], *dis[VIF_MAX_TAPS];
    vif_rows(&b->src, 2 * y, fw, ref, dis);
    s->dsp.vertical_lowpass[b->wide](ref, dis, fw, b->src.w, shift, t->low_ref, t->low_dis);
    vif_mirror_plane(t->low_ref, b->src.w, fw / 2);
    vif_mirror_plane(t->low_dis, b->src.w, fw / 2);
    uint16_t *ref_out = (uint16_t *)((uint8_t *)b->dst.ref + y * b->dst.ref_stride);
    uint16_t *dis_out = (uint16_t *)((uint8_t *)b->dst.dis + y * b->dst.dis_stride);
    s->dsp.horizontal_lowpass(t->low_ref, t->low_dis, b->dst.w, fw, ref_out, dis_out);
}

static void vif_band(void *arg, unsigned band, void *scratch)
{
    VifBands *b = arg;
    const unsigned y0 = band * b->band_rows;
    const unsigned y1 = y0 + b->band_rows < b->rows ? y0 + b->band_rows : b->rows;
    b->sums[band] = (VifSums){ 0 };
    for (unsigned y = y0; y < y1; y++) {
        if (b->stats) vif_stats_row(b, scratch, y, &b->sums[band]);
        if (b->decimate && y % 2 == 0 && y / 2 < b->dst.h) vif_decimate_row(b, scratch, y / 2);
    }
}

/*
 * One scale: its sums (unless `stats` is false) and, below scale 3, the
 * next scale in slot `scale & 1` of t (the extract()'s scratch: scales 1
 * and 3 in slot 0, scale 2 in slot 1), into *next.
 */
static int vif_scale(const VifState *s, const VifScratch *t, const MetricFrame *frame,
                     const VifSource *src, bool wide, unsigned scale, bool stats, VifSums *sums,
                     VifSource *next)
{
    VifBands b = {
        .s = s, .src = *src, .wide = wide, .scale = scale,
        .stats = stats, .decimate = scale + 1 < VIF_SCALES,
    };
    if (b.decimate) {
        const unsigned slot = scale & 1;
        b.dst = (VifSource){
            .ref = t->scaled_ref[slot], .dis = t->scaled_dis[slot],
            .ref_stride = t->scaled_stride[slot], .dis_stride = t->scaled_stride[slot],
            .w = src->w / 2, .h = src->h / 2,
        };
        *next = b.dst;
    }
    vif_bands_plan(&b, src->h);
    const int err = metric_run_tasks(frame, (void *)t, b.count, vif_band, &b);
    *sums = (VifSums){ 0 };
    for (unsigned i = 0; i < b.count; i++) {
        sums->num_log += b.sums[i].num_log;
        sums->den_log += b.sums[i].den_log;
        sums->num_non_log += b.sums[i].num_non_log;
        sums->den_non_log += b.sums[i].den_non_log;
    }
    return err;
}

/* ---- the descriptor ------------------------------------------------------- */

int vif_check_size(unsigned width, unsigned height, char *error, size_t error_size)
{
    if (width >= VIF_MIN_SIDE && height >= VIF_MIN_SIDE) return 0;
    snprintf(error, error_size,
             "vif: a %ux%u picture is too small: integer VIF needs at least "
             "%ux%u luma samples (its fourth scale is an eighth of the "
             "picture, and libvmaf reads unset padding below 2x2)",
             width, height, VIF_MIN_SIDE, VIF_MIN_SIDE);
    return -EINVAL;
}

void vif_log2_table_fill(uint16_t *table)
{
    for (unsigned i = 0; i < VIF_LOG2_TABLE_SIZE; i++)
        table[i] = (uint16_t)round(log2f((float)(VIF_LOG2_BASE + i)) * 2048);
}

static int vif_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    VifState *s = state;
    char error[256];
    int err = vif_check_size(f->width, f->height, error, sizeof(error));
    if (err) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s", error);
        return err;
    }
    s->bitdepth = f->bitdepth;
    s->width = f->width;
    s->height = f->height;
    vif_log2_table_fill(s->log2_table);
    for (unsigned i = 0; i < VIF_LOG2_TABLE_SLACK; i++) s->log2_table[VIF_LOG2_TABLE_SIZE + i] = 0;
    vif_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));

    return feature_sink_declare_keys(sink, vif_keys, s->debug ? VIF_KEY_COUNT : VIF_KEY_SCORE,
                                     s->key);
}

static int vif_scratch_alloc(const void *state, void **scratch)
{
    const VifState *s = state;
    VifScratch *t = calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;

    const size_t line = quale_align(
        (VIF_PLANE_PAD_LEFT + (size_t)s->width + VIF_PLANE_PAD_RIGHT) * sizeof(int16_t),
        QUALE_ALIGNMENT);
    size_t scaled_size[2];
    for (unsigned i = 0; i < 2; i++) {
        const unsigned w = s->width >> (i + 1), h = s->height >> (i + 1);
        t->scaled_stride[i] = quale_align(w * sizeof(uint16_t), QUALE_ALIGNMENT);
        scaled_size[i] = (size_t)t->scaled_stride[i] * h;
    }
    const size_t total = (VIF_PLANES + 2) * line + 2 * scaled_size[0] + 2 * scaled_size[1];

    uint8_t *p = quale_aligned_alloc(total);
    if (!p) {
        free(t);
        return -ENOMEM;
    }
    memset(p, 0, total);
    t->memory = p;

    for (unsigned i = 0; i < VIF_PLANES; i++, p += line)
        t->planes[i] = (int16_t *)p + VIF_PLANE_PAD_LEFT;
    t->low_ref = (int16_t *)p + VIF_PLANE_PAD_LEFT;
    p += line;
    t->low_dis = (int16_t *)p + VIF_PLANE_PAD_LEFT;
    p += line;
    for (unsigned i = 0; i < 2; i++) {
        t->scaled_ref[i] = (uint16_t *)p;
        p += scaled_size[i];
        t->scaled_dis[i] = (uint16_t *)p;
        p += scaled_size[i];
    }
    *scratch = t;
    return 0;
}

static void vif_scratch_free(void *scratch)
{
    VifScratch *t = scratch;
    if (!t) return;
    quale_aligned_free(t->memory);
    free(t);
}

int vif_frame_sums(const VifState *s, void *scratch, const MetricFrame *frame,
                   VifSums sums[VIF_SCALES])
{
    const VifScratch *t = scratch;
    const QualePicture *ref = frame->ref, *dist = frame->dist;
    VifSource src = {
        .ref = ref->data[0], .dis = dist->data[0],
        .ref_stride = ref->stride[0], .dis_stride = dist->stride[0],
        .w = s->width, .h = s->height,
    };
    bool wide = s->bitdepth > 8;

    int err = 0;
    for (unsigned scale = 0; scale < VIF_SCALES && !err; scale++) {
        VifSource next = src;
        err = vif_scale(s, t, frame, &src, wide, scale, scale > 0 || !s->skip_scale0,
                        &sums[scale], &next);
        src = next;
        wide = true;
    }
    return err;
}

static int vif_extract(const void *state, void *scratch, const MetricFrame *frame,
                       FeatureSink *sink)
{
    const VifState *s = state;
    VifSums sums[VIF_SCALES];
    const int err = vif_frame_sums(s, scratch, frame, sums);
    if (err) return err;
    return vif_write(s, sink, frame->index, sums);
}

/* ---- the values, shared with the GPU twins -------------------------------- */

typedef struct VifScaleScore {
    float num, den;
} VifScaleScore;

/* libvmaf's expressions, in double, stored in float. */
static VifScaleScore vif_scale_score(const VifSums *sums)
{
    VifScaleScore score;
    score.num = (float)(sums->num_log / 2048.0 +
                        (sums->den_non_log - (sums->num_non_log / 16384.0) / 65025.0));
    score.den = (float)(sums->den_log / 2048.0 + sums->den_non_log);
    return score;
}

unsigned vif_values(const VifState *s, const VifSums sums[VIF_SCALES],
                    double value[VIF_KEY_COUNT])
{
    VifScaleScore score[VIF_SCALES] = { { 0 } };
    for (unsigned i = 0; i < VIF_SCALES; i++)
        if (i > 0 || !s->skip_scale0) score[i] = vif_scale_score(&sums[i]);

    /* The scores are float quotients, as libvmaf divides them. */
    for (unsigned i = 0; i < VIF_SCALES; i++)
        value[VIF_KEY_SCALE0 + i] =
            i == 0 && s->skip_scale0 ? 0.0 : score[i].num / score[i].den;
    if (!s->debug) return VIF_KEY_SCORE;

    const unsigned first = s->skip_scale0 ? 1 : 0;
    double num = score[first].num, den = score[first].den;
    for (unsigned i = first + 1; i < VIF_SCALES; i++) {
        num += score[i].num;
        den += score[i].den;
    }
    value[VIF_KEY_SCORE] = den == 0.0 ? 1.0 : num / den;
    value[VIF_KEY_NUM] = num;
    value[VIF_KEY_DEN] = den;
    for (unsigned i = 0; i < VIF_SCALES; i++) {
        value[VIF_KEY_NUM_SCALE0 + 2 * i] = score[i].num;
        value[VIF_KEY_DEN_SCALE0 + 2 * i] = score[i].den;
    }
    if (s->skip_scale0) {
        value[VIF_KEY_NUM_SCALE0] = 0.0;
        value[VIF_KEY_DEN_SCALE0] = -1.0;
    }
    return VIF_KEY_COUNT;
}

int vif_write(const VifState *s, FeatureSink *sink, unsigned index,
              const VifSums sums[VIF_SCALES])
{
    double value[VIF_KEY_COUNT];
    const unsigned count = vif_values(s, sums, value);
    for (unsigned k = 0; k < count; k++) {
        int err = feature_sink_put(sink, s->key[k], index, value[k]);
        if (err) return err;
    }
    return 0;
}

static const MetricModelFeature integer_vif_model_features[] = {
    { "VMAF_integer_feature_vif_scale0_score", "integer_vif_scale0" },
    { "VMAF_integer_feature_vif_scale1_score", "integer_vif_scale1" },
    { "VMAF_integer_feature_vif_scale2_score", "integer_vif_scale2" },
    { "VMAF_integer_feature_vif_scale3_score", "integer_vif_scale3" },
    { "integer_vif", "integer_vif" },
    { "integer_vif_num", "integer_vif_num" },
    { "integer_vif_den", "integer_vif_den" },
    { "integer_vif_num_scale0", "integer_vif_num_scale0" },
    { "integer_vif_den_scale0", "integer_vif_den_scale0" },
    { "integer_vif_num_scale1", "integer_vif_num_scale1" },
    { "integer_vif_den_scale1", "integer_vif_den_scale1" },
    { "integer_vif_num_scale2", "integer_vif_num_scale2" },
    { "integer_vif_den_scale2", "integer_vif_den_scale2" },
    { "integer_vif_num_scale3", "integer_vif_num_scale3" },
    { "integer_vif_den_scale3", "integer_vif_den_scale3" },
    { NULL, NULL },
};

const Metric metric_integer_vif = {
    .name = "vif",
    .keys = vif_keys,
    .model_features = integer_vif_model_features,
    .options = vif_options,
    .state_size = sizeof(VifState),
    .flags = METRIC_LUMA_ONLY,
    .init = vif_init,
    .extract = vif_extract,
    .scratch_alloc = vif_scratch_alloc,
    .scratch_free = vif_scratch_free,
};
