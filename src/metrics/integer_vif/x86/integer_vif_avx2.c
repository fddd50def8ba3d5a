/* Integer VIF's kernels for AVX2: 16 columns a step. */
#define VECTOR_BYTES 32
#define VIF_ISA(name) name##_avx2
#define VIF_VNNI 0
#include "integer_vif_vector_tmpl.c"
