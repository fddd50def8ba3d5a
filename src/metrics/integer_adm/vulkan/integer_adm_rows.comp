#version 450
// Integer ADM's Vulkan twin, the sums of one level's scored rows, exactly
// as csf_den_level0/123() and masked_sum() (src/metrics/integer_adm.c)
// compute them, with the rounding shifts adm_den_shifts() and
// adm_masked_shifts() give (push constants):
//   den: per orientation, the row sum of the cubed reference detail
//        (level 0: |o|^3 exactly; levels 1..3: ((m^2 + sq_add) >> sq) * m
//        + cub_add) >> cub in wrapping 64-bit unsigned arithmetic), then
//        (row + row_add) >> row_shift;
//   DLM: max(|csf(rst)| - (threshold << sub), 0) cubed with the masked
//        shifts against the 3x3 masking threshold of the additive
//        impairment (rows -1 -> 1 and h -> h - 1, columns -1 -> 1 and
//        w -> w - 1, as libvmaf's window), then the row's signed shift;
//   AIM: the same the other way round.
// Workgroup y sums scored row top + y; its nine shifted row sums (den,
// DLM, AIM, each h, v, d) are one partial for the host to add.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"

#define GROUP 128
layout(local_size_x = GROUP) in;

layout(std430, binding = 0) readonly buffer Bands { int band[]; };
layout(std430, binding = 1) writeonly buffer Partials { uvec2 partials[]; };

layout(push_constant) uniform Push {
    uint flags; // 1: level 0, 2: skip AIM
    int top, left, right; // adm_rect_scored
    int width, height;    // of the bands
    uint stride;
    uint plane_words;
    uint csf[3];
    uint out_offset; // in Partials: this level's first row's first sum
    // adm_masked_shifts(): sq_add, cub_add per orientation, row_add; then
    // sq, sub, cub (bytes 0..2 of each word) and row_shift.
    uint m_sq_add[3];
    uint m_cub_add[3];
    uint m_row_add;
    uint m_sq;
    uint m_sub;
    uint m_cub;
    uint m_row_shift;
    // adm_den_shifts(): sq_add, cub_add, row_add, then sq, cub, row_shift
    // (bytes 0..2).
    uint d_sq_add;
    uint d_cub_add;
    uint d_row_add;
    uint d_shifts;
    uint base;       // words: where the frame's region of Bands starts
} pc;

shared uvec2 red[9][GROUP];

int abs_wrap(int v)
{
    return v < 0 ? int(0u - uint(v)) : v;
}

uint byte_of(uint word, uint b)
{
    return (word >> (8u * b)) & 0xffu;
}

// The 3x3 window's column sum of `around` (plane base) at column j.
uint column_sum(uint base, int up, int mid, int down, int j)
{
    const int c = j < 0 ? 1 : j >= pc.width ? pc.width - 1 : j;
    return uint(band[base + uint(up) * pc.stride + uint(c)]) +
           uint(band[base + uint(mid) * pc.stride + uint(c)]) +
           uint(band[base + uint(down) * pc.stride + uint(c)]);
}

// One orientation's masked term of a detail value against a threshold.
uvec2 masked_term(int src, uint b, uint thr)
{
    const bool level0 = (pc.flags & 1u) != 0u;
    const int c = level0 ? src * int(pc.csf[b])
                         : int(i64_sar(u64_add(i64_mul_iu(src, pc.csf[b]), uvec2(1u << 27, 0u)), 28u).x);
    int m = int(uint(abs_wrap(c)) - (thr << byte_of(pc.m_sub, b)));
    if (m < 0) m = 0;
    const int m_sq = int(i64_sar(u64_add(i64_mul(m, m), uvec2(pc.m_sq_add[b], 0u)),
                                 byte_of(pc.m_sq, b) & 63u).x);
    return i64_sar(u64_add(i64_mul(m_sq, m), uvec2(pc.m_cub_add[b], 0u)), byte_of(pc.m_cub, b) & 63u);
}

// One orientation's cubed reference detail.
uvec2 den_term(int o)
{
    if ((pc.flags & 1u) != 0u) {
        const uint m = uint(abs(o)) & 0xffffu;
        return u64_mul32(m * m, m);
    }
    const uint m = uint(abs_wrap(o));
    uvec2 t = u64_add(u64_mul32(m, m), uvec2(pc.d_sq_add, 0u));
    t = u64_mul_lo(u64_shr(t, byte_of(pc.d_shifts, 0u) & 63u), m);
    return u64_shr(u64_add(t, uvec2(pc.d_cub_add, 0u)), byte_of(pc.d_shifts, 1u) & 63u);
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const int i = pc.top + int(gl_WorkGroupID.x);
    const int up = i == 0 ? 1 : i - 1, down = i == pc.height - 1 ? pc.height - 1 : i + 1;
    const uint P = pc.plane_words;
    const bool aim = (pc.flags & 2u) == 0u;

    uvec2 sums[9];
    for (int q = 0; q < 9; q++) sums[q] = uvec2(0u);
    for (int j = pc.left + int(lid); j < pc.right; j += GROUP) {
        const uint x = pc.base + uint(i) * pc.stride + uint(j);
        for (uint b = 0u; b < 3u; b++) sums[b] = u64_add(sums[b], den_term(band[(1u + b) * P + x]));

        const uint thr = column_sum(pc.base + 11u * P, up, i, down, j - 1) +
                         column_sum(pc.base + 11u * P, up, i, down, j) +
                         column_sum(pc.base + 11u * P, up, i, down, j + 1) + uint(band[12u * P + x]);
        for (uint b = 0u; b < 3u; b++)
            sums[3u + b] = u64_add(sums[3u + b], masked_term(band[(8u + b) * P + x], b, thr));
        if (aim) {
            const uint thr_aim = column_sum(pc.base + 13u * P, up, i, down, j - 1) +
                                 column_sum(pc.base + 13u * P, up, i, down, j) +
                                 column_sum(pc.base + 13u * P, up, i, down, j + 1) + uint(band[14u * P + x]);
            for (uint b = 0u; b < 3u; b++)
                sums[6u + b] = u64_add(sums[6u + b], masked_term(band[(5u + b) * P + x], b, thr_aim));
        }
    }

    // The row's sums in two steps (few barriers): 16 invocations add 8
    // values each, then 9 add 16 each.
    for (int q = 0; q < 9; q++) red[q][lid] = sums[q];
    barrier();
    if (lid < 16u) {
        for (int q = 0; q < 9; q++) {
            uvec2 sum = red[q][lid];
            for (uint i = 1u; i < GROUP / 16u; i++) sum = u64_add(sum, red[q][lid + 16u * i]);
            red[q][lid] = sum;
        }
    }
    barrier();
    if (lid < 9u) {
        uvec2 row = red[lid][0];
        for (uint i = 1u; i < 16u; i++) row = u64_add(row, red[lid][i]);
        uvec2 shifted;
        if (lid < 3u) // unsigned
            shifted = u64_shr(u64_add(row, uvec2(pc.d_row_add, 0u)), byte_of(pc.d_shifts, 2u) & 63u);
        else // (int64_t)(row + row_add) >> row_shift
            shifted = i64_sar(u64_add(row, uvec2(pc.m_row_add, 0u)), pc.m_row_shift & 63u);
        partials[pc.out_offset + gl_WorkGroupID.x * 9u + lid] = shifted;
    }
}
