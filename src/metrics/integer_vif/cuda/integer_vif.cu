/*
 * Integer VIF's CUDA twin: the four scales of src/metrics/integer_vif.c
 * (and integer_vif_tmpl.c) on the device, bit for bit; the host turns the
 * 16 sums (per scale: num_log, den_log, num_non_log, den_non_log) into the
 * keys through the C reference's own vif_values() (integer_vif_cuda.c).
 *
 * Per scale s, on the slot's stream (a scale's picture is the frame's luma
 * at s = 0, else the decimated planes of the scale, 16-bit, on the device):
 *   vlow    (s > 0) one thread per sample (x, y) of the vertical low-pass
 *           of scale s - 1 at its even rows 2y, with the filter of scale s,
 *           rounded by the shift (the bit depth when it reads the frame,
 *           16 after), kept to 16 bits: low[y][x];
 *   hlow    (s > 0) one thread per sample (x, y) of scale s: the
 *           horizontal low-pass of low[y] at column 2x, (sum + 2^15) >> 16;
 *   vstats  one thread per sample (x, y): the vertical pass of the scale's
 *           filter over both pictures, the means kept to 16 bits and the
 *           squares and product to 32, as the reference rounds them;
 *   hstats  one thread per column x of a band of `rows` rows: the
 *           horizontal pass at each sample of the band and its statistic
 *           (vif_pixel(), integer_vif.h: the reference's own function),
 *           summed; a block adds its threads' sums and adds them to the
 *           scale's four sums with 64-bit integer atomics.
 * Rows and columns outside the picture mirror it without repeating the
 * edge (-1 reads 1, n reads n - 2), as the reference's padding does.
 *
 * Every stage is a __host__ __device__ function of one thread (it reads
 * only its inputs and writes only its own outputs); the __global__
 * wrappers at the end only map CUDA's indices onto them and, for hstats,
 * add the threads' sums: integers, so any order gives the same sums.  The
 * only doubles (in vif_pixel) are per sample, converted back to integers
 * before they are summed; the fatbin is built with --fmad=false.
 * tests/test_integer_vif_cuda_host.cpp runs the same functions on the CPU.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "integer_vif_args.h"
#include "metrics/integer_vif/integer_vif.h"

#define VIF_FN __host__ __device__ __forceinline__
/* The tap loops unrolled on the device: their coefficients become constants. */
#ifdef __CUDACC__
#define VIF_UNROLL _Pragma("unroll")
#else
#define VIF_UNROLL
#endif

/* ---- filters, mirrors ---------------------------------------------------- */

/* Coefficient k of the FW-tap filter; loops over k are unrolled, so the
 * coefficients become constants. */
template <int FW>
VIF_FN uint32_t vif_tap(int k)
{
    if constexpr (FW == 17) {
        const uint16_t c[17] = { VIF_FILTER17 };
        return c[k];
    } else if constexpr (FW == 9) {
        const uint16_t c[9] = { VIF_FILTER9 };
        return c[k];
    } else if constexpr (FW == 5) {
        const uint16_t c[5] = { VIF_FILTER5 };
        return c[k];
    } else {
        const uint16_t c[3] = { VIF_FILTER3 };
        return c[k];
    }
}

/* Index i of a line of n samples, mirrored without repeating the edge;
 * one reflection suffices (every filter's half width is below the side of
 * the scale it reads: the C reference refuses smaller pictures). */
VIF_FN int vif_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
}

template <typename T>
VIF_FN const T *vif_src_row(const uint8_t *base, unsigned long long stride, int row)
{
    return (const T *)(base + (size_t)row * stride);
}

/* The vertical sums of the squares: 32 bits suffice for 8-bit samples (17
 * taps summing to 65536, times 255^2), 16-bit ones need 64. */
template <typename T> struct VifSqSum { typedef uint64_t type; };
template <> struct VifSqSum<uint8_t> { typedef uint32_t type; };

/* ---- the element functions ---------------------------------------------- */

/* vstats at (x, y) of the scale: integer_vif_tmpl.c's vif_vertical_stats. */
template <typename T, int FW>
VIF_FN void vif_vstats_at(const VifArgs &a, unsigned x, unsigned y)
{
    typedef typename VifSqSum<T>::type sqsum;
    const int half = FW / 2, h = (int)a.h;
    const uint32_t cc = vif_tap<FW>(half);
    const uint32_t r = vif_src_row<T>(a.ref, a.src_stride, (int)y)[x];
    const uint32_t d = vif_src_row<T>(a.dis, a.src_stride, (int)y)[x];
    uint32_t mu1 = cc * r, mu2 = cc * d;
    sqsum xx = (sqsum)(cc * r) * r, yy = (sqsum)(cc * d) * d, xy = (sqsum)(cc * r) * d;
    VIF_UNROLL
    for (int k = 0; k < half; k++) {
        const uint32_t c = vif_tap<FW>(k);
        const int y0 = vif_mirror((int)y - half + k, h), y1 = vif_mirror((int)y + half - k, h);
        const uint32_t r0 = vif_src_row<T>(a.ref, a.src_stride, y0)[x];
        const uint32_t r1 = vif_src_row<T>(a.ref, a.src_stride, y1)[x];
        const uint32_t d0 = vif_src_row<T>(a.dis, a.src_stride, y0)[x];
        const uint32_t d1 = vif_src_row<T>(a.dis, a.src_stride, y1)[x];
        mu1 += c * (r0 + r1);
        mu2 += c * (d0 + d1);
        xx += (sqsum)(c * r0) * r0 + (sqsum)(c * r1) * r1;
        yy += (sqsum)(c * d0) * d0 + (sqsum)(c * d1) * d1;
        xy += (sqsum)(c * r0) * d0 + (sqsum)(c * r1) * d1;
    }
    /* 16 bits of the means, 32 of the squares, as the reference keeps. */
    const size_t i = (size_t)y * a.w + x;
    a.mu1[i] = (uint16_t)((mu1 + a.mu_round) >> a.mu_shift);
    a.mu2[i] = (uint16_t)((mu2 + a.mu_round) >> a.mu_shift);
    a.xx[i] = (uint32_t)(((uint64_t)xx + a.sq_round) >> a.sq_shift);
    a.yy[i] = (uint32_t)(((uint64_t)yy + a.sq_round) >> a.sq_shift);
    a.xy[i] = (uint32_t)(((uint64_t)xy + a.sq_round) >> a.sq_shift);
}

/* hstats at (x, y) of the scale: integer_vif.c's vif_horizontal_stats and
 * vif_accumulate, the statistic added to *sums. */
template <int FW>
VIF_FN void vif_hstats_at(const VifArgs &a, unsigned x, unsigned y, VifSums *sums)
{
    const int half = FW / 2, w = (int)a.w;
    const size_t row = (size_t)y * a.w;
    const uint16_t *m1 = a.mu1 + row, *m2 = a.mu2 + row;
    const uint32_t *lxx = a.xx + row, *lyy = a.yy + row, *lxy = a.xy + row;
    const uint32_t cc = vif_tap<FW>(half);
    uint32_t mu1 = cc * m1[x], mu2 = cc * m2[x];
    uint64_t xx = (uint64_t)cc * lxx[x], yy = (uint64_t)cc * lyy[x], xy = (uint64_t)cc * lxy[x];
    VIF_UNROLL
    for (int k = 0; k < half; k++) {
        const uint32_t c = vif_tap<FW>(k);
        const int off = half - k;
        const int l = vif_mirror((int)x - off, w), r = vif_mirror((int)x + off, w);
        mu1 += c * ((uint32_t)m1[l] + m1[r]);
        mu2 += c * ((uint32_t)m2[l] + m2[r]);
        xx += (uint64_t)c * lxx[l] + (uint64_t)c * lxx[r];
        yy += (uint64_t)c * lyy[l] + (uint64_t)c * lyy[r];
        xy += (uint64_t)c * lxy[l] + (uint64_t)c * lxy[r];
    }
    vif_pixel(mu1, mu2, xx, yy, xy, a.log2_table, a.gain_limit, sums);
}

/* vlow at (x, y): integer_vif_tmpl.c's vif_vertical_lowpass at row 2y. */
template <typename T, int FW>
VIF_FN void vif_vlow_at(const VifArgs &a, unsigned x, unsigned y)
{
    const int half = FW / 2, h = (int)a.h, row = 2 * (int)y;
    const uint32_t cc = vif_tap<FW>(half);
    uint32_t sum1 = cc * vif_src_row<T>(a.ref, a.src_stride, row)[x];
    uint32_t sum2 = cc * vif_src_row<T>(a.dis, a.src_stride, row)[x];
    VIF_UNROLL
    for (int k = 0; k < half; k++) {
        const uint32_t c = vif_tap<FW>(k);
        const int y0 = vif_mirror(row - half + k, h), y1 = vif_mirror(row + half - k, h);
        sum1 += c * ((uint32_t)vif_src_row<T>(a.ref, a.src_stride, y0)[x] +
                     vif_src_row<T>(a.ref, a.src_stride, y1)[x]);
        sum2 += c * ((uint32_t)vif_src_row<T>(a.dis, a.src_stride, y0)[x] +
                     vif_src_row<T>(a.dis, a.src_stride, y1)[x]);
    }
    const uint32_t round = 1u << (a.low_shift - 1);
    const size_t i = (size_t)y * a.w + x;
    a.low_ref[i] = (uint16_t)((sum1 + round) >> a.low_shift);
    a.low_dis[i] = (uint16_t)((sum2 + round) >> a.low_shift);
}

/* hlow at (x, y) of the new scale: integer_vif.c's vif_horizontal_lowpass
 * at column 2x of low-pass row y. */
template <int FW>
VIF_FN void vif_hlow_at(const VifArgs &a, unsigned x, unsigned y)
{
    const int half = FW / 2, w = (int)a.w, j = 2 * (int)x;
    const uint16_t *ref = a.low_ref + (size_t)y * a.w, *dis = a.low_dis + (size_t)y * a.w;
    const uint32_t cc = vif_tap<FW>(half);
    uint32_t sum1 = cc * ref[j], sum2 = cc * dis[j];
    VIF_UNROLL
    for (int k = 0; k < half; k++) {
        const uint32_t c = vif_tap<FW>(k);
        const int off = half - k;
        const int l = vif_mirror(j - off, w), r = vif_mirror(j + off, w);
        sum1 += c * ((uint32_t)ref[l] + ref[r]);
        sum2 += c * ((uint32_t)dis[l] + dis[r]);
    }
    const size_t i = (size_t)y * (a.w / 2) + x;
    a.dst_ref[i] = (uint16_t)((sum1 + 32768) >> 16);
    a.dst_dis[i] = (uint16_t)((sum2 + 32768) >> 16);
}

/* ---- one thread of each kernel ------------------------------------------ */
/* Grids: x covers the columns in blocks of VIF_THREADS; y the rows (or
 * hstats' bands of a.rows rows), from block_y in steps of grid_y. */

template <typename T, int FW>
VIF_FN void vif_vstats_thread(const VifArgs &a, unsigned block_x, unsigned block_y,
                              unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.w) return;
    for (unsigned y = block_y; y < a.h; y += grid_y) vif_vstats_at<T, FW>(a, x, y);
}

template <int FW>
VIF_FN void vif_hstats_thread(const VifArgs &a, unsigned block_x, unsigned block_y,
                              unsigned grid_y, unsigned thread_x, unsigned block_dim,
                              VifSums *sums)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.w) return;
    for (unsigned y0 = block_y * a.rows; y0 < a.h; y0 += grid_y * a.rows)
        for (unsigned y = y0; y < y0 + a.rows && y < a.h; y++) vif_hstats_at<FW>(a, x, y, sums);
}

template <typename T, int FW>
VIF_FN void vif_vlow_thread(const VifArgs &a, unsigned block_x, unsigned block_y,
                            unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.w) return;
    for (unsigned y = block_y; y < a.h / 2; y += grid_y) vif_vlow_at<T, FW>(a, x, y);
}

template <int FW>
VIF_FN void vif_hlow_thread(const VifArgs &a, unsigned block_x, unsigned block_y,
                            unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.w / 2) return;
    for (unsigned y = block_y; y < a.h / 2; y += grid_y) vif_hlow_at<FW>(a, x, y);
}

/* ---- kernels ------------------------------------------------------------- */
#ifdef __CUDACC__
#include "gpu/cuda/reduce.cuh"

#define VIF_GRID blockIdx.x, blockIdx.y, gridDim.y, threadIdx.x, blockDim.x

template <int FW>
__device__ void vif_hstats_block(const VifArgs &a)
{
    VifSums sums = { 0, 0, 0, 0 };
    vif_hstats_thread<FW>(a, VIF_GRID, &sums);
    /* Signed sums added as unsigned: the same bits, modulo 2^64. */
    const unsigned long long v[4] = {
        (unsigned long long)sums.num_log, (unsigned long long)sums.den_log,
        (unsigned long long)sums.num_non_log, (unsigned long long)sums.den_non_log,
    };
    for (int k = 0; k < 4; k++) {
        const unsigned long long total = block_sum(v[k]);
        if (threadIdx.x == 0) atomicAdd(&a.sums[k], total);
    }
}

#define VIF_ELEMENT_KERNEL(name, thread)                                      \
    extern "C" __global__ void __launch_bounds__(VIF_THREADS) name(VifArgs a) \
    {                                                                         \
        thread(a, VIF_GRID);                                                  \
    }
#define VIF_SUMS_KERNEL(name, fw)                                                \
    extern "C" __global__ void __launch_bounds__(VIF_THREADS, 4) name(VifArgs a) \
    {                                                                            \
        vif_hstats_block<fw>(a);                                                 \
    }

VIF_ELEMENT_KERNEL(vif_vstats_8_17, (vif_vstats_thread<uint8_t, 17>))
VIF_ELEMENT_KERNEL(vif_vstats_16_17, (vif_vstats_thread<uint16_t, 17>))
VIF_ELEMENT_KERNEL(vif_vstats_16_9, (vif_vstats_thread<uint16_t, 9>))
VIF_ELEMENT_KERNEL(vif_vstats_16_5, (vif_vstats_thread<uint16_t, 5>))
VIF_ELEMENT_KERNEL(vif_vstats_16_3, (vif_vstats_thread<uint16_t, 3>))

/* At most 128 registers: 4 blocks of VIF_THREADS on a multiprocessor. */
VIF_SUMS_KERNEL(vif_hstats_17, 17)
VIF_SUMS_KERNEL(vif_hstats_9, 9)
VIF_SUMS_KERNEL(vif_hstats_5, 5)
VIF_SUMS_KERNEL(vif_hstats_3, 3)

VIF_ELEMENT_KERNEL(vif_vlow_8_9, (vif_vlow_thread<uint8_t, 9>))
VIF_ELEMENT_KERNEL(vif_vlow_16_9, (vif_vlow_thread<uint16_t, 9>))
VIF_ELEMENT_KERNEL(vif_vlow_16_5, (vif_vlow_thread<uint16_t, 5>))
VIF_ELEMENT_KERNEL(vif_vlow_16_3, (vif_vlow_thread<uint16_t, 3>))

VIF_ELEMENT_KERNEL(vif_hlow_9, vif_hlow_thread<9>)
VIF_ELEMENT_KERNEL(vif_hlow_5, vif_hlow_thread<5>)
VIF_ELEMENT_KERNEL(vif_hlow_3, vif_hlow_thread<3>)
#endif /* __CUDACC__ */
