/*
 * What integer ADM's AVX2 and AVX-512 kernels (integer_adm_avx2.c,
 * integer_adm_avx512.c) share besides their vectors: the rows of 16-bit
 * values their DWT works on, and the arithmetic behind them.
 */
#ifndef QUALE_SRC_METRICS_X86_INTEGER_ADM_X86_H
#define QUALE_SRC_METRICS_X86_INTEGER_ADM_X86_H

#include <stdint.h>

#include "metrics/integer_adm.h"

#define INLINE static inline __attribute__((always_inline))

/* The db2 analysis taps in Q15, as the pairs vpmaddwd multiplies adjacent
 * 16-bit values by: low pass (15826, 27411), (7345, -4240); high pass
 * (-4240, -7345), (27411, -15826). */
#define ADM_LO01 15826, 27411
#define ADM_LO23 7345, -4240
#define ADM_HI01 -4240, -7345
#define ADM_HI23 27411, -15826

/* Reflects a row of n values (n >= 3) across its ends for the filter taps
 * at 2j - 1 .. 2j + 2, as the C reference's pad_row. */
INLINE void pad_row16(int16_t *row, int n)
{
    row[-1] = row[1];
    row[n] = row[n - 1];
    row[n + 1] = row[n - 2];
}

/* Levels 1..3: the C code sums four int32 taps in 64 bits, c0 t0 + c1 t1 +
 * c2 t2 + c3 t3 + add, then shifts right.  The kernels split every t into
 * 16-bit halves, t = 2^16 hi + lo, and vpmaddwd sums the halves' products in
 * 32 bits exactly:
 *   A = sum of c hi (|A| < 2^31), B = sum of c (lo - 32768) (|B| < 2^31),
 *   sum = 2^16 (A + K) + B, K = 32768 (c0 + c1 + c2 + c3) / 2^16
 * (ADM_K_LO for the low pass, 0 for the high pass).  Then
 *   sum >> 0                  = 2^16 (A + K) + B      (mod 2^32),
 *   (sum + 2^15) >> 16        = A + K + ((B + 2^15) >> 16),
 *   (sum + 2^14) >> 15        = 2 (A + K) + ((B + 2^14) >> 15),
 * whose low 32 bits are the C code's (int32_t) of its int64 result. */
#define ADM_K_LO 23171

/* A row of int32 as two rows of 16-bit halves: the high halves, and the
 * low halves less 32768. */
typedef struct AdmSplitRow {
    int16_t *high, *low;
} AdmSplitRow;

/* The split rows in a scratch row of int32 (ADM_ROW_PAD of slack around w
 * samples): each has 32 values of slack before and 96 after its w. */
INLINE AdmSplitRow split_row(int32_t *scratch, int w)
{
    int16_t *base = (int16_t *)(scratch - ADM_ROW_PAD) + 32;
    return (AdmSplitRow){ base, base + ((w + 96 + 31) & ~31) };
}

INLINE void pad_split(AdmSplitRow r, int n)
{
    pad_row16(r.high, n);
    pad_row16(r.low, n);
}

#endif /* QUALE_SRC_METRICS_X86_INTEGER_ADM_X86_H */
