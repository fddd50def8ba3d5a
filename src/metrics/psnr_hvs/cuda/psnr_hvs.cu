/*
 * PSNR-HVS's CUDA twin: the three planes' float sums of src/metrics/psnr_hvs.c,
 * bit for bit; the host turns them into the keys through the C reference's
 * own psnr_hvs_write() (psnr_hvs_cuda.c).
 *
 * The terms of every block position are the reference's own arithmetic
 * (hvs_block_terms() of psnr_hvs.h: the integer DCT, float statistics, a
 * double square root, IEEE float division; the fatbin is built with
 * --fmad=false), so each term is the very float the CPU computes.  What is
 * hard is the sum: the reference adds a plane's terms one after the other
 * into one float, block after block (raster order), 64 terms each, and the
 * rounding of those millions of additions moves the key by about 1e-3 dB
 * at 1080p against an exact sum (20 times the tolerance).  So the twin
 * computes that very float sum, in parallel:
 *
 * While the sum s stays in one binade [2^(E-127), 2^(E-126)) (E the biased
 * exponent; E = 1 also covers the subnormals: both step by u = 2^-149),
 * s is S u with an integer S < 2^24, and s + t rounds to (S + d) u, where
 * d is t / u rounded to an integer, to nearest, ties to the d that makes
 * S + d even.  d depends on s only through E and the parity of S, so a
 * term is a pair (d[0], d[1]) for a given E, and a run of terms is the
 * composition of pairs: (a then b)[p] = a[p] + b[(p + a[p]) & 1], which is
 * associative, so a parallel scan computes it.  The formula holds for a
 * term as long as the exact s + t stays below 2^24 u; since every term is
 * >= 0, S only grows, and if S + d of the last term of a run is < 2^24 the
 * whole run is exact.  The first term where S + d reaches 2^24 (the sum
 * enters the next binade) is added as a plain float addition.
 *
 * Per frame, on the slot's stream (plane p has blocks[p] block positions,
 * numbered after the planes before it; terms are [block][64]):
 *   hvs_terms   one thread per block position: its 64 terms (float) and,
 *               for the estimate below, their sum in double;
 *   hvs_prefix  one block of 1024 threads per plane: the exclusive prefix
 *               sums of those double sums, an estimate of s at the start
 *               of each block position;
 *   hvs_cand    one thread per block position: the composed pair of its 64
 *               terms for the three binades around the estimate
 *               (HVS_CANDIDATES; a candidate below the estimate serves the
 *               block positions just past a binade change);
 *   hvs_walk    one block of 1024 threads per plane: the exact sum.  A tile
 *               of 1024 block positions at a time: each thread takes its
 *               block's pair for the binade E of the current s (its
 *               candidate; if the estimate missed, hvs_walk_pair() says
 *               what: the estimate only saves time, it decides nothing),
 *               the block scans them, the sum moves to the end of the
 *               longest exact run, the block position after it (where the
 *               binade changes) is added term by term by one thread, and
 *               the tile goes on after that.  About 15 binade changes per
 *               plane at 1080p (tests/test_psnr_hvs_ciede_cuda_host.cpp
 *               counts them), so a 1080p luma plane takes about 57 runs.
 * Then the three floats are read back (12 bytes).
 *
 * Every step is a __host__ __device__ function of one thread or of one
 * block position; the __global__ wrappers (under __CUDACC__) map CUDA's
 * indices onto them, with the block-wide scans.  The estimate is a double
 * sum in a tree order; nothing depends on it but how often the walk
 * computes a pair itself.  tests/test_psnr_hvs_ciede_cuda_host.cpp runs
 * the same functions on the CPU.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "psnr_hvs_args.h"
#include "metrics/psnr_hvs/psnr_hvs.h"

#define HVS_FN __host__ __device__ __forceinline__

/* S + d at or above 2^24 leaves the binade; increments saturate at 2^30,
 * so that sums of two stay below 2^31. */
#define HVS_LIMIT (1u << 24)
#define HVS_SATURATED (1u << 30)
/* The candidates of a block position whose sum is estimated to start at
 * v are the binades b - 1, b, b + 1 of b = the binade of v (1 - 2^-6): the
 * float sum runs a little below the exact one (additions that round
 * down), and b - 1 serves a run that starts before a binade change. */
#define HVS_ESTIMATE_MARGIN (1.0 - 1.0 / 64)

/* What a run of terms adds to S, for S even ([0]) and odd ([1]). */
struct HvsPair {
    uint32_t d[2];
};

/* Four terms: a block position's 64 terms (256-byte aligned) move as 16
 * of these, one 16-byte access each on the device. */
struct alignas(16) HvsQuad {
    float v[4];
};

HVS_FN HvsQuad hvs_load_quad(const float *p)
{
#if defined(__CUDA_ARCH__)
    return *(const HvsQuad *)p;
#else
    HvsQuad q;
    memcpy(&q, p, sizeof(q));
    return q;
#endif
}

HVS_FN void hvs_store_quad(float *p, const HvsQuad &q)
{
#if defined(__CUDA_ARCH__)
    *(HvsQuad *)p = q;
#else
    memcpy(p, &q, sizeof(q));
#endif
}

/* ---- the exact float sum ----------------------------------------------------- */

/* The binade of a sum s >= +0: its biased exponent, 1 for subnormals (they
 * step by 2^-149 as binade 1 does); 255 for inf and NaN. */
HVS_FN int hvs_binade(float s)
{
    const int e = (int)(bitcast_float_bits(s) >> 23);
    return e ? e : 1;
}

/* s = S 2^(E - 150): S < 2^24 (2^23 <= S for E > 1). */
HVS_FN uint32_t hvs_units(float s, int e)
{
    return bitcast_float_bits(s) - ((uint32_t)(e - 1) << 23);
}

/* The float S 2^(E - 150), S < 2^24. */
HVS_FN float hvs_from_units(int e, uint32_t units)
{
    return bitcast_bits_float(((uint32_t)(e - 1) << 23) + units);
}

/* What adding t >= 0 does to S in binade e (1 .. 254), for S even and
 * odd: t / 2^(e - 150) rounded to nearest, ties to an even S + d; at
 * least 2^25 saturates. */
HVS_FN HvsPair hvs_term_pair(float t, int e)
{
    HvsPair r;
    const double x = ldexp((double)t, 150 - e); /* exact: a power of 2 */
    if (!(x < 33554432.0)) {
        r.d[0] = r.d[1] = HVS_SATURATED;
        return r;
    }
    const double q = floor(x), f = x - q; /* both exact */
    const uint32_t n = (uint32_t)q;
    if (f < 0.5) {
        r.d[0] = r.d[1] = n;
    } else if (f > 0.5) {
        r.d[0] = r.d[1] = n + 1;
    } else {
        r.d[0] = n + (n & 1);
        r.d[1] = n + ((n + 1) & 1);
    }
    return r;
}

HVS_FN HvsPair hvs_pair_identity()
{
    HvsPair r;
    r.d[0] = r.d[1] = 0;
    return r;
}

/* a, then b. */
HVS_FN HvsPair hvs_compose(HvsPair a, HvsPair b)
{
    HvsPair r;
    for (int p = 0; p < 2; p++) {
        const uint32_t v = a.d[p] + b.d[(p + a.d[p]) & 1];
        r.d[p] = v < HVS_SATURATED ? v : HVS_SATURATED;
    }
    return r;
}

/* The pair of a block position's 64 terms in binade e; the identity for
 * inf and NaN (adding finite terms leaves them as they are). */
HVS_FN HvsPair hvs_block_pair(const float *terms, int e)
{
    HvsPair acc = hvs_pair_identity();
    if (e >= 255) return acc;
    for (int q = 0; q < 16; q++) {
        const HvsQuad t = hvs_load_quad(terms + 4 * q);
        for (int i = 0; i < 4; i++) acc = hvs_compose(acc, hvs_term_pair(t.v[i], e));
    }
    return acc;
}

/* The float sum s + terms[0] + ... + terms[63], one addition at a time. */
HVS_FN float hvs_add_terms(float s, const float *terms)
{
    for (int q = 0; q < 16; q++) {
        const HvsQuad t = hvs_load_quad(terms + 4 * q);
        for (int i = 0; i < 4; i++) s = s + t.v[i];
    }
    return s;
}

/* The binade of a float near v >= 0 (1 .. 254). */
HVS_FN int hvs_binade_near(double v)
{
    if (!(v >= 0x1p-125)) return 1; /* and NaN */
    if (v >= 0x1p127) return 254;
    int e;
    frexp(v, &e); /* v = m 2^e, 0.5 <= m < 1 */
    return e + 126;
}

/* The first candidate binade of a block position whose sum is estimated
 * to start at `estimate`. */
HVS_FN int hvs_first_candidate(double estimate)
{
    int e = hvs_binade_near(estimate * HVS_ESTIMATE_MARGIN) - 1;
    if (e < 1) e = 1;
    if (e > 255 - HVS_CANDIDATES) e = 255 - HVS_CANDIDATES;
    return e;
}

/*
 * A block position's pair in binade e, the current binade of the walk: its
 * candidate; or, below its candidates, "leaves the binade" (the estimate
 * puts the sum at least twice as high there, so a block position before
 * it leaves the binade and the run ends earlier; if the estimate was wrong,
 * the walk adds this block position term by term: still exact); or, for
 * the first block position of a run (`first`) and above the candidates,
 * the pair computed from its terms.
 */
HVS_FN HvsPair hvs_walk_pair(const HvsCand &c, const float *terms, int e, bool first)
{
    const int j = e - c.e;
    HvsPair r;
    if (j >= 0 && j < HVS_CANDIDATES) {
        r.d[0] = c.d[j][0];
        r.d[1] = c.d[j][1];
    } else if (j < 0 && !first) {
        r.d[0] = r.d[1] = HVS_SATURATED;
    } else {
        r = hvs_block_pair(terms, e);
    }
    return r;
}

/* S after a run whose composed pair is `run`; HVS_LIMIT or more means the
 * run leaves the binade (so is not exact). */
HVS_FN uint32_t hvs_after(uint32_t units, HvsPair run)
{
    return units + run.d[units & 1];
}

/* ---- the element functions ---------------------------------------------------- */

HVS_FN unsigned hvs_plane_of(const HvsArgs &a, unsigned g)
{
    return g >= a.base[2] ? 2u : g >= a.base[1] ? 1u : 0u;
}

/* hvs_terms at block position g < total. */
template <bool HBD>
HVS_FN void hvs_terms_at(const HvsArgs &a, unsigned g)
{
    const unsigned p = hvs_plane_of(a, g), i = g - a.base[p];
    const size_t x = (size_t)(i % a.cols[p]) * HVS_STEP, y = (size_t)(i / a.cols[p]) * HVS_STEP;
    const size_t offset = y * a.stride[p] + x * (HBD ? 2 : 1);
    HvsBlockPair blk;
    hvs_load_block(blk[0], a.ref[p] + offset, (ptrdiff_t)a.stride[p], HBD);
    hvs_load_block(blk[1], a.dist[p] + offset, (ptrdiff_t)a.stride[p], HBD);
    float terms[64];
    hvs_block_terms(blk, a.tables + 64 * p, a.tables + 192 + 64 * p, terms);
    float *out = a.terms + (size_t)g * 64;
    double sum = 0.;
    for (int q = 0; q < 16; q++) {
        HvsQuad t;
        for (int k = 0; k < 4; k++) {
            t.v[k] = terms[4 * q + k];
            sum += t.v[k];
        }
        hvs_store_quad(out + 4 * q, t);
    }
    a.prefix[g] = sum;
}

/* hvs_cand at block position g < total (after hvs_prefix). */
HVS_FN void hvs_cand_at(const HvsArgs &a, unsigned g)
{
    const float *terms = a.terms + (size_t)g * 64;
    HvsCand c;
    c.e = hvs_first_candidate(a.prefix[g]);
    HvsPair acc[HVS_CANDIDATES];
    for (int j = 0; j < HVS_CANDIDATES; j++) acc[j] = hvs_pair_identity();
    for (int q = 0; q < 16; q++) {
        const HvsQuad t = hvs_load_quad(terms + 4 * q);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < HVS_CANDIDATES; j++)
                acc[j] = hvs_compose(acc[j], hvs_term_pair(t.v[i], c.e + j));
    }
    for (int j = 0; j < HVS_CANDIDATES; j++) {
        c.d[j][0] = acc[j].d[0];
        c.d[j][1] = acc[j].d[1];
    }
    a.cand[g] = c;
}

#ifdef __CUDACC__
#include "gpu/cuda/lanes.cuh"

/* ---- the kernels ------------------------------------------------------------- */

extern "C" __global__ void __launch_bounds__(HVS_THREADS) hvs_terms_8(HvsArgs a)
{
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < a.total) hvs_terms_at<false>(a, g);
}

extern "C" __global__ void __launch_bounds__(HVS_THREADS) hvs_terms_16(HvsArgs a)
{
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < a.total) hvs_terms_at<true>(a, g);
}

extern "C" __global__ void __launch_bounds__(HVS_THREADS) hvs_cand(HvsArgs a)
{
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < a.total) hvs_cand_at(a, g);
}

__device__ __forceinline__ double shfl_up(double v, unsigned o)
{
    return lanes_shfl_up(v, o);
}

__device__ __forceinline__ HvsPair shfl_up(HvsPair v, unsigned o)
{
    HvsPair r;
    r.d[0] = lanes_shfl_up(v.d[0], o);
    r.d[1] = lanes_shfl_up(v.d[1], o);
    return r;
}

/* Inclusive scan of the block's values in thread order (operator `op`,
 * associative, first argument the earlier run); every thread calls it.
 * blockDim.x is HVS_WALK_THREADS. */
template <typename T, typename Op>
__device__ __forceinline__ T hvs_block_scan(T v, Op op, T *warp_totals)
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (unsigned o = 1; o < 32; o <<= 1) {
        const T before = shfl_up(v, o);
        if (lane >= o) v = op(before, v);
    }
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        T w = warp_totals[lane];
        for (unsigned o = 1; o < 32; o <<= 1) {
            const T before = shfl_up(w, o);
            if (lane >= o) w = op(before, w);
        }
        warp_totals[lane] = w;
    }
    __syncthreads();
    if (warp > 0) v = op(warp_totals[warp - 1], v);
    __syncthreads(); /* warp_totals may be reused */
    return v;
}

struct HvsAddDouble {
    __device__ double operator()(double a, double b) const { return a + b; }
};

struct HvsComposePairs {
    __device__ HvsPair operator()(HvsPair a, HvsPair b) const { return hvs_compose(a, b); }
};

/* Plane blockIdx.x: the block sums become their exclusive prefix sums. */
extern "C" __global__ void __launch_bounds__(HVS_WALK_THREADS) hvs_prefix(HvsArgs a)
{
    __shared__ double totals[32];
    __shared__ double carry_shared;
    const unsigned p = blockIdx.x, n = a.blocks[p];
    double *v = a.prefix + a.base[p];
    double carry = 0.;
    for (unsigned tile = 0; tile < n; tile += HVS_WALK_THREADS) {
        const unsigned i = tile + threadIdx.x;
        const double x = i < n ? v[i] : 0.;
        const double inclusive = hvs_block_scan(x, HvsAddDouble(), totals);
        if (i < n) v[i] = carry + (inclusive - x);
        if (threadIdx.x == HVS_WALK_THREADS - 1) carry_shared = carry + inclusive;
        __syncthreads();
        carry = carry_shared;
        __syncthreads();
    }
}

/* Plane blockIdx.x: the exact float sum of its terms (after hvs_cand). */
extern "C" __global__ void __launch_bounds__(HVS_WALK_THREADS) hvs_walk(HvsArgs a)
{
    __shared__ HvsPair totals[32];
    __shared__ unsigned first_out;
    __shared__ float run_end, block_end;
    const unsigned p = blockIdx.x, n = a.blocks[p], t = threadIdx.x;
    float s = 0.f; /* the same in every thread */
    for (unsigned tile = 0; tile < n; tile += HVS_WALK_THREADS) {
        const unsigned count = min(n - tile, (unsigned)HVS_WALK_THREADS);
        const unsigned g = a.base[p] + tile + t;
        HvsCand c;
        if (t < count) c = a.cand[g];
        unsigned start = 0;
        while (start < count) {
            const int e = hvs_binade(s);
            const uint32_t units = hvs_units(s, e);
            const bool mine = t >= start && t < count;
            const HvsPair own = mine ? hvs_walk_pair(c, a.terms + (size_t)g * 64, e, t == start)
                                     : hvs_pair_identity();
            const HvsPair run = hvs_block_scan(own, HvsComposePairs(), totals);
            const uint32_t after = hvs_after(units, run);
            if (t == 0) first_out = count;
            __syncthreads();
            if (mine && after >= HVS_LIMIT) atomicMin(&first_out, t);
            __syncthreads();
            const unsigned f = first_out; /* the first block position not exact */
            if (f > start && t == f - 1) run_end = hvs_from_units(e, after);
            __syncthreads();
            if (f > start) s = run_end;
            if (f < count) {
                /* the binade changes in block position f: term by term */
                if (t == 0) block_end = hvs_add_terms(s, a.terms + (size_t)(a.base[p] + tile + f) * 64);
                __syncthreads();
                s = block_end;
                start = f + 1;
            } else {
                start = count;
            }
            __syncthreads(); /* first_out, run_end, block_end are reused */
        }
    }
    if (t == 0) a.sums[p] = s;
}
#endif /* __CUDACC__ */
