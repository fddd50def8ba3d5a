/*
 * CAMBI's state and the steps the C reference (cambi.c) and its GPU twins
 * share.
 *
 * The first part is arithmetic that device compilers read too (nvcc
 * includes this file from src/cuda/cambi.cu): the 10-bit conversion, the
 * mode of three, the c-value of one sample from the window counts of its
 * column, and the statistics of the non-zero c-values that pooling needs.
 *
 * The second part (hidden from nvcc) is the host's: the row kernels of the
 * C reference and its SIMD levels (CambiDsp), the state, the source
 * positions of the resampling, pooling and the step from the scale scores
 * to the feature values.
 */
#ifndef QUALE_SRC_METRICS_CAMBI_H
#define QUALE_SRC_METRICS_CAMBI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/common/host_device.h"

#if defined(__CUDACC__)
#define CAMBI_UNROLL _Pragma("unroll")
#else
#define CAMBI_UNROLL
#endif

#define CAMBI_SCALES 5
#define CAMBI_MAX_DIFFS 32
/* The largest window: window^2 must index the reciprocal table. */
#define CAMBI_MAX_WINDOW 65

/* Suprathreshold contrast response, by contrast step - 1 (an initialiser
 * list: the device code indexes it with constants). */
#define CAMBI_CONTRAST_WEIGHTS                                                     \
    1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, \
        9, 9, 9, 9, 9, 9

/* What the c-value of a sample depends on besides the counts. */
typedef struct CambiContrast {
    int num_diffs;              /* 1 << max_log_contrast */
    int vlt_luma;               /* the visibility luminance threshold, a 10-bit value */
    /* The band of 10-bit values that the histograms keep: band row r
     * counts value band_base + r. */
    int band_base, band_size;
    int tvi[CAMBI_MAX_DIFFS];   /* in value + num_diffs units, as libvmaf */
} CambiContrast;

/* What pooling needs to know of the non-zero c-values of a scale. */
typedef struct CambiNonZero {
    double sum; /* of the non-zero values, in the order they were added */
    unsigned count;
    float smallest, largest;
} CambiNonZero;

HOST_DEVICE_INLINE void cambi_nonzero_add(CambiNonZero *nz, float c)
{
    if (c > 0.0f) {
        nz->sum += c;
        nz->count++;
        if (c < nz->smallest) nz->smallest = c;
        if (c > nz->largest) nz->largest = c;
    }
}

/* A sample at 10 bits: shifted up from fewer, rounded down from more. */
HOST_DEVICE_INLINE uint16_t cambi_to_10bit(unsigned v, unsigned bitdepth)
{
    if (bitdepth < 10) return (uint16_t)(v << (10 - bitdepth));
    const unsigned shift = bitdepth - 10;
    const unsigned round = shift ? 1u << (shift - 1) : 0;
    return (uint16_t)((v + round) >> shift);
}

/* The value two of three share, else the smallest; in selects, which
 * vectorise. */
HOST_DEVICE_INLINE uint16_t cambi_mode3(uint16_t a, uint16_t b, uint16_t c)
{
    const uint16_t ab = a < b ? a : b;
    const uint16_t smallest = ab < c ? ab : c;
    const uint16_t bc = b == c ? b : smallest;
    return a == b || a == c ? a : bc;
}

/*
 * The c-value of a masked sample of band row v from the window counts of
 * its column: col[r * stride] counts band row r.  reciprocal is libvmaf's
 * table (cambi_tables.h).  The product of the counts is an integer made a
 * float, times a float: one rounding, the same on every target.  The loop
 * runs to a constant bound so that a device unrolls it and reads the
 * weights and thresholds at constant places.
 */
HOST_DEVICE_INLINE float cambi_c_value(const CambiContrast *k, const float *reciprocal,
                                 const uint16_t *col, size_t stride, int v)
{
    const int weights[CAMBI_MAX_DIFFS] = { CAMBI_CONTRAST_WEIGHTS };
    const int nd = k->num_diffs;
    const int value = v + k->band_base + nd;
    const int p0 = col[(size_t)v * stride];
    float c = 0.0f;
    CAMBI_UNROLL
    for (int d = 0; d < CAMBI_MAX_DIFFS; d++) {
        if (d >= nd) break;
        if (value > k->tvi[d] || value + d + 1 <= k->vlt_luma) continue;
        const int p1 = col[(size_t)(v + d + 1) * stride];
        const int p2 = v - d - 1 >= 0 ? col[(size_t)(v - d - 1) * stride] : 0;
        const int p = p1 > p2 ? p1 : p2;
        const float val = (float)(weights[d] * p0 * p) * reciprocal[p + p0];
        if (val > c) c = val;
    }
    return c;
}

#if !defined(__CUDACC__)

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The square of the spatial mask, and the radius of it. */
#define CAMBI_MASK_SIDE 7
#define CAMBI_MASK_PAD (CAMBI_MASK_SIDE / 2)
/* Bytes a kernel may read past the end of the histograms (a vector
 * gathers 32-bit words at 16-bit counters). */
#define CAMBI_HISTOGRAM_SLACK 64

/*
 * The row kernels of cambi_score(), the loops the SIMD levels replace:
 * written once in cambi_tmpl.c (the C reference, and the same loops built
 * for AVX2 and AVX-512, vectorised by the compiler) plus hand-vectorised
 * c-values in src/metrics/x86/cambi_vector_tmpl.c.  Every kernel's output
 * is the C kernel's, byte for byte (tests/checkasm/cambi.c), for samples
 * of any 16-bit value: load_row makes 10-bit ones (0 .. 1024) of a picture
 * within its bit depth, anything of one whose samples exceed it.
 *
 * load_row: out[j] = the sample at 10 bits (cambi_to_10bit) of in[src_x[j]]
 *     (in[j] without src_x), j < w; in holds bytes at 8 bits, else 16-bit
 *     words.
 * anti_dither_row: a[j] = (a[j] + a[j + 1] + b[j] + b[j + 1]) >> 2 for
 *     j < w - 1 and a[w - 1] = (a[w - 1] + b[w - 1]) >> 1, in place (each
 *     sample read is still the original); without b (the last row), the
 *     means of a[j] and a[j + 1].
 * flat_row: flat[j] = a[j] equals a[j + 1] and b[j] (the neighbours that
 *     exist; b NULL on the last row).
 * mask_row: count[j] += add[j], -= sub[j] (either may be NULL) for j < w,
 *     then mask[j] = (count[j - 3] + ... + count[j + 3] > mask_index), with
 *     count[-3 .. -1] and count[w .. w + 2] zero (counts of at most 7).
 * decimate_row16, decimate_row8: out[j] = in[2 j], j < dw (no overlap).
 * mode_row: out[j] = cambi_mode3(in[j - 1], in[j], in[j + 1]) for
 *     0 < j < w - 1; out[0] = in[0], out[w - 1] = in[w - 1].
 * mode_column: out[j] = cambi_mode3(r0[j], r1[j], r2[j]), j < w.
 * slide_row: every sample j < w that leaves (of row `leave`, or none) or
 *     enters (of `enter`) the window with a band row (masked, in k's band)
 *     takes one from or adds one to the counters of its band row over the
 *     columns j - pad .. j + pad inside 0 .. w - 1 (modulo 2^16).
 * c_values_row: c_values[j] = cambi_c_value() of the samples of a row (0
 *     where masked out or off the band), from the counters of its window
 *     (band row r: histograms[r * w + j]); reciprocal is cambi_tables.h's.
 *     Returns whether any of them is above 0 (most rows have none).
 */
typedef struct CambiDsp {
    void (*load_row)(const uint8_t *in, unsigned bitdepth, const uint32_t *src_x, uint16_t *out,
                     unsigned w);
    void (*anti_dither_row)(uint16_t *a, const uint16_t *b, unsigned w);
    void (*flat_row)(const uint16_t *a, const uint16_t *b, uint8_t *flat, unsigned w);
    void (*mask_row)(uint8_t *count, const uint8_t *add, const uint8_t *sub, uint8_t *mask,
                     unsigned w, unsigned mask_index);
    void (*decimate_row16)(const uint16_t *in, uint16_t *out, unsigned dw);
    void (*decimate_row8)(const uint8_t *in, uint8_t *out, unsigned dw);
    void (*mode_row)(const uint16_t *in, uint16_t *out, unsigned w);
    void (*mode_column)(const uint16_t *r0, const uint16_t *r1, const uint16_t *r2,
                        uint16_t *out, unsigned w);
    void (*slide_row)(uint16_t *histograms, const CambiContrast *k, const uint16_t *leave,
                      const uint8_t *leave_mask, const uint16_t *enter, const uint8_t *enter_mask,
                      unsigned w, unsigned pad);
    bool (*c_values_row)(const CambiContrast *k, const float *reciprocal,
                         const uint16_t *histograms, const uint16_t *image, const uint8_t *mask,
                         float *c_values, unsigned w);
} CambiDsp;

/* The C kernels, then those of each level cpu_flags (QUALE_CPU_*) allows. */
void cambi_dsp_init(CambiDsp *dsp, unsigned cpu_flags);

#define CAMBI_DECLARE_KERNELS(isa)                                                             \
    void cambi_load_row_##isa(const uint8_t *in, unsigned bitdepth, const uint32_t *src_x,     \
                              uint16_t *out, unsigned w);                                      \
    void cambi_anti_dither_row_##isa(uint16_t *a, const uint16_t *b, unsigned w);              \
    void cambi_flat_row_##isa(const uint16_t *a, const uint16_t *b, uint8_t *flat, unsigned w); \
    void cambi_mask_row_##isa(uint8_t *count, const uint8_t *add, const uint8_t *sub,          \
                              uint8_t *mask, unsigned w, unsigned mask_index);                 \
    void cambi_decimate_row16_##isa(const uint16_t *in, uint16_t *out, unsigned dw);           \
    void cambi_decimate_row8_##isa(const uint8_t *in, uint8_t *out, unsigned dw);              \
    void cambi_mode_row_##isa(const uint16_t *in, uint16_t *out, unsigned w);                  \
    void cambi_mode_column_##isa(const uint16_t *r0, const uint16_t *r1, const uint16_t *r2,   \
                                 uint16_t *out, unsigned w);                                   \
    void cambi_slide_row_##isa(uint16_t *histograms, const CambiContrast *k,                   \
                               const uint16_t *leave, const uint8_t *leave_mask,               \
                               const uint16_t *enter, const uint8_t *enter_mask, unsigned w,   \
                               unsigned pad);                                                  \
    bool cambi_c_values_row_##isa(const CambiContrast *k, const float *reciprocal,             \
                                  const uint16_t *histograms, const uint16_t *image,           \
                                  const uint8_t *mask, float *c_values, unsigned w);
CAMBI_DECLARE_KERNELS(c)
CAMBI_DECLARE_KERNELS(avx2)
CAMBI_DECLARE_KERNELS(avx512)

enum CambiEotf {
    CAMBI_EOTF_BT1886 = 0,
    CAMBI_EOTF_PQ,
};

enum CambiKey {
    CAMBI_KEY_SCORE,
    CAMBI_KEY_SOURCE,
    CAMBI_KEY_FULL_REFERENCE,
    CAMBI_KEY_COUNT,
};

/* How one input (distorted or, with full_ref, reference) is scored. */
typedef struct CambiGeometry {
    unsigned width, height;  /* the scored size: encoding (or source) size */
    unsigned window;         /* odd side of the histogram square */
    uint16_t mask_index;
} CambiGeometry;

typedef struct CambiState {
    /* options, as parsed.  The key suffixes are read from these after
     * init, so init keeps what it derives from them apart. */
    double max_val;
    int enc_width, enc_height, enc_bitdepth;
    int src_width, src_height;
    int window_size;
    double topk, cambi_topk;
    double tvi_threshold;
    double vis_lum_threshold;
    int max_log_contrast;
    bool full_ref;
    int high_res_speedup;
    int eotf_option, cambi_eotf_option; /* indices into cambi_eotf_names */
    char *heatmaps_path;        /* a directory, or NULL: no heatmaps */

    /* set by init */
    enum CambiEotf eotf;
    CambiGeometry dist, ref;
    bool anti_dither;
    bool speedup;       /* scale 0 is already decimated once */
    double pool_topk;
    CambiContrast contrast;
    CambiDsp dsp;       /* the row kernels of the CPU flags */
    unsigned alloc_w, alloc_h;
    unsigned key[CAMBI_KEY_COUNT];
    /* set by init, with heatmaps_path: one file per scale (-1: none) */
    int heatmap_fd[CAMBI_SCALES];
    double heatmap_scale;       /* c-value to 16-bit code */
} CambiState;

/* The side of a scale from the side of the one before. */
static inline unsigned cambi_halve(unsigned n)
{
    return (n + 1) >> 1;
}

/* libvmaf's nearest-neighbour positions of a resampling from in to out
 * samples: pos[i] is the source sample of sample i. */
void cambi_source_positions(uint32_t *pos, unsigned in, unsigned out);

/* Whether pooling a w x h scale needs its c-values, or only their
 * statistics (when it is their exact sum: see cambi_pool()). */
bool cambi_pool_needs_values(unsigned w, unsigned h, double topk, const CambiNonZero *nz);

/* The score of a scale: the mean of its largest topk * w * h c-values, in
 * libvmaf's order.  c_values (w x h, reordered) may be NULL when
 * cambi_pool_needs_values() says so. */
double cambi_pool(float *c_values, unsigned w, unsigned h, double topk, const CambiNonZero *nz);

/* A picture's score from the scores of its scales. */
double cambi_combine(const CambiGeometry *g, const double scale_score[CAMBI_SCALES]);

/* ---- what the GPU twins share (src/cuda/cambi_cuda.c, src/vulkan/cambi_vulkan.c) */

/* The sizes of the five scales of a picture of geometry g, as
 * cambi_score() makes them (with the speed-up the first is halved). */
void cambi_scale_sizes(const CambiState *s, const CambiGeometry *g, unsigned sw[CAMBI_SCALES],
                       unsigned sh[CAMBI_SCALES]);

/* The rows of a chunk of the GPU twins' c-value blocks, which slide a
 * window down strip columns of a scale (sizes sw x sh) from the chunk's
 * first row: the count that makes the five scales' blocks finish soonest
 * when `resident` blocks run at once (0: unknown, one chunk a strip). */
unsigned cambi_chunk_rows(const unsigned sw[CAMBI_SCALES], const unsigned sh[CAMBI_SCALES],
                          unsigned window, unsigned strip, unsigned resident);

/* Fills values (w x h floats, the scale's size) with the c-values of a
 * scale, in picture order; 0, or an error with its message. */
typedef int (*CambiValuesFn)(void *cookie, unsigned scale, float *values, char *error,
                             size_t error_size);

/* A picture's score (what cambi_score() returns) from the statistics of
 * its scales (sizes sw x sh): each scale pooled by cambi_pool() from its
 * statistics, or from its c-values where cambi_pool_needs_values() says so
 * (values() fills them); then cambi_combine().  Without values (NULL), a
 * picture that needs them gives -EAGAIN (error says which scale). */
int cambi_pool_picture(const CambiState *s, const CambiGeometry *g,
                       const unsigned sw[CAMBI_SCALES], const unsigned sh[CAMBI_SCALES],
                       const CambiNonZero nz[CAMBI_SCALES], CambiValuesFn values, void *cookie,
                       double *score, char *error, size_t error_size);

/* Writes the frame's keys from the scores of the distorted picture and,
 * with full_ref, of the reference. */
int cambi_write(const CambiState *s, FeatureSink *sink, unsigned index, double dist, double src);

/* Sees the steps of cambi_score() (for tests): the picture after the
 * preprocessing with its mask, at the scored size, and each scale after
 * its mode filter with its mask, c-values and their statistics. */
typedef struct CambiObserver {
    void *cookie;
    void (*preprocessed)(void *cookie, const uint16_t *image, const uint8_t *mask, unsigned w,
                         unsigned h);
    void (*scale)(void *cookie, unsigned scale, const uint16_t *image, const uint8_t *mask,
                  const float *c_values, unsigned w, unsigned h, const CambiNonZero *nz);
} CambiObserver;

/* The score of one picture as the C reference computes it (scratch from
 * metric_cambi.scratch_alloc; observer may be NULL). */
double cambi_score(const CambiState *s, const CambiGeometry *g, const QualePicture *pic,
                   void *scratch, const CambiObserver *observer);

extern const Metric metric_cambi;

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_CAMBI_H */
