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

/* Whether the x86 SIMD kernels are built: src/meson.build builds them for
 * x86-64 (src/metrics/x86/). */
#if defined(__x86_64__)
#define QUALE_X86_SIMD 1
#else
#define QUALE_X86_SIMD 0
#endif

/* What this CPU and its operating system can run (QUALE_CPU_* bits). */
unsigned cpu_flags_detect(void);

#endif /* QUALE_SRC_CPU_H */
