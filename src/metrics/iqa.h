/*
 * The pieces of libvmaf's IQA code (Tom Distler's IQA library as Netflix
 * modified it) that float_ssim and float_ms_ssim share: SSIM with the
 * 11-tap Gaussian window over the valid region of a picture, and
 * decimation with a square kernel and mirrored borders.
 *
 * Everything follows libvmaf's arithmetic: float samples and products,
 * double sums of the float products of each filter tap in tap order, float
 * results, then double per-pixel SSIM terms summed in raster order.  The
 * work is organised differently (rows streamed through small buffers
 * instead of whole-picture arrays) but every value is formed by the same
 * operations in the same order, so the results are the same bits.
 */
#ifndef QUALE_SRC_METRICS_IQA_H
#define QUALE_SRC_METRICS_IQA_H

#include <stddef.h>

/* The Gaussian window: 11 taps, separable, applied where it fits whole. */
#define IQA_GAUSSIAN_TAPS 11

/* Floats kept before and after every row of a padded picture: room for
 * the widest mirror a decimation reads (6 samples: half float_ssim's
 * 10-tap box, and one more where a block starts at the picture's end) and
 * a 32-byte aligned row start. */
#define IQA_PAD 8

/* The largest decimation kernel (float_ssim's scale option stops at 10). */
#define IQA_MAX_TAPS 10

/* ---- decimation ---------------------------------------------------------- */

/* libvmaf's size after decimation by factor: n / factor, plus one when n
 * is odd (whatever the factor). */
static inline int iqa_decimated_size(int n, int factor)
{
    return n / factor + (n & 1);
}

/* The mirror of libvmaf's KBND_SYMMETRIC: -1 reads 0, n reads n - 1.
 * Valid for -n <= i < 2n. */
static inline int iqa_mirror(int i, int n)
{
    return i < 0 ? -1 - i : i >= n ? 2 * n - 1 - i : i;
}

/* Writes the pad samples around a row of w floats: row[-k] = row[k - 1]
 * and row[w - 1 + k] = row[w - k], for k = 1 .. pad (pad <= w). */
void iqa_pad_row(float *row, int w, int pad);

/*
 * One output row of libvmaf's _iqa_decimate(): for every x < dst_w,
 *   dst[x] = (float) sum over v, then u, of rows[v][x * factor + u - taps / 2]
 *            * kernel[v * taps + u]
 * (float products, double sum), with v, u = 0 .. taps - 1 (taps <=
 * IQA_MAX_TAPS, factor <= taps).  rows[v] is the padded source row of the
 * output row's v-th tap row (mirrored already); work holds
 * iqa_decimate_work_size() bytes, 64-byte aligned.
 */
size_t iqa_decimate_work_size(int dst_w, int taps, int factor);
void iqa_decimate_row(const float *const *rows, const float *kernel, int taps, int factor,
                      int dst_w, float *dst, void *work);

/* ---- SSIM ------------------------------------------------------------------ */

/* Means over the valid region, as float like libvmaf returns them. */
typedef struct IqaSsimMeans {
    float ssim, l, c, s;
} IqaSsimMeans;

/*
 * SSIM of a w x h pair (w, h >= 11), fed one row at a time.  The buffers
 * are allocated once for the widest picture (iqa_ssim_alloc) and reused by
 * every picture and scale.
 */
typedef struct IqaSsim {
    int max_w;
    float *ring;      /* 5 filtered quantities x 11 rows x (max_w - 10) */
    float *vert;      /* 5 x (max_w - 10): an output row's filtered values */
    float *product;   /* max_w: the squares and product of a row */
    double *terms;    /* 3 x (max_w - 10): l, c and s of an output row */

    /* the picture under way */
    int w, h, rows_in;
    double ssim_sum, l_sum, c_sum, s_sum;
} IqaSsim;

int iqa_ssim_alloc(IqaSsim *ssim, int max_w);
void iqa_ssim_free(IqaSsim *ssim);

/* Starts a picture of w x h, 11 <= w <= max_w, h >= 11. */
void iqa_ssim_begin(IqaSsim *ssim, int w, int h);

/* The next row (rows 0 .. h - 1 in order) of each picture, w floats. */
void iqa_ssim_push_row(IqaSsim *ssim, const float *ref, const float *cmp);

/* After the last row: the means of SSIM and of its three factors. */
IqaSsimMeans iqa_ssim_end(const IqaSsim *ssim);

#endif /* QUALE_SRC_METRICS_IQA_H */
