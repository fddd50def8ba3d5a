/* PSNR-HVS's block-row kernel for AVX2: 8 block positions per vector. */
#define VECTOR_BYTES 32
#define HVS_ISA(name) name##_avx2
#include "psnr_hvs_vector_tmpl.c"
