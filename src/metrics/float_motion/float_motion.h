/*
 * Float motion (float_motion.c): what its C reference and its CUDA twin
 * (src/cuda/float_motion.cu, float_motion_cuda.c) share: the filters and
 * the edge mirror (inline, for the host and, under nvcc, the device), the
 * state, and the host steps around the sums: which frames are scored, the
 * size check with its message, the mean of the row sums and the keys
 * written from a frame's scores.
 */
#ifndef QUALE_SRC_METRICS_FLOAT_MOTION_H
#define QUALE_SRC_METRICS_FLOAT_MOTION_H

#include <stdbool.h>
#include <stdint.h>

#include "metrics/common/host_device.h"

#define FLOAT_MOTION_MAX_TAPS 5

/* libvmaf's motion_tools.h filters */
#define FLOAT_MOTION_FILTER5 0.054488685f, 0.244201342f, 0.402619947f, 0.244201342f, 0.054488685f
#define FLOAT_MOTION_FILTER3 0.166378498f, 0.667243004f, 0.166378498f
#define FLOAT_MOTION_FILTER5_IDENTITY 0.0f, 0.0f, 1.0f, 0.0f, 0.0f

/* libvmaf's reflection at the edges (convolution_edge_s): -k -> k,
 * n - 1 + k -> n - 1 - k; valid while the radius is below n. */
HOST_DEVICE_INLINE int float_motion_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

#if !defined(__CUDACC__)

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The state holds an atomic word: C only (C++ sees it opaque). */
typedef struct FloatMotionState FloatMotionState;

#ifndef __cplusplus
#include <stdatomic.h>

enum { FLOAT_MOTION_KEY_MOTION, FLOAT_MOTION_KEY_MOTION2, FLOAT_MOTION_KEY_MOTION3,
       FLOAT_MOTION_KEY_COUNT };

struct FloatMotionState {
    /* options */
    bool debug;
    bool force_zero;
    double fps_weight;
    double blend_factor;
    double blend_offset;
    bool add_scale1;
    int filter_size;
    bool add_uv;
    double max_val;

    /* set by init */
    int w, h;
    int scaled_w, scaled_h;          /* motion_add_scale1 */
    int planes;                      /* 3 with motion_add_uv, else 1 */
    int pw[3], ph[3];                /* each plane's size */
    const float *filter;
    int taps;
    unsigned key[FLOAT_MOTION_KEY_COUNT];
    /* The score of the highest frame extracted so far (a double: with
     * motion_add_uv libvmaf adds the planes' float scores in double) and
     * that frame's index + 1, 0 before any, under last_lock.  flush()
     * reads the last frame's. */
    atomic_flag last_lock;
    uint64_t last_index;
    double last_score;
};
#endif

/* Whether frame `index` has scores to compute (SADs of blurred pictures):
 * every frame from 1 on unless motion_force_zero. */
bool float_motion_scored(const FloatMotionState *s, unsigned index);

/* The picture must be larger than the blur's radius where scores are
 * computed: otherwise logs why through the sink and returns -EINVAL. */
int float_motion_check_size(const FloatMotionState *s, FeatureSink *sink);

/* The score of a SAD: the float sum of the rows' float sums in row order,
 * over the picture's area, in float. */
float float_motion_mean(float accum, int w, int h);

/* Writes what frame `index` writes: its motion, frame index - 1's motion2
 * and motion3 (frame 0's motion3 at frame 1), and remembers the score for
 * flush().  score: score[index], score2: score[index - 1] (index >= 2);
 * both unused where float_motion_scored() is false. */
int float_motion_put(FloatMotionState *s, FeatureSink *sink, unsigned index, double score,
                     double score2);

/* float_motion_put() of frame `index` from its rows' SADs as the GPU twins
 * read them back: rows[2 y] the SAD of blurred frames index - 1 and index
 * over row y, rows[2 y + 1] that of index - 1 and index - 2 (from index 2
 * on), each summed in float in row order as the C reference sums its rows.
 * rows is not read where float_motion_scored() is false; a picture too
 * small for the blur fails with float_motion_check_size()'s message. */
int float_motion_put_rows(FloatMotionState *s, FeatureSink *sink, unsigned index,
                          const float *rows);

extern const Metric metric_float_motion;

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_FLOAT_MOTION_H */
