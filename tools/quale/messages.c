/*
 * The tool's messages (messages.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "messages.h"

/* stderr carries the progress line, the tool's messages and the library's
 * log (from worker threads too).  A lock keeps each line whole, and a
 * message first clears the progress line it would land on: no message
 * starts mid-line, and none leaves a blank line behind. */
static pthread_mutex_t stderr_lock = PTHREAD_MUTEX_INITIALIZER;

static bool progress_showing;

static void clear_progress_locked(void)
{
    if (!progress_showing) return;
    fputs("\r\033[K", stderr);
    progress_showing = false;
}

void say(const Voice *voice, const char *level, const char *fmt, ...)
{
    if (voice && voice->muted && strcmp(level, "error")) return;
    char text[4096];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    pthread_mutex_lock(&stderr_lock);
    clear_progress_locked();
    if (voice && voice->label) fprintf(stderr, "quale: %s: %s: %s\n", voice->label, level, text);
    else fprintf(stderr, "quale: %s: %s\n", level, text);
    fflush(stderr);
    pthread_mutex_unlock(&stderr_lock);
}

void log_message(void *cookie, enum QualeLogLevel level, const char *message)
{
    static const char *const names[] = {
        [QUALE_LOG_ERROR] = "error", [QUALE_LOG_WARNING] = "warning",
        [QUALE_LOG_INFO] = "info", [QUALE_LOG_DEBUG] = "debug",
    };
    say(cookie, (unsigned)level <= QUALE_LOG_DEBUG ? names[level] : "log", "%s", message);
}

/* A path as messages name it. */
const char *shown(const char *path)
{
    return strcmp(path, "-") ? path : "standard input";
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int stdout_written(const char *what)
{
    /* errno is the failed write's, also one before the flush */
    if (!fflush(stdout) && !ferror(stdout)) return 0;
    say(NULL, "error", "cannot write %s to standard output: %s", what, strerror(errno ? errno : EIO));
    return EXIT_RUN_FAILED;
}

void progress_update(Progress *p, const QualeContext *ctx, bool final)
{
    if (!p->enabled) return;
    const double t = now_seconds();
    if (!final && t - p->last < 0.25) return;
    p->last = t;
    const unsigned done = final ? quale_frame_count(ctx) : quale_frames_done(ctx);
    const double elapsed = t - p->start;
    const double fps = elapsed > 0 ? done / elapsed : 0.;
    char line[160];
    int n;
    if (p->total > 0 && !final) {
        n = snprintf(line, sizeof(line), "%u/%lld frames  %.1f fps", done, (long long)p->total, fps);
        if (fps > 0 && (int64_t)done < p->total) {
            const unsigned left = (unsigned)((double)(p->total - (int64_t)done) / fps + 0.5);
            if (left >= 3600)
                snprintf(line + n, sizeof(line) - (size_t)n, "  %u:%02u:%02u left", left / 3600,
                         left / 60 % 60, left % 60);
            else
                snprintf(line + n, sizeof(line) - (size_t)n, "  %u:%02u left", left / 60, left % 60);
        }
    } else {
        snprintf(line, sizeof(line), "%u frame%s  %.1f fps", done, done == 1 ? "" : "s", fps);
    }
    pthread_mutex_lock(&stderr_lock);
    fprintf(stderr, "\r%s\033[K%s", line, final ? "\n" : "");
    progress_showing = !final;
    fflush(stderr);
    pthread_mutex_unlock(&stderr_lock);
}
