/* float_ansnr's kernels for AVX2: 8 floats per vector, the sums of 8 rows
 * at once. */
#define VECTOR_BYTES 32
#define ANSNR_ISA(name) name##_avx2
#include "float_ansnr_vector_tmpl.c"
