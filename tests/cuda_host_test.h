/*
 * What the CPU tests of the CUDA twins (tests/test_*_cuda_host.cpp) share:
 * a seeded random generator, sample access, the log messages the library
 * sends, metric states made as the context makes them, and a run of the
 * CPU backend through the public API.  Each test defines
 * QUALE_HOST_TEST_SEED (its own random stream) before including this.
 */
#ifndef QUALE_TESTS_CUDA_HOST_TEST_H
#define QUALE_TESTS_CUDA_HOST_TEST_H

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "samples.h"

extern "C" {
#include "context.h"
#include "gpu/cuda/cuda_plan.h" /* CudaSlotLayout: the twins' slots */
#include "metric.h"
#include "option.h"
#include "quale/quale.h"
}

/* xorshift64: the same stream on every platform. */
static uint64_t rng_state = QUALE_HOST_TEST_SEED;

static inline uint32_t rng()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* A luma sample. */
static inline unsigned get(const QualePicture *p, unsigned x, unsigned y)
{
    return get(p, 0, x, y);
}

/* The errors the library logged since messages was last cleared (read
 * once the run is flushed).  The library logs from its workers, several
 * at once: the list takes them under a lock. */
inline std::vector<std::string> messages;
inline std::mutex messages_lock;

static inline void keep_messages(void *, QualeLogLevel level, const char *message)
{
    if (level != QUALE_LOG_ERROR) return;
    const std::lock_guard<std::mutex> hold(messages_lock);
    messages.push_back(message);
}

struct HostOptionTarget {
    const Metric *metric;
    void *state;
};

static inline int host_apply_option(void *cookie, const char *key, const char *value)
{
    HostOptionTarget *t = static_cast<HostOptionTarget *>(cookie);
    const MetricOption *o = option_find(t->metric->options, key);
    char error[256];
    if (!o) return -EINVAL;
    const int err = option_set(o, t->state, value, error, sizeof(error));
    if (err) fprintf(stderr, "  option %s=%s: %s\n", key, value, error);
    return err;
}

/* A state of metric m as the context makes it: defaults, the options of
 * spec, and with init its init() (which declares the keys into
 * declare_ctx's sink).  NULL where they are refused. */
static inline void *make_state(const Metric *m, const char *spec, const QualeVideoFormat *format,
                               QualeContext *declare_ctx, bool init = true)
{
    void *s = calloc(1, m->state_size);
    if (!s) return NULL;
    options_set_defaults(m->options, s);
    HostOptionTarget target = { m, s };
    size_t name_len = 0;
    char error[256];
    if (option_spec_split(spec, &name_len, host_apply_option, &target, error, sizeof(error)) ||
        (init && m->init(s, format, context_sink(declare_ctx)))) {
        if (init && m->close) m->close(s);
        free(s);
        return NULL;
    }
    return s;
}

static inline void free_state(const Metric *m, void *s)
{
    if (s && m->close) m->close(s);
    free(s);
}

/* A context of the CPU backend whose errors go to messages. */
static inline int open_ctx(QualeContext **ctx, unsigned threads)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = threads;
    s.backend = QUALE_BACKEND_CPU;
    s.log = keep_messages;
    s.log_level = QUALE_LOG_ERROR;
    return quale_open(ctx, &s);
}

/* The metrics of specs on the CPU backend through the public API, over
 * the frame pairs; its errors go to messages (cleared first). */
static inline int cpu_run(QualeContext **ctx, const std::vector<const char *> &specs,
                          std::vector<QualePicture> &refs, std::vector<QualePicture> &dists,
                          unsigned threads = 2)
{
    messages.clear();
    int err = open_ctx(ctx, threads);
    for (const char *spec : specs)
        if (!err) err = quale_use_metric(*ctx, spec);
    for (size_t i = 0; !err && i < refs.size(); i++) {
        QualePicture r, d;
        quale_picture_ref(&r, &refs[i]);
        quale_picture_ref(&d, &dists[i]);
        err = quale_send_pictures(*ctx, &r, &d);
    }
    const int flush_err = *ctx ? quale_flush(*ctx) : 0;
    return err ? err : flush_err;
}

/* One metric, two threads. */
static inline int cpu_run(QualeContext **ctx, const char *spec, std::vector<QualePicture> &refs,
                          std::vector<QualePicture> &dists)
{
    return cpu_run(ctx, std::vector<const char *>{ spec }, refs, dists);
}

/* The pictures of a case, given back (unallocated ones are left alone). */
static inline void free_frames(std::vector<QualePicture> &refs, std::vector<QualePicture> &dists)
{
    for (QualePicture &p : refs) quale_picture_unref(&p);
    for (QualePicture &p : dists) quale_picture_unref(&p);
}

#endif /* QUALE_TESTS_CUDA_HOST_TEST_H */
