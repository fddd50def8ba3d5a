/* The argument block of integer_motion.cu's kernels: one declaration for
 * integer_motion_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_INTEGER_MOTION_ARGS_H
#define QUALE_SRC_CUDA_INTEGER_MOTION_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

/* Columns a block filters, and threads per block (the launch bounds). */
#define MOTION_SEGMENT 256
#define MOTION_THREADS 128

typedef struct MotionArgs {
    DEVICE_POINTER(const uint8_t) prev; /* the earlier reference luma */
    DEVICE_POINTER(const uint8_t) cur;
    unsigned long long stride;
    int w, h, bitdepth;
    DEVICE_POINTER(uint32_t) row_sad; /* a 32-bit sum per row, cleared */
} MotionArgs;

#endif /* QUALE_SRC_CUDA_INTEGER_MOTION_ARGS_H */
