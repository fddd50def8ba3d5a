/*
 * float_psnr's CUDA twin: the noise sum of src/metrics/float_psnr.c as an
 * exact integer, in units of 2^-2(bitdepth - 8) (float_psnr_noise() of
 * src/metrics/float_psnr.h turns it into the double sum):
 *   - where the C reference's sums are exact (picture_float_sums_exact:
 *     up to 12 bits) it sums the integer SSE, as it does;
 *   - else (16 bits) it sums libvmaf's float squares, each computed with
 *     the C's float operations, (float)a / s - (float)b / s squared in
 *     float, times s^2: an integer (the difference is exact, the square a
 *     24-bit rounding of e^2 scaled by a power of two).  That is the C's
 *     double sum exactly while the sum stays below 2^53 units (every 16-bit
 *     picture up to 1920x1080 and more; above, the C's sum rounds and this
 *     is the exact value, about 1e-16 relative away).
 *
 * Block b sums rows b * rows ... of the luma plane and writes one partial;
 * the host adds the partials (integers: any order gives the same sum).
 *
 * The element code is __host__ __device__, so that
 * tests/test_float_simple_cuda_host.cpp runs it on the CPU; the fatbin is
 * built with --fmad=false.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "float_psnr_args.h"
#ifdef __CUDACC__
#include "gpu/cuda/reduce.cuh"
#endif

#define FPSNR_FN __host__ __device__ __forceinline__

/* The square of one difference, in units of 2^-2(bitdepth - 8). */
FPSNR_FN unsigned long long fpsnr_square(unsigned a, unsigned b, bool float_squares, float scaler)
{
    if (!float_squares) {
        const long long e = (long long)a - (long long)b;
        return (unsigned long long)(e * e);
    }
    /* float_psnr.c's luma_noise_float(), then the exact scaling. */
    const float diff = (float)a / scaler - (float)b / scaler;
    const float square = diff * diff;
    return (unsigned long long)(square * (scaler * scaler));
}

/* One thread of block `block`: its columns of the block's rows. */
template <typename T>
FPSNR_FN unsigned long long fpsnr_thread(const FloatPsnrArgs &a, unsigned block, unsigned thread,
                                         unsigned threads)
{
    unsigned long long sum = 0;
    const unsigned y0 = block * a.rows;
    for (unsigned y = y0; y < y0 + a.rows && y < a.h; y++) {
        const T *r = (const T *)(a.pic[0] + (size_t)y * a.stride);
        const T *d = (const T *)(a.pic[1] + (size_t)y * a.stride);
#ifdef __CUDACC__
#pragma unroll 4
#endif
        for (unsigned x = thread; x < a.w; x += threads)
            sum += fpsnr_square(r[x], d[x], a.float_squares != 0, a.scaler);
    }
    return sum;
}

#ifdef __CUDACC__
template <typename T>
__device__ __forceinline__ void fpsnr_block(const FloatPsnrArgs &a)
{
    unsigned long long sum = fpsnr_thread<T>(a, blockIdx.x, threadIdx.x, blockDim.x);
    sum = block_sum(sum);
    if (threadIdx.x == 0) a.partials[blockIdx.x] = sum;
}

extern "C" __global__ void __launch_bounds__(FPSNR_THREADS) float_psnr_8bit(FloatPsnrArgs a)
{
    fpsnr_block<uint8_t>(a);
}

extern "C" __global__ void __launch_bounds__(FPSNR_THREADS) float_psnr_16bit(FloatPsnrArgs a)
{
    fpsnr_block<uint16_t>(a);
}
#endif
