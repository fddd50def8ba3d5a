/*
 * GPU parity: every GPU twin against the CPU reference, on the same frames.
 * One program for every backend:
 *
 *   gpu_parity --backend cuda|hip|vulkan --tolerance tests/tolerance.json
 *              [--shared DIR --cache DIR] [--max-frames N] [--quick]
 *
 * It runs each metric that has a twin on the backend, on random frames of
 * awkward sizes and formats (1x1 up to 1919x1081, 8 to 16 bits, every
 * chroma format), under some options other than the defaults, and, when
 * the shared corpus is given, on every corpus pair with the VMAF model,
 * once on the CPU and once on the GPU, and compares every key of every
 * frame with the tolerance table.  A metric that refuses
 * a format must refuse it on both.  Prints the worst key, frame and
 * difference of each case, then "N passed, M failed".  Exits 77 (skip)
 * when the backend is not built or no device is there.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_run.h"
#include "json.h"
#include "quale/quale.h"
#include "synth.h"

typedef struct Rule {
    char pattern[64];
    double tolerance;
} Rule;

static Rule rules[64];
static unsigned rule_count;
static unsigned passed, failed;

static int load_tolerances(const char *path)
{
    char *text = NULL, error[256];
    size_t length;
    if (json_read_file(path, 1 << 20, &text, &length, error, sizeof(error))) {
        fprintf(stderr, "gpu_parity: %s\n", error);
        return -1;
    }
    JsonDocument *doc = NULL;
    JsonError jerr;
    int err = json_parse(&doc, text, length, NULL, &jerr);
    free(text);
    if (err) {
        fprintf(stderr, "gpu_parity: %s:%u:%u: %s\n", path, jerr.line, jerr.column, jerr.message);
        return -1;
    }
    const JsonValue *list = json_object_get(json_document_root(doc), "rules");
    for (size_t i = 0; list && list->type == JSON_ARRAY && i < list->u.array.count && rule_count < 64; i++) {
        const JsonValue *pattern = json_object_get(&list->u.array.items[i], "pattern");
        const JsonValue *abs_tol = json_object_get(&list->u.array.items[i], "abs");
        if (!pattern || pattern->type != JSON_STRING || !abs_tol || abs_tol->type != JSON_NUMBER) continue;
        snprintf(rules[rule_count].pattern, sizeof(rules[0].pattern), "%s", pattern->u.string.chars);
        rules[rule_count++].tolerance = abs_tol->u.number.value;
    }
    json_document_free(&doc);
    return rule_count ? 0 : -1;
}

static double tolerance_of(const char *key)
{
    for (unsigned i = 0; i < rule_count; i++)
        if (!fnmatch(rules[i].pattern, key, 0)) return rules[i].tolerance;
    return 0;
}

/* ---- frames ----------------------------------------------------------- */

typedef struct Clip {
    QualeVideoFormat format;
    unsigned count;
    QualePicture *ref, *dist;
} Clip;

static uint64_t rng_state;

static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

static void clip_free(Clip *c)
{
    for (unsigned i = 0; i < c->count; i++) {
        quale_picture_unref(&c->ref[i]);
        quale_picture_unref(&c->dist[i]);
    }
    free(c->ref);
    free(c->dist);
    memset(c, 0, sizeof(*c));
}

/* The synthetic scene for the reference, plus random noise and random
 * flat patches for the distorted: structure for the metrics to see, and
 * values at both ends of the range. */
static int clip_random(Clip *c, const QualeVideoFormat *f, unsigned frames, uint64_t seed)
{
    memset(c, 0, sizeof(*c));
    c->format = *f;
    c->ref = calloc(frames, sizeof(*c->ref));
    c->dist = calloc(frames, sizeof(*c->dist));
    if (!c->ref || !c->dist) return -ENOMEM;
    rng_state = seed;
    const unsigned max = (1u << f->bitdepth) - 1;
    for (unsigned n = 0; n < frames; n++, c->count++) {
        if (quale_picture_alloc(&c->ref[n], f) || quale_picture_alloc(&c->dist[n], f)) return -ENOMEM;
        synth_reference(&c->ref[n], n * 2 + (unsigned)(seed % 7));
        for (unsigned p = 0; p < c->ref[n].plane_count; p++) {
            for (unsigned y = 0; y < c->ref[n].plane_height[p]; y++) {
                const uint8_t *src = (const uint8_t *)c->ref[n].data[p] + (ptrdiff_t)y * c->ref[n].stride[p];
                uint8_t *dst = (uint8_t *)c->dist[n].data[p] + (ptrdiff_t)y * c->dist[n].stride[p];
                for (unsigned x = 0; x < c->ref[n].plane_width[p]; x++) {
                    int v = f->bitdepth > 8 ? ((const uint16_t *)src)[x] : src[x];
                    const uint32_t r = rng();
                    if ((r & 63) == 0) v = (r >> 8) & 1 ? (int)max : 0; /* extremes */
                    else v += (int)((r >> 8) % 9) - 4;
                    v = v < 0 ? 0 : v > (int)max ? (int)max : v;
                    if (f->bitdepth > 8) ((uint16_t *)dst)[x] = (uint16_t)v;
                    else dst[x] = (uint8_t)v;
                }
            }
        }
    }
    return 0;
}

static int clip_from_files(Clip *c, const char *ref_path, const char *dist_path,
                           const QualeVideoFormat *f, unsigned max_frames)
{
    memset(c, 0, sizeof(*c));
    c->format = *f;
    char error[512];
    QualeVideoReader *r[2] = { NULL, NULL };
    if (quale_video_open(&r[0], ref_path, f, error, sizeof(error)) ||
        quale_video_open(&r[1], dist_path, f, error, sizeof(error))) {
        fprintf(stderr, "gpu_parity: %s\n", error);
        quale_video_close(&r[0]);
        return -1;
    }
    c->ref = calloc(max_frames, sizeof(*c->ref));
    c->dist = calloc(max_frames, sizeof(*c->dist));
    int err = c->ref && c->dist ? 0 : -ENOMEM;
    while (!err && c->count < max_frames) {
        QualePicture a, b;
        if (quale_picture_alloc(&a, f) || quale_picture_alloc(&b, f)) {
            err = -ENOMEM;
            break;
        }
        const int got_a = quale_video_read(r[0], &a), got_b = quale_video_read(r[1], &b);
        if (got_a != 1 || got_b != 1) {
            quale_picture_unref(&a);
            quale_picture_unref(&b);
            break;
        }
        c->ref[c->count] = a;
        c->dist[c->count++] = b;
    }
    quale_video_close(&r[0]);
    quale_video_close(&r[1]);
    return err ? err : c->count ? 0 : -1;
}

/* ---- running one backend ------------------------------------------------ */

typedef ApiRun Result;

static void run(enum QualeBackend backend, const char *const *metrics, unsigned metric_count,
                const char *model, const Clip *clip, Result *r)
{
    *r = (Result){ .backend = backend, .threads = 4, .log_level = QUALE_LOG_WARNING };
    api_run(r, model, metrics, metric_count, clip->ref, clip->dist, clip->count);
}

/* Compares the GPU run with the CPU run; prints one line. */
static void compare(const char *label, const Result *cpu, const Result *gpu)
{
    if (cpu->status || gpu->status) {
        /* A format a metric refuses: both must refuse it. */
        const bool ok = cpu->status && gpu->status;
        printf("%s %s: %s (cpu: %s; gpu: %s)\n", ok ? "ok  " : "FAIL", label,
               ok ? "refused on both" : "only one refused", cpu->status ? cpu->error : "ok",
               gpu->status ? gpu->error : "ok");
        ok ? passed++ : failed++;
        return;
    }
    unsigned problems = 0;
    double worst_ratio = -1, worst_diff = 0;
    const char *worst_key = "";
    unsigned worst_frame = 0;
    for (unsigned k = 0; k < cpu->keys; k++) {
        unsigned g = 0;
        while (g < gpu->keys && strcmp(gpu->names[g], cpu->names[k])) g++;
        if (g == gpu->keys) {
            if (problems++ < 10) printf("     %s: missing on the GPU\n", cpu->names[k]);
            continue;
        }
        const double tol = tolerance_of(cpu->names[k]);
        for (unsigned n = 0; n < cpu->frames; n++) {
            const bool pc = cpu->present[k * cpu->frames + n], pg = gpu->present[g * gpu->frames + n];
            if (pc != pg) {
                if (problems++ < 10) printf("     %s frame %u: present on one side only\n", cpu->names[k], n);
                continue;
            }
            if (!pc) continue;
            const double a = cpu->values[k * cpu->frames + n], b = gpu->values[g * gpu->frames + n];
            /* equal values are no difference, the same infinity included
             * (xpsnr of a frame without error is +inf) */
            const double diff = (isnan(a) && isnan(b)) || a == b ? 0 : fabs(a - b);
            if (!(diff <= tol)) {
                if (problems++ < 10)
                    printf("     %s frame %u: cpu %.17g gpu %.17g |diff| %.3g > %g\n", cpu->names[k], n,
                           a, b, diff, tol);
            }
            const double ratio = tol > 0 ? diff / tol : (diff > 0 ? INFINITY : 0);
            if (ratio > worst_ratio) {
                worst_ratio = ratio;
                worst_diff = diff;
                worst_key = cpu->names[k];
                worst_frame = n;
            }
        }
    }
    printf("%s %s: %u keys, %u frames, worst %s frame %u |diff| %.3g (tol %g)\n",
           problems ? "FAIL" : "ok  ", label, cpu->keys, cpu->frames, worst_key, worst_frame,
           worst_diff, tolerance_of(worst_key));
    problems ? failed++ : passed++;
    fflush(stdout);
}

static void run_case(enum QualeBackend backend, const char *label, const char *const *metrics,
                     unsigned metric_count, const char *model, const Clip *clip)
{
    Result cpu, gpu;
    run(QUALE_BACKEND_CPU, metrics, metric_count, model, clip, &cpu);
    run(backend, metrics, metric_count, model, clip, &gpu);
    compare(label, &cpu, &gpu);
    api_run_free(&cpu);
    api_run_free(&gpu);
}

/* ---- the cases ------------------------------------------------------------ */

static void random_cases(enum QualeBackend backend, const char *const *twins, unsigned twin_count,
                         bool quick)
{
    static const struct { unsigned w, h; } sizes[] = {
        { 1, 1 }, { 2, 2 }, { 3, 3 }, { 17, 9 }, { 33, 65 }, { 64, 64 }, { 176, 144 },
        { 1919, 1081 },
    };
    static const struct { enum QualeChroma chroma; unsigned depth; } formats[] = {
        { QUALE_CHROMA_420, 8 }, { QUALE_CHROMA_420, 10 }, { QUALE_CHROMA_422, 8 },
        { QUALE_CHROMA_444, 12 }, { QUALE_CHROMA_400, 16 }, { QUALE_CHROMA_444, 8 },
    };
    for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        for (unsigned fi = 0; fi < sizeof(formats) / sizeof(formats[0]); fi++) {
            /* The largest size in two formats only: it is the slow one. */
            if (sizes[si].w > 1000 && fi > 1) continue;
            if (quick && fi > 1 && sizes[si].w > 64) continue;
            const QualeVideoFormat f = { formats[fi].chroma, formats[fi].depth, sizes[si].w, sizes[si].h };
            Clip clip;
            if (clip_random(&clip, &f, 4, 1000 * si + fi + 1)) {
                fprintf(stderr, "gpu_parity: out of memory\n");
                failed++;
                clip_free(&clip);
                continue;
            }
            for (unsigned m = 0; m < twin_count; m++) {
                char label[160];
                snprintf(label, sizeof(label), "%s %s %ux%u %s %u-bit", quale_backend_name(backend),
                         twins[m], f.width, f.height, quale_chroma_name(f.chroma), f.bitdepth);
                run_case(backend, label, &twins[m], 1, NULL, &clip);
            }
            clip_free(&clip);
        }
    }
}

/* Twins under options other than their defaults: each spec whose metric
 * has a twin on the backend, on a clip of the size it names (cambi scores
 * nothing narrower and lower than 216).  A spec the twin does not support
 * runs on the CPU on both sides (its supports() is then what is checked:
 * that the run still works). */
static void option_cases(enum QualeBackend backend, const char *const *twins, unsigned twin_count)
{
    static const struct {
        const char *spec;
        unsigned width, height;
    } cases[] = {
        { "float_vif=debug=true:vif_enhn_gain_limit=1.0:vif_sigma_nsq=1.5:vif_scale2_min_val=0.9",
          176, 144 },
        { "float_vif=vif_kernelscale=3.7113402061855671:vif_skip_scale0=true", 176, 144 },
        { "float_vif=vif_kernelscale=0.5:vif_prescale=1.5", 176, 144 },
        { "float_vif=vif_prescale=0.5:vif_prescale_method=bilinear", 176, 144 },
        { "float_adm=debug=true:adm_enhn_gain_limit=1.0:adm_skip_aim_scale=1", 176, 144 },
        { "float_adm=adm_csf_mode=1:adm_bypass_cm=1:adm_adm3_apply_hm=true", 176, 144 },
        { "float_adm=adm_csf_mode=2:adm_skip_scale0=true:adm_noise_weight=0:adm_f2s3=0.2", 176,
          144 },
        { "float_adm=adm_p_norm=2.5", 176, 144 },
        /* resampled pictures of both sizes, the reference scored too */
        { "cambi=full_ref=true:enc_width=360:enc_height=202:src_width=400:src_height=240", 480,
          270 },
        { "cambi=enc_bitdepth=8:max_log_contrast=5:cambi_topk=0.9:full_ref=true", 480, 270 },
        { "cambi=eotf=pq:window_size=127:tvi_threshold=0.1:topk=0.05", 480, 270 },
        /* the v1 models' SpEED, and prescales of both methods the device
         * has (bicubic stays on the CPU) */
        { "speed_chroma=speed_max_val=45:speed_nn_floor=0.1:speed_sigma_nn=0.19:"
          "speed_weight_var_mode=5:speed_prescale=0.6:speed_prescale_method=bilinear",
          640, 360 },
        { "speed_chroma=speed_kernelscale=1.5:speed_weight_var_mode=3:speed_prescale=0.75",
          640, 360 },
        { "speed_chroma=speed_prescale=0.8:speed_prescale_method=bicubic", 640, 360 },
        { "speed_temporal=speed_use_ref_diff=true:speed_sigma_nn=0.5:speed_weight_var_mode=6",
          640, 360 },
        { "speed_temporal=speed_prescale=0.5:speed_prescale_method=bilinear:"
          "speed_kernelscale=0.6666666666666666",
          640, 360 },
        /* xpsnr's temporal term of the second order (from 32 fps up), and
         * the high-pass and temporal terms on 2x2 sums (above 2048x1152);
         * odd sizes there stay on the CPU */
        { "xpsnr=fps=60", 176, 144 },
        { "xpsnr=fps=30", 2304, 1296 },
        { "xpsnr=fps=50:enable_axpsnr=true", 2560, 1440 },
        { "xpsnr=enable_axpsnr=true", 2049, 1153 },
    };
    Clip clip = { 0 };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *spec = cases[i].spec;
        const size_t name_length = strcspn(spec, "=");
        bool has_twin = false;
        for (unsigned m = 0; m < twin_count; m++)
            has_twin |= strlen(twins[m]) == name_length && !strncmp(twins[m], spec, name_length);
        if (!has_twin) continue;
        const QualeVideoFormat f = { QUALE_CHROMA_420, 10, cases[i].width, cases[i].height };
        if (clip.count && (clip.format.width != f.width || clip.format.height != f.height))
            clip_free(&clip);
        if (!clip.count && clip_random(&clip, &f, 4, 4242)) {
            fprintf(stderr, "gpu_parity: out of memory\n");
            failed++;
            clip_free(&clip);
            continue;
        }
        char label[256];
        snprintf(label, sizeof(label), "%s %s %ux%u %s %u-bit", quale_backend_name(backend), spec,
                 f.width, f.height, quale_chroma_name(f.chroma), f.bitdepth);
        run_case(backend, label, &spec, 1, NULL, &clip);
    }
    clip_free(&clip);
}

static void corpus_cases(enum QualeBackend backend, const char *const *twins, unsigned twin_count,
                         const char *shared, const char *cache, unsigned max_frames)
{
    char path[4096], *text = NULL, error[512];
    size_t length;
    snprintf(path, sizeof(path), "%s/corpus/manifest.json", shared);
    if (json_read_file(path, 1 << 22, &text, &length, error, sizeof(error))) {
        printf("corpus: not compared (%s)\n", error);
        return;
    }
    JsonDocument *doc = NULL;
    JsonError jerr;
    if (json_parse(&doc, text, length, NULL, &jerr)) {
        free(text);
        printf("FAIL corpus: %s: %s\n", path, jerr.message);
        failed++;
        return;
    }
    free(text);
    const JsonValue *pairs = json_document_root(doc);
    for (size_t i = 0; pairs->type == JSON_ARRAY && i < pairs->u.array.count; i++) {
        const JsonValue *p = &pairs->u.array.items[i];
        const JsonValue *name = json_object_get(p, "name"), *ref = json_object_get(p, "ref_yuv"),
                        *dis = json_object_get(p, "dis_yuv"), *w = json_object_get(p, "width"),
                        *h = json_object_get(p, "height"), *fmt = json_object_get(p, "vmaf_pixel_format"),
                        *depth = json_object_get(p, "bitdepth");
        if (!name || !ref || !dis || !w || !h || !fmt || !depth) continue;
        const char *f = fmt->u.string.chars;
        const QualeVideoFormat format = {
            !strcmp(f, "444") ? QUALE_CHROMA_444 : !strcmp(f, "422") ? QUALE_CHROMA_422 : QUALE_CHROMA_420,
            (unsigned)depth->u.number.value, (unsigned)w->u.number.value, (unsigned)h->u.number.value,
        };
        char ref_path[4096], dis_path[4096];
        snprintf(ref_path, sizeof(ref_path), "%s/%s", cache, ref->u.string.chars);
        snprintf(dis_path, sizeof(dis_path), "%s/%s", cache, dis->u.string.chars);
        Clip clip;
        if (clip_from_files(&clip, ref_path, dis_path, &format, max_frames)) {
            printf("FAIL %s: cannot read the decoded pair (run the golden test first)\n",
                   name->u.string.chars);
            failed++;
            clip_free(&clip);
            continue;
        }
        /* v0 and v1's default, with every twin beside them */
        static const char *const models[] = { "version=vmaf_v0.6.1", "version=vmaf_v1.0.16_3d0h" };
        for (unsigned m = 0; m < 2; m++) {
            char label[256];
            snprintf(label, sizeof(label), "%s %s (%s + every twin)", quale_backend_name(backend),
                     name->u.string.chars, models[m] + strlen("version="));
            run_case(backend, label, twins, twin_count, models[m], &clip);
        }
        clip_free(&clip);
    }
    json_document_free(&doc);
}

int main(int argc, char **argv)
{
    enum QualeBackend backend = QUALE_BACKEND_CUDA;
    const char *tolerance = NULL, *shared = NULL, *cache = NULL;
    unsigned max_frames = 1000;
    bool quick = false, probe_only = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            backend = !strcmp(b, "vulkan") ? QUALE_BACKEND_VULKAN
                      : !strcmp(b, "hip")  ? QUALE_BACKEND_HIP
                                           : QUALE_BACKEND_CUDA;
        } else if (!strcmp(argv[i], "--tolerance") && i + 1 < argc) {
            tolerance = argv[++i];
        } else if (!strcmp(argv[i], "--shared") && i + 1 < argc) {
            shared = argv[++i];
        } else if (!strcmp(argv[i], "--cache") && i + 1 < argc) {
            cache = argv[++i];
        } else if (!strcmp(argv[i], "--max-frames") && i + 1 < argc) {
            max_frames = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--quick")) {
            quick = true;
        } else if (!strcmp(argv[i], "--probe")) {
            probe_only = true;
        } else {
            fprintf(stderr, "usage: gpu_parity --backend cuda|hip|vulkan --tolerance FILE "
                            "[--shared DIR --cache DIR] [--max-frames N] [--quick]\n");
            return 2;
        }
    }
    if (!tolerance || load_tolerances(tolerance)) {
        fprintf(stderr, "gpu_parity: no tolerance table\n");
        return 2;
    }
    if (!quale_backend_built(backend)) {
        printf("skip: this build has no %s backend\n", quale_backend_name(backend));
        return 77;
    }
    QualeSettings s;
    quale_settings_default(&s);
    s.backend = backend;
    s.log_level = QUALE_LOG_ERROR;
    QualeContext *probe = NULL;
    if (quale_open(&probe, &s)) {
        printf("skip: the %s backend has no device here\n", quale_backend_name(backend));
        return 77;
    }
    quale_close(&probe);
    if (probe_only) {
        printf("the %s backend has a device\n", quale_backend_name(backend));
        return 0;
    }

    const char *twins[64];
    unsigned twin_count = 0;
    for (unsigned i = 0; i < quale_metric_count() && twin_count < 64; i++) {
        QualeMetricInfo info;
        if (!quale_metric_info(i, &info) && (info.backends & (1u << backend))) twins[twin_count++] = info.name;
    }
    printf("%s twins:", quale_backend_name(backend));
    for (unsigned i = 0; i < twin_count; i++) printf(" %s", twins[i]);
    printf("\n");

    random_cases(backend, twins, twin_count, quick);
    option_cases(backend, twins, twin_count);
    if (shared && cache) corpus_cases(backend, twins, twin_count, shared, cache, max_frames);

    printf("%u passed, %u failed\n", passed, failed);
    return failed ? 1 : 0;
}
