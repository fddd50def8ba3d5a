/* What float_adm.cu's kernels read, and their threads per block: one
 * declaration for float_adm_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_ADM_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_ADM_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

/* Threads per block of every kernel (their launch bounds). */
#define FADM_THREADS 256

/* Everything the kernels of one level read.  Bands and planes are dense,
 * w2 x h2. */
typedef struct FadmArgs {
    DEVICE_POINTER(const uint8_t) src[2];      /* the level's input: lumas (level 0) or bands a */
    unsigned long long src_stride;             /* bytes between their rows */
    DEVICE_POINTER(float) band[2][4];          /* this level's a, h, v, d of both pictures */
    DEVICE_POINTER(float) csf[6];              /* csf * restored h, v, d; csf * additive h, v, d */
    DEVICE_POINTER(float) rows;                /* per band row: FADM_SUMS sums */
    DEVICE_POINTER(const uint32_t) rcp_table;  /* NULL: divide exactly */
    double gain_limit;                         /* adm_enhn_gain_limit */
    float csf_w[3];                            /* the level's CSF weights h, v, d */
    float cos_1deg_sq;
    float inv_scaler;                          /* 2^-(bitdepth - 8): samples above 8 bits */
    unsigned rcp_shift;
    int w, h;                                  /* the level's input */
    int w2, h2;                                /* its bands */
    int left, top, right, bottom;              /* the scored region */
    int col_lo, col_hi, row_lo, row_hi;        /* the decoupled region */
    int bypass_cm;
    int details;                               /* 0: only band a (a skipped scale 0) */
    int rows_per_block;                        /* rows: rows of a block */
    int segment;                               /* rows: columns of a segment */
} FadmArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_ADM_ARGS_H */
