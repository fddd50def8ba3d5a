/* SSIMULACRA2's score for AVX2 with FMA: ssimulacra2_score.c compiled with
 * the instruction set's flags (fmaf one instruction, the loops vectorised
 * by the compiler; contraction stays off, as everywhere in quale). */
#define SSIM2_SCORE_FN ssim2_score_rgb_avx2
#include "metrics/ssimulacra2/ssimulacra2_score.c"
