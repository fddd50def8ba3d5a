/* IQA's row kernels (SSIM filters, products and terms, decimation) for
 * AVX2: 4 doubles per vector. */
#define VECTOR_BYTES 32
#define IQA_ISA(name) name##_avx2
#include "iqa_vector_tmpl.c"
