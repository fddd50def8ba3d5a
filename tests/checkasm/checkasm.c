/* checkasm's driver: levels, random inputs, guarded buffers, reporting,
 * and recovery from a kernel that crashes. */
#include "checkasm.h"

#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu.h"
#include "metric_list.h"

typedef struct CheckasmTest {
    const char *name;
    void (*run)(void);
} CheckasmTest;

static void check_crash_recovery(void);

static const CheckasmTest tests[] = {
    /* only when named: checkasm's own recovery (tests/checkasm_crash.py);
     * first, so that the tests after it show the run going on */
    { "crash_recovery", check_crash_recovery },
    /* every file stem with SIMD kernels, from the metric list */
#define LIST_CHECK(stem) { #stem, checkasm_check_##stem },
    QUALE_CHECKASM(LIST_CHECK)
    { NULL, NULL },
};

static struct {
    const char *filter;
    bool bench;
    bool verbose;
    uint64_t state[2];
    CheckasmLevel levels[4];
    unsigned level_count;
    /* the kernel begun last */
    char name[64];
    const CheckasmLevel *level;
    unsigned failures;
    double ns;
    /* C's time of the kernel named c_name, for the speed-up */
    char c_name[64];
    double c_ns;
    unsigned checked, failed;
    /* where a crashing kernel's signal returns to: its test's start */
    sigjmp_buf crashed;
    volatile sig_atomic_t in_test;
} g;

const char *const checkasm_fill_names[CHECKASM_FILL_COUNT] = { "random", "zero", "max" };

const CheckasmLevel *checkasm_levels(unsigned *count)
{
    *count = g.level_count;
    return g.levels;
}

bool checkasm_begin(const char *name, const CheckasmLevel *level)
{
    if (g.filter && !strstr(name, g.filter)) return false;
    snprintf(g.name, sizeof(g.name), "%s", name);
    g.level = level;
    g.failures = 0;
    g.ns = 0;
    return true;
}

void checkasm_fail(const char *fmt, ...)
{
    if (g.failures++ < 5 || g.verbose) {
        va_list args;
        va_start(args, fmt);
        fprintf(stderr, "  %s %s: ", g.name, g.level->name);
        vfprintf(stderr, fmt, args);
        fputc('\n', stderr);
        va_end(args);
    }
}

void checkasm_end(void)
{
    g.checked++;
    if (g.failures) g.failed++;
    printf("  %-32s %-7s %s", g.name, g.level->name, g.failures ? "FAILED" : "ok");
    if (g.ns > 0) {
        if (!strcmp(g.level->name, "c")) {
            snprintf(g.c_name, sizeof(g.c_name), "%s", g.name);
            g.c_ns = g.ns;
            printf("  %10.1f ns", g.ns);
        } else if (!strcmp(g.c_name, g.name) && g.c_ns > 0) {
            printf("  %10.1f ns  %5.2fx", g.ns, g.c_ns / g.ns);
        } else {
            printf("  %10.1f ns", g.ns);
        }
    }
    putchar('\n');
}

uint64_t checkasm_rand(void)
{
    uint64_t s1 = g.state[0];
    const uint64_t s0 = g.state[1];
    g.state[0] = s0;
    s1 ^= s1 << 23;
    g.state[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
    return g.state[1] + s0;
}

uint32_t checkasm_rand_below(uint32_t limit)
{
    return limit ? (uint32_t)((checkasm_rand() >> 32) % limit) : 0;
}

void checkasm_fill_samples(void *buf, size_t count, unsigned bits, enum CheckasmFill fill)
{
    const uint32_t max = (1u << bits) - 1;
    for (size_t i = 0; i < count; i++) {
        const uint32_t v = fill == CHECKASM_FILL_ZERO ? 0
                         : fill == CHECKASM_FILL_MAX  ? max
                                                      : checkasm_rand_below(max + 1);
        if (bits <= 8) ((uint8_t *)buf)[i] = (uint8_t)v;
        else ((uint16_t *)buf)[i] = (uint16_t)v;
    }
}

/* Layout: [size_t size][pad to 64][64 canary bytes][data][64 canary bytes] */
enum { GUARD = 64, CANARY = 0xa5 };

void *checkasm_alloc(size_t size)
{
    unsigned char *base = aligned_alloc(64, 2 * GUARD + ((size + 2 * GUARD + 63) & ~(size_t)63));
    if (!base) {
        fprintf(stderr, "checkasm: out of memory\n");
        exit(1);
    }
    memcpy(base, &size, sizeof(size));
    unsigned char *data = base + 2 * GUARD;
    memset(base + GUARD, CANARY, GUARD);
    memset(data, 0, size);
    memset(data + size, CANARY, GUARD);
    return data;
}

bool checkasm_free(void *buf)
{
    if (!buf) return true;
    unsigned char *data = buf, *base = data - 2 * GUARD;
    size_t size;
    memcpy(&size, base, sizeof(size));
    bool intact = true;
    for (unsigned i = 0; i < GUARD; i++)
        intact &= base[GUARD + i] == CANARY && data[size + i] == CANARY;
    if (!intact) checkasm_fail("wrote outside its buffer of %zu bytes", size);
    free(base);
    return intact;
}

bool checkasm_check_equal(const void *a, const void *b, size_t size, const char *what)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < size; i++) {
        if (x[i] != y[i]) {
            checkasm_fail("%s differs at byte %zu of %zu (%02x, C %02x)", what, i, size, x[i], y[i]);
            return false;
        }
    }
    return true;
}

bool checkasm_bench_enabled(void)
{
    return g.bench;
}

uint64_t checkasm_now_ns(void)
{
    /* the thread's CPU time: on a machine shared with other work, the time
     * the kernel ran rather than the time it waited for a core */
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void checkasm_bench_record(double ns_per_call)
{
    g.ns = ns_per_call;
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double checkasm_median5(double v[5])
{
    qsort(v, 5, sizeof(*v), compare_double);
    return v[2];
}

/* A kernel that faults (a wild access, an instruction this CPU lacks, an
 * integer division by zero) ends its test, not the run: the handler jumps
 * back to the test's start, which reports the kernel begun last as
 * crashed, and the other tests still run (as dav1d's checkasm does). */
static void on_crash(int signo)
{
    if (!g.in_test) {
        signal(signo, SIG_DFL);
        raise(signo);
        return;
    }
    siglongjmp(g.crashed, signo);
}

static void catch_crashes(void)
{
    /* an alternate stack, so that even a stack overflow is reported */
    static unsigned char alt[1 << 16];
    const stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    const int signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };
    for (size_t i = 0; i < sizeof(signals) / sizeof(*signals); i++)
        sigaction(signals[i], &sa, NULL);
}

/* Runs a test; false if one of its kernels crashed (then reported). */
static bool run_test(const CheckasmTest *t)
{
    g.name[0] = '\0';
    g.level = NULL;
    const int signo = sigsetjmp(g.crashed, 1);
    if (signo == 0) {
        g.in_test = 1;
        t->run();
        g.in_test = 0;
        return true;
    }
    g.in_test = 0;
    g.checked++;
    g.failed++;
    printf("  %-32s %-7s CRASHED (%s)\n", g.name[0] ? g.name : t->name,
           g.level ? g.level->name : "-", strsignal(signo));
    return false;
}

/* The recovery's own check: a "kernel", begun like any other, that gets
 * the signal of a wild access (raised: the sanitizers would stop a real
 * one before the signal). */
static void check_crash_recovery(void)
{
    if (!g.filter || strcmp(g.filter, "crash_recovery")) return;
    if (!checkasm_begin("crash_recovery", &g.levels[0])) return;
    raise(SIGSEGV);
    checkasm_end();
}

static void add_level(const char *name, unsigned flags)
{
    g.levels[g.level_count++] = (CheckasmLevel){ name, flags };
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bench")) g.bench = true;
        else if (!strcmp(argv[i], "--verbose")) g.verbose = true;
        else if (!strcmp(argv[i], "--test") && i + 1 < argc) g.filter = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: checkasm [--test NAME] [--seed N] [--bench] [--verbose]\n");
            return 2;
        }
    }
    g.state[0] = seed ^ 0x9e3779b97f4a7c15u;
    g.state[1] = seed * 0xbf58476d1ce4e5b9u + 1;
    for (unsigned i = 0; i < 8; i++) checkasm_rand();

    const unsigned cpu = cpu_flags_detect();
    add_level("c", 0);
    if (cpu & QUALE_CPU_AVX2) add_level("avx2", cpu & (QUALE_CPU_SSE2 | QUALE_CPU_SSSE3 |
                                                       QUALE_CPU_SSE41 | QUALE_CPU_AVX2));
    if (cpu & QUALE_CPU_AVX512) add_level("avx512", cpu & ~QUALE_CPU_AVX512ICL);
    if (cpu & QUALE_CPU_AVX512ICL) add_level("avx512icl", cpu);

    printf("checkasm: seed %" PRIu64 ", levels:", seed);
    for (unsigned i = 0; i < g.level_count; i++) printf(" %s", g.levels[i].name);
    putchar('\n');
    catch_crashes();
    for (const CheckasmTest *t = tests; t->name; t++) {
        printf("%s\n", t->name);
        fflush(stdout);
        run_test(t);
    }
    printf("checkasm: %u kernel checks, %u failed\n", g.checked, g.failed);
    if (g.checked == 0 && !g.filter) {
        fprintf(stderr, "checkasm: no SIMD kernel was checked on this CPU\n");
        return 77;
    }
    return g.failed ? 1 : 0;
}
