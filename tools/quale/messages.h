/*
 * The tool's messages on stderr: "quale: LEVEL: text" lines, the library's
 * log, and the progress line, kept whole by one lock.
 */
#ifndef QUALE_TOOLS_QUALE_MESSAGES_H
#define QUALE_TOOLS_QUALE_MESSAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "quale/quale.h"

enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

/* Who speaks.  The parts of a run spread over several GPUs (--gpu) each
 * open the inputs and a context; the first says what they all would, the
 * others only their errors.  A batch's pairs, scored side by side, start
 * their messages with the pair's name (label).  NULL: every message, with
 * no name. */
typedef struct Voice {
    bool muted;
    const char *label;
} Voice;

/* "quale: [<label>: ]<level>: <text>" on a line of its own. */
void say(const Voice *voice, const char *level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The library's log (QualeSettings.log), its cookie the run's Voice. */
void log_message(void *cookie, enum QualeLogLevel level, const char *message);

/* A path as messages name it ("standard input" for "-"). */
const char *shown(const char *path);

double now_seconds(void);

/* What was printed on standard output must arrive: a failed write (a full
 * disk, a closed pipe) is said, never an exit 0.  Returns the exit status. */
int stdout_written(const char *what);

/* The progress line: frames scored (not merely read), and when the frame
 * count is known from the files' sizes, the total and the time left. */
typedef struct Progress {
    bool enabled;
    double start, last;
    int64_t total; /* -1: not known (a pipe) */
    /* Where the sending thread's time went: waiting for the readers' next
     * frames, and in quale_send_pictures() (which waits for a free slot
     * when the GPU is behind).  Seconds. */
    double waiting_for_frames, sending;
} Progress;

void progress_update(Progress *p, const QualeContext *ctx, bool final);

#endif /* QUALE_TOOLS_QUALE_MESSAGES_H */
