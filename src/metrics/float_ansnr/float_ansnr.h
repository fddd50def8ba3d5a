/*
 * float_ansnr's state and what the C reference and its GPU twins share:
 * the filters' weights, the size check, and the step from the picture's
 * float sums to the keys; the row kernels of the C reference and its SIMD
 * levels (FloatAnsnrDsp).
 */
#ifndef QUALE_SRC_METRICS_FLOAT_ANSNR_H
#define QUALE_SRC_METRICS_FLOAT_ANSNR_H

#define ANSNR_REF_TAPS 3
#define ANSNR_DIS_TAPS 5
/* The 5 x 5 mirror needs 3 samples a side. */
#define ANSNR_MIN_SIDE 3u
/* The conversion offset of libvmaf's ANSNR. */
#define ANSNR_OFFSET (-128.0f)

/* The filters' weights, row by row, each given to W(): the reference's
 * [1 2 1]^T [1 2 1] / 16 and the distorted picture's weights / 571, each
 * computed in double and rounded to float, as libvmaf. */
#define ANSNR_REF_WEIGHTS(W) \
    W(1), W(2), W(1),        \
    W(2), W(4), W(2),        \
    W(1), W(2), W(1)
#define ANSNR_REF_WEIGHT(n) ((n) / 16.0)
#define ANSNR_DIS_WEIGHTS(W)                 \
    W(2),  W(7),  W(12),  W(7),  W(2),       \
    W(7),  W(31), W(52),  W(31), W(7),       \
    W(12), W(52), W(127), W(52), W(12),      \
    W(7),  W(31), W(52),  W(31), W(7),       \
    W(2),  W(7),  W(12),  W(7),  W(2)
#define ANSNR_DIS_WEIGHT(n) ((n) / 571.0)

/* The rest is C: the kernels (src/cuda/float_ansnr.cu) take the weights. */
#if !defined(__CUDACC__)

#include <stdbool.h>
#include <stddef.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows whose sums row_sums takes at once (the vector lanes of the widest
 * level). */
#define ANSNR_SUM_ROWS 16

/*
 * The row kernels, written once in float_ansnr_tmpl.c (the C reference,
 * and the same loops built for AVX2 and AVX-512, which the compiler
 * vectorises along the row without changing an operation of any output)
 * plus the row sums of src/metrics/x86/float_ansnr_vector_tmpl.c.  Every
 * kernel's output is the C kernel's, bit for bit (tests/checkasm/
 * float_ansnr.c).
 *
 * filter_ref_row, filter_dis_row: one filtered row of w samples from the
 *     3 (reference) or 5 (distorted) source rows around it, each read from
 *     index -taps / 2 to w - 1 + taps / 2 (the mirror already written
 *     there): out[x] = sum over i of (sum over j of weight[i][j] *
 *     rows[i][x + j - taps / 2]), both sums in float from 0.0f, in index
 *     order.
 * row_sums: for each of `rows` rows (at most ANSNR_SUM_ROWS) of the
 *     filtered pictures (ref and dis, `stride` floats apart), sig[i] = sum
 *     of r * r and noise[i] = sum of (r - d) * (r - d), each a float sum
 *     from x = 0 to w - 1, in that order (libvmaf's: a row's sum is
 *     sequential; rows are independent, so a vector level adds several
 *     rows at once, one a lane).
 */
typedef struct FloatAnsnrDsp {
    void (*filter_ref_row)(const float *const *rows, float *out, int w);
    void (*filter_dis_row)(const float *const *rows, float *out, int w);
    void (*row_sums)(const float *ref, const float *dis, size_t stride, int rows, int w,
                     float *sig, float *noise);
} FloatAnsnrDsp;

/* The C kernels, then those of each level cpu_flags (QUALE_CPU_*) allows. */
void float_ansnr_dsp_init(FloatAnsnrDsp *dsp, unsigned cpu_flags);

#define ANSNR_DECLARE_KERNELS(isa)                                                          \
    void float_ansnr_filter_ref_row_##isa(const float *const *rows, float *out, int w);    \
    void float_ansnr_filter_dis_row_##isa(const float *const *rows, float *out, int w);    \
    void float_ansnr_row_sums_##isa(const float *ref, const float *dis, size_t stride,     \
                                    int rows, int w, float *sig, float *noise);
ANSNR_DECLARE_KERNELS(c)
ANSNR_DECLARE_KERNELS(avx2)
ANSNR_DECLARE_KERNELS(avx512)

typedef struct FloatAnsnrState {
    int w, h;
    double peak, psnr_max;
    unsigned key_ansnr, key_anpsnr;
    FloatAnsnrDsp dsp;  /* the row kernels of the CPU flags */
} FloatAnsnrState;

/* The bit depths libvmaf's float conversion knows: an error with a message
 * naming float_ansnr for the others. */
int float_ansnr_check(const QualeVideoFormat *format, FeatureSink *sink);

/* Pictures below ANSNR_MIN_SIDE a side: -EINVAL, with the message. */
int float_ansnr_check_size(unsigned width, unsigned height, char *error, size_t error_size);

/* Writes float_ansnr and float_anpsnr of a frame from the picture's sums
 * (sig: of the filtered reference's squares; noise: of the squared
 * differences of the filtered pictures), each a float sum of the rows'
 * float sums in row order. */
int float_ansnr_write(const FloatAnsnrState *s, FeatureSink *sink, unsigned index, float sig,
                      float noise);

/* The same from each row's sums, as the GPU twins read them back
 * (row_sums[y]: row y's sig, row_sums[h + y]: its noise), added in float
 * in row order as the C reference adds its rows. */
int float_ansnr_write_rows(const FloatAnsnrState *s, FeatureSink *sink, unsigned index,
                           const float *row_sums);

extern const Metric metric_float_ansnr;

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_FLOAT_ANSNR_H */
