/* float_ansnr's kernels for AVX-512: 16 floats per vector, the sums of 16
 * rows at once. */
#define VECTOR_BYTES 64
#define ANSNR_ISA(name) name##_avx512
#include "float_ansnr_vector_tmpl.c"
