/* What float_motion.cu's kernel reads, and how it is launched: one
 * declaration for float_motion_cuda.c and the kernel (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_MOTION_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_MOTION_ARGS_H

#include "gpu/cuda/cuda_args.h"
#include "metrics/float_motion/float_motion.h"

/* Threads per block (the kernel's launch bounds). */
#define FMOT_THREADS 256
/* Rows of a block: their vertical passes are made together
 * (fmot_vertical_rows). */
#define FMOT_ROWS 4

typedef struct FmotArgs {
    DEVICE_POINTER(const uint8_t) pic[3]; /* lumas of frames i - 1, i, i - 2 */
    unsigned long long stride;            /* bytes between their rows */
    DEVICE_POINTER(float) rows;           /* per row: SAD(prev, cur), SAD(prev, prev2) */
    float filter[FLOAT_MOTION_MAX_TAPS];
    float inv_scaler;                     /* 2^-(bitdepth - 8): samples above 8 bits */
    int w, h;
    int taps;
    int pictures;                         /* 2, or 3 with prev2 */
    int rows_per_block;                   /* rows of a block */
    int segment;                          /* columns of a segment */
} FmotArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_MOTION_ARGS_H */
