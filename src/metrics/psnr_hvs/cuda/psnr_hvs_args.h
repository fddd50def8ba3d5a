/* What psnr_hvs.cu's kernels read, and their threads per block: one
 * declaration for psnr_hvs_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_PSNR_HVS_ARGS_H
#define QUALE_SRC_CUDA_PSNR_HVS_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

/* Threads per block of each kernel (their launch bounds). */
#define HVS_THREADS 128
#define HVS_WALK_THREADS 1024

/* Candidate binades per block position. */
#define HVS_CANDIDATES 3

/* A block position's pairs for binades e .. e + HVS_CANDIDATES - 1: what a
 * run of terms adds to S, for S even ([0]) and odd ([1]). */
typedef struct HvsCand {
    int32_t e;
    uint32_t d[HVS_CANDIDATES][2];
} HvsCand;

typedef struct HvsArgs {
    DEVICE_POINTER(const uint8_t) ref[3];
    DEVICE_POINTER(const uint8_t) dist[3];
    unsigned long long stride[3];   /* bytes between rows, per plane */
    DEVICE_POINTER(const float) tables; /* csf[3][64], then mask[3][64] */
    DEVICE_POINTER(float) terms;    /* total x 64 */
    DEVICE_POINTER(double) prefix;  /* total: block sums, then their prefix */
    DEVICE_POINTER(HvsCand) cand;   /* total */
    DEVICE_POINTER(float) sums;     /* 3: each plane's float sum */
    unsigned cols[3];               /* block positions per row of plane p */
    unsigned blocks[3];             /* block positions of plane p */
    unsigned base[3];               /* index of plane p's first block position */
    unsigned total;
} HvsArgs;

#endif /* QUALE_SRC_CUDA_PSNR_HVS_ARGS_H */
