/* The argument block of psnr.cu's kernels: one declaration for
 * psnr_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_PSNR_ARGS_H
#define QUALE_SRC_CUDA_PSNR_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

/* Threads per block (the kernels' launch bounds). */
#define PSNR_THREADS 256

typedef struct PsnrArgs {
    CUDA_ARGS_SIZED_PLANES;
    unsigned rows_per_block;
    /* planes x blocks: block (x, p) writes partials[p * gridDim.x + x] */
    DEVICE_POINTER(unsigned long long) partials;
} PsnrArgs;

#endif /* QUALE_SRC_CUDA_PSNR_ARGS_H */
