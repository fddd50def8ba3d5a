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

/* ---- kernels ------------------------------------------------------------------
 *
 * The steps of a level, as a table of functions (the "dsp") that init()
 * fills with the C reference and then with the widest SIMD kernels the
 * CPU flags allow (adm_dsp_init).  Every kernel of a table gives the same
 * bits as the C one on every input of its domain.
 *
 * Band planes are int32 with one stride (in samples) for all of them; at
 * level 0 their values are int16 (libvmaf's int16 bands), at levels 1..3
 * any int32.  Orientation arrays are h, v, d.  Scratch rows (lo, hi of
 * the DWT, col of the masked sums) have ADM_ROW_PAD int32 of slack before
 * and after the samples a level uses; kernels may use them as they like,
 * so only the band planes and the sums are outputs. */
#define ADM_ROW_PAD 64

/* Level 0 from the luma samples (uint8_t for dwt_level0_8, uint16_t up to
 * 16 bits for dwt_level0_16; src_stride in bytes) into band[a, h, v, d];
 * without details only band[0], the approximation. */
typedef void (*AdmDwtLevel0Fn)(const uint8_t *src, ptrdiff_t src_stride, int bitdepth, int w,
                               int h, bool details, int32_t *const band[4], ptrdiff_t stride,
                               int32_t *lo, int32_t *hi);
/* Levels 1..3 (scale) from the previous approximation (w x h), which may be
 * band[0] itself. */
typedef void (*AdmDwtLevel123Fn)(const int32_t *src, int w, int h, int scale,
                                 int32_t *const band[4], ptrdiff_t stride, int32_t *lo,
                                 int32_t *hi);
/* Splits the distorted details of a w x h level (over its taps region)
 * into the restored part (rst) and the additive impairment, written over
 * dis.  div_lookup: adm_div_lookup_init's table; gain: the enhancement gain
 * limit. */
typedef void (*AdmDecoupleFn)(const int32_t *div_lookup, float cos_1deg_sq, double gain,
                              const int32_t *const ref[3], int32_t *const dis[3],
                              int32_t *const rst[3], ptrdiff_t stride, int w, int h);
/* CSF-weights three detail planes (level 0: Q21, Q21, Q23 weights; levels
 * 1..3: Q32) and writes the masking planes around and centre. */
typedef void (*AdmMaskingFn)(const uint32_t csf[3], const int32_t *const src[3],
                             ptrdiff_t stride, int w, int h, int32_t *around, int32_t *centre);
/* The masked cube sums of three detail planes against the masking planes. */
typedef void (*AdmMaskedSumFn)(const uint32_t csf[3], const int32_t *const src[3],
                               const int32_t *around, const int32_t *centre, ptrdiff_t stride,
                               int w, int h, uint32_t *col, uint64_t acc[3]);
/* The denominator's cube sums of the reference details (scale: 1..3, or 0
 * for level 0). */
typedef void (*AdmDenFn)(int scale, const int32_t *const ref[3], ptrdiff_t stride, int w,
                         int h, uint64_t acc[3]);

typedef struct AdmDsp {
    AdmDwtLevel0Fn dwt_level0_8, dwt_level0_16;
    AdmDwtLevel123Fn dwt_level123;
    AdmDecoupleFn decouple_level0, decouple_level123;
    AdmMaskingFn masking_level0, masking_level123;
    AdmMaskedSumFn masked_sum_level0, masked_sum_level123;
    AdmDenFn den_level0, den_level123;
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

/* The level's denominator (three orientations and their noise floors)
 * from its three sums. */
float adm_den_finish(const AdmState *s, bool level0, int scale, int w, int h,
                     const AdmDenShifts *p, const uint64_t acc[3]);

/* The masked sums' rounding of a level, per orientation: m = max(|c| -
 * (threshold << sub), 0), m_sq = (m * m + sq_add) >> sq, term = (m_sq * m
 * + cub_add) >> cub; each row's sum ((int64)(row + row_add)) >> row_shift. */
typedef struct AdmMaskedShifts {
    int64_t sq_add[3], cub_add[3], row_add;
    uint32_t sq[3], cub[3], sub[3], row_shift;
} AdmMaskedShifts;

void adm_masked_shifts(bool level0, int w, int h, AdmMaskedShifts *p);

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
