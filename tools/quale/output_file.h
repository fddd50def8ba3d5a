/*
 * Writing a results file so that a reader never sees half of it, and so
 * that an existing file keeps what the user gave it (mode, owner, links).
 */
#ifndef QUALE_TOOLS_OUTPUT_FILE_H
#define QUALE_TOOLS_OUTPUT_FILE_H

#include <stdio.h>

/* Formats the whole output into f; returns 0 or a negative errno (and has
 * said why). */
typedef int (*OutputFormatFn)(void *cookie, FILE *f);

/*
 * Writes the output of format() to path:
 * - "-": standard output, as it is formatted.
 * - something other than a regular file (a device, a pipe): in place.
 * - a new file, or an existing one that rename() can replace exactly:
 *   formatted into PATH.partial-PID beside it (the name shortened to fit
 *   the file system's limit), given the old file's mode and owner, then
 *   renamed over it, so that the name holds the old results or the new,
 *   never a part.  A SIGINT, SIGTERM or SIGHUP meanwhile removes the
 *   partial file before the tool ends.
 * - an existing file that a rename would change (it has other hard links,
 *   an owner we cannot give a new file, or a directory we cannot write):
 *   formatted into an unnamed temporary file first, then copied into the
 *   file in place; only a failure of that copy (a full disk) can leave it
 *   cut, and the message then says so.
 * Through a symbolic link, its target is written.  Prints one line on
 * stderr and returns -1 on failure, 0 on success.
 */
int output_file_write(const char *path, OutputFormatFn format, void *cookie);

/*
 * Whether path can be written, before a run spends its time: an existing
 * file must be writable and not a directory, a new one's directory must
 * exist and take new files.  Prints one line on stderr and returns -1 when
 * not; 0 otherwise ("-" included).  The write can still fail later (a
 * full disk); output_file_write() says so then.
 */
int output_file_check(const char *path);

/* A file a run reads or writes, and what it is to the user ("the
 * reference video", "-o"). */
typedef struct NamedFile {
    const char *path; /* "-": standard input for a read, output for a write */
    const char *what;
} NamedFile;

/*
 * Whether every output is a file of its own: not one of the inputs (the
 * same file, also through a link or another path), not another output.
 * Call it before any work: a run must never write over what it reads.
 * NULL paths are skipped.  Prints one line on stderr and returns -1 when
 * two meet, 0 otherwise.
 */
int output_file_distinct(const NamedFile *outputs, unsigned output_count,
                         const NamedFile *inputs, unsigned input_count);

#endif /* QUALE_TOOLS_OUTPUT_FILE_H */
