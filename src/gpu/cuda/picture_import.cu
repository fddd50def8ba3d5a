/*
 * Decoded frames into quale's device pictures (cuda_backend.c's
 * cuda_import()): NVDEC's semi-planar surfaces (NV12: 8-bit luma, then
 * Cb and Cr interleaved; P010/P016: the same in 16-bit words with the
 * sample in the top bits) to the planar layout quale's pictures have,
 * samples in the low bits.  One thread per output sample (luma) or per
 * chroma pair.
 *
 * A frame of another size than the picture is resampled on the way
 * (scale_rows, then scale_columns): the tables and arithmetic of
 * src/input/scale.h, which are swscale's, so that the picture equals the
 * one the CPU path scales with swscale.
 */
#include <stdint.h>

#include "input/scale.h"

/* Luma: rows of w samples of `bytes` each, shifted right by shift. */
extern "C" __global__ void import_luma(const uint8_t *src, int src_pitch, uint8_t *dst,
                                       int dst_pitch, int w, int h, int bytes, int shift)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w || y >= h) return;
    if (bytes == 1) {
        dst[(size_t)y * dst_pitch + x] = src[(size_t)y * src_pitch + x];
    } else {
        const uint16_t *s = (const uint16_t *)(src + (size_t)y * src_pitch);
        uint16_t *d = (uint16_t *)(dst + (size_t)y * dst_pitch);
        d[x] = (uint16_t)(s[x] >> shift);
    }
}

/* Chroma: rows of cw interleaved (Cb, Cr) pairs into the two planes. */
extern "C" __global__ void import_chroma(const uint8_t *src, int src_pitch, uint8_t *cb,
                                         uint8_t *cr, int dst_pitch, int cw, int ch, int bytes,
                                         int shift)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= cw || y >= ch) return;
    if (bytes == 1) {
        const uint8_t *s = src + (size_t)y * src_pitch;
        cb[(size_t)y * dst_pitch + x] = s[2 * x];
        cr[(size_t)y * dst_pitch + x] = s[2 * x + 1];
    } else {
        const uint16_t *s = (const uint16_t *)(src + (size_t)y * src_pitch);
        ((uint16_t *)(cb + (size_t)y * dst_pitch))[x] = (uint16_t)(s[2 * x] >> shift);
        ((uint16_t *)(cr + (size_t)y * dst_pitch))[x] = (uint16_t)(s[2 * x + 1] >> shift);
    }
}

/* Sample `index` of a decoded row of `bytes`-byte samples, moved down by
 * shift (the caller indexes chroma pairs: 2 x + 0 for Cb, 2 x + 1 for Cr). */
static __device__ unsigned decoded_sample(const uint8_t *row, int index, int bytes, int shift)
{
    if (bytes == 1) return row[index];
    return (unsigned)(((const uint16_t *)row)[index] >> shift);
}

/* The horizontal pass: row y of the decoded plane into row y of mid
 * (dst_w 15-bit intermediates), each output the weighted sum of taps
 * samples from first[x]. */
extern "C" __global__ void scale_rows(const uint8_t *src, int src_pitch, int step, int offset,
                                      int bytes, int shift, int rows, const int32_t *first,
                                      const int16_t *coeff, int taps, int16_t *mid, int dst_w,
                                      int bitdepth)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= dst_w || y >= rows) return;
    const uint8_t *row = src + (size_t)y * src_pitch;
    const int16_t *w = coeff + (size_t)x * taps;
    int32_t sum = 0;
    for (int t = 0; t < taps; t++)
        sum += (int32_t)decoded_sample(row, (first[x] + t) * step + offset, bytes, shift) * w[t];
    mid[(size_t)y * dst_w + x] = scale_horizontal_finish(sum, (unsigned)bitdepth);
}

/* The vertical pass: output row y from taps rows of mid from first[y],
 * moved up by `deepen` bits (a picture deeper than the video), into 8- or
 * 16-bit samples as the picture has them. */
extern "C" __global__ void scale_columns(const int16_t *mid, int dst_w, int rows,
                                         const int32_t *first, const int16_t *coeff, int taps,
                                         uint8_t *dst, int dst_pitch, int bitdepth, int deepen)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= dst_w || y >= rows) return;
    const int16_t *w = coeff + (size_t)y * taps;
    const int16_t *column = mid + (size_t)first[y] * dst_w + x;
    int32_t sum = scale_vertical_start((unsigned)bitdepth);
    for (int t = 0; t < taps; t++) sum += (int32_t)column[(size_t)t * dst_w] * w[t];
    const unsigned v = (unsigned)scale_vertical_finish(sum, (unsigned)bitdepth) << deepen;
    uint8_t *out = dst + (size_t)y * dst_pitch;
    if (bitdepth + deepen > 8)
        ((uint16_t *)out)[x] = (uint16_t)v;
    else
        out[x] = (uint8_t)v;
}
