/*
 * What a run leaves (outcome.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outcome.h"
#include "output_file.h"
#include "report.h"

void note_add(InputNotes *n, const char *name, const char *format, ...)
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

int write_results(const CliSettings *s, const ResultsOutput *out)
{
    return output_file_write(s->output, format_results, (void *)out) ? EXIT_RUN_FAILED : 0;
}

int format_to_memory(const Voice *voice, const ResultsOutput *out, char **text, size_t *size)
{
    FILE *f = open_memstream(text, size);
    if (!f) {
        say(voice, "error", "cannot hold the results in memory: %s", strerror(errno));
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

void print_summary(FILE *f, const CliSettings *s, const SummarySource *src)
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

int write_html(const CliSettings *s, const QualeResults *results,
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
