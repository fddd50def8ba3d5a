/*
 * cambi's Vulkan twin against the C reference, through the public API:
 * every key of every frame, bit for bit, on the pictures and option sets
 * of tests/cambi_cases.h (banded patterns of every kind, thin and large
 * pictures, 8 to 16 bits, samples above the bit depth; every option the
 * twin takes: windows, topk, thresholds, contrasts, EOTFs, full_ref with
 * source sizes, encoding sizes (resampling), anti-dithering, the high-res
 * speed-up).  Every other case runs its frames on three lanes (the twin
 * keeps its scales per lane), and two cases in three cut the c-value
 * blocks' rows into chunks (QUALE_VULKAN_CAMBI_BLOCKS: long and short
 * ones), which a CPU device does not do by itself.
 *
 * The twin must have run (no "runs on the CPU" message), and the cases
 * must reach both ways the twin pools a picture: from the statistics the
 * device wrote, and (where pooling needs the c-values themselves) by the
 * C reference on the CPU, which the twin logs at debug level.
 *
 * Exits 77 (skip) when no Vulkan device is present.  --quick leaves out
 * the largest pictures; --case N runs fixed case N alone.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_run.h"
#include "quale/quale.h"
#include "test.h"

/* xorshift64: the same pictures on every platform. */
static uint64_t rng_state = 0x3c6ef372fe94f82bull;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

#include "cambi_cases.h"

/* What the messages of a run say. */
typedef struct Messages {
    unsigned on_cpu;     /* "runs on the CPU": no twin was used */
    unsigned cpu_pooled; /* pictures the twin pooled from their c-values */
} Messages;

static void count_message(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)level;
    Messages *m = cookie;
    if (strstr(message, "runs on the CPU")) m->on_cpu++;
    if (strstr(message, "pooled from its c-values")) m->cpu_pooled++;
}

static void run(enum QualeBackend backend, const char *spec, const QualePicture *refs,
                const QualePicture *dists, unsigned frames, ApiRun *r, Messages *m)
{
    *m = (Messages){ 0, 0 };
    *r = (ApiRun){ .backend = backend, .threads = 2, .log_level = QUALE_LOG_DEBUG,
                   .on_message = count_message, .cookie = m };
    api_run(r, NULL, &spec, 1, refs, dists, frames);
}

static bool same_value(double a, double b)
{
    return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof(a));
}

static unsigned pooled_on_device, pooled_on_cpu, nonzero_scores;

static void run_case(const CambiCase *c, unsigned index)
{
    const QualeVideoFormat format = { c->chroma, c->bitdepth, c->w, c->h };
    QualePicture refs[2], dists[2];
    CHECK(c->frames <= 2);
    if (c->frames > 2) return;
    for (unsigned f = 0; f < c->frames; f++) {
        CHECK(quale_picture_alloc(&refs[f], &format) == 0);
        CHECK(quale_picture_alloc(&dists[f], &format) == 0);
        cambi_fill_picture(&refs[f], c->ref);
        cambi_fill_picture(&dists[f], f % 2 ? c->ref : c->dist);
    }
    /* Three lanes on one queue (lavapipe's) or several; the c-value
     * blocks chunked as for a device running 7 of them at once (long
     * chunks), or 100000 (a few rows each), besides the device's own
     * (lavapipe: a chunk a strip). */
    setenv("QUALE_VULKAN_LANES", index % 2 ? "3" : "", 1);
    setenv("QUALE_VULKAN_CAMBI_BLOCKS", index % 3 == 1 ? "7" : index % 3 == 2 ? "100000" : "", 1);
    for (unsigned o = 0; o < CAMBI_OPTION_SETS; o++) {
        if (!(c->options & CAMBI_SET(o))) continue;
        char spec[256], label[384];
        cambi_option_spec(spec, sizeof(spec), o, c->w, c->h);
        snprintf(label, sizeof(label), "case %u: %ux%u %u-bit %s/%s, %s", index, c->w, c->h,
                 c->bitdepth, cambi_pattern_names[c->dist], cambi_pattern_names[c->ref], spec);
        ApiRun cpu, gpu;
        Messages cpu_messages, gpu_messages;
        run(QUALE_BACKEND_CPU, spec, refs, dists, c->frames, &cpu, &cpu_messages);
        run(QUALE_BACKEND_VULKAN, spec, refs, dists, c->frames, &gpu, &gpu_messages);
        const unsigned failed_before = test_failed;
        CHECK((cpu.status == 0) == (gpu.status == 0));
        if (cpu.status || gpu.status) {
            printf("%s %s: refused (cpu: %s; vulkan: %s)\n",
                   test_failed == failed_before ? "ok  " : "FAIL", label,
                   cpu.status ? cpu.error : "ok", gpu.status ? gpu.error : "ok");
            api_run_free(&cpu);
            api_run_free(&gpu);
            continue;
        }
        CHECK(gpu_messages.on_cpu == 0);
        CHECK(cpu.keys == gpu.keys && cpu.keys >= 1);
        for (unsigned k = 0; k < cpu.keys && k < gpu.keys; k++) {
            CHECK_STR(cpu.names[k], gpu.names[k]);
            for (unsigned n = 0; n < c->frames; n++) {
                const size_t at = (size_t)k * c->frames + n;
                CHECK(cpu.present[at] && gpu.present[at]);
                const bool same = same_value(cpu.values[at], gpu.values[at]);
                CHECK(same);
                if (!same)
                    fprintf(stderr, "  %s, frame %u, %s: vulkan %.17g, cpu %.17g\n", label, n,
                            cpu.names[k], gpu.values[at], cpu.values[at]);
                nonzero_scores += cpu.values[at] != 0.0;
            }
        }
        /* Pictures: each frame's distorted one, and with full_ref its
         * reference. */
        const unsigned pictures = c->frames * (cpu.keys == 3 ? 2 : 1);
        CHECK(gpu_messages.cpu_pooled <= pictures);
        pooled_on_cpu += gpu_messages.cpu_pooled;
        pooled_on_device += pictures - gpu_messages.cpu_pooled;
        printf("%s %s%s\n", test_failed == failed_before ? "ok  " : "FAIL", label,
               gpu_messages.cpu_pooled ? " (some pooled from c-values)" : "");
        fflush(stdout);
        api_run_free(&cpu);
        api_run_free(&gpu);
    }
    for (unsigned f = 0; f < c->frames; f++) {
        quale_picture_unref(&refs[f]);
        quale_picture_unref(&dists[f]);
    }
}

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int only = argc > 2 && !strcmp(argv[1], "--case") ? atoi(argv[2]) : -1;

    QualeSettings s;
    quale_settings_default(&s);
    s.backend = QUALE_BACKEND_VULKAN;
    s.log_level = QUALE_LOG_ERROR;
    QualeContext *probe = NULL;
    if (!quale_backend_built(QUALE_BACKEND_VULKAN) || quale_open(&probe, &s)) {
        printf("skip: no Vulkan device\n");
        return 77;
    }
    quale_close(&probe);

    unsigned index = 0;
    for (size_t i = 0; i < sizeof(cambi_fixed_cases) / sizeof(cambi_fixed_cases[0]); i++) {
        const CambiCase *c = &cambi_fixed_cases[i];
        if ((only < 0 && (!quick || !c->large)) || (int)index == only) run_case(c, index);
        index++;
    }
    if (only >= 0) return test_summary();
    for (unsigned i = 0; i < 24; i++) {
        const CambiCase c = cambi_random_case();
        run_case(&c, index++);
    }
    printf("pictures pooled on the device %u, from c-values on the CPU %u; %u non-zero scores\n",
           pooled_on_device, pooled_on_cpu, nonzero_scores);
    CHECK(pooled_on_device > 0 && pooled_on_cpu > 0 && nonzero_scores > 0);
    return test_summary();
}
