#include <stdio.h>
#include <time.h>

#include "common.h"
#include "log.h"

static const char *level_name(enum QualeLogLevel level)
{
    switch (level) {
    case QUALE_LOG_ERROR: return "error";
    case QUALE_LOG_WARNING: return "warning";
    case QUALE_LOG_INFO: return "info";
    case QUALE_LOG_DEBUG: return "debug";
    }
    return "log";
}

void log_sink_vprint(const LogSink *sink, enum QualeLogLevel level, const char *fmt,
                     va_list args)
{
    static const LogSink every_level = { NULL, NULL, QUALE_LOG_DEBUG };
    if (!sink) sink = &every_level;
    if (level > sink->max_level) return;
    char message[1024];
    vsnprintf(message, sizeof(message), fmt, args);
    if (sink->callback) {
        sink->callback(sink->cookie, level, message);
        return;
    }
    fprintf(stderr, "quale: %s: %s\n", level_name(level), message);
}

void log_sink_print(const LogSink *sink, enum QualeLogLevel level, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_sink_vprint(sink, level, fmt, args);
    va_end(args);
}

double quale_monotonic_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}
