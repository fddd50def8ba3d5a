/* CPU feature detection. */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* VAES (cpuid leaf 7, ECX bit 9): asked directly, as clang's
 * __builtin_cpu_supports() does not know it. */
static int cpu_has_vaes(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (c >> 9) & 1;
}
#endif

unsigned cpu_flags_detect(void)
{
    unsigned flags = 0;
#if defined(__x86_64__) || defined(__i386__)
    /* __builtin_cpu_supports asks cpuid and, for AVX and AVX-512, whether
     * the operating system saves the wider registers (xgetbv). */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse2")) flags |= QUALE_CPU_SSE2;
    if (__builtin_cpu_supports("ssse3")) flags |= QUALE_CPU_SSSE3;
    if (__builtin_cpu_supports("sse4.1")) flags |= QUALE_CPU_SSE41;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2"))
        flags |= QUALE_CPU_AVX2;
    /* Skylake-X's subset: F, CD, BW, DQ, VL (libvmaf's AVX512 level). */
    if ((flags & QUALE_CPU_AVX2) && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        flags |= QUALE_CPU_AVX512;
    /* Ice Lake's additions. */
    if ((flags & QUALE_CPU_AVX512) && __builtin_cpu_supports("avx512vnni") &&
        __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
        __builtin_cpu_supports("avx512bitalg") && __builtin_cpu_supports("avx512vpopcntdq") &&
        __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("gfni") &&
        cpu_has_vaes())
        flags |= QUALE_CPU_AVX512ICL;
#endif
    return flags;
}

unsigned quale_cpu_flags(void)
{
    return cpu_flags_detect();
}
