/* What float_vif.cu's kernels read, and how they are launched: one
 * declaration for float_vif_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_FLOAT_VIF_ARGS_H
#define QUALE_SRC_CUDA_FLOAT_VIF_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

/* Threads per block of every kernel (their launch bounds). */
#define FVIF_THREADS 256
/* Rows of a rows block: a filter of known length makes their vertical
 * passes together (fvif_vertical5_rows). */
#define FVIF_ROWS 4
/* The longest filter the kernels take (65 taps at vif_kernelscale 360/97). */
#define FVIF_MAX_TAPS 68

/* Everything the kernels of one step read.
 *   rows:        ref, dis, stride, w, h are the scale's pictures;
 *   vdec:        ref, dis, stride, w, h those of the scale decimated from,
 *                out_* its vertical pass at the even rows (w x h / 2);
 *   hdec:        ref, dis the vertical pass (w x h / 2, dense), out_* the
 *                new scale (w / 2 x h / 2, dense).
 * At scale 0 (prescaled set) x and y of the scale read the frame's sample
 * (int)(x * ratio_x), (int)(y * ratio_y). */
typedef struct FvifArgs {
    DEVICE_POINTER(const uint8_t) ref; /* the pictures read */
    DEVICE_POINTER(const uint8_t) dis;
    unsigned long long stride;         /* bytes between their rows */
    DEVICE_POINTER(float) out_ref;     /* vdec, hdec: what they make */
    DEVICE_POINTER(float) out_dis;
    DEVICE_POINTER(float) rows;        /* rows: per row of the scale, num and den */
    double sigma_nsq;                  /* vif_sigma_nsq */
    float filter[FVIF_MAX_TAPS];       /* the step's filter (taps of them) */
    float gain_limit;                  /* (float)vif_enhn_gain_limit */
    float sigma_max_inv;               /* vif_sigma_nsq^2 / 255^2 */
    float ratio_x, ratio_y;            /* vif_prescale's nearest sample */
    float inv_scaler;                  /* 2^-(bitdepth - 8): samples above 8 bits */
    int w, h;
    int taps;
    int prescaled;
    int rows_per_block;                /* rows: rows of a block */
    int segment;                       /* rows: columns of a segment */
} FvifArgs;

#endif /* QUALE_SRC_CUDA_FLOAT_VIF_ARGS_H */
