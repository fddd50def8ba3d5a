/*
 * XPSNR's CUDA twin run on the CPU: no GPU needed.
 *
 * src/metrics/xpsnr/cuda/xpsnr.cu is included as C++ (cuda_host_compat.h
 * turns the CUDA qualifiers off; its __global__ wrappers are left out).
 * The twin's plan runs through the executor on the fake driver
 * (tests/cuda_plan_run.h): its launch as the backend makes it, emulated
 * here block by block and thread by thread through the very function the
 * kernel calls (a block's sum of its threads' integers is a plain
 * addition).  Blocks and threads run forwards on even frames and
 * backwards on odd ones.
 *
 * Against the C reference through the public API (CPU backend), every key
 * bit for bit: sizes with blocks of 4 to 64 samples, odd ones, and above
 * 2048x1152 (the 2x2 sums); bit depths 8 to 14; chroma 4:2:0, 4:2:2, 4:4:4
 * and 4:0:0; the temporal term of the first and the second order (fps);
 * enable_axpsnr (its flush).  Pictures the twin does not support (tiny
 * ones, 16 bits, odd sizes above 2048x1152) are checked to be refused.
 * Prints "N passed, M failed".
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "context.h"
#include "metric.h"
#include "option.h"
#include "quale/quale.h"
#include "metrics/xpsnr/xpsnr.h"
}

#include "metrics/xpsnr/cuda/xpsnr.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x5e2f0a7c93d1b487ull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"

extern "C" {
extern const CudaTwin cuda_twin_xpsnr;
}

static bool backwards;

static unsigned in_order(unsigned i, unsigned n)
{
    return backwards ? n - 1 - i : i;
}

template <typename T>
static void fake_xpsnr(const FakeLaunch *l)
{
    const XpsnrArgs &a = *static_cast<const XpsnrArgs *>(l->args);
    const unsigned blocks = l->grid[0], planes = l->grid[1];
    for (unsigned ip = 0; ip < planes; ip++) {
        for (unsigned ib = 0; ib < blocks; ib++) {
            const unsigned p = in_order(ip, planes), k = in_order(ib, blocks);
            XpsnrBlockSums s = { 0, 0, 0 };
            for (unsigned it = 0; it < l->block; it++) {
                const XpsnrBlockSums t = xpsnr_thread<T>(a, k, p, in_order(it, l->block), l->block);
                s.sse += t.sse;
                s.spatial += t.spatial;
                s.temporal += t.temporal;
            }
            unsigned x0, y0, bw, bh;
            if (!xpsnr_block(a, k, p, &x0, &y0, &bw, &bh)) continue;
            if (p == 0) {
                a.sums[k] = s.sse;
                a.sums[a.luma_blocks + k] = s.spatial;
                a.sums[2 * a.luma_blocks + k] = s.temporal;
            } else {
                a.sums[xpsnr_chroma_at(a, k, p)] = s.sse;
            }
        }
    }
}

/* Every plane and the padding past each row: noise, or a smooth picture
 * that moves from frame to frame. */
static void fill(QualePicture *p, bool smooth, unsigned f, unsigned seed)
{
    const unsigned max = (1u << p->format.bitdepth) - 1;
    const unsigned bytes = p->format.bitdepth > 8 ? 2 : 1;
    for (unsigned plane = 0; plane < p->plane_count; plane++) {
        const unsigned padded = (unsigned)p->stride[plane] / bytes;
        for (unsigned y = 0; y < p->plane_height[plane]; y++) {
            for (unsigned x = 0; x < padded; x++) {
                unsigned v = rng() % (max + 1);
                if (smooth && x < p->plane_width[plane])
                    v = ((x + 3 * f) * 37 + y * 11 + seed) % (max + 1) / 2 + rng() % 3;
                put(p, plane, x, y, v > max ? max : v);
            }
        }
    }
}

struct Case {
    unsigned w, h, bitdepth;
    QualeChroma chroma;
    bool smooth;
    unsigned frames;
};

static const char *const specs[] = { "xpsnr", "xpsnr=fps=60", "xpsnr=fps=50:enable_axpsnr=true" };

static void run_case(const Case &c, unsigned index)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    std::vector<QualePicture> refs(c.frames), dists(c.frames);
    const unsigned seed = rng();
    for (unsigned f = 0; f < c.frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        fill(&refs[f], c.smooth, f, seed);
        fill(&dists[f], c.smooth, f + 1, seed + 1);
    }
    for (const char *spec : specs) {
        char what[256];
        snprintf(what, sizeof(what), "case %u: %ux%u %u-bit %s, %u frames, %s", index, c.w, c.h,
                 c.bitdepth, quale_chroma_name(c.chroma), c.frames, spec);
        const unsigned failed_before = test_failed;
        QualeContext *cpu = NULL, *aux = NULL;
        CHECK(cpu_run(&cpu, spec, refs, dists) == 0);
        CHECK(open_ctx(&aux, 1) == 0);
        void *state = aux ? make_state(&metric_xpsnr, spec, &format, aux) : NULL;
        CHECK(state != NULL);
        const bool supported = state && cuda_twin_xpsnr.supports(state);
        /* the pictures whose sums are not FFmpeg's own arithmetic stay on the CPU */
        const XpsnrState *s = static_cast<const XpsnrState *>(state);
        const bool expected = s && s->block >= 4 && c.bitdepth <= 14 &&
                              (s->step == 1 || (c.w % 2 == 0 && c.h % 2 == 0));
        CHECK(supported == expected);
        if (supported)
            CHECK(plan_run_matches_cpu(cuda_twin_xpsnr, metric_xpsnr, state, refs, dists,
                                       context_sink(aux), cpu, what, &backwards, true));
        printf("%s %s%s\n", test_failed == failed_before ? "ok  " : "FAIL", what,
               supported ? "" : " (stays on the CPU)");
        free_state(&metric_xpsnr, state);
        quale_close(&aux);
        quale_close(&cpu);
    }
    free_frames(refs, dists);
}

int main()
{
    fake_kernel("xpsnr_sums_8bit", fake_xpsnr<uint8_t>);
    fake_kernel("xpsnr_sums_16bit", fake_xpsnr<uint16_t>);
    static const Case cases[] = {
        { 20, 20, 8, QUALE_CHROMA_420, false, 3 },    /* too small to weigh */
        { 64, 64, 8, QUALE_CHROMA_420, true, 4 },     /* blocks of 4, smoothing */
        { 176, 144, 10, QUALE_CHROMA_422, false, 4 },
        { 177, 99, 12, QUALE_CHROMA_444, true, 3 },
        { 352, 288, 14, QUALE_CHROMA_400, false, 3 },
        { 640, 480, 8, QUALE_CHROMA_420, true, 3 },   /* the last size smoothed */
        { 1919, 1081, 10, QUALE_CHROMA_420, true, 3 },
        { 2304, 1296, 8, QUALE_CHROMA_420, true, 3 }, /* 2x2 sums */
        { 2560, 1440, 10, QUALE_CHROMA_444, false, 3 },
        { 2049, 1153, 8, QUALE_CHROMA_420, true, 2 }, /* odd above 2048x1152: the CPU */
        { 96, 64, 16, QUALE_CHROMA_420, false, 2 },   /* 16 bits: the CPU */
    };
    unsigned index = 0;
    for (const Case &c : cases) run_case(c, index++);
    return test_summary();
}
