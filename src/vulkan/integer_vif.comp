#version 450
// Integer VIF's Vulkan twin, the statistics of one scale: the scale's
// Gaussian filter (17, 9, 5 or 3 taps), vertically then horizontally, over
// the means, squares and product of the two pictures, and every filtered
// sample's contribution to the scale's four integer sums, exactly as
// src/metrics/integer_vif_tmpl.c and vif_pixel() (integer_vif.h) compute
// them: the same fixed-point roundings, the same 16-bit log2 table, and
// vif_pixel()'s double steps (g = sigma12 / (sigma1_sq + eps), sigma2_sq -
// g * sigma12, g * g * sigma1_sq) as IEEE binary64 operations carried out
// in integers (common.glsl), so every device gives libvmaf's bits.
//
// Workgroup (x, y) filters columns [x * 256, (x + 1) * 256) of rows
// [y * rows_per_group, ...): for each row the vertical pass of the columns
// and their halo (mirrored: -1 reads 1, w reads w - 2) goes to shared
// memory, then each invocation filters its column horizontally and adds
// its statistic.  The workgroup's four 64-bit sums are one partial; the
// host adds the partials (integer sums: any order gives the same total).
//
// Scale 0 reads the frame's luma (8 or 16-bit samples: the reference in
// the ring, the distorted picture in the frame slots); scales 1..3 read the
// decimated pictures (one 32-bit word per sample) that
// integer_vif_decimate.comp wrote.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define SEGMENT 256
#define MAX_HALF 8
layout(local_size_x = SEGMENT) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) readonly buffer Scaled { uint scaled_words[]; };
// The log2 table (two 16-bit entries a word), then the constants below.
layout(std430, binding = 3) readonly buffer Table { uint table_words[]; };
layout(std430, binding = 4) writeonly buffer Partials { uvec2 partials[]; };

// After the 16384 words of the log2 table: for sigma1_sq of b bits (18..31)
// at VIF_EPS_WORDS + b, what adding eps to it adds to its 53-bit mantissa;
// then the filters (VIF_COEFF_WORDS).
#define VIF_EPS_WORDS 16384u

layout(push_constant) uniform Push {
    uint ref_offset; // scale 0: bytes in the ring; scales 1..3: words in Scaled
    uint dis_offset; // scale 0: bytes in Frames; scales 1..3: words in Scaled
    uint stride;     // bytes (scale 0) or words
    int width;
    int height;
    uint scale;
    uint bytes_per_sample; // 1 or 2 at scale 0, 0 for the decimated words
    uint mu_round;
    uint mu_shift;
    uint sq_round;
    uint sq_shift;
    uint rows_per_group;
    uint out_offset; // this dispatch's first partial
    uint gain_lo;    // vif_enhn_gain_limit: mantissa and exponent
    uint gain_hi;
    int gain_e;
} pc;

// The filters of integer_vif.h, one after the other (17, 9, 5 and 3 taps)
// in the table buffer from VIF_COEFF_WORDS: a uniform load, where a
// constant array indexed at run time may live in per-invocation memory.
#define VIF_COEFF_WORDS (VIF_EPS_WORDS + 32u)
const uint COEFF_FIRST[4] = uint[4](0u, 17u, 26u, 31u);
const uint COEFF_WIDTH[4] = uint[4](17u, 9u, 5u, 3u);

shared uint v_mu1[SEGMENT + 2 * MAX_HALF];
shared uint v_mu2[SEGMENT + 2 * MAX_HALF];
shared uint v_xx[SEGMENT + 2 * MAX_HALF];
shared uint v_yy[SEGMENT + 2 * MAX_HALF];
shared uint v_xy[SEGMENT + 2 * MAX_HALF];
shared uvec2 red[4][SEGMENT];

// ---- vif_pixel begin ----
// (integer_vif.h's vif_pixel(), in integers; the parity test of the
// arithmetic reads this part on its own.)

uint vif_log2_entry(uint i)
{
    return (table_words[i >> 1] >> ((i & 1u) * 16u)) & 0xffffu;
}

// log2(v) * 2048 for v >= 2^17: the top 16 bits index the table.
int vif_log2_32(uint v)
{
    const int k = findMSB(v) - 15;
    return int(vif_log2_entry((v >> uint(k)) - 32768u)) + 2048 * k;
}

int vif_log2_64(uvec2 v)
{
    const int k = u64_bitlen(v) - 16;
    return int(vif_log2_entry(u64_shr(v, uint(k)).x - 32768u)) + 2048 * k;
}

// max((int32_t)(v - p), 0) for the double p: v - p rounded to a double,
// then truncated (vif_double_to_int32; every value that reaches it here is
// in range).  With p < v < 2^31, p = i + f (f its fraction) and x = v - p =
// (v - i - 1) + (1 - f): x rounds up to the integer v - i exactly when f is
// at most half a unit in the last place of x, 2^(floor(log2 x) - 53) (the
// tie goes up too: that integer's mantissa is even).
uint vif_sv_sq(uint v, SDouble p)
{
    if (!sd_lt(p, sd_from_u32(v))) return 0u;
    const uint sh = uint(-p.e); // p < 2^31 with 53 bits: sh >= 22
    uint i = 0u;
    uvec2 frac = p.m;
    if (sh < 64u) {
        const uvec2 ip = u64_shr(p.m, sh);
        i = ip.x;
        frac = u64_sub(p.m, u64_shl(ip, sh));
    }
    if (frac == uvec2(0u)) return v - i;
    const uint f = v - i - 1u;
    const int e = (f >= 1u ? findMSB(f) : -1) - 53 + int(sh);
    const bool up = e >= 53 || (e >= 0 && !u64_lt(u64_shl(uvec2(1u, 0u), uint(e)), frac));
    return up ? f + 1u : f;
}

// One filtered sample's statistic: num_log, den_log, num_non_log (64-bit,
// two's complement) and den_non_log added to acc[0..3].
void vif_pixel(uint mu1, uint mu2, uvec2 xx_sum, uvec2 yy_sum, uvec2 xy_sum, SDouble gain_limit,
               inout uvec2 acc[4])
{
    const uint sigma_nsq = 131072u;
    const uint mu1_sq = u64_add(u64_mul32(mu1, mu1), uvec2(0x80000000u, 0u)).y;
    const uint mu2_sq = u64_add(u64_mul32(mu2, mu2), uvec2(0x80000000u, 0u)).y;
    const uint mu1_mu2 = u64_add(u64_mul32(mu1, mu2), uvec2(0x80000000u, 0u)).y;
    const uint xx = u64_shr(u64_add(xx_sum, uvec2(32768u, 0u)), 16u).x;
    const uint yy = u64_shr(u64_add(yy_sum, uvec2(32768u, 0u)), 16u).x;
    const uint xy = u64_shr(u64_add(xy_sum, uvec2(32768u, 0u)), 16u).x;
    const int sigma1_sq = int(xx - mu1_sq);
    const int sigma2_sq = max(int(yy - mu2_sq), 0);
    const int sigma12 = int(xy - mu1_mu2);

    if (sigma1_sq < int(sigma_nsq)) {
        acc[2] = u64_add(acc[2], uvec2(uint(sigma2_sq), 0u));
        acc[3] = u64_add(acc[3], uvec2(1u, 0u));
        return;
    }
    const uint s1 = uint(sigma1_sq);
    acc[1] = u64_add(acc[1], i64_from_int(vif_log2_32(s1 + sigma_nsq) - 2048 * 17));

    if (sigma12 > 0 && sigma2_sq > 0) {
        // sigma1_sq + eps: sigma1_sq's mantissa plus eps in its units (the
        // rounding is the same for every sigma1_sq of b bits).
        const int b = findMSB(s1) + 1;
        const SDouble den = SDouble(u64_add(u64_shl(uvec2(s1, 0u), uint(53 - b)),
                                            uvec2(table_words[VIF_EPS_WORDS + uint(b)], 0u)),
                                    b - 53);
        const SDouble c12 = sd_from_u32(uint(sigma12));
        SDouble g = sd_div(c12, den);
        const uint sv_sq = vif_sv_sq(uint(sigma2_sq), sd_mul(g, c12));
        if (!sd_lt(g, gain_limit)) g = gain_limit;
        const uint numer1 = sv_sq + sigma_nsq;
        const uvec2 numer1_tmp =
            u64_add(sd_trunc_u64(sd_mul(sd_mul(g, g), sd_from_u32(s1))), uvec2(numer1, 0u));
        acc[0] = u64_add(acc[0], i64_from_int(vif_log2_64(numer1_tmp) - vif_log2_64(uvec2(numer1, 0u))));
    }
}
// ---- vif_pixel end ----

int mirror(int i, int size)
{
    if (i < 0) return -i;
    if (i >= size) return 2 * (size - 1) - i;
    return i;
}

uint load_ref(int row, int col)
{
    if (pc.bytes_per_sample == 0u) return scaled_words[pc.ref_offset + uint(row) * pc.stride + uint(col)];
    return SAMPLE(ring_words, pc.ref_offset + uint(row) * pc.stride + uint(col) * pc.bytes_per_sample,
                  pc.bytes_per_sample);
}

uint load_dis(int row, int col)
{
    if (pc.bytes_per_sample == 0u) return scaled_words[pc.dis_offset + uint(row) * pc.stride + uint(col)];
    return SAMPLE(frame_words, pc.dis_offset + uint(row) * pc.stride + uint(col) * pc.bytes_per_sample,
                  pc.bytes_per_sample);
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint first = VIF_COEFF_WORDS + COEFF_FIRST[pc.scale], fw = COEFF_WIDTH[pc.scale];
    const int half_fw = int(fw / 2u);
    const int x0 = int(gl_WorkGroupID.x) * SEGMENT;
    const int y0 = int(gl_WorkGroupID.y * pc.rows_per_group);
    const int y1 = min(y0 + int(pc.rows_per_group), pc.height);
    const int columns = min(SEGMENT, pc.width - x0) + 2 * half_fw;
    const SDouble gain_limit = SDouble(uvec2(pc.gain_lo, pc.gain_hi), pc.gain_e);

    uvec2 acc[4] = uvec2[4](uvec2(0u), uvec2(0u), uvec2(0u), uvec2(0u));
    for (int y = y0; y < y1; y++) {
        // Vertical pass of columns x0 - half .. x0 + n + half - 1.
        for (int i = int(lid); i < columns; i += SEGMENT) {
            const int col = mirror(x0 - half_fw + i, pc.width);
            uint mu1 = 0u, mu2 = 0u;
            uvec2 xx = uvec2(0u), yy = uvec2(0u), xy = uvec2(0u);
            for (uint k = 0u; k < fw; k++) {
                const int row = mirror(y - half_fw + int(k), pc.height);
                const uint c = table_words[first + k];
                const uint a = load_ref(row, col), b = load_dis(row, col);
                mu1 += c * a;
                mu2 += c * b;
                xx = u64_add(xx, u64_mul32(c * a, a));
                yy = u64_add(yy, u64_mul32(c * b, b));
                xy = u64_add(xy, u64_mul32(c * a, b));
            }
            v_mu1[i] = ((mu1 + pc.mu_round) >> pc.mu_shift) & 0xffffu;
            v_mu2[i] = ((mu2 + pc.mu_round) >> pc.mu_shift) & 0xffffu;
            v_xx[i] = u64_shr(u64_add(xx, uvec2(pc.sq_round, 0u)), pc.sq_shift).x;
            v_yy[i] = u64_shr(u64_add(yy, uvec2(pc.sq_round, 0u)), pc.sq_shift).x;
            v_xy[i] = u64_shr(u64_add(xy, uvec2(pc.sq_round, 0u)), pc.sq_shift).x;
        }
        barrier();
        if (x0 + int(lid) < pc.width) {
            uint mu1 = 0u, mu2 = 0u;
            uvec2 xx = uvec2(0u), yy = uvec2(0u), xy = uvec2(0u);
            for (uint k = 0u; k < fw; k++) {
                const uint i = lid + k, c = table_words[first + k];
                mu1 += c * v_mu1[i];
                mu2 += c * v_mu2[i];
                xx = u64_add(xx, u64_mul32(c, v_xx[i]));
                yy = u64_add(yy, u64_mul32(c, v_yy[i]));
                xy = u64_add(xy, u64_mul32(c, v_xy[i]));
            }
            vif_pixel(mu1, mu2, xx, yy, xy, gain_limit, acc);
        }
        barrier();
    }

    for (int q = 0; q < 4; q++) red[q][lid] = acc[q];
    barrier();
    for (uint half_size = SEGMENT / 2; half_size > 0u; half_size >>= 1) {
        if (lid < half_size)
            for (int q = 0; q < 4; q++) red[q][lid] = u64_add(red[q][lid], red[q][lid + half_size]);
        barrier();
    }
    if (lid < 4u) {
        const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
        partials[(pc.out_offset + group) * 4u + lid] = red[lid][0];
    }
}
