// Accurate floating-point arithmetic for shaders that must reproduce what a
// C reference computes in double (and in float): the same results, or
// within an ulp of a double, on every Vulkan driver.
//
// Why this exists: GLSL has no double exp, log, pow, sin, cos or atan, and
// its float ones are a few ulp off; Vulkan only promises that float
// division and sqrt are within 2.5-3 ulp, says nothing sharper for doubles
// than "at least single precision", and leaves the rounding of a
// conversion to a narrower type undefined.  What every device does do is
// add, subtract and multiply (float and double) correctly rounded.  So:
//   - conversions to float are rounded here, in integers (f32_from_f64);
//   - double division and sqrt take the driver's result and correct it by
//     its exact residual (f64_div, f64_sqrt); float division and sqrt are
//     settled exactly (f32_div, f32_sqrt_rn);
//   - exp, log, pow, sin, cos and atan2 are built from + - * only (range
//     reduction, Taylor polynomials, double-double where the error would
//     otherwise grow), within about 1 ulp of the correctly rounded value,
//     as the C library is.
// Every floating-point variable here is `precise` (SPIR-V NoContraction):
// without it a compiler may fuse a * b + c or reassociate, and the error-
// free transformations below (two_sum, two_prod) would silently lose their
// low parts.  A shader including this needs shaderFloat64.

// ---- rounding to float --------------------------------------------------------

// x rounded to float, to nearest with ties to even, for x in float's normal
// range (and 0); elsewhere the driver's conversion.
precise float f32_from_f64(double x)
{
    const uvec2 w = unpackDouble2x32(x);
    const uint sign = w.y & 0x80000000u;
    const int e = int((w.y >> 20) & 0x7ffu) - 1023;
    if (e < -126 || e > 127) return float(x);
    // 52 mantissa bits: keep the top 23, round on the other 29.
    uint m = ((w.y & 0xfffffu) << 3) | (w.x >> 29);
    const uint rest = w.x & 0x1fffffffu;
    const uint half_ulp = 0x10000000u;
    uint bits = (uint(e + 127) << 23) + m;
    if (rest > half_ulp || (rest == half_ulp && (bits & 1u) != 0u)) bits += 1u; // may carry into the exponent
    return uintBitsToFloat(sign | bits);
}

// An integer rounded to float as C's (float) does.
precise float f32_from_int(int v)
{
    return f32_from_f64(double(v));
}

precise float f32_next_up(float f) // f > 0, finite
{
    return uintBitsToFloat(floatBitsToUint(f) + 1u);
}

precise float f32_next_down(float f) // f > 0
{
    return uintBitsToFloat(floatBitsToUint(f) - 1u);
}

// ---- error-free transformations ------------------------------------------------

// a + b = s + e exactly.
void two_sum(double a, double b, out double s, out double e)
{
    precise double sum = a + b;
    precise double bb = sum - a;
    precise double err = (a - (sum - bb)) + (b - bb);
    s = sum;
    e = err;
}

// The same when |a| >= |b| (or a is 0).
void fast_two_sum(double a, double b, out double s, out double e)
{
    precise double sum = a + b;
    precise double err = b - (sum - a);
    s = sum;
    e = err;
}

// a * b = p + e exactly (Dekker: both halves of a 27-bit split multiply
// exactly), far from overflow and underflow.
void two_prod(double a, double b, out double p, out double e)
{
    precise double prod = a * b;
    precise double ca = 134217729.0LF * a;
    precise double a_hi = ca - (ca - a);
    precise double a_lo = a - a_hi;
    precise double cb = 134217729.0LF * b;
    precise double b_hi = cb - (cb - b);
    precise double b_lo = b - b_hi;
    precise double err = ((a_hi * b_hi - prod) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
    p = prod;
    e = err;
}

// ---- division and square root -----------------------------------------------------

// a / b: the driver's quotient, corrected by its residual a - q b (exact).
precise double f64_div(double a, double b)
{
    precise double q = a / b;
    double p, pe;
    two_prod(q, b, p, pe);
    precise double r = (a - p) - pe;
    precise double result = q + r / b;
    return result;
}

// sqrt(x), x >= 0: the driver's root, corrected by its residual x - y^2.
precise double f64_sqrt(double x)
{
    if (x == 0.0LF) return x;
    precise double y = sqrt(x);
    double p, pe;
    two_prod(y, y, p, pe);
    precise double r = (x - p) - pe;
    precise double result = y + r / (2.0LF * y);
    return result;
}

// The float range where the driver's float division and square root are
// within a few ulp (Vulkan: 2.5 ulp for a divisor in [2^-126, 2^126]).
const float F32_SAFE_LOW = 1.1754944e-38;
const float F32_SAFE_HIGH = 8.507059e+37;

// a / b in float, correctly rounded (C's float division), b != 0, both
// finite.  The candidate (the driver's float quotient; the double one
// where a float could be out of its accurate range) is checked against the
// midpoints to its neighbours, and stepped until it lies between them: a
// midpoint (25 bits) times b (24 bits) is exact in double, and no quotient
// of floats is ever a midpoint itself.
precise float f32_div(float a, float b)
{
    precise float mag_a = abs(a), mag_b = abs(b);
    const bool negative = ((floatBitsToUint(a) ^ floatBitsToUint(b)) >> 31) != 0u; // -0 too
    if (mag_a == 0.0) return negative ? -0.0 : 0.0;
    precise float q = mag_a / mag_b;
    if (!(mag_b >= F32_SAFE_LOW && mag_b <= F32_SAFE_HIGH && q >= F32_SAFE_LOW &&
          q <= F32_SAFE_HIGH))
        q = f32_from_f64(f64_div(double(mag_a), double(mag_b)));
    if (!(q >= F32_SAFE_LOW && q <= F32_SAFE_HIGH)) return negative ? -q : q; // inf, 0, tiny
    for (int i = 0; i < 8; i++) {
        precise double below = (double(q) + double(f32_next_down(q))) * 0.5LF;
        precise double above = (double(q) + double(f32_next_up(q))) * 0.5LF;
        precise double below_b = below * double(mag_b), above_b = above * double(mag_b);
        if (double(mag_a) < below_b) {
            q = f32_next_down(q);
        } else if (double(mag_a) > above_b) {
            q = f32_next_up(q);
        } else {
            break;
        }
    }
    return negative ? -q : q;
}

// sqrt(x) rounded to float, for a float x >= 0 (as a double) whose root is
// a normal float: what (float)sqrt((double)x) gives in C, double rounding
// being innocuous for a root.  The candidate (the driver's float root) is
// stepped until it lies between the midpoints to its neighbours, whose
// squares (50 bits) are exact; the square of a midpoint is never a float,
// so there is no tie.
precise float f32_sqrt_rn(double x)
{
    if (x == 0.0LF) return 0.0;
    const float xf = float(x);
    precise float f = sqrt(xf);
    if (!(xf >= F32_SAFE_LOW && xf <= F32_SAFE_HIGH)) f = f32_from_f64(f64_sqrt(x));
    for (int i = 0; i < 8; i++) {
        precise double below = (double(f) + double(f32_next_down(f))) * 0.5LF;
        precise double above = (double(f) + double(f32_next_up(f))) * 0.5LF;
        precise double below_sq = below * below, above_sq = above * above;
        if (x < below_sq) {
            f = f32_next_down(f);
        } else if (x > above_sq) {
            f = f32_next_up(f);
        } else {
            break;
        }
    }
    return f;
}

// 1 - m^2 u, its sign exact: m^2 (a midpoint squared, 50 bits) is exact,
// m^2 u is p + e exactly, and 1 - p is exact (p is near 1).
precise double f32_rsqrt_side(double m, float u)
{
    precise double m2 = m * m;
    double p, e;
    two_prod(m2, double(u), p, e);
    precise double d = (1.0LF - p) - e;
    return d;
}

// (float)(1.0 / sqrt((double)u)) as C computes it, for a float u in
// [2^-100, 2^100]: the float on the side of each neighbouring midpoint m
// where C's doubles put it.  1/sqrt(u) > m exactly when 1 - m^2 u > 0, and
// C's two roundings (the root's, the quotient's) move its value by at most
// 2^-52 relative, so a midpoint farther than 2^-49 relative (|1 - m^2 u| >
// 2^-48) is on the same side of both; a closer one (rare) takes C's own
// steps in correctly rounded doubles (f64_sqrt, f64_div).
precise float f32_rsqrt_c(float u)
{
    const double near = 3.552713678800501e-15LF; // 2^-48
    float c = inversesqrt(u);
    for (int i = 0; i < 8; i++) {
        precise double below = (double(c) + double(f32_next_down(c))) * 0.5LF;
        precise double above = (double(c) + double(f32_next_up(c))) * 0.5LF;
        const double side_below = f32_rsqrt_side(below, u), side_above = f32_rsqrt_side(above, u);
        if (abs(side_below) <= near || abs(side_above) <= near) break;
        if (side_below < 0.0LF) {
            c = f32_next_down(c);
        } else if (side_above > 0.0LF) {
            c = f32_next_up(c);
        } else {
            return c;
        }
    }
    return f32_from_f64(f64_div(1.0LF, f64_sqrt(double(u))));
}

// ---- exp and log --------------------------------------------------------------------

const double F64_LN2_HI = 0.6931471803691238LF;     // ln 2 to 32 bits: k * it is exact
const double F64_LN2_LO = 1.9082149292705877e-10LF; // ln 2 - F64_LN2_HI
const double F64_INV_LN2 = 1.4426950408889634LF;

// 2^k as a double, -1022 <= k <= 1023.
precise double f64_pow2(int k)
{
    return packDouble2x32(uvec2(0u, uint(k + 1023) << 20));
}

// exp(x + tail), |tail| <= ulp(x): x = k ln 2 + r, |r| <= ln 2 / 2 (the
// subtraction of k ln2_hi is exact), exp(r) by its Taylor series to r^13
// (truncation below 2^-57), 1 + r added exactly.
precise double f64_exp_tail(double x, double tail)
{
    if (x > 709.8LF) return packDouble2x32(uvec2(0u, 0x7ff00000u)); // +inf
    if (x < -745.2LF) return 0.0LF;
    precise double kd = floor(x * F64_INV_LN2 + 0.5LF);
    const int k = int(kd);
    precise double r_hi = x - kd * F64_LN2_HI;
    precise double r_lo = kd * F64_LN2_LO - tail;
    precise double r = r_hi - r_lo;
    precise double r_err = (r_hi - r) - r_lo; // what r lost
    precise double poly = 1.6059043836821613e-10LF;
    poly = poly * r + 2.08767569878681e-09LF;
    poly = poly * r + 2.505210838544172e-08LF;
    poly = poly * r + 2.755731922398589e-07LF;
    poly = poly * r + 2.7557319223985893e-06LF;
    poly = poly * r + 2.48015873015873e-05LF;
    poly = poly * r + 0.0001984126984126984LF;
    poly = poly * r + 0.001388888888888889LF;
    poly = poly * r + 0.008333333333333333LF;
    poly = poly * r + 0.041666666666666664LF;
    poly = poly * r + 0.16666666666666666LF;
    poly = poly * r + 0.5LF;
    precise double q = (r * r) * poly; // exp(r) - 1 - r
    double h, l;
    fast_two_sum(1.0LF, r, h, l);
    precise double low = l + (q + r_err * (1.0LF + r));
    precise double e = h + low;
    if (k > 1023) return (e * 2.0LF) * f64_pow2(k - 1);
    if (k < -1021) {
        precise double scaled = e * f64_pow2(k + 600);
        return scaled * f64_pow2(-600);
    }
    precise double result = e * f64_pow2(k);
    return result;
}

precise double f64_exp(double x)
{
    return f64_exp_tail(x, 0.0LF);
}

// log(x) = hi + lo for a normal x > 0, to about 2^-60: x = m 2^k with m in
// [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m - 1) / (m + 1) carried
// in double-double, the series in s^2 to s^22 (|s| < 0.172).
void f64_log_dd(double x, out double hi, out double lo)
{
    const uvec2 w = unpackDouble2x32(x);
    int k = int((w.y >> 20) & 0x7ffu) - 1023;
    precise double m = packDouble2x32(uvec2(w.x, (w.y & 0xfffffu) | 0x3ff00000u));
    if (m > 1.4142135623730951LF) {
        m = m * 0.5LF;
        k += 1;
    }
    precise double f = m - 1.0LF; // exact
    double u_hi, u_lo;
    fast_two_sum(2.0LF, f, u_hi, u_lo); // m + 1, exactly
    precise double s_hi = f / u_hi;
    double p, pe;
    two_prod(s_hi, u_hi, p, pe);
    precise double s_lo = (((f - p) - pe) - s_hi * u_lo) / u_hi;
    precise double z = s_hi * s_hi;
    precise double poly = 0.08695652173913043LF;
    poly = poly * z + 0.09523809523809523LF;
    poly = poly * z + 0.10526315789473684LF;
    poly = poly * z + 0.11764705882352941LF;
    poly = poly * z + 0.13333333333333333LF;
    poly = poly * z + 0.15384615384615385LF;
    poly = poly * z + 0.18181818181818182LF;
    poly = poly * z + 0.2222222222222222LF;
    poly = poly * z + 0.2857142857142857LF;
    poly = poly * z + 0.4LF;
    poly = poly * z + 0.6666666666666666LF;
    // log(m) = 2 s_hi + (2 s_lo + s_hi z poly); 2 s_hi is exact
    precise double log_m_lo = 2.0LF * s_lo + s_hi * (z * poly);
    precise double kd = double(k);
    precise double k_ln2 = kd * F64_LN2_HI, two_s = 2.0LF * s_hi; // both exact
    double h, l;
    two_sum(k_ln2, two_s, h, l);
    precise double low = l + (log_m_lo + kd * F64_LN2_LO);
    fast_two_sum(h, low, hi, lo);
}

const double F64_INV_LN2_LO = 2.0355273740931033e-17LF; // 1/ln 2 - F64_INV_LN2

// log2(x) for a double x, within about an ulp (as the C library's): 0 gives
// -inf, a negative x or NaN gives NaN, +inf gives +inf.  log(x) in
// double-double (f64_log_dd) times 1/ln 2 in double-double.
precise double f64_log2(double x)
{
    if (x == 0.0LF) return packDouble2x32(uvec2(0u, 0xfff00000u));
    if (!(x > 0.0LF)) return packDouble2x32(uvec2(0u, 0x7ff80000u));
    if ((unpackDouble2x32(x).y & 0x7ff00000u) == 0x7ff00000u) return x; // +inf
    precise double scaled = x;
    int shift = 0;
    if ((unpackDouble2x32(x).y & 0x7ff00000u) == 0u) { // subnormal: times 2^54
        scaled = x * 18014398509481984.0LF;
        shift = 54;
    }
    double hi, lo, p, pe;
    f64_log_dd(scaled, hi, lo);
    two_prod(hi, F64_INV_LN2, p, pe);
    precise double low = pe + (hi * F64_INV_LN2_LO + lo * F64_INV_LN2);
    precise double result = p + low;
    precise double unshifted = result - double(shift);
    return shift == 0 ? result : unshifted;
}

// ---- fused multiply-add ------------------------------------------------------------

// a + b rounded to odd: exact sums as they are, others to the neighbour
// of the nearest double whose last mantissa bit is 1.
precise double f64_add_round_odd(double a, double b)
{
    double s, e;
    two_sum(a, b, s, e);
    if (e == 0.0LF) return s;
    uvec2 w = unpackDouble2x32(s);
    if ((w.x & 1u) != 0u) return s;
    // s is even and e its error (s != 0): its neighbour on e's side
    const bool away = (e > 0.0LF) == (s > 0.0LF);
    w = away ? u64_add(w, uvec2(1u, 0u)) : u64_sub(w, uvec2(1u, 0u));
    return packDouble2x32(w);
}

// fma(a, b, c): a b + c rounded once, as C's fma() (GLSL's fma() may round
// twice on some drivers).  Boldo and Melquiond's emulation: the exact
// product uh + ul, th + tl = c + uh exactly, then th + RO(tl + ul) rounded
// to nearest is the correctly rounded sum of the three.  Far from overflow
// and underflow.
precise double f64_fma(double a, double b, double c)
{
    double uh, ul, th, tl;
    two_prod(a, b, uh, ul);
    two_sum(c, uh, th, tl);
    const double v = f64_add_round_odd(tl, ul);
    precise double r = th + v;
    return r;
}

// pow(x, y) for a normal x > 0 and y of moderate size: exp(y log x), the
// product in double-double, so that its error is not multiplied by y log x.
precise double f64_pow(double x, double y)
{
    double l_hi, l_lo, p, pe, h, l;
    f64_log_dd(x, l_hi, l_lo);
    two_prod(l_hi, y, p, pe);
    precise double low = pe + l_lo * y;
    fast_two_sum(p, low, h, l);
    return f64_exp_tail(h, l);
}

// ---- sin and cos --------------------------------------------------------------------

// x = n pi/2 + (r_hi + r_lo), |r| <= pi/4, for |x| < 2^20: pi/2 in three
// parts of 33, 33 and 53 bits, n times each of the first two exact.
int f64_reduce_pio2(double x, out double r_hi, out double r_lo)
{
    precise double nd = floor(x * 0.6366197723675814LF + 0.5LF);
    precise double r = x - nd * 1.5707963267341256LF; // exact
    precise double minus_p2 = -(nd * 6.077100506303966e-11LF); // exact
    double s, e;
    two_sum(r, minus_p2, s, e);
    precise double tail = e - nd * 2.0222662487959506e-21LF;
    fast_two_sum(s, tail, r_hi, r_lo);
    return int(nd);
}

// sin(r + t) and cos(r + t) on |r| <= pi/4, |t| <= ulp(r): Taylor series
// to r^19 and r^20 (truncation below 2^-60).
precise double f64_sin_kernel(double r, double t)
{
    precise double z = r * r;
    precise double poly = -8.22063524662433e-18LF;
    poly = poly * z + 2.8114572543455206e-15LF;
    poly = poly * z + -7.647163731819816e-13LF;
    poly = poly * z + 1.6059043836821613e-10LF;
    poly = poly * z + -2.505210838544172e-08LF;
    poly = poly * z + 2.7557319223985893e-06LF;
    poly = poly * z + -0.0001984126984126984LF;
    poly = poly * z + 0.008333333333333333LF;
    poly = poly * z + -0.16666666666666666LF;
    // sin(r + t) = sin r + t cos r, cos r ~ 1 - z / 2
    precise double result = r + ((r * z) * poly + (t - (0.5LF * z) * t));
    return result;
}

precise double f64_cos_kernel(double r, double t)
{
    double z, z_err;
    two_prod(r, r, z, z_err);
    precise double poly = 4.110317623312165e-19LF;
    poly = poly * z + -1.5619206968586225e-16LF;
    poly = poly * z + 4.779477332387385e-14LF;
    poly = poly * z + -1.1470745597729725e-11LF;
    poly = poly * z + 2.08767569878681e-09LF;
    poly = poly * z + -2.755731922398589e-07LF;
    poly = poly * z + 2.48015873015873e-05LF;
    poly = poly * z + -0.001388888888888889LF;
    poly = poly * z + 0.041666666666666664LF;
    // cos r = (1 - z / 2) + z^2 poly, 1 - z / 2 in double-double; cos(r +
    // t) = cos r - t sin r, sin r ~ r
    precise double minus_half_z = -0.5LF * z; // exact
    double h, l;
    two_sum(1.0LF, minus_half_z, h, l);
    precise double low = l + (((z * z) * poly - 0.5LF * z_err) - r * t);
    precise double result = h + low;
    return result;
}

// sin(x + quarter_turns pi/2): the kernel of the reduced argument's
// quadrant.
precise double f64_sin_turned(double x, int quarter_turns)
{
    double r, t;
    const int n = f64_reduce_pio2(x, r, t);
    switch ((n + quarter_turns) & 3) {
    case 0: return f64_sin_kernel(r, t);
    case 1: return f64_cos_kernel(r, t);
    case 2: return -f64_sin_kernel(r, t);
    default: return -f64_cos_kernel(r, t);
    }
}

precise double f64_sin(double x)
{
    return f64_sin_turned(x, 0);
}

precise double f64_cos(double x)
{
    return f64_sin_turned(x, 1);
}

// ---- atan2 ------------------------------------------------------------------------------

// atan(k / 8), k = 0 .. 8, as double-doubles.
const double F64_ATAN_HI[9] = double[9](0.0LF, 0.12435499454676144LF, 0.24497866312686414LF,
    0.35877067027057225LF, 0.4636476090008061LF, 0.5585993153435624LF, 0.6435011087932844LF,
    0.7188299996216245LF, 0.7853981633974483LF);
const double F64_ATAN_LO[9] = double[9](0.0LF, -3.1253241424539383e-18LF, 1.0698755618734451e-17LF,
    -2.4623815582638635e-17LF, 2.2698777452961687e-17LF, -5.4556305485916264e-18LF,
    1.5834785051444286e-17LF, -2.1478388444456983e-17LF, 3.061616997868383e-17LF);

// atan2(y, x) as C's (not both zero): u = min / max of |x|, |y| in
// double-double, atan(u) = atan(k / 8) + atan(t), t = (u - k/8) / (1 +
// u k/8), |t| < 1/16, by its series to t^15; then the octant.
precise double f64_atan2(double y, double x)
{
    precise double ax = abs(x), ay = abs(y);
    const bool swap = ay > ax;
    precise double num = swap ? ax : ay, den = swap ? ay : ax;
    double p, pe;
    precise double u_hi = num / den;
    two_prod(u_hi, den, p, pe);
    precise double u_lo = ((num - p) - pe) / den;
    const int k = int(floor(u_hi * 8.0LF + 0.5LF));
    precise double c = double(k) * 0.125LF;
    // t = (u - c) / (1 + c u): u_hi - c is exact (Sterbenz, or c = 0)
    precise double n_hi = u_hi - c;
    double cu, cu_err, d_hi, d_lo;
    two_prod(c, u_hi, cu, cu_err);
    two_sum(1.0LF, cu, d_hi, d_lo);
    precise double d_low = d_lo + (cu_err + c * u_lo);
    precise double t_hi = n_hi / d_hi;
    two_prod(t_hi, d_hi, p, pe);
    precise double t_lo = (((n_hi - p) - pe) + u_lo - t_hi * d_low) / d_hi;
    precise double z = t_hi * t_hi;
    precise double poly = -0.06666666666666667LF;
    poly = poly * z + 0.07692307692307693LF;
    poly = poly * z + -0.09090909090909091LF;
    poly = poly * z + 0.1111111111111111LF;
    poly = poly * z + -0.14285714285714285LF;
    poly = poly * z + 0.2LF;
    poly = poly * z + -0.3333333333333333LF;
    // atan(t_hi + t_lo) = t_hi + t_hi z poly + t_lo / (1 + z)
    double a_hi, a_lo;
    two_sum(F64_ATAN_HI[k], t_hi, a_hi, a_lo);
    precise double a_low = a_lo + (F64_ATAN_LO[k] + ((t_hi * z) * poly + (t_lo - t_lo * z)));
    fast_two_sum(a_hi, a_low, a_hi, a_lo);
    double s, e;
    precise double minus_a = -a_hi;
    if (swap) { // pi/2 - a
        two_sum(1.5707963267948966LF, minus_a, s, e);
        a_lo = e + (6.123233995736766e-17LF - a_lo);
        a_hi = s;
    }
    if (x < 0.0LF) { // pi - a
        minus_a = -a_hi;
        two_sum(3.141592653589793LF, minus_a, s, e);
        a_lo = e + (1.2246467991473532e-16LF - a_lo);
        a_hi = s;
    }
    precise double angle = a_hi + a_lo;
    // the sign of y, -0 included
    return (unpackDouble2x32(y).y & 0x80000000u) != 0u ? -angle : angle;
}
