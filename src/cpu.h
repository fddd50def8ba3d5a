/*
 * The CPU's instruction sets, for picking SIMD kernels at run time.
 *
 * Each metric with SIMD kernels keeps a table of function pointers (its
 * "dsp"), filled in init() from the C reference first and then, level by
 * level, from the widest set the context allows: the detected flags less
 * QualeSettings.cpumask.  The flags are libvmaf's, so --cpumask 24 (AVX2 and
 * AVX-512 off) means the same to both tools.
 */
#ifndef QUALE_SRC_CPU_H
#define QUALE_SRC_CPU_H

#include "quale/quale.h"

/* Whether the build has the x86 SIMD kernels (src/meson.build builds them
 * for x86_64): a metric's dsp init calls the per-ISA inits only then. */
#if defined(__x86_64__)
#define QUALE_X86_SIMD 1
#else
#define QUALE_X86_SIMD 0
#endif

/*
 * Fills a metric's dsp with its C kernels, then with the AVX2 and the
 * AVX-512 ones where cpu_flags allow them (a later level replaces the
 * earlier).  kernels(isa) is the metric's own macro: a compound literal of
 * its dsp whose entries are the kernels of that instruction set.
 */
#if QUALE_X86_SIMD
#define CPU_PICK_KERNELS(dsp, kernels, cpu_flags) \
    do {                                          \
        (dsp) = kernels(c);                       \
        if ((cpu_flags) & QUALE_CPU_AVX2) {       \
            (dsp) = kernels(avx2);                \
        }                                         \
        if ((cpu_flags) & QUALE_CPU_AVX512) {     \
            (dsp) = kernels(avx512);              \
        }                                         \
    } while (0)
#else
#define CPU_PICK_KERNELS(dsp, kernels, cpu_flags) \
    do {                                          \
        (void)(cpu_flags);                        \
        (dsp) = kernels(c);                       \
    } while (0)
#endif

/* What this CPU and its operating system can run (QUALE_CPU_* bits). */
unsigned cpu_flags_detect(void);

#endif /* QUALE_SRC_CPU_H */
