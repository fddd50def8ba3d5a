/*
 * What a run's results are asked: the frames sent and done, the keys and
 * their values, pooled values, scores imported from elsewhere, and the
 * results written (quale_write_output()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "common.h"
#include "context_private.h"
#include "output.h"
#include "provenance.h"

unsigned quale_frame_count(const QualeContext *ctx)
{
    if (!ctx) return 0;
    /* Under flow_lock, as quale_frames_done() reads it: a progress display
     * may ask while another thread sends. */
    pthread_mutex_t *lock = (pthread_mutex_t *)&ctx->flow_lock;
    pthread_mutex_lock(lock);
    const unsigned sent = ctx->frames_sent;
    pthread_mutex_unlock(lock);
    return sent;
}

int context_import_score(QualeContext *ctx, const char *key, unsigned index, double value)
{
    if (!ctx || !key) return -EINVAL;
    /* One owner for every imported key: imports may fill any frame of
     * their keys, and no metric or model may write them too. */
    static const char import_owner = 0;
    FeatureSink sink = ctx->raw_sink;
    sink.owner = &import_owner;
    unsigned id;
    int err = feature_sink_declare_plain(&sink, key, &id);
    if (err == -EEXIST) {
        context_log(ctx, QUALE_LOG_ERROR, "cannot import '%s': a metric or model writes it",
                    key);
        return -EINVAL;
    }
    if (!err) err = feature_sink_put(&sink, id, index, value);
    return err;
}

unsigned quale_frames_done(const QualeContext *ctx)
{
    if (!ctx) return 0;
    /* The lock is the context's own; reading under it changes nothing. */
    pthread_mutex_t *lock = (pthread_mutex_t *)&ctx->flow_lock;
    pthread_mutex_lock(lock);
    const unsigned done = ctx->frames_sent - ctx->in_flight;
    pthread_mutex_unlock(lock);
    return done;
}

/* ---- results ------------------------------------------------------------ */

int context_results_ready(const QualeContext *ctx, const char *caller)
{
    if (!ctx->flushed) {
        context_log(ctx, QUALE_LOG_ERROR, "%s() before quale_flush(): the results are not "
                    "complete yet (the frames in flight and the models come with the flush)",
                    caller);
        return -EBUSY;
    }
    const int err = atomic_load(&ctx->error);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "%s(): the run failed (%s); it has no results",
                    caller, strerror(-err));
        return err;
    }
    if (ctx->frames_sent == 0) {
        context_log(ctx, QUALE_LOG_ERROR, "%s(): no frames were scored", caller);
        return -ENODATA;
    }
    return 0;
}

unsigned quale_feature_count(const QualeContext *ctx)
{
    return ctx ? collector_key_count(ctx->collector) : 0;
}

const char *quale_feature_name(const QualeContext *ctx, unsigned i)
{
    return ctx ? collector_key_name(ctx->collector, collector_output_key(ctx->collector, i))
               : NULL;
}

int quale_feature_value(const QualeContext *ctx, const char *key, unsigned frame,
                        double *value)
{
    if (!ctx || !key || !value) return -EINVAL;
    unsigned id;
    int err = collector_find(ctx->collector, key, &id);
    if (err) return err;
    return collector_get(ctx->collector, id, frame, value);
}

int context_pool_range(const QualeContext *ctx, const char *key, enum QualePool method,
                       unsigned first, unsigned end, double *value)
{
    unsigned id;
    const int err = collector_find(ctx->collector, key, &id);
    if (err) return err;
    return collector_pool_range(ctx->collector, id, method, first, end,
                                ctx->settings.subsample, value);
}

int quale_pool_method_check(const char *method)
{
    PoolMethod m;
    return method ? pool_method_parse(method, &m) : -EINVAL;
}

int quale_feature_pooled_by(const QualeContext *ctx, const char *key, const char *method,
                            double *value)
{
    if (!ctx || !key || !method || !value) return -EINVAL;
    PoolMethod m;
    int err = pool_method_parse(method, &m);
    if (err) {
        context_log(ctx, QUALE_LOG_ERROR, "'%s' is not a pooling method (min, max, mean, "
                    "harmonic_mean, pN, lowN)", method);
        return err;
    }
    if ((err = context_results_ready(ctx, "quale_feature_pooled_by"))) return err;
    unsigned id;
    if ((err = collector_find(ctx->collector, key, &id))) return err;
    return collector_pool_method(ctx->collector, id, &m, 0, ctx->frames_sent,
                                 ctx->settings.subsample, value);
}

int quale_feature_pooled(const QualeContext *ctx, const char *key,
                         enum QualePool method, double *value)
{
    if (!ctx || !key || !value) return -EINVAL;
    int err = context_results_ready(ctx, "quale_feature_pooled");
    if (err) return err;
    unsigned id;
    err = collector_find(ctx->collector, key, &id);
    if (err) return err;
    return collector_pool(ctx->collector, id, method, ctx->frames_sent,
                          ctx->settings.subsample, value);
}

/* The records a file's provenance holds: the context's own when the
 * caller asks (describe_run), then the caller's, copied (the writer checks
 * their names and text). */
static int gather_provenance(const QualeContext *ctx, const QualeOutputOptions *options,
                             Provenance *p)
{
    if (!options) return 0;
    if (options->provenance_count && !options->provenance) {
        context_log(ctx, QUALE_LOG_ERROR, "quale_write_output(): %u provenance records, but "
                    "none given", options->provenance_count);
        return -EINVAL;
    }
    if (options->describe_run && context_describe(ctx, p)) return p->error;
    for (unsigned i = 0; i < options->provenance_count; i++) {
        const QualeProvenanceRecord *r = &options->provenance[i];
        if (!r->section || (r->fact_count && !r->facts)) {
            context_log(ctx, QUALE_LOG_ERROR, "quale_write_output(): provenance record %u has "
                        "no section or no facts", i);
            return -EINVAL;
        }
        for (unsigned k = 0; k < r->fact_count; k++)
            if (!r->facts[k].name || !r->facts[k].value) {
                context_log(ctx, QUALE_LOG_ERROR, "quale_write_output(): provenance record "
                            "%u: a fact has no name or no value", i);
                return -EINVAL;
            }
        if (provenance_copy(p, r)) return p->error;
    }
    return 0;
}

int quale_write_output(const QualeContext *ctx, FILE *stream,
                       enum QualeOutputFormat format, const QualeOutputOptions *options)
{
    if (!ctx || !stream) return -EINVAL;
    const int ready = context_results_ready(ctx, "quale_write_output");
    if (ready) return ready;
    const QualeVideoFormat *fmt = context_format(ctx);
    const unsigned frames = quale_frame_count(ctx);
    OutputSource src = {
        .log = &ctx->log,
        .collector = context_collector(ctx),
        .width = fmt ? fmt->width : 0,
        .height = fmt ? fmt->height : 0,
        .subsample = context_subsample(ctx),
        .first = 0,
        .end = frames,
        .fps = options ? options->fps : 0.,
        .notes = options ? options->notes : NULL,
        .note_count = options ? options->note_count : 0,
        .pool_methods = options ? options->pool_methods : NULL,
        .pool_method_count = options && options->pool_methods ? options->pool_method_count : 0,
    };
    if (options && (options->frame_first || options->frame_end)) {
        if (options->frame_first >= options->frame_end || options->frame_end > frames) {
            context_log(ctx, QUALE_LOG_ERROR, "quale_write_output(): the frames [%u, %u) are "
                        "not frames of the run (0 to %u)", options->frame_first,
                        options->frame_end, frames);
            return -EINVAL;
        }
        src.first = options->frame_first;
        src.end = options->frame_end;
    }
    if (options) {
        src.offset = options->frame_number_offset;
        src.segment = options->segment;
        if (src.segment && (src.segment->first != src.first + src.offset ||
                            src.segment->end != src.end + src.offset)) {
            context_log(ctx, QUALE_LOG_ERROR, "quale_write_output(): the segment's frames [%u, "
                        "%u) are not those written, [%u, %u)", src.segment->first,
                        src.segment->end, src.first + src.offset, src.end + src.offset);
            return -EINVAL;
        }
    }
    if (src.offset > UINT32_MAX - src.end) {
        context_log(ctx, QUALE_LOG_ERROR, "quale_write_output(): frame numbers past 2^32");
        return -EINVAL;
    }
    Provenance provenance = { 0 };
    int err = gather_provenance(ctx, options, &provenance);
    if (!err) {
        src.provenance = provenance.count ? provenance_records(&provenance) : NULL;
        src.provenance_count = provenance.count;
        err = output_write(&src, stream, format, options ? options->precision : -1, NULL, 0);
    }
    provenance_free(&provenance);
    return err;
}
