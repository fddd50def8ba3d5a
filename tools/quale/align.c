/*
 * --align auto: the frame offset between the distorted video and the
 * reference, found as easyVmaf's sync does it: the luma of the first
 * frames of each, compared at every offset of a window by PSNR, the
 * offset with the highest mean PSNR taken.  The pictures are averaged over
 * 4x4 blocks first (an offset shows as well at a sixteenth of the pixels,
 * and 4K stays small in memory).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"

/* Frames compared at each offset. */
#define ALIGN_FRAMES 8

typedef struct Thumbs {
    unsigned source_w, source_h; /* the video's size, as scored */
    unsigned w, h, count;
    float *pixels; /* count pictures of w x h, in 8-bit units */
} Thumbs;

/* size: the thumbs of a video of another size are of it scaled to size
 * (the run scores it so), else NULL. */
static int read_thumbs(const AlignVideo *video, unsigned want, const Thumbs *size,
                       const char *scaler, Thumbs *t, char *error, size_t error_size)
{
    QualeVideoReader *r = NULL;
    const unsigned skip = video->skip;
    int err = quale_video_open(&r, video->path, video->raw, error, error_size);
    if (err) return err;
    /* compared as they will be scored: after their filter graph */
    if (video->graph && (err = quale_video_filter(&r, video->graph, error, error_size))) {
        quale_video_close(&r);
        return err;
    }
    QualeVideoFormat f;
    quale_video_get_format(r, &f);
    if (size && (f.width != size->source_w || f.height != size->source_h)) {
        if ((err = quale_video_set_size(r, size->source_w, size->source_h, scaler))) {
            snprintf(error, error_size, "%s", quale_video_error(r));
            quale_video_close(&r);
            return err;
        }
        quale_video_get_format(r, &f);
    }
    t->source_w = f.width;
    t->source_h = f.height;
    quale_video_set_planes(r, 1);
    t->w = f.width / 4 ? f.width / 4 : 1;
    t->h = f.height / 4 ? f.height / 4 : 1;
    t->count = 0;
    t->pixels = calloc((size_t)want * t->w * t->h, sizeof(float));
    QualePicture pic;
    if (!t->pixels || quale_picture_alloc(&pic, &f)) {
        quale_video_close(&r);
        free(t->pixels);
        t->pixels = NULL;
        snprintf(error, error_size, "out of memory");
        return -ENOMEM;
    }
    if (skip && (err = quale_video_skip(r, skip)) <= 0) {
        snprintf(error, error_size, "%s", err ? quale_video_error(r) : "no frames after the skip");
        err = err ? err : -ENODATA;
        goto out;
    }
    err = 0;
    const float scale = 1.0f / (float)(1u << (f.bitdepth - 8));
    while (t->count < want) {
        const int got = quale_video_read(r, &pic);
        if (got < 0) {
            snprintf(error, error_size, "%s", quale_video_error(r));
            err = got;
            goto out;
        }
        if (got == 0) break;
        float *dst = t->pixels + (size_t)t->count * t->w * t->h;
        const unsigned bw = f.width < 4 ? 1 : 4, bh = f.height < 4 ? 1 : 4;
        for (unsigned y = 0; y < t->h; y++) {
            for (unsigned x = 0; x < t->w; x++) {
                float sum = 0;
                for (unsigned dy = 0; dy < bh; dy++) {
                    const unsigned char *row = (const unsigned char *)pic.data[0] +
                                               (size_t)(y * bh + dy) * (size_t)pic.stride[0];
                    for (unsigned dx = 0; dx < bw; dx++)
                        sum += f.bitdepth > 8 ? ((const uint16_t *)(const void *)row)[x * bw + dx]
                                              : row[x * bw + dx];
                }
                dst[(size_t)y * t->w + x] = sum * scale / (float)(bw * bh);
            }
        }
        t->count++;
    }
out:
    quale_picture_unref(&pic);
    quale_video_close(&r);
    return err;
}

static double psnr(const float *a, const float *b, size_t n)
{
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)a[i] - (double)b[i];
        sse += d * d;
    }
    const double mse = sse / (double)n;
    return mse > 0 ? 10.0 * log10(255.0 * 255.0 / mse) : 100.0;
}

int align_find(const AlignVideo *ref, const AlignVideo *dist, unsigned window,
               const char *scaler, AlignResult *result, char *error, size_t error_size)
{
    memset(result, 0, sizeof(*result));
    Thumbs r = { 0 }, d = { 0 };
    const unsigned want = ALIGN_FRAMES + window;
    /* a distorted video of another size is compared as it is scored: scaled
     * to the reference's size */
    int err = read_thumbs(ref, want, NULL, NULL, &r, error, error_size);
    if (!err) err = read_thumbs(dist, want, &r, scaler, &d, error, error_size);
    if (err) {
        free(r.pixels);
        free(d.pixels);
        return err;
    }
    const size_t n = (size_t)r.w * r.h;
    double best = -1;
    for (int o = -(int)window; o <= (int)window; o++) {
        /* dist frame i + o against ref frame i: o > 0, the distorted video
         * runs o frames ahead (it has o more frames at its start). */
        double sum = 0;
        unsigned count = 0;
        for (unsigned i = 0; i < ALIGN_FRAMES; i++) {
            const int di = (int)i + (o > 0 ? o : 0), ri = (int)i + (o < 0 ? -o : 0);
            if (di >= (int)d.count || ri >= (int)r.count) break;
            sum += psnr(r.pixels + (size_t)ri * n, d.pixels + (size_t)di * n, n);
            count++;
        }
        if (count < ALIGN_FRAMES / 2 && !(o == 0 && count)) continue;
        const double mean = sum / count;
        if (o == 0) result->psnr_unshifted = mean;
        /* The nearest offset wins a tie. */
        if (mean > best + 1e-9 || (fabs(mean - best) <= 1e-9 && abs(o) < abs(result->offset))) {
            best = mean;
            result->offset = o;
            result->psnr = mean;
        }
        result->compared++;
    }
    free(r.pixels);
    free(d.pixels);
    if (best < 0) {
        snprintf(error, error_size, "too few frames to compare (%u of the reference, %u of the "
                 "distorted video)", r.count, d.count);
        return -ENODATA;
    }
    return 0;
}
