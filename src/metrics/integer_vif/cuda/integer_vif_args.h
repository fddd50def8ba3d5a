/* What integer_vif.cu's kernels read, and their threads per block: one
 * declaration for integer_vif_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_INTEGER_VIF_ARGS_H
#define QUALE_SRC_CUDA_INTEGER_VIF_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

/* Threads per block of every kernel (their launch bounds: hstats is
 * compiled for at most this many). */
#define VIF_THREADS 128

/* Everything the kernels of one step read.
 *   vstats, hstats: ref, dis, src_stride, w, h are the scale's;
 *   vlow, hlow:     ref, dis, src_stride, w, h are those of the scale
 *                   decimated from, dst_* (w / 2 x h / 2) the new scale's.
 * Every plane but the pictures of scale 0 is dense (its pitch its width). */
typedef struct VifArgs {
    DEVICE_POINTER(const uint8_t) ref;        /* the pictures read */
    DEVICE_POINTER(const uint8_t) dis;
    unsigned long long src_stride;            /* bytes between their rows */
    DEVICE_POINTER(uint16_t) mu1;             /* vertical pass of the statistics, w x h */
    DEVICE_POINTER(uint16_t) mu2;
    DEVICE_POINTER(uint32_t) xx;
    DEVICE_POINTER(uint32_t) yy;
    DEVICE_POINTER(uint32_t) xy;
    DEVICE_POINTER(uint16_t) low_ref;         /* vertical low-pass, w x h / 2 */
    DEVICE_POINTER(uint16_t) low_dis;
    DEVICE_POINTER(uint16_t) dst_ref;         /* decimated pictures, w / 2 x h / 2 */
    DEVICE_POINTER(uint16_t) dst_dis;
    /* the scale's num_log, den_log, num_non_log, den_non_log */
    DEVICE_POINTER(unsigned long long) sums;
    DEVICE_POINTER(const uint16_t) log2_table; /* VIF_LOG2_TABLE_SIZE entries */
    double gain_limit;                        /* vif_enhn_gain_limit */
    unsigned long long sq_round;              /* vertical statistics: squares' rounding */
    unsigned w, h;
    unsigned mu_round, mu_shift;              /* vertical statistics: means' rounding */
    unsigned sq_shift;
    unsigned low_shift;                       /* vertical low-pass: (sum + 2^(shift-1)) >> shift */
    unsigned rows;                            /* rows per block of hstats */
    unsigned pad;
} VifArgs;

#endif /* QUALE_SRC_CUDA_INTEGER_VIF_ARGS_H */
