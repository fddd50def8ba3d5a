/* Integer ADM's kernels for AVX-512 (F, CD, BW, DQ, VL): sixteen int32 lanes. */
#define VECTOR_BYTES 64
#define ADM_ISA(name) name##_avx512
#include "integer_adm_vector_tmpl.c"
