/*
 * --gpu (gpus.h): the GPUs chosen, one part of the run on each at once,
 * the parts merged.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpus.h"
#include "merge.h"
#include "messages.h"
#include "outcome.h"
#include "output_file.h"
#include "run.h"

int gpus_choose(const CliSettings *s, unsigned gpus[CLI_MAX_GPUS], unsigned *count)
{
    *count = 0;
    if (!s->gpu_all) {
        memcpy(gpus, s->gpus, sizeof(gpus[0]) * s->gpu_count);
        *count = s->gpu_count;
        return 0;
    }
    QualeDeviceInfo devices[CLI_MAX_GPUS];
    char error[512];
    unsigned listed = 0;
    if (quale_list_devices(s->backend, devices, CLI_MAX_GPUS, &listed, error, sizeof(error))) {
        say(NULL, "error", "--gpu all: %s", error);
        return EXIT_RUN_FAILED;
    }
    for (unsigned i = 0; i < listed && i < CLI_MAX_GPUS; i++)
        if (devices[i].type != QUALE_DEVICE_SOFTWARE) gpus[(*count)++] = devices[i].index;
    if (!*count) {
        say(NULL, "error", "--gpu all: the %s backend sees no GPU", quale_backend_name(s->backend));
        return EXIT_RUN_FAILED;
    }
    return 0;
}

static void *run_part_thread(void *arg)
{
    RunPart *part = arg;
    part->status = run(part->settings, part);
    return NULL;
}

/* The parts, one a GPU, at once: 0 once every thread has ended, or an
 * exit status when one could not start (those started are waited for). */
static int run_parts(const CliSettings *part_settings, const unsigned *gpus, unsigned count,
                     RunPart *parts, SharedCount *frame_count)
{
    pthread_t *threads = calloc(count, sizeof(*threads));
    if (!threads) {
        say(NULL, "error", "out of memory");
        return EXIT_RUN_FAILED;
    }
    unsigned started = 0;
    for (unsigned k = 0; k < count; k++) {
        parts[k] = (RunPart){ .settings = part_settings, .count = frame_count,
                              .part = k + 1, .parts = count, .gpu = (int)gpus[k] };
        if (pthread_create(&threads[k], NULL, run_part_thread, &parts[k])) {
            say(NULL, "error", "cannot start a thread for GPU %u", gpus[k]);
            break;
        }
        started++;
    }
    for (unsigned k = 0; k < started; k++) pthread_join(threads[k], NULL);
    free(threads);
    return started < count ? EXIT_RUN_FAILED : 0;
}

/* The parts' results read back (those with frames: `working` of them) and
 * the slowest part's time.  0, or an exit status. */
static int read_parts(const unsigned *gpus, unsigned count, const RunPart *parts,
                      QualeResults **results, unsigned *working, double *slowest)
{
    *working = 0;
    *slowest = 0.;
    for (unsigned k = 0; k < count; k++) {
        if (parts[k].status) {
            say(NULL, "error", "the part on GPU %u failed", gpus[k]);
            return parts[k].status;
        }
        if (parts[k].idle) continue;
        char error[1024];
        if (quale_results_read(&results[*working], parts[k].json, parts[k].json_size, "a part",
                               error, sizeof(error))) {
            say(NULL, "error", "%s", error);
            return EXIT_RUN_FAILED;
        }
        (*working)++;
        if (parts[k].seconds > *slowest) *slowest = parts[k].seconds;
    }
    return 0;
}

/* The merged run's file, summary and page, as one GPU's run leaves them. */
static int write_merged(const CliSettings *s, QualeResults *const *results, unsigned working,
                        unsigned count, const RunPart *first, double slowest)
{
    QualeResults *merged = NULL;
    if (working < count && !s->quiet)
        say(NULL, "note", "fewer frames than GPUs: %u of the %u GPUs had frames to score",
            working, count);
    if (merge_write((const QualeResults *const *)results, working, s->output, s->output_format,
                    s->precision, s->pools, s->pool_count, &merged))
        return EXIT_RUN_FAILED;
    int status = 0;
    if (!s->output || !s->quiet) {
        const SummarySource summary = { .results = merged, .models = first->models,
                                        .model_count = first->model_count };
        print_summary(s->output ? stderr : stdout, s, &summary);
    }
    if (s->html)
        status = write_html(s, merged, first->models, first->model_count, NULL, s->backend,
                            count);
    if (!s->quiet) {
        const unsigned frames = quale_results_frame_count(merged);
        say(NULL, "note", "%u frame%s on %u GPU%s in %.2f s: %.1f fps", frames,
            frames == 1 ? "" : "s", working, working == 1 ? "" : "s", slowest,
            slowest > 0 ? frames / slowest : 0.);
    }
    quale_results_close(&merged);
    return status;
}

int run_on_gpus(const CliSettings *s)
{
    unsigned gpus[CLI_MAX_GPUS], count;
    int status = gpus_choose(s, gpus, &count);
    if (status) return status;
    if (s->segment_parts) {
        say(NULL, "error", "--gpu and --segment both split the run: give one");
        return EXIT_USAGE;
    }
    if (count > 1 && (!strcmp(s->reference, "-") || !strcmp(s->distorted, "-"))) {
        say(NULL, "error", "--gpu reads each GPU's part of the videos on its own: give files, "
            "not standard input");
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
    QualeResults **results = calloc(count, sizeof(*results));
    status = EXIT_RUN_FAILED;
    if (!parts || !results) {
        say(NULL, "error", "out of memory");
        goto out;
    }
    say(NULL, "note", "spreading the frames over %u GPUs of the %s backend", count,
        quale_backend_name(s->backend));
    CliSettings part_settings = *s;
    part_settings.gpu_all = false;
    part_settings.gpu_count = 0;
    SharedCount frame_count = { .lock = PTHREAD_MUTEX_INITIALIZER };
    unsigned working;
    double slowest;
    if (!(status = run_parts(&part_settings, gpus, count, parts, &frame_count)) &&
        !(status = read_parts(gpus, count, parts, results, &working, &slowest)))
        status = write_merged(s, results, working, count, &parts[0], slowest);
out:
    for (unsigned k = 0; parts && k < count; k++) {
        free(parts[k].json);
        for (unsigned i = 0; i < parts[k].model_count; i++) {
            free((char *)parts[k].models[i].name);
            free((char *)parts[k].models[i].label);
        }
        quale_results_close(&results[k]);
    }
    free(parts);
    free(results);
    return status;
}
