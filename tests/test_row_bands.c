/*
 * Metrics that split a frame into row bands (metric_run_tasks()): every
 * key of every frame has the bits of a one-thread run at any thread count,
 * which also changes the bands (float_adm and integer ADM size theirs from
 * it).  Tall pictures, so that every level or scale has several bands,
 * with 8 and 10 bits and options that change what the bands compute
 * (skipped scales, p-norm, kernel scale, debug sums).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "quale/quale.h"
#include "synth.h"
#include "test.h"

#define FRAMES 2

static const char *const specs[] = {
    "float_adm=debug=true",
    "float_adm=adm_skip_scale0=true:adm_p_norm=2.5:adm_csf_mode=1",
    "float_vif=debug=true",
    "float_vif=vif_skip_scale0=true:vif_kernelscale=0.5",
    "adm=debug=true",
    "vif=debug=true",
};

static const QualeVideoFormat formats[] = {
    { QUALE_CHROMA_420, 8, 354, 1106 },
    { QUALE_CHROMA_420, 10, 130, 700 },
};

/* A context with every spec, FRAMES synthetic frames sent and flushed. */
static QualeContext *run(const QualeVideoFormat *f, unsigned threads)
{
    QualeSettings s;
    quale_settings_default(&s);
    s.threads = threads;
    QualeContext *ctx = NULL;
    int err = quale_open(&ctx, &s);
    for (unsigned i = 0; i < sizeof(specs) / sizeof(*specs) && !err; i++)
        err = quale_use_metric(ctx, specs[i]);
    for (unsigned i = 0; i < FRAMES && !err; i++) {
        QualePicture ref, dist;
        err = quale_picture_alloc(&ref, f);
        if (err) break;
        err = quale_picture_alloc(&dist, f);
        if (err) {
            quale_picture_unref(&ref);
            break;
        }
        synth_reference(&ref, i);
        synth_distort(&ref, &dist, i, 2);
        err = quale_send_pictures(ctx, &ref, &dist);
    }
    if (!err) err = quale_flush(ctx);
    CHECK(err == 0);
    return ctx;
}

int main(void)
{
    for (unsigned fi = 0; fi < sizeof(formats) / sizeof(*formats); fi++) {
        QualeContext *one = run(&formats[fi], 1);
        const unsigned keys = quale_feature_count(one);
        CHECK(keys >= 40);
        for (unsigned threads = 2; threads <= 8; threads += 3) {
            QualeContext *many = run(&formats[fi], threads);
            CHECK(quale_feature_count(many) == keys);
            unsigned same = 0;
            for (unsigned k = 0; k < keys; k++) {
                const char *key = quale_feature_name(one, k);
                CHECK_STR(key, quale_feature_name(many, k));
                for (unsigned i = 0; i < FRAMES; i++) {
                    double a = 0, b = 1;
                    CHECK(quale_feature_value(one, key, i, &a) == 0);
                    CHECK(quale_feature_value(many, key, i, &b) == 0);
                    if (memcmp(&a, &b, sizeof(a)))
                        fprintf(stderr, "  %ux%u %u bits, %u threads: %s frame %u: %a, 1 thread %a\n",
                                formats[fi].width, formats[fi].height, formats[fi].bitdepth,
                                threads, key, i, b, a);
                    else
                        same++;
                }
            }
            CHECK(same == keys * FRAMES);
            quale_close(&many);
        }
        quale_close(&one);
    }
    return test_summary();
}
