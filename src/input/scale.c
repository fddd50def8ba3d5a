/*
 * Resampling filters with swscale's arithmetic (scale.h).
 *
 * make_filter() follows swscale's initFilter() step by step, as FFmpeg
 * 5.1 to 7.1 have it, for the flags FFmpeg's scale filter passes for
 * flags=NAME+accurate_rnd+bitexact: the filter of the method in 54-bit
 * fixed point over a window around each output's centre, its near-zero
 * ends trimmed, the taps that fall outside the picture folded onto its
 * edge samples, then normalised to the weight sum with the rounding error
 * carried from tap to tap.  Each of these steps changes the weights, so
 * each is kept exactly; the order of the operations, the integer divisions
 * (C's, toward zero) and the fixed-point constants are swscale's.
 *
 * The padding of the filter to a multiple of 4 taps (horizontal) and 2
 * (vertical) is that of swscale on x86; the padded taps stay zero (the
 * bitexact flag zeroes them) and change nothing but where, in a rare tie,
 * the carried rounding error may leave a weight of 1.
 */
#include "input/scale.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quale/quale.h"

enum Method { BICUBIC, BILINEAR, LANCZOS, NEIGHBOR, AREA, SPLINE };

static const struct {
    const char *name;
    enum Method method;
    int size_factor; /* the filter's reach, in input samples per output */
} methods[] = {
    { "bicubic", BICUBIC, 4 }, { "bilinear", BILINEAR, 2 }, { "lanczos", LANCZOS, 6 },
    { "neighbor", NEIGHBOR, 0 }, { "area", AREA, 1 },       { "spline", SPLINE, 20 },
};

/* swscale refuses a filter this long (it would scale in two steps). */
enum { MAX_TAPS = 255 };
/* the ends of a filter worth less than this share of its sum are trimmed */
#define REDUCE_CUTOFF 0.002

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

static int log2_int(unsigned v)
{
    int n = 0;
    while (v >>= 1) n++;
    return n;
}

/* A spline through the unit intervals (swscale's getSplineCoeff). */
static double spline_coeff(double a, double b, double c, double d, double dist)
{
    while (dist > 1.0) {
        const double nb = b + 2.0 * c + 3.0 * d, nc = c + 3.0 * d, nd = -b - 3.0 * c - 6.0 * d;
        a = 0.0;
        b = nb;
        c = nc;
        d = nd;
        dist -= 1.0;
    }
    return ((d * dist + c) * dist + b) * dist + a;
}

/* The weight of the method at distance d (30-bit fixed point of input
 * samples, already stretched for a downscale), in units of fone. */
static int64_t method_weight(enum Method method, int64_t d, int64_t fone, int64_t step)
{
    const double floatd = (double)d * (1.0 / (1 << 30));
    switch (method) {
    case BICUBIC: {
        /* Mitchell-Netravali with B = 0, C = 0.6 (swscale's default), in
         * 24-bit fixed point */
        const int64_t B = 0, C = (int64_t)(0.6 * (1 << 24));
        int64_t coeff;
        if (d >= 1LL << 31) {
            coeff = 0;
        } else {
            const int64_t dd = (d * d) >> 30, ddd = (dd * d) >> 30;
            if (d < 1LL << 30)
                coeff = (12 * (1 << 24) - 9 * B - 6 * C) * ddd +
                        (-18 * (1 << 24) + 12 * B + 6 * C) * dd + (6 * (1 << 24) - 2 * B) * (1 << 30);
            else
                coeff = (-B - 6 * C) * ddd + (6 * B + 30 * C) * dd + (-12 * B - 48 * C) * d +
                        (8 * B + 24 * C) * (1 << 30);
        }
        return coeff / ((1LL << 54) / fone);
    }
    case AREA: {
        const int64_t d2 = d - (1 << 29);
        int64_t coeff;
        if (d2 * step < -(1LL << (29 + 16)))
            coeff = 1LL << (30 + 16);
        else if (d2 * step < (1LL << (29 + 16)))
            coeff = -d2 * step + (1LL << (29 + 16));
        else
            coeff = 0;
        return coeff * (fone >> (30 + 16));
    }
    case LANCZOS: {
        const double p = 3.0;
        int64_t coeff = (int64_t)((d ? sin(floatd * M_PI) * sin(floatd * M_PI / p) /
                                           (floatd * floatd * M_PI * M_PI / p)
                                     : 1.0) *
                                  (double)fone);
        return floatd > p ? 0 : coeff;
    }
    case BILINEAR: {
        int64_t coeff = (1 << 30) - d;
        if (coeff < 0) coeff = 0;
        return coeff * (fone >> 30);
    }
    case SPLINE: {
        const double p = -2.196152422706632;
        return (int64_t)(spline_coeff(1.0, 0.0, p, -p - 1.0, floatd) * (double)fone);
    }
    case NEIGHBOR:
        break;
    }
    return 0;
}

/* swscale's ROUNDED_DIV: to the nearest, halves away from zero. */
static int64_t rounded_div(int64_t a, int64_t b)
{
    return (a >= 0 ? a + (b >> 1) : a - (b >> 1)) / b;
}

/* The weights of each output before trimming (size of them each, from
 * first[i]), by the method, in units of fone: *filter malloc'ed, or
 * -ENOMEM. */
static int raw_weights(int step, int src_size, int dst_size, int method_index, int src_pos,
                       int dst_pos, int64_t fone, int32_t *first, int64_t **filter_out,
                       int *size_out)
{
    const enum Method method = methods[method_index].method;
    int64_t *filter = NULL;
    int size;
    if ((step - 0x10000 < 10 && step - 0x10000 > -10) && src_pos == dst_pos) {
        /* the same size: each output is its input */
        size = 1;
        if (!(filter = calloc((size_t)dst_size, sizeof(*filter)))) return -ENOMEM;
        for (int i = 0; i < dst_size; i++) {
            filter[i] = fone;
            first[i] = i;
        }
    } else if (method == NEIGHBOR) {
        size = 1;
        if (!(filter = calloc((size_t)dst_size, sizeof(*filter)))) return -ENOMEM;
        int64_t at = (((int64_t)dst_pos * step) >> 8) - ((src_pos * 0x8000LL) >> 7);
        for (int i = 0; i < dst_size; i++) {
            first[i] = (int32_t)((at + (1 << 15)) >> 16);
            filter[i] = fone;
            at += step;
        }
    } else if (step <= (1 << 16) && method == AREA) {
        /* area upscales as a linear interpolation */
        size = 2;
        if (!(filter = calloc((size_t)dst_size * 2, sizeof(*filter)))) return -ENOMEM;
        int64_t at = (((int64_t)dst_pos * step) >> 8) - ((src_pos * 0x8000LL) >> 7);
        for (int i = 0; i < dst_size; i++) {
            int xx = (int)((at - (1 << 15) + (1 << 15)) >> 16);
            first[i] = xx;
            for (int j = 0; j < 2; j++, xx++) {
                int64_t coeff = fone - abs64((int64_t)xx * (1 << 16) - at) * (fone >> 16);
                filter[i * 2 + j] = coeff < 0 ? 0 : coeff;
            }
            at += step;
        }
    } else {
        const int factor = methods[method_index].size_factor;
        size = step <= (1 << 16) ? 1 + factor : 1 + (factor * src_size + dst_size - 1) / dst_size;
        if (size > src_size - 2) size = src_size - 2;
        if (size < 1) size = 1;
        if (!(filter = calloc((size_t)dst_size * (size_t)size, sizeof(*filter)))) return -ENOMEM;
        int64_t at = (((int64_t)dst_pos * step) >> 7) - ((src_pos * 0x10000LL) >> 7);
        for (int i = 0; i < dst_size; i++) {
            int xx = (int)((at - (size - 2) * (1LL << 16)) / (1 << 17));
            first[i] = xx;
            for (int j = 0; j < size; j++, xx++) {
                int64_t d = abs64((int64_t)xx * (1 << 17) - at) << 13;
                if (step > 1 << 16) d = d * dst_size / src_size;
                filter[i * size + j] = method_weight(method, d, fone, step);
            }
            at += 2LL * step;
        }
    }

    *filter_out = filter;
    *size_out = size;
    return 0;
}

/* Trims near-zero weights: from the left by moving the window right (while
 * it stays left of the next output's), and counts those on the right; the
 * longest remainder is the filter's length. */
static int trim_weights(int64_t *filter, int32_t *first, int size, int dst_size, int64_t fone)
{
    int min_size = 0;
    for (int i = dst_size - 1; i >= 0; i--) {
        int keep = size;
        int64_t cut = 0;
        for (int j = 0; j < size; j++) {
            cut += abs64(filter[i * size]);
            if (cut > REDUCE_CUTOFF * (double)fone) break;
            if (i < dst_size - 1 && first[i] >= first[i + 1]) break;
            for (int k = 1; k < size; k++) filter[i * size + k - 1] = filter[i * size + k];
            filter[i * size + size - 1] = 0;
            first[i]++;
        }
        cut = 0;
        for (int j = size - 1; j > 0; j--) {
            cut += abs64(filter[i * size + j]);
            if (cut > REDUCE_CUTOFF * (double)fone) break;
            keep--;
        }
        if (keep > min_size) min_size = keep;
    }
    return min_size;
}

/* Folds the taps outside the picture onto its edges. */
static void fold_edges(int64_t *trimmed, int32_t *first, int taps, int src_size, int dst_size)
{
    for (int i = 0; i < dst_size; i++) {
        int64_t *f = trimmed + (size_t)i * taps;
        if (first[i] < 0) {
            for (int j = 1; j < taps; j++) {
                const int left = j + first[i] > 0 ? j + first[i] : 0;
                f[left] += f[j];
                f[j] = 0;
            }
            first[i] = 0;
        }
        if (first[i] + taps > src_size) {
            const int shift = first[i] + (taps - src_size < 0 ? taps - src_size : 0);
            int64_t past = 0;
            for (int j = taps - 1; j >= 0; j--)
                if (first[i] + j >= src_size) {
                    past += f[j];
                    f[j] = 0;
                }
            for (int j = taps - 1; j >= 0; j--) f[j] = j < shift ? 0 : f[j - shift];
            first[i] -= shift;
            f[src_size - 1 - first[i]] += past;
        }
    }
}

/* The taps normalised to `one`, each tap's rounding error carried to the
 * next: out->coeff, or -ENOMEM. */
static int normalise(ScaleFilter *out, const int64_t *trimmed, int taps, int dst_size, int one)
{
    out->coeff = calloc((size_t)dst_size * (size_t)taps, sizeof(*out->coeff));
    if (!out->coeff) return -ENOMEM;
    for (int i = 0; i < dst_size; i++) {
        const int64_t *f = trimmed + (size_t)i * taps;
        int64_t sum = 0, error = 0;
        for (int j = 0; j < taps; j++) sum += f[j];
        sum = (sum + one / 2) / one;
        if (!sum) sum = 1;
        for (int j = 0; j < taps; j++) {
            const int64_t v = f[j] + error;
            const int64_t w = rounded_div(v, sum);
            out->coeff[(size_t)i * taps + j] = (int16_t)w;
            error = v - w * sum;
        }
    }
    return 0;
}

/* One direction of one plane (swscale's initFilter()); `step` is the
 * input distance between outputs in 16-bit fixed point, `one` the weight
 * sum, src_pos and dst_pos the sample sites in 1/256 of a sample. */
static int make_filter(ScaleFilter *out, int step, int src_size, int dst_size, int align, int one,
                       const int method_index, int src_pos, int dst_pos)
{
    /* the weights' unit: 2^54, less the downscale's octaves (up to 8) */
    const int octaves = log2_int((unsigned)(src_size / dst_size));
    const int64_t fone = 1LL << (54 - (octaves < 8 ? octaves : 8));
    int64_t *filter = NULL, *trimmed = NULL;
    int32_t *first = calloc((size_t)dst_size, sizeof(*first));
    int size = 0;
    int err = first ? raw_weights(step, src_size, dst_size, method_index, src_pos, dst_pos, fone,
                                  first, &filter, &size)
                    : -ENOMEM;
    if (err) goto done;
    const int min_size = trim_weights(filter, first, size, dst_size, fone);
    if (align == 2 && min_size == 1) align = 1; /* swscale's unscaled vertical case */
    const int taps = (min_size + align - 1) & ~(align - 1);
    if (taps > MAX_TAPS) {
        err = -ERANGE;
        goto done;
    }
    if (!(trimmed = calloc((size_t)dst_size * (size_t)taps, sizeof(*trimmed)))) {
        err = -ENOMEM;
        goto done;
    }
    for (int i = 0; i < dst_size; i++)
        for (int j = 0; j < taps && j < min_size && j < size; j++)
            trimmed[i * taps + j] = filter[i * size + j];
    fold_edges(trimmed, first, taps, src_size, dst_size);
    if ((err = normalise(out, trimmed, taps, dst_size, one))) goto done;
    out->first = first;
    first = NULL;
    out->taps = (unsigned)taps;
    out->src_size = (unsigned)src_size;
    out->dst_size = (unsigned)dst_size;
done:
    free(first);
    free(filter);
    free(trimmed);
    return err;
}

static int fail(char *why, size_t why_size, int err, const char *fmt, ...)
{
    if (why && why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return err;
}

int scale_plan_make(ScalePlan *plan, const QualeVideoFormat *from, const QualeVideoFormat *to,
                    const char *method, char *why, size_t why_size)
{
    if (!plan || !from || !to || !method) return fail(why, why_size, -EINVAL, "no plan");
    memset(plan, 0, sizeof(*plan));
    int index = -1;
    for (unsigned i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (!strcmp(method, methods[i].name)) index = (int)i;
    if (index < 0) return fail(why, why_size, -EINVAL, "unknown scaler '%s'", method);
    if (from->chroma != to->chroma || from->bitdepth != to->bitdepth)
        return fail(why, why_size, -ENOTSUP, "only the size changes here, not the chroma "
                    "format or depth");
    if (from->bitdepth < 8 || from->bitdepth > SCALE_MAX_BITDEPTH)
        return fail(why, why_size, -ENOTSUP, "%u-bit video scales on the CPU only (8 to %d "
                    "bits here)", from->bitdepth, SCALE_MAX_BITDEPTH);
    if (from->chroma < QUALE_CHROMA_400 || from->chroma > QUALE_CHROMA_444 || !from->width ||
        !from->height || !to->width || !to->height || from->width > 32768 ||
        from->height > 32768 || to->width > 32768 || to->height > 32768)
        return fail(why, why_size, -EINVAL, "not a picture format");
    const unsigned sub_x = from->chroma == QUALE_CHROMA_444 ? 0 : 1;
    const unsigned sub_y = from->chroma == QUALE_CHROMA_420 ? 1 : 0;
    plan->bitdepth = from->bitdepth;
    plan->planes = from->chroma == QUALE_CHROMA_400 ? 1 : 3;
    plan->src_width[0] = from->width;
    plan->src_height[0] = from->height;
    plan->dst_width[0] = to->width;
    plan->dst_height[0] = to->height;
    plan->src_width[1] = (from->width + (1u << sub_x) - 1) >> sub_x;
    plan->src_height[1] = (from->height + (1u << sub_y) - 1) >> sub_y;
    plan->dst_width[1] = (to->width + (1u << sub_x) - 1) >> sub_x;
    plan->dst_height[1] = (to->height + (1u << sub_y) - 1) >> sub_y;
    for (unsigned p = 0; p < (plan->planes > 1 ? 2u : 1u); p++) {
        const int sw = (int)plan->src_width[p], sh = (int)plan->src_height[p];
        const int dw = (int)plan->dst_width[p], dh = (int)plan->dst_height[p];
        const int step_x = (int)((((int64_t)sw << 16) + (dw >> 1)) / dw);
        const int step_y = (int)((((int64_t)sh << 16) + (dh >> 1)) / dh);
        /* Every plane's samples sit at the centre of what they cover:
         * swscale's default chroma site, the same 128 / 256 of a sample
         * for luma and subsampled chroma alike. */
        int err = make_filter(&plan->horizontal[p], step_x, sw, dw, 4, 1 << 14, index, 128, 128);
        if (!err) err = make_filter(&plan->vertical[p], step_y, sh, dh, 2, 1 << 12, index, 128, 128);
        if (err) {
            scale_plan_free(plan);
            return err == -ERANGE
                       ? fail(why, why_size, err, "%ux%u to %ux%u is too steep a downscale "
                              "for one pass", from->width, from->height, to->width, to->height)
                       : fail(why, why_size, err, "out of memory");
        }
    }
    return 0;
}

static void filter_free(ScaleFilter *f)
{
    free(f->first);
    free(f->coeff);
    memset(f, 0, sizeof(*f));
}

void scale_plan_free(ScalePlan *plan)
{
    if (!plan) return;
    for (unsigned p = 0; p < 2; p++) {
        filter_free(&plan->horizontal[p]);
        filter_free(&plan->vertical[p]);
    }
}

static unsigned sample_at(const QualePicture *pic, unsigned p, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p];
    return pic->format.bitdepth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

int scale_picture(const ScalePlan *plan, const QualePicture *from, QualePicture *to)
{
    const unsigned depth = plan->bitdepth;
    for (unsigned p = 0; p < plan->planes; p++) {
        const unsigned q = p ? 1 : 0;
        const ScaleFilter *h = &plan->horizontal[q], *v = &plan->vertical[q];
        const unsigned sh = plan->src_height[q], dw = plan->dst_width[q];
        int16_t *mid = malloc((size_t)sh * dw * sizeof(*mid));
        if (!mid) return -ENOMEM;
        for (unsigned y = 0; y < sh; y++)
            for (unsigned x = 0; x < dw; x++) {
                const int16_t *w = h->coeff + (size_t)x * h->taps;
                int32_t sum = 0;
                for (unsigned t = 0; t < h->taps; t++)
                    sum += (int32_t)sample_at(from, p, (unsigned)h->first[x] + t, y) * w[t];
                mid[(size_t)y * dw + x] = scale_horizontal_finish(sum, depth);
            }
        for (unsigned y = 0; y < plan->dst_height[q]; y++) {
            const int16_t *w = v->coeff + (size_t)y * v->taps;
            uint8_t *row = (uint8_t *)to->data[p] + (ptrdiff_t)y * to->stride[p];
            for (unsigned x = 0; x < dw; x++) {
                int32_t sum = scale_vertical_start(depth);
                for (unsigned t = 0; t < v->taps; t++)
                    sum += (int32_t)mid[(size_t)((unsigned)v->first[y] + t) * dw + x] * w[t];
                const uint16_t out = scale_vertical_finish(sum, depth);
                if (depth > 8)
                    ((uint16_t *)row)[x] = out;
                else
                    row[x] = (uint8_t)out;
            }
        }
        free(mid);
    }
    return 0;
}
