/*
 * The context's room that says what produced its results: the library's
 * version and build, the backend and device, the models and the metrics
 * with their options, as provenance records (src/provenance.h) that
 * quale_write_output() writes beside the results when asked.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "build_describe.h"
#include "context_private.h"
#include "cpu.h"
#include "option.h"
#include "provenance.h"

/* The compiler and build type come from src/meson.build. */
#ifndef QUALE_COMPILER
#define QUALE_COMPILER "unknown"
#endif
#ifndef QUALE_BUILD_TYPE
#define QUALE_BUILD_TYPE "unknown"
#endif

/* The widest instruction set the CPU kernels may use, by libvmaf's names. */
static const char *widest_simd(unsigned flags)
{
    if (!QUALE_X86_SIMD) return "none";
    static const struct { unsigned flag; const char *name; } sets[] = {
        { QUALE_CPU_AVX512ICL, "avx512icl" }, { QUALE_CPU_AVX512, "avx512" },
        { QUALE_CPU_AVX2, "avx2" },           { QUALE_CPU_SSE41, "sse4.1" },
        { QUALE_CPU_SSSE3, "ssse3" },         { QUALE_CPU_SSE2, "sse2" },
    };
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
        if (flags & sets[i].flag) return sets[i].name;
    return "none";
}

/* quale: the version, the source it was built from, how, and the
 * backends built in (what could have run). */
static void describe_build(Provenance *p)
{
    provenance_begin(p, "quale");
    provenance_fact(p, "version", quale_version());
    provenance_fact(p, "build", QUALE_BUILD_DESCRIBE);
    provenance_fact(p, "compiler", QUALE_COMPILER);
    provenance_fact(p, "build_type", QUALE_BUILD_TYPE);
    static const enum QualeBackend backends[] = { QUALE_BACKEND_CPU, QUALE_BACKEND_CUDA,
                                                  QUALE_BACKEND_VULKAN, QUALE_BACKEND_HIP };
    char built[64] = "";
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
        if (quale_backend_built(backends[i]))
            snprintf(built + strlen(built), sizeof(built) - strlen(built), "%s%s",
                     built[0] ? ", " : "", quale_backend_name(backends[i]));
    provenance_fact(p, "backends_built", built);
}

/* backend: which one ran, on what device, with how many workers and
 * which instruction sets for the metrics left on the CPU. */
static void describe_backend(const QualeContext *ctx, Provenance *p)
{
    provenance_begin(p, "backend");
    provenance_fact(p, "name", quale_backend_name(ctx->backend));
    if (ctx->gpu && ctx->gpu_ops) {
        QualeDeviceInfo info = { 0 };
        ctx->gpu_ops->device.describe(ctx->gpu, &info);
        provenance_fact(p, "device", info.name);
        provenance_factf(p, "device_index", "%u", info.index);
    }
    provenance_factf(p, "threads", "%u", ctx->worker_count);
    provenance_fact(p, "simd", widest_simd(ctx->cpu_flags));
    if (ctx->settings.cpumask) provenance_factf(p, "cpumask", "%u", ctx->settings.cpumask);
}

/* model: its output name, and the built-in version or the file it came
 * from. */
static void describe_models(const QualeContext *ctx, Provenance *p)
{
    for (unsigned i = 0; i < ctx->model_count; i++) {
        const Model *m = ctx->models[i];
        const char *label = model_label(m);
        bool builtin = false;
        for (const char *const *v = model_builtin_versions(); *v && !builtin; v++)
            builtin = !strcmp(*v, label);
        provenance_begin(p, "model");
        provenance_fact(p, "name", model_name(m));
        provenance_fact(p, builtin ? "version" : "path", label);
        if (model_is_bootstrap(m)) provenance_fact(p, "bootstrap", "true");
    }
}

/* feature: each metric instance, with the options not at their default
 * (as --feature takes them), and where it ran. */
static void describe_features(const QualeContext *ctx, Provenance *p)
{
    for (unsigned i = 0; i < ctx->instance_count; i++) {
        const MetricInstance *in = ctx->instances[i];
        char request[1024];
        options_describe(in->metric->name, in->metric->options, in->state, request,
                         sizeof(request));
        const size_t name_length = strlen(in->metric->name);
        provenance_begin(p, "feature");
        provenance_fact(p, "name", in->metric->name);
        /* options_describe() writes "name=option=value:..." */
        if (request[name_length] == '=') provenance_fact(p, "options", request + name_length + 1);
        provenance_fact(p, "runs_on", in->on_gpu ? quale_backend_name(ctx->backend) : "cpu");
    }
}

int context_describe(const QualeContext *ctx, Provenance *p)
{
    describe_build(p);
    describe_backend(ctx, p);
    describe_models(ctx, p);
    describe_features(ctx, p);
    return p->error;
}
