/*
 * checkasm for PSNR-HVS (src/metrics/psnr_hvs.h): the block-row kernel's
 * 64 terms per block position, bit for bit against the C kernel.
 *
 * Strips of 8 rows of samples of 8, 10 and 12 bits (the metric's range),
 * random, all 0 and all maximum, the distorted strip either independent
 * of the reference or the reference with small changes (flat blocks, equal
 * blocks, masking thresholds crossed either way), with each plane's
 * tables, at block counts around the vector lengths and a 1080p row's.
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/psnr_hvs/psnr_hvs.h"

enum { MAX_BLOCKS = 274, STRIP_W = HVS_STEP * MAX_BLOCKS + 1 + 16 };

static const unsigned block_counts[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 274 };
static const unsigned depths[] = { 8, 10, 12 };

static void fill_strips(int32_t *ref, int32_t *dist, size_t stride, unsigned w, unsigned bits,
                        enum CheckasmFill fill, bool nearby)
{
    const int32_t max = (int32_t)((1u << bits) - 1);
    for (unsigned r = 0; r < HVS_BLOCK; r++) {
        for (unsigned x = 0; x < w; x++) {
            const uint32_t any = checkasm_rand_below((uint32_t)max + 1);
            int32_t v = fill == CHECKASM_FILL_ZERO  ? 0
                        : fill == CHECKASM_FILL_MAX ? max
                                                    : (int32_t)any;
            /* flat stretches: the same sample over whole blocks */
            if (fill == CHECKASM_FILL_RANDOM && (x / 24) % 3 == 1)
                v = (int32_t)(x / 24) % (max + 1);
            ref[r * stride + x] = v;
            int32_t d = v;
            if (!nearby) {
                d = fill == CHECKASM_FILL_RANDOM ? (int32_t)checkasm_rand_below((uint32_t)max + 1)
                                                 : v;
            } else if (checkasm_rand_below(4) == 0) {
                d = v + (int32_t)checkasm_rand_below(7) - 3;
                d = d < 0 ? 0 : d > max ? max : d;
            }
            dist[r * stride + x] = d;
        }
    }
}

static void check_block_terms(const CheckasmLevel *level, const PsnrHvsDsp *c,
                              const PsnrHvsDsp *d)
{
    if (!checkasm_begin("psnr_hvs_block_terms", level)) return;
    const size_t stride = quale_align(STRIP_W, 16);
    const size_t terms_stride = quale_align(MAX_BLOCKS, HVS_TERMS_ALIGN);
    int32_t *ref = checkasm_alloc(HVS_BLOCK * stride * sizeof(int32_t));
    int32_t *dist = checkasm_alloc(HVS_BLOCK * stride * sizeof(int32_t));
    int32_t *ref_copy = checkasm_alloc(HVS_BLOCK * stride * sizeof(int32_t));
    int32_t *dist_copy = checkasm_alloc(HVS_BLOCK * stride * sizeof(int32_t));
    float *want = checkasm_alloc(64 * terms_stride * sizeof(float));
    float *got = checkasm_alloc(64 * terms_stride * sizeof(float));
    float csf[64], mask[64];
    for (unsigned b = 0; b < QUALE_ARRAY_SIZE(depths); b++) {
        for (unsigned ci = 0; ci < QUALE_ARRAY_SIZE(block_counts); ci++) {
            const unsigned count = block_counts[ci];
            const unsigned w = HVS_STEP * (count - 1) + HVS_BLOCK + checkasm_rand_below(HVS_STEP);
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
                for (unsigned nearby = 0; nearby < 2; nearby++) {
                    psnr_hvs_tables(checkasm_rand_below(3), csf, mask);
                    fill_strips(ref, dist, stride, w, depths[b], f, nearby);
                    memcpy(ref_copy, ref, HVS_BLOCK * stride * sizeof(int32_t));
                    memcpy(dist_copy, dist, HVS_BLOCK * stride * sizeof(int32_t));
                    c->block_terms(ref, dist, (ptrdiff_t)stride, count, csf, mask, want,
                                   terms_stride);
                    d->block_terms(ref, dist, (ptrdiff_t)stride, count, csf, mask, got,
                                   terms_stride);
                    char what[96];
                    snprintf(what, sizeof(what), "terms, %u bits, %u blocks, %s%s", depths[b],
                             count, checkasm_fill_names[f], nearby ? ", nearby" : "");
                    for (unsigned k = 0; k < 64; k++) {
                        if (!checkasm_check_equal(got + k * terms_stride,
                                                  want + k * terms_stride,
                                                  count * sizeof(float), what))
                            break;
                    }
                    checkasm_check_equal(ref, ref_copy, HVS_BLOCK * stride * sizeof(int32_t),
                                         "reference samples");
                    checkasm_check_equal(dist, dist_copy, HVS_BLOCK * stride * sizeof(int32_t),
                                         "distorted samples");
                }
            }
        }
    }
    psnr_hvs_tables(0, csf, mask);
    fill_strips(ref, dist, stride, STRIP_W, 8, CHECKASM_FILL_RANDOM, true);
    CHECKASM_BENCH(d->block_terms(ref, dist, (ptrdiff_t)stride, MAX_BLOCKS, csf, mask, got,
                                  terms_stride));
    checkasm_free(ref);
    checkasm_free(dist);
    checkasm_free(ref_copy);
    checkasm_free(dist_copy);
    checkasm_free(want);
    checkasm_free(got);
    checkasm_end();
}

void checkasm_check_psnr_hvs(void)
{
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    PsnrHvsDsp c;
    psnr_hvs_dsp_init(&c, levels[0].flags);
    for (unsigned i = 0; i < count; i++) {
        PsnrHvsDsp d;
        psnr_hvs_dsp_init(&d, levels[i].flags);
        if (i == 0 || d.block_terms != c.block_terms) check_block_terms(&levels[i], &c, &d);
    }
}
