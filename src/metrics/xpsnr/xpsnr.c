/*
 * XPSNR, the extended perceptually weighted PSNR of Helmrich et al., as
 * FFmpeg 7.1's `xpsnr` filter computes it (reference = its first input,
 * the one whose activity weighs the errors; distorted = its second).
 *
 * The luma plane is cut into square blocks of side
 *   b = 4 * (int)(32 sqrt(w h / (3840 * 2160)) + 0.5).
 * Each block has an activity a: the mean absolute response of a 3x3
 * high-pass (12 at the centre, -2 at the sides, -1 at the corners) over
 * the block less the picture's outer ring of samples, plus twice the mean
 * absolute difference to the previous reference picture (from 32 fps up
 * the second difference of the last three), the previous pictures taken
 * as 0 before the first frame.  Above 2048x1152 both work on sums of 2x2
 * samples (a 4x4 high-pass on 2x2 steps, a ring of two samples, and
 * FFmpeg leaves a block's spatial term 0 where the part it filters is at
 * most 12 samples wide).  a is raised to 2^(bitdepth - 6) at least, and
 * the block's weight is 1 / a.  Up to 640x480 each weight is lowered to
 * its neighbours' as FFmpeg's in-line min-smoothing does, block by block.
 * A plane's weighted SSE is the sum, in raster order, of each block's
 * SSE times its weight (chroma blocks are the luma blocks' share of the
 * plane, with the same weights), times sqrt(16 2^(2 bitdepth - 9) /
 * sqrt(w h / (3840 * 2160))), rounded to an integer; a frame's value is
 *   xpsnr = 10 log10(plane samples * (2^bitdepth - 1)^2 / wsse),
 * +inf where wsse is 0.  Pictures of fewer than about 2025 samples
 * (b = 0) are not weighted: wsse is the plane's SSE, as the filter's code
 * means (FFmpeg 7.1 itself divides by b there and dies of SIGFPE).  FFmpeg's pooled
 * value (enable_axpsnr) is 10 log10(samples * peak^2 / m^2), m the mean
 * over the frames of sqrt(wsse); it also reports the least of the planes'.
 *
 * Where FFmpeg's arithmetic has quirks, they are kept: samples above 8 bits
 * are read as signed 16-bit integers (a 16-bit sample of 32768 and up is
 * negative in the activity), and the SSE of 16-bit samples is its x86
 * SSE2 kernel's, which wraps each difference to 16 bits and adds eight
 * squares of a 32-sample step in 32 bits (exact up to 14 bits, where
 * neither can happen).  Above 2048x1152 a picture of odd width or height
 * makes FFmpeg read and write past its planes; there quale reads the next
 * row of a packed plane, or 0 past its end, and takes the previous
 * pictures as they were, which may differ from FFmpeg's values.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cpu.h"
#include "metric.h"
#include "xpsnr.h"

/* The squared high-pass response counts twice in the temporal term. */
#define XPSNR_GAMMA 2u
/* Rows of zeros after a packed plane: the 2x2 loops of an odd plane read
 * up to three rows past it. */
#define XPSNR_PAD_ROWS 4u

static const MetricOption xpsnr_options[] = {
    { .name = "fps",
      .help = "the video's frame rate, which picks the temporal term: the difference to the "
              "previous frame below 32, of the last three frames from 32 up (FFmpeg takes "
              "the integer part of its second input's rate; 25 for raw video)",
      .offset = offsetof(XpsnrState, fps), .type = QUALE_OPTION_DOUBLE,
      .default_value.d = 25.0, .min = 0.0, .max = 1e6 },
    { .name = "enable_axpsnr",
      .help = "write FFmpeg's pooled XPSNR of the whole run (axpsnr_y, ..., axpsnr_min) and "
              "each frame's weighted SSE (xpsnr_wsse_y, ...)",
      .offset = offsetof(XpsnrState, enable_axpsnr), .type = QUALE_OPTION_BOOL,
      .default_value.b = false },
    { 0 },
};

static const char *const xpsnr_keys[] = {
    "xpsnr_y", "xpsnr_u", "xpsnr_v", "xpsnr_wsse_y", "xpsnr_wsse_u", "xpsnr_wsse_v", NULL,
};

#define XPSNR_FN(name) xpsnr_##name##_c
#include "xpsnr_tmpl.c"
#undef XPSNR_FN

/* The dsp of one instruction set's kernels. */
#define XPSNR_KERNELS(isa)                                                            \
    (XpsnrDsp){ .highpass = xpsnr_highpass_##isa, .temporal = xpsnr_temporal_##isa,   \
                .highpass_2x2 = xpsnr_highpass_2x2_##isa,                             \
                .temporal_2x2 = xpsnr_temporal_2x2_##isa, .sse_8 = xpsnr_sse_8_##isa, \
                .sse_16 = xpsnr_sse_16_##isa }

void xpsnr_dsp_init(XpsnrDsp *dsp, unsigned cpu_flags)
{
    CPU_PICK_KERNELS(*dsp, XPSNR_KERNELS, cpu_flags);
}

static int xpsnr_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    XpsnrState *s = state;
    xpsnr_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));
    s->width = f->width;
    s->height = f->height;
    s->bitdepth = f->bitdepth;
    s->planes = f->chroma == QUALE_CHROMA_400 ? 1 : 3;
    const unsigned ssx = f->chroma == QUALE_CHROMA_420 || f->chroma == QUALE_CHROMA_422;
    const unsigned ssy = f->chroma == QUALE_CHROMA_420;
    for (unsigned p = 0; p < 3; p++) {
        s->plane_width[p] = p ? (f->width + ssx) >> ssx : f->width;
        s->plane_height[p] = p ? (f->height + ssy) >> ssy : f->height;
        const uint64_t peak = ((uint64_t)1 << f->bitdepth) - 1;
        s->peak_area[p] = (double)((uint64_t)s->plane_width[p] * s->plane_height[p] * (peak * peak));
    }

    /* FFmpeg's expressions, in its types (w * h is a 32-bit product). */
    const uint32_t area = f->width * f->height;
    const double ratio = (double)area / (3840.0 * 2160.0);
    const int32_t b = 4 * (int32_t)(32.0 * sqrt(ratio) + 0.5);
    s->block = b > 0 ? (unsigned)b : 0;
    if (s->block >= 4) {
        s->blocks_x = (f->width + s->block - 1) / s->block;
        s->blocks_y = (f->height + s->block - 1) / s->block;
    }
    s->step = area > 2048 * 1152 ? 2 : 1;
    s->smoothing = area <= 640 * 480;
    s->second_order = (unsigned)s->fps >= 32;
    s->avg_act = sqrt(16.0 * (double)(1 << (2 * f->bitdepth - 9)) /
                      sqrt(ratio > 0.00001 ? ratio : 0.00001));
    s->floor_act = (double)(1 << (f->bitdepth - 6));

    int err = 0;
    for (unsigned p = 0; p < s->planes && !err; p++)
        err = feature_sink_declare(sink, xpsnr_keys[p], &s->key[p]);
    for (unsigned p = 0; p < s->planes && !err && s->enable_axpsnr; p++)
        err = feature_sink_declare(sink, xpsnr_keys[3 + p], &s->wsse_key[p]);
    return err;
}

/* ---- the per-worker scratch ---------------------------------------------- */

typedef struct XpsnrScratch {
    int16_t *org, *m1, *m2;   /* packed luma planes of width samples, then padding rows */
    uint64_t *sse, *spatial, *temporal; /* per luma block */
    uint64_t *chroma_sse[2];  /* per chroma block of planes 1 and 2 */
    double *weights;          /* per luma block */
} XpsnrScratch;

static void xpsnr_scratch_free(void *scratch)
{
    XpsnrScratch *sc = scratch;
    if (!sc) return;
    free(sc->org);
    free(sc->m1);
    free(sc->m2);
    free(sc->sse);
    free(sc->spatial);
    free(sc->temporal);
    free(sc->chroma_sse[0]);
    free(sc->chroma_sse[1]);
    free(sc->weights);
    free(sc);
}

static int xpsnr_scratch_alloc(const void *state, void **scratch)
{
    const XpsnrState *s = state;
    XpsnrScratch *sc = calloc(1, sizeof(*sc));
    if (!sc) return -ENOMEM;
    *scratch = sc;
    if (s->block < 4) return 0;
    const size_t samples = (size_t)s->width * (s->height + XPSNR_PAD_ROWS);
    const size_t blocks = (size_t)s->blocks_x * s->blocks_y;
    sc->org = calloc(samples, sizeof(int16_t));
    sc->m1 = calloc(samples, sizeof(int16_t));
    sc->m2 = calloc(samples, sizeof(int16_t));
    sc->sse = calloc(blocks, sizeof(uint64_t));
    sc->spatial = calloc(blocks, sizeof(uint64_t));
    sc->temporal = calloc(blocks, sizeof(uint64_t));
    sc->weights = calloc(blocks, sizeof(double));
    bool ok = sc->org && sc->m1 && sc->m2 && sc->sse && sc->spatial && sc->temporal && sc->weights;
    for (unsigned p = 1; p < s->planes && ok; p++) {
        unsigned bx, by, nx, ny;
        xpsnr_chroma_blocks(s, p, &bx, &by, &nx, &ny);
        ok = (sc->chroma_sse[p - 1] = calloc((size_t)nx * ny, sizeof(uint64_t))) != NULL;
    }
    if (!ok) {
        xpsnr_scratch_free(sc);
        *scratch = NULL;
        return -ENOMEM;
    }
    return 0;
}

/* A luma plane as FFmpeg's filter sees it: signed 16-bit samples, rows of
 * `width` samples one after the other; zeros where there is no picture. */
static void xpsnr_load_luma(const XpsnrState *s, const QualePicture *pic, int16_t *out)
{
    const unsigned w = s->width, h = s->height;
    if (!pic) {
        memset(out, 0, (size_t)w * h * sizeof(int16_t));
        return;
    }
    for (unsigned y = 0; y < h; y++) {
        const uint8_t *row = (const uint8_t *)pic->data[0] + (ptrdiff_t)y * pic->stride[0];
        int16_t *dst = out + (size_t)y * w;
        if (s->bitdepth > 8) {
            const uint16_t *r16 = (const uint16_t *)row;
            for (unsigned x = 0; x < w; x++) dst[x] = (int16_t)r16[x];
        } else {
            for (unsigned x = 0; x < w; x++) dst[x] = row[x];
        }
    }
}

/* ---- SSE ---------------------------------------------------------------- */

/* The SSE of a row of 16-bit samples as FFmpeg's SSE2 kernel sums it:
 * steps of 32 samples, each difference wrapped to 16 bits, each of four
 * 32-bit lanes the sum of eight squares modulo 2^32; then the rest exact. */
static uint64_t sse_row_sse2(const uint16_t *a, const uint16_t *b, unsigned n)
{
    uint64_t sse = 0;
    unsigned x = 0;
    for (; x + 32 <= n; x += 32) {
        for (unsigned lane = 0; lane < 4; lane++) {
            uint32_t sum = 0;
            for (unsigned q = 0; q < 4; q++) {
                for (unsigned k = 0; k < 2; k++) {
                    const unsigned i = x + 8 * q + 2 * lane + k;
                    const int32_t d = (int16_t)(uint16_t)(a[i] - b[i]);
                    sum += (uint32_t)(d * d);
                }
            }
            sse += sum;
        }
    }
    for (; x < n; x++) {
        const int64_t d = (int64_t)a[x] - b[x];
        sse += (uint64_t)(d * d);
    }
    return sse;
}

/* The SSE of a block of a plane. */
static uint64_t block_sse(const XpsnrState *s, const QualePicture *ref, const QualePicture *dist,
                          unsigned p, unsigned x0, unsigned y0, unsigned bw, unsigned bh)
{
    uint64_t sse = 0;
    for (unsigned y = y0; y < y0 + bh; y++) {
        const uint8_t *ra = (const uint8_t *)ref->data[p] + (ptrdiff_t)y * ref->stride[p];
        const uint8_t *da = (const uint8_t *)dist->data[p] + (ptrdiff_t)y * dist->stride[p];
        if (s->bitdepth > 14) {
            sse += sse_row_sse2((const uint16_t *)ra + x0, (const uint16_t *)da + x0, bw);
        } else if (s->bitdepth > 8) {
            sse += s->dsp.sse_16((const uint16_t *)ra + x0, (const uint16_t *)da + x0, bw);
        } else {
            sse += s->dsp.sse_8(ra + x0, da + x0, bw);
        }
    }
    return sse;
}

/* ---- activity ------------------------------------------------------------ */

double xpsnr_block_weight(const XpsnrState *s, uint64_t spatial, double spatial_count,
                          uint64_t temporal_sum, double block_samples)
{
    double act = (double)spatial / spatial_count;
    act += (double)temporal_sum / block_samples;
    if (act < s->floor_act) act = s->floor_act;
    act *= act;
    return 1.0 / sqrt(act);
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

void xpsnr_smooth_weight(const XpsnrState *s, double *wt, unsigned idx, unsigned x, unsigned y)
{
    const unsigned b = s->block, bx = s->blocks_x;
    double prev;
    if (x == 0) prev = idx > 1 ? wt[idx - 2] : 0;
    else prev = x > b ? max2(wt[idx - 2], wt[idx]) : wt[idx];
    if (idx > bx) prev = max2(prev, wt[idx - 1 - bx]);
    if (idx > 0 && wt[idx - 1] > prev) wt[idx - 1] = prev;
    if (x + b >= s->width && y + b >= s->height && idx > bx) {
        prev = max2(wt[idx - 1], wt[idx - bx]);
        if (wt[idx] > prev) wt[idx] = prev;
    }
}

/* A frame's values from its planes' weighted SSEs. */
static int put_values(const XpsnrState *s, const uint64_t wsse[3], unsigned index,
                      FeatureSink *sink)
{
    for (unsigned p = 0; p < s->planes; p++) {
        int err = feature_sink_put(sink, s->key[p], index, xpsnr_plane_value(s, p, wsse[p]));
        if (!err && s->enable_axpsnr)
            err = feature_sink_put(sink, s->wsse_key[p], index, (double)wsse[p]);
        if (err) return err;
    }
    return 0;
}

bool xpsnr_filter_bounds(const XpsnrState *s, unsigned x0, unsigned y0, unsigned bw,
                         unsigned bh, int bounds[4])
{
    const int bv = (int)s->step;
    bounds[0] = x0 > 0 ? 0 : bv;
    bounds[1] = y0 > 0 ? 0 : bv;
    bounds[2] = x0 + bw < s->width ? (int)bw : (int)bw - bv;
    bounds[3] = y0 + bh < s->height ? (int)bh : (int)bh - bv;
    return bounds[2] > bounds[0] && bounds[3] > bounds[1];
}

void xpsnr_chroma_blocks(const XpsnrState *s, unsigned p, unsigned *bx, unsigned *by,
                         unsigned *nx, unsigned *ny)
{
    const unsigned pw = s->plane_width[p], ph = s->plane_height[p];
    *bx = s->block * pw / s->width;
    *by = s->block * ph / s->height;
    *nx = *bx ? (pw + *bx - 1) / *bx : 0;
    *ny = *by ? (ph + *by - 1) / *by : 0;
}

/* A luma block's sums into sse[idx], spatial[idx] and temporal[idx]. */
static void luma_block(const XpsnrState *s, XpsnrScratch *sc, const MetricFrame *frame,
                       unsigned idx, unsigned x0, unsigned y0, unsigned bw, unsigned bh)
{
    const ptrdiff_t w = s->width;
    const ptrdiff_t at = (ptrdiff_t)y0 * w + x0;
    const int16_t *o0 = sc->org + at, *o1 = sc->m1 + at, *o2 = sc->m2 + at;
    int f[4];
    sc->sse[idx] = block_sse(s, frame->ref, frame->dist, 0, x0, y0, bw, bh);
    sc->spatial[idx] = sc->temporal[idx] = 0;
    if (!xpsnr_filter_bounds(s, x0, y0, bw, bh, f)) return; /* too small to filter */
    if (s->step == 1) {
        sc->spatial[idx] = s->dsp.highpass(o0, w, f[0], f[1], f[2], f[3]);
        sc->temporal[idx] = s->dsp.temporal(o0, o1, o2, w, bw, bh, s->second_order);
    } else {
        if (f[2] > 12) sc->spatial[idx] = s->dsp.highpass_2x2(o0, w, f[0], f[1], f[2], f[3]);
        sc->temporal[idx] = s->dsp.temporal_2x2(o0, o1, o2, w, bw, bh, s->second_order);
    }
}

int xpsnr_finish(const XpsnrState *s, const XpsnrSums *sums, double *weights, unsigned index,
                 FeatureSink *sink)
{
    const unsigned b = s->block, blocks = s->blocks_x * s->blocks_y;
    uint64_t wsse[3] = { 0, 0, 0 };
    unsigned idx = 0;
    for (unsigned y = 0; y < s->height; y += b) {
        const unsigned bh = QUALE_MIN(b, s->height - y);
        for (unsigned x = 0; x < s->width; x += b, idx++) {
            const unsigned bw = QUALE_MIN(b, s->width - x);
            int f[4];
            if (!xpsnr_filter_bounds(s, x, y, bw, bh, f)) {
                weights[idx] = 1.0; /* too small to filter */
            } else {
                /* FFmpeg leaves the spatial term 0 where its 2x2 part is at
                 * most 12 samples wide */
                const uint64_t spatial = s->step == 2 && f[2] <= 12 ? 0 : sums->spatial[idx];
                weights[idx] = xpsnr_block_weight(s, spatial,
                                                  (double)(f[2] - f[0]) * (double)(f[3] - f[1]),
                                                  XPSNR_GAMMA * sums->temporal[idx],
                                                  (double)bw * (double)bh);
            }
            /* it lowers earlier weights only: as FFmpeg's, block by block */
            if (s->smoothing) xpsnr_smooth_weight(s, weights, idx, x, y);
        }
    }
    double weighted = 0.0;
    for (unsigned i = 0; i < blocks; i++) weighted += (double)sums->sse[i] * weights[i];
    wsse[0] = xpsnr_round_wsse(s, weighted);

    for (unsigned p = 1; p < s->planes; p++) {
        unsigned bx, by, nx, ny;
        xpsnr_chroma_blocks(s, p, &bx, &by, &nx, &ny);
        if ((size_t)nx * ny > blocks) {
            feature_sink_log(sink, QUALE_LOG_ERROR, "xpsnr: the chroma blocks of a %ux%u picture "
                             "outnumber its luma blocks", s->width, s->height);
            return -EINVAL;
        }
        double sum = 0.0;
        for (unsigned k = 0; k < nx * ny; k++)
            sum += (double)sums->chroma_sse[p - 1][k] * weights[k];
        wsse[p] = xpsnr_round_wsse(s, sum);
    }
    return put_values(s, wsse, index, sink);
}

uint64_t xpsnr_round_wsse(const XpsnrState *s, double weighted)
{
    return weighted <= 0.0 ? 0 : (uint64_t)(weighted * s->avg_act + 0.5);
}

double xpsnr_plane_value(const XpsnrState *s, unsigned plane, uint64_t wsse)
{
    if (wsse == 0) return INFINITY;
    const double dist = sqrt((double)wsse);
    return 10.0 * log10(s->peak_area[plane] / (dist * dist));
}

static int xpsnr_extract(const void *state, void *scratch, const MetricFrame *frame,
                         FeatureSink *sink)
{
    const XpsnrState *s = state;
    XpsnrScratch *sc = scratch;
    if (s->block < 4) {
        uint64_t wsse[3] = { 0, 0, 0 };
        for (unsigned p = 0; p < s->planes; p++)
            wsse[p] = block_sse(s, frame->ref, frame->dist, p, 0, 0, s->plane_width[p],
                                s->plane_height[p]);
        return put_values(s, wsse, frame->index, sink);
    }
    xpsnr_load_luma(s, frame->ref, sc->org);
    xpsnr_load_luma(s, frame->prev_ref[0], sc->m1);
    if (s->second_order) xpsnr_load_luma(s, frame->prev_ref[1], sc->m2);
    const unsigned b = s->block;
    unsigned idx = 0;
    for (unsigned y = 0; y < s->height; y += b)
        for (unsigned x = 0; x < s->width; x += b, idx++)
            luma_block(s, sc, frame, idx, x, y, QUALE_MIN(b, s->width - x),
                       QUALE_MIN(b, s->height - y));
    for (unsigned p = 1; p < s->planes; p++) {
        unsigned bx, by, nx, ny;
        xpsnr_chroma_blocks(s, p, &bx, &by, &nx, &ny);
        const unsigned pw = s->plane_width[p], ph = s->plane_height[p];
        for (unsigned k = 0; k < nx * ny; k++) {
            const unsigned x = k % nx * bx, y = k / nx * by;
            sc->chroma_sse[p - 1][k] = block_sse(s, frame->ref, frame->dist, p, x, y,
                                                 QUALE_MIN(bx, pw - x), QUALE_MIN(by, ph - y));
        }
    }
    const XpsnrSums sums = { sc->sse, sc->spatial, sc->temporal,
                             { sc->chroma_sse[0], sc->chroma_sse[1] } };
    return xpsnr_finish(s, &sums, sc->weights, frame->index, sink);
}

static size_t chroma_block_count(const XpsnrState *s)
{
    unsigned bx, by, nx = 0, ny = 0;
    if (s->planes > 1) xpsnr_chroma_blocks(s, 1, &bx, &by, &nx, &ny);
    return (size_t)nx * ny;
}

size_t xpsnr_sum_count(const XpsnrState *s)
{
    return 3 * (size_t)s->blocks_x * s->blocks_y + 2 * chroma_block_count(s);
}

bool xpsnr_twin_supports(const XpsnrState *s)
{
    return s->block >= 4 && s->bitdepth <= 14 &&
           (s->step == 1 || (s->width % 2 == 0 && s->height % 2 == 0)) &&
           chroma_block_count(s) <= (size_t)s->blocks_x * s->blocks_y;
}

int xpsnr_finish_array(const XpsnrState *s, const uint64_t *sums, unsigned index,
                       FeatureSink *sink)
{
    const size_t blocks = (size_t)s->blocks_x * s->blocks_y;
    double *weights = malloc(blocks * sizeof(double));
    if (!weights) return -ENOMEM;
    const uint64_t *chroma = sums + 3 * blocks;
    const XpsnrSums split = { sums, sums + blocks, sums + 2 * blocks,
                              { chroma, chroma + chroma_block_count(s) } };
    const int err = xpsnr_finish(s, &split, weights, index, sink);
    free(weights);
    return err;
}

/* FFmpeg's pooled value: from the mean of sqrt(wsse) over the frames, or,
 * where that mean is below 1 (a frame without error), the mean of the
 * frames' values. */
static int xpsnr_flush(void *state, FeatureSink *sink, unsigned frame_count)
{
    static const char *const axpsnr_keys[3] = { "axpsnr_y", "axpsnr_u", "axpsnr_v" };
    XpsnrState *s = state;
    if (!s->enable_axpsnr) return 0;
    double least = 0.0;
    for (unsigned p = 0; p < s->planes; p++) {
        double dist = 0.0, values = 0.0, wsse, value;
        uint64_t n = 0;
        for (unsigned i = 0; i < frame_count; i++) {
            if (feature_sink_get(sink, s->wsse_key[p], i, &wsse)) continue;
            if (feature_sink_get(sink, s->key[p], i, &value)) continue;
            dist += sqrt(wsse);
            values += value;
            n++;
        }
        if (!n) return 0;
        double pooled;
        if (dist >= (double)n) {
            const double mean = dist / (double)n;
            pooled = 10.0 * log10(s->peak_area[p] / (mean * mean));
        } else {
            pooled = values / (double)n;
        }
        if (p == 0 || least > pooled) least = pooled;
        int err = feature_sink_set_aggregate(sink, axpsnr_keys[p], pooled);
        if (err) return err;
    }
    return s->planes > 1 ? feature_sink_set_aggregate(sink, "axpsnr_min", least) : 0;
}

const Metric metric_xpsnr = {
    .name = "xpsnr",
    .keys = xpsnr_keys,
    .options = xpsnr_options,
    .state_size = sizeof(XpsnrState),
    /* the temporal term reads the previous reference pictures (two from
     * 32 fps up) */
    .history = 2,
    .init = xpsnr_init,
    .scratch_alloc = xpsnr_scratch_alloc,
    .scratch_free = xpsnr_scratch_free,
    .extract = xpsnr_extract,
    .flush = xpsnr_flush,
};
