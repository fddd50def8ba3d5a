/* What float_ms_ssim.cu's decimation reads: one declaration for
 * float_ms_ssim_cuda.c and the kernel (cuda_args.h); its SSIM launch is
 * float_ssim_args.h's. */
#ifndef QUALE_SRC_CUDA_FLOAT_MS_SSIM_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_MS_SSIM_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"
#include "metrics/float_ssim/cuda/float_ssim_args.h"

typedef struct MsDecimateArgs {
    DEVICE_POINTER(const uint8_t) ref; /* scale i: the frame's luma, or float planes */
    DEVICE_POINTER(const uint8_t) dist;
    unsigned long long stride;         /* bytes between their rows */
    DEVICE_POINTER(float) dst_ref;     /* scale i + 1: dst_w x dst_h, dense */
    DEVICE_POINTER(float) dst_dist;
    unsigned w, h;                     /* scale i */
    unsigned dst_w, dst_h;
    float inv_scaler;                  /* luma above 8 bits: 2^-(bitdepth - 8) */
    unsigned pad;
} MsDecimateArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_MS_SSIM_ARGS_H */
