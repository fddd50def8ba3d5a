/*
 * Integer motion's SAD kernels for AVX2: the MotionDsp table of
 * integer_motion.h, bit for bit what integer_motion_tmpl.h computes.
 *
 * A row of the vertical pass v holds at most 24 bits with a sign (8-bit
 * samples: 17), too many for a 16-bit multiply-add, and the horizontal sum
 * of 64-bit products in the C code needs more than 32.  So the vertical
 * pass stores v as two 16-bit rows, vh = v >> 8 (with its sign) and
 * vl = v & 255, and the horizontal pass sums each with vpmaddwd:
 * A = sum f * vh (|A| <= 2^31), B = sum f * vl (0 <= B < 2^24), and
 *   (256 A + B + 2^15) >> 16 = (A + ((B + 2^15) >> 8)) >> 8
 * exactly, in 32 bits.  The 16-bit vertical sums (up to 2^32 with a sign)
 * are taken apart the same way: each picture's filtered sum S < 2^32 is
 * exact modulo 2^32 from multiply-adds of samples offset by -32768, and
 *   (Sa - Sb + r) >> bd = (Sa >> bd) - (Sb >> bd)
 *                         + ((Sa % 2^bd - Sb % 2^bd + r) >> bd).
 * Each row's sum of |u| wraps at 32 bits, as the C code's does.
 */
#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/integer_motion.h"
#include "metrics/x86/integer_motion_x86.h"

#define INLINE static inline __attribute__((always_inline))

/* Columns per step. */
#define STEP 16

INLINE __m256i coef_pair(int first, int second)
{
    return _mm256_set1_epi32((int32_t)((uint32_t)first | (uint32_t)second << 16));
}

/* The difference a - b of a row, in 16 bits (8-bit samples). */
static void difference_row(const uint8_t *a, const uint8_t *b, unsigned w, int16_t *d)
{
    for (unsigned x0 = 0; x0 < w; x0 += STEP) {
        const ptrdiff_t x = x0 + STEP <= w ? x0 : w - STEP;
        _mm256_storeu_si256(
            (__m256i *)(d + x),
            _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(a + x))),
                             _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(b + x)))));
    }
}

/* v of 16 columns at x, in the low (0-3, 8-11) and high (4-7, 12-15)
 * halves, from the rows of differences d (8-bit samples: the pair sums fit
 * 16 bits too). */
INLINE void vertical_8(const int16_t *const d_rows[5], ptrdiff_t x, __m256i round,
                       __m128i shift, __m256i *low, __m256i *high)
{
    __m256i d[5];
    for (int k = 0; k < 5; k++) d[k] = _mm256_loadu_si256((const __m256i *)(d_rows[k] + x));
    const __m256i outer = _mm256_add_epi16(d[0], d[4]), inner = _mm256_add_epi16(d[1], d[3]);
    const __m256i c01 = coef_pair(MOTION_TAP0, MOTION_TAP1);
    const __m256i c22 = coef_pair(MOTION_TAP2 / 2, MOTION_TAP2 / 2);
    *low = _mm256_sra_epi32(
        _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(outer, inner), c01),
                                          _mm256_madd_epi16(_mm256_unpacklo_epi16(d[2], d[2]), c22)),
                         round),
        shift);
    *high = _mm256_sra_epi32(
        _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(outer, inner), c01),
                                          _mm256_madd_epi16(_mm256_unpackhi_epi16(d[2], d[2]), c22)),
                         round),
        shift);
}

/* One picture's filtered sums of 16 columns at x, 16-bit samples, in
 * halves: exact (below 2^32), from offset samples. */
INLINE void filtered_16(const uint8_t *const p[5], ptrdiff_t x, __m256i *low, __m256i *high)
{
    const __m256i bias = _mm256_set1_epi16(INT16_MIN);
    __m256i r[5];
    for (int k = 0; k < 5; k++)
        r[k] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)((const uint16_t *)p[k] + x)), bias);
    const __m256i c0 = coef_pair(MOTION_TAP0, MOTION_TAP0), c1 = coef_pair(MOTION_TAP1, MOTION_TAP1);
    const __m256i c2 = coef_pair(MOTION_TAP2 / 2, MOTION_TAP2 / 2);
    /* the offset, 32768 * 65536, back */
    const __m256i offset = _mm256_set1_epi32(INT32_MIN);
    *low = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(r[0], r[4]), c0),
                         _mm256_madd_epi16(_mm256_unpacklo_epi16(r[1], r[3]), c1)),
        _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(r[2], r[2]), c2), offset));
    *high = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(r[0], r[4]), c0),
                         _mm256_madd_epi16(_mm256_unpackhi_epi16(r[1], r[3]), c1)),
        _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(r[2], r[2]), c2), offset));
}

/* (Sa - Sb + round) >> bd from the two unsigned sums. */
INLINE __m256i difference_16(__m256i sa, __m256i sb, __m256i round, __m256i mask, __m128i shift)
{
    const __m256i q = _mm256_sub_epi32(_mm256_srl_epi32(sa, shift), _mm256_srl_epi32(sb, shift));
    const __m256i r = _mm256_add_epi32(
        _mm256_sub_epi32(_mm256_and_si256(sa, mask), _mm256_and_si256(sb, mask)), round);
    return _mm256_add_epi32(q, _mm256_sra_epi32(r, shift));
}

/* Horizontal pass of one row (vh, vl mirrored by 2 on each side): the sum
 * of |u| over w columns, modulo 2^32. */
static uint32_t horizontal_row(const int16_t *vh, const int16_t *vl, unsigned w)
{
    const __m256i c01 = coef_pair(MOTION_TAP0, MOTION_TAP1);
    const __m256i c21 = coef_pair(MOTION_TAP2, MOTION_TAP1);
    const __m256i c0 = coef_pair(MOTION_TAP0, 0);
    const __m256i round = _mm256_set1_epi32(1 << 15);
    const __m256i lane_column = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    __m256i acc = _mm256_setzero_si256();
    for (unsigned x = 0; x < w; x += STEP) {
        for (unsigned parity = 0; parity < 2; parity++) {
            const ptrdiff_t at = (ptrdiff_t)x + parity;
            /* column at + 2j: taps at -2, -1 | 0, +1 | +2 */
            const __m256i a = _mm256_add_epi32(
                _mm256_add_epi32(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(vh + at - 2)), c01),
                                 _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(vh + at)), c21)),
                _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(vh + at + 2)), c0));
            const __m256i b = _mm256_add_epi32(
                _mm256_add_epi32(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(vl + at - 2)), c01),
                                 _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(vl + at)), c21)),
                _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(vl + at + 2)), c0));
            const __m256i u = _mm256_srai_epi32(
                _mm256_add_epi32(a, _mm256_srli_epi32(_mm256_add_epi32(b, round), 8)), 8);
            const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(w - at)), lane_column);
            acc = _mm256_add_epi32(acc, _mm256_and_si256(_mm256_abs_epi32(u), valid));
        }
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return (uint32_t)_mm_cvtsi128_si32(s);
}

INLINE uint64_t sad(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                    ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                    void *row_buffer, bool wide)
{
    MotionRows rows = motion_row_buffers(row_buffer, w);
    int16_t *const vh = rows.vh, *const vl = rows.vl;
    const __m256i round = _mm256_set1_epi32(1 << (bitdepth - 1));
    const __m256i low_bits = _mm256_set1_epi32((1 << bitdepth) - 1);
    const __m256i byte = _mm256_set1_epi32(255);
    const __m128i shift = _mm_cvtsi32_si128((int)bitdepth);
    uint64_t total = 0;

    for (unsigned y = 0; y < h; y++) {
        const uint8_t *a[5], *b[5];
        const int16_t *d[5];
        motion_rows(a_data, a_stride, y, h, a);
        motion_rows(b_data, b_stride, y, h, b);
        if (!wide) motion_difference_rows(&rows, a, b, y, h, w, difference_row, d);
        __m256i nonzero = _mm256_setzero_si256();
        for (unsigned x0 = 0; x0 < w; x0 += STEP) {
            /* the last step ends at the last column, over columns done before */
            const ptrdiff_t x = x0 + STEP <= w ? x0 : w - STEP;
            __m256i low, high;
            if (wide) {
                __m256i al, ah, bl, bh;
                filtered_16(a, x, &al, &ah);
                filtered_16(b, x, &bl, &bh);
                low = difference_16(al, bl, round, low_bits, shift);
                high = difference_16(ah, bh, round, low_bits, shift);
            } else {
                vertical_8(d, x, round, shift, &low, &high);
            }
            nonzero = _mm256_or_si256(nonzero, _mm256_or_si256(low, high));
            _mm256_storeu_si256((__m256i *)(vh + x),
                                _mm256_packs_epi32(_mm256_srai_epi32(low, 8), _mm256_srai_epi32(high, 8)));
            _mm256_storeu_si256((__m256i *)(vl + x),
                                _mm256_packs_epi32(_mm256_and_si256(low, byte), _mm256_and_si256(high, byte)));
        }
        /* a row of zeros filters to zeros: nothing to add */
        if (_mm256_testz_si256(nonzero, nonzero)) continue;
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
    if (w < STEP) return motion_sad_c_8(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer);
    return sad(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer, false);
}

static uint64_t sad_16(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                       ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                       void *row_buffer)
{
    if (w < STEP) return motion_sad_c_16(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer);
    return sad(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer, true);
}

void motion_dsp_init_avx2(MotionDsp *dsp)
{
    dsp->sad[0] = sad_8;
    dsp->sad[1] = sad_16;
}
