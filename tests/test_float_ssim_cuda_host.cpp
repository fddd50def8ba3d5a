/*
 * The CUDA twins of float_ssim and float_ms_ssim, run on the CPU: no GPU
 * needed.
 *
 * src/cuda/float_ms_ssim.cu (which includes src/cuda/float_ssim.cu) is
 * included as C++ (src/cuda/cuda_host_compat.h turns the CUDA qualifiers
 * off and the __global__ wrappers are left out); the twins' own host code
 * (src/cuda/float_ssim_cuda.c, float_ms_ssim_cuda.c, linked from the
 * library) gives the slot layout and every launch of a frame: kernel, grid
 * and arguments, exactly what their enqueue() launches.  Each launch is
 * emulated here block by block and thread by thread through the very
 * functions the kernels call: the element kernels thread after thread, the
 * SSIM tiles stage after stage (the barriers), every thread of a block
 * through a stage before the next, the block's shared memory filled with
 * junk first.  Blocks and threads run forwards on even frames and
 * backwards on odd ones, so that a thread reading what another writes in
 * the same stage would show.  The slot memory starts as random bytes and
 * has a guard zone after it.  The device computes the same operations in
 * the same order (the fatbin has no contraction; division and sqrt round
 * correctly), so the sums here are the device's, bit for bit.
 *
 * Against the C reference, on random frames of many sizes (the smallest
 * the CPU accepts, odd ones, 176x144, 1920x1080), bit depths 8, 10, 12 and
 * 16 (samples above the bit depth too), every chroma format, every option:
 *   - the shrunk pictures (float_ssim's downscale, MS-SSIM's scales 1..4)
 *     equal, bit for bit, those of the C reference's functions
 *     (picture_float_row, iqa_pad_row, iqa_decimate_row);
 *   - the tiles' sums of every scale are within a few ulps (relative) of
 *     the C reference's raster-order sums (iqa_ssim_push_row), and the
 *     means rounded to float are counted where they differ;
 *   - every key the twin's collect() writes (through the C reference's own
 *     float_ssim_values() / float_ms_ssim_values()) is within the
 *     tolerance table (tests/tolerance.json) of what the CPU backend wrote
 *     through the public API; the worst difference per key is printed.
 * Also the refusals: the messages of the CPU and of the check the twins'
 * init() calls.  Prints "N passed, M failed".
 *
 * Usage: test_float_ssim_cuda_host [--quick] [--tolerance PATH]
 *   --quick leaves out the 1080p cases; the table is found at PATH, else
 *   $QUALE_TOLERANCE, else next to this source file.
 */
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fnmatch.h>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "context.h"
#include "json.h"
#include "metric.h"
#include "option.h"
#include "metrics/common/picture_float.h"
#include "quale/quale.h"
}
#include "metrics/float_ms_ssim/float_ms_ssim.h"
#include "metrics/float_ssim/float_ssim.h"
#include "metrics/common/iqa.h"

#include "metrics/float_ms_ssim/cuda/float_ms_ssim.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0x510e527fade682d1ull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"

/* ---- the twins' host code (src/cuda/float_ssim_cuda.c, float_ms_ssim_cuda.c) */

struct FssimPlan;
struct FmsPlan;

extern "C" {
FssimPlan *fssim_cuda_plan_new(const FloatSsimState *s);
const CudaSlotLayout *fssim_cuda_slot(const FssimPlan *p);
unsigned fssim_cuda_tiles(const FssimPlan *p);
const char *fssim_cuda_step(const FssimPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                            uint64_t dist, uint64_t stride, unsigned launch[3], void *args);
void fssim_cuda_means(const FssimPlan *p, const double *partials, IqaSsimMeans *m);

FmsPlan *fms_cuda_plan_new(const FloatMsSsimState *s);
const CudaSlotLayout *fms_cuda_slot(const FmsPlan *p);
size_t fms_cuda_plane_offset(const FmsPlan *p, unsigned scale, unsigned which);
unsigned fms_cuda_tiles(const FmsPlan *p);
const char *fms_cuda_step(const FmsPlan *p, unsigned i, uint64_t slot, uint64_t ref,
                          uint64_t dist, uint64_t stride, unsigned launch[3], void *args);
void fms_cuda_means(const FmsPlan *p, const double *partials, IqaSsimMeans m[MS_SSIM_SCALES]);
}

/* ---- random pictures ------------------------------------------------------- */

enum Pattern { P_NOISE, P_TEXTURE, P_EXTREME, P_WIDE, P_FLAT, P_SMOOTH, P_PATTERNS };
enum Distortion { D_NOISE, D_BLUR, D_RANDOM, D_SAME, D_CONTRAST, D_DARK, D_DISTORTIONS };

static const char *const pattern_names[] = { "noise", "texture", "extreme", "wide", "flat",
                                             "smooth" };
static const char *const distortion_names[] = { "noise", "blur", "random", "same", "contrast",
                                                "dark" };
static const char *const chroma_names[] = { "?", "400", "420", "422", "444" };


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
                if (plane > 0) {
                    v = rng() % (max + 1); /* never read */
                } else {
                    switch (pattern) {
                    case P_TEXTURE: {
                        /* 8x8 blocks: flat, gradient or noisy */
                        const unsigned kind = ((x / 8) * 7 + (y / 8) * 3 + frame) % 3;
                        const unsigned base = ((x / 8) * 37 + (y / 8) * 91) % (max + 1);
                        v = kind == 0 ? base
                            : kind == 1 ? (base + x * (max / 64 + 1) + y) % (max + 1)
                                        : clip((long)base + (long)(rng() % (max / 4 + 1)) -
                                                   (long)(max / 8),
                                               max);
                        break;
                    }
                    case P_SMOOTH: {
                        /* like a natural picture: slow waves, a little grain */
                        const double t = 0.5 + 0.25 * std::sin(x * 0.05 + frame) +
                                         0.2 * std::cos(y * 0.031 + x * 0.013);
                        v = clip((long)(t * max) + (long)(rng() % 5) - 2, max);
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
        for (unsigned y = 0; y < d->plane_height[plane]; y++) {
            for (unsigned x = 0; x < d->plane_width[plane]; x++) {
                if (plane > 0) {
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

/* ---- the tolerance table ------------------------------------------------------ */

struct Rule {
    std::string pattern;
    double abs;
};

static std::vector<Rule> rules;

static bool load_tolerance(const char *path)
{
    char *text = NULL;
    size_t length = 0;
    char error[512];
    if (json_read_file(path, 1 << 20, &text, &length, error, sizeof(error))) {
        fprintf(stderr, "  %s\n", error);
        return false;
    }
    JsonDocument *doc = NULL;
    JsonError jerr;
    bool ok = json_parse(&doc, text, length, NULL, &jerr) == 0;
    if (ok) {
        const JsonValue *list = json_object_get(json_document_root(doc), "rules");
        ok = list && list->type == JSON_ARRAY;
        for (size_t i = 0; ok && i < list->u.array.count; i++) {
            const JsonValue *rule = &list->u.array.items[i];
            const JsonValue *pattern = json_object_get(rule, "pattern");
            const JsonValue *abs = json_object_get(rule, "abs");
            ok = pattern && pattern->type == JSON_STRING && abs && abs->type == JSON_NUMBER;
            if (ok) rules.push_back({ pattern->u.string.chars, abs->u.number.value });
        }
    } else {
        fprintf(stderr, "  %s:%u:%u: %s\n", path, jerr.line, jerr.column, jerr.message);
    }
    json_document_free(&doc);
    free(text);
    return ok && !rules.empty();
}

/* The first rule whose pattern fits the key, as tests/gpu_parity.py reads it. */
static double tolerance(const std::string &key)
{
    for (const Rule &r : rules)
        if (fnmatch(r.pattern.c_str(), key.c_str(), 0) == 0) return r.abs;
    return 0.0;
}

/* ---- emulated launches -------------------------------------------------------- */

typedef void (*FssimThread)(const FssimDecimateArgs &, unsigned, unsigned, unsigned, unsigned,
                            unsigned);
typedef void (*FmsThread)(const MsDecimateArgs &, unsigned, unsigned, unsigned, unsigned,
                          unsigned);

struct Kernel {
    const char *name;
    FssimThread fssim;
    FmsThread fms;
    bool tiles;
};

static const Kernel kernels[] = {
    { "fssim_decimate_8", fssim_decimate_thread<SSIM_SOURCE_8>, NULL, false },
    { "fssim_decimate_16", fssim_decimate_thread<SSIM_SOURCE_16>, NULL, false },
    { "fms_decimate_8", NULL, fms_decimate_thread<SSIM_SOURCE_8>, false },
    { "fms_decimate_16", NULL, fms_decimate_thread<SSIM_SOURCE_16>, false },
    { "fms_decimate_f", NULL, fms_decimate_thread<SSIM_SOURCE_FLOAT>, false },
    { "iqa_ssim_tiles", NULL, NULL, true },
};

static const Kernel *find_kernel(const char *name)
{
    for (const Kernel &k : kernels)
        if (name && !strcmp(k.name, name)) return &k;
    return NULL;
}

/* Element kernels: grid (launch[0], launch[1]) of launch[2] threads. */
template <typename Args, typename Thread>
static void emulate_elements(Thread fn, const Args &a, const unsigned launch[3], bool backwards)
{
    const unsigned gx = launch[0], gy = launch[1], bd = launch[2];
    for (unsigned iy = 0; iy < gy; iy++) {
        const unsigned by = backwards ? gy - 1 - iy : iy;
        for (unsigned ix = 0; ix < gx; ix++) {
            const unsigned bx = backwards ? gx - 1 - ix : ix;
            for (unsigned it = 0; it < bd; it++) fn(a, bx, by, gy, backwards ? bd - 1 - it : it, bd);
        }
    }
}

/* iqa_ssim_tiles: every block through the stages of the kernel, each stage
 * run by every thread before the next (the barriers). */
static void emulate_tiles(const SsimArgs &a, const unsigned launch[3], bool backwards)
{
    static SsimShared sh;
    static double acc[SSIM_THREADS][SSIM_SUMS];
    const unsigned blocks = launch[0];
    for (unsigned ib = 0; ib < blocks; ib++) {
        const unsigned b = backwards ? blocks - 1 - ib : ib;
        memset(&sh, 0x7f ^ (int)(b & 0x3f), sizeof(sh)); /* junk: large floats */
#define EACH_THREAD(stmt)                                                  \
    for (unsigned it = 0; it < SSIM_THREADS; it++) {                       \
        const unsigned t = backwards ? SSIM_THREADS - 1 - it : it;         \
        stmt;                                                              \
    }
        EACH_THREAD(ssim_load(a, b, t, sh))
        EACH_THREAD(ssim_hpass(t, sh))
        EACH_THREAD(ssim_vpass(a, b, t, sh, acc[t]))
        EACH_THREAD(ssim_sums_store(t, sh, acc[t]))
        for (unsigned half = SSIM_THREADS / 2; half > 0; half >>= 1) EACH_THREAD(ssim_sums_step(t, half, sh))
#undef EACH_THREAD
        ssim_sums_write(a, b, sh);
    }
}

/* The kernels on the fake driver (tests/cuda_fake_driver.h): each name runs
 * its element code as run_steps() does. */
static bool fake_backwards;

static void fake_ssim_kernel(const FakeLaunch *l)
{
    const Kernel *k = static_cast<const Kernel *>(l->user);
    const unsigned launch[3] = { l->grid[0], l->grid[1], l->block };
    if (k->fssim) {
        FssimDecimateArgs a;
        memcpy(&a, l->args, sizeof(a));
        emulate_elements(k->fssim, a, launch, fake_backwards);
    } else if (k->fms) {
        MsDecimateArgs a;
        memcpy(&a, l->args, sizeof(a));
        emulate_elements(k->fms, a, launch, fake_backwards);
    } else {
        SsimArgs a;
        memcpy(&a, l->args, sizeof(a));
        emulate_tiles(a, launch, fake_backwards);
    }
}

static void register_fake_kernels()
{
    for (const Kernel &k : kernels) fake_kernel_with(k.name, fake_ssim_kernel, &k);
}

extern "C" {
extern const CudaTwin cuda_twin_float_ssim, cuda_twin_float_ms_ssim;
}

static const size_t GUARD = 4096;

/* Slot memory: random bytes, a guard zone after. */
struct Slot {
    std::vector<uint8_t> memory;
    size_t bytes = 0;
    std::vector<uint8_t> guard;

    uint8_t *data() { return memory.data(); }
    void reset(size_t n)
    {
        bytes = n;
        memory.resize(n + GUARD);
        for (size_t i = 0; i < n + GUARD; i++) memory[i] = (uint8_t)rng();
        guard.assign(memory.begin() + (ptrdiff_t)n, memory.end());
    }
    bool guard_intact() const
    {
        return memcmp(guard.data(), memory.data() + bytes, GUARD) == 0;
    }
};

/* Runs a twin's launches for a frame (Step: the twin's step function). */
template <typename Plan, typename StepFn>
static bool run_steps(const Plan *plan, StepFn step, unsigned steps, Slot &slot,
                      const QualePicture *ref, const QualePicture *dist, bool backwards)
{
    bool ok = true;
    for (unsigned i = 0; i < steps && ok; i++) {
        SsimArgs args; /* the largest */
        unsigned launch[3] = { 0, 0, 0 };
        const char *name = step(plan, i, (uint64_t)(uintptr_t)slot.data(),
                                (uint64_t)(uintptr_t)ref->data[0], (uint64_t)(uintptr_t)dist->data[0],
                                (uint64_t)ref->stride[0], launch, &args);
        const Kernel *k = find_kernel(name);
        /* every kernel is compiled for exactly its block size */
        const unsigned want = k && k->tiles ? SSIM_THREADS : FSSIM_DECIMATE_THREADS;
        if (!k || launch[0] == 0 || launch[1] == 0 || launch[1] > 65535 || launch[2] != want ||
            (k->tiles && launch[1] != 1)) {
            fprintf(stderr, "  step %u: kernel %s, launch %u x %u x %u\n", i,
                    name ? name : "(none)", launch[0], launch[1], launch[2]);
            ok = false;
            break;
        }
        if (k->fssim) {
            FssimDecimateArgs a;
            memcpy(&a, &args, sizeof(a));
            emulate_elements(k->fssim, a, launch, backwards);
        } else if (k->fms) {
            MsDecimateArgs a;
            memcpy(&a, &args, sizeof(a));
            emulate_elements(k->fms, a, launch, backwards);
        } else {
            emulate_tiles(args, launch, backwards);
        }
    }
    unsigned launch[3];
    SsimArgs args;
    if (step(plan, steps, 0, 0, 0, 0, launch, &args) != NULL) ok = false;
    if (!slot.guard_intact()) {
        fprintf(stderr, "  the kernels wrote past the slot\n");
        ok = false;
    }
    return ok;
}

/* ---- the C reference's intermediate pictures ------------------------------------ */

/* A padded float picture, rows of w + 2 IQA_PAD. */
struct FloatPicture {
    int w = 0, h = 0;
    size_t stride = 0;
    std::vector<float> data;
    void alloc(int width, int height)
    {
        w = width;
        h = height;
        stride = (size_t)w + 2 * IQA_PAD;
        data.assign(stride * (size_t)h, 0.0f);
    }
    float *row(int y) { return data.data() + (size_t)y * stride + IQA_PAD; }
    const float *row(int y) const { return data.data() + (size_t)y * stride + IQA_PAD; }
};

struct Work {
    void *p = NULL;
    explicit Work(size_t n)
    {
        if (posix_memalign(&p, 64, n ? n : 64)) p = NULL;
    }
    ~Work() { free(p); }
};

/* MS-SSIM's scales of a picture, as float_ms_ssim.c makes them. */
static void ms_scales(const FloatMsSsimState *s, const QualePicture *pic,
                      FloatPicture scales[MS_SSIM_SCALES])
{
    static const float lpf[MS_SSIM_LPF_TAPS * MS_SSIM_LPF_TAPS] = { MS_SSIM_LPF };
    const int pad = MS_SSIM_LPF_TAPS / 2;
    scales[0].alloc(s->w[0], s->h[0]);
    for (int y = 0; y < s->h[0]; y++) {
        picture_float_row(pic, 0, (unsigned)y, 0.0f, scales[0].row(y));
        iqa_pad_row(scales[0].row(y), s->w[0], pad);
    }
    Work work(iqa_decimate_work_size(s->w[1], MS_SSIM_LPF_TAPS, 2));
    for (int i = 0; i + 1 < MS_SSIM_SCALES; i++) {
        scales[i + 1].alloc(s->w[i + 1], s->h[i + 1]);
        const float *rows[MS_SSIM_LPF_TAPS];
        for (int y = 0; y < s->h[i + 1]; y++) {
            for (int v = 0; v < MS_SSIM_LPF_TAPS; v++)
                rows[v] = scales[i].row(iqa_mirror(2 * y + v - pad, s->h[i]));
            iqa_decimate_row(rows, lpf, MS_SSIM_LPF_TAPS, 2, s->w[i + 1], scales[i + 1].row(y),
                             work.p);
            iqa_pad_row(scales[i + 1].row(y), s->w[i + 1], pad);
        }
    }
}

/* float_ssim's shrunk picture, as float_ssim.c's shrink_row() makes it. */
static void ssim_shrunk(const FloatSsimState *s, const QualePicture *pic, FloatPicture &out)
{
    const int f = s->scale, centre = f / 2;
    out.alloc(s->scaled_w, s->scaled_h);
    FloatPicture source;
    source.alloc(s->w, f);
    Work work(iqa_decimate_work_size(s->scaled_w, f, f));
    const float *rows[IQA_MAX_TAPS];
    for (int y = 0; y < s->scaled_h; y++) {
        for (int v = 0; v < f; v++) {
            picture_float_row(pic, 0, (unsigned)iqa_mirror(y * f + v - centre, s->h), 0.0f,
                              source.row(v));
            iqa_pad_row(source.row(v), s->w, centre + 1);
            rows[v] = source.row(v);
        }
        iqa_decimate_row(rows, s->box, f, f, s->scaled_w, out.row(y), work.p);
    }
}

/* The C reference's raster-order sums of a pair. */
static IqaSsimSums reference_sums(const FloatPicture &ref, const FloatPicture &dist)
{
    IqaSsim ssim;
    IqaSsimSums sums = { 0, 0, 0, 0 };
    if (iqa_ssim_alloc(&ssim, ref.w, NULL)) return sums;
    iqa_ssim_begin(&ssim, ref.w, ref.h);
    for (int y = 0; y < ref.h; y++) iqa_ssim_push_row(&ssim, ref.row(y), dist.row(y));
    sums = { ssim.ssim_sum, ssim.l_sum, ssim.c_sum, ssim.s_sum };
    iqa_ssim_free(&ssim);
    return sums;
}

/* A float picture in the slot equal, bit for bit, to the reference's? */
static bool same_plane(const float *twin, const FloatPicture &ref)
{
    for (int y = 0; y < ref.h; y++)
        if (memcmp(twin + (size_t)y * ref.w, ref.row(y), (size_t)ref.w * sizeof(float)) != 0)
            return false;
    return true;
}

/* ---- statistics ------------------------------------------------------------------- */

struct KeyStats {
    double worst = 0.0;
    std::string where;
    unsigned compared = 0, exact = 0;
};

static std::map<std::string, KeyStats> key_stats;
static double worst_sum_rel[4] = { 0, 0, 0, 0 };
static unsigned means_compared, means_differing;

static void note_sums(const IqaSsimSums &twin, const IqaSsimSums &ref, const IqaSsimMeans &tm,
                      const IqaSsimMeans &rm, const char *label, unsigned scale)
{
    const double t[4] = { twin.ssim, twin.l, twin.c, twin.s };
    const double r[4] = { ref.ssim, ref.l, ref.c, ref.s };
    for (int k = 0; k < 4; k++) {
        if (std::isnan(t[k]) && std::isnan(r[k])) continue;
        const double rel = std::fabs(t[k] - r[k]) / std::max(std::fabs(r[k]), 1e-300);
        worst_sum_rel[k] = std::max(worst_sum_rel[k], rel);
        /* the order of ~n double additions: n * 2^-53 at the very worst */
        if (!(rel < 1e-9)) {
            CHECK(rel < 1e-9);
            fprintf(stderr, "  %s, scale %u, sum %d: twin %.17g, reference %.17g\n", label, scale,
                    k, t[k], r[k]);
        }
    }
    const float a[4] = { tm.ssim, tm.l, tm.c, tm.s }, b[4] = { rm.ssim, rm.l, rm.c, rm.s };
    for (int k = 0; k < 4; k++) {
        means_compared++;
        if (memcmp(&a[k], &b[k], sizeof(float)) != 0) means_differing++;
    }
}

static bool same_or_both_nan(double a, double b)
{
    return a == b || (std::isnan(a) && std::isnan(b));
}

static void compare_key(const std::string &key, double twin, double cpu, const char *label,
                        unsigned frame)
{
    KeyStats &st = key_stats[key];
    st.compared++;
    if (same_or_both_nan(twin, cpu)) {
        st.exact++;
        CHECK(true);
        return;
    }
    const double diff = std::fabs(twin - cpu);
    const double tol = tolerance(key);
    if (!(diff <= tol)) {
        CHECK(diff <= tol);
        fprintf(stderr, "  %s, frame %u, %s: twin %.17g, CPU %.17g, |diff| %.3g > %g\n", label,
                frame, key.c_str(), twin, cpu, diff, tol);
    } else {
        CHECK(true);
    }
    if (!(diff <= st.worst)) {
        st.worst = diff;
        char where[256];
        snprintf(where, sizeof(where), "%s, frame %u", label, frame);
        st.where = where;
    }
}

/* ---- cases ---------------------------------------------------------------- */

enum Which { SSIM = 1, MS = 2, BOTH = 3 };

static const char *const ssim_specs[] = {
    "float_ssim",
    "float_ssim=enable_lcs=true",
    "float_ssim=enable_db=true",
    "float_ssim=enable_db=true:clip_db=true:enable_lcs=true",
    "float_ssim=scale=1:enable_lcs=true",
    "float_ssim=scale=2:enable_lcs=true",
    "float_ssim=scale=3",
    "float_ssim=scale=5:enable_lcs=true",
    "float_ssim=scale=10:enable_lcs=true",
};
static const char *const ms_specs[] = {
    "float_ms_ssim",
    "float_ms_ssim=enable_lcs=true",
    "float_ms_ssim=enable_db=true:enable_lcs=true",
    "float_ms_ssim=enable_db=true:clip_db=true",
};
enum {
    SSIM_SPECS = sizeof(ssim_specs) / sizeof(ssim_specs[0]),
    MS_SPECS = sizeof(ms_specs) / sizeof(ms_specs[0]),
};

struct Case {
    unsigned w, h, bitdepth;
    QualeChroma chroma;
    Pattern pattern;
    Distortion distortion;
    unsigned which;
    unsigned ssim_options, ms_options; /* bits per spec */
    unsigned frames;
};

enum { ALL_SSIM = (1u << SSIM_SPECS) - 1, ALL_MS = (1u << MS_SPECS) - 1 };
/* the specs without a fixed scale, and scale 1 */
enum { AUTO_SSIM = 0x1f };

static const Case fixed_cases[] = {
    /* float_ssim's smallest: 11x11 at scale 1 */
    { 11, 11, 8, QUALE_CHROMA_444, P_NOISE, D_NOISE, SSIM, AUTO_SSIM, 0, 2 },
    { 12, 11, 10, QUALE_CHROMA_420, P_TEXTURE, D_BLUR, SSIM, AUTO_SSIM, 0, 2 },
    { 11, 13, 16, QUALE_CHROMA_444, P_WIDE, D_NOISE, SSIM, AUTO_SSIM, 0, 2 },
    { 43, 37, 12, QUALE_CHROMA_444, P_NOISE, D_CONTRAST, SSIM, AUTO_SSIM, 0, 2 },
    /* the smallest at scales 2, 3, 5, 10: 11 samples after the shrink */
    { 21, 22, 8, QUALE_CHROMA_444, P_EXTREME, D_NOISE, SSIM, 1u << 5, 0, 2 },
    { 33, 31, 10, QUALE_CHROMA_444, P_TEXTURE, D_DARK, SSIM, (1u << 6) | (1u << 5), 0, 2 },
    { 55, 57, 12, QUALE_CHROMA_444, P_SMOOTH, D_BLUR, SSIM, (1u << 7) | (1u << 5), 0, 2 },
    { 110, 109, 16, QUALE_CHROMA_444, P_NOISE, D_BLUR, SSIM, ALL_SSIM, 0, 2 },
    /* MS-SSIM's smallest: 176 x 176, and odd sides */
    { 176, 176, 8, QUALE_CHROMA_420, P_TEXTURE, D_NOISE, BOTH, ALL_SSIM, ALL_MS, 2 },
    { 177, 179, 10, QUALE_CHROMA_444, P_SMOOTH, D_BLUR, BOTH, ALL_SSIM, ALL_MS, 2 },
    { 179, 177, 12, QUALE_CHROMA_444, P_WIDE, D_CONTRAST, BOTH, 0x3, ALL_MS, 2 },
    { 176, 181, 16, QUALE_CHROMA_444, P_NOISE, D_DARK, BOTH, 0x3, ALL_MS, 2 },
    { 183, 176, 8, QUALE_CHROMA_400, P_FLAT, D_SAME, BOTH, 0xf, ALL_MS, 2 },
    { 200, 190, 8, QUALE_CHROMA_422, P_EXTREME, D_RANDOM, BOTH, 0x3, ALL_MS, 2 },
    { 190, 200, 10, QUALE_CHROMA_422, P_SMOOTH, D_SAME, BOTH, 0xf, ALL_MS, 2 },
    /* 176x144: float_ssim's; MS-SSIM refuses it (test_refusal) */
    { 176, 144, 8, QUALE_CHROMA_420, P_SMOOTH, D_NOISE, SSIM, ALL_SSIM, 0, 2 },
    { 176, 144, 10, QUALE_CHROMA_420, P_TEXTURE, D_BLUR, SSIM, ALL_SSIM, 0, 2 },
    { 176, 144, 12, QUALE_CHROMA_422, P_NOISE, D_CONTRAST, SSIM, ALL_SSIM, 0, 1 },
    { 176, 144, 16, QUALE_CHROMA_444, P_WIDE, D_DARK, SSIM, ALL_SSIM, 0, 1 },
    /* the automatic downscale: 2 (384), 3 (640), odd sides */
    { 512, 384, 8, QUALE_CHROMA_420, P_SMOOTH, D_BLUR, BOTH, 0x3, 0x2, 2 },
    { 641, 643, 10, QUALE_CHROMA_444, P_TEXTURE, D_NOISE, BOTH, 0x3, 0x1, 1 },
    { 1920, 1080, 8, QUALE_CHROMA_420, P_SMOOTH, D_NOISE, BOTH, 0x3, 0x2, 2 },
    { 1920, 1080, 10, QUALE_CHROMA_420, P_TEXTURE, D_BLUR, BOTH, 0x1 | (1u << 4), 0x1, 1 },
    { 1919, 1081, 16, QUALE_CHROMA_444, P_WIDE, D_CONTRAST, BOTH, 0x2, 0x2, 1 },
};

/* Frame f of float_ssim through the twin's steps (backwards: the threads
 * in reverse), checked step by step against the C reference's pictures
 * and sums: the values, or 0 when the plan could not be made. */
static unsigned ssim_frame(const FloatSsimState *s, const QualePicture *ref_pic,
                           const QualePicture *dist_pic, Slot &slot, bool backwards,
                           const char *label, unsigned f, double *values)
{
    FssimPlan *plan = fssim_cuda_plan_new(s);
    CHECK(plan != NULL);
    if (!plan) return 0;
    slot.reset(fssim_cuda_slot(plan)->bytes);
    CHECK(run_steps(plan, fssim_cuda_step, fssim_cuda_slot(plan)->steps, slot,
                    ref_pic, dist_pic, backwards));
    const double *partials =
        (const double *)(slot.data() + fssim_cuda_slot(plan)->readback_offset);
    IqaSsimMeans means;
    fssim_cuda_means(plan, partials, &means);
    const unsigned count = float_ssim_values(s, &means, values);

    /* the C reference's pictures and sums */
    FloatPicture rp, dp;
    if (s->scale > 1) {
        ssim_shrunk(s, ref_pic, rp);
        ssim_shrunk(s, dist_pic, dp);
        /* the shrunk planes follow the partials: the
         * decimation's arguments name them */
        unsigned launch[3];
        FssimDecimateArgs da;
        SsimArgs room;
        fssim_cuda_step(plan, 0, (uint64_t)(uintptr_t)slot.data(), 0, 0, 0,
                        launch, &room);
        memcpy(&da, &room, sizeof(da));
        const bool same = same_plane(da.dst_ref, rp) && same_plane(da.dst_dist, dp);
        CHECK(same);
        if (!same) fprintf(stderr, "  %s, frame %u: shrunk pictures differ\n", label, f);
    } else {
        rp.alloc(s->w, s->h);
        dp.alloc(s->w, s->h);
        for (int y = 0; y < s->h; y++) {
            picture_float_row(ref_pic, 0, (unsigned)y, 0.0f, rp.row(y));
            picture_float_row(dist_pic, 0, (unsigned)y, 0.0f, dp.row(y));
        }
    }
    IqaSsimSums twin = { 0, 0, 0, 0 };
    for (unsigned t = 0; t < fssim_cuda_tiles(plan); t++) {
        twin.ssim += partials[4 * t];
        twin.l += partials[4 * t + 1];
        twin.c += partials[4 * t + 2];
        twin.s += partials[4 * t + 3];
    }
    const IqaSsimSums ref = reference_sums(rp, dp);
    note_sums(twin, ref, means, iqa_ssim_means(&ref, rp.w, rp.h), label, 0);
    free(plan);
    return count;
}

/* The same for float_ms_ssim, every scale. */
static unsigned ms_ssim_frame(const FloatMsSsimState *s, const QualePicture *ref_pic,
                              const QualePicture *dist_pic, Slot &slot, bool backwards,
                              const char *label, unsigned f, double *values)
{
    FmsPlan *plan = fms_cuda_plan_new(s);
    CHECK(plan != NULL);
    if (!plan) return 0;
    slot.reset(fms_cuda_slot(plan)->bytes);
    CHECK(run_steps(plan, fms_cuda_step, fms_cuda_slot(plan)->steps, slot,
                    ref_pic, dist_pic, backwards));
    const double *partials =
        (const double *)(slot.data() + fms_cuda_slot(plan)->readback_offset);
    IqaSsimMeans means[MS_SSIM_SCALES];
    fms_cuda_means(plan, partials, means);
    const unsigned count = float_ms_ssim_values(s, means, values);

    FloatPicture rs[MS_SSIM_SCALES], ds_[MS_SSIM_SCALES];
    ms_scales(s, ref_pic, rs);
    ms_scales(s, dist_pic, ds_);
    /* the tiles of each scale, as the SSIM launch's arguments say */
    unsigned launch[3];
    SsimArgs sa;
    fms_cuda_step(plan, MS_SSIM_SCALES - 1, (uint64_t)(uintptr_t)slot.data(), 0,
                  0, 0, launch, &sa);
    for (unsigned k = 0; k < MS_SSIM_SCALES; k++) {
        if (k > 0) {
            const float *tr = (const float *)(slot.data() + fms_cuda_plane_offset(plan, k, 0));
            const float *td = (const float *)(slot.data() + fms_cuda_plane_offset(plan, k, 1));
            const bool same = same_plane(tr, rs[k]) && same_plane(td, ds_[k]);
            CHECK(same);
            if (!same)
                fprintf(stderr, "  %s, frame %u: scale %u pictures differ\n", label,
                        f, k);
        }
        const unsigned first = sa.scale[k].first_tile;
        const unsigned end = k + 1 < MS_SSIM_SCALES ? sa.scale[k + 1].first_tile
                                                    : fms_cuda_tiles(plan);
        IqaSsimSums twin = { 0, 0, 0, 0 };
        for (unsigned t = first; t < end; t++) {
            twin.ssim += partials[4 * t];
            twin.l += partials[4 * t + 1];
            twin.c += partials[4 * t + 2];
            twin.s += partials[4 * t + 3];
        }
        const IqaSsimSums ref = reference_sums(rs[k], ds_[k]);
        note_sums(twin, ref, means[k], iqa_ssim_means(&ref, rs[k].w, rs[k].h),
                  label, k);
    }
    free(plan);
    return count;
}

static void run_case(const Case &c, unsigned index)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    std::vector<QualePicture> refs(c.frames), dists(c.frames);
    for (unsigned f = 0; f < c.frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        fill_reference(&refs[f], c.pattern, f);
        fill_distorted(&dists[f], &refs[f], c.pattern,
                       (Distortion)((c.distortion + f) % D_DISTORTIONS));
    }
    Slot slot;

    for (unsigned m = 0; m < 2; m++) {
        if (!(c.which & (1u << m))) continue;
        const bool ms = m == 1;
        const Metric *metric = ms ? &metric_float_ms_ssim : &metric_float_ssim;
        const unsigned specs = ms ? MS_SPECS : SSIM_SPECS;
        for (unsigned o = 0; o < specs; o++) {
            if (!((ms ? c.ms_options : c.ssim_options) & (1u << o))) continue;
            const char *spec = ms ? ms_specs[o] : ssim_specs[o];
            char label[200];
            snprintf(label, sizeof(label), "case %u: %ux%u %u-bit %s %s/%s, %s", index, c.w, c.h,
                     c.bitdepth, chroma_names[c.chroma], pattern_names[c.pattern],
                     distortion_names[c.distortion], spec);
            const unsigned failed_before = test_failed;

            QualeContext *ctx = NULL;
            const int run_err = cpu_run(&ctx, spec, refs, dists);
            CHECK(run_err == 0);
            QualeContext *declare_ctx = NULL;
            QualeSettings ds;
            quale_settings_default(&ds);
            ds.threads = 1;
            CHECK(quale_open(&declare_ctx, &ds) == 0);
            void *state = make_state(metric, spec, &format, declare_ctx, true);
            CHECK(state != NULL);
            if (run_err || !state) {
                for (const std::string &msg : messages) fprintf(stderr, "    %s\n", msg.c_str());
                free(state);
                quale_close(&declare_ctx);
                quale_close(&ctx);
                continue;
            }
            const unsigned keys = quale_feature_count(ctx);

            for (unsigned f = 0; f < c.frames; f++) {
                const bool backwards = f % 2 == 1;
                double values[FLOAT_MS_SSIM_KEY_COUNT];
                unsigned count = 0;
                if (!ms)
                    count = ssim_frame(static_cast<const FloatSsimState *>(state), &refs[f],
                                       &dists[f], slot, backwards, label, f, values);
                else
                    count = ms_ssim_frame(static_cast<const FloatMsSsimState *>(state), &refs[f],
                                          &dists[f], slot, backwards, label, f, values);
                if (!count) break;

                CHECK(count == keys);
                for (unsigned k = 0; k < count && k < keys; k++) {
                    const char *key = quale_feature_name(ctx, k);
                    double cpu = NAN;
                    CHECK(quale_feature_value(ctx, key, f, &cpu) == 0);
                    compare_key(key ? key : "?", values[k], cpu, label, f);
                }
            }
            /* the twin's plan through the executor, as the backend runs it */
            CHECK(plan_run_matches_cpu(ms ? cuda_twin_float_ms_ssim : cuda_twin_float_ssim,
                                       *metric, state, refs, dists, context_sink(declare_ctx),
                                       ctx, label, &fake_backwards));
            printf("%s %s\n", test_failed == failed_before ? "ok  " : "FAIL", label);
            fflush(stdout);
            free(state);
            quale_close(&declare_ctx);
            quale_close(&ctx);
        }
    }
    free_frames(refs, dists);
}

/* ---- refusals -------------------------------------------------------------- */

/* Too small pictures: the CPU refuses with the message of
 * float_ssim_setup() / float_ms_ssim_setup(), the checks the twins' init()
 * calls (on a copy of the state) before anything else. */
static void test_refusal()
{
    struct Refusal {
        const char *spec;
        unsigned w, h, bitdepth;
    };
    static const Refusal refusals[] = {
        { "float_ssim", 10, 11, 8 },
        { "float_ssim", 11, 10, 10 },
        { "float_ssim=scale=2", 20, 22, 8 },
        { "float_ssim=scale=3", 33, 30, 12 },
        { "float_ssim=scale=10", 108, 120, 16 },
        { "float_ms_ssim", 176, 144, 8 },
        { "float_ms_ssim", 175, 176, 10 },
        { "float_ms_ssim", 176, 175, 16 },
        { "float_ms_ssim", 64, 64, 8 },
    };
    for (const Refusal &r : refusals) {
        const bool ms = !strncmp(r.spec, "float_ms_ssim", 13);
        const Metric *metric = ms ? &metric_float_ms_ssim : &metric_float_ssim;
        const QualeVideoFormat format = { QUALE_CHROMA_444, r.bitdepth, r.w, r.h };
        std::vector<QualePicture> refs(1), dists(1);
        CHECK(quale_picture_alloc(&refs[0], &format) == 0);
        CHECK(quale_picture_alloc(&dists[0], &format) == 0);
        fill_reference(&refs[0], P_NOISE, 0);
        fill_distorted(&dists[0], &refs[0], P_NOISE, D_NOISE);
        QualeContext *ctx = NULL;
        CHECK(cpu_run(&ctx, r.spec, refs, dists) != 0);
        /* the twin's check, on a state with the options but no init */
        void *state = make_state(metric, r.spec, &format, NULL, false);
        CHECK(state != NULL);
        char expected[256] = "";
        if (state) {
            const int err = ms ? float_ms_ssim_setup(static_cast<FloatMsSsimState *>(state), &format,
                                                     expected, sizeof(expected))
                               : float_ssim_setup(static_cast<FloatSsimState *>(state), &format,
                                                  expected, sizeof(expected));
            CHECK(err == -EINVAL);
        }
        bool found = false;
        for (const std::string &m : messages) found = found || m == expected;
        CHECK(found);
        if (!found) {
            fprintf(stderr, "  %s %ux%u: expected \"%s\"; logged:\n", r.spec, r.w, r.h, expected);
            for (const std::string &m : messages) fprintf(stderr, "    %s\n", m.c_str());
        }
        free(state);
        quale_close(&ctx);
        quale_picture_unref(&refs[0]);
        quale_picture_unref(&dists[0]);
    }
    /* and what they accept */
    const QualeVideoFormat ok1 = { QUALE_CHROMA_444, 8, 11, 11 };
    const QualeVideoFormat ok2 = { QUALE_CHROMA_444, 8, 176, 176 };
    char error[256] = "";
    FloatSsimState *s1 = static_cast<FloatSsimState *>(make_state(&metric_float_ssim, "float_ssim", &ok1, NULL, false));
    FloatMsSsimState *s2 = static_cast<FloatMsSsimState *>(make_state(&metric_float_ms_ssim, "float_ms_ssim", &ok2, NULL, false));
    CHECK(s1 && float_ssim_setup(s1, &ok1, error, sizeof(error)) == 0);
    CHECK(s2 && float_ms_ssim_setup(s2, &ok2, error, sizeof(error)) == 0);
    free(s1);
    free(s2);
}

/* The automatic scale: libvmaf's rounding of min(w, h) / 256. */
static void test_auto_scale()
{
    static const unsigned cases[][3] = {
        { 383, 383, 1 }, { 384, 384, 2 }, { 640, 639, 2 }, { 640, 640, 3 },
        { 1920, 1080, 4 }, { 3840, 2160, 8 }, { 4096, 2176, 9 },
    };
    for (const auto &c : cases) {
        const QualeVideoFormat f = { QUALE_CHROMA_420, 8, c[0], c[1] };
        FloatSsimState *s = static_cast<FloatSsimState *>(make_state(&metric_float_ssim, "float_ssim", &f, NULL, false));
        char error[256];
        CHECK(s && float_ssim_setup(s, &f, error, sizeof(error)) == 0);
        CHECK(s && s->scale == (int)c[2]);
        if (s && s->scale != (int)c[2])
            fprintf(stderr, "  %ux%u: scale %d, expected %u\n", c[0], c[1], s->scale, c[2]);
        free(s);
    }
}

/* ---- the rest ------------------------------------------------------------- */

static std::string default_tolerance_path()
{
    const char *env = getenv("QUALE_TOLERANCE");
    if (env && *env) return env;
#ifdef QUALE_SOURCE_DIR
    return std::string(QUALE_SOURCE_DIR) + "/tests/tolerance.json";
#else
    std::string here = __FILE__;
    const size_t slash = here.find_last_of('/');
    return (slash == std::string::npos ? std::string(".") : here.substr(0, slash)) +
           "/tolerance.json";
#endif
}

int main(int argc, char **argv)
{
    register_fake_kernels();
    bool quick = false;
    std::string tolerance_path = default_tolerance_path();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--tolerance") && i + 1 < argc) tolerance_path = argv[++i];
    }
    const bool loaded = load_tolerance(tolerance_path.c_str());
    CHECK(loaded);
    if (!loaded) {
        fprintf(stderr, "cannot read the tolerance table %s\n", tolerance_path.c_str());
        return test_summary();
    }

    test_auto_scale();
    test_refusal();
    unsigned index = 0;
    for (const Case &c : fixed_cases) {
        if (!quick || c.w * c.h < 1000000) run_case(c, index);
        index++;
    }
    /* Random sizes, depths, formats, contents and options. */
    for (unsigned i = 0; i < (quick ? 6u : 16u); i++) {
        Case c;
        const bool ms = rng() % 3 == 0;
        c.w = (ms ? 176 : 11) + rng() % (ms ? 90 : 250);
        c.h = (ms ? 176 : 11) + rng() % (ms ? 60 : 200);
        static const unsigned depths[] = { 8, 8, 10, 10, 12, 16 };
        c.bitdepth = depths[rng() % 6];
        static const QualeChroma formats[] = { QUALE_CHROMA_400, QUALE_CHROMA_420,
                                               QUALE_CHROMA_422, QUALE_CHROMA_444 };
        c.chroma = formats[rng() % 4];
        if (c.chroma == QUALE_CHROMA_420 && (c.w % 2 || c.h % 2)) c.chroma = QUALE_CHROMA_444;
        if (c.chroma == QUALE_CHROMA_422 && c.w % 2) c.chroma = QUALE_CHROMA_444;
        c.pattern = (Pattern)(rng() % P_PATTERNS);
        if (c.pattern == P_WIDE && c.bitdepth == 8) c.pattern = P_NOISE;
        c.distortion = (Distortion)(rng() % D_DISTORTIONS);
        c.which = ms ? MS : SSIM;
        /* explicit scales only where the shrunk picture keeps the window */
        unsigned spec = rng() % SSIM_SPECS;
        if (spec >= 5) {
            static const int scale_of[] = { 0, 0, 0, 0, 0, 2, 3, 5, 10 };
            const int f = scale_of[spec];
            if (iqa_decimated_size((int)c.w, f) < IQA_GAUSSIAN_TAPS ||
                iqa_decimated_size((int)c.h, f) < IQA_GAUSSIAN_TAPS)
                spec = rng() % 5;
        }
        c.ssim_options = 1u << spec;
        c.ms_options = 1u << (rng() % MS_SPECS);
        c.frames = 2;
        run_case(c, index++);
    }

    printf("\nworst |twin - CPU| per key (tolerance from %s):\n", tolerance_path.c_str());
    for (const auto &e : key_stats)
        printf("  %-26s %.3g  (tol %g; %u of %u values identical)%s%s\n", e.first.c_str(),
               e.second.worst, tolerance(e.first), e.second.exact, e.second.compared,
               e.second.worst > 0 ? "  at " : "", e.second.worst > 0 ? e.second.where.c_str() : "");
    printf("worst relative difference of the sums (tile order vs raster order): "
           "ssim %.3g, l %.3g, c %.3g, s %.3g\n",
           worst_sum_rel[0], worst_sum_rel[1], worst_sum_rel[2], worst_sum_rel[3]);
    printf("means rounded to float: %u of %u differ from the C reference's\n", means_differing,
           means_compared);
    return test_summary();
}
