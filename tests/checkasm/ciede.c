/*
 * checkasm for CIEDE2000 (src/metrics/ciede.h): the colours kernel and the
 * deltaE kernel, bit for bit against the C kernels.
 *
 * Colours: sample triples of every bit depth the metric takes (8 to 16),
 * random, all 0 and all maximum, at counts around the vector lengths and
 * a 1080p row's.  deltaE: pairs of colours converted from such triples,
 * the second either independent of the first (any pair of colours) or
 * converted from the first's samples with small changes (the common case:
 * nearby colours, equal ones, equal chroma with different luma), and
 * pairs of colours that are not colours of any samples (random floats in
 * and around the L*a*b* ranges, zeros, negative zeros).
 */
#include <stdio.h>
#include <string.h>

#include "checkasm.h"
#include "common.h"
#include "metrics/ciede/ciede.h"

enum { MAX_N = 1920 };

static const unsigned counts[] = { 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, MAX_N };
static const unsigned depths[] = { 8, 9, 10, 12, 16 };

/* Fills n triples by `fill`, or (nearby) as `from` with small changes. */
static void fill_triples(uint16_t *t[3], const uint16_t *const from[3], unsigned n,
                         unsigned bits, enum CheckasmFill fill)
{
    const uint32_t max = (1u << bits) - 1;
    for (unsigned k = 0; k < 3; k++) {
        for (unsigned i = 0; i < n; i++) {
            uint32_t v;
            if (from) {
                v = from[k][i];
                if (checkasm_rand_below(3) != 0) {
                    const int64_t stepped = (int64_t)v + (int)checkasm_rand_below(9) - 4;
                    v = stepped < 0 ? 0 : stepped > (int64_t)max ? max : (uint32_t)stepped;
                }
            } else {
                v = fill == CHECKASM_FILL_ZERO ? 0
                    : fill == CHECKASM_FILL_MAX ? max
                                                : checkasm_rand_below(max + 1);
            }
            t[k][i] = (uint16_t)v;
        }
    }
}

static float random_float(float lo, float hi)
{
    return lo + (hi - lo) * (float)checkasm_rand_below(1u << 24) / (float)(1u << 24);
}

static void check_colours(const CheckasmLevel *level, const CiedeDsp *c_dsp, const CiedeDsp *dsp)
{
    if (!checkasm_begin("ciede_colours", level)) return;
    uint16_t *s[3], *copy[3];
    float *want[3], *got[3];
    for (unsigned k = 0; k < 3; k++) {
        s[k] = checkasm_alloc(MAX_N * sizeof(uint16_t));
        copy[k] = checkasm_alloc(MAX_N * sizeof(uint16_t));
        want[k] = checkasm_alloc(MAX_N * sizeof(float));
    }
    for (unsigned d = 0; d < QUALE_ARRAY_SIZE(depths); d++) {
        CiedeConvert convert;
        ciede_convert_init(&convert, depths[d]);
        for (unsigned c = 0; c < QUALE_ARRAY_SIZE(counts); c++) {
            const unsigned n = counts[c];
            for (unsigned f = 0; f < CHECKASM_FILL_COUNT; f++) {
                fill_triples(s, NULL, n, depths[d], (enum CheckasmFill)f);
                for (unsigned k = 0; k < 3; k++) {
                    memcpy(copy[k], s[k], n * sizeof(uint16_t));
                    got[k] = checkasm_alloc(n * sizeof(float));
                }
                c_dsp->colours(&convert, s[0], s[1], s[2], want[0], want[1], want[2], n);
                dsp->colours(&convert, s[0], s[1], s[2], got[0], got[1], got[2], n);
                char what[96];
                snprintf(what, sizeof(what), "colours, %u bits, %u triples, %s", depths[d], n,
                         checkasm_fill_names[f]);
                for (unsigned k = 0; k < 3; k++) {
                    checkasm_check_equal(got[k], want[k], n * sizeof(float), what);
                    checkasm_check_equal(s[k], copy[k], n * sizeof(uint16_t), "samples");
                    checkasm_free(got[k]);
                }
            }
        }
    }
    CiedeConvert convert;
    ciede_convert_init(&convert, 8);
    fill_triples(s, NULL, MAX_N, 8, CHECKASM_FILL_RANDOM);
    CHECKASM_BENCH(dsp->colours(&convert, s[0], s[1], s[2], want[0], want[1], want[2], MAX_N));
    for (unsigned k = 0; k < 3; k++) {
        checkasm_free(s[k]);
        checkasm_free(copy[k]);
        checkasm_free(want[k]);
    }
    checkasm_end();
}

/* Fills n pairs of colours (lab[0..2] the reference's, lab[3..5] the
 * distorted's) of the kind `kind` asks for. */
enum PairKind { PAIR_NEARBY, PAIR_ANY, PAIR_ZERO, PAIR_FLOATS, PAIR_KINDS };
static const char *const pair_names[PAIR_KINDS] = { "nearby", "any", "zero", "floats" };

static void fill_pairs(float *lab[6], unsigned n, unsigned bits, enum PairKind kind,
                       uint16_t *scratch[6])
{
    if (kind == PAIR_ZERO || kind == PAIR_FLOATS) {
        for (unsigned k = 0; k < 6; k++) {
            for (unsigned i = 0; i < n; i++) {
                if (kind == PAIR_ZERO) {
                    lab[k][i] = checkasm_rand_below(2) ? 0.f : -0.f;
                } else {
                    /* L* around 0 .. 100, a* and b* around -128 .. 128 */
                    lab[k][i] = k % 3 == 0 ? random_float(-10.f, 110.f)
                                           : random_float(-140.f, 140.f);
                    if (checkasm_rand_below(8) == 0) lab[k][i] = 0.f;
                }
            }
        }
        return;
    }
    CiedeConvert convert;
    ciede_convert_init(&convert, bits);
    CiedeDsp c_dsp;
    ciede_dsp_init(&c_dsp, 0);
    fill_triples(scratch, NULL, n, bits, CHECKASM_FILL_RANDOM);
    const uint16_t *const from[3] = { scratch[0], scratch[1], scratch[2] };
    fill_triples(scratch + 3, kind == PAIR_NEARBY ? from : NULL, n, bits, CHECKASM_FILL_RANDOM);
    for (unsigned half = 0; half < 2; half++) {
        uint16_t *const *t = scratch + 3 * half;
        c_dsp.colours(&convert, t[0], t[1], t[2], lab[3 * half], lab[3 * half + 1],
                      lab[3 * half + 2], n);
    }
}

static void check_delta_e(const CheckasmLevel *level, const CiedeDsp *c_dsp, const CiedeDsp *dsp)
{
    if (!checkasm_begin("ciede_delta_e", level)) return;
    float *lab[6], *copy[6];
    uint16_t *scratch[6];
    for (unsigned k = 0; k < 6; k++) {
        lab[k] = checkasm_alloc(MAX_N * sizeof(float));
        copy[k] = checkasm_alloc(MAX_N * sizeof(float));
        scratch[k] = checkasm_alloc(MAX_N * sizeof(uint16_t));
    }
    float *want = checkasm_alloc(MAX_N * sizeof(float));
    const float *const ref[3] = { lab[0], lab[1], lab[2] };
    const float *const dist[3] = { lab[3], lab[4], lab[5] };
    for (unsigned d = 0; d < QUALE_ARRAY_SIZE(depths); d++) {
        for (unsigned c = 0; c < QUALE_ARRAY_SIZE(counts); c++) {
            const unsigned n = counts[c];
            for (unsigned kind = 0; kind < PAIR_KINDS; kind++) {
                fill_pairs(lab, n, depths[d], (enum PairKind)kind, scratch);
                for (unsigned k = 0; k < 6; k++) memcpy(copy[k], lab[k], n * sizeof(float));
                float *got = checkasm_alloc(n * sizeof(float));
                c_dsp->delta_e(ref, dist, want, n);
                dsp->delta_e(ref, dist, got, n);
                char what[96];
                snprintf(what, sizeof(what), "deltaE, %u bits, %u pairs, %s", depths[d], n,
                         pair_names[kind]);
                checkasm_check_equal(got, want, n * sizeof(float), what);
                for (unsigned k = 0; k < 6; k++)
                    checkasm_check_equal(lab[k], copy[k], n * sizeof(float), "colours");
                checkasm_free(got);
            }
        }
    }
    fill_pairs(lab, MAX_N, 8, PAIR_NEARBY, scratch);
    CHECKASM_BENCH(dsp->delta_e(ref, dist, want, MAX_N));
    for (unsigned k = 0; k < 6; k++) {
        checkasm_free(lab[k]);
        checkasm_free(copy[k]);
        checkasm_free(scratch[k]);
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
    /* C always (for its time); a SIMD level where it replaces a kernel */
    for (unsigned i = 0; i < count; i++) {
        CiedeDsp dsp;
        ciede_dsp_init(&dsp, levels[i].flags);
        if (i == 0 || dsp.colours != c_dsp.colours) check_colours(&levels[i], &c_dsp, &dsp);
    }
    for (unsigned i = 0; i < count; i++) {
        CiedeDsp dsp;
        ciede_dsp_init(&dsp, levels[i].flags);
        if (i == 0 || dsp.delta_e != c_dsp.delta_e) check_delta_e(&levels[i], &c_dsp, &dsp);
    }
}
