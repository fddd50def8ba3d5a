/*
 * The tool's results files (tools/quale/output_file.c): a signal while the
 * results are written removes the partial file and leaves the old results;
 * a failed format leaves nothing; an ignored signal (nohup) changes
 * nothing.  The signals come from inside the format callback, so that they
 * arrive while the partial file exists, every time.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output_file.h"
#include "test.h"

static char dir[] = "/tmp/quale-output-file-XXXXXX";

static int format_then_signal(void *cookie, FILE *f)
{
    fputs("<half of the results", f);
    fflush(f);
    raise(*(const int *)cookie);
    fputs(" and the rest/>\n", f);
    return 0;
}

static int format_fails(void *cookie, FILE *f)
{
    (void)cookie;
    fputs("<a part", f);
    return -EIO;
}

static int format_whole(void *cookie, FILE *f)
{
    fputs((const char *)cookie, f);
    return 0;
}

static unsigned partial_files(void)
{
    unsigned n = 0;
    DIR *d = opendir(dir);
    if (!d) return 1000;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strstr(e->d_name, ".partial-") != NULL;
    closedir(d);
    return n;
}

static int file_is(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    const size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return !strcmp(buf, text);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256], fresh[256];
    snprintf(path, sizeof(path), "%s/results.xml", dir);
    snprintf(fresh, sizeof(fresh), "%s/new.xml", dir);
    write_file(path, "old results\n");

    const int signals[] = { SIGINT, SIGTERM, SIGHUP };
    for (unsigned i = 0; i < 3; i++) {
        for (int existing = 0; existing < 2; existing++) {
            const char *target = existing ? path : fresh;
            const pid_t pid = fork();
            if (pid == 0) {
                /* the signal's default action, whatever this test inherited
                 * (a run under nohup ignores SIGHUP) */
                signal(signals[i], SIG_DFL);
                output_file_write(target, format_then_signal, (void *)&signals[i]);
                _exit(0); /* not reached: the signal ends the child */
            }
            int status = 0;
            CHECK(waitpid(pid, &status, 0) == pid);
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == signals[i]);
            CHECK(partial_files() == 0);
            if (existing) CHECK(file_is(path, "old results\n"));
            else CHECK(access(fresh, F_OK) != 0);
        }
    }

    /* A format that fails: nothing written, nothing left. */
    CHECK(output_file_write(path, format_fails, NULL) == -1);
    CHECK(file_is(path, "old results\n") && partial_files() == 0);
    CHECK(output_file_write(fresh, format_fails, NULL) == -1);
    CHECK(access(fresh, F_OK) != 0 && partial_files() == 0);

    /* A signal the caller ignores (nohup) stays ignored: the write ends. */
    const pid_t pid = fork();
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        const int sig = SIGHUP;
        _exit(output_file_write(path, format_then_signal, (void *)&sig) ? 1 : 0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(file_is(path, "<half of the results and the rest/>\n") && partial_files() == 0);

    /* After a write, the process's own handlers are as they were. */
    struct sigaction before, after;
    sigaction(SIGTERM, NULL, &before);
    CHECK(output_file_write(path, format_whole, "whole\n") == 0 && file_is(path, "whole\n"));
    sigaction(SIGTERM, NULL, &after);
    CHECK(before.sa_handler == after.sa_handler);

    unlink(path);
    unlink(fresh);
    rmdir(dir);
    return test_summary();
}
