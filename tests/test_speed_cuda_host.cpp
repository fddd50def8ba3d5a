/*
 * SpEED's CUDA twin (src/cuda/speed.cu, speed_cuda.c), run on the CPU: no
 * GPU needed.
 *
 * speed.cu is included as C++ (cuda_host_compat.h turns the CUDA
 * qualifiers off; its __global__ kernels are left out); every launch of a
 * frame is taken from speed_cuda.c (speed_cuda_step_kernel(): which kernels, and
 * their grids) and emulated block by block and thread by thread through
 * the very element functions the kernels call (speed_stats on one thread,
 * its barriers then ordering nothing), over work memory that starts as
 * random bytes.  The results are then scored through the same steps as the
 * twin's collect() (speed_cuda_pictures(), speed_pair_score(),
 * speed_chroma_write()).
 *
 * Against the C reference: each picture's entropies, variances and
 * singular flag against speed_prepare() + speed_picture_stats() of the
 * same picture, bit for bit (on the CPU the device's log2 is the C
 * library's too); the keys of every frame against a run of the CPU
 * backend through the public API, bit for bit.  Formats 4:2:0, 4:2:2 and
 * 4:4:4 at 8, 10 and 16 bits, sizes from the smallest SpEED takes to 640 x
 * 360, the v1 models' options (prescale 0.6 and 0.5, bilinear), nearest
 * prescales, kernel scales 2/3 and 3/2, every weighting mode, flat
 * pictures (singular: the chroma correction's case), speed_temporal with
 * and without speed_use_ref_diff.  Both twins' plans also run through the
 * plan executor on a fake driver (tests/cuda_plan_run.h), key by key
 * against the CPU.  Prints "N passed, M failed".
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "context.h"
#include "metric.h"
#include "option.h"
#include "quale/quale.h"
#include "metrics/speed/speed.h"
}

#include "metrics/speed/cuda/speed.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x9e3779b97f4a7c15ull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"
#include "speed_cases.h"

extern "C" {
extern const Metric metric_speed_chroma, metric_speed_temporal;
size_t speed_cuda_work_floats(const SpeedGeometry *g);
size_t speed_cuda_result_floats(const SpeedGeometry *g);
bool speed_cuda_step_runs(const SpeedGeometry *g, unsigned step);
const char *speed_cuda_step_kernel(const SpeedGeometry *g, unsigned step, unsigned pictures,
                                   unsigned launch[4]);
void speed_cuda_pictures(const SpeedGeometry *g, const float *results, unsigned pictures,
                         SpeedStats *stats);
}

/* ---- the device, emulated ---------------------------------------------------- */

/* One launch: kernel `name`, blocks launch[0] x launch[1] x launch[2] of
 * launch[3] threads, over the args' work and results. */
static void run_step(const SpeedArgs *a, const std::string &name, const unsigned launch[4])
{
    const SpeedGeometry *g = &a->setup->g;
    for (unsigned z = 0; z < launch[2]; z++) {
        for (unsigned by = 0; by < launch[1]; by++) {
            for (unsigned bx = 0; bx < launch[0]; bx++) {
                if (name == "speed_cov") {
                    double lanes[17];
                    for (int t = 0; t < 17; t++) lanes[t] = speed_cov_lane_at(a, (int)z, (int)bx, t);
                    speed_cov_store(a, (int)z, (int)bx, lanes);
                    continue;
                }
                if (name == "speed_stats") {
                    static SpeedShared sh;
                    memset(&sh, 0xa5, sizeof(sh));
                    speed_stats_at(a, (int)z, &sh, 0, 1);
                    continue;
                }
                if (name == "speed_means") {
                    for (int t = 0; t < SPEED_ELEMENTS; t++) speed_means_at(a, (int)z, t);
                    continue;
                }
                const int width = name == "speed_convert"    ? g->w
                                  : name == "speed_prescale" ? g->scaled_w
                                                             : g->op_w;
                for (unsigned t = 0; t < launch[3]; t++) {
                    const int x = (int)(bx * launch[3] + t);
                    if (x >= width) continue;
                    if (name == "speed_convert") speed_convert_at(a, (int)z, x, (int)by);
                    else if (name == "speed_prescale") speed_prescale_at(a, (int)z, x, (int)by);
                    else if (name == "speed_blur") speed_blur_at(a, (int)z, x, (int)by);
                    else speed_local_mean_at(a, (int)z, x, (int)by);
                }
            }
        }
    }
}

/* Runs every launch of a frame (speed_cuda_step_kernel()) over the args' work and
 * results, which the caller filled with garbage. */
static void run_frame(const SpeedArgs *a, unsigned pictures)
{
    const SpeedGeometry *g = &a->setup->g;
    for (unsigned step = 0; step < 7; step++) {
        if (!speed_cuda_step_runs(g, step)) continue;
        unsigned launch[4];
        const std::string name = speed_cuda_step_kernel(g, step, pictures, launch);
        run_step(a, name, launch);
    }
}

/* The kernels on the fake driver (tests/cuda_fake_driver.h). */
static void fake_speed_kernel(const FakeLaunch *l)
{
    const unsigned launch[4] = { l->grid[0], l->grid[1], l->grid[2], l->block };
    run_step(static_cast<const SpeedArgs *>(l->args), static_cast<const char *>(l->user), launch);
}

static void register_fake_kernels()
{
    static const char *const names[] = { "speed_convert", "speed_prescale", "speed_blur",
                                         "speed_local_mean", "speed_means", "speed_cov",
                                         "speed_stats" };
    for (const char *name : names) fake_kernel_with(name, fake_speed_kernel, name);
}

extern "C" {
extern const CudaTwin cuda_twin_speed_chroma, cuda_twin_speed_temporal;
}

/* ---- the C reference of one picture ------------------------------------------ */

/* Picture z of the args as the C reference loads it: plane rows as floats
 * (the difference of two lumas for speed_temporal). */
static void reference_picture(const SpeedArgs *a, int z, const SpeedGeometry *g, float *dst,
                              size_t stride)
{
    for (int y = 0; y < g->h; y++)
        for (int x = 0; x < g->w; x++) dst[(size_t)y * stride + x] = speed_source(a, z, x, y);
}

static unsigned stats_checked, stats_exact, stats_singular;

/* Picture z's results against speed_prepare() + speed_picture_stats(). */
static void check_picture(const SpeedSetup *setup, const SpeedDsp *dsp, const SpeedArgs *a,
                          int z, const SpeedStats *device, const char *what)
{
    SpeedWork w;
    if (speed_work_alloc(&w, setup, dsp, 0)) {
        CHECK(!"out of memory");
        return;
    }
    reference_picture(a, z, &setup->g, w.ref, w.stride);
    speed_prepare(setup, &w, w.ref);
    speed_picture_stats(setup, &w, w.ref, &w.ref_stats);
    const int blocks = setup->g.blocks;
    const bool same = device->singular == w.ref_stats.singular &&
                      !memcmp(device->entropies, w.ref_stats.entropies, sizeof(float) * blocks) &&
                      !memcmp(device->variances, w.ref_stats.variances, sizeof(float) * blocks);
    stats_checked++;
    stats_singular += device->singular;
    stats_exact += same;
    CHECK(same);
    if (!same)
        fprintf(stderr, "  %s picture %d: singular %d/%d, E[0] %.9g/%.9g, S[0] %.9g/%.9g\n", what,
                z, device->singular, w.ref_stats.singular, device->entropies[0],
                w.ref_stats.entropies[0], device->variances[0], w.ref_stats.variances[0]);
    speed_work_free(&w);
}

/* ---- a case: one metric request on one format, three frames ------------------ */

/* Every key of every frame, bit for bit.  The twin's sink has the metric's
 * own names; the API's carry the options' suffix after them
 * (speed_chroma_u_mxv_45_...), in the same order. */
static void check_keys_equal(const QualeContext *cpu, const QualeContext *twin_ctx,
                             const char *what)
{
    const unsigned keys = quale_feature_count(cpu);
    unsigned same = 0, total = 0;
    CHECK(quale_feature_count(twin_ctx) == keys);
    for (unsigned k = 0; k < keys && k < quale_feature_count(twin_ctx); k++) {
        const char *key = quale_feature_name(cpu, k), *own = quale_feature_name(twin_ctx, k);
        const size_t own_len = strlen(own);
        CHECK(!strncmp(key, own, own_len) && (key[own_len] == 0 || key[own_len] == '_'));
        for (unsigned i = 0; i < 3; i++) {
            double want = NAN, got = NAN;
            quale_feature_value(cpu, key, i, &want);
            const int found = quale_feature_value(twin_ctx, own, i, &got);
            total++;
            same += found == 0 && !memcmp(&want, &got, sizeof(want));
            if (found || memcmp(&want, &got, sizeof(want)))
                fprintf(stderr, "  %s: %s frame %u: CPU %.17g, twin %.17g\n", what, key, i, want,
                        got);
        }
    }
    CHECK(keys > 0 && same == total);
}

static void run_case(const char *spec, const QualeVideoFormat &f, bool flat)
{
    const bool temporal = !strncmp(spec, "speed_temporal", 14);
    const Metric *m = temporal ? &metric_speed_temporal : &metric_speed_chroma;
    char what[200];
    snprintf(what, sizeof(what), "%s on %ux%u %s %u-bit%s", spec, f.width, f.height,
             quale_chroma_name(f.chroma), f.bitdepth, flat ? ", flat" : "");

    std::vector<QualePicture> refs(3), dists(3);
    for (unsigned i = 0; i < 3; i++) {
        quale_picture_alloc(&refs[i], &f);
        quale_picture_alloc(&dists[i], &f);
        speed_fill(&refs[i], i, flat, 1, rng);
        speed_fill(&dists[i], i, flat && i != 2, 2, rng);
    }
    /* The C reference through the API. */
    QualeContext *cpu = NULL;
    int err = cpu_run(&cpu, spec, refs, dists);
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "  %s: the CPU run failed: %s\n", what,
                messages.empty() ? "" : messages[0].c_str());
        quale_close(&cpu);
        free_frames(refs, dists);
        return;
    }

    /* The twin: a state as the context makes it, its launches emulated. */
    QualeContext *twin_ctx = NULL;
    open_ctx(&twin_ctx, 1);
    void *state = make_state(m, spec, &f, twin_ctx);
    CHECK(state != NULL);
    if (!state) {
        quale_close(&cpu);
        quale_close(&twin_ctx);
        free_frames(refs, dists);
        return;
    }
    const SpeedSetup *setup = temporal ? &((SpeedTemporalState *)state)->setup
                                       : &((SpeedChromaState *)state)->setup;
    const SpeedDsp *dsp = temporal ? &((SpeedTemporalState *)state)->dsp
                                   : &((SpeedChromaState *)state)->dsp;
    const unsigned pictures = temporal ? 2 : 4;
    std::vector<float> work(pictures * speed_cuda_work_floats(&setup->g) + 64);
    std::vector<float> results(pictures * speed_cuda_result_floats(&setup->g) + 64);

    for (unsigned i = 0; i < 3; i++) {
        for (float &v : work) v = (float)(rng() % 1000) - 500.5f;
        for (float &v : results) v = (float)(rng() % 1000) - 500.5f;
        SpeedArgs a;
        memset(&a, 0, sizeof(a));
        a.setup = setup;
        a.work = work.data();
        a.work_floats = speed_cuda_work_floats(&setup->g);
        a.results = results.data();
        a.result_floats = speed_cuda_result_floats(&setup->g);
        a.log2_2pie = log2(2 * M_PI * M_E);
        a.hbd = f.bitdepth > 8;
        a.scaler = (float)(1u << (f.bitdepth - 8));
        const QualePicture *r = &refs[i], *d = &dists[i];
        FeatureSink *sink = context_sink(twin_ctx);
        if (temporal) {
            const SpeedTemporalState *s = (const SpeedTemporalState *)state;
            if (i == 0) {
                feature_sink_put(sink, s->key, 0, 0.0);
                continue;
            }
            a.src[0] = (const uint8_t *)refs[i - 1].data[0];
            a.sub[0] = (const uint8_t *)r->data[0];
            a.src[1] = (const uint8_t *)dists[i - 1].data[0];
            a.sub[1] = (const uint8_t *)(s->use_ref_diff ? r->data[0] : d->data[0]);
            a.stride[0] = a.stride[1] = (unsigned long long)r->stride[0];
        } else {
            for (unsigned c = 0; c < 2; c++) {
                a.src[2 * c] = (const uint8_t *)r->data[1 + c];
                a.src[2 * c + 1] = (const uint8_t *)d->data[1 + c];
                a.stride[2 * c] = a.stride[2 * c + 1] = (unsigned long long)r->stride[1 + c];
            }
        }
        run_frame(&a, pictures);
        SpeedStats stats[4];
        speed_cuda_pictures(&setup->g, results.data(), pictures, stats);
        for (unsigned z = 0; z < pictures; z++) check_picture(setup, dsp, &a, (int)z, &stats[z], what);
        /* collect(): the scores through the C reference's steps. */
        speed_write_stats(state, temporal, setup, stats, true, i, sink);
    }

    check_keys_equal(cpu, twin_ctx, what);

    /* The twin's plan through the executor, as the backend runs it, with a
     * state of its own. */
    QualeContext *plan_ctx = NULL;
    CHECK(open_ctx(&plan_ctx, 1) == 0);
    void *plan_state = plan_ctx ? make_state(m, spec, &f, plan_ctx) : NULL;
    CHECK(plan_state != NULL);
    if (plan_state)
        CHECK(plan_run_matches_cpu(temporal ? cuda_twin_speed_temporal : cuda_twin_speed_chroma,
                                   *m, plan_state, refs, dists, context_sink(plan_ctx), cpu,
                                   what));
    free_state(m, plan_state);
    quale_close(&plan_ctx);
    free_state(m, state);
    quale_close(&cpu);
    quale_close(&twin_ctx);
    free_frames(refs, dists);
}

int main()
{
    register_fake_kernels();
    for (const QualeVideoFormat &f : speed_formats) {
        for (const char *spec : speed_chroma_specs)
            if (speed_case_runs(spec, &f)) run_case(spec, f, false);
        for (const char *spec : speed_temporal_specs)
            if (speed_case_runs(spec, &f)) run_case(spec, f, false);
    }
    /* Flat chroma: singular covariances (the v1 models' chroma correction). */
    run_case(SPEED_V1_SPEC, speed_formats[0], true);
    run_case("speed_temporal", speed_formats[0], true);
    printf("pictures: %u compared, %u bit for bit, %u singular\n", stats_checked, stats_exact,
           stats_singular);
    /* both paths taken: the solve, and the singular one (flat cases at least) */
    CHECK(stats_singular > 0 && stats_singular < stats_checked);
    return test_summary();
}
