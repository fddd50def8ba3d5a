/*
 * Float motion's CUDA twin: the SADs of src/metrics/float_motion.c on the
 * device, bit for bit; the host adds the rows' sums and writes the keys
 * through the C reference's own float_motion_put() (float_motion_cuda.c).
 *
 * Frame i >= 1 reads the reference luma of frames i - 1 (prev), i (cur)
 * and, from i = 2 on, i - 2 (prev2), where the backend keeps them, and
 * blurs each again (as libvmaf's per-frame scores need only these): one
 * launch, one block per `rows_per_block` rows, the row cut in segments of
 * `segment` columns; per segment three phases with a barrier after each:
 *   0: the vertical pass of the blur at the segment's columns and `radius`
 *      mirrored or neighbouring columns on each side, every picture, into
 *      shared memory;
 *   1: the horizontal pass at each column of the segment and
 *      |prev - cur| (and |prev - prev2|), into shared memory;
 *   2: one thread per row and SAD adds the segment's values to the row's
 *      float sum, in column order;
 * and a last phase writes each row's sums: SAD(prev, cur) = score[i] and
 * SAD(prev, prev2) = score[i - 1], which the C reference computes the same
 * way or keeps from frame i - 1 (|a - b| = |b - a| exactly).  The C
 * reference adds fabs() of each float difference through double into a
 * float: the sum of two floats rounded to double and then to float is
 * their float sum (53 >= 2 * 24 + 2 bits), so the device adds in float.
 * The host adds the rows in float in row order, as the reference does.
 *
 * Every stage is a __host__ __device__ function of one thread (a phase is
 * one thread's share of it); the __global__ wrapper at the end maps CUDA's
 * indices onto it and puts the barriers between the phases.  The blur's
 * taps are summed from 0.0f in the reference's order, vertical pass first;
 * the fatbin is built with --fmad=false.
 * tests/test_float_vif_adm_motion_cuda_host.cpp runs the same functions on the CPU.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "gpu/cuda/float_chain.h"
#include "float_motion_args.h"

#define FMOT_FN __host__ __device__ __forceinline__
#ifdef __CUDACC__
#define FMOT_UNROLL _Pragma("unroll")
#else
#define FMOT_UNROLL
#endif

enum { FMOT_PREV, FMOT_CUR, FMOT_PREV2 };

/* Sample (x, y) of picture p on the 8-bit scale less 128, as
 * picture_float_row() makes it (the division by 2^(bitdepth - 8) is exact,
 * so it is the multiplication by its inverse). */
template <typename T>
FMOT_FN float fmot_load(const FmotArgs &a, int p, int x, int y)
{
    const uint8_t *base = p == FMOT_PREV ? a.pic[0] : p == FMOT_CUR ? a.pic[1] : a.pic[2];
    const unsigned v = ((const T *)(base + (size_t)y * a.stride))[x];
    return sizeof(T) == 1 ? (float)v + -128.0f : (float)v * a.inv_scaler + -128.0f;
}

/* The vertical pass of picture p at column x (inside) of row y:
 * float_motion.c's motion_blur(), row[x] += fk * src[x] from 0.0f. */
template <typename T, int TAPS>
FMOT_FN float fmot_vertical(const FmotArgs &a, int p, int x, int y)
{
    const int r = TAPS / 2;
    float acc = 0.0f;
    FMOT_UNROLL
    for (int k = 0; k < TAPS; k++)
        acc += a.filter[k] * fmot_load<T>(a, p, x, float_motion_mirror(y - r + k, a.h));
    return acc;
}

/* The vertical pass of picture p at column x (inside) of the ROWS rows
 * from y0 (those from row h on are left alone), into out[row * stride]:
 * fmot_vertical() of each, with each input row read once and added to every
 * output row it reaches, in tap order for each (input rows ascend; tap k
 * of output o is input row o + k), from 0.0f: bit for bit. */
template <typename T, int TAPS, int ROWS>
FMOT_FN void fmot_vertical_rows(const FmotArgs &a, int p, int x, int y0, float *out, int stride)
{
    constexpr int r = TAPS / 2;
    float acc[ROWS];
    FMOT_UNROLL
    for (int o = 0; o < ROWS; o++) acc[o] = 0.0f;
    const int valid = a.h - y0 < ROWS ? a.h - y0 : ROWS;
    FMOT_UNROLL
    for (int t = 0; t < ROWS + 2 * r; t++) {
        if (t < valid + 2 * r) {
            const float v = fmot_load<T>(a, p, x, float_motion_mirror(y0 - r + t, a.h));
            FMOT_UNROLL
            for (int o = 0; o < ROWS; o++) {
                const int k = t - o;
                if (k >= 0 && k < TAPS) acc[o] += a.filter[k] * v;
            }
        }
    }
    FMOT_UNROLL
    for (int o = 0; o < ROWS; o++)
        if (o < valid) out[o * stride] = acc[o];
}

/* The horizontal pass at one column, in[] the vertical pass from `radius`
 * columns to its left: dst[x] += fk * src[x] from 0.0f. */
template <int TAPS>
FMOT_FN float fmot_horizontal(const FmotArgs &a, const float *in)
{
    float acc = 0.0f;
    FMOT_UNROLL
    for (int k = 0; k < TAPS; k++) acc += a.filter[k] * in[k];
    return acc;
}

/* Shared memory of a block: the vertical passes [3][rows][segment + 2r],
 * the differences [2][rows][segment], the row sums [rows][2]. */
FMOT_FN unsigned fmot_shared_floats(int taps, int rows, int segment)
{
    return (unsigned)(3 * rows * (segment + 2 * (taps / 2)) + 2 * rows * segment + 2 * rows);
}

/* The phases of a block: three per segment, and the store. */
FMOT_FN unsigned fmot_phases(const FmotArgs &a)
{
    return 3 * (unsigned)((a.w + a.segment - 1) / a.segment) + 1;
}

/* Phase `phase` of block `block` (rows block * rows_per_block ...), the
 * share of thread tid of nthreads; TAPS is a.taps. */
template <typename T, int TAPS>
FMOT_FN void fmot_phase(const FmotArgs &a, unsigned block, unsigned phase, float *smem,
                        unsigned tid, unsigned nthreads)
{
    const int r = TAPS / 2, R = a.rows_per_block, S = a.segment, vw = S + 2 * r;
    const int P = a.pictures, sads = P - 1;
    float *v = smem;                       /* [3][R][vw] */
    float *diff = v + 3 * R * vw;          /* [2][R][S] */
    float *acc = diff + 2 * R * S;         /* [R][2] */
    const int y0 = (int)block * R;
    const unsigned segments = (unsigned)((a.w + S - 1) / S);

    if (phase == 3 * segments) {
        for (unsigned e = tid; e < (unsigned)(2 * R); e += nthreads) {
            const int y = y0 + (int)e / 2, c = (int)e % 2;
            if (y < a.h && c < sads) a.rows[2 * (size_t)y + c] = acc[e];
        }
        return;
    }
    const int seg = (int)(phase / 3), part = (int)(phase % 3);
    const int x0 = seg * S, n = a.w - x0 < S ? a.w - x0 : S;
    if (part == 0 && R == FMOT_ROWS) {
        /* a column's rows together, into v[(p R + row) vw + i] */
        const int cols = n + 2 * r;
        for (unsigned e = tid; e < (unsigned)(P * cols); e += nthreads) {
            const int p = (int)e / cols, i = (int)e % cols;
            fmot_vertical_rows<T, TAPS, FMOT_ROWS>(a, p, float_motion_mirror(x0 - r + i, a.w), y0,
                                                   v + p * R * vw + i, vw);
        }
    } else if (part == 0) {
        const int cols = n + 2 * r;
        for (unsigned e = tid; e < (unsigned)(P * R * cols); e += nthreads) {
            const int p = (int)e / (R * cols), row = (int)e / cols % R, i = (int)e % cols;
            const int y = y0 + row;
            if (y >= a.h) continue;
            v[(p * R + row) * vw + i] =
                fmot_vertical<T, TAPS>(a, p, float_motion_mirror(x0 - r + i, a.w), y);
        }
    } else if (part == 1) {
        for (unsigned e = tid; e < (unsigned)(R * n); e += nthreads) {
            const int row = (int)e / n, i = (int)e % n;
            if (y0 + row >= a.h) continue;
            const float prev = fmot_horizontal<TAPS>(a, v + (FMOT_PREV * R + row) * vw + i);
            const float cur = fmot_horizontal<TAPS>(a, v + (FMOT_CUR * R + row) * vw + i);
            diff[row * S + i] = fabsf(prev - cur);
            if (sads > 1) {
                const float prev2 = fmot_horizontal<TAPS>(a, v + (FMOT_PREV2 * R + row) * vw + i);
                diff[(R + row) * S + i] = fabsf(prev - prev2);
            }
        }
    } else {
        for (unsigned e = tid; e < (unsigned)(2 * R); e += nthreads) {
            const int row = (int)e / 2, c = (int)e % 2;
            if (y0 + row >= a.h || c >= sads) continue;
            acc[e] = float_chain_sum(seg == 0 ? 0.0f : acc[e], diff + (c * R + row) * S, n);
        }
    }
}

/* ---- kernels ------------------------------------------------------------- */
#ifdef __CUDACC__

extern __shared__ float fmot_shared[];

template <typename T, int TAPS>
__device__ void fmot_block(const FmotArgs &a)
{
    const unsigned phases = fmot_phases(a);
    for (unsigned p = 0; p < phases; p++) {
        fmot_phase<T, TAPS>(a, blockIdx.x, p, fmot_shared, threadIdx.x, blockDim.x);
        __syncthreads();
    }
}

#define FMOT_KERNEL(name, T, taps)                                                 \
    extern "C" __global__ void __launch_bounds__(FMOT_THREADS) name(FmotArgs a) \
    {                                                                              \
        fmot_block<T, taps>(a);                                                    \
    }

FMOT_KERNEL(fmot_sad_8_5, uint8_t, 5)
FMOT_KERNEL(fmot_sad_8_3, uint8_t, 3)
FMOT_KERNEL(fmot_sad_16_5, uint16_t, 5)
FMOT_KERNEL(fmot_sad_16_3, uint16_t, 3)
#endif /* __CUDACC__ */
