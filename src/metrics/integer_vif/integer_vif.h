/*
 * Integer VIF's state and the steps the C reference (integer_vif.c) and its
 * GPU twins share.
 *
 * The first part is pure arithmetic that device compilers read too (nvcc
 * includes this file from src/cuda/integer_vif.cu): the filters, the log2
 * of the table, and the statistic of one filtered sample, the only step of
 * integer VIF that computes in double.  Every sample's contribution is a
 * set of integers, so sums of them are exact in any order.
 *
 * The second part (hidden from nvcc) is the host's: the state, the size
 * check, the log table, and the step from the per-scale integer sums to
 * the feature values.
 */
#ifndef QUALE_SRC_METRICS_INTEGER_VIF_H
#define QUALE_SRC_METRICS_INTEGER_VIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/common/host_device.h"

#define VIF_SCALES 4
#define VIF_MAX_TAPS 17
/* The smallest picture side: scale 3 must keep 2 samples. */
#define VIF_MIN_SIDE 16u
/* libvmaf's default (and largest) enhancement gain limit. */
#define VIF_DEFAULT_GAIN_LIMIT 100.0
/* The log table covers the 16-bit mantissas 32768 .. 65535. */
#define VIF_LOG2_BASE 32768u
#define VIF_LOG2_TABLE_SIZE (65536u - VIF_LOG2_BASE)
#define VIF_LOG2_TABLE_SLACK 4u

/* libvmaf's filters, coefficients in 1/65536 (each sums to 65536), as
 * initialiser lists: scale s filters with the VIF_FILTER_WIDTH(s)-tap one,
 * and the decimation to scale s (1..3) low-passes with it too. */
#define VIF_FILTER17 \
    489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935, 489
#define VIF_FILTER9 1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244
#define VIF_FILTER5 3571, 16004, 26386, 16004, 3571
#define VIF_FILTER3 10904, 43728, 10904
#define VIF_FILTER_WIDTH(scale) ((scale) == 0 ? 17u : (scale) == 1 ? 9u : (scale) == 2 ? 5u : 3u)

/* The integer sums of one scale. */
typedef struct VifSums {
    int64_t num_log, den_log;
    int64_t num_non_log, den_non_log;
} VifSums;

HOST_DEVICE_INLINE int vif_clz32(uint32_t v)
{
#if defined(__CUDA_ARCH__)
    return __clz((int)v);
#else
    return __builtin_clz(v);
#endif
}

HOST_DEVICE_INLINE int vif_clz64(uint64_t v)
{
#if defined(__CUDA_ARCH__)
    return __clzll((long long)v);
#else
    return __builtin_clzll(v);
#endif
}

/* log2(v) * 2048 from the table, for v >= 2^17: the top 16 bits of v
 * index the table, each bit dropped adds an octave. */
HOST_DEVICE_INLINE int32_t vif_log2_32(const uint16_t *table, uint32_t v)
{
    const int k = 16 - vif_clz32(v);
    return table[(v >> k) - VIF_LOG2_BASE] + 2048 * k;
}

HOST_DEVICE_INLINE int32_t vif_log2_64(const uint16_t *table, uint64_t v)
{
    const int k = 48 - vif_clz64(v);
    return table[(v >> k) - VIF_LOG2_BASE] + 2048 * k;
}

/* (int32_t)v as x86's cvttsd2si computes it, which libvmaf's conversion
 * compiles to: INT32_MIN when v is out of range (undefined in C, and
 * saturating on GPUs, hence the explicit test). */
HOST_DEVICE_INLINE int32_t vif_double_to_int32(double v)
{
    return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : INT32_MIN;
}

/* libvmaf's eps of the per-sample statistic, in the Q16 units of sigma. */
#define VIF_EPS (65536 * 1.0e-10)

/*
 * One filtered sample's statistic, added to *sums, from its rounded sums:
 * mu1, mu2 the filtered means (32 bits), xx, yy, xy the filtered squares
 * and product shifted back to 32 bits ((sum + 2^15) >> 16, see vif_pixel).
 *
 * The doubles: g = sigma12 / (sigma1_sq + eps) (an IEEE division, correctly
 * rounded on every target), sigma2_sq - g * sigma12 and g * g * sigma1_sq
 * (a product then a difference, or two products: no fused multiply-add
 * anywhere, -ffp-contract=off on the host and --fmad=false on the device),
 * each converted back to an integer before it is summed.
 */
HOST_DEVICE_INLINE void vif_pixel_rounded(uint32_t mu1, uint32_t mu2, uint32_t xx, uint32_t yy,
                                  uint32_t xy, const uint16_t *table, double gain_limit,
                                  VifSums *sums)
{
    const int32_t sigma_nsq = 65536 << 1;
    const double eps = VIF_EPS;

    const uint32_t mu1_sq = (uint32_t)(((uint64_t)mu1 * mu1 + 2147483648u) >> 32);
    const uint32_t mu2_sq = (uint32_t)(((uint64_t)mu2 * mu2 + 2147483648u) >> 32);
    const uint32_t mu1_mu2 = (uint32_t)(((uint64_t)mu1 * mu2 + 2147483648u) >> 32);
    /* Differences of unsigned values read as signed, as libvmaf's. */
    const int32_t sigma1_sq = (int32_t)(xx - mu1_sq);
    const int32_t sigma2_diff = (int32_t)(yy - mu2_sq);
    const int32_t sigma2_sq = sigma2_diff > 0 ? sigma2_diff : 0;
    const int32_t sigma12 = (int32_t)(xy - mu1_mu2);

    if (sigma1_sq < sigma_nsq) {
        sums->num_non_log += sigma2_sq;
        sums->den_non_log++;
        return;
    }
    /* log2(sigma_nsq + sigma1_sq) - log2(sigma_nsq); unsigned, as the sum
     * wraps in libvmaf's int32_t near the top of the range. */
    sums->den_log += vif_log2_32(table, (uint32_t)sigma1_sq + (uint32_t)sigma_nsq) - 2048 * 17;

    if (sigma12 > 0 && sigma2_sq > 0) {
        double g = sigma12 / (sigma1_sq + eps);
        const int32_t sv = vif_double_to_int32(sigma2_sq - g * sigma12);
        const int32_t sv_sq = sv > 0 ? sv : 0;
        g = g < gain_limit ? g : gain_limit;
        /* log2(sv_sq + sigma_nsq + g^2 sigma1_sq) - log2(sv_sq + sigma_nsq) */
        const uint32_t numer1 = (uint32_t)sv_sq + (uint32_t)sigma_nsq;
        const int64_t numer1_tmp = (int64_t)(g * g * sigma1_sq) + numer1;
        sums->num_log += vif_log2_64(table, (uint64_t)numer1_tmp) - vif_log2_64(table, numer1);
    }
}

/*
 * One filtered sample's statistic, added to *sums: mu1, mu2 the filtered
 * means (32 bits), xx, yy, xy the filtered squares and product (64 bits),
 * which keep 32 bits, rounded, as libvmaf's.
 */
HOST_DEVICE_INLINE void vif_pixel(uint32_t mu1, uint32_t mu2, uint64_t xx_sum, uint64_t yy_sum,
                          uint64_t xy_sum, const uint16_t *table, double gain_limit,
                          VifSums *sums)
{
    vif_pixel_rounded(mu1, mu2, (uint32_t)((xx_sum + 32768) >> 16),
                      (uint32_t)((yy_sum + 32768) >> 16), (uint32_t)((xy_sum + 32768) >> 16),
                      table, gain_limit, sums);
}

#if !defined(__CUDACC__)

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the kernels (C here, SIMD in src/metrics/x86/) ---------------------- */

/*
 * Between the vertical and the horizontal pass, a row of the statistics is
 * eight planes of 16-bit values: the two means (16 bits each, as libvmaf
 * keeps them) and the high and low halves of the three 32-bit filtered
 * squares and product.  Each holds value - 32768, so that the SIMD kernels
 * multiply-add them as signed 16-bit numbers; a sum of products with the
 * filters (whose taps sum to 65536) is then the true sum less 2^31, exact
 * modulo 2^32, where every true sum fits.  The low-pass rows of the
 * decimation are planes of the same kind.
 */
enum VifPlane {
    VIF_PLANE_MU1,
    VIF_PLANE_MU2,
    VIF_PLANE_XX_HI,
    VIF_PLANE_XX_LO,
    VIF_PLANE_YY_HI,
    VIF_PLANE_YY_LO,
    VIF_PLANE_XY_HI,
    VIF_PLANE_XY_LO,
    VIF_PLANES,
};

/* What a horizontal kernel may read around the n samples of a plane: the
 * mirror of fw / 2 <= 8 samples on each side, and on the right up to 72
 * more that only feed lanes past n (whose results are dropped). */
#define VIF_PLANE_PAD_LEFT 32
#define VIF_PLANE_PAD_RIGHT 96

static inline int16_t vif_plane_value(uint32_t v)
{
    return (int16_t)((int32_t)(v & 0xffff) - 32768);
}

static inline uint32_t vif_plane_sample(int16_t p)
{
    return (uint32_t)((int32_t)p + 32768);
}

/* Rounding of the vertical pass of the statistics at a scale. */
typedef struct VifShift {
    uint32_t mu_round;
    unsigned mu_shift;
    uint64_t sq_round;
    unsigned sq_shift;
} VifShift;

/* That rounding: at scale 0 the samples' own precision (means to 16 bits,
 * squares to 32), 16.16 after.  The GPU twins take it from here too. */
VifShift vif_shift(unsigned bitdepth, unsigned scale);

/* The filter of fw taps (17, 9, 5, 3), in 1/65536. */
const uint16_t *vif_filter(unsigned fw);

typedef struct VifDsp {
    /* The vertical pass of the statistics at one row, n columns: ref[k]
     * and dis[k] are the rows under tap k (mirrored at the edges); the
     * means keep 16 bits ((sum + mu_round) >> mu_shift, cast), the squares
     * and product 32 ((sum + sq_round) >> sq_shift, cast), into planes.
     * [0] reads uint8_t samples, [1] uint16_t. */
    void (*vertical_stats[2])(const void *const ref[], const void *const dis[], unsigned fw,
                              unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES]);
    /* The horizontal pass of the statistics of one row (planes mirrored
     * by fw / 2 on each side) and the statistic of its n samples
     * (vif_pixel), added to *sums. */
    void (*horizontal_stats)(const int16_t *const planes[VIF_PLANES], unsigned n, unsigned fw,
                             const uint16_t *log2_table, double gain_limit, VifSums *sums);
    /* The vertical pass of the low-pass filter before a decimation, n
     * columns: (sum + 2^(shift - 1)) >> shift, 16 bits kept, into planes. */
    void (*vertical_lowpass[2])(const void *const ref[], const void *const dis[], unsigned fw,
                                unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out);
    /* Its horizontal pass at the even columns (planes mirrored by fw / 2):
     * n_out decimated samples, (sum + 2^15) >> 16. */
    void (*horizontal_lowpass)(const int16_t *ref, const int16_t *dis, unsigned n_out,
                               unsigned fw, uint16_t *ref_out, uint16_t *dis_out);
} VifDsp;

/* The C kernels, then those of every level in cpu_flags (QUALE_CPU_*). */
void vif_dsp_init(VifDsp *dsp, unsigned cpu_flags);

/* The C kernels that the SIMD ones hand rows narrower than a vector. */
void vif_vertical_stats_c_8(const void *const ref[], const void *const dis[], unsigned fw,
                            unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES]);
void vif_vertical_stats_c_16(const void *const ref[], const void *const dis[], unsigned fw,
                             unsigned n, const VifShift *sh, int16_t *const planes[VIF_PLANES]);
void vif_vertical_lowpass_c_8(const void *const ref[], const void *const dis[], unsigned fw,
                              unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out);
void vif_vertical_lowpass_c_16(const void *const ref[], const void *const dis[], unsigned fw,
                               unsigned n, unsigned shift, int16_t *ref_out, int16_t *dis_out);
void vif_horizontal_lowpass_c(const int16_t *ref, const int16_t *dis, unsigned n_out,
                              unsigned fw, uint16_t *ref_out, uint16_t *dis_out);
void vif_dsp_init_avx2(VifDsp *dsp);
void vif_dsp_init_avx512(VifDsp *dsp);
void vif_dsp_init_avx512icl(VifDsp *dsp);

enum VifKey {
    VIF_KEY_SCALE0,
    VIF_KEY_SCALE1,
    VIF_KEY_SCALE2,
    VIF_KEY_SCALE3,
    /* with debug */
    VIF_KEY_SCORE,
    VIF_KEY_NUM,
    VIF_KEY_DEN,
    VIF_KEY_NUM_SCALE0,
    VIF_KEY_DEN_SCALE0,
    VIF_KEY_NUM_SCALE1,
    VIF_KEY_DEN_SCALE1,
    VIF_KEY_NUM_SCALE2,
    VIF_KEY_DEN_SCALE2,
    VIF_KEY_NUM_SCALE3,
    VIF_KEY_DEN_SCALE3,
    VIF_KEY_COUNT,
};

typedef struct VifState {
    /* options */
    bool debug;
    double enhn_gain_limit;
    bool skip_scale0;

    /* set by init */
    unsigned bitdepth, width, height;
    unsigned key[VIF_KEY_COUNT];
    /* round(2048 * log2f(VIF_LOG2_BASE + i)), as libvmaf's log_generate(),
     * and VIF_LOG2_TABLE_SLACK zeros: the SIMD kernels gather 64 bits per
     * log and keep the first 16 */
    uint16_t log2_table[VIF_LOG2_TABLE_SIZE + VIF_LOG2_TABLE_SLACK];
    VifDsp dsp;
} VifState;

/* 0 if integer VIF can score a width x height picture; otherwise -EINVAL
 * with the reason in error (the message init logs). */
int vif_check_size(unsigned width, unsigned height, char *error, size_t error_size);

/* Fills a table of VIF_LOG2_TABLE_SIZE entries as libvmaf's log_generate(). */
void vif_log2_table_fill(uint16_t *table);

/* The sums of the four scales of a frame, as the C reference computes them
 * (scratch from metric_integer_vif.scratch_alloc; those of scale 0 zero
 * with vif_skip_scale0); a scale's rows run in bands through
 * metric_run_tasks() (on this thread alone outside a context). */
int vif_frame_sums(const VifState *s, void *scratch, const MetricFrame *frame,
                   VifSums sums[VIF_SCALES]);

/* The feature values of a frame from the sums of the four scales (those of
 * scale 0 unused with vif_skip_scale0), in key order: returns how many
 * keys the state writes (4, or VIF_KEY_COUNT with debug). */
unsigned vif_values(const VifState *s, const VifSums sums[VIF_SCALES],
                    double value[VIF_KEY_COUNT]);

/* Writes the frame's values from the sums of its scales. */
int vif_write(const VifState *s, FeatureSink *sink, unsigned index,
              const VifSums sums[VIF_SCALES]);

extern const Metric metric_integer_vif;

#ifdef __cplusplus
}
#endif

#endif /* !__CUDACC__ */

#endif /* QUALE_SRC_METRICS_INTEGER_VIF_H */
