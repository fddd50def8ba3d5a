#version 450
// SpEED's Vulkan twin, step 4: K, the covariance of the 25 neighbourhood
// offsets.  Workgroup (q, z): entry q of the lower triangle of picture z's
// K (row by row), stored at both (a, b) and (b, a).  Its sum is the C
// reference's speed_cov_sum_c(), libvmaf's AVX-512 order: invocations 0-15
// run the 16 lanes of two 8-lane chains of fused multiply-adds (16 samples
// a step, then 8 once into the first chain), 16 the plain double sum of
// each row's rest; invocation 0 adds the chains lane by lane, then halves,
// quarters, the pair, then the rest.
#include "speed.glsl"

layout(local_size_x = 32) in;

shared double lanes[17];

// Offsets a >= b of entry q.
void entry_pair(int q, out int a, out int b)
{
    int row = 0;
    while ((row + 1) * (row + 2) / 2 <= q) row++;
    a = row;
    b = q - row * (row + 1) / 2;
}

void main()
{
    const int lane = int(gl_LocalInvocationID.x), q = int(gl_WorkGroupID.x);
    const uint z = gl_WorkGroupID.y;
    const int op_w = c_int(C_OP_W), w = c_int(C_SUB_W), h = c_int(C_SUB_H);
    int a, b;
    entry_pair(q, a, b);
    const uint base = speed_work(z);
    const uint fx = base + cst[C_L_F] + uint((a / SPEED_BLOCK) * op_w + a % SPEED_BLOCK);
    const uint fy = base + cst[C_L_F] + uint((b / SPEED_BLOCK) * op_w + b % SPEED_BLOCK);
    if (lane < 17) {
        const double mx = double(work[base + cst[C_L_MEANS] + uint(a)]);
        const double my = double(work[base + cst[C_L_MEANS] + uint(b)]);
        precise double acc = 0.0LF;
        for (int i = 0; i < h; i++) {
            const uint rx = fx + uint(i * op_w), ry = fy + uint(i * op_w);
            int j = 0;
            for (; j + 15 < w; j += 16) {
                if (lane < 16) {
                    precise double dx = double(work[rx + uint(j + lane)]) - mx;
                    precise double dy = double(work[ry + uint(j + lane)]) - my;
                    acc = f64_fma(dx, dy, acc);
                }
            }
            if (j + 7 < w) {
                if (lane < 8) {
                    precise double dx = double(work[rx + uint(j + lane)]) - mx;
                    precise double dy = double(work[ry + uint(j + lane)]) - my;
                    acc = f64_fma(dx, dy, acc);
                }
                j += 8;
            }
            if (lane == 16) {
                for (; j < w; j++) {
                    precise double dx = double(work[rx + uint(j)]) - mx;
                    precise double dy = double(work[ry + uint(j)]) - my;
                    acc = acc + dx * dy;
                }
            }
        }
        lanes[lane] = acc;
    }
    barrier();
    if (lane != 0) return;
    precise double t[8], u[4], v[2];
    for (int l = 0; l < 8; l++) t[l] = lanes[l] + lanes[8 + l];
    for (int k = 0; k < 4; k++) u[k] = t[k] + t[k + 4];
    for (int k = 0; k < 2; k++) v[k] = u[k] + u[k + 2];
    precise double sum = (v[0] + v[1]) + lanes[16];
    const float c = f32_from_f64(f64_div(sum, double(w * h)));
    const uint cov = base + cst[C_L_COV];
    work[cov + uint(a * SPEED_ELEMENTS + b)] = c;
    work[cov + uint(b * SPEED_ELEMENTS + a)] = c;
}
