/*
 * float_ansnr's kernels for the x86 instruction sets (float_ansnr_avx2.c,
 * float_ansnr_avx512.c include this file): the filters of
 * float_ansnr_tmpl.c as the compiler vectorises them, and the row sums of
 * ANSNR_LANES rows at once.
 *
 * A row's sums are sequential float additions, x = 0 to w - 1, as in the C
 * reference and libvmaf: their order cannot change without changing bits,
 * and one row's additions wait on each other.  Rows are independent, so
 * here each lane adds one row: the terms of ANSNR_LANES rows (r * r and
 * (r - d) * (r - d), the C kernel's operations) are computed along the
 * rows, a block of ANSNR_LANES columns at a time, and transposed, so that
 * a vector holds one column of every row; the lanes add the columns in
 * order, so every lane makes its row's C sums to the bit, the rows side
 * by side.  A batch of fewer rows, and the last columns, gather the rows'
 * samples a column at a time instead.
 *
 * The includer defines VECTOR_BYTES (vector.h: 8 or 16 floats a vector)
 * and ANSNR_ISA(name).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "metrics/common/x86/vector.h"

#define ANSNR_LANES (VECTOR_BYTES / 4)

#define ANSNR_FN(name) ANSNR_ISA(float_ansnr_##name)
#define ANSNR_OWN_ROW_SUMS
#include "metrics/float_ansnr/float_ansnr_tmpl.c"

typedef vec_f32 VR;

/* One stage of a transpose of ANSNR_LANES rows (m[i] row i): for every pair
 * of rows i, i + h (i & h == 0), the h x h blocks off the diagonal of each
 * 2h x 2h block trade places.  The stages h = ANSNR_LANES / 2, ..., 1
 * transpose the matrix: m[c][i] becomes the old m[i][c]. */
#define ANSNR_TRANSPOSE_STAGE(m, h)                                                        \
    do {                                                                                   \
        for (int i_ = 0; i_ < ANSNR_LANES; i_++) {                                         \
            if (i_ & (h)) continue;                                                        \
            const VR a_ = (m)[i_], b_ = (m)[i_ + (h)];                                     \
            (m)[i_] = __builtin_shufflevector(a_, b_, ANSNR_LANES_OF(ANSNR_FIRST, h));     \
            (m)[i_ + (h)] = __builtin_shufflevector(a_, b_, ANSNR_LANES_OF(ANSNR_SECOND, h)); \
        }                                                                                  \
    } while (0)

/* Lane l of the pair's first row after a stage: its own, or (in the lanes
 * with bit h set) the second row's h lanes back; of the second row: the
 * first's h lanes on, or (bit h set) its own.  Indices count a_'s lanes,
 * then b_'s; constant, as __builtin_shufflevector wants them (GCC 12 and
 * clang both have it). */
#define ANSNR_FIRST(l, h) (((l) & (h)) ? (l) + ANSNR_LANES - (h) : (l))
#define ANSNR_SECOND(l, h) (((l) & (h)) ? (l) + ANSNR_LANES : (l) + (h))

#if ANSNR_LANES == 16
#define ANSNR_LANES_OF(lane, h)                                                            \
    lane(0, h), lane(1, h), lane(2, h), lane(3, h), lane(4, h), lane(5, h), lane(6, h),    \
        lane(7, h), lane(8, h), lane(9, h), lane(10, h), lane(11, h), lane(12, h),         \
        lane(13, h), lane(14, h), lane(15, h)
#define ANSNR_TRANSPOSE(m)                \
    do {                                  \
        ANSNR_TRANSPOSE_STAGE(m, 8);      \
        ANSNR_TRANSPOSE_STAGE(m, 4);      \
        ANSNR_TRANSPOSE_STAGE(m, 2);      \
        ANSNR_TRANSPOSE_STAGE(m, 1);      \
    } while (0)
#else
#define ANSNR_LANES_OF(lane, h)                                                            \
    lane(0, h), lane(1, h), lane(2, h), lane(3, h), lane(4, h), lane(5, h), lane(6, h),    \
        lane(7, h)
#define ANSNR_TRANSPOSE(m)                \
    do {                                  \
        ANSNR_TRANSPOSE_STAGE(m, 4);      \
        ANSNR_TRANSPOSE_STAGE(m, 2);      \
        ANSNR_TRANSPOSE_STAGE(m, 1);      \
    } while (0)
#endif

/* The sums of n rows (lane k: row k), columns x0 .. w - 1, a column at
 * a time: the rows' samples gathered (lanes past n read row n - 1 again:
 * their sums are dropped). */
static inline void ANSNR_ISA(ansnr_sums_gathered)(const float *r, const float *d, size_t stride,
                                                  int n, int x0, int w, VR *sig, VR *noise)
{
    vec_i32 index;
    for (int k = 0; k < ANSNR_LANES; k++) index[k] = (int)((size_t)(k < n ? k : n - 1) * stride);
    VR s = *sig, q = *noise;
    for (int x = x0; x < w; x++) {
        const VR rv = (VR)vec_gather_i32(r + x, index, 4);
        const VR dv = (VR)vec_gather_i32(d + x, index, 4);
        s += rv * rv;
        q += (rv - dv) * (rv - dv);
    }
    *sig = s;
    *noise = q;
}

void ANSNR_ISA(float_ansnr_row_sums)(const float *ref, const float *dis, size_t stride, int rows,
                                     int w, float *sig, float *noise)
{
    for (int i0 = 0; i0 < rows; i0 += ANSNR_LANES) {
        const int n = rows - i0 < ANSNR_LANES ? rows - i0 : ANSNR_LANES;
        const float *r = ref + (size_t)i0 * stride, *d = dis + (size_t)i0 * stride;
        VR sig_rows = { 0 }, noise_rows = { 0 };
        int x = 0;
        /* With a row for every lane, ANSNR_LANES columns at a time: each
         * row's terms computed along the row, then transposed, so that a
         * vector holds one column of every row and the lanes add the
         * columns in order. */
        for (; n == ANSNR_LANES && x + ANSNR_LANES <= w; x += ANSNR_LANES) {
            VR m[ANSNR_LANES];
            const float *rk = r + x;
            for (int k = 0; k < ANSNR_LANES; k++, rk += stride) {
                VR rv;
                memcpy(&rv, rk, sizeof(rv));
                m[k] = rv * rv;
            }
            ANSNR_TRANSPOSE(m);
            for (int c = 0; c < ANSNR_LANES; c++) sig_rows += m[c];
            rk = r + x;
            const float *dk = d + x;
            for (int k = 0; k < ANSNR_LANES; k++, rk += stride, dk += stride) {
                VR rv, dv;
                memcpy(&rv, rk, sizeof(rv));
                memcpy(&dv, dk, sizeof(dv));
                m[k] = (rv - dv) * (rv - dv);
            }
            ANSNR_TRANSPOSE(m);
            for (int c = 0; c < ANSNR_LANES; c++) noise_rows += m[c];
        }
        ANSNR_ISA(ansnr_sums_gathered)(r, d, stride, n, x, w, &sig_rows, &noise_rows);
        for (int k = 0; k < n; k++) {
            sig[i0 + k] = sig_rows[k];
            noise[i0 + k] = noise_rows[k];
        }
    }
}
