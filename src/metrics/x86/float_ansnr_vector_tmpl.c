/*
 * float_ansnr's kernels for the x86 instruction sets (float_ansnr_avx2.c,
 * float_ansnr_avx512.c include this file): the filters of
 * float_ansnr_tmpl.c as the compiler vectorises them, and the row sums of
 * ANSNR_LANES rows at once.
 *
 * A row's sums are sequential float additions, x = 0 to w - 1, as in the C
 * reference and libvmaf: their order cannot change without changing bits,
 * and one row's additions wait on each other.  Rows are independent, so
 * here each lane adds one row: at column x a vector gathers the rows'
 * filtered samples, squares them (r * r and (r - d) * (r - d), the C
 * kernel's operations) and adds them to the lanes' sums, so every lane
 * makes its row's C sums to the bit, the rows side by side.
 *
 * The includer defines VECTOR_BYTES (vector.h: 8 or 16 floats a vector)
 * and ANSNR_ISA(name).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vector.h"

#define ANSNR_LANES (VECTOR_BYTES / 4)

#define ANSNR_FN(name) ANSNR_ISA(float_ansnr_##name)
#define ANSNR_OWN_ROW_SUMS
#include "metrics/float_ansnr_tmpl.c"

void ANSNR_ISA(float_ansnr_row_sums)(const float *ref, const float *dis, size_t stride, int rows,
                                     int w, float *sig, float *noise)
{
    for (int i0 = 0; i0 < rows; i0 += ANSNR_LANES) {
        const int n = rows - i0 < ANSNR_LANES ? rows - i0 : ANSNR_LANES;
        /* lane k reads row i0 + k (lanes past the last row read it again:
         * their sums are dropped) */
        vec_i32 index;
        for (int k = 0; k < ANSNR_LANES; k++)
            index[k] = (int)((size_t)(k < n ? k : n - 1) * stride);
        const float *r = ref + (size_t)i0 * stride, *d = dis + (size_t)i0 * stride;
        vec_f32 sig_rows = { 0 }, noise_rows = { 0 };
        for (int x = 0; x < w; x++) {
            const vec_f32 rv = (vec_f32)vec_gather_i32(r + x, index, 4);
            const vec_f32 dv = (vec_f32)vec_gather_i32(d + x, index, 4);
            sig_rows += rv * rv;
            noise_rows += (rv - dv) * (rv - dv);
        }
        for (int k = 0; k < n; k++) {
            sig[i0 + k] = sig_rows[k];
            noise[i0 + k] = noise_rows[k];
        }
    }
}
