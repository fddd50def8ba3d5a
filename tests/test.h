/*
 * The smallest test harness: CHECK records a pass or a failure (with the
 * file, line and expression) and test_summary() prints "N passed, M failed"
 * and returns the exit status.
 */
#ifndef QUALE_TESTS_TEST_H
#define QUALE_TESTS_TEST_H

#include <stdio.h>
#include <string.h>

static unsigned test_passed, test_failed;

static inline void test_check(int ok, const char *file, int line, const char *what)
{
    if (ok) {
        test_passed++;
        return;
    }
    test_failed++;
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
}

#define CHECK(cond) test_check(!!(cond), __FILE__, __LINE__, #cond)
static inline int test_same_string(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

#define CHECK_STR(a, b) test_check(test_same_string((a), (b)), __FILE__, __LINE__, #a " == " #b)

static inline int test_summary(void)
{
    printf("%u passed, %u failed\n", test_passed, test_failed);
    return test_failed ? 1 : 0;
}

#endif /* QUALE_TESTS_TEST_H */
