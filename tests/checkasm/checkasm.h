/*
 * checkasm: every SIMD kernel against its C reference.
 *
 * Each metric with SIMD kernels has one file here (tests/checkasm/<metric>.c)
 * with a function listed in checkasm.c's table.  It fills its dsp table at
 * the C level and at every level this CPU has, and for every kernel that a
 * level replaces, calls both on the same inputs: random ones and edge fills
 * (all zero, all maximum), at 8 bits and at high bit depth.  Integer kernels
 * must give identical outputs, every kernel must leave its inputs untouched
 * and write nothing past its outputs.  A kernel that crashes (a fault, an
 * instruction the CPU lacks) is reported as such and ends its own test
 * only.  With --bench it also times both.
 *
 * usage: checkasm [--test NAME] [--seed N] [--bench] [--verbose]
 */
#ifndef QUALE_TESTS_CHECKASM_H
#define QUALE_TESTS_CHECKASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric_list.h"

/* The instruction set levels a dsp table is filled for: C first. */
typedef struct CheckasmLevel {
    const char *name;  /* "c", "avx2", "avx512" */
    unsigned flags;    /* QUALE_CPU_* given to the dsp init */
} CheckasmLevel;

/* The levels this CPU runs, C first; *count receives how many. */
const CheckasmLevel *checkasm_levels(unsigned *count);

/* Starts checking one kernel at one level; false when --test filters it
 * out.  name is the kernel ("vif_vertical_8"). */
bool checkasm_begin(const char *name, const CheckasmLevel *level);

/* Records a mismatch of the kernel begun last (printf-style detail); the
 * first few are printed. */
void checkasm_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Ends the kernel begun last: prints its line and counts it. */
void checkasm_end(void);

/* ---- inputs ---- */

/* Deterministic random numbers (xorshift128+), seeded by --seed. */
uint64_t checkasm_rand(void);
/* Uniform in [0, limit). */
uint32_t checkasm_rand_below(uint32_t limit);

enum CheckasmFill {
    CHECKASM_FILL_RANDOM,
    CHECKASM_FILL_ZERO,
    CHECKASM_FILL_MAX,
    CHECKASM_FILL_COUNT,
};
extern const char *const checkasm_fill_names[CHECKASM_FILL_COUNT];

/* Fills count samples of `bits` bits (1 byte each up to 8 bits, else 2). */
void checkasm_fill_samples(void *buf, size_t count, unsigned bits, enum CheckasmFill fill);

/* ---- guarded buffers: canaries around an allocation ---- */

/* A zeroed, 64-byte aligned buffer with canary bytes before and after. */
void *checkasm_alloc(size_t size);
/* Whether the canaries are intact; frees the buffer. */
bool checkasm_free(void *buf);

/* Whether [a, a + size) equals [b, b + size); on a difference records a
 * failure naming `what` and the first differing byte. */
bool checkasm_check_equal(const void *a, const void *b, size_t size, const char *what);

/* ---- --bench ---- */

bool checkasm_bench_enabled(void);
uint64_t checkasm_now_ns(void);
/* Records ns per call of the kernel begun last at its level, printed with
 * the speed-up over C by checkasm_end(). */
void checkasm_bench_record(double ns_per_call);

/* Times `call` (a statement) and records ns per call: enough repetitions
 * for about 20 ms, the median of 5 rounds. */
#define CHECKASM_BENCH(call)                                                    \
    do {                                                                        \
        if (!checkasm_bench_enabled()) break;                                   \
        unsigned reps_ = 1;                                                     \
        for (;;) {                                                              \
            const uint64_t t0_ = checkasm_now_ns();                             \
            for (unsigned r_ = 0; r_ < reps_; r_++) { call; }                   \
            if (checkasm_now_ns() - t0_ > 4000000 || reps_ > (1u << 24)) break; \
            reps_ *= 2;                                                         \
        }                                                                       \
        double rounds_[5];                                                      \
        for (unsigned k_ = 0; k_ < 5; k_++) {                                   \
            const uint64_t t0_ = checkasm_now_ns();                             \
            for (unsigned r_ = 0; r_ < reps_; r_++) { call; }                   \
            rounds_[k_] = (double)(checkasm_now_ns() - t0_) / reps_;            \
        }                                                                       \
        checkasm_bench_record(checkasm_median5(rounds_));                       \
    } while (0)

double checkasm_median5(double v[5]);

/* ---- the tests: one per file stem with SIMD kernels ---- */
/* checkasm_check_<stem>() in tests/checkasm/<stem>.c, for every stem the
 * metric list (src/meson.build) gives SIMD kernels */
#define DECLARE_CHECK(stem) void checkasm_check_##stem(void);
QUALE_CHECKASM(DECLARE_CHECK)
#undef DECLARE_CHECK

#endif /* QUALE_TESTS_CHECKASM_H */
