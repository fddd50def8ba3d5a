/* What ciede.cu's kernels read, and their threads per block: one
 * declaration for ciede_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_CIEDE_ARGS_H
#define QUALE_SRC_CUDA_CIEDE_ARGS_H

#include "gpu/cuda/cuda_args.h"
#include "metrics/ciede/ciede.h"

/* Threads per block (the kernel's launch bounds). */
#define CIEDE_THREADS 128

typedef struct CiedeArgs {
    CUDA_ARGS_PLANES;
    DEVICE_POINTER(const uint32_t) chroma_col; /* per luma column: chroma column */
    DEVICE_POINTER(const uint8_t) chroma_row;  /* per luma column: rows ahead, or CIEDE_ROW_ZERO */
    DEVICE_POINTER(double) partials;           /* one per block */
    CiedeConvert convert;
    unsigned width, height;                    /* the luma grid */
    unsigned chroma_height;                    /* rows of a chroma plane */
    unsigned row_shift;                        /* chroma row of luma row y: y >> row_shift */
    unsigned rows;                             /* rows per block */
    unsigned pad;
    /* R over (y << bits | v), then B over (y << bits | u); NULL: computed */
    DEVICE_POINTER(const double) linear;
    unsigned linear_bits;
    unsigned pad2;
    /* L*a*b* (and a pad) of (y << 2 bits | u << bits | v); NULL: none */
    DEVICE_POINTER(const float) colours;
    unsigned colour_bits;
    unsigned pad3;
} CiedeArgs;

/* What the table kernels (ciede_table, ciede_colour_table) fill: once, before
 * the first frame. */
typedef struct CiedeTableArgs {
    CiedeConvert convert;
    DEVICE_POINTER(double) linear; /* ciede_table's */
    DEVICE_POINTER(float) colours; /* ciede_colour_table's */
    unsigned bits;
    unsigned pad;
} CiedeTableArgs;

#endif /* QUALE_SRC_CUDA_CIEDE_ARGS_H */
