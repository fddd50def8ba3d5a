// What the float metrics' shaders share (include after common.glsl):
// samples to float as src/metrics/picture_float.c converts them; on
// request (a #define before the include) the interface of float_psnr's
// and float_moment's exact integer sums (LUMA_SUMS) and the picture pairs
// of the SSIM shaders (PICTURE_FLOAT_PAIR).  Correctly rounded division and
// square root: fp64.glsl.
//
// Float arithmetic whose rounding matters is `precise` (SPIR-V
// NoContraction), so that no driver fuses a product into an addition that
// the C reference rounds separately (the library is built with
// -ffp-contract=off).

// Sample d on the 8-bit float scale plus offset, as picture_float_row():
// (float)d + offset at 8 bits, (float)d / 2^(bitdepth - 8) + offset above.
// The division by a power of two is exact, so it is the product by the
// inverse (inv_scaler: 1 at 8 bits, 2^-(bitdepth - 8) above), which every
// driver rounds correctly.
float picture_float(uint d, float inv_scaler, float offset)
{
    precise float v = float(d) * inv_scaler;
    precise float shifted = v + offset;
    return shifted;
}

// The float square of v (a converted sample, or the float difference of
// two) times scaler^2 = 2^2(bitdepth - 8): the C reference's (float)(v * v)
// in units of 2^-2(bitdepth - 8), an integer (v * scaler is one, and the
// square keeps 24 bits of one) below 2^32 (65535^2 rounded to 24 bits).
uint picture_float_square_units(float v, float scaler_sq)
{
    precise float square = v * v;
    precise float units = square * scaler_sq;
    return uint(units);
}

// ---- the luma-sum shaders (float_psnr, float_moment) ----------------------
//
// A shader that defines LUMA_SUMS before including this file gets their
// common interface (src/vulkan/picture_float_vulkan.c records them): 256
// invocations a workgroup, each workgroup a run of rows_per_group luma
// rows, the frame's luma planes, and 64-bit integer partials out.
#ifdef LUMA_SUMS
#define LUMA_SUMS_GROUP 256u
layout(local_size_x = LUMA_SUMS_GROUP) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) writeonly buffer Partials { uvec2 partials[]; };

layout(push_constant) uniform Push {
    uint ref_offset;  // bytes, in the ring
    uint dist_offset; // bytes, in frames
    uint stride;
    uint width;
    uint height;
    uint rows_per_group;
    uint bytes_per_sample;
    uint float_squares; // 0: exact integer squares; 1: libvmaf's float squares
    float inv_scaler;   // 2^-(bitdepth - 8)
    float scaler_sq;    // 2^2(bitdepth - 8)
    uint out_offset;    // index of this slot's first partial
} pc;

// The square of the difference of samples a and b (b = 0: of sample a) in
// units of 2^-2(bitdepth - 8): the integer square where the C reference's
// sums are exact (< 2^32 for 16-bit samples), else its float square of
// (float)a / s - (float)b / s.
uint luma_sums_square(uint a, uint b)
{
    if (pc.float_squares == 0u) {
        const uint e = a > b ? a - b : b - a;
        return e * e;
    }
    precise float diff = picture_float(a, pc.inv_scaler, 0.0) - picture_float(b, pc.inv_scaler, 0.0);
    return picture_float_square_units(diff, pc.scaler_sq);
}

shared uvec2 luma_sums_scratch[LUMA_SUMS_GROUP];

// The sum of one 64-bit value per invocation over the workgroup (a fixed
// tree; integers, so the order is free anyway); every invocation calls it.
uvec2 luma_sums_group(uvec2 v)
{
    const uint i = gl_LocalInvocationID.x;
    barrier(); // an earlier call's readers are done
    luma_sums_scratch[i] = v;
    barrier();
    for (uint half_size = LUMA_SUMS_GROUP / 2u; half_size > 0u; half_size >>= 1) {
        if (i < half_size) luma_sums_scratch[i] = u64_add(luma_sums_scratch[i], luma_sums_scratch[i + half_size]);
        barrier();
    }
    return luma_sums_scratch[0];
}
#endif

// ---- picture pairs of the frame's luma or of float planes -----------------
//
// A shader that defines PICTURE_FLOAT_PAIR gets bindings 0 to 2: the
// reference ring, the frames, and a float buffer of planes (SSIM's
// downscaled pictures and scales), and reads sample (x, y) of the reference
// (ref true) or the distorted picture of a pair that is either the frame's
// luma (bytes_per_sample 1 or 2: offsets in bytes, in the ring and in
// frames; converted with offset 0) or float planes (bytes_per_sample 0:
// offsets and stride in floats).
#ifdef PICTURE_FLOAT_PAIR
layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 2) buffer Planes { float planes[]; };

float picture_float_pair(bool ref, uint ref_offset, uint dist_offset, uint stride, uint bps,
                         float inv_scaler, int x, int y)
{
    const uint base = (ref ? ref_offset : dist_offset) + uint(y) * stride;
    if (bps == 0u) return planes[base + uint(x)];
    const uint byte = base + uint(x) * bps;
    const uint d = ref ? SAMPLE(ring_words, byte, bps) : SAMPLE(frame_words, byte, bps);
    return picture_float(d, inv_scaler, 0.0);
}
#endif
