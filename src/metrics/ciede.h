/*
 * CIEDE2000: the steps the C reference (ciede.c) and its GPU twins share.
 *
 * The first part is arithmetic that device compilers read too (nvcc
 * includes this file from src/cuda/ciede.cu): the Y'CbCr -> L*a*b*
 * conversion, CIEDE2000 itself, and where libvmaf's chroma indexing reads.
 * Every float argument of a double maths function is converted to double
 * explicitly: C promotes it anyway, but C++ (and CUDA) would pick the
 * float overload.  The one float function, powf(x, 7), is ciede_powf7():
 * the C library's powf on the host, the 7th power in double rounded to
 * float on the device (CUDA's powf is several ulp from the correctly
 * rounded value; the rounded double is almost always that value).  The
 * host's code is the C reference's, call for call; the device's differs
 * only in how pow(c, 1/3) and x^7 are evaluated (ciede_cube_root(),
 * ciede_pow7()).
 *
 * The second part (hidden from nvcc) is the host's: the state, the format
 * check and its message, and the step from the frame's sum of deltaE to
 * the key.
 */
#ifndef QUALE_SRC_METRICS_CIEDE_H
#define QUALE_SRC_METRICS_CIEDE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* On the host, plain static functions, as the C reference always had them
 * (left to the compiler to inline); unused where a file includes this
 * header for its other parts. */
#if defined(__CUDACC__)
#define CIEDE_INLINE static inline __host__ __device__
#elif defined(__GNUC__)
#define CIEDE_INLINE static __attribute__((unused))
#else
#define CIEDE_INLINE static
#endif

/* M_PI's value, spelled out: C17 does not define M_PI. */
#define CIEDE_PI 3.14159265358979323846

/* libvmaf's picture rows are aligned to 32 samples. */
#define CIEDE_VMAF_ALIGN 32u

/* Which chroma row a luma column reads, relative to row i >> row_shift:
 * 4:2:2 runs 1 (or, for odd widths, 2) rows past it; CIEDE_ROW_ZERO is
 * libvmaf's zero padding. */
#define CIEDE_ROW_AHEAD_MAX 2u
#define CIEDE_ROW_ZERO (CIEDE_ROW_AHEAD_MAX + 1)

/* ---- where libvmaf's 4:2:2 indexing reads ----------------------------------- */

/*
 * Chroma row `row` of plane `plane` (1 or 2) as libvmaf's buffer holds it,
 * ch rows per plane: the plane's own row, the Cr plane's for rows past
 * the Cb plane, and nothing that can be read (false: zero padding) past
 * the Cr plane.
 */
CIEDE_INLINE bool ciede_vmaf_chroma_source(unsigned plane, unsigned row, unsigned ch,
                                           unsigned *src_plane, unsigned *src_row)
{
    if (row < ch) {
        *src_plane = plane;
        *src_row = row;
        return true;
    }
    if (plane == 1 && row - ch < ch) {
        *src_plane = 2;
        *src_row = row - ch;
        return true;
    }
    return false;
}

/* ---- Y'CbCr to L*a*b* ----------------------------------------------------- */

typedef struct CiedeLab {
    float l, a, b;
} CiedeLab;

/* Y' = (y - y_offset) * y_scale; Cb, Cr likewise with the c_ values. */
typedef struct CiedeConvert {
    double y_offset, y_scale;
    double c_offset, c_scale;
} CiedeConvert;

/* sRGB decoding to linear light. */
CIEDE_INLINE double ciede_linearize(double c)
{
    if (c > 10. / 255.) return pow((c + 0.055) * (1.0 / 1.055), 2.4);
    return c * (1.0 / 12.92);
}

/*
 * pow(c, 1.0 / 3.0) and pow(x, 7), libvmaf's calls.  On the device, where
 * pow is a long routine within 2 ulp (not glibc's), the cube root is cbrt
 * (within 1 ulp of c^(1/3), which is within 0.1 ulp of pow(c, 1.0 / 3.0))
 * and the 7th power (x^3)^2 x in double (within 2 ulp): as close to the
 * C library's values as the device's pow, for 2 of the 6 pow calls of a
 * colour and both of CIEDE2000's.  Their results are rounded to float
 * before they count; on the corpus the device's forms change no pixel's
 * deltaE (measured on the CPU with these forms against pow).
 */
CIEDE_INLINE double ciede_cube_root(double c)
{
#if defined(__CUDA_ARCH__)
    return cbrt(c);
#else
    return pow(c, 1.0 / 3.0);
#endif
}

CIEDE_INLINE double ciede_pow7(double x)
{
#if defined(__CUDA_ARCH__)
    const double x2 = x * x, x3 = x2 * x, x6 = x3 * x3;
    return x6 * x;
#else
    return pow(x, 7.0);
#endif
}

/* The L*a*b* companding function, rounded to float. */
CIEDE_INLINE float ciede_lab_f(double c)
{
    const double kappa = 24389.0 / 27.0;
    const double epsilon = 216.0 / 24389.0;
    if (c > epsilon) return (float)ciede_cube_root(c);
    return (float)((kappa * c + 16.0) * (1.0 / 116.0));
}

/* BT.709 R'G'B' of the samples, decoded to linear light.  R reads no Cb and
 * B no Cr, so a twin can tabulate them over (y, v) and (y, u) (ciede.cu). */
CIEDE_INLINE double ciede_linear_r(const CiedeConvert *s, double y, double v)
{
    return ciede_linearize((y - s->y_offset) * s->y_scale +
                           1.28033 * ((v - s->c_offset) * s->c_scale));
}

CIEDE_INLINE double ciede_linear_g(const CiedeConvert *s, double y, double u, double v)
{
    return ciede_linearize((y - s->y_offset) * s->y_scale -
                           0.21482 * ((u - s->c_offset) * s->c_scale) -
                           0.38059 * ((v - s->c_offset) * s->c_scale));
}

CIEDE_INLINE double ciede_linear_b(const CiedeConvert *s, double y, double u)
{
    return ciede_linearize((y - s->y_offset) * s->y_scale +
                           2.12798 * ((u - s->c_offset) * s->c_scale));
}

/* Linear RGB to L*a*b*. */
CIEDE_INLINE CiedeLab ciede_lab_linear(double r, double g, double b)
{
    const double x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894;
    const double yy = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958;
    const double z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677;

    /* white point D65 */
    const double fx = ciede_lab_f(x * (1.0 / 0.95047));
    const double fy = ciede_lab_f(yy);
    const double fz = ciede_lab_f(z * (1.0 / 1.08883));

    CiedeLab lab;
    lab.l = (float)(116.0 * fy - 16.0);
    lab.a = (float)(500.0 * (fx - fy));
    lab.b = (float)(200.0 * (fy - fz));
    return lab;
}

CIEDE_INLINE CiedeLab ciede_lab(const CiedeConvert *s, double y, double u, double v)
{
    return ciede_lab_linear(ciede_linear_r(s, y, v), ciede_linear_g(s, y, u, v),
                            ciede_linear_b(s, y, u));
}

/* ---- CIEDE2000 ------------------------------------------------------------ */

/* powf(x, 7), libvmaf's float power. */
CIEDE_INLINE float ciede_powf7(float x)
{
#if defined(__CUDA_ARCH__)
    return (float)ciede_pow7((double)x);
#else
    return powf(x, 7);
#endif
}

/* powf(25, 7): 25^7 = 6103515625 rounded to float (the host's powf gives
 * it: tests/test_psnr_hvs_ciede_cuda_host.cpp checks), a constant on the
 * device instead of a pow per pixel. */
#define CIEDE_POWF_25_7 6103515648.f

CIEDE_INLINE float ciede_powf7_25(void)
{
#if defined(__CUDA_ARCH__)
    return CIEDE_POWF_25_7;
#else
    return powf(25.f, 7);
#endif
}

/* Hue angle in [0, 2 pi) of (a', b'), 0 for the neutral axis. */
CIEDE_INLINE float ciede_hue(float b, float a_prime)
{
    if (b == 0.0 && a_prime == 0.0) return 0.f;
    float h = (float)atan2((double)b, (double)a_prime);
    if (h < 0.0) h = (float)(h + 2. * CIEDE_PI);
    return h;
}

/* Hue difference h2 - h1 wrapped into [-pi, pi]; 0 where a chroma is 0
 * (libvmaf tests the chromas before the a' correction). */
CIEDE_INLINE float ciede_hue_delta(float c1, float c2, float h1, float h2)
{
    if (c1 == 0.0 || c2 == 0.0) return 0.f;
    if (fabsf(h1 - h2) <= CIEDE_PI) return h2 - h1;
    if (h2 <= h1) return (float)(h2 - h1 + 2. * CIEDE_PI);
    return (float)(h2 - h1 - 2. * CIEDE_PI);
}

/* Mean hue, across the 0 / 2 pi seam where the hues are far apart.  (As
 * libvmaf: no correction when one chroma is 0, and + 2 pi either way.) */
CIEDE_INLINE float ciede_hue_mean(float h1, float h2)
{
    if (fabs((double)(h1 - h2)) > CIEDE_PI) return (float)((h1 + h2 + 2.0 * CIEDE_PI) / 2.0);
    return (float)((h1 + h2) / 2.0);
}

/* The hue weighting T.  On the device the four cosines come from one sine
 * and cosine of h through the angle-sum formulas (one range reduction
 * instead of four): the double sum differs from libm's by a few ulp at
 * most, and T is rounded to float, which absorbs it (20 million random h in
 * [0, 2 pi) on the CPU: every T identical to the four-cosine form). */
CIEDE_INLINE float ciede_t(float h)
{
#if defined(__CUDA_ARCH__)
    double s, c;
    sincos((double)h, &s, &c);
    const double c2 = c * c - s * s, s2 = 2 * s * c;
    const double c3 = c2 * c - s2 * s, s3 = s2 * c + c2 * s;
    const double c4 = c2 * c2 - s2 * s2, s4 = 2 * s2 * c2;
    /* cos and sin of pi / 6, pi / 30 and 7 pi / 20 (as libm rounds them) */
    return (float)(1.0 - 0.17 * (c * 0.8660254037844387 + s * 0.49999999999999994) + 0.24 * c2 +
                   0.32 * (c3 * 0.9945218953682733 - s3 * 0.10452846326765346) -
                   0.20 * (c4 * 0.4539904997395468 + s4 * 0.8910065241883678));
#else
    return (float)(1.0 - 0.17 * cos(h - CIEDE_PI / 6.0) + 0.24 * cos(2.0 * h) +
                   0.32 * cos(3.0 * h + CIEDE_PI / 30.0) -
                   0.20 * cos(4.0 * h - 7.0 * CIEDE_PI / 20.0));
#endif
}

/* The rotation term R_T, in float where libvmaf uses float. */
CIEDE_INLINE float ciede_r_t(float c_bar_prime, float h_bar_prime)
{
    const float h_deg = (float)(h_bar_prime * (180.0 / CIEDE_PI));
    const float d = (float)((h_deg - 275.0) * (1.0 / 25.0));
    const float c7 = ciede_powf7(c_bar_prime);
    const float ratio = c7 / (c7 + ciede_powf7_25());
    const float theta_deg = (float)(60.0 * exp((double)(-(d * d))));
    const float theta = (float)(theta_deg * (CIEDE_PI / 180.0));
    return (float)(-2.0 * sqrt((double)ratio) * sin((double)theta));
}

/* deltaE00 from colour 1 (reference) to colour 2 (distorted). */
CIEDE_INLINE float ciede2000(CiedeLab c1, CiedeLab c2)
{
    const float k_l = 0.65f, k_c = 1.0f, k_h = 4.0f;

    const float dl_prime = c2.l - c1.l;
    const float l_bar = (c1.l + c2.l) / 2;
    const float ch1 = (float)sqrt((double)c1.a * c1.a + (double)c1.b * c1.b);
    const float ch2 = (float)sqrt((double)c2.a * c2.a + (double)c2.b * c2.b);
    const float c_bar = (ch1 + ch2) / 2;

    /* a' = a (1 + G), G = (1 - sqrt(c^7 / (c^7 + 25^7))) / 2; 25^7 is exact */
    const double c_bar7 = ciede_pow7((double)c_bar);
    const double g = 1 - sqrt(c_bar7 / (c_bar7 + 6103515625.0));
    const float a1_prime = (float)(c1.a + (c1.a / 2) * g);
    const float a2_prime = (float)(c2.a + (c2.a / 2) * g);

    const float c1_prime = (float)sqrt((double)a1_prime * a1_prime + (double)c1.b * c1.b);
    const float c2_prime = (float)sqrt((double)a2_prime * a2_prime + (double)c2.b * c2.b);
    const float c_bar_prime = (c1_prime + c2_prime) / 2;
    const float dc_prime = c2_prime - c1_prime;

    const float l50 = l_bar - 50;
    const double l50_sq = (double)l50 * l50;
    const float s_l = (float)(1. + (0.015 * l50_sq) / sqrt(20 + l50_sq));
    const float s_c = (float)(1. + 0.045 * c_bar_prime);

    const float h1_prime = ciede_hue(c1.b, a1_prime);
    const float h2_prime = ciede_hue(c2.b, a2_prime);
    const float dh_prime = ciede_hue_delta(ch1, ch2, h1_prime, h2_prime);
    const float dH_prime =
        (float)(2.0 * sqrt((double)(c1_prime * c2_prime)) * sin(dh_prime / 2.0));
    const float h_bar_prime = ciede_hue_mean(h1_prime, h2_prime);
    const float t = ciede_t(h_bar_prime);
    const float s_h = (float)(1.0 + 0.015 * c_bar_prime * t);
    const float r_t = ciede_r_t(c_bar_prime, h_bar_prime);

    const float dl = dl_prime / (k_l * s_l);
    const float dc = dc_prime / (k_c * s_c);
    const float dh = dH_prime / (k_h * s_h);
    return (float)sqrt((double)dl * dl + (double)dc * dc + (double)dh * dh + r_t * dc * dh);
}

#if !defined(__CUDACC__)
/* ---- the host's part ---------------------------------------------------- */

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CiedeState {
    /* set by init */
    unsigned bitdepth, width, height;
    unsigned row_shift;       /* chroma row of luma row i: i >> row_shift */
    CiedeConvert convert;
    uint32_t *chroma_col;     /* per luma column: chroma column */
    uint8_t *chroma_row;      /* per luma column: rows ahead, or CIEDE_ROW_ZERO */
    void *zero_row;           /* width samples of 0 */
    unsigned key;
} CiedeState;

/* 0 if the metric scores this format; otherwise -EINVAL and the reason in
 * error (the message the CPU logs). */
int ciede_check_format(const QualeVideoFormat *format, char *error, size_t error_size);

/* A frame's sum of deltaE over the luma grid, as the C reference adds it
 * (scratch from metric_ciede.scratch_alloc). */
double ciede_frame_sum(const CiedeState *s, void *scratch, const QualePicture *ref,
                       const QualePicture *dist);

/* The key's value from a frame's sum of deltaE. */
double ciede_value(const CiedeState *s, double sum);

/* Writes the frame's key from its sum of deltaE. */
int ciede_write(const CiedeState *s, FeatureSink *sink, unsigned index, double sum);

extern const Metric metric_ciede;

#ifdef __cplusplus
}
#endif
#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_CIEDE_H */
