/*
 * CAMBI's kernels for the x86 instruction sets (cambi_avx2.c,
 * cambi_avx512.c include this file): the rows of cambi_tmpl.c as the
 * compiler vectorises them, and the c-values of CAMBI_LANES samples at
 * once, the histogram counts and reciprocals gathered per lane.  Each lane
 * runs cambi_c_value() (cambi.h) operation for operation: the same integer
 * products, converted to float and multiplied by the same reciprocal, the
 * same maximum over the contrast steps, so the c-values are the C
 * kernel's to the bit (tests/checkasm/cambi.c).
 *
 * The includer defines VECTOR_BYTES (vector.h: 8 or 16 samples a vector)
 * and CAMBI_ISA(name).
 */
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "metrics/common/x86/vector.h"

#define CAMBI_LANES (VECTOR_BYTES / 4)

#define CAMBI_FN(name) CAMBI_ISA(cambi_##name)
#define CAMBI_OWN_C_VALUES
#include "metrics/cambi/cambi_tmpl.c"

typedef vec_i32 VI;
typedef vec_f32 VF;
typedef uint16_t VU16 __attribute__((vector_size(2 * CAMBI_LANES)));
typedef uint8_t VU8 __attribute__((vector_size(CAMBI_LANES)));

static const int CAMBI_ISA(cambi_weights)[CAMBI_MAX_DIFFS] = { CAMBI_CONTRAST_WEIGHTS };

/* The 16-bit counters histograms[index] (the words read reach 2 bytes
 * past the counter: CAMBI_HISTOGRAM_SLACK). */
static inline VI CAMBI_ISA(cambi_counters)(const uint16_t *histograms, VI index)
{
    return vec_gather_i32(histograms, index, 2) & 0xffff;
}

/* The counters of band row `row` at the lanes' columns (consecutive). */
static inline VI CAMBI_ISA(cambi_counter_row)(const uint16_t *histograms, int row, size_t w,
                                              unsigned j0)
{
    VU16 c;
    memcpy(&c, histograms + (size_t)row * w + j0, sizeof(c));
    return __builtin_convertvector(c, VI);
}

/* The c-values of the CAMBI_LANES samples from column j0, some of them
 * masked.  Kept out of line, so that the row's loop over the chunks
 * masked out keeps its few values in registers. */
static __attribute__((noinline)) VF CAMBI_ISA(cambi_c_values_lanes)(
    const CambiContrast *k, const float *reciprocal, const uint16_t *histograms,
    const uint16_t *image, const uint8_t *mask, unsigned j0, unsigned w)
{
    const int nd = k->num_diffs;
    const VI zero = { 0 };
    const VI lane = { 0, 1, 2, 3, 4, 5, 6, 7,
#if CAMBI_LANES == 16
                      8, 9, 10, 11, 12, 13, 14, 15
#endif
    };
    const VI wv = zero + (int)w;
    VU16 samples;
    VU8 bytes;
    memcpy(&samples, image + j0, sizeof(samples));
    memcpy(&bytes, mask + j0, sizeof(bytes));
    const VI v = __builtin_convertvector(samples, VI) - k->band_base;
    const VI m = __builtin_convertvector(bytes, VI);
    /* masked and in the band: (unsigned)v < band_size */
    const VI valid = (m != 0) & (v >= 0) & (v < k->band_size);
    const VI column = lane + (int)j0;
    VF c = { 0 };
    /* In a banded (flat) area the masked samples of a run usually share
     * one value: their counters are then consecutive. */
    const int highest = vec_max_lane_i32((v & valid) | ~valid); /* -1: none */
    if (highest < 0) return c; /* nothing masked in the band */
    const bool uniform = !vec_any_i32(valid & (v != highest));
    const int uniform_v = highest;

    const VI p0 = uniform ? CAMBI_ISA(cambi_counter_row)(histograms, uniform_v, w, j0)
                          : CAMBI_ISA(cambi_counters)(histograms, (v * wv + column) & valid);
    const VI value = v + k->band_base + nd;
    for (int d = 0; d < nd; d++) {
        const VI active = valid & (value <= k->tvi[d]) & (value + d + 1 > k->vlt_luma);
        const VI up = v + d + 1, down = v - d - 1;
        const VI has_down = active & (down >= 0);
        VI p1, p2;
        if (uniform) {
            /* rows the inactive lanes (whose values are dropped) read too:
             * inside the band, as every active lane's */
            const bool read = vec_any_i32(active);
            p1 = read ? CAMBI_ISA(cambi_counter_row)(histograms, uniform_v + d + 1, w, j0) : zero;
            p2 = read && uniform_v - d - 1 >= 0
                     ? CAMBI_ISA(cambi_counter_row)(histograms, uniform_v - d - 1, w, j0) &
                           has_down
                     : zero;
        } else {
            p1 = CAMBI_ISA(cambi_counters)(histograms, (up * wv + column) & active);
            p2 = CAMBI_ISA(cambi_counters)(histograms, (down * wv + column) & has_down) &
                 has_down;
        }
        const VI larger = p1 > p2;
        const VI pm = (p1 & larger) | (p2 & ~larger);
        const VF r = (VF)vec_gather_i32(reciprocal, (pm + p0) & active, 4);
        const VF val = __builtin_convertvector(CAMBI_ISA(cambi_weights)[d] * p0 * pm, VF) * r;
        const VI take = active & (val > c);
        c = (VF)(((VI)val & take) | ((VI)c & ~take));
    }
    return (VF)((VI)c & valid);
}

bool CAMBI_ISA(cambi_c_values_row)(const CambiContrast *k, const float *reciprocal,
                                   const uint16_t *histograms, const uint16_t *image,
                                   const uint8_t *mask, float *c_values, unsigned w)
{
    const VF none = { 0 };
    VF positive = none; /* the lanes' largest c-values */
    unsigned j0 = 0;
    /* every vector of c-values is stored once: 0 where nothing is masked */
    for (; j0 + CAMBI_LANES <= w; j0 += CAMBI_LANES) {
        uint64_t any = 0;
        for (unsigned i = 0; i < CAMBI_LANES; i += 8) {
            uint64_t word;
            memcpy(&word, mask + j0 + i, sizeof(word));
            any |= word;
        }
        VF c = none;
        if (any) {
            c = CAMBI_ISA(cambi_c_values_lanes)(k, reciprocal, histograms, image, mask, j0, w);
            positive = (VF)((VI)positive | (VI)c);
        }
        memcpy(c_values + j0, &c, sizeof(c));
    }
    /* the last samples, one by one; c-values are 0.0f or above 0: any
     * bit set is one above 0 */
    const bool last = CAMBI_ISA(cambi_c_values_span)(k, reciprocal, histograms, image, mask,
                                                     c_values, j0, w, w);
    return vec_any_i32((VI)positive) || last;
}
