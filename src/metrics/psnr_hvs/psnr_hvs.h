/*
 * PSNR-HVS: the steps the C reference (psnr_hvs.c) and its GPU twins
 * share.
 *
 * The first part is arithmetic that device compilers read too (nvcc
 * includes this file from src/cuda/psnr_hvs.cu): Xiph's integer DCT, the
 * block statistics and the masking, and the 64 error terms of one block
 * position, in libvmaf's float operations and order.  The C reference adds
 * the terms of a plane into one float in block-raster, then
 * coefficient-raster order; a twin must reproduce that sum bit for bit
 * (see psnr_hvs.cu).
 *
 * The second part (hidden from nvcc) is the host's: the state, the format
 * check and its message, and the step from the planes' float sums to the
 * keys.
 */
#ifndef QUALE_SRC_METRICS_PSNR_HVS_H
#define QUALE_SRC_METRICS_PSNR_HVS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#include "metrics/common/bitcast.h"

/* On the host, plain static functions (left to the compiler to inline, as
 * the C reference always had them: `inline` makes gcc inline differently,
 * and the reference slower) and the ones that were always inlined; unused
 * where a file includes this header for its other parts. */
#if defined(__CUDACC__)
#define HVS_INLINE static inline __host__ __device__
#define HVS_ALWAYS_INLINE static __forceinline__ __host__ __device__
#elif defined(__GNUC__)
#define HVS_INLINE static __attribute__((unused))
#define HVS_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define HVS_INLINE static
#define HVS_ALWAYS_INLINE static inline
#endif
/* C's restrict, spelled so that C++ and nvcc read it too. */
#define HVS_RESTRICT __restrict__

#define HVS_BLOCK 8
#define HVS_STEP 7
#define HVS_MAX_BITDEPTH 12u
/* Xiph's constant: csf * 0.38857 squared gives the masking table of the
 * PSNR-HVS-M paper. */
#define HVS_MASK_SCALE 0.3885746225901003

/* Block positions along a side of n samples: 0, 7, 14, ... while the
 * block fits. */
HVS_INLINE unsigned hvs_positions(unsigned n)
{
    return n < HVS_BLOCK ? 0u : (n - HVS_BLOCK) / HVS_STEP + 1;
}

/* ---- one block position ------------------------------------------------ */

/* The reference and distorted blocks at one position, side by side: libvmaf
 * computes their statistics in the same loops. */
typedef int32_t HvsBlockPair[2][64];

/* The scalar instantiation of psnr_hvs_tmpl.h: hvs_fdct8x8(),
 * hvs_masking(), hvs_block_terms(), ... on int32_t and float. */
#define HT(name) hvs_##name
#define HT_FN HVS_ALWAYS_INLINE
#define VI int32_t
#define VF float
#define VU uint32_t
#define HT_MF(c) ((uint32_t)0 - (uint32_t)(c))
#define HT_FBITS(x) bitcast_float_bits(x)
#define HT_FLOAT(u) bitcast_bits_float(u)
#define HT_I2F(x) ((float)(x))
#define HT_SQRTF(x) sqrtf(x)
#include "psnr_hvs_tmpl.h"
#undef HT
#undef HT_FN
#undef VI
#undef VF
#undef VU
#undef HT_MF
#undef HT_FBITS
#undef HT_FLOAT
#undef HT_I2F
#undef HT_SQRTF

/* The 8x8 block at p (samples of 8 bits, or of 16 when hbd). */
HVS_ALWAYS_INLINE void hvs_load_block(int32_t blk[64], const uint8_t *p, ptrdiff_t stride,
                                      bool hbd)
{
    for (int i = 0; i < 8; i++, p += stride) {
        if (hbd) {
            const uint16_t *row = (const uint16_t *)p;
            /* Samples above HVS_MAX_BITDEPTH bits, which only an API caller
             * can send (the readers clamp), would overflow the int32 DCT;
             * in-range samples are unchanged. */
            const int32_t top = (int32_t)((1u << HVS_MAX_BITDEPTH) - 1);
            for (int j = 0; j < 8; j++) blk[8 * i + j] = row[j] > top ? top : row[j];
        } else {
            for (int j = 0; j < 8; j++) blk[8 * i + j] = p[j];
        }
    }
}

#if !defined(__CUDACC__)
/* ---- the host's part ---------------------------------------------------- */

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { HVS_KEY_Y, HVS_KEY_CB, HVS_KEY_CR, HVS_KEY_ALL, HVS_KEY_COUNT };

/*
 * The kernel the SIMD levels replace: the terms of count neighbouring
 * block positions of a block row, block i at column 7 i of 8 rows of
 * int32 samples (row r at ref + r * stride), into terms[k * terms_stride
 * + i] for k < 64 (hvs_block_terms()).  terms_stride is a multiple of
 * HVS_TERMS_ALIGN, and count <= terms_stride.
 */
#define HVS_TERMS_ALIGN 16
typedef void (*HvsBlockTermsFn)(const int32_t *ref, const int32_t *dist, ptrdiff_t stride,
                                unsigned count, const float csf[64], const float mask[64],
                                float *terms, size_t terms_stride);

typedef struct PsnrHvsDsp {
    HvsBlockTermsFn block_terms;
} PsnrHvsDsp;

/* The C kernel, then that of the widest instruction set cpu_flags
 * (QUALE_CPU_*) allows. */
void psnr_hvs_dsp_init(PsnrHvsDsp *dsp, unsigned cpu_flags);

void psnr_hvs_block_terms_avx2(const int32_t *ref, const int32_t *dist, ptrdiff_t stride,
                          unsigned count, const float csf[64], const float mask[64],
                          float *terms, size_t terms_stride);
void psnr_hvs_block_terms_avx512(const int32_t *ref, const int32_t *dist, ptrdiff_t stride,
                            unsigned count, const float csf[64], const float mask[64],
                            float *terms, size_t terms_stride);

typedef struct PsnrHvsState {
    PsnrHvsDsp dsp;
    unsigned bitdepth;
    unsigned width;     /* luma, the widest plane */
    unsigned key[HVS_KEY_COUNT];
    /* Contrast sensitivity per plane (Xiph's tables, as float), and
     * (csf * HVS_MASK_SCALE)^2, formed in double, kept in float. */
    float csf[3][64];
    float mask[3][64];
} PsnrHvsState;

/* The block positions of a frame, as the GPU twins number them: each
 * plane's size (the picture's), block positions per row and in all, and
 * the index of each plane's first one, the planes numbered in turn. */
typedef struct PsnrHvsLayout {
    unsigned width[3], height[3];
    unsigned cols[3], blocks[3], base[3];
    unsigned total;
} PsnrHvsLayout;

void psnr_hvs_layout(const QualeVideoFormat *format, PsnrHvsLayout *layout);
/* Plane plane's (0 Y, 1 Cb, 2 Cr) contrast sensitivity and masking tables,
 * as the state holds them. */
void psnr_hvs_tables(unsigned plane, float csf[64], float mask[64]);

/* 0 if the metric scores this format; otherwise -EINVAL and the reason in
 * error (the message the CPU logs). */
int psnr_hvs_check_format(const QualeVideoFormat *format, char *error, size_t error_size);

/* Each plane's float sum of terms, as the C reference adds them, and the
 * number of terms (64 per block position); scratch from
 * metric_psnr_hvs.scratch_alloc. */
void psnr_hvs_frame_sums(const PsnrHvsState *s, void *scratch, const QualePicture *ref,
                         const QualePicture *dist, float sum[3], uint64_t count[3]);

/* The values of the keys, in key order (HVS_KEY_Y .. HVS_KEY_ALL), from
 * the planes' sums and counts. */
void psnr_hvs_values(const PsnrHvsState *s, const float sum[3], const uint64_t count[3],
                     double value[HVS_KEY_COUNT]);

/* Writes the frame's keys from the planes' sums and counts. */
int psnr_hvs_write(const PsnrHvsState *s, FeatureSink *sink, unsigned index, const float sum[3],
                   const uint64_t count[3]);

extern const Metric metric_psnr_hvs;

#ifdef __cplusplus
}
#endif
#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_PSNR_HVS_H */
