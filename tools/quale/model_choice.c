/*
 * Choosing the model (model_choice.h).
 */
#include <stdio.h>
#include <string.h>

#include "model_choice.h"

/* Netflix's v1 release names 50-60 fps "HFR"; 48 fps cinema is as far
 * from 30 as from 60 and goes with the high rates. */
#define HFR_FROM_FPS 47.9

void choose_auto_model(const QualeVideoFormat *reference, double frame_rate, char *version,
                       size_t version_size, char *why, size_t why_size)
{
    const bool uhd = reference->width > 1920 || reference->height > 1080;
    const bool hfr = frame_rate >= HFR_FROM_FPS;
    snprintf(version, version_size, "vmaf_v1.0.16_%s%s", hfr ? "hfr_" : "",
             uhd ? "1d5h_2160" : "3d0h");
    char rate[64] = "frame rate not known, taken as standard";
    if (frame_rate > 0) snprintf(rate, sizeof(rate), "%.3g fps", frame_rate);
    snprintf(why, why_size, "the reference is %ux%u, %s: the model for %s%s at its standard "
             "viewing distance", reference->width, reference->height, rate,
             uhd ? "4K" : "up to 1080p", hfr ? " at a high frame rate" : "");
}

bool model_is_v1(const char *label)
{
    const char *slash = strrchr(label, '/');
    return !strncmp(slash ? slash + 1 : label, "vmaf_v1.", 8);
}

void model_title(const QualeModelInfo *info, char *title, size_t size)
{
    const char *label = info->label;
    bool built_in = false;
    for (unsigned i = 0; quale_builtin_model(i) && !built_in; i++)
        built_in = !strcmp(quale_builtin_model(i), label);
    if (built_in) {
        snprintf(title, size, "%s", label);
    } else if (strcmp(info->name, "vmaf")) {
        snprintf(title, size, "%s", info->name); /* name= */
    } else {
        const char *slash = strrchr(label, '/');
        const char *base = slash ? slash + 1 : label;
        const size_t stem = strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".json")
                                ? strlen(base) - 5 : strlen(base);
        snprintf(title, size, "%.*s", (int)stem, base);
    }
}
