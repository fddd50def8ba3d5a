/*
 * CAMBI's state and the steps the C reference (cambi.c) and its GPU twins
 * share.
 *
 * The first part is arithmetic that device compilers read too (nvcc
 * includes this file from src/cuda/cambi.cu): the 10-bit conversion, the
 * mode of three, the c-value of one sample from the window counts of its
 * column, and the statistics of the non-zero c-values that pooling needs.
 *
 * The second part (hidden from nvcc) is the host's: the state, the source
 * positions of the resampling, pooling and the step from the scale scores
 * to the feature values.
 */
#ifndef QUALE_SRC_METRICS_CAMBI_H
#define QUALE_SRC_METRICS_CAMBI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define CAMBI_INLINE static inline __host__ __device__
#define CAMBI_UNROLL _Pragma("unroll")
#else
#define CAMBI_INLINE static inline
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

CAMBI_INLINE void cambi_nonzero_add(CambiNonZero *nz, float c)
{
    if (c > 0.0f) {
        nz->sum += c;
        nz->count++;
        if (c < nz->smallest) nz->smallest = c;
        if (c > nz->largest) nz->largest = c;
    }
}

/* A sample at 10 bits: shifted up from fewer, rounded down from more. */
CAMBI_INLINE uint16_t cambi_to_10bit(unsigned v, unsigned bitdepth)
{
    if (bitdepth < 10) return (uint16_t)(v << (10 - bitdepth));
    const unsigned shift = bitdepth - 10;
    const unsigned round = shift ? 1u << (shift - 1) : 0;
    return (uint16_t)((v + round) >> shift);
}

/* The value two of three share, else the smallest; in selects, which
 * vectorise. */
CAMBI_INLINE uint16_t cambi_mode3(uint16_t a, uint16_t b, uint16_t c)
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
CAMBI_INLINE float cambi_c_value(const CambiContrast *k, const float *reciprocal,
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
