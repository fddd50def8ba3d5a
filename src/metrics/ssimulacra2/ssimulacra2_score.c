/*
 * The SSIMULACRA2 score of two 8-bit sRGB pictures, as libjxl's
 * ssimulacra2 tool computes it (tools/ssimulacra2.cc and the parts of
 * lib/jxl it calls), operation for operation where the order of float
 * operations shows in the result:
 *
 *  - samples / 255 (a float product with 1/255), to linear light by
 *    libjxl's rational approximation of the sRGB curve (its TF_SRGB);
 *  - linear RGB to XYB: the opsin absorbance matrix and bias (fused
 *    multiply-adds, as libjxl's vector code runs them), zero below, its
 *    cube root approximation (Newton steps from an exponent trick), then
 *    X, Y, B moved into 0..1 (X * 14 + 0.42, Y + 0.01, B - Y + 0.55);
 *  - six scales, each the previous one's linear RGB halved by 2x2 means
 *    (edge samples repeated), stopping when the previous scale was under 8
 *    samples across;
 *  - at each scale and for each of X, Y, B: libjxl's recursive Gaussian
 *    (sigma 1.5, radius 5, zero outside the picture) of the two pictures,
 *    their squares and their product; the SSIM map without the luminance
 *    denominator, the edge maps (ringing where the distorted picture has
 *    edges the original lacks, blur where it lost them), each summed as a
 *    1-norm and a 4-norm in double;
 *  - the 108 norms weighted (the published weights), then the tool's
 *    polynomial and power mapping to the final score.
 *
 * The blur keeps libjxl's arithmetic: the horizontal pass four outputs at
 * a time from its expanded coefficients (its vector loop), one at a time
 * at the ends; the vertical pass one row at a time; both with fused
 * multiply-adds where libjxl's x86 build has them (AVX2 and up).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cpu.h"
#include "metrics/ssimulacra2/ssimulacra2.h"

/* This file is compiled twice: as C, and by x86/ssimulacra2_avx2.c with
 * SSIM2_SCORE_FN set, for AVX2 and FMA. */
#ifndef SSIM2_SCORE_FN
#define SSIM2_SCORE_FN ssim2_score_rgb_c
#define SSIM2_SCORE_PICK 1
#endif

#define SCALES 6
#define RADIUS 5 /* roundf(3.2795 * sigma + 0.2546) for sigma 1.5 */

/* ---- the recursive Gaussian's coefficients ------------------------------ */

typedef struct Gauss {
    float n2[3], d1[3];                              /* the vertical pass */
    float mul_prev[3][4], mul_prev2[3][4], mul_in[3][4]; /* four at a time */
} Gauss;

/* libjxl's CreateRecursiveGaussian (after Charalampidis 2016, "Recursive
 * implementation of the Gaussian filter using truncated cosine functions"),
 * in double, the same expressions. */
static void gauss_init(Gauss *g)
{
    const double sigma = 1.5, radius = RADIUS, pi = 3.141592653589793238;
    const double pi_div_2r = pi / (2.0 * radius);
    const double omega[3] = { pi_div_2r, 3.0 * pi_div_2r, 5.0 * pi_div_2r };
    const double p1 = +1.0 / tan(0.5 * omega[0]);
    const double p3 = -1.0 / tan(0.5 * omega[1]);
    const double p5 = +1.0 / tan(0.5 * omega[2]);
    const double r1 = +p1 * p1 / sin(omega[0]);
    const double r3 = -p3 * p3 / sin(omega[1]);
    const double r5 = +p5 * p5 / sin(omega[2]);
    const double neg_half_sigma2 = -0.5 * sigma * sigma;
    const double recip_radius = 1.0 / radius;
    double rho[3];
    for (int i = 0; i < 3; i++) rho[i] = exp(neg_half_sigma2 * omega[i] * omega[i]) * recip_radius;
    const double d13 = p1 * r3 - r1 * p3;
    const double d35 = p3 * r5 - r3 * p5;
    const double d51 = p5 * r1 - r5 * p1;
    const double recip_d13 = 1.0 / d13;
    const double zeta15 = d35 * recip_d13, zeta35 = d51 * recip_d13;

    /* beta = A^-1 gamma, A's inverse by cofactors as libjxl's Inv3x3Matrix */
    const double a[3][3] = { { p1, p3, p5 }, { r1, r3, r5 }, { zeta15, zeta35, 1 } };
    double t[3][3];
    t[0][0] = a[1][1] * a[2][2] - a[1][2] * a[2][1];
    t[0][1] = a[0][2] * a[2][1] - a[0][1] * a[2][2];
    t[0][2] = a[0][1] * a[1][2] - a[0][2] * a[1][1];
    t[1][0] = a[1][2] * a[2][0] - a[1][0] * a[2][2];
    t[1][1] = a[0][0] * a[2][2] - a[0][2] * a[2][0];
    t[1][2] = a[0][2] * a[1][0] - a[0][0] * a[1][2];
    t[2][0] = a[1][0] * a[2][1] - a[1][1] * a[2][0];
    t[2][1] = a[0][1] * a[2][0] - a[0][0] * a[2][1];
    t[2][2] = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    const double det = a[0][0] * t[0][0] + a[0][1] * t[1][0] + a[0][2] * t[2][0];
    const double idet = 1.0 / det;
    const double gamma[3] = { 1, radius * radius - sigma * sigma,
                              zeta15 * rho[0] + zeta35 * rho[1] + rho[2] };
    for (int i = 0; i < 3; i++) {
        double beta = 0;
        for (int j = 0; j < 3; j++) beta += (t[i][j] * idet) * gamma[j];
        const double n2 = -beta * cos(omega[i] * (radius + 1.0));
        const double d1 = -2.0 * cos(omega[i]);
        const double d_2 = d1 * d1;
        g->n2[i] = (float)n2;
        g->d1[i] = (float)d1;
        /* four consecutive outputs of y = n2 * in - d1 * prev - prev2,
         * expanded in terms of the two outputs before them */
        g->mul_prev[i][0] = (float)-d1;
        g->mul_prev[i][1] = (float)(d_2 - 1.0);
        g->mul_prev[i][2] = (float)(-d_2 * d1 + 2.0 * d1);
        g->mul_prev[i][3] = (float)(d_2 * d_2 - 3.0 * d_2 + 1.0);
        g->mul_prev2[i][0] = -1.0f;
        g->mul_prev2[i][1] = (float)d1;
        g->mul_prev2[i][2] = (float)(-d_2 + 1.0);
        g->mul_prev2[i][3] = (float)(d_2 * d1 - 2.0 * d1);
        g->mul_in[i][0] = (float)n2;
        g->mul_in[i][1] = (float)(-d1 * n2);
        g->mul_in[i][2] = (float)(d_2 * n2 - n2);
        g->mul_in[i][3] = (float)(-d_2 * d1 * n2 + 2.0 * d1 * n2);
    }
}

/* ---- the blur ------------------------------------------------------------ */

/* One output of the horizontal pass by the plain recurrence (libjxl's
 * loops before and after its vector loop, lane 0). */
static float blur_step(const Gauss *g, float sum, float prev[3], float prev2[3])
{
    float o[3];
    for (int k = 0; k < 3; k++) {
        float v = sum * g->mul_in[k][0];
        v = fmaf(g->mul_prev2[k][0], prev2[k], v);
        prev2[k] = prev[k];
        v = fmaf(g->mul_prev[k][0], prev[k], v);
        prev[k] = v;
        o[k] = v;
    }
    return o[0] + (o[1] + o[2]);
}

static void blur_row(const Gauss *g, const float *in, float *out, intptr_t xsize)
{
    const intptr_t n_r = RADIUS;
    float prev[3] = { 0 }, prev2[3] = { 0 };
    intptr_t n = -n_r + 1;
    const intptr_t first_aligned = (n_r + 1 + 3) & ~(intptr_t)3;
    for (; n < QUALE_MIN(first_aligned, xsize); n++) {
        const intptr_t left = n - n_r - 1, right = n + n_r - 1;
        const float sum = (left >= 0 ? in[left] : 0.0f) + (right < xsize ? in[right] : 0.0f);
        const float v = blur_step(g, sum, prev, prev2);
        if (n >= 0) out[n] = v;
    }
    /* four outputs at a time: each lane from the four inputs' sums and the
     * two outputs before the group */
    for (; n < xsize - n_r + 1 - 3; n += 4) {
        float sum[4], o[3][4];
        for (int l = 0; l < 4; l++) sum[l] = in[n - n_r - 1 + l] + in[n + n_r - 1 + l];
        for (int k = 0; k < 3; k++) {
            const float *mi = g->mul_in[k];
            for (int l = 0; l < 4; l++) {
                float v = sum[0] * mi[l];
                v = fmaf(l >= 1 ? mi[l - 1] : 0.0f, sum[1], v);
                v = fmaf(l >= 2 ? mi[l - 2] : 0.0f, sum[2], v);
                v = fmaf(l >= 3 ? mi[l - 3] : 0.0f, sum[3], v);
                v = fmaf(g->mul_prev2[k][l], prev2[k], v);
                o[k][l] = fmaf(g->mul_prev[k][l], prev[k], v);
            }
            prev2[k] = o[k][2];
            prev[k] = o[k][3];
        }
        for (int l = 0; l < 4; l++) out[n + l] = o[0][l] + (o[1][l] + o[2][l]);
    }
    for (; n < xsize; n++) {
        const intptr_t left = n - n_r - 1, right = n + n_r - 1;
        const float sum = (left >= 0 ? in[left] : 0.0f) + (right < xsize ? in[right] : 0.0f);
        out[n] = blur_step(g, sum, prev, prev2);
    }
}

typedef struct Planes {
    unsigned w, h;      /* of the current scale */
    size_t cap;         /* samples each plane holds */
    float *lin[2][3];   /* linear RGB of both pictures */
    float *xyb[2][3];   /* their XYB */
    float *mul, *tmp, *s11, *s22, *s12, *mu1, *mu2;
    float *ring;        /* the vertical pass's last two outputs: 6 rows */
} Planes;

/* The vertical pass: each column by the recurrence, one row at a time. */
static void blur_vertical(const Gauss *g, const float *in, float *out, unsigned w, unsigned h,
                          float *ring)
{
    float *y1[3], *y2[3];
    for (int k = 0; k < 3; k++) {
        y1[k] = ring + (size_t)(2 * k) * w;
        y2[k] = ring + (size_t)(2 * k + 1) * w;
        memset(y1[k], 0, w * sizeof(float));
        memset(y2[k], 0, w * sizeof(float));
    }
    const long n_r = RADIUS;
    for (long n = -n_r + 1; n < (long)h; n++) {
        const long top = n - n_r - 1, bottom = n + n_r - 1;
        const float *bot = bottom < (long)h ? in + (size_t)bottom * w : NULL;
        const float *tp = n > n_r ? in + (size_t)top * w : NULL;
        float *o = n >= 0 ? out + (size_t)n * w : NULL;
        for (unsigned x = 0; x < w; x++) {
            /* before row N + 1 the top is outside: the bottom sample alone */
            const float b = bot ? bot[x] : 0.0f;
            const float sum = tp ? tp[x] + b : b;
            float v[3];
            for (int k = 0; k < 3; k++) {
                const float t = fmaf(-g->d1[k], y1[k][x], -y2[k][x]);
                v[k] = fmaf(g->n2[k], sum, t);
                y2[k][x] = y1[k][x];
                y1[k][x] = v[k];
            }
            if (o) o[x] = v[0] + (v[1] + v[2]);
        }
    }
}

static void blur(const Gauss *g, const float *in, float *out, Planes *p)
{
    for (unsigned y = 0; y < p->h; y++)
        blur_row(g, in + (size_t)y * p->w, p->tmp + (size_t)y * p->w, p->w);
    blur_vertical(g, p->tmp, out, p->w, p->h, p->ring);
}

/* ---- colour ------------------------------------------------------------- */

/* libjxl's TF_SRGB::DisplayFromEncoded: a rational polynomial above the
 * linear toe, Horner steps as fused multiply-adds. */
static float srgb_to_linear(float x)
{
    static const float p[5] = { 2.200248328e-04f, 1.043637593e-02f, 1.624820318e-01f,
                                7.961564959e-01f, 8.210152774e-01f };
    static const float q[5] = { 2.631846970e-01f, 1.076976492e+00f, 4.987528350e-01f,
                                -5.512498495e-02f, 6.521209011e-03f };
    if (!(x > 0.04045f)) return x * (1.0f / 12.92f);
    float yp = p[4], yq = q[4];
    for (int i = 3; i >= 0; i--) {
        yp = fmaf(yp, x, p[i]);
        yq = fmaf(yq, x, q[i]);
    }
    return yp / yq;
}

/* libjxl's CubeRootAndAdd: an exponent divided by three as the first
 * guess, three Newton steps for 1/cbrt, a last one, then x * r^2 + add. */
static float cbrt_add(float x, float add)
{
    const float k1_3 = 1.0f / 3, k4_3 = 4.0f / 3;
    const float x_3 = k1_3 * x;
    int32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    const int32_t guess = bits == 0 ? 0 : 0x54800000 - (bits >> 23) * 0x002AAAAA;
    float r;
    memcpy(&r, &guess, sizeof(r));
    for (int i = 0; i < 3; i++) {
        const float r2 = r * r;
        r = fmaf(-x_3, r2 * r2, k4_3 * r);
    }
    float r2 = r * r;
    r = fmaf(k1_3, fmaf(-x, r2 * r2, r), r);
    r2 = r * r;
    return fmaf(r2, x, add);
}

/* The opsin absorbance matrix (libjxl's, frozen by the JPEG XL spec). */
static const float opsin[3][3] = {
    { 0.30f, 1.0f - 0.078f - 0.30f, 0.078f },
    { 0.23f, 1.0f - 0.078f - 0.23f, 0.078f },
    { 0.24342268924547819f, 0.20476744424496821f,
      1.0f - 0.24342268924547819f - 0.20476744424496821f },
};
#define OPSIN_BIAS 0.0037930732552754493f

/* Linear RGB planes to XYB in 0..1 (libjxl's ToXYB of linear sRGB at 255
 * nits, then the tool's MakePositiveXYB). */
static void to_xyb(float *const lin[3], float *const xyb[3], size_t n)
{
    const float neg_bias_cbrt = -cbrtf(OPSIN_BIAS);
    for (size_t i = 0; i < n; i++) {
        const float r = lin[0][i], g = lin[1][i], b = lin[2][i];
        float m[3];
        for (int j = 0; j < 3; j++) {
            const float v = fmaf(opsin[j][0], r, fmaf(opsin[j][1], g, fmaf(opsin[j][2], b, OPSIN_BIAS)));
            /* zero for any sign bit, -0 included, as libjxl's ZeroIfNegative */
            m[j] = cbrt_add(signbit(v) ? 0.0f : v, neg_bias_cbrt);
        }
        const float x = 0.5f * (m[0] - m[1]), y = 0.5f * (m[0] + m[1]);
        xyb[2][i] = (m[2] - y) + 0.55f;
        xyb[0][i] = x * 14.f + 0.42f;
        xyb[1][i] = y + 0.01f;
    }
}

/* ---- the maps ------------------------------------------------------------ */

static double quartic(double x)
{
    x *= x;
    return x * x;
}

/* The SSIM map of one plane without the luminance denominator (the
 * tool's SSIMMap): its mean and 4-norm of max(1 - ssim, 0). */
static void ssim_map(const Planes *p, double out[2])
{
    const size_t n = (size_t)p->w * p->h;
    const float c2 = 0.0009f;
    double sum[2] = { 0.0, 0.0 };
    for (size_t i = 0; i < n; i++) {
        const float mu1 = p->mu1[i], mu2 = p->mu2[i];
        const float mu11 = mu1 * mu1, mu22 = mu2 * mu2, mu12 = mu1 * mu2;
        const float num_m = (float)(1.0 - (double)((mu1 - mu2) * (mu1 - mu2)));
        const float num_s = 2 * (p->s12[i] - mu12) + c2;
        const float denom_s = (p->s11[i] - mu11) + (p->s22[i] - mu22) + c2;
        double d = 1.0 - (double)(num_m * num_s / denom_s);
        d = d > 0.0 ? d : 0.0;
        sum[0] += d;
        sum[1] += quartic(d);
    }
    const double one_per_pixels = 1.0 / (double)n;
    out[0] = one_per_pixels * sum[0];
    out[1] = sqrt(sqrt(one_per_pixels * sum[1]));
}

/* The edge maps of one plane (the tool's EdgeDiffMap): how much more (or
 * less) the distorted picture departs from its blur than the original,
 * as ringing (1-norm, 4-norm) and blur (1-norm, 4-norm). */
static void edge_map(const Planes *p, int c, double out[4])
{
    const size_t n = (size_t)p->w * p->h;
    const float *img1 = p->xyb[0][c], *img2 = p->xyb[1][c];
    double sum[4] = { 0.0, 0.0, 0.0, 0.0 };
    for (size_t i = 0; i < n; i++) {
        const double d1 = (1.0 + (double)fabsf(img2[i] - p->mu2[i])) /
                              (1.0 + (double)fabsf(img1[i] - p->mu1[i])) -
                          1.0;
        const double artifact = d1 > 0.0 ? d1 : 0.0;
        const double detail_lost = -d1 > 0.0 ? -d1 : 0.0;
        sum[0] += artifact;
        sum[1] += quartic(artifact);
        sum[2] += detail_lost;
        sum[3] += quartic(detail_lost);
    }
    const double one_per_pixels = 1.0 / (double)n;
    out[0] = one_per_pixels * sum[0];
    out[1] = sqrt(sqrt(one_per_pixels * sum[1]));
    out[2] = one_per_pixels * sum[2];
    out[3] = sqrt(sqrt(one_per_pixels * sum[3]));
}

static void multiply(const float *a, const float *b, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = a[i] * b[i];
}

/* One scale's norms: avg[c][0..1] SSIM, avg[c][2..5] edges (ringing 1, 4;
 * blur 1, 4). */
static void scale_norms(const Gauss *g, Planes *p, double avg[3][6])
{
    const size_t n = (size_t)p->w * p->h;
    for (int i = 0; i < 2; i++) to_xyb(p->lin[i], p->xyb[i], n);
    for (int c = 0; c < 3; c++) {
        const float *a = p->xyb[0][c], *b = p->xyb[1][c];
        multiply(a, a, p->mul, n);
        blur(g, p->mul, p->s11, p);
        multiply(b, b, p->mul, n);
        blur(g, p->mul, p->s22, p);
        multiply(a, b, p->mul, n);
        blur(g, p->mul, p->s12, p);
        blur(g, a, p->mu1, p);
        blur(g, b, p->mu2, p);
        ssim_map(p, avg[c]);
        edge_map(p, c, avg[c] + 2);
    }
}

/* Linear RGB halved in place by 2x2 means, edge samples repeated (the
 * tool's Downsample). */
static void downsample(Planes *p)
{
    const unsigned w = p->w, h = p->h;
    const unsigned ow = (w + 1) / 2, oh = (h + 1) / 2;
    for (int i = 0; i < 2; i++) {
        for (int c = 0; c < 3; c++) {
            float *plane = p->lin[i][c];
            for (unsigned oy = 0; oy < oh; oy++) {
                for (unsigned ox = 0; ox < ow; ox++) {
                    float sum = 0.0f;
                    for (unsigned iy = 0; iy < 2; iy++) {
                        for (unsigned ix = 0; ix < 2; ix++) {
                            const unsigned x = QUALE_MIN(ox * 2 + ix, w - 1);
                            const unsigned y = QUALE_MIN(oy * 2 + iy, h - 1);
                            sum += plane[(size_t)y * w + x];
                        }
                    }
                    /* output (ox, oy) is written after every input it
                     * reads: rows oy*2.. and columns ox*2.. come later */
                    plane[(size_t)oy * ow + ox] = sum * 0.25f;
                }
            }
        }
    }
    p->w = ow;
    p->h = oh;
}

/* The published weights of the 108 norms, in the tool's order: for X, Y,
 * B; for each scale; for the 1-norm then the 4-norm: SSIM, ringing,
 * blur. */
static const double weights[108] = {
    0.0, 0.0007376606707406586, 0.0,
    0.0, 0.0007793481682867309, 0.0,
    0.0, 0.0004371155730107379, 0.0,
    1.1041726426657346, 0.00066284834129271, 0.00015231632783718752,
    0.0, 0.0016406437456599754, 0.0,
    1.8422455520539298, 11.441172603757666, 0.0,
    0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0,
    0.0007289346991508072, 0.9677937080626833, 0.0,
    0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053,
    0.0004550992113792063, 0.0, 0.0,
    0.0013648766163243398, 0.0, 0.0,
    0.0, 0.0, 0.0,
    7.466890328078848, 0.0, 17.445833984131262,
    0.0006235601634041466, 0.0, 0.0,
    6.683678146179332, 0.00037724407979611296, 1.027889937768264,
    225.20515300849274, 0.0, 0.0,
    19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
    176.39317598450694, 0.0, 0.0,
    24.43300999870476, 0.28520802612117757, 0.0004485436923833408,
    0.0, 0.0, 0.0,
    34.77906344483772, 44.835625328877896, 0.0,
    0.0, 0.0, 0.0,
    0.0, 0.0, 0.0,
    0.0, 0.0008680556573291698, 0.0,
    0.0, 0.0, 0.0,
    0.0, 0.0005313191874358747, 0.0,
    0.00016533814161379112, 0.0, 0.0,
    0.0, 0.0, 0.0,
    0.0004179171803251336, 0.0017290828234722833, 0.0,
    0.0020827005846636437, 0.0, 0.0,
    8.826982764996862, 23.19243343998926, 0.0,
    95.1080498811086, 0.9863978034400682, 0.9834382792465353,
    0.0012286405048278493, 171.2667255897307, 0.9807858872435379,
    0.0, 0.0, 0.0,
    0.0005130064588990679, 0.0, 0.00010854057858411537,
};

/* The weighted sum of the scales computed (fewer than six on small
 * pictures: the weights are then taken in order, as the tool does) and
 * the final mapping. */
static double final_score(double avg[SCALES][3][6], int scales)
{
    double ssim = 0.0;
    size_t i = 0;
    for (int c = 0; c < 3; c++) {
        for (int s = 0; s < scales; s++) {
            for (int n = 0; n < 2; n++) {
                ssim += weights[i++] * fabs(avg[s][c][n]);
                ssim += weights[i++] * fabs(avg[s][c][2 + n]);
                ssim += weights[i++] * fabs(avg[s][c][4 + n]);
            }
        }
    }
    ssim = ssim * 0.9562382616834844;
    ssim = 2.326765642916932 * ssim - 0.020884521182843837 * ssim * ssim +
           6.248496625763138e-05 * ssim * ssim * ssim;
    return ssim > 0 ? 100.0 - 10.0 * pow(ssim, 0.6276336467831387) : 100.0;
}

/* ---- the whole score ---------------------------------------------------- */

static void planes_free(Planes *p)
{
    for (int i = 0; i < 2; i++) {
        for (int c = 0; c < 3; c++) {
            quale_aligned_free(p->lin[i][c]);
            quale_aligned_free(p->xyb[i][c]);
        }
    }
    float **more[] = { &p->mul, &p->tmp, &p->s11, &p->s22, &p->s12, &p->mu1, &p->mu2, &p->ring };
    for (size_t k = 0; k < QUALE_ARRAY_SIZE(more); k++) quale_aligned_free(*more[k]);
    memset(p, 0, sizeof(*p));
}

static int planes_alloc(Planes *p, unsigned w, unsigned h)
{
    memset(p, 0, sizeof(*p));
    p->cap = (size_t)w * h;
    const size_t bytes = p->cap * sizeof(float);
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        for (int c = 0; c < 3; c++) {
            ok = ok && (p->lin[i][c] = quale_aligned_alloc(bytes));
            ok = ok && (p->xyb[i][c] = quale_aligned_alloc(bytes));
        }
    }
    float **more[] = { &p->mul, &p->tmp, &p->s11, &p->s22, &p->s12, &p->mu1, &p->mu2 };
    for (size_t k = 0; k < QUALE_ARRAY_SIZE(more); k++) ok = ok && (*more[k] = quale_aligned_alloc(bytes));
    ok = ok && (p->ring = quale_aligned_alloc((size_t)6 * w * sizeof(float)));
    if (!ok) {
        planes_free(p);
        return -ENOMEM;
    }
    return 0;
}

int SSIM2_SCORE_FN(const uint8_t *ref, const uint8_t *dist, unsigned w, unsigned h,
                   double *score)
{
    if (w < 8 || h < 8) return -EINVAL;
    Planes p;
    int err = planes_alloc(&p, w, h);
    if (err) return err;
    /* 8-bit samples to linear light: 256 values, made once */
    float lut[256];
    for (int v = 0; v < 256; v++) lut[v] = srgb_to_linear((float)v * (1.0f / 255));
    const uint8_t *src[2] = { ref, dist };
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < p.cap; k++)
            for (int c = 0; c < 3; c++) p.lin[i][c][k] = lut[src[i][3 * k + (size_t)c]];
    p.w = w;
    p.h = h;
    Gauss g;
    gauss_init(&g);
    double avg[SCALES][3][6];
    int scales = 0;
    for (int s = 0; s < SCALES; s++) {
        /* the tool checks the size of the scale before: a picture of 8
         * samples across still gets its 4-sample half */
        if (p.w < 8 || p.h < 8) break;
        if (s) downsample(&p);
        scale_norms(&g, &p, avg[s]);
        scales++;
    }
    *score = final_score(avg, scales);
    planes_free(&p);
    return 0;
}

#ifdef SSIM2_SCORE_PICK
Ssim2ScoreFn ssim2_score_pick(unsigned cpu_flags)
{
#if QUALE_X86_SIMD
    if (cpu_flags & QUALE_CPU_AVX2) return ssim2_score_rgb_avx2;
#endif
    (void)cpu_flags;
    return ssim2_score_rgb_c;
}
#endif
