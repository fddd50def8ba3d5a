#version 450
// Float ADM's Vulkan twin, the sums of one level's scored rows: the port
// of src/cuda/float_adm.cu's rows kernel.  At each scored sample, the
// masked restored part and additive impairment (float_adm.c's mask_at():
// |csf x| less the masking threshold of the other part, at least 0) and
// the CSF-weighted reference (den_row()), each cubed; each row's nine
// sums (FLOAT_ADM_SUM_* order) in float from its first scored column to
// its last, as the C reference sums them.  The host adds the rows in float
// in row order (float_adm_write_rows()).
//
// Workgroup x takes scored rows top + [x * ROWS, (x + 1) * ROWS), cut in
// segments of SEGMENT columns; per segment:
//   0: at each column, the nine values, into shared memory;
//   1: one invocation per row and sum adds the segment's values to the
//      row's float sum, in column order.
//
// The masking threshold is libvmaf's ADM_CM_THRESH_S_* sum
// (float_adm_cm_sum()): the 3x3 window of |x| / 30 (made by the
// decoupling), |x| / 15 of the centre in double, rows mirrored (-1 reads 1,
// n reads n - 1) and columns alike, in the reference's order.  Every float
// and double result is `precise`.
#extension GL_GOOGLE_include_directive : require
#include "float_adm.glsl"

#define SEGMENT 128
#define ROWS 2
#define SUMS 9
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Bands { float bands[]; };
layout(std430, binding = 1) readonly buffer Masks { float masks[]; };
layout(std430, binding = 2) writeonly buffer Rows { float rows[]; };

layout(push_constant) uniform Push {
    vec4 csf;          // the level's CSF weights h, v, d (w unused)
    double one_by_15;  // FLOAT_ADM_ONE_BY_15
    int left;          // the scored region
    int top;
    int right;
    int bottom;
    int width;         // of the bands
    int height;
    uint plane_words;
    uint bypass_cm;    // adm_bypass_cm
    uint out_offset;   // this level's row sums in Rows: SUMS floats a band row
} pc;

shared float vals[SUMS * ROWS * SEGMENT];

// float_adm_cm_sum() of one orientation: flt (|x| / 30) around, the
// centre's CSF value in the middle.
float cm_sum(uint flt, uint csf, uint up, uint mid, uint down, uint jl, uint j, uint jr)
{
    const uint f = flt * pc.plane_words;
    precise float sum = 0.0;
    sum += masks[f + up + jl];
    sum += masks[f + up + j];
    sum += masks[f + up + jr];
    sum += masks[f + mid + jl];
    precise double centre = double(sum) + pc.one_by_15 * double(abs(masks[csf * pc.plane_words + mid + j]));
    sum = float(centre);
    sum += masks[f + mid + jr];
    sum += masks[f + down + jl];
    sum += masks[f + down + j];
    sum += masks[f + down + jr];
    return sum;
}

// float_adm.c's mask_threshold(): the sums over h, v, d.
float threshold(uint flt, uint csf, uint up, uint mid, uint down, uint jl, uint j, uint jr)
{
    precise float thr = 0.0;
    for (uint b = 0u; b < 3u; b++) thr += cm_sum(flt + b, csf + b, up, mid, down, jl, j, jr);
    return thr;
}

// The nine values row m sums at column j.
void row_values(int j, int m, out float v[SUMS])
{
    const uint w = uint(pc.width);
    const int u = m == 0 ? 1 : m - 1, dn = m == pc.height - 1 ? m : m + 1;
    const uint jl = uint(j == 0 ? 1 : j - 1), jr = uint(j == pc.width - 1 ? pc.width - 1 : j + 1);
    const uint up = uint(u) * w, mid = uint(m) * w, down = uint(dn) * w;
    float thr_num = 0.0, thr_aim = 0.0;
    if (pc.bypass_cm == 0u) {
        thr_num = threshold(MASK_FLT_A, MASK_CSF_A, up, mid, down, jl, uint(j), jr);
        thr_aim = threshold(MASK_FLT_R, MASK_CSF_R, up, mid, down, jl, uint(j), jr);
    }
    for (uint b = 0u; b < 3u; b++) {
        precise float xr = abs(masks[(MASK_CSF_R + b) * pc.plane_words + mid + uint(j)]) - thr_num;
        precise float xa = abs(masks[(MASK_CSF_A + b) * pc.plane_words + mid + uint(j)]) - thr_aim;
        const float num = xr < 0.0 ? 0.0 : xr;
        const float aim = xa < 0.0 ? 0.0 : xa;
        precise float den = abs(pc.csf[b] * bands[(BAND_REF + b) * pc.plane_words + mid + uint(j)]);
        precise float num3 = num * num * num;
        precise float aim3 = aim * aim * aim;
        precise float den3 = den * den * den;
        v[b] = num3;
        v[3u + b] = aim3;
        v[6u + b] = den3;
    }
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const int m0 = pc.top + int(gl_WorkGroupID.x) * ROWS;
    const int segments = (pc.right - pc.left + SEGMENT - 1) / SEGMENT;
    // Invocations 0 .. SUMS ROWS - 1 sum row lid / SUMS's sum lid % SUMS.
    const int sum_row = int(lid) / SUMS, sum_k = int(lid) % SUMS;
    precise float acc = 0.0;

    for (int seg = 0; seg < segments; seg++) {
        const int x0 = pc.left + seg * SEGMENT, n = min(SEGMENT, pc.right - x0);
        // 0: the values; ROWS x SEGMENT is the workgroup, one sample each.
        {
            const int row = int(lid) / n, i = int(lid) % n;
            if (int(lid) < ROWS * n && m0 + row < pc.bottom) {
                float v[SUMS];
                row_values(x0 + i, m0 + row, v);
                for (int k = 0; k < SUMS; k++) vals[(k * ROWS + row) * SEGMENT + i] = v[k];
            }
        }
        barrier();
        // 1: the row sums, in column order.
        if (lid < uint(SUMS * ROWS) && m0 + sum_row < pc.bottom) {
            const int base = (sum_k * ROWS + sum_row) * SEGMENT;
            for (int i = 0; i < n; i++) acc += vals[base + i];
        }
        barrier();
    }
    if (lid < uint(SUMS * ROWS) && m0 + sum_row < pc.bottom)
        rows[pc.out_offset + uint(m0 + sum_row) * SUMS + uint(sum_k)] = acc;
}
