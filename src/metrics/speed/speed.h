/*
 * SpEED (speed.c): the spatial-efficient entropic differencing of libvmaf
 * master's speed_chroma and speed_temporal extractors, which the VMAF v1
 * models read.
 *
 * A picture (a chroma plane, or the difference of two luma planes) goes
 * through:
 *   1. an optional resampling by speed_prescale (float VIF's scalers);
 *   2. a Gaussian blur of the size of VIF's scale-1 filter and the width of
 *      its scale 4 ("the sigma trick"), then every 16th sample in each
 *      direction: the operating picture, 1/16 of the size;
 *   3. less its local mean (VIF's scale-4 filter);
 *   4. the 25 x 25 covariance K of the 5 x 5 neighbourhoods of the
 *      operating picture, K's eigenvalues (Householder tridiagonalisation
 *      and implicit QR, after GSL), and K^-1 y for every non-overlapping
 *      5 x 5 block y (Householder QR and back substitution), all in float;
 *   5. per block, the variance S = y' K^-1 y / 25 and the entropy
 *      E = sum over eigenvalues L of log2(L S + sigma_nn) + log2(2 pi e).
 * The score of a pair of pictures is the mean over blocks of
 * |E_ref log2(1 + S_ref) - E_dis log2(1 + S_dis)| (with variants of the
 * weights, speed_weight_var_mode), blocks whose two entropies are both
 * below the entropy of noise alone counting 0.
 *
 * Every step reproduces libvmaf's float and double operations and their
 * order (speed.c there): float accumulators, double libm calls rounded to
 * float where libvmaf stores a float.  The one sum whose order differs
 * between libvmaf's builds, the covariance sums, follows its AVX-512
 * kernel (two 8-lane chains of fused multiply-adds and a scalar tail,
 * libvmaf's choice on the machines it measures on), whatever instruction
 * sets quale uses: speed_cov_sum_c() and its SIMD twins.
 */
#ifndef QUALE_SRC_METRICS_SPEED_H
#define QUALE_SRC_METRICS_SPEED_H

#include <stdbool.h>
#include <stddef.h>

#define SPEED_BLOCK 5                              /* libvmaf's DEFAULT_BLOCK_SIZE */
#define SPEED_ELEMENTS (SPEED_BLOCK * SPEED_BLOCK) /* the order of K */
#define SPEED_SCALES 4                             /* the operating picture: 1/16 */
#define SPEED_MAX_TAPS 128
/* The smallest picture (after the prescale) SpEED scores: an operating
 * picture of one block a side.  libvmaf reads out of bounds below it. */
#define SPEED_MIN_SIZE (SPEED_BLOCK << SPEED_SCALES)

/* What the CUDA kernels (src/cuda/speed.cu) read too: plain data, the same
 * layout in C and C++. */

/* The sizes of one picture's steps (libvmaf's SpeedDimensions). */
typedef struct SpeedGeometry {
    int w, h;                 /* the picture before the prescale */
    int scaled_w, scaled_h;   /* after it */
    int alloc_w, alloc_h;     /* the larger of the two */
    int op_w, op_h;           /* the operating picture: scaled >> 4 */
    int trunc_w, trunc_h;     /* its whole blocks */
    int blocks_x, blocks_y, blocks;
    int sub_w, sub_h;         /* the samples each neighbourhood offset sees */
    bool prescale;            /* speed_prescale is not (almost) 1 */
} SpeedGeometry;

/* What one instance computes with: the options as libvmaf passes them on
 * (floats where it keeps floats), the filters, and the geometry. */
typedef struct SpeedSetup {
    SpeedGeometry g;
    int method;               /* enum VifPrescaleMethod (vif_tools.h) */
    float sigma_nn, nn_floor;
    int weight_mode;          /* speed_weight_var_mode, 0..6 */
    int antialias_taps, mean_taps;
    float antialias[SPEED_MAX_TAPS], mean[SPEED_MAX_TAPS];
} SpeedSetup;

/* The rest is C. */
#if !defined(__CUDACC__)

#include "metric.h"

/*
 * The kernels: the C reference, then AVX2 and AVX-512 ones with the same
 * bits (tests/checkasm/speed.c).
 *
 * cov_sum: the covariance sum of two neighbourhood offsets, sum of
 *     ((double)x - mx) * ((double)y - my) over h rows of w samples, in
 *     libvmaf's AVX-512 order: per lane of two 8-lane chains kept across
 *     rows, fused multiply-adds, 16 samples a step, then 8 once into the
 *     first chain, then the rest into a plain double sum; at the end the
 *     chains added, halves, quarters, the pair, then the rest.
 * matrix_mul, vertical_row: speed_tmpl.c.
 */
typedef double (*SpeedCovSumFn)(const float *x, const float *y, size_t stride, int w, int h,
                                double mx, double my);
typedef void (*SpeedMatrixMulFn)(float *out, const float *A, const float *B, int r, int m,
                                 int c);
typedef void (*SpeedVerticalRowFn)(const float *f, int taps, const float *const *rows, int w,
                                   float *row);
typedef struct SpeedDsp {
    SpeedCovSumFn cov_sum;
    SpeedMatrixMulFn matrix_mul;     /* speed_tmpl.c */
    SpeedVerticalRowFn vertical_row; /* speed_tmpl.c */
} SpeedDsp;

/* The C kernels, then those of each level cpu_flags (QUALE_CPU_*) allows. */
void speed_dsp_init(SpeedDsp *dsp, unsigned cpu_flags);

#define SPEED_DECLARE_KERNELS(isa)                                                          \
    double speed_cov_sum_##isa(const float *x, const float *y, size_t stride, int w, int h, \
                               double mx, double my);                                       \
    void speed_matrix_mul_##isa(float *out, const float *A, const float *B, int r, int m,   \
                                int c);                                                     \
    void speed_vertical_row_##isa(const float *f, int taps, const float *const *rows, int w, \
                                  float *row)
SPEED_DECLARE_KERNELS(c);
SPEED_DECLARE_KERNELS(avx2);
SPEED_DECLARE_KERNELS(avx512);

/* Checks the options and the picture size and fills the setup; logs what
 * is wrong through the sink, naming `metric` and what (e.g. "the U plane").
 * ks and ps as the options give them (doubles). */
int speed_setup(SpeedSetup *s, const char *metric, const char *what, int w, int h, double ks,
                double ps, int method, double sigma_nn, double nn_floor, int weight_mode,
                FeatureSink *sink);

/* One picture's results: per block, entropy and variance. */
typedef struct SpeedStats {
    float *entropies, *variances;
    bool singular;            /* K could not be inverted (libvmaf's -EINVAL) */
} SpeedStats;

/* Working memory of one worker for one setup: two pictures of alloc size,
 * the filters' rows, the matrices, and a pair of SpeedStats. */
typedef struct SpeedWork {
    const SpeedDsp *dsp;      /* the kernels */
    size_t stride;            /* floats, of the pictures */
    float *ref, *dis;         /* the pictures, alloc_w x alloc_h */
    float *tmp;               /* the prescale's source, alloc size */
    float *row;               /* one filtered row, alloc_w */
    float *op;                /* the blurred operating picture */
    float *cov, *eig, *y, *x; /* K, its eigenvalues, Y and X (25 x blocks) */
    float *lin;               /* the solver's and the eigen step's matrices */
    SpeedStats ref_stats, dis_stats;
} SpeedWork;

int speed_work_alloc(SpeedWork *w, const SpeedSetup *s, const SpeedDsp *dsp, int extra_width);
void speed_work_free(SpeedWork *w);

/* Steps 1-3 on the picture in pic (w x h at `stride` floats), in place:
 * pic then holds the mean-subtracted operating picture (op_w x op_h). */
void speed_prepare(const SpeedSetup *s, SpeedWork *w, float *pic);

/* Steps 4-5: the statistics of a prepared picture. */
void speed_picture_stats(const SpeedSetup *s, SpeedWork *w, const float *pic,
                         SpeedStats *out);

/* The score of a pair of prepared pictures' statistics: 0 when exactly one
 * of them is singular (libvmaf's rule). */
float speed_pair_score(const SpeedSetup *s, const SpeedStats *ref, const SpeedStats *dis);

/* The whole of a pair: prepare both pictures of w (ref, dis), their
 * statistics and the score; returns whether either was singular. */
bool speed_score_pictures(const SpeedSetup *s, SpeedWork *w, float *score);


/* ---- the metrics' states, and the step to their keys (their GPU twins
 * score through these too) --------------------------------------------------- */

/* The options both extractors have, under libvmaf's names, defaults,
 * ranges and aliases; every one names its keys. */
typedef struct SpeedOptions {
    double kernelscale, prescale;
    int prescale_method;          /* enum VifPrescaleMethod */
    double sigma_nn, nn_floor, max_val;
} SpeedOptions;

enum { CHROMA_U, CHROMA_V, CHROMA_UV, CHROMA_KEYS };

typedef struct SpeedChromaState {
    SpeedOptions o;
    int weight_mode;
    SpeedSetup setup;
    SpeedDsp dsp;
    int stored_w;                 /* the chroma plane's width as stored */
    unsigned key[CHROMA_KEYS];
} SpeedChromaState;

typedef struct SpeedTemporalState {
    SpeedOptions o;
    bool use_ref_diff;
    SpeedSetup setup;
    SpeedDsp dsp;
    unsigned key;
} SpeedTemporalState;

/* speed_chroma's keys of a frame from its U and V scores (each with
 * whether either picture was singular): uv is their mean, or the one whose
 * pictures were not singular; each key clipped to speed_max_val. */
int speed_chroma_write(const SpeedChromaState *s, FeatureSink *sink, unsigned index,
                       const float score[2], const bool singular[2]);

/* A GPU twin's frame from its pictures' statistics (ref, dis; for
 * speed_chroma U's then V's): speed_temporal's score of the pair, 0 for a
 * frame without a previous one (scored false), or speed_chroma's keys. */
int speed_write_stats(const void *state, bool temporal, const SpeedSetup *setup,
                      const SpeedStats stats[4], bool scored, unsigned index, FeatureSink *sink);

/* The chroma plane size libvmaf scores: the luma size halved, rounded down. */
void speed_chroma_size(const QualeVideoFormat *f, int *w, int *h);

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_SPEED_H */
