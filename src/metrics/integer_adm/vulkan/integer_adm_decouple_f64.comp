#version 450
// Integer ADM's Vulkan twin, the decoupling and masking of one level, for
// devices with shaderFloat64 and shaderInt64: the angle test's and the
// gain's conversions and products with the device's floats and doubles,
// which round as the C reference's (integer_adm_decouple.glsl).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define ADM_NATIVE 1
#define QUALE_FLOAT64 1
#include "integer_adm_decouple.glsl"
