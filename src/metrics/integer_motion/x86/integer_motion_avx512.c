/* Integer motion's SAD kernels for AVX-512 (F, BW): 32 columns a step. */
#define VECTOR_BYTES 64
#define MOTION_ISA(name) name##_avx512
#include "integer_motion_vector_tmpl.c"
