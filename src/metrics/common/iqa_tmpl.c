/*
 * The row kernels of libvmaf's IQA SSIM and decimation (iqa.h's IqaDsp),
 * written once: iqa.c includes this file for the C reference and
 * src/metrics/x86/iqa_<isa>.c include it to build the same loops for AVX2
 * and AVX-512.  Every loop runs along x with one value per element and no
 * sum across elements, each element's operations in libvmaf's order, so
 * the compiler vectorises them without changing a bit (the project builds
 * with -ffp-contract=off and without fast-math); tests/checkasm/iqa.c
 * checks the outputs byte for byte.
 *
 * The includer defines IQA_FN(name), the name of this file's functions.
 */
#include <stdint.h>

#include "common.h"
#include "iqa.h"

/* Outputs per block of the filters: the block's double sums stay in
 * registers or the first level of cache. */
#define IQA_BLOCK 64

static const float IQA_FN(gaussian)[IQA_GAUSSIAN_TAPS] = { IQA_GAUSSIAN_WINDOW };

/* libvmaf's horizontal pass: dst[x] = (float) sum_u src[x + u] * g[u], the
 * float products in a double sum in tap order. */
void IQA_FN(filter_row)(const float *src, float *dst, int out_w)
{
    for (int x0 = 0; x0 < out_w; x0 += IQA_BLOCK) {
        const int n = QUALE_MIN(out_w - x0, IQA_BLOCK);
        const float *restrict s = src + x0;
        double acc[IQA_BLOCK];
        for (int x = 0; x < IQA_BLOCK; x++) acc[x] = 0.0;
        if (n == IQA_BLOCK) {
            for (int u = 0; u < IQA_GAUSSIAN_TAPS; u++)
                for (int x = 0; x < IQA_BLOCK; x++)
                    acc[x] += (double)(s[x + u] * IQA_FN(gaussian)[u]);
        } else {
            for (int u = 0; u < IQA_GAUSSIAN_TAPS; u++)
                for (int x = 0; x < n; x++) acc[x] += (double)(s[x + u] * IQA_FN(gaussian)[u]);
        }
        for (int x = 0; x < n; x++) dst[x0 + x] = (float)acc[x];
    }
}

/* The vertical pass: dst[x] = (float) sum_v rows[v][x] * g[v]. */
void IQA_FN(filter_column)(const float *const rows[IQA_GAUSSIAN_TAPS], float *dst, int out_w)
{
    for (int x0 = 0; x0 < out_w; x0 += IQA_BLOCK) {
        const int n = QUALE_MIN(out_w - x0, IQA_BLOCK);
        double acc[IQA_BLOCK];
        for (int x = 0; x < IQA_BLOCK; x++) acc[x] = 0.0;
        for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++) {
            const float *restrict r = rows[v] + x0;
            if (n == IQA_BLOCK) {
                for (int x = 0; x < IQA_BLOCK; x++)
                    acc[x] += (double)(r[x] * IQA_FN(gaussian)[v]);
            } else {
                for (int x = 0; x < n; x++) acc[x] += (double)(r[x] * IQA_FN(gaussian)[v]);
            }
        }
        for (int x = 0; x < n; x++) dst[x0 + x] = (float)acc[x];
    }
}

/* out[x] = a[x] * b[x] (the squares and the cross product of a row). */
void IQA_FN(products)(const float *a, const float *b, float *out, int w)
{
    const float *restrict pa = a, *restrict pb = b;
    float *restrict po = out;
    for (int x = 0; x < w; x++) po[x] = pa[x] * pb[x];
}

/* The SSIM terms of n positions from their five filtered quantities
 * q[IQA_Q_MU1 ...] (iqa_ssim_terms()). */
void IQA_FN(ssim_terms)(const float *const q[IQA_Q_COUNT], double *l, double *c, double *s,
                        int n)
{
    const float *restrict mu1 = q[IQA_Q_MU1], *restrict mu2 = q[IQA_Q_MU2];
    const float *restrict rr = q[IQA_Q_RR], *restrict cc = q[IQA_Q_CC];
    const float *restrict rc = q[IQA_Q_RC];
    double *restrict pl = l, *restrict pc = c, *restrict ps = s;
    for (int x = 0; x < n; x++) {
        const IqaSsimTerms t = iqa_ssim_terms(mu1[x], mu2[x], rr[x], cc[x], rc[x]);
        pl[x] = t.l;
        pc[x] = t.c;
        ps[x] = t.s;
    }
}

/* One output row of libvmaf's _iqa_decimate() (iqa.h): the sums run over
 * the kernel rows, then their taps, for every output. */
void IQA_FN(decimate_row)(const float *const *rows, const float *kernel, int taps, int factor,
                          int dst_w, float *dst, void *work)
{
    const IqaDecimatePlan plan = iqa_decimate_plan(taps, factor, dst_w);
    double *restrict acc = work;
    float *phases = iqa_decimate_phases(work, dst_w);
    for (int x = 0; x < dst_w; x++) acc[x] = 0.0;
    for (int v = 0; v < taps; v++) {
        float *row_phases = phases + (size_t)v * factor * plan.stride;
        iqa_decimate_split(&plan, rows[v], row_phases);
        for (int u = 0; u < taps; u++) {
            const float k = kernel[v * taps + u];
            const float *restrict src =
                row_phases + (size_t)plan.p_of[u] * plan.stride + taps + plan.q_of[u];
            for (int x = 0; x < dst_w; x++) acc[x] += (double)(src[x] * k);
        }
    }
    for (int x = 0; x < dst_w; x++) dst[x] = (float)acc[x];
}

#undef IQA_BLOCK
