/*
 * CIEDE2000's CUDA twin: the frame's sum of deltaE of src/metrics/ciede.c;
 * the host adds the blocks' partial sums and finishes through the C
 * reference's own ciede_write() (ciede_cuda.c).
 *
 * Every pixel is the reference's own arithmetic (ciede.h): the conversion
 * to L*a*b* in double, rounded to float where the reference rounds, and
 * CIEDE2000 with the same float and double operations, on the same
 * arguments, through the same elementary functions (quale's own, written
 * with IEEE +, -, *, /, sqrt and bit operations: ciede_tmpl.h); the fatbin
 * is built with --fmad=false, so each deltaE is the CPU's to the bit.
 *
 * The chroma sample of a pixel is libvmaf's indexing, as the reference
 * reads it: the column and the rows ahead from the reference's own tables
 * (ciede_init() makes them; the twin uploads them once), the row through
 * ciede_vmaf_chroma_source() (4:2:2 reading past a plane into the next,
 * or zero).  Pixels whose six samples are equal add +0 and are skipped, as
 * on the CPU (the reference's colour cache only saves time).
 *
 * Colours are tabulated once, when the twin starts, by the very functions
 * a pixel would call, so a lookup is bit for bit what it would compute:
 *   - at 8 bits, ciede_colour_table fills the L*a*b* colour of every
 *     sample triple (y, u, v) (2^24 colours, 256 MiB as float4), and a
 *     pixel only looks its two colours up: the conversion, two thirds of
 *     a pixel's instructions, is gone;
 *   - at 9 and 10 bits, where a table of every triple would not fit,
 *     ciede_table fills two of a colour's three sRGB decodings: R depends
 *     on the luma and Cr samples only, B on the luma and Cb, so R over
 *     every (y, v) and B over every (y, u) (8 MiB each at 10 bits), which
 *     saves four of a pixel's six double pow() calls.
 *
 * ciede_rows: block (bx, by) of CIEDE_THREADS threads, thread t takes
 * column x = bx * CIEDE_THREADS + t of rows by * rows ... (by + 1) * rows -
 * 1, adds its deltaE (as double) in row order, and the block adds its
 * threads' sums in a fixed tree (block_sum): one double per block,
 * partials[by * gridDim.x + bx].  The host adds them in that order.  The
 * order differs from the reference's raster sum: the difference is
 * rounding of a double sum (about 1e-16 relative), far below the
 * tolerance.  tests/test_psnr_hvs_ciede_cuda_host.cpp runs the same
 * functions on the CPU.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "ciede_args.h"
#include "metrics/ciede/ciede.h"

#ifdef __CUDACC__
#include "gpu/cuda/reduce.cuh"
#endif

#define CIEDE_FN __host__ __device__ __forceinline__

/* Entry i of the colour table: four floats, L*, a*, b* and a pad. */
CIEDE_FN CiedeLab ciede_colour_at(const float *colours, size_t i)
{
#ifdef __CUDA_ARCH__
    const float4 e = __ldg((const float4 *)colours + i);
    return CiedeLab{ e.x, e.y, e.z };
#else
    const float *e = colours + 4 * i;
    return CiedeLab{ e[0], e[1], e[2] };
#endif
}

template <typename T>
CIEDE_FN unsigned ciede_sample_at(const uint8_t *plane, unsigned long long stride, unsigned row,
                                  unsigned col)
{
    return ((const T *)(plane + (size_t)row * stride))[col];
}

/* The deltaE of pixel (x, y), +0 where its samples are equal. */
template <typename T>
CIEDE_FN double ciede_pixel(const CiedeArgs &a, unsigned x, unsigned y)
{
    const unsigned r_y = ciede_sample_at<T>(a.ref[0], a.stride[0], y, x);
    const unsigned d_y = ciede_sample_at<T>(a.dist[0], a.stride[0], y, x);
    unsigned r_u = 0, d_u = 0, r_v = 0, d_v = 0;
    const unsigned ahead = a.chroma_row[x];
    if (ahead != CIEDE_ROW_ZERO) {
        const unsigned row = (y >> a.row_shift) + ahead, col = a.chroma_col[x];
        unsigned plane, src;
        if (ciede_vmaf_chroma_source(1, row, a.chroma_height, &plane, &src)) {
            r_u = ciede_sample_at<T>(a.ref[plane], a.stride[plane], src, col);
            d_u = ciede_sample_at<T>(a.dist[plane], a.stride[plane], src, col);
        }
        if (ciede_vmaf_chroma_source(2, row, a.chroma_height, &plane, &src)) {
            r_v = ciede_sample_at<T>(a.ref[plane], a.stride[plane], src, col);
            d_v = ciede_sample_at<T>(a.dist[plane], a.stride[plane], src, col);
        }
    }
    if (r_y == d_y && r_u == d_u && r_v == d_v) return 0.;
    const unsigned all = r_y | r_u | r_v | d_y | d_u | d_v;
    /* (samples above the depth, which the API lets through, index past the
     * tables: those pixels decode their colours themselves) */
    if (a.colours && !(all >> a.colour_bits)) {
        const unsigned cb = a.colour_bits;
        return ciede2000(ciede_colour_at(a.colours, (size_t)r_y << 2 * cb | r_u << cb | r_v),
                         ciede_colour_at(a.colours, (size_t)d_y << 2 * cb | d_u << cb | d_v));
    }
    const unsigned bits = a.linear_bits;
    if (!a.linear || all >> bits) {
        const CiedeLab c1 = ciede_lab(&a.convert, r_y, r_u, r_v);
        const CiedeLab c2 = ciede_lab(&a.convert, d_y, d_u, d_v);
        return ciede2000(c1, c2);
    }
    const double *blue = a.linear + ((size_t)1 << (2 * bits));
    const CiedeLab c1 = ciede_lab_linear(a.linear[r_y << bits | r_v],
                                         ciede_linear_g(&a.convert, r_y, r_u, r_v),
                                         blue[r_y << bits | r_u]);
    const CiedeLab c2 = ciede_lab_linear(a.linear[d_y << bits | d_v],
                                         ciede_linear_g(&a.convert, d_y, d_u, d_v),
                                         blue[d_y << bits | d_u]);
    return ciede2000(c1, c2);
}

/* Entry i of the tables (ciede_table): R at (y, v) = (i >> bits, i & mask)
 * for i < 2^(2 bits), then B at (y, u). */
CIEDE_FN void ciede_table_entry(const CiedeConvert &convert, double *linear, unsigned bits,
                                unsigned i)
{
    const unsigned n = 1u << (2 * bits), k = i < n ? i : i - n;
    const unsigned y = k >> bits, c = k & ((1u << bits) - 1);
    linear[i] = i < n ? ciede_linear_r(&convert, y, c) : ciede_linear_b(&convert, y, c);
}

/* Entry i of the colour table (ciede_colour_table): the colour of
 * (y, u, v) = (i >> 2 bits, i >> bits & mask, i & mask), as a pixel would
 * decode it. */
CIEDE_FN void ciede_colour_entry(const CiedeConvert &convert, float *colours, unsigned bits,
                                 size_t i)
{
    const unsigned mask = (1u << bits) - 1;
    const CiedeLab lab = ciede_lab(&convert, (double)(i >> 2 * bits), (double)(i >> bits & mask),
                                   (double)(i & mask));
    float *e = colours + 4 * i;
    e[0] = lab.l;
    e[1] = lab.a;
    e[2] = lab.b;
    e[3] = 0.0f;
}

/* Thread t of block (bx, by): its column's sum over the block's rows. */
template <typename T>
CIEDE_FN double ciede_thread(const CiedeArgs &a, unsigned bx, unsigned by, unsigned t)
{
    const unsigned x = bx * CIEDE_THREADS + t;
    double sum = 0.;
    if (x >= a.width) return sum;
    const unsigned y0 = by * a.rows;
    for (unsigned y = y0; y < y0 + a.rows && y < a.height; y++) sum += ciede_pixel<T>(a, x, y);
    return sum;
}

#ifdef __CUDACC__
template <typename T>
__device__ void ciede_rows(const CiedeArgs &a)
{
    const double sum = block_sum(ciede_thread<T>(a, blockIdx.x, blockIdx.y, threadIdx.x));
    if (threadIdx.x == 0) a.partials[blockIdx.y * gridDim.x + blockIdx.x] = sum;
}

extern "C" __global__ void __launch_bounds__(CIEDE_THREADS) ciede_table(CiedeTableArgs a)
{
    const unsigned i = blockIdx.x * CIEDE_THREADS + threadIdx.x;
    if (i < 2u << (2 * a.bits)) ciede_table_entry(a.convert, a.linear, a.bits, i);
}

extern "C" __global__ void __launch_bounds__(CIEDE_THREADS) ciede_colour_table(CiedeTableArgs a)
{
    const size_t i = (size_t)blockIdx.x * CIEDE_THREADS + threadIdx.x;
    if (i < (size_t)1 << 3 * a.bits) ciede_colour_entry(a.convert, a.colours, a.bits, i);
}

extern "C" __global__ void __launch_bounds__(CIEDE_THREADS) ciede_rows_8(CiedeArgs a)
{
    ciede_rows<uint8_t>(a);
}

extern "C" __global__ void __launch_bounds__(CIEDE_THREADS) ciede_rows_16(CiedeArgs a)
{
    ciede_rows<uint16_t>(a);
}
#endif /* __CUDACC__ */
