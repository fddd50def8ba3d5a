/*
 * SpEED's Vulkan twin against the C reference, through the public API:
 * every key of every frame, bit for bit, on the cases of speed_cases.h
 * (the v1 models' options, prescales, kernel scales, weighting modes,
 * speed_use_ref_diff; 4:2:0 to 4:4:4, 8 to 16 bits) and on flat pictures
 * (singular covariances), three frames each.  Every other case runs its
 * frames on three lanes.  The twin must have run (no "runs on the CPU"
 * message).  Exits 77 (skip) when no Vulkan device is present.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_run.h"
#include "quale/quale.h"
#include "speed_cases.h"
#include "test.h"

/* xorshift64: the same pictures on every platform. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void count_on_cpu(void *cookie, enum QualeLogLevel level, const char *message)
{
    (void)level;
    if (strstr(message, "runs on the CPU")) ++*(unsigned *)cookie;
}

static unsigned cases_run, nonzero_scores, zero_scores;

static void run_case(const char *spec, const QualeVideoFormat *f, bool flat, unsigned index)
{
    enum { FRAMES = 3 };
    QualePicture refs[FRAMES], dists[FRAMES];
    for (unsigned i = 0; i < FRAMES; i++) {
        CHECK(quale_picture_alloc(&refs[i], f) == 0);
        CHECK(quale_picture_alloc(&dists[i], f) == 0);
        speed_fill(&refs[i], i, flat, 1, rng);
        speed_fill(&dists[i], i, flat && i != 2, 2, rng);
    }
    char label[320];
    snprintf(label, sizeof(label), "%s on %ux%u %s %u-bit%s", spec, f->width, f->height,
             quale_chroma_name(f->chroma), f->bitdepth, flat ? ", flat" : "");
    setenv("QUALE_VULKAN_LANES", index % 2 ? "3" : "", 1);
    unsigned on_cpu = 0;
    ApiRun cpu = { .backend = QUALE_BACKEND_CPU, .threads = 2, .log_level = QUALE_LOG_ERROR };
    ApiRun gpu = { .backend = QUALE_BACKEND_VULKAN, .threads = 2, .log_level = QUALE_LOG_INFO,
                   .on_message = count_on_cpu, .cookie = &on_cpu };
    api_run(&cpu, NULL, &spec, 1, refs, dists, FRAMES);
    api_run(&gpu, NULL, &spec, 1, refs, dists, FRAMES);
    const unsigned failed_before = test_failed;
    CHECK(cpu.status == 0 && gpu.status == 0);
    CHECK(on_cpu == 0);
    CHECK(cpu.keys == gpu.keys && cpu.keys >= 1);
    for (unsigned k = 0; k < cpu.keys && k < gpu.keys; k++) {
        CHECK_STR(cpu.names[k], gpu.names[k]);
        for (unsigned n = 0; n < FRAMES; n++) {
            const size_t at = (size_t)k * FRAMES + n;
            CHECK(cpu.present[at] && gpu.present[at]);
            const bool same = !memcmp(&cpu.values[at], &gpu.values[at], sizeof(double));
            CHECK(same);
            if (!same)
                fprintf(stderr, "  %s, frame %u, %s: vulkan %.17g, cpu %.17g\n", label, n,
                        cpu.names[k], gpu.values[at], cpu.values[at]);
            if (cpu.values[at] != 0.0) nonzero_scores++;
            else zero_scores++;
        }
    }
    printf("%s %s%s\n", test_failed == failed_before ? "ok  " : "FAIL", label,
           cpu.status ? cpu.error : gpu.status ? gpu.error : "");
    fflush(stdout);
    cases_run++;
    api_run_free(&cpu);
    api_run_free(&gpu);
    for (unsigned i = 0; i < FRAMES; i++) {
        quale_picture_unref(&refs[i]);
        quale_picture_unref(&dists[i]);
    }
}

int main(void)
{
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
    for (size_t fi = 0; fi < sizeof(speed_formats) / sizeof(speed_formats[0]); fi++) {
        const QualeVideoFormat *f = &speed_formats[fi];
        for (size_t i = 0; i < sizeof(speed_chroma_specs) / sizeof(speed_chroma_specs[0]); i++)
            if (speed_case_runs(speed_chroma_specs[i], f))
                run_case(speed_chroma_specs[i], f, false, index++);
        for (size_t i = 0; i < sizeof(speed_temporal_specs) / sizeof(speed_temporal_specs[0]);
             i++)
            if (speed_case_runs(speed_temporal_specs[i], f))
                run_case(speed_temporal_specs[i], f, false, index++);
    }
    /* Flat pictures: singular covariances (the v1 models' chroma correction). */
    run_case(SPEED_V1_SPEC, &speed_formats[0], true, index++);
    run_case("speed_temporal", &speed_formats[0], true, index++);
    printf("%u cases, %u non-zero and %u zero scores\n", cases_run, nonzero_scores, zero_scores);
    CHECK(nonzero_scores > 0);
    return test_summary();
}
