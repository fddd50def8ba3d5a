/* What the CUDA kernels of float_psnr and float_moment read: both sum
 * functions of the two luma planes' samples as exact integers, a block per
 * LUMA_SUMS_ROWS rows, into per-block partials, from the same argument
 * block (cuda_args.h); luma_sums_cuda.h fills it on the host, as
 * picture_float_vulkan.h does the Vulkan twins' push constants. */
#ifndef QUALE_SRC_METRICS_COMMON_CUDA_LUMA_SUMS_ARGS_H
#define QUALE_SRC_METRICS_COMMON_CUDA_LUMA_SUMS_ARGS_H

#include "gpu/cuda/cuda_args.h"

#define LUMA_SUMS_THREADS 256 /* the kernels' launch bounds */
#define LUMA_SUMS_ROWS 4      /* rows per block */

typedef struct LumaSumsArgs {
    DEVICE_POINTER(const uint8_t) pic[2];         /* reference and distorted luma */
    unsigned long long stride;                    /* bytes between their rows */
    DEVICE_POINTER(unsigned long long) partials;  /* the metric's layout, per block */
    unsigned w, h;
    unsigned rows;                                /* rows per block */
    unsigned float_squares;                       /* 0: exact squares; 1: libvmaf's float ones */
    float scaler;                                 /* 2^(bitdepth - 8) */
    unsigned pad;
} LumaSumsArgs;

#endif /* QUALE_SRC_METRICS_COMMON_CUDA_LUMA_SUMS_ARGS_H */
