/*
 * libvmaf's IQA SSIM and decimation (see iqa.h).
 *
 * SSIM, as libvmaf's _iqa_ssim() with its default arguments (the path both
 * float_ssim and float_ms_ssim take):
 *   C1 = (0.01 * 255)^2, C2 = (0.03 * 255)^2, C3 = C2 / 2, in float;
 *   mu1, mu2, and the filtered ref^2, cmp^2, ref*cmp by the separable
 *   Gaussian over the (w - 10) x (h - 10) positions where it fits, the
 *   horizontal pass first, each output a double sum of float products
 *   rounded to float;
 *   sigma1^2 = max(0, f(ref^2) - mu1^2), sigma2^2 likewise,
 *   sigma12 = f(ref*cmp) - mu1 mu2, in float;
 *   sigma1 sigma2 = sqrt(sigma1^2 sigma2^2) rounded to float;
 *   l = (2 mu1 mu2 + C1) / (mu1^2 + mu2^2 + C1)    (double over float)
 *   c = (2 sigma1 sigma2 + C2) / (sigma1^2 + sigma2^2 + C2)    (same)
 *   s = (sigma12 + C3) / (sigma1 sigma2 + C3)      (float; sigma12 < 0
 *       with sigma1 sigma2 = 0 counts as 0, libvmaf's flat-region fix)
 * (iqa_ssim_terms(), iqa.h) and the means of l c s, l, c and s over the
 * positions, double sums in raster order, rounded to float.
 *
 * Here the rows stream through a ring of the last 11 horizontally filtered
 * rows instead of whole-picture arrays; the values are the same.
 *
 * Decimation, as libvmaf's _iqa_decimate() through _iqa_filter_pixel(): a
 * taps x taps kernel centred on every factor-th sample of every factor-th
 * row, each output the double sum, row by row, of the float products,
 * rounded to float.  The samples of a kernel row that one tap reads for
 * consecutive outputs are factor apart; they are gathered first into
 * consecutive "phases" so that the sums vectorise.
 *
 * The row loops are the kernels of an IqaDsp: this file's C ones (built
 * from iqa_tmpl.c) or src/metrics/x86/iqa_<isa>.c's, which give every
 * value the same operations in the same order.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common.h"
#include "cpu.h"
#include "iqa.h"

/* The C kernels. */
#define IQA_FN(name) iqa_##name##_c
#include "iqa_tmpl.c"
#undef IQA_FN

/* The dsp of one instruction set's kernels. */
#define IQA_KERNELS(isa)                                                                    \
    (IqaDsp){ .filter_row = iqa_filter_row_##isa, .filter_column = iqa_filter_column_##isa, \
              .products = iqa_products_##isa, .ssim_terms = iqa_ssim_terms_##isa,           \
              .decimate_row = iqa_decimate_row_##isa }

void iqa_dsp_init(IqaDsp *dsp, unsigned cpu_flags)
{
    CPU_PICK_KERNELS(*dsp, IQA_KERNELS, cpu_flags);
}

void iqa_pad_row(float *row, int w, int pad)
{
    for (int k = 1; k <= pad; k++) {
        row[-k] = row[k - 1];
        row[w - 1 + k] = row[w - k];
    }
}

IqaDecimatePlan iqa_decimate_plan(int taps, int factor, int dst_w)
{
    IqaDecimatePlan plan = { .taps = taps, .factor = factor, .dst_w = dst_w };
    /* room for taps samples before and after dst_w, and aligned rows */
    plan.stride = quale_align((size_t)dst_w + 2 * (size_t)taps, QUALE_ALIGNMENT / sizeof(float));
    const int centre = taps / 2;
    for (int p = 0; p < factor; p++) {
        plan.q_lo[p] = taps;
        plan.q_hi[p] = -taps;
    }
    for (int u = 0; u < taps; u++) {
        const int o = u - centre;
        const int p = ((o % factor) + factor) % factor;
        plan.p_of[u] = p;
        plan.q_of[u] = (o - p) / factor;
        plan.q_lo[p] = QUALE_MIN(plan.q_lo[p], plan.q_of[u]);
        plan.q_hi[p] = QUALE_MAX(plan.q_hi[p], plan.q_of[u]);
    }
    return plan;
}

size_t iqa_decimate_work_size(int dst_w, int taps, int factor)
{
    const IqaDecimatePlan plan = iqa_decimate_plan(taps, factor, dst_w);
    return quale_align((size_t)dst_w * sizeof(double), QUALE_ALIGNMENT) +
           (size_t)taps * factor * plan.stride * sizeof(float);
}

void iqa_decimate_row(const float *const *rows, const float *kernel, int taps, int factor,
                      int dst_w, float *dst, void *work)
{
    iqa_decimate_row_c(rows, kernel, taps, factor, dst_w, dst, work);
}

/* Row strides of the ring and of the vertical results, in floats. */
static size_t ssim_row_stride(int max_w)
{
    const size_t out_w = (size_t)max_w - (IQA_GAUSSIAN_TAPS - 1);
    return quale_align(out_w * sizeof(float), QUALE_ALIGNMENT) / sizeof(float);
}

int iqa_ssim_alloc(IqaSsim *ssim, int max_w, const IqaDsp *dsp)
{
    const size_t out_w = (size_t)max_w - (IQA_GAUSSIAN_TAPS - 1);
    const size_t stride = ssim_row_stride(max_w);
    *ssim = (IqaSsim){ .max_w = max_w };
    if (dsp) ssim->dsp = *dsp;
    else iqa_dsp_init(&ssim->dsp, 0);
    ssim->ring = quale_aligned_alloc(stride * sizeof(float) * IQA_Q_COUNT * IQA_GAUSSIAN_TAPS);
    ssim->vert = quale_aligned_alloc(stride * sizeof(float) * IQA_Q_COUNT);
    ssim->product = quale_aligned_alloc((size_t)max_w * sizeof(float));
    ssim->terms = quale_aligned_alloc(3 * out_w * sizeof(double));
    if (!ssim->ring || !ssim->vert || !ssim->product || !ssim->terms) {
        iqa_ssim_free(ssim);
        return -ENOMEM;
    }
    return 0;
}

void iqa_ssim_free(IqaSsim *ssim)
{
    quale_aligned_free(ssim->ring);
    quale_aligned_free(ssim->vert);
    quale_aligned_free(ssim->product);
    quale_aligned_free(ssim->terms);
    *ssim = (IqaSsim){ 0 };
}

void iqa_ssim_begin(IqaSsim *ssim, int w, int h)
{
    ssim->w = w;
    ssim->h = h;
    ssim->rows_in = 0;
    ssim->ssim_sum = ssim->l_sum = ssim->c_sum = ssim->s_sum = 0.0;
}

/* Row `slot` of quantity q in the ring. */
static float *ring_row(const IqaSsim *ssim, int q, int slot)
{
    return ssim->ring + ((size_t)q * IQA_GAUSSIAN_TAPS + slot) * ssim_row_stride(ssim->max_w);
}

/* The vertical pass of quantity q for the output row whose window starts
 * at input row `first`. */
static void gaussian_column(const IqaSsim *ssim, int q, int first, float *dst, int out_w)
{
    const float *rows[IQA_GAUSSIAN_TAPS];
    for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++)
        rows[v] = ring_row(ssim, q, (first + v) % IQA_GAUSSIAN_TAPS);
    ssim->dsp.filter_column(rows, dst, out_w);
}

/* The output row whose window starts at input row `first`. */
static void ssim_output_row(IqaSsim *ssim, int first)
{
    const int out_w = ssim->w - (IQA_GAUSSIAN_TAPS - 1);
    const size_t stride = ssim_row_stride(ssim->max_w);

    float *q[IQA_Q_COUNT];
    for (int k = 0; k < IQA_Q_COUNT; k++) {
        q[k] = ssim->vert + (size_t)k * stride;
        gaussian_column(ssim, k, first, q[k], out_w);
    }

    double *restrict l_row = ssim->terms;
    double *restrict c_row = l_row + out_w;
    double *restrict s_row = c_row + out_w;
    const float *const quantities[IQA_Q_COUNT] = { q[0], q[1], q[2], q[3], q[4] };
    ssim->dsp.ssim_terms(quantities, l_row, c_row, s_row, out_w);

    /* raster order, as libvmaf sums */
    double ssim_sum = ssim->ssim_sum, l_sum = ssim->l_sum, c_sum = ssim->c_sum,
           s_sum = ssim->s_sum;
    for (int x = 0; x < out_w; x++) {
        ssim_sum += l_row[x] * c_row[x] * s_row[x];
        l_sum += l_row[x];
        c_sum += c_row[x];
        s_sum += s_row[x];
    }
    ssim->ssim_sum = ssim_sum;
    ssim->l_sum = l_sum;
    ssim->c_sum = c_sum;
    ssim->s_sum = s_sum;
}

void iqa_ssim_push_row(IqaSsim *ssim, const float *ref, const float *cmp)
{
    const int w = ssim->w;
    const int out_w = w - (IQA_GAUSSIAN_TAPS - 1);
    const int slot = ssim->rows_in % IQA_GAUSSIAN_TAPS;
    float *restrict product = ssim->product;

    const IqaDsp *dsp = &ssim->dsp;
    dsp->filter_row(ref, ring_row(ssim, IQA_Q_MU1, slot), out_w);
    dsp->filter_row(cmp, ring_row(ssim, IQA_Q_MU2, slot), out_w);
    dsp->products(ref, ref, product, w);
    dsp->filter_row(product, ring_row(ssim, IQA_Q_RR, slot), out_w);
    dsp->products(cmp, cmp, product, w);
    dsp->filter_row(product, ring_row(ssim, IQA_Q_CC, slot), out_w);
    dsp->products(ref, cmp, product, w);
    dsp->filter_row(product, ring_row(ssim, IQA_Q_RC, slot), out_w);

    ssim->rows_in++;
    if (ssim->rows_in >= IQA_GAUSSIAN_TAPS)
        ssim_output_row(ssim, ssim->rows_in - IQA_GAUSSIAN_TAPS);
}

IqaSsimMeans iqa_ssim_means(const IqaSsimSums *sums, int w, int h)
{
    const int out_w = w - (IQA_GAUSSIAN_TAPS - 1);
    const int out_h = h - (IQA_GAUSSIAN_TAPS - 1);
    const double n = (double)(out_w * out_h);
    return (IqaSsimMeans){
        .ssim = (float)(sums->ssim / n),
        .l = (float)(sums->l / n),
        .c = (float)(sums->c / n),
        .s = (float)(sums->s / n),
    };
}

IqaSsimMeans iqa_ssim_end(const IqaSsim *ssim)
{
    const IqaSsimSums sums = { ssim->ssim_sum, ssim->l_sum, ssim->c_sum, ssim->s_sum };
    return iqa_ssim_means(&sums, ssim->w, ssim->h);
}

double iqa_db_cap(bool clip_db, unsigned bitdepth, unsigned width, unsigned height)
{
    if (!clip_db) return INFINITY;
    const unsigned peak = (1u << bitdepth) - 1;
    const double mse = 0.5 / (width * height);
    return ceil(10. * log10(peak * peak / mse));
}

double iqa_db_score(double score, bool enable_db, double max_db)
{
    return enable_db ? QUALE_MIN(-10. * log10(1 - score), max_db) : score;
}
