/*
 * Integer VIF's kernels for AVX-512 (F, BW, DQ, VL): 32 columns a step.
 * integer_vif_avx512icl.c compiles this file again with VIF_AVX512_VNNI
 * for Ice Lake's level.
 */
#define VECTOR_BYTES 64
#if VIF_AVX512_VNNI
#define VIF_ISA(name) name##_avx512icl
#define VIF_VNNI 1
#else
#define VIF_ISA(name) name##_avx512
#define VIF_VNNI 0
#endif
#include "integer_vif_vector_tmpl.c"
