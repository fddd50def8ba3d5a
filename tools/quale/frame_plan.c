/*
 * Frame plans of split runs (frame_plan.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frame_plan.h"

int plan_frames(const CliSettings *s, const QualeContext *ctx, int64_t total, unsigned part,
                unsigned parts, bool fewer_parts, FramePlan *plan, char *error,
                size_t error_size)
{
    memset(plan, 0, sizeof(*plan));
    plan->partial = s->frames_given || parts;
    if (!plan->partial) return 0;
    unsigned before, after;
    if (quale_segment_margins(ctx, &before, &after)) {
        snprintf(error, error_size, "the frames around a part are not known");
        return -1;
    }
    uint64_t first = s->frames_first, end = s->frames_end;
    /* without the files' frame counts, --frame_cnt still ends the run */
    if (total < 0 && s->frame_count) total = s->frame_count;
    if (total >= 0) {
        if (first >= (uint64_t)total) {
            snprintf(error, error_size, "--frames %u: the run has %lld frames (0 to %lld)",
                     s->frames_first, (long long)total, (long long)total - 1);
            return -1;
        }
        if (!end || end > (uint64_t)total) end = (uint64_t)total;
    }
    if (parts) {
        if (!end) {
            snprintf(error, error_size, "--segment needs the number of frames, which %s does "
                     "not tell (a pipe, a container without a frame count, or a filter graph's "
                     "output): give --frames FIRST:END", total < 0 ? "the input" : "it");
            return -1;
        }
        const uint64_t length = end - first;
        if (length < parts && fewer_parts) {
            parts = (unsigned)length;
            if (part > parts) {
                plan->idle = true;
                return 0;
            }
        }
        if (length < parts) {
            snprintf(error, error_size, "--segment %u/%u: the frames to score, %u to %u, are "
                     "fewer than %u parts", part, parts, (unsigned)first, (unsigned)end - 1,
                     parts);
            return -1;
        }
        plan->part = part;
        plan->parts = parts;
        plan->range_first = (unsigned)first;
        const uint64_t lo = first + length * (part - 1) / parts;
        const uint64_t hi = first + length * part / parts;
        first = lo;
        end = hi;
    }
    plan->first = (unsigned)first;
    plan->end = (unsigned)end;
    /* from `before` frames back, on a frame --subsample scores, so that
     * the part's frames are scored where the whole run scores them */
    unsigned from = plan->first > before ? plan->first - before : 0;
    const unsigned sub = s->subsample > 1 ? s->subsample : 1;
    from -= from % sub;
    plan->read_first = from;
    if (parts && part == parts) {
        plan->open_end = true;
        plan->counted_end = plan->end;
        plan->end = s->frames_end; /* 0: the videos' end */
    }
    /* Reading stops after the frame past the end (motion2 looks ahead), or
     * at --frame_cnt; never at the count, which only the sizes of raw video
     * make exact: a frame after it would be scored as a last frame. */
    uint64_t stop = plan->end ? (uint64_t)plan->end + after : 0;
    if (s->frame_count && (!stop || stop > s->frame_count)) stop = s->frame_count;
    if (stop) plan->read_count = (unsigned)(stop - from);
    return 0;
}

/* FNV-1a, 64 bits: a digest to tell files apart, not to resist forgery. */
static uint64_t digest_bytes(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}

/* Blocks of a video hashed by video_digest(): the whole file up to
 * DIGEST_WHOLE bytes, else its first and last DIGEST_END bytes and
 * DIGEST_BLOCKS blocks of DIGEST_BLOCK spread evenly between them. */
#define DIGEST_WHOLE ((off_t)1 << 20)
#define DIGEST_END ((off_t)1 << 16)
#define DIGEST_BLOCKS 64
#define DIGEST_BLOCK ((off_t)4096)

/* A digest of the video file's content at the same places in every part
 * (a few hundred KiB of its bytes, whatever its size): two files of one
 * name and size but other pictures, or bitstreams, tell apart.  False
 * where the file cannot be read (the run then says so when it reads). */
static bool video_digest(const char *path, off_t size, uint64_t *digest)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    unsigned char buffer[1 << 16];
    uint64_t h = 0xcbf29ce484222325u;
    bool ok = true;
    off_t at[DIGEST_BLOCKS + 2], length[DIGEST_BLOCKS + 2];
    unsigned count = 0;
    if (size <= DIGEST_WHOLE) {
        for (off_t o = 0; o < size; o += (off_t)sizeof(buffer)) {
            at[count] = o;
            length[count++] = size - o < (off_t)sizeof(buffer) ? size - o : (off_t)sizeof(buffer);
        }
    } else {
        at[count] = 0;
        length[count++] = DIGEST_END;
        const off_t span = size - 2 * DIGEST_END - DIGEST_BLOCK;
        for (unsigned i = 0; i < DIGEST_BLOCKS; i++) {
            at[count] = DIGEST_END + span * (off_t)i / (DIGEST_BLOCKS - 1);
            length[count++] = DIGEST_BLOCK;
        }
        at[count] = size - DIGEST_END;
        length[count++] = DIGEST_END;
    }
    for (unsigned i = 0; i < count && ok; i++) {
        ssize_t got;
        do got = pread(fd, buffer, (size_t)length[i], at[i]);
        while (got < 0 && errno == EINTR);
        ok = got == length[i];
        if (ok) h = digest_bytes(h, buffer, (size_t)got);
    }
    close(fd);
    *digest = h;
    return ok;
}

void describe_run(const CliSettings *s, const QualeContext *ctx, char *text, size_t size)
{
    size_t n = 0;
#define PUT(...) \
    do { \
        if (n < size) n += (size_t)snprintf(text + n, size - n, __VA_ARGS__); \
    } while (0)
    /* The videos by name, size and a digest of their content, not by path:
     * the nodes of a cluster mount the same files at different places, and
     * two folders may hold other videos of the same names.  Items are
     * separated by "; " so that a merge can say which one differs. */
    for (int i = 0; i < 2; i++) {
        const char *path = i ? s->distorted : s->reference;
        const char *slash = strrchr(path, '/');
        const char *role = i ? "; distorted=" : "reference=";
        struct stat st;
        uint64_t digest;
        if (!strcmp(path, "-")) PUT("%sstandard input", role);
        else if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
                 video_digest(path, st.st_size, &digest))
            PUT("%s%s (%lld bytes, content %016llx)", role, slash ? slash + 1 : path,
                (long long)st.st_size, (unsigned long long)digest);
        else PUT("%s%s", role, slash ? slash + 1 : path);
    }
    if (s->raw_given)
        PUT("; raw=%ux%u:%s:%u", s->raw.width, s->raw.height, quale_chroma_name(s->raw.chroma),
            s->raw.bitdepth);
    for (unsigned i = 0; i < s->model_count; i++) PUT("; model=%s", s->models[i]);
    for (unsigned i = 0; i < s->feature_count; i++) PUT("; feature=%s", s->features[i]);
    if (s->no_prediction) PUT("; no_prediction");
    if (s->subsample > 1) PUT("; subsample=%u", s->subsample);
    if (s->frame_skip_ref || s->frame_skip_dist)
        PUT("; frame_skip=%u,%u", s->frame_skip_ref, s->frame_skip_dist);
    if (s->frame_count) PUT("; frame_cnt=%u", s->frame_count);
    if (s->frames_given) PUT("; frames=%u:%u", s->frames_first, s->frames_end);
    if (s->scaler) PUT("; scaler=%s", s->scaler);
    if (s->score_bitdepth) PUT("; score_bitdepth=%u", s->score_bitdepth);
    /* the frames scored are the graphs' output */
    if (s->ref_vf) PUT("; ref_vf=%s", s->ref_vf);
    if (s->dist_vf) PUT("; dist_vf=%s", s->dist_vf);
    /* float twins agree with the CPU to the tolerance table, not the bit */
    PUT("; backend=%s", quale_backend_name(quale_backend(ctx)));
#undef PUT
}
