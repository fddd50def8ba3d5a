/*
 * PSNR-HVS's block-row kernel on SIMD vectors of HVS_LANES block
 * positions, for the x86 instruction sets (psnr_hvs_avx2.c,
 * psnr_hvs_avx512.c include this file): psnr_hvs_tmpl.h instantiated on
 * GCC vectors whose lanes are neighbouring block positions, each lane the
 * C reference's operations on its own block, so every term is the C
 * kernel's float (tests/checkasm/psnr_hvs.c checks).
 *
 * The includer defines HVS_LANES (8 or 16) and HVS_ISA(name).
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "metrics/psnr_hvs.h"

typedef int32_t VI __attribute__((vector_size(4 * HVS_LANES)));
typedef float VF __attribute__((vector_size(4 * HVS_LANES)));
typedef uint32_t VU __attribute__((vector_size(4 * HVS_LANES)));

static inline VF HVS_ISA(hvs_sqrtf)(VF x)
{
#if HVS_LANES == 16
    return (VF)_mm512_sqrt_ps((__m512)x);
#else
    return (VF)_mm256_sqrt_ps((__m256)x);
#endif
}

/* The lanes' samples at index[lane] of a strip row. */
static inline VI HVS_ISA(hvs_gather)(const int32_t *row, VI index)
{
#if HVS_LANES == 16
    return (VI)_mm512_i32gather_epi32((__m512i)index, row, 4);
#else
    return (VI)_mm256_i32gather_epi32(row, (__m256i)index, 4);
#endif
}

#define HT(name) HVS_ISA(hvs_##name)
#define HT_FN static inline __attribute__((always_inline))
#define HT_MF(c) ((VU)(c))
#define HT_FBITS(x) ((VU)(x))
#define HT_FLOAT(u) ((VF)(u))
#define HT_I2F(x) __builtin_convertvector((x), VF)
#define HT_SQRTF(x) HVS_ISA(hvs_sqrtf)(x)
#include "metrics/psnr_hvs_tmpl.h"

void HVS_ISA(psnr_hvs_block_terms)(const int32_t *ref, const int32_t *dist, ptrdiff_t stride,
                              unsigned count, const float csf[64], const float mask[64],
                              float *terms, size_t terms_stride)
{
    for (unsigned i0 = 0; i0 < count; i0 += HVS_LANES) {
        /* the lanes' block columns; lanes past count repeat the last block
         * (their terms land in the padding of terms_stride) */
        VI column;
        for (int lane = 0; lane < HVS_LANES; lane++) {
            const unsigned i = i0 + (unsigned)lane < count ? i0 + (unsigned)lane : count - 1;
            column[lane] = (int32_t)(HVS_STEP * i);
        }
        VI blk[2][64];
        for (int r = 0; r < HVS_BLOCK; r++) {
            for (int j = 0; j < HVS_BLOCK; j++) {
                blk[0][8 * r + j] = HVS_ISA(hvs_gather)(ref + r * stride + j, column);
                blk[1][8 * r + j] = HVS_ISA(hvs_gather)(dist + r * stride + j, column);
            }
        }
        VF t[64];
        HT(block_terms)(blk, csf, mask, t);
        for (int k = 0; k < 64; k++) memcpy(terms + k * terms_stride + i0, &t[k], sizeof(t[k]));
    }
}
