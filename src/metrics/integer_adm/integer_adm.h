/*
 * Integer ADM's state and the steps the C reference and its GPU twins
 * share: the size check, the rounding shifts of every level's sums, the
 * float steps from those integer sums to each level's numerator and
 * denominator, and the frame's keys from the levels.
 *
 * A level's sums (per orientation h, v, d) are
 *   den:    sum over the scored rows of (row sum of the cubed reference
 *           detail + row_add) >> row_shift,
 *   masked: the same over max(|csf(x)| - threshold, 0)^3 (the DLM from the
 *           restored part, AIM from the additive impairment),
 * 64-bit integer sums whose order does not matter: a twin may add its rows
 * in any order and hand the totals to adm_den_finish / adm_masked_finish.
 */
#ifndef QUALE_SRC_METRICS_INTEGER_ADM_H
#define QUALE_SRC_METRICS_INTEGER_ADM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADM_SCALES 4

/* The smallest picture side: every DWT level needs an input of at least 5
 * samples (libvmaf's mirrored filter taps read row -1 below that), and
 * ceil(ceil(ceil(n / 2) / 2) / 2) >= 5 needs n >= 33. */
#define ADM_MIN_SIZE 33

/* Keys: integer_adm2, integer_aim, integer_adm3, integer_adm_scale0..3,
 * then with debug integer_adm, _num, _den and num/den of every scale (the
 * order of metric_integer_adm.keys). */
#define ADM_KEY_MAIN_COUNT 7
#define ADM_KEY_COUNT 18

enum AdmCsfMode {
    ADM_CSF_WATSON97 = 0,
    ADM_CSF_BARTEN = 1,
    ADM_CSF_BARTEN_WATSON_BLEND = 2,
    ADM_CSF_BARTEN_WATSON_BLEND_MAE = 3,
};

/* The band size of a level from the size of its input: (n + 1) / 2. */
static inline int adm_half(int n)
{
    return (n + 1) / 2;
}

/* Regions of a w x h band level: the scored region (the band less 10% on
 * every side, libvmaf's ADM_BORDER_FACTOR) and that region grown by the
 * taps of the 3x3 masking window (one sample before, two after), clipped
 * to the band. */
typedef struct AdmRect {
    int left, top, right, bottom;
} AdmRect;

AdmRect adm_rect_scored(int w, int h);
AdmRect adm_rect_with_taps(int w, int h);

/* The denominator's rounding of a level (w x h bands).  Level 0: the cube
 * is exact, only the row sums shift.  Levels 1..3: per sample
 * ((m * m + sq_add) >> sq) * m + cub_add) >> cub. */
typedef struct AdmDenShifts {
    uint64_t sq_add, cub_add, row_add;
    uint32_t sq, cub, row_shift;
} AdmDenShifts;

void adm_den_shifts(bool level0, int scale, int w, int h, AdmDenShifts *p);

/* The masked sums' rounding of a level, per orientation: m = max(|c| -
 * (threshold << sub), 0), m_sq = (m * m + sq_add) >> sq, term = (m_sq * m
 * + cub_add) >> cub; each row's sum ((int64)(row + row_add)) >> row_shift. */
typedef struct AdmMaskedShifts {
    int64_t sq_add[3], cub_add[3], row_add;
    uint32_t sq[3], cub[3], sub[3], row_shift;
} AdmMaskedShifts;

void adm_masked_shifts(bool level0, int w, int h, AdmMaskedShifts *p);

/* ---- kernels ------------------------------------------------------------------
 *
 * A level is computed row by row (integer_adm.c: level_band), through a
 * table of row kernels (the "dsp") that init() fills with the C reference
 * and then with the widest SIMD kernels the CPU flags allow
 * (adm_dsp_init).  Every kernel of a table gives the same bits as the C
 * one on every input of its domain.
 *
 * Rows are int32; at level 0 their values are int16 (libvmaf's int16
 * bands), at levels 1..3 any int32.  Orientation arrays are h, v, d.  Every
 * row buffer has ADM_ROW_PAD int32 of slack before and after the samples
 * of a band (w wide); kernels may read the slack of any row and write the
 * slack of their scratch rows (lo, hi, col), which hold nothing for the
 * caller.  Level-0 bands are at least 17 x 17 (a picture of ADM_MIN_SIZE),
 * bands of levels 1..3 at least 5 x 5. */
#define ADM_ROW_PAD 64

/* One row of level 0 from the picture rows src[0..3] (rows 2i - 1 .. 2i + 2,
 * mirrored; w samples of uint8_t for dwt_row0_8, of uint16_t up to 16 bits
 * for dwt_row0_16) into out[a, h, v, d] ((w + 1) / 2 samples each); without
 * details only out[0], the approximation. */
typedef void (*AdmDwtRow0Fn)(const uint8_t *const src[4], int bitdepth, int w, bool details,
                             int32_t *const out[4], int32_t *lo, int32_t *hi);
/* One row of levels 1..3 (scale) from rows of the previous approximation
 * (w wide). */
typedef void (*AdmDwtRow123Fn)(const int32_t *const src[4], int w, int scale, bool details,
                               int32_t *const out[4], int32_t *lo, int32_t *hi);
/* Splits a row of distorted details (columns j0 .. j1 - 1) into the
 * restored part (rst) and the additive impairment (add).  div_lookup:
 * adm_div_lookup_init's table; gain: the enhancement gain limit. */
typedef void (*AdmDecoupleRowFn)(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                                 const int32_t *const ref[3], const int32_t *const dis[3],
                                 int32_t *const rst[3], int32_t *const add[3], int j0, int j1);
/* CSF-weights a row of details (level 0: Q21, Q21, Q23 weights; levels
 * 1..3: Q32) and writes the row's masking terms around and centre. */
typedef void (*AdmMaskingRowFn)(const uint32_t csf[3], const int32_t *const src[3],
                                int32_t *around, int32_t *centre, int j0, int j1);
/* The masked cube sums of a row of details (columns left .. right - 1 of a
 * w-wide band), before the row's rounding shift, against the masking rows
 * around[above, at, below] and centre. */
typedef void (*AdmMaskedRowFn)(const uint32_t csf[3], const AdmMaskedShifts *p,
                               const int32_t *const src[3], const int32_t *const around[3],
                               const int32_t *centre, int w, int left, int right, uint32_t *col,
                               uint64_t sums[3]);
/* The denominator's cube sums of a row of reference details, before the
 * row's rounding shift. */
typedef void (*AdmDenRowFn)(const AdmDenShifts *p, const int32_t *const ref[3], int left,
                            int right, uint64_t sums[3]);

typedef struct AdmDsp {
    AdmDwtRow0Fn dwt_row0_8, dwt_row0_16;
    AdmDwtRow123Fn dwt_row123;
    AdmDecoupleRowFn decouple_row0, decouple_row123;
    AdmMaskingRowFn masking_row0, masking_row123;
    AdmMaskedRowFn masked_row0, masked_row123;
    AdmDenRowFn den_row0, den_row123;
} AdmDsp;

/* The C kernels, then those of every instruction set cpu_flags allows. */
void adm_dsp_init(AdmDsp *dsp, unsigned cpu_flags);

/* The SIMD kernels' overrides (src/metrics/x86). */
void adm_dsp_init_avx2(AdmDsp *dsp);
void adm_dsp_init_avx512(AdmDsp *dsp);

/* 2^30 / i for i in -32768..32768 (0 at i = 0), at [32768 + i]. */
#define ADM_DIV_LOOKUP_SIZE 65537
void adm_div_lookup_init(int32_t table[ADM_DIV_LOOKUP_SIZE]);

typedef struct AdmState {
    /* options */
    bool debug;
    double csf_scale;
    double csf_diag_scale;
    double dlm_weight;
    double enhn_gain_limit;
    double norm_view_dist;
    int ref_display_height;
    int csf_mode;
    double noise_weight;
    bool skip_aim;
    bool skip_scale0;
    double min_val;

    /* set by init */
    int width, height, bitdepth;
    float cos_1deg_sq;
    float csf[ADM_SCALES][3];            /* CSF weight per scale, orientation h, v, d */
    uint16_t csf_q0[3];                  /* scale 0: Q21 (h, v), Q23 (d) */
    uint32_t csf_q32[ADM_SCALES][3];     /* scales 1..3: Q32 */
    unsigned key[ADM_KEY_COUNT];
    AdmDsp dsp;
    int32_t div_lookup[ADM_DIV_LOOKUP_SIZE]; /* adm_div_lookup_init */
} AdmState;

/* Rejects a luma plane too small for four DWT levels: -EINVAL with the
 * message in error, 0 otherwise. */
int adm_check_size(unsigned width, unsigned height, char *error, size_t error_size);

/* The level's denominator (three orientations and their noise floors)
 * from its three sums. */
float adm_den_finish(const AdmState *s, bool level0, int scale, int w, int h,
                     const AdmDenShifts *p, const uint64_t acc[3]);

/* The level's DLM numerator (noise_weight: the option) or AIM numerator
 * (noise_weight 0) from its three sums. */
float adm_masked_finish(const AdmState *s, bool level0, int scale, int w, int h,
                        const AdmMaskedShifts *p, double noise_weight, const uint64_t acc[3]);

/* A frame's integer sums: per level (scale) ADM_LEVEL_SUMS of them, the
 * denominator's h, v, d, the DLM numerator's h, v, d and AIM's h, v, d
 * (0 where a level or AIM is skipped). */
#define ADM_LEVEL_SUMS 9
#define ADM_SUMS (ADM_SCALES * ADM_LEVEL_SUMS)

/* Every scale's numerator, AIM numerator and denominator from the sums. */
void adm_scores(const AdmState *s, const uint64_t sums[ADM_SUMS], float num[ADM_SCALES],
                float aim[ADM_SCALES], float den[ADM_SCALES]);

/* The C reference's sums of a frame (what extract() scores), for tests. */
int adm_reference_sums(const AdmState *s, const QualePicture *ref, const QualePicture *dist,
                       uint64_t sums[ADM_SUMS]);

/* The same, every level cut into bands of band_rows rows (the last one
 * shorter; 0: one band), for tests: any band size gives the same sums. */
int adm_reference_sums_banded(const AdmState *s, const QualePicture *ref,
                              const QualePicture *dist, unsigned band_rows,
                              uint64_t sums[ADM_SUMS]);

/* The frame's key values in key order (the debug ones only meaningful
 * with debug) from every scale's numerator, AIM numerator and denominator
 * (with adm_skip_scale0 scale 0 is num 0, aim 0, den 1e-10f). */
void adm_frame_values(const AdmState *s, const float num[ADM_SCALES], const float aim[ADM_SCALES],
                      const float den[ADM_SCALES], double values[ADM_KEY_COUNT]);

/* adm_frame_values() written to the sink. */
int adm_write_frame(const AdmState *s, FeatureSink *sink, unsigned frame,
                    const float num[ADM_SCALES], const float aim[ADM_SCALES],
                    const float den[ADM_SCALES]);

extern const Metric metric_integer_adm;

#ifdef __cplusplus
}
#endif

#endif /* QUALE_SRC_METRICS_INTEGER_ADM_H */
