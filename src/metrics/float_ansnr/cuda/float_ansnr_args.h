/* What float_ansnr.cu's kernels read, and their threads per block: one
 * declaration for float_ansnr_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_ANSNR_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_ANSNR_ARGS_H

#include "gpu/cuda/cuda_args.h"

/* Threads per block: at least 64, the sig sum in thread 0, the noise sum
 * in thread 32. */
#define FANSNR_THREADS 128

typedef struct FloatAnsnrArgs {
    DEVICE_POINTER(const uint8_t) ref; /* luma planes */
    DEVICE_POINTER(const uint8_t) dist;
    unsigned long long stride;         /* bytes between their rows */
    DEVICE_POINTER(float) row_sums;    /* [0, h): each row's sig; [h, 2h): its noise */
    int w, h;
    float inv_scaler;                  /* 2^-(bitdepth - 8) */
    unsigned pad;
} FloatAnsnrArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_ANSNR_ARGS_H */
