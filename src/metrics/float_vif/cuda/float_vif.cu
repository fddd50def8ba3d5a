/*
 * Float VIF's CUDA twin: the four scales of src/metrics/float_vif.c on the
 * device, bit for bit; the host adds the rows' sums and writes the keys
 * through the C reference's own float_vif_write() (float_vif_cuda.c).
 *
 * Per scale s, on the slot's stream (a scale's picture is the frame's luma
 * at s = 0, converted on the fly as libvmaf's picture_copy() does and
 * resized by vif_prescale's nearest sample, else the float planes of the
 * scale on the device):
 *   rows   (unless vif_skip_scale0 at s = 0) one block per `rows_per_block`
 *          rows of the scale, the row cut in segments of `segment`
 *          columns; per segment three phases, with a barrier after each:
 *            0: the vertical pass of the five quantities (mu1, mu2, the
 *               squares and the product) at the segment's columns and
 *               `radius` mirrored or neighbouring columns on each side,
 *               into shared memory;
 *            1: the horizontal pass at each column of the segment and the
 *               statistic (float_vif_statistic(), float_vif.h: the C
 *               reference's own function), num and den into shared memory;
 *            2: one thread per row and quantity adds the segment's values
 *               to the row's float sum, in column order;
 *          and a last phase writes each row's two float sums.  The C
 *          reference sums a row in float from its first column to its
 *          last: so does the device, sequentially, and the host adds the
 *          rows in float in row order, as the reference does.
 *   vdec, hdec  (s < 3) the next scale: the vertical pass of the next
 *          scale's filter at the even rows (one thread per sample), then
 *          the horizontal pass at the even columns (libvmaf filters every
 *          sample and keeps these).
 * Rows and columns outside the picture mirror it without repeating the
 * edge (-1 reads 1, n reads n - 2), as the reference's padding does.
 *
 * Every stage is a __host__ __device__ function of one thread (a phase of
 * the rows kernel is one thread's share of it: it reads what the previous
 * phases wrote and writes only its own elements); the __global__ wrappers
 * at the end only map CUDA's indices onto them and put the barriers
 * between the phases.  Floats where the reference has floats, doubles
 * where it has doubles, each filter's taps summed from 0.0f in the
 * reference's order; the fatbin is built with --fmad=false.
 * tests/test_float_vif_adm_motion_cuda_host.cpp runs the same functions on the CPU.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "float_vif_args.h"
#include "gpu/cuda/float_chain.h"
#include "metrics/float_vif/float_vif.h"

#define FVIF_FN __host__ __device__ __forceinline__
#ifdef __CUDACC__
#define FVIF_UNROLL _Pragma("unroll")
#else
#define FVIF_UNROLL
#endif

/* ---- samples ------------------------------------------------------------- */

/* Sample (x, y) of a picture as a float: a frame's, on the 8-bit scale less
 * 128 as picture_float_row() makes it (the division by 2^(bitdepth - 8) is
 * exact, so it is the multiplication by its inverse), or a float plane's. */
template <typename T>
FVIF_FN float fvif_load(const FvifArgs &a, const uint8_t *base, int x, int y)
{
    if constexpr (sizeof(T) == sizeof(float)) {
        return ((const float *)(base + (size_t)y * a.stride))[x];
    } else {
        if (a.prescaled) {
            x = (int)((float)x * a.ratio_x);
            y = (int)((float)y * a.ratio_y);
        }
        const unsigned v = ((const T *)(base + (size_t)y * a.stride))[x];
        return sizeof(T) == 1 ? (float)v + -128.0f : (float)v * a.inv_scaler + -128.0f;
    }
}

/* ---- the element functions ---------------------------------------------- */

/* The vertical pass of the five quantities at column x (inside the
 * picture) of row y: float_vif.c's vertical5(). */
template <typename T, int TAPS>
FVIF_FN void fvif_vertical5(const FvifArgs &a, int x, int y, float q[5])
{
    const int taps = TAPS ? TAPS : a.taps, r = taps / 2;
    float m1 = 0.0f, m2 = 0.0f, xx = 0.0f, yy = 0.0f, xy = 0.0f;
    FVIF_UNROLL
    for (int k = 0; k < (TAPS ? TAPS : taps); k++) {
        const int row = float_vif_mirror(y - r + k, a.h);
        const float fk = a.filter[k];
        const float p = fvif_load<T>(a, a.ref, x, row), d = fvif_load<T>(a, a.dis, x, row);
        m1 += fk * p;
        m2 += fk * d;
        xx += fk * (p * p);
        yy += fk * (d * d);
        xy += fk * (p * d);
    }
    q[0] = m1;
    q[1] = m2;
    q[2] = xx;
    q[3] = yy;
    q[4] = xy;
}

/* The vertical pass of the five quantities at column x (inside the
 * picture) of the ROWS rows from y0 (those from row h on are left alone),
 * into v[k * k_stride + row * row_stride]: vertical5() of each, with each
 * input row read, converted and squared once and added to every output row
 * it reaches.  An output row still gets its taps in tap order (input rows
 * come in ascending order, and tap k of output o is input row o + k), from
 * 0.0f: the same float operations as vertical5(), bit for bit. */
template <typename T, int TAPS, int ROWS>
FVIF_FN void fvif_vertical5_rows(const FvifArgs &a, int x, int y0, float *v, int k_stride,
                                 int row_stride)
{
    constexpr int r = TAPS / 2;
    float acc[ROWS][5];
    FVIF_UNROLL
    for (int o = 0; o < ROWS; o++)
        FVIF_UNROLL
        for (int q = 0; q < 5; q++) acc[o][q] = 0.0f;
    const int valid = a.h - y0 < ROWS ? a.h - y0 : ROWS;
    FVIF_UNROLL
    for (int t = 0; t < ROWS + 2 * r; t++) {
        if (t < valid + 2 * r) {
            const int row = float_vif_mirror(y0 - r + t, a.h);
            const float p = fvif_load<T>(a, a.ref, x, row), d = fvif_load<T>(a, a.dis, x, row);
            const float pp = p * p, dd = d * d, pd = p * d;
            FVIF_UNROLL
            for (int o = 0; o < ROWS; o++) {
                const int k = t - o;
                if (k < 0 || k >= TAPS) continue;
                const float fk = a.filter[k];
                acc[o][0] += fk * p;
                acc[o][1] += fk * d;
                acc[o][2] += fk * pp;
                acc[o][3] += fk * dd;
                acc[o][4] += fk * pd;
            }
        }
    }
    FVIF_UNROLL
    for (int o = 0; o < ROWS; o++)
        if (o < valid)
            FVIF_UNROLL
            for (int q = 0; q < 5; q++) v[q * k_stride + o * row_stride] = acc[o][q];
}

/* sum over k of f[k] * in[k]: float_vif.c's filter_row() at one column,
 * in[] the row from `radius` columns to its left. */
template <int TAPS>
FVIF_FN float fvif_filter(const FvifArgs &a, const float *in)
{
    float acc = 0.0f;
    FVIF_UNROLL
    for (int k = 0; k < (TAPS ? TAPS : a.taps); k++) acc += a.filter[k] * in[k];
    return acc;
}

/* vdec at (x, i): the vertical pass of the filter at row 2i of the
 * pictures (w x h), float_vif.c's decimate() before its horizontal pass. */
template <typename T, int TAPS>
FVIF_FN void fvif_vdec_at(const FvifArgs &a, int x, int i)
{
    const int taps = TAPS ? TAPS : a.taps, r = taps / 2;
    float s1 = 0.0f, s2 = 0.0f;
    FVIF_UNROLL
    for (int k = 0; k < (TAPS ? TAPS : taps); k++) {
        const int row = float_vif_mirror(2 * i - r + k, a.h);
        s1 += a.filter[k] * fvif_load<T>(a, a.ref, x, row);
        s2 += a.filter[k] * fvif_load<T>(a, a.dis, x, row);
    }
    const size_t at = (size_t)i * (unsigned)a.w + x;
    a.out_ref[at] = s1;
    a.out_dis[at] = s2;
}

/* hdec at (j, i): the horizontal pass of vertical-pass row i (w wide,
 * dense) at column 2j, the sample (j, i) of the next scale. */
template <int TAPS>
FVIF_FN void fvif_hdec_at(const FvifArgs &a, int j, int i)
{
    const int taps = TAPS ? TAPS : a.taps, r = taps / 2;
    const float *v1 = (const float *)a.ref + (size_t)i * (unsigned)a.w;
    const float *v2 = (const float *)a.dis + (size_t)i * (unsigned)a.w;
    float s1 = 0.0f, s2 = 0.0f;
    FVIF_UNROLL
    for (int k = 0; k < (TAPS ? TAPS : taps); k++) {
        const int col = float_vif_mirror(2 * j - r + k, a.w);
        s1 += a.filter[k] * v1[col];
        s2 += a.filter[k] * v2[col];
    }
    const size_t at = (size_t)i * (unsigned)(a.w / 2) + j;
    a.out_ref[at] = s1;
    a.out_dis[at] = s2;
}

/* ---- the rows kernel, phase by phase -------------------------------------- */

/* Shared memory of a block: the vertical pass [5][rows][segment + 2r], the
 * statistic [2][rows][segment], the row sums [rows][2]. */
FVIF_FN unsigned fvif_rows_shared_floats(int taps, int rows, int segment)
{
    return (unsigned)(5 * rows * (segment + 2 * (taps / 2)) + 2 * rows * segment + 2 * rows);
}

/* The phases of a block: three per segment, and the store. */
FVIF_FN unsigned fvif_rows_phases(const FvifArgs &a)
{
    return 3 * (unsigned)((a.w + a.segment - 1) / a.segment) + 1;
}

/* Phase `phase` of block `block` (rows block * rows_per_block ...), the
 * share of thread tid of nthreads. */
template <typename T, int TAPS>
FVIF_FN void fvif_rows_phase(const FvifArgs &a, unsigned block, unsigned phase, float *smem,
                             unsigned tid, unsigned nthreads)
{
    const int taps = TAPS ? TAPS : a.taps, r = taps / 2;
    const int R = a.rows_per_block, S = a.segment, vw = S + 2 * r;
    float *v = smem;                      /* [5][R][vw] */
    float *stat = v + 5 * R * vw;         /* [2][R][S] */
    float *acc = stat + 2 * R * S;        /* [R][2] */
    const int y0 = (int)block * R;
    const unsigned segments = (unsigned)((a.w + S - 1) / S);

    if (phase == 3 * segments) {
        for (unsigned e = tid; e < 2u * R; e += nthreads) {
            const int y = y0 + (int)e / 2;
            if (y < a.h) a.rows[2 * (size_t)y + e % 2] = acc[e];
        }
        return;
    }
    const int seg = (int)(phase / 3), part = (int)(phase % 3);
    const int x0 = seg * S, n = a.w - x0 < S ? a.w - x0 : S;
    if (part == 0 && TAPS && R == FVIF_ROWS) {
        /* a column's rows together, into v[(k R + row) vw + i] */
        const int cols = n + 2 * r;
        for (unsigned i = tid; i < (unsigned)cols; i += nthreads)
            fvif_vertical5_rows<T, TAPS ? TAPS : 1, FVIF_ROWS>(
                a, float_vif_mirror(x0 - r + (int)i, a.w), y0, v + i, R * vw, vw);
    } else if (part == 0) {
        const int cols = n + 2 * r;
        for (unsigned e = tid; e < (unsigned)(R * cols); e += nthreads) {
            const int row = (int)e / cols, i = (int)e % cols, y = y0 + row;
            if (y >= a.h) continue;
            float q[5];
            fvif_vertical5<T, TAPS>(a, float_vif_mirror(x0 - r + i, a.w), y, q);
            for (int k = 0; k < 5; k++) v[(k * R + row) * vw + i] = q[k];
        }
    } else if (part == 1) {
        for (unsigned e = tid; e < (unsigned)(R * n); e += nthreads) {
            const int row = (int)e / n, i = (int)e % n;
            if (y0 + row >= a.h) continue;
            float q[5];
            for (int k = 0; k < 5; k++) q[k] = fvif_filter<TAPS>(a, v + (k * R + row) * vw + i);
            float num, den;
            float_vif_statistic(q[0], q[1], q[2], q[3], q[4], a.sigma_nsq, a.gain_limit,
                                a.sigma_max_inv, &num, &den);
            stat[row * S + i] = num;
            stat[(R + row) * S + i] = den;
        }
    } else {
        for (unsigned e = tid; e < 2u * R; e += nthreads) {
            const int row = (int)e / 2, which = (int)e % 2;
            if (y0 + row >= a.h) continue;
            acc[e] = float_chain_sum(seg == 0 ? 0.0f : acc[e], stat + (which * R + row) * S, n);
        }
    }
}

/* ---- one thread of the element kernels ------------------------------------ */
/* Grids: x covers the columns in blocks of FVIF_THREADS; y the rows, from
 * block_y in steps of grid_y. */

template <typename T, int TAPS>
FVIF_FN void fvif_vdec_thread(const FvifArgs &a, unsigned block_x, unsigned block_y,
                              unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= (unsigned)a.w) return;
    for (unsigned i = block_y; i < (unsigned)(a.h / 2); i += grid_y) fvif_vdec_at<T, TAPS>(a, (int)x, (int)i);
}

template <int TAPS>
FVIF_FN void fvif_hdec_thread(const FvifArgs &a, unsigned block_x, unsigned block_y,
                              unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned j = block_x * block_dim + thread_x;
    if (j >= (unsigned)(a.w / 2)) return;
    for (unsigned i = block_y; i < (unsigned)(a.h / 2); i += grid_y) fvif_hdec_at<TAPS>(a, (int)j, (int)i);
}

/* ---- kernels ------------------------------------------------------------- */
#ifdef __CUDACC__

extern __shared__ float fvif_shared[];

template <typename T, int TAPS>
__device__ void fvif_rows_block(const FvifArgs &a)
{
    const unsigned phases = fvif_rows_phases(a);
    for (unsigned p = 0; p < phases; p++) {
        fvif_rows_phase<T, TAPS>(a, blockIdx.x, p, fvif_shared, threadIdx.x, blockDim.x);
        __syncthreads();
    }
}

#define FVIF_GRID blockIdx.x, blockIdx.y, gridDim.y, threadIdx.x, blockDim.x
#define FVIF_ROWS_KERNEL(name, T, taps)                                            \
    extern "C" __global__ void __launch_bounds__(FVIF_THREADS) name(FvifArgs a) \
    {                                                                              \
        fvif_rows_block<T, taps>(a);                                               \
    }
#define FVIF_ELEMENT_KERNEL(name, thread)                                            \
    extern "C" __global__ void __launch_bounds__(FVIF_THREADS) name(FvifArgs a) \
    {                                                                                \
        thread(a, FVIF_GRID);                                                        \
    }

FVIF_ROWS_KERNEL(fvif_rows_8_17, uint8_t, 17)
FVIF_ROWS_KERNEL(fvif_rows_16_17, uint16_t, 17)
FVIF_ROWS_KERNEL(fvif_rows_8_0, uint8_t, 0)
FVIF_ROWS_KERNEL(fvif_rows_16_0, uint16_t, 0)
FVIF_ROWS_KERNEL(fvif_rows_f_9, float, 9)
FVIF_ROWS_KERNEL(fvif_rows_f_5, float, 5)
FVIF_ROWS_KERNEL(fvif_rows_f_3, float, 3)
FVIF_ROWS_KERNEL(fvif_rows_f_0, float, 0)

FVIF_ELEMENT_KERNEL(fvif_vdec_8_9, (fvif_vdec_thread<uint8_t, 9>))
FVIF_ELEMENT_KERNEL(fvif_vdec_16_9, (fvif_vdec_thread<uint16_t, 9>))
FVIF_ELEMENT_KERNEL(fvif_vdec_8_0, (fvif_vdec_thread<uint8_t, 0>))
FVIF_ELEMENT_KERNEL(fvif_vdec_16_0, (fvif_vdec_thread<uint16_t, 0>))
FVIF_ELEMENT_KERNEL(fvif_vdec_f_5, (fvif_vdec_thread<float, 5>))
FVIF_ELEMENT_KERNEL(fvif_vdec_f_3, (fvif_vdec_thread<float, 3>))
FVIF_ELEMENT_KERNEL(fvif_vdec_f_0, (fvif_vdec_thread<float, 0>))

FVIF_ELEMENT_KERNEL(fvif_hdec_9, fvif_hdec_thread<9>)
FVIF_ELEMENT_KERNEL(fvif_hdec_5, fvif_hdec_thread<5>)
FVIF_ELEMENT_KERNEL(fvif_hdec_3, fvif_hdec_thread<3>)
FVIF_ELEMENT_KERNEL(fvif_hdec_0, fvif_hdec_thread<0>)
#endif /* __CUDACC__ */
