/*
 * Frame plans of split runs (frame_plan.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "frame_plan.h"

int plan_frames(const CliSettings *s, const QualeContext *ctx, int64_t total, unsigned part,
                unsigned parts, FramePlan *plan, char *error, size_t error_size)
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
                     "not tell (a pipe, or a container without a frame count): give --frames "
                     "FIRST:END", total < 0 ? "the input" : "it");
            return -1;
        }
        const uint64_t length = end - first;
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

void describe_run(const CliSettings *s, const QualeContext *ctx, char *text, size_t size)
{
    size_t n = 0;
#define PUT(...) \
    do { \
        if (n < size) n += (size_t)snprintf(text + n, size - n, __VA_ARGS__); \
    } while (0)
    /* the videos by name and size, not by path: the nodes of a cluster
     * mount the same files at different places */
    for (int i = 0; i < 2; i++) {
        const char *path = i ? s->distorted : s->reference;
        const char *slash = strrchr(path, '/');
        struct stat st;
        if (!strcmp(path, "-")) PUT("%sstandard input", i ? " distorted=" : "reference=");
        else if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            PUT("%s%s (%lld bytes)", i ? " distorted=" : "reference=", slash ? slash + 1 : path,
                (long long)st.st_size);
        else PUT("%s%s", i ? " distorted=" : "reference=", slash ? slash + 1 : path);
    }
    if (s->raw_given)
        PUT(" raw=%ux%u:%s:%u", s->raw.width, s->raw.height, quale_chroma_name(s->raw.chroma),
            s->raw.bitdepth);
    for (unsigned i = 0; i < s->model_count; i++) PUT(" model=%s", s->models[i]);
    for (unsigned i = 0; i < s->feature_count; i++) PUT(" feature=%s", s->features[i]);
    if (s->no_prediction) PUT(" no_prediction");
    if (s->subsample > 1) PUT(" subsample=%u", s->subsample);
    if (s->frame_skip_ref || s->frame_skip_dist)
        PUT(" frame_skip=%u,%u", s->frame_skip_ref, s->frame_skip_dist);
    if (s->frame_count) PUT(" frame_cnt=%u", s->frame_count);
    if (s->frames_given) PUT(" frames=%u:%u", s->frames_first, s->frames_end);
    if (s->scaler) PUT(" scaler=%s", s->scaler);
    if (s->score_bitdepth) PUT(" score_bitdepth=%u", s->score_bitdepth);
    /* float twins agree with the CPU to the tolerance table, not the bit */
    PUT(" backend=%s", quale_backend_name(quale_backend(ctx)));
#undef PUT
}

