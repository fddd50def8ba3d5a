/*
 * What integer VIF's SIMD kernels (integer_vif_avx2.c, integer_vif_avx512.c)
 * share: how they group the filter taps for 16-bit multiply-adds.
 *
 * A multiply-add of 16-bit pairs (vpmaddwd) multiplies two neighbouring
 * 16-bit values by two signed 16-bit coefficients and adds the products.
 * Every tap of libvmaf's filters is below 32768 except the centre of the
 * 3-tap one (43728), and every centre tap is even, so:
 *   - the vertical passes interleave rows k and fw - 1 - k (equal taps),
 *     and the centre row with itself, at half its tap;
 *   - the horizontal passes pair neighbouring taps (k, k + 1), the last
 *     odd one with a zero, and split the 3-tap filter as
 *     (10904, 21864) + (21864, 10904) over offsets -1 and 0.
 * Either way the coefficients of a filter still add up to 65536.
 */
#ifndef QUALE_SRC_METRICS_X86_INTEGER_VIF_X86_H
#define QUALE_SRC_METRICS_X86_INTEGER_VIF_X86_H

#include <stdint.h>

#include "metrics/integer_vif.h"

/* Evaluates `call` with FW the filter width fw (17, 9, 5 or 3) as a
 * constant, so that an always-inlined kernel unrolls its taps and keeps
 * their coefficients in registers. */
#define VIF_CONSTANT_FW(fw, call)               \
    do {                                        \
        switch (fw) {                           \
        case 17: { enum { FW = 17 }; call; } break; \
        case 9: { enum { FW = 9 }; call; } break;   \
        case 5: { enum { FW = 5 }; call; } break;   \
        default: { enum { FW = 3 }; call; } break;  \
        }                                       \
    } while (0)

/* The most pairs a filter needs (17 taps: 9). */
#define VIF_MAX_PAIRS 9

/* Two 16-bit coefficients in one 32-bit word, the first in the low half. */
static inline int32_t vif_coef_pair(uint32_t first, uint32_t second)
{
    return (int32_t)((first & 0xffff) | second << 16);
}

/* The vertical pairs of a filter of fw taps: pair k < fw / 2 covers rows k
 * and fw - 1 - k, the last (k = fw / 2) the centre row twice; returns how
 * many there are. */
static inline unsigned vif_vertical_pairs(unsigned fw, int32_t coef[VIF_MAX_PAIRS])
{
    const uint16_t *c = vif_filter(fw);
    const unsigned half = fw / 2;
    for (unsigned k = 0; k < half; k++) coef[k] = vif_coef_pair(c[k], c[k]);
    coef[half] = vif_coef_pair(c[half] / 2u, c[half] / 2u);
    return half + 1;
}

/* The horizontal pairs of a filter of fw taps: pair m multiplies the
 * samples at offset[m] and offset[m] + 1 from the output; returns how many
 * there are. */
static inline unsigned vif_horizontal_pairs(unsigned fw, int offset[VIF_MAX_PAIRS],
                                            int32_t coef[VIF_MAX_PAIRS])
{
    const uint16_t *c = vif_filter(fw);
    const int half = (int)(fw / 2);
    if (fw == 3) {
        offset[0] = -1;
        coef[0] = vif_coef_pair(c[0], c[1] / 2u);
        offset[1] = 0;
        coef[1] = vif_coef_pair(c[1] / 2u, c[2]);
        return 2;
    }
    unsigned m = 0;
    for (unsigned k = 0; k < fw; k += 2, m++) {
        offset[m] = (int)k - half;
        coef[m] = vif_coef_pair(c[k], k + 1 < fw ? c[k + 1] : 0);
    }
    return m;
}

#endif /* QUALE_SRC_METRICS_X86_INTEGER_VIF_X86_H */
