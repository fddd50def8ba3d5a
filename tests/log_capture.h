/*
 * A context's log for tests: the count of errors, the last message (any
 * level) and every error message, one a line.  Pass capture_log as the
 * settings' log callback and a LogCapture as its cookie.
 */
#ifndef QUALE_TESTS_LOG_CAPTURE_H
#define QUALE_TESTS_LOG_CAPTURE_H

#include <stdio.h>
#include <string.h>

#include "quale/quale.h"

typedef struct LogCapture {
    char last[1024];
    unsigned errors;
    char text[4096]; /* the errors */
} LogCapture;

static inline void capture_log(void *cookie, enum QualeLogLevel level, const char *message)
{
    LogCapture *cap = cookie;
    snprintf(cap->last, sizeof(cap->last), "%s", message);
    if (level != QUALE_LOG_ERROR) return;
    cap->errors++;
    const size_t len = strlen(cap->text);
    snprintf(cap->text + len, sizeof(cap->text) - len, "%s\n", message);
}

#endif /* QUALE_TESTS_LOG_CAPTURE_H */
