/*
 * The CUDA twins of psnr and integer motion, run on the CPU: no GPU needed.
 *
 * src/cuda/psnr.cu and integer_motion.cu are included as C++
 * (src/cuda/cuda_host_compat.h turns the CUDA qualifiers off and their
 * __global__ wrappers are left out).  Each twin's plan runs through the
 * executor on the fake driver (tests/cuda_plan_run.h): its launches as the
 * backend makes them, each emulated here block by block and thread by
 * thread through the very functions the kernels call (a block's sum of
 * its threads' integers is a plain addition: integers, so the order cannot
 * matter; motion's shared row starts as garbage, and its row sums add as
 * the device's 32-bit atomics do).  Blocks and threads run forwards on
 * even frames and backwards on odd ones.
 *
 * Against the C reference through the public API (CPU backend), every key
 * bit for bit, on random frames of many sizes (1x1 to 1920x1080, odd ones,
 * 1 and 2 samples wide or high where motion has no SAD), bit depths 8, 10,
 * 12 and 16, chroma 4:2:0, 4:2:2, 4:4:4 and 4:0:0, and the options that
 * change the work: psnr with enable_chroma on and off, enable_mse;
 * motion with the five-frame window, motion_force_zero and its flush
 * (motion2, motion3).  Prints "N passed, M failed".
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
}

#include "metrics/integer_motion/cuda/integer_motion.cu"
#include "metrics/psnr/cuda/psnr.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x9b05688c2b3e6c1full
#include "cuda_host_test.h"
#include "cuda_plan_run.h"

/* (the metrics' headers are C: psnr's state has atomics) */
extern "C" {
extern const Metric metric_psnr, metric_integer_motion;
extern const CudaTwin cuda_twin_psnr, cuda_twin_integer_motion;
}

/* ---- the kernels on the fake driver ---------------------------------------- */

static bool backwards;

static unsigned in_order(unsigned i, unsigned n)
{
    return backwards ? n - 1 - i : i;
}

template <typename T>
static void fake_psnr(const FakeLaunch *l)
{
    const PsnrArgs &a = *static_cast<const PsnrArgs *>(l->args);
    const unsigned blocks = l->grid[0], planes = l->grid[1];
    for (unsigned ip = 0; ip < planes; ip++) {
        for (unsigned ib = 0; ib < blocks; ib++) {
            const unsigned p = in_order(ip, planes), b = in_order(ib, blocks);
            unsigned long long sse = 0;
            for (unsigned it = 0; it < l->block; it++)
                sse += psnr_sse_thread<T>(a, b, p, in_order(it, l->block), l->block);
            a.partials[p * blocks + b] = sse;
        }
    }
}

template <typename T>
static void fake_motion(const FakeLaunch *l)
{
    const MotionArgs &a = *static_cast<const MotionArgs *>(l->args);
    const int bitdepth = sizeof(T) == 1 ? 8 : a.bitdepth;
    const unsigned blocks = l->grid[0], rows = l->grid[1], threads = l->block;
    std::vector<int32_t> shared(MOTION_SEGMENT + 4);
    for (unsigned iy = 0; iy < rows; iy++) {
        for (unsigned ib = 0; ib < blocks; ib++) {
            const int y = (int)in_order(iy, rows), bx = (int)in_order(ib, blocks);
            for (int32_t &v : shared) v = (int32_t)rng(); /* shared memory starts as garbage */
            for (unsigned it = 0; it < threads; it++)
                motion_vertical_thread<T>(a.prev, a.cur, a.stride, a.w, a.h, bitdepth, bx, y,
                                          (int)in_order(it, threads), (int)threads,
                                          shared.data());
            /* __syncthreads() */
            uint32_t sad = 0;
            for (unsigned it = 0; it < threads; it++)
                sad += motion_horizontal_thread(a.w, bx, (int)in_order(it, threads), (int)threads,
                                                shared.data());
            a.row_sad[y] += sad; /* atomicAdd: modulo 2^32 */
        }
    }
}

static void register_fake_kernels()
{
    fake_kernel("psnr_sse_8bit", fake_psnr<uint8_t>);
    fake_kernel("psnr_sse_16bit", fake_psnr<uint16_t>);
    fake_kernel("motion_sad_8bit", fake_motion<uint8_t>);
    fake_kernel("motion_sad_16bit", fake_motion<uint16_t>);
}

/* ---- pictures ------------------------------------------------------------- */

enum Content { C_NOISE, C_SMOOTH, C_EXTREME, C_SAME, C_CONTENTS };
static const char *const content_names[] = { "noise", "smooth", "extreme", "same" };


/* Every plane and the padding past each row; frame f of a moving picture. */
static void fill(QualePicture *p, Content content, unsigned f, unsigned seed)
{
    const unsigned max = (1u << p->format.bitdepth) - 1;
    const unsigned bytes = p->format.bitdepth > 8 ? 2 : 1;
    for (unsigned plane = 0; plane < p->plane_count; plane++) {
        const unsigned padded = (unsigned)p->stride[plane] / bytes;
        for (unsigned y = 0; y < p->plane_height[plane]; y++) {
            for (unsigned x = 0; x < padded; x++) {
                unsigned v = rng() % (max + 1);
                if (x < p->plane_width[plane]) {
                    if (content == C_SMOOTH)
                        v = ((x + 3 * f) * 37 + y * 11 + seed) % (max + 1) / 2 + rng() % 3;
                    else if (content == C_EXTREME)
                        v = (rng() & 1) ? max : 0;
                }
                put(p, plane, x, y, v > max ? max : v);
            }
        }
    }
}

/* ---- cases ---------------------------------------------------------------- */

struct Case {
    unsigned w, h, bitdepth;
    QualeChroma chroma;
    Content content;
    unsigned frames;
};

static const char *const psnr_specs[] = { "psnr", "psnr=enable_chroma=false",
                                          "psnr=enable_mse=true" };
static const char *const motion_specs[] = { "motion", "motion=motion_five_frame_window=true",
                                            "motion=motion_force_zero=true" };

/* Spec `spec` of `metric` on the frames through `twin`'s plan, against
 * the CPU. */
static void run_spec(const CudaTwin &twin, const Metric &metric, const char *spec,
                     std::vector<QualePicture> &refs, std::vector<QualePicture> &dists,
                     const char *label)
{
    char what[256];
    snprintf(what, sizeof(what), "%s, %s", label, spec);
    const unsigned failed_before = test_failed;
    QualeContext *cpu = NULL;
    const int cpu_err = cpu_run(&cpu, spec, refs, dists);
    QualeContext *aux = NULL;
    CHECK(open_ctx(&aux, 1) == 0);
    void *state = aux ? make_state(&metric, spec, &refs[0].format, aux) : NULL;
    /* What the CPU refuses is never given to a twin (motion's sizes are
     * refused by its collect(), as by the C reference's extract()). */
    if (!cpu_err) CHECK(state != NULL);
    if (state && !cpu_err) {
        const bool flush = metric.flush != NULL;
        CHECK(plan_run_matches_cpu(twin, metric, state, refs, dists, context_sink(aux), cpu, what,
                                   &backwards, flush));
    }
    printf("%s %s%s\n", test_failed == failed_before ? "ok  " : "FAIL", what,
           cpu_err ? " (refused by the CPU)" : "");
    free_state(&metric, state);
    quale_close(&aux);
    quale_close(&cpu);
}

static void run_case(const Case &c, unsigned index)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    char label[160];
    snprintf(label, sizeof(label), "case %u: %ux%u %u-bit %s %s, %u frames", index, c.w, c.h,
             c.bitdepth, quale_chroma_name(c.chroma), content_names[c.content], c.frames);
    std::vector<QualePicture> refs(c.frames), dists(c.frames);
    const unsigned seed = rng();
    for (unsigned f = 0; f < c.frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        fill(&refs[f], c.content, f, seed);
        if (c.content == C_SAME) {
            fill(&dists[f], C_NOISE, f, seed);
            quale_picture_unref(&refs[f]);
            CHECK(quale_picture_alloc(&refs[f], &format) == 0);
            for (unsigned p = 0; p < dists[f].plane_count; p++)
                memcpy(refs[f].data[p], dists[f].data[p],
                       (size_t)dists[f].stride[p] * dists[f].plane_height[p]);
        } else {
            fill(&dists[f], c.content == C_EXTREME ? C_NOISE : c.content, f + 1, seed + 1);
        }
    }
    for (const char *spec : psnr_specs)
        run_spec(cuda_twin_psnr, metric_psnr, spec, refs, dists, label);
    for (const char *spec : motion_specs)
        run_spec(cuda_twin_integer_motion, metric_integer_motion, spec, refs, dists, label);
    free_frames(refs, dists);
}

int main()
{
    register_fake_kernels();
    static const Case fixed[] = {
        { 1, 1, 8, QUALE_CHROMA_444, C_NOISE, 3 },
        { 2, 7, 8, QUALE_CHROMA_420, C_NOISE, 3 },
        { 3, 3, 10, QUALE_CHROMA_420, C_NOISE, 4 },
        { 5, 4, 16, QUALE_CHROMA_422, C_EXTREME, 4 },
        { 17, 9, 12, QUALE_CHROMA_444, C_SMOOTH, 6 },
        { 176, 144, 8, QUALE_CHROMA_420, C_SMOOTH, 6 },
        { 257, 33, 10, QUALE_CHROMA_400, C_NOISE, 5 },
        { 300, 20, 16, QUALE_CHROMA_420, C_SAME, 4 },
        { 513, 31, 8, QUALE_CHROMA_422, C_EXTREME, 4 },
        { 1920, 1080, 10, QUALE_CHROMA_420, C_SMOOTH, 3 },
    };
    unsigned index = 0;
    for (const Case &c : fixed) run_case(c, index++);
    static const unsigned depths[] = { 8, 10, 12, 16 };
    static const QualeChroma chromas[] = { QUALE_CHROMA_420, QUALE_CHROMA_422, QUALE_CHROMA_444,
                                           QUALE_CHROMA_400 };
    for (unsigned i = 0; i < 12; i++) {
        const Case c = { 1 + rng() % 300, 1 + rng() % 120, depths[rng() % 4], chromas[rng() % 4],
                         (Content)(rng() % C_CONTENTS), 2 + rng() % 5 };
        run_case(c, index++);
    }
    return test_summary();
}
