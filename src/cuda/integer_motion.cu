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
 */
#include <stdint.h>

#include "integer_motion_args.h"
#include "reduce.cuh"

#define SEGMENT MOTION_SEGMENT

__device__ __forceinline__ int mirror(int i, int size)
{
    if (i < 0) return -i;
    if (i >= size) return 2 * size - i - 2;
    return i;
}

template <typename T>
__device__ void motion_sad_row(const uint8_t *prev, const uint8_t *cur, unsigned long long stride,
                               int w, int h, int bitdepth, uint32_t *row_sad)
{
    __shared__ int32_t v[SEGMENT + 4];
    const int y = blockIdx.y;
    const int x0 = blockIdx.x * SEGMENT;
    const long long round_v = 1ll << (bitdepth - 1);

    const T *a[5], *b[5];
    for (int k = 0; k < 5; k++) {
        const int r = mirror(y - 2 + k, h);
        a[k] = (const T *)(prev + r * stride);
        b[k] = (const T *)(cur + r * stride);
    }
    /* v[i] holds the vertical pass of column x0 - 2 + i. */
    for (int i = threadIdx.x; i < SEGMENT + 4; i += blockDim.x) {
        const int x = x0 - 2 + i;
        if (x >= w + 2) break;
        const int c = mirror(x, w);
        const long long outer = (long long)((int)a[0][c] - (int)b[0][c]) + ((int)a[4][c] - (int)b[4][c]);
        const long long inner = (long long)((int)a[1][c] - (int)b[1][c]) + ((int)a[3][c] - (int)b[3][c]);
        const long long centre = (int)a[2][c] - (int)b[2][c];
        const long long sum = 3571 * outer + 16004 * inner + 26386 * centre;
        v[i] = (int32_t)((sum + round_v) >> bitdepth);
    }
    __syncthreads();

    uint32_t sad = 0;
    for (int i = threadIdx.x; i < SEGMENT && x0 + i < w; i += blockDim.x) {
        const long long sum = 3571ll * ((long long)v[i] + v[i + 4]) +
                              16004ll * ((long long)v[i + 1] + v[i + 3]) + 26386ll * v[i + 2];
        const int32_t u = (int32_t)((sum + (1 << 15)) >> 16);
        sad += (uint32_t)(u < 0 ? -u : u);
    }
    sad = block_sum(sad);
    if (threadIdx.x == 0) atomicAdd(&row_sad[y], sad);
}

extern "C" __global__ void __launch_bounds__(MOTION_THREADS) motion_sad_8bit(MotionArgs a)
{
    motion_sad_row<uint8_t>(a.prev, a.cur, a.stride, a.w, a.h, 8, a.row_sad);
}

extern "C" __global__ void __launch_bounds__(MOTION_THREADS) motion_sad_16bit(MotionArgs a)
{
    motion_sad_row<uint16_t>(a.prev, a.cur, a.stride, a.w, a.h, a.bitdepth, a.row_sad);
}
