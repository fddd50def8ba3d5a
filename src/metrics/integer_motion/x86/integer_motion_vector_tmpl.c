/*
 * Integer motion's SAD kernels (the MotionDsp table of integer_motion.h)
 * on one register of VECTOR_BYTES (vector_int.h), bit for bit what
 * integer_motion_tmpl.h computes; integer_motion_avx2.c and
 * integer_motion_avx512.c include this file.
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
 *
 * The last columns of a row: AVX-512 masks them (columns past the row
 * read as 0 on both pictures, so v is 0 there); AVX2 ends its last step at
 * the last column and hands rows narrower than a step to the C kernel
 * (vector_int.h's vec_columns).
 *
 * The includer defines VECTOR_BYTES and MOTION_ISA(name).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/integer_motion/integer_motion.h"
#include "metrics/common/x86/vector_int.h"

#define INLINE VI_INLINE

/* ---- rows ------------------------------------------------------------------- */

/* 16-bit entries before (and, at least, after) each row of vh, vl: a step
 * of the horizontal pass reads up to 34 past the row. */
#define MOTION_ROW_PAD 48

/* The row buffer (MOTION_ROW_BUFFER_BYTES(w)): the vertical pass's row as
 * its high and low bytes, vh and vl (padded), and a ring of 5 rows of
 * differences of the pictures, row r in slot r % 5, so that each row is
 * widened and subtracted once rather than once per tap. */
typedef struct MotionRows {
    int16_t *vh, *vl, *ring;
    int ring_row[5];
} MotionRows;

static inline MotionRows motion_row_buffers(void *row_buffer, unsigned w)
{
    MotionRows m;
    m.vh = (int16_t *)row_buffer + MOTION_ROW_PAD;
    m.vl = m.vh + w + 2 * MOTION_ROW_PAD;
    m.ring = m.vl + w + MOTION_ROW_PAD;
    for (int k = 0; k < 5; k++) m.ring_row[k] = -1;
    return m;
}

/* The rows under the 5 taps at row y, through libvmaf's mirror. */
static inline void motion_rows(const void *data, ptrdiff_t stride, unsigned y, unsigned h,
                               const uint8_t *rows[5])
{
    for (int k = 0; k < 5; k++)
        rows[k] = (const uint8_t *)data + (ptrdiff_t)motion_mirror((int)y - 2 + k, h) * stride;
}

/* The rows of differences under the 5 taps at row y of pictures a, b
 * (those of motion_rows()), each made once by difference(a, b, w, d);
 * true if one of them met a sample of 2^14 or more. */
static inline bool motion_difference_rows(MotionRows *m, const uint8_t *const a[5],
                                          const uint8_t *const b[5], unsigned y, unsigned h,
                                          unsigned w,
                                          bool (*difference)(const uint8_t *, const uint8_t *,
                                                             unsigned, int16_t *),
                                          const int16_t *d[5])
{
    bool exceeds = false;
    for (int k = 0; k < 5; k++) {
        const int r = (int)motion_mirror((int)y - 2 + k, h);
        int16_t *slot = m->ring + (size_t)(r % 5) * w;
        if (m->ring_row[r % 5] != r) {
            exceeds |= difference(a[k], b[k], w, slot);
            m->ring_row[r % 5] = r;
        }
        d[k] = slot;
    }
    return exceeds;
}

/* Mirrors a filtered row into its padding as the C code does (w >= 3). */
static inline void motion_mirror_row(int16_t *row, unsigned w)
{
    row[-1] = row[1];
    row[-2] = row[2];
    row[w] = row[w - 2];
    row[w + 1] = row[w - 3];
}

/* Columns per step. */
#define STEP VI_LANES16

INLINE vi coef_pair(int first, int second)
{
    return vi_set1_32((int32_t)((uint32_t)first | (uint32_t)second << 16));
}

/* The difference a - b of a row, in 16 bits (8-bit samples); false: no
 * sample reaches 2^14 (difference_row_16). */
static bool MOTION_ISA(difference_row)(const uint8_t *a, const uint8_t *b, unsigned w,
                                       int16_t *d)
{
    for (unsigned x0 = 0; x0 < w; x0 += STEP) {
        const VecColumns c = vec_columns(x0, w);
        vi_store_columns(d, c, vi_sub16(vi_load_columns(a, c, false),
                                        vi_load_columns(b, c, false)));
    }
    return false;
}

/* The same of 16-bit samples; true where a sample reaches 2^14, whose
 * differences (or the sums of two) need more than 16 bits. */
static bool MOTION_ISA(difference_row_16)(const uint8_t *a, const uint8_t *b, unsigned w,
                                          int16_t *d)
{
    vi any = vi_zero();
    for (unsigned x0 = 0; x0 < w; x0 += STEP) {
        const VecColumns c = vec_columns(x0, w);
        const vi va = vi_load_columns(a, c, true), vb = vi_load_columns(b, c, true);
        any = vi_or(any, vi_or(va, vb));
        vi_store_columns(d, c, vi_sub16(va, vb));
    }
    return !vi_all_zero(vi_and(any, vi_set1_16(-16384))); /* bits 14 and 15 */
}

/* v of a step of columns, in the unpacked low and high halves, from the
 * rows of differences d of samples of up to 14 bits: the pair sums fit 16
 * bits, and the filtered sums (|sum| < 65536 * 2^14) 32. */
INLINE void vertical_8(const int16_t *const d_rows[5], VecColumns c, vi round, __m128i shift,
                       vi *low, vi *high)
{
    vi d[5];
    for (int k = 0; k < 5; k++) d[k] = vi_load_columns(d_rows[k], c, true);
    const vi outer = vi_add16(d[0], d[4]), inner = vi_add16(d[1], d[3]);
    const vi c01 = coef_pair(MOTION_TAP0, MOTION_TAP1);
    const vi c22 = coef_pair(MOTION_TAP2 / 2, MOTION_TAP2 / 2);
    *low = vi_sra32(vi_add32(vi_add32(vi_madd16(vi_unpacklo16(outer, inner), c01),
                                      vi_madd16(vi_unpacklo16(d[2], d[2]), c22)),
                             round),
                    shift);
    *high = vi_sra32(vi_add32(vi_add32(vi_madd16(vi_unpackhi16(outer, inner), c01),
                                       vi_madd16(vi_unpackhi16(d[2], d[2]), c22)),
                              round),
                     shift);
}

/* One picture's filtered sums of a step of columns, 16-bit samples, in
 * halves: exact (below 2^32), from offset samples. */
INLINE void filtered_16(const uint8_t *const p[5], VecColumns c, vi *low, vi *high)
{
    const vi bias = vi_set1_16(INT16_MIN);
    vi r[5];
    for (int k = 0; k < 5; k++) r[k] = vi_xor(vi_load_columns(p[k], c, true), bias);
    const vi c0 = coef_pair(MOTION_TAP0, MOTION_TAP0), c1 = coef_pair(MOTION_TAP1, MOTION_TAP1);
    const vi c2 = coef_pair(MOTION_TAP2 / 2, MOTION_TAP2 / 2);
    /* the offset, 32768 * 65536, back */
    const vi offset = vi_set1_32(INT32_MIN);
    *low = vi_add32(vi_add32(vi_madd16(vi_unpacklo16(r[0], r[4]), c0),
                             vi_madd16(vi_unpacklo16(r[1], r[3]), c1)),
                    vi_add32(vi_madd16(vi_unpacklo16(r[2], r[2]), c2), offset));
    *high = vi_add32(vi_add32(vi_madd16(vi_unpackhi16(r[0], r[4]), c0),
                              vi_madd16(vi_unpackhi16(r[1], r[3]), c1)),
                     vi_add32(vi_madd16(vi_unpackhi16(r[2], r[2]), c2), offset));
}

/* (Sa - Sb + round) >> bd from the two unsigned sums. */
INLINE vi difference_16(vi sa, vi sb, vi round, vi mask, __m128i shift)
{
    const vi q = vi_sub32(vi_srl32(sa, shift), vi_srl32(sb, shift));
    const vi r = vi_add32(vi_sub32(vi_and(sa, mask), vi_and(sb, mask)), round);
    return vi_add32(q, vi_sra32(r, shift));
}

/* Horizontal pass of one row (vh, vl mirrored by 2 on each side): the sum
 * of |u| over w columns, modulo 2^32. */
static uint32_t MOTION_ISA(horizontal_row)(const int16_t *vh, const int16_t *vl, unsigned w)
{
    const vi c01 = coef_pair(MOTION_TAP0, MOTION_TAP1);
    const vi c21 = coef_pair(MOTION_TAP2, MOTION_TAP1);
    const vi c0 = coef_pair(MOTION_TAP0, 0);
    const vi round = vi_set1_32(1 << 15);
    const vi lane_column = vi_even_columns();
    vi acc = vi_zero();
    for (unsigned x = 0; x < w; x += STEP) {
        for (unsigned parity = 0; parity < 2; parity++) {
            const ptrdiff_t at = (ptrdiff_t)x + parity;
            /* column at + 2j: taps at -2, -1 | 0, +1 | +2 */
            const vi a = vi_add32(vi_add32(vi_madd16(vi_loadu(vh + at - 2), c01),
                                           vi_madd16(vi_loadu(vh + at), c21)),
                                  vi_madd16(vi_loadu(vh + at + 2), c0));
            const vi b = vi_add32(vi_add32(vi_madd16(vi_loadu(vl + at - 2), c01),
                                           vi_madd16(vi_loadu(vl + at), c21)),
                                  vi_madd16(vi_loadu(vl + at + 2), c0));
            const vi u = vi_srai32(vi_add32(a, vi_srli32(vi_add32(b, round), 8)), 8);
            /* lanes at or past w are computed from the padding and dropped */
            const vm32 valid = vm32_gt(vi_set1_32((int)(w - at)), lane_column);
            acc = vi_add32_where(acc, valid, vi_abs32(u));
        }
    }
    return vi_sum_u32(acc);
}

/* The SAD through rows of differences (differences true: 8-bit samples,
 * or 16-bit ones below 2^14, whose differences and the sums of two fit 16
 * bits and whose filtered sums fit 32) or through each picture's own
 * filtered sums; false (and *exceeds) where a 16-bit sample reaches 2^14
 * on the way through differences. */
INLINE uint64_t sad_pass(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                         ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                         void *row_buffer, bool wide, bool differences, bool *exceeds)
{
    MotionRows rows = motion_row_buffers(row_buffer, w);
    int16_t *const vh = rows.vh, *const vl = rows.vl;
    const vi round = vi_set1_32(1 << (bitdepth - 1));
    const vi low_bits = vi_set1_32((1 << bitdepth) - 1);
    const vi byte = vi_set1_32(255);
    const __m128i shift = vi_count((int)bitdepth);
    uint64_t total = 0;

    for (unsigned y = 0; y < h; y++) {
        const uint8_t *a[5], *b[5];
        const int16_t *d[5];
        motion_rows(a_data, a_stride, y, h, a);
        motion_rows(b_data, b_stride, y, h, b);
        if (differences &&
            motion_difference_rows(&rows, a, b, y, h, w,
                                   wide ? MOTION_ISA(difference_row_16) : MOTION_ISA(difference_row),
                                   d)) {
            *exceeds = true;
            return 0;
        }
        vi nonzero = vi_zero();
        for (unsigned x0 = 0; x0 < w; x0 += STEP) {
            const VecColumns c = vec_columns(x0, w);
            vi low, high;
            if (differences) {
                vertical_8(d, c, round, shift, &low, &high);
            } else {
                vi al, ah, bl, bh;
                filtered_16(a, c, &al, &ah);
                filtered_16(b, c, &bl, &bh);
                low = difference_16(al, bl, round, low_bits, shift);
                high = difference_16(ah, bh, round, low_bits, shift);
            }
            nonzero = vi_or(nonzero, vi_or(low, high));
            vi_store_columns(vh, c, vi_packs32(vi_srai32(low, 8), vi_srai32(high, 8)));
            vi_store_columns(vl, c, vi_packs32(vi_and(low, byte), vi_and(high, byte)));
        }
        /* a row of zeros filters to zeros: nothing to add */
        if (vi_all_zero(nonzero)) continue;
        motion_mirror_row(vh, w);
        motion_mirror_row(vl, w);
        total += MOTION_ISA(horizontal_row)(vh, vl, w);
    }
    return total;
}

INLINE uint64_t sad(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                    ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                    void *row_buffer, bool wide)
{
    if (!VI_MASKED_COLUMNS && w < STEP)
        return (wide ? motion_sad_c_16 : motion_sad_c_8)(a_data, a_stride, b_data, b_stride, w, h,
                                                         bitdepth, row_buffer);
    /* 16-bit samples through differences where the video keeps to its
     * depth (up to 14 bits): each picture row read once, not five times;
     * a sample past 2^14 (words above the depth) starts over the other way. */
    bool exceeds = false;
    if (!wide || bitdepth <= 14) {
        const uint64_t total = sad_pass(a_data, a_stride, b_data, b_stride, w, h, bitdepth,
                                        row_buffer, wide, true, &exceeds);
        if (!exceeds) return total;
    }
    return sad_pass(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer, wide, false,
                    &exceeds);
}

static uint64_t MOTION_ISA(sad_8)(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                                  ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                                  void *row_buffer)
{
    return sad(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer, false);
}

static uint64_t MOTION_ISA(sad_16)(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                                   ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                                   void *row_buffer)
{
    return sad(a_data, a_stride, b_data, b_stride, w, h, bitdepth, row_buffer, true);
}

void MOTION_ISA(motion_dsp_init)(MotionDsp *dsp)
{
    dsp->sad[0] = MOTION_ISA(sad_8);
    dsp->sad[1] = MOTION_ISA(sad_16);
}
