#version 450
// cambi's Vulkan twin: one decimated scale (the CUDA twin's cambi_scale,
// src/cuda/cambi.cu).  Sample (x, y) of scale s is sample (2x, 2y) of the
// filtered scale s - 1 (of the preprocessed picture for scale 0 with the
// speed-up), as cambi.c's in-place decimation keeps even rows and columns,
// then the 3 x 3 mode filter: the vertical mode of three of the horizontal
// ones, first and last rows and columns kept, and all of a scale of fewer
// than 3 rows (cambi_mode_filter()).  The mask bit comes with the sample.
// One invocation per sample; integers only.
#extension GL_GOOGLE_include_directive : require
#include "cambi.glsl"

layout(local_size_x = 64, local_size_y = 4) in;

layout(push_constant) uniform Push {
    uint picture;
    uint scale;
    uint in_plane; // words, in Planes: what the scale is decimated from
    uint in_w;     // its row length
    uint base;     // words, in Planes: where the frame's region starts
} pc;

// Word (x, y) of the scale before its mode filter.
uint decimated(uint x, uint y)
{
    return planes[pc.in_plane + 2u * y * pc.in_w + 2u * x];
}

uint hmode(uint x, uint y, uint sw)
{
    if (x == 0u || x + 1u >= sw) return decimated(x, y) & 0xffffu;
    return cambi_mode3(decimated(x - 1u, y) & 0xffffu, decimated(x, y) & 0xffffu,
                       decimated(x + 1u, y) & 0xffffu);
}

void main()
{
    const CambiScale sc = params.pic[pc.picture].scale[pc.scale];
    const uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    if (x >= sc.sw || y >= sc.sh) return;
    const uint word = decimated(x, y);
    uint v = word & 0xffffu;
    if (sc.sh >= 3u && y > 0u && y + 1u < sc.sh)
        v = cambi_mode3(hmode(x, y - 1u, sc.sw), hmode(x, y, sc.sw), hmode(x, y + 1u, sc.sw));
    planes[pc.base + sc.plane + y * sc.sw + x] = v | (word & CAMBI_MASKED);
}
