#version 450
// XPSNR's Vulkan twin: a frame's integer block sums (xpsnr.h, XpsnrSums),
// exactly as the C reference's kernels (xpsnr_tmpl.c) make them; the host
// makes the values from them with the C reference's own finish.
//
// Workgroup (k, 0) sums luma block k (raster order): its SSE, the
// high-pass over its bounds (the picture's outer ring of `step` samples
// left out; 3x3 at step 1, on 2x2 steps at step 2) and the temporal sum
// (|first or second difference| of the reference and its previous ones,
// of samples at step 1, of 2x2 sums at step 2; a previous picture before
// the first frame is 0).  Workgroup (k, p) of p = 1, 2 sums the SSE of
// chroma block k of plane p.  The luma samples of the activity are read as
// FFmpeg's filter reads them, 16-bit ones as signed.  The host only hands
// this shader pictures whose reads stay inside them (even sizes at step 2)
// and SSEs that are exact (at most 14 bits).  Every sum is a 64-bit
// integer made of 32-bit words (common.glsl), the same in any order.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"

#define THREADS 256u
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) writeonly buffer Sums { uvec2 sums[]; };

layout(push_constant) uniform Push {
    uint ref_offset[3]; // bytes; plane 0 is in the ring, planes 1-2 in frames
    uint dist_offset[3];
    uint stride[3];
    uint width[3];
    uint height[3];
    uint prev_offset[2]; // bytes in the ring: the previous reference lumas
    uint flags;          // 1, 2: prev 0, 1 there; 4: second order; 8: 2 bytes a sample
    uint block;
    uint blocks_x;
    uint step;
    uint luma_blocks;   // the slot's sums: SSEs, high-pass and temporal sums of
                        // the luma blocks, then the chroma SSEs of each plane
    uint out_offset;    // index of this slot's first sum
} pc;

shared uvec2 partial[3][THREADS];

uint bps() { return (pc.flags & 8u) != 0u ? 2u : 1u; }

// A luma sample of the activity: the reference (k = 0) or a previous one.
int org(uint k, int x, int y)
{
    if (k > 0u && (pc.flags & k) == 0u) return 0;
    const uint base = k == 0u ? pc.ref_offset[0] : pc.prev_offset[k - 1u];
    const uint v = SAMPLE(ring_words, base + uint(y) * pc.stride[0] + uint(x) * bps(), bps());
    return bps() == 2u ? int(v << 16) >> 16 : int(v);
}

uint plane_sample(bool ref, uint p, uint x, uint y)
{
    const uint at = (ref ? pc.ref_offset[p] : pc.dist_offset[p]) + y * pc.stride[p] + x * bps();
    return ref && p == 0u ? SAMPLE(ring_words, at, bps()) : SAMPLE(frame_words, at, bps());
}

int s4(uint k, int x, int y)
{
    return org(k, x, y) + org(k, x + 1, y) + org(k, x, y + 1) + org(k, x + 1, y + 1);
}

int highpass_2x2(int x, int y)
{
#define O(dy, dx) org(0u, x + (dx), y + (dy))
    return 12 * (O(0, 0) + O(0, 1) + O(1, 0) + O(1, 1)) -
           3 * (O(-1, 0) + O(-1, 1) + O(2, 0) + O(2, 1)) -
           3 * (O(0, -1) + O(0, 2) + O(1, -1) + O(1, 2)) -
           2 * (O(-1, -1) + O(-1, 2) + O(2, -1) + O(2, 2)) -
           (O(-2, -1) + O(-2, 0) + O(-2, 1) + O(-2, 2) + O(3, -1) + O(3, 0) + O(3, 1) +
            O(3, 2) + O(-1, -2) + O(0, -2) + O(1, -2) + O(2, -2) + O(-1, 3) + O(0, 3) +
            O(1, 3) + O(2, 3));
#undef O
}

int temporal_term(int x, int y)
{
    const bool second = (pc.flags & 4u) != 0u;
    if (pc.step == 2u) {
        const int a = s4(0u, x, y), b = s4(1u, x, y);
        return abs(second ? a - 2 * b + s4(2u, x, y) : a - b);
    }
    const int a = org(0u, x, y), b = org(1u, x, y);
    return abs(second ? a - 2 * b + org(2u, x, y) : a - b);
}

void main()
{
    const uint t = gl_LocalInvocationID.x, k = gl_WorkGroupID.x, p = gl_WorkGroupID.y;
    uvec2 sse = uvec2(0u), spatial = uvec2(0u), temporal = uvec2(0u);
    uint bx, by, nx, ny;
    if (p == 0u) {
        bx = pc.block;
        by = pc.block;
        nx = pc.blocks_x;
        ny = (pc.height[0] + by - 1u) / by;
    } else {
        bx = pc.block * pc.width[p] / pc.width[0];
        by = pc.block * pc.height[p] / pc.height[0];
        nx = (pc.width[p] + bx - 1u) / bx;
        ny = (pc.height[p] + by - 1u) / by;
    }
    const bool here = k < nx * ny;
    const uint x0 = here ? k % nx * bx : 0u, y0 = here ? k / nx * by : 0u;
    const uint bw = here ? min(bx, pc.width[p] - x0) : 0u;
    const uint bh = here ? min(by, pc.height[p] - y0) : 0u;
    for (uint i = t; i < bw * bh; i += THREADS) {
        const uint x = x0 + i % bw, y = y0 + i / bw;
        const uint a = plane_sample(true, p, x, y), b = plane_sample(false, p, x, y);
        const uint e = a > b ? a - b : b - a;
        sse = u64_add(sse, uvec2(e * e, 0u)); // e < 2^14
    }
    if (p == 0u && here) {
        const int s = int(pc.step);
        const int xa = x0 > 0u ? 0 : s, ya = y0 > 0u ? 0 : s;
        const int wa = x0 + bw < pc.width[0] ? int(bw) : int(bw) - s;
        const int ha = y0 + bh < pc.height[0] ? int(bh) : int(bh) - s;
        if (wa > xa && ha > ya) {
            // the terms, each (x, y) of the filter's part and of the block
            const uint fw = uint(wa - xa + s - 1) / uint(s), fh = uint(ha - ya + s - 1) / uint(s);
            for (uint i = t; i < fw * fh; i += THREADS) {
                const int x = int(x0) + xa + s * int(i % fw), y = int(y0) + ya + s * int(i / fw);
                int f;
                if (s == 1) {
                    const int c = org(0u, x, y);
                    f = 12 * c - 2 * (org(0u, x - 1, y) + org(0u, x + 1, y) + org(0u, x, y - 1) +
                                      org(0u, x, y + 1)) -
                        (org(0u, x - 1, y - 1) + org(0u, x + 1, y - 1) + org(0u, x - 1, y + 1) +
                         org(0u, x + 1, y + 1));
                } else {
                    f = wa > 12 ? highpass_2x2(x, y) : 0;
                }
                spatial = u64_add(spatial, uvec2(uint(abs(f)), 0u));
            }
            const uint tw = (bw + uint(s) - 1u) / uint(s), th = (bh + uint(s) - 1u) / uint(s);
            for (uint i = t; i < tw * th; i += THREADS) {
                const int x = int(x0) + s * int(i % tw), y = int(y0) + s * int(i / tw);
                temporal = u64_add(temporal, uvec2(uint(temporal_term(x, y)), 0u));
            }
        }
    }
    partial[0][t] = sse;
    partial[1][t] = spatial;
    partial[2][t] = temporal;
    barrier();
    for (uint half_size = THREADS / 2u; half_size > 0u; half_size >>= 1) {
        if (t < half_size)
            for (uint q = 0u; q < 3u; q++)
                partial[q][t] = u64_add(partial[q][t], partial[q][t + half_size]);
        barrier();
    }
    if (t == 0u && here) {
        if (p == 0u) {
            sums[pc.out_offset + k] = partial[0][0];
            sums[pc.out_offset + pc.luma_blocks + k] = partial[1][0];
            sums[pc.out_offset + 2u * pc.luma_blocks + k] = partial[2][0];
        } else {
            sums[pc.out_offset + 3u * pc.luma_blocks + (p - 1u) * nx * ny + k] = partial[0][0];
        }
    }
}
