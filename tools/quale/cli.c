#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

enum {
    ARG_XML = 256,
    ARG_JSON,
    ARG_CSV,
    ARG_SUB,
    ARG_THREADS,
    ARG_FEATURE,
    ARG_SUBSAMPLE,
    ARG_CPUMASK,
    ARG_GPUMASK,
    ARG_AOM_CTC,
    ARG_NFLX_CTC,
    ARG_FRAME_CNT,
    ARG_FRAME_SKIP_REF,
    ARG_FRAME_SKIP_DIST,
    ARG_BACKEND,
    ARG_PRECISION,
    ARG_HELP,
    ARG_LIST_FEATURES,
    ARG_GPU_DEVICE,
    ARG_LIST_MODELS,
    ARG_SCORE_BITDEPTH,
    ARG_LIST_DEVICES,
    ARG_ALIGN,
    ARG_ALIGN_WINDOW,
    ARG_SCALER,
    ARG_SEGMENT,
    ARG_FRAMES,
    ARG_GPU,
    ARG_POOL,
    ARG_HTML,
    ARG_FORCE,
    ARG_VF,
    ARG_REF_VF,
    ARG_DIST_VF,
};

/* libvmaf's short flags; all others are long only. */
#define SHORT_OPTIONS "r:d:w:h:p:b:m:o:nvq"

static const struct option long_options[] = {
    { "reference", required_argument, NULL, 'r' },
    { "distorted", required_argument, NULL, 'd' },
    { "width", required_argument, NULL, 'w' },
    { "height", required_argument, NULL, 'h' },
    { "pixel_format", required_argument, NULL, 'p' },
    { "bitdepth", required_argument, NULL, 'b' },
    { "model", required_argument, NULL, 'm' },
    { "output", required_argument, NULL, 'o' },
    { "xml", no_argument, NULL, ARG_XML },
    { "json", no_argument, NULL, ARG_JSON },
    { "csv", no_argument, NULL, ARG_CSV },
    { "sub", no_argument, NULL, ARG_SUB },
    { "threads", required_argument, NULL, ARG_THREADS },
    { "feature", required_argument, NULL, ARG_FEATURE },
    { "subsample", required_argument, NULL, ARG_SUBSAMPLE },
    { "cpumask", required_argument, NULL, ARG_CPUMASK },
    { "gpumask", required_argument, NULL, ARG_GPUMASK },
    { "aom_ctc", required_argument, NULL, ARG_AOM_CTC },
    { "nflx_ctc", required_argument, NULL, ARG_NFLX_CTC },
    { "frame_cnt", required_argument, NULL, ARG_FRAME_CNT },
    { "frame_skip_ref", required_argument, NULL, ARG_FRAME_SKIP_REF },
    { "frame_skip_dist", required_argument, NULL, ARG_FRAME_SKIP_DIST },
    { "no_prediction", no_argument, NULL, 'n' },
    { "version", no_argument, NULL, 'v' },
    { "quiet", no_argument, NULL, 'q' },
    { "backend", required_argument, NULL, ARG_BACKEND },
    { "precision", required_argument, NULL, ARG_PRECISION },
    { "help", no_argument, NULL, ARG_HELP },
    { "list-features", no_argument, NULL, ARG_LIST_FEATURES },
    { "list-models", no_argument, NULL, ARG_LIST_MODELS },
    { "list-devices", no_argument, NULL, ARG_LIST_DEVICES },
    { "align", required_argument, NULL, ARG_ALIGN },
    { "align-window", required_argument, NULL, ARG_ALIGN_WINDOW },
    { "scaler", required_argument, NULL, ARG_SCALER },
    { "gpu_device", required_argument, NULL, ARG_GPU_DEVICE },
    { "score-bitdepth", required_argument, NULL, ARG_SCORE_BITDEPTH },
    { "vulkan_device", required_argument, NULL, ARG_GPU_DEVICE },
    { "segment", required_argument, NULL, ARG_SEGMENT },
    { "frames", required_argument, NULL, ARG_FRAMES },
    { "gpu", required_argument, NULL, ARG_GPU },
    { "pool", required_argument, NULL, ARG_POOL },
    { "html", required_argument, NULL, ARG_HTML },
    { "force", no_argument, NULL, ARG_FORCE },
    { "vf", required_argument, NULL, ARG_VF },
    { "ref-vf", required_argument, NULL, ARG_REF_VF },
    { "dist-vf", required_argument, NULL, ARG_DIST_VF },
    { NULL, 0, NULL, 0 },
};

void cli_print_usage(FILE *f)
{
    fprintf(f,
        "Usage: quale -r REFERENCE -d DISTORTED [options]\n"
        "\n"
        "Scores a distorted video against its reference: VMAF and the metrics\n"
        "around it.  .y4m files carry their format; raw .yuv needs -w -h -p -b;\n"
        "compressed files (mp4, mkv, webm, ...) are decoded.\n"
        "\n"
        "Input:\n"
        "  -r, --reference PATH      reference video (.y4m, .yuv or compressed;\n"
        "                            - for stdin)\n"
        "  -d, --distorted PATH      distorted video (the same)\n"
        "  -w, --width N             width of raw .yuv input\n"
        "  -h, --height N            height of raw .yuv input\n"
        "  -p, --pixel_format F      420, 422, 444 or 400 for raw .yuv input\n"
        "  -b, --bitdepth N          8 to 16 for raw .yuv input (LE samples above 8)\n"
        "      --frame_cnt N         score at most N frames\n"
        "      --frame_skip_ref N    skip the first N reference frames\n"
        "      --frame_skip_dist N   skip the first N distorted frames\n"
        "      --frames FIRST:END    score frames FIRST to END - 1 (END may be left\n"
        "                            out: to the last), valued and numbered as in\n"
        "                            the whole run\n"
        "      --align auto          find the frame offset between the videos (luma\n"
        "                            PSNR of their first frames) and skip to it\n"
        "      --align-window N      offsets tried each way (default 15)\n"
        "      --scaler S            a distorted video of another size or chroma\n"
        "                            format is converted to the reference's with S:\n"
        "                            bicubic (default), bilinear, lanczos, neighbor,\n"
        "                            area or spline (a video of fewer bits is\n"
        "                            shifted up to the other's depth)\n"
        "      --ref-vf GRAPH        an FFmpeg filter graph the reference goes\n"
        "                            through before it is scored, as with ffmpeg\n"
        "                            -vf GRAPH (yadif, crop=W:H:X:Y, pad=W:H:X:Y,\n"
        "                            fps=30, scale=W:H, chains: \"yadif,crop=...\")\n"
        "      --dist-vf GRAPH       the same for the distorted video\n"
        "      --vf GRAPH            the same graph for both\n"
        "      --subsample N         score every Nth frame\n"
        "      --score-bitdepth N    score both videos at N bits (9 to 16), samples\n"
        "                            shifted left: VMAF v1 is meant to be measured\n"
        "                            at 10 bits, also for 8-bit video\n"
        "      --force               score raw video whose first frame does not\n"
        "                            look like -w -h -p -b (else an error)\n"
        "\n"
        "What to compute:\n"
        "  -m, --model SPEC          version=NAME or path=FILE, with :name=KEY,\n"
        "                            :disable_clip, :enable_transform,\n"
        "                            :METRIC.OPTION=VALUE (default version=vmaf_v0.6.1);\n"
        "                            auto: VMAF v1's model for the reference's size\n"
        "                            and frame rate (4K, HFR), scored at 10 bits\n"
        "      --feature NAME[=OPT=VAL:...]  an extra metric (see --list-features)\n"
        "  -n, --no_prediction       metrics only, no model (with -m: the model's\n"
        "                            features, without its score)\n"
        "      --aom_ctc VERSION     AOM CTC preset (v1.0 ... v7.0)\n"
        "      --nflx_ctc VERSION    Netflix CTC preset (v1.0)\n"
        "\n"
        "Output:\n"
        "  -o, --output PATH         write results to PATH (- for stdout)\n"
        "      --xml | --json | --csv | --sub   format of the results: without\n"
        "                            one, -o's extension (.xml .json .csv\n"
        "                            .sub), else XML; without -o, to stdout\n"
        "      --html PATH           also a report: one HTML page of the results\n"
        "                            (curves, worst frames; quale report does it\n"
        "                            for results files)\n"
        "      --pool M[,M...]       the summary's pooling (FFmpeg's pool=: mean, min,\n"
        "                            harmonic_mean; also max, pN the N-th percentile,\n"
        "                            lowN the mean of the lowest N%%); pN and lowN\n"
        "                            are written in the outputs' pooled values too\n"
        "      --precision N         N digits after the point (libvmaf writes 6);\n"
        "                            default: full precision, %%.17g\n"
        "  -q, --quiet               no progress line\n"
        "\n"
        "Running:\n"
        "      --threads N           worker threads (default: all cores; at most\n"
        "                            twice the cores, or 8: more only take memory)\n"
        "      --backend B           cpu, cuda, hip, vulkan or auto (default cpu;\n"
        "                            auto: CUDA, else HIP, else a hardware Vulkan\n"
        "                            device, else cpu)\n"
        "      --gpu_device N        GPU to use (also --vulkan_device; see\n"
        "                            --list-devices)\n"
        "      --cpumask MASK        CPU features to leave unused\n"
        "      --gpumask MASK        accepted for libvmaf compatibility\n"
        "      --gpu all|0,1,3       spread the frames over several GPUs of the\n"
        "                            --backend (cuda, hip or vulkan); the same\n"
        "                            numbers as one GPU\n"
        "\n"
        "Split runs (docs/scale-out.md):\n"
        "      --segment K/N         score part K of N equal parts of the frames\n"
        "                            (with the frames around it the temporal\n"
        "                            metrics need) into a JSON part for merge\n"
        "  quale merge [-o OUT] [--json|--xml|--csv|--sub] [--precision N] PART...\n"
        "                            joins the parts into the file of one run\n"
        "\n"
        "Reports (docs/report.md):\n"
        "  quale report RESULT.json... -o REPORT.html\n"
        "                            one HTML page of results: curves, pooled\n"
        "                            scores, worst frames, several runs overlaid\n"
        "\n"
        "Information:\n"
        "      --list-features       the metrics, their keys, options and backends\n"
        "      --list-features --json   the same as JSON\n"
        "      --list-models [--json]   the built-in models\n"
        "      --list-devices [--json]  the CUDA and Vulkan devices\n"
        "  -v, --version             print the version\n"
        "      --help                this text\n");
}

static int fail(char *error, size_t size, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(error, size, fmt, args);
    va_end(args);
    return -EINVAL;
}

static int parse_unsigned(const char *text, unsigned max, unsigned *out)
{
    if (!text || !*text || *text == '-' || *text == '+') return -EINVAL;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 0);
    if (*end || errno || v > max) return -EINVAL;
    *out = (unsigned)v;
    return 0;
}

int cli_parse_pools(const char *arg, char *text, size_t text_size, const char **pools,
                    unsigned *count, char *error, size_t error_size)
{
    if (strlen(arg) >= text_size)
        return fail(error, error_size, "--pool: '%s' is too long", arg);
    snprintf(text, text_size, "%s", arg);
    *count = 0;
    for (char *p = text, *next; p; p = next) {
        next = strchr(p, ',');
        if (next) *next++ = '\0';
        if (*count == CLI_MAX_POOLS)
            return fail(error, error_size, "--pool takes at most %d methods", CLI_MAX_POOLS);
        if (quale_pool_method_check(p))
            return fail(error, error_size, "--pool takes mean, min, max, harmonic_mean, pN (the "
                        "N-th percentile, 0 < N < 100) or lowN (the mean of the lowest N%%), "
                        "N in decimal (5, 0.5, 99.9), not '%s'", p);
        pools[(*count)++] = p;
    }
    return 0;
}

static int add_entry(const char **list, unsigned *count, const char *value,
                     const char *what, char *error, size_t size)
{
    if (*count == CLI_MAX_ENTRIES)
        return fail(error, size, "at most %d %s are supported", CLI_MAX_ENTRIES, what);
    list[(*count)++] = value;
    return 0;
}

/* Replaces the feature of the same metric name, or appends. */
static int replace_feature(CliSettings *s, const char *spec, char *error, size_t size)
{
    const size_t len = strcspn(spec, "=");
    for (unsigned i = 0; i < s->feature_count; i++) {
        if (strcspn(s->features[i], "=") == len && !strncmp(s->features[i], spec, len)) {
            s->features[i] = spec;
            return 0;
        }
    }
    return add_entry(s->features, &s->feature_count, spec, "features", error, size);
}

/* The CTC presets of libvmaf's tool, by version. */
static int apply_aom_ctc(CliSettings *s, const char *version, char *error, size_t size)
{
    static const char *const versions[] = { "v1.0", "v2.0", "v3.0", "v4.0",
                                            "v5.0", "v6.0", "v7.0" };
    int level = -1;
    for (int i = 0; i < 7; i++)
        if (!strcmp(version, versions[i])) level = i + 1;
    if (!strcmp(version, "proposed"))
        return fail(error, size, "--aom_ctc proposed is deprecated");
    if (level < 0) return fail(error, size, "unknown --aom_ctc version '%s' (v1.0 to v7.0)", version);

    int err = add_entry(s->models, &s->model_count, "version=vmaf_v0.6.1:name=vmaf",
                        "models", error, size);
    err = err ? err : add_entry(s->models, &s->model_count,
                                "version=vmaf_v0.6.1neg:name=vmaf_neg", "models", error, size);
    static const char *const features[] = {
        "psnr=reduced_hbd_peak=true:enable_apsnr=true:min_sse=0.5",
        "ciede",
        "float_ssim=enable_db=true:clip_db=true",
        "float_ms_ssim=enable_db=true:clip_db=true",
        "psnr_hvs",
    };
    for (unsigned i = 0; i < 5 && !err; i++) err = replace_feature(s, features[i], error, size);
    if (!err && level >= 3) err = replace_feature(s, "cambi", error, size);
    if (!err && level >= 7)
        err = replace_feature(s, "float_ssim=scale=1:enable_db=true:clip_db=true", error, size);
    return err;
}

static int apply_nflx_ctc(CliSettings *s, const char *version, char *error, size_t size)
{
    if (strcmp(version, "v1.0"))
        return fail(error, size, "unknown --nflx_ctc version '%s' (v1.0)", version);
    int err = add_entry(s->models, &s->model_count, "version=vmaf_4k_v0.6.1:name=vmaf",
                        "models", error, size);
    err = err ? err : add_entry(s->models, &s->model_count,
                                "version=vmaf_4k_v0.6.1neg:name=vmaf_neg", "models", error, size);
    err = err ? err : replace_feature(s, "psnr=enable_chroma=true:enable_apsnr=true", error, size);
    err = err ? err : replace_feature(s, "float_ssim=enable_db=true:clip_db=true", error, size);
    err = err ? err : replace_feature(s, "cambi", error, size);
    return err;
}

static const struct {
    const char *flag;
    enum QualeOutputFormat format;
    const char *extensions[2];
} output_formats[] = {
    { "--xml", QUALE_OUTPUT_XML, { ".xml", NULL } },
    { "--json", QUALE_OUTPUT_JSON, { ".json", NULL } },
    { "--csv", QUALE_OUTPUT_CSV, { ".csv", NULL } },
    { "--sub", QUALE_OUTPUT_SUB, { ".sub", NULL } },
};

/* The format flag of a format. */
static const char *format_flag_of(enum QualeOutputFormat f)
{
    for (unsigned i = 0; i < 4; i++)
        if (output_formats[i].format == f) return output_formats[i].flag;
    return "?";
}

int cli_format_of_extension(const char *path, const char **extension)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot) return -1;
    for (unsigned i = 0; i < 4; i++) {
        for (unsigned e = 0; e < 2 && output_formats[i].extensions[e]; e++) {
            if (!strcasecmp(dot, output_formats[i].extensions[e])) {
                *extension = dot;
                return (int)output_formats[i].format;
            }
        }
    }
    return -1;
}

static int set_format_flag(CliSettings *s, enum QualeOutputFormat f, char *error, size_t size)
{
    const char *flag = format_flag_of(f);
    if (s->format_flag && strcmp(s->format_flag, flag))
        return fail(error, size, "%s and %s both choose the output format: give one", s->format_flag,
                    flag);
    s->format_flag = flag;
    s->output_format = f;
    return 0;
}

static int parse_backend(const char *text, enum QualeBackend *out)
{
    static const enum QualeBackend all[] = { QUALE_BACKEND_CPU, QUALE_BACKEND_CUDA,
                                              QUALE_BACKEND_HIP, QUALE_BACKEND_VULKAN,
                                              QUALE_BACKEND_AUTO };
    for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (!strcmp(text, quale_backend_name(all[i]))) {
            *out = all[i];
            return 0;
        }
    }
    return -EINVAL;
}

/* The flags a task of a split run may not be given: the task sets its
 * inputs, output and part itself, and a flag that only prints or a page
 * every part would write makes no part. */
static bool task_reserved(int c)
{
    switch (c) {
    case 'r': case 'd': case 'o': case 'v': case ARG_SEGMENT: case ARG_HTML: case ARG_GPU:
    case ARG_HELP: case ARG_LIST_FEATURES: case ARG_LIST_MODELS: case ARG_LIST_DEVICES:
        return true;
    default:
        return false;
    }
}

/* A flag's name as the option table spells it ("--distorted", "-q"). */
static void flag_name(int c, int index, char *name, size_t size)
{
    if (index >= 0) {
        snprintf(name, size, "--%s", long_options[index].name);
        return;
    }
    for (const struct option *o = long_options; o->name; o++)
        if (o->val == c) {
            snprintf(name, size, "-%c/--%s", c, o->name);
            return;
        }
    snprintf(name, size, "-%c", c);
}

/* getopt's '?' for a long option: unknown, or an abbreviation of several
 * ("--dist": --distorted or --dist-vf), which getopt refuses too. */
static int unknown_option(const char *word, char *error, size_t size)
{
    if (strncmp(word, "--", 2)) return fail(error, size, "unknown option '%s'", word);
    const size_t n = strcspn(word + 2, "=");
    char matches[256] = "";
    size_t at = 0;
    unsigned count = 0;
    for (const struct option *o = long_options; o->name && at < sizeof(matches); o++) {
        if (strncmp(o->name, word + 2, n)) continue;
        at += (size_t)snprintf(matches + at, sizeof(matches) - at, "%s--%s", count ? ", " : "",
                               o->name);
        count++;
    }
    if (count > 1)
        return fail(error, size, "ambiguous option '%.*s': %s", (int)(n + 2), word, matches);
    return fail(error, size, "unknown option '%s'", word);
}

int cli_classify_task_options(int argc, char *const argv[], char *kinds, char *error,
                              size_t size)
{
    error[0] = '\0';
    for (int i = 0; i < argc; i++) kinds[i] = 't';
    optind = 0;
    opterr = 0;
    /* '+': no reordering, so that each flag's words are the ones getopt
     * has just passed (a flag glued to others, -qn, is never an output
     * flag: those are long only) */
    for (;;) {
        const int before = optind ? optind : 1;
        int index = -1;
        const int c = getopt_long(argc, argv, "+:" SHORT_OPTIONS, long_options, &index);
        if (c == -1) break;
        char name[64];
        if (c == ':' || c == '?') {
            if (optopt && optopt < 256)
                return fail(error, size, "%s -%c", c == ':' ? "a value is missing after" :
                            "unknown option", optopt);
            if (c == '?') return unknown_option(argv[optind - 1], error, size);
            return fail(error, size, "a value is missing after '%s'", argv[optind - 1]);
        }
        flag_name(c, index, name, size < sizeof(name) ? size : sizeof(name));
        if (task_reserved(c)) {
            /* the token as the table spells it: -o, --output, or -o/--output */
            const char *slash = strchr(name, '/');
            const bool plain = !strcmp(argv[before], name) ||
                               (slash && (!strcmp(argv[before], slash + 1) ||
                                          (strlen(argv[before]) == (size_t)(slash - name) &&
                                           !strncmp(argv[before], name, (size_t)(slash - name)))));
            return fail(error, size, "a task's options may not hold %s%s%s%s: the task sets "
                        "its inputs, output and part itself, and scores", name,
                        plain ? "" : " ('", plain ? "" : argv[before], plain ? "" : "')");
        }
        const bool layout = c == ARG_XML || c == ARG_JSON || c == ARG_CSV || c == ARG_SUB;
        for (int i = before; (layout || c == ARG_PRECISION) && i < optind && i < argc; i++)
            kinds[i] = layout ? 'f' : 'm';
    }
    if (optind < argc) return fail(error, size, "unexpected argument '%s'", argv[optind]);
    return 0;
}

/* ---- the flags, as a table ----------------------------------------------- */

/* How a flag's value goes into the settings. */
enum FlagKind {
    FLAG_SET,      /* a flag without a value: the bool at `field` set */
    FLAG_STRING,   /* the value, as given, at `field` (a const char *) */
    FLAG_UNSIGNED, /* a whole number from min to max at `field` */
    FLAG_PARSE,    /* the value through parse() */
};

typedef struct Flag {
    int id; /* getopt's: a short flag's letter, else ARG_* */
    enum FlagKind kind;
    size_t field;
    unsigned min, max;
    /* FLAG_UNSIGNED: the bool set when the flag is given (SIZE_MAX: none) */
    size_t given;
    /* FLAG_PARSE: 0, or an error (in error, or -EINVAL for the table's
     * message "FLAG takes <takes>, not 'VALUE'") */
    int (*parse)(CliSettings *s, int id, const char *arg, char *error, size_t size);
    const char *takes;
} Flag;

#define FIELD(name) offsetof(CliSettings, name)
#define SET(id, name) { (id), FLAG_SET, FIELD(name), 0, 0, SIZE_MAX, NULL, NULL }
#define STRING(id, name) { (id), FLAG_STRING, FIELD(name), 0, 0, SIZE_MAX, NULL, NULL }
#define NUMBER(id, name, min, max, given, takes) \
    { (id), FLAG_UNSIGNED, FIELD(name), (min), (max), (given), NULL, (takes) }
#define PARSE(id, fn, takes) { (id), FLAG_PARSE, 0, 0, 0, SIZE_MAX, (fn), (takes) }

static int parse_pixel_format(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    static const struct { const char *name; enum QualeChroma chroma; } formats[] = {
        { "420", QUALE_CHROMA_420 }, { "422", QUALE_CHROMA_422 },
        { "444", QUALE_CHROMA_444 }, { "400", QUALE_CHROMA_400 },
    };
    for (unsigned i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (!strcmp(arg, formats[i].name)) {
            s->raw.chroma = formats[i].chroma;
            s->raw_given = true;
            return 0;
        }
    return -EINVAL;
}

static int parse_list_entry(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    return id == 'm' ? add_entry(s->models, &s->model_count, arg, "models", error, size)
                     : add_entry(s->features, &s->feature_count, arg, "features", error, size);
}

static int parse_format_flag(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)arg;
    const enum QualeOutputFormat format = id == ARG_XML ? QUALE_OUTPUT_XML
                                          : id == ARG_JSON ? QUALE_OUTPUT_JSON
                                          : id == ARG_CSV ? QUALE_OUTPUT_CSV : QUALE_OUTPUT_SUB;
    if (id == ARG_JSON) s->list_json = true; /* the listings' JSON too */
    return set_format_flag(s, format, error, size);
}

static int parse_ctc(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    return id == ARG_AOM_CTC ? apply_aom_ctc(s, arg, error, size)
                             : apply_nflx_ctc(s, arg, error, size);
}

static int parse_backend_flag(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    if (parse_backend(arg, &s->backend)) return -EINVAL;
    s->backend_given = true;
    return 0;
}

static int parse_precision(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    unsigned v;
    if (!strcmp(arg, "max") || !strcmp(arg, "full")) s->precision = -1;
    else if (parse_unsigned(arg, 17, &v)) return -EINVAL;
    else s->precision = (int)v;
    return 0;
}

static int parse_align(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    if (strcmp(arg, "auto") && strcmp(arg, "none")) return -EINVAL;
    s->align_auto = !strcmp(arg, "auto");
    return 0;
}

static int parse_scaler(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    static const char *const names[] = { "bicubic", "bilinear", "lanczos", "neighbor", "area",
                                         "spline" };
    s->scaler = NULL;
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(arg, names[i])) s->scaler = names[i];
    return s->scaler ? 0 : -EINVAL;
}

/* "A<sep>B": two whole numbers (B may be left out where b_optional),
 * parsed from a copy (argv's strings may be read-only); 0 or -EINVAL. */
static int parse_pair(const char *arg, char sep, unsigned max_a, unsigned max_b, bool b_optional,
                      unsigned *a, unsigned *b)
{
    char text[64], *at;
    *a = *b = 0;
    if (strlen(arg) >= sizeof(text)) return -EINVAL;
    snprintf(text, sizeof(text), "%s", arg);
    if (!(at = strchr(text, sep))) return -EINVAL;
    *at = '\0';
    if (parse_unsigned(text, max_a, a)) return -EINVAL;
    if (!at[1] && b_optional) return 0;
    return parse_unsigned(at + 1, max_b, b) ? -EINVAL : 0;
}

static int parse_segment(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    unsigned k, n;
    if (parse_pair(arg, '/', UINT_MAX, 100000, false, &k, &n) || !k || !n || k > n)
        return -EINVAL;
    s->segment_part = k;
    s->segment_parts = n;
    return 0;
}

static int parse_frames(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    unsigned first, end;
    const bool to_the_end = arg[0] && arg[strlen(arg) - 1] == ':';
    if (parse_pair(arg, ':', UINT_MAX / 2, UINT_MAX / 2, true, &first, &end) ||
        (!to_the_end && end <= first))
        return -EINVAL;
    s->frames_first = first;
    s->frames_end = end;
    s->frames_given = true;
    return 0;
}

static int parse_gpus(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    s->gpu_all = !strcmp(arg, "all");
    s->gpu_count = 0;
    if (s->gpu_all) return 0;
    for (const char *p = arg;;) {
        char item[16];
        unsigned v;
        const size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof(item) || s->gpu_count == CLI_MAX_GPUS) return -EINVAL;
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_unsigned(item, 1024, &v)) return -EINVAL;
        /* a device named twice runs two parts at once */
        s->gpus[s->gpu_count++] = v;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

int cli_parse_gpus(CliSettings *s, const char *arg)
{
    return parse_gpus(s, 0, arg, NULL, 0);
}

static int parse_pool(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id;
    return cli_parse_pools(arg, s->pool_text, sizeof(s->pool_text), s->pools, &s->pool_count,
                           error, size);
}

static int parse_gpu_device(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)id, (void)error, (void)size;
    unsigned v;
    if (parse_unsigned(arg, 1024, &v)) return -EINVAL;
    s->gpu_device = (int)v;
    return 0;
}

/* --vf, --ref-vf, --dist-vf: graph text, which FFmpeg checks when the
 * videos are open; here only that there is some. */
static int parse_filter_graph(CliSettings *s, int id, const char *arg, char *error, size_t size)
{
    (void)error, (void)size;
    if (!arg[strspn(arg, " \t")]) return -EINVAL;
    *(id == ARG_VF ? &s->vf : id == ARG_REF_VF ? &s->ref_vf : &s->dist_vf) = arg;
    return 0;
}

static const Flag flags[] = {
    STRING('r', reference),
    STRING('d', distorted),
    NUMBER('w', raw.width, 1, 32768, FIELD(raw_given), "a size from 1 to 32768"),
    NUMBER('h', raw.height, 1, 32768, FIELD(raw_given), "a size from 1 to 32768"),
    PARSE('p', parse_pixel_format, "420, 422, 444 or 400"),
    NUMBER('b', raw.bitdepth, 8, 16, FIELD(raw_given), "8 to 16"),
    PARSE('m', parse_list_entry, NULL),
    STRING('o', output),
    PARSE(ARG_XML, parse_format_flag, NULL),
    PARSE(ARG_JSON, parse_format_flag, NULL),
    PARSE(ARG_CSV, parse_format_flag, NULL),
    PARSE(ARG_SUB, parse_format_flag, NULL),
    PARSE(ARG_FEATURE, parse_list_entry, NULL),
    NUMBER(ARG_THREADS, threads, 0, 1024, FIELD(threads_given), "a count from 0 to 1024"),
    NUMBER(ARG_SUBSAMPLE, subsample, 0, UINT_MAX, SIZE_MAX, "a whole number"),
    NUMBER(ARG_CPUMASK, cpumask, 0, UINT_MAX, SIZE_MAX, "a bit mask"),
    NUMBER(ARG_GPUMASK, gpumask, 0, UINT_MAX, SIZE_MAX, "a bit mask"),
    PARSE(ARG_AOM_CTC, parse_ctc, NULL),
    PARSE(ARG_NFLX_CTC, parse_ctc, NULL),
    NUMBER(ARG_FRAME_CNT, frame_count, 0, UINT_MAX, SIZE_MAX, "a whole number"),
    NUMBER(ARG_FRAME_SKIP_REF, frame_skip_ref, 0, UINT_MAX, SIZE_MAX, "a whole number"),
    NUMBER(ARG_FRAME_SKIP_DIST, frame_skip_dist, 0, UINT_MAX, SIZE_MAX, "a whole number"),
    SET('n', no_prediction),
    SET('v', version),
    SET('q', quiet),
    PARSE(ARG_BACKEND, parse_backend_flag, "cpu, cuda, hip, vulkan or auto"),
    PARSE(ARG_PRECISION, parse_precision, "0 to 17 or 'max'"),
    NUMBER(ARG_SCORE_BITDEPTH, score_bitdepth, 9, 16, SIZE_MAX, "9 to 16"),
    SET(ARG_HELP, help),
    SET(ARG_LIST_FEATURES, list_features),
    SET(ARG_LIST_MODELS, list_models),
    SET(ARG_LIST_DEVICES, list_devices),
    PARSE(ARG_ALIGN, parse_align, "auto or none"),
    PARSE(ARG_SCALER, parse_scaler, "bicubic, bilinear, lanczos, neighbor, area or spline"),
    NUMBER(ARG_ALIGN_WINDOW, align_window, 1, 1000, SIZE_MAX, "1 to 1000 frames"),
    PARSE(ARG_SEGMENT, parse_segment, "K/N, part K (1 to N) of N"),
    PARSE(ARG_FRAMES, parse_frames, "FIRST:END (frames FIRST to END - 1; END may be left out)"),
    PARSE(ARG_GPU, parse_gpus, "'all' or device indices (0,1,3: at most 64)"),
    STRING(ARG_HTML, html),
    PARSE(ARG_POOL, parse_pool, NULL),
    PARSE(ARG_GPU_DEVICE, parse_gpu_device, "a device index"),
    SET(ARG_FORCE, force),
    PARSE(ARG_VF, parse_filter_graph, "an FFmpeg filter graph (crop=1280:720,fps=30)"),
    PARSE(ARG_REF_VF, parse_filter_graph, "an FFmpeg filter graph (crop=1280:720,fps=30)"),
    PARSE(ARG_DIST_VF, parse_filter_graph, "an FFmpeg filter graph (crop=1280:720,fps=30)"),
};
_Static_assert(CLI_MAX_GPUS == 64, "--gpu's message says at most 64 devices");

/* One flag's value into the settings: 0, or an error in error. */
static int apply_flag(CliSettings *s, int id, int index, const char *arg, char *error,
                      size_t size)
{
    const Flag *f = NULL;
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]) && !f; i++)
        if (flags[i].id == id) f = &flags[i];
    if (!f) return fail(error, size, "option %d has no entry in the flag table", id);
    char *field = (char *)s + f->field;
    int err = 0;
    switch (f->kind) {
    case FLAG_SET: *(bool *)(void *)field = true; return 0;
    case FLAG_STRING: *(const char **)(void *)field = arg; return 0;
    case FLAG_UNSIGNED: {
        unsigned v;
        if (parse_unsigned(arg, f->max, &v) || v < f->min) {
            err = -EINVAL;
            break;
        }
        *(unsigned *)(void *)field = v;
        if (f->given != SIZE_MAX) *(bool *)(void *)((char *)s + f->given) = true;
        return 0;
    }
    case FLAG_PARSE:
        error[0] = '\0';
        err = f->parse(s, id, arg, error, size);
        break;
    }
    if (err && !error[0]) {
        char name[64];
        flag_name(id, index, name, sizeof(name));
        return fail(error, size, "%s takes %s, not '%s'", name, f->takes, arg);
    }
    return err;
}

/* What no single flag can check: the output's format against -o, the
 * flags that go together, the inputs required. */
static int check_settings(CliSettings *s, char *error, size_t size)
{
    /* The output format: the flag, else -o's extension; a flag without -o
     * writes to standard output. */
    const char *extension = NULL;
    const int by_extension = s->output ? cli_format_of_extension(s->output, &extension) : -1;
    if (by_extension >= 0 && s->format_flag && by_extension != (int)s->output_format)
        return fail(error, size, "-o '%s' ends in '%s', but %s asks for another format: give "
                    "%s, or no format flag", s->output, extension, s->format_flag,
                    format_flag_of((enum QualeOutputFormat)by_extension));
    if (by_extension >= 0) s->output_format = (enum QualeOutputFormat)by_extension;
    /* SubRip is not libvmaf's subtitle layout: writing MicroDVD under its
     * name would mislead a player; with --sub the user has said so. */
    const char *dot = s->output ? strrchr(s->output, '.') : NULL;
    if (!s->format_flag && dot && !strcasecmp(dot, ".srt"))
        return fail(error, size, "-o '%s': quale writes subtitles as MicroDVD (--sub, .sub), as "
                    "libvmaf does, not SubRip (.srt); give --sub to write MicroDVD there",
                    s->output);
    if (!s->output && s->format_flag) s->output = "-";

    if (s->segment_parts) {
        if (!s->format_flag && by_extension < 0) s->output_format = QUALE_OUTPUT_JSON;
        if (!s->output || !strcmp(s->output, "-"))
            return fail(error, size, "--segment writes a part to a file: give -o PART.json");
        if (s->output_format != QUALE_OUTPUT_JSON)
            return fail(error, size, "--segment writes its part as JSON (quale merge writes the "
                        "other layouts): give -o PART.json, and the layout to quale merge");
    }
    if ((s->gpu_all || s->gpu_count) && s->gpu_device >= 0)
        return fail(error, size, "--gpu and --gpu_device both choose the GPUs: give one");
    if ((s->gpu_all || s->gpu_count) &&
        (s->backend == QUALE_BACKEND_CPU || s->backend == QUALE_BACKEND_AUTO))
        return fail(error, size, "--gpu spreads the frames over GPUs of one backend: give "
                    "--backend cuda, hip or vulkan");
    if (!s->reference) return fail(error, size, "the reference (-r/--reference) is required");
    if (!s->distorted) return fail(error, size, "the distorted video (-d/--distorted) is required");
    /* Two readers of one pipe would each get part of the other's frames. */
    if (!strcmp(s->reference, "-") && !strcmp(s->distorted, "-"))
        return fail(error, size, "only one of -r/--reference and -d/--distorted can be "
                                 "standard input ('-')");
    if (s->align_auto && (!strcmp(s->reference, "-") || !strcmp(s->distorted, "-")))
        return fail(error, size, "--align auto reads the first frames twice, which standard "
                                 "input cannot give: give files");
    /* --vf is both videos' graph; one of them given its own as well
     * would leave which one applies to a guess. */
    if (s->vf && (s->ref_vf || s->dist_vf))
        return fail(error, size, "--vf filters both videos: give it alone, or --ref-vf and "
                    "--dist-vf, not both");
    if (s->vf) s->ref_vf = s->dist_vf = s->vf;
    if (s->raw_given && !(s->raw.width && s->raw.height && s->raw.chroma && s->raw.bitdepth))
        return fail(error, size, "raw .yuv input needs all of -w/--width, -h/--height, "
                                 "-p/--pixel_format and -b/--bitdepth");
    /* -n with -m: the models' features, no prediction (as libvmaf). */
    if (s->no_prediction && s->feature_count == 0 && s->model_count == 0)
        return fail(error, size, "-n/--no_prediction needs at least one --feature or -m/--model "
                                 "(whose features are then computed)");
    return 0;
}

int cli_parse(int argc, char *const argv[], CliSettings *s, char *error, size_t size)
{
    memset(s, 0, sizeof(*s));
    s->command_argc = argc;
    s->command_argv = argv;
    s->output_format = QUALE_OUTPUT_XML;
    s->precision = -1;
    s->gpu_device = -1;
    s->backend = QUALE_BACKEND_CPU;
    s->align_window = 15;
    error[0] = '\0';

    optind = 0; /* glibc: full re-initialisation, so tests can parse twice */
    opterr = 0;
    int c, index = -1;
    while ((c = getopt_long(argc, argv, ":" SHORT_OPTIONS, long_options, &index)) != -1) {
        if (c == ':') {
            if (optopt == 'h')
                return fail(error, size, "option '-h' (--height) needs a value; for help, "
                                         "use --help");
            return fail(error, size, "option '%s' needs a value", argv[optind - 1]);
        }
        if (c == '?') {
            if (optopt && optopt < 256) return fail(error, size, "unknown option '-%c'", optopt);
            return unknown_option(argv[optind - 1], error, size);
        }
        const int err = apply_flag(s, c, index, optarg, error, size);
        if (err) return err;
        index = -1;
    }
    if (optind < argc) return fail(error, size, "unexpected argument '%s'", argv[optind]);
    if (s->help || s->version || s->list_features || s->list_models || s->list_devices)
        return 0;
    return check_settings(s, error, size);
}
