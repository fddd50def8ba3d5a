/*
 * Runs the fuzz targets (tests/fuzz/fuzz_*.c) without libFuzzer, over the
 * seed corpora and the saved crashers, so that every finding stays fixed in
 * the normal build:
 *
 *   fuzz_replay DIR              every file of DIR/corpus/<target>/ and
 *                                DIR/regressions/<target>/, each target
 *   fuzz_replay -t TARGET FILE.. the given files through one target
 *
 * A target aborts on a broken invariant, and the sanitizers (when built
 * with them) stop at the first error, so a clean exit means every input
 * passed.  The name of each input is printed before it runs, so a crash
 * names its input.  Ends with "N inputs, M targets".
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz.h"

typedef int (*Target)(const uint8_t *data, size_t size);

static const struct {
    const char *name;
    Target run;
} targets[] = {
    { "y4m", quale_fuzz_y4m },
    { "yuv", quale_fuzz_yuv },
    { "model", quale_fuzz_model },
    { "cli", quale_fuzz_cli },
    { "pictures", quale_fuzz_pictures },
    { "output", quale_fuzz_output },
    { "decode", quale_fuzz_decode },
    { "results", quale_fuzz_results },
};

#define TARGET_COUNT (sizeof(targets) / sizeof(targets[0]))

static int read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -errno;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    const int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return buf ? -EIO : -ENOMEM;
    }
    *data = buf;
    *size = n;
    return 0;
}

static int run_file(Target run, const char *target, const char *path)
{
    uint8_t *data = NULL;
    size_t size = 0;
    const int err = read_file(path, &data, &size);
    if (err) {
        fprintf(stderr, "fuzz_replay: %s: %s\n", path, strerror(-err));
        return -1;
    }
    printf("%s %s\n", target, path);
    fflush(stdout);
    run(data, size);
    free(data);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every regular file of dir, in name order; -1 if dir is missing and
 * required. */
static int run_dir(Target run, const char *target, const char *dir, int required,
                   unsigned *count)
{
    struct dirent **list = NULL;
    const int n = scandir(dir, &list, NULL, by_name);
    if (n < 0) {
        if (!required && errno == ENOENT) return 0;
        fprintf(stderr, "fuzz_replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int status = 0;
    for (int i = 0; i < n; i++) {
        const char *name = list[i]->d_name;
        char path[4096];
        struct stat st;
        if (name[0] != '.' && (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) < sizeof(path) &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(run, target, path)) status = -1;
            else (*count)++;
        }
        free(list[i]);
    }
    free(list);
    return status;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    if (argc >= 3 && !strcmp(argv[1], "-t")) {
        for (size_t t = 0; t < TARGET_COUNT; t++) {
            if (strcmp(targets[t].name, argv[2])) continue;
            int status = 0;
            for (int i = 3; i < argc; i++) {
                if (run_file(targets[t].run, targets[t].name, argv[i])) status = 1;
                else count++;
            }
            printf("%u inputs, 1 target\n", count);
            return status;
        }
        fprintf(stderr, "fuzz_replay: unknown target '%s'\n", argv[2]);
        return 2;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_replay DIR | fuzz_replay -t TARGET FILE...\n");
        return 2;
    }
    int status = 0;
    for (size_t t = 0; t < TARGET_COUNT; t++) {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s/corpus/%s", argv[1], targets[t].name);
        const unsigned before = count;
        if (run_dir(targets[t].run, targets[t].name, dir, 1, &count)) status = 1;
        if (count == before) {
            fprintf(stderr, "fuzz_replay: no seed inputs in %s\n", dir);
            status = 1;
        }
        snprintf(dir, sizeof(dir), "%s/regressions/%s", argv[1], targets[t].name);
        if (run_dir(targets[t].run, targets[t].name, dir, 0, &count)) status = 1;
    }
    printf("%u inputs, %zu targets\n", count, TARGET_COUNT);
    return status;
}
