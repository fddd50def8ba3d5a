/*
 * Decoded frames into quale's device pictures (cuda_backend.c's
 * cuda_import()): NVDEC's semi-planar surfaces (NV12: 8-bit luma, then
 * Cb and Cr interleaved; P010/P016: the same in 16-bit words with the
 * sample in the top bits) to the planar layout quale's pictures have,
 * samples in the low bits.  One thread per output sample (luma) or per
 * chroma pair.
 */
#include <stdint.h>

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
