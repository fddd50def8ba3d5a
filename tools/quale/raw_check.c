/*
 * A look at the first frame of a raw video, for a format that divides the
 * file's size but is not the file's.  A wrong width reads every row from
 * the wrong place: neighbours across rows then differ far more than
 * neighbours along a row, where in a picture read right the two are alike
 * (0.6 to 1.9 times on the corpus; 2.2 to 55 times for a wrong width,
 * swapped sizes or 1080p read as 720p).  16-bit samples read as 8-bit
 * alternate a low byte with a high byte that is 0 to 15; 8-bit samples
 * read two at a time are far above 10 or 12 bits.
 *
 * A batch's pairs often share a file (the reference of a ladder): a file
 * found to look right is remembered, by its identity and format, so that
 * it is looked at once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "raw_check.h"

/* Mean absolute differences to the left and upper neighbour, over every
 * other row (a few thousand rows are plenty). */
static void neighbour_differences(const QualePicture *pic, unsigned p, double *along,
                                  double *across)
{
    const unsigned w = pic->plane_width[p], h = pic->plane_height[p];
    const unsigned step = h > 512 ? h / 256 : 1;
    double sum_along = 0, sum_across = 0;
    uint64_t n = 0;
    for (unsigned y = 1; y < h; y += step) {
        const unsigned char *row = (const unsigned char *)pic->data[p] + (size_t)y * (size_t)pic->stride[p];
        const unsigned char *up = row - pic->stride[p];
        for (unsigned x = 1; x < w; x++) {
            int s, l, u;
            if (pic->format.bitdepth > 8) {
                s = ((const uint16_t *)(const void *)row)[x];
                l = ((const uint16_t *)(const void *)row)[x - 1];
                u = ((const uint16_t *)(const void *)up)[x];
            } else {
                s = row[x];
                l = row[x - 1];
                u = up[x];
            }
            sum_along += abs(s - l);
            sum_across += abs(s - u);
        }
        n += w - 1;
    }
    *along = n ? sum_along / (double)n : 0;
    *across = n ? sum_across / (double)n : 0;
}

/* The share of luma bytes at odd offsets that are 0 to 15 and of those at
 * even offsets that are above 15: little-endian samples of 9 to 12 bits
 * have the first near 1 and the second well above 0; 8-bit pictures have
 * both shares alike. */
static bool looks_like_wide_samples(const QualePicture *pic)
{
    uint64_t low_high = 0, wide_low = 0, n = 0;
    for (unsigned y = 0; y < pic->plane_height[0]; y++) {
        const unsigned char *row = (const unsigned char *)pic->data[0] + (size_t)y * (size_t)pic->stride[0];
        for (unsigned x = 0; x + 1 < pic->plane_width[0]; x += 2) {
            low_high += row[x + 1] <= 15;
            wide_low += row[x] > 15;
            n++;
        }
    }
    return n >= 64 && low_high * 100 >= n * 99 && wide_low * 4 >= n;
}

/* A file that looked right as a format: the same file unchanged (device,
 * inode, size, modification time) read as the same format looks right. */
typedef struct LookedRight {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    QualeVideoFormat format;
} LookedRight;

enum { REMEMBERED = 64 };
static pthread_mutex_t remembered_lock = PTHREAD_MUTEX_INITIALIZER;
static LookedRight remembered[REMEMBERED];
static unsigned remembered_count, remembered_next;

static LookedRight identity(const struct stat *st, const QualeVideoFormat *format)
{
    return (LookedRight){ st->st_dev, st->st_ino, st->st_size, st->st_mtim, *format };
}

static bool same_file(const LookedRight *a, const LookedRight *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->format.width == b->format.width && a->format.height == b->format.height &&
           a->format.chroma == b->format.chroma && a->format.bitdepth == b->format.bitdepth;
}

/* Whether the file was looked at and looked right (remember: it has now). */
static bool looked_right(const LookedRight *file, bool remember)
{
    bool found = false;
    pthread_mutex_lock(&remembered_lock);
    for (unsigned i = 0; i < remembered_count && !found; i++)
        found = same_file(&remembered[i], file);
    if (!found && remember) {
        remembered[remembered_next] = *file; /* the oldest goes when full */
        remembered_next = (remembered_next + 1) % REMEMBERED;
        if (remembered_count < REMEMBERED) remembered_count++;
    }
    pthread_mutex_unlock(&remembered_lock);
    return found;
}

static bool look_at_first_frame(const char *path, const QualeVideoFormat *format, char *why,
                                size_t why_size);

bool raw_check(const char *path, const QualeVideoFormat *format, char *why, size_t why_size)
{
    why[0] = '\0';
    struct stat st;
    if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode)) return false;
    const LookedRight file = identity(&st, format);
    if (looked_right(&file, false)) return false;
    const bool suspect = look_at_first_frame(path, format, why, why_size);
    if (!suspect) looked_right(&file, true);
    return suspect;
}

static bool look_at_first_frame(const char *path, const QualeVideoFormat *format, char *why,
                                size_t why_size)
{
    QualeVideoReader *reader = NULL;
    char error[512];
    if (quale_video_open(&reader, path, format, error, sizeof(error))) return false;
    bool suspect = false;
    QualePicture pic;
    if (quale_video_is_y4m(reader) || quale_picture_alloc(&pic, format)) {
        quale_video_close(&reader);
        return false;
    }
    quale_video_set_planes(reader, 7);
    if (quale_video_read(reader, &pic) == 1) {
        uint64_t samples = 0;
        for (unsigned p = 0; p < pic.plane_count; p++)
            samples += (uint64_t)pic.plane_width[p] * pic.plane_height[p];
        const uint64_t clamped = quale_video_clamped_samples(reader);
        if (format->bitdepth == 8 && looks_like_wide_samples(&pic)) {
            snprintf(why, why_size, "every other byte is 0 to 15, as in samples of 9 to 12 bits "
                     "stored in 2 bytes");
            suspect = true;
        } else if (format->bitdepth < 16 && clamped * 100 > samples) {
            snprintf(why, why_size, "%.0f%% of the first frame's samples are above %u bits, as in "
                     "deeper video or 8-bit samples read two at a time",
                     100.0 * (double)clamped / (double)samples, format->bitdepth);
            suspect = true;
        } else {
            /* One plane far off (a wrong width, or 4:4:4 read as 4:2:0),
             * or every plane off a little. */
            const unsigned planes = pic.plane_count;
            const double smoothing = (double)(1u << (format->bitdepth - 8));
            double worst = 0;
            unsigned off = 0, worst_plane = 0;
            for (unsigned p = 0; p < planes; p++) {
                if (pic.plane_width[p] < 16 || pic.plane_height[p] < 16) continue;
                double along, across;
                neighbour_differences(&pic, p, &along, &across);
                const double ratio = (across + smoothing) / (along + smoothing);
                off += ratio > 2.2;
                if (ratio > worst) {
                    worst = ratio;
                    worst_plane = p;
                }
            }
            if (worst > 3.0 || (planes == 3 && off == 3)) {
                static const char *const names[3] = { "luma", "first chroma", "second chroma" };
                snprintf(why, why_size, "the rows of its %s plane do not line up (neighbours "
                         "across rows differ %.1f times more than along them; about 1 in a "
                         "picture read right)", names[worst_plane], worst);
                suspect = true;
            }
        }
    }
    quale_picture_unref(&pic);
    quale_video_close(&reader);
    return suspect;
}
