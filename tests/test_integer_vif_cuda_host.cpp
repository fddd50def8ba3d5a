/*
 * The CUDA twin of integer VIF, run on the CPU: no GPU needed.
 *
 * src/cuda/integer_vif.cu is included as C++ (src/cuda/cuda_host_compat.h
 * turns the CUDA qualifiers off and its __global__ wrappers are left out);
 * the twin's own host code (src/cuda/integer_vif_cuda.c, linked from the
 * library) gives the slot layout and every launch of a frame: kernel, grid
 * and arguments, exactly what its enqueue() launches.  Each launch is
 * emulated here block by block and thread by thread through the very
 * functions the kernels call; hstats' block sums and 64-bit atomic adds
 * are plain 64-bit additions (integers: the order cannot matter).  Element
 * kernels run their threads forwards on even frames and backwards on odd
 * ones, so that a thread reading what another writes in the same launch
 * would show.  The slot memory starts as random bytes (but for the sums,
 * which enqueue() clears) and has a guard zone after it.
 *
 * Against the C reference, on random frames of many sizes (16x16 to
 * 1920x1080, odd ones), bit depths 8 to 16 (samples above the bit depth
 * too) and every option (debug, vif_enhn_gain_limit, vif_skip_scale0):
 *   - the 16 integer sums of every frame equal vif_frame_sums() (the C
 *     reference's own loops) exactly;
 *   - every key from those sums through vif_values() (what the twin's
 *     collect() writes through vif_write()) equals, bit for bit, what the
 *     CPU backend wrote through the public API;
 *   - the twin's plan run by the plan executor on a fake driver
 *     (tests/cuda_fake_driver.h: its kernels this emulation), two frames
 *     in two slots: the keys its collect() writes are the CPU's, bit for
 *     bit (the log2 table's upload, the sums' clearing and the readback
 *     are the plan's), and it leaves nothing allocated.
 * Also the log2 table against libvmaf's formula, and the size refusal
 * message.  Prints "N passed, M failed".
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
#include "metrics/integer_vif/integer_vif.h"

#include "metrics/integer_vif/cuda/integer_vif.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x6a09e667f3bcc909ull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"

/* ---- the twin's host code (src/cuda/integer_vif_cuda.c) ----------------- */

struct VifPlan;

extern "C" {
VifPlan *vif_cuda_plan_new(const VifState *s);
const CudaSlotLayout *vif_cuda_slot(const VifPlan *p);
const char *vif_cuda_step(const VifPlan *p, unsigned i, uint64_t slot, uint64_t table,
                          uint64_t ref, uint64_t dist, uint64_t stride, unsigned launch[3],
                          void *args);
}

/* ---- random pictures ------------------------------------------------------- */

enum Pattern { P_NOISE, P_TEXTURE, P_EXTREME, P_WIDE, P_FLAT, P_PATTERNS };
enum Distortion { D_NOISE, D_BLUR, D_RANDOM, D_SAME, D_CONTRAST, D_DARK, D_DISTORTIONS };

static const char *const pattern_names[] = { "noise", "texture", "extreme", "wide", "flat" };
static const char *const distortion_names[] = { "noise", "blur", "random", "same", "contrast",
                                                "dark" };


/* The largest sample of a pattern: the bit depth's, or 16 bits for the
 * samples above it that the API does not forbid. */
static unsigned pattern_max(const QualePicture *p, Pattern pattern)
{
    return pattern == P_WIDE && p->format.bitdepth > 8 ? 65535u
                                                       : (1u << p->format.bitdepth) - 1;
}

static void fill_reference(QualePicture *p, Pattern pattern, unsigned frame)
{
    const unsigned max = pattern_max(p, pattern);
    const unsigned flat = rng() % (max + 1);
    for (unsigned plane = 0; plane < p->plane_count; plane++) {
        for (unsigned y = 0; y < p->plane_height[plane]; y++) {
            for (unsigned x = 0; x < p->plane_width[plane]; x++) {
                unsigned v;
                switch (pattern) {
                case P_TEXTURE: {
                    /* 8x8 blocks: flat, gradient or noisy, so that both
                     * branches of the statistic run. */
                    const unsigned kind = ((x / 8) * 7 + (y / 8) * 3 + frame) % 3;
                    const unsigned base = ((x / 8) * 37 + (y / 8) * 91) % (max + 1);
                    v = kind == 0 ? base
                        : kind == 1 ? (base + x * (max / 64 + 1) + y) % (max + 1)
                                    : clip((long)base + (long)(rng() % (max / 4 + 1)) - (long)(max / 8), max);
                    break;
                }
                case P_EXTREME: v = (rng() & 1) ? max : 0; break;
                case P_FLAT: v = flat; break;
                default: v = rng() % (max + 1); break; /* noise, wide */
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
                /* g > 1: the enhancement gain limit matters */
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

/* ---- cases ---------------------------------------------------------------- */

static const char *const option_sets[] = {
    "vif",
    "vif=debug=true",
    "vif=debug=true:vif_enhn_gain_limit=1.0",
    "vif=debug=true:vif_skip_scale0=true",
    "vif=debug=true:vif_enhn_gain_limit=1.37:vif_skip_scale0=true",
    "vif=vif_enhn_gain_limit=1.0",
};
enum { OPTION_SETS = sizeof(option_sets) / sizeof(option_sets[0]) };

struct Case {
    unsigned w, h, bitdepth;
    QualeChroma chroma;
    Pattern pattern;
    Distortion distortion;
    unsigned options; /* bit per option set */
    unsigned frames;
};

enum { ALL_OPTIONS = (1u << OPTION_SETS) - 1, DEBUG_OPTIONS = (1u << 1) | (1u << 2) };

static const Case fixed_cases[] = {
    /* the smallest pictures the reference scores: scale 3 is 2x2 */
    { 16, 16, 8, QUALE_CHROMA_420, P_NOISE, D_NOISE, ALL_OPTIONS, 3 },
    { 16, 16, 10, QUALE_CHROMA_420, P_TEXTURE, D_CONTRAST, ALL_OPTIONS, 2 },
    { 17, 19, 8, QUALE_CHROMA_444, P_TEXTURE, D_BLUR, ALL_OPTIONS, 2 },
    { 17, 19, 12, QUALE_CHROMA_444, P_WIDE, D_NOISE, ALL_OPTIONS, 2 },
    { 16, 31, 16, QUALE_CHROMA_444, P_NOISE, D_RANDOM, ALL_OPTIONS, 2 },
    { 31, 16, 9, QUALE_CHROMA_444, P_EXTREME, D_NOISE, ALL_OPTIONS, 2 },
    { 33, 65, 8, QUALE_CHROMA_444, P_TEXTURE, D_CONTRAST, ALL_OPTIONS, 2 },
    { 33, 65, 10, QUALE_CHROMA_444, P_FLAT, D_SAME, ALL_OPTIONS, 2 },
    { 65, 33, 16, QUALE_CHROMA_444, P_WIDE, D_CONTRAST, ALL_OPTIONS, 2 },
    { 176, 144, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, ALL_OPTIONS, 2 },
    { 176, 144, 10, QUALE_CHROMA_420, P_NOISE, D_BLUR, ALL_OPTIONS, 2 },
    { 176, 144, 12, QUALE_CHROMA_420, P_TEXTURE, D_CONTRAST, ALL_OPTIONS, 2 },
    { 176, 144, 16, QUALE_CHROMA_420, P_WIDE, D_DARK, ALL_OPTIONS, 2 },
    { 255, 97, 14, QUALE_CHROMA_444, P_WIDE, D_BLUR, ALL_OPTIONS, 2 },
    { 1920, 1080, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, DEBUG_OPTIONS, 2 },
    { 1920, 1080, 10, QUALE_CHROMA_420, P_TEXTURE, D_CONTRAST, DEBUG_OPTIONS, 1 },
    { 1919, 1081, 12, QUALE_CHROMA_444, P_WIDE, D_NOISE, 1u << 1, 1 },
    { 1919, 1081, 16, QUALE_CHROMA_444, P_NOISE, D_BLUR, 1u << 3, 1 },
};

/* ---- the twin on the CPU ------------------------------------------------------ */

typedef void (*ElementThread)(const VifArgs &, unsigned, unsigned, unsigned, unsigned, unsigned);
typedef void (*SumsThread)(const VifArgs &, unsigned, unsigned, unsigned, unsigned, unsigned,
                           VifSums *);

struct Kernel {
    const char *name;
    ElementThread element;
    SumsThread sums;
};

static const Kernel kernels[] = {
    { "vif_vstats_8_17", vif_vstats_thread<uint8_t, 17>, NULL },
    { "vif_vstats_16_17", vif_vstats_thread<uint16_t, 17>, NULL },
    { "vif_vstats_16_9", vif_vstats_thread<uint16_t, 9>, NULL },
    { "vif_vstats_16_5", vif_vstats_thread<uint16_t, 5>, NULL },
    { "vif_vstats_16_3", vif_vstats_thread<uint16_t, 3>, NULL },
    { "vif_hstats_17", NULL, vif_hstats_thread<17> },
    { "vif_hstats_9", NULL, vif_hstats_thread<9> },
    { "vif_hstats_5", NULL, vif_hstats_thread<5> },
    { "vif_hstats_3", NULL, vif_hstats_thread<3> },
    { "vif_vlow_8_9", vif_vlow_thread<uint8_t, 9>, NULL },
    { "vif_vlow_16_9", vif_vlow_thread<uint16_t, 9>, NULL },
    { "vif_vlow_16_5", vif_vlow_thread<uint16_t, 5>, NULL },
    { "vif_vlow_16_3", vif_vlow_thread<uint16_t, 3>, NULL },
    { "vif_hlow_9", vif_hlow_thread<9>, NULL },
    { "vif_hlow_5", vif_hlow_thread<5>, NULL },
    { "vif_hlow_3", vif_hlow_thread<3>, NULL },
};

static const Kernel *find_kernel(const char *name)
{
    for (const Kernel &k : kernels)
        if (name && !strcmp(k.name, name)) return &k;
    return NULL;
}

/* One launch: grid (launch[0], launch[1]) of launch[2] threads. */
static void emulate(const Kernel &k, const VifArgs &a, const unsigned launch[3], bool backwards)
{
    const unsigned gx = launch[0], gy = launch[1], bd = launch[2];
    for (unsigned iy = 0; iy < gy; iy++) {
        const unsigned by = backwards ? gy - 1 - iy : iy;
        for (unsigned ix = 0; ix < gx; ix++) {
            const unsigned bx = backwards ? gx - 1 - ix : ix;
            uint64_t block[4] = { 0, 0, 0, 0 };
            for (unsigned it = 0; it < bd; it++) {
                const unsigned tx = backwards ? bd - 1 - it : it;
                if (k.element) {
                    k.element(a, bx, by, gy, tx, bd);
                } else {
                    VifSums s = { 0, 0, 0, 0 };
                    k.sums(a, bx, by, gy, tx, bd, &s);
                    /* block_sum(), unsigned as on the device */
                    block[0] += (uint64_t)s.num_log;
                    block[1] += (uint64_t)s.den_log;
                    block[2] += (uint64_t)s.num_non_log;
                    block[3] += (uint64_t)s.den_non_log;
                }
            }
            if (k.sums) /* thread 0's atomicAdd */
                for (int i = 0; i < 4; i++) a.sums[i] += block[i];
        }
    }
}

static bool same_value(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

/* The kernels on the fake driver (tests/cuda_fake_driver.h): each name runs
 * its element code through emulate(). */
static bool fake_backwards;

static void fake_vif_kernel(const FakeLaunch *l)
{
    const unsigned launch[3] = { l->grid[0], l->grid[1], l->block };
    emulate(*static_cast<const Kernel *>(l->user), *static_cast<const VifArgs *>(l->args), launch,
            fake_backwards);
}

static void register_fake_kernels()
{
    for (const Kernel &k : kernels) fake_kernel_with(k.name, fake_vif_kernel, &k);
}

extern "C" {
extern const CudaTwin cuda_twin_integer_vif;
}

static const size_t GUARD = 4096;

/* The frame through every launch of the twin; false if a launch names a
 * kernel that does not exist or its launch is impossible. */
static bool twin_sums(const VifPlan *plan, const VifState *s, std::vector<uint8_t> &memory,
                      const QualePicture *ref, const QualePicture *dist, bool backwards,
                      VifSums sums[VIF_SCALES])
{
    uint8_t *slot = memory.data();
    const size_t bytes = vif_cuda_slot(plan)->bytes;
    for (size_t i = 0; i < bytes + GUARD; i++) slot[i] = (uint8_t)rng();
    const uint64_t *dev_sums = (const uint64_t *)(slot + vif_cuda_slot(plan)->readback_offset);
    memset(slot + vif_cuda_slot(plan)->readback_offset, 0, 16 * sizeof(uint64_t)); /* enqueue's memset */
    std::vector<uint8_t> guard(slot + bytes, slot + bytes + GUARD);

    bool ok = true;
    const unsigned steps = vif_cuda_slot(plan)->steps;
    for (unsigned i = 0; i < steps && ok; i++) {
        VifArgs a;
        unsigned launch[3];
        const char *name = vif_cuda_step(plan, i, (uint64_t)(uintptr_t)slot,
                                         (uint64_t)(uintptr_t)s->log2_table,
                                         (uint64_t)(uintptr_t)ref->data[0],
                                         (uint64_t)(uintptr_t)dist->data[0],
                                         (uint64_t)ref->stride[0], launch, &a);
        const Kernel *k = find_kernel(name);
        /* hstats is compiled with __launch_bounds__(VIF_THREADS): no more */
        if (!k || launch[0] == 0 || launch[1] == 0 || launch[1] > 65535 || launch[2] % 32 ||
            launch[2] != VIF_THREADS) {
            fprintf(stderr, "  step %u: kernel %s, launch %u x %u x %u\n", i, name ? name : "(none)",
                    launch[0], launch[1], launch[2]);
            ok = false;
            break;
        }
        emulate(*k, a, launch, backwards);
    }
    if (vif_cuda_step(plan, steps, 0, 0, 0, 0, 0, NULL, NULL) != NULL) ok = false;
    if (memcmp(guard.data(), slot + bytes, GUARD) != 0) {
        fprintf(stderr, "  the kernels wrote past the slot\n");
        ok = false;
    }
    for (unsigned scale = 0; scale < VIF_SCALES; scale++) {
        const uint64_t *v = dev_sums + 4 * scale;
        sums[scale].num_log = (int64_t)v[0];
        sums[scale].den_log = (int64_t)v[1];
        sums[scale].num_non_log = (int64_t)v[2];
        sums[scale].den_non_log = (int64_t)v[3];
    }
    return ok;
}

static const char *const sum_names[] = { "num_log", "den_log", "num_non_log", "den_non_log" };

static void run_case(const Case &c, unsigned index)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    std::vector<QualePicture> refs(c.frames), dists(c.frames);
    for (unsigned f = 0; f < c.frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        fill_reference(&refs[f], c.pattern, f);
        fill_distorted(&dists[f], &refs[f], c.pattern, (Distortion)((c.distortion + f) % D_DISTORTIONS));
    }

    for (unsigned o = 0; o < OPTION_SETS; o++) {
        if (!(c.options & (1u << o))) continue;
        const char *spec = option_sets[o];
        char label[160];
        snprintf(label, sizeof(label), "case %u: %ux%u %u-bit %s/%s, %s", index, c.w, c.h,
                 c.bitdepth, pattern_names[c.pattern], distortion_names[c.distortion], spec);
        const unsigned failed_before = test_failed;

        QualeContext *ctx = NULL;
        const int run_err = cpu_run(&ctx, spec, refs, dists);
        CHECK(run_err == 0);
        QualeContext *declare_ctx = NULL;
        QualeSettings ds;
        quale_settings_default(&ds);
        ds.threads = 1;
        CHECK(quale_open(&declare_ctx, &ds) == 0);
        VifState *s =
            static_cast<VifState *>(make_state(&metric_integer_vif, spec, &format, declare_ctx));
        CHECK(s != NULL);
        void *scratch = NULL;
        CHECK(s && metric_integer_vif.scratch_alloc(s, &scratch) == 0);
        VifPlan *plan = s ? vif_cuda_plan_new(s) : NULL;
        CHECK(plan != NULL);
        if (run_err || !s || !scratch || !plan) {
            if (scratch) metric_integer_vif.scratch_free(scratch);
            if (plan) free(plan);
            free(s);
            quale_close(&declare_ctx);
            quale_close(&ctx);
            continue;
        }
        std::vector<uint8_t> memory(vif_cuda_slot(plan)->bytes + GUARD);
        const unsigned keys = quale_feature_count(ctx);
        CHECK(keys == (s->debug ? (unsigned)VIF_KEY_COUNT : 4u));

        for (unsigned f = 0; f < c.frames; f++) {
            VifSums ref_sums[VIF_SCALES], dev_sums[VIF_SCALES];
            MetricFrame mf = {};
            mf.ref = &refs[f];
            mf.dist = &dists[f];
            CHECK(vif_frame_sums(s, scratch, &mf, ref_sums) == 0);
            CHECK(twin_sums(plan, s, memory, &refs[f], &dists[f], f % 2 == 1, dev_sums));
            for (unsigned scale = 0; scale < VIF_SCALES; scale++) {
                const int64_t *a = &ref_sums[scale].num_log, *b = &dev_sums[scale].num_log;
                for (unsigned k = 0; k < 4; k++) {
                    if (a[k] == b[k]) {
                        CHECK(true);
                        continue;
                    }
                    CHECK(a[k] == b[k]);
                    fprintf(stderr, "  %s, frame %u, scale %u %s: twin %lld, reference %lld\n",
                            label, f, scale, sum_names[k], (long long)b[k], (long long)a[k]);
                }
            }

            double values[VIF_KEY_COUNT];
            const unsigned count = vif_values(s, dev_sums, values);
            CHECK(count == keys);
            for (unsigned k = 0; k < count && k < keys; k++) {
                const char *key = quale_feature_name(ctx, k);
                double cpu = NAN;
                CHECK(quale_feature_value(ctx, key, f, &cpu) == 0);
                if (same_value(cpu, values[k])) {
                    CHECK(true);
                    continue;
                }
                CHECK(same_value(cpu, values[k]));
                fprintf(stderr, "  %s, frame %u, %s: twin %.17g, CPU %.17g\n", label, f,
                        key ? key : "?", values[k], cpu);
            }
        }
        CHECK(plan_run_matches_cpu(cuda_twin_integer_vif, metric_integer_vif, s, refs, dists,
                                   context_sink(declare_ctx), ctx, label, &fake_backwards));
        printf("%s %s\n", test_failed == failed_before ? "ok  " : "FAIL", label);
        fflush(stdout);

        metric_integer_vif.scratch_free(scratch);
        free(plan);
        free(s);
        quale_close(&declare_ctx);
        quale_close(&ctx);
    }
    free_frames(refs, dists);
}

/* ---- the rest ------------------------------------------------------------- */

static void test_log2_table()
{
    std::vector<uint16_t> table(VIF_LOG2_TABLE_SIZE);
    vif_log2_table_fill(table.data());
    unsigned bad = 0;
    for (unsigned i = 0; i < VIF_LOG2_TABLE_SIZE; i++)
        if (table[i] != (uint16_t)std::round(log2f((float)(VIF_LOG2_BASE + i)) * 2048)) bad++;
    CHECK(bad == 0);
    /* the element code's log2: table lookups for v >= 2^17 */
    CHECK(vif_log2_32(table.data(), 1u << 17) == 17 * 2048);
    CHECK(vif_log2_64(table.data(), 1ull << 40) == 40 * 2048);
    CHECK(vif_log2_32(table.data(), 0xffffffffu) == table[VIF_LOG2_TABLE_SIZE - 1] + 16 * 2048);
}

/* Below 16x16 the CPU refuses, with vif_check_size()'s message; the
 * twin's init() calls the same function. */
static void test_refusal()
{
    static const unsigned sizes[][2] = { { 15, 16 }, { 16, 15 }, { 8, 8 }, { 1, 1 } };
    for (const auto &size : sizes) {
        const QualeVideoFormat format = { QUALE_CHROMA_444, 8, size[0], size[1] };
        std::vector<QualePicture> refs(1), dists(1);
        CHECK(quale_picture_alloc(&refs[0], &format) == 0);
        CHECK(quale_picture_alloc(&dists[0], &format) == 0);
        fill_reference(&refs[0], P_NOISE, 0);
        fill_distorted(&dists[0], &refs[0], P_NOISE, D_NOISE);
        QualeContext *ctx = NULL;
        CHECK(cpu_run(&ctx, "vif", refs, dists) != 0);
        char expected[256];
        CHECK(vif_check_size(size[0], size[1], expected, sizeof(expected)) == -EINVAL);
        bool found = false;
        for (const std::string &m : messages) found = found || m == expected;
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
    CHECK(vif_check_size(16, 16, error, sizeof(error)) == 0);
}

int main(int argc, char **argv)
{
    /* --quick: leave out the 1080p cases */
    const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    register_fake_kernels();
    test_log2_table();
    test_refusal();
    unsigned index = 0;
    for (const Case &c : fixed_cases) {
        if (!quick || c.w * c.h < 1000000) run_case(c, index);
        index++;
    }
    /* Random sizes, depths and contents. */
    for (unsigned i = 0; i < 24; i++) {
        Case c;
        c.w = 16 + rng() % 120;
        c.h = 16 + rng() % 90;
        static const unsigned depths[] = { 8, 8, 9, 10, 10, 12, 12, 16 };
        c.bitdepth = depths[rng() % 8];
        c.chroma = (c.w % 2 || c.h % 2) ? QUALE_CHROMA_444 : QUALE_CHROMA_420;
        c.pattern = (Pattern)(rng() % P_PATTERNS);
        if (c.pattern == P_WIDE && c.bitdepth == 8) c.pattern = P_NOISE;
        c.distortion = (Distortion)(rng() % D_DISTORTIONS);
        c.options = 1u << (rng() % OPTION_SETS);
        c.frames = 2;
        run_case(c, index++);
    }
    return test_summary();
}
