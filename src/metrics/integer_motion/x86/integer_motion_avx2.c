/* Integer motion's SAD kernels for AVX2: 16 columns a step. */
#define VECTOR_BYTES 32
#define MOTION_ISA(name) name##_avx2
#include "integer_motion_vector_tmpl.c"
