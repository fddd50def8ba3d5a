/* PSNR-HVS's block-row kernel for AVX-512: 16 block positions per vector. */
#define VECTOR_BYTES 64
#define HVS_ISA(name) name##_avx512
#include "psnr_hvs_vector_tmpl.c"
