/*
 * The fuzz targets' shared declarations.
 *
 * Each target is a function that takes one input and returns 0; it checks
 * what must hold for any input with FUZZ_CHECK, which aborts (a crash for
 * libFuzzer, a failed run for the replay).  Built with -DQUALE_LIBFUZZER a
 * target file also defines LLVMFuzzerTestOneInput (tests/fuzz/build.sh);
 * without it the functions link together into tests/fuzz_replay.c,
 * which runs them over the seed corpora and the saved crashers in the
 * normal test suite.
 */
#ifndef QUALE_TESTS_FUZZ_FUZZ_H
#define QUALE_TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int quale_fuzz_y4m(const uint8_t *data, size_t size);
int quale_fuzz_yuv(const uint8_t *data, size_t size);
int quale_fuzz_model(const uint8_t *data, size_t size);
int quale_fuzz_cli(const uint8_t *data, size_t size);
int quale_fuzz_pictures(const uint8_t *data, size_t size);
int quale_fuzz_output(const uint8_t *data, size_t size);
int quale_fuzz_decode(const uint8_t *data, size_t size);
int quale_fuzz_results(const uint8_t *data, size_t size);

static inline void fuzz_check_failed(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
    fflush(stderr);
    abort();
}

#define FUZZ_CHECK(cond) \
    ((cond) ? (void)0 : fuzz_check_failed(__FILE__, __LINE__, #cond))

#ifdef QUALE_LIBFUZZER
#define FUZZ_TARGET(fn)                                                        \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);              \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)               \
    {                                                                          \
        return fn(data, size);                                                 \
    }
#else
#define FUZZ_TARGET(fn)
#endif

/* An in-memory file of the input: a memfd, so that it is a regular file
 * (seekable, with a size) and has a path, /proc/self/fd/N.  Returns the
 * descriptor (close it) or -1. */
int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t path_size);

/* Whether every byte of s is printable ASCII: messages never carry control
 * characters or bytes of a damaged file. */
int fuzz_printable(const char *s);

#endif /* QUALE_TESTS_FUZZ_FUZZ_H */
