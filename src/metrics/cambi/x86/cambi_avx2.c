/* CAMBI's kernels for AVX2: c-values of 8 samples per vector. */
#define VECTOR_BYTES 32
#define CAMBI_ISA(name) name##_avx2
#include "cambi_vector_tmpl.c"
