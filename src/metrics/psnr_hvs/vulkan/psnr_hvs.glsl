// PSNR-HVS's Vulkan twin: what its four passes share (psnr_hvs_terms.comp,
// psnr_hvs_prefix.comp, psnr_hvs_cand.comp, psnr_hvs_walk.comp; the plan
// is in psnr_hvs_vulkan.c).  They compute each plane's float sum of terms
// of src/metrics/psnr_hvs.c bit for bit, as src/cuda/psnr_hvs.cu does,
// whose comment explains the exact parallel float sum: a sum s in binade E
// is S 2^(E - 150), adding t >= 0 adds to S t / 2^(E - 150) rounded to
// nearest even, which depends on s only through E and the parity of S, so
// a run of terms is a pair (what it adds for S even, for S odd) and pairs
// compose associatively, until S leaves the binade.
//
// Every pass binds the same buffers and push constants.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "gpu/vulkan/fp64.glsl"

// Block positions: 8x8 blocks at steps of 7 (HVS_BLOCK, HVS_STEP).
#define HVS_BLOCK 8u
#define HVS_STEP 7u
// Samples are clamped to 12 bits, as hvs_load_block() does.
#define HVS_MAX_SAMPLE 4095
// Threads of the per-block-position passes (terms, cand): THREADS of
// psnr_hvs_vulkan.c.
#define HVS_THREADS 64u
// Threads of the per-plane passes (prefix, walk): HVS_WALK_THREADS of
// psnr_hvs_vulkan.c.
#define HVS_WALK_THREADS 1024u
// Candidate binades per block position; S + d at or above 2^24 leaves the
// binade; increments saturate at 2^30, so that sums of two stay below 2^31.
#define HVS_CANDIDATES 3
#define HVS_LIMIT 16777216u
#define HVS_SATURATED 1073741824u
// A block position's candidates are the binades b - 1 .. b + 1 of the
// binade b of its estimate (1 - 2^-6).
#define HVS_ESTIMATE_MARGIN (1.0LF - 1.0LF / 64.0LF)
// Words per block position in `cand`: e, then d[HVS_CANDIDATES][2], padded.
#define HVS_CAND_WORDS 8u

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
// csf[3][64], mask[3][64], then n / (n - 1) for the block and for a
// quadrant, as the C reference writes them (1 / 63.f * 64, 1 / 15.f * 16).
layout(std430, binding = 2) readonly buffer Tables { float tables[]; };
layout(std430, binding = 3) buffer Terms { vec4 terms[]; };     // total x 16
layout(std430, binding = 4) buffer Prefix { double prefix[]; }; // total
layout(std430, binding = 5) buffer Cand { uint cand[]; };       // total x HVS_CAND_WORDS
layout(std430, binding = 6) writeonly buffer Sums { float sums[]; };

#define HVS_CSF(p, k) tables[64u * (p) + (k)]
#define HVS_MASK(p, k) tables[192u + 64u * (p) + (k)]
#define HVS_BLOCK_SCALE tables[384]
#define HVS_QUADRANT_SCALE tables[385]

layout(push_constant) uniform Push {
    uint ref_offset[3]; // bytes; plane 0 in the ring, planes 1-2 in frames
    uint dist_offset[3];
    uint stride[3];
    uint cols[3];   // block positions per row of plane p
    uint blocks[3]; // block positions of plane p
    uint base[3];   // index of plane p's first block position
    uint total;
    uint bytes_per_sample;
    uint sums_offset; // this slot's first float in `sums`
} pc;

// The index of the block position of this invocation (dispatches may be two
// dimensional where one row of workgroups would be too long).
uint hvs_global_index()
{
    return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * HVS_THREADS +
           gl_LocalInvocationID.x;
}

// ---- the exact float sum -------------------------------------------------------

// The binade of a sum s >= +0: its biased exponent, 1 for subnormals (both
// step by 2^-149); 255 for inf and NaN.
int hvs_binade(float s)
{
    const int e = int(floatBitsToUint(s) >> 23);
    return e != 0 ? e : 1;
}

// s = S 2^(E - 150).
uint hvs_units(float s, int e)
{
    return floatBitsToUint(s) - (uint(e - 1) << 23);
}

float hvs_from_units(int e, uint units)
{
    return uintBitsToFloat((uint(e - 1) << 23) + units);
}

// What adding t >= 0 does to S in binade e (1 .. 254), for S even (x) and
// odd (y): t / 2^(e - 150) rounded to nearest, ties to an even S + d; 2^25
// or more saturates.  In integers, from t's bits: t = M 2^(te - 150).
uvec2 hvs_term_pair(float t, int e)
{
    const uint bits = floatBitsToUint(t);
    const int biased = int(bits >> 23);
    if (biased >= 255) return uvec2(HVS_SATURATED); // inf, NaN
    const uint mantissa = biased == 0 ? bits & 0x7fffffu : (bits & 0x7fffffu) | 0x800000u;
    if (mantissa == 0u) return uvec2(0u);
    const int shift = max(biased, 1) - e; // t / 2^(e - 150) = M 2^shift
    if (shift >= 0) {
        if (findMSB(mantissa) + shift >= 25) return uvec2(HVS_SATURATED);
        return uvec2(mantissa << uint(shift));
    }
    const uint right = uint(-shift);
    if (right >= 25u) return uvec2(0u); // M < 2^24: below one half
    const uint n = mantissa >> right;
    const uint rest = mantissa & ((1u << right) - 1u);
    const uint half_unit = 1u << (right - 1u);
    if (rest < half_unit) return uvec2(n);
    if (rest > half_unit) return uvec2(n + 1u);
    return uvec2(n + (n & 1u), n + ((n + 1u) & 1u));
}

// a, then b (each: what it adds for S even, odd).
uvec2 hvs_compose(uvec2 a, uvec2 b)
{
    const uint even = a.x + ((a.x & 1u) == 0u ? b.x : b.y);
    const uint odd = a.y + ((a.y & 1u) == 0u ? b.y : b.x);
    return min(uvec2(even, odd), uvec2(HVS_SATURATED));
}

// The pair of block position g's 64 terms in binade e; the identity for
// inf and NaN (adding finite terms leaves them as they are).
uvec2 hvs_block_pair(uint g, int e)
{
    uvec2 acc = uvec2(0u);
    if (e >= 255) return acc;
    for (uint q = 0u; q < 16u; q++) {
        const vec4 t = terms[g * 16u + q];
        acc = hvs_compose(acc, hvs_term_pair(t.x, e));
        acc = hvs_compose(acc, hvs_term_pair(t.y, e));
        acc = hvs_compose(acc, hvs_term_pair(t.z, e));
        acc = hvs_compose(acc, hvs_term_pair(t.w, e));
    }
    return acc;
}

// The binade of a float near v >= 0 (1 .. 254), from v's exponent.
int hvs_binade_near(double v)
{
    if (!(v >= 2.350988701644575e-38LF)) return 1; // 2^-125, and NaN
    if (v >= 1.7014118346046923e+38LF) return 254; // 2^127
    return int((unpackDouble2x32(v).y >> 20) & 0x7ffu) - 896; // frexp's e + 126
}

// The first candidate binade of a block position whose sum is estimated to
// start at `estimate`.
int hvs_first_candidate(double estimate)
{
    precise double lowered = estimate * HVS_ESTIMATE_MARGIN;
    return clamp(hvs_binade_near(lowered) - 1, 1, 255 - HVS_CANDIDATES);
}
