#version 450
// cambi's Vulkan twin, first pass: src/metrics/cambi.c's preprocessing and
// spatial mask (the CUDA twin's cambi_load, cambi_flat_vsum and cambi_mask,
// src/cuda/cambi.cu) in one dispatch, and without the speed-up scale 0's
// mode filter too.
//
// Workgroup (X, Y) makes the TW x TH samples from (X TW, Y TH) of the
// scored picture, through shared memory (every array from 3 samples left
// of and above the tile):
//   1. the source samples at 10 bits (shifted up from fewer bits, rounded
//      down from more: cambi_to_10bit), through libvmaf's nearest-neighbour
//      source positions when the picture is resampled;
//   2. the picture, 3 samples around the tile on each side and one more to
//      the right and below (what the mask's 7 x 7 square and its flat flags
//      read): with anti-dithering each sample is the mean, rounded down, of
//      itself and its right, lower and lower-right neighbours that exist
//      (original samples, as cambi_anti_dither() reads them);
//   3. the flat flags of the tile and 3 samples around: a sample equal to
//      its right and lower neighbours (a missing one counts as equal), 0
//      outside the picture;
//   4. their sums over the 7 rows around each row of the tile;
//   5. per sample, the sum of those over the 7 columns around it: masked
//      when it exceeds mask_index; and the output word, the sample (or,
//      with mode_filter, its 3 x 3 mode: the vertical mode of three of the
//      horizontal ones, first and last rows and columns kept, and all of a
//      picture of fewer than 3 rows, as cambi_mode_filter()) and its mask
//      bit.
// Integers only: the same bits on every device.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "cambi.glsl"

#define THREADS 256u
#define TW 32
#define TH 16
// The source samples around the tile: 3 left and above, 5 right and below
// (the picture's samples there read their right and lower neighbours).
#define RW (TW + 8)
#define RH (TH + 8)
// The picture around the tile: 3 samples left and above, 4 right and below.
#define IW (TW + 7)
#define IH (TH + 7)
// The flat flags: 3 samples on each side.
#define FW (TW + 6)
#define FH (TH + 6)
#define RADIUS 3

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    uint src_offset;  // bytes: the luma, in the ring (from_ring) or in Frames
    uint src_stride;  // bytes
    uint from_ring;
    uint picture;     // 0: distorted, 1: reference
    uint mode_filter; // write scale 0 (its mode filter), else the picture
    uint out_plane;   // words, in Planes (the frame's region's base included)
} pc;

// The source samples at 10 bits, then (once the picture is made) the flat
// flags.
shared uint raw_or_flat[RH * RW];
shared uint image[IH * IW];
shared uint vsum[TH * FW];

// Source sample (col, row) at 10 bits, as cambi_to_10bit() (a uint16_t).
uint source_sample(uint col, uint row, uint bps, uint bd)
{
    const uint byte = pc.src_offset + row * pc.src_stride + col * bps;
    const uint v = pc.from_ring != 0u ? SAMPLE(ring_words, byte, bps)
                                      : SAMPLE(frame_words, byte, bps);
    if (bd < 10u) return (v << (10u - bd)) & 0xffffu;
    const uint shift = bd - 10u;
    return shift == 0u ? v : (v + (1u << (shift - 1u))) >> shift;
}

uint raw_at(int rx, int ry)
{
    return raw_or_flat[ry * RW + rx];
}

uint image_at(int ix, int iy)
{
    return image[iy * IW + ix];
}

// The horizontal mode of three at image place (ix, iy); x is the column.
uint hmode(int ix, int iy, uint x, uint w)
{
    if (x == 0u || x + 1u >= w) return image_at(ix, iy);
    return cambi_mode3(image_at(ix - 1, iy), image_at(ix, iy), image_at(ix + 1, iy));
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint w = params.pic[pc.picture].w, h = params.pic[pc.picture].h;
    const uint src_x = params.pic[pc.picture].src_x, src_y = params.pic[pc.picture].src_y;
    const uint bps = params.bytes_per_sample, bd = params.bitdepth;
    const bool anti_dither = params.anti_dither != 0u;
    // Place (0, 0) of every shared array is sample (x0 - 3, y0 - 3).
    const int x0 = int(gl_WorkGroupID.x) * TW - RADIUS, y0 = int(gl_WorkGroupID.y) * TH - RADIUS;

    // 1. The source samples (those of the picture), through the
    //    resampling's positions.
    for (uint i = lid; i < uint(RH * RW); i += THREADS) {
        const int x = x0 + int(i % uint(RW)), y = y0 + int(i / uint(RW));
        uint v = 0u;
        if (x >= 0 && y >= 0 && x < int(w) && y < int(h)) {
            const uint col = src_x == CAMBI_NONE ? uint(x) : table[src_x + uint(x)];
            const uint row = src_y == CAMBI_NONE ? uint(y) : table[src_y + uint(y)];
            v = source_sample(col, row, bps, bd);
        }
        raw_or_flat[i] = v;
    }
    barrier();

    // 2. The picture (cambi_load, cambi_anti_dither).
    for (uint i = lid; i < uint(IH * IW); i += THREADS) {
        const int ix = int(i % uint(IW)), iy = int(i / uint(IW));
        const int x = x0 + ix, y = y0 + iy;
        uint v = raw_at(ix, iy);
        if (anti_dither && x >= 0 && y >= 0 && x < int(w) && y < int(h)) {
            const bool right = uint(x) + 1u < w, below = uint(y) + 1u < h;
            if (right && below)
                v = (v + raw_at(ix + 1, iy) + raw_at(ix, iy + 1) + raw_at(ix + 1, iy + 1)) >> 2;
            else if (below)
                v = (v + raw_at(ix, iy + 1)) >> 1;
            else if (right)
                v = (v + raw_at(ix + 1, iy)) >> 1;
        }
        image[i] = v;
    }
    barrier();

    // 3. Flat flags (0 outside the picture).
    for (uint i = lid; i < uint(FH * FW); i += THREADS) {
        const int fx = int(i % uint(FW)), fy = int(i / uint(FW));
        const int x = x0 + fx, y = y0 + fy;
        uint is_flat = 0u;
        if (x >= 0 && y >= 0 && x < int(w) && y < int(h)) {
            const uint v = image_at(fx, fy);
            const bool right = uint(x) + 1u >= w || image_at(fx + 1, fy) == v;
            const bool below = uint(y) + 1u >= h || image_at(fx, fy + 1) == v;
            is_flat = right && below ? 1u : 0u;
        }
        raw_or_flat[i] = is_flat;
    }
    barrier();

    // 4. The 7 rows around each row of the tile, at every column of step 3.
    for (uint i = lid; i < uint(TH * FW); i += THREADS) {
        const uint vx = i % uint(FW), vy = i / uint(FW);
        uint sum = 0u;
        for (uint k = 0u; k < 2u * RADIUS + 1u; k++) sum += raw_or_flat[(vy + k) * uint(FW) + vx];
        vsum[i] = sum;
    }
    barrier();

    // 5. The tile's samples.
    const uint mask_index = params.pic[pc.picture].mask_index;
    for (uint i = lid; i < uint(TH * TW); i += THREADS) {
        const uint mx = i % uint(TW), my = i / uint(TW);
        const uint x = uint(x0 + RADIUS) + mx, y = uint(y0 + RADIUS) + my;
        if (x >= w || y >= h) continue;
        uint flats = 0u;
        for (uint k = 0u; k < 2u * RADIUS + 1u; k++) flats += vsum[my * uint(FW) + mx + k];
        const int ix = int(mx) + RADIUS, iy = int(my) + RADIUS;
        uint v = image_at(ix, iy);
        if (pc.mode_filter != 0u && h >= 3u && y > 0u && y + 1u < h)
            v = cambi_mode3(hmode(ix, iy - 1, x, w), hmode(ix, iy, x, w), hmode(ix, iy + 1, x, w));
        planes[pc.out_plane + y * w + x] = v | (flats > mask_index ? CAMBI_MASKED : 0u);
    }
}
