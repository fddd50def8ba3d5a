#version 450
// Float ADM's Vulkan twin, the decoupling of one level: at every sample of
// the scored region and one sample around it (as far as the band goes: the
// masking window's reach), float_adm.c's decouple_at(): the three
// quotients t / (o + eps), float_adm_decouple() (float_adm.h) and |x| / 30
// of both CSF-weighted parts (float_adm_by_30()), into the level's masks.
//
// The quotient is the reference's: where it divides by libvmaf's
// reciprocal (rcpss and one Newton step, x86), the reciprocal is the host
// CPU's own, from the table float_adm_reciprocal_table() made
// (float_adm_reciprocal_from_table()); elsewhere a division, here the
// double quotient rounded to float, which is the correctly rounded float
// quotient (Vulkan's float division need not be).  Every float and double
// result is `precise`; the reference's double steps are doubles
// (shaderFloat64).
#extension GL_GOOGLE_include_directive : require
#include "float_adm.glsl"

#define GROUP 64
layout(local_size_x = GROUP) in;

layout(std430, binding = 0) readonly buffer Bands { float bands[]; };
layout(std430, binding = 1) writeonly buffer Masks { float masks[]; };
layout(std430, binding = 2) readonly buffer Reciprocal { uint rcp_table[]; };

layout(push_constant) uniform Push {
    double gain_limit;  // adm_enhn_gain_limit
    double one_by_30;   // FLOAT_ADM_ONE_BY_30
    vec4 csf;           // the level's CSF weights h, v, d (w unused)
    float cos_1deg_sq;
    float eps;          // FLOAT_ADM_DIV_EPS
    uint use_table;     // 1: libvmaf's reciprocal; 0: divide
    uint rcp_shift;
    int col_lo;         // the decoupled region
    int row_lo;
    int col_hi;
    int row_hi;
    uint width;         // of the bands (their rows' length)
    uint plane_words;
} pc;

// float_adm_reciprocal_from_table().
float reciprocal(float d)
{
    const uint u = floatBitsToUint(d), sign = u & 0x80000000u;
    const uint e = (u >> 23) & 0xffu, m = u & 0x007fffffu;
    if (e == 0u) return uintBitsToFloat(sign | 0x7f800000u);
    if (e == 255u) return uintBitsToFloat(m != 0u ? u | 0x00400000u : sign);
    const uint t = rcp_table[m >> pc.rcp_shift];
    const int re = int((t >> 23) & 0xffu) + 127 - int(e);
    if (re <= 0) return uintBitsToFloat(sign);
    return uintBitsToFloat(sign | (uint(re) << 23) | (t & 0x007fffffu));
}

// float_adm.c's adm_div(): n times libvmaf's reciprocal of d refined by
// one Newton step, or n / d.
float adm_div(float n, float d)
{
    if (pc.use_table == 0u) {
        precise float q = float(double(n) / double(d));
        return q;
    }
    const float xi = reciprocal(d);
    precise float q = n * (xi + xi * (1.0 - d * xi));
    return q;
}

float by_30(float x)
{
    precise double v = pc.one_by_30 * double(abs(x));
    return float(v);
}

void main()
{
    const int j = pc.col_lo + int(gl_GlobalInvocationID.x);
    const int y = pc.row_lo + int(gl_WorkGroupID.y);
    if (j >= pc.col_hi || y >= pc.row_hi) return;
    const uint at = uint(y) * pc.width + uint(j);
    float o[3], t[3], rst[3];
    for (uint b = 0u; b < 3u; b++) {
        o[b] = bands[(BAND_REF + b) * pc.plane_words + at];
        t[b] = bands[(BAND_DIS + b) * pc.plane_words + at];
    }
    // float_adm_decouple()
    for (uint b = 0u; b < 3u; b++) {
        precise float divisor = o[b] + pc.eps;
        const float q = adm_div(t[b], divisor);
        const float k = q < 0.0 ? 0.0 : (q > 1.0 ? 1.0 : q);
        precise float r = k * o[b];
        rst[b] = r;
    }
    precise float ot_dp = o[0] * t[0] + o[1] * t[1];
    precise float o_mag_sq = o[0] * o[0] + o[1] * o[1];
    precise float t_mag_sq = t[0] * t[0] + t[1] * t[1];
    precise float lhs = ot_dp * ot_dp;
    precise float rhs = pc.cos_1deg_sq * o_mag_sq * t_mag_sq;
    const bool angle_flag = ot_dp >= 0.0 && lhs >= rhs;
    for (uint b = 0u; b < 3u; b++) {
        if (angle_flag && rst[b] > 0.0) {
            precise double g = double(rst[b]) * pc.gain_limit;
            rst[b] = float(g < double(t[b]) ? g : double(t[b]));
        }
        if (angle_flag && rst[b] < 0.0) {
            precise double g = double(rst[b]) * pc.gain_limit;
            rst[b] = float(g > double(t[b]) ? g : double(t[b]));
        }
        precise float add = t[b] - rst[b];
        precise float cr = pc.csf[b] * rst[b];
        precise float ca = pc.csf[b] * add;
        masks[(MASK_CSF_R + b) * pc.plane_words + at] = cr;
        masks[(MASK_CSF_A + b) * pc.plane_words + at] = ca;
        masks[(MASK_FLT_R + b) * pc.plane_words + at] = by_30(cr);
        masks[(MASK_FLT_A + b) * pc.plane_words + at] = by_30(ca);
    }
}
