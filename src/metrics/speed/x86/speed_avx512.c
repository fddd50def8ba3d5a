/*
 * SpEED's covariance sums for AVX-512 (speed.h: speed_cov_sum(), the C
 * reference, which follows libvmaf's AVX-512 order): two chains of 8
 * double lanes, 16 samples a step, then 8 once into the first chain, then
 * a scalar tail; the chains added, halves, quarters, the pair.
 */
#include <immintrin.h>
#include <stddef.h>

#include "metrics/speed/speed.h"

double speed_cov_sum_avx512(const float *x, const float *y, size_t stride, int w, int h,
                            double mx, double my)
{
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    const __m512d vmx = _mm512_set1_pd(mx), vmy = _mm512_set1_pd(my);
    double tail = 0.0;
    for (int i = 0; i < h; i++) {
        const float *rx = x + (size_t)i * stride, *ry = y + (size_t)i * stride;
        int j = 0;
        for (; j + 15 < w; j += 16) {
            const __m512d cx0 = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(rx + j)), vmx);
            const __m512d cx1 = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(rx + j + 8)), vmx);
            const __m512d cy0 = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(ry + j)), vmy);
            const __m512d cy1 = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(ry + j + 8)), vmy);
            a0 = _mm512_fmadd_pd(cx0, cy0, a0);
            a1 = _mm512_fmadd_pd(cx1, cy1, a1);
        }
        if (j + 7 < w) {
            const __m512d cx = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(rx + j)), vmx);
            const __m512d cy = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(ry + j)), vmy);
            a0 = _mm512_fmadd_pd(cx, cy, a0);
            j += 8;
        }
        for (; j < w; j++) tail += ((double)rx[j] - mx) * ((double)ry[j] - my);
    }
    const __m512d t = _mm512_add_pd(a0, a1);
    const __m256d u = _mm256_add_pd(_mm512_extractf64x4_pd(t, 1), _mm512_castpd512_pd256(t));
    const __m128d v = _mm_add_pd(_mm256_extractf128_pd(u, 1), _mm256_castpd256_pd128(u));
    return (_mm_cvtsd_f64(v) + _mm_cvtsd_f64(_mm_unpackhi_pd(v, v))) + tail;
}

#define SPEED_FN(name) speed_##name##_avx512
#include "metrics/speed/speed_tmpl.c"
