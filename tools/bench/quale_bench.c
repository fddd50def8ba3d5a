/*
 * quale-bench: how fast quale scores, by wall clock, as JSON.
 *
 * For each backend and resolution asked for it measures
 *   startup_ms      quale_open + model load + scoring one frame + flush
 *   steady_fps      frames per second with the frames already in memory
 *                   (a few distinct pictures sent again and again, by
 *                   reference: no copies, no I/O)
 *   cli_fps         the quale tool end to end on .yuv files (page cache
 *                   warm), when --cli is given
 * Frames come from the project's synthetic scene (tools/synth.c), so it runs
 * on a machine without ffmpeg, or from make-bench.sh clips with --clips.
 *
 *   quale-bench [--backend cpu,cuda] [--resolution 1080p,4k,WxH[:bits]]
 *               [--frames N] [--threads N] [--model SPEC | -n]
 *               [--feature SPEC]... [--cli PATH] [--clips DIR] [--repeat N]
 *               [--per-metric] [--verbose]
 * --verbose passes the library's informational messages on (for example the
 * per-twin device times of QUALE_CUDA_PROFILE=1).
 * --per-metric adds, per backend, each metric's steady-state milliseconds
 * per frame when it runs alone (the metrics with a twin on that backend).
 */
#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "quale/quale.h"
#include "synth.h"

extern char **environ;

#define MAX_LIST 16
#define DISTINCT_FRAMES 8

typedef struct BenchSettings {
    enum QualeBackend backends[MAX_LIST];
    unsigned backend_count;
    QualeVideoFormat sizes[MAX_LIST];
    const char *size_names[MAX_LIST];
    unsigned size_count;
    unsigned frames;
    unsigned threads;
    unsigned repeat;
    const char *model;
    bool no_model;
    const char *features[MAX_LIST];
    unsigned feature_count;
    const char *cli;
    const char *clips;
    bool per_metric;
} BenchSettings;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool verbose;

static void quiet_log(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)cookie;
    if (level <= (verbose ? QUALE_LOG_INFO : QUALE_LOG_WARNING)) fprintf(stderr, "quale-bench: %s\n", message);
}

static int open_context(const BenchSettings *b, enum QualeBackend backend, QualeContext **ctx)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = b->threads;
    s.backend = backend;
    s.log = quiet_log;
    int err = quale_open(ctx, &s);
    if (err) return err;
    if (!b->no_model) err = quale_use_model(*ctx, b->model ? b->model : "version=vmaf_v0.6.1");
    for (unsigned i = 0; i < b->feature_count && !err; i++) err = quale_use_metric(*ctx, b->features[i]);
    if (err) quale_close(ctx);
    return err;
}

/* Distinct synthetic frame pairs, made once and sent by reference. */
static int make_frames(const QualeVideoFormat *f, QualePicture ref[], QualePicture dist[])
{
    for (unsigned i = 0; i < DISTINCT_FRAMES; i++) {
        if (quale_picture_alloc(&ref[i], f) || quale_picture_alloc(&dist[i], f)) return -ENOMEM;
        synth_reference(&ref[i], i * 5);
        synth_distort(&ref[i], &dist[i], i, 2);
    }
    return 0;
}

/* Copies of the frames in the context's own picture memory (pinned for a
 * GPU backend), as the tool's reader loop would fill them. */
static int copy_frames(QualeContext *ctx, const QualePicture src[], QualePicture dst[])
{
    for (unsigned i = 0; i < DISTINCT_FRAMES; i++) {
        int err = quale_context_alloc_picture(ctx, &dst[i], &src[i].format);
        if (err) return err;
        for (unsigned p = 0; p < src[i].plane_count; p++)
            memcpy(dst[i].data[p], src[i].data[p], (size_t)src[i].stride[p] * src[i].plane_height[p]);
    }
    return 0;
}

static int send_copy(QualeContext *ctx, const QualePicture *ref, const QualePicture *dist)
{
    QualePicture r, d;
    quale_picture_ref(&r, ref);
    quale_picture_ref(&d, dist);
    return quale_send_pictures(ctx, &r, &d);
}

static int measure_startup(const BenchSettings *b, enum QualeBackend backend,
                           const QualePicture *ref, const QualePicture *dist, double *ms)
{
    const double t0 = now();
    QualeContext *ctx = NULL;
    int err = open_context(b, backend, &ctx);
    if (!err) err = send_copy(ctx, ref, dist);
    if (!err) err = quale_flush(ctx);
    *ms = (now() - t0) * 1e3;
    quale_close(&ctx);
    return err;
}

static int measure_steady(const BenchSettings *b, enum QualeBackend backend,
                          const QualePicture src_ref[], const QualePicture src_dist[], double *fps)
{
    QualeContext *ctx = NULL;
    int err = open_context(b, backend, &ctx);
    if (err) return err;
    QualePicture ref[DISTINCT_FRAMES] = { 0 }, dist[DISTINCT_FRAMES] = { 0 };
    err = copy_frames(ctx, src_ref, ref);
    if (!err) err = copy_frames(ctx, src_dist, dist);
    /* Warm up: the first frames pay for allocations and first touches. */
    for (unsigned i = 0; i < 4 && !err; i++) err = send_copy(ctx, &ref[i], &dist[i]);
    double t0 = now();
    for (unsigned i = 0; i < b->frames && !err; i++)
        err = send_copy(ctx, &ref[i % DISTINCT_FRAMES], &dist[i % DISTINCT_FRAMES]);
    if (!err) err = quale_flush(ctx);
    const double elapsed = now() - t0;
    *fps = err ? 0 : b->frames / elapsed;
    quale_close(&ctx);
    for (unsigned i = 0; i < DISTINCT_FRAMES; i++) {
        quale_picture_unref(&ref[i]);
        quale_picture_unref(&dist[i]);
    }
    return err;
}

/* Each metric alone (those with a twin on the backend, or all on the CPU):
 * milliseconds per frame in the steady state. */
static void print_per_metric(const BenchSettings *b, enum QualeBackend backend,
                             const QualePicture ref[], const QualePicture dist[])
{
    BenchSettings one = *b;
    one.no_model = true;
    one.feature_count = 1;
    printf(", \"per_metric_ms\": {");
    bool first = true;
    for (unsigned i = 0; i < quale_metric_count(); i++) {
        QualeMetricInfo info;
        if (quale_metric_info(i, &info) || !(info.backends & (1u << backend))) continue;
        one.features[0] = info.name;
        double fps = 0;
        const int err = measure_steady(&one, backend, ref, dist, &fps);
        printf("%s\"%s\": ", first ? "" : ", ", info.name);
        if (err) printf("null");
        else printf("%.3f", 1000.0 / fps);
        first = false;
        fflush(stdout);
    }
    printf("}");
}

static int write_yuv(const char *path, const QualePicture pics[], unsigned frames)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -errno;
    int err = 0;
    for (unsigned n = 0; n < frames && !err; n++) {
        const QualePicture *p = &pics[n % DISTINCT_FRAMES];
        const size_t bytes = p->format.bitdepth > 8 ? 2 : 1;
        for (unsigned pl = 0; pl < p->plane_count && !err; pl++)
            for (unsigned y = 0; y < p->plane_height[pl] && !err; y++)
                if (fwrite((const uint8_t *)p->data[pl] + (ptrdiff_t)y * p->stride[pl], bytes,
                           p->plane_width[pl], f) != p->plane_width[pl])
                    err = -EIO;
    }
    if (fclose(f)) err = -EIO;
    return err;
}

/* Runs the tool once on the two files; returns its wall time. */
static int run_cli(const BenchSettings *b, enum QualeBackend backend, const char *ref,
                   const char *dist, const QualeVideoFormat *f, double *seconds)
{
    char w[16], h[16], depth[16], threads[16];
    snprintf(w, sizeof(w), "%u", f->width);
    snprintf(h, sizeof(h), "%u", f->height);
    snprintf(depth, sizeof(depth), "%u", f->bitdepth);
    snprintf(threads, sizeof(threads), "%u", b->threads);
    const char *argv[64] = { b->cli, "-r", ref, "-d", dist, "-w", w, "-h", h, "-p", "420",
                             "-b", depth, "-q", "-o", "/dev/null", "--backend",
                             quale_backend_name(backend) };
    unsigned argc = 18;
    if (b->threads) {
        argv[argc++] = "--threads";
        argv[argc++] = threads;
    }
    if (b->no_model) argv[argc++] = "-n";
    else if (b->model) {
        argv[argc++] = "-m";
        argv[argc++] = b->model;
    }
    for (unsigned i = 0; i < b->feature_count && argc < 60; i++) {
        argv[argc++] = "--feature";
        argv[argc++] = b->features[i];
    }
    argv[argc] = NULL;
    const double t0 = now();
    pid_t pid;
    if (posix_spawn(&pid, b->cli, NULL, NULL, (char *const *)argv, environ)) return -errno;
    int status;
    if (waitpid(pid, &status, 0) < 0) return -errno;
    *seconds = now() - t0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* 1080p, 4k, 720p or WxH, 8-bit; a suffix :N (1080p:10) sets the bit
 * depth. */
static int parse_size(const char *text, QualeVideoFormat *f)
{
    *f = (QualeVideoFormat){ QUALE_CHROMA_420, 8, 0, 0 };
    char name[64];
    const char *colon = strchr(text, ':');
    const size_t length = colon ? (size_t)(colon - text) : strlen(text);
    if (length >= sizeof(name)) return -EINVAL;
    memcpy(name, text, length);
    name[length] = '\0';
    if (colon) {
        char *end = NULL;
        const unsigned long depth = strtoul(colon + 1, &end, 10);
        if (end == colon + 1 || *end || depth < 8 || depth > 16) return -EINVAL;
        f->bitdepth = (unsigned)depth;
    }
    char tail;
    if (!strcmp(name, "1080p")) f->width = 1920, f->height = 1080;
    else if (!strcmp(name, "4k")) f->width = 3840, f->height = 2160;
    else if (!strcmp(name, "720p")) f->width = 1280, f->height = 720;
    else if (sscanf(name, "%ux%u%c", &f->width, &f->height, &tail) != 2) return -EINVAL;
    return quale_video_format_check(f, NULL, 0);
}

static int split_list(char *text, const char *items[], unsigned *count)
{
    for (char *save = NULL, *tok = strtok_r(text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*count == MAX_LIST) return -E2BIG;
        items[(*count)++] = tok;
    }
    return 0;
}

static void median_of(double *v, unsigned n, double *out)
{
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            const double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *out = n ? v[n / 2] : 0;
}

/* The flags into b: 0, or 2 (usage) after saying why. */
static int parse_args(int argc, char *argv[], BenchSettings *b)
{
    static const struct option options[] = {
        { "backend", required_argument, NULL, 'B' },
        { "resolution", required_argument, NULL, 'R' },
        { "frames", required_argument, NULL, 'N' },
        { "threads", required_argument, NULL, 'T' },
        { "model", required_argument, NULL, 'm' },
        { "no_prediction", no_argument, NULL, 'n' },
        { "feature", required_argument, NULL, 'F' },
        { "cli", required_argument, NULL, 'C' },
        { "clips", required_argument, NULL, 'D' },
        { "repeat", required_argument, NULL, 'P' },
        { "per-metric", no_argument, NULL, 'M' },
        { "verbose", no_argument, NULL, 'v' },
        { NULL, 0, NULL, 0 },
    };
    *b = (BenchSettings){ .frames = 240, .repeat = 3 };
    const char *backend_names[MAX_LIST] = { "cpu" };
    unsigned backend_names_count = 1;
    char *backends_arg = NULL, *sizes_arg = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "m:n", options, NULL)) != -1) {
        switch (c) {
        case 'B': backends_arg = optarg; break;
        case 'R': sizes_arg = optarg; break;
        case 'N': b->frames = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'T': b->threads = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'P': b->repeat = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'M': b->per_metric = true; break;
        case 'v': verbose = true; break;
        case 'm': b->model = optarg; break;
        case 'n': b->no_model = true; break;
        case 'F':
            if (b->feature_count < MAX_LIST) b->features[b->feature_count++] = optarg;
            break;
        case 'C': b->cli = optarg; break;
        case 'D': b->clips = optarg; break;
        default:
            fprintf(stderr, "usage: quale-bench [--backend cpu,cuda,hip,vulkan] [--resolution 1080p,4k,WxH[:bits]] "
                            "[--frames N] [--threads N] [--repeat N] [--model SPEC | -n] "
                            "[--feature SPEC]... [--cli PATH] [--clips DIR] [--per-metric] "
                            "[--verbose]\n");
            return 2;
        }
    }
    if (!b->frames || !b->repeat) {
        fprintf(stderr, "quale-bench: --frames and --repeat must be positive\n");
        return 2;
    }
    if (backends_arg) {
        backend_names_count = 0;
        split_list(backends_arg, backend_names, &backend_names_count);
    }
    for (unsigned i = 0; i < backend_names_count; i++) {
        enum QualeBackend all[] = { QUALE_BACKEND_CPU, QUALE_BACKEND_CUDA, QUALE_BACKEND_HIP,
                                    QUALE_BACKEND_VULKAN };
        bool found = false;
        for (unsigned k = 0; k < sizeof(all) / sizeof(all[0]); k++)
            if (!strcmp(backend_names[i], quale_backend_name(all[k]))) {
                b->backends[b->backend_count++] = all[k];
                found = true;
            }
        if (!found) {
            fprintf(stderr, "quale-bench: unknown backend '%s'\n", backend_names[i]);
            return 2;
        }
    }
    static char default_sizes[] = "1080p,4k";
    if (split_list(sizes_arg ? sizes_arg : default_sizes, b->size_names, &b->size_count)) return 2;
    for (unsigned i = 0; i < b->size_count; i++) {
        if (parse_size(b->size_names[i], &b->sizes[i])) {
            fprintf(stderr, "quale-bench: bad resolution '%s'\n", b->size_names[i]);
            return 2;
        }
    }
    return 0;
}

/* One backend at size si: its medians over the runs as one JSON object
 * (an "error" in it when a run failed): 0, or 1 after a failure. */
static int bench_backend(const BenchSettings *b, enum QualeBackend backend, unsigned si,
                         const QualePicture *ref, const QualePicture *dist, const char *ref_path,
                         const char *dist_path, bool first)
{
    const QualeVideoFormat *f = &b->sizes[si];
    double startup[16], steady[16], cli[16], startup_ms = 0, steady_fps = 0, cli_fps = 0;
    const unsigned runs = b->repeat > 16 ? 16 : b->repeat;
    int err = 0;
    for (unsigned r = 0; r < runs && !err; r++) err = measure_startup(b, backend, ref, dist, &startup[r]);
    for (unsigned r = 0; r < runs && !err; r++) err = measure_steady(b, backend, ref, dist, &steady[r]);
    unsigned cli_frames = b->frames;
    if (b->clips) {
        struct stat st;
        const size_t frame_bytes = (size_t)f->width * f->height * 3 / 2 * (f->bitdepth > 8 ? 2 : 1);
        cli_frames = !stat(ref_path, &st) ? (unsigned)(st.st_size / frame_bytes) : 0;
    }
    for (unsigned r = 0; r < runs && !err && b->cli; r++) {
        double seconds = 0;
        err = run_cli(b, backend, ref_path, dist_path, f, &seconds);
        cli[r] = err ? 0 : cli_frames / seconds;
    }
    if (!err) {
        median_of(startup, runs, &startup_ms);
        median_of(steady, runs, &steady_fps);
        if (b->cli) median_of(cli, runs, &cli_fps);
    }
    printf("%s\n    {\"backend\": \"%s\", \"resolution\": \"%s\", \"width\": %u, \"height\": %u, ",
           first ? "" : ",", quale_backend_name(backend), b->size_names[si], f->width, f->height);
    if (err) {
        printf("\"error\": \"%s\"}", strerror(-err));
    } else {
        printf("\"startup_ms\": %.1f, \"steady_fps\": %.1f", startup_ms, steady_fps);
        if (b->cli) printf(", \"cli_fps\": %.1f, \"cli_frames\": %u", cli_fps, cli_frames);
        if (b->per_metric) print_per_metric(b, backend, ref, dist);
        printf("}");
    }
    fflush(stdout);
    return err ? 1 : 0;
}

int main(int argc, char *argv[])
{
    BenchSettings b;
    if (parse_args(argc, argv, &b)) return 2;

    char tmpdir[] = "/tmp/quale-bench-XXXXXX";
    const bool need_files = b.cli && !b.clips;
    if (need_files && !mkdtemp(tmpdir)) {
        perror("quale-bench: mkdtemp");
        return 1;
    }

    int status = 0;
    printf("{\n  \"version\": \"%s\",\n  \"frames\": %u,\n  \"threads\": %u,\n  \"results\": [",
           quale_version(), b.frames, b.threads);
    bool first = true;
    for (unsigned si = 0; si < b.size_count && status != 3; si++) {
        QualePicture ref[DISTINCT_FRAMES] = { 0 }, dist[DISTINCT_FRAMES] = { 0 };
        char ref_path[4096] = "", dist_path[4096] = "";
        if (make_frames(&b.sizes[si], ref, dist)) {
            fprintf(stderr, "quale-bench: out of memory for %s frames\n", b.size_names[si]);
            status = 3;
        } else if (b.cli && b.clips) {
            snprintf(ref_path, sizeof(ref_path), "%s/bench_%s_ref.yuv", b.clips, b.size_names[si]);
            snprintf(dist_path, sizeof(dist_path), "%s/bench_%s_x264crf30.yuv", b.clips,
                     b.size_names[si]);
        } else if (need_files) {
            snprintf(ref_path, sizeof(ref_path), "%s/%s_ref.yuv", tmpdir, b.size_names[si]);
            snprintf(dist_path, sizeof(dist_path), "%s/%s_dist.yuv", tmpdir, b.size_names[si]);
            if (write_yuv(ref_path, ref, b.frames) || write_yuv(dist_path, dist, b.frames)) {
                fprintf(stderr, "quale-bench: cannot write the clips in %s\n", tmpdir);
                status = 3;
            }
        }
        for (unsigned bi = 0; bi < b.backend_count && status != 3; bi++) {
            if (bench_backend(&b, b.backends[bi], si, ref, dist, ref_path, dist_path, first))
                status = 1;
            first = false;
        }
        for (unsigned i = 0; i < DISTINCT_FRAMES; i++) {
            quale_picture_unref(&ref[i]);
            quale_picture_unref(&dist[i]);
        }
        if (need_files) {
            remove(ref_path);
            remove(dist_path);
        }
    }
    printf("\n  ]\n}\n");
    if (need_files) rmdir(tmpdir);
    return status == 3 ? 1 : status;
}
