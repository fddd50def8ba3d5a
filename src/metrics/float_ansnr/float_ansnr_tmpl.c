/*
 * float_ansnr's row kernels (float_ansnr.h's FloatAnsnrDsp), written once:
 * float_ansnr.c includes this file for the C reference and
 * src/metrics/x86/float_ansnr_<isa>.c include it to build the same loops
 * for AVX2 and AVX-512.  A filtered sample is one float expression of
 * constant shape (the taps unrolled), independent of its neighbours, so
 * the compiler vectorises the loop along x and every lane computes the C
 * operations in the C order (the project builds with -ffp-contract=off
 * and without fast-math: no fused multiply-add, no reassociation).  The
 * row sums are sequential: the x86 files bring their own
 * (ANSNR_OWN_ROW_SUMS), several rows a vector.
 *
 * The includer defines ANSNR_FN(name), the name of this file's functions.
 */
#include <stddef.h>

#include "float_ansnr.h"

static const float ANSNR_FN(ref_weights)[ANSNR_REF_TAPS * ANSNR_REF_TAPS] = {
    ANSNR_REF_WEIGHTS(ANSNR_REF_WEIGHT)
};

static const float ANSNR_FN(dis_weights)[ANSNR_DIS_TAPS * ANSNR_DIS_TAPS] = {
    ANSNR_DIS_WEIGHTS(ANSNR_DIS_WEIGHT)
};

/* libvmaf's ansnr_filter2d at one row: for every x,
 *   out[x] = sum over i of (sum over j of kernel[i][j] * rows[i][x + j - taps / 2])
 * both sums in float, from 0.0f, in index order.  taps is a constant
 * where this is inlined. */
static inline __attribute__((always_inline)) void
ANSNR_FN(filter_row)(const float *const *rows, const float *kernel, int taps, float *out, int w)
{
    const float *src[ANSNR_DIS_TAPS];
    for (int i = 0; i < taps; i++) src[i] = rows[i] - taps / 2;
    float *restrict o = out;
    for (int x = 0; x < w; x++) {
        float sum = 0.0f;
        for (int i = 0; i < taps; i++) {
            const float *restrict s = src[i] + x;
            float inner = 0.0f;
            for (int j = 0; j < taps; j++) inner += kernel[i * taps + j] * s[j];
            sum += inner;
        }
        o[x] = sum;
    }
}

void ANSNR_FN(filter_ref_row)(const float *const *rows, float *out, int w)
{
    ANSNR_FN(filter_row)(rows, ANSNR_FN(ref_weights), ANSNR_REF_TAPS, out, w);
}

void ANSNR_FN(filter_dis_row)(const float *const *rows, float *out, int w)
{
    ANSNR_FN(filter_row)(rows, ANSNR_FN(dis_weights), ANSNR_DIS_TAPS, out, w);
}

#ifndef ANSNR_OWN_ROW_SUMS
void ANSNR_FN(row_sums)(const float *ref, const float *dis, size_t stride, int rows, int w,
                        float *sig, float *noise)
{
    for (int i = 0; i < rows; i++) {
        const float *r = ref + (size_t)i * stride, *d = dis + (size_t)i * stride;
        float sig_row = 0.0f, noise_row = 0.0f;
        for (int x = 0; x < w; x++) {
            sig_row += r[x] * r[x];
            noise_row += (r[x] - d[x]) * (r[x] - d[x]);
        }
        sig[i] = sig_row;
        noise[i] = noise_row;
    }
}
#endif
