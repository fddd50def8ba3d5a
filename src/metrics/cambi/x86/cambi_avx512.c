/* CAMBI's kernels for AVX-512: c-values of 16 samples per vector. */
#define VECTOR_BYTES 64
#define CAMBI_ISA(name) name##_avx512
#include "cambi_vector_tmpl.c"
