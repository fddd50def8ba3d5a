/*
 * The run's videos (inputs.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputs.h"

static bool has_y4m_extension(const char *path)
{
    const size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".y4m");
}

/* .y4m files (by name) carry their own format; the others are raw yuv and
 * need -w -h -p -b, unless their first bytes say YUV4MPEG2 or name a
 * container (the reader then reads them as that).  So one input may be
 * .y4m and the other .yuv. */
const QualeVideoFormat *raw_format_for(const CliSettings *s, const char *path)
{
    return has_y4m_extension(path) || !s->raw_given ? NULL : &s->raw;
}

/* The input's filter graph (--vf, --ref-vf, --dist-vf) around reader:
 * 0, or the exit status after saying why (a graph FFmpeg refuses, or whose
 * output quale cannot score, is the user's to fix). */
static int filter_input(const Voice *voice, QualeVideoReader **reader, const char *graph,
                        const char *role)
{
    char error[1024];
    const int err = quale_video_filter(reader, graph, error, sizeof(error));
    if (!err) return 0;
    say(voice, "error", "%s video: %s", role, error);
    quale_video_close(reader);
    return err == -EINVAL || err == -ENOTSUP ? EXIT_USAGE : EXIT_RUN_FAILED;
}

/* The first lane of an input says what a user should know about it.  NULL
 * after saying why, with the exit status in *status. */
static QualeVideoReader *open_input(const CliSettings *s, const Voice *voice, const char *path,
                                    const char *role, bool first_lane, int *status)
{
    const QualeVideoFormat *raw = raw_format_for(s, path);
    char error[512];
    QualeVideoReader *reader = NULL;
    const int err = quale_video_open(&reader, path, raw, error, sizeof(error));
    *status = EXIT_RUN_FAILED;
    if (err) {
        say(voice, "error", "%s video: %s", role, error);
        const char *flag = strcmp(role, "reference") ? "-d" : "-r";
        if (err == -EBADMSG) {
            /* not a usage error: a truncated file says the same */
            say(voice, "hint", "check -w/-h/-p/-b: they must be the raw video's width, height, "
                "chroma and bit depth");
        } else if (err == -EPROTONOSUPPORT) {
            say(voice, "hint", "decode it on the way in: ffmpeg -i %s -strict -1 -f yuv4mpegpipe - "
                "| quale %s - ...", path, flag);
        } else if (err == -ENODATA && !strcmp(path, "-")) {
            say(voice, "hint", "the program writing to quale failed or wrote nothing (ffmpeg writes "
                "10-bit YUV4MPEG2 only with -strict -1)");
        } else if (err == -EPROTO && !s->raw_given && !has_y4m_extension(path) &&
                   strstr(error, "not a YUV4MPEG2 file")) {
            /* A file that is there but is not y4m is likely raw yuv. */
            *status = EXIT_USAGE;
            say(voice, "hint", "raw .yuv input needs -w, -h, -p and -b");
        }
        return NULL;
    }
    if (first_lane && raw && quale_video_is_y4m(reader))
        say(voice, "note", "%s is YUV4MPEG2: it is read with its own header's format; -w/-h/-p/-b "
            "are for raw video", shown(path));
    if (first_lane && s->raw_given && quale_video_codec(reader))
        say(voice, "note", "%s is compressed video (%s), decoded; -w/-h/-p/-b are for raw video",
            shown(path), quale_video_codec(reader));
    const char *graph = strcmp(role, "reference") ? s->dist_vf : s->ref_vf;
    if (graph && (*status = filter_input(voice, &reader, graph, role))) return NULL;
    return reader;
}

/* Extra readers of a regular file share its reading (see prefetch.h); a
 * pipe or stdin has one.  The parts of a --gpu run read with their share:
 * on a 4-GPU host, 4 parts of 1 lane each read 1080p y4m from the page
 * cache in 1.81 s where 4 parts of 3 lanes took 2.35 to 2.62 s
 * (docs/benchmarks.md, "Every GPU of a host"). */
static unsigned lanes_for(const char *path, unsigned lane_share)
{
    struct stat st;
    if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode)) return 1;
    /* QUALE_READ_LANES overrides the choice (tests use it on small machines). */
    const char *forced = getenv("QUALE_READ_LANES");
    if (forced && *forced) {
        const long n = strtol(forced, NULL, 10);
        return n < 1 ? 1 : n > PREFETCH_MAX_LANES ? PREFETCH_MAX_LANES : (unsigned)n;
    }
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const unsigned lanes = cores >= 12 ? 3 : cores >= 4 ? 2 : 1;
    return lanes > lane_share ? lanes / lane_share : 1;
}

int open_lanes(const CliSettings *s, const Voice *voice, Input *in, const char *role,
               unsigned lane_share)
{
    int status;
    in->lanes[0] = open_input(s, voice, in->path, role, true, &status);
    if (!in->lanes[0]) return status;
    in->lane_count = 1;
    /* A decoder's lanes would each decode the whole file, and a filter
     * graph's each run the whole graph (which may keep frames: fps, yadif). */
    const bool filtered = strcmp(role, "reference") ? s->dist_vf != NULL : s->ref_vf != NULL;
    const unsigned want = quale_video_codec(in->lanes[0]) || filtered
                          ? 1 : lanes_for(in->path, lane_share);
    for (unsigned i = 1; i < want; i++) {
        in->lanes[i] = open_input(s, voice, in->path, role, false, &status);
        if (!in->lanes[i]) return status;
        in->lane_count++;
    }
    if (s->score_bitdepth) {
        QualeVideoFormat f;
        quale_video_get_format(in->lanes[0], &f);
        if (f.bitdepth > s->score_bitdepth) {
            say(voice, "error", "--score-bitdepth %u is below the %u bits of %s", s->score_bitdepth,
                f.bitdepth, shown(in->path));
            return EXIT_USAGE;
        }
        for (unsigned i = 0; i < in->lane_count; i++) {
            if (quale_video_set_bitdepth(in->lanes[i], s->score_bitdepth)) {
                say(voice, "error", "%s", quale_video_error(in->lanes[i]));
                return EXIT_RUN_FAILED;
            }
        }
    }
    return 0;
}

void close_lanes(Input *in)
{
    for (unsigned i = 0; i < in->lane_count; i++) quale_video_close(&in->lanes[i]);
    in->lane_count = 0;
}

bool check_formats(const CliSettings *s, const Voice *voice, const QualeVideoFormat *r,
                   const QualeVideoFormat *d)
{
    if (r->width == d->width && r->height == d->height && r->chroma == d->chroma &&
        r->bitdepth == d->bitdepth)
        return true;
    say(voice, "error", "the videos differ: %s is %ux%u %s %u-bit, %s is %ux%u %s %u-bit",
        shown(s->reference), r->width, r->height, quale_chroma_name(r->chroma), r->bitdepth,
        shown(s->distorted), d->width, d->height, quale_chroma_name(d->chroma), d->bitdepth);
    return false;
}

/* The frames the run will score, when the videos tell, counted as `how`
 * says. */
int64_t frames_to_score(const CliSettings *s, Input inputs[2], enum FrameCount how)
{
    const unsigned skips[2] = { s->frame_skip_ref, s->frame_skip_dist };
    int64_t total = -1;
    for (int i = 0; i < 2; i++) {
        QualeVideoReader *video = inputs[i].lanes[0];
        /* y4m's size may count frames its FRAME lines make fewer: more
         * than there are, never fewer, which is all --frames may assume */
        const int64_t n = how == FRAMES_COUNTED ? quale_video_count_frames(video)
                          : how == FRAMES_EXACT && quale_video_codec(video) ? -1
                          : quale_video_frames_in_file(video);
        if (n < 0) return -1;
        const int64_t left = n > (int64_t)skips[i] ? n - (int64_t)skips[i] : 0;
        total = total < 0 || left < total ? left : total;
    }
    if (s->frame_count && total > (int64_t)s->frame_count) total = s->frame_count;
    return total;
}

/* Reads both videos and sends every frame pair; returns the frame count or
 * a negative value after printing why it stopped. */
int score_frames(const CliSettings *s, const Voice *voice, QualeContext *ctx, Input inputs[2],
                 const QualeVideoFormat *format, Progress *progress)
{
    const unsigned skips[2] = { s->frame_skip_ref, s->frame_skip_dist };
    for (int i = 0; i < 2; i++) {
        /* Lane k starts at frame skip + k. */
        for (unsigned k = 0; k < inputs[i].lane_count; k++) {
            const int got = quale_video_skip(inputs[i].lanes[k], skips[i] + k);
            if (got < 0) {
                say(voice, "error", "%s", quale_video_error(inputs[i].lanes[k]));
                return -1;
            }
            if (got == 0 && k == 0 && skips[i]) {
                say(voice, "error", "%s has fewer than %u frames: --frame_skip_%s %u leaves none to "
                    "score", shown(inputs[i].path), skips[i], i ? "dist" : "ref", skips[i]);
                return -1;
            }
        }
    }

    /* Pictures read ahead per lane.  Every picture alive is memory the
     * kernel clears at its first touch and that leaves the caches: on a
     * machine of few cores, 2 ahead scored VMAF v1 at 1080p 10-bit 18%
     * faster than 4 (docs/benchmarks.md); larger ones keep 4. */
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const unsigned depth = cores >= 8 ? 4 : 2;
    Prefetcher *prefetch[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++) {
        if (prefetch_start(&prefetch[i], inputs[i].lanes, inputs[i].lane_count, ctx, format,
                           depth, inputs[i].on_gpu)) {
            say(voice, "error", "cannot start a reader thread");
            prefetch_stop(&prefetch[0]);
            return -1;
        }
    }
    int frames = 0;
    for (;;) {
        if (s->frame_count && (unsigned)frames >= s->frame_count) break;
        QualePicture pics[2];
        int got[2];
        const double asked = now_seconds();
        for (int i = 0; i < 2; i++) got[i] = prefetch_next(prefetch[i], &pics[i]);
        const double read = now_seconds();
        progress->waiting_for_frames += read - asked;
        if (got[0] != 1 || got[1] != 1) {
            for (int i = 0; i < 2; i++)
                if (got[i] == 1) quale_picture_unref(&pics[i]);
        }
        if (got[0] < 0 || got[1] < 0) {
            for (int i = 0; i < 2; i++)
                if (got[i] < 0) say(voice, "error", "%s", prefetch_error(prefetch[i]));
            frames = -1;
            break;
        }
        if (got[0] == 0 || got[1] == 0) {
            if (got[0] != got[1]) {
                const int ended = got[0] == 0 ? 0 : 1;
                const unsigned n = (unsigned)frames;
                say(voice, "warning", "%s ended after %u frame%s, before %s; scoring the %u frame%s "
                    "both have", shown(inputs[ended].path), n + skips[ended],
                    n + skips[ended] == 1 ? "" : "s", shown(inputs[1 - ended].path), n,
                    n == 1 ? "" : "s");
            }
            break;
        }
        const int sent = quale_send_pictures(ctx, &pics[0], &pics[1]);
        progress->sending += now_seconds() - read;
        if (sent) {
            frames = -1;
            break;
        }
        frames++;
        progress_update(progress, ctx, false);
    }
    prefetch_stop(&prefetch[0]);
    prefetch_stop(&prefetch[1]);
    return frames;
}
