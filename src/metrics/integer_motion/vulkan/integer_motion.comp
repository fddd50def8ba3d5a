#version 450
// Integer motion's Vulkan twin: the SAD of the 5-tap blur of (previous -
// current) reference luma, exactly as src/metrics/integer_motion_tmpl.h
// computes it: vertical taps with (sum + 2^(bd-1)) >> bd, horizontal taps
// with (sum + 2^15) >> 16, then |.|; rows and columns reflect at the edges
// without repeating the edge sample (-i below 0, 2 * size - i - 2 past the
// end).  The vertical sums of 8-bit samples fit 32 bits (65536 * 255);
// those of deeper samples, and every horizontal sum (65536 * 65280), take
// 64, as in the C.  BPS (specialisation constant): bytes per sample.
//
// Workgroup (x, y) filters OUT = 252 columns from x * OUT of row y: each
// invocation makes the vertical pass of one of the 256 columns they read,
// then each of the first OUT the horizontal pass of one output.  The row's
// SAD is a 32-bit sum in the C reference, so the workgroup adds its
// invocations' terms into one 32-bit word in shared memory (atomically:
// addition modulo 2^32 is the same in any order), its partial; the host
// adds a row's partials modulo 2^32, then the rows in 64 bits.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"

#define THREADS 256u
#define OUT 252u
layout(local_size_x = 256) in;

layout(constant_id = 0) const uint BPS = 1u;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) writeonly buffer Partials { uint partials[]; };

layout(push_constant) uniform Push {
    uint prev_offset; // words, in the ring
    uint cur_offset;
    uint stride;      // words
    int width;
    int height;
    uint bitdepth;
    uint out_offset; // this slot's first partial
} pc;

shared int v[THREADS];
shared uint group_sad;

int mirror(int i, int size)
{
    return (size - 1) - abs((size - 1) - abs(i));
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const int y = int(gl_WorkGroupID.y);
    const int x0 = int(gl_WorkGroupID.x * OUT);
    const int n = min(int(OUT), pc.width - x0);
    if (lid == 0u) group_sad = 0u;
    if (int(lid) < n + 4) {
        const uint col = uint(mirror(x0 - 2 + int(lid), pc.width));
        const uint word = BPS == 1u ? col >> 2 : col >> 1;
        const uint shift = BPS == 1u ? (col & 3u) * 8u : (col & 1u) * 16u;
        const uint mask = BPS == 1u ? 0xffu : 0xffffu;
        int d[5];
        for (int k = 0; k < 5; k++) {
            const uint row = uint(mirror(y - 2 + k, pc.height)) * pc.stride + word;
            d[k] = int((ring_words[pc.prev_offset + row] >> shift) & mask) -
                   int((ring_words[pc.cur_offset + row] >> shift) & mask);
        }
        const int outer = d[0] + d[4], inner = d[1] + d[3];
        if (BPS == 1u) {
            const int sum = 3571 * outer + 16004 * inner + 26386 * d[2];
            v[lid] = (sum + 128) >> 8;
        } else {
            uvec2 sum = u64_add(i64_mul(3571, outer), i64_mul(16004, inner));
            sum = u64_add(sum, i64_mul(26386, d[2]));
            v[lid] = i64_shr_to_int(u64_add(sum, i64_from_int(1 << (pc.bitdepth - 1u))), pc.bitdepth);
        }
    }
    barrier();

    if (int(lid) < n) {
        uvec2 sum = u64_add(i64_mul(3571, v[lid] + v[lid + 4u]), i64_mul(16004, v[lid + 1u] + v[lid + 3u]));
        sum = u64_add(sum, i64_mul(26386, v[lid + 2u]));
        const int u = i64_shr_to_int(u64_add(sum, uvec2(32768u, 0u)), 16u);
        atomicAdd(group_sad, uint(abs(u)));
    }
    barrier();
    if (lid == 0u) partials[pc.out_offset + gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = group_sad;
}
