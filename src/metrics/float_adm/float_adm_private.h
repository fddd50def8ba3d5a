/*
 * What float ADM's C reference (float_adm.c) and its row functions
 * (float_adm_rows.c) share besides float_adm.h: libvmaf's division and the
 * vectors of four floats the rows are computed in.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_ADM_FLOAT_ADM_PRIVATE_H
#define QUALE_SRC_METRICS_FLOAT_ADM_FLOAT_ADM_PRIVATE_H

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <emmintrin.h>
#include "common.h"
#include "metric.h"
#include "metrics/common/adm_csf.h"
#include "float_adm.h"
#include "metrics/common/picture_float.h"
#include "metrics/common/vec4.h"

/* libvmaf's DIVS(): n times the reciprocal of d, rcpss refined by one
 * Newton step where SSE2 exists, a division elsewhere. */
static inline float adm_div(float n, float d)
{
#if defined(__SSE2__)
    const float xi = _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(d)));
    return n * (xi + xi * (1.0f - d * xi));
#else
    return n / d;
#endif
}

/* What ADM adds to the vectors of four floats (metrics/common/vec4.h);
 * rcpps gives every lane what rcpss gives one. */
#if VEC4_LANES
/* Macros, not functions: 32-byte vector arguments and results would
 * depend on AVX in the x86-64 ABI (gcc's -Wpsabi). */
#define vec_set1_dbl(x) ((Vec4Dbl){ (x), (x), (x), (x) })
#define vec_narrow(mask) __builtin_convertvector((mask), Vec4Int)

static inline Vec4 vec_abs(Vec4 v)
{
    const Vec4Int m = { 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF };
    return (Vec4)((Vec4Int)v & m);
}

/* (float)(k * (double)|v|): libvmaf's double constants times float bands */
static inline Vec4 vec_scale_abs(double k, Vec4 v)
{
    return __builtin_convertvector(vec_set1_dbl(k) * __builtin_convertvector(vec_abs(v), Vec4Dbl),
                                   Vec4);
}

/* adm_div() of four lanes */
static inline Vec4 vec_div(Vec4 n, Vec4 d)
{
#if defined(__SSE2__)
    const Vec4 xi = (Vec4)_mm_rcp_ps((__m128)d);
    return n * (xi + xi * (vec_set1(1.0f) - d * xi));
#else
    return n / d;
#endif
}
#endif

/* The DWT's source index and the scored region: float_adm.h. */
#define dwt_mirror float_adm_dwt_mirror
typedef FloatAdmRect Rect;
#define rect_scored float_adm_rect

/* libvmaf's get_noise_constant(): float powers of a double product. */
static inline float noise_floor(int w, int h, double weight, double p_norm)
{
    return powf(w * h * weight, 1.0f / p_norm);
}

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define ADM_SCALES FLOAT_ADM_SCALES
#define ADM_MIN_SIZE FLOAT_ADM_MIN_SIZE

/* libvmaf's constants, double literals where its are */
#define ADM_ONE_BY_30 FLOAT_ADM_ONE_BY_30
#define ADM_ONE_BY_15 FLOAT_ADM_ONE_BY_15
#define ADM_LUMINANCE_LEVEL 100.0

enum AdmCsfMode { ADM_CSF_WATSON97 = 0, ADM_CSF_BARTEN = 1, ADM_CSF_ADM = 2 };

enum { O_H, O_V, O_D, ORIENTATIONS };

/* One band row's decoupled, CSF-weighted values, for the masking window. */
typedef struct AdmRow {
    float *csf_r[ORIENTATIONS], *csf_a[ORIENTATIONS];   /* csf * r, csf * a */
    float *flt_r[ORIENTATIONS], *flt_a[ORIENTATIONS];   /* |csf * x| / 30 */
} AdmRow;

typedef struct FloatAdmScratch {
    /* The approximation bands of reference and distorted: levels 0 and 2
     * in approx[0], 1 and 3 in approx[1] (a level reads one while it
     * writes the other, so that its row bands can run at once), and every
     * level's row sums.  Only the scratch of a thread running extract()
     * has them (made on its first frame): the bands other threads run
     * write to that one's. */
    float *approx[2][2];
    size_t stride[2];                /* floats */
    float *row_sums[ADM_SCALES];     /* FLOAT_ADM_SUMS a row of each level */
    void *frame_memory;
    float *source[2][4];             /* level-0 source rows as floats */
    int source_row[2][4];            /* which picture row each holds */
    float *lo, *hi;                  /* vertical-pass rows */
    float *band[2][ORIENTATIONS];    /* one row of h, v, d */
    AdmRow ring[3];                  /* rows i - 1, i, i + 1 */
    float *masked[6];                /* one row of masked values, num h v d, aim h v d */
    float *spare;                    /* the approximation of a row another band makes */
    uint8_t *block;
} FloatAdmScratch;

/* float_adm_rows.c: the DWT of a row, a level-0 source row as floats,
 * the decoupling, CSF and masking of band rows, the denominator's sums,
 * and a level's pooled value. */
void dwt_row(const float *const src[4], int w, float *lo, float *hi, float *a, float *h,
             float *v, float *d);
const float *source_row(FloatAdmScratch *t, int i, const QualePicture *pic, int y);
void decouple_row(const FloatAdmState *s, const float *const o[ORIENTATIONS],
                  const float *const d[ORIENTATIONS], const float csf[3], int lo, int hi,
                  const AdmRow *r);
void mask_row(const FloatAdmState *s, const AdmRow *up, const AdmRow *mid, const AdmRow *down,
              int w, int left, int right, float *const x[6], float num[3], float aim[3]);
void den_row(const FloatAdmState *s, const float *const o[ORIENTATIONS], const float csf[3],
             int left, int right, float den[3]);
float pooled(const float acc[3], float noise, double p_norm);

#endif /* QUALE_SRC_METRICS_FLOAT_ADM_FLOAT_ADM_PRIVATE_H */
