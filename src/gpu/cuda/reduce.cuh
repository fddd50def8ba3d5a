/*
 * Block-wide sums of 64-bit integers: a warp shuffle tree, then one warp
 * over the warps' sums (warps of 32 lanes on any GPU: lanes.cuh).  Integers, so the order cannot change the result:
 * each block writes one partial and the host adds them.
 */
#ifndef QUALE_SRC_CUDA_REDUCE_CUH
#define QUALE_SRC_CUDA_REDUCE_CUH

#include "lanes.cuh"

template <typename T>
__device__ __forceinline__ T warp_sum(T v)
{
    for (int offset = 16; offset > 0; offset >>= 1) v += lanes_shfl_down(v, offset);
    return v;
}

/* Returns the block's sum in thread 0; every thread of the block must call
 * it.  blockDim.x must be a multiple of 32, at most 1024. */
template <typename T>
__device__ __forceinline__ T block_sum(T v)
{
    __shared__ T warp_sums[32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? warp_sums[lane] : T(0);
    if (warp == 0) v = warp_sum(v);
    __syncthreads(); /* warp_sums may be reused by a following call */
    return v;
}

#endif /* QUALE_SRC_CUDA_REDUCE_CUH */
