/*
 * SpEED's CUDA twin (speed_chroma and speed_temporal): every step of
 * src/metrics/speed.c up to each picture's per-block entropies and
 * variances, on the device; the host reads those back and scores them
 * through the C reference's own speed_pair_score() and key writers
 * (speed_cuda.c).
 *
 * A frame's pictures (speed_chroma: U and V of both videos; speed_temporal:
 * the two difference pictures) are the z index of every launch:
 *   1. speed_convert and speed_prescale, with a prescale only: the samples
 *      (or the difference of two lumas) as floats, resized as vif_tools.c
 *      resizes them (nearest and bilinear: the others run on the CPU);
 *   2. speed_blur: each sample of the operating picture, the blur of
 *      speed.c's filter_decimate() at (16 y, 16 x): a float sum over the
 *      horizontal taps of weight * (a float sum over the vertical taps of
 *      weight * sample), both in tap order from 0, libvmaf's mirror;
 *   3. speed_local_mean: less the local mean, the same sums at every sample;
 *   4. speed_means: the 25 neighbourhood offsets' means, each a float sum
 *      in row order (a thread each: the order is the value);
 *   5. speed_cov: K, a block per entry: 16 threads run the 16 lanes of
 *      libvmaf's two AVX-512 chains of fused multiply-adds (each lane's
 *      samples in the C reference's order), a 17th its scalar tail, and
 *      one thread adds them as speed_cov_sum_c() does;
 *   6. speed_stats: a block per picture: K's eigenvalues (the Householder
 *      steps with their parallel loops split over the threads, the
 *      implicit QR on one), K^-1 Y by the Householder QR of solve() (each
 *      matrix entry's sum on one thread, in the C's order), the variances
 *      and entropies of its blocks, and whether K was singular.
 * Every float and double operation is the C reference's, in its order
 * (the fatbin is built with --fmad=false; fma() where the C calls fma()),
 * so the results are the C's bits but for log2(): the device's double log2
 * is within an ulp of the C library's, which can move an entropy by an ulp
 * of float and the score by about 1e-7 (the tolerance table's 5e-5 holds).
 *
 * The element code is __host__ __device__, so that
 * tests/test_speed_cuda_host.cpp runs it on the CPU.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_host_compat.h"
#include "speed_args.h"
#include "metrics/speed/speed.h"
#include "metrics/speed/speed_qr.h"
#include "metrics/common/vif_tools.h"

#define SPEED_FN __host__ __device__ __forceinline__
#ifdef __CUDACC__
#define SPEED_SYNC() __syncthreads()
#else
#define SPEED_SYNC() \
    do {             \
    } while (0)
#endif

/* ---- elements ------------------------------------------------------------------ */

SPEED_FN int speed_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

/* Sample x of row y of a plane, as picture_float_row() converts it. */
SPEED_FN float speed_sample(const uint8_t *plane, unsigned long long stride, int x, int y,
                            int hbd, float scaler)
{
    const uint8_t *row = plane + (size_t)y * stride;
    if (hbd) return (float)((const uint16_t *)row)[x] / scaler + -128.0f;
    return (float)row[x] + -128.0f;
}

/* Sample (x, y) of picture z before the prescale: the plane's, or the
 * difference of the two lumas (speed_temporal). */
SPEED_FN float speed_source(const SpeedArgs *a, int z, int x, int y)
{
    float v = speed_sample(a->src[z], a->stride[z], x, y, a->hbd, a->scaler);
    if (a->sub[z]) v -= speed_sample(a->sub[z], a->stride[z], x, y, a->hbd, a->scaler);
    return v;
}

SPEED_FN float speed_prescale_mirror(float i, float left, float right)
{
    return i < left ? -i : i > right ? 2 * right - i : i;
}

/* Sample (x, y) of the resized picture from the converted one (w x h,
 * packed), as vif_tools.c's nearest and bilinear scalers compute it. */
SPEED_FN float speed_prescaled(const SpeedSetup *s, const float *src, int x, int y)
{
    const SpeedGeometry *g = &s->g;
    const int sw = g->w, sh = g->h, dw = g->scaled_w, dh = g->scaled_h;
    const float ratio_x = (float)sw / dw, ratio_y = (float)sh / dh;
    if (s->method == VIF_PRESCALE_NEAREST)
        return src[(size_t)(int)(y * ratio_y) * sw + (int)(x * ratio_x)];
    const float yy = (y + 0.5) * ratio_y - 0.5;
    const int y1 = (int)speed_prescale_mirror((float)floor(yy), 0, (float)(sh - 1));
    const int y2 = (int)speed_prescale_mirror((float)ceil(yy), 0, (float)(sh - 1));
    const float dy = yy - y1;
    const float xx = (x + 0.5) * ratio_x - 0.5;
    const int x1 = (int)speed_prescale_mirror((float)floor(xx), 0, (float)(sw - 1));
    const int x2 = (int)speed_prescale_mirror((float)ceil(xx), 0, (float)(sw - 1));
    const float dx = xx - x1;
    const float *r1 = src + (size_t)y1 * sw, *r2 = src + (size_t)y2 * sw;
    return (1 - dy) * (1 - dx) * r1[x1] + (1 - dy) * dx * r1[x2] + dy * (1 - dx) * r2[x1] +
           dy * dx * r2[x2];
}

/* A picture's work area, in floats from its start. */
struct SpeedLayout {
    size_t src, scaled, op, f, means, cov, y, x, rhs, total;
};

SPEED_FN SpeedLayout speed_layout(const SpeedGeometry *g)
{
    SpeedLayout l;
    size_t at = 0;
    const size_t blocks = (size_t)g->blocks, e = SPEED_ELEMENTS;
    l.src = at;
    at += g->prescale ? (size_t)g->w * g->h : 0;
    l.scaled = at;
    at += g->prescale ? (size_t)g->scaled_w * g->scaled_h : 0;
    l.op = at;
    at += (size_t)g->op_w * g->op_h;
    l.f = at;
    at += (size_t)g->op_w * g->op_h;
    l.means = at;
    at += 32;
    l.cov = at;
    at += e * e;
    l.y = at;
    at += e * blocks;
    l.x = at;
    at += e * blocks;
    l.rhs = at;
    at += e * blocks;
    l.total = (at + 31) / 32 * 32;
    return l;
}

/* A sample of the blurred picture's source: the resized picture, or the
 * samples themselves. */
SPEED_FN float speed_blur_input(const SpeedArgs *a, const float *work, const SpeedLayout *l,
                                int z, int x, int y)
{
    const SpeedGeometry *g = &a->setup->g;
    if (g->prescale) return work[l->scaled + (size_t)y * g->scaled_w + x];
    return speed_source(a, z, x, y);
}

/* Sample (x, y) of the operating picture: the blur at (16 x, 16 y). */
SPEED_FN float speed_blur_element(const SpeedArgs *a, const float *work, const SpeedLayout *l,
                                  int z, int x, int y)
{
    const SpeedSetup *s = a->setup;
    const int w = s->g.scaled_w, h = s->g.scaled_h, taps = s->antialias_taps, r = taps / 2;
    const int cy = y << SPEED_SCALES, cx = x << SPEED_SCALES;
    float acc = 0.0f;
    for (int kh = 0; kh < taps; kh++) {
        const int sx = speed_mirror(cx - r + kh, w);
        float column = 0.0f;
        for (int kv = 0; kv < taps; kv++)
            column += s->antialias[kv] * speed_blur_input(a, work, l, z, sx,
                                                          speed_mirror(cy - r + kv, h));
        acc += s->antialias[kh] * column;
    }
    return acc;
}

/* Sample (x, y) of the operating picture less its local mean. */
SPEED_FN float speed_mean_element(const SpeedSetup *s, const float *op, int x, int y)
{
    const int w = s->g.op_w, h = s->g.op_h, taps = s->mean_taps, r = taps / 2;
    float mean = 0.0f;
    for (int kh = 0; kh < taps; kh++) {
        const int sx = speed_mirror(x - r + kh, w);
        float column = 0.0f;
        for (int kv = 0; kv < taps; kv++)
            column += s->mean[kv] * op[(size_t)speed_mirror(y - r + kv, h) * w + sx];
        mean += s->mean[kh] * column;
    }
    return op[(size_t)y * w + x] - mean;
}

/* The mean of neighbourhood offset o's samples (covariance_matrix()). */
SPEED_FN float speed_offset_mean(const SpeedGeometry *g, const float *f, int o)
{
    const float *p = f + (size_t)(o / SPEED_BLOCK) * g->op_w + o % SPEED_BLOCK;
    float sum = 0;
    for (int i = 0; i < g->sub_h; i++)
        for (int j = 0; j < g->sub_w; j++) sum += p[(size_t)i * g->op_w + j];
    return sum / (float)((size_t)g->sub_w * (size_t)g->sub_h);
}

/* Offsets a >= b of K's entry q (row by row of the lower triangle). */
SPEED_FN void speed_pair(int q, int *a, int *b)
{
    int row = 0;
    while ((row + 1) * (row + 2) / 2 <= q) row++;
    *a = row;
    *b = q - row * (row + 1) / 2;
}

/* One of the 17 sums of speed_cov_sum_c(): lanes 0-7 of the first chain
 * (lane < 8), 0-7 of the second (8 + lane), or the scalar tail (16). */
SPEED_FN double speed_cov_lane(const SpeedGeometry *g, const float *f, int a, int b,
                               double mx, double my, int lane)
{
    const float *x = f + (size_t)(a / SPEED_BLOCK) * g->op_w + a % SPEED_BLOCK;
    const float *y = f + (size_t)(b / SPEED_BLOCK) * g->op_w + b % SPEED_BLOCK;
    const int w = g->sub_w;
    double acc = 0.0;
    for (int i = 0; i < g->sub_h; i++) {
        const float *rx = x + (size_t)i * g->op_w, *ry = y + (size_t)i * g->op_w;
        int j = 0;
        for (; j + 15 < w; j += 16) {
            if (lane < 16) {
                const int e = j + lane;
                acc = fma((double)rx[e] - mx, (double)ry[e] - my, acc);
            }
        }
        if (j + 7 < w) {
            if (lane < 8) {
                const int e = j + lane;
                acc = fma((double)rx[e] - mx, (double)ry[e] - my, acc);
            }
            j += 8;
        }
        if (lane == 16)
            for (; j < w; j++) acc += ((double)rx[j] - mx) * ((double)ry[j] - my);
    }
    return acc;
}

/* The sum of the 17: the chains added lane by lane, then halves, quarters,
 * the pair, then the tail. */
SPEED_FN double speed_cov_combine(const double *lanes)
{
    double t[8], u[4], v[2];
    for (int l = 0; l < 8; l++) t[l] = lanes[l] + lanes[8 + l];
    for (int k = 0; k < 4; k++) u[k] = t[k] + t[k + 4];
    for (int k = 0; k < 2; k++) v[k] = u[k] + u[k + 2];
    return (v[0] + v[1]) + lanes[16];
}

/* ---- the statistics of a picture: K's eigenvalues, K^-1 Y, S, E ---------------- */

/* Shared memory of speed_stats (and its host test's). */
struct SpeedShared {
    float A[SPEED_ELEMENTS * SPEED_ELEMENTS];
    float Z[SPEED_ELEMENTS * SPEED_ELEMENTS], M[SPEED_ELEMENTS * SPEED_ELEMENTS];
    float H[SPEED_ELEMENTS * SPEED_ELEMENTS], T[SPEED_ELEMENTS * SPEED_ELEMENTS];
    float R[SPEED_ELEMENTS * SPEED_ELEMENTS];
    float d[SPEED_ELEMENTS], sd[SPEED_ELEMENTS], v[SPEED_ELEMENTS], xv[SPEED_ELEMENTS];
    float eig[SPEED_ELEMENTS];
    float tau, alpha2;
    int singular;
};

/* out = A B for 25 x 25 A, B of c columns, entries split over the
 * threads, each a float sum over m in order from 0 (speed_tmpl.c). */
SPEED_FN void speed_matrix_mul(float *out, const float *A, const float *B, int c, int tid,
                               int threads)
{
    const int n = SPEED_ELEMENTS;
    for (int e = tid; e < n * c; e += threads) {
        const int i = e / c, j = e % c;
        float acc = 0;
        for (int k = 0; k < n; k++) acc += A[i * n + k] * B[(size_t)k * c + j];
        out[e] = acc;
    }
}

/* Householder tridiagonalisation of A in place (tridiagonalise() of
 * speed.c), the reflections' scalars through sh. */
SPEED_FN void speed_tridiagonalise(float *A, SpeedShared *sh, int tid, int threads)
{
    const int n = SPEED_ELEMENTS;
    for (int i = 0; i < n - 2; i++) {
        if (tid == 0) {
            float tau = 0.0f, norm = 0;
            for (int r = i + 2; r < n; r++) norm += A[r * n + i] * A[r * n + i];
            const float xnorm = (float)sqrt((double)norm);
            if (xnorm != 0.0f) {
                const float alpha = A[(i + 1) * n + i];
                const float beta = -speed_sign(alpha) * speed_hypot(alpha, xnorm);
                tau = (beta - alpha) / beta;
                const float sv = alpha - beta;
                if (sv != 0.0f) {
                    for (int r = i + 1; r < n; r++) A[r * n + i] /= sv;
                    A[(i + 1) * n + i] = beta;
                }
            }
            sh->tau = tau;
            for (int r = i + 1; r < n; r++) sh->v[r] = A[r * n + i];
            sh->v[i + 1] = 1.0f;
        }
        SPEED_SYNC();
        const float tau = sh->tau;
        SPEED_SYNC(); /* read by all before thread 0 may write the next one */
        if (tau == 0.0f) continue;
        for (int r = i + 1 + tid; r < n; r += threads) {
            float acc = 0.0f;
            for (int c = i + 1; c < n; c++) acc += tau * A[r * n + c] * sh->v[c];
            sh->xv[r] = acc;
        }
        SPEED_SYNC();
        if (tid == 0) {
            float dot = 0;
            for (int r = i + 1; r < n; r++) dot += sh->xv[r] * sh->v[r];
            sh->alpha2 = (float)(-0.5 * tau * dot);
        }
        SPEED_SYNC();
        for (int r = i + 1 + tid; r < n; r += threads) sh->xv[r] += sh->alpha2 * sh->v[r];
        SPEED_SYNC();
        const int m = n - i - 1;
        for (int e = tid; e < m * m; e += threads) {
            const int r = i + 1 + e / m, c = i + 1 + e % m;
            A[r * n + c] -= sh->xv[r] * sh->v[c] + sh->v[r] * sh->xv[c];
        }
        SPEED_SYNC();
    }
}

/* K X = Y by solve() of speed.c: M = H_23 ... H_0, R = M K, R X = M Y;
 * sh->singular set where R has a pivot too small. */
SPEED_FN void speed_solve(const float *K, const float *Y, float *X, float *RHS, int blocks,
                          SpeedShared *sh, int tid, int threads)
{
    const int n = SPEED_ELEMENTS;
    if (!sh->singular) {
        for (int e = tid; e < n * n; e += threads) {
            sh->Z[e] = K[e];
            sh->M[e] = (e / n == e % n) ? 1.0f : 0.0f;
        }
        SPEED_SYNC();
        for (int k = 0; k < n - 1; k++) {
            for (int e = tid; e < n * n; e += threads) {
                const int i = e / n, j = e % n;
                if (i < k || j < k) sh->Z[e] = i == j ? 1.0f : 0.0f;
            }
            SPEED_SYNC();
            if (tid == 0) {
                float *v = sh->v;
                for (int i = 0; i < n; i++) v[i] = sh->Z[i * n + k];
                float sum = 0;
                for (int i = 0; i < n; i++) sum += v[i] * v[i];
                v[k] += speed_sign(K[k * n + k]) * (float)sqrt((double)sum);
                sum = 0;
                for (int i = 0; i < n; i++) sum += v[i] * v[i];
                const float norm2 = (float)sqrt((double)sum);
                for (int i = 0; i < n; i++) v[i] = v[i] / norm2;
            }
            SPEED_SYNC();
            for (int e = tid; e < n * n; e += threads) {
                const int i = e / n, j = e % n;
                float h = -2 * sh->v[i] * sh->v[j];
                if (i == j) h += 1;
                sh->H[e] = h;
            }
            SPEED_SYNC();
            speed_matrix_mul(sh->T, sh->H, sh->Z, n, tid, threads);
            SPEED_SYNC();
            for (int e = tid; e < n * n; e += threads) sh->Z[e] = sh->T[e];
            SPEED_SYNC();
            speed_matrix_mul(sh->T, sh->H, sh->M, n, tid, threads);
            SPEED_SYNC();
            for (int e = tid; e < n * n; e += threads) sh->M[e] = sh->T[e];
            SPEED_SYNC();
        }
        speed_matrix_mul(sh->R, sh->M, K, n, tid, threads);
        speed_matrix_mul(RHS, sh->M, Y, blocks, tid, threads);
        SPEED_SYNC();
        for (int i = n - 1; i >= 0; i--) {
            const float den = sh->R[i * n + i];
            if (fabsf(den) < SPEED_EIGENVALUE_EPS) {
                if (tid == 0) sh->singular = 1;
                break; /* the same decision in every thread */
            }
            for (int j = tid; j < blocks; j += threads) {
                float t = RHS[(size_t)i * blocks + j];
                for (int k = i + 1; k < n; k++) t -= X[(size_t)k * blocks + j] * sh->R[i * n + k];
                X[(size_t)i * blocks + j] = t / den;
            }
            SPEED_SYNC();
        }
    }
    SPEED_SYNC();
}

/* Each block's variance (X . Y / 25) and entropy (the sum over the
 * eigenvalues of log2 of L v + sigma_nn, and log2(2 pi e)). */
SPEED_FN void speed_block_entropies(const SpeedSetup *s, const float *X, const float *Y,
                                    int blocks, const SpeedShared *sh, float *results,
                                    double log2_2pie, int tid, int threads)
{
    const int n = SPEED_ELEMENTS;
    const bool singular = sh->singular != 0;
    float *entropies = results, *variances = results + blocks;
    for (int b = tid; b < blocks; b += threads) {
        float v = singular ? (0.0f * Y[b]) / (float)n : (X[b] * Y[b]) / (float)n;
        for (int o = 1; o < n; o++) {
            const float xo = singular ? 0.0f : X[(size_t)o * blocks + b];
            v += (xo * Y[(size_t)o * blocks + b]) / (float)n;
        }
        float e = 0.0f;
        for (int k = 0; k < n; k++) {
            const float L = sh->eig[k] < 0 ? 0 : sh->eig[k];
            const float arg = L * v + s->sigma_nn;
            e = (float)(e + (log2((double)arg) + log2_2pie));
        }
        variances[b] = v;
        entropies[b] = e;
    }
}

/*
 * speed_picture_stats() of one picture, by `threads` threads (tid: this
 * one's); SPEED_SYNC() between the steps.  K at cov, the picture at f,
 * Y, X and M Y in y, x and rhs (25 x blocks, global); the results: the
 * blocks' entropies, then their variances, then 1 if K was singular.
 */
SPEED_FN void speed_stats_body(const SpeedSetup *s, const float *f, const float *K, float *Y,
                               float *X, float *RHS, float *results, double log2_2pie,
                               SpeedShared *sh, int tid, int threads)
{
    const int n = SPEED_ELEMENTS;
    const SpeedGeometry *g = &s->g;
    const int blocks = g->blocks;
    float *A = sh->A;
    for (int e = tid; e < n * n; e += threads) A[e] = K[e];
    SPEED_SYNC();
    speed_tridiagonalise(A, sh, tid, threads);

    /* The implicit QR iteration, on one thread. */
    if (tid == 0) {
        float *d = sh->d, *sd = sh->sd;
        for (int i = 0; i < n; i++) d[i] = A[i * n + i];
        for (int i = 0; i < n - 1; i++) sd[i] = A[(i + 1) * n + i];
        speed_qr_iterate(d, sd, n);
        int regular = 1;
        for (int k = 0; k < n; k++) {
            sh->eig[k] = d[k];
            regular &= !(d[k] < SPEED_EIGENVALUE_EPS);
        }
        sh->singular = !regular;
    }
    /* Y: block b's sample at offset o. */
    for (int e = tid; e < n * blocks; e += threads) {
        const int o = e / blocks, b = e % blocks;
        const int by = b / g->blocks_x, bx = b % g->blocks_x;
        Y[e] = f[(size_t)(SPEED_BLOCK * by + o / SPEED_BLOCK) * g->op_w + SPEED_BLOCK * bx +
                 o % SPEED_BLOCK];
    }
    SPEED_SYNC();

    speed_solve(K, Y, X, RHS, blocks, sh, tid, threads);
    SPEED_SYNC();
    speed_block_entropies(s, X, Y, blocks, sh, results, log2_2pie, tid, threads);
    if (tid == 0) results[2 * blocks] = sh->singular ? 1.0f : 0.0f;
}

/* ---- one element of each kernel (what a thread, or a block, computes) ---------- */

SPEED_FN float *speed_work(const SpeedArgs *a, int z)
{
    return a->work + (size_t)z * a->work_floats;
}

/* speed_convert: picture z's sample (x, y) as a float. */
SPEED_FN void speed_convert_at(const SpeedArgs *a, int z, int x, int y)
{
    const SpeedGeometry *g = &a->setup->g;
    const SpeedLayout l = speed_layout(g);
    speed_work(a, z)[l.src + (size_t)y * g->w + x] = speed_source(a, z, x, y);
}

/* speed_prescale: sample (x, y) of picture z resized. */
SPEED_FN void speed_prescale_at(const SpeedArgs *a, int z, int x, int y)
{
    const SpeedGeometry *g = &a->setup->g;
    const SpeedLayout l = speed_layout(g);
    float *work = speed_work(a, z);
    work[l.scaled + (size_t)y * g->scaled_w + x] = speed_prescaled(a->setup, work + l.src, x, y);
}

/* speed_blur: sample (x, y) of picture z's operating picture. */
SPEED_FN void speed_blur_at(const SpeedArgs *a, int z, int x, int y)
{
    const SpeedGeometry *g = &a->setup->g;
    const SpeedLayout l = speed_layout(g);
    float *work = speed_work(a, z);
    work[l.op + (size_t)y * g->op_w + x] = speed_blur_element(a, work, &l, z, x, y);
}

/* speed_local_mean: sample (x, y) less its local mean. */
SPEED_FN void speed_local_mean_at(const SpeedArgs *a, int z, int x, int y)
{
    const SpeedGeometry *g = &a->setup->g;
    const SpeedLayout l = speed_layout(g);
    float *work = speed_work(a, z);
    work[l.f + (size_t)y * g->op_w + x] = speed_mean_element(a->setup, work + l.op, x, y);
}

/* speed_means: offset o's mean. */
SPEED_FN void speed_means_at(const SpeedArgs *a, int z, int o)
{
    const SpeedGeometry *g = &a->setup->g;
    const SpeedLayout l = speed_layout(g);
    float *work = speed_work(a, z);
    work[l.means + o] = speed_offset_mean(g, work + l.f, o);
}

/* speed_cov, lane `lane` of entry q's 17 sums (the block's thread). */
SPEED_FN double speed_cov_lane_at(const SpeedArgs *a, int z, int q, int lane)
{
    const SpeedGeometry *g = &a->setup->g;
    const SpeedLayout l = speed_layout(g);
    const float *work = speed_work(a, z);
    int pa, pb;
    speed_pair(q, &pa, &pb);
    return speed_cov_lane(g, work + l.f, pa, pb, (double)work[l.means + pa],
                          (double)work[l.means + pb], lane);
}

/* speed_cov: entry q (and its mirror) from its 17 sums. */
SPEED_FN void speed_cov_store(const SpeedArgs *a, int z, int q, const double *lanes)
{
    const SpeedGeometry *g = &a->setup->g;
    const SpeedLayout l = speed_layout(g);
    float *work = speed_work(a, z);
    int pa, pb;
    speed_pair(q, &pa, &pb);
    const double sum = speed_cov_combine(lanes);
    const float c = (float)(sum / (double)((size_t)g->sub_w * (size_t)g->sub_h));
    work[l.cov + pa * SPEED_ELEMENTS + pb] = c;
    work[l.cov + pb * SPEED_ELEMENTS + pa] = c;
}

/* speed_stats: picture z's statistics, by thread tid of `threads`. */
SPEED_FN void speed_stats_at(const SpeedArgs *a, int z, SpeedShared *sh, int tid, int threads)
{
    const SpeedLayout l = speed_layout(&a->setup->g);
    float *work = speed_work(a, z);
    speed_stats_body(a->setup, work + l.f, work + l.cov, work + l.y, work + l.x, work + l.rhs,
                     a->results + (size_t)z * a->result_floats, a->log2_2pie, sh, tid, threads);
}

/* ---- the kernels: one element of the above per thread ------------------------ */

#ifdef __CUDACC__
/* Threads of rows: sample x of row blockIdx.y of picture blockIdx.z. */
#define SPEED_ROW_KERNEL(name, width)                                                      \
    extern "C" __global__ void __launch_bounds__(SPEED_ROW_THREADS) name(const SpeedArgs a) \
    {                                                                                      \
        const int x = blockIdx.x * SPEED_ROW_THREADS + threadIdx.x;                        \
        if (x < a.setup->g.width) name##_at(&a, blockIdx.z, x, blockIdx.y);                \
    }
SPEED_ROW_KERNEL(speed_convert, w)
SPEED_ROW_KERNEL(speed_prescale, scaled_w)
SPEED_ROW_KERNEL(speed_blur, op_w)
SPEED_ROW_KERNEL(speed_local_mean, op_w)

extern "C" __global__ void __launch_bounds__(SPEED_COV_THREADS) speed_means(const SpeedArgs a)
{
    if (threadIdx.x < SPEED_ELEMENTS) speed_means_at(&a, blockIdx.z, threadIdx.x);
}

/* K: block q computes the entry q of the lower triangle. */
extern "C" __global__ void __launch_bounds__(SPEED_COV_THREADS) speed_cov(const SpeedArgs a)
{
    __shared__ double lanes[17];
    const int t = threadIdx.x;
    if (t < 17) lanes[t] = speed_cov_lane_at(&a, blockIdx.z, blockIdx.x, t);
    __syncthreads();
    if (t == 0) speed_cov_store(&a, blockIdx.z, blockIdx.x, lanes);
}

extern "C" __global__ void __launch_bounds__(SPEED_STATS_THREADS) speed_stats(const SpeedArgs a)
{
    __shared__ SpeedShared sh;
    speed_stats_at(&a, blockIdx.z, &sh, threadIdx.x, SPEED_STATS_THREADS);
}
#endif
