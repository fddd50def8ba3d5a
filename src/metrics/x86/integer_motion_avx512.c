/*
 * Integer motion's SAD kernels for AVX-512 (F, BW): the MotionDsp table of
 * integer_motion.h, bit for bit what integer_motion_tmpl.h computes.  The
 * arithmetic is integer_motion_avx2.c's (its comment says why it is
 * exact), 32 columns a step; the last columns of a row are read through
 * masked loads, so no picture goes to the C kernel.
 */
#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/x86/reduce.h"
#include "metrics/integer_motion.h"
#include "metrics/x86/integer_motion_x86.h"

#define INLINE static inline __attribute__((always_inline))

/* Columns per step. */
#define STEP 32

INLINE __m512i coef_pair(int first, int second)
{
    return _mm512_set1_epi32((int32_t)((uint32_t)first | (uint32_t)second << 16));
}

/* 32 samples of a row from column x (those past the mask read as 0). */
INLINE __m512i load_row(const uint8_t *row, ptrdiff_t x, __mmask32 mask, bool wide)
{
    if (wide) return _mm512_maskz_loadu_epi16(mask, (const uint16_t *)row + x);
    return _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(mask, row + x));
}

/* The difference a - b of a row, in 16 bits (8-bit samples). */
static void difference_row(const uint8_t *a, const uint8_t *b, unsigned w, int16_t *d)
{
    for (unsigned x = 0; x < w; x += STEP) {
        const __mmask32 mask = w - x >= STEP ? 0xffffffffu : (__mmask32)((1u << (w - x)) - 1);
        _mm512_mask_storeu_epi16(d + x, mask,
                                 _mm512_sub_epi16(load_row(a, x, mask, false),
                                                  load_row(b, x, mask, false)));
    }
}

/* v of 32 columns at x, in the unpacked low and high halves, from the rows
 * of differences d (8-bit samples: the pair sums fit 16 bits too). */
INLINE void vertical_8(const int16_t *const d_rows[5], ptrdiff_t x, __mmask32 mask,
                       __m512i round, __m128i shift, __m512i *low, __m512i *high)
{
    __m512i d[5];
    for (int k = 0; k < 5; k++) d[k] = _mm512_maskz_loadu_epi16(mask, d_rows[k] + x);
    const __m512i outer = _mm512_add_epi16(d[0], d[4]), inner = _mm512_add_epi16(d[1], d[3]);
    const __m512i c01 = coef_pair(MOTION_TAP0, MOTION_TAP1);
    const __m512i c22 = coef_pair(MOTION_TAP2 / 2, MOTION_TAP2 / 2);
    *low = _mm512_sra_epi32(
        _mm512_add_epi32(_mm512_add_epi32(_mm512_madd_epi16(_mm512_unpacklo_epi16(outer, inner), c01),
                                          _mm512_madd_epi16(_mm512_unpacklo_epi16(d[2], d[2]), c22)),
                         round),
        shift);
    *high = _mm512_sra_epi32(
        _mm512_add_epi32(_mm512_add_epi32(_mm512_madd_epi16(_mm512_unpackhi_epi16(outer, inner), c01),
                                          _mm512_madd_epi16(_mm512_unpackhi_epi16(d[2], d[2]), c22)),
                         round),
        shift);
}

/* One picture's filtered sums of 32 columns at x, 16-bit samples, exact. */
INLINE void filtered_16(const uint8_t *const p[5], ptrdiff_t x, __mmask32 mask, __m512i *low,
                        __m512i *high)
{
    const __m512i bias = _mm512_set1_epi16(INT16_MIN);
    __m512i r[5];
    for (int k = 0; k < 5; k++) r[k] = _mm512_xor_si512(load_row(p[k], x, mask, true), bias);
    const __m512i c0 = coef_pair(MOTION_TAP0, MOTION_TAP0), c1 = coef_pair(MOTION_TAP1, MOTION_TAP1);
    const __m512i c2 = coef_pair(MOTION_TAP2 / 2, MOTION_TAP2 / 2);
    const __m512i offset = _mm512_set1_epi32(INT32_MIN);
    *low = _mm512_add_epi32(
        _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpacklo_epi16(r[0], r[4]), c0),
                         _mm512_madd_epi16(_mm512_unpacklo_epi16(r[1], r[3]), c1)),
        _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpacklo_epi16(r[2], r[2]), c2), offset));
    *high = _mm512_add_epi32(
        _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpackhi_epi16(r[0], r[4]), c0),
                         _mm512_madd_epi16(_mm512_unpackhi_epi16(r[1], r[3]), c1)),
        _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpackhi_epi16(r[2], r[2]), c2), offset));
}

/* (Sa - Sb + round) >> bd from the two unsigned sums. */
INLINE __m512i difference_16(__m512i sa, __m512i sb, __m512i round, __m512i mask, __m128i shift)
{
    const __m512i q = _mm512_sub_epi32(_mm512_srl_epi32(sa, shift), _mm512_srl_epi32(sb, shift));
    const __m512i r = _mm512_add_epi32(
        _mm512_sub_epi32(_mm512_and_si512(sa, mask), _mm512_and_si512(sb, mask)), round);
    return _mm512_add_epi32(q, _mm512_sra_epi32(r, shift));
}

/* Horizontal pass of one row (vh, vl mirrored by 2 on each side): the sum
 * of |u| over w columns, modulo 2^32. */
static uint32_t horizontal_row(const int16_t *vh, const int16_t *vl, unsigned w)
{
    const __m512i c01 = coef_pair(MOTION_TAP0, MOTION_TAP1);
    const __m512i c21 = coef_pair(MOTION_TAP2, MOTION_TAP1);
    const __m512i c0 = coef_pair(MOTION_TAP0, 0);
    const __m512i round = _mm512_set1_epi32(1 << 15);
    const __m512i lane_column =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512i acc = _mm512_setzero_si512();
    for (unsigned x = 0; x < w; x += STEP) {
        for (unsigned parity = 0; parity < 2; parity++) {
            const ptrdiff_t at = (ptrdiff_t)x + parity;
            const __m512i a = _mm512_add_epi32(
                _mm512_add_epi32(_mm512_madd_epi16(_mm512_loadu_si512(vh + at - 2), c01),
                                 _mm512_madd_epi16(_mm512_loadu_si512(vh + at), c21)),
                _mm512_madd_epi16(_mm512_loadu_si512(vh + at + 2), c0));
            const __m512i b = _mm512_add_epi32(
                _mm512_add_epi32(_mm512_madd_epi16(_mm512_loadu_si512(vl + at - 2), c01),
                                 _mm512_madd_epi16(_mm512_loadu_si512(vl + at), c21)),
                _mm512_madd_epi16(_mm512_loadu_si512(vl + at + 2), c0));
            const __m512i u = _mm512_srai_epi32(
                _mm512_add_epi32(a, _mm512_srli_epi32(_mm512_add_epi32(b, round), 8)), 8);
            const __mmask16 valid =
                _mm512_cmpgt_epi32_mask(_mm512_set1_epi32((int)(w - at)), lane_column);
            acc = _mm512_mask_add_epi32(acc, valid, acc, _mm512_abs_epi32(u));
        }
    }
    return reduce_add_u32x16(acc);
}

INLINE uint64_t sad(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                    ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                    void *row_buffer, bool wide)
{
    MotionRows rows = motion_row_buffers(row_buffer, w);
    int16_t *const vh = rows.vh, *const vl = rows.vl;
    const __m512i round = _mm512_set1_epi32(1 << (bitdepth - 1));
    const __m512i low_bits = _mm512_set1_epi32((1 << bitdepth) - 1);
    const __m512i byte = _mm512_set1_epi32(255);
    const __m128i shift = _mm_cvtsi32_si128((int)bitdepth);
    uint64_t total = 0;

    for (unsigned y = 0; y < h; y++) {
        const uint8_t *a[5], *b[5];
        const int16_t *d[5];
        motion_rows(a_data, a_stride, y, h, a);
        motion_rows(b_data, b_stride, y, h, b);
        if (!wide) motion_difference_rows(&rows, a, b, y, h, w, difference_row, d);
        __m512i nonzero = _mm512_setzero_si512();
        for (unsigned x = 0; x < w; x += STEP) {
            const __mmask32 mask = w - x >= STEP ? 0xffffffffu : (__mmask32)((1u << (w - x)) - 1);
            __m512i low, high;
            if (wide) {
                __m512i al, ah, bl, bh;
                filtered_16(a, x, mask, &al, &ah);
                filtered_16(b, x, mask, &bl, &bh);
                low = difference_16(al, bl, round, low_bits, shift);
                high = difference_16(ah, bh, round, low_bits, shift);
            } else {
                vertical_8(d, x, mask, round, shift, &low, &high);
            }
            /* columns past w read zeros on both pictures: v is 0 there */
            nonzero = _mm512_or_si512(nonzero, _mm512_or_si512(low, high));
            _mm512_mask_storeu_epi16(vh + x, mask,
                                     _mm512_packs_epi32(_mm512_srai_epi32(low, 8), _mm512_srai_epi32(high, 8)));
            _mm512_mask_storeu_epi16(vl + x, mask,
                                     _mm512_packs_epi32(_mm512_and_si512(low, byte), _mm512_and_si512(high, byte)));
        }
        if (!_mm512_test_epi32_mask(nonzero, nonzero)) continue;
        motion_mirror_row(vh, w);
        motion_mirror_row(vl, w);
        total += horizontal_row(vh, vl, w);
    }
    return total;
}

static uint64_t sad_8(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                      ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                      void *row_buffer)
{
    return sad(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer, false);
}

static uint64_t sad_16(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                       ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                       void *row_buffer)
{
    return sad(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer, true);
}

void motion_dsp_init_avx512(MotionDsp *dsp)
{
    dsp->sad[0] = sad_8;
    dsp->sad[1] = sad_16;
}
