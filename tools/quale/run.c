/*
 * One scoring run, in stages: open the inputs, match their formats,
 * configure the context, score the frames, write the outcome.  Each stage
 * returns 0 to go on, or the run's exit status (STAGE_DONE: finished
 * early, successfully).  A part of a --gpu run is the same run, told so by
 * its RunPart: it speaks only its errors (but the first part), reads with
 * its share of the lanes, and leaves its results in memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame_plan.h"
#include "inputs.h"
#include "messages.h"
#include "model_choice.h"
#include "outcome.h"
#include "output_file.h"
#include "provenance.h"
#include "raw_check.h"
#include "run.h"

/* A stage's "the run is over, and it went well". */
#define STAGE_DONE (-1)

typedef struct Run {
    const CliSettings *s;
    RunPart *part;              /* a part of a --gpu run, or NULL */
    Voice voice;
    Input inputs[2];
    QualeVideoFormat ref_format, dist_format;
    InputNotes notes;
    unsigned decoder_note[2];   /* each compressed video's note */
    int scaled_note;            /* the distorted video's conversion, or -1 */
    size_t scaled_where;        /* where its text says where it is scaled */
    char auto_model[64];        /* -m auto: the version chosen */
    QualeContext *ctx;
    char context_key[4096];     /* what ctx was made for (context_key_of()) */
    FramePlan plan;
    int frames;                 /* read */
    double elapsed;             /* scoring them */
    double score_times[3];      /* of it: waiting for frames, sending, the flush */
    QualeResults *written;      /* the results written, read back */
    char *written_json;
} Run;

/* ---- opening the inputs -------------------------------------------------- */

static bool asks_auto_model(const CliSettings *s)
{
    for (unsigned i = 0; i < s->model_count; i++)
        if (!strcmp(s->models[i], "auto")) return true;
    return false;
}

/* -m auto: VMAF v1's model for the reference, scored at 10 bits as v1 is
 * meant to be (unless --score-bitdepth says otherwise). */
static int resolve_auto_model(Run *r)
{
    if (!asks_auto_model(r->s)) return 0;
    unsigned num = 0, den = 0;
    const bool known = quale_video_frame_rate(r->inputs[0].lanes[0], &num, &den) >= 0 && den;
    char why[256];
    choose_auto_model(&r->ref_format, known ? (double)num / den : 0., r->auto_model,
                      sizeof(r->auto_model), why, sizeof(why));
    say(&r->voice, "note", "-m auto: %s (%s)", r->auto_model, why);
    const bool eight_bits = r->ref_format.bitdepth == 8 && r->dist_format.bitdepth == 8;
    if (r->s->score_bitdepth || !eight_bits) return 0;
    for (int i = 0; i < 2; i++)
        for (unsigned k = 0; k < r->inputs[i].lane_count; k++)
            if (quale_video_set_bitdepth(r->inputs[i].lanes[k], 10)) {
                say(&r->voice, "error", "%s", quale_video_error(r->inputs[i].lanes[k]));
                return EXIT_RUN_FAILED;
            }
    quale_video_get_format(r->inputs[0].lanes[0], &r->ref_format);
    quale_video_get_format(r->inputs[1].lanes[0], &r->dist_format);
    say(&r->voice, "note", "-m auto: the 8-bit videos are scored at 10 bits, as VMAF v1 is meant "
        "to be (--score-bitdepth 10)");
    note_add(&r->notes, "score_bitdepth", "10 (-m auto)");
    return 0;
}

/* The inputs, and what the output will note of them: their decoders, the
 * distorted video's bitrate and frame rate (what a ladder's report plots
 * against), --score-bitdepth and --align. */
static int open_inputs(Run *r)
{
    const CliSettings *s = r->s;
    /* What would fail at the end is checked before the first frame. */
    if (!r->part && s->output && output_file_check(s->output)) return EXIT_RUN_FAILED;
    if (!r->part && s->html && output_file_check(s->html)) return EXIT_RUN_FAILED;
    const unsigned share = r->part ? r->part->parts : 1;
    int status = open_lanes(s, &r->voice, &r->inputs[0], "reference", share);
    if (!status) status = open_lanes(s, &r->voice, &r->inputs[1], "distorted", share);
    if (status) return status;
    quale_video_get_format(r->inputs[0].lanes[0], &r->ref_format);
    quale_video_get_format(r->inputs[1].lanes[0], &r->dist_format);
    /* the decoders' notes say "in software" until a video goes to the GPU */
    for (int i = 0; i < 2; i++)
        if (quale_video_codec(r->inputs[i].lanes[0])) {
            r->decoder_note[i] = r->notes.count;
            note_add(&r->notes, i ? "distorted_decoder" : "reference_decoder",
                     "%s, decoded in software (FFmpeg)", quale_video_codec(r->inputs[i].lanes[0]));
        }
    const QualeVideoReader *dist = r->inputs[1].lanes[0];
    if (quale_video_codec(dist)) {
        const int64_t bits = quale_video_bit_rate(dist);
        unsigned num, den;
        if (bits > 0) note_add(&r->notes, "distorted_bitrate", "%.1f kb/s", bits / 1000.);
        if (quale_video_frame_rate(dist, &num, &den) >= 0)
            note_add(&r->notes, "distorted_frame_rate", "%u/%u", num, den);
    }
    if (s->ref_vf) note_add(&r->notes, "reference_filter", "%s", s->ref_vf);
    if (s->dist_vf) note_add(&r->notes, "distorted_filter", "%s", s->dist_vf);
    if (s->score_bitdepth) note_add(&r->notes, "score_bitdepth", "%u", s->score_bitdepth);
    if (s->align_note[0]) note_add(&r->notes, "alignment", "%s", s->align_note);
    return resolve_auto_model(r);
}

/* ---- matching their formats ---------------------------------------------- */

/* Frames are paired by order: different rates, or a variable one, make
 * pairs of different moments. */
static void warn_frame_rates(const Run *r)
{
    unsigned rn, rd, dn, dd;
    const int ref_rate = quale_video_frame_rate(r->inputs[0].lanes[0], &rn, &rd);
    const int dist_rate = quale_video_frame_rate(r->inputs[1].lanes[0], &dn, &dd);
    if (ref_rate >= 0 && dist_rate >= 0 && (uint64_t)rn * dd != (uint64_t)dn * rd)
        say(&r->voice, "warning", "the frame rates differ: %s is %.3f fps, %s %.3f fps; frames "
            "are paired by their order, so pairs drift apart in time (convert one first, e.g. "
            "ffmpeg -vf fps=...)", shown(r->s->reference), (double)rn / rd,
            shown(r->s->distorted), (double)dn / dd);
    for (int i = 0; i < 2; i++)
        if ((i ? dist_rate : ref_rate) == 1)
            say(&r->voice, "warning", "%s has a variable frame rate: frames are paired by their "
                "order, not their time", shown(r->inputs[i].path));
}

/* Different bit depths: the shallower video's samples are shifted up to
 * the deeper one's depth, losing nothing (what FFmpeg's conversion to a
 * deeper pixel format gives: sample << n). */
static int match_bitdepths(Run *r)
{
    const unsigned ref_depth = r->ref_format.bitdepth, dist_depth = r->dist_format.bitdepth;
    if (dist_depth == ref_depth) return 0;
    const int up = dist_depth < ref_depth ? 1 : 0;
    const unsigned from = up ? dist_depth : ref_depth, depth = up ? ref_depth : dist_depth;
    Input *in = &r->inputs[up];
    for (unsigned k = 0; k < in->lane_count; k++) {
        if (quale_video_set_bitdepth(in->lanes[k], depth)) {
            say(&r->voice, "error", "%s", quale_video_error(in->lanes[k]));
            return EXIT_RUN_FAILED;
        }
    }
    say(&r->voice, "note", "%s is %u-bit: scored at the %u bits of %s (samples shifted left by "
        "%u)", shown(in->path), from, depth, shown(r->inputs[!up].path), depth - from);
    note_add(&r->notes, up ? "distorted_bitdepth" : "reference_bitdepth",
             "%u, shifted left by %u to %u", from, depth - from, depth);
    quale_video_get_format(in->lanes[0], up ? &r->dist_format : &r->ref_format);
    return 0;
}

/* A distorted video of another size or chroma format is converted to the
 * reference's; where it is scaled ends its note, since the GPU's decoder
 * may take that over (configure()). */
static int match_sizes(Run *r)
{
    const QualeVideoFormat ref = r->ref_format, dist = r->dist_format;
    if (dist.width == ref.width && dist.height == ref.height && dist.chroma == ref.chroma)
        return 0;
    const char *scaler = r->s->scaler ? r->s->scaler : "bicubic";
    Input *in = &r->inputs[1];
    for (unsigned k = 0; k < in->lane_count; k++) {
        if (quale_video_convert(in->lanes[k], ref.width, ref.height, ref.chroma, scaler)) {
            say(&r->voice, "error", "%s", quale_video_error(in->lanes[k]));
            return EXIT_RUN_FAILED;
        }
    }
    say(&r->voice, "note", "%s is %ux%u %s: converted to the reference's %ux%u %s (%s, FFmpeg's "
        "swscale with accurate_rnd+bitexact)", shown(r->s->distorted), dist.width, dist.height,
        quale_chroma_name(dist.chroma), ref.width, ref.height, quale_chroma_name(ref.chroma),
        scaler);
    r->scaled_note = (int)r->notes.count;
    note_add(&r->notes, "distorted_scaled", "%ux%u %s to %ux%u %s, %s", dist.width, dist.height,
             quale_chroma_name(dist.chroma), ref.width, ref.height, quale_chroma_name(ref.chroma),
             scaler);
    char *text = r->notes.text[r->scaled_note];
    r->scaled_where = strlen(text);
    snprintf(text + r->scaled_where, sizeof(r->notes.text[0]) - r->scaled_where,
             " (swscale, accurate_rnd+bitexact)");
    quale_video_get_format(in->lanes[0], &r->dist_format);
    return 0;
}

/* A wrong format that divides the file's size is not an error the reader
 * can see; the first frame may show it.  Scores of a misread video mean
 * nothing, so a run that looks misread stops (a usage error) unless
 * --force says the format is right. */
static int check_raw_layouts(Run *r)
{
    const CliSettings *s = r->s;
    int status = 0;
    for (int i = 0; i < 2; i++) {
        const Input *in = &r->inputs[i];
        char why[256];
        if (i == 1 && !strcmp(r->inputs[0].path, in->path)) break;
        if (!s->raw_given || quale_video_is_y4m(in->lanes[0]) || quale_video_codec(in->lanes[0]) ||
            !raw_check(in->path, &s->raw, why, sizeof(why)))
            continue;
        say(&r->voice, s->force ? "warning" : "error", "%s does not look like %ux%u %s %u-bit "
            "video: %s; check -w/-h/-p/-b, the scores mean nothing if they are wrong%s",
            shown(in->path), s->raw.width, s->raw.height, quale_chroma_name(s->raw.chroma),
            s->raw.bitdepth, why, s->force ? " (--force: scored all the same)"
                                           : " (--force scores it all the same)");
        if (!s->force) status = EXIT_USAGE;
    }
    return status;
}

static int match_formats(Run *r)
{
    const CliSettings *s = r->s;
    warn_frame_rates(r);
    if ((r->ref_format.chroma == QUALE_CHROMA_400) != (r->dist_format.chroma == QUALE_CHROMA_400)) {
        say(&r->voice, "error", "the videos differ: %s is %s, %s is %s; quale converts between "
            "4:2:0, 4:2:2 and 4:4:4 only", shown(s->reference),
            quale_chroma_name(r->ref_format.chroma), shown(s->distorted),
            quale_chroma_name(r->dist_format.chroma));
        return EXIT_RUN_FAILED;
    }
    int status = match_bitdepths(r);
    if (!status) status = match_sizes(r);
    if (status) return status;
    if (!check_formats(s, &r->voice, &r->ref_format, &r->dist_format)) return EXIT_RUN_FAILED;
    return check_raw_layouts(r);
}

/* ---- configuring the context --------------------------------------------- */

/* A model or metric the library refused: what was asked is wrong (a usage
 * error: an unknown name, a bad option, a model file that is not there or
 * not a model), unless the system failed. */
/* QUALE_RUN_STAGE_TIMES=1: each stage's milliseconds on stderr, to see
 * where a short pair's time goes (docs/benchmarks.md, "quale batch"). */
static bool stage_times_asked(void)
{
    const char *timing = getenv("QUALE_RUN_STAGE_TIMES");
    return timing && *timing && strcmp(timing, "0");
}

static int configuration_status(int err)
{
    return err == -ENOMEM || err == -EIO ? EXIT_RUN_FAILED : EXIT_USAGE;
}

static void hint_gpu(const Run *r)
{
    /* Said once, and only where it helps: an NVIDIA driver is loaded, the
     * build has CUDA, and the user chose nothing. */
    if (r->s->backend_given || r->s->quiet || !quale_backend_built(QUALE_BACKEND_CUDA) ||
        access("/proc/driver/nvidia/gpus", F_OK))
        return;
    say(&r->voice, "note", "this machine has an NVIDIA GPU: --backend cuda scores on it, with "
        "the same numbers");
}

/* VMAF v1 was trained on 10-bit video: 8-bit video scored at 8 bits gives
 * other numbers (92.55 at 8 bits, 91.76 at 10 on the corpus's dune pair). */
static void note_v1_bitdepth(const Run *r)
{
    if (r->s->no_prediction || r->ref_format.bitdepth != 8) return;
    for (unsigned i = 0; i < quale_model_count(r->ctx); i++) {
        QualeModelInfo info;
        if (quale_model_info(r->ctx, i, &info) || !model_is_v1(info.label)) continue;
        say(&r->voice, "note", "%s is VMAF v1, meant to be scored at 10 bits: Netflix's guidance "
            "for 8-bit video is --score-bitdepth 10 (the scores differ)", info.label);
        return;
    }
}

/* A --feature as the context is asked for it.  xpsnr's temporal term
 * depends on the frame rate, which FFmpeg's filter takes from its first
 * input: the reference's rate goes with it where the file has one (y4m, a
 * container) and the user set none (raw video has none, and xpsnr's default
 * is FFmpeg's rawvideo's 25).  The filter uses the rate's integer part. */
static const char *feature_spec(const Run *r, const char *feature, char *spec, size_t size)
{
    const size_t name = strcspn(feature, "=");
    unsigned num, den;
    if (name != 5 || strncmp(feature, "xpsnr", 5) || strstr(feature, "fps=") ||
        !r->inputs[0].lane_count || quale_video_frame_rate(r->inputs[0].lanes[0], &num, &den) < 0 ||
        !den)
        return feature;
    snprintf(spec, size, "%s%sfps=%u", feature, feature[name] ? ":" : "=", num / den);
    return spec;
}

static int request_models_and_features(Run *r)
{
    const CliSettings *s = r->s;
    int err;
    if (!s->no_prediction && s->model_count == 0 &&
        (err = quale_use_model(r->ctx, "version=vmaf_v0.6.1")))
        return configuration_status(err);
    for (unsigned i = 0; i < s->model_count; i++) {
        /* With -n, the model's features only. */
        char spec[4096];
        if (!strcmp(s->models[i], "auto"))
            snprintf(spec, sizeof(spec), "version=%s%s", r->auto_model,
                     s->no_prediction ? ":no_prediction" : "");
        else
            snprintf(spec, sizeof(spec), "%s%s", s->models[i],
                     s->no_prediction ? ":no_prediction" : "");
        if ((err = quale_use_model(r->ctx, spec))) return configuration_status(err);
    }
    for (unsigned i = 0; i < s->feature_count; i++) {
        char spec[4096];
        const char *asked = feature_spec(r, s->features[i], spec, sizeof(spec));
        if ((err = quale_use_metric(r->ctx, asked))) return configuration_status(err);
    }
    note_v1_bitdepth(r);
    return 0;
}

/* On the CUDA backend (asked for, or the one --backend auto took),
 * compressed videos decode on the GPU where NVDEC can: their frames then
 * never visit the host.  QUALE_DECODE_ON_CPU=1 keeps them on the CPU, for
 * comparisons. */
static int decode_on_gpu(Run *r)
{
    const char *cpu_only = getenv("QUALE_DECODE_ON_CPU");
    const bool try_gpu = quale_backend(r->ctx) == QUALE_BACKEND_CUDA &&
                         !(cpu_only && *cpu_only == '1');
    for (int i = 0; i < 2; i++) {
        Input *in = &r->inputs[i];
        if (!quale_video_codec(in->lanes[0])) continue;
        const int on_gpu = try_gpu ? quale_video_decode_on_gpu(in->lanes[0], r->ctx) : 0;
        if (on_gpu < 0) {
            say(&r->voice, "error", "%s", quale_video_error(in->lanes[0]));
            return EXIT_RUN_FAILED;
        }
        in->on_gpu = on_gpu == 1;
        if (try_gpu && !on_gpu)
            say(&r->voice, "note", "%s decodes on the CPU: %s", shown(in->path),
                quale_video_error(in->lanes[0]));
        if (!on_gpu) continue;
        snprintf(r->notes.text[r->decoder_note[i]], sizeof(r->notes.text[0]),
                 "%s, decoded on the GPU (NVDEC)", quale_video_codec(in->lanes[0]));
        /* the decoder scales there too, with swscale's arithmetic */
        if (i == 1 && r->scaled_note >= 0) {
            snprintf(r->notes.text[r->scaled_note] + r->scaled_where,
                     sizeof(r->notes.text[0]) - r->scaled_where,
                     " (swscale's accurate_rnd+bitexact arithmetic, on the GPU)");
            say(&r->voice, "note", "%s is scaled on the GPU as it is decoded, as swscale "
                "scales it", shown(in->path));
        }
    }
    return 0;
}

/* What the run's context is made of: its settings, requests and scoring
 * format; runs of one key can score with one context (quale batch).  0 when
 * the key would not fit (such a run gets a context of its own). */
static int context_key_of(const Run *r, char *key, size_t size)
{
    const CliSettings *s = r->s;
    const QualeVideoFormat *f = &r->ref_format;
    size_t n = (size_t)snprintf(key, size, "%d %d %u %u %u %d %d %ux%u %d %u %s", (int)s->backend,
                                s->gpu_device, s->threads, s->subsample, s->cpumask, s->quiet,
                                s->no_prediction, f->width, f->height, (int)f->chroma,
                                f->bitdepth, r->auto_model);
    for (unsigned i = 0; i < s->model_count && n < size; i++)
        n += (size_t)snprintf(key + n, size - n, " -m %s", s->models[i]);
    for (unsigned i = 0; i < s->feature_count && n < size; i++) {
        char spec[4096];
        n += (size_t)snprintf(key + n, size - n, " --feature %s",
                              feature_spec(r, s->features[i], spec, sizeof(spec)));
    }
    return n < size;
}

/* quale batch: the context of the last pair where this run's key is its
 * own (1), or none (0; the kept one, of another key, is closed). */
static int take_kept_context(Run *r)
{
    ContextReuse *reuse = r->s->reuse;
    if (!reuse || r->part || !context_key_of(r, r->context_key, sizeof(r->context_key))) {
        r->context_key[0] = '\0';
        return 0;
    }
    if (reuse->ctx && !strcmp(reuse->key, r->context_key)) {
        r->ctx = reuse->ctx;
        reuse->ctx = NULL;
        reuse->voice = r->voice;
        reuse->reused++;
        return 1;
    }
    quale_close(&reuse->ctx);
    reuse->voice = r->voice;
    return 0;
}

static int configure(Run *r)
{
    const CliSettings *s = r->s;
    if (take_kept_context(r)) {
        note_v1_bitdepth(r);
        return decode_on_gpu(r);
    }
    QualeSettings settings;
    quale_settings_default(&settings);
    settings.threads = s->threads;
    settings.subsample = s->subsample;
    settings.cpumask = s->cpumask;
    settings.backend = s->backend;
    settings.gpu_device = r->part ? r->part->gpu : s->gpu_device;
    settings.log_level = s->quiet ? QUALE_LOG_WARNING : QUALE_LOG_INFO;
    /* with the stage times, the library's own timings of its start and end */
    if (stage_times_asked()) settings.log_level = QUALE_LOG_DEBUG;
    settings.log = log_message;
    /* the library speaks with the run's voice (the batch's, which every
     * run that takes the context speaks with) */
    settings.log_cookie = s->reuse && r->context_key[0] ? (void *)&s->reuse->voice : &r->voice;
    hint_gpu(r);
    if (quale_open(&r->ctx, &settings)) return EXIT_RUN_FAILED;
    int status = request_models_and_features(r);
    if (!status) status = decode_on_gpu(r);
    return status;
}

/* ---- scoring ------------------------------------------------------------- */

/* --frames, --segment and the parts of --gpu: the frames to write, and
 * those to read around them.  A split needs the frame count, as the frames
 * will be read; the parts of --gpu find it once between them. */
static int plan(Run *r, int64_t *total)
{
    const CliSettings *s = r->s;
    RunPart *part = r->part;
    const bool split = s->segment_parts || (part && part->parts > 1);
    const enum FrameCount how = split ? FRAMES_COUNTED : FRAMES_EXACT;
    if (part) {
        pthread_mutex_lock(&part->count->lock);
        if (!part->count->known) part->count->total = frames_to_score(s, r->inputs, how);
        part->count->known = true;
        *total = part->count->total;
        pthread_mutex_unlock(&part->count->lock);
    } else {
        *total = frames_to_score(s, r->inputs, how);
    }
    char error[512];
    if (plan_frames(s, r->ctx, *total, part ? part->part : s->segment_part,
                    part ? part->parts : s->segment_parts, part != NULL, &r->plan, error,
                    sizeof(error))) {
        say(&r->voice, "error", "%s", error);
        return EXIT_RUN_FAILED;
    }
    if (r->plan.idle) {
        /* fewer frames than GPUs: the parts before this one have them all */
        part->idle = true;
        return STAGE_DONE;
    }
    if (r->plan.partial)
        for (unsigned i = 0; i < s->feature_count; i++)
            if (strstr(s->features[i], "heatmaps_path")) {
                say(&r->voice, "error", "cambi's heatmaps are written frame by frame into one "
                    "file: a run of part of the frames (--frames, --segment, --gpu) cannot "
                    "write them");
                return EXIT_RUN_FAILED;
            }
    return 0;
}

/* What the decoders left to say: samples clamped, damaged frames. */
static void warn_input_damage(const Run *r)
{
    for (int i = 0; i < 2; i++) {
        const Input *in = &r->inputs[i];
        uint64_t clamped = 0, damaged = 0;
        for (unsigned k = 0; k < in->lane_count; k++) {
            clamped += quale_video_clamped_samples(in->lanes[k]);
            damaged += quale_video_damaged_frames(in->lanes[k]);
        }
        if (clamped)
            say(&r->voice, "warning", "%s: %llu samples exceeded %u bits and were clamped",
                shown(in->path), (unsigned long long)clamped, r->ref_format.bitdepth);
        if (damaged)
            say(&r->voice, "warning", "%s: the decoder found %llu damaged frame%s (a corrupt "
                "bitstream, decoded with concealment): %s of repaired pictures", shown(in->path),
                (unsigned long long)damaged, damaged == 1 ? "" : "s",
                damaged == 1 ? "its scores are those" : "their scores are those");
    }
}

static int score(Run *r)
{
    const CliSettings *s = r->s;
    int64_t total;
    int status = plan(r, &total);
    if (status) return status;
    CliSettings read_settings = *s;
    if (r->plan.partial) {
        read_settings.frame_skip_ref += r->plan.read_first;
        read_settings.frame_skip_dist += r->plan.read_first;
        read_settings.frame_count = r->plan.read_count;
    }
    const unsigned planes = quale_planes_needed(r->ctx);
    for (int i = 0; i < 2; i++)
        for (unsigned k = 0; k < r->inputs[i].lane_count; k++)
            quale_video_set_planes(r->inputs[i].lanes[k], planes);

    Progress progress = { .enabled = !r->part && !s->quiet && isatty(fileno(stderr)) };
    if (r->plan.partial) progress.total = r->plan.read_count ? (int64_t)r->plan.read_count : -1;
    else if (s->segment_parts || (r->part && r->part->parts > 1)) progress.total = total;
    else progress.total = frames_to_score(s, r->inputs, FRAMES_DECLARED);
    const double start = now_seconds();
    progress.start = start;
    progress.last = start - 1; /* the first frame shows at once */
    r->frames = score_frames(&read_settings, &r->voice, r->ctx, r->inputs, &r->ref_format,
                             &progress);
    if (r->frames < 0) return EXIT_RUN_FAILED;
    if (r->frames == 0) {
        say(&r->voice, "error", "no frames to score in %s and %s", shown(s->reference),
            shown(s->distorted));
        return EXIT_RUN_FAILED;
    }
    const double flushing = now_seconds();
    if (quale_flush(r->ctx)) return EXIT_RUN_FAILED;
    r->elapsed = now_seconds() - start;
    r->score_times[0] = progress.waiting_for_frames;
    r->score_times[1] = progress.sending;
    r->score_times[2] = now_seconds() - flushing;
    progress_update(&progress, r->ctx, true);
    warn_input_damage(r);
    return 0;
}

/* ---- the outcome --------------------------------------------------------- */

/* The frames of a partial run's plan that were read, as the output lists
 * them (and the part's segment); the frames listed, or 0 after saying
 * why there are none. */
static unsigned partial_output(Run *r, ResultsOutput *out, QualeSegment *segment,
                               char *run_text, size_t run_text_size)
{
    const CliSettings *s = r->s;
    const FramePlan *p = &r->plan;
    const unsigned read_end = p->read_first + (unsigned)r->frames;
    const unsigned end = p->end && p->end < read_end ? p->end : read_end;
    /* A part before the last must hold all its frames: the next part
     * starts after them. */
    if (read_end <= p->first || (p->parts && !p->open_end && read_end < p->end)) {
        say(&r->voice, "error", "the videos end at frame %u, before %s frame %u: they have fewer "
            "frames than %s", read_end - 1, p->parts ? "this part's last" : "the first asked,",
            read_end <= p->first ? p->first : p->end - 1,
            p->parts ? "were counted" : "--frames asks for");
        return 0;
    }
    if (p->end > read_end)
        say(&r->voice, "warning", "--frames %u:%u: the videos end at frame %u; scoring %u to %u",
            s->frames_first, s->frames_end, read_end - 1, p->first, end - 1);
    else if (p->open_end && end != p->counted_end)
        say(&r->voice, "warning", "the videos were counted to end at frame %u, but they end at "
            "frame %u: this last part scored frames %u to %u", p->counted_end - 1, end - 1,
            p->first, end - 1);
    out->options.frame_first = p->first - p->read_first;
    out->options.frame_end = end - p->read_first;
    out->options.frame_number_offset = p->read_first;
    if (p->parts) {
        describe_run(s, r->ctx, run_text, run_text_size);
        *segment = (QualeSegment){ .part = p->part, .parts = p->parts, .first = p->first,
                                   .end = end, .range_first = p->range_first,
                                   .precision = s->precision, .run = run_text };
        out->options.segment = segment;
    }
    return end - p->first;
}

/* A part of a --gpu run: its results kept for the merge, with the
 * models' names for the summary. */
static int keep_part(Run *r, const ResultsOutput *out)
{
    RunPart *part = r->part;
    part->seconds = r->elapsed;
    if (format_to_memory(&r->voice, out, &part->json, &part->json_size)) return EXIT_RUN_FAILED;
    const unsigned models = quale_model_count(r->ctx);
    for (unsigned i = 0; i < models && part->model_count < CLI_MAX_ENTRIES; i++) {
        QualeModelInfo info;
        if (quale_model_info(r->ctx, i, &info)) continue;
        QualeModelInfo *m = &part->models[part->model_count++];
        m->name = strdup(info.name);
        m->label = strdup(info.label);
        m->bootstrap = info.bootstrap;
        if (!m->name || !m->label) return EXIT_RUN_FAILED;
    }
    return 0;
}

/* The results file, the report page and the summary of a whole run. */
static int write_outcome(Run *r, ResultsOutput *out)
{
    const CliSettings *s = r->s;
    int status = s->output ? write_results(s, out) : 0;
    QualeModelInfo models[CLI_MAX_ENTRIES];
    SummarySource summary = { .ctx = r->ctx, .models = models };
    for (unsigned i = 0; i < quale_model_count(r->ctx) && summary.model_count < CLI_MAX_ENTRIES;
         i++)
        if (!quale_model_info(r->ctx, i, &models[summary.model_count])) summary.model_count++;
    if ((r->plan.partial && (!s->output || !s->quiet)) || s->html) {
        /* the summary pools the frames written, not those read around them */
        size_t size = 0;
        out->format = QUALE_OUTPUT_JSON;
        out->options.precision = -1;
        char error[512] = "";
        if (format_to_memory(&r->voice, out, &r->written_json, &size) ||
            quale_results_read(&r->written, r->written_json, size, "the results", error,
                               sizeof(error))) {
            say(&r->voice, "error", "the summary: %s", error);
            return EXIT_RUN_FAILED;
        }
        if (r->plan.partial) summary.results = r->written;
    }
    summary.segment = out->options.segment;
    if (s->html && status == 0)
        status = write_html(s, r->written, models, summary.model_count, r->inputs[1].lanes[0],
                            quale_backend(r->ctx), 1);
    if (!s->output || !s->quiet) print_summary(s->output ? stderr : stdout, s, &summary);
    /* The summary is the results when there is no -o: it must arrive. */
    if (!s->output && (fflush(stdout) || ferror(stdout))) {
        say(&r->voice, "error", "writing the summary failed: %s", strerror(errno));
        status = EXIT_RUN_FAILED;
    }
    return status;
}

static int finish(Run *r)
{
    const CliSettings *s = r->s;
    ResultsOutput out = {
        .ctx = r->ctx,
        .format = r->part ? QUALE_OUTPUT_JSON : s->output_format,
        .options = { .precision = s->precision, .notes = r->notes.note,
                     .note_count = r->notes.count, .pool_methods = s->pools,
                     .pool_method_count = s->pool_count },
    };
    QualeSegment segment;
    char run_text[4096];
    unsigned listed = (unsigned)r->frames;
    if (r->plan.partial &&
        !(listed = partial_output(r, &out, &segment, run_text, sizeof(run_text))))
        return EXIT_RUN_FAILED;
    out.options.fps = r->elapsed > 0 ? listed / r->elapsed : 0.;
    /* what produced the results: the library's part and the tool's */
    ToolProvenance provenance;
    if (provenance_gather(&provenance, s, r->inputs, &r->notes)) {
        say(&r->voice, "error", "out of memory");
        provenance_release(&provenance);
        return EXIT_RUN_FAILED;
    }
    out.options.describe_run = 1;
    out.options.provenance = provenance.records;
    out.options.provenance_count = provenance.count;
    const int status = r->part ? keep_part(r, &out) : write_outcome(r, &out);
    provenance_release(&provenance);
    return status;
}

/* ---- the run -------------------------------------------------------------- */

int run(const CliSettings *s, RunPart *part)
{
    Run r = {
        .s = s,
        .part = part,
        .voice = { .muted = part && part->part > 1, .label = s->label },
        .inputs = { { .path = s->reference }, { .path = s->distorted } },
        .scaled_note = -1,
    };
    int (*const stages[])(Run *) = { open_inputs, match_formats, configure, score, finish };
    static const char *const stage_names[] = { "open", "match", "configure", "score", "finish" };
    const bool timed = stage_times_asked();
    double stage_ms[5] = { 0 };
    const double started = timed ? now_seconds() : 0;
    int status = 0;
    for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]) && !status; i++) {
        const double t0 = timed ? now_seconds() : 0;
        status = stages[i](&r);
        if (timed) stage_ms[i] = 1e3 * (now_seconds() - t0);
    }
    if (status == STAGE_DONE) status = 0;
    const double closing = timed ? now_seconds() : 0;
    /* The readers first: a decoder on the GPU holds memory of the
     * context's CUDA context, which closing the context may end. */
    close_lanes(&r.inputs[0]);
    close_lanes(&r.inputs[1]);
    quale_results_close(&r.written);
    free(r.written_json);
    /* quale batch: the context stays for the next pair of its key, reset.
     * On the backends whose reset is held to fresh contexts by the tests
     * (the CPU, Vulkan and CUDA; test_api's reset case); HIP's waits for
     * its run on an AMD GPU.  QUALE_BATCH_REUSE=0 opens one per pair (to
     * measure what the reuse saves). */
    const enum QualeBackend used = r.ctx ? quale_backend(r.ctx) : QUALE_BACKEND_CPU;
    const char *reuse_env = getenv("QUALE_BATCH_REUSE");
    const bool resettable = used != QUALE_BACKEND_HIP && !(reuse_env && !strcmp(reuse_env, "0"));
    if (s->reuse && !status && r.ctx && r.context_key[0] && resettable && !quale_reset(r.ctx)) {
        s->reuse->ctx = r.ctx;
        snprintf(s->reuse->key, sizeof(s->reuse->key), "%s", r.context_key);
        r.ctx = NULL;
    }
    quale_close(&r.ctx);
    if (timed)
        fprintf(stderr, "quale: stages (ms): %s %.2f, %s %.2f, %s %.2f, %s %.2f, %s %.2f, "
                "close %.2f, run %.2f; score: frames waited for %.2f, sending %.2f, flush "
                "%.2f\n", stage_names[0], stage_ms[0], stage_names[1], stage_ms[1],
                stage_names[2], stage_ms[2], stage_names[3], stage_ms[3], stage_names[4],
                stage_ms[4], 1e3 * (now_seconds() - closing), 1e3 * (now_seconds() - started),
                1e3 * r.score_times[0], 1e3 * r.score_times[1], 1e3 * r.score_times[2]);
    return status;
}
