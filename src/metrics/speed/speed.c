/*
 * SpEED: libvmaf master's speed_chroma and speed_temporal extractors, the
 * chroma and temporal features of the VMAF v1 models (speed.h says what is
 * computed, and how exactly).
 *
 * speed_chroma scores the U and the V plane of each frame (keys
 * speed_chroma_u, _v and _uv, each clipped to speed_max_val; uv is the mean
 * of the two before their clipping, or the one that is not singular);
 * chroma planes of 4:2:0 and 4:2:2 count floor(w / 2) samples a row (and
 * floor(h / 2) rows at 4:2:0), as libvmaf's.  speed_temporal scores the
 * difference of the previous and the current luma plane of the reference
 * against that of the distorted video (or, with speed_use_ref_diff, the
 * previous distorted less the current reference), 0 at frame 0;
 * speed_max_val names its key but clips nothing there, as in libvmaf.
 *
 * Where libvmaf's extractors misbehave (a kernel scale or size it cannot
 * score: it ignores the error and reads out of bounds), quale refuses the
 * format with a message.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cpu.h"
#include "metric.h"
#include "metrics/common/picture_float.h"
#include "speed.h"
#include "speed_qr.h"
#include "metrics/common/vif_tools.h"


/* ---- setup ------------------------------------------------------------------ */

static bool almost_one(double x)
{
    return fabs(x - 1.0) < 1.0e-3; /* libvmaf's ALMOST_EQUAL(x, 1.0) */
}

#define SPEED_FN(name) speed_##name##_c
#include "speed_tmpl.c"
#undef SPEED_FN

/* The dsp of one instruction set's kernels. */
#define SPEED_KERNELS(isa)                                                            \
    (SpeedDsp){ .cov_sum = speed_cov_sum_##isa, .matrix_mul = speed_matrix_mul_##isa, \
                .vertical_row = speed_vertical_row_##isa }

void speed_dsp_init(SpeedDsp *dsp, unsigned cpu_flags)
{
    CPU_PICK_KERNELS(*dsp, SPEED_KERNELS, cpu_flags);
}

int speed_setup(SpeedSetup *s, const char *metric, const char *what, int w, int h, double ks,
                double ps, int method, double sigma_nn, double nn_floor, int weight_mode,
                FeatureSink *sink)
{
    memset(s, 0, sizeof(*s));
    if (!vif_kernelscale_valid((float)ks)) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s: invalid speed_kernelscale %g; libvmaf "
                         "accepts " VIF_KERNELSCALES_TEXT, metric, ks);
        return -EINVAL;
    }
    SpeedGeometry *g = &s->g;
    g->w = w;
    g->h = h;
    g->scaled_w = (int)(w * ps + 0.5);
    g->scaled_h = (int)(h * ps + 0.5);
    g->prescale = !almost_one(ps);
    if (!g->prescale && (g->scaled_w != w || g->scaled_h != h)) {
        /* libvmaf sizes the picture by the prescale but skips it within
         * 1e-3 of 1, and then filters a column or row it never wrote. */
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s: speed_prescale %g resizes %dx%d to %dx%d "
                         "but is too close to 1 for libvmaf to resize (it reads samples it "
                         "never wrote); use 1 or a value further from it", metric, ps, w, h,
                         g->scaled_w, g->scaled_h);
        return -EINVAL;
    }
    if (g->scaled_w < SPEED_MIN_SIZE || g->scaled_h < SPEED_MIN_SIZE) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s: %s is %dx%d%s; SpEED needs %dx%d (an "
                         "operating picture of a %dx%d block; libvmaf reads out of bounds "
                         "below that)", metric, what, g->scaled_w, g->scaled_h,
                         g->prescale ? " after speed_prescale" : "", SPEED_MIN_SIZE,
                         SPEED_MIN_SIZE, SPEED_BLOCK, SPEED_BLOCK);
        return -EINVAL;
    }
    if (g->prescale && method == VIF_PRESCALE_BILINEAR && g->scaled_w > VIF_BILINEAR_MAX_WIDTH) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s: the bilinear prescale makes a picture %d "
                         "wide; libvmaf's bilinear scaler takes at most %d", metric, g->scaled_w,
                         VIF_BILINEAR_MAX_WIDTH);
        return -EINVAL;
    }
    if (g->prescale && method == VIF_PRESCALE_LANCZOS4 && (w < 6 || h < 6)) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s: cannot prescale a %dx%d %s with lanczos4: "
                         "its mirror needs 6x6", metric, w, h, what);
        return -EINVAL;
    }
    g->alloc_w = QUALE_MAX(w, g->scaled_w);
    g->alloc_h = QUALE_MAX(h, g->scaled_h);
    g->op_w = g->scaled_w >> SPEED_SCALES;
    g->op_h = g->scaled_h >> SPEED_SCALES;
    g->trunc_w = g->op_w / SPEED_BLOCK * SPEED_BLOCK;
    g->trunc_h = g->op_h / SPEED_BLOCK * SPEED_BLOCK;
    g->blocks_x = g->trunc_w / SPEED_BLOCK;
    g->blocks_y = g->trunc_h / SPEED_BLOCK;
    g->blocks = g->blocks_x * g->blocks_y;
    g->sub_w = g->trunc_w - SPEED_BLOCK + 1;
    g->sub_h = g->trunc_h - SPEED_BLOCK + 1;

    s->method = method;
    s->sigma_nn = (float)sigma_nn;
    s->nn_floor = (float)nn_floor;
    s->weight_mode = weight_mode;
    /* The blur: the size of VIF's scale-1 filter, the width of its scale 4
     * (sqrt(4) * taps / 5); the local mean: VIF's scale-4 filter.  The
     * filters' radii stay inside the pictures they filter (at least 80
     * and 5 samples a side). */
    s->antialias_taps = vif_filter_taps(1, (float)ks);
    vif_gaussian_kernel(s->antialias, s->antialias_taps,
                        (float)(sqrt(SPEED_SCALES) * s->antialias_taps / 5.0f));
    s->mean_taps = vif_filter_taps(SPEED_SCALES, (float)ks);
    vif_gaussian_kernel(s->mean, s->mean_taps, s->mean_taps / 5.0f);
    if (s->antialias_taps / 2 >= QUALE_MIN(g->scaled_w, g->scaled_h) ||
        s->mean_taps / 2 >= QUALE_MIN(g->op_w, g->op_h)) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "%s: %s is too small for the filters of "
                         "speed_kernelscale %g", metric, what, ks);
        return -EINVAL;
    }
    return 0;
}

int speed_work_alloc(SpeedWork *w, const SpeedSetup *s, const SpeedDsp *dsp, int extra_width)
{
    memset(w, 0, sizeof(*w));
    w->dsp = dsp;
    const SpeedGeometry *g = &s->g;
    const int width = QUALE_MAX(g->alloc_w, extra_width);
    w->stride = quale_align((size_t)width, 16);
    const size_t plane = w->stride * (size_t)g->alloc_h;
    const size_t e = SPEED_ELEMENTS, b = (size_t)g->blocks;
    const size_t floats = 3 * plane                 /* ref, dis, tmp */
                          + w->stride               /* row */
                          + w->stride * (size_t)g->op_h /* op */
                          + e * e + e + 2 * e * b   /* cov, eig, y, x */
                          + 5 * e * e + e * b       /* lin: the solver */
                          + 4 * b;                  /* two pictures' stats */
    float *p = quale_aligned_alloc(sizeof(float) * floats);
    if (!p) return -ENOMEM;
    w->ref = p; p += plane;
    w->dis = p; p += plane;
    w->tmp = p; p += plane;
    w->row = p; p += w->stride;
    w->op = p; p += w->stride * (size_t)g->op_h;
    w->cov = p; p += e * e;
    w->eig = p; p += e;
    w->y = p; p += e * b;
    w->x = p; p += e * b;
    w->lin = p; p += 5 * e * e + e * b;
    w->ref_stats.entropies = p; p += b;
    w->ref_stats.variances = p; p += b;
    w->dis_stats.entropies = p; p += b;
    w->dis_stats.variances = p;
    return 0;
}

void speed_work_free(SpeedWork *w)
{
    quale_aligned_free(w->ref);
    memset(w, 0, sizeof(*w));
}

/* ---- steps 1-3: the operating picture -------------------------------------- */

/* libvmaf's reflection: -k -> k, n - 1 + k -> n - 1 - k. */
static inline int mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

/*
 * libvmaf's vif_filter1d_s(): separable, vertical pass first, each output
 * a float sum of taps in order from 0.  Only the outputs at rows and
 * columns `step` apart are made (16 for the blur that is then decimated,
 * 1 for the local mean): each is the same sum as libvmaf's.  dst gets
 * them at (y / step, x / step).
 */
static void filter_decimate(const SpeedDsp *dsp, const float *f, int taps, const float *src,
                            size_t ss, int w, int h, int step, float *dst, size_t ds, float *row)
{
    const int r = taps / 2;
    const float *rows[SPEED_MAX_TAPS];
    for (int y = 0; y < h; y += step) {
        /* The vertical pass of row y, every column. */
        for (int k = 0; k < taps; k++) rows[k] = src + (size_t)mirror(y - r + k, h) * ss;
        dsp->vertical_row(f, taps, rows, w, row);
        float *out = dst + (size_t)(y / step) * ds;
        for (int x = 0; x < w; x += step) {
            float acc = 0.0f;
            for (int k = 0; k < taps; k++) acc += f[k] * row[mirror(x - r + k, w)];
            out[x / step] = acc;
        }
    }
}

void speed_prepare(const SpeedSetup *s, SpeedWork *w, float *pic)
{
    const SpeedGeometry *g = &s->g;
    const size_t stride = w->stride;
    if (g->prescale) {
        for (int y = 0; y < g->h; y++)
            memcpy(w->tmp + (size_t)y * stride, pic + (size_t)y * stride, sizeof(float) * g->w);
        vif_prescale(w->tmp, g->w, g->h, stride, pic, g->scaled_w, g->scaled_h, stride, s->method);
    }
    /* Blur and keep every 16th sample: the operating picture, into pic's
     * top-left (rows 16 y are read before row y is written: y <= 16 y). */
    filter_decimate(w->dsp, s->antialias, s->antialias_taps, pic, stride, g->scaled_w,
                    g->scaled_h, 1 << SPEED_SCALES, w->op, stride, w->row);
    for (int y = 0; y < g->op_h; y++)
        memcpy(pic + (size_t)y * stride, w->op + (size_t)y * stride, sizeof(float) * g->op_w);
    /* Less its local mean. */
    filter_decimate(w->dsp, s->mean, s->mean_taps, pic, stride, g->op_w, g->op_h, 1, w->op,
                    stride, w->row);
    for (int y = 0; y < g->op_h; y++) {
        float *p = pic + (size_t)y * stride;
        const float *m = w->op + (size_t)y * stride;
        for (int x = 0; x < g->op_w; x++) p[x] -= m[x];
    }
}

/* ---- step 4: K, its eigenvalues, K^-1 Y -------------------------------------- */

double speed_cov_sum_c(const float *x, const float *y, size_t stride, int w, int h, double mx,
                       double my)
{
    /* libvmaf's AVX-512 kernel: lanes l of two chains, kept across rows,
     * a chain step a fused multiply-add of the centred samples; per row
     * 16 samples at a time, then 8 once into the first chain, then the
     * rest into a plain double sum. */
    double a0[8] = { 0 }, a1[8] = { 0 }, tail = 0.0;
    for (int i = 0; i < h; i++) {
        const float *rx = x + (size_t)i * stride, *ry = y + (size_t)i * stride;
        int j = 0;
        for (; j + 15 < w; j += 16) {
            for (int l = 0; l < 8; l++) {
                a0[l] = fma((double)rx[j + l] - mx, (double)ry[j + l] - my, a0[l]);
                a1[l] = fma((double)rx[j + 8 + l] - mx, (double)ry[j + 8 + l] - my, a1[l]);
            }
        }
        if (j + 7 < w) {
            for (int l = 0; l < 8; l++)
                a0[l] = fma((double)rx[j + l] - mx, (double)ry[j + l] - my, a0[l]);
            j += 8;
        }
        for (; j < w; j++) tail += ((double)rx[j] - mx) * ((double)ry[j] - my);
    }
    /* _mm512_reduce_add_pd: halves added, then quarters, then the pair. */
    double t[8], u[4], v[2];
    for (int l = 0; l < 8; l++) t[l] = a0[l] + a1[l];
    for (int k = 0; k < 4; k++) u[k] = t[k] + t[k + 4];
    for (int k = 0; k < 2; k++) v[k] = u[k] + u[k + 2];
    return (v[0] + v[1]) + tail;
}

/* K[o][p]: the covariance of the samples at neighbourhood offsets o and p
 * (o = 5 r + c: rows r.., columns c.. of the operating picture), over
 * sub_w x sub_h of them. */
static void covariance_matrix(const SpeedSetup *s, const SpeedDsp *dsp, const float *pic,
                              size_t stride, float *cov, float *means)
{
    const SpeedGeometry *g = &s->g;
    const size_t count = (size_t)g->sub_w * (size_t)g->sub_h;
    for (int o = 0; o < SPEED_ELEMENTS; o++) {
        const float *p = pic + (size_t)(o / SPEED_BLOCK) * stride + o % SPEED_BLOCK;
        float sum = 0;
        for (int i = 0; i < g->sub_h; i++)
            for (int j = 0; j < g->sub_w; j++) sum += p[(size_t)i * stride + j];
        means[o] = sum / count;
    }
    for (int a = 0; a < SPEED_ELEMENTS; a++) {
        const float *pa = pic + (size_t)(a / SPEED_BLOCK) * stride + a % SPEED_BLOCK;
        for (int b = 0; b <= a; b++) {
            const float *pb = pic + (size_t)(b / SPEED_BLOCK) * stride + b % SPEED_BLOCK;
            const double sum = dsp->cov_sum(pa, pb, stride, g->sub_w, g->sub_h, means[a],
                                              means[b]);
            const float c = (float)(sum / count);
            cov[a * SPEED_ELEMENTS + b] = cov[b * SPEED_ELEMENTS + a] = c;
        }
    }
}

/* Householder tridiagonalisation (GSL's symmtd, libvmaf's float port):
 * the diagonal into d, the subdiagonal into sd; A (n x n) is destroyed. */
static void tridiagonalise(float *A, int n, float *d, float *sd, float *v, float *xv)
{
    for (int i = 0; i < n - 2; i++) {
        /* The reflection that zeroes A[i + 2.., i]. */
        float tau = 0.0f;
        float norm = 0;
        for (int r = i + 2; r < n; r++) norm += A[r * n + i] * A[r * n + i];
        const float xnorm = (float)sqrt(norm);
        if (xnorm != 0.0f) {
            const float alpha = A[(i + 1) * n + i];
            const float beta = -speed_sign(alpha) * speed_hypot(alpha, xnorm);
            tau = (beta - alpha) / beta;
            const float s = alpha - beta;
            if (s != 0.0f) {
                for (int r = i + 1; r < n; r++) A[r * n + i] /= s;
                A[(i + 1) * n + i] = beta;
            }
        }
        for (int r = i + 1; r < n; r++) v[r] = A[r * n + i];
        if (tau == 0.0f) continue;
        v[i + 1] = 1.0f;
        /* x = tau A v; x -= (tau (x . v) / 2) v; A -= x v' + v x'. */
        for (int r = i + 1; r < n; r++) {
            xv[r] = 0.0f;
            for (int c = i + 1; c < n; c++) xv[r] += tau * A[r * n + c] * v[c];
        }
        float dot = 0;
        for (int r = i + 1; r < n; r++) dot += xv[r] * v[r];
        const float alpha2 = (float)(-0.5 * tau * dot);
        for (int r = i + 1; r < n; r++) xv[r] += alpha2 * v[r];
        for (int r = i + 1; r < n; r++)
            for (int c = i + 1; c < n; c++) A[r * n + c] -= xv[r] * v[c] + v[r] * xv[c];
    }
    for (int i = 0; i < n; i++) d[i] = A[i * n + i];
    for (int i = 0; i < n - 1; i++) sd[i] = A[(i + 1) * n + i];
}

/* The eigenvalues of the symmetric K, in the order the QR iteration leaves
 * them on the diagonal (GSL's symm, libvmaf's port). */
static void eigenvalues(const float *K, float *eig, float *work)
{
    const int n = SPEED_ELEMENTS;
    float *A = work, *d = A + n * n, *sd = d + n, *v = sd + n, *xv = v + n;
    memcpy(A, K, sizeof(float) * n * n);
    tridiagonalise(A, n, d, sd, v, xv);
    speed_qr_iterate(d, sd, n);
    memcpy(eig, d, sizeof(float) * n);
}

static float vector_norm(const float *v, int n)
{
    float sum = 0;
    for (int i = 0; i < n; i++) sum += v[i] * v[i];
    return (float)sqrt(sum);
}

/*
 * X = K^-1 Y (Y: 25 x blocks) by libvmaf's Householder QR in the "minor"
 * form: M = H_23 ... H_0 and R = M K, then R X = M Y by back substitution.
 * Returns -EINVAL where R has a diagonal entry under 1e-6.
 */
static int solve(const SpeedDsp *dsp, const float *K, const float *Y, int blocks, float *X,
                 float *work)
{
    const int n = SPEED_ELEMENTS;
    float *Z = work, *M = Z + n * n, *H = M + n * n, *T = H + n * n, *R = T + n * n;
    float *RHS = R + n * n;
    float v[SPEED_ELEMENTS];
    memcpy(Z, K, sizeof(float) * n * n);
    for (int i = 0; i < n * n; i++) M[i] = (i / n == i % n) ? 1.0f : 0.0f;
    for (int k = 0; k < n - 1; k++) {
        /* Z's rows and columns before k become the identity's. */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i < k || j < k) Z[i * n + j] = i == j ? 1.0f : 0.0f;
        for (int i = 0; i < n; i++) v[i] = Z[i * n + k];
        const float norm = vector_norm(v, n);
        v[k] += speed_sign(K[k * n + k]) * norm; /* the sign of K's diagonal, as libvmaf */
        const float norm2 = vector_norm(v, n);
        for (int i = 0; i < n; i++) v[i] = v[i] / norm2;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) H[i * n + j] = -2 * v[i] * v[j];
        for (int i = 0; i < n; i++) H[i * n + i] += 1;
        dsp->matrix_mul(T, H, Z, n, n, n);
        memcpy(Z, T, sizeof(float) * n * n);
        dsp->matrix_mul(T, H, M, n, n, n);
        memcpy(M, T, sizeof(float) * n * n);
    }
    dsp->matrix_mul(R, M, K, n, n, n);
    dsp->matrix_mul(RHS, M, Y, n, n, blocks);
    for (int i = n - 1; i >= 0; i--) {
        const float den = R[i * n + i];
        if (fabsf(den) < SPEED_EIGENVALUE_EPS) return -EINVAL;
        for (int j = 0; j < blocks; j++) {
            float t = RHS[(size_t)i * blocks + j];
            for (int k = i + 1; k < n; k++) t -= X[(size_t)k * blocks + j] * R[i * n + k];
            X[(size_t)i * blocks + j] = t / den;
        }
    }
    return 0;
}

/* ---- step 5: variances and entropies ------------------------------------------ */

void speed_picture_stats(const SpeedSetup *s, SpeedWork *w, const float *pic, SpeedStats *out)
{
    const SpeedGeometry *g = &s->g;
    const int n = SPEED_ELEMENTS, blocks = g->blocks;
    covariance_matrix(s, w->dsp, pic, w->stride, w->cov, w->eig); /* eig: the means first */
    eigenvalues(w->cov, w->eig, w->lin);

    /* Y: block b's sample at offset o, blocks in raster order. */
    for (int o = 0; o < n; o++) {
        const int r = o / SPEED_BLOCK, c = o % SPEED_BLOCK;
        for (int by = 0; by < g->blocks_y; by++)
            for (int bx = 0; bx < g->blocks_x; bx++)
                w->y[(size_t)o * blocks + by * g->blocks_x + bx] =
                    pic[(size_t)(SPEED_BLOCK * by + r) * w->stride + SPEED_BLOCK * bx + c];
    }

    bool regular = true;
    for (int k = 0; k < n; k++) regular &= !(w->eig[k] < SPEED_EIGENVALUE_EPS);
    out->singular = !regular || solve(w->dsp, w->cov, w->y, blocks, w->x, w->lin) != 0;
    if (out->singular) memset(w->x, 0, sizeof(float) * (size_t)n * blocks);

    /* S[b] = sum over o of X[o][b] Y[o][b] / 25, in order of o. */
    for (int b = 0; b < blocks; b++) out->variances[b] = (w->x[b] * w->y[b]) / (float)n;
    for (int o = 1; o < n; o++)
        for (int b = 0; b < blocks; b++)
            out->variances[b] += (w->x[(size_t)o * blocks + b] * w->y[(size_t)o * blocks + b]) /
                                 (float)n;

    /* E[b]: eigenvalue by eigenvalue, a double sum rounded to float each
     * step (libvmaf's entropy += log2(...) + log2(2 pi e)). */
    const double log2_2pie = log2(2 * M_PI * M_E);
    for (int b = 0; b < blocks; b++) out->entropies[b] = 0.0f;
    for (int k = 0; k < n; k++) {
        const float L = w->eig[k] < 0 ? 0 : w->eig[k];
        for (int b = 0; b < blocks; b++) {
            const float arg = L * out->variances[b] + s->sigma_nn;
            out->entropies[b] = (float)(out->entropies[b] + (log2(arg) + log2_2pie));
        }
    }
}

/* ---- the score ------------------------------------------------------------------- */

float speed_pair_score(const SpeedSetup *s, const SpeedStats *ref, const SpeedStats *dis)
{
    if (ref->singular != dis->singular) return 0.0f;
    const SpeedGeometry *g = &s->g;
    const float base = (float)(SPEED_ELEMENTS * (log2((1 + s->nn_floor) * s->sigma_nn) +
                                                 log2(2 * M_PI * M_E)));
    float score = 0;
    for (int i = 0; i < g->blocks; i++) {
        const float er = ref->entropies[i], ed = dis->entropies[i];
        if (er < base && ed < base) continue; /* no visible difference */
        const float vr = ref->variances[i], vd = dis->variances[i];
        float sr = 0, sd = 0;
        switch (s->weight_mode) {
        case 0:
            sr = (float)(er * log2(1 + vr));
            sd = (float)(ed * log2(1 + vd));
            break;
        case 1:
            sr = (float)(er * log2(1 + vr));
            sd = (float)(ed * log2(1 + vr));
            break;
        case 2:
            sr = (float)(er * log2(1 + vd));
            sd = (float)(ed * log2(1 + vd));
            break;
        case 3:
            sr = (float)(er * log2(1 + (vr + vd) / 2.0));
            sd = (float)(ed * log2(1 + (vr + vd) / 2.0));
            break;
        case 4:
            sr = (float)(er * log2(1 + vr));
            sd = (float)(ed * log2(1 + (vr + vd) / 2.0));
            break;
        case 5:
            sr = (float)(er * log2(1 + vr));
            sd = (float)(ed * log2(1 + (0.75 * vr + 0.25 * vd)));
            break;
        default:
            sr = (float)(er * log2(1 + vr));
            sd = (float)(ed * log2(1 + (0.25 * vr + 0.75 * vd)));
            break;
        }
        score += fabsf(sr - sd);
    }
    return score / (float)g->blocks;
}

bool speed_score_pictures(const SpeedSetup *s, SpeedWork *w, float *score)
{
    speed_prepare(s, w, w->ref);
    speed_picture_stats(s, w, w->ref, &w->ref_stats);
    speed_prepare(s, w, w->dis);
    speed_picture_stats(s, w, w->dis, &w->dis_stats);
    *score = speed_pair_score(s, &w->ref_stats, &w->dis_stats);
    return w->ref_stats.singular || w->dis_stats.singular;
}

/* ---- the metrics ---------------------------------------------------------------------- */

#define SPEED_COMMON_OPTIONS(State)                                                          \
    { .name = "speed_kernelscale", .alias = "ks",                                            \
      .help = "scaling factor for the gaussian kernel (2.0 means multiplying the standard "  \
              "deviation by 2 and enlarge the kernel size accordingly",                      \
      .offset = offsetof(State, o.kernelscale), .type = QUALE_OPTION_DOUBLE,                 \
      .default_value.d = 1.0, .min = 0.1, .max = 4.0, .flags = OPTION_FEATURE_PARAM },      \
    { .name = "speed_prescale", .alias = "ps",                                               \
      .help = "scaling factor for the frame (2.0 means making the image twice as large on " \
              "each dimension)",                                                             \
      .offset = offsetof(State, o.prescale), .type = QUALE_OPTION_DOUBLE,                    \
      .default_value.d = 1.0, .min = 0.1, .max = 4.0, .flags = OPTION_FEATURE_PARAM },      \
    { .name = "speed_prescale_method", .alias = "psm", .choices = vif_prescale_method_names, \
      .help = "scaling method for the frame, supported options: [nearest, bilinear, "       \
              "bicubic, lanczos4]",                                                          \
      .offset = offsetof(State, o.prescale_method), .type = QUALE_OPTION_CHOICE,            \
      .default_value.i = VIF_PRESCALE_NEAREST, .flags = OPTION_FEATURE_PARAM },              \
    { .name = "speed_sigma_nn", .alias = "snn", .help = "standard deviation of neural noise", \
      .offset = offsetof(State, o.sigma_nn), .type = QUALE_OPTION_DOUBLE,                    \
      .default_value.d = 0.29, .min = 0.1, .max = 2.0, .flags = OPTION_FEATURE_PARAM },     \
    { .name = "speed_nn_floor", .alias = "nnf",                                              \
      .help = "neural noise floor, expressed in percentage of sigma_nn",                    \
      .offset = offsetof(State, o.nn_floor), .type = QUALE_OPTION_DOUBLE,                    \
      .default_value.d = 0.0, .min = 0.0, .max = 1.0, .flags = OPTION_FEATURE_PARAM },      \
    { .name = "speed_max_val", .alias = "mxv",                                               \
      .help = "maximum value allowed; larger values will be clipped to this value",         \
      .offset = offsetof(State, o.max_val), .type = QUALE_OPTION_DOUBLE,                     \
      .default_value.d = 1000.0, .min = 0.0, .max = 1000.0, .flags = OPTION_FEATURE_PARAM }

/* ---- speed_chroma ---------------------------------------------------------- */


static const char *const chroma_keys[] = {
    "speed_chroma_u", "speed_chroma_v", "speed_chroma_uv", NULL,
};

static const MetricOption speed_chroma_options[] = {
    SPEED_COMMON_OPTIONS(SpeedChromaState),
    { .name = "speed_weight_var_mode", .alias = "wvm",
      .help = "different approaches to perform variance-absed weighting",
      .offset = offsetof(SpeedChromaState, weight_mode), .type = QUALE_OPTION_INT,
      .default_value.i = 0, .min = 0, .max = 6, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

void speed_chroma_size(const QualeVideoFormat *f, int *w, int *h)
{
    *w = f->chroma == QUALE_CHROMA_444 ? (int)f->width : (int)f->width / 2;
    *h = f->chroma == QUALE_CHROMA_420 ? (int)f->height / 2 : (int)f->height;
}

static unsigned speed_chroma_planes(const void *state)
{
    (void)state;
    return 6; /* U and V */
}

static int speed_kernelscale_check(const char *metric, double ks, FeatureSink *sink)
{
    if (vif_kernelscale_valid((float)ks)) return 0;
    feature_sink_log(sink, QUALE_LOG_ERROR, "%s: invalid speed_kernelscale %g; libvmaf accepts "
                     VIF_KERNELSCALES_TEXT, metric, ks);
    return -EINVAL;
}

static int speed_chroma_check_options(const void *state, FeatureSink *sink)
{
    const SpeedChromaState *s = state;
    return speed_kernelscale_check("speed_chroma", s->o.kernelscale, sink);
}

static int speed_chroma_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    SpeedChromaState *s = state;
    int err = picture_float_check(f, "speed_chroma", sink);
    if (err) return err;
    if (f->chroma == QUALE_CHROMA_400) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "speed_chroma: 4:0:0 video has no chroma to "
                         "score");
        return -EINVAL;
    }
    int w, h;
    speed_chroma_size(f, &w, &h);
    s->stored_w = f->chroma == QUALE_CHROMA_444 ? (int)f->width : ((int)f->width + 1) / 2;
    speed_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));
    err = speed_setup(&s->setup, "speed_chroma", "the chroma plane", w, h, s->o.kernelscale,
                      s->o.prescale, s->o.prescale_method, s->o.sigma_nn, s->o.nn_floor,
                      s->weight_mode, sink);
    if (err) return err;
    return feature_sink_declare_keys(sink, chroma_keys, CHROMA_KEYS, s->key);
}

static int speed_chroma_scratch_alloc(const void *state, void **scratch)
{
    const SpeedChromaState *s = state;
    SpeedWork *w = malloc(sizeof(*w));
    if (!w) return -ENOMEM;
    const int err = speed_work_alloc(w, &s->setup, &s->dsp, s->stored_w);
    if (err) {
        free(w);
        return err;
    }
    *scratch = w;
    return 0;
}

static void speed_scratch_free(void *scratch)
{
    speed_work_free(scratch);
    free(scratch);
}

/* Whether row y of the picture is read at all: without a prescale, the
 * blur that is then decimated reads only the rows within its radius of a
 * multiple of 16 (its mirror at the bottom stays among them), 9 rows of
 * 16 at speed_kernelscale 1: the others are never loaded. */
static bool row_read(const SpeedSetup *s, int y)
{
    if (s->g.prescale) return true;
    const int r = s->antialias_taps / 2, below = y / 16 * 16, above = below + 16;
    return y - below <= r || (above - y <= r && above < s->g.h);
}

/* A plane's rows as floats (libvmaf's picture_copy with offset -128). */
static void load_plane(const SpeedSetup *s, const QualePicture *pic, unsigned plane, float *dst,
                       size_t stride)
{
    for (int y = 0; y < s->g.h; y++)
        if (row_read(s, y))
            picture_float_row(pic, plane, (unsigned)y, -128.0f, dst + (size_t)y * stride);
}

int speed_chroma_write(const SpeedChromaState *s, FeatureSink *sink, unsigned index,
                       const float score[2], const bool singular[2])
{
    /* A channel that is singular on one side takes the other's score. */
    float uv;
    if (singular[0] && !singular[1]) uv = score[1];
    else if (singular[1] && !singular[0]) uv = score[0];
    else uv = (float)((score[0] + score[1]) / 2.0);
    const double values[CHROMA_KEYS] = {
        QUALE_MIN((double)score[0], s->o.max_val),
        QUALE_MIN((double)score[1], s->o.max_val),
        QUALE_MIN((double)uv, s->o.max_val),
    };
    for (unsigned k = 0; k < CHROMA_KEYS; k++) {
        const int err = feature_sink_put(sink, s->key[k], index, values[k]);
        if (err) return err;
    }
    return 0;
}

int speed_write_stats(const void *state, bool temporal, const SpeedSetup *setup,
                      const SpeedStats stats[4], bool scored, unsigned index, FeatureSink *sink)
{
    if (temporal) {
        const SpeedTemporalState *s = state;
        const float score = scored ? speed_pair_score(setup, &stats[0], &stats[1]) : 0.0f;
        return feature_sink_put(sink, s->key, index, (double)score);
    }
    float score[2];
    bool singular[2];
    for (unsigned c = 0; c < 2; c++) {
        score[c] = speed_pair_score(setup, &stats[2 * c], &stats[2 * c + 1]);
        singular[c] = stats[2 * c].singular || stats[2 * c + 1].singular;
    }
    return speed_chroma_write(state, sink, index, score, singular);
}

static int speed_chroma_extract(const void *state, void *scratch, const MetricFrame *frame,
                                FeatureSink *sink)
{
    const SpeedChromaState *s = state;
    SpeedWork *w = scratch;
    float score[2];
    bool singular[2];
    for (int c = 0; c < 2; c++) {
        load_plane(&s->setup, frame->ref, 1 + c, w->ref, w->stride);
        load_plane(&s->setup, frame->dist, 1 + c, w->dis, w->stride);
        singular[c] = speed_score_pictures(&s->setup, w, &score[c]);
    }
    return speed_chroma_write(s, sink, frame->index, score, singular);
}

static const MetricModelFeature speed_chroma_model_features[] = {
    { "Speed_chroma_feature_speed_chroma_u_score", "speed_chroma_u" },
    { "Speed_chroma_feature_speed_chroma_v_score", "speed_chroma_v" },
    { "Speed_chroma_feature_speed_chroma_uv_score", "speed_chroma_uv" },
    { NULL, NULL },
};

const Metric metric_speed_chroma = {
    .name = "speed_chroma",
    .keys = chroma_keys,
    .model_features = speed_chroma_model_features,
    .options = speed_chroma_options,
    .state_size = sizeof(SpeedChromaState),
    .planes = speed_chroma_planes,
    .check_options = speed_chroma_check_options,
    .init = speed_chroma_init,
    .scratch_alloc = speed_chroma_scratch_alloc,
    .scratch_free = speed_scratch_free,
    .extract = speed_chroma_extract,
};

/* ---- speed_temporal ---------------------------------------------------------- */

static const char *const temporal_keys[] = { "speed_temporal", NULL };

static const MetricOption speed_temporal_options[] = {
    SPEED_COMMON_OPTIONS(SpeedTemporalState),
    { .name = "speed_use_ref_diff", .alias = "urd",
      .help = "the distorted difference against the current reference picture",
      .offset = offsetof(SpeedTemporalState, use_ref_diff), .type = QUALE_OPTION_BOOL,
      .default_value.b = false, .flags = OPTION_FEATURE_PARAM },
    { 0 },
};

static int speed_temporal_check_options(const void *state, FeatureSink *sink)
{
    const SpeedTemporalState *s = state;
    /* libvmaf keeps speed_temporal's pictures in buffers of the picture's
     * size: a prescale above 1 writes past them there. */
    if (s->o.prescale > 1.0 && !almost_one(s->o.prescale)) {
        feature_sink_log(sink, QUALE_LOG_ERROR, "speed_temporal: speed_prescale %g above 1 is "
                         "not something libvmaf can compute (it writes past its buffers)",
                         s->o.prescale);
        return -EINVAL;
    }
    return speed_kernelscale_check("speed_temporal", s->o.kernelscale, sink);
}

static int speed_temporal_init(void *state, const QualeVideoFormat *f, FeatureSink *sink)
{
    SpeedTemporalState *s = state;
    int err = picture_float_check(f, "speed_temporal", sink);
    if (err) return err;
    if ((err = speed_temporal_check_options(state, sink))) return err;
    /* libvmaf leaves speed_weight_var_mode at 0 here. */
    speed_dsp_init(&s->dsp, feature_sink_cpu_flags(sink));
    err = speed_setup(&s->setup, "speed_temporal", "the luma plane", (int)f->width,
                      (int)f->height, s->o.kernelscale, s->o.prescale, s->o.prescale_method,
                      s->o.sigma_nn, s->o.nn_floor, 0, sink);
    if (err) return err;
    return feature_sink_declare(sink, temporal_keys[0], &s->key);
}

static int speed_temporal_scratch_alloc(const void *state, void **scratch)
{
    const SpeedTemporalState *s = state;
    SpeedWork *w = malloc(sizeof(*w));
    if (!w) return -ENOMEM;
    const int err = speed_work_alloc(w, &s->setup, &s->dsp, 0);
    if (err) {
        free(w);
        return err;
    }
    *scratch = w;
    return 0;
}

/* dst = previous - current, luma as floats. */
static void load_difference(const SpeedSetup *s, const QualePicture *previous,
                            const QualePicture *current, float *dst, size_t stride, float *row)
{
    const int w = s->g.w, h = s->g.h;
    for (int y = 0; y < h; y++) {
        if (!row_read(s, y)) continue;
        float *out = dst + (size_t)y * stride;
        picture_float_row(previous, 0, (unsigned)y, -128.0f, out);
        picture_float_row(current, 0, (unsigned)y, -128.0f, row);
        for (int x = 0; x < w; x++) out[x] -= row[x];
    }
}

static int speed_temporal_extract(const void *state, void *scratch, const MetricFrame *frame,
                                  FeatureSink *sink)
{
    const SpeedTemporalState *s = state;
    SpeedWork *w = scratch;
    if (frame->index == 0 || !frame->prev_ref[0] || !frame->prev_dist[0])
        return feature_sink_put(sink, s->key, frame->index, 0.0);
    load_difference(&s->setup, frame->prev_ref[0], frame->ref, w->ref, w->stride, w->row);
    load_difference(&s->setup, frame->prev_dist[0], s->use_ref_diff ? frame->ref : frame->dist,
                    w->dis, w->stride, w->row);
    float score;
    speed_score_pictures(&s->setup, w, &score);
    return feature_sink_put(sink, s->key, frame->index, (double)score);
}

static const MetricModelFeature speed_temporal_model_features[] = {
    { "Speed_temporal_feature_speed_temporal_score", "speed_temporal" },
    { NULL, NULL },
};

const Metric metric_speed_temporal = {
    .name = "speed_temporal",
    .keys = temporal_keys,
    .model_features = speed_temporal_model_features,
    .options = speed_temporal_options,
    .state_size = sizeof(SpeedTemporalState),
    .flags = METRIC_LUMA_ONLY | METRIC_WRITES_FIRST,
    .history = 1,
    .check_options = speed_temporal_check_options,
    .init = speed_temporal_init,
    .scratch_alloc = speed_temporal_scratch_alloc,
    .scratch_free = speed_scratch_free,
    .extract = speed_temporal_extract,
};
