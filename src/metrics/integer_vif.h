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

#if defined(__CUDACC__)
#define VIF_INLINE static inline __host__ __device__
#else
#define VIF_INLINE static inline
#endif

#define VIF_SCALES 4
#define VIF_MAX_TAPS 17
/* The smallest picture side: scale 3 must keep 2 samples. */
#define VIF_MIN_SIDE 16u
/* libvmaf's default (and largest) enhancement gain limit. */
#define VIF_DEFAULT_GAIN_LIMIT 100.0
/* The log table covers the 16-bit mantissas 32768 .. 65535. */
#define VIF_LOG2_BASE 32768u
#define VIF_LOG2_TABLE_SIZE (65536u - VIF_LOG2_BASE)

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

VIF_INLINE int vif_clz32(uint32_t v)
{
#if defined(__CUDA_ARCH__)
    return __clz((int)v);
#else
    return __builtin_clz(v);
#endif
}

VIF_INLINE int vif_clz64(uint64_t v)
{
#if defined(__CUDA_ARCH__)
    return __clzll((long long)v);
#else
    return __builtin_clzll(v);
#endif
}

/* log2(v) * 2048 from the table, for v >= 2^17: the top 16 bits of v
 * index the table, each bit dropped adds an octave. */
VIF_INLINE int32_t vif_log2_32(const uint16_t *table, uint32_t v)
{
    const int k = 16 - vif_clz32(v);
    return table[(v >> k) - VIF_LOG2_BASE] + 2048 * k;
}

VIF_INLINE int32_t vif_log2_64(const uint16_t *table, uint64_t v)
{
    const int k = 48 - vif_clz64(v);
    return table[(v >> k) - VIF_LOG2_BASE] + 2048 * k;
}

/* (int32_t)v as x86's cvttsd2si computes it, which libvmaf's conversion
 * compiles to: INT32_MIN when v is out of range (undefined in C, and
 * saturating on GPUs, hence the explicit test). */
VIF_INLINE int32_t vif_double_to_int32(double v)
{
    return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : INT32_MIN;
}

/* libvmaf's eps of the per-sample statistic, in the Q16 units of sigma. */
#define VIF_EPS (65536 * 1.0e-10)

/*
 * One filtered sample's statistic, added to *sums: mu1, mu2 the filtered
 * means (32 bits), xx, yy, xy the filtered squares and product (64 bits).
 *
 * The doubles: g = sigma12 / (sigma1_sq + eps) (an IEEE division, correctly
 * rounded on every target), sigma2_sq - g * sigma12 and g * g * sigma1_sq
 * (a product then a difference, or two products: no fused multiply-add
 * anywhere, -ffp-contract=off on the host and --fmad=false on the device),
 * each converted back to an integer before it is summed.
 */
VIF_INLINE void vif_pixel(uint32_t mu1, uint32_t mu2, uint64_t xx_sum, uint64_t yy_sum,
                          uint64_t xy_sum, const uint16_t *table, double gain_limit,
                          VifSums *sums)
{
    const int32_t sigma_nsq = 65536 << 1;
    const double eps = VIF_EPS;

    const uint32_t mu1_sq = (uint32_t)(((uint64_t)mu1 * mu1 + 2147483648u) >> 32);
    const uint32_t mu2_sq = (uint32_t)(((uint64_t)mu2 * mu2 + 2147483648u) >> 32);
    const uint32_t mu1_mu2 = (uint32_t)(((uint64_t)mu1 * mu2 + 2147483648u) >> 32);
    const uint32_t xx = (uint32_t)((xx_sum + 32768) >> 16);
    const uint32_t yy = (uint32_t)((yy_sum + 32768) >> 16);
    const uint32_t xy = (uint32_t)((xy_sum + 32768) >> 16);
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

#if !defined(__CUDACC__)

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    /* round(2048 * log2f(VIF_LOG2_BASE + i)), as libvmaf's log_generate() */
    uint16_t log2_table[VIF_LOG2_TABLE_SIZE];
} VifState;

/* 0 if integer VIF can score a width x height picture; otherwise -EINVAL
 * with the reason in error (the message init logs). */
int vif_check_size(unsigned width, unsigned height, char *error, size_t error_size);

/* Fills a table of VIF_LOG2_TABLE_SIZE entries as libvmaf's log_generate(). */
void vif_log2_table_fill(uint16_t *table);

/* The sums of the four scales of a frame, as the C reference computes them
 * (scratch from metric_integer_vif.scratch_alloc; those of scale 0 zero
 * with vif_skip_scale0). */
void vif_frame_sums(const VifState *s, void *scratch, const QualePicture *ref,
                    const QualePicture *dist, VifSums sums[VIF_SCALES]);

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
