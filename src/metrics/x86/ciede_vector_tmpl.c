/*
 * CIEDE2000's row kernel on SIMD vectors of CIEDE_LANES pixels, for the x86
 * instruction sets (ciede_avx2.c, ciede_avx512.c include this file): the
 * per-pixel arithmetic of ciede_tmpl.h instantiated on GCC vector types,
 * lane for lane the C reference's operations, so its deltaE are the C
 * kernel's to the bit (tests/checkasm/ciede.c checks).
 *
 * The includer defines CIEDE_LANES (4 or 8) and CIEDE_ISA(name), the name
 * of this file's functions for its instruction set.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "metrics/ciede.h"

typedef double VD __attribute__((vector_size(8 * CIEDE_LANES)));
typedef float VF __attribute__((vector_size(4 * CIEDE_LANES)));
typedef uint64_t VU64 __attribute__((vector_size(8 * CIEDE_LANES)));
typedef uint32_t VU32 __attribute__((vector_size(4 * CIEDE_LANES)));
typedef int64_t VI64 __attribute__((vector_size(8 * CIEDE_LANES)));
typedef int32_t VI32 __attribute__((vector_size(4 * CIEDE_LANES)));
typedef uint16_t VU16 __attribute__((vector_size(2 * CIEDE_LANES)));
typedef int16_t VI16 __attribute__((vector_size(2 * CIEDE_LANES)));

#define CT(name) CIEDE_ISA(ciede_##name)
#define CT_FN static inline __attribute__((always_inline))

static inline VD CT(vsqrt)(VD x)
{
#if CIEDE_LANES == 8
    return (VD)_mm512_sqrt_pd((__m512d)x);
#elif CIEDE_LANES == 4
    return (VD)_mm256_sqrt_pd((__m256d)x);
#else
#error "CIEDE_LANES: 4 or 8"
#endif
}

static inline VD CT(splat)(double c)
{
    VD v;
    for (unsigned i = 0; i < CIEDE_LANES; i++) v[i] = c;
    return v;
}

#define CT_MD(c) ((VU64)(c))
#define CT_MF(c) ((VU32)(c))
#define CT_MD2MF(m) ((VU32)__builtin_convertvector((VI64)(m), VI32))
#define CT_BITS(x) ((VU64)(x))
#define CT_DOUBLE(u) ((VD)(u))
#define CT_FBITS(x) ((VU32)(x))
#define CT_FLOAT(u) ((VF)(u))
#define CT_F2D(x) __builtin_convertvector((x), VD)
#define CT_D2F(x) __builtin_convertvector((x), VF)
#define CT_SQRT(x) CT(vsqrt)(x)
#define CT_SPLAT(c) CT(splat)(c)
#include "metrics/ciede_tmpl.h"

/* CIEDE_LANES pixels: samples p[0..5] (reference Y', Cb, Cr, distorted
 * Y', Cb, Cr), deltaE to out. */
static inline __attribute__((always_inline)) void
CT(delta_e_lanes)(const CiedeConvert *convert, const uint16_t *const p[6], unsigned x,
                  float *out)
{
    VU16 v[6];
    for (unsigned k = 0; k < 6; k++) memcpy(&v[k], p[k] + x, sizeof(v[k]));
    VF l1, a1, b1, l2, a2, b2;
    CT(colour)(convert, __builtin_convertvector(v[0], VD), __builtin_convertvector(v[1], VD),
               __builtin_convertvector(v[2], VD), &l1, &a1, &b1);
    CT(colour)(convert, __builtin_convertvector(v[3], VD), __builtin_convertvector(v[4], VD),
               __builtin_convertvector(v[5], VD), &l2, &a2, &b2);
    const VF e = CT(delta_e)(l1, a1, b1, l2, a2, b2);
    const VI16 same = (v[0] == v[3]) & (v[1] == v[4]) & (v[2] == v[5]);
    const VF r = CT(zerof)((VU32)__builtin_convertvector(same, VI32), e);
    memcpy(out, &r, sizeof(r));
}

void CIEDE_ISA(ciede_delta_e_row)(const CiedeConvert *convert, const uint16_t *const ref[3],
                                  const uint16_t *const dist[3], float *delta_e, unsigned n,
                                  CiedeCache *cache)
{
    (void)cache;
    const uint16_t *const p[6] = { ref[0], ref[1], ref[2], dist[0], dist[1], dist[2] };
    unsigned x = 0;
    for (; x + CIEDE_LANES <= n; x += CIEDE_LANES) CT(delta_e_lanes)(convert, p, x, delta_e + x);
    if (x == n) return;

    /* the last pixels, with equal samples (deltaE +0) in the lanes past n */
    uint16_t tail[6][CIEDE_LANES];
    const uint16_t *const t[6] = { tail[0], tail[1], tail[2], tail[3], tail[4], tail[5] };
    float out[CIEDE_LANES];
    memset(tail, 0, sizeof(tail));
    for (unsigned k = 0; k < 6; k++) memcpy(tail[k], p[k] + x, (n - x) * sizeof(uint16_t));
    CT(delta_e_lanes)(convert, t, 0, out);
    memcpy(delta_e + x, out, (n - x) * sizeof(float));
}
