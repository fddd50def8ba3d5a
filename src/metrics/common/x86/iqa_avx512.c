/* IQA's row kernels (SSIM filters, products and terms, decimation) for
 * AVX-512: 8 doubles per vector. */
#define VECTOR_BYTES 64
#define IQA_ISA(name) name##_avx512
#include "iqa_vector_tmpl.c"
