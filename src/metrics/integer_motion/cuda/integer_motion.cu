/*
 * Integer motion's CUDA twin: the SAD of the 5-tap blur of (previous -
 * current) reference luma, exactly as src/metrics/integer_motion_tmpl.h
 * computes it: vertical taps with rounding (sum + 2^(bd-1)) >> bd, then
 * horizontal taps with (sum + 2^15) >> 16, then |.|.  Rows and columns
 * reflect at the edges without repeating the edge sample (libvmaf's CPU
 * rule: -i below 0, 2 * size - i - 2 past the end).
 *
 * Block (x, y) filters columns [x * SEGMENT, (x + 1) * SEGMENT) of row y:
 * it computes the vertical pass for its columns and two mirrored or
 * neighbouring columns on each side into shared memory, then the
 * horizontal pass.  The row's SAD is a 32-bit sum in the C reference, so
 * the segments add into a 32-bit word per row with atomicAdd: integer
 * addition modulo 2^32 gives the same word in any order.  The host adds
 * the rows in 64 bits.
 *
 * The element code (the two passes of one thread) is __host__ __device__,
 * so that tests/test_psnr_motion_cuda_host.cpp runs it on the CPU.
 */
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "integer_motion_args.h"
#ifdef __CUDACC__
#include "gpu/cuda/reduce.cuh"
#endif

#define SEGMENT MOTION_SEGMENT
#define MOTION_FN __host__ __device__ __forceinline__

MOTION_FN int motion_mirror(int i, int size)
{
    if (i < 0) return -i;
    if (i >= size) return 2 * size - i - 2;
    return i;
}

/* The vertical pass of block (bx, y), thread `thread` of `threads`: v[i]
 * holds the pass of column x0 - 2 + i. */
template <typename T>
MOTION_FN void motion_vertical_thread(const uint8_t *prev, const uint8_t *cur,
                                      unsigned long long stride, int w, int h, int bitdepth,
                                      int bx, int y, int thread, int threads, int32_t *v)
{
    const int x0 = bx * SEGMENT;
    const long long round_v = 1ll << (bitdepth - 1);
    const T *p[5], *c[5];
    for (int k = 0; k < 5; k++) {
        const int r = motion_mirror(y - 2 + k, h);
        p[k] = (const T *)(prev + r * stride);
        c[k] = (const T *)(cur + r * stride);
    }
    for (int i = thread; i < SEGMENT + 4; i += threads) {
        const int x = x0 - 2 + i;
        if (x >= w + 2) break;
        const int m = motion_mirror(x, w);
        const long long outer = (long long)((int)p[0][m] - (int)c[0][m]) + ((int)p[4][m] - (int)c[4][m]);
        const long long inner = (long long)((int)p[1][m] - (int)c[1][m]) + ((int)p[3][m] - (int)c[3][m]);
        const long long centre = (int)p[2][m] - (int)c[2][m];
        const long long sum = 3571 * outer + 16004 * inner + 26386 * centre;
        v[i] = (int32_t)((sum + round_v) >> bitdepth);
    }
}

/* The horizontal pass and |.| of the same thread: its part of the SAD. */
MOTION_FN uint32_t motion_horizontal_thread(int w, int bx, int thread, int threads,
                                            const int32_t *v)
{
    const int x0 = bx * SEGMENT;
    uint32_t sad = 0;
    for (int i = thread; i < SEGMENT && x0 + i < w; i += threads) {
        const long long sum = 3571ll * ((long long)v[i] + v[i + 4]) +
                              16004ll * ((long long)v[i + 1] + v[i + 3]) + 26386ll * v[i + 2];
        const int32_t u = (int32_t)((sum + (1 << 15)) >> 16);
        sad += (uint32_t)(u < 0 ? -u : u);
    }
    return sad;
}

#ifdef __CUDACC__
template <typename T>
__device__ __forceinline__ void motion_sad_row(const uint8_t *prev, const uint8_t *cur,
                                               unsigned long long stride, int w, int h,
                                               int bitdepth, uint32_t *row_sad)
{
    __shared__ int32_t v[SEGMENT + 4];
    motion_vertical_thread<T>(prev, cur, stride, w, h, bitdepth, blockIdx.x, blockIdx.y,
                              threadIdx.x, blockDim.x, v);
    __syncthreads();
    uint32_t sad = motion_horizontal_thread(w, blockIdx.x, threadIdx.x, blockDim.x, v);
    sad = block_sum(sad);
    if (threadIdx.x == 0) atomicAdd(&row_sad[blockIdx.y], sad);
}

extern "C" __global__ void __launch_bounds__(MOTION_THREADS) motion_sad_8bit(MotionArgs a)
{
    motion_sad_row<uint8_t>(a.prev, a.cur, a.stride, a.w, a.h, 8, a.row_sad);
}

extern "C" __global__ void __launch_bounds__(MOTION_THREADS) motion_sad_16bit(MotionArgs a)
{
    motion_sad_row<uint16_t>(a.prev, a.cur, a.stride, a.w, a.h, a.bitdepth, a.row_sad);
}
#endif
