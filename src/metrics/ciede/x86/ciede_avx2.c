/* CIEDE2000's kernels for AVX2: 4 pixels per vector of doubles. */
#define VECTOR_BYTES 32
#define CIEDE_ISA(name) name##_avx2
#include "ciede_vector_tmpl.c"
