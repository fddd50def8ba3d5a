/* One line per message, to the caller's callback or to stderr. */
#ifndef QUALE_SRC_LOG_H
#define QUALE_SRC_LOG_H

#include <stdarg.h>

#include "quale/quale.h"

/* Formats and delivers a message unless level is above max_level.
 * callback NULL: "quale: error: ..." on stderr. */
void log_vprint(QualeLogCallback callback, void *cookie,
                enum QualeLogLevel max_level, enum QualeLogLevel level,
                const char *fmt, va_list args);

#endif /* QUALE_SRC_LOG_H */
