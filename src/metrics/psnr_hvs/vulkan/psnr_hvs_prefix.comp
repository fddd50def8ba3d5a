#version 450
// PSNR-HVS, pass 2 of 4: workgroup p (one per plane) turns the planes'
// block sums (pass 1's estimates) into their exclusive prefix sums: an
// estimate of the float sum where each block position starts.  Nothing but
// how often the walk computes a pair itself depends on it, so the order of
// these double additions does not matter.
#extension GL_GOOGLE_include_directive : require
#include "psnr_hvs.glsl"

layout(local_size_x = HVS_WALK_THREADS) in;

shared double scan[HVS_WALK_THREADS];
shared double carry_shared;

void main()
{
    const uint p = gl_WorkGroupID.x, n = pc.blocks[p], t = gl_LocalInvocationID.x;
    precise double carry = 0.0LF;
    for (uint tile = 0u; tile < n; tile += HVS_WALK_THREADS) {
        const uint i = pc.base[p] + tile + t;
        const double own = tile + t < n ? prefix[i] : 0.0LF;
        scan[t] = own;
        barrier();
        for (uint offset = 1u; offset < HVS_WALK_THREADS; offset <<= 1) {
            const double before = t >= offset ? scan[t - offset] : 0.0LF;
            barrier();
            precise double sum = scan[t] + before;
            scan[t] = sum;
            barrier();
        }
        precise double exclusive = carry + (scan[t] - own);
        if (tile + t < n) prefix[i] = exclusive;
        if (t == HVS_WALK_THREADS - 1u) carry_shared = carry + scan[t];
        barrier();
        carry = carry_shared;
        barrier();
    }
}
