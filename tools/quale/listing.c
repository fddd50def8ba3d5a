/*
 * The listings (listing.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listing.h"
#include "messages.h"
#include "quale/quale.h"

void print_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static const char *option_type_name(enum QualeOptionType t)
{
    switch (t) {
    case QUALE_OPTION_BOOL: return "bool";
    case QUALE_OPTION_INT: return "int";
    case QUALE_OPTION_DOUBLE: return "double";
    case QUALE_OPTION_CHOICE: return "choice";
    case QUALE_OPTION_STRING: return "string";
    }
    return "?";
}

static void print_backends(FILE *f, unsigned mask, bool json)
{
    static const enum QualeBackend all[] = { QUALE_BACKEND_CPU, QUALE_BACKEND_CUDA,
                                              QUALE_BACKEND_HIP, QUALE_BACKEND_VULKAN };
    bool first = true;
    for (unsigned b = 0; b < sizeof(all) / sizeof(all[0]); b++) {
        if (!(mask & (1u << all[b]))) continue;
        if (json) {
            fprintf(f, "%s", first ? "" : ", ");
            print_json_string(f, quale_backend_name(all[b]));
        } else {
            fprintf(f, "%s%s", first ? "" : " ", quale_backend_name(all[b]));
        }
        first = false;
    }
}

static void print_option_default(FILE *f, const QualeOptionInfo *o, bool json)
{
    if (o->type == QUALE_OPTION_BOOL) {
        fprintf(f, "%s", o->default_value != 0 ? "true" : "false");
    } else if (o->type == QUALE_OPTION_STRING) {
        /* A string option has no default: it is unset until given. */
        fprintf(f, "%s", json ? "null" : "unset");
    } else if (o->type == QUALE_OPTION_CHOICE) {
        const char *name = o->choices[(int)o->default_value];
        if (json) print_json_string(f, name);
        else fprintf(f, "%s", name);
    } else {
        /* the shortest text that reads back to the value: 0.6, not
         * 0.59999999999999998 */
        char text[32];
        /* from as many digits as the integer part has: 100, not 1e+02 */
        const double magnitude = fabs(o->default_value);
        int digits = 1;
        while (digits < 17 && magnitude >= pow(10, digits)) digits++;
        for (; digits <= 17; digits++) {
            snprintf(text, sizeof(text), "%.*g", digits, o->default_value);
            if (strtod(text, NULL) == o->default_value) break;
        }
        fprintf(f, "%s", text);
    }
}

int list_features(bool json)
{
    FILE *f = stdout;
    const unsigned n = quale_metric_count();
    if (json) fprintf(f, "[");
    for (unsigned i = 0; i < n; i++) {
        QualeMetricInfo info;
        if (quale_metric_info(i, &info)) continue;
        if (json) {
            fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
            print_json_string(f, info.name);
            fprintf(f, ", \"keys\": [");
            for (unsigned k = 0; info.keys[k]; k++) {
                fprintf(f, "%s", k ? ", " : "");
                print_json_string(f, info.keys[k]);
            }
            fprintf(f, "], \"options\": [");
            for (unsigned o = 0; o < info.option_count; o++) {
                QualeOptionInfo opt;
                if (quale_metric_option(i, o, &opt)) continue;
                fprintf(f, "%s{\"name\": ", o ? ", " : "");
                print_json_string(f, opt.name);
                fprintf(f, ", \"type\": \"%s\", \"default\": ", option_type_name(opt.type));
                print_option_default(f, &opt, true);
                if (opt.choices) {
                    fprintf(f, ", \"choices\": [");
                    for (unsigned c = 0; opt.choices[c]; c++) {
                        fprintf(f, "%s", c ? ", " : "");
                        print_json_string(f, opt.choices[c]);
                    }
                    fprintf(f, "]");
                }
                fprintf(f, ", \"help\": ");
                print_json_string(f, opt.help ? opt.help : "");
                fprintf(f, "}");
            }
            fprintf(f, "], \"backends\": [");
            print_backends(f, info.backends, true);
            fprintf(f, "]}");
        } else {
            fprintf(f, "%s\n  keys:", info.name);
            for (unsigned k = 0; info.keys[k]; k++) fprintf(f, " %s", info.keys[k]);
            fprintf(f, "\n  backends: ");
            print_backends(f, info.backends, false);
            fprintf(f, "\n");
            for (unsigned o = 0; o < info.option_count; o++) {
                QualeOptionInfo opt;
                if (quale_metric_option(i, o, &opt)) continue;
                fprintf(f, "  option %s (%s, default ", opt.name, option_type_name(opt.type));
                print_option_default(f, &opt, false);
                fprintf(f, "): %s\n", opt.help ? opt.help : "");
            }
        }
    }
    fprintf(f, json ? "\n]\n" : "");
    return stdout_written("the metrics");
}

int list_models(bool json)
{
    FILE *f = stdout;
    if (json) {
        fprintf(f, "{\"builtin\": [");
    } else {
        fprintf(f, "%-28s %-48s %-36s %s\n", "version", "for", "features", "range");
    }
    for (unsigned i = 0; quale_builtin_model(i); i++) {
        QualeBuiltinModelInfo info;
        if (quale_builtin_model_info(i, &info)) continue;
        char range[48] = "";
        if (info.score_min != info.score_max)
            snprintf(range, sizeof(range), "%g to %g", info.score_min, info.score_max);
        if (json) {
            fprintf(f, "%s\n  {\"version\": ", i ? "," : "");
            print_json_string(f, info.version);
            fprintf(f, ", \"condition\": ");
            print_json_string(f, info.condition);
            fprintf(f, ", \"features\": ");
            print_json_string(f, info.features);
            if (info.score_min != info.score_max)
                fprintf(f, ", \"range\": [%g, %g]", info.score_min, info.score_max);
            fprintf(f, ", \"bootstrap\": %s}", info.bootstrap ? "true" : "false");
        } else {
            fprintf(f, "%-28s %-48s %-36s %s\n", info.version, info.condition, info.features,
                    range);
        }
    }
    /* Any libvmaf-format model loads by path too. */
    if (json) fprintf(f, "\n], \"load_by_path\": true}\n");
    else fprintf(f, "\nAny libvmaf model file loads with -m path=FILE.\n");
    return stdout_written("the models");
}

int print_devices(bool json)
{
    FILE *f = stdout;
    static const enum QualeBackend backends[] = { QUALE_BACKEND_CUDA, QUALE_BACKEND_HIP,
                                                  QUALE_BACKEND_VULKAN };
    if (json) fprintf(f, "{");
    for (unsigned b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
        QualeDeviceInfo devices[16];
        unsigned count = 0;
        char error[512];
        const int err = quale_list_devices(backends[b], devices, 16, &count, error, sizeof(error));
        const char *name = quale_backend_name(backends[b]);
        if (json) {
            fprintf(f, "%s\n  \"%s\": {\"devices\": [", b ? "," : "", name);
        } else {
            fprintf(f, "%s%s:", b ? "\n" : "", name);
            if (err) fprintf(f, " none (%s)\n", error);
            else if (!count) fprintf(f, " no device\n");
            else fprintf(f, "\n");
        }
        for (unsigned i = 0; !err && i < count && i < 16; i++) {
            const QualeDeviceInfo *d = &devices[i];
            if (json) {
                fprintf(f, "%s\n    {\"index\": %u, \"name\": ", i ? "," : "", d->index);
                print_json_string(f, d->name);
                fprintf(f, ", \"type\": \"%s\", \"memory_bytes\": %llu, \"default\": %s}",
                        quale_device_type_name(d->type), (unsigned long long)d->memory_bytes,
                        d->preferred ? "true" : "false");
            } else {
                fprintf(f, "  %u: %s (%s", d->index, d->name, quale_device_type_name(d->type));
                if (d->memory_bytes)
                    fprintf(f, ", %.1f GiB", (double)d->memory_bytes / (1024. * 1024. * 1024.));
                fprintf(f, ")%s%s\n", d->preferred ? ", the default" : "",
                        d->type == QUALE_DEVICE_SOFTWARE ? "; --backend auto skips it" : "");
            }
        }
        if (json) {
            fprintf(f, "%s]", count && !err ? "\n  " : "");
            if (err) {
                fprintf(f, ", \"error\": ");
                print_json_string(f, error);
            }
            fprintf(f, "}");
        }
    }
    if (json) fprintf(f, "\n}\n");
    return stdout_written("the devices");
}
