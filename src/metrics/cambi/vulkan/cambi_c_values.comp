#version 450
// cambi's Vulkan twin: the c-values of the five scales of a picture in one
// dispatch, and the statistics of the non-zero ones that pooling needs: the
// CUDA twin's cambi_c_values_64 / _32 (src/cuda/cambi.cu), the same
// decomposition.
//
// Workgroup b is a block of one scale: a strip of S output columns (x0 ..)
// and a chunk of rows (i0 .. i1 - 1); S invocations, one per column, each
// owning its column's window counts (one 16-bit counter per band row, two
// rows to a word of shared memory: only the invocation of the column ever
// touches those words).  The block starts its window at the chunk's first
// row and slides it down: per row (a step),
//   - every invocation loads the codes of the row that leaves the window
//     and of the row that enters it (the strip and window / 2 columns on
//     each side: the span) at columns t, t + S, .., and of the column
//     before each, stores them, and marks in a bit mask where a run of
//     equal codes starts (shared atomicOr: no subgroup size is assumed);
//     and whether any code of the block counts (a row where none does
//     changes no counter: most rows of most pictures);
//   - after the barrier each invocation takes each run of the leaving row
//     inside its window out of its counters and adds each run of the
//     entering row at once, then computes the c-value of its sample from
//     its counters as cambi.h's cambi_c_value(): the integer product of the
//     counts made float, in integers (f32_from_u32: Vulkan leaves the
//     rounding of a conversion open), times libvmaf's reciprocal, one
//     `precise` multiplication, correctly rounded on every device.
// The next step's codes load while this one computes; the code rows are
// double-buffered and the run starts triple-buffered (cleared two steps
// ahead), so one barrier a step suffices.
//
// A code is a sample's band row (its value less band_base) where it is
// masked and inside the band, else INVALID.  Each block writes one partial
// of its non-zero c-values: their count, the bits of the smallest and the
// largest (a positive float's order is its bits' order) and their exact sum
// as a 96-bit integer of 2^-36 units (every c-value is a multiple of it: c
// >= 1 * reciprocal[4225] > 2^-13, whose ulp is 2^-36, and c < 2^14; the
// host checks the table's bound).  Any order gives the same integers, and
// where pooling uses the sum it is exact in double in any order
// (cambi_pool_needs_values()), so it is the C reference's sum.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "cambi.glsl"

layout(local_size_x_id = 0) in;
// ceil(band_size / 2): the words of one column's counters.
layout(constant_id = 1) const uint BIN_ROWS = 1u;

const uint S = gl_WorkGroupSize.x;
// The span: the strip and up to 32 columns (window / 2) on each side.
const uint SPAN = S + 64u;
const uint K = SPAN / S; // span columns per invocation
// The run starts of a row: one bit per span column, and a word of zeros
// after them (a window's bits are read as three words).
const uint SPAN_WORDS = (SPAN + 31u) / 32u + 1u;
// A step's run starts: both rows', then whether any code counts.
const uint STEP_WORDS = 2u * SPAN_WORDS + 1u;
const uint ACTIVE = 2u * SPAN_WORDS;
const uint INVALID = 0xffffu;
// c-values in units of 2^-FIX_UNIT: the exponent of 2^-13 plus 23.
const int FIX_UNIT = 36;
const int FIX_MIN_EXP = -13;

layout(std430, binding = 5) writeonly buffer Partials { uint partials[]; };

layout(push_constant) uniform Push {
    uint picture;
    uint partial_base; // words, in Partials: where this slot's region starts
    uint plane_base;   // words, in Planes: where the frame's region starts
} pc;

// Counter r of column t: half r & 1 of bins[(r >> 1) S + t].
shared uint bins[BIN_ROWS * S];
// [buffer][0: leaving, 1: entering][span column]
shared uint row_codes[4u * SPAN];
// [buffer][step words]
shared uint starts[3u * STEP_WORDS];
// The invocations' statistics at the end.
shared uint red_count[S], red_smallest[S], red_largest[S];
shared uvec3 red_sum[S];

// The block (set at the start of main).
uint t, plane, sw, sh, x0, window;
int i0, i1, pad, span;
int band_base, band_size, num_diffs, vlt_luma;

// What an invocation loads for a step: codes of its span columns t + k S
// in the leaving (r = 0) and entering (r = 1) rows at [r K + k], of the
// column before each, and of its own output sample.
uint next_code[2u * K], next_before[2u * K];
uint next_own;

uint code_of(uint word)
{
    const int row = int(word & 0xffffu) - band_base;
    return (word & CAMBI_MASKED) != 0u && uint(row) < uint(band_size) ? uint(row) : INVALID;
}

uint code_at(int row, int x)
{
    if (x < 0 || x >= int(sw)) return INVALID;
    return code_of(planes[plane + uint(row) * sw + uint(x)]);
}

// The row that enters the window at step i (-1: none).
int enter_row(int i)
{
    const int row = i + pad;
    return row < int(sh) ? row : -1;
}

// The row that leaves it (-1: none): only rows the block entered.
int leave_row(int i)
{
    const int row = i - pad - 1;
    return row >= 0 && row >= i0 - pad ? row : -1;
}

void load_step(int i)
{
    const int rows[2] = int[2](leave_row(i), enter_row(i));
    for (uint r = 0u; r < 2u; r++) {
        for (uint k = 0u; k < K; k++) {
            const int q = int(t + k * S), x = int(x0) - pad + q;
            const bool inside = rows[r] >= 0 && q < span;
            next_code[r * K + k] = inside ? code_at(rows[r], x) : INVALID;
            next_before[r * K + k] = inside ? code_at(rows[r], x - 1) : INVALID;
        }
    }
    const uint x = x0 + t;
    next_own = i >= i0 && x < sw ? code_at(i, int(x)) : INVALID;
}

void bin_add(uint code, int delta)
{
    // Counts stay within 0 .. 65535, so a half never carries into the other.
    bins[(code >> 1) * S + t] += uint(delta) << ((code & 1u) * 16u);
}

uint bin_count(uint r)
{
    return (bins[(r >> 1) * S + t] >> ((r & 1u) * 16u)) & 0xffffu;
}

// Adds sign times the window of one row (codes at row_codes[codes], run
// starts at starts[runs]) to the counters: the window is span columns t ..
// t + window - 1, and each run of equal codes inside it is one addition.
void add_runs(uint codes, uint runs_at, int sign)
{
    // Bits t + 1 .. t + window - 1: bit b says a run starts at window
    // position b + 1 (position 0 always starts one).
    const uint o = t + 1u, word = o >> 5, shift = o & 31u;
    const uint w0 = starts[runs_at + word], w1 = starts[runs_at + word + 1u],
               w2 = starts[runs_at + word + 2u];
    uvec2 runs = shift == 0u ? uvec2(w0, w1)
                             : uvec2((w0 >> shift) | (w1 << (32u - shift)),
                                     (w1 >> shift) | (w2 << (32u - shift)));
    const uint n = window - 1u;
    if (n < 32u) runs = uvec2(runs.x & ((1u << n) - 1u), 0u);
    else if (n < 64u) runs.y &= (1u << (n - 32u)) - 1u;
    uint start = 0u, code = row_codes[codes + t];
    while (runs != uvec2(0u)) {
        uint p;
        if (runs.x != 0u) {
            p = uint(findLSB(runs.x)) + 1u;
            runs.x &= runs.x - 1u;
        } else {
            p = uint(findLSB(runs.y)) + 33u;
            runs.y &= runs.y - 1u;
        }
        if (code != INVALID) bin_add(code, sign * int(p - start));
        start = p;
        code = row_codes[codes + t + p];
    }
    if (code != INVALID) bin_add(code, sign * int(window - start));
}

// cambi.h's cambi_c_value() for band row v, from this column's counters.
float c_value(int v)
{
    const int value = v + band_base + num_diffs;
    const uint p0 = bin_count(uint(v));
    float c = 0.0;
    for (int d = 0; d < CAMBI_MAX_DIFFS; d++) {
        if (d >= num_diffs) break;
        if (value > params.tvi[d] || value + d + 1 <= vlt_luma) continue;
        const uint p1 = bin_count(uint(v + d + 1));
        const uint p2 = v - d - 1 >= 0 ? bin_count(uint(v - d - 1)) : 0u;
        const uint p = max(p1, p2);
        const float reciprocal = uintBitsToFloat(table[p + p0]);
        precise float val = f32_from_u32(uint(params.weights[d]) * p0 * p) * reciprocal;
        if (val > c) c = val;
    }
    return c;
}

// A positive float's value in units of 2^-FIX_UNIT.
uvec3 fixed_point(uint bits)
{
    const int e = int(bits >> 23) - 127;
    const uint m = (bits & 0x7fffffu) | 0x800000u;
    return uvec3(u64_shl(uvec2(m, 0u), uint(e - FIX_MIN_EXP)), 0u);
}

void main()
{
    t = gl_LocalInvocationID.x;
    const uint p = pc.picture;
    band_base = params.band_base;
    band_size = params.band_size;
    num_diffs = params.num_diffs;
    vlt_luma = params.vlt_luma;
    window = params.pic[p].window;
    pad = int(window / 2u);
    span = int(S) + 2 * pad;

    // The block: its scale, strip and chunk.
    const uint block = gl_WorkGroupID.x;
    uint s = 0u;
    while (s + 1u < CAMBI_SCALES && block >= params.pic[p].scale[s + 1u].first_block) s++;
    plane = pc.plane_base + params.pic[p].scale[s].plane;
    sw = params.pic[p].scale[s].sw;
    sh = params.pic[p].scale[s].sh;
    const uint strips = params.pic[p].scale[s].strips;
    const uint local_block = block - params.pic[p].scale[s].first_block;
    const uint chunk_rows = params.pic[p].chunk_rows;
    x0 = (local_block % strips) * S;
    i0 = int((local_block / strips) * chunk_rows);
    i1 = min(i0 + int(chunk_rows), int(sh));
    // The window of row i0 holds rows i0 - pad .. i0 + pad: entered at the
    // steps i0 - 2 pad .. i0 (none above row 0).
    const int istart = max(i0 - 2 * pad, -pad);

    for (uint r = 0u; r < BIN_ROWS; r++) bins[r * S + t] = 0u;
    for (uint k = t; k < 3u * STEP_WORDS; k += S) starts[k] = 0u;
    memoryBarrierShared();
    barrier();

    uint count = 0u, smallest = 0x7f800000u, largest = 0u; // +inf, 0: none
    uvec3 sum = uvec3(0u);
    load_step(istart);
    for (int i = istart; i < i1; i++) {
        const uint step = uint(i - istart);
        const uint codes = (step & 1u) * 2u * SPAN, runs = (step % 3u) * STEP_WORDS;
        bool any = next_own != INVALID;
        for (uint r = 0u; r < 2u; r++) {
            for (uint k = 0u; k < K; k++) {
                const uint q = t + k * S, code = next_code[r * K + k];
                row_codes[codes + r * SPAN + q] = code;
                if (code != next_before[r * K + k])
                    atomicOr(starts[runs + r * SPAN_WORDS + (q >> 5)], 1u << (q & 31u));
                any = any || code != INVALID;
            }
        }
        if (any) atomicOr(starts[runs + ACTIVE], 1u);
        // The starts of step i + 1: last read at step i - 2.
        const uint clear = ((step + 1u) % 3u) * STEP_WORDS;
        for (uint k = t; k < STEP_WORDS; k += S) starts[clear + k] = 0u;
        const uint own = next_own;
        if (i + 1 < i1) load_step(i + 1);
        memoryBarrierShared();
        barrier();

        if (x0 + t < sw) {
            if (starts[runs + ACTIVE] != 0u) {
                if (leave_row(i) >= 0) add_runs(codes, runs, -1);
                if (enter_row(i) >= 0) add_runs(codes + SPAN, runs + SPAN_WORDS, 1);
            }
            // (own is INVALID before row i0.)
            const float c = own != INVALID ? c_value(int(own)) : 0.0;
            if (c > 0.0) {
                const uint bits = floatBitsToUint(c);
                count++;
                smallest = min(smallest, bits);
                largest = max(largest, bits);
                sum = u96_add(sum, fixed_point(bits));
            }
        }
    }

    // The block's statistics: one partial.
    red_count[t] = count;
    red_smallest[t] = smallest;
    red_largest[t] = largest;
    red_sum[t] = sum;
    memoryBarrierShared();
    barrier();
    if (t == 0u) {
        for (uint k = 1u; k < S; k++) {
            count += red_count[k];
            smallest = min(smallest, red_smallest[k]);
            largest = max(largest, red_largest[k]);
            sum = u96_add(sum, red_sum[k]);
        }
        const uint at = pc.partial_base + (params.pic[p].first_partial + block) * 6u;
        partials[at] = count;
        partials[at + 1u] = smallest;
        partials[at + 2u] = largest;
        partials[at + 3u] = sum.x;
        partials[at + 4u] = sum.y;
        partials[at + 5u] = sum.z;
    }
}
