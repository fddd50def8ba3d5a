/* What float_psnr.cu's kernels read, and their threads per block: one
 * declaration for float_psnr_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_PSNR_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_PSNR_ARGS_H

#include "gpu/cuda/cuda_args.h"

#define FPSNR_THREADS 256

typedef struct FloatPsnrArgs {
    DEVICE_POINTER(const uint8_t) ref;           /* luma planes */
    DEVICE_POINTER(const uint8_t) dist;
    unsigned long long stride;                   /* bytes between their rows */
    DEVICE_POINTER(unsigned long long) partials; /* one per block */
    unsigned w, h;
    unsigned rows;                               /* rows per block */
    unsigned float_squares;                      /* 0: exact e^2; 1: libvmaf's float squares */
    float scaler;                                /* 2^(bitdepth - 8) */
    unsigned pad;
} FloatPsnrArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_PSNR_ARGS_H */
