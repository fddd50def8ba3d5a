/*
 * float_moment's CUDA twin: the sums of src/metrics/float_moment.c as exact
 * integers (float_moment_sums() of src/metrics/float_moment.h turns them
 * into the double sums):
 *   - first: the sum of the samples (the C's double sum of the converted
 *     samples is exact at every bit depth: it is this sum over scaler);
 *   - second: where the C reference's sums are exact
 *     (picture_float_sums_exact: up to 12 bits) the sum of the squared
 *     samples, as it computes; else (16 bits) the sum of libvmaf's float
 *     squares, each computed with the C's float operations ((float)d / s
 *     squared in float) times s^2: an integer.  That is the C's double sum
 *     exactly while it stays below 2^53 units (every 16-bit picture up to
 *     1920x1080; above, the C's sum rounds and this is the exact value,
 *     about 1e-16 relative away).
 *
 * Block (b, p) sums rows b * rows ... of picture p (0 reference, 1
 * distorted) and writes its two partials; the host adds the partials
 * (integers: any order gives the same sums).
 *
 * The element code is __host__ __device__, so that
 * tests/test_float_simple_cuda_host.cpp runs it on the CPU; the fatbin is
 * built with --fmad=false.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "float_moment_args.h"
#ifdef __CUDACC__
#include "gpu/cuda/reduce.cuh"
#endif

#define FMOMENT_FN __host__ __device__ __forceinline__

struct FloatMomentPartial {
    unsigned long long first, second;
};

/* The square of one sample, in units of 2^-2(bitdepth - 8). */
FMOMENT_FN unsigned long long fmoment_square(unsigned d, bool float_squares, float scaler)
{
    if (!float_squares) return (unsigned long long)d * d;
    /* float_moment.c's luma_sums_float(), then the exact scaling. */
    const float v = (float)d / scaler;
    const float square = v * v;
    return (unsigned long long)(square * (scaler * scaler));
}

/* One thread of block (block, picture): its columns of the block's rows. */
template <typename T>
FMOMENT_FN FloatMomentPartial fmoment_thread(const FloatMomentArgs &a, unsigned block,
                                             unsigned picture, unsigned thread, unsigned threads)
{
    FloatMomentPartial sum = { 0, 0 };
    const unsigned y0 = block * a.rows;
    /* a select, not an index: the arguments stay in constant memory */
    const uint8_t *pic = picture ? a.pic[1] : a.pic[0];
    for (unsigned y = y0; y < y0 + a.rows && y < a.h; y++) {
        const T *row = (const T *)(pic + (size_t)y * a.stride);
#ifdef __CUDACC__
#pragma unroll 4
#endif
        for (unsigned x = thread; x < a.w; x += threads) {
            const unsigned d = row[x];
            sum.first += d;
            sum.second += fmoment_square(d, a.float_squares != 0, a.scaler);
        }
    }
    return sum;
}

/* Where block (block, picture) writes its partial of sum k (0 first, 1
 * second), for a grid of `blocks` blocks a picture. */
FMOMENT_FN size_t fmoment_partial_index(unsigned picture, unsigned k, unsigned block,
                                        unsigned blocks)
{
    return ((size_t)picture * 2 + k) * blocks + block;
}

#ifdef __CUDACC__
template <typename T>
__device__ __forceinline__ void fmoment_block(const FloatMomentArgs &a)
{
    FloatMomentPartial sum = fmoment_thread<T>(a, blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x);
    const unsigned long long first = block_sum(sum.first);
    const unsigned long long second = block_sum(sum.second);
    if (threadIdx.x == 0) {
        a.partials[fmoment_partial_index(blockIdx.y, 0, blockIdx.x, gridDim.x)] = first;
        a.partials[fmoment_partial_index(blockIdx.y, 1, blockIdx.x, gridDim.x)] = second;
    }
}

extern "C" __global__ void __launch_bounds__(FMOMENT_THREADS) float_moment_8bit(FloatMomentArgs a)
{
    fmoment_block<uint8_t>(a);
}

extern "C" __global__ void __launch_bounds__(FMOMENT_THREADS) float_moment_16bit(FloatMomentArgs a)
{
    fmoment_block<uint16_t>(a);
}
#endif
