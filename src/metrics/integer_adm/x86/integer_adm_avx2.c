/* Integer ADM's kernels for AVX2: eight int32 lanes. */
#define VECTOR_BYTES 32
#define ADM_ISA(name) name##_avx2
#include "integer_adm_vector_tmpl.c"
