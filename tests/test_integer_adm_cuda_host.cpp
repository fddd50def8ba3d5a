/*
 * The CUDA twin of integer ADM, run on the CPU: no GPU needed.
 *
 * src/cuda/integer_adm.cu is included as C++ (src/cuda/cuda_host_compat.h
 * turns the CUDA qualifiers off and its __global__ wrappers are left out);
 * the twin's own host code (src/cuda/integer_adm_cuda.c, linked from the
 * library) gives the slot layout, every level's kernel arguments and the
 * launches.  Each launch is emulated here block by block and thread by
 * thread through the very functions the kernels call, the row kernels'
 * block sums and atomic adds by plain 64-bit additions (integers: the
 * order cannot matter).  Element kernels run their threads forwards on
 * even frames and backwards on odd ones, so that a thread reading what
 * another writes in the same launch would show.  The slot memory starts
 * as random bytes and has a guard zone after it.
 *
 * Against the C reference, on random frames of many sizes (33x33 to
 * 1920x1080, odd ones), bit depths 8 to 16 (samples above the bit depth
 * too), every chroma format and every option family:
 *   - the 36 integer sums of every frame equal adm_reference_sums() (the
 *     C reference's own loops) exactly;
 *   - every key from those sums through adm_scores() (what the twin's
 *     collect() calls) equals, bit for bit, what the CPU backend wrote
 *     through the public API;
 *   - the twin's plan run by the plan executor on a fake driver
 *     (tests/cuda_fake_driver.h: its kernels this emulation), frames in two
 *     slots: the keys its collect() writes are the CPU's, bit for bit.
 * Also the reciprocal table, and the size refusal message.
 * Prints "N passed, M failed".
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
#include "metrics/integer_adm/integer_adm.h"

#include "metrics/integer_adm/cuda/integer_adm.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x243f6a8885a308d3ull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"

/* ---- the twin's host code (src/cuda/integer_adm_cuda.c) ----------------- */

struct AdmPlan;
struct AdmStep {
    unsigned kernel, grid_x, grid_y, block;
};

extern "C" {
AdmPlan *adm_cuda_plan_new(const AdmState *s);
const CudaSlotLayout *adm_cuda_slot(const AdmPlan *p);
const char *adm_cuda_kernel_name(unsigned kernel);
void adm_cuda_level_args(const AdmPlan *p, uint64_t slot, uint64_t ref, uint64_t dist,
                         uint64_t pic_stride, int level, AdmArgs *a);
unsigned adm_cuda_steps(const AdmPlan *p, int level, AdmStep steps[4]);
}

/* ---- random pictures ------------------------------------------------------- */

enum Pattern { P_NOISE, P_TEXTURE, P_EXTREME, P_WIDE, P_FLAT, P_PATTERNS };
enum Distortion { D_NOISE, D_SHARPEN, D_RANDOM, D_SAME, D_CONTRAST, D_BLUR, D_DISTORTIONS };

static const char *const pattern_names[] = { "noise", "texture", "extreme", "wide", "flat" };
static const char *const distortion_names[] = { "noise", "sharpen", "random", "same", "contrast",
                                                "blur" };

static void fill_reference(QualePicture *p, Pattern pattern, unsigned frame)
{
    const unsigned max = (1u << p->format.bitdepth) - 1;
    for (unsigned y = 0; y < p->format.height; y++) {
        for (unsigned x = 0; x < p->format.width; x++) {
            unsigned v;
            switch (pattern) {
            case P_TEXTURE: {
                const unsigned stripe = ((x * 37 + y * 23 + frame * 11) % 64) * (max / 128);
                const unsigned grain = rng() % (max / 32 + 1);
                v = clip((long)(max / 4 + stripe + (x * y % 7) * (max / 64) + grain), max);
                break;
            }
            case P_EXTREME: v = (rng() & 1) ? max : 0; break;
            case P_WIDE: v = p->format.bitdepth > 8 ? rng() & 0xffff : rng() & 0xff; break;
            case P_FLAT: v = max / 3; break;
            default: v = rng() % (max + 1); break;
            }
            put(p, 0, x, y, v);
        }
    }
    for (unsigned plane = 1; plane < p->plane_count; plane++)
        for (unsigned y = 0; y < p->plane_height[plane]; y++)
            for (unsigned x = 0; x < p->plane_width[plane]; x++) put(p, plane, x, y, rng() & max);
}

static void fill_distorted(QualePicture *d, const QualePicture *r, Distortion distortion)
{
    const unsigned bd = r->format.bitdepth, w = r->format.width, h = r->format.height;
    const unsigned max = (1u << bd) - 1;
    const unsigned top = bd > 8 ? 0xffff : max; /* above the bit depth stays */
    for (unsigned y = 0; y < h; y++) {
        for (unsigned x = 0; x < w; x++) {
            const long c = (long)get(r, x, y);
            /* neighbours, mirrored (the picture itself where it is one sample wide) */
            const bool wide = w > 1, tall = h > 1;
            const long l = wide ? get(r, x ? x - 1 : 1, y) : c;
            const long rt = wide ? get(r, x + 1 < w ? x + 1 : w - 2, y) : c;
            const long u = tall ? get(r, x, y ? y - 1 : 1) : c;
            const long dn = tall ? get(r, x, y + 1 < h ? y + 1 : h - 2) : c;
            long v;
            switch (distortion) {
            case D_SHARPEN: v = c + (4 * c - l - rt - u - dn) / 3; break;
            case D_RANDOM: v = (long)(rng() % (max + 1)); break;
            case D_SAME: v = c; break;
            case D_CONTRAST: v = (long)(max / 2) + (c - (long)(max / 2)) * 9 / 8; break;
            case D_BLUR: v = (4 * c + l + rt + u + dn + 4) / 8; break;
            default: v = c + (long)(rng() % (max / 16 + 1)) - (long)(max / 32); break;
            }
            put(d, 0, x, y, clip(v, top));
        }
    }
    for (unsigned plane = 1; plane < d->plane_count; plane++)
        for (unsigned y = 0; y < d->plane_height[plane]; y++)
            for (unsigned x = 0; x < d->plane_width[plane]; x++) put(d, plane, x, y, rng() & max);
}

/* ---- cases ------------------------------------------------------------------ */

struct Case {
    unsigned w, h, bitdepth;
    QualeChroma chroma;
    Pattern pattern;
    Distortion distortion;
    const char *options; /* after "adm=" */
    unsigned frames;
};

static const char *const option_sets[] = {
    "",
    "adm_enhn_gain_limit=1",
    "debug=true",
    "adm_enhn_gain_limit=1.2:adm_skip_scale0=true",
    "adm_csf_mode=2",
    "adm_csf_mode=1:adm_csf_scale=50:adm_csf_diag_scale=0.3",
    "adm_csf_mode=3:adm_ref_display_height=2160:adm_norm_view_dist=1.5",
    "adm_noise_weight=0:adm_skip_aim=true:adm_min_val=0.5:adm_dlm_weight=0.25",
    "adm_norm_view_dist=4.2:adm_ref_display_height=1000",
    "adm_noise_weight=7.5:adm_csf_mode=1",
    "debug=true:adm_csf_mode=2:adm_ref_display_height=720:adm_norm_view_dist=5",
    "adm_csf_mode=3:adm_enhn_gain_limit=1:adm_skip_aim=true",
    "adm_csf_scale=0.5:adm_csf_diag_scale=2:adm_dlm_weight=1",
    "adm_skip_scale0=true:debug=true:adm_noise_weight=0",
};
enum { OPTION_SETS = sizeof(option_sets) / sizeof(option_sets[0]) };

static const Case fixed_cases[] = {
    { 33, 33, 8, QUALE_CHROMA_420, P_NOISE, D_NOISE, "", 2 },
    { 33, 33, 16, QUALE_CHROMA_444, P_WIDE, D_RANDOM, "", 2 },
    { 33, 33, 12, QUALE_CHROMA_400, P_EXTREME, D_CONTRAST, "adm_enhn_gain_limit=1", 2 },
    { 37, 41, 10, QUALE_CHROMA_420, P_TEXTURE, D_SHARPEN, "adm_enhn_gain_limit=1", 2 },
    { 37, 41, 12, QUALE_CHROMA_422, P_NOISE, D_NOISE, "debug=true", 2 },
    { 37, 41, 8, QUALE_CHROMA_444, P_TEXTURE, D_CONTRAST, "", 2 },
    { 176, 144, 8, QUALE_CHROMA_420, P_TEXTURE, D_SHARPEN, "", 2 },
    { 176, 144, 10, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, "adm_enhn_gain_limit=1", 2 },
    { 176, 144, 16, QUALE_CHROMA_444, P_WIDE, D_SHARPEN, "debug=true", 2 },
    { 177, 145, 12, QUALE_CHROMA_422, P_TEXTURE, D_BLUR, "adm_enhn_gain_limit=1.2:adm_skip_scale0=true", 2 },
    { 35, 97, 12, QUALE_CHROMA_420, P_EXTREME, D_RANDOM, "adm_csf_mode=2", 2 },
    { 99, 34, 16, QUALE_CHROMA_444, P_NOISE, D_NOISE, "adm_csf_mode=1:adm_csf_scale=50:adm_csf_diag_scale=0.3", 2 },
    { 161, 77, 8, QUALE_CHROMA_420, P_TEXTURE, D_SHARPEN, "adm_csf_mode=3:adm_ref_display_height=2160:adm_norm_view_dist=1.5", 2 },
    { 129, 34, 16, QUALE_CHROMA_400, P_TEXTURE, D_SHARPEN, "adm_norm_view_dist=4.2:adm_ref_display_height=1000", 1 },
    { 65, 47, 10, QUALE_CHROMA_420, P_WIDE, D_RANDOM, "adm_noise_weight=0:adm_skip_aim=true:adm_min_val=0.5:adm_dlm_weight=0.25", 2 },
    { 35, 40, 8, QUALE_CHROMA_444, P_TEXTURE, D_SHARPEN, "adm_noise_weight=7.5:adm_csf_mode=1", 1 },
    { 40, 40, 8, QUALE_CHROMA_420, P_FLAT, D_NOISE, "adm_noise_weight=0", 1 },
    { 40, 40, 10, QUALE_CHROMA_420, P_FLAT, D_SAME, "", 1 },
    { 1920, 1080, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, "", 2 },
    { 1920, 1080, 10, QUALE_CHROMA_420, P_TEXTURE, D_SHARPEN, "adm_enhn_gain_limit=1", 1 },
    { 1920, 1080, 12, QUALE_CHROMA_444, P_NOISE, D_CONTRAST, "debug=true", 1 },
    { 1920, 1080, 16, QUALE_CHROMA_400, P_WIDE, D_BLUR, "adm_enhn_gain_limit=1.2", 1 },
    { 1281, 719, 8, QUALE_CHROMA_420, P_TEXTURE, D_BLUR, "adm_csf_mode=3", 1 },
};

/* ---- the twin on the CPU ------------------------------------------------------ */

template <typename F>
static void each_thread(const AdmStep &st, bool backwards, F f)
{
    for (unsigned y = 0; y < st.grid_y; y++) {
        for (unsigned n = 0; n < st.grid_x; n++) {
            const unsigned bx = backwards ? st.grid_x - 1 - n : n;
            for (unsigned t = 0; t < st.block; t++) f(bx, y, backwards ? st.block - 1 - t : t);
        }
    }
}

template <bool LEVEL0>
static void row_sums(const AdmArgs &a, const AdmStep &st, bool masked)
{
    for (unsigned y = 0; y < st.grid_y; y++) {
        for (unsigned bx = 0; bx < st.grid_x; bx++) {
            uint64_t block[3] = { 0, 0, 0 };
            for (unsigned t = 0; t < st.block; t++) {
                uint64_t sum[3] = { 0, 0, 0 };
                if (masked)
                    adm_masked_thread<LEVEL0>(a, bx, y, t, st.block, sum);
                else
                    adm_den_thread<LEVEL0>(a, bx, t, st.block, sum);
                for (int b = 0; b < 3; b++) block[b] += sum[b];
            }
            for (int b = 0; b < 3; b++) {
                if (masked)
                    a.acc[3 + 3 * y + b] += adm_masked_row_finish(a, block[b]);
                else
                    a.acc[b] += adm_den_row_finish(a, block[b]);
            }
        }
    }
}

/* One launch, as the device runs it. */
static bool emulate(const AdmArgs &a, const AdmStep &st, bool backwards)
{
    const std::string k = adm_cuda_kernel_name(st.kernel) ? adm_cuda_kernel_name(st.kernel) : "";
    if (k == "adm_dwt0_8bit")
        each_thread(st, backwards, [&](unsigned b, unsigned y, unsigned t) {
            adm_dwt0_thread<uint8_t>(a, b, y, t, st.block);
        });
    else if (k == "adm_dwt0_16bit")
        each_thread(st, backwards, [&](unsigned b, unsigned y, unsigned t) {
            adm_dwt0_thread<uint16_t>(a, b, y, t, st.block);
        });
    else if (k == "adm_dwt123")
        each_thread(st, backwards,
                    [&](unsigned b, unsigned y, unsigned t) { adm_dwt123_thread(a, b, y, t, st.block); });
    else if (k == "adm_decouple0")
        each_thread(st, backwards, [&](unsigned b, unsigned, unsigned t) {
            adm_decouple_thread<true>(a, b, t, st.block);
        });
    else if (k == "adm_decouple123")
        each_thread(st, backwards, [&](unsigned b, unsigned, unsigned t) {
            adm_decouple_thread<false>(a, b, t, st.block);
        });
    else if (k == "adm_den0")
        row_sums<true>(a, st, false);
    else if (k == "adm_den123")
        row_sums<false>(a, st, false);
    else if (k == "adm_masked0")
        row_sums<true>(a, st, true);
    else if (k == "adm_masked123")
        row_sums<false>(a, st, true);
    else
        return false;
    /* the shapes the kernels assume */
    return st.block % 32 == 0 && st.block <= 1024 && st.grid_x > 0 && st.grid_y > 0 &&
           st.grid_y <= 65535;
}

/* The kernels on the fake driver (tests/cuda_fake_driver.h): each name runs
 * its element code through emulate(). */
static bool fake_backwards;
static unsigned fake_kernel_index[16];

static void fake_adm_kernel(const FakeLaunch *l)
{
    const AdmStep st = { *static_cast<const unsigned *>(l->user), l->grid[0], l->grid[1],
                         l->block };
    CHECK(l->grid[2] == 1 && emulate(*static_cast<const AdmArgs *>(l->args), st, fake_backwards));
}

static void register_fake_kernels()
{
    for (unsigned k = 0; k < 16 && adm_cuda_kernel_name(k); k++) {
        fake_kernel_index[k] = k;
        fake_kernel_with(adm_cuda_kernel_name(k), fake_adm_kernel, &fake_kernel_index[k]);
    }
}

extern "C" {
extern const CudaTwin cuda_twin_integer_adm;
}

enum { GUARD = 1 << 16 };

/* The twin's sums of one frame, in the slot memory `slot`. */
static bool twin_sums(const AdmPlan *plan, uint8_t *slot, const QualePicture *ref,
                      const QualePicture *dist, bool backwards, uint64_t sums[ADM_SUMS])
{
    bool ok = true;
    uint64_t *acc = reinterpret_cast<uint64_t *>(slot + adm_cuda_slot(plan)->readback_offset);
    memset(acc, 0, ADM_SUMS * sizeof(uint64_t)); /* the enqueue's memset */
    for (int level = 0; level < ADM_SCALES; level++) {
        AdmArgs a;
        adm_cuda_level_args(plan, (uint64_t)(uintptr_t)slot, (uint64_t)(uintptr_t)ref->data[0],
                            (uint64_t)(uintptr_t)dist->data[0], (uint64_t)ref->stride[0], level, &a);
        AdmStep steps[4];
        const unsigned n = adm_cuda_steps(plan, level, steps);
        for (unsigned i = 0; i < n; i++) ok = emulate(a, steps[i], backwards) && ok;
    }
    memcpy(sums, acc, ADM_SUMS * sizeof(uint64_t));
    return ok;
}

/* ---- comparing ------------------------------------------------------------------- */

static bool same_value(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || memcmp(&a, &b, sizeof(a)) == 0;
}

static unsigned case_failures;
static const char *const sum_names[] = { "den", "num", "aim" };

static void run_case(const Case &c, unsigned index)
{
    const unsigned failed_before = test_failed;
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    const std::string spec = std::string("adm") + (c.options[0] ? "=" : "") + c.options;
    std::vector<QualePicture> refs(c.frames), dists(c.frames);
    for (unsigned f = 0; f < c.frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        fill_reference(&refs[f], c.pattern, f);
        fill_distorted(&dists[f], &refs[f], c.distortion);
    }

    QualeContext *cpu = NULL, *aux = NULL;
    const int err = cpu_run(&cpu, spec.c_str(), refs, dists);
    if (err)
        fprintf(stderr, "  case %u (%s): CPU error %d %s\n", index, spec.c_str(), err,
                messages.empty() ? "" : messages[0].c_str());
    CHECK(err == 0);

    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = 1;
    CHECK(quale_open(&aux, &settings) == 0);
    AdmState *s =
        aux ? static_cast<AdmState *>(make_state(&metric_integer_adm, spec.c_str(), &format, aux))
            : NULL;
    CHECK(s != NULL);
    AdmPlan *plan = s ? adm_cuda_plan_new(s) : NULL;
    CHECK(plan != NULL);
    if (err || !s || !plan) goto done;
    {
        const size_t bytes = adm_cuda_slot(plan)->bytes;
        std::vector<uint8_t> memory(bytes + GUARD + 256);
        uint8_t *slot = memory.data() + (256 - (uintptr_t)memory.data() % 256) % 256;
        for (size_t i = 0; i < bytes; i++) slot[i] = (uint8_t)rng(); /* uninitialised device memory */
        memset(slot + bytes, 0xa5, GUARD);

        const unsigned keys = s->debug ? ADM_KEY_COUNT : ADM_KEY_MAIN_COUNT;
        for (unsigned f = 0; f < c.frames; f++) {
            uint64_t reference[ADM_SUMS], twin[ADM_SUMS];
            CHECK(adm_reference_sums(s, &refs[f], &dists[f], reference) == 0);
            CHECK(twin_sums(plan, slot, &refs[f], &dists[f], f % 2 == 1, twin));
            for (int i = 0; i < ADM_SUMS; i++) {
                if (reference[i] != twin[i])
                    fprintf(stderr, "  case %u (%ux%u %u-bit %s), frame %u: sum %d (level %d, %s %c) "
                            "%llu, C reference %llu\n", index, c.w, c.h, c.bitdepth, spec.c_str(), f,
                            i, i / ADM_LEVEL_SUMS, sum_names[i % ADM_LEVEL_SUMS / 3],
                            "hvd"[i % 3], (unsigned long long)twin[i], (unsigned long long)reference[i]);
                CHECK(reference[i] == twin[i]);
            }

            float num[ADM_SCALES], aim[ADM_SCALES], den[ADM_SCALES];
            double values[ADM_KEY_COUNT];
            adm_scores(s, twin, num, aim, den);
            adm_frame_values(s, num, aim, den, values);
            for (unsigned k = 0; k < keys; k++) {
                char name[256];
                CHECK(option_key_name(metric_integer_adm.options, s, metric_integer_adm.keys[k], name,
                                      sizeof(name)) == 0);
                double cpu_value = -1;
                const bool found = quale_feature_value(cpu, name, f, &cpu_value) == 0;
                const bool ok = found && same_value(values[k], cpu_value);
                if (!ok)
                    fprintf(stderr, "  case %u (%ux%u %u-bit %s), frame %u: %s %a, CPU %a%s\n", index,
                            c.w, c.h, c.bitdepth, spec.c_str(), f, name, values[k], cpu_value,
                            found ? "" : " (missing)");
                CHECK(ok);
            }
            /* and no other key */
            CHECK(quale_feature_count(cpu) == keys);
        }
        bool guard = true;
        for (size_t i = 0; i < GUARD; i++) guard = guard && slot[bytes + i] == 0xa5;
        CHECK(guard);
        char label[160];
        snprintf(label, sizeof(label), "case %u (%ux%u %u-bit %s)", index, c.w, c.h, c.bitdepth,
                 spec.c_str());
        CHECK(plan_run_matches_cpu(cuda_twin_integer_adm, metric_integer_adm, s, refs, dists,
                                   context_sink(aux), cpu, label, &fake_backwards));
    }
done:
    if (test_failed != failed_before) {
        case_failures++;
        fprintf(stderr, "  case %u failed: %ux%u %u-bit %s, %s / %s\n", index, c.w, c.h, c.bitdepth,
                spec.c_str(), pattern_names[c.pattern], distortion_names[c.distortion]);
    }
    free(plan);
    free(s);
    quale_close(&cpu);
    quale_close(&aux);
    free_frames(refs, dists);
}

/* ---- the rest ------------------------------------------------------------------------ */

static void test_reciprocal()
{
    QualeContext *aux = NULL;
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = 1;
    CHECK(quale_open(&aux, &settings) == 0);
    const QualeVideoFormat format = { QUALE_CHROMA_420, 8, 64, 64 };
    AdmState *s = static_cast<AdmState *>(make_state(&metric_integer_adm, "adm", &format, aux));
    CHECK(s != NULL);
    if (s) {
        bool same = true;
        for (int i = -32768; i <= 32768; i++) same = same && adm_reciprocal(i) == s->div_lookup[32768 + i];
        CHECK(same);
    }
    free(s);
    quale_close(&aux);
}

static void test_too_small()
{
    const unsigned sizes[][2] = { { 32, 33 }, { 33, 32 }, { 1, 1 }, { 20, 300 }, { 300, 20 } };
    for (const auto &size : sizes) {
        const QualeVideoFormat format = { QUALE_CHROMA_420, 10, size[0], size[1] };
        std::vector<QualePicture> refs(1), dists(1);
        CHECK(quale_picture_alloc(&refs[0], &format) == 0);
        CHECK(quale_picture_alloc(&dists[0], &format) == 0);
        fill_reference(&refs[0], P_NOISE, 0);
        fill_distorted(&dists[0], &refs[0], D_NOISE);
        QualeContext *cpu = NULL;
        CHECK(cpu_run(&cpu, "adm", refs, dists) != 0);
        char message[256];
        /* the twin's init refuses with the same check and message */
        CHECK(adm_check_size(size[0], size[1], message, sizeof(message)) == -EINVAL);
        const char *said = messages.empty() ? "" : messages[0].c_str();
        if (strcmp(said, message))
            fprintf(stderr, "  %ux%u: CPU said \"%s\", the twin would say \"%s\"\n", size[0], size[1],
                    said, message);
        CHECK_STR(said, message);
        quale_close(&cpu);
        quale_picture_unref(&refs[0]);
        quale_picture_unref(&dists[0]);
    }
    char message[256];
    CHECK(adm_check_size(33, 33, message, sizeof(message)) == 0);
}

int main(int argc, char **argv)
{
    register_fake_kernels();
    /* --quick: the fixed cases below 1920x1080 only */
    const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    test_reciprocal();
    test_too_small();

    unsigned index = 0, cases = 0;
    for (const Case &c : fixed_cases) {
        if (!(quick && c.w >= 1280)) {
            run_case(c, index);
            cases++;
        }
        index++;
    }
    /* a random sweep over sizes, depths, formats, contents and options */
    const unsigned random_cases = quick ? 20 : 80;
    for (unsigned n = 0; n < random_cases; n++, index++) {
        static const unsigned depths[] = { 8, 9, 10, 12, 14, 16 };
        static const QualeChroma chromas[] = { QUALE_CHROMA_400, QUALE_CHROMA_420, QUALE_CHROMA_422,
                                               QUALE_CHROMA_444 };
        Case c;
        c.w = 33 + rng() % (n % 4 == 0 ? 400 : 100);
        c.h = 33 + rng() % (n % 4 == 1 ? 400 : 100);
        c.bitdepth = depths[rng() % 6];
        c.chroma = chromas[rng() % 4];
        c.pattern = (Pattern)(rng() % P_PATTERNS);
        c.distortion = (Distortion)(rng() % D_DISTORTIONS);
        c.options = option_sets[rng() % OPTION_SETS];
        c.frames = 2;
        run_case(c, index);
        cases++;
    }
    printf("%u cases, %u failed\n", cases, case_failures);
    return test_summary();
}
