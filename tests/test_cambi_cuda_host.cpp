/*
 * The CUDA twin of cambi, run on the CPU: no GPU needed.
 *
 * src/cuda/cambi.cu is included as C++ (src/cuda/cuda_host_compat.h turns
 * the CUDA qualifiers off and its __global__ wrappers are left out); the
 * twin's own host code (src/cuda/cambi_cuda.c, linked from the library)
 * gives the slot layout, the table and every launch of a frame: kernel,
 * grid, shared memory and arguments, exactly what its enqueue() launches.
 * Each launch is emulated here block by block and thread by thread through
 * the very functions the kernels call:
 *   - element kernels run their threads forwards on even frames and
 *     backwards on odd ones, so that a thread reading what another writes
 *     in the same launch would show;
 *   - the c-value kernel runs step by step as the device does: every
 *     thread loads and stores its codes (the ballots made here from the
 *     same bits: bit q % 32 of word q / 32), then every thread applies the
 *     step (the barrier between); its shared memory starts as random bytes
 *     and its warps' statistics go to the scale's with the operations of
 *     the device's atomics.
 * The slot memory starts as random bytes and has a guard zone after it.
 *
 * Against the C reference (cambi_score() with an observer that copies its
 * steps), on random frames with banding (gradients, blocks, stripes,
 * mixtures, noise, flat pictures, samples above the bit depth) of many
 * sizes (1 x 216 and 216 x 1 up to 1920 x 1104), 8 to 16 bits, and the
 * options: the defaults, window_size, topk and cambi_topk, tvi_threshold,
 * max_log_contrast, eotf and cambi_eotf, enc_width / enc_height (resampled
 * pictures), enc_bitdepth (anti-dithering), cambi_vis_lum_threshold,
 * cambi_max_val, cambi_high_res_speedup and full_ref with src_width /
 * src_height; both block widths and several chunkings of the rows:
 *   - the preprocessed picture, its mask, every scale's filtered samples
 *     and codes, exactly;
 *   - the window counts, against counts made here sample by sample, at
 *     sampled places of every scale;
 *   - every c-value, bit for bit, and each scale's statistics (count,
 *     smallest, largest exactly; the sum exactly where pooling uses it);
 *   - the scores through the twin's collect() work (cambi_cuda_scores(),
 *     reading c-values back where pooling needs them) and cambi_write(),
 *     bit for bit against the CPU backend's keys through the public API;
 *   - the twin's plan as the backend runs it: through the executor on the
 *     fake driver (tests/cuda_plan_run.h), its layout from the device's
 *     shared memory, c-values read from the slot by collect(), every key
 *     against the CPU's.
 * Prints "N passed, M failed"; --quick leaves out the largest pictures,
 * --case N runs fixed case N alone.
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
#include "metrics/cambi/cuda/cambi_cuda.h"
#include "metrics/cambi/cambi.h"
#include "metrics/cambi/cambi_tables.h"

#include "metrics/cambi/cuda/cambi.cu"
#include "test.h"

#define QUALE_HOST_TEST_SEED 0xbb67ae8584caa73bull
#include "cuda_host_test.h"
#include "cuda_plan_run.h"
#include "cambi_cases.h"

/* What the coverage checks at the end count. */
static unsigned pooled_from_stats, pooled_from_values, inexact_sums, masked_c_values,
    histogram_checks, idle_steps;

/* ---- random pictures ------------------------------------------------------ */

/* ---- the C reference's steps ----------------------------------------------- */

struct CpuScale {
    unsigned w = 0, h = 0;
    std::vector<uint16_t> image;
    std::vector<uint8_t> mask;
    std::vector<float> c_values;
    CambiNonZero nz = { 0.0, 0, INFINITY, 0.0f };
};

struct CpuPicture {
    unsigned w = 0, h = 0;
    std::vector<uint16_t> image;
    std::vector<uint8_t> mask;
    CpuScale scale[CAMBI_SCALES];
    double score = 0.0;
};

static void observe_preprocessed(void *cookie, const uint16_t *image, const uint8_t *mask,
                                 unsigned w, unsigned h)
{
    CpuPicture *p = static_cast<CpuPicture *>(cookie);
    p->w = w;
    p->h = h;
    p->image.assign(image, image + (size_t)w * h);
    p->mask.assign(mask, mask + (size_t)w * h);
}

static void observe_scale(void *cookie, unsigned scale, const uint16_t *image, const uint8_t *mask,
                          const float *c_values, unsigned w, unsigned h, const CambiNonZero *nz)
{
    CpuScale &s = static_cast<CpuPicture *>(cookie)->scale[scale];
    s.w = w;
    s.h = h;
    s.image.assign(image, image + (size_t)w * h);
    s.mask.assign(mask, mask + (size_t)w * h);
    s.c_values.assign(c_values, c_values + (size_t)w * h);
    s.nz = *nz;
}

/* ---- the twin on the CPU ------------------------------------------------------ */

/* Fills memory the kernels find as they start (slot, shared) with random
 * bytes, from a stream of its own (xorshift64), so that how much memory a
 * plan takes does not move the pictures and cases drawn after it. */
static void random_fill(std::vector<uint8_t> &memory)
{
    static uint64_t state = 0x510e527fade682d1ull;
    size_t i = 0;
    for (; i + 8 <= memory.size(); i += 8) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        memcpy(&memory[i], &state, 8);
    }
    for (; i < memory.size(); i++) memory[i] = (uint8_t)(state >> (8 * (i % 8)));
}

typedef void (*PrepThread)(const CambiPrepArgs &, unsigned, unsigned, unsigned, unsigned,
                           unsigned);

struct PrepKernel {
    const char *name;
    PrepThread thread;
};

static const PrepKernel prep_kernels[] = {
    { "cambi_load_8", cambi_load_thread<uint8_t> },
    { "cambi_load_16", cambi_load_thread<uint16_t> },
    { "cambi_flat_vsum", cambi_vsum_thread },
    { "cambi_mask", cambi_mask_thread },
    { "cambi_scale", cambi_scale_thread },
};

static const PrepKernel *find_prep(const char *name)
{
    for (const PrepKernel &k : prep_kernels)
        if (name && !strcmp(k.name, name)) return &k;
    return NULL;
}

static void emulate_prep(const PrepKernel &k, const CambiPrepArgs &a, const unsigned launch[4],
                         bool backwards)
{
    const unsigned gx = launch[0], gy = launch[1], bd = launch[2];
    for (unsigned iy = 0; iy < gy; iy++) {
        const unsigned by = backwards ? gy - 1 - iy : iy;
        for (unsigned ix = 0; ix < gx; ix++) {
            const unsigned bx = backwards ? gx - 1 - ix : ix;
            for (unsigned it = 0; it < bd; it++)
                k.thread(a, bx, by, gy, backwards ? bd - 1 - it : it, bd);
        }
    }
}

/* The window counts of sample (x, i) of a scale of the C reference, made
 * sample by sample: counts[r] for band row r. */
static void brute_counts(const CpuScale &s, const CambiContrast &k, unsigned window, unsigned x,
                         unsigned i, std::vector<unsigned> &counts)
{
    counts.assign((size_t)k.band_size, 0);
    const int pad = (int)window / 2;
    for (int y = (int)i - pad; y <= (int)i + pad; y++) {
        if (y < 0 || y >= (int)s.h) continue;
        for (int c = (int)x - pad; c <= (int)x + pad; c++) {
            if (c < 0 || c >= (int)s.w) continue;
            const size_t at = (size_t)y * s.w + (size_t)c;
            if (!s.mask[at]) continue;
            const int r = (int)s.image[at] - k.band_base;
            if (r >= 0 && r < k.band_size) counts[(size_t)r]++;
        }
    }
}

/* One c-value launch, block by block, step by step.  cpu (the reference's
 * scales, when given) gives the counts that sampled places must hold. */
template <int S>
static bool emulate_c_values(const CambiCArgs &a, const unsigned launch[4], bool backwards,
                             const CpuPicture *cpu, const char *label)
{
    bool ok = true;
    const unsigned blocks = launch[0], shared_bytes = launch[3];
    const unsigned span_guard = 64;
    std::vector<uint8_t> shared(shared_bytes + span_guard);
    std::vector<unsigned> counts;
    unsigned check_every = 0, visited = 0;
    {
        size_t samples = 0;
        for (unsigned s = 0; s < CAMBI_SCALES; s++) samples += (size_t)a.scale[s].sw * a.scale[s].sh;
        check_every = (unsigned)(samples / 400 + 1);
    }
    for (unsigned ib = 0; ib < blocks; ib++) {
        const unsigned block = backwards ? blocks - 1 - ib : ib;
        random_fill(shared);
        const std::vector<uint8_t> guard(shared.end() - span_guard, shared.end());
        uint16_t *bins = (uint16_t *)shared.data();
        CambiStepRows *rows = (CambiStepRows *)(shared.data() + a.bins_bytes);
        const CambiBlock b = cambi_block(a, block, S);
        const CambiScaleJob &job = a.scale[b.scale];
        const CpuScale *ref = cpu ? &cpu->scale[b.scale] : nullptr;
        if (b.i0 >= job.sh || b.x0 >= job.sw) {
            fprintf(stderr, "  %s: block %u is outside its scale\n", label, block);
            return false;
        }

        for (unsigned it = 0; it < S; it++) cambi_clear_bins<S>(a, bins, backwards ? S - 1 - it : it);
        std::vector<CambiNonZero> nz(S, CambiNonZero{ 0.0, 0, INFINITY, 0.0f });
        std::vector<CambiStepCodes<S>> next(S);
        for (unsigned t = 0; t < S; t++) cambi_step_load<S>(a, b, b.istart, t, next[t]);
        for (int i = b.istart; i < (int)b.i1; i++) {
            const unsigned buffer = (unsigned)(i - b.istart) & 1;
            /* Phase 1: codes, run starts (the ballots), the next loads. */
            memset(rows->starts[buffer], 0, sizeof(rows->starts[buffer]));
            std::vector<unsigned> own(S);
            bool active = false;
            for (unsigned it = 0; it < S; it++) {
                const unsigned t = backwards ? S - 1 - it : it;
                unsigned starts[2];
                active = cambi_step_store<S>(next[t], t, rows->codes[buffer], starts) || active;
                for (int r = 0; r < 2; r++)
                    for (int k = 0; k < CAMBI_SPAN / S; k++) {
                        const unsigned q = t + (unsigned)k * S;
                        if ((starts[r] >> k) & 1) rows->starts[buffer][r][q / 32] |= 1u << (q % 32);
                    }
                own[t] = next[t].own;
                if (i + 1 < (int)b.i1) cambi_step_load<S>(a, b, i + 1, t, next[t]);
            }
            /* __syncthreads_or(any); phase 2 */
            idle_steps += !active;
            for (unsigned it = 0; it < S; it++) {
                const unsigned t = backwards ? S - 1 - it : it;
                cambi_step_apply<S>(a, b, i, t, bins, rows->codes[buffer], rows->starts[buffer],
                                    own[t], active, &nz[t]);
            }
            if (i < (int)b.i0 || !ref) continue;
            /* The counts of sampled columns against counts made here. */
            for (unsigned t = 0; t < S; t++) {
                const unsigned x = b.x0 + t;
                if (x >= job.sw || ++visited % check_every) continue;
                histogram_checks++;
                brute_counts(*ref, a.contrast, a.window, x, (unsigned)i, counts);
                const uint16_t *col = bins + cambi_lane_column<S>(t);
                unsigned bad = 0, first = 0;
                for (int r = 0; r < a.contrast.band_size; r++) {
                    if (col[(size_t)r * S] != counts[(size_t)r]) {
                        if (!bad) first = (unsigned)r;
                        bad++;
                    }
                }
                CHECK(bad == 0);
                if (bad) {
                    fprintf(stderr, "  %s: scale %u (%u, %d): %u counts differ, first band row %u: "
                                    "%u, expected %u\n", label, b.scale, x, i, bad, first,
                            col[(size_t)first * S], counts[first]);
                    ok = false;
                }
            }
        }
        if (memcmp(guard.data(), shared.data() + shared_bytes, span_guard) != 0) {
            fprintf(stderr, "  %s: block %u wrote past its shared memory\n", label, block);
            ok = false;
        }
        /* Each warp's statistics, then the device's atomics. */
        for (unsigned warp = 0; warp < S / 32; warp++) {
            CambiNonZero sum = { 0.0, 0, INFINITY, 0.0f };
            for (unsigned lane = 0; lane < 32; lane++) {
                const CambiNonZero &n = nz[warp * 32 + lane];
                sum.sum += n.sum;
                sum.count += n.count;
                sum.smallest = fminf(sum.smallest, n.smallest);
                sum.largest = fmaxf(sum.largest, n.largest);
            }
            if (!sum.count) continue;
            CambiScaleStats *st = job.stats;
            unsigned smallest, largest;
            memcpy(&smallest, &sum.smallest, 4);
            memcpy(&largest, &sum.largest, 4);
            st->sum += sum.sum;
            st->count += sum.count;
            if (smallest < st->smallest) st->smallest = smallest;
            if (largest > st->largest) st->largest = largest;
        }
    }
    return ok;
}

/* ---- comparisons --------------------------------------------------------------- */

template <typename T>
static bool same_plane(const T *twin, const std::vector<T> &cpu, unsigned w, unsigned h,
                       const char *label, const char *what)
{
    for (unsigned y = 0; y < h; y++) {
        for (unsigned x = 0; x < w; x++) {
            const size_t at = (size_t)y * w + x;
            if (memcmp(&twin[at], &cpu[at], sizeof(T)) != 0) {
                fprintf(stderr, "  %s: %s differs at (%u, %u): twin %.9g, CPU %.9g\n", label, what,
                        x, y, (double)twin[at], (double)cpu[at]);
                return false;
            }
        }
    }
    return true;
}

static bool same_value(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

struct Emulation {
    std::vector<uint8_t> slot, table;
    const CambiPlan *plan = nullptr;
};

static int fetch_from_slot(void *cookie, size_t offset, void *dst, size_t bytes, char *, size_t)
{
    const Emulation *e = static_cast<const Emulation *>(cookie);
    if (offset + bytes > cambi_cuda_slot(e->plan)->bytes) return -EFAULT;
    memcpy(dst, e->slot.data() + offset, bytes);
    return 0;
}

static const size_t GUARD = 4096;

/* The last launch's c-values of every scale and their statistics against
 * the C reference's (the pooling counters: which scales pool from the
 * statistics alone). */
static bool same_c_values(const CambiState *s, const CambiCArgs &args, const CpuPicture &c,
                          const char *label)
{
    bool ok = true;
    for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
        const CpuScale &cs = c.scale[sc];
        const CambiScaleJob &job = args.scale[sc];
        char what[64];
        snprintf(what, sizeof(what), "the c-values of scale %u", sc);
        const bool same = same_plane((const float *)(uintptr_t)job.c_values, cs.c_values,
                                     cs.w, cs.h, label, what);
        CHECK(same);
        for (float v : cs.c_values) masked_c_values += v > 0.0f;
        const CambiScaleStats *st = (const CambiScaleStats *)(uintptr_t)job.stats;
        float smallest, largest;
        memcpy(&smallest, &st->smallest, 4);
        memcpy(&largest, &st->largest, 4);
        const bool needs = cambi_pool_needs_values(cs.w, cs.h, s->pool_topk, &cs.nz);
        const bool stats_ok = st->count == cs.nz.count &&
                              memcmp(&smallest, &cs.nz.smallest, 4) == 0 &&
                              memcmp(&largest, &cs.nz.largest, 4) == 0 &&
                              (needs || same_value(st->sum, cs.nz.sum));
        CHECK(stats_ok);
        if (!stats_ok)
            fprintf(stderr, "  %s: scale %u statistics: twin %u %.9g %.9g %.17g, CPU %u "
                            "%.9g %.9g %.17g\n", label, sc, st->count, smallest, largest,
                    st->sum, cs.nz.count, cs.nz.smallest, cs.nz.largest, cs.nz.sum);
        ok = ok && same && stats_ok;
        if (needs) {
            pooled_from_values++;
            const int kk = (int)(s->pool_topk * (int)(cs.w * cs.h));
            if (cs.nz.count <= (unsigned)(kk < 1 ? 1 : kk)) inexact_sums++;
        } else {
            pooled_from_stats++;
        }
    }
    return ok;
}

/*
 * The frame through every launch of the twin, checking each picture's
 * planes against the C reference's after the launch that makes them;
 * score[] from the twin's pooling.  False if a launch names a kernel that
 * does not exist or is impossible, or something differs.
 */
static bool twin_frame(const CambiState *s, const CambiPlan *plan, const QualePicture *ref,
                       const QualePicture *dist, bool backwards, const CpuPicture cpu[2],
                       double score[2], const char *label)
{
    Emulation e;
    e.plan = plan;
    const size_t bytes = cambi_cuda_slot(plan)->bytes;
    e.slot.resize(bytes + GUARD);
    random_fill(e.slot);
    const std::vector<uint8_t> guard(e.slot.end() - GUARD, e.slot.end());
    e.table.resize(cambi_cuda_table_bytes(plan));
    cambi_cuda_table_fill(plan, e.table.data());
    CHECK(memcmp(e.table.data(), cambi_reciprocal, sizeof(cambi_reciprocal)) == 0);
    uint8_t *slot = e.slot.data();

    bool ok = true;
    const unsigned steps = cambi_cuda_slot(plan)->steps;
    CHECK(steps == (s->full_ref ? 18u : 9u));
    for (unsigned i = 0; i < steps && ok; i++) {
        union {
            CambiPrepArgs prep;
            CambiCArgs c;
        } a;
        unsigned launch[4];
        const char *name = cambi_cuda_step(plan, i, (uint64_t)(uintptr_t)slot,
                                           (uint64_t)(uintptr_t)e.table.data(),
                                           (uint64_t)(uintptr_t)ref->data[0],
                                           (uint64_t)(uintptr_t)dist->data[0],
                                           (uint64_t)ref->stride[0], launch, &a);
        const unsigned picture = i / 9, part = i % 9;
        const CpuPicture &c = cpu[picture];
        const bool c_values = name && !strncmp(name, "cambi_c_values_", 15);
        const PrepKernel *k = find_prep(name);
        const unsigned threads = c_values ? (name[15] == '6' ? 64u : 32u) : CAMBI_THREADS;
        /* At most the device's grid, the kernel's launch bounds and an
         * H100's shared memory per block (227 KB). */
        if ((!k && !c_values) || launch[0] == 0 || launch[1] == 0 || launch[1] > 65535 ||
            launch[2] != threads || launch[3] > 227 * 1024 || (c_values != (part == 8)) ||
            (!c_values && launch[3] != 0)) {
            fprintf(stderr, "  %s: step %u: kernel %s, launch %u x %u x %u, %u bytes\n", label, i,
                    name ? name : "(none)", launch[0], launch[1], launch[2], launch[3]);
            ok = false;
            break;
        }
        if (c_values) {
            /* every block of every scale, once */
            unsigned expected = 0;
            for (unsigned sc = 0; sc < CAMBI_SCALES; sc++) {
                const CambiScaleJob &job = a.c.scale[sc];
                CHECK(job.first_block == expected);
                CHECK(job.strips * threads >= job.sw && (job.strips - 1) * threads < job.sw);
                CHECK(job.chunks * a.c.chunk_rows >= job.sh &&
                      (job.chunks - 1) * a.c.chunk_rows < job.sh);
                expected += job.strips * job.chunks;
            }
            CHECK(expected == launch[0]);
            CHECK(launch[3] == a.c.bins_bytes + sizeof(CambiStepRows));
            CHECK(a.c.bins_bytes >= (size_t)s->contrast.band_size * threads * 2);
            ok = threads == 64 ? emulate_c_values<64>(a.c, launch, backwards, &c, label)
                               : emulate_c_values<32>(a.c, launch, backwards, &c, label);
        } else {
            emulate_prep(*k, a.prep, launch, backwards);
        }

        const CambiPrepArgs &p = a.prep;
        if (part == 2) {
            ok = ok && same_plane((const uint16_t *)(uintptr_t)p.image, c.image, c.w, c.h, label,
                                  "the preprocessed picture");
            ok = ok && same_plane((const uint8_t *)(uintptr_t)p.mask, c.mask, c.w, c.h, label,
                                  "the mask");
            CHECK(ok);
        } else if (part >= 3 && part < 8) {
            const CpuScale &sc = c.scale[part - 3];
            ok = ok && p.sw == sc.w && p.sh == sc.h;
            ok = ok && same_plane((const uint16_t *)(uintptr_t)p.scale_out, sc.image, sc.w, sc.h,
                                  label, "a filtered scale");
            std::vector<uint16_t> codes(sc.image.size());
            for (size_t at = 0; at < codes.size(); at++) {
                const int r = (int)sc.image[at] - s->contrast.band_base;
                codes[at] = (uint16_t)(sc.mask[at] && r >= 0 && r < s->contrast.band_size
                                           ? (unsigned)r
                                           : CAMBI_INVALID);
            }
            ok = ok && same_plane((const uint16_t *)(uintptr_t)p.codes, codes, sc.w, sc.h, label,
                                  "the codes of a scale");
            CHECK(ok);
        } else if (part == 8 && ok) {
            ok = same_c_values(s, a.c, c, label);
        }
    }
    if (cambi_cuda_step(plan, steps, 0, 0, 0, 0, 0, NULL, NULL) != NULL) ok = false;
    if (memcmp(guard.data(), slot + bytes, GUARD) != 0) {
        fprintf(stderr, "  %s: the kernels wrote past the slot\n", label);
        ok = false;
    }
    char error[256] = "";
    const int err = cambi_cuda_scores(plan, slot + cambi_cuda_slot(plan)->readback_offset, fetch_from_slot,
                                      &e, score, error, sizeof(error));
    if (err) {
        fprintf(stderr, "  %s: pooling failed: %s\n", label, error);
        ok = false;
    }
    return ok;
}

/* ---- the twin's plan through the executor ------------------------------------- */

/* The kernels on the fake driver (tests/cuda_plan_run.h): the emulations
 * above, given what the executor launches. */
static bool fake_backwards, fake_ok = true;
/* c-value reads collect() made through the executor (cuda_plan_read_slot):
 * readbacks past the one of statistics per frame */
static unsigned executor_slot_reads;

static void fake_prep_kernel(const FakeLaunch *l)
{
    const unsigned launch[4] = { l->grid[0], l->grid[1], l->block, l->shared_bytes };
    emulate_prep(*static_cast<const PrepKernel *>(l->user),
                 *static_cast<const CambiPrepArgs *>(l->args), launch, fake_backwards);
}

template <int S>
static void fake_c_values_kernel(const FakeLaunch *l)
{
    const unsigned launch[4] = { l->grid[0], l->grid[1], l->block, l->shared_bytes };
    if (l->block != S ||
        !emulate_c_values<S>(*static_cast<const CambiCArgs *>(l->args), launch, fake_backwards,
                             nullptr, "the plan executor"))
        fake_ok = false;
}

extern "C" const CudaTwin cuda_twin_cambi;

static void register_fake_kernels()
{
    for (const PrepKernel &k : prep_kernels) fake_kernel_with(k.name, fake_prep_kernel, &k);
    fake_kernel("cambi_c_values_64", fake_c_values_kernel<64>);
    fake_kernel("cambi_c_values_32", fake_c_values_kernel<32>);
}

/* ---- cases ------------------------------------------------------------------- */

static std::string spec_for(unsigned o, unsigned w, unsigned h)
{
    char spec[256];
    cambi_option_spec(spec, sizeof(spec), o, w, h);
    return spec;
}

typedef CambiCase Case;

/* Block widths and chunkings of the c-value launch: an H200 (3 blocks on
 * each of 132 SMs), a small device (few blocks at once: long chunks) and
 * a huge one (chunks of a few rows). */
struct Layout {
    unsigned strip, resident;
};
static const Layout layouts[] = { { 64, 396 }, { 32, 7 }, { 64, 100000 }, { 32, 0 } };

/* The twin as the backend runs it: its plan through the executor, the
 * layout from the (fake) device's shared memory, every key against the
 * CPU's run (ctx). */
static void check_executor(const Case &c, unsigned index, const std::string &spec,
                           const QualeVideoFormat &format, std::vector<QualePicture> &refs,
                           std::vector<QualePicture> &dists, QualeContext *ctx)
{
    QualeSettings ds;
    quale_settings_default(&ds);
    ds.threads = 1;
    QualeContext *aux = NULL;
    CHECK(quale_open(&aux, &ds) == 0);
    void *run_state = aux ? make_state(&metric_cambi, spec.c_str(), &format, aux) : NULL;
    CHECK(run_state != NULL);
    if (run_state) {
        char label[256];
        snprintf(label, sizeof(label), "case %u: %ux%u %u-bit, %s, through the plan executor",
                 index, c.w, c.h, c.bitdepth, spec.c_str());
        fake_ok = true;
        const bool same = plan_run_matches_cpu(cuda_twin_cambi, metric_cambi, run_state, refs,
                                               dists, context_sink(aux), ctx, label,
                                               &fake_backwards);
        CHECK(same && fake_ok);
        CHECK(fake.readbacks >= c.frames);
        executor_slot_reads += fake.readbacks - c.frames;
        /* the c-value kernel asked for its shared memory beyond the
         * default */
        const unsigned shared =
            cambi_cuda_shared_bytes(static_cast<CambiState *>(run_state), 64);
        CHECK(fake.largest_shared ==
              (shared > CUDA_DEFAULT_SHARED_BYTES ? (int)shared : 0));
        printf("%s %s\n", same && fake_ok ? "ok  " : "FAIL", label);
    }
    free(run_state);
    quale_close(&aux);
}

static void run_case(const Case &c, unsigned index, unsigned layout_mask)
{
    const QualeVideoFormat format = { c.chroma, c.bitdepth, c.w, c.h };
    std::vector<QualePicture> refs(c.frames), dists(c.frames);
    for (unsigned f = 0; f < c.frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        cambi_fill_picture(&refs[f], c.ref);
        cambi_fill_picture(&dists[f], f % 2 ? c.ref : c.dist);
    }

    for (unsigned o = 0; o < CAMBI_OPTION_SETS; o++) {
        if (!(c.options & (1u << o))) continue;
        const std::string spec = spec_for(o, c.w, c.h);

        QualeContext *ctx = NULL;
        const int run_err = cpu_run(&ctx, spec.c_str(), refs, dists);
        QualeContext *declare_ctx = NULL;
        QualeSettings ds;
        quale_settings_default(&ds);
        ds.threads = 1;
        CHECK(quale_open(&declare_ctx, &ds) == 0);
        CambiState *s =
            static_cast<CambiState *>(make_state(&metric_cambi, spec.c_str(), &format, declare_ctx));
        /* A state the CPU refuses is never given to the twin. */
        CHECK((run_err == 0) == (s != NULL));
        if (run_err || !s) {
            printf("ok   case %u: %ux%u %u-bit, %s: refused by the CPU (%s)\n", index, c.w, c.h,
                   c.bitdepth, spec.c_str(), messages.empty() ? "?" : messages[0].c_str());
            free(s);
            quale_close(&declare_ctx);
            quale_close(&ctx);
            continue;
        }
        void *scratch = NULL;
        CHECK(metric_cambi.scratch_alloc(s, &scratch) == 0);
        const unsigned keys = quale_feature_count(ctx);
        CHECK(keys == (s->full_ref ? 3u : 1u));
        CHECK(quale_feature_count(declare_ctx) == keys);

        for (unsigned l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
            if (!(layout_mask & (1u << l))) continue;
            char label[256];
            snprintf(label, sizeof(label), "case %u: %ux%u %u-bit %s/%s, %s, strip %u, %u resident",
                     index, c.w, c.h, c.bitdepth, cambi_pattern_names[c.dist],
                     cambi_pattern_names[c.ref], spec.c_str(), layouts[l].strip,
                     layouts[l].resident);
            const unsigned failed_before = test_failed;
            CambiPlan *plan = cambi_cuda_plan_new(s, &format, layouts[l].strip, layouts[l].resident);
            CHECK(plan != NULL);
            if (!plan) continue;
            CHECK(cambi_cuda_shared_bytes(s, layouts[l].strip) ==
                  (unsigned)(((size_t)s->contrast.band_size * layouts[l].strip * 2 + 15) / 16 * 16 +
                             sizeof(CambiStepRows)));

            for (unsigned f = 0; f < c.frames; f++) {
                CpuPicture cpu[2];
                const CambiObserver observer[2] = {
                    { &cpu[0], observe_preprocessed, observe_scale },
                    { &cpu[1], observe_preprocessed, observe_scale },
                };
                cpu[0].score = cambi_score(s, &s->dist, &dists[f], scratch, &observer[0]);
                if (s->full_ref) cpu[1].score = cambi_score(s, &s->ref, &refs[f], scratch, &observer[1]);

                double score[2] = { NAN, NAN };
                const bool ok = twin_frame(s, plan, &refs[f], &dists[f], (f + l) % 2 == 1, cpu,
                                           score, label);
                CHECK(ok);
                for (unsigned k = 0; k < (s->full_ref ? 2u : 1u); k++) {
                    CHECK(same_value(score[k], cpu[k].score));
                    if (!same_value(score[k], cpu[k].score))
                        fprintf(stderr, "  %s, frame %u, picture %u: twin %.17g, CPU %.17g\n",
                                label, f, k, score[k], cpu[k].score);
                }
                /* The keys, through what collect() writes them with. */
                CHECK(cambi_write(s, context_sink(declare_ctx), f, score[0], score[1]) == 0);
                for (unsigned k = 0; k < keys; k++) {
                    const char *key = quale_feature_name(ctx, k);
                    const char *twin_key = quale_feature_name(declare_ctx, k);
                    double cpu_value = NAN, twin_value = NAN;
                    CHECK(quale_feature_value(ctx, key, f, &cpu_value) == 0);
                    CHECK(quale_feature_value(declare_ctx, twin_key, f, &twin_value) == 0);
                    CHECK(same_value(cpu_value, twin_value));
                    if (!same_value(cpu_value, twin_value))
                        fprintf(stderr, "  %s, frame %u, %s: twin %.17g, CPU %.17g\n", label, f,
                                key ? key : "?", twin_value, cpu_value);
                }
            }
            printf("%s %s\n", test_failed == failed_before ? "ok  " : "FAIL", label);
            fflush(stdout);
            free(plan);
        }
        check_executor(c, index, spec, format, refs, dists, ctx);
        metric_cambi.scratch_free(scratch);
        free(s);
        quale_close(&declare_ctx);
        quale_close(&ctx);
    }
    free_frames(refs, dists);
}

/* ---- the rest ------------------------------------------------------------------ */

/* The shared functions the kernels call, at their edges. */
static void test_elements()
{
    /* the mode of three: the shared value, else the smallest */
    CHECK(cambi_mode3(5, 5, 1) == 5 && cambi_mode3(1, 5, 5) == 5 && cambi_mode3(5, 1, 5) == 5);
    CHECK(cambi_mode3(7, 3, 9) == 3 && cambi_mode3(9, 7, 3) == 3);
    CHECK(cambi_to_10bit(255, 8) == 1020 && cambi_to_10bit(511, 9) == 1022);
    CHECK(cambi_to_10bit(1023, 10) == 1023 && cambi_to_10bit(4095, 12) == 1024);
    CHECK(cambi_to_10bit(65535, 16) == 1024);
    /* lane columns: a permutation of 0 .. S - 1 whose threads of a warp
     * each use a different 32-bit word of a counter row */
    for (unsigned strip : { 32u, 64u }) {
        std::vector<unsigned> seen(strip, 0);
        for (unsigned t = 0; t < strip; t++)
            seen[strip == 64 ? cambi_lane_column<64>(t) : cambi_lane_column<32>(t)]++;
        bool permutation = true;
        for (unsigned v : seen) permutation = permutation && v == 1;
        CHECK(permutation);
    }
    for (unsigned t = 0; t < 32; t++) CHECK(cambi_lane_column<64>(t) / 2 == t);
    /* runs: a window of 65 codes in 6 runs, invalid ones skipped */
    uint16_t codes[CAMBI_SPAN];
    for (unsigned q = 0; q < CAMBI_SPAN; q++)
        codes[q] = (uint16_t)(q < 10 ? 3 : q < 11 ? 4 : q < 40 ? CAMBI_INVALID : q < 64 ? 3 : 7);
    uint32_t starts[CAMBI_SPAN_WORDS] = { 0, 0, 0, 0 };
    for (unsigned q = 1; q < CAMBI_SPAN; q++)
        if (codes[q] != codes[q - 1]) starts[q / 32] |= 1u << (q % 32);
    std::vector<uint16_t> bins(8 * 64, 0);
    for (unsigned t : { 0u, 5u, 63u }) {
        std::fill(bins.begin(), bins.end(), 0);
        uint16_t *col = bins.data() + cambi_lane_column<64>(t);
        cambi_add_runs<64>(col, codes, starts, t, 65, 1);
        unsigned expected[8] = { 0 };
        for (unsigned q = t; q < t + 65; q++)
            if (codes[q] != CAMBI_INVALID) expected[codes[q]]++;
        bool same = true;
        for (unsigned r = 0; r < 8; r++) same = same && col[r * 64] == expected[r];
        CHECK(same);
        cambi_add_runs<64>(col, codes, starts, t, 65, -1);
        for (unsigned r = 0; r < 8; r++) CHECK(col[r * 64] == 0);
    }
}

int main(int argc, char **argv)
{
    /* --quick: leave out the largest pictures */
    const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    /* --case N: only fixed case N (to look into one) */
    const int only = argc > 2 && !strcmp(argv[1], "--case") ? atoi(argv[2]) : -1;
    test_elements();
    register_fake_kernels();
    unsigned index = 0;
    for (const Case &c : cambi_fixed_cases) {
        if ((only < 0 && (!quick || !c.large)) || (int)index == only)
            run_case(c, index, c.large ? 1u : c.w * c.h > 100000 ? 3u : 15u);
        index++;
    }
    if (only >= 0) return test_summary();
    /* Random sizes, depths, contents and options. */
    for (unsigned i = 0; i < 24; i++) {
        const Case c = cambi_random_case();
        run_case(c, index++, 1u << (rng() % 4));
    }
    /* The cases reached both ways of pooling, and sums that are not
     * exact in every order. */
    printf("scales pooled from statistics %u, from c-values %u (%u of them inexact sums); "
           "%u non-zero c-values, %u window counts checked, %u idle block steps\n",
           pooled_from_stats, pooled_from_values, inexact_sums, masked_c_values,
           histogram_checks, idle_steps);
    CHECK(pooled_from_stats > 0 && pooled_from_values > 0 && masked_c_values > 1000);
    printf("c-values read from the slot through the plan executor: %u times\n",
           executor_slot_reads);
    CHECK(executor_slot_reads > 0);
    CHECK(histogram_checks > 1000 && idle_steps > 1000);
    if (!quick) CHECK(inexact_sums > 0);
    return test_summary();
}
