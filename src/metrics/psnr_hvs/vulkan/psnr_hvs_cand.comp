#version 450
// PSNR-HVS, pass 3 of 4: one invocation per block position: the pairs of
// its 64 terms for the HVS_CANDIDATES binades around its estimated start
// (pass 2), for the walk.
#extension GL_GOOGLE_include_directive : require
#include "psnr_hvs.glsl"

layout(local_size_x = HVS_THREADS) in;

void main()
{
    const uint g = hvs_global_index();
    if (g >= pc.total) return;
    const int e = hvs_first_candidate(prefix[g]);
    uvec2 acc[HVS_CANDIDATES];
    for (int j = 0; j < HVS_CANDIDATES; j++) acc[j] = uvec2(0u);
    for (uint q = 0u; q < 16u; q++) {
        const vec4 t = terms[g * 16u + q];
        for (uint c = 0u; c < 4u; c++)
            for (int j = 0; j < HVS_CANDIDATES; j++)
                acc[j] = hvs_compose(acc[j], hvs_term_pair(t[c], e + j));
    }
    cand[g * HVS_CAND_WORDS] = uint(e);
    for (int j = 0; j < HVS_CANDIDATES; j++) {
        cand[g * HVS_CAND_WORDS + 1u + 2u * uint(j)] = acc[j].x;
        cand[g * HVS_CAND_WORDS + 2u + 2u * uint(j)] = acc[j].y;
    }
}
