/*
 * CAMBI's CUDA twin: src/metrics/cambi.c on the device, bit for bit.  Per
 * picture (the distorted one, then with full_ref the reference), on the
 * slot's stream (cambi_cuda.c plans and launches them):
 *
 *   cambi_load_8, _16   one thread per sample (x, y) of the scored size:
 *           the luma sample (through libvmaf's nearest-neighbour source
 *           positions when the picture is resampled) at 10 bits, and with
 *           anti-dithering the mean of it and its right, lower and
 *           lower-right neighbours as the C reference rounds it: image.
 *           Thread (0, 0) also clears the picture's c-value statistics;
 *   cambi_flat_vsum     one thread per column and band of rows: how many
 *           of the 7 rows around each sample (clipped) are flat there (the
 *           sample equals its right and lower neighbours): vsum;
 *   cambi_mask          one thread per sample: the sum of vsum over the 7
 *           columns around it (clipped) against mask_index: mask;
 *   cambi_scale         one thread per sample of scale s: the 3x3 mode
 *           filter of the scale's input (every other row and column of the
 *           filtered scale s - 1, or of image), its mask sample (the mask at
 *           (x << s', y << s'): decimating keeps even rows and columns), and
 *           its code: the band row of the filtered sample where it is masked
 *           and in the band, else CAMBI_INVALID;
 *   cambi_c_values_64, _32   the c-values of the five scales in one launch:
 *           one block per strip of S output columns and chunk of rows, S
 *           threads, one per column, each owning its column's window counts
 *           (one 16-bit counter per band row, in shared memory).  A block
 *           starts its window at the chunk's first row and slides it down:
 *           per row, the threads load the codes of the row that enters the
 *           window and of the row that leaves it (the strip and pad columns
 *           on each side), and mark where a run of equal codes starts
 *           (ballots: one bit per column); after the barrier each thread
 *           adds (or takes away) each run inside its window at once, and
 *           computes the c-value of its sample through cambi_c_value()
 *           (cambi.h, the C reference's own function) from its column's
 *           counts.  A row where no code of the block counts (nothing
 *           masked in the band: most rows of most pictures) changes no
 *           counter, and the barrier (__syncthreads_or) says so.  The
 *           c-values go to a plane per scale (pooling may need them: see
 *           below); their count, smallest, largest and sum go to the
 *           picture's statistics with atomics.
 *
 * The host pools a scale from the statistics when the C reference does
 * (cambi_pool_needs_values(): the k largest values are all the non-zero
 * ones and their sum is exact in any order, so the order of the atomic
 * additions cannot show); otherwise it reads the scale's c-values back and
 * runs the C reference's quickselect on them.
 *
 * Cost, 1080p, default options (window 33, 564 band rows, 2.76 M samples
 * over the five scales):
 *   memory: load 2 MB read (8-bit) + 4 MB written; vsum and mask 4 + 4 MB;
 *     the scales 5.5 MB read, 11 MB written (samples and codes); the
 *     c-values 17 MB of codes read (three rows per output row, from L1 and
 *     L2) and 11 MB of c-values written: about 60 MB, 13 us at 4.8 TB/s,
 *     most of it L2-resident (50 MB);
 *   c-values: counting each window sample by sample reads 33 x 33 samples
 *     per sample (3 G shared loads).  Sliding costs per sample and row two
 *     window rows, but as runs: one read-modify-write per run of equal
 *     codes in the window (1 in flat masked areas, none where nothing is
 *     masked, at most 33), plus 9 counter reads and 4 table reads for a
 *     masked sample's c-value.  Shared memory (564 x 64 x 2 = 72 KB a
 *     block) keeps 3 blocks (6 warps) on an SM; chunks of 120 rows make
 *     30 x 9 + 15 x 5 + 8 x 3 + 4 x 2 + 2 = 379 blocks, one wave on 132
 *     SMs, of at most 120 + 32 rows: 55 K block-rows, 110 K warp-rows.
 *     A warp-row costs about 85 instructions where nothing counts (9 code
 *     loads, stores, 4 ballots, the barrier, one c-value store), about 250
 *     in flat masked areas (two runs, a c-value), about 450 where masked
 *     areas change every 4 samples: 9 M, 28 M, 50 M warp instructions, 9,
 *     27, 48 us of issue at 4 per SM and cycle (132 SMs, 1.98 GHz); with 6
 *     warps an SM issues nearer 2 a cycle, and a row's chain of loads,
 *     ballots and barrier is ~150 cycles (152 rows: 12 us);
 *   expected: ~20 us a picture of natural video (little is masked), ~55
 *     us for banding everywhere, ~100 us at worst, plus ~10 us for the
 *     other kernels; twice with full_ref.  At 4K (window 65, chunks of 540
 *     rows, 327 blocks) about 4 times as much.
 *
 * Every stage is a __host__ __device__ function of one thread between
 * barriers; the __global__ wrappers at the end only map CUDA's indices
 * onto them and do the ballots and atomics.  Only the c-values are floats,
 * from cambi_c_value(): an integer product made float times a float, one
 * rounding.  tests/test_cambi_cuda_host.cpp runs the same functions on the
 * CPU and checks every plane against the C reference.
 */
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "cambi_args.h"
#include "metrics/cambi/cambi.h"

#define CAMBI_FN __host__ __device__ __forceinline__
#ifdef __CUDACC__
#define CAMBI_KERNEL_UNROLL _Pragma("unroll")
#else
#define CAMBI_KERNEL_UNROLL
#endif

/* The spatial mask's square is 7 x 7: 3 rows and columns on each side. */
#define CAMBI_MASK_RADIUS 3
/* The code of a sample that no histogram counts. */
#define CAMBI_INVALID 0xffffu
/* Columns a block of the c-values reads: its strip (at most 64) and
 * window / 2 <= 32 on each side; one bit each in CAMBI_SPAN_WORDS words. */
#define CAMBI_SPAN 128
#define CAMBI_SPAN_WORDS (CAMBI_SPAN / 32)

/* ---- preprocessing -------------------------------------------------------- */

/* Sample (x, y) of the scored size at 10 bits: cambi.c's cambi_load(). */
template <typename T>
CAMBI_FN unsigned cambi_loaded(const CambiPrepArgs &a, unsigned x, unsigned y)
{
    const unsigned row = a.src_y ? a.src_y[y] : y, col = a.src_x ? a.src_x[x] : x;
    const T *line = (const T *)(a.src + (size_t)row * a.src_stride);
    return cambi_to_10bit(line[col], a.bitdepth);
}

/* cambi_load at (x, y): the sample, anti-dithered as cambi.c's
 * cambi_anti_dither() (which reads only original samples). */
template <typename T>
CAMBI_FN void cambi_load_at(const CambiPrepArgs &a, unsigned x, unsigned y)
{
    const unsigned v = cambi_loaded<T>(a, x, y);
    unsigned out = v;
    if (a.anti_dither) {
        const bool right = x + 1 < a.w, below = y + 1 < a.h;
        if (right && below)
            out = (v + cambi_loaded<T>(a, x + 1, y) + cambi_loaded<T>(a, x, y + 1) +
                   cambi_loaded<T>(a, x + 1, y + 1)) >> 2;
        else if (below)
            out = (v + cambi_loaded<T>(a, x, y + 1)) >> 1;
        else if (right)
            out = (v + cambi_loaded<T>(a, x + 1, y)) >> 1;
    }
    a.image[(size_t)y * a.w + x] = (uint16_t)out;
}

/* The statistics of the picture's scales before any c-value is added. */
CAMBI_FN void cambi_clear_stats(const CambiPrepArgs &a)
{
    for (unsigned s = 0; s < CAMBI_SCALES; s++) {
        a.stats[s].sum = 0.0;
        a.stats[s].count = 0;
        a.stats[s].smallest = 0x7f800000u; /* +inf */
        a.stats[s].largest = 0;
        a.stats[s].pad = 0;
    }
}

/* Whether image sample (x, r) is flat: equal to its right and lower
 * neighbours, a missing one counting as equal (cambi.c's cambi_flat_row). */
CAMBI_FN unsigned cambi_flat(const CambiPrepArgs &a, unsigned x, unsigned r)
{
    const uint16_t *row = a.image + (size_t)r * a.w;
    const unsigned v = row[x];
    const bool right = x + 1 >= a.w || row[x + 1] == v;
    const bool below = r + 1 >= a.h || row[x + a.w] == v;
    return right && below ? 1u : 0u;
}

/* cambi_flat_vsum for column x, rows y0 .. y1 - 1: the flat samples of
 * rows y - 3 .. y + 3 (those in the picture), slid down the column. */
CAMBI_FN void cambi_vsum_column(const CambiPrepArgs &a, unsigned x, unsigned y0, unsigned y1)
{
    const int r = CAMBI_MASK_RADIUS, h = (int)a.h;
    unsigned sum = 0;
    for (int k = (int)y0 - r; k <= (int)y0 + r; k++)
        if (k >= 0 && k < h) sum += cambi_flat(a, x, (unsigned)k);
    for (unsigned y = y0; y < y1; y++) {
        a.vsum[(size_t)y * a.w + x] = (uint8_t)sum;
        const int leave = (int)y - r, enter = (int)y + r + 1;
        if (leave >= 0) sum -= cambi_flat(a, x, (unsigned)leave);
        if (enter < h) sum += cambi_flat(a, x, (unsigned)enter);
    }
}

/* cambi_mask at (x, y): more than mask_index flat samples in the 7 x 7
 * square (clipped), as cambi.c's cambi_spatial_mask(). */
CAMBI_FN void cambi_mask_at(const CambiPrepArgs &a, unsigned x, unsigned y)
{
    const uint8_t *row = a.vsum + (size_t)y * a.w;
    const int r = CAMBI_MASK_RADIUS, w = (int)a.w;
    unsigned sum = 0;
    for (int k = (int)x - r; k <= (int)x + r; k++)
        if (k >= 0 && k < w) sum += row[k];
    a.mask[(size_t)y * a.w + x] = sum > a.mask_index ? 1 : 0;
}

/* ---- scales ---------------------------------------------------------------- */

/* Sample (x, y) of scale s before its mode filter: cambi.c decimates in
 * place, keeping even rows and columns of the filtered scale before. */
CAMBI_FN unsigned cambi_decimated(const CambiPrepArgs &a, unsigned x, unsigned y)
{
    return a.scale_in[(size_t)(y * a.step) * a.in_w + (size_t)x * a.step];
}

/* The horizontal mode of three at (x, y); first and last columns stay. */
CAMBI_FN unsigned cambi_hmode(const CambiPrepArgs &a, unsigned x, unsigned y)
{
    if (x == 0 || x + 1 >= a.sw) return cambi_decimated(a, x, y);
    return cambi_mode3((uint16_t)cambi_decimated(a, x - 1, y), (uint16_t)cambi_decimated(a, x, y),
                       (uint16_t)cambi_decimated(a, x + 1, y));
}

/* cambi_scale at (x, y): cambi.c's cambi_mode_filter() (the vertical mode
 * of three horizontal ones; first and last rows stay, and all of a scale
 * of fewer than 3 rows), the mask sample, the code. */
CAMBI_FN void cambi_scale_at(const CambiPrepArgs &a, unsigned x, unsigned y)
{
    unsigned v;
    if (a.sh < 3 || y == 0 || y + 1 >= a.sh)
        v = cambi_decimated(a, x, y);
    else
        v = cambi_mode3((uint16_t)cambi_hmode(a, x, y - 1), (uint16_t)cambi_hmode(a, x, y),
                        (uint16_t)cambi_hmode(a, x, y + 1));
    const size_t at = (size_t)y * a.sw + x;
    a.scale_out[at] = (uint16_t)v;
    const bool masked = a.mask[((size_t)y << a.mask_shift) * a.w + ((size_t)x << a.mask_shift)];
    const int row = (int)v - a.band_base;
    a.codes[at] = (uint16_t)(masked && (unsigned)row < (unsigned)a.band_size ? (unsigned)row
                                                                             : CAMBI_INVALID);
}

/* ---- one thread of each element kernel -------------------------------------- */
/* Grids: x covers the columns in blocks of CAMBI_THREADS; y the rows (or
 * bands of CAMBI_VSUM_ROWS rows), from block_y in steps of grid_y. */

template <typename T>
CAMBI_FN void cambi_load_thread(const CambiPrepArgs &a, unsigned block_x, unsigned block_y,
                                unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (block_x == 0 && block_y == 0 && thread_x == 0) cambi_clear_stats(a);
    if (x >= a.w) return;
    for (unsigned y = block_y; y < a.h; y += grid_y) cambi_load_at<T>(a, x, y);
}

CAMBI_FN void cambi_vsum_thread(const CambiPrepArgs &a, unsigned block_x, unsigned block_y,
                                unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.w) return;
    for (unsigned y0 = block_y * CAMBI_VSUM_ROWS; y0 < a.h; y0 += grid_y * CAMBI_VSUM_ROWS)
        cambi_vsum_column(a, x, y0, y0 + CAMBI_VSUM_ROWS < a.h ? y0 + CAMBI_VSUM_ROWS : a.h);
}

CAMBI_FN void cambi_mask_thread(const CambiPrepArgs &a, unsigned block_x, unsigned block_y,
                                unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.w) return;
    for (unsigned y = block_y; y < a.h; y += grid_y) cambi_mask_at(a, x, y);
}

CAMBI_FN void cambi_scale_thread(const CambiPrepArgs &a, unsigned block_x, unsigned block_y,
                                 unsigned grid_y, unsigned thread_x, unsigned block_dim)
{
    const unsigned x = block_x * block_dim + thread_x;
    if (x >= a.sw) return;
    for (unsigned y = block_y; y < a.sh; y += grid_y) cambi_scale_at(a, x, y);
}

/* ---- c-values ---------------------------------------------------------------- */

/* A block of the c-value launch: scale, strip (output columns x0 .. x0 +
 * S - 1) and chunk (output rows i0 .. i1 - 1).  Its steps run from istart:
 * the rows before i0 only fill the window. */
struct CambiBlock {
    unsigned scale;
    unsigned x0, i0, i1;
    int istart;
};

CAMBI_FN CambiBlock cambi_block(const CambiCArgs &a, unsigned block, unsigned strip_width)
{
    unsigned s = 0;
    while (s + 1 < CAMBI_SCALES && block >= a.scale[s + 1].first_block) s++;
    const CambiScaleJob &job = a.scale[s];
    const unsigned local = block - job.first_block;
    const int pad = (int)(a.window / 2);
    CambiBlock b;
    b.scale = s;
    b.x0 = (local % job.strips) * strip_width;
    b.i0 = (local / job.strips) * a.chunk_rows;
    b.i1 = b.i0 + a.chunk_rows < job.sh ? b.i0 + a.chunk_rows : job.sh;
    /* The window of row i0 holds rows i0 - pad .. i0 + pad: entered at the
     * steps i0 - 2 pad .. i0 (none above row 0). */
    const int first = (int)b.i0 - 2 * pad;
    b.istart = first > -pad ? first : -pad;
    return b;
}

/* The row that enters the window at step i (-1: none). */
CAMBI_FN int cambi_enter_row(const CambiCArgs &a, const CambiBlock &b, int i)
{
    const int row = i + (int)(a.window / 2);
    return row < (int)a.scale[b.scale].sh ? row : -1;
}

/* The row that leaves it (-1: none): only rows the block entered. */
CAMBI_FN int cambi_leave_row(const CambiCArgs &a, const CambiBlock &b, int i)
{
    const int pad = (int)(a.window / 2);
    const int row = i - pad - 1, first = (int)b.i0 - pad;
    return row >= 0 && row >= first ? row : -1;
}

/* The code of sample (x, row) of the block's scale; CAMBI_INVALID outside. */
CAMBI_FN unsigned cambi_code_at(const CambiScaleJob &job, int row, int x)
{
    if (x < 0 || x >= (int)job.sw) return CAMBI_INVALID;
    return job.codes[(size_t)row * job.sw + (unsigned)x];
}

/* What a thread loads for a step: the codes of its columns q = t + k S of
 * the span (the strip and pad columns on each side; column x0 - pad + q)
 * in the leaving (0) and entering (1) rows, and of the column before each
 * (where a run starts); and the code of its own output sample. */
template <int S>
struct CambiStepCodes {
    uint16_t code[2][CAMBI_SPAN / S], before[2][CAMBI_SPAN / S];
    uint16_t own;
};

template <int S>
CAMBI_FN void cambi_step_load(const CambiCArgs &a, const CambiBlock &b, int i, unsigned t,
                              CambiStepCodes<S> &c)
{
    const CambiScaleJob &job = a.scale[b.scale];
    const int pad = (int)(a.window / 2), span = S + 2 * pad;
    const int rows[2] = { cambi_leave_row(a, b, i), cambi_enter_row(a, b, i) };
    CAMBI_KERNEL_UNROLL
    for (int r = 0; r < 2; r++) {
        CAMBI_KERNEL_UNROLL
        for (int k = 0; k < CAMBI_SPAN / S; k++) {
            const int q = (int)t + k * S, x = (int)b.x0 - pad + q;
            const bool in = rows[r] >= 0 && q < span;
            c.code[r][k] = (uint16_t)(in ? cambi_code_at(job, rows[r], x) : CAMBI_INVALID);
            c.before[r][k] = (uint16_t)(in ? cambi_code_at(job, rows[r], x - 1) : CAMBI_INVALID);
        }
    }
    const unsigned x = b.x0 + t;
    c.own = (uint16_t)(i >= (int)b.i0 && x < job.sw ? cambi_code_at(job, i, (int)x)
                                                     : CAMBI_INVALID);
}

/* Stores the thread's codes into the step's rows (codes[r][q]) and returns
 * in bit k of starts[r] whether a run starts at its column q = t + k S:
 * the bit that a ballot puts at bit q % 32 of word q / 32 of the row.
 * Returns whether any of its codes, or its own, counts: when none of the
 * block's does, the step changes no counter and every c-value is 0. */
template <int S>
CAMBI_FN bool cambi_step_store(const CambiStepCodes<S> &c, unsigned t,
                               uint16_t codes[2][CAMBI_SPAN], unsigned starts[2])
{
    bool any = c.own != CAMBI_INVALID;
    CAMBI_KERNEL_UNROLL
    for (int r = 0; r < 2; r++) {
        starts[r] = 0;
        CAMBI_KERNEL_UNROLL
        for (int k = 0; k < CAMBI_SPAN / S; k++) {
            const uint16_t code = c.code[r][k];
            const unsigned start = code != c.before[r][k] ? 1u : 0u;
            codes[r][t + (unsigned)k * S] = code;
            starts[r] |= start << k;
            any = any || code != CAMBI_INVALID;
        }
    }
    return any;
}

/* Where thread t's counters are: counter r of its column is
 * bins[r * S + cambi_lane_column(t)].  Threads t and t + S/2 share 32-bit
 * words (the low and high halves), so that a warp's threads each read a
 * different bank whatever band rows they read (with S = 64). */
template <int S>
CAMBI_FN unsigned cambi_lane_column(unsigned t)
{
    return 2 * (t % (S / 2)) + t / (S / 2);
}

CAMBI_FN unsigned cambi_ctz64(uint64_t v)
{
#if defined(__CUDA_ARCH__)
    return (unsigned)__ffsll((long long)v) - 1;
#else
    return (unsigned)__builtin_ctzll(v);
#endif
}

/* Adds sign times the window of one row to the counters col[r * S] of
 * thread t: its window is columns t .. t + window - 1 of the span, whose
 * codes are codes[] and whose run starts are the bits of starts[] (word q
 * / 32, bit q % 32).  Each run of equal codes is one addition. */
template <int S>
CAMBI_FN void cambi_add_runs(uint16_t *col, const uint16_t *codes, const uint32_t *starts,
                             unsigned t, unsigned window, int sign)
{
    const uint64_t lo = (uint64_t)starts[0] | (uint64_t)starts[1] << 32;
    const uint64_t hi = (uint64_t)starts[2] | (uint64_t)starts[3] << 32;
    /* Bit b: a run starts at window position b + 1 (position 0 always
     * starts one).  t + 1 <= 64. */
    const unsigned o = t + 1;
    uint64_t runs = o == 64 ? hi : (lo >> o) | (hi << (64 - o));
    if (window - 1 < 64) runs &= ((uint64_t)1 << (window - 1)) - 1;
    unsigned start = 0, code = codes[t];
    while (runs) {
        const unsigned p = cambi_ctz64(runs) + 1;
        runs &= runs - 1;
        if (code != CAMBI_INVALID)
            col[(size_t)code * S] = (uint16_t)(col[(size_t)code * S] + sign * (int)(p - start));
        start = p;
        code = codes[t + p];
    }
    if (code != CAMBI_INVALID)
        col[(size_t)code * S] = (uint16_t)(col[(size_t)code * S] + sign * (int)(window - start));
}

/* Step i of thread t after the barrier: the leaving row out of its
 * column's window, the entering row in (unless no thread of the block had
 * a code that counts: active), then (from row i0 on) the c-value of its
 * sample (i, x0 + t) into the scale's plane and nz. */
template <int S>
CAMBI_FN void cambi_step_apply(const CambiCArgs &a, const CambiBlock &b, int i, unsigned t,
                               uint16_t *bins, const uint16_t codes[2][CAMBI_SPAN],
                               const uint32_t starts[2][CAMBI_SPAN_WORDS], unsigned own,
                               bool active, CambiNonZero *nz)
{
    const CambiScaleJob &job = a.scale[b.scale];
    const unsigned x = b.x0 + t;
    if (x >= job.sw) return;
    uint16_t *col = bins + cambi_lane_column<S>(t);
    if (active && cambi_leave_row(a, b, i) >= 0)
        cambi_add_runs<S>(col, codes[0], starts[0], t, a.window, -1);
    if (active && cambi_enter_row(a, b, i) >= 0)
        cambi_add_runs<S>(col, codes[1], starts[1], t, a.window, 1);
    if (i < (int)b.i0) return;
    const float c = own != CAMBI_INVALID
                        ? cambi_c_value(&a.contrast, a.reciprocal, col, S, (int)own)
                        : 0.0f;
    job.c_values[(size_t)i * job.sw + x] = c;
    cambi_nonzero_add(nz, c);
}

/* Clears thread t's counters (16-bit stores, as every other access to
 * them: no two types alias the counters). */
template <int S>
CAMBI_FN void cambi_clear_bins(const CambiCArgs &a, uint16_t *bins, unsigned t)
{
    uint16_t *col = bins + cambi_lane_column<S>(t);
    const unsigned rows = (unsigned)a.contrast.band_size;
    for (unsigned r = 0; r < rows; r++) col[(size_t)r * S] = 0;
}

/* Shared memory of a c-value block: the counters (bins_bytes, a multiple
 * of 16), then two steps' rows (double-buffered, so one barrier a step
 * suffices), then their run starts. */
struct CambiStepRows {
    uint16_t codes[2][2][CAMBI_SPAN];
    uint32_t starts[2][2][CAMBI_SPAN_WORDS];
};

/* ---- kernels ------------------------------------------------------------- */
#ifdef __CUDACC__
#include "gpu/cuda/lanes.cuh"

#define CAMBI_GRID blockIdx.x, blockIdx.y, gridDim.y, threadIdx.x, blockDim.x
#define CAMBI_ELEMENT_KERNEL(name, thread)                                          \
    extern "C" __global__ void __launch_bounds__(CAMBI_THREADS) name(CambiPrepArgs a) \
    {                                                                               \
        thread(a, CAMBI_GRID);                                                      \
    }

CAMBI_ELEMENT_KERNEL(cambi_load_8, cambi_load_thread<uint8_t>)
CAMBI_ELEMENT_KERNEL(cambi_load_16, cambi_load_thread<uint16_t>)
CAMBI_ELEMENT_KERNEL(cambi_flat_vsum, cambi_vsum_thread)
CAMBI_ELEMENT_KERNEL(cambi_mask, cambi_mask_thread)
CAMBI_ELEMENT_KERNEL(cambi_scale, cambi_scale_thread)

extern __shared__ uint4 cambi_shared[];

template <int S>
__device__ void cambi_c_values_block(const CambiCArgs &a)
{
    uint16_t *bins = (uint16_t *)cambi_shared;
    CambiStepRows *rows = (CambiStepRows *)((uint8_t *)cambi_shared + a.bins_bytes);
    const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const CambiBlock b = cambi_block(a, blockIdx.x, S);
    cambi_clear_bins<S>(a, bins, t);

    CambiNonZero nz = { 0.0, 0, __int_as_float(0x7f800000), 0.0f };
    CambiStepCodes<S> next;
    cambi_step_load<S>(a, b, b.istart, t, next);
    for (int i = b.istart; i < (int)b.i1; i++) {
        const unsigned buffer = (unsigned)(i - b.istart) & 1;
        unsigned starts[2];
        const bool any = cambi_step_store<S>(next, t, rows->codes[buffer], starts);
        #pragma unroll
        for (int r = 0; r < 2; r++) {
            #pragma unroll
            for (int k = 0; k < CAMBI_SPAN / S; k++) {
                const unsigned word = lanes_ballot((starts[r] >> k) & 1);
                if (lane == 0) rows->starts[buffer][r][(k * S) / 32 + warp] = word;
            }
        }
        const unsigned own = next.own;
        /* The next step's codes load while this one computes. */
        if (i + 1 < (int)b.i1) cambi_step_load<S>(a, b, i + 1, t, next);
        /* The barrier, and whether any thread has a code that counts. */
        const bool active = __syncthreads_or(any) != 0;
        cambi_step_apply<S>(a, b, i, t, bins, rows->codes[buffer], rows->starts[buffer], own,
                            active, &nz);
    }

    /* The warp's statistics, then one atomic each to the scale's. */
    for (int offset = 16; offset > 0; offset >>= 1) {
        nz.sum += lanes_shfl_down(nz.sum, offset);
        nz.count += lanes_shfl_down(nz.count, offset);
        nz.smallest = fminf(nz.smallest, lanes_shfl_down(nz.smallest, offset));
        nz.largest = fmaxf(nz.largest, lanes_shfl_down(nz.largest, offset));
    }
    if (lane == 0 && nz.count) {
        CambiScaleStats *st = a.scale[b.scale].stats;
        atomicAdd(&st->sum, nz.sum);
        atomicAdd(&st->count, nz.count);
        atomicMin(&st->smallest, __float_as_uint(nz.smallest));
        atomicMax(&st->largest, __float_as_uint(nz.largest));
    }
}

/* Shared memory, not registers, limits these blocks per SM: the second
 * bound keeps ptxas from squeezing registers for 32 blocks of an SM. */
extern "C" __global__ void __launch_bounds__(64, 1) cambi_c_values_64(CambiCArgs a)
{
    cambi_c_values_block<64>(a);
}

extern "C" __global__ void __launch_bounds__(32, 1) cambi_c_values_32(CambiCArgs a)
{
    cambi_c_values_block<32>(a);
}
#endif /* __CUDACC__ */
