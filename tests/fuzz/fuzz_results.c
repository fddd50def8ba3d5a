/*
 * Fuzz target: results files read back (src/results.c), the input of
 * quale merge, on any bytes.
 *
 *  - quale_results_read(): results, or -EINVAL / -ENOMEM with a one-line
 *    message that names the file;
 *  - results read are written in every layout (a stream that takes it
 *    all), at full precision and at 6 digits, or refused with a message;
 *  - results merged with themselves: refused (a part given twice, or not a
 *    part), unless they are the one part of a run of one, which merges;
 *    what a merge gives is written again and read back with the same keys
 *    and frames.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "quale/quale.h"

static bool one_line(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) return false;
    return true;
}

/* Writes r in a layout into memory; returns the text (free()) or NULL
 * after checking the refusal's message. */
static char *write_layout(const QualeResults *r, enum QualeOutputFormat format, int precision,
                          size_t *size)
{
    char *text = NULL;
    *size = 0;
    FILE *f = open_memstream(&text, size);
    if (!f) return NULL;
    char error[1024] = "";
    static const char *const pools[] = { "p1", "low5", "p99.5" };
    const QualeOutputOptions options = { .precision = precision, .pool_methods = pools,
                                         .pool_method_count = 3 };
    const int err = quale_results_write(r, f, format, &options, error, sizeof(error));
    fclose(f);
    if (err) {
        FUZZ_CHECK(err == -EINVAL || err == -EIO || err == -ENOMEM);
        FUZZ_CHECK(err == -ENOMEM || one_line(error));
        free(text);
        return NULL;
    }
    return text;
}

int quale_fuzz_results(const uint8_t *data, size_t size)
{
    QualeResults *r = NULL;
    char error[1024] = "";
    int err = quale_results_read(&r, (const char *)data, size, "part.json", error,
                                 sizeof(error));
    if (err) {
        FUZZ_CHECK(!r);
        FUZZ_CHECK(err == -EINVAL || err == -ENOMEM);
        FUZZ_CHECK(err == -ENOMEM || (one_line(error) && !strncmp(error, "part.json", 9)));
        return 0;
    }
    FUZZ_CHECK(r != NULL); /* a part may list no frame */
    const unsigned keys = quale_results_key_count(r);
    for (unsigned k = 0; k < keys; k++) {
        const char *name = quale_results_key_name(r, k);
        FUZZ_CHECK(name != NULL);
        double v;
        (void)quale_results_pooled(r, name, QUALE_POOL_HARMONIC_MEAN, &v);
    }
    FUZZ_CHECK(quale_results_key_name(r, keys) == NULL);
    for (int format = QUALE_OUTPUT_XML; format <= QUALE_OUTPUT_SUB; format++) {
        size_t n;
        free(write_layout(r, (enum QualeOutputFormat)format, -1, &n));
        free(write_layout(r, (enum QualeOutputFormat)format, 6, &n));
    }

    const QualeResults *twice[2] = { r, r };
    QualeResults *merged = NULL;
    err = quale_results_merge(&merged, twice, 2, error, sizeof(error));
    FUZZ_CHECK(err && !merged && (err == -ENOMEM || one_line(error)));
    err = quale_results_merge(&merged, twice, 1, error, sizeof(error));
    if (!err) {
        /* the one part of a run of one: written as JSON, it reads back
         * with the same keys and frames */
        size_t n;
        char *text = write_layout(merged, QUALE_OUTPUT_JSON, -1, &n);
        if (text) {
            QualeResults *again = NULL;
            err = quale_results_read(&again, text, n, "merged.json", error, sizeof(error));
            FUZZ_CHECK(!err || err == -ENOMEM);
            if (!err) {
                FUZZ_CHECK(quale_results_key_count(again) == quale_results_key_count(merged));
                FUZZ_CHECK(quale_results_frame_count(again) ==
                           quale_results_frame_count(merged));
            }
            quale_results_close(&again);
            free(text);
        }
        quale_results_close(&merged);
    } else {
        FUZZ_CHECK(!merged && (err == -ENOMEM || one_line(error)));
    }
    quale_results_close(&r);
    return 0;
}

FUZZ_TARGET(quale_fuzz_results)
