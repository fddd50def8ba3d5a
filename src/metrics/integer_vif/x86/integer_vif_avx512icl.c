/*
 * Integer VIF's kernels for Ice Lake's AVX-512 level: integer_vif_avx512.c
 * with VNNI's vpdpwssd (a 16-bit multiply-add into a 32-bit sum in one
 * instruction) for the filters.
 */
#define VIF_AVX512_VNNI 1
#include "integer_vif_avx512.c"
