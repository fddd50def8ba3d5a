/*
 * SpEED's covariance sums for AVX2, in the order of the C reference
 * (libvmaf's AVX-512 kernel, speed.h): each 8-lane chain is two 4-lane
 * halves here, so every lane's fused multiply-adds, and the final
 * additions, are the same operations on the same values.
 */
#include <immintrin.h>
#include <stddef.h>

#include "metrics/speed/speed.h"

/* Lanes 0-3 and 4-7 of 8 centred samples. */
static inline void centred(const float *p, __m256d m, __m256d *lo, __m256d *hi)
{
    const __m256 f = _mm256_loadu_ps(p);
    *lo = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(f)), m);
    *hi = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)), m);
}

double speed_cov_sum_avx2(const float *x, const float *y, size_t stride, int w, int h,
                          double mx, double my)
{
    __m256d a0lo = _mm256_setzero_pd(), a0hi = _mm256_setzero_pd();
    __m256d a1lo = _mm256_setzero_pd(), a1hi = _mm256_setzero_pd();
    const __m256d vmx = _mm256_set1_pd(mx), vmy = _mm256_set1_pd(my);
    double tail = 0.0;
    for (int i = 0; i < h; i++) {
        const float *rx = x + (size_t)i * stride, *ry = y + (size_t)i * stride;
        int j = 0;
        __m256d xl, xh, yl, yh;
        for (; j + 15 < w; j += 16) {
            centred(rx + j, vmx, &xl, &xh);
            centred(ry + j, vmy, &yl, &yh);
            a0lo = _mm256_fmadd_pd(xl, yl, a0lo);
            a0hi = _mm256_fmadd_pd(xh, yh, a0hi);
            centred(rx + j + 8, vmx, &xl, &xh);
            centred(ry + j + 8, vmy, &yl, &yh);
            a1lo = _mm256_fmadd_pd(xl, yl, a1lo);
            a1hi = _mm256_fmadd_pd(xh, yh, a1hi);
        }
        if (j + 7 < w) {
            centred(rx + j, vmx, &xl, &xh);
            centred(ry + j, vmy, &yl, &yh);
            a0lo = _mm256_fmadd_pd(xl, yl, a0lo);
            a0hi = _mm256_fmadd_pd(xh, yh, a0hi);
            j += 8;
        }
        for (; j < w; j++) tail += ((double)rx[j] - mx) * ((double)ry[j] - my);
    }
    /* t = a0 + a1 (lanes 0-3 in lo, 4-7 in hi); u[k] = t[k] + t[k + 4];
     * v[k] = u[k] + u[k + 2]; v[0] + v[1]. */
    const __m256d u = _mm256_add_pd(_mm256_add_pd(a0hi, a1hi), _mm256_add_pd(a0lo, a1lo));
    const __m128d v = _mm_add_pd(_mm256_extractf128_pd(u, 1), _mm256_castpd256_pd128(u));
    return (_mm_cvtsd_f64(v) + _mm_cvtsd_f64(_mm_unpackhi_pd(v, v))) + tail;
}

#define SPEED_FN(name) speed_##name##_avx2
#include "metrics/speed/speed_tmpl.c"
