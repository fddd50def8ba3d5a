/*
 * vmaf_write_output(): the results files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "libvmaf_private.h"

/* ---- output -------------------------------------------------------------- */

/*
 * A call that fails leaves the file as it was: everything that can be
 * checked is checked before the file is touched, and the results go to a
 * new file beside it that is renamed over it once whole (a failed write
 * removes that file).  The new file takes the old one's mode and owner.
 * Where a rename cannot keep the file as the user has it (a device or a
 * FIFO such as /dev/stdout, a file of several hard links, one whose owner
 * cannot be kept, a directory that takes no new file) the results are
 * written into the file directly, after the same checks.
 */

/* The results, at libvmaf 3.x's 6 decimals, into f, which is closed. */
static int write_stream(VmafContext *vmaf, FILE *f, enum QualeOutputFormat format,
                        const char *path)
{
    const QualeOutputOptions options = {
        .precision = 6,
        .fps = vmaf->elapsed > 0 ? vmaf->next_index / vmaf->elapsed : 0,
        /* quale's version and build, the models and features: a file of
         * FFmpeg's libvmaf filter says what scored it too (libvmaf's
         * readers skip the "provenance" object and element) */
        .describe_run = 1,
    };
    int err = quale_write_output(vmaf->ctx, f, format, &options);
    if (fclose(f) && !err) {
        say(VMAF_LOG_LEVEL_ERROR, "writing '%s' failed: %s", path, strerror(errno));
        err = -EIO;
    }
    return err;
}

static int write_direct(VmafContext *vmaf, const char *path, enum QualeOutputFormat format)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        const int e = errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(e));
        return -e;
    }
    return write_stream(vmaf, f, format, path);
}

/* ".NAME.PID-N.partial" in target's directory: hidden, and unique to this
 * call (N counts the calls of the process), shortened to fit a name of
 * NAME_MAX bytes.  NULL without memory. */
static char *partial_name(const char *target)
{
    static atomic_uint calls;
    const char *slash = strrchr(target, '/');
    const size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = target + dir_len;
    char suffix[48];
    const int n = snprintf(suffix, sizeof(suffix), ".%ld-%u.partial", (long)getpid(),
                           atomic_fetch_add(&calls, 1));
    if (n < 0) return NULL;
    size_t keep = strlen(base);
    const size_t room = NAME_MAX - 1 - (size_t)n; /* 1: the leading '.' */
    if (keep > room) keep = room;
    char *out = malloc(dir_len + 1 + keep + (size_t)n + 1);
    if (!out) return NULL;
    memcpy(out, target, dir_len);
    out[dir_len] = '.';
    memcpy(out + dir_len + 1, base, keep);
    memcpy(out + dir_len + 1 + keep, suffix, (size_t)n + 1);
    return out;
}

/* The results into a new file renamed over target (old: the file there,
 * NULL for none).  1 when this way cannot keep the old file as it is (its
 * owner, or a directory that takes no new file): write it directly. */
static int write_replacing(VmafContext *vmaf, const char *path, const char *target,
                           const struct stat *old, enum QualeOutputFormat format)
{
    char *partial = NULL;
    int fd = -1, e = 0;
    for (unsigned attempt = 0; attempt < 16 && fd < 0; attempt++) {
        free(partial);
        if (!(partial = partial_name(target))) return -ENOMEM;
        /* A new file gets the mode fopen() would give it (0666 less the
         * umask); a replacement starts private and takes the old mode. */
        fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, old ? 0600 : 0666);
        e = fd < 0 ? errno : 0;
        if (fd < 0 && e != EEXIST) break;
    }
    if (fd < 0) {
        free(partial);
        if (old && (e == EACCES || e == EPERM || e == EROFS)) return 1;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(e));
        return -e;
    }
    if (old && (((old->st_uid != geteuid() || old->st_gid != getegid()) &&
                 fchown(fd, old->st_uid, old->st_gid)) ||
                fchmod(fd, old->st_mode & 07777))) {
        close(fd);
        unlink(partial);
        free(partial);
        return 1;
    }
    FILE *f = fdopen(fd, "w");
    int err = 0;
    if (!f) {
        err = -errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(-err));
        close(fd);
    } else {
        err = write_stream(vmaf, f, format, path);
    }
    if (!err && rename(partial, target)) {
        err = -errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(-err));
    }
    if (err) unlink(partial);
    free(partial);
    return err;
}

/* vmaf_write_output(), inside its call. */
static int write_output(VmafContext *vmaf, const char *path, enum VmafOutputFormat fmt)
{
    static const enum QualeOutputFormat formats[] = {
        [VMAF_OUTPUT_FORMAT_XML] = QUALE_OUTPUT_XML, [VMAF_OUTPUT_FORMAT_JSON] = QUALE_OUTPUT_JSON,
        [VMAF_OUTPUT_FORMAT_CSV] = QUALE_OUTPUT_CSV, [VMAF_OUTPUT_FORMAT_SUB] = QUALE_OUTPUT_SUB,
    };
    if (!path || !*path || fmt <= VMAF_OUTPUT_FORMAT_NONE || fmt > VMAF_OUTPUT_FORMAT_SUB) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_write_output: %s", path && *path ? "unknown output "
            "format" : "no path");
        return -EINVAL;
    }
    const enum QualeOutputFormat format = formats[fmt];
    /* Nothing to write yet, or a run without results: the file is not
     * touched. */
    if (!vmaf->flushed) {
        say(VMAF_LOG_LEVEL_ERROR, "vmaf_write_output: before the end of the stream "
            "(vmaf_read_pictures(vmaf, NULL, NULL, 0)) the scores are not complete; '%s' is "
            "left as it was", path);
        return -EINVAL;
    }
    int err = context_results_ready(vmaf->ctx, "vmaf_write_output");
    if (err) return err;

    struct stat st;
    if (stat(path, &st)) {
        const int e = errno;
        struct stat link;
        if (e != ENOENT) {
            say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(e));
            return -e;
        }
        /* A link to no file: fopen() makes the file it names. */
        if (!lstat(path, &link) && S_ISLNK(link.st_mode)) return write_direct(vmaf, path, format);
        return write_replacing(vmaf, path, path, NULL, format);
    }
    if (S_ISDIR(st.st_mode)) {
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(EISDIR));
        return -EISDIR;
    }
    if (!S_ISREG(st.st_mode)) return write_direct(vmaf, path, format);
    /* A file the caller may not write stays as it is: a rename would go
     * around its permissions. */
    if (access(path, W_OK)) {
        const int e = errno;
        say(VMAF_LOG_LEVEL_ERROR, "cannot write '%s': %s", path, strerror(e));
        return -e;
    }
    /* A rename would part a file of several names; a symbolic link stays
     * and its target gets the results. */
    if (st.st_nlink > 1) return write_direct(vmaf, path, format);
    char *target = realpath(path, NULL);
    err = write_replacing(vmaf, path, target ? target : path, &st, format);
    free(target);
    return err == 1 ? write_direct(vmaf, path, format) : err;
}

int vmaf_write_output(VmafContext *vmaf, const char *output_path, enum VmafOutputFormat fmt)
{
    if (!enter(vmaf, "vmaf_write_output")) return -EINVAL;
    const int err = write_output(vmaf, output_path, fmt);
    leave(vmaf);
    return err;
}
