// Integer ADM's Vulkan twin, the per-sample steps of one level over the
// region the masking window reads (adm_rect_with_taps), exactly as
// decouple() and masking_planes() (src/metrics/integer_adm.c): the body of
// integer_adm_decouple.comp, and of integer_adm_decouple_f64.comp, which
// defines ADM_NATIVE for devices with shaderFloat64 and shaderInt64:
//  - the decoupling of the distorted details into the restored part (rst)
//    and the additive impairment (written over the distorted details), with
//    libvmaf's reciprocal table computed as the integer division it holds,
//    and the one-degree angle test's float and double roundings: with
//    ADM_NATIVE the device's conversions and double products (`precise`,
//    so that none is fused), otherwise carried out in integers
//    (common.glsl's SDouble);
//  - the CSF-weighted masking sums of both: around = sum of |csf| / 30,
//    centre = sum of |csf| / 15 - |csf| / 30, wrapping in 32 bits, for the
//    DLM (from the additive impairment) and for AIM (from the restored part).
// Level 0 narrows to int16 wherever libvmaf stores int16.  The enhancement
// gain's v * gain is libvmaf's double product, rounded as it rounds.
//
// Planes of the level (each plane_words words, rows of `stride`): 0..3 the
// reference's a, h, v, d; 4..7 the distorted's; 8..10 rst h, v, d; 11, 12
// around and centre of the DLM; 13, 14 those of AIM.
#include "gpu/vulkan/common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer Bands { int band[]; };

layout(push_constant) uniform Push {
    int left, top, right, bottom; // adm_rect_with_taps
    uint stride;
    uint plane_words;
    uint level0;
    uint skip_aim;
    uint csf[3];   // level 0: csf_q0; levels 1..3: csf_q32 of the scale
    uint cos_lo;   // cos_1deg_sq, as an SDouble
    uint cos_hi;
    int cos_e;
    uint gain_lo;  // adm_enhn_gain_limit, as an SDouble
    uint gain_hi;
    int gain_e;
    uint base;     // words: where the frame's region of Bands starts
} pc;

int narrow16(int v)
{
    return (v << 16) >> 16;
}

int abs_wrap(int v)
{
    return v < 0 ? int(0u - uint(v)) : v;
}

// u.v >= 0 and (u.v)^2 >= cos^2(1 deg) |u|^2 |v|^2 as libvmaf computes it:
// the three int64 converted to float, divided by 4096.0 in double, the
// products in double.
#ifdef ADM_NATIVE
double quarter_kilo_float(uvec2 v) // (double)(float)v / 4096.0: all exact but the float
{
    return double(float(int64_t(packUint2x32(v)))) * (1.0lf / 4096.0lf);
}

bool angle_within_1deg(uvec2 ot_dp, uvec2 o_mag_sq, uvec2 t_mag_sq)
{
    const double dp = quarter_kilo_float(ot_dp);
    const double cos_sq = sd_to_double(SDouble(uvec2(pc.cos_lo, pc.cos_hi), pc.cos_e));
    precise double dp_sq = dp * dp;
    precise double cos_o = cos_sq * quarter_kilo_float(o_mag_sq);
    precise double cos_o_t = cos_o * quarter_kilo_float(t_mag_sq);
    return dp >= 0.0lf && dp_sq >= cos_o_t;
}
#else
bool angle_within_1deg(uvec2 ot_dp, uvec2 o_mag_sq, uvec2 t_mag_sq)
{
    if (i64_is_negative(ot_dp)) return false;
    const SDouble dp = sd_ldexp(sd_from_u64(ot_dp, 24u), -12);
    const SDouble o = sd_ldexp(sd_from_u64(o_mag_sq, 24u), -12);
    const SDouble t = sd_ldexp(sd_from_u64(t_mag_sq, 24u), -12);
    const SDouble cos_sq = SDouble(uvec2(pc.cos_lo, pc.cos_hi), pc.cos_e);
    return !sd_lt(sd_mul(dp, dp), sd_mul(sd_mul(cos_sq, o), t));
}
#endif

// 2^30 / |o| with o's sign: libvmaf's div_lookup.
int reciprocal(uint mag, bool negative)
{
    const int r = int(1073741824u / mag);
    return negative ? -r : r;
}

// t / o in Q15, clamped to [0, 1].
int ratio_q15_level0(int o, int t)
{
    if (o == 0) return 32768;
    const uint mag = o < 0 ? uint(-o) : uint(o);
    const int k = int(i64_sar(u64_add(i64_mul(reciprocal(mag, o < 0), t), uvec2(16384u, 0u)), 15u).x);
    return clamp(k, 0, 32768);
}

int ratio_q15_level123(int o, int t)
{
    if (o == 0) return 32768;
    uint mag = o < 0 ? 0u - uint(o) : uint(o);
    uint shift = 0u;
    if (mag >= 32768u) {
        shift = uint(findMSB(mag)) - 14u;
        mag = ((mag + (1u << (shift - 1u))) >> shift) & 0xffffu;
    }
    uvec2 k = i64_mul(reciprocal(mag, false), t);
    if (o < 0) k = i64_neg(k);
    k = i64_sar(u64_add(k, i64_from_int(int(1u << (14u + shift)))), 15u + shift);
    if (i64_is_negative(k)) return 0;
    return k.y != 0u || k.x > 32768u ? 32768 : int(k.x);
}

// The restored part grown by the enhancement gain, never past t:
// (int32_t)(o > 0 ? min(g, t) : max(g, t)) with the double g = v * gain.
// v has o's sign (or is 0), so |g| = |v| * gain rounded, and whichever of
// g and t is kept fits an int32.
#ifdef ADM_NATIVE
int gain_limited(int v, int o, int t)
{
    const double gain = sd_to_double(SDouble(uvec2(pc.gain_lo, pc.gain_hi), pc.gain_e));
    precise double g = double(v) * gain;
    const double tb = double(t);
    return int(o > 0 ? (g < tb ? g : tb) : (g > tb ? g : tb));
}
#else
int gain_limited(int v, int o, int t)
{
    const SDouble gain = SDouble(uvec2(pc.gain_lo, pc.gain_hi), pc.gain_e);
    const SDouble g = sd_mul(sd_from_u32(v < 0 ? 0u - uint(v) : uint(v)), gain);
    if (o > 0) // g >= 0: g < t
        return t > 0 && sd_lt(g, sd_from_u32(uint(t))) ? int(sd_trunc_u64(g).x) : t;
    // g <= 0: g > t
    return t < 0 && sd_lt(g, sd_from_u32(0u - uint(t))) ? -int(sd_trunc_u64(g).x) : t;
}
#endif

// One orientation's CSF-weighted |x| / 30 and |x| / 15 - |x| / 30.
void masking_terms(int src, uint b, inout uint around, inout uint centre)
{
    int flt, ctr;
    if (pc.level0 != 0u) {
        const int add = b == 2u ? 65535 : 16384;
        const int shift = b == 2u ? 17 : 15;
        const int c = narrow16((int(pc.csf[b]) * src + add) >> shift);
        flt = narrow16((4369 * abs(c) + 2048) >> 12);
        ctr = narrow16((8738 * abs(c) + 2048) >> 12);
    } else {
        const int c = int(i64_sar(u64_add(i64_mul_iu(src, pc.csf[b]), uvec2(1u << 27, 0u)), 28u).x);
        const int m = abs_wrap(c);
        const uvec2 round_v = i64_from_int(int(0x80000000u));
        flt = int(u64_add(i64_mul(143165577, m), round_v).y);
        ctr = int(u64_add(i64_mul(286331153, m), round_v).y);
    }
    around += uint(flt);
    centre += uint(ctr) - uint(flt);
}

void main()
{
    const int j = pc.left + int(gl_GlobalInvocationID.x);
    const int i = pc.top + int(gl_WorkGroupID.y);
    if (j >= pc.right) return;
    const uint P = pc.plane_words;
    const uint x = pc.base + uint(i) * pc.stride + uint(j);
    const bool level0 = pc.level0 != 0u;

    const int oh = band[P + x], ov = band[2u * P + x];
    const int th = band[5u * P + x], tv = band[6u * P + x];
    const bool angle = angle_within_1deg(u64_add(i64_mul(oh, th), i64_mul(ov, tv)),
                                         u64_add(i64_mul(oh, oh), i64_mul(ov, ov)),
                                         u64_add(i64_mul(th, th), i64_mul(tv, tv)));
    int rst[3], add[3];
    for (uint b = 0u; b < 3u; b++) {
        const int o = band[(1u + b) * P + x], t = band[(5u + b) * P + x];
        const int k = level0 ? ratio_q15_level0(o, t) : ratio_q15_level123(o, t);
        int v = level0 ? narrow16((k * o + 16384) >> 15)
                       : int(i64_sar(u64_add(i64_mul(k, o), uvec2(16384u, 0u)), 15u).x);
        if (angle && k > 0 && o != 0) v = gain_limited(v, o, t);
        rst[b] = v;
        add[b] = level0 ? narrow16(t - v) : int(uint(t) - uint(v));
    }
    uint around = 0u, centre = 0u, around_aim = 0u, centre_aim = 0u;
    for (uint b = 0u; b < 3u; b++) {
        band[(8u + b) * P + x] = rst[b];
        band[(5u + b) * P + x] = add[b];
        masking_terms(add[b], b, around, centre);
        if (pc.skip_aim == 0u) masking_terms(rst[b], b, around_aim, centre_aim);
    }
    band[11u * P + x] = int(around);
    band[12u * P + x] = int(centre);
    band[13u * P + x] = int(around_aim);
    band[14u * P + x] = int(centre_aim);
}
