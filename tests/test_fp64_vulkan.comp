#version 450
// The exact arithmetic of src/vulkan/fp64.glsl on its own, for
// tests/test_fp64_vulkan.c.  Each case is four doubles in (IEEE bits, low
// word first) and one double out; by mode:
//   0: f32_div(float(a), float(b))
//   1: f32_sqrt_rn(a)                 (a a float)
//   2: f32_rsqrt_c(float(a))
//   3: f64_fma(a, b, c)
//   4: f64_log2(a)
//   5: f32_from_f64(a)
//   6: f32_rsqrt_c's steps for midpoints too close to call (C's doubles)
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "gpu/vulkan/fp64.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Inputs { uvec2 inputs[]; };
layout(std430, binding = 1) writeonly buffer Outputs { uvec2 outputs[]; };

layout(push_constant) uniform Push {
    uint count;
    uint mode;
} pc;

void main()
{
    const uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) return;
    const double a = packDouble2x32(inputs[4u * i]), b = packDouble2x32(inputs[4u * i + 1u]);
    const double c = packDouble2x32(inputs[4u * i + 2u]);
    double r;
    if (pc.mode == 0u) r = double(f32_div(float(a), float(b)));
    else if (pc.mode == 1u) r = double(f32_sqrt_rn(a));
    else if (pc.mode == 2u) r = double(f32_rsqrt_c(float(a)));
    else if (pc.mode == 3u) r = f64_fma(a, b, c);
    else if (pc.mode == 4u) r = f64_log2(a);
    else if (pc.mode == 5u) r = double(f32_from_f64(a));
    else r = double(f32_from_f64(f64_div(1.0LF, f64_sqrt(double(float(a))))));
    outputs[i] = unpackDouble2x32(r);
}
