#include <stdint.h>
#include <string.h>

#include "synth.h"

/* A 32-bit integer hash (a few rounds of multiply-xorshift): enough
 * scrambling for value noise, identical on every platform. */
static uint32_t hash3(uint32_t x, uint32_t y, uint32_t z)
{
    uint32_t h = x * 0x8da6b343u ^ y * 0xd8163841u ^ z * 0xcb1ab31fu;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return h;
}

/* Smooth value noise in [0, 255] with cells of `cell` pixels: bilinear
 * interpolation of hashed lattice values, in 16.16 fixed point. */
static int value_noise(int x, int y, int cell, uint32_t seed)
{
    const int cx = x >= 0 ? x / cell : (x - cell + 1) / cell;
    const int cy = y >= 0 ? y / cell : (y - cell + 1) / cell;
    const int fx = ((x - cx * cell) << 8) / cell; /* 0..255 */
    const int fy = ((y - cy * cell) << 8) / cell;
    const int v00 = (int)(hash3((uint32_t)cx, (uint32_t)cy, seed) & 255);
    const int v10 = (int)(hash3((uint32_t)cx + 1, (uint32_t)cy, seed) & 255);
    const int v01 = (int)(hash3((uint32_t)cx, (uint32_t)cy + 1, seed) & 255);
    const int v11 = (int)(hash3((uint32_t)cx + 1, (uint32_t)cy + 1, seed) & 255);
    const int top = v00 * (256 - fx) + v10 * fx;
    const int bottom = v01 * (256 - fx) + v11 * fx;
    return (top * (256 - fy) + bottom * fy) >> 16;
}

/* The scene, 8-bit, at world coordinates: three octaves of noise for
 * texture, plus hard-edged tiles so that there are edges to blur. */
static int scene(int x, int y, uint32_t seed)
{
    int v = value_noise(x, y, 96, seed) / 2 + value_noise(x, y, 24, seed + 1) / 4 +
            value_noise(x, y, 6, seed + 2) / 8;
    if (((x / 80) + (y / 56)) & 1) v += 24;
    return 16 + v * 200 / 255;
}

static void put(QualePicture *pic, unsigned plane, unsigned x, unsigned y, unsigned v)
{
    uint8_t *row = (uint8_t *)pic->data[plane] + (ptrdiff_t)y * pic->stride[plane];
    if (pic->format.bitdepth > 8) ((uint16_t *)row)[x] = (uint16_t)v;
    else row[x] = (uint8_t)v;
}

static unsigned get(const QualePicture *pic, unsigned plane, unsigned x, unsigned y)
{
    const uint8_t *row = (const uint8_t *)pic->data[plane] + (ptrdiff_t)y * pic->stride[plane];
    return pic->format.bitdepth > 8 ? ((const uint16_t *)row)[x] : row[x];
}

void synth_reference(QualePicture *pic, unsigned index)
{
    const unsigned depth = pic->format.bitdepth;
    /* A slow diagonal pan: 3 px right and 1 px down per frame. */
    const int pan_x = (int)(index * 3), pan_y = (int)index;
    for (unsigned p = 0; p < pic->plane_count; p++) {
        const int scale_x = pic->plane_width[p] < pic->format.width ? 2 : 1;
        const int scale_y = pic->plane_height[p] < pic->format.height ? 2 : 1;
        for (unsigned y = 0; y < pic->plane_height[p]; y++) {
            for (unsigned x = 0; x < pic->plane_width[p]; x++) {
                const int wx = (int)x * scale_x + pan_x, wy = (int)y * scale_y + pan_y;
                int v = scene(wx, wy, 17u * p + 1);
                if (p) v = 128 + (v - 128) / 3; /* chroma: a muted palette */
                unsigned out = (unsigned)v << (depth - 8);
                /* Fill the low bits above 8-bit depth with fine texture. */
                if (depth > 8)
                    out |= hash3((uint32_t)wx, (uint32_t)wy, 99u + p) & ((1u << (depth - 8)) - 1);
                put(pic, p, x, y, out);
            }
        }
    }
}

void synth_distort(const QualePicture *ref, QualePicture *dist, unsigned index,
                   unsigned strength)
{
    const unsigned depth = ref->format.bitdepth;
    const unsigned max = (1u << depth) - 1;
    /* Detail kept inside each 8x8 block, out of 8: less at higher strength. */
    const int keep = 8 - (int)(strength > 4 ? 4 : strength) - 2;
    const int noise = (int)(strength + 1) << (depth - 8);
    for (unsigned p = 0; p < ref->plane_count; p++) {
        const unsigned w = ref->plane_width[p], h = ref->plane_height[p];
        for (unsigned by = 0; by < h; by += 8) {
            for (unsigned bx = 0; bx < w; bx += 8) {
                const unsigned bw = w - bx < 8 ? w - bx : 8, bh = h - by < 8 ? h - by : 8;
                unsigned sum = 0;
                for (unsigned y = 0; y < bh; y++)
                    for (unsigned x = 0; x < bw; x++) sum += get(ref, p, bx + x, by + y);
                const int mean = (int)(sum / (bw * bh));
                for (unsigned y = 0; y < bh; y++) {
                    for (unsigned x = 0; x < bw; x++) {
                        const int v = (int)get(ref, p, bx + x, by + y);
                        const int n = (int)(hash3(bx + x, by + y, index * 3 + p) % (unsigned)(2 * noise + 1)) - noise;
                        int out = mean + (v - mean) * keep / 8 + n;
                        out = out < 0 ? 0 : out > (int)max ? (int)max : out;
                        put(dist, p, bx + x, by + y, (unsigned)out);
                    }
                }
            }
        }
    }
}
