/*
 * XPSNR's sums (the XpsnrDsp table of xpsnr.h), written once: xpsnr.c
 * compiles them as the C reference, x86/xpsnr_avx2.c and
 * x86/xpsnr_avx512.c with their instruction sets, which the compiler
 * vectorises.  All are sums of integers, exact in any order, so every
 * level gives the C sums to the bit (tests/checkasm/xpsnr.c).  A block
 * row has fewer than 2^12 samples (the block side is below 2913 for any
 * picture of a 32-bit area), so the high-pass and temporal rows, whose
 * terms are below 2^20, are summed in 32 bits, as is an 8-bit row's SSE
 * (at most 65535 squares below 2^16).
 *
 * The includer defines XPSNR_FN(name).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "metrics/xpsnr/xpsnr.h"

/* The 3x3 high-pass over [xa, wa) x [ya, ha) of a block at o (stride w):
 * the sum of |12 c - 2 (the sides) - (the corners)|. */
uint64_t XPSNR_FN(highpass)(const int16_t *o, ptrdiff_t w, int xa, int ya, int wa, int ha)
{
    uint64_t sum = 0;
    for (int y = ya; y < ha; y++) {
        const int16_t *c = o + y * w;
        const int16_t *up = c - w, *down = c + w;
        uint32_t row = 0;
        for (int x = xa; x < wa; x++) {
            const int f = 12 * c[x] - 2 * (c[x - 1] + c[x + 1] + up[x] + down[x]) -
                          (up[x - 1] + up[x + 1] + down[x - 1] + down[x + 1]);
            row += (uint32_t)abs(f);
        }
        sum += row;
    }
    return sum;
}

/* The temporal sum of a block at step 1: |o0 - o1| (first order) or
 * |o0 - 2 o1 + o2| (second), over bw x bh samples of stride w. */
uint64_t XPSNR_FN(temporal)(const int16_t *o0, const int16_t *o1, const int16_t *o2,
                            ptrdiff_t w, unsigned bw, unsigned bh, bool second_order)
{
    uint64_t sum = 0;
    for (unsigned y = 0; y < bh; y++) {
        const ptrdiff_t r = (ptrdiff_t)y * w;
        uint32_t row = 0;
        if (second_order) {
            for (unsigned x = 0; x < bw; x++)
                row += (uint32_t)abs(o0[r + x] - 2 * o1[r + x] + o2[r + x]);
        } else {
            for (unsigned x = 0; x < bw; x++) row += (uint32_t)abs(o0[r + x] - o1[r + x]);
        }
        sum += row;
    }
    return sum;
}

/* The high-pass on 2x2 steps (pictures above 2048x1152): 12 times the 2x2
 * sum, less 3 times the pairs beside it, 2 times the corners and the ring
 * of twelve around.  A term needs 23 bits, a row of them more than 32: the
 * rows are summed in 64 bits. */
uint64_t XPSNR_FN(highpass_2x2)(const int16_t *o, ptrdiff_t w, int xa, int ya, int wa, int ha)
{
#define O(dy, dx) ((int)r[(dy) * w + x + (dx)])
    uint64_t sum = 0;
    for (int y = ya; y < ha; y += 2) {
        const int16_t *r = o + y * w;
        for (int x = xa; x < wa; x += 2) {
            const int f = 12 * (O(0, 0) + O(0, 1) + O(1, 0) + O(1, 1)) -
                          3 * (O(-1, 0) + O(-1, 1) + O(2, 0) + O(2, 1)) -
                          3 * (O(0, -1) + O(0, 2) + O(1, -1) + O(1, 2)) -
                          2 * (O(-1, -1) + O(-1, 2) + O(2, -1) + O(2, 2)) -
                          (O(-2, -1) + O(-2, 0) + O(-2, 1) + O(-2, 2) +
                           O(3, -1) + O(3, 0) + O(3, 1) + O(3, 2) +
                           O(-1, -2) + O(0, -2) + O(1, -2) + O(2, -2) +
                           O(-1, 3) + O(0, 3) + O(1, 3) + O(2, 3));
            sum += (uint64_t)abs(f);
        }
    }
#undef O
    return sum;
}

/* The temporal sum of a block on 2x2 sums (pictures above 2048x1152). */
uint64_t XPSNR_FN(temporal_2x2)(const int16_t *o0, const int16_t *o1, const int16_t *o2,
                                ptrdiff_t w, unsigned bw, unsigned bh, bool second_order)
{
#define S4(p) ((int)(p)[i] + (p)[i + 1] + (p)[i + w] + (p)[i + w + 1])
    uint64_t sum = 0;
    for (unsigned y = 0; y < bh; y += 2) {
        uint32_t row = 0;
        for (unsigned x = 0; x < bw; x += 2) {
            const ptrdiff_t i = (ptrdiff_t)y * w + x;
            const int t = second_order ? S4(o0) - 2 * S4(o1) + S4(o2) : S4(o0) - S4(o1);
            row += (uint32_t)abs(t);
        }
        sum += row;
    }
#undef S4
    return sum;
}

/* The SSE of a row of 8-bit samples. */
uint64_t XPSNR_FN(sse_8)(const uint8_t *a, const uint8_t *b, unsigned n)
{
    uint32_t sse = 0;
    for (unsigned x = 0; x < n; x++) {
        const int d = a[x] - b[x];
        sse += (uint32_t)(d * d);
    }
    return sse;
}

/* The SSE of a row of 16-bit samples of a picture of at most 14 bits
 * (above, xpsnr.c sums as FFmpeg's SSE2 kernel does).  Its samples may
 * still be any 16-bit word (the API lets words above the depth through):
 * a square of up to 65535^2 needs all 32 bits, unsigned. */
uint64_t XPSNR_FN(sse_16)(const uint16_t *a, const uint16_t *b, unsigned n)
{
    uint64_t sse = 0;
    for (unsigned x = 0; x < n; x++) {
        const uint32_t e = a[x] > b[x] ? (uint32_t)(a[x] - b[x]) : (uint32_t)(b[x] - a[x]);
        sse += e * e;
    }
    return sse;
}
