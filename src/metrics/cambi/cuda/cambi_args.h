/* What cambi.cu's kernels read, and their threads per block: one
 * declaration for cambi_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_CAMBI_ARGS_H
#define QUALE_SRC_CUDA_CAMBI_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"
#include "metrics/cambi/cambi.h"

/* Threads per block of the element kernels (their launch bounds). */
#define CAMBI_THREADS 128
/* Rows per thread of cambi_flat_vsum. */
#define CAMBI_VSUM_ROWS 32

/* The c-value statistics of one scale on the device. */
typedef struct CambiScaleStats {
    double sum;        /* of the non-zero c-values, exact when pooled from it */
    unsigned count;    /* non-zero c-values */
    unsigned smallest; /* bits of the smallest non-zero one (+inf: none) */
    unsigned largest;  /* bits of the largest (0: none) */
    unsigned pad;
} CambiScaleStats;

/* Everything the element kernels read. */
typedef struct CambiPrepArgs {
    DEVICE_POINTER(const uint8_t) src;        /* the luma (load) */
    unsigned long long src_stride;            /* bytes between its rows */
    /* source column / row of each sample; null: the same */
    DEVICE_POINTER(const uint32_t) src_x;
    DEVICE_POINTER(const uint32_t) src_y;
    DEVICE_POINTER(uint16_t) image;           /* w x h: the preprocessed picture */
    DEVICE_POINTER(uint8_t) vsum;             /* w x h: flat samples in the 7 rows around each */
    DEVICE_POINTER(uint8_t) mask;             /* w x h: the spatial mask */
    DEVICE_POINTER(const uint16_t) scale_in;  /* what scale s is decimated from, in_w wide */
    DEVICE_POINTER(uint16_t) scale_out;       /* sw x sh: the filtered scale */
    DEVICE_POINTER(uint16_t) codes;           /* sw x sh: band rows, or CAMBI_INVALID */
    DEVICE_POINTER(CambiScaleStats) stats;    /* the picture's, CAMBI_SCALES (load clears them) */
    unsigned w, h;                            /* the scored size */
    unsigned bitdepth;
    unsigned anti_dither;
    unsigned mask_index;
    unsigned in_w;
    unsigned step;                            /* scale_in sample (x, y) of the scale: (x, y) * step */
    unsigned mask_shift;                      /* its mask sample: (x, y) << mask_shift */
    unsigned sw, sh;
    int band_base, band_size;
} CambiPrepArgs;

/* One scale of the c-value launch: blocks first_block .. first_block +
 * strips * chunks - 1, strip-major within a chunk. */
typedef struct CambiScaleJob {
    DEVICE_POINTER(const uint16_t) codes;  /* sw x sh */
    DEVICE_POINTER(float) c_values;        /* sw x sh */
    DEVICE_POINTER(CambiScaleStats) stats;
    unsigned sw, sh;
    unsigned strips, chunks;
    unsigned first_block;
    unsigned pad;
} CambiScaleJob;

typedef struct CambiCArgs {
    CambiScaleJob scale[CAMBI_SCALES];
    DEVICE_POINTER(const float) reciprocal; /* cambi_tables.h's table */
    CambiContrast contrast;
    unsigned window;                        /* odd, at most CAMBI_MAX_WINDOW */
    unsigned chunk_rows;
    unsigned bins_bytes;                    /* shared memory of the counters */
    unsigned pad;
} CambiCArgs;

#endif /* QUALE_SRC_CUDA_CAMBI_ARGS_H */
