/* XPSNR's sums for AVX2 (xpsnr_tmpl.c, vectorised by the compiler). */
#define XPSNR_FN(name) xpsnr_##name##_avx2
#include "metrics/xpsnr/xpsnr_tmpl.c"
