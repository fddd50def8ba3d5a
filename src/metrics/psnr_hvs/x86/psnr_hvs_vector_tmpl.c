/*
 * PSNR-HVS's block-row kernel on SIMD vectors of HVS_LANES block
 * positions, for the x86 instruction sets (psnr_hvs_avx2.c,
 * psnr_hvs_avx512.c include this file): psnr_hvs_tmpl.h instantiated on
 * GCC vectors whose lanes are neighbouring block positions, each lane the
 * C reference's operations on its own block, so every term is the C
 * kernel's float (tests/checkasm/psnr_hvs.c checks).
 *
 * The includer defines VECTOR_BYTES (vector.h: 8 or 16 block positions a
 * vector) and HVS_ISA(name).
 */
#include <stdint.h>
#include <string.h>

#include "metrics/psnr_hvs/psnr_hvs.h"
#include "metrics/common/x86/vector.h"

#define HVS_LANES (VECTOR_BYTES / 4)

typedef vec_i32 VI;
typedef vec_f32 VF;
typedef vec_u32 VU;

#define HT(name) HVS_ISA(hvs_##name)
#define HT_FN static inline __attribute__((always_inline))
#define HT_MF(c) ((VU)(c))
#define HT_FBITS(x) ((VU)(x))
#define HT_FLOAT(u) ((VF)(u))
#define HT_I2F(x) __builtin_convertvector((x), VF)
#define HT_SQRTF(x) vec_sqrt_f32(x)
#include "metrics/psnr_hvs/psnr_hvs_tmpl.h"

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
                blk[0][8 * r + j] = vec_gather_i32(ref + r * stride + j, column, 4);
                blk[1][8 * r + j] = vec_gather_i32(dist + r * stride + j, column, 4);
            }
        }
        VF t[64];
        HT(block_terms)(blk, csf, mask, t);
        for (int k = 0; k < 64; k++) memcpy(terms + k * terms_stride + i0, &t[k], sizeof(t[k]));
    }
}
