#version 450
// Integer VIF's Vulkan twin, the statistics of one scale, for every
// device: 64-bit sums as pairs of 32-bit words and vif_pixel()'s doubles
// carried out in integers (integer_vif.glsl, integer_vif_pixel.glsl).
#extension GL_GOOGLE_include_directive : require
#include "integer_vif.glsl"
