#version 450
// SpEED's Vulkan twin, step 5: speed_picture_stats() of one picture per
// workgroup (workgroup z: picture z), the CUDA twin's speed_stats_body():
// K's eigenvalues (the Householder tridiagonalisation with its parallel
// loops split over the invocations, the implicit QR on one), K^-1 Y by the
// Householder QR of solve() (each matrix entry's sum on one invocation, in
// the C's order), then each block's variance and entropy, and whether K was
// singular.  The results: the blocks' entropies, then their variances,
// then 1 if K was singular.
#include "speed.glsl"

#define THREADS 256
layout(local_size_x = THREADS) in;

layout(std430, binding = 4) writeonly buffer Results { float results[]; };

#define N SPEED_ELEMENTS
shared float A[N * N], Z[N * N], M[N * N], H[N * N], T[N * N], R[N * N];
shared float sd_d[N], sd_sd[N], sd_v[N], sd_xv[N], sd_eig[N];
shared float sh_tau, sh_alpha2, sh_sv, sh_beta;
shared int sh_singular;

float speed_sign(float x)
{
    return x >= 0.0 ? 1.0 : -1.0;
}

// (float)sqrt((double)(x x + y y))
float speed_hypot(float x, float y)
{
    precise float sum = x * x + y * y;
    return f32_sqrt_rn(double(sum));
}

// ---- the implicit QR iteration on d, sd [a, a + n) (one invocation) ----------

float trailing(int a, int n, double eps)
{
    const float ta = sd_d[a + n - 2], tb = sd_d[a + n - 1], tab = sd_sd[a + n - 2];
    precise float diff = ta - tb;
    const float dt = f32_from_f64(double(diff) * 0.5LF); // (float)((ta - tb) / 2.0)
    if (dt > 0.0) {
        precise float den = dt + speed_hypot(dt, tab);
        precise float r = tb - tab * f32_div(tab, den);
        return r;
    }
    if (dt == 0.0) {
        precise float r = tb - abs(tab);
        return r;
    }
    precise float den = -dt + speed_hypot(dt, tab);
    precise float r = tb + tab * f32_div(tab, den);
    return r;
}

// (float)(1.0 / sqrt((double)(1 + t t)))
float inverse_root(float t)
{
    precise float u = 1.0 + t * t;
    return f32_rsqrt_c(u);
}

void givens(float a, float b, out float c, out float s)
{
    if (b == 0.0) {
        c = 1.0;
        s = 0.0;
    } else if (abs(b) > abs(a)) {
        const float t = f32_div(-a, b);
        const float s1 = inverse_root(t);
        s = s1;
        precise float p = s1 * t;
        c = p;
    } else {
        const float t = f32_div(-b, a);
        const float c1 = inverse_root(t);
        c = c1;
        precise float p = c1 * t;
        s = p;
    }
}

void chop(int a, int n, double eps)
{
    for (int i = 0; i < n - 1; i++) {
        precise float span = abs(sd_d[a + i]) + abs(sd_d[a + i + 1]);
        precise double limit = eps * double(span);
        if (double(abs(sd_sd[a + i])) < limit) sd_sd[a + i] = 0.0;
    }
}

void qr_step(int a, int n, double eps)
{
    float mu = trailing(a, n, eps);
    precise float head = abs(sd_d[a]) + abs(sd_sd[a]);
    precise double scaled_mu = eps * double(abs(mu));
    if (scaled_mu > double(head)) mu = 0.0;
    precise float x = sd_d[a] - mu;
    float z = sd_sd[a];
    float bk = 0.0, zk = 0.0;
    float ap = sd_d[a], bp = sd_sd[a], aq = sd_d[a + 1];
    if (n == 2) {
        float c, s;
        givens(x, z, c, s);
        precise float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        precise float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        precise float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        sd_d[a] = ap1;
        sd_sd[a] = bp1;
        sd_d[a + 1] = aq1;
        return;
    }
    float bq = sd_sd[a + 1];
    for (int k = 0; k < n - 1; k++) {
        float c, s;
        givens(x, z, c, s);
        precise float bk1 = c * bk - s * zk;
        precise float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        precise float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        precise float zp1 = -s * bq;
        precise float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        precise float bq1 = c * bq;
        const float ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if (k < n - 2) aq = sd_d[a + k + 2];
        if (k < n - 3) bq = sd_sd[a + k + 2];
        sd_d[a + k] = ak;
        if (k > 0) sd_sd[a + k - 1] = bk1;
        if (k < n - 2) sd_sd[a + k + 1] = bp;
        x = bk;
        z = zk;
    }
    sd_d[a + n - 1] = ap;
    sd_sd[a + n - 2] = bk;
}

// Householder tridiagonalisation of A in place (tridiagonalise() of
// speed.c), the reflections' scalars through shared memory.
void tridiagonalise(int tid)
{
    for (int i = 0; i < N - 2; i++) {
        if (tid == 0) {
            float tau = 0.0, sv = 0.0, beta = 0.0;
            precise float norm = 0.0;
            for (int r = i + 2; r < N; r++) norm += A[r * N + i] * A[r * N + i];
            const float xnorm = f32_sqrt_rn(double(norm));
            if (xnorm != 0.0) {
                const float alpha = A[(i + 1) * N + i];
                precise float b = -speed_sign(alpha) * speed_hypot(alpha, xnorm);
                precise float num = b - alpha;
                tau = f32_div(num, b);
                precise float difference = alpha - b;
                sv = difference;
                beta = b;
            }
            sh_tau = tau;
            sh_sv = sv;
            sh_beta = beta;
        }
        barrier();
        // The column below the diagonal over sv (row i + 1 then beta), and
        // v: that column with 1 at i + 1; a row an invocation.
        const float tau = sh_tau, sv = sh_sv, beta = sh_beta;
        for (int r = i + 1 + tid; r < N; r += THREADS) {
            float value = A[r * N + i];
            if (sv != 0.0) {
                value = r == i + 1 ? beta : f32_div(value, sv);
                A[r * N + i] = value;
            }
            sd_v[r] = r == i + 1 ? 1.0 : value;
        }
        barrier();
        if (tau == 0.0) continue; // the same in every invocation
        for (int r = i + 1 + tid; r < N; r += THREADS) {
            precise float acc = 0.0;
            for (int c = i + 1; c < N; c++) acc += tau * A[r * N + c] * sd_v[c];
            sd_xv[r] = acc;
        }
        barrier();
        if (tid == 0) {
            precise float dot = 0.0;
            for (int r = i + 1; r < N; r++) dot += sd_xv[r] * sd_v[r];
            precise double product = -0.5LF * double(tau) * double(dot);
            sh_alpha2 = f32_from_f64(product);
        }
        barrier();
        for (int r = i + 1 + tid; r < N; r += THREADS) {
            precise float updated = sd_xv[r] + sh_alpha2 * sd_v[r];
            sd_xv[r] = updated;
        }
        barrier();
        const int m = N - i - 1;
        for (int e = tid; e < m * m; e += THREADS) {
            const int r = i + 1 + e / m, c = i + 1 + e % m;
            precise float updated = A[r * N + c] - (sd_xv[r] * sd_v[c] + sd_v[r] * sd_xv[c]);
            A[r * N + c] = updated;
        }
        barrier();
    }
}

// K's eigenvalues into sd_eig by the implicit QR iteration, on one
// invocation; sh_singular where one is below eps.
void eigenvalues(int tid, double eps)
{
    if (tid == 0) {
        for (int i = 0; i < N; i++) sd_d[i] = A[i * N + i];
        for (int i = 0; i < N - 1; i++) sd_sd[i] = A[(i + 1) * N + i];
        chop(0, N, eps);
        int b = N - 1, iter = 0;
        while (b > 0 && iter < 500) {
            if (sd_sd[b - 1] == 0.0) {
                b--;
                continue;
            }
            int a = b - 1;
            while (a > 0 && sd_sd[a - 1] != 0.0) a--;
            qr_step(a, b - a + 1, eps);
            chop(a, b - a + 1, eps);
            iter++;
        }
        bool regular = true;
        for (int k = 0; k < N; k++) {
            sd_eig[k] = sd_d[k];
            regular = regular && !(double(sd_d[k]) < eps);
        }
        sh_singular = regular ? 0 : 1;
    }
}

// K X = Y by solve(): M = H_23 ... H_0, R = M K, R X = M Y; sh_singular
// set where R has a pivot too small.
void solve(int tid, uint K, uint Y, uint X, uint RHS, int blocks, double eps)
{
    if (sh_singular == 0) {
        for (int e = tid; e < N * N; e += THREADS) {
            Z[e] = work[K + uint(e)];
            M[e] = (e / N == e % N) ? 1.0 : 0.0;
        }
        barrier();
        for (int k = 0; k < N - 1; k++) {
            for (int e = tid; e < N * N; e += THREADS) {
                const int i = e / N, j = e % N;
                if (i < k || j < k) Z[e] = i == j ? 1.0 : 0.0;
            }
            barrier();
            if (tid == 0) {
                for (int i = 0; i < N; i++) sd_v[i] = Z[i * N + k];
                precise float sum = 0.0;
                for (int i = 0; i < N; i++) sum += sd_v[i] * sd_v[i];
                precise float vk = sd_v[k] + speed_sign(work[K + uint(k * N + k)]) *
                                                 f32_sqrt_rn(double(sum));
                sd_v[k] = vk;
                precise float sum2 = 0.0;
                for (int i = 0; i < N; i++) sum2 += sd_v[i] * sd_v[i];
                sh_sv = f32_sqrt_rn(double(sum2));
            }
            barrier();
            for (int i = tid; i < N; i += THREADS) sd_v[i] = f32_div(sd_v[i], sh_sv);
            barrier();
            for (int e = tid; e < N * N; e += THREADS) {
                const int i = e / N, j = e % N;
                precise float h = -2.0 * sd_v[i] * sd_v[j];
                if (i == j) h += 1.0;
                H[e] = h;
            }
            barrier();
            for (int e = tid; e < N * N; e += THREADS) { // T = H Z
                const int i = e / N, j = e % N;
                precise float acc = 0.0;
                for (int m = 0; m < N; m++) acc += H[i * N + m] * Z[m * N + j];
                T[e] = acc;
            }
            barrier();
            for (int e = tid; e < N * N; e += THREADS) Z[e] = T[e];
            barrier();
            for (int e = tid; e < N * N; e += THREADS) { // T = H M
                const int i = e / N, j = e % N;
                precise float acc = 0.0;
                for (int m = 0; m < N; m++) acc += H[i * N + m] * M[m * N + j];
                T[e] = acc;
            }
            barrier();
            for (int e = tid; e < N * N; e += THREADS) M[e] = T[e];
            barrier();
        }
        for (int e = tid; e < N * N; e += THREADS) { // R = M K
            const int i = e / N, j = e % N;
            precise float acc = 0.0;
            for (int m = 0; m < N; m++) acc += M[i * N + m] * work[K + uint(m * N + j)];
            R[e] = acc;
        }
        for (int e = tid; e < N * blocks; e += THREADS) { // M Y
            const int i = e / blocks, j = e % blocks;
            precise float acc = 0.0;
            for (int m = 0; m < N; m++) acc += M[i * N + m] * work[Y + uint(m * blocks + j)];
            work[RHS + uint(e)] = acc;
        }
        memoryBarrierBuffer();
        barrier();
        for (int i = N - 1; i >= 0; i--) {
            const float den = R[i * N + i];
            if (double(abs(den)) < eps) { // the same decision in every invocation
                if (tid == 0) sh_singular = 1;
                break;
            }
            for (int j = tid; j < blocks; j += THREADS) {
                precise float t = work[RHS + uint(i * blocks + j)];
                for (int k = i + 1; k < N; k++) t -= work[X + uint(k * blocks + j)] * R[i * N + k];
                work[X + uint(i * blocks + j)] = f32_div(t, den);
            }
            memoryBarrierBuffer();
            barrier();
        }
    }
    memoryBarrierShared();
    barrier();
}

// Each block's variance (X . Y / 25) and entropy (the sum over the
// eigenvalues of log2 of L v + sigma_nn, and log2(2 pi e)).
void block_entropies(int tid, uint Y, uint X, int blocks, bool singular, uint out_base)
{
    const float sigma_nn = c_float(C_SIGMA_NN);
    const double log2_2pie = c_double(C_LOG2_2PIE);
    for (int b = tid; b < blocks; b += THREADS) {
        precise float x0 = singular ? 0.0 * work[Y + uint(b)] : work[X + uint(b)] * work[Y + uint(b)];
        precise float v = f32_div(x0, float(N));
        for (int o = 1; o < N; o++) {
            const float xo = singular ? 0.0 : work[X + uint(o * blocks + b)];
            precise float p = xo * work[Y + uint(o * blocks + b)];
            v += f32_div(p, float(N));
        }
        float e = 0.0;
        for (int k = 0; k < N; k++) {
            const float L = sd_eig[k] < 0.0 ? 0.0 : sd_eig[k];
            precise float arg = L * v + sigma_nn;
            precise double sum = double(e) + (f64_log2(double(arg)) + log2_2pie);
            e = f32_from_f64(sum);
        }
        results[out_base + uint(blocks + b)] = v;
        results[out_base + uint(b)] = e;
    }
}

void main()
{
    const int tid = int(gl_LocalInvocationID.x);
    const uint z = gl_WorkGroupID.y;
    const int blocks = c_int(C_BLOCKS), blocks_x = c_int(C_BLOCKS_X), op_w = c_int(C_OP_W);
    const double eps = c_double(C_EPS);
    const uint base = speed_work(z);
    const uint K = base + cst[C_L_COV], F = base + cst[C_L_F];
    const uint Y = base + cst[C_L_Y], X = base + cst[C_L_X], RHS = base + cst[C_L_RHS];

    for (int e = tid; e < N * N; e += THREADS) A[e] = work[K + uint(e)];
    barrier();
    tridiagonalise(tid);
    eigenvalues(tid, eps);
    // Y: block b's sample at offset o.
    for (int e = tid; e < N * blocks; e += THREADS) {
        const int o = e / blocks, b = e % blocks;
        const int by = b / blocks_x, bx = b % blocks_x;
        work[Y + uint(e)] = work[F + uint((SPEED_BLOCK * by + o / SPEED_BLOCK) * op_w +
                                          SPEED_BLOCK * bx + o % SPEED_BLOCK)];
    }
    memoryBarrierBuffer();
    barrier();

    solve(tid, K, Y, X, RHS, blocks, eps);

    const bool singular = sh_singular != 0;
    const uint out_base = pc.result_base + z * cst[C_RESULT_FLOATS];
    block_entropies(tid, Y, X, blocks, singular, out_base);
    if (tid == 0) results[out_base + uint(2 * blocks)] = singular ? 1.0 : 0.0;
}
