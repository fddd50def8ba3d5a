#version 450
// Integer ADM's Vulkan twin, the decoupling and masking of one level, for
// every device: the angle test's and the gain's doubles carried out in
// integers (integer_adm_decouple.glsl).
#extension GL_GOOGLE_include_directive : require
#include "integer_adm_decouple.glsl"
