/*
 * PSNR's CUDA twin: the sum of squared errors of each plane, as exact
 * 64-bit integers.  Block (x, p) sums rows x * rows_per_block ... of plane
 * p and writes one partial; the host adds the partials of a plane.
 *
 * The element code is __host__ __device__, so that
 * tests/test_psnr_motion_cuda_host.cpp runs it on the CPU.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "psnr_args.h"
#ifdef __CUDACC__
#include "gpu/cuda/reduce.cuh"
#endif

/* One thread of block (block, plane): its columns of the block's rows. */
template <typename T>
__host__ __device__ __forceinline__ unsigned long long psnr_sse_thread(const PsnrArgs &a,
                                                                       unsigned block,
                                                                       unsigned plane,
                                                                       unsigned thread,
                                                                       unsigned threads)
{
    const unsigned w = a.width[plane], h = a.height[plane];
    const unsigned y0 = block * a.rows_per_block;
    unsigned long long sse = 0;
    for (unsigned y = y0; y < y0 + a.rows_per_block && y < h; y++) {
        const T *r = (const T *)(a.ref[plane] + y * a.stride[plane]);
        const T *d = (const T *)(a.dist[plane] + y * a.stride[plane]);
        for (unsigned x = thread; x < w; x += threads) {
            const long long e = (long long)r[x] - (long long)d[x];
            sse += (unsigned long long)(e * e);
        }
    }
    return sse;
}

#ifdef __CUDACC__
template <typename T>
__device__ __forceinline__ void sse_rows(const PsnrArgs &a)
{
    unsigned long long sse = psnr_sse_thread<T>(a, blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x);
    sse = block_sum(sse);
    if (threadIdx.x == 0) a.partials[blockIdx.y * gridDim.x + blockIdx.x] = sse;
}

extern "C" __global__ void __launch_bounds__(PSNR_THREADS) psnr_sse_8bit(PsnrArgs a)
{
    sse_rows<uint8_t>(a);
}

extern "C" __global__ void __launch_bounds__(PSNR_THREADS) psnr_sse_16bit(PsnrArgs a)
{
    sse_rows<uint16_t>(a);
}
#endif
