/*
 * The frames of a run of part of the videos (--frames, --segment, the
 * parts of --gpu): which it writes, and which it reads around them so
 * that their values are those of the whole run.
 */
#ifndef QUALE_TOOLS_FRAME_PLAN_H
#define QUALE_TOOLS_FRAME_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "quale/quale.h"

/* What a run scores: the frames [first, end) of the whole run (the videos
 * after the skips, up to --frame_cnt), read from `read_first` with the
 * frames around them that make their values those of the whole run. */
typedef struct FramePlan {
    bool partial;               /* --frames or --segment */
    unsigned part, parts;       /* a segment, or 0 */
    unsigned first, end;        /* end 0: to the last frame */
    unsigned read_first;
    unsigned read_count;        /* 0: to the last frame */
    unsigned range_first;
    /* The last part of a split: it reads to the videos' end (or the range's
     * END), not to the end the frame count gave, which it only compares
     * with what it read (counted_end). */
    bool open_end;
    unsigned counted_end;
    /* A part of --gpu with no frame of its own: fewer frames than GPUs. */
    bool idle;
} FramePlan;

/* Plans the frames of a --frames or --segment run (part `part` of `parts`,
 * 0 of 0 for none) of a run of `total` frames (-1: not known; a split
 * needs it, counted as the frames will be read), once the context's models
 * and metrics are requested; -1 with the reason in error when the plan
 * cannot be made.  A wrong count can move a frame from one part to
 * another but never change which frames are scored: no part stops reading
 * at the count (only at its own end and the frame after it, or the range's
 * END and --frame_cnt), and the last part reads to the videos' end.  With
 * fewer_parts (--gpu, where the parts are the tool's own), a run of fewer
 * frames than parts is split in one part a frame, and the parts beyond are
 * idle. */
int plan_frames(const CliSettings *s, const QualeContext *ctx, int64_t total, unsigned part,
                unsigned parts, bool fewer_parts, FramePlan *plan, char *error,
                size_t error_size);

/* What was run, in words, for a part's "segment": parts of one run say the
 * same, so that a merge cannot join parts of different runs. */
void describe_run(const CliSettings *s, const QualeContext *ctx, char *text, size_t size);

#endif /* QUALE_TOOLS_FRAME_PLAN_H */
