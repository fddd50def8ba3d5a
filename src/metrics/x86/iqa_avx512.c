/* IQA's row kernels (SSIM filters, products and terms, decimation) for
 * AVX-512: 8 doubles per vector. */
#include <immintrin.h>

#define IQA_LANES 8
#define IQA_ISA(name) name##_avx512
#include "iqa_vector_tmpl.c"
