/*
 * Whether a raw video's first frame looks like another format than the one
 * it is read as, for the formats the file's size cannot tell apart
 * (swapped -w/-h, 1080p read as 720p, 10-bit read as 8-bit 4:4:4).
 */
#ifndef QUALE_TOOLS_RAW_CHECK_H
#define QUALE_TOOLS_RAW_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "quale/quale.h"

/* Opens path again as raw video of format and looks at its first frame;
 * true, with the reason in why, when it does not look like that format.
 * False for anything it cannot look at (a pipe, a y4m file, an error: the
 * run's own reader reports those). */
bool raw_check(const char *path, const QualeVideoFormat *format, char *why, size_t why_size);

#endif /* QUALE_TOOLS_RAW_CHECK_H */
