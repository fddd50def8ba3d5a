/* XPSNR's sums for AVX-512 (xpsnr_tmpl.c, vectorised by the compiler). */
#define XPSNR_FN(name) xpsnr_##name##_avx512
#include "metrics/xpsnr/xpsnr_tmpl.c"
