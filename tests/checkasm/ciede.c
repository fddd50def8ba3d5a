/*
 * checkasm for CIEDE2000 (src/metrics/ciede.h): the row kernel's deltaE,
 * bit for bit against the C kernel.
 *
 * Rows of every bit depth the metric takes (8 to 16), widths around the
 * vector lengths and a 1080p row, samples random, all 0 and all maximum,
 * and distorted rows that are the reference with small changes (the
 * common case: nearby colours, equal samples for some pixels, equal
 * chroma with different luma) or independent of it (any pair of colours).
 * The C kernel runs with a fresh colour cache and again with the cache
 * warm, so its hits are checked too.
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/ciede.h"

enum { CIEDE_CHANNELS = 6 }; /* reference Y', Cb, Cr, distorted Y', Cb, Cr */

/* Fills the rows: the reference by `fill`, the distorted one from it. */
static void fill_rows(uint16_t *rows[CIEDE_CHANNELS], unsigned n, unsigned bits,
                      enum CheckasmFill fill, bool nearby)
{
    const uint32_t max = (1u << bits) - 1;
    for (unsigned k = 0; k < 3; k++) {
        for (unsigned x = 0; x < n; x++) {
            rows[k][x] = fill == CHECKASM_FILL_ZERO ? 0
                         : fill == CHECKASM_FILL_MAX ? (uint16_t)max
                                                     : (uint16_t)checkasm_rand_below(max + 1);
        }
    }
    for (unsigned k = 0; k < 3; k++) {
        for (unsigned x = 0; x < n; x++) {
            uint32_t v = rows[k][x];
            if (!nearby) {
                v = fill == CHECKASM_FILL_RANDOM ? checkasm_rand_below(max + 1) : v;
            } else if (checkasm_rand_below(3) != 0) {
                /* a step of a few codes, either way, clipped */
                const int step = (int)checkasm_rand_below(9) - 4;
                const int64_t t = (int64_t)v + step;
                v = t < 0 ? 0 : t > (int64_t)max ? max : (uint32_t)t;
            }
            rows[3 + k][x] = (uint16_t)v;
        }
    }
}

static void check_delta_e_row(const CheckasmLevel *level, const CiedeDsp *c_dsp,
                              const CiedeDsp *dsp)
{
    static const unsigned widths[] = { 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 1920 };
    static const unsigned depths[] = { 8, 9, 10, 12, 16 };
    char name[64];
    snprintf(name, sizeof(name), "ciede_delta_e_row");
    if (!checkasm_begin(name, level)) return;

    enum { MAX_W = 1920 };
    uint16_t *rows[CIEDE_CHANNELS], *copy[CIEDE_CHANNELS];
    for (unsigned k = 0; k < CIEDE_CHANNELS; k++) {
        rows[k] = checkasm_alloc(MAX_W * sizeof(uint16_t));
        copy[k] = checkasm_alloc(MAX_W * sizeof(uint16_t));
    }
    float *want = checkasm_alloc(MAX_W * sizeof(float));
    float *got = NULL;

    for (unsigned d = 0; d < QUALE_ARRAY_SIZE(depths); d++) {
        CiedeConvert convert;
        ciede_convert_init(&convert, depths[d]);
        /* a cache holds the colours of one conversion */
        CiedeCache *cache = ciede_cache_new();
        if (!cache) {
            checkasm_fail("out of memory");
            break;
        }
        for (unsigned wi = 0; wi < QUALE_ARRAY_SIZE(widths); wi++) {
            const unsigned n = widths[wi];
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
                for (unsigned nearby = 0; nearby < 2; nearby++) {
                    fill_rows(rows, n, depths[d], (enum CheckasmFill)f, nearby);
                    for (unsigned k = 0; k < CIEDE_CHANNELS; k++)
                        memcpy(copy[k], rows[k], n * sizeof(uint16_t));
                    const uint16_t *const ref[3] = { rows[0], rows[1], rows[2] };
                    const uint16_t *const dist[3] = { rows[3], rows[4], rows[5] };

                    /* the C kernel twice: the second run reads its cache */
                    c_dsp->delta_e_row(&convert, ref, dist, want, n, cache);
                    float *again = checkasm_alloc(n * sizeof(float));
                    c_dsp->delta_e_row(&convert, ref, dist, again, n, cache);
                    checkasm_check_equal(again, want, n * sizeof(float), "deltaE (cached)");
                    checkasm_free(again);

                    got = checkasm_alloc(n * sizeof(float));
                    dsp->delta_e_row(&convert, ref, dist, got, n, cache);
                    char what[96];
                    snprintf(what, sizeof(what), "deltaE, %u bits, width %u, %s%s", depths[d], n,
                             checkasm_fill_names[f], nearby ? ", nearby" : "");
                    checkasm_check_equal(got, want, n * sizeof(float), what);
                    checkasm_free(got);
                    for (unsigned k = 0; k < CIEDE_CHANNELS; k++)
                        checkasm_check_equal(rows[k], copy[k], n * sizeof(uint16_t), "samples");
                }
            }
        }
        ciede_cache_free(cache);
    }

    /* time a 1080p row of nearby 8-bit colours (the C kernel's cache then
     * holds every colour of the row: its time is that of CIEDE2000 and
     * the look-ups) */
    CiedeConvert convert;
    ciede_convert_init(&convert, 8);
    fill_rows(rows, MAX_W, 8, CHECKASM_FILL_RANDOM, true);
    const uint16_t *const ref[3] = { rows[0], rows[1], rows[2] };
    const uint16_t *const dist[3] = { rows[3], rows[4], rows[5] };
    CiedeCache *cache = ciede_cache_new();
    if (cache) CHECKASM_BENCH(dsp->delta_e_row(&convert, ref, dist, want, MAX_W, cache));
    ciede_cache_free(cache);

    for (unsigned k = 0; k < CIEDE_CHANNELS; k++) {
        checkasm_free(rows[k]);
        checkasm_free(copy[k]);
    }
    checkasm_free(want);
    checkasm_end();
}

void checkasm_check_ciede(void)
{
    unsigned count;
    const CheckasmLevel *levels = checkasm_levels(&count);
    CiedeDsp c_dsp;
    ciede_dsp_init(&c_dsp, levels[0].flags);
    for (unsigned i = 0; i < count; i++) {
        CiedeDsp dsp;
        ciede_dsp_init(&dsp, levels[i].flags);
        /* C always (its cache against itself, and its time); a SIMD level
         * only where it replaces the kernel */
        if (i > 0 && dsp.delta_e_row == c_dsp.delta_e_row) continue;
        check_delta_e_row(&levels[i], &c_dsp, &dsp);
    }
}
