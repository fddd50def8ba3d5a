/*
 * The host side that the CUDA twins of float_psnr and float_moment share:
 * their kernels take the same argument block (luma_sums_args.h) and the
 * same grid (a block per LUMA_SUMS_ROWS rows, in x; the twin's kernels per
 * block, in y), so the launch is made here once; each twin names its
 * kernels and adds its partials in its own collect().
 */
#ifndef QUALE_SRC_METRICS_COMMON_CUDA_LUMA_SUMS_CUDA_H
#define QUALE_SRC_METRICS_COMMON_CUDA_LUMA_SUMS_CUDA_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "luma_sums_args.h"
#include "quale/quale.h"

/* Blocks in x for a picture of `height` rows. */
static inline unsigned luma_sums_cuda_blocks(unsigned height)
{
    return (height + LUMA_SUMS_ROWS - 1) / LUMA_SUMS_ROWS;
}

/* The frame's launch: grid (x, y, threads) into launch[], the argument
 * block (a LumaSumsArgs) into args; exact_sums and scaler are the
 * metric's (picture_float_sums_exact, picture_float_scaler). */
static inline void luma_sums_cuda_launch(bool exact_sums, float scaler,
                                         const QualeVideoFormat *format, uint64_t ref,
                                         uint64_t dist, uint64_t stride, uint64_t partials,
                                         unsigned blocks_y, unsigned launch[3], void *args)
{
    LumaSumsArgs a;
    memset(&a, 0, sizeof(a));
    a.pic[0] = ref;
    a.pic[1] = dist;
    a.stride = stride;
    a.partials = partials;
    a.w = format->width;
    a.h = format->height;
    a.rows = LUMA_SUMS_ROWS;
    a.float_squares = !exact_sums;
    a.scaler = scaler;
    memcpy(args, &a, sizeof(a));
    launch[0] = luma_sums_cuda_blocks(format->height);
    launch[1] = blocks_y;
    launch[2] = LUMA_SUMS_THREADS;
}

#endif /* QUALE_SRC_METRICS_COMMON_CUDA_LUMA_SUMS_CUDA_H */
