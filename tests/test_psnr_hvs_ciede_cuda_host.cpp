/*
 * The CUDA twins of PSNR-HVS and CIEDE2000, run on the CPU: no GPU needed.
 *
 * src/cuda/psnr_hvs.cu and src/cuda/ciede.cu are included as C++
 * (src/cuda/cuda_host_compat.h turns the CUDA qualifiers off and their
 * __global__ wrappers are left out); the twins' own host code
 * (src/cuda/psnr_hvs_cuda.c, src/cuda/ciede_cuda.c, linked from the
 * library) gives the slot layout and every launch of a frame: kernel, grid
 * and arguments, exactly what their enqueue() launches.  Each launch is
 * emulated here block by block and thread by thread through the very
 * functions the kernels call:
 *   - hvs_terms, hvs_cand: one element call per thread, forwards on even
 *     frames and backwards on odd ones;
 *   - hvs_prefix: the block sums' exclusive prefix, added in order (the
 *     device adds them in a tree; they are estimates, nothing but speed
 *     depends on them, and the test also runs the walk with estimates
 *     scaled, zeroed and garbage: the sums must not move a bit);
 *   - hvs_walk: the kernel's control flow (tile, run, first block position
 *     that leaves the binade, term-by-term addition) with the block-wide
 *     scan done in thread order (the composition is associative: the
 *     device's tree gives the same runs);
 *   - ciede_rows: every thread's element call, and block_sum()'s shuffle
 *     tree reproduced addition for addition.
 * The slot memory starts as random bytes and has a guard zone after it.
 *
 * Against the C reference on random frames (the smallest sizes it
 * accepts, odd sizes, 176x144, 1920x1080; 8 to 12 bits for PSNR-HVS, 8 to
 * 16 for CIEDE2000, samples above the bit depth too; 4:2:0, 4:2:2, 4:4:4):
 *   - PSNR-HVS: each plane's float sum equals psnr_hvs_frame_sums() (the C
 *     reference's loops) bit for bit, and the keys from it through
 *     psnr_hvs_values() (what collect() writes through psnr_hvs_write())
 *     equal what the CPU backend wrote through the public API;
 *   - CIEDE2000: the sum against ciede_frame_sum(), and the key through
 *     ciede_value() against the CPU backend's, within tests/tolerance.json
 *     (reported: the worst difference per key).
 * Also the exact float sum alone, on term sequences made to be hard (ties,
 * subnormals, overflow to infinity, every magnitude), and the refusal
 * messages.  PSNR-HVS's plan also runs through the plan executor on a fake
 * driver (tests/cuda_plan_run.h), key by key against the CPU.  Prints
 * "N passed, M failed".
 *
 * Neither twin calls the device's maths library: CIEDE2000's elementary
 * functions are quale's own (src/metrics/ciede_tmpl.h) and PSNR-HVS uses
 * only IEEE +, -, *, /, the correctly rounded double sqrt, floor, ldexp,
 * frexp, so what runs here is what the device computes, to the bit.  What
 * this cannot show is the device's block scans, atomics and barriers (only
 * their contract, which the emulation follows).
 */
#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fnmatch.h>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "context.h"
#include "json.h"
#include "metric.h"
#include "quale/quale.h"
}
#include "metrics/ciede/ciede.h"
#include "metrics/psnr_hvs/psnr_hvs.h"

#include "metrics/ciede/cuda/ciede.cu"
#include "metrics/psnr_hvs/cuda/psnr_hvs.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x3c6ef372fe94f82bull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"

/* tests/tolerance.json: under QUALE_SOURCE_DIR if the build says where the
 * sources are, else next to this file as the compiler was given it (meson
 * names it relative to the build directory, where tests run). */
static std::string default_tolerance_path()
{
#ifdef QUALE_SOURCE_DIR
    return QUALE_SOURCE_DIR "/tests/tolerance.json";
#else
    const std::string self = __FILE__;
    const size_t slash = self.find_last_of('/');
    return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) +
           "/tolerance.json";
#endif
}

/* ---- the twins' host code (src/cuda/psnr_hvs_cuda.c, ciede_cuda.c) ------- */

struct HvsPlan;
struct CiedePlan;

extern "C" {
HvsPlan *hvs_cuda_plan_new(const QualeVideoFormat *format);
const CudaSlotLayout *hvs_cuda_slot(const HvsPlan *p);
void hvs_cuda_counts(const HvsPlan *p, uint64_t count[3]);
void hvs_cuda_tables(const PsnrHvsState *s, float *tables);
const char *hvs_cuda_step(const HvsPlan *p, unsigned i, uint64_t slot, uint64_t tables,
                          const uint64_t ref[3], const uint64_t dist[3], const uint64_t stride[3],
                          unsigned launch[3], void *args);

CiedePlan *ciede_cuda_plan_new(const CiedeState *s, const QualeVideoFormat *format);
unsigned ciede_cuda_partial_count(const CiedePlan *p);
double ciede_cuda_sum(const CiedePlan *p, const double *partials);
const char *ciede_cuda_launch(const CiedePlan *p, uint64_t partials, uint64_t chroma_col,
                              uint64_t chroma_row, uint64_t linear, uint64_t colours,
                              const uint64_t ref[3], const uint64_t dist[3],
                              const uint64_t stride[3], unsigned launch[3], void *args);
unsigned ciede_cuda_table_bits(const CiedePlan *p);
unsigned ciede_cuda_colour_bits(const CiedePlan *p);
}

static uint64_t addr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* ---- the tolerance table ---------------------------------------------------- */

struct Rule {
    std::string pattern;
    double abs;
};
static std::vector<Rule> rules;

static bool load_tolerances(const char *path)
{
    char *text = NULL, error[256] = "";
    size_t length = 0;
    if (json_read_file(path, 1 << 20, &text, &length, error, sizeof(error))) {
        fprintf(stderr, "  %s: %s\n", path, error);
        return false;
    }
    JsonDocument *doc = NULL;
    const bool parsed = json_parse(&doc, text, length, NULL, NULL) == 0;
    free(text);
    if (!parsed) return false;
    const JsonValue *list = json_object_get(json_document_root(doc), "rules");
    for (size_t i = 0; list && list->type == JSON_ARRAY && i < list->u.array.count; i++) {
        const JsonValue *r = &list->u.array.items[i];
        const JsonValue *pattern = json_object_get(r, "pattern"), *abs = json_object_get(r, "abs");
        if (pattern && pattern->type == JSON_STRING && abs && abs->type == JSON_NUMBER)
            rules.push_back({ pattern->u.string.chars, abs->u.number.value });
    }
    json_document_free(&doc);
    return !rules.empty();
}

static double tolerance(const char *key)
{
    for (const Rule &r : rules)
        if (fnmatch(r.pattern.c_str(), key, 0) == 0) return r.abs;
    return 0.;
}

/* The worst difference seen per key. */
struct Worst {
    std::string key;
    double diff;
    std::string where;
};
static std::vector<Worst> worst;

static void compare_key(const char *key, double twin, double cpu, const char *label, unsigned f)
{
    const double diff = twin == cpu ? 0. : fabs(twin - cpu); /* inf == inf */
    const double tol = tolerance(key);
    const bool ok = diff <= tol; /* NaN fails */
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  %s, frame %u, %s: twin %.17g, CPU %.17g (tolerance %g)\n", label, f,
                key, twin, cpu, tol);
    Worst *w = NULL;
    for (Worst &x : worst)
        if (x.key == key) w = &x;
    if (!w) {
        worst.push_back({ key, -1., "" });
        w = &worst.back();
    }
    if (!(diff <= w->diff)) {
        w->diff = diff;
        char where[200];
        snprintf(where, sizeof(where), "%s, frame %u", label, f);
        w->where = where;
    }
}

/* ---- random pictures ------------------------------------------------------- */

enum Pattern { P_NOISE, P_TEXTURE, P_EXTREME, P_FLAT, P_NEUTRAL, P_WIDE, P_PATTERNS };
enum Distortion { D_NOISE, D_BLUR, D_SAME, D_RANDOM, D_SPARSE, D_CHROMA, D_DISTORTIONS };

static const char *const pattern_names[] = { "noise", "texture", "extreme", "flat", "neutral",
                                             "wide" };
static const char *const distortion_names[] = { "noise", "blur", "same", "random", "sparse",
                                                "chroma" };


/* The largest sample: the bit depth's, or 16 bits for the samples above
 * it that the API does not forbid (P_WIDE). */
static unsigned pattern_max(const QualePicture *p, Pattern pattern)
{
    return pattern == P_WIDE && p->format.bitdepth > 8 ? 65535u : (1u << p->format.bitdepth) - 1;
}

static void fill_reference(QualePicture *p, Pattern pattern, unsigned frame)
{
    const unsigned max = pattern_max(p, pattern);
    const unsigned mid = 1u << (p->format.bitdepth - 1);
    for (unsigned plane = 0; plane < p->plane_count; plane++) {
        const unsigned flat = rng() % (max + 1);
        for (unsigned y = 0; y < p->plane_height[plane]; y++) {
            for (unsigned x = 0; x < p->plane_width[plane]; x++) {
                unsigned v;
                switch (pattern) {
                case P_TEXTURE: {
                    /* 8x8 blocks: flat, gradient or noisy */
                    const unsigned kind = ((x / 8) * 7 + (y / 8) * 3 + frame + plane) % 3;
                    const unsigned base = ((x / 8) * 37 + (y / 8) * 91 + plane * 50) % (max + 1);
                    v = kind == 0 ? base
                        : kind == 1 ? (base + x * (max / 64 + 1) + y) % (max + 1)
                                    : clip((long)base + (long)(rng() % (max / 4 + 1)) - (long)(max / 8), max);
                    break;
                }
                case P_EXTREME: v = (rng() & 1) ? max : 0; break;
                case P_FLAT: v = flat; break;
                case P_NEUTRAL: v = plane ? mid : rng() % (max + 1); break;
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
    for (unsigned plane = 0; plane < d->plane_count; plane++) {
        const unsigned w = r->plane_width[plane], h = r->plane_height[plane];
        for (unsigned y = 0; y < h; y++) {
            for (unsigned x = 0; x < w; x++) {
                const long v = get(r, plane, x, y);
                long out;
                switch (distortion) {
                case D_BLUR: {
                    const long l = get(r, plane, x > 0 ? x - 1 : x, y);
                    const long rr = get(r, plane, x + 1 < w ? x + 1 : x, y);
                    const long u = get(r, plane, x, y > 0 ? y - 1 : y);
                    const long dd = get(r, plane, x, y + 1 < h ? y + 1 : y);
                    out = (l + rr + u + dd + 4 * v + 4) / 8;
                    break;
                }
                case D_SAME: out = v; break;
                case D_RANDOM: out = rng() % (max + 1); break;
                case D_SPARSE: out = rng() % 29 == 0 ? v + (long)(rng() % 7) - 3 : v; break;
                case D_CHROMA:
                    /* hue turns: chroma moves, luma stays */
                    out = plane == 0 ? v : (long)(max - v) + (long)(rng() % 5) - 2;
                    break;
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

static double cpu_value(QualeContext *ctx, const char *key, unsigned frame)
{
    double v = NAN;
    CHECK(quale_feature_value(ctx, key, frame, &v) == 0);
    return v;
}

/* ---- PSNR-HVS: the walk and the launches ---------------------------------------- */

/* What the walk did, per kind of estimate (E_EXACT: as the device's). */
struct WalkStats {
    unsigned long long planes, tiles, runs, changes, misses;
};
static WalkStats walk_stats[4];
static WalkStats *stats = &walk_stats[0];

/* hvs_walk of plane p: the kernel's control flow, the block-wide scan in
 * thread order, atomicMin as the first thread that leaves the binade. */
static float emulate_walk(const HvsArgs &a, unsigned p)
{
    const unsigned n = a.blocks[p];
    std::vector<uint32_t> after(HVS_WALK_THREADS);
    float s = 0.f;
    stats->planes++;
    for (unsigned tile = 0; tile < n; tile += HVS_WALK_THREADS) {
        stats->tiles++;
        const unsigned count = std::min(n - tile, (unsigned)HVS_WALK_THREADS);
        unsigned start = 0;
        while (start < count) {
            stats->runs++;
            const int e = hvs_binade(s);
            const uint32_t units = hvs_units(s, e);
            HvsPair run = hvs_pair_identity();
            unsigned first_out = count;
            for (unsigned t = 0; t < HVS_WALK_THREADS; t++) {
                const bool mine = t >= start && t < count;
                const unsigned g = a.base[p] + tile + t;
                HvsPair own = hvs_pair_identity();
                if (mine) {
                    const HvsCand &c = a.cand[g];
                    const int j = e - c.e;
                    const bool first = t == start;
                    if (e < 255 && ((j < 0 && first) || j >= HVS_CANDIDATES)) stats->misses++;
                    own = hvs_walk_pair(c, a.terms + (size_t)g * 64, e, first);
                }
                run = hvs_compose(run, own);
                after[t] = hvs_after(units, run);
                if (mine && after[t] >= HVS_LIMIT) first_out = std::min(first_out, t);
            }
            const unsigned f = first_out;
            if (f > start) s = hvs_from_units(e, after[f - 1]);
            if (f < count) {
                stats->changes++;
                s = hvs_add_terms(s, a.terms + (size_t)(a.base[p] + tile + f) * 64);
                start = f + 1;
            } else {
                start = count;
            }
        }
    }
    return s;
}

/* How the estimates are spoiled before hvs_cand: they must change nothing. */
enum Estimate { E_EXACT, E_SCALED, E_ZERO, E_GARBAGE, E_MODES };
static const char *const estimate_names[] = { "estimates", "scaled estimates", "zero estimates",
                                              "garbage estimates" };

static const size_t GUARD = 4096;

/* One launch of the PSNR-HVS kernels, as the device runs it: step i of
 * `steps`, kernel `name`, gx blocks of bd threads; `estimate` spoils the
 * prefix pass's estimates as the walk must survive. */
static bool emulate_hvs_step(const char *name, HvsArgs &a, unsigned gx, unsigned bd, unsigned i,
                             unsigned steps, bool hbd, bool backwards, Estimate estimate)
{
    bool ok = true;
    const bool element = !strcmp(name, "hvs_terms_8") || !strcmp(name, "hvs_terms_16") ||
                          !strcmp(name, "hvs_cand");
    if (element) {
        if (bd != HVS_THREADS || (uint64_t)gx * bd < a.total) ok = false;
        for (uint64_t k = 0; k < (uint64_t)gx * bd; k++) {
            const unsigned g = (unsigned)(backwards ? (uint64_t)gx * bd - 1 - k : k);
            if (g >= a.total) continue;
            if (!strcmp(name, "hvs_terms_8"))
                hvs_terms_at<false>(a, g);
            else if (!strcmp(name, "hvs_terms_16"))
                hvs_terms_at<true>(a, g);
            else
                hvs_cand_at(a, g);
        }
        if (i == 0 && !strcmp(name, "hvs_terms_16") != hbd) ok = false;
    } else if (!strcmp(name, "hvs_prefix")) {
        if (gx != 3 || bd != HVS_WALK_THREADS) ok = false;
        for (unsigned p = 0; p < 3; p++) {
            double carry = 0.;
            for (unsigned i2 = 0; i2 < a.blocks[p]; i2++) {
                double *v = &a.prefix[a.base[p] + i2];
                const double x = *v;
                *v = carry;
                carry += x;
            }
        }
        for (unsigned g = 0; g < a.total; g++) {
            switch (estimate) {
            case E_SCALED: a.prefix[g] *= 0.25 + (rng() % 1000) * 0.00375; break;
            case E_ZERO: a.prefix[g] = 0.; break;
            case E_GARBAGE: {
                static const double junk[] = { NAN, INFINITY, -1e30, -1., 1e300, 3e-320 };
                a.prefix[g] = junk[rng() % 6];
                break;
            }
            default: break;
            }
        }
    } else if (!strcmp(name, "hvs_walk")) {
        if (gx != 3 || bd != HVS_WALK_THREADS || i + 1 != steps) ok = false;
        stats = &walk_stats[estimate];
        for (unsigned p = 0; p < 3; p++) a.sums[p] = emulate_walk(a, p);
    } else {
        fprintf(stderr, "  step %u: unknown kernel %s\n", i, name);
        ok = false;
    }
    return ok;
}

/* The kernels on the fake driver (tests/cuda_fake_driver.h): each name runs
 * as emulate_hvs_step() runs it (the order of the steps is the plan's). */
static bool fake_backwards;

static void fake_hvs_kernel(const FakeLaunch *l)
{
    const char *name = static_cast<const char *>(l->user);
    HvsArgs a;
    memcpy(&a, l->args, sizeof(a));
    CHECK(l->grid[1] == 1 && l->grid[2] == 1 &&
          emulate_hvs_step(name, a, l->grid[0], l->block, 0, 1, !strcmp(name, "hvs_terms_16"),
                           fake_backwards, E_EXACT));
}

static void register_fake_kernels()
{
    static const char *const names[] = { "hvs_terms_8", "hvs_terms_16", "hvs_cand", "hvs_prefix",
                                         "hvs_walk" };
    for (const char *name : names) fake_kernel_with(name, fake_hvs_kernel, name);
}

extern "C" {
extern const CudaTwin cuda_twin_psnr_hvs;
}

/* The frame through every launch of the twin: the three sums. */
static bool hvs_twin_sums(const HvsPlan *plan, const float *tables, std::vector<uint8_t> &memory,
                          const QualePicture *ref, const QualePicture *dist, bool backwards,
                          Estimate estimate, float sums[3])
{
    uint8_t *slot = memory.data();
    const size_t bytes = hvs_cuda_slot(plan)->bytes;
    for (size_t i = 0; i < bytes + GUARD; i++) slot[i] = (uint8_t)rng();
    std::vector<uint8_t> guard(slot + bytes, slot + bytes + GUARD);
    uint64_t r[3], d[3], stride[3];
    for (unsigned k = 0; k < 3; k++) {
        r[k] = addr(ref->data[k]);
        d[k] = addr(dist->data[k]);
        stride[k] = (uint64_t)ref->stride[k];
    }
    bool ok = true;
    const unsigned steps = hvs_cuda_slot(plan)->steps;
    for (unsigned i = 0; i < steps && ok; i++) {
        HvsArgs a;
        unsigned launch[3];
        const char *name = hvs_cuda_step(plan, i, addr(slot), addr(tables), r, d, stride, launch, &a);
        const unsigned gx = launch[0], bd = launch[2];
        if (!name || launch[1] != 1 || gx == 0 || bd % 32 || bd > 1024) {
            fprintf(stderr, "  step %u: kernel %s, launch %u x %u x %u\n", i, name ? name : "(none)",
                    launch[0], launch[1], launch[2]);
            ok = false;
            break;
        }
        ok = emulate_hvs_step(name, a, gx, bd, i, steps, ref->format.bitdepth > 8, backwards,
                              estimate);
    }
    {
        HvsArgs a;
        unsigned launch[3];
        if (hvs_cuda_step(plan, steps, 0, 0, r, d, stride, launch, &a) != NULL) ok = false;
    }
    if (memcmp(guard.data(), slot + bytes, GUARD) != 0) {
        fprintf(stderr, "  the kernels wrote past the slot\n");
        ok = false;
    }
    memcpy(sums, slot + hvs_cuda_slot(plan)->readback_offset, 3 * sizeof(float));
    return ok;
}

static bool same_float(float a, float b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

struct Case {
    unsigned w, h, bitdepth;
    QualeChroma chroma;
    Pattern pattern;
    Distortion distortion;
    unsigned frames;
};

static const char *const hvs_keys[HVS_KEY_COUNT] = { "psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr",
                                                     "psnr_hvs" };

static void make_frames(const Case &c, std::vector<QualePicture> &refs,
                        std::vector<QualePicture> &dists)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    refs.resize(c.frames);
    dists.resize(c.frames);
    for (unsigned f = 0; f < c.frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        fill_reference(&refs[f], c.pattern, f);
        fill_distorted(&dists[f], &refs[f], c.pattern,
                       (Distortion)((c.distortion + f) % D_DISTORTIONS));
    }
}

/* Frames of a raw YUV pair (--yuv), instead of random ones. */
static const char *yuv_paths[2];

static bool read_frames(const Case &c, std::vector<QualePicture> &refs,
                        std::vector<QualePicture> &dists)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    FILE *files[2] = { fopen(yuv_paths[0], "rb"), fopen(yuv_paths[1], "rb") };
    bool ok = files[0] && files[1];
    refs.resize(c.frames);
    dists.resize(c.frames);
    for (unsigned f = 0; f < c.frames; f++) {
        QualePicture *pics[2] = { &refs[f], &dists[f] };
        for (unsigned i = 0; i < 2; i++) {
            CHECK(quale_picture_alloc(pics[i], &format) == 0);
            for (unsigned p = 0; ok && p < pics[i]->plane_count; p++) {
                const size_t row = (size_t)pics[i]->plane_width[p] * (c.bitdepth > 8 ? 2 : 1);
                for (unsigned y = 0; ok && y < pics[i]->plane_height[p]; y++)
                    ok = fread((uint8_t *)pics[i]->data[p] + (ptrdiff_t)y * pics[i]->stride[p], 1,
                               row, files[i]) == row;
            }
        }
    }
    for (FILE *f : files)
        if (f) fclose(f);
    CHECK(ok);
    return ok;
}

static void get_frames(const Case &c, std::vector<QualePicture> &refs,
                       std::vector<QualePicture> &dists)
{
    if (yuv_paths[0])
        read_frames(c, refs, dists);
    else
        make_frames(c, refs, dists);
}

static void run_hvs_case(const Case &c, unsigned index, bool every_estimate)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    char label[160];
    snprintf(label, sizeof(label), "psnr_hvs case %u: %ux%u %u-bit %s %s/%s", index, c.w, c.h,
             c.bitdepth, quale_chroma_name(c.chroma), yuv_paths[0] ? "file" : pattern_names[c.pattern],
             yuv_paths[0] ? "file" : distortion_names[c.distortion]);
    const unsigned failed_before = test_failed;
    const WalkStats before = walk_stats[E_EXACT];
    std::vector<QualePicture> refs, dists;
    get_frames(c, refs, dists);

    QualeContext *ctx = NULL;
    const int run_err = cpu_run(&ctx, "psnr_hvs", refs, dists);
    CHECK(run_err == 0);
    QualeContext *declare_ctx = NULL;
    QualeSettings ds;
    quale_settings_default(&ds);
    ds.threads = 1;
    CHECK(quale_open(&declare_ctx, &ds) == 0);
    PsnrHvsState *s = static_cast<PsnrHvsState *>(calloc(1, metric_psnr_hvs.state_size));
    CHECK(s && metric_psnr_hvs.init(s, &format, context_sink(declare_ctx)) == 0);
    void *scratch = NULL;
    CHECK(s && metric_psnr_hvs.scratch_alloc(s, &scratch) == 0);
    HvsPlan *plan = hvs_cuda_plan_new(&format);
    CHECK(plan != NULL);
    if (!run_err && s && scratch && plan) {
        std::vector<uint8_t> memory(hvs_cuda_slot(plan)->bytes + GUARD);
        std::vector<float> tables(2 * 3 * 64);
        hvs_cuda_tables(s, tables.data());
        uint64_t count[3], ref_count[3];
        hvs_cuda_counts(plan, count);
        for (unsigned f = 0; f < c.frames; f++) {
            float ref_sums[3];
            psnr_hvs_frame_sums(s, scratch, &refs[f], &dists[f], ref_sums, ref_count);
            for (unsigned p = 0; p < 3; p++) CHECK(count[p] == ref_count[p]);
            const unsigned modes = every_estimate ? E_MODES : 1;
            for (unsigned m = 0; m < modes; m++) {
                float sums[3];
                CHECK(hvs_twin_sums(plan, tables.data(), memory, &refs[f], &dists[f], f % 2 == 1,
                                    (Estimate)m, sums));
                for (unsigned p = 0; p < 3; p++) {
                    CHECK(same_float(sums[p], ref_sums[p]));
                    if (!same_float(sums[p], ref_sums[p]))
                        fprintf(stderr, "  %s, frame %u, plane %u, %s: twin %.9g, reference %.9g\n",
                                label, f, p, estimate_names[m], sums[p], ref_sums[p]);
                }
                if (m > 0) continue;
                double values[HVS_KEY_COUNT];
                psnr_hvs_values(s, sums, count, values);
                for (unsigned k = 0; k < HVS_KEY_COUNT; k++)
                    compare_key(hvs_keys[k], values[k], cpu_value(ctx, hvs_keys[k], f), label, f);
            }
        }
    }
    /* The twin's plan through the executor, as the backend runs it, with a
     * state of its own. */
    if (!run_err) {
        QualeContext *plan_ctx = NULL;
        CHECK(quale_open(&plan_ctx, &ds) == 0);
        void *plan_state =
            plan_ctx ? make_state(&metric_psnr_hvs, "psnr_hvs", &format, plan_ctx) : NULL;
        CHECK(plan_state != NULL);
        if (plan_state)
            CHECK(plan_run_matches_cpu(cuda_twin_psnr_hvs, metric_psnr_hvs, plan_state, refs, dists,
                                       context_sink(plan_ctx), ctx, label, &fake_backwards));
        free_state(&metric_psnr_hvs, plan_state);
        quale_close(&plan_ctx);
    }
    const WalkStats &w = walk_stats[E_EXACT];
    printf("%s %s (walk: %.1f runs, %.1f binade changes per plane)\n",
           test_failed == failed_before ? "ok  " : "FAIL", label,
           (double)(w.runs - before.runs) / (double)(w.planes - before.planes),
           (double)(w.changes - before.changes) / (double)(w.planes - before.planes));
    fflush(stdout);
    free(plan);
    if (scratch) metric_psnr_hvs.scratch_free(scratch);
    free(s);
    quale_close(&declare_ctx);
    quale_close(&ctx);
    free_frames(refs, dists);
}

/* ---- PSNR-HVS: the exact sum alone ------------------------------------------ */

/* A term of a hard kind. */
static float hard_term(unsigned kind)
{
    switch (kind % 9) {
    case 0: return 0.f;
    case 1: return (float)(rng() % 64) * 0.5f;                /* ties at small sums */
    case 2: return ldexpf(1.f, (int)(rng() % 40) - 20);       /* powers of two */
    case 3: return ldexpf((float)(rng() % 8 + 1), -149);      /* subnormals */
    case 4: return ldexpf((float)(rng() | 1), (int)(rng() % 60) - 40); /* every bit */
    case 5: return (float)(rng() % 1000);                     /* integers */
    case 6: return ldexpf((float)(rng() % 3 + 1), -(int)(rng() % 4)); /* quarters */
    case 7: return ldexpf((float)(rng() & 0xffffff), (int)(rng() % 10)); /* large */
    default: return (float)rng() / 4096.f;
    }
}

/* Sequences of block positions with hand-made terms: the walk against the
 * plain float sum, with exact, spoiled and no estimates. */
static void test_exact_sum()
{
    unsigned bad = 0, runs = 0;
    for (unsigned trial = 0; trial < 300; trial++) {
        const unsigned n = 1 + rng() % (trial < 200 ? 40 : 2500);
        const unsigned mix = rng();
        std::vector<float> terms((size_t)n * 64);
        for (size_t i = 0; i < terms.size(); i++) {
            const unsigned kind = (mix >> 28) == 0 ? rng() : (mix >> (4 * (i % 7))) & 15;
            terms[i] = hard_term(kind);
        }
        if (trial % 50 == 7) /* overflow to infinity */
            for (size_t i = 0; i < terms.size(); i += 97) terms[i] = 3e37f;
        float plain = 0.f;
        for (float t : terms) plain += t;

        std::vector<double> prefix(n);
        std::vector<HvsCand> cand(n);
        HvsArgs a;
        memset(&a, 0, sizeof(a));
        a.terms = terms.data();
        a.prefix = prefix.data();
        a.cand = cand.data();
        a.blocks[0] = n;
        a.base[1] = a.base[2] = n; /* planes 1 and 2 empty */
        a.total = n;
        for (unsigned m = 0; m < E_MODES; m++) {
            double carry = 0.;
            for (unsigned g = 0; g < n; g++) {
                prefix[g] = m == E_EXACT ? carry : m == E_SCALED ? carry * (0.5 + (rng() % 100) * 0.01)
                          : m == E_ZERO ? 0. : (rng() & 1) ? NAN : -5.;
                double block = 0.;
                for (int k = 0; k < 64; k++) block += terms[(size_t)g * 64 + k];
                carry += block;
            }
            for (unsigned g = 0; g < n; g++) hvs_cand_at(a, g);
            const float walked = emulate_walk(a, 0);
            runs++;
            if (!same_float(walked, plain)) {
                if (bad++ < 5)
                    fprintf(stderr, "  exact sum, trial %u (%u blocks), %s: walk %a, plain %a\n",
                            trial, n, estimate_names[m], walked, plain);
            }
        }
    }
    CHECK(bad == 0);
    printf("%s the exact float sum on %u hard sequences\n", bad ? "FAIL" : "ok  ", runs);
}

/* The binade arithmetic on every float class. */
static void test_units()
{
    unsigned bad = 0;
    const float samples[] = { 0.f, ldexpf(1.f, -149), ldexpf(3.f, -149), ldexpf(1.f, -126),
                              ldexpf(1.5f, -126), 1.f, 1.5f, 3.f, FLT_MAX, 1e20f, 1e-20f };
    for (float s : samples) {
        const int e = hvs_binade(s);
        const uint32_t u = hvs_units(s, e);
        if (e < 1 || e > 254 || u >= HVS_LIMIT || !same_float(hvs_from_units(e, u), s)) bad++;
        if (e > 1 && u < (1u << 23)) bad++;
        /* s + t through the pair, where it stays in the binade */
        for (int i = 0; i < 2000; i++) {
            const float t = hard_term(rng());
            const HvsPair d = hvs_term_pair(t, e);
            const uint32_t after = hvs_after(u, d);
            if (after < HVS_LIMIT && !same_float(hvs_from_units(e, after), s + t)) bad++;
            if (after >= HVS_LIMIT && hvs_binade(s + t) == e && s + t != s) bad++;
        }
    }
    CHECK(hvs_binade(INFINITY) == 255);
    CHECK(hvs_binade_near(0.) == 1 && hvs_binade_near(1.) == 127 && hvs_binade_near(1.999) == 127);
    CHECK(hvs_binade_near(2.) == 128 && hvs_binade_near(1e300) == 254 && hvs_binade_near(NAN) == 1);
    CHECK(hvs_binade_near(ldexp(1., -126)) == 1 && hvs_binade_near(ldexp(1., -125)) == 2);
    CHECK(bad == 0);
}

/* ---- CIEDE2000 ------------------------------------------------------------------ */

/* block_sum() of reduce.cuh, addition for addition: a shuffle-down tree
 * per warp (lanes past the end add their own value), then warp 0 over the
 * warps' sums (0 past the warps). */
static double emulate_block_sum(const std::vector<double> &v)
{
    const unsigned n = (unsigned)v.size(), warps = n / 32;
    std::vector<double> warp_sums(32, 0.);
    for (unsigned w = 0; w < warps; w++) {
        double lane[32];
        for (unsigned l = 0; l < 32; l++) lane[l] = v[w * 32 + l];
        for (unsigned o = 16; o > 0; o >>= 1) {
            double next[32];
            for (unsigned l = 0; l < 32; l++) next[l] = lane[l] + (l + o < 32 ? lane[l + o] : lane[l]);
            memcpy(lane, next, sizeof(lane));
        }
        warp_sums[w] = lane[0];
    }
    double lane[32];
    for (unsigned l = 0; l < 32; l++) lane[l] = l < warps ? warp_sums[l] : 0.;
    for (unsigned o = 16; o > 0; o >>= 1) {
        double next[32];
        for (unsigned l = 0; l < 32; l++) next[l] = lane[l] + (l + o < 32 ? lane[l + o] : lane[l]);
        memcpy(lane, next, sizeof(lane));
    }
    return lane[0];
}

static bool ciede_twin_sum(const CiedePlan *plan, const CiedeState *s, const double *linear,
                           const float *colours, std::vector<uint8_t> &memory, const QualePicture *ref,
                           const QualePicture *dist, bool backwards, double *sum)
{
    const unsigned count = ciede_cuda_partial_count(plan);
    uint8_t *base = memory.data();
    const size_t bytes = (size_t)count * sizeof(double);
    for (size_t i = 0; i < bytes + GUARD; i++) base[i] = (uint8_t)rng();
    std::vector<uint8_t> guard(base + bytes, base + bytes + GUARD);
    uint64_t r[3], d[3], stride[3];
    for (unsigned k = 0; k < 3; k++) {
        r[k] = addr(ref->data[k]);
        d[k] = addr(dist->data[k]);
        stride[k] = (uint64_t)ref->stride[k];
    }
    CiedeArgs a;
    unsigned launch[3];
    const char *name = ciede_cuda_launch(plan, addr(base), addr(s->chroma_col), addr(s->chroma_row),
                                         addr(linear), addr(colours), r, d, stride, launch, &a);
    const bool hbd = ref->format.bitdepth > 8;
    bool ok = name && !strcmp(name, hbd ? "ciede_rows_16" : "ciede_rows_8") &&
              launch[2] == CIEDE_THREADS && launch[0] > 0 && launch[1] > 0 && launch[1] <= 65535 &&
              (uint64_t)launch[0] * launch[1] == count;
    if (ok) {
        std::vector<double> thread_sums(launch[2]);
        for (unsigned iy = 0; iy < launch[1]; iy++) {
            const unsigned by = backwards ? launch[1] - 1 - iy : iy;
            for (unsigned ix = 0; ix < launch[0]; ix++) {
                const unsigned bx = backwards ? launch[0] - 1 - ix : ix;
                for (unsigned t = 0; t < launch[2]; t++)
                    thread_sums[t] = hbd ? ciede_thread<uint16_t>(a, bx, by, t)
                                         : ciede_thread<uint8_t>(a, bx, by, t);
                a.partials[by * launch[0] + bx] = emulate_block_sum(thread_sums);
            }
        }
    } else {
        fprintf(stderr, "  kernel %s, launch %u x %u x %u\n", name ? name : "(none)", launch[0],
                launch[1], launch[2]);
    }
    if (memcmp(guard.data(), base + bytes, GUARD) != 0) {
        fprintf(stderr, "  the kernel wrote past the partial sums\n");
        ok = false;
    }
    *sum = ciede_cuda_sum(plan, (const double *)base);
    return ok;
}

static double worst_sum_rel = 0.;

/* The colour table of `bits`-bit samples as ciede_colour_table fills it,
 * made once (2^24 colours at 8 bits) on every core, in contiguous ranges. */
static const float *colour_table(const CiedeConvert &convert, unsigned bits)
{
    static std::vector<float> table;
    static CiedeConvert made_for;
    static unsigned made_bits;
    if (table.empty() || made_bits != bits || memcmp(&made_for, &convert, sizeof(convert))) {
        const size_t n = (size_t)1 << 3 * bits;
        table.assign(4 * n, NAN);
        const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
        std::vector<std::thread> threads;
        for (unsigned k = 0; k < workers; k++)
            threads.emplace_back([&, k] {
                for (size_t i = n * k / workers; i < n * (k + 1) / workers; i++)
                    ciede_colour_entry(convert, table.data(), bits, i);
            });
        for (std::thread &t : threads) t.join();
        made_for = convert;
        made_bits = bits;
    }
    return table.data();
}

static void run_ciede_case(const Case &c, unsigned index)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    char label[160];
    snprintf(label, sizeof(label), "ciede case %u: %ux%u %u-bit %s %s/%s", index, c.w, c.h,
             c.bitdepth, quale_chroma_name(c.chroma), yuv_paths[0] ? "file" : pattern_names[c.pattern],
             yuv_paths[0] ? "file" : distortion_names[c.distortion]);
    const unsigned failed_before = test_failed;
    std::vector<QualePicture> refs, dists;
    get_frames(c, refs, dists);

    QualeContext *ctx = NULL;
    const int run_err = cpu_run(&ctx, "ciede", refs, dists);
    CHECK(run_err == 0);
    QualeContext *declare_ctx = NULL;
    QualeSettings ds;
    quale_settings_default(&ds);
    ds.threads = 1;
    CHECK(quale_open(&declare_ctx, &ds) == 0);
    CiedeState *s = static_cast<CiedeState *>(calloc(1, metric_ciede.state_size));
    const bool inited = s && metric_ciede.init(s, &format, context_sink(declare_ctx)) == 0;
    CHECK(inited);
    void *scratch = NULL;
    CHECK(inited && metric_ciede.scratch_alloc(s, &scratch) == 0);
    CiedePlan *plan = inited ? ciede_cuda_plan_new(s, &format) : NULL;
    CHECK(plan != NULL);
    if (!run_err && scratch && plan) {
        std::vector<uint8_t> memory(ciede_cuda_partial_count(plan) * sizeof(double) + GUARD);
        /* The tables as ciede_colour_table and ciede_table fill them: every
         * colour at 8 bits, R and B at 9 and 10; above, the pixels decode
         * every colour themselves. */
        const unsigned colour_bits = ciede_cuda_colour_bits(plan);
        CHECK(colour_bits == (c.bitdepth <= 8 ? c.bitdepth : 0u));
        const float *colours = colour_bits ? colour_table(s->convert, colour_bits) : NULL;
        const unsigned bits = ciede_cuda_table_bits(plan);
        CHECK(bits == (c.bitdepth > 8 && c.bitdepth <= 10 ? c.bitdepth : 0u));
        std::vector<double> linear(bits ? 2u << (2 * bits) : 0);
        for (unsigned i = 0; i < linear.size(); i++)
            ciede_table_entry(s->convert, linear.data(), bits, i);
        for (unsigned f = 0; f < c.frames; f++) {
            const double ref_sum = ciede_frame_sum(s, scratch, &refs[f], &dists[f]);
            double sum = NAN;
            CHECK(ciede_twin_sum(plan, s, bits ? linear.data() : NULL, colours, memory, &refs[f],
                                 &dists[f], f % 2 == 1, &sum));
            if (bits || colours) {
                /* looking the colours up changes no pixel's deltaE */
                double direct = NAN;
                CHECK(ciede_twin_sum(plan, s, NULL, NULL, memory, &refs[f], &dists[f], f % 2 == 0,
                                     &direct));
                CHECK(direct == sum);
            }
            const double rel = sum == ref_sum ? 0. : fabs(sum - ref_sum) / fabs(ref_sum);
            CHECK(rel < 1e-12);
            if (!(rel < 1e-12))
                fprintf(stderr, "  %s, frame %u: sum twin %.17g, reference %.17g\n", label, f, sum,
                        ref_sum);
            worst_sum_rel = std::max(worst_sum_rel, rel);
            compare_key("ciede2000", ciede_value(s, sum), cpu_value(ctx, "ciede2000", f), label, f);
        }
    }
    printf("%s %s\n", test_failed == failed_before ? "ok  " : "FAIL", label);
    fflush(stdout);
    if (scratch) metric_ciede.scratch_free(scratch);
    free(plan);
    if (inited) metric_ciede.close(s);
    free(s);
    quale_close(&declare_ctx);
    quale_close(&ctx);
    free_frames(refs, dists);
}

/* ---- refusals --------------------------------------------------------------------- */

/* The CPU refuses with the check function's message; the twins' init()
 * calls the same function. */
static void test_refusal(const char *metric, const QualeVideoFormat &format)
{
    std::vector<QualePicture> refs(1), dists(1);
    CHECK(quale_picture_alloc(&refs[0], &format) == 0);
    CHECK(quale_picture_alloc(&dists[0], &format) == 0);
    fill_reference(&refs[0], P_NOISE, 0);
    fill_distorted(&dists[0], &refs[0], P_NOISE, D_NOISE);
    QualeContext *ctx = NULL;
    CHECK(cpu_run(&ctx, metric, refs, dists) != 0);
    char expected[256] = "";
    const int err = !strcmp(metric, "psnr_hvs")
                        ? psnr_hvs_check_format(&format, expected, sizeof(expected))
                        : ciede_check_format(&format, expected, sizeof(expected));
    CHECK(err == -EINVAL);
    bool found = false;
    for (const std::string &m : messages) found = found || m == expected;
    CHECK(found);
    if (!found) {
        fprintf(stderr, "  %s %ux%u %u-bit %s: expected \"%s\"; logged:\n", metric, format.width,
                format.height, format.bitdepth, quale_chroma_name(format.chroma), expected);
        for (const std::string &m : messages) fprintf(stderr, "    %s\n", m.c_str());
    }
    quale_close(&ctx);
    quale_picture_unref(&refs[0]);
    quale_picture_unref(&dists[0]);
}

static void test_refusals()
{
    const QualeVideoFormat hvs_refused[] = {
        { QUALE_CHROMA_400, 8, 16, 16 },  { QUALE_CHROMA_420, 13, 16, 16 },
        { QUALE_CHROMA_420, 16, 16, 16 }, { QUALE_CHROMA_444, 8, 7, 8 },
        { QUALE_CHROMA_444, 8, 8, 7 },    { QUALE_CHROMA_420, 8, 14, 16 },
        { QUALE_CHROMA_420, 10, 16, 14 }, { QUALE_CHROMA_422, 8, 14, 8 },
    };
    for (const QualeVideoFormat &f : hvs_refused) test_refusal("psnr_hvs", f);
    test_refusal("ciede", { QUALE_CHROMA_400, 8, 16, 16 });
    test_refusal("ciede", { QUALE_CHROMA_400, 12, 1, 1 });
    char error[256];
    const QualeVideoFormat ok1 = { QUALE_CHROMA_420, 12, 15, 15 }, ok2 = { QUALE_CHROMA_444, 8, 8, 8 };
    const QualeVideoFormat ok3 = { QUALE_CHROMA_422, 10, 15, 8 }, ok4 = { QUALE_CHROMA_420, 16, 1, 1 };
    CHECK(psnr_hvs_check_format(&ok1, error, sizeof(error)) == 0);
    CHECK(psnr_hvs_check_format(&ok2, error, sizeof(error)) == 0);
    CHECK(psnr_hvs_check_format(&ok3, error, sizeof(error)) == 0);
    CHECK(ciede_check_format(&ok4, error, sizeof(error)) == 0);
}

/* ---- the cases ------------------------------------------------------------------ */

static const Case hvs_cases[] = {
    /* the smallest pictures the reference scores */
    { 8, 8, 8, QUALE_CHROMA_444, P_NOISE, D_NOISE, 2 },
    { 15, 15, 8, QUALE_CHROMA_420, P_TEXTURE, D_BLUR, 2 },
    { 15, 8, 10, QUALE_CHROMA_422, P_EXTREME, D_RANDOM, 2 },
    { 8, 8, 12, QUALE_CHROMA_444, P_FLAT, D_SAME, 2 },
    { 17, 19, 8, QUALE_CHROMA_420, P_TEXTURE, D_SPARSE, 2 },
    { 31, 16, 9, QUALE_CHROMA_422, P_NOISE, D_CHROMA, 2 },
    { 33, 65, 12, QUALE_CHROMA_444, P_TEXTURE, D_NOISE, 2 },
    { 65, 33, 11, QUALE_CHROMA_420, P_NEUTRAL, D_BLUR, 2 },
    { 176, 144, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 2 },
    { 176, 144, 10, QUALE_CHROMA_422, P_NOISE, D_BLUR, 2 },
    { 176, 144, 12, QUALE_CHROMA_444, P_TEXTURE, D_SPARSE, 2 },
    { 176, 144, 8, QUALE_CHROMA_444, P_EXTREME, D_SAME, 1 },
    { 255, 97, 10, QUALE_CHROMA_420, P_TEXTURE, D_CHROMA, 2 },
    { 1920, 1080, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 1 },
    { 1920, 1080, 10, QUALE_CHROMA_422, P_NOISE, D_BLUR, 1 },
    { 1919, 1081, 12, QUALE_CHROMA_444, P_TEXTURE, D_SPARSE, 1 },
};

static const Case ciede_cases[] = {
    /* the smallest pictures, and 4:2:2 rows read past the planes */
    { 1, 1, 8, QUALE_CHROMA_420, P_NOISE, D_NOISE, 2 },
    { 1, 1, 16, QUALE_CHROMA_422, P_WIDE, D_RANDOM, 2 },
    { 2, 1, 8, QUALE_CHROMA_422, P_NOISE, D_RANDOM, 2 },
    { 3, 1, 10, QUALE_CHROMA_422, P_TEXTURE, D_CHROMA, 2 },
    { 65, 1, 8, QUALE_CHROMA_422, P_NOISE, D_NOISE, 2 },
    { 97, 2, 12, QUALE_CHROMA_422, P_NEUTRAL, D_CHROMA, 2 },
    { 1, 1, 9, QUALE_CHROMA_444, P_EXTREME, D_CHROMA, 2 },
    { 17, 19, 8, QUALE_CHROMA_420, P_TEXTURE, D_SPARSE, 2 },
    { 31, 16, 14, QUALE_CHROMA_422, P_WIDE, D_BLUR, 2 },
    { 33, 65, 16, QUALE_CHROMA_444, P_NOISE, D_CHROMA, 2 },
    { 66, 7, 8, QUALE_CHROMA_422, P_TEXTURE, D_NOISE, 2 },
    { 176, 144, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 2 },
    { 176, 144, 10, QUALE_CHROMA_422, P_NEUTRAL, D_CHROMA, 2 },
    { 176, 144, 12, QUALE_CHROMA_444, P_NOISE, D_BLUR, 2 },
    { 176, 144, 16, QUALE_CHROMA_420, P_WIDE, D_SPARSE, 2 },
    { 176, 144, 8, QUALE_CHROMA_444, P_FLAT, D_SAME, 1 },
    { 1920, 1080, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, 1 },
};

static int report()
{
    for (unsigned m = 0; m < E_MODES; m++) {
        const WalkStats &w = walk_stats[m];
        printf("walk, %s: %llu planes, %llu tiles, %llu runs, %llu binade changes, %llu pairs "
               "computed in the walk\n",
               estimate_names[m], w.planes, w.tiles, w.runs, w.changes, w.misses);
    }
    printf("ciede2000 sums: worst relative difference %.3g\n", worst_sum_rel);
    for (const Worst &w : worst)
        printf("worst %s: |diff| %.3g (tolerance %g), %s\n", w.key.c_str(), w.diff,
               tolerance(w.key.c_str()), w.where.c_str());
    return test_summary();
}

int main(int argc, char **argv)
{
    register_fake_kernels();
    /* --quick: leave out the 1080p cases; --tolerance PATH;
     * --yuv REF DIST WIDTH HEIGHT 420|422|444 BITDEPTH FRAMES: both twins
     * on the frames of a raw pair instead of the cases */
    bool quick = false;
    const std::string default_path = default_tolerance_path();
    const char *tolerance_path = default_path.c_str();
    Case file_case = { 0, 0, 8, QUALE_CHROMA_420, P_NOISE, D_NOISE, 0 };
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        if (!strcmp(argv[i], "--tolerance") && i + 1 < argc) tolerance_path = argv[++i];
        if (!strcmp(argv[i], "--yuv") && i + 7 < argc) {
            yuv_paths[0] = argv[++i];
            yuv_paths[1] = argv[++i];
            file_case.w = (unsigned)atoi(argv[++i]);
            file_case.h = (unsigned)atoi(argv[++i]);
            const int chroma = atoi(argv[++i]);
            file_case.chroma = chroma == 444 ? QUALE_CHROMA_444
                               : chroma == 422 ? QUALE_CHROMA_422 : QUALE_CHROMA_420;
            file_case.bitdepth = (unsigned)atoi(argv[++i]);
            file_case.frames = (unsigned)atoi(argv[++i]);
        }
    }
    const bool loaded = load_tolerances(tolerance_path);
    CHECK(loaded);
    if (!loaded) return test_summary();
    if (yuv_paths[0]) {
        if (file_case.bitdepth <= HVS_MAX_BITDEPTH) run_hvs_case(file_case, 0, true);
        run_ciede_case(file_case, 1);
        return report();
    }

    test_units();
    /* the constant for libvmaf's powf(25, 7): the host's powf, not folded */
    volatile float twenty_five = 25.f;
    CHECK(powf(twenty_five, 7.f) == CIEDE_POWF_25_7);
    test_exact_sum();
    memset(walk_stats, 0, sizeof(walk_stats));
    test_refusals();
    unsigned index = 0;
    for (const Case &c : hvs_cases) {
        if (!quick || c.w * c.h < 1000000) run_hvs_case(c, index, c.w * c.h < 100000);
        index++;
    }
    for (unsigned i = 0; i < 16; i++) {
        Case c;
        static const QualeChroma chromas[] = { QUALE_CHROMA_420, QUALE_CHROMA_422,
                                               QUALE_CHROMA_444 };
        c.chroma = chromas[rng() % 3];
        c.w = (c.chroma == QUALE_CHROMA_444 ? 8 : 15) + rng() % 120;
        c.h = (c.chroma == QUALE_CHROMA_420 ? 15 : 8) + rng() % 90;
        c.bitdepth = 8 + rng() % 5;
        c.pattern = (Pattern)(rng() % P_WIDE);
        c.distortion = (Distortion)(rng() % D_DISTORTIONS);
        c.frames = 2;
        run_hvs_case(c, index++, true);
    }
    for (const Case &c : ciede_cases) {
        if (!quick || c.w * c.h < 1000000) run_ciede_case(c, index);
        index++;
    }
    for (unsigned i = 0; i < 16; i++) {
        Case c;
        static const QualeChroma chromas[] = { QUALE_CHROMA_420, QUALE_CHROMA_422,
                                               QUALE_CHROMA_444 };
        c.chroma = chromas[rng() % 3];
        c.w = 1 + rng() % 100;
        c.h = 1 + rng() % 60;
        c.bitdepth = 8 + rng() % 9;
        c.pattern = (Pattern)(rng() % P_PATTERNS);
        c.distortion = (Distortion)(rng() % D_DISTORTIONS);
        c.frames = 2;
        run_ciede_case(c, index++);
    }

    return report();
}
