/*
 * The run's two videos: opened (each maybe in several lanes, prefetch.h),
 * their formats matched, their frames counted, read and sent.
 */
#ifndef QUALE_TOOLS_QUALE_INPUTS_H
#define QUALE_TOOLS_QUALE_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "messages.h"
#include "prefetch.h"
#include "quale/quale.h"

/* One video, read by one or more lanes (each its own open of the file). */
typedef struct Input {
    const char *path;
    QualeVideoReader *lanes[PREFETCH_MAX_LANES];
    unsigned lane_count;
    bool on_gpu; /* decoded on the GPU into device pictures */
} Input;

/* The raw format -w -h -p -b give a path, NULL when it needs none. */
const QualeVideoFormat *raw_format_for(const CliSettings *s, const char *path);

/* Opens in's lanes: its share of the lanes one run would use (lane_share:
 * the parts reading it at once; one lane where it is decoded or filtered),
 * its filter graph, the depth --score-bitdepth asks.  0, or after saying
 * why the exit status: EXIT_USAGE where the command is wrong (a raw video
 * without -w/-h/-p/-b, --score-bitdepth below a video's). */
int open_lanes(const CliSettings *s, const Voice *voice, Input *in, const char *role,
               unsigned lane_share);
void close_lanes(Input *in);

/* Whether the two formats are one; says how they differ when not. */
bool check_formats(const CliSettings *s, const Voice *voice, const QualeVideoFormat *r,
                   const QualeVideoFormat *d);

/* How frames_to_score() knows a video's frames. */
enum FrameCount {
    FRAMES_DECLARED, /* the sizes, and what containers declare: for progress */
    FRAMES_EXACT,    /* raw video's sizes only (-1 for others): for --frames */
    FRAMES_COUNTED,  /* as they will be read (quale_video_count_frames()) */
};

int64_t frames_to_score(const CliSettings *s, Input inputs[2], enum FrameCount how);

/* Reads both videos and sends every frame pair; returns the frame count or
 * a negative value after saying why it stopped. */
int score_frames(const CliSettings *s, const Voice *voice, QualeContext *ctx, Input inputs[2],
                 const QualeVideoFormat *format, Progress *progress);

#endif /* QUALE_TOOLS_QUALE_INPUTS_H */
