/*
 * Integer ADM's CUDA twin: the four DWT levels, decoupling, CSF, masking
 * and the 64-bit sums of every level on the device, bit for bit what
 * src/metrics/integer_adm.c computes; the host turns the 36 sums (per
 * level: den h, v, d; DLM num h, v, d; AIM num h, v, d) into the keys
 * through the C reference's own functions (integer_adm_cuda.c).
 *
 * Per level, four kernels on the slot's stream:
 *   dwt        one thread per output sample (i, j) of both pictures
 *              (blockIdx.y: 0 reference, 1 distorted): the vertical pass of
 *              the four mirrored columns 2j - 1 .. 2j + 2 and the
 *              horizontal pass over them, into bands a, h, v, d;
 *   den        one block per scored row: the row's sum of cubed reference
 *              details, rounded by the row shift, added to the level's sum;
 *   decouple   one thread per sample of the masking taps region: restored
 *              part over the reference details, additive impairment over
 *              the distorted details, and the masking planes (around,
 *              centre) of both, as the C reference's decouple() and
 *              masking_planes();
 *   masked     one block per scored row (blockIdx.y: 0 DLM, 1 AIM): the
 *              row's sum of max(|csf| - threshold, 0)^3, rounded by the row
 *              shift, added to the level's sum.
 * den reads the reference details before decouple overwrites them.
 *
 * Every stage is a __host__ __device__ function of one thread (it reads
 * only its inputs and writes only its own outputs); the __global__
 * wrappers at the end only map CUDA's indices onto them and, for the row
 * sums, add the threads' sums (integers: any order gives the same sum).
 * tests/test_integer_adm_cuda_host.cpp runs the same functions on the CPU.
 *
 * Integers wrap as the C reference's do (through unsigned arithmetic, so
 * that no step relies on signed overflow); the two float steps (the
 * one-degree angle test and the enhancement gain) are the reference's
 * double operations, with explicit round-to-nearest multiplies.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "integer_adm_args.h"

#define ADM_FN __host__ __device__ __forceinline__

/* ---- small exact helpers ---------------------------------------------- */

/* The DWT's source index: -1 -> 1, n -> n - 1, n + 1 -> n - 2. */
ADM_FN int adm_mirror(int k, int n)
{
    return k < 0 ? -k : k >= n ? 2 * n - k - 1 : k;
}

/* abs() of an int32 as the hardware does it: INT32_MIN stays INT32_MIN. */
ADM_FN int32_t adm_abs(int32_t v)
{
    return v < 0 ? (int32_t)(0u - (uint32_t)v) : v;
}

ADM_FN int adm_clz(uint32_t v)
{
#ifdef __CUDA_ARCH__
    return __clz((int)v);
#else
    return __builtin_clz(v);
#endif
}

/* A double multiply rounded once, whatever the compiler's contraction. */
ADM_FN double adm_dmul(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

/* Products that may wrap in the C reference's int32 / int64 arithmetic. */
ADM_FN int32_t adm_mul32(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a * (uint32_t)b);
}

ADM_FN int64_t adm_mul64(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* libvmaf's db2 analysis filters in Q15 over t[0..3] = x[2j - 1 .. 2j + 2]:
 * 32-bit sums at level 0 (|t| <= 32768), 64-bit at levels 1..3. */
ADM_FN int32_t adm_lo32(const int32_t *t)
{
    return 15826 * t[0] + 27411 * t[1] + 7345 * t[2] - 4240 * t[3];
}

ADM_FN int32_t adm_hi32(const int32_t *t)
{
    return 27411 * t[2] - 4240 * t[0] - 7345 * t[1] - 15826 * t[3];
}

ADM_FN int64_t adm_lo64(const int32_t *t)
{
    return 15826 * (int64_t)t[0] + 27411 * (int64_t)t[1] + 7345 * (int64_t)t[2] -
           4240 * (int64_t)t[3];
}

ADM_FN int64_t adm_hi64(const int32_t *t)
{
    return 27411 * (int64_t)t[2] - 4240 * (int64_t)t[0] - 7345 * (int64_t)t[1] -
           15826 * (int64_t)t[3];
}

/* ---- DWT ---------------------------------------------------------------- */

/* Level 0, output sample (i, j) of picture `image`: samples centred on 0
 * and brought back to 8 bits by the vertical pass (narrowed to int16),
 * Q16 horizontal pass; uint32 sums that wrap like libvmaf's with samples
 * above the bit depth. */
template <typename T>
ADM_FN void adm_dwt0_at(const AdmArgs &a, int image, int i, int j)
{
    const uint8_t *src = a.pic[image];
    const int bd = a.bitdepth;
    const uint32_t round = 1u << (bd - 1);
    const uint32_t offset = 46342u * round;
    const T *r[4];
    for (int k = 0; k < 4; k++)
        r[k] = (const T *)(src + (unsigned long long)adm_mirror(2 * i - 1 + k, a.pic_h) *
                                     a.pic_stride);
    int32_t lo[4], hi[4];
    for (int k = 0; k < 4; k++) {
        const int c = adm_mirror(2 * j - 1 + k, a.pic_w);
        const uint32_t s0 = r[0][c], s1 = r[1][c], s2 = r[2][c], s3 = r[3][c];
        const uint32_t l = 15826u * s0 + 27411u * s1 + 7345u * s2 - 4240u * s3 - offset;
        lo[k] = (int16_t)((int32_t)(l + round) >> bd);
        const uint32_t d = 27411u * s2 - 4240u * s0 - 7345u * s1 - 15826u * s3;
        hi[k] = (int16_t)((int32_t)(d + round) >> bd);
    }
    const long long x = (long long)i * a.stride + j;
    a.band[image][0][x] = (int16_t)((adm_lo32(lo) + 32768) >> 16);
    if (!a.details) return;
    a.band[image][2][x] = (int16_t)((adm_hi32(lo) + 32768) >> 16); /* v */
    a.band[image][1][x] = (int16_t)((adm_lo32(hi) + 32768) >> 16); /* h */
    a.band[image][3][x] = (int16_t)((adm_hi32(hi) + 32768) >> 16); /* d */
}

/* Levels 1..3 from the previous band a (in_w x in_h), 64-bit sums with the
 * level's rounding: (add, shift) vertical then horizontal. */
ADM_FN void adm_dwt123_at(const AdmArgs &a, int image, int i, int j)
{
    const int64_t va = a.scale == 1 ? 0 : 32768;
    const int vs = a.scale == 1 ? 0 : 16;
    const int64_t ha = a.scale == 2 ? 32768 : 16384;
    const int hs = a.scale == 2 ? 16 : 15;
    const int32_t *src = a.prev[image];
    const int32_t *r[4];
    for (int k = 0; k < 4; k++) r[k] = src + (long long)adm_mirror(2 * i - 1 + k, a.in_h) * a.stride;
    int32_t lo[4], hi[4];
    for (int k = 0; k < 4; k++) {
        const int c = adm_mirror(2 * j - 1 + k, a.in_w);
        const int32_t t[4] = { r[0][c], r[1][c], r[2][c], r[3][c] };
        lo[k] = (int32_t)((adm_lo64(t) + va) >> vs);
        hi[k] = (int32_t)((adm_hi64(t) + va) >> vs);
    }
    const long long x = (long long)i * a.stride + j;
    a.band[image][0][x] = (int32_t)((adm_lo64(lo) + ha) >> hs);
    a.band[image][2][x] = (int32_t)((adm_hi64(lo) + ha) >> hs); /* v */
    a.band[image][1][x] = (int32_t)((adm_lo64(hi) + ha) >> hs); /* h */
    a.band[image][3][x] = (int32_t)((adm_hi64(hi) + ha) >> hs); /* d */
}

/* ---- decoupling and masking planes -------------------------------------- */

/* 2^30 / i as the reference's table holds it (0 at 0). */
ADM_FN int32_t adm_reciprocal(int32_t i)
{
    if (i == 0) return 0;
    return i > 0 ? (int32_t)(1073741824 / i) : -(int32_t)(1073741824 / -i);
}

/* t / o in Q15 clamped to [0, 1]; level 0 from the int16 o. */
ADM_FN int32_t adm_ratio0(int32_t o, int32_t t)
{
    if (o == 0) return 32768;
    const int32_t k = (int32_t)(((int64_t)adm_reciprocal(o) * t + 16384) >> 15);
    return k < 0 ? 0 : k > 32768 ? 32768 : k;
}

/* Levels 1..3: o reduced to its 15 leading bits (rounded). */
ADM_FN int32_t adm_ratio123(int32_t o, int32_t t)
{
    if (o == 0) return 32768;
    uint32_t mag = o < 0 ? 0u - (uint32_t)o : (uint32_t)o;
    int shift = 0;
    if (mag >= 32768) {
        shift = 17 - adm_clz(mag);
        mag = (uint16_t)((mag + (1u << (shift - 1))) >> shift);
    }
    const int64_t sign = o < 0 ? -1 : 1;
    const int64_t round = (int32_t)(1u << (14 + shift));
    const int64_t k = (adm_mul64(adm_mul64(adm_reciprocal((int32_t)mag), t), sign) + round) >>
                      (15 + shift);
    return k < 0 ? 0 : k > 32768 ? 32768 : (int32_t)k;
}

/* Whether (oh, ov) and (th, tv) are within one degree, in the reference's
 * mix of float and double. */
ADM_FN bool adm_angle_within_1deg(int32_t oh, int32_t ov, int32_t th, int32_t tv,
                                  float cos_1deg_sq)
{
    const int64_t ot_dp = (int64_t)((uint64_t)adm_mul64(oh, th) + (uint64_t)adm_mul64(ov, tv));
    const int64_t o_mag_sq = (int64_t)((uint64_t)adm_mul64(oh, oh) + (uint64_t)adm_mul64(ov, ov));
    const int64_t t_mag_sq = (int64_t)((uint64_t)adm_mul64(th, th) + (uint64_t)adm_mul64(tv, tv));
    const double dp = (double)(float)ot_dp / 4096.0;
    const double o_mag = (double)(float)o_mag_sq / 4096.0;
    const double t_mag = (double)(float)t_mag_sq / 4096.0;
    return dp >= 0.0 &&
           adm_dmul(dp, dp) >= adm_dmul(adm_dmul((double)cos_1deg_sq, o_mag), t_mag);
}

/* around = sum over h, v, d of |csf| / 30, centre = sum of |csf| / 15 -
 * |csf| / 30, wrapping in 32 bits. */
template <bool LEVEL0>
ADM_FN void adm_mask_of(const AdmArgs &a, const int32_t v[3], int32_t *around, int32_t *centre)
{
    uint32_t sum_around = 0, sum_centre = 0;
    for (int b = 0; b < 3; b++) {
        int32_t flt, ctr;
        if (LEVEL0) {
            const uint32_t add = b == 2 ? 65535u : 16384u;
            const int shift = b == 2 ? 17 : 15;
            const int32_t c =
                (int16_t)((int32_t)(a.csf_q0[b] * (uint32_t)v[b] + add) >> shift);
            const int32_t m = c < 0 ? -c : c;
            flt = (int16_t)((4369 * m + 2048) >> 12);
            ctr = (int16_t)((8738 * m + 2048) >> 12);
        } else {
            const int32_t c =
                (int32_t)((adm_mul64((int64_t)a.csf_q32[b], v[b]) + (1 << 27)) >> 28);
            const int64_t m = adm_abs(c);
            flt = (int32_t)((143165577 * m + (int64_t)INT32_MIN) >> 32);
            ctr = (int32_t)((286331153 * m + (int64_t)INT32_MIN) >> 32);
        }
        sum_around += (uint32_t)flt;
        sum_centre += (uint32_t)ctr - (uint32_t)flt;
    }
    *around = (int32_t)sum_around;
    *centre = (int32_t)sum_centre;
}

/* Sample (i, j) of the taps region: the restored part goes over the
 * reference's h, v, d, the additive impairment over the distorted's, and
 * the masking planes of the impairment (for the DLM) and of the restored
 * part (for AIM) into mask[0..3]. */
template <bool LEVEL0>
ADM_FN void adm_decouple_at(const AdmArgs &a, int i, int j)
{
    const long long x = (long long)i * a.stride + j;
    int32_t o[3], t[3];
    for (int b = 0; b < 3; b++) {
        o[b] = a.band[0][1 + b][x];
        t[b] = a.band[1][1 + b][x];
    }
    const bool angle = adm_angle_within_1deg(o[0], o[1], t[0], t[1], a.cos_1deg_sq);
    int32_t rst[3], add[3];
    for (int b = 0; b < 3; b++) {
        const int32_t k = LEVEL0 ? adm_ratio0(o[b], t[b]) : adm_ratio123(o[b], t[b]);
        int32_t v = LEVEL0 ? (int32_t)(int16_t)((k * o[b] + 16384) >> 15)
                           : (int32_t)(((int64_t)k * o[b] + 16384) >> 15);
        if (angle && k > 0 && o[b] != 0) {
            const double g = adm_dmul((double)v, a.gain);
            const double tb = (double)t[b];
            v = (int32_t)(o[b] > 0 ? (g < tb ? g : tb) : (g > tb ? g : tb));
        }
        rst[b] = v;
        add[b] = LEVEL0 ? (int32_t)(int16_t)(t[b] - v) : (int32_t)((uint32_t)t[b] - (uint32_t)v);
    }
    adm_mask_of<LEVEL0>(a, add, &a.mask[0][x], &a.mask[1][x]);
    if (a.aim) adm_mask_of<LEVEL0>(a, rst, &a.mask[2][x], &a.mask[3][x]);
    for (int b = 0; b < 3; b++) {
        a.band[0][1 + b][x] = rst[b];
        a.band[1][1 + b][x] = add[b];
    }
}

/* ---- the sums ----------------------------------------------------------- */

/* The cube of reference detail b at x, rounded as the level does. */
template <bool LEVEL0>
ADM_FN uint64_t adm_den_term(const AdmArgs &a, int b, long long x)
{
    const int32_t o = a.band[0][1 + b][x];
    if (LEVEL0) {
        const uint64_t m = (uint16_t)(o < 0 ? -o : o);
        return m * m * m;
    }
    const uint64_t m = (uint32_t)adm_abs(o);
    return ((((m * m) + a.den_sq_add) >> a.den_sq) * m + a.den_cub_add) >> a.den_cub;
}

ADM_FN uint64_t adm_den_row_finish(const AdmArgs &a, uint64_t row)
{
    return (row + a.den_row_add) >> a.den_row_shift;
}

/* The masked cubes at (i, j) of the scored region, h, v, d: the restored
 * part against the impairment's masking (kind 0, DLM) or the impairment
 * against the restored part's (kind 1, AIM).  The 3x3 window reflects
 * across the first row and column (-1 -> 1) and repeats the last. */
template <bool LEVEL0>
ADM_FN void adm_masked_terms(const AdmArgs &a, int kind, int i, int j, uint64_t term[3])
{
    const int32_t *around = a.mask[2 * kind], *centre = a.mask[2 * kind + 1];
    const int32_t *const *src = kind == 0 ? a.band[0] + 1 : a.band[1] + 1;
    const int w = a.w, h = a.h;
    const long long up = (long long)(i == 0 ? 1 : i - 1) * a.stride;
    const long long mid = (long long)i * a.stride;
    const long long down = (long long)(i == h - 1 ? h - 1 : i + 1) * a.stride;
    uint32_t box = (uint32_t)centre[mid + j];
    for (int k = j - 1; k <= j + 1; k++) {
        const int c = k < 0 ? 1 : k >= w ? w - 1 : k;
        box += (uint32_t)around[up + c] + (uint32_t)around[mid + c] + (uint32_t)around[down + c];
    }
    const int32_t thr = (int32_t)box;
    for (int b = 0; b < 3; b++) {
        const int32_t s = src[b][mid + j];
        const int32_t c = LEVEL0 ? adm_mul32(s, (int32_t)a.csf_q0[b])
                                 : (int32_t)((adm_mul64(s, (int64_t)a.csf_q32[b]) + (1 << 27)) >> 28);
        int32_t m = (int32_t)((uint32_t)adm_abs(c) - ((uint32_t)thr << a.m_sub[b]));
        if (m < 0) m = 0;
        const int32_t m_sq = (int32_t)(((int64_t)m * m + a.m_sq_add[b]) >> a.m_sq[b]);
        term[b] = (uint64_t)(((int64_t)m_sq * m + a.m_cub_add[b]) >> a.m_cub[b]);
    }
}

ADM_FN uint64_t adm_masked_row_finish(const AdmArgs &a, uint64_t row)
{
    return (uint64_t)((int64_t)(row + (uint64_t)a.m_row_add) >> a.m_row_shift);
}

/* ---- threads -------------------------------------------------------------- */

/* Thread `thread` of block `block` (of `threads`) in a kernel with one
 * thread per sample of a region, row by row: its sample, or false past the
 * end. */
ADM_FN bool adm_region_sample(const AdmRegion &r, unsigned block, unsigned thread,
                              unsigned threads, int *i, int *j)
{
    const unsigned long long n = (unsigned long long)block * threads + thread;
    const unsigned long long width = (unsigned long long)(r.right - r.left);
    if (n >= width * (unsigned long long)(r.bottom - r.top)) return false;
    *i = r.top + (int)(n / width);
    *j = r.left + (int)(n % width);
    return true;
}

ADM_FN AdmRegion adm_band_region(const AdmArgs &a)
{
    AdmRegion r = { 0, 0, a.w, a.h };
    return r;
}

template <typename T>
ADM_FN void adm_dwt0_thread(const AdmArgs &a, unsigned block, unsigned image, unsigned thread,
                            unsigned threads)
{
    int i, j;
    if (adm_region_sample(adm_band_region(a), block, thread, threads, &i, &j))
        adm_dwt0_at<T>(a, (int)image, i, j);
}

ADM_FN void adm_dwt123_thread(const AdmArgs &a, unsigned block, unsigned image, unsigned thread,
                              unsigned threads)
{
    int i, j;
    if (adm_region_sample(adm_band_region(a), block, thread, threads, &i, &j))
        adm_dwt123_at(a, (int)image, i, j);
}

template <bool LEVEL0>
ADM_FN void adm_decouple_thread(const AdmArgs &a, unsigned block, unsigned thread,
                                unsigned threads)
{
    int i, j;
    if (adm_region_sample(a.taps, block, thread, threads, &i, &j)) adm_decouple_at<LEVEL0>(a, i, j);
}

/* A thread's share of scored row `block`: columns left + thread, + threads,
 * ... added into sum[0..2]. */
template <bool LEVEL0>
ADM_FN void adm_den_thread(const AdmArgs &a, unsigned block, unsigned thread, unsigned threads,
                           uint64_t sum[3])
{
    const int i = a.scored.top + (int)block;
    for (int j = a.scored.left + (int)thread; j < a.scored.right; j += (int)threads)
        for (int b = 0; b < 3; b++) sum[b] += adm_den_term<LEVEL0>(a, b, (long long)i * a.stride + j);
}

template <bool LEVEL0>
ADM_FN void adm_masked_thread(const AdmArgs &a, unsigned block, unsigned kind, unsigned thread,
                              unsigned threads, uint64_t sum[3])
{
    const int i = a.scored.top + (int)block;
    for (int j = a.scored.left + (int)thread; j < a.scored.right; j += (int)threads) {
        uint64_t term[3];
        adm_masked_terms<LEVEL0>(a, (int)kind, i, j, term);
        for (int b = 0; b < 3; b++) sum[b] += term[b];
    }
}

/* ---- kernels ---------------------------------------------------------------- */

#ifdef __CUDACC__
#include "gpu/cuda/reduce.cuh"

extern "C" __global__ void adm_dwt0_8bit(AdmArgs a)
{
    adm_dwt0_thread<uint8_t>(a, blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x);
}

extern "C" __global__ void adm_dwt0_16bit(AdmArgs a)
{
    adm_dwt0_thread<uint16_t>(a, blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x);
}

extern "C" __global__ void adm_dwt123(AdmArgs a)
{
    adm_dwt123_thread(a, blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x);
}

/* One block per scored row; every thread reaches the block sums. */
template <bool LEVEL0>
__device__ void adm_den_rows(const AdmArgs &a)
{
    uint64_t sum[3] = { 0, 0, 0 };
    adm_den_thread<LEVEL0>(a, blockIdx.x, threadIdx.x, blockDim.x, sum);
    for (int b = 0; b < 3; b++) {
        const unsigned long long row = block_sum((unsigned long long)sum[b]);
        if (threadIdx.x == 0) atomicAdd(&a.acc[b], (unsigned long long)adm_den_row_finish(a, row));
    }
}

extern "C" __global__ void adm_den0(AdmArgs a)
{
    adm_den_rows<true>(a);
}

extern "C" __global__ void adm_den123(AdmArgs a)
{
    adm_den_rows<false>(a);
}

extern "C" __global__ void adm_decouple0(AdmArgs a)
{
    adm_decouple_thread<true>(a, blockIdx.x, threadIdx.x, blockDim.x);
}

extern "C" __global__ void adm_decouple123(AdmArgs a)
{
    adm_decouple_thread<false>(a, blockIdx.x, threadIdx.x, blockDim.x);
}

template <bool LEVEL0>
__device__ void adm_masked_rows(const AdmArgs &a)
{
    uint64_t sum[3] = { 0, 0, 0 };
    adm_masked_thread<LEVEL0>(a, blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x, sum);
    for (int b = 0; b < 3; b++) {
        const unsigned long long row = block_sum((unsigned long long)sum[b]);
        if (threadIdx.x == 0)
            atomicAdd(&a.acc[3 + 3 * blockIdx.y + b],
                      (unsigned long long)adm_masked_row_finish(a, row));
    }
}

extern "C" __global__ void adm_masked0(AdmArgs a)
{
    adm_masked_rows<true>(a);
}

extern "C" __global__ void adm_masked123(AdmArgs a)
{
    adm_masked_rows<false>(a);
}
#endif /* __CUDACC__ */
