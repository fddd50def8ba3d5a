/*
 * Fuzz target: the tool's flag parser (tools/quale/cli.c cli_parse) and what it
 * hands to the library: --feature specs (quale_use_metric, the option
 * parser of src/option.c), -m specs (quale_use_model with version=; path=
 * is left to the model target), the CTC presets, the raw format.  A
 * feature that would write files (cambi's heatmaps_path) is not requested.
 *
 * Input: the arguments, separated by NUL bytes (argv[0] is added).  When
 * the parse succeeds and asks for a run, a context is opened (one thread,
 * CPU) and every model and feature requested; when all are accepted, two
 * frames are scored (of the raw format when it is given and small, else
 * 64x48 4:2:0 8-bit) and the results written in the chosen layout to
 * memory.  Any refusal along the way must come with an error message
 * through the log callback.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"
#include "quale/quale.h"

#define FUZZ_MAX_ARGS 64
#define FUZZ_MAX_SAMPLES (256 * 224)

typedef struct Log {
    unsigned errors;
    bool verbose; /* QUALE_FUZZ_VERBOSE is set: show the messages */
} Log;

static void on_log(void *cookie, enum QualeLogLevel level, const char *message)
{
    Log *log = cookie;
    FUZZ_CHECK(message != NULL && message[0] != '\0');
    if (level == QUALE_LOG_ERROR) log->errors++;
    if (log->verbose) fprintf(stderr, "  log %d: %s\n", (int)level, message);
}

static void fill(QualePicture *pic, unsigned frame, unsigned salt)
{
    const unsigned depth = pic->format.bitdepth, max = (1u << depth) - 1;
    for (unsigned p = 0; p < pic->plane_count; p++) {
        for (unsigned y = 0; y < pic->plane_height[p]; y++) {
            uint8_t *row = (uint8_t *)pic->data[p] + (size_t)y * (size_t)pic->stride[p];
            for (unsigned x = 0; x < pic->plane_width[p]; x++) {
                const unsigned v = ((x * 37 + y * 11 + frame * 7 + p * 29) ^ (salt * x * y)) & max;
                if (depth > 8) ((uint16_t *)(void *)row)[x] = (uint16_t)v;
                else row[x] = (uint8_t)v;
            }
        }
    }
}

/* A refusal (negative) must have logged an error. */
#define REFUSED(call) ((err = (call)) < 0 ? (FUZZ_CHECK(log.errors > errors_before), true) : false)

static void score(const CliSettings *s)
{
    Log log = { 0, getenv("QUALE_FUZZ_VERBOSE") != NULL };
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = 1;
    settings.subsample = s->subsample;
    settings.cpumask = s->cpumask;
    settings.log = on_log;
    settings.log_cookie = &log;
    QualeContext *ctx = NULL;
    FUZZ_CHECK(quale_open(&ctx, &settings) == 0);

    int err = 0;
    unsigned errors_before = 0;
    bool ok = true;
    if (!s->no_prediction) {
        if (s->model_count == 0) {
            errors_before = log.errors;
            ok = !REFUSED(quale_use_model(ctx, "version=vmaf_v0.6.1"));
        }
        for (unsigned i = 0; ok && i < s->model_count; i++) {
            if (strstr(s->models[i], "path")) continue; /* no files from here */
            errors_before = log.errors;
            ok = !REFUSED(quale_use_model(ctx, s->models[i]));
        }
    }
    for (unsigned i = 0; ok && i < s->feature_count; i++) {
        if (strstr(s->features[i], "heatmaps_path")) continue; /* cambi writes files */
        errors_before = log.errors;
        ok = !REFUSED(quale_use_metric(ctx, s->features[i]));
    }

    QualeVideoFormat f = { QUALE_CHROMA_420, 8, 64, 48 };
    if (s->raw_given && quale_video_format_check(&s->raw, NULL, 0) == 0 &&
        (uint64_t)s->raw.width * s->raw.height <= FUZZ_MAX_SAMPLES)
        f = s->raw;

    for (unsigned frame = 0; ok && frame < 2; frame++) {
        QualePicture ref, dist;
        FUZZ_CHECK(quale_context_alloc_picture(ctx, &ref, &f) == 0);
        FUZZ_CHECK(quale_context_alloc_picture(ctx, &dist, &f) == 0);
        fill(&ref, frame, 0);
        fill(&dist, frame, 3);
        errors_before = log.errors;
        ok = !REFUSED(quale_send_pictures(ctx, &ref, &dist));
    }
    if (ok) {
        errors_before = log.errors;
        ok = !REFUSED(quale_flush(ctx));
    }
    if (log.verbose)
        fprintf(stderr, "  %ux%u %s %u-bit: %s, %u keys\n", f.width, f.height,
                quale_chroma_name(f.chroma), f.bitdepth, ok ? "scored" : "refused",
                quale_feature_count(ctx));
    if (ok) {
        FUZZ_CHECK(log.errors == 0);
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        FUZZ_CHECK(out != NULL);
        const QualeOutputOptions options = { .precision = s->precision, .fps = 1.0 };
        FUZZ_CHECK(quale_write_output(ctx, out, s->output_format, &options) == 0);
        fclose(out);
        FUZZ_CHECK(len > 0);
        free(text);
    }
    quale_close(&ctx);
}

int quale_fuzz_cli(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *copy = malloc(size + 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';

    char *argv[FUZZ_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"quale";
    for (size_t at = 0; at < size && argc <= FUZZ_MAX_ARGS;) {
        argv[argc++] = copy + at;
        at += strlen(copy + at) + 1;
    }
    argv[argc] = NULL;

    CliSettings s;
    char error[512];
    const int err = cli_parse(argc, argv, &s, error, sizeof(error));
    if (getenv("QUALE_FUZZ_VERBOSE"))
        fprintf(stderr, "  cli_parse: %d %s\n", err, error);
    if (err) {
        FUZZ_CHECK(error[0] != '\0');
    } else {
        FUZZ_CHECK(s.model_count <= CLI_MAX_ENTRIES && s.feature_count <= CLI_MAX_ENTRIES);
        FUZZ_CHECK(s.precision >= -1 && s.precision <= 17);
        if (!(s.help || s.version || s.list_features || s.list_models)) {
            FUZZ_CHECK(s.reference && s.distorted);
            if (s.raw_given) FUZZ_CHECK(quale_video_format_check(&s.raw, NULL, 0) == 0);
            score(&s);
        }
    }
    free(copy);
    return 0;
}

FUZZ_TARGET(quale_fuzz_cli)
