/*
 * XPSNR's CUDA twin: a frame's integer block sums (xpsnr.h, XpsnrSums),
 * exactly as the C reference's kernels (xpsnr_tmpl.c) make them; the host
 * makes the values from them with the C reference's own finish.
 *
 * Block (k, 0) sums luma block k (raster order): its SSE, the high-pass
 * over its bounds (the picture's outer ring of `step` samples left out;
 * 3x3 at step 1, on 2x2 steps at step 2) and the temporal sum (|first or
 * second difference| of the reference and its previous ones, of samples at
 * step 1, of 2x2 sums at step 2; a previous picture before the first
 * frame is 0).  Block (k, p) of p = 1, 2 sums the SSE of chroma block k
 * of plane p.  Luma samples of the activity are read as FFmpeg's filter
 * reads them, 16-bit ones as signed.  The host hands it only pictures
 * whose reads stay inside them (even sizes at step 2) and SSEs that are
 * exact (at most 14 bits).  Sums of integers: the same in any order.
 *
 * The element code is __host__ __device__, so that
 * tests/test_xpsnr_cuda_host.cpp runs it on the CPU.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "xpsnr_args.h"
#ifdef __CUDACC__
#include "gpu/cuda/reduce.cuh"
#endif

struct XpsnrBlockSums {
    unsigned long long sse, spatial, temporal;
};

/* A luma sample of the activity: the reference (k = 0) or a previous one. */
template <typename T>
__host__ __device__ __forceinline__ int xpsnr_org(const XpsnrArgs &a, unsigned k, int x, int y)
{
    const uint8_t *base = k == 0 ? a.ref[0] : a.prev[k - 1];
    if (!base) return 0;
    const T v = ((const T *)(base + (size_t)y * a.stride[0]))[x];
    return sizeof(T) == 2 ? (int)(int16_t)v : (int)v;
}

template <typename T>
__host__ __device__ __forceinline__ int xpsnr_s4(const XpsnrArgs &a, unsigned k, int x, int y)
{
    return xpsnr_org<T>(a, k, x, y) + xpsnr_org<T>(a, k, x + 1, y) +
           xpsnr_org<T>(a, k, x, y + 1) + xpsnr_org<T>(a, k, x + 1, y + 1);
}

template <typename T>
__host__ __device__ __forceinline__ int xpsnr_highpass(const XpsnrArgs &a, int x, int y)
{
#define O(dy, dx) xpsnr_org<T>(a, 0, x + (dx), y + (dy))
    if (a.step == 1)
        return 12 * O(0, 0) - 2 * (O(0, -1) + O(0, 1) + O(-1, 0) + O(1, 0)) -
               (O(-1, -1) + O(-1, 1) + O(1, -1) + O(1, 1));
    return 12 * (O(0, 0) + O(0, 1) + O(1, 0) + O(1, 1)) -
           3 * (O(-1, 0) + O(-1, 1) + O(2, 0) + O(2, 1)) -
           3 * (O(0, -1) + O(0, 2) + O(1, -1) + O(1, 2)) -
           2 * (O(-1, -1) + O(-1, 2) + O(2, -1) + O(2, 2)) -
           (O(-2, -1) + O(-2, 0) + O(-2, 1) + O(-2, 2) + O(3, -1) + O(3, 0) + O(3, 1) +
            O(3, 2) + O(-1, -2) + O(0, -2) + O(1, -2) + O(2, -2) + O(-1, 3) + O(0, 3) +
            O(1, 3) + O(2, 3));
#undef O
}

template <typename T>
__host__ __device__ __forceinline__ int xpsnr_temporal(const XpsnrArgs &a, int x, int y)
{
    int c, b, d = 0;
    if (a.step == 2) {
        c = xpsnr_s4<T>(a, 0, x, y);
        b = xpsnr_s4<T>(a, 1, x, y);
        if (a.second_order) d = xpsnr_s4<T>(a, 2, x, y);
    } else {
        c = xpsnr_org<T>(a, 0, x, y);
        b = xpsnr_org<T>(a, 1, x, y);
        if (a.second_order) d = xpsnr_org<T>(a, 2, x, y);
    }
    const int t = a.second_order ? c - 2 * b + d : c - b;
    return t < 0 ? -t : t;
}

/* The geometry of block k of plane p: false where there is no such block. */
__host__ __device__ __forceinline__ bool xpsnr_block(const XpsnrArgs &a, unsigned k, unsigned p,
                                                     unsigned *x0, unsigned *y0, unsigned *bw,
                                                     unsigned *bh)
{
    unsigned bx = a.block, by = a.block;
    if (p > 0) {
        bx = a.block * a.width[p] / a.width[0];
        by = a.block * a.height[p] / a.height[0];
    }
    const unsigned nx = (a.width[p] + bx - 1) / bx, ny = (a.height[p] + by - 1) / by;
    if (k >= nx * ny) return false;
    *x0 = k % nx * bx;
    *y0 = k / nx * by;
    *bw = a.width[p] - *x0 < bx ? a.width[p] - *x0 : bx;
    *bh = a.height[p] - *y0 < by ? a.height[p] - *y0 : by;
    return true;
}

/* One thread of block (k, p): its share of the block's sums. */
template <typename T>
__host__ __device__ __forceinline__ XpsnrBlockSums xpsnr_thread(const XpsnrArgs &a, unsigned k,
                                                                unsigned p, unsigned thread,
                                                                unsigned threads)
{
    XpsnrBlockSums s = { 0, 0, 0 };
    unsigned x0, y0, bw, bh;
    if (!xpsnr_block(a, k, p, &x0, &y0, &bw, &bh)) return s;
    for (unsigned i = thread; i < bw * bh; i += threads) {
        const unsigned x = x0 + i % bw, y = y0 + i / bw;
        const long long e = (long long)((const T *)(a.ref[p] + y * a.stride[p]))[x] -
                            (long long)((const T *)(a.dist[p] + y * a.stride[p]))[x];
        s.sse += (unsigned long long)(e * e);
    }
    if (p > 0) return s;
    const int st = (int)a.step;
    const int xa = x0 > 0 ? 0 : st, ya = y0 > 0 ? 0 : st;
    const int wa = x0 + bw < a.width[0] ? (int)bw : (int)bw - st;
    const int ha = y0 + bh < a.height[0] ? (int)bh : (int)bh - st;
    if (wa <= xa || ha <= ya) return s; /* too small to filter: weight 1 */
    /* FFmpeg leaves the spatial term 0 where its 2x2 part is at most 12
     * samples wide */
    if (st == 1 || wa > 12) {
        const unsigned fw = (unsigned)(wa - xa + st - 1) / st, fh = (unsigned)(ha - ya + st - 1) / st;
        for (unsigned i = thread; i < fw * fh; i += threads) {
            const int f = xpsnr_highpass<T>(a, (int)x0 + xa + st * (int)(i % fw),
                                            (int)y0 + ya + st * (int)(i / fw));
            s.spatial += (unsigned long long)(f < 0 ? -f : f);
        }
    }
    const unsigned tw = (bw + st - 1) / st, th = (bh + st - 1) / st;
    for (unsigned i = thread; i < tw * th; i += threads)
        s.temporal += (unsigned long long)xpsnr_temporal<T>(a, (int)x0 + st * (int)(i % tw),
                                                            (int)y0 + st * (int)(i / tw));
    return s;
}

/* Where block (k, p)'s sums go in a.sums (chroma: nx * ny blocks a plane). */
__host__ __device__ __forceinline__ size_t xpsnr_chroma_at(const XpsnrArgs &a, unsigned k,
                                                           unsigned p)
{
    const unsigned bx = a.block * a.width[1] / a.width[0];
    const unsigned by = a.block * a.height[1] / a.height[0];
    const size_t blocks = (size_t)((a.width[1] + bx - 1) / bx) * ((a.height[1] + by - 1) / by);
    return 3 * (size_t)a.luma_blocks + (p - 1) * blocks + k;
}

#ifdef __CUDACC__
template <typename T>
__device__ __forceinline__ void xpsnr_sums(const XpsnrArgs &a)
{
    const unsigned k = blockIdx.x, p = blockIdx.y;
    XpsnrBlockSums s = xpsnr_thread<T>(a, k, p, threadIdx.x, blockDim.x);
    unsigned x0, y0, bw, bh;
    const bool here = xpsnr_block(a, k, p, &x0, &y0, &bw, &bh);
    s.sse = block_sum(s.sse);
    if (p == 0) {
        s.spatial = block_sum(s.spatial);
        s.temporal = block_sum(s.temporal);
    }
    if (threadIdx.x != 0 || !here) return;
    if (p == 0) {
        a.sums[k] = s.sse;
        a.sums[a.luma_blocks + k] = s.spatial;
        a.sums[2 * a.luma_blocks + k] = s.temporal;
    } else {
        a.sums[xpsnr_chroma_at(a, k, p)] = s.sse;
    }
}

extern "C" __global__ void __launch_bounds__(XPSNR_THREADS) xpsnr_sums_8bit(XpsnrArgs a)
{
    xpsnr_sums<uint8_t>(a);
}

extern "C" __global__ void __launch_bounds__(XPSNR_THREADS) xpsnr_sums_16bit(XpsnrArgs a)
{
    xpsnr_sums<uint16_t>(a);
}
#endif
