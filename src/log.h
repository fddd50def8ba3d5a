/* One line per message, to the caller's callback or to stderr. */
#ifndef QUALE_SRC_LOG_H
#define QUALE_SRC_LOG_H

#include <stdarg.h>

#include "quale/quale.h"

/* Where a part of the library logs: the context's callback and level,
 * handed down so that the parts below the context (the backends, the
 * collector) log without knowing the context.  A message above max_level
 * is dropped; callback NULL: "quale: error: ..." on stderr.  A NULL sink:
 * stderr, every level. */
typedef struct LogSink {
    QualeLogCallback callback;
    void *cookie;
    enum QualeLogLevel max_level;
} LogSink;

void log_sink_vprint(const LogSink *sink, enum QualeLogLevel level, const char *fmt,
                     va_list args);
void log_sink_print(const LogSink *sink, enum QualeLogLevel level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif /* QUALE_SRC_LOG_H */
