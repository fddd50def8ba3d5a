/*
 * SpEED's eigenvalues of the covariance K: the scalar steps of GSL's
 * symmetric QR iteration as libvmaf's float port computes them, written
 * once for the C reference (speed.c) and the CUDA twin (cuda/speed.cu),
 * which run them on one thread.  The Vulkan twin has its copy in GLSL
 * (vulkan/speed_stats.comp), held to this one bit for bit by
 * tests/test_speed_vulkan.c.  Every operation as libvmaf orders it: float
 * arithmetic, square roots in double rounded to float; built without
 * fused multiply-adds (-ffp-contract=off, nvcc --fmad=false).
 */
#ifndef QUALE_SRC_METRICS_SPEED_SPEED_QR_H
#define QUALE_SRC_METRICS_SPEED_SPEED_QR_H

#include <math.h>

#include "metrics/common/host_device.h"

#define SPEED_EIGENVALUE_EPS 1e-6 /* libvmaf's, a double */
#define SPEED_EIGENVALUE_MAX_ITERS 500

HOST_DEVICE_INLINE int speed_sign(float x)
{
    return x >= 0 ? 1 : -1;
}

/* sqrt(x x + y y): float squares and sum, a double square root kept as a
 * float (= sqrtf, a correctly rounded root either way). */
HOST_DEVICE_INLINE float speed_hypot(float x, float y)
{
    return (float)sqrt((double)(x * x + y * y));
}

/* Zeroes the subdiagonal entries negligible beside their diagonal. */
HOST_DEVICE_INLINE void speed_chop(float *d, float *sd, int n)
{
    for (int i = 0; i < n - 1; i++)
        if (fabsf(sd[i]) < SPEED_EIGENVALUE_EPS * (fabsf(d[i]) + fabsf(d[i + 1]))) sd[i] = 0.0f;
}

/* The eigenvalue of the trailing 2 x 2 block nearer its last entry. */
HOST_DEVICE_INLINE float speed_trailing_eigenvalue(const float *d, const float *sd, int n)
{
    const float ta = d[n - 2], tb = d[n - 1], tab = sd[n - 2];
    const float dt = (float)((ta - tb) / 2.0);
    if (dt > 0) return tb - tab * (tab / (dt + speed_hypot(dt, tab)));
    if (dt == 0) return tb - fabsf(tab);
    return tb + tab * (tab / (-dt + speed_hypot(dt, tab)));
}

HOST_DEVICE_INLINE void speed_givens(float a, float b, float *c, float *s)
{
    if (b == 0) {
        *c = 1;
        *s = 0;
    } else if (fabsf(b) > fabsf(a)) {
        const float t = -a / b;
        const float s1 = (float)(1.0 / sqrt((double)(1 + t * t)));
        *s = s1;
        *c = s1 * t;
    } else {
        const float t = -b / a;
        const float c1 = (float)(1.0 / sqrt((double)(1 + t * t)));
        *c = c1;
        *s = c1 * t;
    }
}

/* One implicit symmetric QR step (GSL's qrstep) on an unreduced block of
 * diagonal d and subdiagonal sd. */
HOST_DEVICE_INLINE void speed_qr_step(float *d, float *sd, int n)
{
    float mu = speed_trailing_eigenvalue(d, sd, n);
    if (SPEED_EIGENVALUE_EPS * fabsf(mu) > fabsf(d[0]) + fabsf(sd[0])) mu = 0;
    float x = d[0] - mu, z = sd[0];
    float bk = 0, zk = 0;
    float ap = d[0], bp = sd[0], aq = d[1];
    if (n == 2) {
        float c, s;
        speed_givens(x, z, &c, &s);
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }
    float bq = sd[1];
    for (int k = 0; k < n - 1; k++) {
        float c, s;
        speed_givens(x, z, &c, &s);
        const float bk1 = c * bk - s * zk;
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float zp1 = -s * bq;
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        const float bq1 = c * bq;
        const float ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if (k < n - 2) aq = d[k + 2];
        if (k < n - 3) bq = sd[k + 2];
        d[k] = ak;
        if (k > 0) sd[k - 1] = bk1;
        if (k < n - 2) sd[k + 1] = bp;
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

/* The eigenvalues of a symmetric tridiagonal matrix (GSL's symm after its
 * tridiagonalisation): left on d, in the order the iteration leaves them. */
HOST_DEVICE_INLINE void speed_qr_iterate(float *d, float *sd, int n)
{
    speed_chop(d, sd, n);
    int b = n - 1, iter = 0;
    while (b > 0 && iter < SPEED_EIGENVALUE_MAX_ITERS) {
        if (sd[b - 1] == 0.0f) {
            b--;
            continue;
        }
        int a = b - 1;
        while (a > 0 && sd[a - 1] != 0.0f) a--;
        speed_qr_step(d + a, sd + a, b - a + 1);
        speed_chop(d + a, sd + a, b - a + 1);
        iter++;
    }
}

#endif /* QUALE_SRC_METRICS_SPEED_SPEED_QR_H */
