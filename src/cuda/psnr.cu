/*
 * PSNR's CUDA twin: the sum of squared errors of each plane, as exact
 * 64-bit integers.  Block (x, p) sums rows x * rows_per_block ... of plane
 * p and writes one partial; the host adds the partials of a plane.
 */
#include <stdint.h>

#include "psnr_args.h"
#include "reduce.cuh"

template <typename T>
__device__ void sse_rows(const PsnrPlanes &planes, unsigned rows_per_block,
                         unsigned long long *partials)
{
    const unsigned p = blockIdx.y;
    const unsigned w = planes.width[p], h = planes.height[p];
    const unsigned y0 = blockIdx.x * rows_per_block;
    unsigned long long sse = 0;
    for (unsigned y = y0; y < y0 + rows_per_block && y < h; y++) {
        const T *a = (const T *)(planes.ref[p] + y * planes.stride[p]);
        const T *b = (const T *)(planes.dist[p] + y * planes.stride[p]);
        for (unsigned x = threadIdx.x; x < w; x += blockDim.x) {
            const long long e = (long long)a[x] - (long long)b[x];
            sse += (unsigned long long)(e * e);
        }
    }
    sse = block_sum(sse);
    if (threadIdx.x == 0) partials[p * gridDim.x + blockIdx.x] = sse;
}

extern "C" __global__ void psnr_sse_8bit(PsnrPlanes planes, unsigned rows_per_block,
                                         unsigned long long *partials)
{
    sse_rows<uint8_t>(planes, rows_per_block, partials);
}

extern "C" __global__ void psnr_sse_16bit(PsnrPlanes planes, unsigned rows_per_block,
                                          unsigned long long *partials)
{
    sse_rows<uint16_t>(planes, rows_per_block, partials);
}
