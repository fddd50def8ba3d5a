/* What float_ssim.cu's kernels read (float_ms_ssim.cu's SSIM launch too),
 * their tiles and threads per block: one declaration for
 * float_ssim_cuda.c, float_ms_ssim_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_SSIM_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_SSIM_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

/* The tiles of iqa_ssim_tiles: SSIM_THREADS threads per block (its launch
 * bound), SSIM_TILE_W x SSIM_TILE_H positions per tile. */
#define SSIM_TILE_W 32
#define SSIM_TILE_H 32
#define SSIM_THREADS 256
#define SSIM_MAX_SCALES 5
#define SSIM_SUMS 4 /* l c s, l, c, s */

/* Threads per block of the decimations. */
#define FSSIM_DECIMATE_THREADS 128

/* What a picture's samples are. */
enum SsimSourceKind {
    SSIM_SOURCE_FLOAT = 0, /* a float plane */
    SSIM_SOURCE_8 = 1,     /* 8-bit luma */
    SSIM_SOURCE_16 = 2,    /* luma above 8 bits, 16-bit samples */
};

/* float_ssim's downscale. */
typedef struct FssimDecimateArgs {
    DEVICE_POINTER(const uint8_t) ref; /* the frame's luma */
    DEVICE_POINTER(const uint8_t) dist;
    unsigned long long stride;         /* bytes between its rows */
    DEVICE_POINTER(float) dst_ref;     /* dst_w x dst_h, dense */
    DEVICE_POINTER(float) dst_dist;
    unsigned w, h;                     /* the luma's size */
    unsigned dst_w, dst_h;
    unsigned factor;                   /* the scale, 2 .. IQA_MAX_TAPS */
    float weight;                      /* every tap of the box: 1 / factor^2 */
    float inv_scaler;                  /* 2^-(bitdepth - 8) */
    unsigned pad;
} FssimDecimateArgs;

/* One picture pair of an SSIM launch. */
typedef struct SsimScale {
    DEVICE_POINTER(const uint8_t) ref;
    DEVICE_POINTER(const uint8_t) dist;
    unsigned long long stride;  /* bytes between rows */
    unsigned w, h;              /* the pictures; positions (w - 10) x (h - 10) */
    unsigned kind;              /* SsimSourceKind */
    float inv_scaler;           /* SSIM_SOURCE_16: 2^-(bitdepth - 8) */
    unsigned tiles_x;           /* tiles across its positions */
    unsigned first_tile;        /* the block of its first tile */
} SsimScale;

typedef struct SsimArgs {
    SsimScale scale[SSIM_MAX_SCALES];
    DEVICE_POINTER(double) partials; /* SSIM_SUMS per block */
    unsigned scales;                 /* pairs used, 1 .. SSIM_MAX_SCALES */
    unsigned pad;
} SsimArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_SSIM_ARGS_H */
