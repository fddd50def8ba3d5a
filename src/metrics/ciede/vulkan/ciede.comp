#version 450
// CIEDE2000's Vulkan twin: the frame's sum of deltaE of src/metrics/ciede.c,
// as src/cuda/ciede.cu computes it.  Workgroup (gx, gy) of CIEDE_THREADS
// invocations: invocation t takes column x = gx * CIEDE_THREADS + t of rows
// gy * rows ... and adds its pixels' deltaE in double, in row order; the
// workgroup adds its invocations' sums in a fixed tree and writes one
// double; the host adds those in workgroup order (ciede_vulkan.c).
//
// Every pixel is the reference's own arithmetic (ciede.h), operation for
// operation and type for type: the conversion to L*a*b* in double, rounded
// to float where the reference rounds, and CIEDE2000's float and double
// expressions as C evaluates them (a float operand of a double operation
// is converted first; float * float stays float).  Every floating-point
// value is precise.  The maths library is fp64.glsl's: pow, atan2, sin,
// cos and exp within about an ulp of the C library's, double division and
// sqrt corrected to the driver-independent result, float division and
// every rounding to float exact.  What remains is the C library's own
// last-bit rounding: a pixel's deltaE may differ from the CPU's in a last
// float bit, rarely, which moves the key by nothing near the tolerance.
//
// The chroma sample of a pixel is libvmaf's indexing as the reference
// reads it: the column and the rows ahead from the reference's own tables
// (uploaded once, one word per luma column), the row through
// ciede_vmaf_chroma_source() (4:2:2 reading past a plane into the next, or
// zero).  Pixels whose six samples are equal add +0 and are skipped.
#extension GL_GOOGLE_include_directive : require
#include "gpu/vulkan/common.glsl"
#include "gpu/vulkan/fp64.glsl"

#define CIEDE_THREADS 128u
// The rows-ahead field of a column's word that means libvmaf's zero padding
// (CIEDE_ROW_ZERO of ciede.h).
#define CIEDE_ROW_ZERO 3u

layout(local_size_x = CIEDE_THREADS) in;

layout(std430, binding = 0) readonly buffer Ring { uint ring_words[]; };
layout(std430, binding = 1) readonly buffer Frames { uint frame_words[]; };
// per luma column: chroma column | rows ahead << 30
layout(std430, binding = 2) readonly buffer Columns { uint columns[]; };
layout(std430, binding = 3) writeonly buffer Partials { double partials[]; };

layout(push_constant) uniform Push {
    double y_offset, y_scale, c_offset, c_scale; // CiedeConvert
    uint ref_offset[3]; // bytes; plane 0 in the ring, planes 1-2 in frames
    uint dist_offset[3];
    uint stride[3];
    uint width, height;  // the luma grid
    uint chroma_height;  // rows of a chroma plane
    uint row_shift;      // chroma row of luma row y: y >> row_shift
    uint rows;           // rows per workgroup
    uint bytes_per_sample;
    uint out_offset;     // this slot's first partial
    float powf_25_7;     // the C library's powf(25, 7)
} pc;

shared double sums[CIEDE_THREADS];

// ---- Y'CbCr to L*a*b* (ciede_lab) ---------------------------------------------------

struct Lab {
    float l, a, b;
};

// sRGB decoding to linear light (ciede_linearize).
double linearize(double c)
{
    if (c > 0.0392156862745098LF) { // 10. / 255.
        precise double base = (c + 0.055LF) * 0.9478672985781991LF; // * (1.0 / 1.055)
        return f64_pow(base, 2.4LF);
    }
    precise double linear = c * 0.07739938080495357LF; // * (1.0 / 12.92)
    return linear;
}

// The L*a*b* companding function, rounded to float (ciede_lab_f; the
// reference's cube root is pow(c, 1.0 / 3.0)).
float lab_f(double c)
{
    if (c > 0.008856451679035631LF) return f32_from_f64(f64_pow(c, 0.3333333333333333LF)); // 216 / 24389
    precise double v = (903.2962962962963LF * c + 16.0LF) * 0.008620689655172414LF; // kappa, 1 / 116
    return f32_from_f64(v);
}

Lab to_lab(uint sample_y, uint sample_u, uint sample_v)
{
    precise double y = (double(sample_y) - pc.y_offset) * pc.y_scale;
    precise double u = (double(sample_u) - pc.c_offset) * pc.c_scale;
    precise double v = (double(sample_v) - pc.c_offset) * pc.c_scale;

    // BT.709
    precise double r_in = y + 1.28033LF * v;
    precise double g_in = (y - 0.21482LF * u) - 0.38059LF * v;
    precise double b_in = y + 2.12798LF * u;
    precise double r = linearize(r_in), g = linearize(g_in), b = linearize(b_in);

    precise double x = (r * 0.4124564390896921LF + g * 0.357576077643909LF) + b * 0.18043748326639894LF;
    precise double yy = (r * 0.21267285140562248LF + g * 0.715152155287818LF) + b * 0.07217499330655958LF;
    precise double z = (r * 0.019333895582329317LF + g * 0.119192025881303LF) + b * 0.9503040785363677LF;

    // white point D65: * (1.0 / 0.95047), * (1.0 / 1.08883)
    precise double x_n = x * 1.0521110608435826LF, z_n = z * 0.9184170164304805LF;
    precise double fx = double(lab_f(x_n));
    precise double fy = double(lab_f(yy));
    precise double fz = double(lab_f(z_n));

    precise double l = 116.0LF * fy - 16.0LF;
    precise double a = 500.0LF * (fx - fy);
    precise double bb = 200.0LF * (fy - fz);
    return Lab(f32_from_f64(l), f32_from_f64(a), f32_from_f64(bb));
}

// ---- CIEDE2000 (ciede2000 and its helpers) ------------------------------------------

// x^7 for a float x, in double-double (x^2 is exact): the correctly rounded
// pow(x, 7.0) as hi + lo.
void pow7_dd(float xf, out double hi, out double lo)
{
    precise double x = double(xf);
    precise double x2 = x * x; // exact: 48 bits
    double x3, x3_err, x4, x4_err, p, p_err;
    two_prod(x2, x, x3, x3_err);
    two_prod(x2, x2, x4, x4_err);
    two_prod(x4, x3, p, p_err);
    precise double low = p_err + (x4 * x3_err + x4_err * x3);
    fast_two_sum(p, low, hi, lo);
}

// hi + lo (|lo| <= ulp(hi) / 2) rounded to float once: f32_from_f64(hi),
// unless hi is exactly halfway between two floats and lo lies beyond it.
float f32_from_dd(double hi, double lo)
{
    precise float f = f32_from_f64(hi);
    precise double diff = hi - double(f); // exact
    if (diff == 0.0LF || lo == 0.0LF || (lo > 0.0LF) != (diff > 0.0LF)) return f;
    precise float mag = abs(f);
    const bool away = (diff > 0.0LF) == (f > 0.0); // hi lies farther from 0 than f
    precise float other = away ? f32_next_up(mag) : f32_next_down(mag);
    precise double half_gap = abs(double(other) - double(mag)) * 0.5LF;
    if (abs(diff) != half_gap) return f;
    return f > 0.0 ? other : -other;
}

// powf(x, 7): x^7 correctly rounded to float.
float powf7(float x)
{
    double hi, lo;
    pow7_dd(x, hi, lo);
    return f32_from_dd(hi, lo);
}

// Hue angle in [0, 2 pi) of (a', b'), 0 for the neutral axis.
float hue(float b, float a_prime)
{
    if (b == 0.0 && a_prime == 0.0) return 0.0;
    precise float h = f32_from_f64(f64_atan2(double(b), double(a_prime)));
    if (h < 0.0) {
        precise double wrapped = double(h) + 6.283185307179586LF; // 2 pi
        h = f32_from_f64(wrapped);
    }
    return h;
}

// Hue difference h2 - h1 wrapped into [-pi, pi]; 0 where a chroma is 0.
float hue_delta(float c1, float c2, float h1, float h2)
{
    if (c1 == 0.0 || c2 == 0.0) return 0.0;
    precise float d = h2 - h1;
    precise float d_abs = abs(h1 - h2);
    if (double(d_abs) <= 3.141592653589793LF) return d;
    if (h2 <= h1) {
        precise double up = double(d) + 6.283185307179586LF;
        return f32_from_f64(up);
    }
    precise double down = double(d) - 6.283185307179586LF;
    return f32_from_f64(down);
}

// Mean hue, across the 0 / 2 pi seam where the hues are far apart.
float hue_mean(float h1, float h2)
{
    precise float sum = h1 + h2;
    precise float diff = h1 - h2;
    if (abs(double(diff)) > 3.141592653589793LF) {
        precise double mean = (double(sum) + 6.283185307179586LF) * 0.5LF; // / 2.0: exact
        return f32_from_f64(mean);
    }
    precise double mean = double(sum) * 0.5LF; // / 2.0: exact
    return f32_from_f64(mean);
}

// The hue weighting T.
float hue_weight(float hf)
{
    precise double h = double(hf);
    precise double a1 = h - 0.5235987755982988LF;      // pi / 6
    precise double a2 = 2.0LF * h;
    precise double a3 = 3.0LF * h + 0.10471975511965977LF; // pi / 30
    precise double a4 = 4.0LF * h - 1.0995574287564276LF;  // 7 pi / 20
    precise double t = ((1.0LF - 0.17LF * f64_cos(a1)) + 0.24LF * f64_cos(a2) + 0.32LF * f64_cos(a3)) -
                       0.20LF * f64_cos(a4);
    return f32_from_f64(t);
}

// The rotation term R_T, in float where the reference uses float.
float rotation(float c_bar_prime, float h_bar_prime)
{
    precise double h_deg_d = double(h_bar_prime) * 57.29577951308232LF; // 180 / pi
    precise float h_deg = f32_from_f64(h_deg_d);
    precise double d_d = (double(h_deg) - 275.0LF) * 0.04LF; // * (1.0 / 25.0)
    precise float d = f32_from_f64(d_d);
    precise float c7 = powf7(c_bar_prime);
    precise float c7_sum = c7 + pc.powf_25_7;
    precise float ratio = f32_div(c7, c7_sum);
    precise float minus_d2 = -(d * d);
    precise double theta_deg_d = 60.0LF * f64_exp(double(minus_d2));
    precise float theta_deg = f32_from_f64(theta_deg_d);
    precise double theta_d = double(theta_deg) * 0.017453292519943295LF; // pi / 180
    precise float theta = f32_from_f64(theta_d);
    precise double r = (-2.0LF * f64_sqrt(double(ratio))) * f64_sin(double(theta));
    return f32_from_f64(r);
}

// deltaE00 from colour 1 (reference) to colour 2 (distorted).
float ciede2000(Lab c1, Lab c2)
{
    const float k_l = 0.65, k_c = 1.0, k_h = 4.0;

    precise float dl_prime = c2.l - c1.l;
    precise float l_bar = (c1.l + c2.l) * 0.5; // / 2: exact
    precise double ch1_sq = double(c1.a) * double(c1.a) + double(c1.b) * double(c1.b);
    precise double ch2_sq = double(c2.a) * double(c2.a) + double(c2.b) * double(c2.b);
    precise float ch1 = f32_from_f64(f64_sqrt(ch1_sq));
    precise float ch2 = f32_from_f64(f64_sqrt(ch2_sq));
    precise float c_bar = (ch1 + ch2) * 0.5;

    // a' = a (1 + G), G = (1 - sqrt(c^7 / (c^7 + 25^7))) / 2; 25^7 is exact
    double c_bar7, c_bar7_lo;
    pow7_dd(c_bar, c_bar7, c_bar7_lo);
    precise double c_bar7_sum = c_bar7 + 6103515625.0LF;
    precise double g = 1.0LF - f64_sqrt(f64_div(c_bar7, c_bar7_sum));
    precise double a1_prime_d = double(c1.a) + double(c1.a * 0.5) * g;
    precise double a2_prime_d = double(c2.a) + double(c2.a * 0.5) * g;
    precise float a1_prime = f32_from_f64(a1_prime_d);
    precise float a2_prime = f32_from_f64(a2_prime_d);

    precise double c1p_sq = double(a1_prime) * double(a1_prime) + double(c1.b) * double(c1.b);
    precise double c2p_sq = double(a2_prime) * double(a2_prime) + double(c2.b) * double(c2.b);
    precise float c1_prime = f32_from_f64(f64_sqrt(c1p_sq));
    precise float c2_prime = f32_from_f64(f64_sqrt(c2p_sq));
    precise float c_bar_prime = (c1_prime + c2_prime) * 0.5;
    precise float dc_prime = c2_prime - c1_prime;

    precise float l50 = l_bar - 50.0;
    precise double l50_sq = double(l50) * double(l50);
    precise double s_l_d = 1.0LF + f64_div(0.015LF * l50_sq, f64_sqrt(20.0LF + l50_sq));
    precise float s_l = f32_from_f64(s_l_d);
    precise double s_c_d = 1.0LF + 0.045LF * double(c_bar_prime);
    precise float s_c = f32_from_f64(s_c_d);

    precise float h1_prime = hue(c1.b, a1_prime);
    precise float h2_prime = hue(c2.b, a2_prime);
    precise float dh_prime = hue_delta(ch1, ch2, h1_prime, h2_prime);
    precise float c12 = c1_prime * c2_prime;
    precise double dH_prime_d = (2.0LF * f64_sqrt(double(c12))) * f64_sin(double(dh_prime) * 0.5LF);
    precise float dH_prime = f32_from_f64(dH_prime_d);
    precise float h_bar_prime = hue_mean(h1_prime, h2_prime);
    precise float t = hue_weight(h_bar_prime);
    precise double s_h_d = 1.0LF + (0.015LF * double(c_bar_prime)) * double(t);
    precise float s_h = f32_from_f64(s_h_d);
    precise float r_t = rotation(c_bar_prime, h_bar_prime);

    precise float dl = f32_div(dl_prime, k_l * s_l);
    precise float dc = f32_div(dc_prime, k_c * s_c);
    precise float dh = f32_div(dH_prime, k_h * s_h);
    precise float cross_term = (r_t * dc) * dh;
    precise double total = ((double(dl) * double(dl) + double(dc) * double(dc)) + double(dh) * double(dh)) +
                           double(cross_term);
    return f32_from_f64(f64_sqrt(total));
}

// ---- the frame ------------------------------------------------------------------------------

uint luma_sample(bool reference, uint x, uint y)
{
    const uint bps = pc.bytes_per_sample;
    if (reference) return SAMPLE(ring_words, pc.ref_offset[0] + y * pc.stride[0] + x * bps, bps);
    return SAMPLE(frame_words, pc.dist_offset[0] + y * pc.stride[0] + x * bps, bps);
}

uint chroma_sample(bool reference, uint plane, uint row, uint col)
{
    const uint bps = pc.bytes_per_sample;
    const uint offset = reference ? pc.ref_offset[plane] : pc.dist_offset[plane];
    return SAMPLE(frame_words, offset + row * pc.stride[plane] + col * bps, bps);
}

// Chroma row `row` of plane `plane` (1 or 2) as libvmaf's buffer holds it
// (ciede_vmaf_chroma_source): the plane's own row, the Cr plane's for rows
// past the Cb plane, or nothing (false: zero padding) past the Cr plane.
bool vmaf_chroma_source(uint plane, uint row, out uint src_plane, out uint src_row)
{
    const uint ch = pc.chroma_height;
    src_plane = plane;
    src_row = row;
    if (row < ch) return true;
    if (plane == 1u && row - ch < ch) {
        src_plane = 2u;
        src_row = row - ch;
        return true;
    }
    return false;
}

// The deltaE of pixel (x, y), +0 where its samples are equal.
double pixel(uint x, uint y)
{
    const uint r_y = luma_sample(true, x, y), d_y = luma_sample(false, x, y);
    uint r_u = 0u, d_u = 0u, r_v = 0u, d_v = 0u;
    const uint word = columns[x], ahead = word >> 30, col = word & 0x3fffffffu;
    if (ahead != CIEDE_ROW_ZERO) {
        const uint row = (y >> pc.row_shift) + ahead;
        uint plane, src;
        if (vmaf_chroma_source(1u, row, plane, src)) {
            r_u = chroma_sample(true, plane, src, col);
            d_u = chroma_sample(false, plane, src, col);
        }
        if (vmaf_chroma_source(2u, row, plane, src)) {
            r_v = chroma_sample(true, plane, src, col);
            d_v = chroma_sample(false, plane, src, col);
        }
    }
    if (r_y == d_y && r_u == d_u && r_v == d_v) return 0.0LF;
    return double(ciede2000(to_lab(r_y, r_u, r_v), to_lab(d_y, d_u, d_v)));
}

void main()
{
    const uint t = gl_LocalInvocationID.x;
    const uint x = gl_WorkGroupID.x * CIEDE_THREADS + t;
    precise double sum = 0.0LF;
    if (x < pc.width) {
        const uint y0 = gl_WorkGroupID.y * pc.rows;
        for (uint y = y0; y < y0 + pc.rows && y < pc.height; y++) sum = sum + pixel(x, y);
    }
    sums[t] = sum;
    barrier();
    for (uint half_size = CIEDE_THREADS / 2u; half_size > 0u; half_size >>= 1) {
        if (t < half_size) {
            precise double pair = sums[t] + sums[t + half_size];
            sums[t] = pair;
        }
        barrier();
    }
    if (t == 0u) partials[pc.out_offset + gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = sums[0];
}
