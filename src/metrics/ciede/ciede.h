/*
 * CIEDE2000: the steps the C reference (ciede.c), its SIMD kernels and its
 * GPU twins share.
 *
 * The first part is arithmetic that device compilers read too (nvcc
 * includes this file from src/cuda/ciede.cu): the Y'CbCr -> L*a*b*
 * conversion and CIEDE2000 itself, as the scalar instantiation of
 * ciede_tmpl.h (which the x86 kernels instantiate on vectors), and where
 * libvmaf's chroma indexing reads.  The elementary functions are quale's
 * own (ciede_tmpl.h says why), so the host, the device and every SIMD
 * lane compute the same bits.
 *
 * The second part (hidden from nvcc) is the host's: the state, the
 * kernels' table, the format check and its message, and the step from the
 * frame's sum of deltaE to the key.
 */
#ifndef QUALE_SRC_METRICS_CIEDE_H
#define QUALE_SRC_METRICS_CIEDE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/common/bitcast.h"
#include "ciede_constants.h"

#include "metrics/common/host_device.h"

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
HOST_DEVICE_INLINE bool ciede_vmaf_chroma_source(unsigned plane, unsigned row, unsigned ch,
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

/* ---- Y'CbCr to L*a*b* and CIEDE2000 -------------------------------------- */

typedef struct CiedeLab {
    float l, a, b;
} CiedeLab;

/* Y' = (y - y_offset) * y_scale; Cb, Cr likewise with the c_ values. */
typedef struct CiedeConvert {
    double y_offset, y_scale;
    double c_offset, c_scale;
} CiedeConvert;

/* powf(25, 7): 25^7 = 6103515625 rounded to float, as libvmaf's powf call
 * gives it (tests/test_psnr_hvs_ciede_cuda_host.cpp checks the host's). */
#define CIEDE_POWF_25_7 6103515648.f

/* The scalar instantiation of ciede_tmpl.h: ciede_exp(), ciede_colour(),
 * ciede_difference(), ... on double and float. */
#define CT(name) ciede_##name
#define CT_FN HOST_DEVICE_INLINE
#define VD double
#define VF float
#define VU64 uint64_t
#define VU32 uint32_t
#define CT_MD(c) ((uint64_t)0 - (uint64_t)(c))
#define CT_MF(c) ((uint32_t)0 - (uint32_t)(c))
#define CT_MD2MF(m) ((uint32_t)(m))
#define CT_BITS(x) bitcast_double_bits(x)
#define CT_DOUBLE(u) bitcast_bits_double(u)
#define CT_FBITS(x) bitcast_float_bits(x)
#define CT_FLOAT(u) bitcast_bits_float(u)
#define CT_F2D(x) ((double)(x))
#define CT_D2F(x) ((float)(x))
#define CT_SQRT(x) sqrt(x)
#define CT_SPLAT(c) (c)
#include "ciede_tmpl.h"
#undef CT
#undef CT_FN
#undef VD
#undef VF
#undef VU64
#undef VU32
#undef CT_MD
#undef CT_MF
#undef CT_MD2MF
#undef CT_BITS
#undef CT_DOUBLE
#undef CT_FBITS
#undef CT_FLOAT
#undef CT_F2D
#undef CT_D2F
#undef CT_SQRT
#undef CT_SPLAT

/* The colour of samples (y, u, v). */
HOST_DEVICE_INLINE CiedeLab ciede_lab(const CiedeConvert *s, double y, double u, double v)
{
    CiedeLab lab;
    ciede_colour(s, y, u, v, &lab.l, &lab.a, &lab.b);
    return lab;
}

/* colour()'s steps apart: BT.709 R'G'B' decoded to linear light (R reads no
 * Cb and B no Cr, so the CUDA twin tabulates them over (y, v) and (y, u)),
 * and L*a*b* from linear RGB; ciede_lab() is ciede_lab_linear() of the
 * three, to the bit. */
HOST_DEVICE_INLINE double ciede_linear_r(const CiedeConvert *s, double y, double v)
{
    return ciede_linearize((y - s->y_offset) * s->y_scale +
                           1.28033 * ((v - s->c_offset) * s->c_scale));
}

HOST_DEVICE_INLINE double ciede_linear_g(const CiedeConvert *s, double y, double u, double v)
{
    return ciede_linearize((y - s->y_offset) * s->y_scale -
                           0.21482 * ((u - s->c_offset) * s->c_scale) -
                           0.38059 * ((v - s->c_offset) * s->c_scale));
}

HOST_DEVICE_INLINE double ciede_linear_b(const CiedeConvert *s, double y, double u)
{
    return ciede_linearize((y - s->y_offset) * s->y_scale +
                           2.12798 * ((u - s->c_offset) * s->c_scale));
}

HOST_DEVICE_INLINE CiedeLab ciede_lab_linear(double r, double g, double b)
{
    CiedeLab lab;
    ciede_colour_linear(r, g, b, &lab.l, &lab.a, &lab.b);
    return lab;
}

/* deltaE00 from colour 1 (reference) to colour 2 (distorted). */
HOST_DEVICE_INLINE float ciede2000(CiedeLab c1, CiedeLab c2)
{
    return ciede_difference(c1.l, c1.a, c1.b, c2.l, c2.a, c2.b);
}

#if !defined(__CUDACC__)
/* ---- the host's part ---------------------------------------------------- */

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The kernels the SIMD levels replace, pure functions of their inputs:
 *   colours: the L*a*b* colours l[i], a[i], b[i] of n sample triples
 *            (y[i], u[i], v[i]);
 *   delta_e: deltaE00 out[i] from the colours ref[0..2][i] (L*, a*, b*)
 *            to dist[0..2][i], for n pairs.
 */
typedef void (*CiedeColoursFn)(const CiedeConvert *convert, const uint16_t *y, const uint16_t *u,
                               const uint16_t *v, float *l, float *a, float *b, unsigned n);
typedef void (*CiedeDeltaEFn)(const float *const ref[3], const float *const dist[3], float *out,
                              unsigned n);

typedef struct CiedeDsp {
    CiedeColoursFn colours;
    CiedeDeltaEFn delta_e;
} CiedeDsp;

/* The C kernels, then those of the widest instruction set cpu_flags
 * (QUALE_CPU_*) allows. */
void ciede_dsp_init(CiedeDsp *dsp, unsigned cpu_flags);

/* The conversion of samples of a bit depth to Y'CbCr in [0, 1]. */
void ciede_convert_init(CiedeConvert *convert, unsigned bitdepth);

void ciede_colours_avx2(const CiedeConvert *convert, const uint16_t *y, const uint16_t *u,
                        const uint16_t *v, float *l, float *a, float *b, unsigned n);
void ciede_delta_e_avx2(const float *const ref[3], const float *const dist[3], float *out,
                        unsigned n);
void ciede_colours_avx512(const CiedeConvert *convert, const uint16_t *y, const uint16_t *u,
                          const uint16_t *v, float *l, float *a, float *b, unsigned n);
void ciede_delta_e_avx512(const float *const ref[3], const float *const dist[3], float *out,
                          unsigned n);

typedef struct CiedeState {
    /* set by init */
    CiedeDsp dsp;
    unsigned bitdepth, width, height;
    unsigned row_shift;       /* chroma row of luma row i: i >> row_shift */
    int chroma_shift;         /* chroma column of x: x >> it; -1: the tables */
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
