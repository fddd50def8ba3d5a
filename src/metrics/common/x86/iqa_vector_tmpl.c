/*
 * IQA's row kernels (iqa.h's IqaDsp) on SIMD vectors of IQA_LANES doubles
 * (and as many floats), for the x86 instruction sets (iqa_avx2.c,
 * iqa_avx512.c include this file).  Each output is the C kernel's
 * (iqa_tmpl.c) operation for operation: the float products of a filter
 * tap converted to double and added in tap order, the SSIM terms as
 * iqa_ssim_terms() forms them; the vectors only run several outputs side
 * by side, their sums kept in registers over all the taps of a block of
 * outputs.  tests/checkasm/iqa.c checks the outputs byte for byte.
 *
 * The includer defines VECTOR_BYTES (vector.h: 4 or 8 doubles a vector)
 * and IQA_ISA(name).
 */
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "metrics/common/iqa.h"
#include "vector.h"

#define IQA_LANES (VECTOR_BYTES / 8)

typedef vec_f64 VD;
typedef vec_f32_half VF;
typedef int32_t VI32 __attribute__((vector_size(VECTOR_BYTES / 2)));

/* Vectors of sums per block of outputs. */
#define IQA_UNROLL 4
#define IQA_STEP (IQA_UNROLL * IQA_LANES)

static const float IQA_ISA(iqa_window)[IQA_GAUSSIAN_TAPS] = { IQA_GAUSSIAN_WINDOW };

static inline VF IQA_ISA(load)(const float *p)
{
    VF v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void IQA_ISA(store)(float *p, VF v)
{
    memcpy(p, &v, sizeof(v));
}

static inline VF IQA_ISA(splat)(float c)
{
    return (VF){ 0 } + c;
}

/* acc[k] += (double)(src[k * IQA_LANES ...] * k_tap), k < IQA_UNROLL */
static inline __attribute__((always_inline)) void IQA_ISA(tap)(VD acc[IQA_UNROLL],
                                                               const float *src, VF tap)
{
    for (int k = 0; k < IQA_UNROLL; k++)
        acc[k] += vec_widen(IQA_ISA(load)(src + k * IQA_LANES) * tap);
}

static inline __attribute__((always_inline)) void IQA_ISA(store_sums)(float *dst,
                                                                      const VD acc[IQA_UNROLL])
{
    for (int k = 0; k < IQA_UNROLL; k++)
        IQA_ISA(store)(dst + k * IQA_LANES, vec_narrow(acc[k]));
}

void IQA_ISA(iqa_filter_row)(const float *src, float *dst, int out_w)
{
    int x = 0;
    for (; x + IQA_STEP <= out_w; x += IQA_STEP) {
        VD acc[IQA_UNROLL] = { { 0 } };
        for (int u = 0; u < IQA_GAUSSIAN_TAPS; u++)
            IQA_ISA(tap)(acc, src + x + u, IQA_ISA(splat)(IQA_ISA(iqa_window)[u]));
        IQA_ISA(store_sums)(dst + x, acc);
    }
    for (; x < out_w; x++) {
        double sum = 0.0;
        for (int u = 0; u < IQA_GAUSSIAN_TAPS; u++)
            sum += (double)(src[x + u] * IQA_ISA(iqa_window)[u]);
        dst[x] = (float)sum;
    }
}

void IQA_ISA(iqa_filter_column)(const float *const rows[IQA_GAUSSIAN_TAPS], float *dst,
                                int out_w)
{
    int x = 0;
    for (; x + IQA_STEP <= out_w; x += IQA_STEP) {
        VD acc[IQA_UNROLL] = { { 0 } };
        for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++)
            IQA_ISA(tap)(acc, rows[v] + x, IQA_ISA(splat)(IQA_ISA(iqa_window)[v]));
        IQA_ISA(store_sums)(dst + x, acc);
    }
    for (; x < out_w; x++) {
        double sum = 0.0;
        for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++)
            sum += (double)(rows[v][x] * IQA_ISA(iqa_window)[v]);
        dst[x] = (float)sum;
    }
}

void IQA_ISA(iqa_products)(const float *a, const float *b, float *out, int w)
{
    int x = 0;
    for (; x + IQA_LANES <= w; x += IQA_LANES)
        IQA_ISA(store)(out + x, IQA_ISA(load)(a + x) * IQA_ISA(load)(b + x));
    for (; x < w; x++) out[x] = a[x] * b[x];
}

/* iqa_ssim_terms() on IQA_LANES positions.  (float)sqrt((double)p) of a
 * float p is the correctly rounded float square root of p (double has more
 * than twice float's precision), which the C compiler itself emits. */
static inline void IQA_ISA(terms)(VF mu1, VF mu2, VF rr, VF cc, VF rc, VD *l, VD *c, VD *s)
{
    const float C1 = (0.01f * 255) * (0.01f * 255);
    const float C2 = (0.03f * 255) * (0.03f * 255);
    const float C3 = C2 / 2.0f;
    const VF zero = { 0 };
    VF sigma1_sq = rr - mu1 * mu1;
    VF sigma2_sq = cc - mu2 * mu2;
    /* MAX(0.0, v): 0 where v < 0, a NaN stays */
    sigma1_sq = (VF)((VI32)sigma1_sq & ~(VI32)(sigma1_sq < zero));
    sigma2_sq = (VF)((VI32)sigma2_sq & ~(VI32)(sigma2_sq < zero));
    const VF sigma12 = rc - mu1 * mu2;
    const VF sigma1_sigma2 = vec_sqrt_f32_half(sigma1_sq * sigma2_sq);
    const VD mu1d = vec_widen(mu1), mu2d = vec_widen(mu2);
    *l = (2.0 * mu1d * mu2d + (double)C1) /
         vec_widen(mu1 * mu1 + mu2 * mu2 + C1);
    *c = (2.0 * vec_widen(sigma1_sigma2) + (double)C2) /
         vec_widen(sigma1_sq + sigma2_sq + C2);
    const VI32 flat = (VI32)(sigma12 < zero) & (VI32)(sigma1_sigma2 <= zero);
    const VF sigma12_clamped = (VF)((VI32)sigma12 & ~flat);
    *s = vec_widen((sigma12_clamped + C3) / (sigma1_sigma2 + C3));
}

void IQA_ISA(iqa_ssim_terms)(const float *const q[IQA_Q_COUNT], double *l, double *c, double *s,
                             int n)
{
    int x = 0;
    for (; x + IQA_LANES <= n; x += IQA_LANES) {
        VD vl, vc, vs;
        IQA_ISA(terms)(IQA_ISA(load)(q[IQA_Q_MU1] + x), IQA_ISA(load)(q[IQA_Q_MU2] + x),
                       IQA_ISA(load)(q[IQA_Q_RR] + x), IQA_ISA(load)(q[IQA_Q_CC] + x),
                       IQA_ISA(load)(q[IQA_Q_RC] + x), &vl, &vc, &vs);
        memcpy(l + x, &vl, sizeof(vl));
        memcpy(c + x, &vc, sizeof(vc));
        memcpy(s + x, &vs, sizeof(vs));
    }
    for (; x < n; x++) {
        const IqaSsimTerms t =
            iqa_ssim_terms(q[IQA_Q_MU1][x], q[IQA_Q_MU2][x], q[IQA_Q_RR][x], q[IQA_Q_CC][x],
                           q[IQA_Q_RC][x]);
        l[x] = t.l;
        c[x] = t.c;
        s[x] = t.s;
    }
}

/*
 * iqa_decimate_row(): the taps' source samples are split into phases as
 * the C kernel splits them, but every kernel row's at once, so that a
 * block of outputs keeps its sums in registers over all taps x taps
 * products, added in the C kernel's order (kernel row by row, tap by tap).
 */
void IQA_ISA(iqa_decimate_row)(const float *const *rows, const float *kernel, int taps,
                               int factor, int dst_w, float *dst, void *work)
{
    const IqaDecimatePlan plan = iqa_decimate_plan(taps, factor, dst_w);
    float *phases = iqa_decimate_phases(work, dst_w);
    for (int v = 0; v < taps; v++)
        iqa_decimate_split(&plan, rows[v], phases + (size_t)v * factor * plan.stride);

    /* where tap (v, u) reads its consecutive samples */
    const float *src[IQA_MAX_TAPS * IQA_MAX_TAPS];
    for (int v = 0; v < taps; v++)
        for (int u = 0; u < taps; u++)
            src[v * taps + u] = phases + ((size_t)v * factor + plan.p_of[u]) * plan.stride +
                                taps + plan.q_of[u];

    const int n = taps * taps;
    int x = 0;
    for (; x + IQA_STEP <= dst_w; x += IQA_STEP) {
        VD acc[IQA_UNROLL] = { { 0 } };
        for (int t = 0; t < n; t++) IQA_ISA(tap)(acc, src[t] + x, IQA_ISA(splat)(kernel[t]));
        IQA_ISA(store_sums)(dst + x, acc);
    }
    for (; x < dst_w; x++) {
        double sum = 0.0;
        for (int t = 0; t < n; t++) sum += (double)(src[t][x] * kernel[t]);
        dst[x] = (float)sum;
    }
}
