/*
 * Float ADM's CUDA twin: the four DWT levels of src/metrics/float_adm.c,
 * their decoupling, CSF weighting, masking and row sums on the device, bit
 * for bit; the host adds the rows' sums in row order and writes the keys
 * through the C reference's own float_adm_level() and float_adm_write()
 * (float_adm_cuda.c).
 *
 * Per level, on the slot's stream:
 *   dwt       one thread per band sample (j, y) of both pictures: the
 *             vertical pass of the four mirrored columns 2j - 1 .. 2j + 2
 *             over rows 2y - 1 .. 2y + 2 and the horizontal pass over them,
 *             into bands a, h, v, d (a only at a skipped scale 0);
 *   decouple  one thread per sample of the scored region and one sample
 *             around it: the restored part and the additive impairment,
 *             weighted by the CSF (float_adm_decouple(), float_adm.h: the
 *             C reference's own function), into six planes;
 *   rows      one block per `rows_per_block` scored rows, the row cut in
 *             segments of `segment` columns; per segment two phases with a
 *             barrier after each:
 *               0: at each column, the masked restored part and additive
 *                  impairment cubed (the masking sums: float_adm_cm_sum())
 *                  and the cubed CSF-weighted reference, 9 values, into
 *                  shared memory;
 *               1: one thread per row and sum adds the segment's values to
 *                  the row's float sum, in column order;
 *             and a last phase writes each row's nine float sums.  The C
 *             reference sums a row in float from its first scored column
 *             to its last: so does the device, sequentially; the host adds
 *             the rows in float in row order, as the reference does.
 *
 * The division of the decoupling is the reference's: where it divides by
 * libvmaf's reciprocal (rcpss and one Newton step, x86), the reciprocal
 * comes from the host CPU's own, tabulated at start (float_adm_cuda.c):
 * float_adm_reciprocal_from_table(), exact on every input the host checks;
 * elsewhere an IEEE division, as the reference's.
 *
 * Every stage is a __host__ __device__ function of one thread (a phase of
 * the rows kernel is one thread's share of it); the __global__ wrappers at
 * the end only map CUDA's indices onto them and put the barriers between
 * the phases.  Floats where the reference has floats, doubles where it has
 * doubles; the fatbin is built with --fmad=false.
 * tests/test_float_vif_adm_motion_cuda_host.cpp runs the same functions on the CPU.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "float_adm_args.h"
#include "gpu/cuda/float_chain.h"
#include "metrics/float_adm/float_adm.h"

#define FADM_FN __host__ __device__ __forceinline__
#ifdef __CUDACC__
#define FADM_UNROLL _Pragma("unroll")
#else
#define FADM_UNROLL
#endif

enum { FADM_A, FADM_H, FADM_V, FADM_D };
/* The nine sums of a row: FLOAT_ADM_SUM_* of float_adm.h. */
#define FADM_SUMS 9

/* ---- samples, division ---------------------------------------------------- */

/* Sample (x, y) of the level's input i as a float: a frame's, on the 8-bit
 * scale less 128 as picture_float_row() makes it (the division by
 * 2^(bitdepth - 8) is exact, so it is the multiplication by its inverse),
 * or a band a's. */
template <typename T>
FADM_FN float fadm_load(const FadmArgs &a, int i, int x, int y)
{
    const uint8_t *row = a.src[i] + (size_t)y * a.src_stride;
    if constexpr (sizeof(T) == sizeof(float)) {
        return ((const float *)row)[x];
    } else {
        const unsigned v = ((const T *)row)[x];
        return sizeof(T) == 1 ? (float)v + -128.0f : (float)v * a.inv_scaler + -128.0f;
    }
}

/* float_adm.c's adm_div(): n times libvmaf's reciprocal of d, refined by
 * one Newton step, or n / d. */
FADM_FN float fadm_div(const FadmArgs &a, float n, float d)
{
    if (!a.rcp_table) return n / d;
    const float xi = float_adm_reciprocal_from_table(a.rcp_table, a.rcp_shift, d);
    return n * (xi + xi * (1.0f - d * xi));
}

/* ---- the element functions ---------------------------------------------- */

/* dwt at (j, y) of picture i: float_adm.c's dwt_row() at column j. */
template <typename T>
FADM_FN void fadm_dwt_at(const FadmArgs &a, int i, int j, int y)
{
    const float lo_c[4] = { FLOAT_ADM_DWT_LO };
    const float hi_c[4] = { FLOAT_ADM_DWT_HI };
    int rows[4], cols[4];
    FADM_UNROLL
    for (int k = 0; k < 4; k++) {
        rows[k] = float_adm_dwt_mirror(2 * y - 1 + k, a.h);
        cols[k] = float_adm_dwt_mirror(2 * j - 1 + k, a.w);
    }
    /* the vertical pass at the four columns: lo (and hi) */
    float lo[4], hi[4];
    FADM_UNROLL
    for (int c = 0; c < 4; c++) {
        float s[4];
        FADM_UNROLL
        for (int k = 0; k < 4; k++) s[k] = fadm_load<T>(a, i, cols[c], rows[k]);
        float acc = 0;
        acc += lo_c[0] * s[0];
        acc += lo_c[1] * s[1];
        acc += lo_c[2] * s[2];
        acc += lo_c[3] * s[3];
        lo[c] = acc;
        acc = 0;
        acc += hi_c[0] * s[0];
        acc += hi_c[1] * s[1];
        acc += hi_c[2] * s[2];
        acc += hi_c[3] * s[3];
        hi[c] = acc;
    }
    const size_t at = (size_t)y * (unsigned)a.w2 + j;
    float acc = 0;
    acc += lo_c[0] * lo[0];
    acc += lo_c[1] * lo[1];
    acc += lo_c[2] * lo[2];
    acc += lo_c[3] * lo[3];
    a.band[i][FADM_A][at] = acc;
    if (!a.details) return;
    acc = 0;
    acc += hi_c[0] * lo[0];
    acc += hi_c[1] * lo[1];
    acc += hi_c[2] * lo[2];
    acc += hi_c[3] * lo[3];
    a.band[i][FADM_V][at] = acc;
    acc = 0;
    acc += lo_c[0] * hi[0];
    acc += lo_c[1] * hi[1];
    acc += lo_c[2] * hi[2];
    acc += lo_c[3] * hi[3];
    a.band[i][FADM_H][at] = acc;
    acc = 0;
    acc += hi_c[0] * hi[0];
    acc += hi_c[1] * hi[1];
    acc += hi_c[2] * hi[2];
    acc += hi_c[3] * hi[3];
    a.band[i][FADM_D][at] = acc;
}

/* decouple at (j, y): float_adm.c's decouple_at(), the CSF-weighted parts
 * into the six planes (their |x| / 30 is made where it is read). */
FADM_FN void fadm_decouple_at(const FadmArgs &a, int j, int y)
{
    const size_t at = (size_t)y * (unsigned)a.w2 + j;
    const float eps = FLOAT_ADM_DIV_EPS;
    float o[3], t[3], q[3], cr[3], ca[3];
    FADM_UNROLL
    for (int b = 0; b < 3; b++) {
        o[b] = a.band[0][FADM_H + b][at];
        t[b] = a.band[1][FADM_H + b][at];
    }
    FADM_UNROLL
    for (int b = 0; b < 3; b++) q[b] = fadm_div(a, t[b], o[b] + eps);
    float_adm_decouple(o, t, q, a.cos_1deg_sq, a.gain_limit, a.csf_w, cr, ca);
    FADM_UNROLL
    for (int b = 0; b < 3; b++) {
        a.csf[b][at] = cr[b];
        a.csf[3 + b][at] = ca[b];
    }
}

/* The masking threshold at (j, m) from the planes p[0..2] (|x| / 30 of
 * them around, |x| / 15 at the centre): float_adm.c's mask_threshold(). */
FADM_FN float fadm_threshold(float *const *p, size_t up, size_t mid, size_t down, int jl, int j,
                             int jr)
{
    float thr = 0;
    FADM_UNROLL
    for (int b = 0; b < 3; b++) {
        const float *x = p[b];
        thr += float_adm_cm_sum(float_adm_by_30(x[up + jl]), float_adm_by_30(x[up + j]),
                                float_adm_by_30(x[up + jr]), float_adm_by_30(x[mid + jl]),
                                x[mid + j], float_adm_by_30(x[mid + jr]),
                                float_adm_by_30(x[down + jl]), float_adm_by_30(x[down + j]),
                                float_adm_by_30(x[down + jr]));
    }
    return thr;
}

/* The nine values that row m sums at column j (FLOAT_ADM_SUM_* order):
 * float_adm.c's mask_at() cubed (the restored part masked by the additive
 * impairment's threshold, and the other way round) and den_row()'s cube of
 * the CSF-weighted reference. */
FADM_FN void fadm_row_values(const FadmArgs &a, int j, int m, float v[FADM_SUMS])
{
    const size_t w2 = (unsigned)a.w2;
    const int u = m == 0 ? 1 : m - 1, dn = m == a.h2 - 1 ? m : m + 1;
    const int jl = j == 0 ? 1 : j - 1, jr = j == a.w2 - 1 ? a.w2 - 1 : j + 1;
    const size_t up = (size_t)u * w2, mid = (size_t)m * w2, down = (size_t)dn * w2;
    float thr_num = 0.0f, thr_aim = 0.0f;
    if (!a.bypass_cm) {
        thr_num = fadm_threshold(a.csf + 3, up, mid, down, jl, j, jr);
        thr_aim = fadm_threshold(a.csf, up, mid, down, jl, j, jr);
    }
    FADM_UNROLL
    for (int b = 0; b < 3; b++) {
        const float xr = fabsf(a.csf[b][mid + j]) - thr_num;
        const float xa = fabsf(a.csf[3 + b][mid + j]) - thr_aim;
        const float num = xr < 0.0f ? 0.0f : xr;
        const float aim = xa < 0.0f ? 0.0f : xa;
        const float den = fabsf(a.csf_w[b] * a.band[0][FADM_H + b][mid + j]);
        v[FLOAT_ADM_SUM_NUM_H + b] = num * num * num;
        v[FLOAT_ADM_SUM_AIM_H + b] = aim * aim * aim;
        v[FLOAT_ADM_SUM_DEN_H + b] = den * den * den;
    }
}

/* ---- the rows kernel, phase by phase -------------------------------------- */

/* Shared memory of a block: the values [9][rows][segment], the row sums
 * [rows][9]. */
FADM_FN unsigned fadm_rows_shared_floats(int rows, int segment)
{
    return (unsigned)(FADM_SUMS * rows * segment + FADM_SUMS * rows);
}

/* The phases of a block: two per segment, and the store. */
FADM_FN unsigned fadm_rows_phases(const FadmArgs &a)
{
    return 2 * (unsigned)((a.right - a.left + a.segment - 1) / a.segment) + 1;
}

/* Phase `phase` of block `block` (scored rows top + block * rows_per_block
 * ...), the share of thread tid of nthreads. */
FADM_FN void fadm_rows_phase(const FadmArgs &a, unsigned block, unsigned phase, float *smem,
                             unsigned tid, unsigned nthreads)
{
    const int R = a.rows_per_block, S = a.segment;
    float *vals = smem;                   /* [9][R][S] */
    float *acc = vals + FADM_SUMS * R * S; /* [R][9] */
    const int m0 = a.top + (int)block * R;
    const unsigned segments = (unsigned)((a.right - a.left + S - 1) / S);

    if (phase == 2 * segments) {
        for (unsigned e = tid; e < (unsigned)(FADM_SUMS * R); e += nthreads) {
            const int m = m0 + (int)e / FADM_SUMS;
            if (m < a.bottom) a.rows[(size_t)m * FADM_SUMS + e % FADM_SUMS] = acc[e];
        }
        return;
    }
    const int seg = (int)(phase / 2), x0 = a.left + seg * S;
    const int n = a.right - x0 < S ? a.right - x0 : S;
    if (phase % 2 == 0) {
        for (unsigned e = tid; e < (unsigned)(R * n); e += nthreads) {
            const int row = (int)e / n, i = (int)e % n;
            if (m0 + row >= a.bottom) continue;
            float v[FADM_SUMS];
            fadm_row_values(a, x0 + i, m0 + row, v);
            for (int k = 0; k < FADM_SUMS; k++) vals[(k * R + row) * S + i] = v[k];
        }
    } else {
        for (unsigned e = tid; e < (unsigned)(FADM_SUMS * R); e += nthreads) {
            const int row = (int)e / FADM_SUMS, k = (int)e % FADM_SUMS;
            if (m0 + row >= a.bottom) continue;
            acc[e] = float_chain_sum(seg == 0 ? 0.0f : acc[e], vals + (k * R + row) * S, n);
        }
    }
}

/* ---- one thread of the element kernels ------------------------------------ */
/* Grids: x covers the columns in blocks of FADM_THREADS; y the rows, from
 * block_y in steps of grid_y. */

template <typename T>
FADM_FN void fadm_dwt_thread(const FadmArgs &a, unsigned block_x, unsigned block_y,
                             unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned j = block_x * block_dim + thread_x;
    if (j >= (unsigned)a.w2) return;
    for (unsigned y = block_y; y < (unsigned)a.h2; y += grid_y) {
        fadm_dwt_at<T>(a, 0, (int)j, (int)y);
        fadm_dwt_at<T>(a, 1, (int)j, (int)y);
    }
}

FADM_FN void fadm_decouple_thread(const FadmArgs &a, unsigned block_x, unsigned block_y,
                                  unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned j = (unsigned)a.col_lo + block_x * block_dim + thread_x;
    if (j >= (unsigned)a.col_hi) return;
    for (unsigned y = (unsigned)a.row_lo + block_y; y < (unsigned)a.row_hi; y += grid_y)
        fadm_decouple_at(a, (int)j, (int)y);
}

/* ---- kernels ------------------------------------------------------------- */
#ifdef __CUDACC__

extern __shared__ float fadm_shared[];

#define FADM_GRID blockIdx.x, blockIdx.y, gridDim.y, threadIdx.x, blockDim.x
#define FADM_ELEMENT_KERNEL(name, thread)                                            \
    extern "C" __global__ void __launch_bounds__(FADM_THREADS) name(FadmArgs a) \
    {                                                                                \
        thread(a, FADM_GRID);                                                        \
    }

FADM_ELEMENT_KERNEL(fadm_dwt_8, fadm_dwt_thread<uint8_t>)
FADM_ELEMENT_KERNEL(fadm_dwt_16, fadm_dwt_thread<uint16_t>)
FADM_ELEMENT_KERNEL(fadm_dwt_f, fadm_dwt_thread<float>)
FADM_ELEMENT_KERNEL(fadm_decouple, fadm_decouple_thread)

extern "C" __global__ void __launch_bounds__(FADM_THREADS) fadm_rows(FadmArgs a)
{
    const unsigned phases = fadm_rows_phases(a);
    for (unsigned p = 0; p < phases; p++) {
        fadm_rows_phase(a, blockIdx.x, p, fadm_shared, threadIdx.x, blockDim.x);
        __syncthreads();
    }
}
#endif /* __CUDACC__ */
