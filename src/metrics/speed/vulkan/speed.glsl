// SpEED's Vulkan twin (speed_chroma, speed_temporal): what its shaders
// share.  The steps are those of the CUDA twin (src/cuda/speed.cu), one
// shader each: speed_blur (the prescale within it),
// speed_local_mean, speed_means, speed_cov, speed_stats; a frame's pictures
// (speed_chroma: U and V of both videos; speed_temporal: the two difference
// pictures) are laid out along the dispatch's y (row shaders: rows of
// picture 0, then of picture 1, ..) or y alone (the others).
//
// Float arithmetic is the C reference's (src/metrics/speed.c), operation by
// operation: every result `precise` (no contraction), divisions and
// conversions of doubles to float exactly rounded (fp64.glsl), fma() and
// log2() of doubles emulated there.
//
// Bindings: 0 the ring (reference lumas, and the distorted ones for
// speed_temporal), 1 the frames (the other planes), 2 the constants
// (speed_vulkan.c's upload_constants()), 3 the work of every slot's
// pictures, 4 (speed_stats) the results the host reads.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "gpu/vulkan/fp64.glsl"
#include "metrics/common/vulkan/picture_float.glsl"

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) readonly buffer Constants { uint cst[]; };
layout(std430, binding = 3) buffer Work { float work[]; };

// Where a frame's pictures are (speed_vulkan.c's SpeedPush).
layout(push_constant) uniform Push {
    uvec4 src;        // bytes: picture z's plane (speed_temporal: the previous luma)
    uvec4 sub;        // bytes: the luma subtracted from it (speed_temporal)
    uint stride;      // bytes between rows, the same for every picture of the frame
    uint flags;       // bit z: src[z] is in the frames; bit 4 + z: sub[z] is; bit 8 + z: a sub
    uint work_base;   // floats: picture 0's work area
    uint result_base; // floats: picture 0's results
} pc;

// The constants: words of the setup (floats and doubles by their bits).
#define C_W 0u
#define C_H 1u
#define C_SCALED_W 2u
#define C_SCALED_H 3u
#define C_OP_W 4u
#define C_OP_H 5u
#define C_SUB_W 6u
#define C_SUB_H 7u
#define C_BLOCKS_X 8u
#define C_BLOCKS_Y 9u
#define C_BLOCKS 10u
#define C_PRESCALE 11u      // 1: resized by speed_prescale
#define C_METHOD 12u        // 0 nearest, 1 bilinear
#define C_AA_TAPS 13u
#define C_MEAN_TAPS 14u
#define C_BYTES 15u         // bytes a sample
#define C_INV_SCALER 16u    // float: 2^-(bitdepth - 8)
#define C_RATIO_X 17u       // float: the source's width over the resized one's
#define C_RATIO_Y 18u
#define C_SIGMA_NN 19u      // float
#define C_EPS 20u           // double (2 words): libvmaf's 1e-6
#define C_LOG2_2PIE 22u     // double (2 words): the host's log2(2 pi e)
#define C_WORK_FLOATS 24u   // a picture's work area
#define C_RESULT_FLOATS 25u // a picture's results
#define C_L_OP 26u          // the work area's parts, floats from its start
#define C_L_F 27u
#define C_L_MEANS 28u
#define C_L_COV 29u
#define C_L_Y 30u
#define C_L_X 31u
#define C_L_RHS 32u
#define C_AA 33u            // the blur's taps, then the local mean's
#define C_MEAN 34u
#define C_COUNT 35u         // then the taps themselves

#define SPEED_BLOCK 5
#define SPEED_ELEMENTS 25
#define SPEED_SCALES 4

int c_int(uint i)
{
    return int(cst[i]);
}

float c_float(uint i)
{
    return uintBitsToFloat(cst[i]);
}

double c_double(uint i)
{
    return packDouble2x32(uvec2(cst[i], cst[i + 1u]));
}

// Picture z's work area.
uint speed_work(uint z)
{
    return pc.work_base + z * cst[C_WORK_FLOATS];
}

// libvmaf's reflection at the edges: -k -> k, n - 1 + k -> n - 1 - k.
int speed_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

// Sample (x, y) of one plane as picture_float_row() converts it (offset
// -128).
float speed_plane_sample(bool in_frames, uint plane, int x, int y)
{
    const uint bytes = cst[C_BYTES];
    const uint at = plane + uint(y) * pc.stride + uint(x) * bytes;
    const uint d = in_frames ? SAMPLE(frame_words, at, bytes) : SAMPLE(ring_words, at, bytes);
    return picture_float(d, c_float(C_INV_SCALER), -128.0);
}

// Sample (x, y) of picture z before the prescale: the plane's, or the
// difference of two lumas (speed_temporal).
float speed_source(uint z, int x, int y)
{
    precise float v = speed_plane_sample(((pc.flags >> z) & 1u) != 0u, pc.src[z], x, y);
    if (((pc.flags >> (8u + z)) & 1u) != 0u)
        v = v - speed_plane_sample(((pc.flags >> (4u + z)) & 1u) != 0u, pc.sub[z], x, y);
    return v;
}
