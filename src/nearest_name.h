/* The name a user most likely meant, for "did you mean ...?" in messages. */
#ifndef QUALE_NEAREST_NAME_H
#define QUALE_NEAREST_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* Writes to out ("float_ssim or float_ms_ssim") the names of
 * names[0..count) that word most likely meant: those that have word as a
 * whole '_'-separated part ("ssim" in "float_ssim"), shortest first; else
 * those fewest edits away (case ignored), when that is at most a third of
 * their length.  False, and out empty, when none is close. */
bool nearest_names(const char *word, const char *const *names, unsigned count, char *out,
                   size_t out_size);

#endif
