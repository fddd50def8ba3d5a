#version 450
// Integer VIF's Vulkan twin, the step to the next scale: the low-pass
// filter of scale s (1..3) over both pictures of scale s - 1, kept at the
// even rows and columns, exactly as vif_decimate() (integer_vif.c): the
// vertical pass (sum + 2^(shift - 1)) >> shift (shift: the bit depth from
// the frame, 16 after), the horizontal pass (sum + 2^15) >> 16, 16 bits
// kept, rows and columns mirrored (-1 reads 1, w reads w - 2).  Unsigned
// 32-bit sums that never wrap, so the order of the taps does not matter.
//
// Specialisation constants as integer_vif.glsl's: FW the filter width (9,
// 5 or 3), BPS the source's storage (1 or 2 bytes from the frame, 0 for
// the words of Scaled), TAP0 .. TAP4 the filter's first FW / 2 + 1
// coefficients.
//
// Workgroup (x, y) makes output row y, OUT = 128 - FW / 2 columns from
// x * OUT: the vertical pass of the 2 OUT - 1 + 2 (FW / 2) <= 255 source
// columns they read goes to shared memory (two a invocation), then each
// invocation filters one output horizontally.  The output is one 32-bit
// word per sample in Scaled.
#extension GL_EXT_control_flow_attributes : require

#define THREADS 128u
layout(local_size_x = 128) in;

layout(constant_id = 0) const uint FW = 9u;
layout(constant_id = 1) const uint BPS = 1u;
layout(constant_id = 2) const uint TAP0 = 0u;
layout(constant_id = 3) const uint TAP1 = 0u;
layout(constant_id = 4) const uint TAP2 = 0u;
layout(constant_id = 5) const uint TAP3 = 0u;
layout(constant_id = 6) const uint TAP4 = 0u;
const uint HALF = FW / 2u;
const uint OUT = THREADS - HALF;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) buffer Scaled { uint scaled_words[]; };

layout(push_constant) uniform Push {
    uint ref_offset; // the source, in words: in the ring (scale 0) or in Scaled
    uint dis_offset; // in Frames (scale 0) or in Scaled
    uint stride;     // words
    int width;       // of the source
    int height;
    uint shift;
    uint out_ref; // words in Scaled
    uint out_dis;
    uint out_stride; // words
    int out_width;
    int out_height;
} pc;

shared uint low_ref[2 * THREADS];
shared uint low_dis[2 * THREADS];

uint tap(uint k)
{
    return k == 0u ? TAP0 : k == 1u ? TAP1 : k == 2u ? TAP2 : k == 3u ? TAP3 : TAP4;
}

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
    const int y = int(gl_WorkGroupID.y);
    const int x0 = int(gl_WorkGroupID.x * OUT);
    const int n = min(int(OUT), pc.out_width - x0);
    // Source columns 2 x0 - half .. 2 (x0 + n - 1) + half.
    const int columns = 2 * n - 1 + 2 * int(HALF);
    const uint round_v = 1u << (pc.shift - 1u);
    const uint mask = BPS == 1u ? 0xffu : 0xffffu;
    for (int i = int(lid); i < columns; i += int(THREADS)) {
        const uint col = uint(mirror(2 * x0 - int(HALF) + i, pc.width));
        const uint col_word = BPS == 1u ? col >> 2 : BPS == 2u ? col >> 1 : col;
        const uint shift = BPS == 1u ? (col & 3u) * 8u : BPS == 2u ? (col & 1u) * 16u : 0u;
        const uint ref_base = pc.ref_offset + col_word, dis_base = pc.dis_offset + col_word;
        const uint centre = uint(2 * y) * pc.stride;
        const uint cc = tap(HALF);
        uint sum_ref = cc * ((load_ref(ref_base + centre) >> shift) & mask);
        uint sum_dis = cc * ((load_dis(dis_base + centre) >> shift) & mask);
        [[unroll]] for (uint k = 0u; k < HALF; k++) {
            const uint up = uint(mirror(2 * y - int(HALF - k), pc.height)) * pc.stride;
            const uint down = uint(mirror(2 * y + int(HALF - k), pc.height)) * pc.stride;
            const uint c = tap(k);
            sum_ref += c * (((load_ref(ref_base + up) >> shift) & mask) +
                            ((load_ref(ref_base + down) >> shift) & mask));
            sum_dis += c * (((load_dis(dis_base + up) >> shift) & mask) +
                            ((load_dis(dis_base + down) >> shift) & mask));
        }
        low_ref[i] = ((sum_ref + round_v) >> pc.shift) & 0xffffu;
        low_dis[i] = ((sum_dis + round_v) >> pc.shift) & 0xffffu;
    }
    barrier();
    if (int(lid) < n) {
        const uint j = 2u * lid + HALF, cc = tap(HALF);
        uint sum_ref = cc * low_ref[j], sum_dis = cc * low_dis[j];
        [[unroll]] for (uint k = 0u; k < HALF; k++) {
            const uint c = tap(k), off = HALF - k;
            sum_ref += c * (low_ref[j - off] + low_ref[j + off]);
            sum_dis += c * (low_dis[j - off] + low_dis[j + off]);
        }
        const uint out_index = uint(y) * pc.out_stride + uint(x0) + lid;
        scaled_words[pc.out_ref + out_index] = ((sum_ref + 32768u) >> 16) & 0xffffu;
        scaled_words[pc.out_dis + out_index] = ((sum_dis + 32768u) >> 16) & 0xffffu;
    }
}
