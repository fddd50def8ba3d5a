/*
 * checkasm for XPSNR's sums (the XpsnrDsp table, src/metrics/xpsnr/xpsnr.h),
 * bit for bit against the C kernels: luma planes as the metric loads them
 * (16-bit signed samples of 8, 10, 12 and 16 bits, 16-bit ones negative
 * from 32768 up, as FFmpeg reads them), random, all-zero and all-max,
 * blocks of every edge case (the picture's first and last columns and rows
 * left out), widths from 1 to a 4K block's and a whole 1080p row.
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/xpsnr/xpsnr.h"

enum { PLANE_W = 1960, PLANE_H = 12 };

static const unsigned widths[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 128, 1920 };
static const unsigned depths[] = { 8, 10, 12, 16 };

/* A plane of int16 samples of `bits` bits (16-bit ones as FFmpeg's int16). */
static void fill_plane(int16_t *p, size_t count, unsigned bits, enum CheckasmFill fill)
{
    uint16_t *u = (uint16_t *)p;
    checkasm_fill_samples(u, count, bits > 8 ? bits : 16, fill);
    if (bits == 8)
        for (size_t i = 0; i < count; i++) u[i] &= 255;
}

static void check_level(const CheckasmLevel *level, const XpsnrDsp *c, const XpsnrDsp *simd)
{
    const size_t count = (size_t)PLANE_W * PLANE_H;
    int16_t *o[3], *copy[3];
    for (int i = 0; i < 3; i++) {
        o[i] = checkasm_alloc(count * sizeof(int16_t));
        copy[i] = checkasm_alloc(count * sizeof(int16_t));
    }
    const ptrdiff_t w = PLANE_W;
    if (simd->highpass != c->highpass && checkasm_begin("xpsnr_highpass", level)) {
        for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
            for (unsigned fill = 0; fill < CHECKASM_FILL_COUNT; fill++) {
                fill_plane(o[0], count, depths[b], fill);
                memcpy(copy[0], o[0], count * sizeof(int16_t));
                for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
                    /* a block at column 1 of rows 1..: its filter reads one
                     * sample around it; xa/ya 0 or 1 as at the picture's edge */
                    const int bw = (int)widths[wi];
                    for (int edge = 0; edge < 4; edge++) {
                        const int xa = edge & 1, ya = edge >> 1 & 1;
                        const int16_t *at = o[0] + w + 1;
                        const uint64_t want = c->highpass(at, w, xa, ya, bw, PLANE_H - 2);
                        const uint64_t got = simd->highpass(at, w, xa, ya, bw, PLANE_H - 2);
                        if (want != got)
                            checkasm_fail("%u-bit %s, %d wide, from (%d, %d): %llu, C %llu",
                                          depths[b], checkasm_fill_names[fill], bw, xa, ya,
                                          (unsigned long long)got, (unsigned long long)want);
                    }
                }
                checkasm_check_equal(o[0], copy[0], count * sizeof(int16_t), "the plane");
            }
        }
        checkasm_end();
    }
    if (simd->temporal != c->temporal && checkasm_begin("xpsnr_temporal", level)) {
        for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
            for (unsigned fill = 0; fill < CHECKASM_FILL_COUNT; fill++) {
                for (int i = 0; i < 3; i++)
                    fill_plane(o[i], count, depths[b], i == 1 && fill ? CHECKASM_FILL_COUNT - fill : fill);
                for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
                    for (int second = 0; second < 2; second++) {
                        const uint64_t want = c->temporal(o[0], o[1], o[2], w, widths[wi], PLANE_H, second);
                        const uint64_t got = simd->temporal(o[0], o[1], o[2], w, widths[wi], PLANE_H, second);
                        if (want != got)
                            checkasm_fail("%u-bit %s, %u wide, %s order: %llu, C %llu", depths[b],
                                          checkasm_fill_names[fill], widths[wi],
                                          second ? "second" : "first", (unsigned long long)got,
                                          (unsigned long long)want);
                    }
                }
            }
        }
        checkasm_end();
    }
    /* The 2x2 kernels read two samples around their part and a row below
     * the block's last pair: a block of even rows at column 2 of row 2. */
    if (simd->highpass_2x2 != c->highpass_2x2 && checkasm_begin("xpsnr_highpass_2x2", level)) {
        for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
            for (unsigned fill = 0; fill < CHECKASM_FILL_COUNT; fill++) {
                fill_plane(o[0], count, depths[b], fill);
                memcpy(copy[0], o[0], count * sizeof(int16_t));
                for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
                    const int bw = (int)widths[wi] & ~1;
                    if (bw == 0 || bw + 6 > PLANE_W) continue;
                    for (int edge = 0; edge < 4; edge++) {
                        const int xa = 2 * (edge & 1), ya = 2 * (edge >> 1 & 1);
                        const int16_t *at = o[0] + 2 * w + 2;
                        const uint64_t want = c->highpass_2x2(at, w, xa, ya, bw, PLANE_H - 6);
                        const uint64_t got = simd->highpass_2x2(at, w, xa, ya, bw, PLANE_H - 6);
                        if (want != got)
                            checkasm_fail("%u-bit %s, %d wide, from (%d, %d): %llu, C %llu",
                                          depths[b], checkasm_fill_names[fill], bw, xa, ya,
                                          (unsigned long long)got, (unsigned long long)want);
                    }
                }
                checkasm_check_equal(o[0], copy[0], count * sizeof(int16_t), "the plane");
            }
        }
        checkasm_end();
    }
    if (simd->temporal_2x2 != c->temporal_2x2 && checkasm_begin("xpsnr_temporal_2x2", level)) {
        for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
            for (unsigned fill = 0; fill < CHECKASM_FILL_COUNT; fill++) {
                for (int i = 0; i < 3; i++)
                    fill_plane(o[i], count, depths[b], i == 1 && fill ? CHECKASM_FILL_COUNT - fill : fill);
                for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
                    const unsigned bw = widths[wi] & ~1u;
                    if (bw == 0 || bw + 1 > PLANE_W) continue;
                    for (int second = 0; second < 2; second++) {
                        const uint64_t want = c->temporal_2x2(o[0], o[1], o[2], w, bw, PLANE_H - 2, second);
                        const uint64_t got = simd->temporal_2x2(o[0], o[1], o[2], w, bw, PLANE_H - 2, second);
                        if (want != got)
                            checkasm_fail("%u-bit %s, %u wide, %s order: %llu, C %llu", depths[b],
                                          checkasm_fill_names[fill], bw,
                                          second ? "second" : "first", (unsigned long long)got,
                                          (unsigned long long)want);
                    }
                }
            }
        }
        checkasm_end();
    }
    const XpsnrDsp *pair[2] = { c, simd };
    for (int depth16 = 0; depth16 < 2; depth16++) {
        const bool replaced = depth16 ? simd->sse_16 != c->sse_16 : simd->sse_8 != c->sse_8;
        if (!replaced || !checkasm_begin(depth16 ? "xpsnr_sse_16" : "xpsnr_sse_8", level)) continue;
        for (unsigned fill = 0; fill < CHECKASM_FILL_COUNT; fill++) {
            /* a against b: random against random, zero against max, max against zero */
            /* 16-bit rows: words of any value, as a picture of 14 bits
             * or fewer may hold */
            const unsigned bits = depth16 ? 16 : 8;
            checkasm_fill_samples(o[0], count, bits, fill);
            checkasm_fill_samples(o[1], count, bits, fill ? CHECKASM_FILL_COUNT - fill : fill);
            for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
                const unsigned n = widths[wi];
                uint64_t sums[2];
                for (int k = 0; k < 2; k++)
                    sums[k] = depth16 ? pair[k]->sse_16((const uint16_t *)o[0] + 1, (const uint16_t *)o[1] + 1, n)
                                      : pair[k]->sse_8((const uint8_t *)o[0] + 1, (const uint8_t *)o[1] + 1, n);
                if (sums[0] != sums[1])
                    checkasm_fail("%s, %u samples: %llu, C %llu", checkasm_fill_names[fill], n,
                                  (unsigned long long)sums[1], (unsigned long long)sums[0]);
            }
        }
        checkasm_end();
    }
    for (int i = 0; i < 3; i++) {
        checkasm_free(o[i]);
        checkasm_free(copy[i]);
    }
}

void checkasm_check_xpsnr(void)
{
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    XpsnrDsp c, previous;
    xpsnr_dsp_init(&c, 0);
    previous = c;
    for (unsigned l = 1; l < count; l++) {
        XpsnrDsp simd;
        xpsnr_dsp_init(&simd, levels[l].flags);
        /* a level that adds no kernel of its own was checked as the one before */
        if (memcmp(&simd, &previous, sizeof(simd))) check_level(&levels[l], &c, &simd);
        previous = simd;
    }
}
