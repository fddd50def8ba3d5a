#version 450
// PSNR-HVS, pass 4 of 4: workgroup p (one per plane) computes the plane's
// float sum of terms exactly as the C reference adds them, one after the
// other (hvs_walk of src/cuda/psnr_hvs.cu).  A tile of HVS_WALK_THREADS
// block positions at a time: each invocation takes its block position's
// pair for the binade of the current sum s (its candidate; below its
// candidates "leaves the binade", unless it starts the run; above them, or
// starting the run below them, the pair from its terms: the estimate only
// saves time, it decides nothing), the workgroup scans the pairs, s moves
// to the end of the longest run that stays in the binade, the block
// position after it (where the binade changes) is added term by term by one
// invocation, and the tile goes on after it.  s is the same in every
// invocation, so every branch around a barrier is uniform.
#extension GL_GOOGLE_include_directive : require
#include "psnr_hvs.glsl"

layout(local_size_x = HVS_WALK_THREADS) in;

shared uvec2 scan[HVS_WALK_THREADS];
shared uint first_out;
shared float run_end, block_end;

// Inclusive scan of the workgroup's pairs in invocation order.
uvec2 scan_pairs(uvec2 own)
{
    const uint t = gl_LocalInvocationID.x;
    scan[t] = own;
    barrier();
    for (uint offset = 1u; offset < HVS_WALK_THREADS; offset <<= 1) {
        const uvec2 before = t >= offset ? scan[t - offset] : uvec2(0u);
        barrier();
        scan[t] = hvs_compose(before, scan[t]);
        barrier();
    }
    return scan[t];
}

// Block position g's pair in binade e, the binade of the walk (first: it
// starts the run).
uvec2 walk_pair(uint g, int cand_e, uvec2 cands[HVS_CANDIDATES], int e, bool first)
{
    const int j = e - cand_e;
    if (j >= 0 && j < HVS_CANDIDATES) return cands[j];
    if (j < 0 && !first) return uvec2(HVS_SATURATED);
    return hvs_block_pair(g, e);
}

// s + the 64 terms of block position g, one float addition at a time.
float add_terms(float s, uint g)
{
    precise float sum = s;
    for (uint q = 0u; q < 16u; q++) {
        const vec4 t = terms[g * 16u + q];
        sum = sum + t.x;
        sum = sum + t.y;
        sum = sum + t.z;
        sum = sum + t.w;
    }
    return sum;
}

void main()
{
    const uint p = gl_WorkGroupID.x, n = pc.blocks[p], t = gl_LocalInvocationID.x;
    float s = 0.0;
    for (uint tile = 0u; tile < n; tile += HVS_WALK_THREADS) {
        const uint count = min(n - tile, HVS_WALK_THREADS);
        const uint g = pc.base[p] + tile + t;
        int cand_e = 0;
        uvec2 cands[HVS_CANDIDATES];
        for (int j = 0; j < HVS_CANDIDATES; j++) cands[j] = uvec2(0u);
        if (t < count) {
            cand_e = int(cand[g * HVS_CAND_WORDS]);
            for (int j = 0; j < HVS_CANDIDATES; j++)
                cands[j] = uvec2(cand[g * HVS_CAND_WORDS + 1u + 2u * uint(j)],
                                 cand[g * HVS_CAND_WORDS + 2u + 2u * uint(j)]);
        }
        uint start = 0u;
        while (start < count) {
            const int e = hvs_binade(s);
            const uint units = hvs_units(s, e);
            const bool mine = t >= start && t < count;
            const uvec2 own = mine ? walk_pair(g, cand_e, cands, e, t == start) : uvec2(0u);
            const uvec2 run = scan_pairs(own);
            const uint after = units + ((units & 1u) == 0u ? run.x : run.y);
            if (t == 0u) first_out = count;
            barrier();
            if (mine && after >= HVS_LIMIT) atomicMin(first_out, t);
            barrier();
            const uint f = first_out; // the first block position not in the run
            if (f > start && t == f - 1u) run_end = hvs_from_units(e, after);
            barrier();
            if (f > start) s = run_end;
            if (f < count) {
                // the binade changes within block position f: term by term
                if (t == 0u) block_end = add_terms(s, pc.base[p] + tile + f);
                barrier();
                s = block_end;
                start = f + 1u;
            } else {
                start = count;
            }
            barrier(); // first_out, run_end, block_end are reused
        }
    }
    if (t == 0u) sums[pc.sums_offset + p] = s;
}
