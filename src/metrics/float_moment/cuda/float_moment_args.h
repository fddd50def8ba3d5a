/* What float_moment.cu's kernels read, and their threads per block: one
 * declaration for float_moment_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_MOMENT_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_MOMENT_ARGS_H

#include "gpu/cuda/cuda_args.h"

#define FMOMENT_THREADS 256

typedef struct FloatMomentArgs {
    DEVICE_POINTER(const uint8_t) pic[2];       /* reference and distorted luma */
    unsigned long long stride;                  /* bytes between their rows */
    DEVICE_POINTER(unsigned long long) partials; /* [picture][first, second][block] */
    unsigned w, h;
    unsigned rows;                              /* rows per block */
    unsigned float_squares;                     /* 0: exact d^2; 1: libvmaf's float squares */
    float scaler;                               /* 2^(bitdepth - 8) */
    unsigned pad;
} FloatMomentArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_MOMENT_ARGS_H */
