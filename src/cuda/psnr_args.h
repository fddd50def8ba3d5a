/* The planes psnr.cu's kernels read: one declaration for psnr_cuda.c and
 * the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_PSNR_ARGS_H
#define QUALE_SRC_CUDA_PSNR_ARGS_H

#include <stdint.h>

#include "cuda_args.h"

typedef struct PsnrPlanes {
    DEVICE_POINTER(const uint8_t) ref[3];
    DEVICE_POINTER(const uint8_t) dist[3];
    unsigned long long stride[3];
    unsigned width[3], height[3];
} PsnrPlanes;

#endif /* QUALE_SRC_CUDA_PSNR_ARGS_H */
