#version 450
// Integer motion's Vulkan twin: the SAD of the 5-tap blur of (previous -
// current) reference luma, exactly as src/metrics/integer_motion_tmpl.h
// computes it: vertical taps with (sum + 2^(bd-1)) >> bd, horizontal taps
// with (sum + 2^15) >> 16, then |.|; rows and columns reflect at the edges
// without repeating the edge sample (-i below 0, 2 * size - i - 2 past the
// end).  Workgroup (x, y) filters columns [x * 256, (x + 1) * 256) of row
// y; the row's SAD is a 32-bit sum in the C reference, so the workgroups of
// a row add into one 32-bit word with atomicAdd (addition modulo 2^32 is
// the same in any order).  The host adds the rows in 64 bits.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define SEGMENT 256u
layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) buffer RowSad { uint row_sad[]; };

layout(push_constant) uniform Push {
    uint prev_offset; // bytes, in the ring
    uint cur_offset;
    uint stride;
    int width;
    int height;
    uint bitdepth;
    uint bytes_per_sample;
    uint out_offset; // index of this slot's first row
} pc;

shared int v[SEGMENT + 4u];

int mirror(int i, int size)
{
    if (i < 0) return -i;
    if (i >= size) return 2 * size - i - 2;
    return i;
}

int diff_at(uint row_prev, uint row_cur, int x)
{
    const uint byte = uint(x) * pc.bytes_per_sample;
    return int(SAMPLE(ring_words, row_prev + byte, pc.bytes_per_sample)) -
           int(SAMPLE(ring_words, row_cur + byte, pc.bytes_per_sample));
}

void main()
{
    const int y = int(gl_WorkGroupID.y);
    const int x0 = int(gl_WorkGroupID.x * SEGMENT);
    uint prev_row[5], cur_row[5];
    for (int k = 0; k < 5; k++) {
        const uint r = uint(mirror(y - 2 + k, pc.height));
        prev_row[k] = pc.prev_offset + r * pc.stride;
        cur_row[k] = pc.cur_offset + r * pc.stride;
    }
    const uvec2 round_v = i64_from_int(1 << (pc.bitdepth - 1u));
    for (uint i = gl_LocalInvocationID.x; i < SEGMENT + 4u; i += gl_WorkGroupSize.x) {
        const int x = x0 - 2 + int(i);
        if (x >= pc.width + 2) break;
        const int c = mirror(x, pc.width);
        const int outer = diff_at(prev_row[0], cur_row[0], c) + diff_at(prev_row[4], cur_row[4], c);
        const int inner = diff_at(prev_row[1], cur_row[1], c) + diff_at(prev_row[3], cur_row[3], c);
        const int centre = diff_at(prev_row[2], cur_row[2], c);
        uvec2 sum = u64_add(i64_mul(3571, outer), i64_mul(16004, inner));
        sum = u64_add(sum, i64_mul(26386, centre));
        v[i] = i64_shr_to_int(u64_add(sum, round_v), pc.bitdepth);
    }
    barrier();

    uint sad = 0u;
    for (uint i = gl_LocalInvocationID.x; i < SEGMENT && x0 + int(i) < pc.width; i += gl_WorkGroupSize.x) {
        uvec2 sum = u64_add(i64_mul(3571, v[i] + v[i + 4u]), i64_mul(16004, v[i + 1u] + v[i + 3u]));
        sum = u64_add(sum, i64_mul(26386, v[i + 2u]));
        const int u = i64_shr_to_int(u64_add(sum, uvec2(32768u, 0u)), 16u);
        sad += uint(abs(u));
    }
    atomicAdd(row_sad[pc.out_offset + uint(y)], sad);
}
