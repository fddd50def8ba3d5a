/*
 * Warps of 32 lanes on any GPU.  The kernels reduce, scan and vote in
 * groups of 32 threads (lane = threadIdx.x & 31, warp = threadIdx.x >> 5),
 * as NVIDIA's warps are.  An AMD GPU's wavefront may have 64 lanes: there
 * the shuffles are confined to their 32-lane half (width 32), and a
 * ballot, which gives all 64 lanes' votes, is cut to the half the thread
 * is in.  So every group sees the same partners and the same bits on
 * either hardware, and the sums come out in the same order, bit for bit.
 *
 * On CUDA these are the _sync intrinsics over the full warp, as the
 * kernels wrote them before (the same instructions).
 */
#ifndef QUALE_SRC_CUDA_LANES_CUH
#define QUALE_SRC_CUDA_LANES_CUH

#if defined(__HIP_PLATFORM_AMD__)

template <typename T>
__device__ __forceinline__ T lanes_shfl_down(T v, unsigned offset)
{
    return __shfl_down(v, offset, 32);
}

template <typename T>
__device__ __forceinline__ T lanes_shfl_up(T v, unsigned offset)
{
    return __shfl_up(v, offset, 32);
}

/* The votes of the thread's 32-lane group, lane i in bit i. */
__device__ __forceinline__ unsigned lanes_ballot(bool vote)
{
    return (unsigned)(__ballot(vote) >> (__lane_id() & 32u));
}

#else

template <typename T>
__device__ __forceinline__ T lanes_shfl_down(T v, unsigned offset)
{
    return __shfl_down_sync(0xffffffffu, v, offset);
}

template <typename T>
__device__ __forceinline__ T lanes_shfl_up(T v, unsigned offset)
{
    return __shfl_up_sync(0xffffffffu, v, offset);
}

__device__ __forceinline__ unsigned lanes_ballot(bool vote)
{
    return __ballot_sync(0xffffffffu, vote);
}

#endif

#endif /* QUALE_SRC_CUDA_LANES_CUH */
