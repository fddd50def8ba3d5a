#version 450
// Integer VIF's Vulkan twin, the statistics of one scale, for devices with
// shaderFloat64 and shaderInt64: the device's 64-bit integers, and its
// doubles where they round as the C reference's (integer_vif.glsl,
// integer_vif_pixel.glsl).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define VIF_NATIVE 1
#define QUALE_FLOAT64 1
#include "integer_vif.glsl"
