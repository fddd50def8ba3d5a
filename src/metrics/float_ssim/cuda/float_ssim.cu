/*
 * float_ssim's CUDA twin, and the SSIM kernel that float_ms_ssim's twin
 * shares (float_ms_ssim.cu includes this file): libvmaf's IQA SSIM of
 * src/metrics/iqa.c on the device, every value formed by the same float and
 * double operations in the same order; only the sums of the per-position
 * terms are added in another order (per tile, then by the host).
 *
 * Kernels (float_ssim_cuda.c and float_ms_ssim_cuda.c launch them):
 *   fssim_decimate_8, _16   float_ssim's automatic downscale: one thread
 *           per sample (x, y) of the shrunk picture, both pictures: the
 *           factor x factor block of luma samples (as floats on the 8-bit
 *           scale, rows and columns mirrored at the borders) times the box
 *           weight, float products in a double sum, v then u, rounded to
 *           float, into a dense float plane;
 *   iqa_ssim_tiles   SSIM of up to 5 picture pairs (float_ssim's one, or
 *           MS-SSIM's scales) in one launch: one block of SSIM_THREADS per
 *           SSIM_TILE_W x SSIM_TILE_H tile of positions where the window
 *           fits.  The block loads the tile and its 10-sample margin of
 *           both pictures into shared memory (as floats: luma samples are
 *           converted as picture_float_row() does, float planes read as
 *           they are), filters its rows horizontally (the five quantities
 *           mu1, mu2, ref^2, dist^2, ref*dist: float products, double sums
 *           in tap order, rounded to float), then its columns vertically
 *           (likewise), takes iqa_ssim_terms() (iqa.h, the C reference's own
 *           function) at each position, and sums l c s, l, c and s in
 *           double: each thread over its positions in a fixed order, then a
 *           fixed tree over the threads.  It writes the tile's 4 sums to
 *           partials[4 * block]; the host adds a scale's tiles in tile
 *           order.
 *
 * Every stage is a __host__ __device__ function of one thread, between
 * barriers; the __global__ wrappers at the end only map CUDA's indices onto
 * them.  The fatbin is built with --fmad=false, and division and sqrt round
 * correctly on the device, so each position's terms are the C reference's
 * bits; tests/test_float_ssim_cuda_host.cpp runs the same functions on the
 * CPU, block by block, and gets the device's sums bit for bit.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "float_ssim_args.h"
#include "metrics/common/iqa.h"

#define FSSIM_FN __host__ __device__ __forceinline__
#ifdef __CUDACC__
#define FSSIM_UNROLL _Pragma("unroll")
#else
#define FSSIM_UNROLL
#endif

/* A tile's input: its positions and the filter's margin. */
#define SSIM_MARGIN (IQA_GAUSSIAN_TAPS - 1)
#define SSIM_IN_W (SSIM_TILE_W + SSIM_MARGIN)
#define SSIM_IN_H (SSIM_TILE_H + SSIM_MARGIN)

/* A sample (x, y) of a picture as the C reference's floats: luma as
 * picture_float_row() converts it with offset 0 ((float)d at 8 bits,
 * (float)d / 2^(bitdepth - 8) above; adding the offset 0.0f changes no
 * non-negative float), a float plane as it is.  stride in bytes.
 * inv_scaler is 2^-(bitdepth - 8): a product by a power of two is exact,
 * so it gives the quotient's bits (d <= 65535, no result is subnormal). */
template <int KIND>
FSSIM_FN float fssim_sample(const uint8_t *base, unsigned long long stride, int x, int y,
                            float inv_scaler)
{
    const uint8_t *row = base + (size_t)y * stride;
    if (KIND == SSIM_SOURCE_8) return (float)row[x];
    if (KIND == SSIM_SOURCE_16) return (float)((const uint16_t *)row)[x] * inv_scaler;
    return ((const float *)row)[x];
}

/* ---- float_ssim's downscale --------------------------------------------- */

/* Sample (x, y) of the shrunk pictures: iqa_decimate_row() of the rows
 * float_ssim.c's shrink_row() mirrors and pads. */
template <int KIND>
FSSIM_FN void fssim_decimate_at(const FssimDecimateArgs &a, unsigned x, unsigned y)
{
    const int f = (int)a.factor, centre = f / 2, w = (int)a.w, h = (int)a.h;
    double sr = 0.0, sd = 0.0;
    for (int v = 0; v < f; v++) {
        const int row = iqa_mirror((int)y * f + v - centre, h);
        for (int u = 0; u < f; u++) {
            const int col = iqa_mirror((int)x * f + u - centre, w);
            sr += (double)(fssim_sample<KIND>(a.ref, a.stride, col, row, a.inv_scaler) * a.weight);
            sd += (double)(fssim_sample<KIND>(a.dist, a.stride, col, row, a.inv_scaler) * a.weight);
        }
    }
    const size_t i = (size_t)y * a.dst_w + x;
    a.dst_ref[i] = (float)sr;
    a.dst_dist[i] = (float)sd;
}

/* Grid: x covers the columns in blocks of block_dim; y the rows, from
 * block_y in steps of grid_y. */
template <int KIND>
FSSIM_FN void fssim_decimate_thread(const FssimDecimateArgs &a, unsigned block_x,
                                    unsigned block_y, unsigned grid_y, unsigned thread_x,
                                    unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.dst_w) return;
    for (unsigned y = block_y; y < a.dst_h; y += grid_y) fssim_decimate_at<KIND>(a, x, y);
}

/* ---- SSIM over tiles ------------------------------------------------------ */

/* A block's shared memory (40992 bytes).  The thread sums reuse the
 * horizontal results once every thread has read them. */
struct SsimShared {
    float ref[SSIM_IN_H][SSIM_IN_W];
    float dist[SSIM_IN_H][SSIM_IN_W];
    union {
        float h[5][SSIM_IN_H][SSIM_TILE_W]; /* mu1, mu2, ref^2, dist^2, ref*dist */
        double sums[SSIM_THREADS][SSIM_SUMS];
    } u;
};

/* The tile of a block: its pair, and the position of its first output. */
struct SsimTile {
    const SsimScale *scale;
    unsigned x0, y0;
};

FSSIM_FN SsimTile ssim_tile(const SsimArgs &a, unsigned block)
{
    unsigned s = 0;
    while (s + 1 < a.scales && block >= a.scale[s + 1].first_tile) s++;
    const SsimScale &sc = a.scale[s];
    const unsigned local = block - sc.first_tile;
    SsimTile t;
    t.scale = &sc;
    t.x0 = local % sc.tiles_x * SSIM_TILE_W;
    t.y0 = local / sc.tiles_x * SSIM_TILE_H;
    return t;
}

/* Stage 1: the tile and its margin of both pictures into shared memory;
 * samples outside the picture read 0 (their results are never used). */
FSSIM_FN void ssim_load(const SsimArgs &a, unsigned block, unsigned thread, SsimShared &sh)
{
    const SsimTile t = ssim_tile(a, block);
    const SsimScale &sc = *t.scale;
    for (unsigned i = thread; i < SSIM_IN_W * SSIM_IN_H; i += SSIM_THREADS) {
        const unsigned r = i / SSIM_IN_W, c = i % SSIM_IN_W;
        const unsigned x = t.x0 + c, y = t.y0 + r;
        float vr = 0.0f, vd = 0.0f;
        if (x < sc.w && y < sc.h) {
            if (sc.kind == SSIM_SOURCE_8) {
                vr = fssim_sample<SSIM_SOURCE_8>(sc.ref, sc.stride, (int)x, (int)y, sc.inv_scaler);
                vd = fssim_sample<SSIM_SOURCE_8>(sc.dist, sc.stride, (int)x, (int)y, sc.inv_scaler);
            } else if (sc.kind == SSIM_SOURCE_16) {
                vr = fssim_sample<SSIM_SOURCE_16>(sc.ref, sc.stride, (int)x, (int)y, sc.inv_scaler);
                vd = fssim_sample<SSIM_SOURCE_16>(sc.dist, sc.stride, (int)x, (int)y, sc.inv_scaler);
            } else {
                vr = fssim_sample<SSIM_SOURCE_FLOAT>(sc.ref, sc.stride, (int)x, (int)y, 1.0f);
                vd = fssim_sample<SSIM_SOURCE_FLOAT>(sc.dist, sc.stride, (int)x, (int)y, 1.0f);
            }
        }
        sh.ref[r][c] = vr;
        sh.dist[r][c] = vd;
    }
}

/* Stage 2: iqa.c's gaussian_row() of the five quantities, at every row of
 * the tile and its margin: dst = (float) sum_u (double)(src[c + u] * g[u]),
 * the squares and the product rounded to float first. */
FSSIM_FN void ssim_hpass(unsigned thread, SsimShared &sh)
{
    const float g[IQA_GAUSSIAN_TAPS] = { IQA_GAUSSIAN_WINDOW };
    for (unsigned i = thread; i < SSIM_IN_H * SSIM_TILE_W; i += SSIM_THREADS) {
        const unsigned r = i / SSIM_TILE_W, c = i % SSIM_TILE_W;
        const float *ref = &sh.ref[r][c], *dist = &sh.dist[r][c];
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0;
        FSSIM_UNROLL
        for (int u = 0; u < IQA_GAUSSIAN_TAPS; u++) {
            const float x = ref[u], y = dist[u];
            const float xx = x * x, yy = y * y, xy = x * y;
            s0 += (double)(x * g[u]);
            s1 += (double)(y * g[u]);
            s2 += (double)(xx * g[u]);
            s3 += (double)(yy * g[u]);
            s4 += (double)(xy * g[u]);
        }
        sh.u.h[0][r][c] = (float)s0;
        sh.u.h[1][r][c] = (float)s1;
        sh.u.h[2][r][c] = (float)s2;
        sh.u.h[3][r][c] = (float)s3;
        sh.u.h[4][r][c] = (float)s4;
    }
}

/* Stage 3: iqa.c's gaussian_column() at the tile's positions inside the
 * picture's (w - 10) x (h - 10), their terms, and this thread's sums of
 * them (positions thread, thread + SSIM_THREADS, ... in turn). */
FSSIM_FN void ssim_vpass(const SsimArgs &a, unsigned block, unsigned thread, const SsimShared &sh,
                         double acc[SSIM_SUMS])
{
    const float g[IQA_GAUSSIAN_TAPS] = { IQA_GAUSSIAN_WINDOW };
    const SsimTile t = ssim_tile(a, block);
    const unsigned out_w = t.scale->w - SSIM_MARGIN, out_h = t.scale->h - SSIM_MARGIN;
    for (int k = 0; k < SSIM_SUMS; k++) acc[k] = 0.0;
    for (unsigned i = thread; i < SSIM_TILE_W * SSIM_TILE_H; i += SSIM_THREADS) {
        const unsigned r = i / SSIM_TILE_W, c = i % SSIM_TILE_W;
        if (t.x0 + c >= out_w || t.y0 + r >= out_h) continue;
        double q[5] = { 0.0, 0.0, 0.0, 0.0, 0.0 };
        FSSIM_UNROLL
        for (int v = 0; v < IQA_GAUSSIAN_TAPS; v++) {
            FSSIM_UNROLL
            for (int k = 0; k < 5; k++) q[k] += (double)(sh.u.h[k][r + v][c] * g[v]);
        }
        const IqaSsimTerms term =
            iqa_ssim_terms((float)q[0], (float)q[1], (float)q[2], (float)q[3], (float)q[4]);
        /* as iqa.c sums: l c s (left to right), l, c, s */
        acc[0] += term.l * term.c * term.s;
        acc[1] += term.l;
        acc[2] += term.c;
        acc[3] += term.s;
    }
}

/* Stage 4: the thread's sums into shared memory (after every thread has
 * read the horizontal results they overwrite). */
FSSIM_FN void ssim_sums_store(unsigned thread, SsimShared &sh, const double acc[SSIM_SUMS])
{
    for (int k = 0; k < SSIM_SUMS; k++) sh.u.sums[thread][k] = acc[k];
}

/* Stage 5, for half = SSIM_THREADS / 2, ..., 1 in turn: the fixed tree. */
FSSIM_FN void ssim_sums_step(unsigned thread, unsigned half, SsimShared &sh)
{
    if (thread >= half) return;
    for (int k = 0; k < SSIM_SUMS; k++) sh.u.sums[thread][k] += sh.u.sums[thread + half][k];
}

/* Stage 6 (thread 0): the tile's sums. */
FSSIM_FN void ssim_sums_write(const SsimArgs &a, unsigned block, const SsimShared &sh)
{
    for (int k = 0; k < SSIM_SUMS; k++) a.partials[(size_t)block * SSIM_SUMS + k] = sh.u.sums[0][k];
}

/* ---- kernels ------------------------------------------------------------- */
#ifdef __CUDACC__

#define FSSIM_GRID blockIdx.x, blockIdx.y, gridDim.y, threadIdx.x, blockDim.x

/* float_ms_ssim.cu, which includes this file, defines FSSIM_TILES_ONLY:
 * its module has no use for float_ssim's downscale. */
#ifndef FSSIM_TILES_ONLY
extern "C" __global__ void __launch_bounds__(FSSIM_DECIMATE_THREADS)
    fssim_decimate_8(FssimDecimateArgs a)
{
    fssim_decimate_thread<SSIM_SOURCE_8>(a, FSSIM_GRID);
}

extern "C" __global__ void __launch_bounds__(FSSIM_DECIMATE_THREADS)
    fssim_decimate_16(FssimDecimateArgs a)
{
    fssim_decimate_thread<SSIM_SOURCE_16>(a, FSSIM_GRID);
}
#endif

extern "C" __global__ void __launch_bounds__(SSIM_THREADS) iqa_ssim_tiles(SsimArgs a)
{
    __shared__ SsimShared sh;
    const unsigned block = blockIdx.x, thread = threadIdx.x;
    ssim_load(a, block, thread, sh);
    __syncthreads();
    ssim_hpass(thread, sh);
    __syncthreads();
    double acc[SSIM_SUMS];
    ssim_vpass(a, block, thread, sh, acc);
    __syncthreads();
    ssim_sums_store(thread, sh, acc);
    __syncthreads();
    for (unsigned half = SSIM_THREADS / 2; half > 0; half >>= 1) {
        ssim_sums_step(thread, half, sh);
        __syncthreads();
    }
    if (thread == 0) ssim_sums_write(a, block, sh);
}

#endif /* __CUDACC__ */
