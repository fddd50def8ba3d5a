/*
 * The CUDA twins of float_psnr, float_moment and float_ansnr, run on the
 * CPU: no GPU needed.
 *
 * src/cuda/float_psnr.cu, float_moment.cu and float_ansnr.cu are included
 * as C++ (src/cuda/cuda_host_compat.h turns the CUDA qualifiers off and
 * their __global__ wrappers are left out); the twins' own host code
 * (src/cuda/float_*_cuda.c, linked from the library) gives every launch of
 * a frame (kernel, grid and arguments, exactly what enqueue() launches)
 * and the step from what the device wrote to the keys (what collect()
 * calls).  Each launch is emulated here block by block and thread by
 * thread through the very functions the kernels call: a block's sum of its
 * threads' integer partials is a plain addition (integers: the order
 * cannot matter); float_ansnr's passes (stage, fill, sums) run phase by
 * phase, as the kernel's barriers order them, in a "shared" block that
 * starts as garbage.  Blocks and threads run forwards on even frames and
 * backwards on odd ones; the device memory the twins write starts as
 * random bytes and has a guard zone after it.
 *
 * Against the C reference through the public API (CPU backend), on random
 * frames of many sizes (1x1 and 3x3, the smallest each metric takes, odd
 * sizes, 176x144, 1920x1080), bit depths 8, 10, 12 and 16 (samples above
 * the bit depth too), chroma 4:2:0, 4:2:2, 4:4:4 and 4:0:0: every key
 * within the tolerance table's rule for it (5e-5) and, as the twins are
 * built to be, bit for bit equal; the worst difference per key is
 * printed.  Also the refusals: bit depths libvmaf's float conversion does
 * not know (the twins' collect() logs the C reference's message) and
 * float_ansnr below 3x3 (the twin's init() returns it).  Prints "N passed,
 * M failed".
 */
#include <cerrno>
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
#include "metrics/float_ansnr/float_ansnr.h"
#include "metrics/float_moment/float_moment.h"
#include "metrics/float_psnr/float_psnr.h"

#include "metrics/float_ansnr/cuda/float_ansnr.cu"
#include "metrics/float_moment/cuda/float_moment.cu"
#include "metrics/float_psnr/cuda/float_psnr.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x510e527fade682d1ull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"

/* ---- the twins (src/cuda/float_*_cuda.c) ----------------------------------- */

extern "C" {
extern const CudaTwin cuda_twin_float_psnr, cuda_twin_float_moment, cuda_twin_float_ansnr;
}

/* ---- random pictures ------------------------------------------------------- */

enum Pattern { P_NOISE, P_TEXTURE, P_EXTREME, P_WIDE, P_FLAT, P_PATTERNS };
enum Distortion { D_NOISE, D_BLUR, D_RANDOM, D_SAME, D_INVERT, D_DARK, D_DISTORTIONS };

static const char *const pattern_names[] = { "noise", "texture", "extreme", "wide", "flat" };
static const char *const distortion_names[] = { "noise", "blur", "random", "same", "invert",
                                                "dark" };


/* The largest sample of a pattern: the bit depth's, or 16 bits for the
 * samples above it that the API does not forbid. */
static unsigned pattern_max(const QualePicture *p, Pattern pattern)
{
    return pattern == P_WIDE && p->format.bitdepth > 8 ? 65535u
                                                       : (1u << p->format.bitdepth) - 1;
}

/* Every plane gets samples (the twins read luma only; the rest must not
 * matter), and the padding past each row's width too. */
static void fill_reference(QualePicture *p, Pattern pattern, unsigned frame)
{
    const unsigned max = pattern_max(p, pattern);
    const unsigned flat = rng() % (max + 1);
    for (unsigned plane = 0; plane < p->plane_count; plane++) {
        const unsigned bytes = p->format.bitdepth > 8 ? 2 : 1;
        const unsigned padded = (unsigned)p->stride[plane] / bytes;
        for (unsigned y = 0; y < p->plane_height[plane]; y++) {
            for (unsigned x = 0; x < padded; x++) {
                unsigned v;
                if (x >= p->plane_width[plane]) {
                    v = rng() % (max + 1); /* padding: garbage */
                } else {
                    switch (pattern) {
                    case P_TEXTURE: {
                        const unsigned kind = ((x / 8) * 7 + (y / 8) * 3 + frame) % 3;
                        const unsigned base = ((x / 8) * 37 + (y / 8) * 91) % (max + 1);
                        v = kind == 0 ? base
                            : kind == 1 ? (base + x * (max / 64 + 1) + y) % (max + 1)
                                        : clip((long)base + (long)(rng() % (max / 4 + 1)) -
                                                   (long)(max / 8),
                                               max);
                        break;
                    }
                    case P_EXTREME: v = (rng() & 1) ? max : 0; break;
                    case P_FLAT: v = flat; break;
                    default: v = rng() % (max + 1); break; /* noise, wide */
                    }
                }
                put(p, plane, x, y, v);
            }
        }
    }
}

static void fill_distorted(QualePicture *d, const QualePicture *r, Pattern pattern,
                           Distortion distortion)
{
    const unsigned max = pattern_max(r, pattern);
    const unsigned w = r->format.width, h = r->format.height;
    for (unsigned plane = 0; plane < d->plane_count; plane++) {
        const unsigned bytes = d->format.bitdepth > 8 ? 2 : 1;
        const unsigned padded = (unsigned)d->stride[plane] / bytes;
        for (unsigned y = 0; y < d->plane_height[plane]; y++) {
            for (unsigned x = 0; x < padded; x++) {
                if (plane > 0 || x >= w) {
                    put(d, plane, x, y, rng() % (max + 1));
                    continue;
                }
                const long v = get(r, x, y);
                long out;
                switch (distortion) {
                case D_BLUR: {
                    const long l = get(r, x > 0 ? x - 1 : x, y), rr = get(r, x + 1 < w ? x + 1 : x, y);
                    const long u = get(r, x, y > 0 ? y - 1 : y), dd = get(r, x, y + 1 < h ? y + 1 : y);
                    out = (l + rr + u + dd + 4 * v + 4) / 8;
                    break;
                }
                case D_RANDOM: out = rng() % (max + 1); break;
                case D_SAME: out = v; break;
                case D_INVERT: out = (long)max - v; break;
                case D_DARK: out = v / 2 + (long)(rng() % 3); break;
                default: {
                    const long amp = (long)(max / 64) + 2;
                    out = v + (long)(rng() % (2 * amp + 1)) - amp;
                    break;
                }
                }
                put(d, plane, x, y, clip(out, max));
            }
        }
    }
}

/* ---- the CPU backend through the public API --------------------------------- */

/* A context whose sink the twins' states declare their keys in and their
 * collect() steps write to; it logs into `messages`. */
static QualeContext *twin_context()
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = 1;
    s.log = keep_messages;
    s.log_level = QUALE_LOG_ERROR;
    QualeContext *ctx = NULL;
    return quale_open(&ctx, &s) == 0 ? ctx : NULL;
}

/* A metric's state as the context makes it (no options): init on the
 * format, keys declared in sink. */
static void *make_state(const Metric &m, const QualeVideoFormat *format, FeatureSink *sink)
{
    void *s = calloc(1, m.state_size);
    if (!s) return NULL;
    options_set_defaults(m.options, s);
    if (m.init(s, format, sink)) {
        free(s);
        return NULL;
    }
    return s;
}

/* ---- the twins on the CPU ---------------------------------------------------- */

/* Blocks and threads run backwards on odd frames. */
static bool backwards;

static unsigned order(unsigned i, unsigned n, bool back)
{
    return back ? n - 1 - i : i;
}

/* A launch the kernel's bounds allow, or a failed check naming it. */
static bool launch_ok(const char *name, const FakeLaunch *l, unsigned threads)
{
    const bool ok = l->block == threads && l->block % 32 == 0 && l->grid[0] >= 1 &&
                    l->grid[1] >= 1 && l->grid[1] <= 65535 && l->grid[2] == 1;
    if (!ok)
        fprintf(stderr, "  launch %s: %u x %u x %u, %u threads\n", name, l->grid[0], l->grid[1],
                l->grid[2], l->block);
    CHECK(ok);
    return ok;
}

/* float_psnr.cu, block by block and thread by thread. */
template <typename T>
static void fake_float_psnr(const FakeLaunch *l)
{
    if (!launch_ok("float_psnr", l, FPSNR_THREADS)) return;
    const FloatPsnrArgs &a = *(const FloatPsnrArgs *)l->args;
    for (unsigned i = 0; i < l->grid[0]; i++) {
        const unsigned b = order(i, l->grid[0], backwards);
        unsigned long long sum = 0; /* block_sum() */
        for (unsigned j = 0; j < l->block; j++)
            sum += fpsnr_thread<T>(a, b, order(j, l->block, backwards), l->block);
        a.partials[b] = sum;
    }
}

/* float_moment.cu */
template <typename T>
static void fake_float_moment(const FakeLaunch *l)
{
    if (!launch_ok("float_moment", l, FMOMENT_THREADS)) return;
    const FloatMomentArgs &a = *(const FloatMomentArgs *)l->args;
    for (unsigned iy = 0; iy < l->grid[1]; iy++) {
        const unsigned by = order(iy, l->grid[1], backwards);
        for (unsigned ix = 0; ix < l->grid[0]; ix++) {
            const unsigned bx = order(ix, l->grid[0], backwards);
            unsigned long long first = 0, second = 0;
            for (unsigned j = 0; j < l->block; j++) {
                const FloatMomentPartial p =
                    fmoment_thread<T>(a, bx, by, order(j, l->block, backwards), l->block);
                first += p.first;
                second += p.second;
            }
            a.partials[fmoment_partial_index(by, 0, bx, l->grid[0])] = first;
            a.partials[fmoment_partial_index(by, 1, bx, l->grid[0])] = second;
        }
    }
}

/* float_ansnr.cu: a block per row, its passes (stage, fill, sums) phase by
 * phase as the kernel's barriers order them, in a "shared" block that
 * starts as garbage. */
template <typename T>
static void fake_float_ansnr(const FakeLaunch *l)
{
    if (!launch_ok("float_ansnr", l, FANSNR_THREADS)) return;
    CHECK(l->block >= 64); /* the noise sum is thread 32's */
    const FloatAnsnrArgs &a = *(const FloatAnsnrArgs *)l->args;
    static FansnrShared sh;
    for (unsigned i = 0; i < l->grid[0]; i++) {
        const unsigned y = order(i, l->grid[0], backwards);
        float *raw = &sh.ref[0][0];
        for (size_t k = 0; k < sizeof(sh) / sizeof(float); k++) raw[k] = (float)rng() * 1e30f;
        const FansnrRows rows = fansnr_rows(a, (int)y);
        float sig_row = 0.0f, noise_row = 0.0f; /* threads 0 and 32 */
        for (int x0 = 0; x0 < a.w; x0 += FANSNR_CHUNK) {
            for (unsigned j = 0; j < l->block; j++)
                fansnr_stage_thread<T>(a, rows, x0, order(j, l->block, backwards), l->block, sh);
            /* __syncthreads() */
            for (unsigned j = 0; j < l->block; j++)
                fansnr_fill_thread(a, x0, order(j, l->block, backwards), l->block, sh);
            /* __syncthreads() */
            const int n = fansnr_chunk(a.w, x0);
            sig_row = float_chain_sum(sig_row, sh.sig, n);
            noise_row = float_chain_sum(noise_row, sh.noise, n);
        }
        a.row_sums[y] = sig_row;
        a.row_sums[a.h + y] = noise_row;
    }
}

static void register_fake_kernels()
{
    fake_kernel("float_psnr_8bit", fake_float_psnr<uint8_t>);
    fake_kernel("float_psnr_16bit", fake_float_psnr<uint16_t>);
    fake_kernel("float_moment_8bit", fake_float_moment<uint8_t>);
    fake_kernel("float_moment_16bit", fake_float_moment<uint16_t>);
    fake_kernel("float_ansnr_8bit", fake_float_ansnr<uint8_t>);
    fake_kernel("float_ansnr_16bit", fake_float_ansnr<uint16_t>);
}


/* ---- cases ---------------------------------------------------------------- */

struct Case {
    unsigned w, h, bitdepth;
    QualeChroma chroma;
    Pattern pattern;
    Distortion distortion;
    unsigned frames;
};

static const Case fixed_cases[] = {
    /* the smallest pictures: 1x1 (float_psnr, float_moment), 3x3 (float_ansnr) */
    { 1, 1, 8, QUALE_CHROMA_444, P_NOISE, D_NOISE, 2 },
    { 1, 1, 16, QUALE_CHROMA_420, P_NOISE, D_RANDOM, 2 },
    { 3, 3, 8, QUALE_CHROMA_420, P_NOISE, D_RANDOM, 3 },
    { 3, 3, 10, QUALE_CHROMA_444, P_WIDE, D_NOISE, 2 },
    { 3, 4, 12, QUALE_CHROMA_422, P_EXTREME, D_INVERT, 2 },
    { 4, 3, 16, QUALE_CHROMA_400, P_NOISE, D_BLUR, 2 },
    { 5, 7, 8, QUALE_CHROMA_420, P_FLAT, D_SAME, 2 },
    { 17, 19, 10, QUALE_CHROMA_444, P_TEXTURE, D_BLUR, 2 },
    { 31, 16, 12, QUALE_CHROMA_422, P_WIDE, D_DARK, 2 },
    { 33, 65, 16, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 2 },
    { 176, 144, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 2 },
    { 176, 144, 10, QUALE_CHROMA_422, P_NOISE, D_BLUR, 2 },
    { 176, 144, 12, QUALE_CHROMA_444, P_TEXTURE, D_DARK, 2 },
    { 176, 144, 16, QUALE_CHROMA_400, P_WIDE, D_RANDOM, 2 },
    /* more than one pass of FANSNR_CHUNK columns, one short one after */
    { 1025, 9, 8, QUALE_CHROMA_444, P_NOISE, D_BLUR, 2 },
    { 513, 11, 16, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 2 },
    { 1920, 1080, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 2 },
    /* 16 bits, largest errors: the float squares' integer sum near 2^53 */
    { 1920, 1080, 16, QUALE_CHROMA_420, P_EXTREME, D_INVERT, 1 },
    { 1919, 1081, 10, QUALE_CHROMA_444, P_WIDE, D_BLUR, 1 },
};

/* The worst difference of each key, over every case. */
static const char *const all_keys[] = {
    "float_psnr", "float_moment_ref1st", "float_moment_dis1st", "float_moment_ref2nd",
    "float_moment_dis2nd", "float_ansnr", "float_anpsnr",
};
enum { KEYS = sizeof(all_keys) / sizeof(all_keys[0]) };
static double worst[KEYS];
static unsigned compared[KEYS], inexact[KEYS];
/* tests/tolerance.json: none of these keys has a rule before "*" */
static const double TOLERANCE = 5e-5;

static bool same_value(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

static void compare(const char *label, QualeContext *cpu, FeatureSink *twin_sink, unsigned k,
                    unsigned id, unsigned frame)
{
    double want = NAN, got = NAN;
    CHECK(quale_feature_value(cpu, all_keys[k], frame, &want) == 0);
    CHECK(feature_sink_get(twin_sink, id, frame, &got) == 0);
    const double diff = fabs(got - want);
    compared[k]++;
    if (!same_value(got, want)) inexact[k]++;
    if (!(diff <= worst[k])) worst[k] = diff;
    const bool ok = diff <= TOLERANCE && same_value(got, want);
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  %s, frame %u, %s: twin %.17g, CPU %.17g\n", label, frame, all_keys[k],
                got, want);
}

static void run_case(const Case &c, unsigned index)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    const bool ansnr = c.w >= ANSNR_MIN_SIDE && c.h >= ANSNR_MIN_SIDE;
    char label[160];
    snprintf(label, sizeof(label), "case %u: %ux%u %u-bit %s, %s/%s", index, c.w, c.h,
             c.bitdepth, quale_chroma_name(c.chroma), pattern_names[c.pattern],
             distortion_names[c.distortion]);
    const unsigned failed_before = test_failed;

    std::vector<QualePicture> refs(c.frames), dists(c.frames);
    for (unsigned f = 0; f < c.frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        fill_reference(&refs[f], c.pattern, f);
        fill_distorted(&dists[f], &refs[f], c.pattern,
                       (Distortion)((c.distortion + f) % D_DISTORTIONS));
    }

    std::vector<const char *> specs = { "float_psnr", "float_moment" };
    if (ansnr) specs.push_back("float_ansnr");
    QualeContext *cpu = NULL;
    CHECK(cpu_run(&cpu, specs, refs, dists, 1) == 0);

    QualeContext *tctx = twin_context();
    CHECK(tctx != NULL);
    FeatureSink *sink = tctx ? context_sink(tctx) : NULL;
    FloatPsnrState *psnr =
        sink ? (FloatPsnrState *)make_state(metric_float_psnr, &format, sink) : NULL;
    FloatMomentState *moment =
        sink ? (FloatMomentState *)make_state(metric_float_moment, &format, sink) : NULL;
    FloatAnsnrState *an =
        sink && ansnr ? (FloatAnsnrState *)make_state(metric_float_ansnr, &format, sink) : NULL;
    CHECK(psnr && moment && (an || !ansnr));

    if (psnr && moment && (an || !ansnr)) {
        CHECK(plan_run(cuda_twin_float_psnr, metric_float_psnr, psnr, refs, dists, sink, label,
                       &backwards));
        CHECK(plan_run(cuda_twin_float_moment, metric_float_moment, moment, refs, dists, sink,
                       label, &backwards));
        if (an)
            CHECK(plan_run(cuda_twin_float_ansnr, metric_float_ansnr, an, refs, dists, sink, label,
                           &backwards));
    }
    for (unsigned f = 0; f < c.frames && psnr && moment && (an || !ansnr); f++) {
        compare(label, cpu, sink, 0, psnr->key, f);
        for (unsigned k = 0; k < FLOAT_MOMENT_KEYS; k++)
            compare(label, cpu, sink, 1 + k, moment->key[k], f);
        if (an) {
            compare(label, cpu, sink, 5, an->key_ansnr, f);
            compare(label, cpu, sink, 6, an->key_anpsnr, f);
        }
    }
    printf("%s %s\n", test_failed == failed_before ? "ok  " : "FAIL", label);
    fflush(stdout);

    free(psnr);
    free(moment);
    free(an);
    quale_close(&tctx);
    quale_close(&cpu);
    free_frames(refs, dists);
}

/* ---- refusals ------------------------------------------------------------ */

static bool logged(const std::string &message)
{
    for (const std::string &m : messages)
        if (m == message) return true;
    return false;
}

/* Bit depths libvmaf's float conversion does not know: the CPU refuses them
 * in init; each twin's collect() step refuses such a frame with the very
 * message (it calls the same check). */
static void test_depth_refusal()
{
    static const unsigned depths[] = { 9, 11, 13, 14, 15 };
    const Metric *const metrics[] = { &metric_float_psnr, &metric_float_moment,
                                      &metric_float_ansnr };
    for (unsigned depth : depths) {
        const QualeVideoFormat format = { QUALE_CHROMA_420, depth, 8, 6 };
        const QualeVideoFormat accepted = { QUALE_CHROMA_420, 8, 8, 6 };
        std::vector<QualePicture> refs(1), dists(1);
        CHECK(quale_picture_alloc(&refs[0], &format) == 0);
        CHECK(quale_picture_alloc(&dists[0], &format) == 0);
        fill_reference(&refs[0], P_NOISE, 0);
        fill_distorted(&dists[0], &refs[0], P_NOISE, D_NOISE);
        MetricFrame frame;
        memset(&frame, 0, sizeof(frame));
        frame.ref = &refs[0];
        frame.dist = &dists[0];
        for (const Metric *m : metrics) {
            QualeContext *cpu = NULL;
            CHECK(cpu_run(&cpu, { m->name }, refs, dists) != 0);
            const std::vector<std::string> cpu_messages = messages;
            quale_close(&cpu);
            CHECK(!cpu_messages.empty());

            QualeContext *tctx = twin_context();
            FeatureSink *sink = tctx ? context_sink(tctx) : NULL;
            void *state = sink ? make_state(*m, &accepted, sink) : NULL;
            CHECK(state != NULL);
            if (state) {
                messages.clear();
                const CudaTwin *twin = m == &metric_float_psnr     ? &cuda_twin_float_psnr
                                       : m == &metric_float_moment ? &cuda_twin_float_moment
                                                                   : &cuda_twin_float_ansnr;
                CudaPlan plan = {};
                plan.state = state;
                plan.format = accepted;
                char error[256];
                CHECK(twin->plan(state, &accepted, &plan, error, sizeof(error)) == 0);
                std::vector<uint8_t> readback(plan.readback_bytes, 0);
                const int err = twin->collect(&plan, readback.data(), &frame, sink);
                CHECK(err == -EINVAL);
                const bool same = !cpu_messages.empty() && messages.size() == 1 &&
                                  messages[0] == cpu_messages[0];
                CHECK(same);
                if (!same)
                    fprintf(stderr, "  %s, %u-bit: CPU \"%s\", twin \"%s\"\n", m->name, depth,
                            cpu_messages.empty() ? "" : cpu_messages[0].c_str(),
                            messages.empty() ? "" : messages[0].c_str());
            }
            free(state);
            quale_close(&tctx);
        }
        quale_picture_unref(&refs[0]);
        quale_picture_unref(&dists[0]);
    }
}

/* float_ansnr below 3x3: the CPU refuses with float_ansnr_check_size()'s
 * message; the twin's plan() calls the same function. */
static void test_size_refusal()
{
    static const unsigned sizes[][2] = { { 2, 3 }, { 3, 2 }, { 1, 1 }, { 2, 1080 } };
    for (const auto &size : sizes) {
        const QualeVideoFormat format = { QUALE_CHROMA_444, 8, size[0], size[1] };
        std::vector<QualePicture> refs(1), dists(1);
        CHECK(quale_picture_alloc(&refs[0], &format) == 0);
        CHECK(quale_picture_alloc(&dists[0], &format) == 0);
        fill_reference(&refs[0], P_NOISE, 0);
        fill_distorted(&dists[0], &refs[0], P_NOISE, D_NOISE);
        QualeContext *ctx = NULL;
        CHECK(cpu_run(&ctx, { "float_ansnr" }, refs, dists) != 0);
        char expected[256];
        CHECK(float_ansnr_check_size(size[0], size[1], expected, sizeof(expected)) == -EINVAL);
        const bool found = logged(expected);
        CHECK(found);
        if (!found) {
            fprintf(stderr, "  %ux%u: expected \"%s\"; logged:\n", size[0], size[1], expected);
            for (const std::string &m : messages) fprintf(stderr, "    %s\n", m.c_str());
        }
        quale_close(&ctx);
        quale_picture_unref(&refs[0]);
        quale_picture_unref(&dists[0]);
    }
    char error[256] = "";
    CHECK(float_ansnr_check_size(3, 3, error, sizeof(error)) == 0);
}

/* The device's weights are the C reference's: the same macros, rounded the
 * same way (and the PTX constants were compared by hand, see the report). */
static void test_weights()
{
    const float ref[] = { ANSNR_REF_WEIGHTS(ANSNR_REF_WEIGHT) };
    const float dis[] = { ANSNR_DIS_WEIGHTS(ANSNR_DIS_WEIGHT) };
    for (int k = 0; k < ANSNR_REF_TAPS * ANSNR_REF_TAPS; k++)
        CHECK(fansnr_weight<ANSNR_REF_TAPS>(k) == ref[k]);
    for (int k = 0; k < ANSNR_DIS_TAPS * ANSNR_DIS_TAPS; k++)
        CHECK(fansnr_weight<ANSNR_DIS_TAPS>(k) == dis[k]);
    CHECK(fansnr_weight<ANSNR_DIS_TAPS>(12) == (float)(127 / 571.0));
    CHECK(fansnr_mirror(-2, 5) == 2 && fansnr_mirror(5, 5) == 4 && fansnr_mirror(6, 5) == 3);
}

int main(int argc, char **argv)
{
    /* --quick: leave out the 1080p cases */
    const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    register_fake_kernels();
    test_weights();
    test_depth_refusal();
    test_size_refusal();
    unsigned index = 0;
    for (const Case &c : fixed_cases) {
        if (!quick || c.w * c.h < 1000000) run_case(c, index);
        index++;
    }
    /* Random sizes, depths, chroma and contents. */
    static const unsigned depths[] = { 8, 8, 10, 10, 12, 12, 16, 16 };
    static const QualeChroma chromas[] = { QUALE_CHROMA_400, QUALE_CHROMA_420, QUALE_CHROMA_422,
                                           QUALE_CHROMA_444 };
    for (unsigned i = 0; i < 32; i++) {
        Case c;
        c.w = 1 + rng() % 140;
        c.h = 1 + rng() % 90;
        c.bitdepth = depths[rng() % 8];
        c.chroma = chromas[rng() % 4];
        c.pattern = (Pattern)(rng() % P_PATTERNS);
        if (c.pattern == P_WIDE && c.bitdepth == 8) c.pattern = P_NOISE;
        c.distortion = (Distortion)(rng() % D_DISTORTIONS);
        c.frames = 2;
        run_case(c, index++);
    }
    printf("worst difference per key (bit-exact values / compared):\n");
    for (unsigned k = 0; k < KEYS; k++)
        printf("  %-20s %.3g (%u / %u)\n", all_keys[k], worst[k], compared[k] - inexact[k],
               compared[k]);
    return test_summary();
}
