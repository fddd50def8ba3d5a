/*
 * A CUDA twin's plan run as the backend runs it, on the fake driver
 * (cuda_fake_driver.h), for the host tests: init for the pictures' format
 * with two slots, frame f enqueued on slot f % 2 and collected into a
 * sink, and every key the CPU backend wrote for the metric compared, bit
 * for bit, with what the twin's collect() wrote.  The test registers its
 * kernels (fake_kernel_with) before; *backwards, when given, is set for
 * each frame (odd frames: blocks and threads run backwards).
 */
#ifndef QUALE_TESTS_CUDA_PLAN_RUN_H
#define QUALE_TESTS_CUDA_PLAN_RUN_H

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda_fake_driver.h"
#include "cuda_host_test.h"

/* The device frame of frame f of host pictures: every plane the picture
 * has, and the lumas of the two frames before it (the backend gives them to
 * twins with a history). */
static inline CudaFrame plan_run_frame(const std::vector<QualePicture> &refs,
                                       const std::vector<QualePicture> &dists, unsigned f)
{
    CudaFrame frame = {};
    frame.index = f;
    for (unsigned p = 0; p < refs[f].plane_count; p++) {
        frame.ref[p] = (CUdeviceptr)(uintptr_t)refs[f].data[p];
        frame.dist[p] = (CUdeviceptr)(uintptr_t)dists[f].data[p];
        frame.stride[p] = refs[f].stride[p];
        frame.width[p] = refs[f].plane_width[p];
        frame.height[p] = refs[f].plane_height[p];
    }
    for (unsigned k = 0; k < 2 && k < f; k++) {
        frame.prev_ref[k] = (CUdeviceptr)(uintptr_t)refs[f - 1 - k].data[0];
        frame.prev_dist[k] = (CUdeviceptr)(uintptr_t)dists[f - 1 - k].data[0];
    }
    return frame;
}

/* The twin's plan run as the backend runs it, collecting into `sink` (the
 * sink its state declared its keys in); with `flush`, the metric's flush()
 * after the last frame, as the context runs it.  True when it went
 * through and left nothing allocated or written past its memory; what went
 * wrong is printed after `label`. */
static inline bool plan_run(const CudaTwin &twin, const Metric &metric, const void *state,
                            std::vector<QualePicture> &refs, std::vector<QualePicture> &dists,
                            FeatureSink *sink, const char *label, bool *backwards = nullptr,
                            bool flush = false)
{
    CudaDevice dev;
    fake_device(&dev);
    fake_reset();
    char error[256] = "";
    void *run = NULL;
    int err = cuda_twin_init(&twin, &dev, NULL, state, &refs[0].format, 2, &run, error,
                             sizeof(error));
    for (unsigned f = 0; f < refs.size() && !err; f++) {
        const CudaFrame frame = plan_run_frame(refs, dists, f);
        if (backwards) *backwards = f % 2 == 1;
        err = cuda_twin_enqueue(&twin, run, f % 2, &frame, NULL, error, sizeof(error));
        MetricFrame mf = {};
        mf.index = f;
        mf.ref = &refs[f];
        mf.dist = &dists[f];
        for (unsigned k = 0; k < 2 && k < f; k++) {
            mf.prev_ref[k] = &refs[f - 1 - k];
            mf.prev_dist[k] = &dists[f - 1 - k];
        }
        if (!err) err = cuda_twin_collect(&twin, run, f % 2, &mf, sink);
    }
    if (run) cuda_twin_close(&twin, run);
    if (!err && flush && metric.flush)
        err = metric.flush(const_cast<void *>(state), sink, (unsigned)refs.size());
    if (err) fprintf(stderr, "  %s: the plan executor: %s\n", label, error[0] ? error : "failed");
    if (fake.guard_broken) fprintf(stderr, "  %s: written past device memory\n", label);
    return !err && !fake.guard_broken && fake.live_device == 0 && fake.live_host == 0;
}

/* plan_run(), and every key of `metric` the CPU context `cpu` has is what
 * the twin wrote into `sink` for every frame, bit for bit; the differences
 * are printed after `label`. */
static inline bool plan_run_matches_cpu(const CudaTwin &twin, const Metric &metric,
                                        const void *state, std::vector<QualePicture> &refs,
                                        std::vector<QualePicture> &dists, FeatureSink *sink,
                                        QualeContext *cpu, const char *label,
                                        bool *backwards = nullptr, bool flush = false)
{
    if (!plan_run(twin, metric, state, refs, dists, sink, label, backwards, flush)) return false;
    bool same = true;
    for (unsigned f = 0; f < refs.size(); f++) {
        for (unsigned k = 0; metric.keys[k]; k++) {
            char name[256];
            double cpu_value = NAN, twin_value = NAN;
            if (option_key_name(metric.options, state, metric.keys[k], name, sizeof(name)) ||
                quale_feature_value(cpu, name, f, &cpu_value))
                continue; /* a key this run does not write */
            unsigned id = 0; /* declared by the state's init: the same id */
            const bool got = !feature_sink_declare(sink, metric.keys[k], &id) &&
                             !feature_sink_get(sink, id, f, &twin_value);
            if (got && (memcmp(&cpu_value, &twin_value, sizeof(double)) == 0 ||
                        (std::isnan(cpu_value) && std::isnan(twin_value))))
                continue;
            fprintf(stderr, "  %s, frame %u, %s through the plan executor: %.17g, CPU %.17g\n",
                    label, f, name, twin_value, cpu_value);
            same = false;
        }
    }
    return same;
}

#endif /* QUALE_TESTS_CUDA_PLAN_RUN_H */
