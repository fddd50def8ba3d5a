#version 450
// The arithmetic of integer VIF's Vulkan twin on its own, for
// tests/test_integer_vif_vulkan.c: built twice, with VIF_NATIVE (the
// device's doubles and 64-bit integers) and without (the integer
// emulation), as src/vulkan/integer_vif.comp and integer_vif_f64.comp are.
//   mode 0: vif_pixel() of each case (mu1, mu2, then xx, yy, xy as pairs
//           of words, low first): its four sums, from zero;
//   mode 1 (VIF_NATIVE): vif_quotient() of each case (sigma12,
//           sigma1_sq, then a guess of the quotient as IEEE bits): the
//           double it returns;
//   mode 2: vif_double_steps() of each case (sigma1_sq, sigma2_sq,
//           sigma12, unused): sv_sq, then the gain term.
#extension GL_GOOGLE_include_directive : require
#ifdef VIF_NATIVE
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define QUALE_FLOAT64 1
#endif
#include "gpu/vulkan/common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Table { uint table_words[]; };
layout(std430, binding = 1) readonly buffer Inputs { uint inputs[]; };
layout(std430, binding = 2) writeonly buffer Outputs { uvec2 outputs[]; };

layout(push_constant) uniform Push {
    uint count;
    uint mode;
    uint gain_lo; // vif_enhn_gain_limit's IEEE bits
    uint gain_hi;
} pc;

#include "metrics/integer_vif/vulkan/integer_vif_pixel.glsl"

void main()
{
    const uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) return;
    if (pc.mode == 0u) {
        const uint base = 8u * i;
        const uint mu1 = inputs[base], mu2 = inputs[base + 1u];
        const uvec2 xx = uvec2(inputs[base + 2u], inputs[base + 3u]);
        const uvec2 yy = uvec2(inputs[base + 4u], inputs[base + 5u]);
        const uvec2 xy = uvec2(inputs[base + 6u], inputs[base + 7u]);
#ifdef VIF_NATIVE
        uint64_t acc[4] = uint64_t[4](0ul, 0ul, 0ul, 0ul);
        vif_pixel(mu1, mu2, packUint2x32(xx), packUint2x32(yy), packUint2x32(xy),
                  vif_gain_limit(pc.gain_lo, pc.gain_hi), acc);
        for (uint q = 0u; q < 4u; q++) outputs[4u * i + q] = unpackUint2x32(acc[q]);
#else
        uvec2 acc[4] = uvec2[4](uvec2(0u), uvec2(0u), uvec2(0u), uvec2(0u));
        vif_pixel(mu1, mu2, xx, yy, xy, vif_gain_limit(pc.gain_lo, pc.gain_hi), acc);
        for (uint q = 0u; q < 4u; q++) outputs[4u * i + q] = acc[q];
#endif
    }
    else if (pc.mode == 2u) {
        const uint base = 4u * i;
        uint sv_sq;
#ifdef VIF_NATIVE
        uint64_t gain_term;
        vif_double_steps(inputs[base], inputs[base + 1u], inputs[base + 2u],
                         vif_gain_limit(pc.gain_lo, pc.gain_hi), sv_sq, gain_term);
        outputs[2u * i + 1u] = unpackUint2x32(gain_term);
#else
        uvec2 gain_term;
        vif_double_steps(inputs[base], inputs[base + 1u], inputs[base + 2u],
                         vif_gain_limit(pc.gain_lo, pc.gain_hi), sv_sq, gain_term);
        outputs[2u * i + 1u] = gain_term;
#endif
        outputs[2u * i] = uvec2(sv_sq, 0u);
    }
#ifdef VIF_NATIVE
    else {
        const uint base = 4u * i;
        const uint a = inputs[base], s1 = inputs[base + 1u];
        const double guess = packDouble2x32(uvec2(inputs[base + 2u], inputs[base + 3u]));
        const int b = findMSB(s1) + 1;
        outputs[i] = unpackDouble2x32(vif_quotient(a, vif_divisor_mantissa(s1, b), b, guess));
    }
#endif
}
