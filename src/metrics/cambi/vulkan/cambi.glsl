// What cambi's Vulkan shaders share (cambi_preprocess.comp, cambi_scale.comp,
// cambi_c_values.comp; the host side is cambi_vulkan.c): the buffers, the
// run's parameters, the layout of a scale's samples, and the mode of three.
//
// A sample of the preprocessed picture or of a filtered scale is one 32-bit
// word: its value (16 bits: a sample "at 10 bits" keeps what cambi.c's
// uint16_t keeps, up to 65535 for samples above the bit depth) and, in bit
// 16, whether it is in the spatial mask.  Decimation keeps even rows and
// columns of both, so a scale's word carries its own mask sample.

#define CAMBI_SCALES 5
#define CAMBI_MAX_DIFFS 32
#define CAMBI_MASKED 0x10000u
// No table entry: the picture is not resampled.
#define CAMBI_NONE 0xffffffffu

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
// This lane's samples of this picture: the preprocessed picture (with the
// speed-up) and the five filtered scales.
layout(std430, binding = 2) buffer Planes { uint planes[]; };
// libvmaf's reciprocals (float bits), then the source columns and rows of
// the resampled pictures.
layout(std430, binding = 3) readonly buffer Table { uint table[]; };

// Mirrors CambiVkScale, CambiVkPicture and CambiVkParams of cambi_vulkan.c.
struct CambiScale {
    uint plane;       // words, in Planes
    uint sw, sh;
    uint strips;      // c-value blocks across the scale
    uint first_block; // the scale's first c-value block
    uint pad0, pad1, pad2;
};

struct CambiPicture {
    CambiScale scale[CAMBI_SCALES];
    uint w, h;        // the scored size
    uint window;      // odd: the c-values' window side
    uint chunk_rows;  // rows of a c-value block
    uint src_x, src_y; // in Table: the source column / row of each sample, or CAMBI_NONE
    uint image;       // in Planes: the preprocessed picture (with the speed-up)
    uint mask_index;
    uint first_partial; // the picture's first c-value block in a slot's partials
    uint blocks;
    uint pad0, pad1;
};

layout(std430, binding = 4) readonly buffer Params {
    int num_diffs;    // 1 << max_log_contrast
    int vlt_luma;
    int band_base, band_size;
    uint bitdepth, bytes_per_sample;
    uint anti_dither;
    uint speedup;     // scale 0 is decimated from the preprocessed picture
    int tvi[CAMBI_MAX_DIFFS];     // cambi.h's CambiContrast
    int weights[CAMBI_MAX_DIFFS]; // cambi.h's CAMBI_CONTRAST_WEIGHTS
    CambiPicture pic[2];          // the distorted picture, the reference
} params;

// The value two of three share, else the smallest: cambi.h's cambi_mode3().
uint cambi_mode3(uint a, uint b, uint c)
{
    const uint ab = min(a, b);
    const uint smallest = min(ab, c);
    const uint bc = b == c ? b : smallest;
    return a == b || a == c ? a : bc;
}
