/*
 * quale: the command-line tool.  Reads the two videos, feeds the library
 * frame by frame, writes the results in libvmaf's layouts.
 *
 * Exit status: 0 success, 1 a run that failed (bad input, I/O error,
 * device failure), 2 a usage error.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "align.h"
#include "cli.h"
#include "frame_plan.h"
#include "merge.h"
#include "report.h"
#include "output_file.h"
#include "prefetch.h"
#include "raw_check.h"
#include "quale/quale.h"

enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

/* ---- messages ----------------------------------------------------------- */

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

/* "quale: <level>: <text>" on a line of its own. */
static void say(const char *level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The parts of a run spread over several GPUs (--gpu) each open the
 * inputs and a context; the first says what they all would. */
static _Thread_local bool muted;
/* ... and reads its inputs with its share of the lanes one run would use:
 * on a 4-GPU host, 4 parts of 1 lane each read 1080p y4m from the page
 * cache in 1.81 s where 4 parts of 3 lanes took 2.35 to 2.62 s
 * (docs/benchmarks.md, "Every GPU of a host"). */
static _Thread_local unsigned lane_share = 1;

static bool quiet_level(const char *level)
{
    return strcmp(level, "error") != 0;
}

static void say(const char *level, const char *fmt, ...)
{
    if (muted && quiet_level(level)) return;
    char text[4096];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    pthread_mutex_lock(&stderr_lock);
    clear_progress_locked();
    fprintf(stderr, "quale: %s: %s\n", level, text);
    fflush(stderr);
    pthread_mutex_unlock(&stderr_lock);
}

static void log_message(void *cookie, enum QualeLogLevel level, const char *message)
{
    /* the cookie of a part that says only its errors (workers log too) */
    if (cookie && level != QUALE_LOG_ERROR) return;
    static const char *const names[] = {
        [QUALE_LOG_ERROR] = "error", [QUALE_LOG_WARNING] = "warning",
        [QUALE_LOG_INFO] = "info", [QUALE_LOG_DEBUG] = "debug",
    };
    say((unsigned)level <= QUALE_LOG_DEBUG ? names[level] : "log", "%s", message);
}

/* A path as messages name it. */
static const char *shown(const char *path)
{
    return strcmp(path, "-") ? path : "standard input";
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static const char *option_type_name(enum QualeOptionType t)
{
    switch (t) {
    case QUALE_OPTION_BOOL: return "bool";
    case QUALE_OPTION_INT: return "int";
    case QUALE_OPTION_DOUBLE: return "double";
    case QUALE_OPTION_CHOICE: return "choice";
    case QUALE_OPTION_STRING: return "string";
    }
    return "?";
}

static void print_backends(FILE *f, unsigned mask, bool json)
{
    static const enum QualeBackend all[] = { QUALE_BACKEND_CPU, QUALE_BACKEND_CUDA,
                                              QUALE_BACKEND_HIP, QUALE_BACKEND_VULKAN };
    bool first = true;
    for (unsigned b = 0; b < sizeof(all) / sizeof(all[0]); b++) {
        if (!(mask & (1u << all[b]))) continue;
        if (json) {
            fprintf(f, "%s", first ? "" : ", ");
            print_json_string(f, quale_backend_name(all[b]));
        } else {
            fprintf(f, "%s%s", first ? "" : " ", quale_backend_name(all[b]));
        }
        first = false;
    }
}

static void print_option_default(FILE *f, const QualeOptionInfo *o, bool json)
{
    if (o->type == QUALE_OPTION_BOOL) {
        fprintf(f, "%s", o->default_value != 0 ? "true" : "false");
    } else if (o->type == QUALE_OPTION_STRING) {
        /* A string option has no default: it is unset until given. */
        fprintf(f, "%s", json ? "null" : "unset");
    } else if (o->type == QUALE_OPTION_CHOICE) {
        const char *name = o->choices[(int)o->default_value];
        if (json) print_json_string(f, name);
        else fprintf(f, "%s", name);
    } else {
        fprintf(f, "%.17g", o->default_value);
    }
}

/* What was printed on standard output must arrive: a failed write (a full
 * disk, a closed pipe) is said, never an exit 0.  Returns the exit status. */
static int stdout_written(const char *what)
{
    /* errno is the failed write's, also one before the flush */
    if (!fflush(stdout) && !ferror(stdout)) return 0;
    say("error", "cannot write %s to standard output: %s", what, strerror(errno ? errno : EIO));
    return EXIT_RUN_FAILED;
}

static int list_features(bool json)
{
    FILE *f = stdout;
    const unsigned n = quale_metric_count();
    if (json) fprintf(f, "[");
    for (unsigned i = 0; i < n; i++) {
        QualeMetricInfo info;
        if (quale_metric_info(i, &info)) continue;
        if (json) {
            fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
            print_json_string(f, info.name);
            fprintf(f, ", \"keys\": [");
            for (unsigned k = 0; info.keys[k]; k++) {
                fprintf(f, "%s", k ? ", " : "");
                print_json_string(f, info.keys[k]);
            }
            fprintf(f, "], \"options\": [");
            for (unsigned o = 0; o < info.option_count; o++) {
                QualeOptionInfo opt;
                if (quale_metric_option(i, o, &opt)) continue;
                fprintf(f, "%s{\"name\": ", o ? ", " : "");
                print_json_string(f, opt.name);
                fprintf(f, ", \"type\": \"%s\", \"default\": ", option_type_name(opt.type));
                print_option_default(f, &opt, true);
                if (opt.choices) {
                    fprintf(f, ", \"choices\": [");
                    for (unsigned c = 0; opt.choices[c]; c++) {
                        fprintf(f, "%s", c ? ", " : "");
                        print_json_string(f, opt.choices[c]);
                    }
                    fprintf(f, "]");
                }
                fprintf(f, ", \"help\": ");
                print_json_string(f, opt.help ? opt.help : "");
                fprintf(f, "}");
            }
            fprintf(f, "], \"backends\": [");
            print_backends(f, info.backends, true);
            fprintf(f, "]}");
        } else {
            fprintf(f, "%s\n  keys:", info.name);
            for (unsigned k = 0; info.keys[k]; k++) fprintf(f, " %s", info.keys[k]);
            fprintf(f, "\n  backends: ");
            print_backends(f, info.backends, false);
            fprintf(f, "\n");
            for (unsigned o = 0; o < info.option_count; o++) {
                QualeOptionInfo opt;
                if (quale_metric_option(i, o, &opt)) continue;
                fprintf(f, "  option %s (%s, default ", opt.name, option_type_name(opt.type));
                print_option_default(f, &opt, false);
                fprintf(f, "): %s\n", opt.help ? opt.help : "");
            }
        }
    }
    fprintf(f, json ? "\n]\n" : "");
    return stdout_written("the metrics");
}

static int list_models(bool json)
{
    FILE *f = stdout;
    if (json) {
        fprintf(f, "{\"builtin\": [");
    } else {
        fprintf(f, "%-28s %-48s %-36s %s\n", "version", "for", "features", "range");
    }
    for (unsigned i = 0; quale_builtin_model(i); i++) {
        QualeBuiltinModelInfo info;
        if (quale_builtin_model_info(i, &info)) continue;
        char range[48] = "";
        if (info.score_min != info.score_max)
            snprintf(range, sizeof(range), "%g to %g", info.score_min, info.score_max);
        if (json) {
            fprintf(f, "%s\n  {\"version\": ", i ? "," : "");
            print_json_string(f, info.version);
            fprintf(f, ", \"condition\": ");
            print_json_string(f, info.condition);
            fprintf(f, ", \"features\": ");
            print_json_string(f, info.features);
            if (info.score_min != info.score_max)
                fprintf(f, ", \"range\": [%g, %g]", info.score_min, info.score_max);
            fprintf(f, ", \"bootstrap\": %s}", info.bootstrap ? "true" : "false");
        } else {
            fprintf(f, "%-28s %-48s %-36s %s\n", info.version, info.condition, info.features,
                    range);
        }
    }
    /* Any libvmaf-format model loads by path too. */
    if (json) fprintf(f, "\n], \"load_by_path\": true}\n");
    else fprintf(f, "\nAny libvmaf model file loads with -m path=FILE.\n");
    return stdout_written("the models");
}

static int list_devices(bool json)
{
    FILE *f = stdout;
    static const enum QualeBackend backends[] = { QUALE_BACKEND_CUDA, QUALE_BACKEND_HIP,
                                                  QUALE_BACKEND_VULKAN };
    if (json) fprintf(f, "{");
    for (unsigned b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
        QualeDeviceInfo devices[16];
        unsigned count = 0;
        char error[512];
        const int err = quale_list_devices(backends[b], devices, 16, &count, error, sizeof(error));
        const char *name = quale_backend_name(backends[b]);
        if (json) {
            fprintf(f, "%s\n  \"%s\": {\"devices\": [", b ? "," : "", name);
        } else {
            fprintf(f, "%s%s:", b ? "\n" : "", name);
            if (err) fprintf(f, " none (%s)\n", error);
            else if (!count) fprintf(f, " no device\n");
            else fprintf(f, "\n");
        }
        for (unsigned i = 0; !err && i < count && i < 16; i++) {
            const QualeDeviceInfo *d = &devices[i];
            if (json) {
                fprintf(f, "%s\n    {\"index\": %u, \"name\": ", i ? "," : "", d->index);
                print_json_string(f, d->name);
                fprintf(f, ", \"type\": \"%s\", \"memory_bytes\": %llu, \"default\": %s}",
                        quale_device_type_name(d->type), (unsigned long long)d->memory_bytes,
                        d->preferred ? "true" : "false");
            } else {
                fprintf(f, "  %u: %s (%s", d->index, d->name, quale_device_type_name(d->type));
                if (d->memory_bytes)
                    fprintf(f, ", %.1f GiB", (double)d->memory_bytes / (1024. * 1024. * 1024.));
                fprintf(f, ")%s%s\n", d->preferred ? ", the default" : "",
                        d->type == QUALE_DEVICE_SOFTWARE ? "; --backend auto skips it" : "");
            }
        }
        if (json) {
            fprintf(f, "%s]", count && !err ? "\n  " : "");
            if (err) {
                fprintf(f, ", \"error\": ");
                print_json_string(f, error);
            }
            fprintf(f, "}");
        }
    }
    if (json) fprintf(f, "\n}\n");
    return stdout_written("the devices");
}

static bool has_y4m_extension(const char *path)
{
    const size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".y4m");
}

/* .y4m files (by name) carry their own format; the others are raw yuv and
 * need -w -h -p -b, unless their first bytes say YUV4MPEG2 or name a
 * container (the reader then reads them as that).  So one input may be
 * .y4m and the other .yuv.  NULL: no raw format for path. */
static const QualeVideoFormat *raw_format_for(const CliSettings *s, const char *path)
{
    return has_y4m_extension(path) || !s->raw_given ? NULL : &s->raw;
}

/* The first lane of an input says what a user should know about it. */
static QualeVideoReader *open_input(const CliSettings *s, const char *path, const char *role,
                                    bool first_lane)
{
    const QualeVideoFormat *raw = raw_format_for(s, path);
    char error[512];
    QualeVideoReader *reader = NULL;
    const int err = quale_video_open(&reader, path, raw, error, sizeof(error));
    if (err) {
        say("error", "%s video: %s", role, error);
        const char *flag = strcmp(role, "reference") ? "-d" : "-r";
        if (err == -EBADMSG) {
            say("hint", "check -w/-h/-p/-b: they must be the raw video's width, height, "
                "chroma and bit depth");
        } else if (err == -EPROTONOSUPPORT) {
            say("hint", "decode it on the way in: ffmpeg -i %s -strict -1 -f yuv4mpegpipe - "
                "| quale %s - ...", path, flag);
        } else if (err == -ENODATA && !strcmp(path, "-")) {
            say("hint", "the program writing to quale failed or wrote nothing (ffmpeg writes "
                "10-bit YUV4MPEG2 only with -strict -1)");
        } else if (err == -EPROTO && !s->raw_given && !has_y4m_extension(path) &&
                   strstr(error, "not a YUV4MPEG2 file")) {
            /* A file that is there but is not y4m is likely raw yuv. */
            say("hint", "raw .yuv input needs -w, -h, -p and -b");
        }
        return NULL;
    }
    if (first_lane && raw && quale_video_is_y4m(reader))
        say("note", "%s is YUV4MPEG2: it is read with its own header's format; -w/-h/-p/-b "
            "are for raw video", shown(path));
    if (first_lane && s->raw_given && quale_video_codec(reader))
        say("note", "%s is compressed video (%s), decoded; -w/-h/-p/-b are for raw video",
            shown(path), quale_video_codec(reader));
    return reader;
}

/* One video, read by one or more lanes (each its own open of the file). */
typedef struct Input {
    const char *path;
    QualeVideoReader *lanes[PREFETCH_MAX_LANES];
    unsigned lane_count;
    bool on_gpu; /* decoded on the GPU into device pictures */
} Input;

/* Extra readers of a regular file share its reading (see prefetch.h); a
 * pipe or stdin has one. */
static unsigned lanes_for(const char *path)
{
    struct stat st;
    if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode)) return 1;
    /* QUALE_READ_LANES overrides the choice (tests use it on small machines). */
    const char *forced = getenv("QUALE_READ_LANES");
    if (forced && *forced) {
        const long n = strtol(forced, NULL, 10);
        return n < 1 ? 1 : n > PREFETCH_MAX_LANES ? PREFETCH_MAX_LANES : (unsigned)n;
    }
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const unsigned lanes = cores >= 12 ? 3 : cores >= 4 ? 2 : 1;
    return lanes > lane_share ? lanes / lane_share : 1;
}

static int open_lanes(const CliSettings *s, Input *in, const char *role)
{
    in->lanes[0] = open_input(s, in->path, role, true);
    if (!in->lanes[0]) return -1;
    in->lane_count = 1;
    /* A decoder's lanes would each decode the whole file. */
    const unsigned want = quale_video_codec(in->lanes[0]) ? 1 : lanes_for(in->path);
    for (unsigned i = 1; i < want; i++) {
        in->lanes[i] = open_input(s, in->path, role, false);
        if (!in->lanes[i]) return -1;
        in->lane_count++;
    }
    if (s->score_bitdepth) {
        QualeVideoFormat f;
        quale_video_get_format(in->lanes[0], &f);
        if (f.bitdepth > s->score_bitdepth) {
            say("error", "--score-bitdepth %u is below the %u bits of %s", s->score_bitdepth,
                f.bitdepth, shown(in->path));
            return -1;
        }
        for (unsigned i = 0; i < in->lane_count; i++) {
            if (quale_video_set_bitdepth(in->lanes[i], s->score_bitdepth)) {
                say("error", "%s", quale_video_error(in->lanes[i]));
                return -1;
            }
        }
    }
    return 0;
}

static void close_lanes(Input *in)
{
    for (unsigned i = 0; i < in->lane_count; i++) quale_video_close(&in->lanes[i]);
    in->lane_count = 0;
}

static bool check_formats(const CliSettings *s, const QualeVideoFormat *r, const QualeVideoFormat *d)
{
    if (r->width == d->width && r->height == d->height && r->chroma == d->chroma &&
        r->bitdepth == d->bitdepth)
        return true;
    say("error", "the videos differ: %s is %ux%u %s %u-bit, %s is %ux%u %s %u-bit",
        shown(s->reference), r->width, r->height, quale_chroma_name(r->chroma), r->bitdepth,
        shown(s->distorted), d->width, d->height, quale_chroma_name(d->chroma), d->bitdepth);
    return false;
}

/* The progress line: frames scored (not merely read), and when the frame
 * count is known from the files' sizes, the total and the time left. */
typedef struct Progress {
    bool enabled;
    double start, last;
    int64_t total; /* -1: not known (a pipe) */
} Progress;

static void progress_update(Progress *p, const QualeContext *ctx, bool final)
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

/* How frames_to_score() knows a video's frames. */
enum FrameCount {
    FRAMES_DECLARED, /* the sizes, and what containers declare: for progress */
    FRAMES_EXACT,    /* raw video's sizes only (-1 for others): for --frames */
    FRAMES_COUNTED,  /* as they will be read (quale_video_count_frames()) */
};

/* The frames the run will score, when the videos tell, counted as `how`
 * says. */
static int64_t frames_to_score(const CliSettings *s, Input inputs[2], enum FrameCount how)
{
    const unsigned skips[2] = { s->frame_skip_ref, s->frame_skip_dist };
    int64_t total = -1;
    for (int i = 0; i < 2; i++) {
        QualeVideoReader *video = inputs[i].lanes[0];
        /* y4m's size may count frames its FRAME lines make fewer: more
         * than there are, never fewer, which is all --frames may assume */
        const int64_t n = how == FRAMES_COUNTED ? quale_video_count_frames(video)
                          : how == FRAMES_EXACT && quale_video_codec(video) ? -1
                          : quale_video_frames_in_file(video);
        if (n < 0) return -1;
        const int64_t left = n > (int64_t)skips[i] ? n - (int64_t)skips[i] : 0;
        total = total < 0 || left < total ? left : total;
    }
    if (s->frame_count && total > (int64_t)s->frame_count) total = s->frame_count;
    return total;
}

/* Reads both videos and sends every frame pair; returns the frame count or
 * a negative value after printing why it stopped. */
static int score_frames(const CliSettings *s, QualeContext *ctx, Input inputs[2],
                        const QualeVideoFormat *format, Progress *progress)
{
    const unsigned skips[2] = { s->frame_skip_ref, s->frame_skip_dist };
    for (int i = 0; i < 2; i++) {
        /* Lane k starts at frame skip + k. */
        for (unsigned k = 0; k < inputs[i].lane_count; k++) {
            const int got = quale_video_skip(inputs[i].lanes[k], skips[i] + k);
            if (got < 0) {
                say("error", "%s", quale_video_error(inputs[i].lanes[k]));
                return -1;
            }
            if (got == 0 && k == 0 && skips[i]) {
                say("error", "%s has fewer than %u frames: --frame_skip_%s %u leaves none to "
                    "score", shown(inputs[i].path), skips[i], i ? "dist" : "ref", skips[i]);
                return -1;
            }
        }
    }

    /* Pictures read ahead per lane.  Every picture alive is memory the
     * kernel clears at its first touch and that leaves the caches: on a
     * machine of few cores, 2 ahead scored VMAF v1 at 1080p 10-bit 18%
     * faster than 4 (docs/benchmarks.md); larger ones keep 4. */
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const unsigned depth = cores >= 8 ? 4 : 2;
    Prefetcher *prefetch[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++) {
        if (prefetch_start(&prefetch[i], inputs[i].lanes, inputs[i].lane_count, ctx, format,
                           depth, inputs[i].on_gpu)) {
            say("error", "cannot start a reader thread");
            prefetch_stop(&prefetch[0]);
            return -1;
        }
    }
    int frames = 0;
    for (;;) {
        if (s->frame_count && (unsigned)frames >= s->frame_count) break;
        QualePicture pics[2];
        int got[2];
        for (int i = 0; i < 2; i++) got[i] = prefetch_next(prefetch[i], &pics[i]);
        if (got[0] != 1 || got[1] != 1) {
            for (int i = 0; i < 2; i++)
                if (got[i] == 1) quale_picture_unref(&pics[i]);
        }
        if (got[0] < 0 || got[1] < 0) {
            for (int i = 0; i < 2; i++)
                if (got[i] < 0) say("error", "%s", prefetch_error(prefetch[i]));
            frames = -1;
            break;
        }
        if (got[0] == 0 || got[1] == 0) {
            if (got[0] != got[1]) {
                const int ended = got[0] == 0 ? 0 : 1;
                const unsigned n = (unsigned)frames;
                say("warning", "%s ended after %u frame%s, before %s; scoring the %u frame%s "
                    "both have", shown(inputs[ended].path), n + skips[ended],
                    n + skips[ended] == 1 ? "" : "s", shown(inputs[1 - ended].path), n,
                    n == 1 ? "" : "s");
            }
            break;
        }
        if (quale_send_pictures(ctx, &pics[0], &pics[1])) {
            frames = -1;
            break;
        }
        frames++;
        progress_update(progress, ctx, false);
    }
    prefetch_stop(&prefetch[0]);
    prefetch_stop(&prefetch[1]);
    return frames;
}

/* Where the summary's pooled means come from: a run's context, or the
 * results of a part of it or of its merged parts. */
typedef struct SummarySource {
    const QualeContext *ctx;
    const QualeResults *results;
    const QualeModelInfo *models;
    unsigned model_count;
} SummarySource;

static int summary_pooled(const SummarySource *src, const char *key, const char *method,
                          double *value)
{
    return src->results ? quale_results_pooled_by(src->results, key, method, value)
                        : quale_feature_pooled_by(src->ctx, key, method, value);
}

static int summary_mean(const SummarySource *src, const char *key, double *mean)
{
    return summary_pooled(src, key, "mean", mean);
}

static void print_summary(FILE *f, const CliSettings *s, const SummarySource *src)
{
    const unsigned models = s->no_prediction ? 0 : src->model_count;
    for (unsigned i = 0; i < models; i++) {
        const QualeModelInfo info = src->models[i];
        double mean;
        /* --pool: FFmpeg's pool=, each method on a line of its own */
        for (unsigned m = 0; m < s->pool_count; m++) {
            double v;
            if (summary_pooled(src, info.name, s->pools[m], &v)) continue;
            if (strcmp(s->pools[m], "mean"))
                fprintf(f, "%s (%s): %f\n", info.label, s->pools[m], v);
            else fprintf(f, "%s: %f\n", info.label, v);
        }
        if (s->pool_count || summary_mean(src, info.name, &mean)) continue;
        /* libvmaf's summary: the mean of every model, then for a bootstrap
         * collection its bagged score and confidence interval. */
        fprintf(f, "%s: %f\n", info.label, mean);
        if (!info.bootstrap) continue;
        char key[256];
        double bagging = 0, lo = 0, hi = 0, stddev = 0;
        snprintf(key, sizeof(key), "%s_bagging", info.name);
        summary_mean(src, key, &bagging);
        snprintf(key, sizeof(key), "%s_ci_p95_lo", info.name);
        summary_mean(src, key, &lo);
        snprintf(key, sizeof(key), "%s_ci_p95_hi", info.name);
        summary_mean(src, key, &hi);
        snprintf(key, sizeof(key), "%s_stddev", info.name);
        summary_mean(src, key, &stddev);
        fprintf(f, "%s: %f, ci.p95: [%f, %f], stddev: %f\n", info.label, bagging, lo, hi, stddev);
    }
    if (models) return;
    /* Metrics only: the mean of every key. */
    const unsigned keys = src->results ? quale_results_key_count(src->results)
                                       : quale_feature_count(src->ctx);
    for (unsigned k = 0; k < keys; k++) {
        const char *name = src->results ? quale_results_key_name(src->results, k)
                                        : quale_feature_name(src->ctx, k);
        double mean;
        if (!summary_mean(src, name, &mean)) fprintf(f, "%s: %f\n", name, mean);
    }
}

typedef struct ResultsOutput {
    const QualeContext *ctx;
    enum QualeOutputFormat format;
    QualeOutputOptions options;
} ResultsOutput;

/* What was done to the inputs, for the output file (QualeOutputNote). */
typedef struct InputNotes {
    QualeOutputNote note[12];
    char text[12][192];
    unsigned count;
} InputNotes;

static void note_add(InputNotes *n, const char *name, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void note_add(InputNotes *n, const char *name, const char *format, ...)
{
    if (n->count == sizeof(n->note) / sizeof(n->note[0])) return;
    va_list ap;
    va_start(ap, format);
    vsnprintf(n->text[n->count], sizeof(n->text[0]), format, ap);
    va_end(ap);
    n->note[n->count] = (QualeOutputNote){ name, n->text[n->count] };
    n->count++;
}

static int format_results(void *cookie, FILE *f)
{
    const ResultsOutput *out = cookie;
    return quale_write_output(out->ctx, f, out->format, &out->options);
}

/* Writes the results (output_file.h: whole or not at all, an existing
 * file keeping its mode, owner and links). */
static int write_results(const CliSettings *s, const ResultsOutput *out)
{
    return output_file_write(s->output, format_results, (void *)out) ? EXIT_RUN_FAILED : 0;
}

/* A model or metric the library refused: what was asked is wrong (a usage
 * error: an unknown name, a bad option, a model file that is not there or
 * not a model), unless the system failed. */
static int configuration_status(int err)
{
    return err == -ENOMEM || err == -EIO ? EXIT_RUN_FAILED : EXIT_USAGE;
}

static void hint_gpu(const CliSettings *s)
{
    /* Said once, and only where it helps: an NVIDIA driver is loaded, the
     * build has CUDA, and the user chose nothing. */
    if (s->backend_given || s->quiet || !quale_backend_built(QUALE_BACKEND_CUDA) ||
        access("/proc/driver/nvidia/gpus", F_OK))
        return;
    say("note", "this machine has an NVIDIA GPU: --backend cuda scores on it, with the same "
        "numbers");
}

/* --align auto: the offset found becomes skips of the reference or the
 * distorted frames, said in one line. */
static int apply_alignment(CliSettings *s)
{
    AlignResult a;
    char error[512];
    if (align_find(s->reference, s->distorted, raw_format_for(s, s->reference),
                   raw_format_for(s, s->distorted), s->frame_skip_ref,
                   s->frame_skip_dist, s->align_window, &a, error, sizeof(error))) {
        say("error", "--align auto: %s", error);
        return -1;
    }
    if (a.offset > 0) s->frame_skip_dist += (unsigned)a.offset;
    else s->frame_skip_ref += (unsigned)-a.offset;
    snprintf(s->align_note, sizeof(s->align_note), "auto: offset %+d frames (frame_skip_ref %u, "
             "frame_skip_dist %u), luma PSNR %.2f dB (%.2f dB unshifted), window %u", a.offset,
             s->frame_skip_ref, s->frame_skip_dist, a.psnr, a.psnr_unshifted, s->align_window);
    if (a.offset == 0)
        say("note", "--align auto: the videos are aligned (luma PSNR %.2f dB; offsets to %u "
            "frames either way tried)", a.psnr, s->align_window);
    else
        say("note", "--align auto: the %s starts %d frame%s later than the %s (luma PSNR %.2f dB "
            "there, %.2f dB unshifted): skipping %d %s frame%s (--frame_skip_%s %u)",
            a.offset > 0 ? "reference" : "distorted video", abs(a.offset),
            abs(a.offset) == 1 ? "" : "s", a.offset > 0 ? "distorted video" : "reference",
            a.psnr, a.psnr_unshifted, abs(a.offset), a.offset > 0 ? "distorted" : "reference",
            abs(a.offset) == 1 ? "" : "s", a.offset > 0 ? "dist" : "ref",
            a.offset > 0 ? s->frame_skip_dist : s->frame_skip_ref);
    return 0;
}

/* One part of a run spread over GPUs: its results go to memory, as JSON
 * for the merge, and the first part keeps the models' names for the
 * summary. */
/* The frame count the parts of a --gpu run share: the first part to need
 * it finds it (counting a Matroska file's packets reads the whole file),
 * the others take it. */
typedef struct SharedCount {
    pthread_mutex_t lock;
    bool known;
    int64_t total;
} SharedCount;

typedef struct RunPart {
    const CliSettings *settings;
    SharedCount *count;
    unsigned part, parts;  /* part `part` (from 1) of `parts` */
    int gpu;               /* the device it runs on */
    char *json;            /* the part's results (free()) */
    size_t json_size;
    double seconds;        /* its time scoring */
    QualeModelInfo models[CLI_MAX_ENTRIES]; /* names and labels strdup()ed */
    unsigned model_count;
    int status;
    bool idle;             /* no frame of its own: fewer frames than GPUs */
} RunPart;

static int format_to_memory(const ResultsOutput *out, char **text, size_t *size)
{
    FILE *f = open_memstream(text, size);
    if (!f) {
        say("error", "cannot hold the results in memory: %s", strerror(errno));
        return -1;
    }
    const int err = quale_write_output(out->ctx, f, out->format, &out->options);
    if (fclose(f) || err) {
        free(*text);
        *text = NULL;
        return -1;
    }
    return 0;
}

/* --html: the report of a run's results, with what the run knows that
 * the results file does not say (the models, the frame rate, the
 * bitrate, the backend). */
static int write_html(const CliSettings *s, const QualeResults *results,
                      const QualeModelInfo *models, unsigned model_count,
                      const QualeVideoReader *distorted, enum QualeBackend backend,
                      unsigned gpus)
{
    const char *names[CLI_MAX_ENTRIES];
    QualeOutputNote settings[CLI_MAX_ENTRIES + 3];
    char backend_text[64];
    unsigned n = 0;
    for (unsigned i = 0; i < model_count && i < CLI_MAX_ENTRIES; i++) {
        names[i] = models[i].name;
        settings[n++] = (QualeOutputNote){ "model", models[i].label };
    }
    for (unsigned i = 0; i < s->feature_count && n < CLI_MAX_ENTRIES; i++)
        settings[n++] = (QualeOutputNote){ "feature", s->features[i] };
    snprintf(backend_text, sizeof(backend_text), "%s%s", quale_backend_name(backend),
             gpus > 1 ? " (several GPUs)" : "");
    settings[n++] = (QualeOutputNote){ "backend", backend_text };
    settings[n++] = (QualeOutputNote){ "reference", s->reference };
    settings[n++] = (QualeOutputNote){ "distorted", s->distorted };
    unsigned num = 0, den = 0;
    const bool rate = distorted && quale_video_frame_rate(distorted, &num, &den) >= 0 && den;
    const int64_t bits = distorted ? quale_video_bit_rate(distorted) : -1;
    const char *slash = strrchr(s->distorted, '/');
    const ReportInput input = {
        .name = slash ? slash + 1 : s->distorted,
        .results = results,
        .frame_rate = rate ? (double)num / den : 0.,
        .bitrate_kbps = bits > 0 ? bits / 1000. : 0.,
        .models = names,
        .model_count = model_count < CLI_MAX_ENTRIES ? model_count : CLI_MAX_ENTRIES,
        .settings = settings,
        .setting_count = n,
    };
    return report_write(&input, 1, s->html) ? EXIT_RUN_FAILED : 0;
}

static int run(const CliSettings *s, RunPart *part)
{
    int status = EXIT_RUN_FAILED;
    Input inputs[2] = { { .path = s->reference }, { .path = s->distorted } };
    QualeContext *ctx = NULL;
    QualeResults *written = NULL;
    char *written_json = NULL;
    InputNotes notes = { .count = 0 };
    int err;
    static const char muted_log = 0;
    muted = part && part->part > 1;
    lane_share = part ? part->parts : 1;

    /* What would fail at the end is checked before the first frame. */
    if (!part && s->output && output_file_check(s->output)) return EXIT_RUN_FAILED;
    if (!part && s->html && output_file_check(s->html)) return EXIT_RUN_FAILED;
    if (open_lanes(s, &inputs[0], "reference") || open_lanes(s, &inputs[1], "distorted")) goto out;
    QualeVideoFormat ref_format, dist_format;
    quale_video_get_format(inputs[0].lanes[0], &ref_format);
    quale_video_get_format(inputs[1].lanes[0], &dist_format);
    /* the decoders' notes say "in software" until a video goes to the GPU */
    unsigned decoder_note[2] = { 0, 0 };
    int scaled_note = -1; /* the distorted video's conversion, if any */
    size_t scaled_where = 0; /* where its text says where it is scaled */
    for (int i = 0; i < 2; i++)
        if (quale_video_codec(inputs[i].lanes[0])) {
            decoder_note[i] = notes.count;
            note_add(&notes, i ? "distorted_decoder" : "reference_decoder",
                     "%s, decoded in software (FFmpeg)", quale_video_codec(inputs[i].lanes[0]));
        }
    /* a compressed distorted video's bitrate and frame rate: what a
     * ladder's report plots against */
    if (quale_video_codec(inputs[1].lanes[0])) {
        const int64_t bits = quale_video_bit_rate(inputs[1].lanes[0]);
        unsigned num, den;
        if (bits > 0) note_add(&notes, "distorted_bitrate", "%.1f kb/s", bits / 1000.);
        if (quale_video_frame_rate(inputs[1].lanes[0], &num, &den) >= 0)
            note_add(&notes, "distorted_frame_rate", "%u/%u", num, den);
    }
    if (s->score_bitdepth) note_add(&notes, "score_bitdepth", "%u", s->score_bitdepth);
    if (s->align_note[0]) note_add(&notes, "alignment", "%s", s->align_note);

    /* Frames are paired by order: different rates, or a variable one, make
     * pairs of different moments. */
    unsigned rn, rd, dn, dd;
    const int ref_rate = quale_video_frame_rate(inputs[0].lanes[0], &rn, &rd);
    const int dist_rate = quale_video_frame_rate(inputs[1].lanes[0], &dn, &dd);
    if (ref_rate >= 0 && dist_rate >= 0 && (uint64_t)rn * dd != (uint64_t)dn * rd)
        say("warning", "the frame rates differ: %s is %.3f fps, %s %.3f fps; frames are paired "
            "by their order, so pairs drift apart in time (convert one first, e.g. ffmpeg "
            "-vf fps=...)", shown(s->reference), (double)rn / rd, shown(s->distorted),
            (double)dn / dd);
    for (int i = 0; i < 2; i++)
        if ((i ? dist_rate : ref_rate) == 1)
            say("warning", "%s has a variable frame rate: frames are paired by their order, "
                "not their time", shown(inputs[i].path));
    if ((ref_format.chroma == QUALE_CHROMA_400) != (dist_format.chroma == QUALE_CHROMA_400)) {
        say("error", "the videos differ: %s is %s, %s is %s; quale converts between 4:2:0, "
            "4:2:2 and 4:4:4 only", shown(s->reference), quale_chroma_name(ref_format.chroma),
            shown(s->distorted), quale_chroma_name(dist_format.chroma));
        goto out;
    }
    /* Different bit depths: the shallower video's samples are shifted up
     * to the deeper one's depth, losing nothing (what FFmpeg's conversion
     * to a deeper pixel format gives: sample << n). */
    if (dist_format.bitdepth != ref_format.bitdepth) {
        const int up = dist_format.bitdepth < ref_format.bitdepth ? 1 : 0;
        const unsigned from = up ? dist_format.bitdepth : ref_format.bitdepth;
        const unsigned depth = up ? ref_format.bitdepth : dist_format.bitdepth;
        for (unsigned k = 0; k < inputs[up].lane_count; k++) {
            if (quale_video_set_bitdepth(inputs[up].lanes[k], depth)) {
                say("error", "%s", quale_video_error(inputs[up].lanes[k]));
                goto out;
            }
        }
        say("note", "%s is %u-bit: scored at the %u bits of %s (samples shifted left by %u)",
            shown(inputs[up].path), from, depth, shown(inputs[!up].path), depth - from);
        note_add(&notes, up ? "distorted_bitdepth" : "reference_bitdepth",
                 "%u, shifted left by %u to %u", from, depth - from, depth);
        quale_video_get_format(inputs[up].lanes[0], up ? &dist_format : &ref_format);
    }
    /* A distorted video of another size or chroma format is converted to
     * the reference's. */
    if (dist_format.width != ref_format.width || dist_format.height != ref_format.height ||
        dist_format.chroma != ref_format.chroma) {
        const char *scaler = s->scaler ? s->scaler : "bicubic";
        for (unsigned k = 0; k < inputs[1].lane_count; k++) {
            if (quale_video_convert(inputs[1].lanes[k], ref_format.width, ref_format.height,
                                    ref_format.chroma, scaler)) {
                say("error", "%s", quale_video_error(inputs[1].lanes[k]));
                goto out;
            }
        }
        say("note", "%s is %ux%u %s: converted to the reference's %ux%u %s (%s, FFmpeg's "
            "swscale with accurate_rnd+bitexact)", shown(s->distorted), dist_format.width,
            dist_format.height, quale_chroma_name(dist_format.chroma), ref_format.width,
            ref_format.height, quale_chroma_name(ref_format.chroma), scaler);
        /* where it is scaled ends the note: the GPU's decoder may take it
         * over below */
        scaled_note = notes.count;
        note_add(&notes, "distorted_scaled", "%ux%u %s to %ux%u %s, %s", dist_format.width,
                 dist_format.height, quale_chroma_name(dist_format.chroma), ref_format.width,
                 ref_format.height, quale_chroma_name(ref_format.chroma), scaler);
        scaled_where = strlen(notes.text[scaled_note]);
        snprintf(notes.text[scaled_note] + scaled_where, sizeof(notes.text[0]) - scaled_where,
                 " (swscale, accurate_rnd+bitexact)");
        quale_video_get_format(inputs[1].lanes[0], &dist_format);
    }
    if (!check_formats(s, &ref_format, &dist_format)) goto out;
    /* A wrong format that divides the file's size is not an error the
     * reader can see; the first frame may show it. */
    for (int i = 0; i < 2; i++) {
        char why[256];
        if (i == 1 && !strcmp(inputs[0].path, inputs[1].path)) break;
        if (s->raw_given && !quale_video_is_y4m(inputs[i].lanes[0]) &&
            !quale_video_codec(inputs[i].lanes[0]) &&
            raw_check(inputs[i].path, &s->raw, why, sizeof(why)))
            say("warning", "%s does not look like %ux%u %s %u-bit video: %s; check -w/-h/-p/-b, "
                "the scores mean nothing if they are wrong", shown(inputs[i].path), s->raw.width,
                s->raw.height, quale_chroma_name(s->raw.chroma), s->raw.bitdepth, why);
    }

    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = s->threads;
    settings.subsample = s->subsample;
    settings.cpumask = s->cpumask;
    settings.backend = s->backend;
    settings.gpu_device = part ? part->gpu : s->gpu_device;
    settings.log_level = s->quiet ? QUALE_LOG_WARNING : QUALE_LOG_INFO;
    settings.log = log_message;
    settings.log_cookie = muted ? (void *)&muted_log : NULL;
    hint_gpu(s);
    if (quale_open(&ctx, &settings)) goto out;

    if (!s->no_prediction && s->model_count == 0 &&
        (err = quale_use_model(ctx, "version=vmaf_v0.6.1"))) {
        status = configuration_status(err);
        goto out;
    }
    for (unsigned i = 0; i < s->model_count; i++) {
        /* With -n, the model's features only. */
        char spec[4096];
        snprintf(spec, sizeof(spec), "%s%s", s->models[i], s->no_prediction ? ":no_prediction" : "");
        if ((err = quale_use_model(ctx, spec))) {
            status = configuration_status(err);
            goto out;
        }
    }
    for (unsigned i = 0; i < s->feature_count; i++) {
        if ((err = quale_use_metric(ctx, s->features[i]))) {
            status = configuration_status(err);
            goto out;
        }
    }

    /* On the CUDA backend (asked for, or the one --backend auto took),
     * compressed videos decode on the GPU where NVDEC can: their frames
     * then never visit the host. */
    /* QUALE_DECODE_ON_CPU=1 keeps them on the CPU, for comparisons */
    const char *cpu_only = getenv("QUALE_DECODE_ON_CPU");
    const bool try_gpu = quale_backend(ctx) == QUALE_BACKEND_CUDA && !(cpu_only && *cpu_only == '1');
    for (int i = 0; i < 2; i++) {
        if (!quale_video_codec(inputs[i].lanes[0])) continue;
        const int on_gpu = try_gpu ? quale_video_decode_on_gpu(inputs[i].lanes[0], ctx) : 0;
        if (on_gpu < 0) {
            say("error", "%s", quale_video_error(inputs[i].lanes[0]));
            goto out;
        }
        inputs[i].on_gpu = on_gpu == 1;
        if (try_gpu && !on_gpu)
            say("note", "%s decodes on the CPU: %s", shown(inputs[i].path),
                quale_video_error(inputs[i].lanes[0]));
        if (on_gpu)
            snprintf(notes.text[decoder_note[i]], sizeof(notes.text[0]),
                     "%s, decoded on the GPU (NVDEC)", quale_video_codec(inputs[i].lanes[0]));
        /* the decoder scales there too, with swscale's arithmetic */
        if (on_gpu && i == 1 && scaled_note >= 0) {
            snprintf(notes.text[scaled_note] + scaled_where, sizeof(notes.text[0]) - scaled_where,
                     " (swscale's accurate_rnd+bitexact arithmetic, on the GPU)");
            say("note", "%s is scaled on the GPU as it is decoded, as swscale scales it",
                shown(inputs[i].path));
        }
    }

    /* --frames, --segment and the parts of --gpu: the frames to write,
     * and those to read around them */
    FramePlan plan;
    /* a split needs the frame count, as the frames will be read */
    const bool split = s->segment_parts || (part && part->parts > 1);
    const enum FrameCount how = split ? FRAMES_COUNTED : FRAMES_EXACT;
    int64_t total;
    if (part) {
        pthread_mutex_lock(&part->count->lock);
        if (!part->count->known) part->count->total = frames_to_score(s, inputs, how);
        part->count->known = true;
        total = part->count->total;
        pthread_mutex_unlock(&part->count->lock);
    } else {
        total = frames_to_score(s, inputs, how);
    }
    char plan_error[512];
    if (plan_frames(s, ctx, total, part ? part->part : s->segment_part,
                    part ? part->parts : s->segment_parts, part != NULL, &plan, plan_error,
                    sizeof(plan_error))) {
        say("error", "%s", plan_error);
        goto out;
    }
    if (plan.idle) {
        /* fewer frames than GPUs: the parts before this one have them all */
        part->idle = true;
        status = 0;
        goto out;
    }
    CliSettings read_settings = *s;
    if (plan.partial) {
        for (unsigned i = 0; i < s->feature_count; i++)
            if (strstr(s->features[i], "heatmaps_path")) {
                say("error", "cambi's heatmaps are written frame by frame into one file: a "
                    "run of part of the frames (--frames, --segment, --gpu) cannot write them");
                goto out;
            }
        read_settings.frame_skip_ref += plan.read_first;
        read_settings.frame_skip_dist += plan.read_first;
        read_settings.frame_count = plan.read_count;
    }

    const unsigned planes = quale_planes_needed(ctx);
    for (int i = 0; i < 2; i++)
        for (unsigned k = 0; k < inputs[i].lane_count; k++) quale_video_set_planes(inputs[i].lanes[k], planes);

    Progress progress = { .enabled = !part && !s->quiet && isatty(fileno(stderr)) };
    if (plan.partial) progress.total = plan.read_count ? (int64_t)plan.read_count : -1;
    else progress.total = split ? total : frames_to_score(s, inputs, FRAMES_DECLARED);
    const double start = now_seconds();
    progress.start = start;
    progress.last = start - 1; /* the first frame shows at once */
    const int frames = score_frames(&read_settings, ctx, inputs, &ref_format, &progress);
    if (frames < 0) goto out;
    if (frames == 0) {
        say("error", "no frames to score in %s and %s", shown(s->reference), shown(s->distorted));
        goto out;
    }
    if (quale_flush(ctx)) goto out;
    const double elapsed = now_seconds() - start;
    progress_update(&progress, ctx, true);

    for (int i = 0; i < 2; i++) {
        uint64_t clamped = 0;
        for (unsigned k = 0; k < inputs[i].lane_count; k++)
            clamped += quale_video_clamped_samples(inputs[i].lanes[k]);
        if (clamped)
            say("warning", "%s: %llu samples exceeded %u bits and were clamped",
                shown(inputs[i].path), (unsigned long long)clamped, ref_format.bitdepth);
        uint64_t damaged = 0;
        for (unsigned k = 0; k < inputs[i].lane_count; k++)
            damaged += quale_video_damaged_frames(inputs[i].lanes[k]);
        if (damaged)
            say("warning", "%s: the decoder found %llu damaged frame%s (a corrupt bitstream, "
                "decoded with concealment): %s of repaired pictures", shown(inputs[i].path),
                (unsigned long long)damaged, damaged == 1 ? "" : "s",
                damaged == 1 ? "its scores are those" : "their scores are those");
    }

    ResultsOutput out = {
        .ctx = ctx,
        .format = part ? QUALE_OUTPUT_JSON : s->output_format,
        .options = { .precision = s->precision, .notes = notes.note, .note_count = notes.count,
                     .pool_methods = s->pools, .pool_method_count = s->pool_count },
    };
    QualeSegment segment;
    char run_text[4096];
    unsigned listed = (unsigned)frames;
    if (plan.partial) {
        /* the frames of the plan that were read */
        const unsigned read_end = plan.read_first + (unsigned)frames;
        const unsigned end = plan.end && plan.end < read_end ? plan.end : read_end;
        /* A part before the last must hold all its frames: the next part
         * starts after them. */
        if (read_end <= plan.first || (plan.parts && !plan.open_end && read_end < plan.end)) {
            say("error", "the videos end at frame %u, before %s frame %u: they have fewer "
                "frames than %s", read_end - 1, plan.parts ? "this part's last" :
                "the first asked,", read_end <= plan.first ? plan.first : plan.end - 1,
                plan.parts ? "were counted" : "--frames asks for");
            goto out;
        }
        if (plan.end > read_end)
            say("warning", "--frames %u:%u: the videos end at frame %u; scoring %u to %u",
                s->frames_first, s->frames_end, read_end - 1, plan.first, end - 1);
        else if (plan.open_end && end != plan.counted_end)
            say("warning", "the videos were counted to end at frame %u, but they end at frame "
                "%u: this last part scored frames %u to %u", plan.counted_end - 1, end - 1,
                plan.first, end - 1);
        out.options.frame_first = plan.first - plan.read_first;
        out.options.frame_end = end - plan.read_first;
        out.options.frame_number_offset = plan.read_first;
        listed = end - plan.first;
        if (plan.parts) {
            describe_run(s, ctx, run_text, sizeof(run_text));
            segment = (QualeSegment){ .part = plan.part, .parts = plan.parts,
                                      .first = plan.first, .end = end,
                                      .range_first = plan.range_first,
                                      .precision = s->precision, .run = run_text };
            out.options.segment = &segment;
        }
    }
    out.options.fps = elapsed > 0 ? listed / elapsed : 0.;
    if (part) {
        /* a part of a --gpu run: kept for the merge, with the models'
         * names for the summary */
        part->seconds = elapsed;
        if (format_to_memory(&out, &part->json, &part->json_size)) goto out;
        const unsigned models = quale_model_count(ctx);
        for (unsigned i = 0; i < models && part->model_count < CLI_MAX_ENTRIES; i++) {
            QualeModelInfo info;
            if (quale_model_info(ctx, i, &info)) continue;
            QualeModelInfo *m = &part->models[part->model_count++];
            m->name = strdup(info.name);
            m->label = strdup(info.label);
            m->bootstrap = info.bootstrap;
            if (!m->name || !m->label) goto out;
        }
        status = 0;
        goto out;
    }
    status = 0;
    if (s->output) status = write_results(s, &out);
    QualeModelInfo models[CLI_MAX_ENTRIES];
    SummarySource summary = { .ctx = ctx, .models = models };
    for (unsigned i = 0; i < quale_model_count(ctx) && summary.model_count < CLI_MAX_ENTRIES; i++)
        if (!quale_model_info(ctx, i, &models[summary.model_count])) summary.model_count++;
    if ((plan.partial && (!s->output || !s->quiet)) || s->html) {
        /* the summary pools the frames written, not those read around them */
        size_t size = 0;
        out.format = QUALE_OUTPUT_JSON;
        out.options.precision = -1;
        char error[512];
        if (format_to_memory(&out, &written_json, &size) ||
            quale_results_read(&written, written_json, size, "the results", error,
                               sizeof(error))) {
            say("error", "the summary: %s", error);
            status = EXIT_RUN_FAILED;
            goto out;
        }
        if (plan.partial) summary.results = written;
    }
    if (s->html && status == 0)
        status = write_html(s, written, models, summary.model_count, inputs[1].lanes[0],
                            quale_backend(ctx), 1);
    if (!s->output || !s->quiet)
        print_summary(s->output ? stderr : stdout, s, &summary);
    /* The summary is the results when there is no -o: it must arrive. */
    if (!s->output && (fflush(stdout) || ferror(stdout))) {
        say("error", "writing the summary failed: %s", strerror(errno));
        status = EXIT_RUN_FAILED;
    }

out:
    /* The readers first: a decoder on the GPU holds memory of the
     * context's CUDA context, which closing the context may end. */
    close_lanes(&inputs[0]);
    close_lanes(&inputs[1]);
    quale_results_close(&written);
    free(written_json);
    quale_close(&ctx);
    return status;
}

static void *run_part_thread(void *arg)
{
    RunPart *part = arg;
    part->status = run(part->settings, part);
    return NULL;
}

/* --gpu: the frames split in one part per GPU, each scored on its own
 * context and device at once, then merged as quale merge joins parts: the
 * file and the summary of one GPU's run. */
static int run_on_gpus(const CliSettings *s)
{
    unsigned gpus[CLI_MAX_GPUS];
    unsigned count = 0;
    if (s->gpu_all) {
        QualeDeviceInfo devices[CLI_MAX_GPUS];
        char error[512];
        if (quale_list_devices(s->backend, devices, CLI_MAX_GPUS, &count, error, sizeof(error))) {
            say("error", "--gpu all: %s", error);
            return EXIT_RUN_FAILED;
        }
        unsigned hardware = 0;
        for (unsigned i = 0; i < count && i < CLI_MAX_GPUS; i++)
            if (devices[i].type != QUALE_DEVICE_SOFTWARE) gpus[hardware++] = devices[i].index;
        count = hardware;
        if (!count) {
            say("error", "--gpu all: the %s backend sees no GPU", quale_backend_name(s->backend));
            return EXIT_RUN_FAILED;
        }
    } else {
        memcpy(gpus, s->gpus, sizeof(gpus[0]) * s->gpu_count);
        count = s->gpu_count;
    }
    if (s->segment_parts) {
        say("error", "--gpu and --segment both split the run: give one");
        return EXIT_USAGE;
    }
    if (count > 1 && (!strcmp(s->reference, "-") || !strcmp(s->distorted, "-"))) {
        say("error", "--gpu reads each GPU's part of the videos on its own: give files, not "
            "standard input");
        return EXIT_USAGE;
    }
    if (s->output && output_file_check(s->output)) return EXIT_RUN_FAILED;
    if (s->html && output_file_check(s->html)) return EXIT_RUN_FAILED;
    if (count == 1) {
        CliSettings one = *s;
        one.gpu_all = false;
        one.gpu_count = 0;
        one.gpu_device = (int)gpus[0];
        return run(&one, NULL);
    }

    RunPart *parts = calloc(count, sizeof(*parts));
    pthread_t *threads = calloc(count, sizeof(*threads));
    QualeResults **results = calloc(count, sizeof(*results));
    QualeResults *merged = NULL;
    int status = EXIT_RUN_FAILED;
    unsigned started = 0;
    if (!parts || !threads || !results) {
        say("error", "out of memory");
        goto out;
    }
    say("note", "spreading the frames over %u GPUs of the %s backend", count,
        quale_backend_name(s->backend));
    CliSettings part_settings = *s;
    part_settings.gpu_all = false;
    part_settings.gpu_count = 0;
    SharedCount frame_count = { .lock = PTHREAD_MUTEX_INITIALIZER };
    for (unsigned k = 0; k < count; k++) {
        parts[k] = (RunPart){ .settings = &part_settings, .count = &frame_count,
                              .part = k + 1, .parts = count, .gpu = (int)gpus[k] };
        if (pthread_create(&threads[k], NULL, run_part_thread, &parts[k])) {
            say("error", "cannot start a thread for GPU %u", gpus[k]);
            break;
        }
        started++;
    }
    for (unsigned k = 0; k < started; k++) pthread_join(threads[k], NULL);
    if (started < count) goto out;
    double slowest = 0.;
    unsigned working = 0;
    for (unsigned k = 0; k < count; k++) {
        if (parts[k].status) {
            say("error", "the part on GPU %u failed", gpus[k]);
            status = parts[k].status;
            goto out;
        }
        if (parts[k].idle) continue;
        char error[1024];
        if (quale_results_read(&results[working], parts[k].json, parts[k].json_size, "a part",
                               error, sizeof(error))) {
            say("error", "%s", error);
            goto out;
        }
        working++;
        if (parts[k].seconds > slowest) slowest = parts[k].seconds;
    }
    if (working < count && !s->quiet)
        say("note", "fewer frames than GPUs: %u of the %u GPUs had frames to score", working,
            count);
    if (merge_write((const QualeResults *const *)results, working, s->output, s->output_format,
                    s->precision, s->pools, s->pool_count, &merged))
        goto out;
    status = 0;
    if (!s->output || !s->quiet) {
        const SummarySource summary = { .results = merged, .models = parts[0].models,
                                        .model_count = parts[0].model_count };
        print_summary(s->output ? stderr : stdout, s, &summary);
    }
    if (s->html && status == 0)
        status = write_html(s, merged, parts[0].models, parts[0].model_count, NULL, s->backend,
                            count);
    if (!s->quiet) {
        const unsigned frames = quale_results_frame_count(merged);
        say("note", "%u frame%s on %u GPU%s in %.2f s: %.1f fps", frames, frames == 1 ? "" : "s",
            working, working == 1 ? "" : "s", slowest, slowest > 0 ? frames / slowest : 0.);
    }
out:
    for (unsigned k = 0; parts && k < count; k++) {
        free(parts[k].json);
        for (unsigned i = 0; i < parts[k].model_count; i++) {
            free((char *)parts[k].models[i].name);
            free((char *)parts[k].models[i].label);
        }
        quale_results_close(&results[k]);
    }
    quale_results_close(&merged);
    free(parts);
    free(threads);
    free(results);
    return status;
}

/* Refuses, before any work, a run whose outputs would write over one of
 * its inputs (videos, model files) or over each other: 0, or -1 after
 * saying so. */
static int outputs_distinct(const CliSettings *s)
{
    NamedFile inputs[2 + CLI_MAX_ENTRIES] = { { s->reference, "the reference video" },
                                             { s->distorted, "the distorted video" } };
    char paths[CLI_MAX_ENTRIES][PATH_MAX];
    unsigned n = 2;
    /* a model file: path= up to the next ':', as the model's spec reads it */
    for (unsigned i = 0; i < s->model_count; i++) {
        const char *spec = s->models[i];
        const char *at = strncmp(spec, "path=", 5) ? strstr(spec, ":path=") : spec - 1;
        if (!at) continue;
        at += 6;
        char *path = paths[n - 2];
        snprintf(path, sizeof(paths[0]), "%.*s", (int)strcspn(at, ":"), at);
        inputs[n++] = (NamedFile){ path, "a model file" };
    }
    const NamedFile outputs[2] = { { s->output, "-o" }, { s->html, "--html" } };
    return output_file_distinct(outputs, 2, inputs, n);
}

/* quale check-options ARG...: the options of a task of a split run, read
 * as a run reads them (cli_classify_task_options(), then cli_parse() with
 * stand-in videos): prints one letter per ARG, 't' for the task, 'f' (an
 * output layout flag) and 'm' (--precision) for the merge, or refuses with
 * exit 2. */
static int check_options_main(int argc, char *argv[])
{
    char error[512];
    char *kinds = malloc((size_t)argc + 1);
    char **run_argv = calloc((size_t)argc + 5, sizeof(*run_argv));
    int status = EXIT_USAGE;
    if (!kinds || !run_argv) {
        fprintf(stderr, "quale: error: out of memory\n");
        status = EXIT_RUN_FAILED;
        goto out;
    }
    if (cli_classify_task_options(argc, argv, kinds, error, sizeof(error))) {
        fprintf(stderr, "quale check-options: %s\n", error);
        goto out;
    }
    const char *stand_in[] = { "quale", "-r", "REFERENCE", "-d", "DISTORTED" };
    for (int i = 0; i < 5; i++) run_argv[i] = (char *)stand_in[i];
    for (int i = 1; i < argc; i++) run_argv[4 + i] = argv[i];
    CliSettings settings;
    if (cli_parse(argc + 4, run_argv, &settings, error, sizeof(error))) {
        fprintf(stderr, "quale check-options: %s\n", error);
        goto out;
    }
    kinds[argc] = '\0';
    printf("%s\n", kinds + 1);
    status = fflush(stdout) ? EXIT_RUN_FAILED : 0;
out:
    free(kinds);
    free(run_argv);
    return status;
}

int main(int argc, char *argv[])
{
    if (argc >= 2 && !strcmp(argv[1], "check-options"))
        return check_options_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "merge")) return merge_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "report")) return report_main(argc - 1, argv + 1);
    CliSettings settings;
    char error[512];
    /* -h is libvmaf's --height; alone, it is a newcomer asking for help. */
    if (argc == 2 && !strcmp(argv[1], "-h")) {
        fprintf(stderr, "quale: -h is the height of raw video (-h/--height); for the options, "
                "run 'quale --help'\n");
        return EXIT_USAGE;
    }
    if (cli_parse(argc, argv, &settings, error, sizeof(error))) {
        fprintf(stderr, "quale: %s\nTry 'quale --help' for the options.\n", error);
        return EXIT_USAGE;
    }
    if (settings.help) {
        cli_print_usage(stdout);
        return stdout_written("the help");
    }
    if (settings.version) {
        printf("quale %s\n", quale_version());
        return stdout_written("the version");
    }
    if (settings.list_features) return list_features(settings.list_json);
    if (settings.list_models) return list_models(settings.list_json);
    if (settings.list_devices) return list_devices(settings.list_json);
    if (outputs_distinct(&settings)) return EXIT_USAGE;
    if (settings.align_auto && apply_alignment(&settings)) return EXIT_RUN_FAILED;
    if (settings.gpu_all || settings.gpu_count) return run_on_gpus(&settings);
    return run(&settings, NULL);
}
