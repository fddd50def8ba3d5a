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
