/* Writing a results file whole, keeping what the user gave an existing one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_file.h"

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

/* ---- removing the partial file on a signal ------------------------------- */

/* The partial file that exists right now, for the signal handler: it can
 * only use what is async-signal-safe (unlink, sigaction, raise).  One at a
 * time: the runs of a batch scored side by side write in turn
 * (write_lock), each write a few milliseconds. */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static char partial_path[PATH_MAX + 1];
static volatile sig_atomic_t partial_exists;

static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction saved_actions[3];
static bool handlers_installed[3];

static void remove_partial_and_die(int sig)
{
    if (partial_exists) unlink(partial_path);
    partial_exists = 0;
    /* End as the signal would have ended the tool. */
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void install_cleanup(void)
{
    for (unsigned i = 0; i < 3; i++) {
        struct sigaction old;
        handlers_installed[i] = false;
        if (sigaction(cleanup_signals[i], NULL, &old)) continue;
        /* A signal the caller ignores (nohup) stays ignored. */
        if (old.sa_handler == SIG_IGN) continue;
        struct sigaction act = { .sa_handler = remove_partial_and_die };
        sigfillset(&act.sa_mask);
        if (!sigaction(cleanup_signals[i], &act, &saved_actions[i])) handlers_installed[i] = true;
    }
}

static void restore_signals(void)
{
    for (unsigned i = 0; i < 3; i++)
        if (handlers_installed[i]) sigaction(cleanup_signals[i], &saved_actions[i], NULL);
}

/* ---- helpers --------------------------------------------------------------- */

/* PATH.partial-PID beside path, the name part shortened so that it fits the
 * directory's name limit (a 250-byte name must still work). */
static int make_partial_name(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dir_len;
    char suffix[32];
    const size_t suffix_len = (size_t)snprintf(suffix, sizeof(suffix), ".partial-%ld", (long)getpid());

    long name_max = NAME_MAX;
    char dir[PATH_MAX + 1];
    if (dir_len < sizeof(dir)) {
        memcpy(dir, dir_len ? path : ".", dir_len ? dir_len : 1);
        dir[dir_len ? dir_len : 1] = '\0';
        const long limit = pathconf(dir, _PC_NAME_MAX);
        if (limit > 0 && limit < name_max) name_max = limit;
    }
    size_t keep = strlen(base);
    if (keep + suffix_len > (size_t)name_max)
        keep = (size_t)name_max > suffix_len ? (size_t)name_max - suffix_len : 0;
    if (dir_len + keep + suffix_len + 1 > size) return -ENAMETOOLONG;
    memcpy(out, path, dir_len);
    memcpy(out + dir_len, base, keep);
    memcpy(out + dir_len + keep, suffix, suffix_len + 1);
    return 0;
}

static bool directory_writable(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return access(".", W_OK | X_OK) == 0;
    if (slash == path) return access("/", W_OK | X_OK) == 0;
    char *dir = strndup(path, (size_t)(slash - path));
    if (!dir) return false;
    const bool ok = access(dir, W_OK | X_OK) == 0;
    free(dir);
    return ok;
}

static bool refused(int err)
{
    return err == EACCES || err == EPERM || err == EROFS;
}

/* ---- the three ways ----------------------------------------------------------- */

/* Straight into the file (devices and pipes, which cannot be replaced). */
static int write_direct(const char *path, OutputFormatFn format, void *cookie)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    int err = format(cookie, f);
    if (fclose(f) && !err) {
        fprintf(stderr, "quale: error: writing '%s' failed: %s\n", path, strerror(errno));
        err = -EIO;
    }
    return err ? -1 : 0;
}

/* Into an unnamed temporary file, then copied over the file's contents. */
static int write_in_place(const char *shown, const char *path, OutputFormatFn format,
                          void *cookie)
{
    FILE *tmp = tmpfile();
    if (!tmp) {
        fprintf(stderr, "quale: error: cannot write '%s': no temporary file for the results "
                "(%s)\n", shown, strerror(errno));
        return -1;
    }
    int err = format(cookie, tmp);
    if (err) {
        fclose(tmp);
        return -1;
    }
    if (fflush(tmp) || ferror(tmp)) {
        fprintf(stderr, "quale: error: cannot write '%s': the temporary copy of the results "
                "failed (%s)\n", shown, strerror(errno));
        fclose(tmp);
        return -1;
    }
    const long length = ftell(tmp);
    const int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || length < 0) {
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", shown, strerror(errno));
        if (fd >= 0) close(fd);
        fclose(tmp);
        return -1;
    }
    rewind(tmp);
    char buffer[1 << 16];
    size_t got;
    const char *failed = NULL;
    while (!failed && (got = fread(buffer, 1, sizeof(buffer), tmp)) > 0) {
        for (size_t done = 0; done < got && !failed;) {
            const ssize_t n = write(fd, buffer + done, got - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) failed = strerror(n < 0 ? errno : EIO);
            else done += (size_t)n;
        }
    }
    if (!failed && ferror(tmp)) failed = "reading the temporary copy failed";
    if (!failed && ftruncate(fd, (off_t)length)) failed = strerror(errno);
    if (close(fd) && !failed) failed = strerror(errno);
    fclose(tmp);
    if (failed) {
        fprintf(stderr, "quale: error: writing '%s' failed part way (%s): the file holds only "
                "a part of the results\n", shown, failed);
        return -1;
    }
    return 0;
}

/* Into PATH.partial-PID, made like the old file, then renamed over it.
 * Returns 1 when this way cannot keep the old file's owner or the
 * directory refuses it, so that the caller writes in place instead. */
static int write_replacing_locked(const char *shown, const char *path, const struct stat *old,
                                  OutputFormatFn format, void *cookie)
{
    char partial[PATH_MAX + 1];
    if (make_partial_name(path, partial, sizeof(partial))) {
        if (old) return 1;
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", shown, strerror(ENAMETOOLONG));
        return -1;
    }
    memcpy(partial_path, partial, strlen(partial) + 1);
    install_cleanup();
    /* A new file gets the mode fopen() would give it; a replacement starts
     * private and takes the old file's owner, then its mode. */
    const int fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, old ? 0600 : 0666);
    if (fd < 0) {
        const int e = errno;
        restore_signals();
        if (old && refused(e)) return 1;
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", shown, strerror(e));
        return -1;
    }
    partial_exists = 1;
    int status = 0;
    if (old) {
        const bool same_owner = old->st_uid == geteuid() && old->st_gid == getegid();
        if ((!same_owner && fchown(fd, old->st_uid, old->st_gid)) ||
            fchmod(fd, old->st_mode & 07777))
            status = 1;
    }
    FILE *f = status ? NULL : fdopen(fd, "w");
    if (!status && !f) {
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", shown, strerror(errno));
        status = -1;
    }
    if (f) {
        if (format(cookie, f)) status = -1;
        if (fclose(f) && !status) {
            fprintf(stderr, "quale: error: writing '%s' failed: %s\n", shown, strerror(errno));
            status = -1;
        }
    } else {
        close(fd);
    }
    if (!status && rename(partial, path)) {
        const int e = errno;
        if (old && refused(e)) {
            status = 1;
        } else {
            fprintf(stderr, "quale: error: cannot write '%s': %s\n", shown, strerror(e));
            status = -1;
        }
    }
    if (status) unlink(partial);
    partial_exists = 0;
    restore_signals();
    return status;
}

static int write_replacing(const char *shown, const char *path, const struct stat *old,
                           OutputFormatFn format, void *cookie)
{
    pthread_mutex_lock(&write_lock);
    const int status = write_replacing_locked(shown, path, old, format, cookie);
    pthread_mutex_unlock(&write_lock);
    return status;
}

int output_file_check(const char *path)
{
    if (!strcmp(path, "-")) return 0;
    struct stat st;
    if (!stat(path, &st)) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "quale: error: cannot write '%s': it is a directory\n", path);
            return -1;
        }
        if (S_ISREG(st.st_mode) && access(path, W_OK)) {
            fprintf(stderr, "quale: error: cannot write '%s': %s\n", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (errno != ENOENT) {
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    /* A new file: its directory must be there and take it. */
    char dir[PATH_MAX + 1];
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, sizeof(dir), ".");
    } else if (slash == path) {
        snprintf(dir, sizeof(dir), "/");
    } else if ((size_t)(slash - path) < sizeof(dir)) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    } else {
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", path, strerror(ENAMETOOLONG));
        return -1;
    }
    if (stat(dir, &st)) {
        if (errno == ENOENT)
            fprintf(stderr, "quale: error: cannot write '%s': the directory '%s' does not "
                    "exist\n", path, dir);
        else
            fprintf(stderr, "quale: error: cannot write '%s': '%s': %s\n", path, dir,
                    strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "quale: error: cannot write '%s': '%s' is not a directory\n", path, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK)) {
        fprintf(stderr, "quale: error: cannot write '%s': no new file can be made in '%s' (%s)\n",
                path, dir, strerror(errno));
        return -1;
    }
    return 0;
}

int output_file_write(const char *path, OutputFormatFn format, void *cookie)
{
    if (!strcmp(path, "-")) return format(cookie, stdout) ? -1 : 0;

    struct stat st;
    if (stat(path, &st)) {
        if (errno != ENOENT) {
            fprintf(stderr, "quale: error: cannot write '%s': %s\n", path, strerror(errno));
            return -1;
        }
        return write_replacing(path, path, NULL, format, cookie) ? -1 : 0;
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", path, strerror(EISDIR));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) return write_direct(path, format, cookie);
    /* A file we may not write stays as it is (a rename would go around its
     * permissions). */
    if (access(path, W_OK)) {
        fprintf(stderr, "quale: error: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    /* Through a symbolic link, its target gets the results. */
    char *resolved = realpath(path, NULL);
    const char *target = resolved ? resolved : path;
    int status = 1;
    if (st.st_nlink == 1 && directory_writable(target))
        status = write_replacing(path, target, &st, format, cookie);
    if (status == 1) status = write_in_place(path, target, format, cookie);
    free(resolved);
    return status ? -1 : 0;
}

/* Where a path leads: the file's device and inode when it exists (through
 * links), else its directory's real path and its name; a path that cannot
 * be resolved is compared as given. */
typedef struct FileIdentity {
    bool exists;
    dev_t dev;
    ino_t ino;
    char *name; /* malloc'ed, for a file not there yet */
} FileIdentity;

static void identify(const char *path, bool output, FileIdentity *id)
{
    memset(id, 0, sizeof(*id));
    struct stat st;
    if (!strcmp(path, "-")) {
        /* standard input, or output redirected into a regular file (-o -
         * >> input): a pipe or terminal is nobody's input */
        if (!fstat(output ? STDOUT_FILENO : STDIN_FILENO, &st) && S_ISREG(st.st_mode)) {
            id->exists = true;
            id->dev = st.st_dev;
            id->ino = st.st_ino;
        }
        return;
    }
    if (!stat(path, &st)) {
        id->exists = true;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    const char *base = slash ? slash + 1 : path;
    if (real) {
        const size_t size = strlen(real) + strlen(base) + 2;
        if ((id->name = malloc(size))) snprintf(id->name, size, "%s/%s", real, base);
    }
    if (!id->name) id->name = strdup(path);
    free(real);
    free(dir);
}

static bool same_file(const FileIdentity *a, const FileIdentity *b)
{
    if (a->exists || b->exists)
        return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
    return a->name && b->name && !strcmp(a->name, b->name);
}

int output_file_distinct(const NamedFile *outputs, unsigned output_count,
                         const NamedFile *inputs, unsigned input_count)
{
    FileIdentity *out = calloc(output_count ? output_count : 1, sizeof(*out));
    FileIdentity in;
    int status = 0;
    if (!out) {
        fprintf(stderr, "quale: error: out of memory\n");
        return -1;
    }
    for (unsigned o = 0; o < output_count; o++)
        if (outputs[o].path) identify(outputs[o].path, true, &out[o]);
    for (unsigned o = 0; o < output_count && !status; o++) {
        if (!outputs[o].path) continue;
        /* "-" twice is standard output twice, which the CLI refuses itself */
        const bool stream = !strcmp(outputs[o].path, "-");
        for (unsigned p = 0; p < o && !status; p++) {
            if (!outputs[p].path || stream || !strcmp(outputs[p].path, "-") ||
                !same_file(&out[o], &out[p]))
                continue;
            fprintf(stderr, "quale: error: %s '%s' and %s '%s' are the same file: give each "
                    "output a file of its own\n", outputs[p].what, outputs[p].path,
                    outputs[o].what, outputs[o].path);
            status = -1;
        }
        if (stream && !out[o].exists) continue;
        for (unsigned i = 0; i < input_count && !status; i++) {
            if (!inputs[i].path) continue;
            identify(inputs[i].path, false, &in);
            if (in.exists && same_file(&out[o], &in)) {
                if (stream)
                    fprintf(stderr, "quale: error: standard output (%s -) is %s ('%s'): quale "
                            "never writes over what it reads\n", outputs[o].what,
                            inputs[i].what, inputs[i].path);
                else
                    fprintf(stderr, "quale: error: %s '%s' is %s ('%s'): quale never writes "
                            "over what it reads\n", outputs[o].what, outputs[o].path,
                            inputs[i].what, inputs[i].path);
                status = -1;
            }
            free(in.name);
        }
    }
    for (unsigned o = 0; o < output_count; o++) free(out[o].name);
    free(out);
    return status;
}
