/*
 * CAMBI's row kernels (cambi.c), the ones the SIMD levels replace: written
 * once in cambi_tmpl.c (the C reference and, built with AVX2 and AVX-512,
 * the simple integer rows) plus hand-vectorised c-values in
 * src/metrics/x86/cambi_vector_tmpl.c.  Every kernel's output is the C
 * kernel's, byte for byte (tests/checkasm/cambi.c).
 */
#ifndef QUALE_SRC_METRICS_CAMBI_H
#define QUALE_SRC_METRICS_CAMBI_H

#include <stddef.h>
#include <stdint.h>

#define CAMBI_MAX_DIFFS 32
/* The square of the spatial mask, and the radius of it. */
#define CAMBI_MASK_SIDE 7
#define CAMBI_MASK_PAD (CAMBI_MASK_SIDE / 2)
/* Bytes a kernel may read past the end of the histograms (a vector
 * gathers 32-bit words at 16-bit counters). */
#define CAMBI_HISTOGRAM_SLACK 64

/* What a c-value reads besides the counts (cambi.c's state). */
typedef struct CambiCValueParams {
    const int *weight;              /* contrast response, by step - 1 */
    const float *reciprocal;        /* libvmaf's table: 1 / n, n <= window^2 */
    int num_diffs;
    int band_base, band_size;       /* the 10-bit values the histograms keep */
    int vlt_luma;
    int tvi[CAMBI_MAX_DIFFS];       /* in value + num_diffs units */
} CambiCValueParams;

/*
 * anti_dither_row: a[j] = (a[j] + a[j + 1] + b[j] + b[j + 1]) >> 2 for
 *     j < w - 1 and a[w - 1] = (a[w - 1] + b[w - 1]) >> 1, in place (each
 *     sample read is still the original); without b (the last row), the
 *     means of a[j] and a[j + 1].
 * flat_row: flat[j] = a[j] equals a[j + 1] and b[j] (the neighbours that
 *     exist; b NULL on the last row).
 * mask_row: count[j] += add[j], -= sub[j] (either may be NULL) for j < w,
 *     then mask[j] = (count[j - 3] + ... + count[j + 3] > mask_index), with
 *     count[-3 .. -1] and count[w .. w + 2] zero.
 * decimate_row16, decimate_row8: out[j] = in[2 j], j < dw (no overlap).
 * mode_row: out[j] = the mode of in[j - 1], in[j], in[j + 1] (the value
 *     two share, else the smallest), for 0 < j < w - 1; out[0] = in[0],
 *     out[w - 1] = in[w - 1].
 * mode_column: out[j] = the mode of r0[j], r1[j], r2[j], j < w.
 * slide_row: for every sample j < w that leaves (of row `leave`, or none)
 *     or enters (of `enter`) the window, by its band row (masked, in the
 *     band), one counter less or more in its row of histograms over the
 *     columns j - pad .. j + pad inside 0 .. w - 1.
 * c_values_row: c_values[j] of the samples of a row (0 where masked out
 *     or off the band), from the histograms of its window (row r of band
 *     value r: histograms[r * w + j]).
 */
typedef struct CambiDsp {
    void (*anti_dither_row)(uint16_t *a, const uint16_t *b, unsigned w);
    void (*flat_row)(const uint16_t *a, const uint16_t *b, uint8_t *flat, unsigned w);
    void (*mask_row)(uint8_t *count, const uint8_t *add, const uint8_t *sub, uint8_t *mask,
                     unsigned w, unsigned mask_index);
    void (*decimate_row16)(const uint16_t *in, uint16_t *out, unsigned dw);
    void (*decimate_row8)(const uint8_t *in, uint8_t *out, unsigned dw);
    void (*mode_row)(const uint16_t *in, uint16_t *out, unsigned w);
    void (*mode_column)(const uint16_t *r0, const uint16_t *r1, const uint16_t *r2,
                        uint16_t *out, unsigned w);
    void (*slide_row)(uint16_t *histograms, const CambiCValueParams *p, const uint16_t *leave,
                      const uint8_t *leave_mask, const uint16_t *enter, const uint8_t *enter_mask,
                      unsigned w, unsigned pad);
    void (*c_values_row)(const CambiCValueParams *p, const uint16_t *histograms,
                         const uint16_t *image, const uint8_t *mask, float *c_values,
                         unsigned w);
} CambiDsp;

/* The C kernels, then those of the widest instruction set cpu_flags
 * (QUALE_CPU_*) allows. */
void cambi_dsp_init(CambiDsp *dsp, unsigned cpu_flags);

/* Points p's weight and reciprocal at libvmaf's tables; *reciprocal_size
 * receives how many reciprocals there are. */
void cambi_c_value_tables(CambiCValueParams *p, unsigned *reciprocal_size);

#define CAMBI_DECLARE_KERNELS(isa)                                                             \
    void cambi_anti_dither_row_##isa(uint16_t *a, const uint16_t *b, unsigned w);              \
    void cambi_flat_row_##isa(const uint16_t *a, const uint16_t *b, uint8_t *flat, unsigned w); \
    void cambi_mask_row_##isa(uint8_t *count, const uint8_t *add, const uint8_t *sub,          \
                              uint8_t *mask, unsigned w, unsigned mask_index);                 \
    void cambi_decimate_row16_##isa(const uint16_t *in, uint16_t *out, unsigned dw);           \
    void cambi_decimate_row8_##isa(const uint8_t *in, uint8_t *out, unsigned dw);              \
    void cambi_mode_row_##isa(const uint16_t *in, uint16_t *out, unsigned w);                  \
    void cambi_mode_column_##isa(const uint16_t *r0, const uint16_t *r1, const uint16_t *r2,   \
                                 uint16_t *out, unsigned w);                                   \
    void cambi_slide_row_##isa(uint16_t *histograms, const CambiCValueParams *p,               \
                               const uint16_t *leave, const uint8_t *leave_mask,               \
                               const uint16_t *enter, const uint8_t *enter_mask, unsigned w,   \
                               unsigned pad);                                                  \
    void cambi_c_values_row_##isa(const CambiCValueParams *p, const uint16_t *histograms,      \
                                  const uint16_t *image, const uint8_t *mask, float *c_values, \
                                  unsigned w);
CAMBI_DECLARE_KERNELS(c)
CAMBI_DECLARE_KERNELS(avx2)
CAMBI_DECLARE_KERNELS(avx512)

#endif /* QUALE_SRC_METRICS_CAMBI_H */
