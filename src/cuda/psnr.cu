/*
 * PSNR's CUDA twin: the sum of squared errors of each plane, as exact
 * 64-bit integers.  Block (x, p) sums rows x * rows_per_block ... of plane
 * p and writes one partial; the host adds the partials of a plane.
 */
#include <stdint.h>

#include "psnr_args.h"
#include "reduce.cuh"

template <typename T>
__device__ void sse_rows(const PsnrArgs &a)
{
    const unsigned p = blockIdx.y;
    const unsigned w = a.width[p], h = a.height[p];
    const unsigned y0 = blockIdx.x * a.rows_per_block;
    unsigned long long sse = 0;
    for (unsigned y = y0; y < y0 + a.rows_per_block && y < h; y++) {
        const T *r = (const T *)(a.ref[p] + y * a.stride[p]);
        const T *d = (const T *)(a.dist[p] + y * a.stride[p]);
        for (unsigned x = threadIdx.x; x < w; x += blockDim.x) {
            const long long e = (long long)r[x] - (long long)d[x];
            sse += (unsigned long long)(e * e);
        }
    }
    sse = block_sum(sse);
    if (threadIdx.x == 0) a.partials[p * gridDim.x + blockIdx.x] = sse;
}

extern "C" __global__ void __launch_bounds__(PSNR_THREADS) psnr_sse_8bit(PsnrArgs a)
{
    sse_rows<uint8_t>(a);
}

extern "C" __global__ void __launch_bounds__(PSNR_THREADS) psnr_sse_16bit(PsnrArgs a)
{
    sse_rows<uint16_t>(a);
}
