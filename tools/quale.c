/*
 * quale: the command-line tool.  Reads the two videos, feeds the library
 * frame by frame, writes the results in libvmaf's layouts.
 *
 * Exit status: 0 success, 1 a run that failed (bad input, I/O error,
 * device failure), 2 a usage error.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output_file.h"
#include "prefetch.h"
#include "quale/quale.h"

enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

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
                                              QUALE_BACKEND_VULKAN };
    bool first = true;
    for (unsigned b = 0; b < 3; b++) {
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
    return fflush(f) ? EXIT_RUN_FAILED : 0;
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
    return fflush(f) ? EXIT_RUN_FAILED : 0;
}

static bool has_y4m_extension(const char *path)
{
    const size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".y4m");
}

/* .y4m files (by name) carry their own format; the others are raw yuv and
 * need -w -h -p -b.  So one input may be .y4m and the other .yuv. */
static QualeVideoReader *open_input(const CliSettings *s, const char *path, const char *role)
{
    const bool y4m = has_y4m_extension(path) || !s->raw_given;
    char error[512];
    QualeVideoReader *reader = NULL;
    const int err = quale_video_open(&reader, path, y4m ? NULL : &s->raw, error, sizeof(error));
    if (err) {
        fprintf(stderr, "quale: error: %s video: %s\n", role, error);
        /* A file that is there but is not y4m is likely raw yuv. */
        if (err == -EPROTO && !s->raw_given && !has_y4m_extension(path))
            fprintf(stderr, "quale: raw .yuv input needs -w, -h, -p and -b\n");
        return NULL;
    }
    return reader;
}

/* One video, read by one or more lanes (each its own open of the file). */
typedef struct Input {
    const char *path;
    QualeVideoReader *lanes[PREFETCH_MAX_LANES];
    unsigned lane_count;
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
    return cores >= 12 ? 3 : cores >= 4 ? 2 : 1;
}

static int open_lanes(const CliSettings *s, Input *in, const char *role)
{
    in->lanes[0] = open_input(s, in->path, role);
    if (!in->lanes[0]) return -1;
    in->lane_count = 1;
    const unsigned want = lanes_for(in->path);
    for (unsigned i = 1; i < want; i++) {
        in->lanes[i] = open_input(s, in->path, role);
        if (!in->lanes[i]) return -1;
        in->lane_count++;
    }
    if (s->score_bitdepth) {
        QualeVideoFormat f;
        quale_video_get_format(in->lanes[0], &f);
        if (f.bitdepth > s->score_bitdepth) {
            fprintf(stderr, "quale: error: --score-bitdepth %u is below the %u bits of %s\n",
                    s->score_bitdepth, f.bitdepth, in->path);
            return -1;
        }
        for (unsigned i = 0; i < in->lane_count; i++) {
            if (quale_video_set_bitdepth(in->lanes[i], s->score_bitdepth)) {
                fprintf(stderr, "quale: error: %s\n", quale_video_error(in->lanes[i]));
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
    fprintf(stderr, "quale: error: the videos differ: %s is %ux%u %s %u-bit, %s is %ux%u %s %u-bit\n",
            s->reference, r->width, r->height, quale_chroma_name(r->chroma), r->bitdepth,
            s->distorted, d->width, d->height, quale_chroma_name(d->chroma), d->bitdepth);
    return false;
}

typedef struct Progress {
    bool enabled;
    double start, last;
} Progress;

static void progress_update(Progress *p, unsigned frames, bool final)
{
    if (!p->enabled) return;
    const double t = now_seconds();
    if (!final && t - p->last < 0.25) return;
    p->last = t;
    const double elapsed = t - p->start;
    fprintf(stderr, "\r%u frame%s  %.1f fps\033[K", frames, frames == 1 ? "" : "s",
            elapsed > 0 ? frames / elapsed : 0.);
    if (final) fputc('\n', stderr);
    fflush(stderr);
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
                fprintf(stderr, "quale: error: %s\n", quale_video_error(inputs[i].lanes[k]));
                return -1;
            }
            if (got == 0 && k == 0 && skips[i]) {
                fprintf(stderr, "quale: error: %s has fewer than %u frames: --frame_skip_%s %u "
                        "leaves none to score\n", inputs[i].path, skips[i], i ? "dist" : "ref",
                        skips[i]);
                return -1;
            }
        }
    }

    Prefetcher *prefetch[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++) {
        if (prefetch_start(&prefetch[i], inputs[i].lanes, inputs[i].lane_count, ctx, format, 4)) {
            fprintf(stderr, "quale: error: cannot start a reader thread\n");
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
                if (got[i] < 0) fprintf(stderr, "\nquale: error: %s\n", prefetch_error(prefetch[i]));
            frames = -1;
            break;
        }
        if (got[0] == 0 || got[1] == 0) {
            if (got[0] != got[1]) {
                const int ended = got[0] == 0 ? 0 : 1;
                const unsigned n = (unsigned)frames;
                fprintf(stderr, "\nquale: warning: %s ended after %u frame%s, before %s; "
                        "scoring the %u frame%s both have\n",
                        inputs[ended].path, n + skips[ended], n + skips[ended] == 1 ? "" : "s",
                        inputs[1 - ended].path, n, n == 1 ? "" : "s");
            }
            break;
        }
        if (quale_send_pictures(ctx, &pics[0], &pics[1])) {
            frames = -1;
            break;
        }
        frames++;
        progress_update(progress, (unsigned)frames, false);
    }
    prefetch_stop(&prefetch[0]);
    prefetch_stop(&prefetch[1]);
    return frames;
}

static void print_summary(FILE *f, const CliSettings *s, const QualeContext *ctx)
{
    const unsigned models = quale_model_count(ctx);
    for (unsigned i = 0; i < models; i++) {
        QualeModelInfo info;
        if (quale_model_info(ctx, i, &info)) continue;
        double mean;
        if (quale_feature_pooled(ctx, info.name, QUALE_POOL_MEAN, &mean)) continue;
        /* libvmaf's summary: the mean of every model, then for a bootstrap
         * collection its bagged score and confidence interval. */
        fprintf(f, "%s: %f\n", info.label, mean);
        if (!info.bootstrap) continue;
        char key[256];
        double bagging = 0, lo = 0, hi = 0, stddev = 0;
        snprintf(key, sizeof(key), "%s_bagging", info.name);
        quale_feature_pooled(ctx, key, QUALE_POOL_MEAN, &bagging);
        snprintf(key, sizeof(key), "%s_ci_p95_lo", info.name);
        quale_feature_pooled(ctx, key, QUALE_POOL_MEAN, &lo);
        snprintf(key, sizeof(key), "%s_ci_p95_hi", info.name);
        quale_feature_pooled(ctx, key, QUALE_POOL_MEAN, &hi);
        snprintf(key, sizeof(key), "%s_stddev", info.name);
        quale_feature_pooled(ctx, key, QUALE_POOL_MEAN, &stddev);
        fprintf(f, "%s: %f, ci.p95: [%f, %f], stddev: %f\n", info.label, bagging, lo, hi, stddev);
    }
    if (models) return;
    /* Metrics only: the mean of every key. */
    (void)s;
    for (unsigned k = 0; k < quale_feature_count(ctx); k++) {
        const char *name = quale_feature_name(ctx, k);
        double mean;
        if (!quale_feature_pooled(ctx, name, QUALE_POOL_MEAN, &mean)) fprintf(f, "%s: %f\n", name, mean);
    }
}

typedef struct ResultsOutput {
    const QualeContext *ctx;
    enum QualeOutputFormat format;
    QualeOutputOptions options;
} ResultsOutput;

static int format_results(void *cookie, FILE *f)
{
    const ResultsOutput *out = cookie;
    return quale_write_output(out->ctx, f, out->format, &out->options);
}

/* Writes the results (output_file.h: whole or not at all, an existing
 * file keeping its mode, owner and links). */
static int write_results(const CliSettings *s, const QualeContext *ctx, double fps)
{
    ResultsOutput out = {
        .ctx = ctx,
        .format = s->output_format,
        .options = { .precision = s->precision, .fps = fps },
    };
    return output_file_write(s->output, format_results, &out) ? EXIT_RUN_FAILED : 0;
}

static int run(const CliSettings *s)
{
    int status = EXIT_RUN_FAILED;
    Input inputs[2] = { { .path = s->reference }, { .path = s->distorted } };
    QualeContext *ctx = NULL;

    if (open_lanes(s, &inputs[0], "reference") || open_lanes(s, &inputs[1], "distorted")) goto out;
    QualeVideoFormat ref_format, dist_format;
    quale_video_get_format(inputs[0].lanes[0], &ref_format);
    quale_video_get_format(inputs[1].lanes[0], &dist_format);
    if (!check_formats(s, &ref_format, &dist_format)) goto out;

    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = s->threads;
    settings.subsample = s->subsample;
    settings.cpumask = s->cpumask;
    settings.backend = s->backend;
    settings.gpu_device = s->gpu_device;
    settings.log_level = s->quiet ? QUALE_LOG_WARNING : QUALE_LOG_INFO;
    if (quale_open(&ctx, &settings)) goto out;

    if (!s->no_prediction) {
        if (s->model_count == 0 && quale_use_model(ctx, "version=vmaf_v0.6.1")) goto out;
        for (unsigned i = 0; i < s->model_count; i++)
            if (quale_use_model(ctx, s->models[i])) goto out;
    }
    for (unsigned i = 0; i < s->feature_count; i++)
        if (quale_use_metric(ctx, s->features[i])) goto out;

    const unsigned planes = quale_planes_needed(ctx);
    for (int i = 0; i < 2; i++)
        for (unsigned k = 0; k < inputs[i].lane_count; k++) quale_video_set_planes(inputs[i].lanes[k], planes);

    Progress progress = { .enabled = !s->quiet && isatty(fileno(stderr)) };
    const double start = now_seconds();
    progress.start = progress.last = start;
    const int frames = score_frames(s, ctx, inputs, &ref_format, &progress);
    if (frames < 0) goto out;
    if (frames == 0) {
        fprintf(stderr, "quale: error: no frames to score in %s and %s\n", s->reference,
                s->distorted);
        goto out;
    }
    if (quale_flush(ctx)) goto out;
    const double elapsed = now_seconds() - start;
    progress_update(&progress, (unsigned)frames, true);

    for (int i = 0; i < 2; i++) {
        uint64_t clamped = 0;
        for (unsigned k = 0; k < inputs[i].lane_count; k++)
            clamped += quale_video_clamped_samples(inputs[i].lanes[k]);
        if (clamped)
            fprintf(stderr, "quale: warning: %s: %llu samples exceeded %u bits and were clamped\n",
                    inputs[i].path, (unsigned long long)clamped, ref_format.bitdepth);
    }

    const double fps = elapsed > 0 ? frames / elapsed : 0.;
    status = 0;
    if (s->output) status = write_results(s, ctx, fps);
    if (!s->output || !s->quiet)
        print_summary(s->output ? stderr : stdout, s, ctx);
    /* The summary is the results when there is no -o: it must arrive. */
    if (!s->output && (fflush(stdout) || ferror(stdout))) {
        fprintf(stderr, "quale: error: writing the summary failed: %s\n", strerror(errno));
        status = EXIT_RUN_FAILED;
    }

out:
    quale_close(&ctx);
    close_lanes(&inputs[0]);
    close_lanes(&inputs[1]);
    return status;
}

int main(int argc, char *argv[])
{
    CliSettings settings;
    char error[512];
    if (cli_parse(argc, argv, &settings, error, sizeof(error))) {
        fprintf(stderr, "quale: %s\nTry 'quale --help' for the options.\n", error);
        return EXIT_USAGE;
    }
    if (settings.help) {
        cli_print_usage(stdout);
        return 0;
    }
    if (settings.version) {
        printf("quale %s\n", quale_version());
        return 0;
    }
    if (settings.list_features) return list_features(settings.list_json);
    if (settings.list_models) return list_models(settings.list_json);
    return run(&settings);
}
