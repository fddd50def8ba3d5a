/* What integer_adm.cu's kernels read: one declaration for
 * integer_adm_cuda.c and the kernels (cuda_args.h). */
#ifndef QUALE_SRC_CUDA_INTEGER_ADM_ARGS_H
#define QUALE_SRC_CUDA_INTEGER_ADM_ARGS_H

#include <stdint.h>

#include "gpu/cuda/cuda_args.h"

typedef struct AdmRegion {
    int left, top, right, bottom;
} AdmRegion;

/* Everything the kernels of one level read. */
typedef struct AdmArgs {
    DEVICE_POINTER(const uint8_t) pic[2];    /* luma of the reference and the distorted picture */
    unsigned long long pic_stride;           /* bytes */
    DEVICE_POINTER(const int32_t) prev[2];   /* band a of the previous level (levels 1..3) */
    DEVICE_POINTER(int32_t) band[2][4];      /* this level's a, h, v, d of both pictures */
    DEVICE_POINTER(int32_t) mask[4];         /* around, centre of the DLM; around, centre of AIM */
    DEVICE_POINTER(unsigned long long) acc;  /* this level's 9 sums */
    long long stride;                        /* of every band plane, in samples */
    double gain;                             /* adm_enhn_gain_limit */
    unsigned long long den_sq_add, den_cub_add, den_row_add;
    long long m_sq_add[3], m_cub_add[3], m_row_add;
    int pic_w, pic_h, bitdepth;
    int in_w, in_h;                          /* the DWT's input (band a of the previous level) */
    int w, h;                                /* this level's bands */
    int scale;
    int details;                             /* level 0: also make h, v, d */
    int aim;                                 /* compute the AIM planes and sums */
    AdmRegion scored, taps;
    float cos_1deg_sq;
    unsigned csf_q0[3], csf_q32[3];
    unsigned den_sq, den_cub, den_row_shift;
    unsigned m_sq[3], m_cub[3], m_sub[3], m_row_shift;
} AdmArgs;

#endif /* QUALE_SRC_CUDA_INTEGER_ADM_ARGS_H */
