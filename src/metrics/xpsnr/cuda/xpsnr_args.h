/* The argument block of xpsnr.cu's kernels: one declaration for
 * xpsnr_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_XPSNR_ARGS_H
#define QUALE_SRC_CUDA_XPSNR_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

/* Threads per block (the kernels' launch bounds). */
#define XPSNR_THREADS 256

typedef struct XpsnrArgs {
    CUDA_ARGS_SIZED_PLANES;
    /* the previous reference lumas (the luma's stride); 0 before the first
     * frames (read as 0) */
    DEVICE_POINTER(const uint8_t) prev[2];
    unsigned block, blocks_x, luma_blocks, step, second_order;
    /* the SSEs, high-pass and temporal sums of the luma blocks, then the
     * SSEs of the chroma blocks of each plane (xpsnr.h, XpsnrSums) */
    DEVICE_POINTER(unsigned long long) sums;
} XpsnrArgs;

#endif /* QUALE_SRC_CUDA_XPSNR_ARGS_H */
