/* CIEDE2000's kernels for AVX-512: 8 pixels per vector of doubles. */
#define VECTOR_BYTES 64
#define CIEDE_ISA(name) name##_avx512
#include "ciede_vector_tmpl.c"
