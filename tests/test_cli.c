/* Unit tests of the command-line parser: libvmaf's flags and quale's own. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "test.h"

/* Parses a NULL-terminated list of arguments. */
static int parse(CliSettings *s, char *error, size_t size, ...)
{
    char *argv[64] = { "quale" };
    int argc = 1;
    va_list args;
    va_start(args, size);
    for (char *a; (a = va_arg(args, char *)) && argc < 63;) argv[argc++] = a;
    va_end(args);
    argv[argc] = NULL;
    return cli_parse(argc, argv, s, error, size);
}

static void test_libvmaf_flags(void)
{
    CliSettings s;
    char e[512];
    CHECK(parse(&s, e, sizeof(e), "-r", "ref.yuv", "-d", "dis.yuv", "-w", "576", "-h", "324",
                "-p", "420", "-b", "10", "-m", "version=vmaf_v0.6.1", "--feature", "psnr",
                "--feature", "float_ssim=enable_lcs=true", "--threads", "3", "--subsample", "2",
                "--frame_cnt", "10", "--frame_skip_ref", "1", "--frame_skip_dist", "2",
                "--json", "-o", "out.json", "-q", NULL) == 0);
    CHECK_STR(s.reference, "ref.yuv");
    CHECK_STR(s.distorted, "dis.yuv");
    CHECK(s.raw_given && s.raw.width == 576 && s.raw.height == 324);
    CHECK(s.raw.chroma == QUALE_CHROMA_420 && s.raw.bitdepth == 10);
    CHECK(s.model_count == 1 && !strcmp(s.models[0], "version=vmaf_v0.6.1"));
    CHECK(s.feature_count == 2 && !strcmp(s.features[1], "float_ssim=enable_lcs=true"));
    CHECK(s.threads == 3 && s.threads_given);
    CHECK(s.subsample == 2 && s.frame_count == 10);
    CHECK(s.frame_skip_ref == 1 && s.frame_skip_dist == 2);
    CHECK(s.output_format == QUALE_OUTPUT_JSON && s.quiet);
    CHECK_STR(s.output, "out.json");
    CHECK(s.precision == -1);

    CHECK(parse(&s, e, sizeof(e), "--reference", "a.y4m", "--distorted", "b.y4m", "--csv",
                "--no_prediction", "--feature", "psnr", "--precision", "6", NULL) == 0);
    CHECK(!s.raw_given && s.no_prediction && s.output_format == QUALE_OUTPUT_CSV);
    CHECK(s.precision == 6);
    CHECK(parse(&s, e, sizeof(e), "-r", "a.y4m", "-d", "b.y4m", "--sub", NULL) == 0);
    CHECK(s.output_format == QUALE_OUTPUT_SUB);
    CHECK(parse(&s, e, sizeof(e), "-r", "a.y4m", "-d", "b.y4m", "--xml", NULL) == 0);
    CHECK(s.output_format == QUALE_OUTPUT_XML);
    CHECK(parse(&s, e, sizeof(e), "-r", "a.y4m", "-d", "b.y4m", NULL) == 0);
    CHECK(s.output_format == QUALE_OUTPUT_XML); /* libvmaf's default */
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-p", "400", "-w", "1", "-h", "1",
                "-b", "16", NULL) == 0);
    CHECK(s.raw.chroma == QUALE_CHROMA_400 && s.raw.bitdepth == 16);
}

static void test_quale_flags(void)
{
    CliSettings s;
    char e[512];
    CHECK(parse(&s, e, sizeof(e), "-r", "a.y4m", "-d", "b.y4m", "--backend", "auto", NULL) == 0);
    CHECK(s.backend == QUALE_BACKEND_AUTO);
    CHECK(parse(&s, e, sizeof(e), "-r", "a.y4m", "-d", "b.y4m", "--backend", "vulkan",
                "--vulkan_device", "1", NULL) == 0);
    CHECK(s.backend == QUALE_BACKEND_VULKAN && s.gpu_device == 1);
    CHECK(parse(&s, e, sizeof(e), "--list-features", "--json", NULL) == 0);
    CHECK(s.list_features && s.list_json);
    CHECK(parse(&s, e, sizeof(e), "--list-features", NULL) == 0);
    CHECK(s.list_features && !s.list_json);
    CHECK(parse(&s, e, sizeof(e), "--help", NULL) == 0 && s.help);
    CHECK(parse(&s, e, sizeof(e), "-v", NULL) == 0 && s.version);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--precision", "max", NULL) == 0);
    CHECK(s.precision == -1);
}

static void test_presets(void)
{
    CliSettings s;
    char e[512];
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--aom_ctc", "v1.0", NULL) == 0);
    CHECK(s.model_count == 2 && strstr(s.models[1], "vmaf_v0.6.1neg"));
    CHECK(s.feature_count == 5);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--aom_ctc", "v7.0", NULL) == 0);
    CHECK(s.feature_count == 6); /* cambi added, float_ssim replaced */
    int replaced = 0;
    for (unsigned i = 0; i < s.feature_count; i++)
        replaced |= !strcmp(s.features[i], "float_ssim=scale=1:enable_db=true:clip_db=true");
    CHECK(replaced);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--aom_ctc", "v9.9", NULL) != 0);
    CHECK(strstr(e, "v9.9") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--nflx_ctc", "v1.0", NULL) == 0);
    CHECK(s.model_count == 2 && s.feature_count == 3);
}

static void test_errors(void)
{
    CliSettings s;
    char e[512];
    CHECK(parse(&s, e, sizeof(e), "-d", "b", NULL) != 0);
    CHECK(strstr(e, "reference") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", NULL) != 0);
    CHECK(strstr(e, "distorted") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-w", "10", NULL) != 0);
    CHECK(strstr(e, "-h/--height") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-w", "0", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-w", "-5", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-w", "12x", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-w", "99999999999999999999", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-p", "411", NULL) != 0);
    CHECK(strstr(e, "411") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-b", "7", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-b", "17", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--threads", "x", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--backend", "opencl", NULL) != 0);
    CHECK(strstr(e, "opencl") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--precision", "18", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--bogus", NULL) != 0);
    CHECK(strstr(e, "--bogus") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "stray", NULL) != 0);
    CHECK(strstr(e, "stray") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--feature", NULL) != 0);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-n", NULL) != 0);
    /* -n with -m: the model's features, no prediction (as libvmaf). */
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "-n", "-m", "version=x", NULL) == 0);
    CHECK(s.no_prediction && s.model_count == 1);
}

/* --vf is both videos' graph; --ref-vf and --dist-vf each one's, and
 * neither goes with --vf. */
static void test_filter_flags(void)
{
    CliSettings s;
    char e[512];
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", NULL) == 0);
    CHECK(!s.ref_vf && !s.dist_vf);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--vf", "yadif,crop=64:64", NULL) == 0);
    CHECK(s.ref_vf && !strcmp(s.ref_vf, "yadif,crop=64:64") && s.dist_vf == s.ref_vf);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--ref-vf", "yadif", NULL) == 0);
    CHECK(s.ref_vf && !strcmp(s.ref_vf, "yadif") && !s.dist_vf);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--dist-vf=fps=30", "--ref-vf", "null",
                NULL) == 0);
    CHECK(s.dist_vf && !strcmp(s.dist_vf, "fps=30") && s.ref_vf && !strcmp(s.ref_vf, "null"));
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--vf", "yadif", "--dist-vf", "yadif",
                NULL) != 0);
    CHECK(strstr(e, "--vf") && strstr(e, "--dist-vf"));
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--ref-vf", "", NULL) != 0);
    CHECK(strstr(e, "--ref-vf takes an FFmpeg filter graph") != NULL);
    CHECK(parse(&s, e, sizeof(e), "-r", "a", "-d", "b", "--vf", NULL) != 0);
}

int main(void)
{
    test_libvmaf_flags();
    test_quale_flags();
    test_presets();
    test_errors();
    test_filter_flags();
    return test_summary();
}
