/*
 * The CUDA twins of float VIF, float ADM and float motion, run on the CPU:
 * no GPU needed.
 *
 * src/cuda/float_vif.cu, float_adm.cu and float_motion.cu are included as
 * C++ (src/cuda/cuda_host_compat.h turns the CUDA qualifiers off and their
 * __global__ wrappers are left out); each twin's own host code
 * (src/cuda/<metric>_cuda.c, linked from the library) gives the slot
 * layout and every launch of a frame: kernel, grid, shared memory and
 * arguments, exactly what its enqueue() launches.  Each launch is emulated
 * here block by block and thread by thread through the very functions the
 * kernels call:
 *   - element kernels run their threads forwards on even frames and
 *     backwards on odd ones, so that a thread reading what another writes
 *     in the same launch would show;
 *   - the row kernels run phase by phase (the device's barriers), every
 *     thread of the block through each phase, forwards or backwards; their
 *     shared memory starts as NaNs and has a guard zone after it.
 * The slot memory starts as random bytes and has a guard zone after it.
 * The read-back row sums then go through the twin's collect() work
 * (<metric>_cuda_write(), the C reference's own functions), into a sink,
 * and every key is compared with what the CPU backend wrote through the
 * public API, against tests/tolerance.json; the worst difference of each
 * key is printed (the twins are meant to be bit-exact: the count of keys
 * that are not is printed too).
 *
 * Cases: random frames of the smallest sizes the CPU accepts, odd sizes,
 * 176x144 and 1920x1080; 8, 10, 12 and 16 bits (samples above the bit
 * depth too); the options the twins support; several frames in a row.
 * Also the float ADM reciprocal table against the CPU's, what supports()
 * declines, and float motion's size refusal (the C reference's message).
 * The three twins' plans also run through the plan executor on a fake
 * driver (tests/cuda_plan_run.h), key by key against the CPU.
 * Prints "N passed, M failed"; --quick leaves out the 1080p cases.
 */
#include <fnmatch.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "context.h"
#include "metric.h"
#include "option.h"
#include "quale/quale.h"
}

#include "metrics/float_adm/cuda/float_adm.cu"
#include "metrics/float_motion/cuda/float_motion.cu"
#include "metrics/float_vif/cuda/float_vif.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x3c6ef372fe94f82bull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"

/* ---- the twins' host code (src/cuda/float_*_cuda.c) ------------------------ */

struct FloatVifPlan;
struct FloatAdmPlan;
struct FloatMotionPlan;

extern "C" {
FloatVifPlan *float_vif_cuda_plan_new(const FloatVifState *s, unsigned bitdepth);
const CudaSlotLayout *float_vif_cuda_slot(const FloatVifPlan *p);
const char *float_vif_cuda_step(const FloatVifPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                                uint64_t dist, uint64_t stride, unsigned launch[4], void *args);
int float_vif_cuda_write(const FloatVifPlan *p, FeatureSink *sink, unsigned frame,
                         const float *rows);
bool float_vif_cuda_supports(const void *state);

FloatAdmPlan *float_adm_cuda_plan_new(const FloatAdmState *s, unsigned bitdepth);
const CudaSlotLayout *float_adm_cuda_slot(const FloatAdmPlan *p);
const char *float_adm_cuda_step(const FloatAdmPlan *p, unsigned i, uint64_t slot,
                                uint64_t rcp_table, unsigned rcp_shift, uint64_t ref,
                                uint64_t dist, uint64_t stride, unsigned launch[4], void *args);
int float_adm_cuda_write(const FloatAdmPlan *p, FeatureSink *sink, unsigned frame,
                         const float *rows);
bool float_adm_cuda_supports(const void *state);

FloatMotionPlan *float_motion_cuda_plan_new(FloatMotionState *s, unsigned bitdepth);
const CudaSlotLayout *float_motion_cuda_slot(const FloatMotionPlan *p);
const char *float_motion_cuda_launch(const FloatMotionPlan *p, unsigned index, uint64_t rows,
                                     uint64_t cur, uint64_t prev, uint64_t prev2,
                                     uint64_t stride, unsigned launch[4], void *args);
int float_motion_cuda_write(const FloatMotionPlan *p, FeatureSink *sink, unsigned index,
                            const float *rows);
bool float_motion_cuda_supports(const void *state);
}

/* ---- the tolerance table ---------------------------------------------------- */

struct Rule {
    std::string pattern;
    double abs;
};
static std::vector<Rule> rules;

/* tests/tolerance.json's rules, in order: each "pattern" with its "abs". */
static bool load_tolerances(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    fclose(f);
    size_t at = 0;
    while ((at = text.find("\"pattern\"", at)) != std::string::npos) {
        const size_t q1 = text.find('"', text.find(':', at) + 1);
        const size_t q2 = text.find('"', q1 + 1);
        const size_t a = text.find("\"abs\"", q2);
        if (q1 == std::string::npos || q2 == std::string::npos || a == std::string::npos) break;
        rules.push_back({ text.substr(q1 + 1, q2 - q1 - 1),
                          strtod(text.c_str() + text.find(':', a) + 1, NULL) });
        at = q2;
    }
    return !rules.empty();
}

static double tolerance(const char *key)
{
    for (const Rule &r : rules)
        if (fnmatch(r.pattern.c_str(), key, 0) == 0) return r.abs;
    return 0.0;
}

/* ---- random pictures ------------------------------------------------------- */

enum Pattern { P_NOISE, P_TEXTURE, P_EXTREME, P_WIDE, P_FLAT, P_STILL, P_PATTERNS };
enum Distortion { D_NOISE, D_BLUR, D_RANDOM, D_SAME, D_CONTRAST, D_DARK, D_DISTORTIONS };

static const char *const pattern_names[] = { "noise", "texture", "extreme", "wide", "flat",
                                             "still" };
static const char *const distortion_names[] = { "noise", "blur", "random", "same", "contrast",
                                                "dark" };


/* The largest sample of a pattern: the bit depth's, or 16 bits for the
 * samples above it that the API does not forbid. */
static unsigned pattern_max(const QualePicture *p, Pattern pattern)
{
    return pattern == P_WIDE && p->format.bitdepth > 8 ? 65535u
                                                       : (1u << p->format.bitdepth) - 1;
}

/* still: the same picture whatever the frame (motion 0); texture moves
 * with the frame. */
static void fill_reference(QualePicture *p, Pattern pattern, unsigned frame, uint64_t seed)
{
    const unsigned max = pattern_max(p, pattern);
    if (pattern == P_STILL) rng_state = seed;
    const unsigned flat = rng() % (max + 1);
    for (unsigned plane = 0; plane < p->plane_count; plane++) {
        for (unsigned y = 0; y < p->plane_height[plane]; y++) {
            for (unsigned x = 0; x < p->plane_width[plane]; x++) {
                unsigned v;
                switch (pattern) {
                case P_TEXTURE: {
                    /* 8x8 blocks: flat, gradient or noisy, so that every
                     * branch of the statistics runs. */
                    const unsigned kind = ((x / 8) * 7 + (y / 8) * 3 + frame) % 3;
                    const unsigned base = ((x / 8) * 37 + (y / 8) * 91 + frame * 5) % (max + 1);
                    v = kind == 0 ? base
                        : kind == 1 ? (base + x * (max / 64 + 1) + y) % (max + 1)
                                    : clip((long)base + (long)(rng() % (max / 4 + 1)) - (long)(max / 8), max);
                    break;
                }
                case P_EXTREME: v = (rng() & 1) ? max : 0; break;
                case P_FLAT: v = flat; break;
                default: v = rng() % (max + 1); break; /* noise, wide, still */
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
        for (unsigned y = 0; y < d->plane_height[plane]; y++) {
            for (unsigned x = 0; x < d->plane_width[plane]; x++) {
                if (plane > 0) {
                    put(d, plane, x, y, 0);
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
                /* g > 1: the enhancement gain limits matter */
                case D_CONTRAST: out = (v - (long)(max / 2)) * 3 / 2 + (long)(max / 2); break;
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

/* ---- emulating launches ------------------------------------------------------ */

template <typename Args>
struct Kernel {
    const char *name;
    /* element kernels: one thread (block x, block y, grid y, thread, block size) */
    void (*element)(const Args &, unsigned, unsigned, unsigned, unsigned, unsigned);
    /* row kernels: one thread's share of a phase, and the phases of a block */
    void (*phase)(const Args &, unsigned, unsigned, float *, unsigned, unsigned);
    unsigned (*phases)(const Args &);
};

static const Kernel<FvifArgs> vif_kernels[] = {
    { "fvif_rows_8_17", NULL, fvif_rows_phase<uint8_t, 17>, fvif_rows_phases },
    { "fvif_rows_16_17", NULL, fvif_rows_phase<uint16_t, 17>, fvif_rows_phases },
    { "fvif_rows_8_0", NULL, fvif_rows_phase<uint8_t, 0>, fvif_rows_phases },
    { "fvif_rows_16_0", NULL, fvif_rows_phase<uint16_t, 0>, fvif_rows_phases },
    { "fvif_rows_f_9", NULL, fvif_rows_phase<float, 9>, fvif_rows_phases },
    { "fvif_rows_f_5", NULL, fvif_rows_phase<float, 5>, fvif_rows_phases },
    { "fvif_rows_f_3", NULL, fvif_rows_phase<float, 3>, fvif_rows_phases },
    { "fvif_rows_f_0", NULL, fvif_rows_phase<float, 0>, fvif_rows_phases },
    { "fvif_vdec_8_9", fvif_vdec_thread<uint8_t, 9>, NULL, NULL },
    { "fvif_vdec_16_9", fvif_vdec_thread<uint16_t, 9>, NULL, NULL },
    { "fvif_vdec_8_0", fvif_vdec_thread<uint8_t, 0>, NULL, NULL },
    { "fvif_vdec_16_0", fvif_vdec_thread<uint16_t, 0>, NULL, NULL },
    { "fvif_vdec_f_5", fvif_vdec_thread<float, 5>, NULL, NULL },
    { "fvif_vdec_f_3", fvif_vdec_thread<float, 3>, NULL, NULL },
    { "fvif_vdec_f_0", fvif_vdec_thread<float, 0>, NULL, NULL },
    { "fvif_hdec_9", fvif_hdec_thread<9>, NULL, NULL },
    { "fvif_hdec_5", fvif_hdec_thread<5>, NULL, NULL },
    { "fvif_hdec_3", fvif_hdec_thread<3>, NULL, NULL },
    { "fvif_hdec_0", fvif_hdec_thread<0>, NULL, NULL },
};

static const Kernel<FadmArgs> adm_kernels[] = {
    { "fadm_dwt_8", fadm_dwt_thread<uint8_t>, NULL, NULL },
    { "fadm_dwt_16", fadm_dwt_thread<uint16_t>, NULL, NULL },
    { "fadm_dwt_f", fadm_dwt_thread<float>, NULL, NULL },
    { "fadm_decouple", fadm_decouple_thread, NULL, NULL },
    { "fadm_rows", NULL, fadm_rows_phase, fadm_rows_phases },
};

static const Kernel<FmotArgs> motion_kernels[] = {
    { "fmot_sad_8_5", NULL, fmot_phase<uint8_t, 5>, fmot_phases },
    { "fmot_sad_8_3", NULL, fmot_phase<uint8_t, 3>, fmot_phases },
    { "fmot_sad_16_5", NULL, fmot_phase<uint16_t, 5>, fmot_phases },
    { "fmot_sad_16_3", NULL, fmot_phase<uint16_t, 3>, fmot_phases },
};

template <typename Args, size_t N>
static const Kernel<Args> *find_kernel(const Kernel<Args> (&table)[N], const char *name)
{
    for (const Kernel<Args> &k : table)
        if (name && !strcmp(k.name, name)) return &k;
    return NULL;
}

enum { SHARED_LIMIT = 48 * 1024, SHARED_GUARD = 1024, GUARD = 4096 };

/* One launch: grid (launch[0], launch[1]) of launch[2] threads with
 * launch[3] bytes of shared memory; false if it is not a launch the
 * device takes (the kernels' launch bounds are 256 threads). */
template <typename Args>
static bool emulate(const Kernel<Args> *k, const Args &a, const unsigned launch[4],
                    unsigned threads, bool backwards, const char *name)
{
    const unsigned gx = launch[0], gy = launch[1], bd = launch[2], shared = launch[3];
    if (!k || gx == 0 || gy == 0 || gy > 65535 || bd != threads || shared > SHARED_LIMIT ||
        (k->phase != NULL) != (shared > 0) || shared % sizeof(float)) {
        fprintf(stderr, "  kernel %s, launch %u x %u x %u, %u shared bytes\n",
                name ? name : "(none)", gx, gy, bd, shared);
        return false;
    }
    std::vector<float> smem((shared + SHARED_GUARD) / sizeof(float));
    for (unsigned iy = 0; iy < gy; iy++) {
        const unsigned by = backwards ? gy - 1 - iy : iy;
        for (unsigned ix = 0; ix < gx; ix++) {
            const unsigned bx = backwards ? gx - 1 - ix : ix;
            if (k->element) {
                for (unsigned it = 0; it < bd; it++)
                    k->element(a, bx, by, gy, backwards ? bd - 1 - it : it, bd);
                continue;
            }
            memset(smem.data(), 0xff, smem.size() * sizeof(float)); /* NaNs */
            const unsigned phases = k->phases(a);
            for (unsigned p = 0; p < phases; p++)
                for (unsigned it = 0; it < bd; it++)
                    k->phase(a, bx, p, smem.data(), backwards ? bd - 1 - it : it, bd);
            const uint8_t *guard = (const uint8_t *)smem.data() + shared;
            for (unsigned i = 0; i < SHARED_GUARD; i++) {
                if (guard[i] != 0xff) {
                    fprintf(stderr, "  kernel %s wrote past its shared memory\n", name);
                    return false;
                }
            }
        }
    }
    return true;
}

/* The kernels on the fake driver (tests/cuda_fake_driver.h): each name runs
 * its element code through emulate(). */
static bool fake_backwards;

template <typename Args, unsigned Threads>
static void fake_kernel_run(const FakeLaunch *l)
{
    const Kernel<Args> *k = static_cast<const Kernel<Args> *>(l->user);
    const unsigned launch[4] = { l->grid[0], l->grid[1], l->block, l->shared_bytes };
    Args a;
    memcpy(&a, l->args, sizeof(a));
    CHECK(l->grid[2] == 1 && emulate(k, a, launch, Threads, fake_backwards, k->name));
}

static void register_fake_kernels()
{
    for (const Kernel<FvifArgs> &k : vif_kernels)
        fake_kernel_with(k.name, fake_kernel_run<FvifArgs, FVIF_THREADS>, &k);
    for (const Kernel<FadmArgs> &k : adm_kernels)
        fake_kernel_with(k.name, fake_kernel_run<FadmArgs, FADM_THREADS>, &k);
    for (const Kernel<FmotArgs> &k : motion_kernels)
        fake_kernel_with(k.name, fake_kernel_run<FmotArgs, FMOT_THREADS>, &k);
}

/* Slot memory: random bytes, and a guard zone after it. */
struct Slot {
    std::vector<uint8_t> bytes;
    size_t size;
    void reset(size_t n)
    {
        size = n;
        bytes.assign(n + GUARD, 0);
        for (size_t i = 0; i < n + GUARD; i++) bytes[i] = (uint8_t)rng();
        guard.assign(bytes.begin() + (ptrdiff_t)n, bytes.end());
    }
    bool guard_intact() const
    {
        return memcmp(guard.data(), bytes.data() + size, GUARD) == 0;
    }
    uint64_t base() { return (uint64_t)(uintptr_t)bytes.data(); }
    std::vector<uint8_t> guard;
};

/* ---- comparing keys ---------------------------------------------------------- */

struct Worst {
    double diff = 0.0;
    unsigned values = 0, inexact = 0;
    std::string where;
};
static std::map<std::string, Worst> worst; /* "metric key" */
static std::map<std::string, unsigned> key_order;

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

/* Every key of frame f: the twin's (declared and written in twin_ctx's raw
 * sink) against the CPU's (cpu_ctx), by declaration order. */
static void compare_keys(const char *metric, const char *label, QualeContext *cpu_ctx,
                         QualeContext *twin_ctx, unsigned f)
{
    const unsigned keys = quale_feature_count(twin_ctx);
    CHECK(keys == quale_feature_count(cpu_ctx));
    for (unsigned k = 0; k < keys && k < quale_feature_count(cpu_ctx); k++) {
        const char *name = quale_feature_name(twin_ctx, k);
        double cpu = NAN, twin = NAN;
        const int cpu_err = quale_feature_value(cpu_ctx, quale_feature_name(cpu_ctx, k), f, &cpu);
        const int twin_err = quale_feature_value(twin_ctx, name, f, &twin);
        CHECK(cpu_err == twin_err);
        if (cpu_err || twin_err) {
            if (cpu_err != twin_err)
                fprintf(stderr, "  %s, frame %u, %s: CPU %s, twin %s\n", label, f, name,
                        cpu_err ? "none" : "a value", twin_err ? "none" : "a value");
            continue;
        }
        const std::string id = std::string(metric) + " " + name;
        if (!key_order.count(id)) key_order[id] = (unsigned)key_order.size();
        Worst &w = worst[id];
        w.values++;
        const bool exact = same_bits(cpu, twin) || (std::isnan(cpu) && std::isnan(twin));
        const double diff = exact ? 0.0 : std::isnan(cpu) || std::isnan(twin) ? INFINITY
                                                                             : fabs(cpu - twin);
        if (!exact) w.inexact++;
        if (diff > w.diff || (!exact && w.where.empty())) {
            w.diff = diff;
            char where[256];
            snprintf(where, sizeof(where), "%s, frame %u: twin %.17g, CPU %.17g", label, f, twin,
                     cpu);
            w.where = where;
        }
        const bool ok = diff <= tolerance(name);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  %s, frame %u, %s: twin %.17g, CPU %.17g\n", label, f, name, twin,
                    cpu);
    }
}

/* ---- cases --------------------------------------------------------------------- */

struct Case {
    unsigned w, h, bitdepth;
    QualeChroma chroma;
    Pattern pattern;
    Distortion distortion;
    unsigned frames;
};

struct Frames {
    QualeVideoFormat format;
    std::vector<QualePicture> refs, dists;
    Frames(const Case &c)
    {
        format = { c.chroma, c.bitdepth, c.w, c.h };
        refs.resize(c.frames);
        dists.resize(c.frames);
        const uint64_t seed = rng_state;
        for (unsigned f = 0; f < c.frames; f++) {
            CHECK(quale_picture_alloc(&refs[f], &format) == 0);
            CHECK(quale_picture_alloc(&dists[f], &format) == 0);
            fill_reference(&refs[f], c.pattern, f, seed);
            fill_distorted(&dists[f], &refs[f], c.pattern,
                           (Distortion)((c.distortion + f) % D_DISTORTIONS));
        }
        rng_state ^= seed * 0x9E3779B97F4A7C15ull;
        rng();
    }
    ~Frames()
    {
        free_frames(refs, dists);
    }
};

extern "C" {
extern const CudaTwin cuda_twin_float_vif, cuda_twin_float_adm, cuda_twin_float_motion;
}

/* The twin's plan through the executor, as the backend runs it, with a
 * state of its own (the keys go to a context of their own); with flush,
 * the metric's flush() after the last frame. */
static void plan_run(const CudaTwin &twin, const Metric *m, const char *spec, Frames &fr,
                     QualeContext *cpu_ctx, const char *label, bool flush = false)
{
    QualeContext *ctx = NULL;
    CHECK(open_ctx(&ctx, 1) == 0);
    void *state = ctx ? make_state(m, spec, &fr.format, ctx) : NULL;
    CHECK(state != NULL);
    if (state)
        CHECK(plan_run_matches_cpu(twin, *m, state, fr.refs, fr.dists, context_sink(ctx), cpu_ctx,
                                   label, &fake_backwards, flush));
    free_state(m, state);
    quale_close(&ctx);
}

static uint64_t host(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* One metric under one option set on one case's frames. */
static void run_spec(const Metric *m, const char *spec, const Case &c, Frames &fr,
                     unsigned index)
{
    char label[200];
    snprintf(label, sizeof(label), "case %u: %ux%u %u-bit %s/%s, %s", index, c.w, c.h,
             c.bitdepth, pattern_names[c.pattern], distortion_names[c.distortion], spec);
    const unsigned failed_before = test_failed;

    QualeContext *cpu_ctx = NULL, *twin_ctx = NULL;
    const int run_err = cpu_run(&cpu_ctx, spec, fr.refs, fr.dists);
    CHECK(run_err == 0);
    CHECK(open_ctx(&twin_ctx, 1) == 0);
    void *state = make_state(m, spec, &fr.format, twin_ctx);
    CHECK(state != NULL);
    if (run_err || !state) {
        for (const std::string &msg : messages) fprintf(stderr, "    %s\n", msg.c_str());
        free_state(m, state);
        quale_close(&twin_ctx);
        quale_close(&cpu_ctx);
        return;
    }
    FeatureSink *sink = context_sink(twin_ctx);
    const unsigned bd = c.bitdepth;
    Slot slot;

    if (m == &metric_float_vif) {
        const FloatVifState *s = static_cast<const FloatVifState *>(state);
        CHECK(float_vif_cuda_supports(s));
        FloatVifPlan *plan = float_vif_cuda_plan_new(s, bd);
        for (unsigned f = 0; f < c.frames; f++) {
            slot.reset(float_vif_cuda_slot(plan)->bytes);
            bool ok = true;
            const unsigned steps = float_vif_cuda_slot(plan)->steps;
            for (unsigned i = 0; i < steps && ok; i++) {
                FvifArgs a;
                unsigned launch[4];
                const char *name = float_vif_cuda_step(plan, i, slot.base(),
                                                       host(fr.refs[f].data[0]),
                                                       host(fr.dists[f].data[0]),
                                                       (uint64_t)fr.refs[f].stride[0], launch, &a);
                ok = emulate(find_kernel(vif_kernels, name), a, launch, FVIF_THREADS, f % 2,
                             name);
            }
            CHECK(ok);
            CHECK(float_vif_cuda_step(plan, steps, 0, 0, 0, 0, NULL, NULL) == NULL);
            CHECK(slot.guard_intact());
            CHECK(float_vif_cuda_write(plan, sink, f, (const float *)slot.bytes.data()) == 0);
            compare_keys("float_vif", label, cpu_ctx, twin_ctx, f);
        }
        free(plan);
        plan_run(cuda_twin_float_vif, m, spec, fr, cpu_ctx, label);
    } else if (m == &metric_float_adm) {
        const FloatAdmState *s = static_cast<const FloatAdmState *>(state);
        CHECK(float_adm_cuda_supports(s));
        unsigned shift = 0;
        size_t count = 0;
        bool usable = false;
        const uint32_t *table = float_adm_reciprocal_table(&shift, &count, &usable);
        FloatAdmPlan *plan = float_adm_cuda_plan_new(s, bd);
        for (unsigned f = 0; f < c.frames; f++) {
            slot.reset(float_adm_cuda_slot(plan)->bytes);
            bool ok = true;
            const unsigned steps = float_adm_cuda_slot(plan)->steps;
            for (unsigned i = 0; i < steps && ok; i++) {
                FadmArgs a;
                unsigned launch[4];
                const char *name = float_adm_cuda_step(plan, i, slot.base(), host(table), shift,
                                                       host(fr.refs[f].data[0]),
                                                       host(fr.dists[f].data[0]),
                                                       (uint64_t)fr.refs[f].stride[0], launch, &a);
                ok = emulate(find_kernel(adm_kernels, name), a, launch, FADM_THREADS, f % 2,
                             name);
            }
            CHECK(ok);
            CHECK(float_adm_cuda_step(plan, steps, 0, 0, 0, 0, 0, 0, NULL, NULL) == NULL);
            CHECK(slot.guard_intact());
            CHECK(float_adm_cuda_write(plan, sink, f, (const float *)slot.bytes.data()) == 0);
            compare_keys("float_adm", label, cpu_ctx, twin_ctx, f);
        }
        free(plan);
        plan_run(cuda_twin_float_adm, m, spec, fr, cpu_ctx, label);
    } else {
        FloatMotionState *s = static_cast<FloatMotionState *>(state);
        CHECK(float_motion_cuda_supports(s));
        FloatMotionPlan *plan = float_motion_cuda_plan_new(s, bd);
        for (unsigned f = 0; f < c.frames; f++) {
            slot.reset(float_motion_cuda_slot(plan)->readback_bytes);
            FmotArgs a;
            unsigned launch[4];
            const char *name = float_motion_cuda_launch(
                plan, f, slot.base(), host(fr.refs[f].data[0]),
                f >= 1 ? host(fr.refs[f - 1].data[0]) : 0, f >= 2 ? host(fr.refs[f - 2].data[0]) : 0,
                (uint64_t)fr.refs[f].stride[0], launch, &a);
            if (name) CHECK(emulate(find_kernel(motion_kernels, name), a, launch, FMOT_THREADS, f % 2, name));
            CHECK(slot.guard_intact());
            CHECK(float_motion_cuda_write(plan, sink, f, (const float *)slot.bytes.data()) == 0);
        }
        /* the last frame's motion2 and motion3: the metric's own flush */
        CHECK(metric_float_motion.flush(s, sink, c.frames) == 0);
        for (unsigned f = 0; f < c.frames; f++) compare_keys("float_motion", label, cpu_ctx, twin_ctx, f);
        free(plan);
        plan_run(cuda_twin_float_motion, m, spec, fr, cpu_ctx, label, true);
    }
    printf("%s %s\n", test_failed == failed_before ? "ok  " : "FAIL", label);
    fflush(stdout);
    free_state(m, state);
    quale_close(&twin_ctx);
    quale_close(&cpu_ctx);
}

static const char *const vif_specs[] = {
    "float_vif",
    "float_vif=debug=true",
    "float_vif=debug=true:vif_enhn_gain_limit=1.0",
    "float_vif=debug=true:vif_skip_scale0=true",
    "float_vif=debug=true:vif_enhn_gain_limit=1.37:vif_sigma_nsq=3.5:vif_scale2_min_val=0.9",
    "float_vif=debug=true:vif_sigma_nsq=0",
};
static const char *const vif_big_specs[] = {
    /* 35, 19, 9 and 5 taps; 65, 33, 17, 13: the generic kernels */
    "float_vif=debug=true:vif_kernelscale=2",
    "float_vif=debug=true:vif_kernelscale=3.7113402",
    /* nearest-sample resizing at scale 0 */
    "float_vif=debug=true:vif_prescale=0.5",
    "float_vif=debug=true:vif_prescale=1.7",
    "float_vif=debug=true:vif_kernelscale=0.5:vif_prescale=2",
};
static const char *const adm_specs[] = {
    "float_adm",
    "float_adm=debug=true",
    "float_adm=debug=true:adm_enhn_gain_limit=1.0",
    "float_adm=debug=true:adm_skip_scale0=true:adm_skip_aim_scale=1",
    "float_adm=debug=true:adm_csf_mode=1:adm_bypass_cm=1",
    "float_adm=debug=true:adm_csf_mode=2:adm_adm3_apply_hm=true:adm_enhn_gain_limit=1.2",
    "float_adm=debug=true:adm_noise_weight=0:adm_f1s0=0.5:adm_f2s2=2:adm_min_val=0.4",
    "float_adm=debug=true:adm_norm_view_dist=1.5:adm_ref_display_height=2160:adm_dlm_weight=0.8",
};
static const char *const motion_specs[] = {
    "float_motion",
    "float_motion=debug=false",
    "float_motion=motion_filter_size=3",
    "float_motion=motion_filter_size=1:motion_fps_weight=2.5:motion_max_val=3",
    "float_motion=motion_blend_factor=0.5:motion_blend_offset=1:motion_fps_weight=0.7",
    "float_motion=motion_force_zero=true",
};

template <size_t N>
static void run_specs(const Metric *m, const char *const (&specs)[N], unsigned mask,
                      const Case &c, Frames &fr, unsigned index)
{
    for (unsigned i = 0; i < N; i++)
        if (mask & (1u << i)) run_spec(m, specs[i], c, fr, index);
}

enum { ALL = ~0u };

struct MetricCase {
    Case c;
    unsigned vif, vif_big, adm, motion; /* bit per spec of each list */
};

static const MetricCase fixed_cases[] = {
    /* the smallest pictures each accepts: VIF 16x16 (scale 3 is 2x2), ADM
     * 17x17, motion 3x3 (2x2 with the 3-tap blur) */
    { { 16, 16, 8, QUALE_CHROMA_420, P_NOISE, D_NOISE, 3 }, ALL, 0, 0, 0 },
    { { 16, 16, 10, QUALE_CHROMA_420, P_TEXTURE, D_CONTRAST, 2 }, ALL, 0, 0, 0 },
    { { 17, 17, 8, QUALE_CHROMA_444, P_TEXTURE, D_BLUR, 3 }, ALL, 0, ALL, ALL },
    { { 17, 17, 12, QUALE_CHROMA_444, P_WIDE, D_NOISE, 2 }, 0, 0, ALL, ALL },
    { { 3, 3, 8, QUALE_CHROMA_444, P_NOISE, D_NOISE, 4 }, 0, 0, 0, ALL },
    { { 2, 2, 16, QUALE_CHROMA_444, P_NOISE, D_NOISE, 3 }, 0, 0, 0, 1u << 2 },
    { { 3, 5, 10, QUALE_CHROMA_444, P_EXTREME, D_NOISE, 4 }, 0, 0, 0, ALL },
    { { 16, 31, 16, QUALE_CHROMA_444, P_NOISE, D_RANDOM, 3 }, ALL, 0, 0, ALL },
    { { 18, 17, 16, QUALE_CHROMA_444, P_EXTREME, D_DARK, 2 }, 0, 0, ALL, 0 },
    { { 33, 65, 8, QUALE_CHROMA_444, P_TEXTURE, D_CONTRAST, 3 }, ALL, 0, ALL, ALL },
    { { 33, 65, 10, QUALE_CHROMA_444, P_FLAT, D_SAME, 3 }, ALL, 0, ALL, ALL },
    { { 65, 33, 16, QUALE_CHROMA_444, P_WIDE, D_CONTRAST, 2 }, ALL, 0, ALL, 0 },
    { { 97, 71, 12, QUALE_CHROMA_444, P_STILL, D_BLUR, 3 }, 1u << 1, 0, 1u << 1, ALL },
    { { 176, 144, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 3 }, ALL, ALL, ALL, ALL },
    { { 176, 144, 10, QUALE_CHROMA_420, P_NOISE, D_BLUR, 2 }, ALL, 0, ALL, 1u << 0 },
    { { 176, 144, 12, QUALE_CHROMA_420, P_TEXTURE, D_CONTRAST, 2 }, 1u << 1, 1u << 0, ALL, 1u << 0 },
    { { 176, 144, 16, QUALE_CHROMA_420, P_WIDE, D_DARK, 2 }, 1u << 1, 1u << 2, 1u << 1, 1u << 0 },
    { { 301, 257, 10, QUALE_CHROMA_444, P_TEXTURE, D_RANDOM, 2 }, 1u << 1, ALL, 1u << 1, 1u << 2 },
    { { 1920, 1080, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 2 }, 1u << 1, 0, 1u << 1, 1u << 0 },
    { { 1919, 1081, 10, QUALE_CHROMA_444, P_TEXTURE, D_CONTRAST, 3 }, 1u << 1, 0, 1u << 1, 1u << 0 },
};

/* ---- the rest ------------------------------------------------------------------- */

/* The table and float_adm_reciprocal_from_table() against the CPU's own
 * reciprocal: every mantissa of the exponents that occur, edges of all. */
static void test_reciprocal()
{
    unsigned shift = 0;
    size_t count = 0;
    bool usable = false;
    const uint32_t *table = float_adm_reciprocal_table(&shift, &count, &usable);
    CHECK(usable);
    if (!float_adm_divides_by_reciprocal()) {
        CHECK(table == NULL);
        printf("float ADM: the reference divides exactly here\n");
        return;
    }
    CHECK(table != NULL && count == (size_t)1 << (23 - shift));
    if (!table) return;
    printf("float ADM: the host's reciprocal from a table of %zu entries (mantissa >> %u)\n",
           count, shift);
    unsigned bad = 0;
    for (uint32_t e = 100; e < 160; e++) {
        for (uint32_t m = 0; m < (1u << 23); m += e % 7 + 1) {
            const uint32_t u = e << 23 | m | (m & 1) << 31;
            const float d = bitcast_bits_float(u);
            if (bitcast_float_bits(float_adm_reciprocal_from_table(table, shift, d)) !=
                bitcast_float_bits(float_adm_reciprocal(d)))
                bad++;
        }
    }
    CHECK(bad == 0);
    /* Zeros, subnormals and 2^126 up, which no divisor of the decoupling
     * reaches: x86's rules (Intel's CPUs); reported, not required. */
    unsigned special = 0, checked = 0;
    static const uint32_t exponents[] = { 0, 253, 254, 255 };
    for (uint32_t e : exponents) {
        for (uint32_t m = 0; m < (1u << 23); m += 4093, checked += 2) {
            for (uint32_t sign = 0; sign < 2; sign++) {
                const float d = bitcast_bits_float(sign << 31 | e << 23 | m);
                if (bitcast_float_bits(float_adm_reciprocal_from_table(table, shift, d)) !=
                    bitcast_float_bits(float_adm_reciprocal(d)))
                    special++;
            }
        }
    }
    printf("float ADM: %u of %u reciprocals of zeros, subnormals, infinities, NaNs and 2^126 up "
           "differ from the host's\n", special, checked);
}

/* What supports() declines: adm_p_norm other than 3, motion_add_scale1. */
static void test_supports()
{
    const QualeVideoFormat format = { QUALE_CHROMA_420, 8, 64, 48 };
    QualeContext *ctx = NULL;
    CHECK(open_ctx(&ctx, 1) == 0);
    void *s = make_state(&metric_float_adm, "float_adm=adm_p_norm=2.5", &format, ctx);
    CHECK(s && !float_adm_cuda_supports(s));
    free_state(&metric_float_adm, s);
    s = make_state(&metric_float_adm, "float_adm=adm_p_norm=3", &format, ctx);
    CHECK(s && float_adm_cuda_supports(s));
    free_state(&metric_float_adm, s);
    s = make_state(&metric_float_motion, "float_motion=motion_add_scale1=true", &format, ctx);
    CHECK(s && !float_motion_cuda_supports(s));
    free_state(&metric_float_motion, s);
    quale_close(&ctx);
}

/* Float motion refuses, from frame 1 on, a picture smaller than its blur,
 * with float_motion_check_size()'s message; the twin launches nothing
 * there and its collect() refuses with the same message. */
static void test_motion_refusal()
{
    static const struct { unsigned w, h; const char *spec; } cases[] = {
        { 2, 2, "float_motion" }, { 2, 7, "float_motion" }, { 9, 1, "float_motion" },
        { 1, 1, "float_motion=motion_filter_size=3" },
    };
    for (const auto &rc : cases) {
        const Case c = { rc.w, rc.h, 8, QUALE_CHROMA_444, P_NOISE, D_NOISE, 2 };
        Frames fr(c);
        QualeContext *cpu_ctx = NULL, *twin_ctx = NULL;
        CHECK(cpu_run(&cpu_ctx, rc.spec, fr.refs, fr.dists) != 0);
        const std::vector<std::string> cpu_messages = messages;
        messages.clear();
        CHECK(open_ctx(&twin_ctx, 1) == 0);
        void *state = make_state(&metric_float_motion, rc.spec, &fr.format, twin_ctx);
        CHECK(state != NULL);
        if (state) {
            FloatMotionPlan *plan =
                float_motion_cuda_plan_new(static_cast<FloatMotionState *>(state), 8);
            unsigned launch[4];
            FmotArgs a;
            float rows[64];
            CHECK(float_motion_cuda_launch(plan, 1, host(rows), host(fr.refs[1].data[0]),
                                           host(fr.refs[0].data[0]), 0,
                                           (uint64_t)fr.refs[1].stride[0], launch, &a) == NULL);
            CHECK(float_motion_cuda_write(plan, context_sink(twin_ctx), 0, rows) == 0);
            CHECK(float_motion_cuda_write(plan, context_sink(twin_ctx), 1, rows) == -EINVAL);
            bool found = !messages.empty();
            for (const std::string &m : messages) {
                bool in_cpu = false;
                for (const std::string &cm : cpu_messages) in_cpu = in_cpu || cm == m;
                found = found && in_cpu;
            }
            CHECK(found);
            if (!found) {
                fprintf(stderr, "  %ux%u: the twin logged:\n", rc.w, rc.h);
                for (const std::string &m : messages) fprintf(stderr, "    %s\n", m.c_str());
                fprintf(stderr, "  the CPU:\n");
                for (const std::string &m : cpu_messages) fprintf(stderr, "    %s\n", m.c_str());
            }
            free(plan);
        }
        free_state(&metric_float_motion, state);
        quale_close(&twin_ctx);
        quale_close(&cpu_ctx);
    }
}

static void print_worst()
{
    std::vector<std::pair<unsigned, std::string>> order;
    for (const auto &k : key_order) order.push_back({ k.second, k.first });
    std::sort(order.begin(), order.end());
    printf("\nworst |twin - CPU| per key (values compared, not bit-exact):\n");
    unsigned inexact_keys = 0;
    for (const auto &o : order) {
        const Worst &w = worst[o.second];
        if (w.inexact) inexact_keys++;
        printf("  %-28s %-10.3g (%u values, %u not bit-exact)%s%s\n", o.second.c_str(), w.diff,
               w.values, w.inexact, w.inexact ? "  worst: " : "", w.inexact ? w.where.c_str() : "");
    }
    printf("%u of %zu keys not bit-exact\n", inexact_keys, order.size());
}

int main(int argc, char **argv)
{
    register_fake_kernels();
    /* --quick: leave out the 1080p cases */
    bool quick = false;
    const char *tolerance_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else
            tolerance_path = argv[i];
    }
    /* The table: the argument, else QUALE_TOLERANCE_JSON, else next to
     * this file as the compiler named it (meson runs tests from the build
     * root, the directory it compiles from). */
    std::string next_to_source = __FILE__;
    const size_t slash = next_to_source.rfind('/');
    next_to_source = (slash == std::string::npos ? std::string(".")
                                                 : next_to_source.substr(0, slash)) +
                     "/tolerance.json";
#ifdef QUALE_TOLERANCE_JSON
    if (!tolerance_path) tolerance_path = QUALE_TOLERANCE_JSON;
#endif
    if (!tolerance_path) tolerance_path = next_to_source.c_str();
    if (!load_tolerances(tolerance_path)) {
        fprintf(stderr, "cannot read the tolerance table %s: give its path as an argument\n",
                tolerance_path);
        return 1;
    }
    test_reciprocal();
    test_supports();
    test_motion_refusal();

    unsigned index = 0;
    for (const MetricCase &mc : fixed_cases) {
        const Case &c = mc.c;
        if (quick && c.w * c.h > 1000000) {
            index++;
            continue;
        }
        Frames fr(c);
        run_specs(&metric_float_vif, vif_specs, mc.vif, c, fr, index);
        run_specs(&metric_float_vif, vif_big_specs, mc.vif_big, c, fr, index);
        run_specs(&metric_float_adm, adm_specs, mc.adm, c, fr, index);
        run_specs(&metric_float_motion, motion_specs, mc.motion, c, fr, index);
        index++;
    }
    /* Random sizes, depths, contents and options. */
    for (unsigned i = 0; i < 18; i++) {
        Case c;
        c.w = 17 + rng() % 140;
        c.h = 17 + rng() % 100;
        static const unsigned depths[] = { 8, 8, 10, 10, 12, 16 };
        c.bitdepth = depths[rng() % 6];
        c.chroma = (c.w % 2 || c.h % 2) ? QUALE_CHROMA_444 : QUALE_CHROMA_420;
        c.pattern = (Pattern)(rng() % P_PATTERNS);
        if (c.pattern == P_WIDE && c.bitdepth == 8) c.pattern = P_NOISE;
        c.distortion = (Distortion)(rng() % D_DISTORTIONS);
        c.frames = 3;
        Frames fr(c);
        run_spec(&metric_float_vif, vif_specs[rng() % 6], c, fr, index);
        run_spec(&metric_float_adm, adm_specs[rng() % 8], c, fr, index);
        run_spec(&metric_float_motion, motion_specs[rng() % 6], c, fr, index);
        index++;
    }
    print_worst();
    return test_summary();
}
