/*
 * quale: the tool's entry.  A scoring run (run.c, or gpus.c for --gpu),
 * or one of its other commands: the listings (listing.c), quale merge
 * (merge.c), quale report (report.c), quale check-options (below).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "batch.h"
#include "cli.h"
#include "gpus.h"
#include "inputs.h"
#include "listing.h"
#include "merge.h"
#include "messages.h"
#include "output_file.h"
#include "provenance.h"
#include "report.h"
#include "run.h"

/* --align auto: the offset found becomes skips of the reference or the
 * distorted frames, said in one line.  0, or the exit status. */
static int apply_alignment(CliSettings *s)
{
    AlignResult a;
    char error[1024];
    const AlignVideo ref = { s->reference, raw_format_for(s, s->reference), s->ref_vf,
                             s->frame_skip_ref };
    const AlignVideo dist = { s->distorted, raw_format_for(s, s->distorted), s->dist_vf,
                              s->frame_skip_dist };
    const int err = align_find(&ref, &dist, s->align_window, s->scaler ? s->scaler : "bicubic",
                               &a, error, sizeof(error));
    if (err) {
        say(NULL, "error", "--align auto: %s", error);
        return err == -EINVAL || err == -ENOTSUP ? EXIT_USAGE : EXIT_RUN_FAILED;
    }
    if (a.offset > 0) s->frame_skip_dist += (unsigned)a.offset;
    else s->frame_skip_ref += (unsigned)-a.offset;
    snprintf(s->align_note, sizeof(s->align_note), "auto: offset %+d frames (frame_skip_ref %u, "
             "frame_skip_dist %u), luma PSNR %.2f dB (%.2f dB unshifted), window %u", a.offset,
             s->frame_skip_ref, s->frame_skip_dist, a.psnr, a.psnr_unshifted, s->align_window);
    if (a.offset == 0)
        say(NULL, "note", "--align auto: the videos are aligned (luma PSNR %.2f dB; offsets to %u "
            "frames either way tried)", a.psnr, s->align_window);
    else
        say(NULL, "note", "--align auto: the %s starts %d frame%s later than the %s (luma PSNR %.2f dB "
            "there, %.2f dB unshifted): skipping %d %s frame%s (--frame_skip_%s %u)",
            a.offset > 0 ? "reference" : "distorted video", abs(a.offset),
            abs(a.offset) == 1 ? "" : "s", a.offset > 0 ? "distorted video" : "reference",
            a.psnr, a.psnr_unshifted, abs(a.offset), a.offset > 0 ? "distorted" : "reference",
            abs(a.offset) == 1 ? "" : "s", a.offset > 0 ? "dist" : "ref",
            a.offset > 0 ? s->frame_skip_dist : s->frame_skip_ref);
    return 0;
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

int score_with_settings(CliSettings *s)
{
    if (outputs_distinct(s)) return EXIT_USAGE;
    const int aligned = s->align_auto ? apply_alignment(s) : 0;
    if (aligned) return aligned;
    if (s->gpu_all || s->gpu_count) return run_on_gpus(s);
    return run(s, NULL);
}

int main(int argc, char *argv[])
{
    if (argc >= 2 && !strcmp(argv[1], "check-options"))
        return check_options_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "merge")) return merge_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "report")) return report_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "batch")) return batch_main(argc - 1, argv + 1);
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
    if (settings.list_devices) return print_devices(settings.list_json);
    return score_with_settings(&settings);
}
