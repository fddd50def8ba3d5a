/*
 * The pieces of libvmaf's IQA code (Tom Distler's IQA library as Netflix
 * modified it) that float_ssim and float_ms_ssim share: SSIM with the
 * 11-tap Gaussian window over the valid region of a picture, and
 * decimation with a square kernel and mirrored borders; and their row
 * kernels for the SIMD levels (IqaDsp).
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

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The first part is arithmetic that the CUDA twins (src/cuda/float_ssim.cu,
 * src/cuda/float_ms_ssim.cu) compile too: the window, the mirror, and the
 * SSIM terms of one position.  The second part (hidden from nvcc) is the
 * host's: the streaming SSIM and the decimation of the C reference, and
 * the step from the sums of the terms to the means.
 */
#include "host_device.h"

/* The Gaussian window: 11 taps, separable, applied where it fits whole. */
#define IQA_GAUSSIAN_TAPS 11

/* libvmaf's 1-D Gaussian (sigma 1.5), as its float constants: an
 * initialiser list. */
#define IQA_GAUSSIAN_WINDOW                                                       \
    0.001028f, 0.007599f, 0.036001f, 0.109361f, 0.213006f, 0.266012f, 0.213006f, \
        0.109361f, 0.036001f, 0.007599f, 0.001028f

/* Floats kept before and after every row of a padded picture: room for
 * the widest mirror a decimation reads (6 samples: half float_ssim's
 * 10-tap box, and one more where a block starts at the picture's end) and
 * a 32-byte aligned row start. */
#define IQA_PAD 8

/* The largest decimation kernel (float_ssim's scale option stops at 10). */
#define IQA_MAX_TAPS 10

/* libvmaf's size after decimation by factor: n / factor, plus one when n
 * is odd (whatever the factor). */
HOST_DEVICE_INLINE int iqa_decimated_size(int n, int factor)
{
    return n / factor + (n & 1);
}

/* The mirror of libvmaf's KBND_SYMMETRIC: -1 reads 0, n reads n - 1.
 * Valid for -n <= i < 2n.  A padded row (iqa_pad_row) holds the same
 * samples at -pad .. n - 1 + pad. */
HOST_DEVICE_INLINE int iqa_mirror(int i, int n)
{
    return i < 0 ? -1 - i : i >= n ? 2 * n - 1 - i : i;
}

/* SSIM's stabilising constants, in float as libvmaf computes them (the
 * Vulkan twins pass these values to their shaders). */
#define IQA_SSIM_C1 ((0.01f * 255) * (0.01f * 255))
#define IQA_SSIM_C2 ((0.03f * 255) * (0.03f * 255))
#define IQA_SSIM_C3 (IQA_SSIM_C2 / 2.0f)

/* The SSIM terms of one position, in double. */
typedef struct IqaSsimTerms {
    double l, c, s;
} IqaSsimTerms;

/*
 * libvmaf's SSIM at one position from the five filtered quantities (float):
 * the means mu1, mu2 and the filtered ref^2 (rr), cmp^2 (cc), ref*cmp (rc).
 *   C1 = (0.01 * 255)^2, C2 = (0.03 * 255)^2, C3 = C2 / 2, in float;
 *   sigma1^2 = max(0, rr - mu1^2), sigma2^2 likewise, sigma12 = rc - mu1 mu2
 *   (float); sigma1 sigma2 = sqrt(sigma1^2 sigma2^2) rounded to float;
 *   l = (2 mu1 mu2 + C1) / (mu1^2 + mu2^2 + C1)    (double over float)
 *   c = (2 sigma1 sigma2 + C2) / (sigma1^2 + sigma2^2 + C2)    (same)
 *   s = (sigma12 + C3) / (sigma1 sigma2 + C3)      (float; sigma12 < 0 with
 *       sigma1 sigma2 = 0 counts as 0, libvmaf's flat-region fix).
 * Every operation rounds once (no contraction: the build turns it off).
 */
HOST_DEVICE_INLINE IqaSsimTerms iqa_ssim_terms(float mu1, float mu2, float rr, float cc, float rc)
{
    const float C1 = IQA_SSIM_C1;
    const float C2 = IQA_SSIM_C2;
    const float C3 = IQA_SSIM_C3;
    float sigma1_sq = rr - mu1 * mu1;
    float sigma2_sq = cc - mu2 * mu2;
    /* libvmaf's MAX(0.0, v): a NaN stays */
    sigma1_sq = 0.0 > sigma1_sq ? 0.0f : sigma1_sq;
    sigma2_sq = 0.0 > sigma2_sq ? 0.0f : sigma2_sq;
    const float sigma12 = rc - mu1 * mu2;

    const float sigma1_sigma2 = (float)sqrt((double)(sigma1_sq * sigma2_sq));
    IqaSsimTerms t;
    t.l = (2.0 * mu1 * mu2 + C1) / (double)(mu1 * mu1 + mu2 * mu2 + C1);
    t.c = (2.0 * sigma1_sigma2 + C2) / (double)(sigma1_sq + sigma2_sq + C2);
    /* a flat region of identical pictures can leave sigma12 a little
     * below 0 where sigma1 sigma2 is 0: libvmaf counts it as 0 */
    const float sigma12_clamped = sigma12 < 0.0f && sigma1_sigma2 <= 0.0f ? 0.0f : sigma12;
    t.s = (double)((sigma12_clamped + C3) / (sigma1_sigma2 + C3));
    return t;
}

#if !defined(__CUDACC__)

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The five filtered quantities of SSIM. */
enum { IQA_Q_MU1, IQA_Q_MU2, IQA_Q_RR, IQA_Q_CC, IQA_Q_RC, IQA_Q_COUNT };

/*
 * The row kernels the SIMD levels replace (iqa_tmpl.c, built for C, AVX2
 * and AVX-512):
 *   filter_row:    the horizontal Gaussian, dst[x] = (float) sum over u of
 *                  src[x + u] * g[u] (float products, double sum), for
 *                  x < out_w;
 *   filter_column: the vertical one, dst[x] from rows[v][x], v < 11;
 *   products:      out[x] = a[x] * b[x], x < w;
 *   ssim_terms:    l, c and s of n positions (iqa_ssim_terms()) from the
 *                  quantities q[IQA_Q_MU1 ...];
 *   decimate_row:  iqa_decimate_row().
 */
typedef struct IqaDsp {
    void (*filter_row)(const float *src, float *dst, int out_w);
    void (*filter_column)(const float *const rows[IQA_GAUSSIAN_TAPS], float *dst, int out_w);
    void (*products)(const float *a, const float *b, float *out, int w);
    void (*ssim_terms)(const float *const q[IQA_Q_COUNT], double *l, double *c, double *s,
                       int n);
    void (*decimate_row)(const float *const *rows, const float *kernel, int taps, int factor,
                         int dst_w, float *dst, void *work);
} IqaDsp;

/* The C kernels, then those of the widest instruction set cpu_flags
 * (QUALE_CPU_*) allows. */
void iqa_dsp_init(IqaDsp *dsp, unsigned cpu_flags);

#define IQA_DECLARE_KERNELS(isa)                                                                \
    void iqa_filter_row_##isa(const float *src, float *dst, int out_w);                        \
    void iqa_filter_column_##isa(const float *const rows[IQA_GAUSSIAN_TAPS], float *dst,       \
                                 int out_w);                                                   \
    void iqa_products_##isa(const float *a, const float *b, float *out, int w);                \
    void iqa_ssim_terms_##isa(const float *const q[IQA_Q_COUNT], double *l, double *c,         \
                              double *s, int n);                                               \
    void iqa_decimate_row_##isa(const float *const *rows, const float *kernel, int taps,       \
                                int factor, int dst_w, float *dst, void *work);
IQA_DECLARE_KERNELS(c)
IQA_DECLARE_KERNELS(avx2)
IQA_DECLARE_KERNELS(avx512)

/* ---- decimation ---------------------------------------------------------- */

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
/*
 * How the kernels read a decimation's samples.  Tap u of a kernel row
 * reads sample (x + q) * factor + p of its source row for output x, with
 * u - taps / 2 = q * factor + p, 0 <= p < factor: sample x + q of phase p,
 * the row's samples p, p + factor, p + 2 factor, ...  The kernels first
 * split each source row into its phases (iqa_decimate_split), each copied
 * over the range its taps read, so that every tap then reads consecutive
 * samples.  The work memory holds dst_w doubles, then the phases of all
 * taps source rows: phase p of row v at (v * factor + p) * stride floats,
 * sample j of it at taps + j.
 */
typedef struct IqaDecimatePlan {
    int taps, factor, dst_w;
    size_t stride;                   /* floats from one phase to the next */
    int p_of[IQA_MAX_TAPS], q_of[IQA_MAX_TAPS];
    int q_lo[IQA_MAX_TAPS], q_hi[IQA_MAX_TAPS]; /* the samples phase p is read at */
} IqaDecimatePlan;

IqaDecimatePlan iqa_decimate_plan(int taps, int factor, int dst_w);

/* The phases in the work memory. */
static inline float *iqa_decimate_phases(void *work, int dst_w)
{
    return (float *)((char *)work + quale_align((size_t)dst_w * sizeof(double), QUALE_ALIGNMENT));
}

#if defined(__cplusplus)
#define IQA_RESTRICT __restrict__
#else
#define IQA_RESTRICT restrict
#endif

/* Splits a source row into its phases (plan->factor of them from phases). */
static inline void iqa_decimate_split(const IqaDecimatePlan *plan, const float *row,
                                      float *phases)
{
    if (plan->factor == 2) {
        /* the constant stride lets the compiler use loads and shuffles */
        for (int p = 0; p < 2; p++) {
            if (plan->q_lo[p] > plan->q_hi[p]) continue; /* no tap of this phase */
            float *IQA_RESTRICT phase = phases + (size_t)p * plan->stride + plan->taps;
            const float *IQA_RESTRICT in = row + p;
            for (int j = plan->q_lo[p]; j < plan->dst_w + plan->q_hi[p]; j++)
                phase[j] = in[2 * j];
        }
        return;
    }
    for (int p = 0; p < plan->factor; p++) {
        if (plan->q_lo[p] > plan->q_hi[p]) continue; /* no tap of this phase */
        float *IQA_RESTRICT phase = phases + (size_t)p * plan->stride + plan->taps;
        const float *IQA_RESTRICT in = row;
        for (int j = plan->q_lo[p]; j < plan->dst_w + plan->q_hi[p]; j++)
            phase[j] = in[j * plan->factor + p];
    }
}

void iqa_decimate_row(const float *const *rows, const float *kernel, int taps, int factor,
                      int dst_w, float *dst, void *work);

/* ---- SSIM ------------------------------------------------------------------ */

/* Means over the valid region, as float like libvmaf returns them. */
typedef struct IqaSsimMeans {
    float ssim, l, c, s;
} IqaSsimMeans;

/* Sums of the terms over the positions: l c s, l, c and s. */
typedef struct IqaSsimSums {
    double ssim, l, c, s;
} IqaSsimSums;

/* The means of a w x h picture's sums (over its (w - 10) x (h - 10)
 * positions), rounded to float as libvmaf returns them. */
IqaSsimMeans iqa_ssim_means(const IqaSsimSums *sums, int w, int h);

/*
 * SSIM of a w x h pair (w, h >= 11), fed one row at a time.  The buffers
 * are allocated once for the widest picture (iqa_ssim_alloc) and reused by
 * every picture and scale.
 */
typedef struct IqaSsim {
    IqaDsp dsp;
    int max_w;
    float *ring;      /* 5 filtered quantities x 11 rows x (max_w - 10) */
    float *vert;      /* 5 x (max_w - 10): an output row's filtered values */
    float *product;   /* max_w: the squares and product of a row */
    double *terms;    /* 3 x (max_w - 10): l, c and s of an output row */

    /* the picture under way */
    int w, h, rows_in;
    double ssim_sum, l_sum, c_sum, s_sum;
} IqaSsim;

/* dsp: the kernels to use (NULL: the C ones); it is copied. */
int iqa_ssim_alloc(IqaSsim *ssim, int max_w, const IqaDsp *dsp);
void iqa_ssim_free(IqaSsim *ssim);

/* Starts a picture of w x h, 11 <= w <= max_w, h >= 11. */
void iqa_ssim_begin(IqaSsim *ssim, int w, int h);

/* The next row (rows 0 .. h - 1 in order) of each picture, w floats. */
void iqa_ssim_push_row(IqaSsim *ssim, const float *ref, const float *cmp);

/* After the last row: the means of SSIM and of its three factors. */
IqaSsimMeans iqa_ssim_end(const IqaSsim *ssim);

/* The output options float_ssim and float_ms_ssim share, as rows of their
 * option tables (option.h) over their State (its bools enable_lcs,
 * enable_db, clip_db); `what` names the score in enable_db's help. */
#define IQA_SSIM_OUTPUT_OPTIONS(State, what)                                          \
    { .name = "enable_lcs",                                                          \
      .help = "enable luminance, contrast and structure intermediate output",       \
      .offset = offsetof(State, enable_lcs), .type = QUALE_OPTION_BOOL,              \
      .default_value.b = false },                                                    \
    { .name = "enable_db", .help = "write " what " values as dB",                  \
      .offset = offsetof(State, enable_db), .type = QUALE_OPTION_BOOL,               \
      .default_value.b = false },                                                    \
    { .name = "clip_db", .help = "clip dB scores",                                   \
      .offset = offsetof(State, clip_db), .type = QUALE_OPTION_BOOL,                 \
      .default_value.b = false }

/* libvmaf's cap of a dB score with clip_db, for pictures of width x height
 * at bitdepth: ceil(10 log10(peak^2 / (0.5 / (w h)))), peak = 2^bitdepth -
 * 1; infinity without clip_db. */
double iqa_db_cap(bool clip_db, unsigned bitdepth, unsigned width, unsigned height);

/* The score written: with enable_db, -10 log10(1 - score) dB, at most
 * max_db (iqa_db_cap()); else the score itself. */
double iqa_db_score(double score, bool enable_db, double max_db);

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_IQA_H */
