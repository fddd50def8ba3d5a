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
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common.h"
#include "iqa.h"

/* libvmaf's 1-D Gaussian (sigma 1.5), as its float constants. */
static const float iqa_gaussian[IQA_GAUSSIAN_TAPS] = { IQA_GAUSSIAN_WINDOW };

enum { Q_MU1, Q_MU2, Q_RR, Q_CC, Q_RC, Q_COUNT };

void iqa_pad_row(float *row, int w, int pad)
{
    for (int k = 1; k <= pad; k++) {
        row[-k] = row[k - 1];
        row[w - 1 + k] = row[w - k];
    }
}

/* The phases of the work memory: a row's samples x * factor + p for one
 * p each, with room for taps samples before and after dst_w. */
static size_t phase_stride(int dst_w, int taps)
{
    return quale_align((size_t)dst_w + 2 * (size_t)taps, QUALE_ALIGNMENT / sizeof(float));
}

size_t iqa_decimate_work_size(int dst_w, int taps, int factor)
{
    return quale_align((size_t)dst_w * sizeof(double), QUALE_ALIGNMENT) +
           (size_t)factor * phase_stride(dst_w, taps) * sizeof(float);
}

void iqa_decimate_row(const float *const *rows, const float *kernel, int taps, int factor,
                      int dst_w, float *dst, void *work)
{
    const int centre = taps / 2;
    double *restrict acc = work;
    float *phases = (float *)((char *)work +
                              quale_align((size_t)dst_w * sizeof(double), QUALE_ALIGNMENT));
    const size_t pstride = phase_stride(dst_w, taps);

    /* Tap u reads sample (x + q) * factor + p of its row, with
     * u - centre = q * factor + p, 0 <= p < factor: sample x + q of phase
     * p.  Each phase is copied over the range its taps read, so that the
     * sums below run over consecutive samples. */
    int q_of[IQA_MAX_TAPS], p_of[IQA_MAX_TAPS];
    int q_lo[IQA_MAX_TAPS], q_hi[IQA_MAX_TAPS];
    for (int p = 0; p < factor; p++) {
        q_lo[p] = taps;
        q_hi[p] = -taps;
    }
    for (int u = 0; u < taps; u++) {
        const int o = u - centre;
        p_of[u] = ((o % factor) + factor) % factor;
        q_of[u] = (o - p_of[u]) / factor;
        q_lo[p_of[u]] = QUALE_MIN(q_lo[p_of[u]], q_of[u]);
        q_hi[p_of[u]] = QUALE_MAX(q_hi[p_of[u]], q_of[u]);
    }

    for (int x = 0; x < dst_w; x++) acc[x] = 0.0;
    for (int v = 0; v < taps; v++) {
        for (int p = 0; p < factor; p++) {
            if (q_lo[p] > q_hi[p]) continue; /* no tap of this phase */
            float *phase = phases + (size_t)p * pstride + taps;
            for (int j = q_lo[p]; j < dst_w + q_hi[p]; j++)
                phase[j] = rows[v][j * factor + p];
        }
        for (int u = 0; u < taps; u++) {
            const float k = kernel[v * taps + u];
            const float *restrict src = phases + (size_t)p_of[u] * pstride + taps + q_of[u];
            for (int x = 0; x < dst_w; x++)
                acc[x] += (double)(src[x] * k);
        }
    }
    for (int x = 0; x < dst_w; x++) dst[x] = (float)acc[x];
}

/* Row strides of the ring and of the vertical results, in floats. */
static size_t ssim_row_stride(int max_w)
{
    const size_t out_w = (size_t)max_w - (IQA_GAUSSIAN_TAPS - 1);
    return quale_align(out_w * sizeof(float), QUALE_ALIGNMENT) / sizeof(float);
}

int iqa_ssim_alloc(IqaSsim *ssim, int max_w)
{
    const size_t out_w = (size_t)max_w - (IQA_GAUSSIAN_TAPS - 1);
    const size_t stride = ssim_row_stride(max_w);
    *ssim = (IqaSsim){ .max_w = max_w };
    ssim->ring = quale_aligned_alloc(stride * sizeof(float) * Q_COUNT * IQA_GAUSSIAN_TAPS);
    ssim->vert = quale_aligned_alloc(stride * sizeof(float) * Q_COUNT);
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

/* libvmaf's horizontal pass: dst[x] = (float) sum_u src[x + u] * g[u]. */
static void gaussian_row(const float *restrict src, float *restrict dst, int out_w)
{
    for (int x = 0; x < out_w; x++) {
        double sum = 0.0;
        for (int u = 0; u < IQA_GAUSSIAN_TAPS; u++)
            sum += (double)(src[x + u] * iqa_gaussian[u]);
        dst[x] = (float)sum;
    }
}

/* The vertical pass of quantity q for the output row whose window starts
 * at input row `first`. */
static void gaussian_column(const IqaSsim *ssim, int q, int first, float *restrict dst,
                            int out_w)
{
    const float *rows[IQA_GAUSSIAN_TAPS];
    for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++)
        rows[v] = ring_row(ssim, q, (first + v) % IQA_GAUSSIAN_TAPS);
    for (int x = 0; x < out_w; x++) {
        double sum = 0.0;
        for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++)
            sum += (double)(rows[v][x] * iqa_gaussian[v]);
        dst[x] = (float)sum;
    }
}

/* The output row whose window starts at input row `first`. */
static void ssim_output_row(IqaSsim *ssim, int first)
{
    const int out_w = ssim->w - (IQA_GAUSSIAN_TAPS - 1);
    const size_t stride = ssim_row_stride(ssim->max_w);

    float *restrict mu1 = ssim->vert;
    float *restrict mu2 = mu1 + stride;
    float *restrict rr = mu2 + stride;
    float *restrict cc = rr + stride;
    float *restrict rc = cc + stride;
    gaussian_column(ssim, Q_MU1, first, mu1, out_w);
    gaussian_column(ssim, Q_MU2, first, mu2, out_w);
    gaussian_column(ssim, Q_RR, first, rr, out_w);
    gaussian_column(ssim, Q_CC, first, cc, out_w);
    gaussian_column(ssim, Q_RC, first, rc, out_w);

    double *restrict l_row = ssim->terms;
    double *restrict c_row = l_row + out_w;
    double *restrict s_row = c_row + out_w;
    for (int x = 0; x < out_w; x++) {
        const IqaSsimTerms t = iqa_ssim_terms(mu1[x], mu2[x], rr[x], cc[x], rc[x]);
        l_row[x] = t.l;
        c_row[x] = t.c;
        s_row[x] = t.s;
    }

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

    gaussian_row(ref, ring_row(ssim, Q_MU1, slot), out_w);
    gaussian_row(cmp, ring_row(ssim, Q_MU2, slot), out_w);
    for (int x = 0; x < w; x++) product[x] = ref[x] * ref[x];
    gaussian_row(product, ring_row(ssim, Q_RR, slot), out_w);
    for (int x = 0; x < w; x++) product[x] = cmp[x] * cmp[x];
    gaussian_row(product, ring_row(ssim, Q_CC, slot), out_w);
    for (int x = 0; x < w; x++) product[x] = ref[x] * cmp[x];
    gaussian_row(product, ring_row(ssim, Q_RC, slot), out_w);

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
