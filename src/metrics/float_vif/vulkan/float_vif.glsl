// Float VIF's Vulkan twin: what its two shaders (float_vif.comp,
// float_vif_decimate.comp) share: where the pictures of a scale are and
// how to read them, the constants, the edge mirror.
//
// Bindings: 0 the ring (the reference luma), 1 the frames (the distorted
// luma), 2 the float pictures of scales 1..3 (each shader declares it, one
// reads it, the other writes it too), 3 the constants (table[]).

// Where a scale's pictures are (float_vif_vulkan.c's ScaleSource).
struct VifSource {
    uint ref_offset;       // scale 0: bytes in the ring; else floats in Scaled
    uint dis_offset;       // scale 0: bytes in Frames; else floats in Scaled
    uint stride;           // bytes or floats
    uint bytes_per_sample; // 1 or 2 at scale 0, 0 for Scaled's floats
    uint prescaled;        // scale 0: vif_prescale changed the size
    float ratio_x;         // the frame's size over scale 0's
    float ratio_y;
    float inv_scaler;      // 2^-(bitdepth - 8)
};

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
layout(std430, binding = 3) readonly buffer Table { float table[]; };

// The constants buffer (float_vif_vulkan.c): libvmaf's log2 polynomial
// (FLOAT_VIF_LOG2_POLY, 9 coefficients), FLOAT_VIF_EPS, then the filters
// of the four scales.  The host writes the C reference's own floats, so no
// literal here is rounded by the shader compiler.
#define VIF_TABLE_POLY 0u
#define VIF_TABLE_EPS 9u

// libvmaf's reflection at the edges: -k -> k, n - 1 + k -> n - 1 - k
// (float_vif_mirror()).
int vif_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

// Sample (x, y) of the scale's reference (ref true) or distorted picture
// as a float.  At scale 0 the frame's sample on the 8-bit scale less 128,
// as picture_float_row() makes it (the division by 2^(bitdepth - 8) is
// exact, so it is the product with its inverse), at (int)(x * ratio_x),
// (int)(y * ratio_y) where vif_prescale resized the picture (the
// reference's nearest sample); else a float of Scaled.
float vif_load(VifSource src, bool ref, int x, int y)
{
    const uint offset = ref ? src.ref_offset : src.dis_offset;
    if (src.bytes_per_sample == 0u) return scaled[offset + uint(y) * src.stride + uint(x)];
    if (src.prescaled != 0u) {
        precise float fx = float(x) * src.ratio_x;
        precise float fy = float(y) * src.ratio_y;
        x = int(fx);
        y = int(fy);
    }
    const uint byte = offset + uint(y) * src.stride + uint(x) * src.bytes_per_sample;
    const uint v = ref ? SAMPLE(ring_words, byte, src.bytes_per_sample)
                       : SAMPLE(frame_words, byte, src.bytes_per_sample);
    precise float value = float(v) * src.inv_scaler + -128.0;
    return value;
}
