/*
 * CAMBI's row kernels (cambi.h's CambiDsp), written once: cambi.c includes
 * this file for the C reference and src/metrics/x86/cambi_<isa>.c include
 * it to build the same loops for AVX2 and AVX-512 (integer arithmetic, one
 * value per element: the compiler vectorises them without changing a
 * bit), with their own counter updates (CAMBI_OWN_RANGE_ADD) and
 * c-values (CAMBI_OWN_C_VALUES).
 *
 * The includer defines CAMBI_FN(name), the name of this file's functions.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "metrics/cambi.h"

void CAMBI_FN(anti_dither_row)(uint16_t *a, const uint16_t *b, unsigned w)
{
    if (b) {
        for (size_t j = 0; j + 1 < w; j++)
            a[j] = (uint16_t)((a[j] + a[j + 1] + b[j] + b[j + 1]) >> 2);
        a[w - 1] = (uint16_t)((a[w - 1] + b[w - 1]) >> 1);
    } else {
        for (size_t j = 0; j + 1 < w; j++) a[j] = (uint16_t)((a[j] + a[j + 1]) >> 1);
    }
}

void CAMBI_FN(flat_row)(const uint16_t *a, const uint16_t *b, uint8_t *flat, unsigned w)
{
    const uint16_t *restrict pa = a;
    uint8_t *restrict f = flat;
    if (b) {
        const uint16_t *restrict pb = b;
        for (size_t j = 0; j + 1 < w; j++)
            f[j] = (uint8_t)((pa[j] == pa[j + 1]) & (pa[j] == pb[j]));
        f[w - 1] = (uint8_t)(pa[w - 1] == pb[w - 1]);
    } else {
        for (size_t j = 0; j + 1 < w; j++) f[j] = (uint8_t)(pa[j] == pa[j + 1]);
        f[w - 1] = 1;
    }
}

void CAMBI_FN(mask_row)(uint8_t *count, const uint8_t *add, const uint8_t *sub, uint8_t *mask,
                        unsigned w, unsigned mask_index)
{
    if (add) {
        uint8_t *restrict c = count;
        const uint8_t *restrict in = add;
        for (size_t j = 0; j < w; j++) c[j] = (uint8_t)(c[j] + in[j]);
    }
    if (sub) {
        uint8_t *restrict c = count;
        const uint8_t *restrict out = sub;
        for (size_t j = 0; j < w; j++) c[j] = (uint8_t)(c[j] - out[j]);
    }
    /* a sum of 7 counts of at most 7 fits a byte: byte arithmetic, which
     * vectorises 4 times wider than int */
    const uint8_t *restrict window = count - CAMBI_MASK_PAD;
    const uint8_t threshold = (uint8_t)QUALE_MIN(mask_index, 255u);
    uint8_t *restrict m = mask;
    for (size_t j = 0; j < w; j++) {
        const uint8_t sum = (uint8_t)(window[j] + window[j + 1] + window[j + 2] + window[j + 3] +
                                      window[j + 4] + window[j + 5] + window[j + 6]);
        m[j] = sum > threshold;
    }
}

void CAMBI_FN(decimate_row16)(const uint16_t *in, uint16_t *out, unsigned dw)
{
    const uint16_t *restrict i16 = in;
    uint16_t *restrict o16 = out;
    for (size_t j = 0; j < dw; j++) o16[j] = i16[2 * j];
}

void CAMBI_FN(decimate_row8)(const uint8_t *in, uint8_t *out, unsigned dw)
{
    const uint8_t *restrict i8 = in;
    uint8_t *restrict o8 = out;
    for (size_t j = 0; j < dw; j++) o8[j] = i8[2 * j];
}

/* The value two of three share, else the smallest; in selects, which
 * vectorise. */
static inline uint16_t CAMBI_FN(mode3)(uint16_t a, uint16_t b, uint16_t c)
{
    const uint16_t ab = a < b ? a : b;
    const uint16_t smallest = ab < c ? ab : c;
    const uint16_t bc = b == c ? b : smallest;
    return a == b || a == c ? a : bc;
}

void CAMBI_FN(mode_row)(const uint16_t *in, uint16_t *out, unsigned w)
{
    const uint16_t *restrict i16 = in;
    uint16_t *restrict o16 = out;
    o16[0] = i16[0];
    for (size_t j = 1; j + 1 < w; j++) o16[j] = CAMBI_FN(mode3)(i16[j - 1], i16[j], i16[j + 1]);
    o16[w - 1] = i16[w - 1];
}

void CAMBI_FN(mode_column)(const uint16_t *r0, const uint16_t *r1, const uint16_t *r2,
                           uint16_t *out, unsigned w)
{
    const uint16_t *restrict a = r0, *restrict b = r1, *restrict c = r2;
    uint16_t *restrict o16 = out;
    for (size_t j = 0; j < w; j++) o16[j] = CAMBI_FN(mode3)(a[j], b[j], c[j]);
}

/* Whether any of the mask bytes m[j0 .. j0 + 16) is set: two 8-byte words. */
static inline bool CAMBI_FN(any16)(const uint8_t *m, unsigned j0)
{
    uint64_t lo, hi;
    memcpy(&lo, m + j0, sizeof(lo));
    memcpy(&hi, m + j0 + 8, sizeof(hi));
    return (lo | hi) != 0;
}

/* Whether any of the mask bytes m[j0 .. j1) is set (none without a row). */
static inline bool CAMBI_FN(any_masked)(const uint8_t *m, unsigned j0, unsigned j1)
{
    if (!m) return false;
    if (j1 - j0 == 16) return CAMBI_FN(any16)(m, j0);
    unsigned any = 0;
    for (unsigned j = j0; j < j1; j++) any |= m[j];
    return any != 0;
}

/* The band row of a sample, or -1 when it is masked out or off the band. */
static inline int CAMBI_FN(band_row)(const CambiCValueParams *p, const uint16_t *image,
                                     const uint8_t *mask, unsigned j)
{
    if (!mask[j]) return -1;
    const int v = (int)image[j] - p->band_base;
    return (unsigned)v < (unsigned)p->band_size ? v : -1;
}

#ifndef CAMBI_OWN_RANGE_ADD
/* counters[lo .. hi) += delta (1, or 0xffff for -1) */
static inline void CAMBI_FN(range_add)(uint16_t *counters, size_t lo, size_t hi, uint16_t delta)
{
    for (size_t k = lo; k < hi; k++) counters[k] = (uint16_t)(counters[k] + delta);
}
#endif

void CAMBI_FN(slide_row)(uint16_t *histograms, const CambiCValueParams *p, const uint16_t *leave,
                         const uint8_t *leave_mask, const uint16_t *enter,
                         const uint8_t *enter_mask, unsigned w, unsigned pad)
{
    /* Masks are mostly 0: runs of 16 columns masked out in both rows are
     * skipped at once. */
    for (unsigned j0 = 0; j0 < w; j0 += 16) {
        const unsigned j1 = QUALE_MIN(j0 + 16, w);
        if (!CAMBI_FN(any_masked)(leave_mask, j0, j1) &&
            !CAMBI_FN(any_masked)(enter_mask, j0, j1))
            continue;
        for (unsigned j = j0; j < j1; j++) {
            const int out = leave_mask ? CAMBI_FN(band_row)(p, leave, leave_mask, j) : -1;
            const int in = enter_mask ? CAMBI_FN(band_row)(p, enter, enter_mask, j) : -1;
            if (out == in) continue;
            const unsigned lo = j > pad ? j - pad : 0;
            const unsigned hi = QUALE_MIN(j + pad + 1, w);
            if (out >= 0) CAMBI_FN(range_add)(histograms + (size_t)out * w, lo, hi, 0xffff);
            if (in >= 0) CAMBI_FN(range_add)(histograms + (size_t)in * w, lo, hi, 1);
        }
    }
}

/* The c-value of a masked sample of band row v, from the counters of its
 * column (col[r * w] counts band row r). */
static inline __attribute__((unused)) float CAMBI_FN(c_value)(const CambiCValueParams *p,
                                                               const uint16_t *col, size_t w,
                                                               int v)
{
    const int nd = p->num_diffs;
    const int value = v + p->band_base + nd;
    const int p0 = col[(size_t)v * w];
    float c = 0.0f;
    for (int d = 0; d < nd; d++) {
        if (value > p->tvi[d] || value + d + 1 <= p->vlt_luma) continue;
        const int p1 = col[(size_t)(v + d + 1) * w];
        const int p2 = v - d - 1 >= 0 ? col[(size_t)(v - d - 1) * w] : 0;
        const int pm = p1 > p2 ? p1 : p2;
        const float val = (float)(p->weight[d] * p0 * pm) * p->reciprocal[pm + p0];
        if (val > c) c = val;
    }
    return c;
}

#ifndef CAMBI_OWN_C_VALUES
void CAMBI_FN(c_values_row)(const CambiCValueParams *p, const uint16_t *histograms,
                            const uint16_t *image, const uint8_t *mask, float *c_values,
                            unsigned w)
{
    memset(c_values, 0, sizeof(float) * w);
    for (unsigned j0 = 0; j0 < w; j0 += 16) {
        const unsigned j1 = QUALE_MIN(j0 + 16, w);
        if (!CAMBI_FN(any_masked)(mask, j0, j1)) continue;
        for (unsigned j = j0; j < j1; j++) {
            if (!mask[j]) continue;
            const int v = (int)image[j] - p->band_base;
            if ((unsigned)v >= (unsigned)p->band_size) continue;
            c_values[j] = CAMBI_FN(c_value)(p, histograms + j, w, v);
        }
    }
}
#endif
