/*
 * float_ansnr's CUDA twin: the rows' float sums of src/metrics/float_ansnr.c,
 * bit for bit; the host adds the rows in float, in row order, and finishes
 * through the C reference's own float_ansnr_write() (float_ansnr_cuda.c).
 *
 * Every value the C reference computes here is a float computed with the
 * same operations in the same order, so the device gives the same bits
 * (the fatbin is built with --fmad=false):
 *   - the samples converted as picture_float_row() does, (float)d + offset
 *     at 8 bits, (float)d / scaler + offset above (here d * (1 / scaler):
 *     the same real number, as scaler is a power of two, so the same
 *     rounding);
 *   - each filtered sample a float sum over the kernel's rows (in order,
 *     from 0) of float sums along the row (in order, from 0) of weight *
 *     sample, with the weights of src/metrics/float_ansnr.h and libvmaf's
 *     mirror (-i reads i, n - 1 + i reads n - i);
 *   - per row, sig_row = sum of r * r and noise_row = sum of (r - d) *
 *     (r - d), each a float sum from x = 0 to w - 1.  These sums are
 *     sequential in the C reference, and a float sum's value depends on its
 *     order, so one thread of the row's block adds them in that order (the
 *     noise in a second warp, beside it).
 *
 * Block y computes row y in passes of FANSNR_CHUNK columns: every thread
 * stages the pass's converted source samples (3 reference rows, 5
 * distorted rows, mirrored columns) in shared memory, so that each sample
 * is converted once per row; then every thread filters columns into the
 * pass's squares; then threads 0 and 32 add them to the row's sums.  The
 * block writes sig_row at row_sums[y], noise_row at row_sums[h + y].  Per
 * 1080p row: 1920 dependent float additions in each of two threads, about
 * 8000 cycles, the rows at once across the SMs (20.6 KB of shared memory
 * a block: 10 blocks an SM, every row of a 1080p frame in one wave).
 *
 * The element code is __host__ __device__, so that
 * tests/test_float_simple_cuda_host.cpp runs it on the CPU.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "float_ansnr_args.h"
#include "gpu/cuda/float_chain.h"
#include "metrics/float_ansnr/float_ansnr.h"

#define FANSNR_FN __host__ __device__ __forceinline__
#ifdef __CUDACC__
#define FANSNR_UNROLL _Pragma("unroll")
#else
#define FANSNR_UNROLL
#endif

/* Columns per pass: their source samples and squares in shared memory. */
#define FANSNR_CHUNK 512

/* ---- element functions ---------------------------------------------------- */

/* Weight k (row-major) of the TAPS x TAPS filter; loops over k are
 * unrolled on the device, so the weights become constants. */
template <int TAPS>
FANSNR_FN float fansnr_weight(int k)
{
    if constexpr (TAPS == ANSNR_REF_TAPS) {
        const float c[ANSNR_REF_TAPS * ANSNR_REF_TAPS] = { ANSNR_REF_WEIGHTS(ANSNR_REF_WEIGHT) };
        return c[k];
    } else {
        const float c[ANSNR_DIS_TAPS * ANSNR_DIS_TAPS] = { ANSNR_DIS_WEIGHTS(ANSNR_DIS_WEIGHT) };
        return c[k];
    }
}

/* libvmaf's ANSNR mirror (float_ansnr.c's ansnr_mirror). */
FANSNR_FN int fansnr_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 1 : i;
}

/* Sample x of a row, converted as picture_float_row() with ANSNR_OFFSET. */
template <typename T>
FANSNR_FN float fansnr_sample(const uint8_t *row, int x, float inv_scaler)
{
    if constexpr (sizeof(T) == 1)
        return (float)((const T *)row)[x] + ANSNR_OFFSET;
    else
        return (float)((const T *)row)[x] * inv_scaler + ANSNR_OFFSET;
}

/* The source rows of output row y: mirrored row indices, as the C
 * reference's ring gives them. */
struct FansnrRows {
    const uint8_t *ref[ANSNR_REF_TAPS], *dis[ANSNR_DIS_TAPS];
};

FANSNR_FN FansnrRows fansnr_rows(const FloatAnsnrArgs &a, int y)
{
    FansnrRows rows;
    FANSNR_UNROLL
    for (int i = 0; i < ANSNR_REF_TAPS; i++)
        rows.ref[i] = a.ref + (size_t)fansnr_mirror(y - ANSNR_REF_TAPS / 2 + i, a.h) * a.stride;
    FANSNR_UNROLL
    for (int i = 0; i < ANSNR_DIS_TAPS; i++)
        rows.dis[i] = a.dist + (size_t)fansnr_mirror(y - ANSNR_DIS_TAPS / 2 + i, a.h) * a.stride;
    return rows;
}

/* The converted samples of one pass's source rows: columns x0 - 2 ... x0 +
 * n + 1 of the pass's n columns from x0, mirrored (the C reference's
 * padded rows), at index column - (x0 - 2); and the squares of the pass. */
#define FANSNR_PAD (ANSNR_DIS_TAPS / 2)
#define FANSNR_PITCH (FANSNR_CHUNK + 2 * FANSNR_PAD)

struct FansnrShared {
    float ref[ANSNR_REF_TAPS][FANSNR_PITCH];
    float dis[ANSNR_DIS_TAPS][FANSNR_PITCH];
    float sig[FANSNR_CHUNK], noise[FANSNR_CHUNK];
};

/* Columns of the pass starting at x0. */
FANSNR_FN int fansnr_chunk(int w, int x0)
{
    return w - x0 < FANSNR_CHUNK ? w - x0 : FANSNR_CHUNK;
}

/* One thread's share of staging a pass: columns i = thread, thread +
 * threads, ... of every source row. */
template <typename T>
FANSNR_FN void fansnr_stage_thread(const FloatAnsnrArgs &a, const FansnrRows &rows, int x0,
                                   unsigned thread, unsigned threads, FansnrShared &sh)
{
    const int n = fansnr_chunk(a.w, x0) + 2 * FANSNR_PAD;
    for (int i = (int)thread; i < n; i += (int)threads) {
        const int c = fansnr_mirror(x0 - FANSNR_PAD + i, a.w);
        FANSNR_UNROLL
        for (int r = 0; r < ANSNR_REF_TAPS; r++)
            sh.ref[r][i] = fansnr_sample<T>(rows.ref[r], c, a.inv_scaler);
        FANSNR_UNROLL
        for (int r = 0; r < ANSNR_DIS_TAPS; r++)
            sh.dis[r][i] = fansnr_sample<T>(rows.dis[r], c, a.inv_scaler);
    }
}

/* One filtered sample: float_ansnr.c's filter_row() at column x0 + i of the
 * staged rows. */
template <int TAPS>
FANSNR_FN float fansnr_filter(const float (*rows)[FANSNR_PITCH], int i)
{
    const int first = i + FANSNR_PAD - TAPS / 2; /* column x0 + i - TAPS / 2 */
    float out = 0.0f;
    FANSNR_UNROLL
    for (int r = 0; r < TAPS; r++) {
        float inner = 0.0f;
        FANSNR_UNROLL
        for (int j = 0; j < TAPS; j++) inner += fansnr_weight<TAPS>(r * TAPS + j) * rows[r][first + j];
        out += inner;
    }
    return out;
}

/* One thread's share of a pass's squares: columns i = thread, thread +
 * threads, ...: sig[i] = r * r, noise[i] = (r - d) * (r - d). */
FANSNR_FN void fansnr_fill_thread(const FloatAnsnrArgs &a, int x0, unsigned thread,
                                  unsigned threads, FansnrShared &sh)
{
    const int n = fansnr_chunk(a.w, x0);
    for (int i = (int)thread; i < n; i += (int)threads) {
        const float r = fansnr_filter<ANSNR_REF_TAPS>(sh.ref, i);
        const float d = fansnr_filter<ANSNR_DIS_TAPS>(sh.dis, i);
        sh.sig[i] = r * r;
        sh.noise[i] = (r - d) * (r - d);
    }
}

/* ---- kernels ---------------------------------------------------------------- */

#ifdef __CUDACC__
template <typename T>
__device__ __forceinline__ void fansnr_row(const FloatAnsnrArgs &a)
{
    __shared__ FansnrShared sh;
    const int y = blockIdx.x;
    const FansnrRows rows = fansnr_rows(a, y);
    float sig_row = 0.0f, noise_row = 0.0f;
    /* Per pass: stage | fill | sums.  A pass's staging may overlap the
     * previous pass's sums (they read only sig[] and noise[]); its fill
     * waits for both. */
    for (int x0 = 0; x0 < a.w; x0 += FANSNR_CHUNK) {
        fansnr_stage_thread<T>(a, rows, x0, threadIdx.x, blockDim.x, sh);
        __syncthreads();
        fansnr_fill_thread(a, x0, threadIdx.x, blockDim.x, sh);
        __syncthreads();
        const int n = fansnr_chunk(a.w, x0);
        if (threadIdx.x == 0)
            sig_row = float_chain_sum(sig_row, sh.sig, n);
        else if (threadIdx.x == 32)
            noise_row = float_chain_sum(noise_row, sh.noise, n);
    }
    if (threadIdx.x == 0)
        a.row_sums[y] = sig_row;
    else if (threadIdx.x == 32)
        a.row_sums[a.h + y] = noise_row;
}

extern "C" __global__ void __launch_bounds__(FANSNR_THREADS) float_ansnr_8bit(FloatAnsnrArgs a)
{
    fansnr_row<uint8_t>(a);
}

extern "C" __global__ void __launch_bounds__(FANSNR_THREADS) float_ansnr_16bit(FloatAnsnrArgs a)
{
    fansnr_row<uint16_t>(a);
}
#endif
