#include <stdio.h>

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
    if (!sink) {
        log_vprint(NULL, NULL, QUALE_LOG_DEBUG, level, fmt, args);
        return;
    }
    log_vprint(sink->callback, sink->cookie, sink->max_level, level, fmt, args);
}

void log_sink_print(const LogSink *sink, enum QualeLogLevel level, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_sink_vprint(sink, level, fmt, args);
    va_end(args);
}

void log_vprint(QualeLogCallback callback, void *cookie,
                enum QualeLogLevel max_level, enum QualeLogLevel level,
                const char *fmt, va_list args)
{
    if (level > max_level) return;
    char message[1024];
    vsnprintf(message, sizeof(message), fmt, args);
    if (callback) {
        callback(cookie, level, message);
        return;
    }
    fprintf(stderr, "quale: %s: %s\n", level_name(level), message);
}
