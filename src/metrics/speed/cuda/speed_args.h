/* What speed.cu's kernels read, and their threads per block: one
 * declaration for speed_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_SPEED_ARGS_H
#define QUALE_SRC_CUDA_SPEED_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"
#include "metrics/speed/speed.h"

/* Threads per block of speed_stats and speed_cov (their launch bounds). */
#define SPEED_STATS_THREADS 256
#define SPEED_COV_THREADS 32
/* The operating picture's samples per block of speed_blur and
 * speed_local_mean, and the converted samples per block of speed_convert
 * and speed_prescale. */
#define SPEED_ROW_THREADS 64

/* The arguments of every kernel of a frame. */
typedef struct SpeedArgs {
    DEVICE_POINTER(const SpeedSetup) setup;
    DEVICE_POINTER(const uint8_t) src[4]; /* picture z's plane; speed_temporal: the previous luma */
    DEVICE_POINTER(const uint8_t) sub[4]; /* speed_temporal: the current luma, subtracted; else 0 */
    unsigned long long stride[4];         /* bytes between the rows of src[z] and sub[z] */
    DEVICE_POINTER(float) work;           /* picture z's work area: work + z * work_floats */
    unsigned long long work_floats;
    DEVICE_POINTER(float) results;        /* picture z's results: results + z * result_floats */
    unsigned long long result_floats;
    double log2_2pie;                     /* the host's log2(2 pi e), as the C reference adds it */
    int hbd;                              /* samples of 16 bits */
    float scaler;                         /* their divisor: 2^(bitdepth - 8) */
} SpeedArgs;

#endif /* QUALE_SRC_CUDA_SPEED_ARGS_H */
