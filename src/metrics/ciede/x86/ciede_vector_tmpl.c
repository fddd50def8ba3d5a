/*
 * CIEDE2000's kernels on SIMD vectors of CIEDE_LANES pixels, for the x86
 * instruction sets (ciede_avx2.c, ciede_avx512.c include this file): the
 * per-pixel arithmetic of ciede_tmpl.h instantiated on GCC vector types,
 * lane for lane the C reference's operations, so their colours and deltaE
 * are the C kernels' to the bit (tests/checkasm/ciede.c checks).
 *
 * The includer defines VECTOR_BYTES (vector.h: 4 or 8 pixels a vector)
 * and CIEDE_ISA(name), the name of this file's functions for its
 * instruction set.
 */
#include <stdint.h>
#include <string.h>

#include "metrics/ciede/ciede.h"
#include "metrics/common/x86/vector.h"

#define CIEDE_LANES (VECTOR_BYTES / 8)

typedef vec_f64 VD;
typedef vec_f32_half VF;
typedef uint64_t VU64 __attribute__((vector_size(VECTOR_BYTES)));
typedef uint32_t VU32 __attribute__((vector_size(VECTOR_BYTES / 2)));
typedef int64_t VI64 __attribute__((vector_size(VECTOR_BYTES)));
typedef int32_t VI32 __attribute__((vector_size(VECTOR_BYTES / 2)));
typedef uint16_t VU16 __attribute__((vector_size(VECTOR_BYTES / 4)));

#define CT(name) CIEDE_ISA(ciede_##name)
#define CT_FN static inline __attribute__((always_inline))

/* CIEDE_LANES samples as doubles */
static inline VD CT(samples)(VU16 v)
{
#if CIEDE_LANES == 8
    return (VD)_mm512_cvtepi32_pd(_mm256_cvtepu16_epi32((__m128i)v));
#else
    __m128i x = _mm_setzero_si128();
    memcpy(&x, &v, sizeof(v));
    return (VD)_mm256_cvtepi32_pd(_mm_cvtepu16_epi32(x));
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
#define CT_F2D(x) vec_widen(x)
#define CT_D2F(x) vec_narrow(x)
#define CT_SQRT(x) vec_sqrt_f64(x)
#define CT_SPLAT(c) CT(splat)(c)
#include "metrics/ciede/ciede_tmpl.h"

void CIEDE_ISA(ciede_colours)(const CiedeConvert *convert, const uint16_t *y, const uint16_t *u,
                              const uint16_t *v, float *l, float *a, float *b, unsigned n)
{
    for (unsigned i = 0; i < n; i += CIEDE_LANES) {
        /* the last vector reads samples of 0 past n and writes nothing
         * there */
        const unsigned count = n - i < CIEDE_LANES ? n - i : CIEDE_LANES;
        VU16 sy = { 0 }, su = { 0 }, sv = { 0 };
        memcpy(&sy, y + i, count * sizeof(uint16_t));
        memcpy(&su, u + i, count * sizeof(uint16_t));
        memcpy(&sv, v + i, count * sizeof(uint16_t));
        VF cl, ca, cb;
        CT(colour)(convert, CT(samples)(sy), CT(samples)(su), CT(samples)(sv), &cl, &ca, &cb);
        memcpy(l + i, &cl, count * sizeof(float));
        memcpy(a + i, &ca, count * sizeof(float));
        memcpy(b + i, &cb, count * sizeof(float));
    }
}

void CIEDE_ISA(ciede_delta_e)(const float *const ref[3], const float *const dist[3], float *out,
                              unsigned n)
{
    for (unsigned i = 0; i < n; i += CIEDE_LANES) {
        const unsigned count = n - i < CIEDE_LANES ? n - i : CIEDE_LANES;
        VF c[6] = { { 0 } };
        for (unsigned k = 0; k < 3; k++) {
            memcpy(&c[k], ref[k] + i, count * sizeof(float));
            memcpy(&c[3 + k], dist[k] + i, count * sizeof(float));
        }
        const VF e = CT(difference)(c[0], c[1], c[2], c[3], c[4], c[5]);
        memcpy(out + i, &e, count * sizeof(float));
    }
}
