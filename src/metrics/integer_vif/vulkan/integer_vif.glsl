// Integer VIF's Vulkan twin, the statistics of one scale (the body of
// integer_vif.comp, and of integer_vif_f64.comp, which defines VIF_NATIVE
// for devices with shaderFloat64 and shaderInt64): the scale's Gaussian
// filter (17, 9, 5 or 3 taps), vertically then horizontally, over the
// means, squares and product of the two pictures, and every filtered
// sample's contribution to the scale's four integer sums, exactly as
// src/metrics/integer_vif_tmpl.c and vif_pixel() (integer_vif.h) compute
// them: the same fixed-point roundings, the same 16-bit log2 table and the
// same double roundings (integer_vif_pixel.glsl).
//
// Specialisation constants: FW, the filter width; BPS, how samples are
// stored (1 or 2 bytes at scale 0, which reads the frame's luma: the
// reference in the ring, the distorted picture in the frame slots; 0 for
// the decimated pictures of scales 1..3, one 32-bit word per sample, that
// integer_vif_decimate.comp wrote); TAP0 .. TAP8, the filter's first FW / 2 + 1
// coefficients (it is symmetric).  The tap loops unroll over constants.
//
// Workgroup (x, y) filters OUT = 256 - 2 * (FW / 2) columns from x * OUT,
// rows [y * rows_per_group, ...).  For each row, invocation i makes the
// vertical pass of column x * OUT - FW / 2 + i (mirrored: -1 reads 1, w
// reads w - 2), the output columns and their halo one each, into shared
// memory (two buffers, one row in each, so one barrier a row suffices);
// then invocations 0 .. OUT - 1 filter their column horizontally and add
// its statistic.  The sums are unsigned and never wrap, so the order of the
// taps does not matter; at 8 bits the squares fit 32 bits (17 taps summing
// to 65536, times 255^2), above they take 64.  The workgroup's four 64-bit
// sums are one partial; the host adds the partials (integer sums: any
// order gives the same total).

#extension GL_EXT_control_flow_attributes : require
#include "gpu/vulkan/common.glsl"

#define THREADS 256u
layout(local_size_x = 256) in;

layout(constant_id = 0) const uint FW = 17u;
layout(constant_id = 1) const uint BPS = 1u;
layout(constant_id = 2) const uint TAP0 = 0u;
layout(constant_id = 3) const uint TAP1 = 0u;
layout(constant_id = 4) const uint TAP2 = 0u;
layout(constant_id = 5) const uint TAP3 = 0u;
layout(constant_id = 6) const uint TAP4 = 0u;
layout(constant_id = 7) const uint TAP5 = 0u;
layout(constant_id = 8) const uint TAP6 = 0u;
layout(constant_id = 9) const uint TAP7 = 0u;
layout(constant_id = 10) const uint TAP8 = 0u;
const uint HALF = FW / 2u;
const uint OUT = THREADS - 2u * HALF;
const bool SQUARES32 = BPS == 1u;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) readonly buffer Scaled { uint scaled_words[]; };
// The log2 table and the eps adders (integer_vif_pixel.glsl).
layout(std430, binding = 3) readonly buffer Table { uint table_words[]; };
layout(std430, binding = 4) writeonly buffer Partials { uvec2 partials[]; };

layout(push_constant) uniform Push {
    uint ref_offset; // words: in the ring (scale 0) or in Scaled
    uint dis_offset; // words: in Frames (scale 0) or in Scaled
    uint stride;     // words
    int width;
    int height;
    uint mu_round;
    uint mu_shift;
    uint sq_round;
    uint sq_shift;
    uint rows_per_group;
    uint out_offset; // this dispatch's first partial
    uint gain_lo;    // vif_enhn_gain_limit: its IEEE binary64 bits
    uint gain_hi;
} pc;

#include "integer_vif_pixel.glsl"

// 64-bit sums: the device's, or pairs of words.
#ifdef VIF_NATIVE
#define WIDE uint64_t
WIDE wide_zero() { return 0ul; }
WIDE wide_add(WIDE a, WIDE b) { return a + b; }
WIDE wide_mac(WIDE acc, uint a, uint b) { return acc + uint64_t(a) * b; }
uint wide_round(WIDE v, uint add, uint shift) { return uint((v + add) >> shift); }
uvec2 wide_words(WIDE v) { return unpackUint2x32(v); }
#else
#define WIDE uvec2
WIDE wide_zero() { return uvec2(0u); }
WIDE wide_add(WIDE a, WIDE b) { return u64_add(a, b); }
WIDE wide_mac(WIDE acc, uint a, uint b) { return u64_add(acc, u64_mul32(a, b)); }
uint wide_round(WIDE v, uint add, uint shift) { return u64_shr(u64_add(v, uvec2(add, 0u)), shift).x; }
uvec2 wide_words(WIDE v) { return v; }
#endif

// A vertical pass a column: (mu1 | mu2 << 16, xx, yy, xy), one row in each half.
shared uvec4 vert[2 * THREADS];
shared WIDE red[4][THREADS];

// Coefficient k of the filter (k <= FW / 2); a constant once the loops
// are unrolled.
uint tap(uint k)
{
    return k == 0u ? TAP0 : k == 1u ? TAP1 : k == 2u ? TAP2 : k == 3u ? TAP3 : k == 4u ? TAP4
         : k == 5u ? TAP5 : k == 6u ? TAP6 : k == 7u ? TAP7 : TAP8;
}

// Index i of a line of n samples mirrored without repeating the edge (one
// reflection: every half width is below the side of its scale).
int mirror(int i, int n)
{
    return (n - 1) - abs((n - 1) - abs(i));
}

uint load_ref(uint word)
{
    return BPS == 0u ? scaled_words[word] : ring_words[word];
}

uint load_dis(uint word)
{
    return BPS == 0u ? scaled_words[word] : frame_words[word];
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const int x0 = int(gl_WorkGroupID.x * OUT);
    const int y0 = int(gl_WorkGroupID.y * pc.rows_per_group);
    const int y1 = min(y0 + int(pc.rows_per_group), pc.height);
    const int n = min(int(OUT), pc.width - x0);
    const bool column = int(lid) < n + int(2u * HALF);
    const bool output_column = int(lid) < n;

    // Where this invocation's column is: its word in a row, and the sample
    // within the word.
    const uint col = uint(mirror(x0 - int(HALF) + int(lid), pc.width));
    const uint col_word = BPS == 1u ? col >> 2 : BPS == 2u ? col >> 1 : col;
    const uint shift = BPS == 1u ? (col & 3u) * 8u : BPS == 2u ? (col & 1u) * 16u : 0u;
    const uint mask = BPS == 1u ? 0xffu : 0xffffu;
    const uint ref_base = pc.ref_offset + col_word, dis_base = pc.dis_offset + col_word;

#ifdef VIF_NATIVE
    const double gain_limit = vif_gain_limit(pc.gain_lo, pc.gain_hi);
#else
    const SDouble gain_limit = vif_gain_limit(pc.gain_lo, pc.gain_hi);
#endif
    WIDE acc[4] = WIDE[4](wide_zero(), wide_zero(), wide_zero(), wide_zero());
    for (int y = y0; y < y1; y++) {
        const uint half_buffer = uint(y & 1) * THREADS;
        if (column) {
            const uint centre = uint(y) * pc.stride;
            const uint a = (load_ref(ref_base + centre) >> shift) & mask;
            const uint b = (load_dis(dis_base + centre) >> shift) & mask;
            const uint cc = tap(HALF);
            uint mu1 = cc * a, mu2 = cc * b;
            uint xx32 = (cc * a) * a, yy32 = (cc * b) * b, xy32 = (cc * a) * b;
            WIDE xx = wide_mac(wide_zero(), cc * a, a), yy = wide_mac(wide_zero(), cc * b, b),
                 xy = wide_mac(wide_zero(), cc * a, b);
            [[unroll]] for (uint k = 0u; k < HALF; k++) {
                const uint up = uint(mirror(y - int(HALF - k), pc.height)) * pc.stride;
                const uint down = uint(mirror(y + int(HALF - k), pc.height)) * pc.stride;
                const uint a0 = (load_ref(ref_base + up) >> shift) & mask;
                const uint a1 = (load_ref(ref_base + down) >> shift) & mask;
                const uint b0 = (load_dis(dis_base + up) >> shift) & mask;
                const uint b1 = (load_dis(dis_base + down) >> shift) & mask;
                const uint c = tap(k);
                mu1 += c * (a0 + a1);
                mu2 += c * (b0 + b1);
                const uint ca0 = c * a0, ca1 = c * a1, cb0 = c * b0, cb1 = c * b1;
                if (SQUARES32) {
                    xx32 += ca0 * a0 + ca1 * a1;
                    yy32 += cb0 * b0 + cb1 * b1;
                    xy32 += ca0 * b0 + ca1 * b1;
                } else {
                    xx = wide_mac(wide_mac(xx, ca0, a0), ca1, a1);
                    yy = wide_mac(wide_mac(yy, cb0, b0), cb1, b1);
                    xy = wide_mac(wide_mac(xy, ca0, b0), ca1, b1);
                }
            }
            // 16 bits of the means, 32 of the squares, as the reference
            // keeps (at 8 bits the squares are not shifted).
            const uint m1 = ((mu1 + pc.mu_round) >> pc.mu_shift) & 0xffffu;
            const uint m2 = ((mu2 + pc.mu_round) >> pc.mu_shift) & 0xffffu;
            vert[half_buffer + lid] =
                SQUARES32 ? uvec4(m1 | (m2 << 16), xx32, yy32, xy32)
                          : uvec4(m1 | (m2 << 16), wide_round(xx, pc.sq_round, pc.sq_shift),
                                  wide_round(yy, pc.sq_round, pc.sq_shift),
                                  wide_round(xy, pc.sq_round, pc.sq_shift));
        }
        barrier();
        if (output_column) {
            const uvec4 m = vert[half_buffer + lid + HALF];
            const uint cc = tap(HALF);
            uint mu1 = cc * (m.x & 0xffffu), mu2 = cc * (m.x >> 16);
            WIDE xx = wide_mac(wide_zero(), cc, m.y), yy = wide_mac(wide_zero(), cc, m.z),
                 xy = wide_mac(wide_zero(), cc, m.w);
            [[unroll]] for (uint k = 0u; k < HALF; k++) {
                const uvec4 l = vert[half_buffer + lid + k];
                const uvec4 r = vert[half_buffer + lid + FW - 1u - k];
                const uint c = tap(k);
                mu1 += c * ((l.x & 0xffffu) + (r.x & 0xffffu));
                mu2 += c * ((l.x >> 16) + (r.x >> 16));
                xx = wide_mac(wide_mac(xx, c, l.y), c, r.y);
                yy = wide_mac(wide_mac(yy, c, l.z), c, r.z);
                xy = wide_mac(wide_mac(xy, c, l.w), c, r.w);
            }
            vif_pixel(mu1, mu2, xx, yy, xy, gain_limit, acc);
        }
        // No second barrier: the next row fills the other buffer, and the
        // row after it comes after the next barrier, which every invocation
        // reaches only once done with this row.
    }

    // The workgroup's sums in two steps (few barriers): 32 invocations add
    // 8 values each, then 4 add 32 each.
    for (int q = 0; q < 4; q++) red[q][lid] = acc[q];
    barrier();
    if (lid < 32u) {
        for (int q = 0; q < 4; q++) {
            WIDE sum = red[q][lid];
            for (uint i = 1u; i < THREADS / 32u; i++) sum = wide_add(sum, red[q][lid + 32u * i]);
            red[q][lid] = sum;
        }
    }
    barrier();
    if (lid < 4u) {
        WIDE sum = red[lid][0];
        for (uint i = 1u; i < 32u; i++) sum = wide_add(sum, red[lid][i]);
        const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
        partials[(pc.out_offset + group) * 4u + lid] = wide_words(sum);
    }
}
