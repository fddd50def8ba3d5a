/* Suggestions for misspelt names: a metric, a model version. */
#include <ctype.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "nearest_name.h"

enum { LONGEST = 64 };

/* Levenshtein distance, case folded; names are short (< LONGEST). */
static unsigned edits(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= LONGEST || lb >= LONGEST) return ~0u;
    unsigned row[LONGEST + 1];
    for (size_t j = 0; j <= lb; j++) row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diagonal = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            const unsigned above = row[j];
            const bool same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            unsigned best = diagonal + !same;
            if (above + 1 < best) best = above + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[lb];
}

/* word is one of name's '_'-separated runs, or a run of them ("ms_ssim"). */
static bool is_part(const char *word, const char *name)
{
    const size_t n = strlen(word);
    if (!n) return false;
    for (const char *at = name; (at = strstr(at, word)); at++) {
        const bool starts = at == name || at[-1] == '_';
        const bool ends = at[n] == '\0' || at[n] == '_';
        if (starts && ends) return true;
    }
    return false;
}

enum { MOST = 3 }; /* names suggested at most */

/* Appends names[pick[0..picked)] to out, joined by ", " and " or ". */
static bool join(const char *const *names, const unsigned *pick, unsigned picked, char *out,
                 size_t out_size)
{
    size_t at = 0;
    for (unsigned k = 0; k < picked && at < out_size; k++) {
        const char *glue = k == 0 ? "" : k + 1 == picked ? " or " : ", ";
        at += (size_t)snprintf(out + at, out_size - at, "%s%s", glue, names[pick[k]]);
    }
    return picked > 0;
}

bool nearest_names(const char *word, const char *const *names, unsigned count, char *out,
                   size_t out_size)
{
    if (!out || !out_size) return false;
    out[0] = '\0';
    if (!word || !*word) return false;
    unsigned pick[MOST], picked = 0;
    /* the names word is a part of, shortest first (a stable insertion) */
    for (unsigned i = 0; i < count; i++) {
        if (!strcmp(word, names[i]) || !is_part(word, names[i])) continue;
        const size_t length = strlen(names[i]);
        unsigned k = picked;
        while (k > 0 && strlen(names[pick[k - 1]]) > length) k--;
        if (k == MOST) continue;
        for (unsigned j = picked < MOST ? picked : MOST - 1; j > k; j--) pick[j] = pick[j - 1];
        pick[k] = i;
        if (picked < MOST) picked++;
    }
    if (picked) return join(names, pick, picked, out, out_size);

    /* else the nearest by edits, all that are equally near */
    unsigned best = ~0u;
    for (unsigned i = 0; i < count; i++) {
        if (!strcmp(word, names[i])) continue;
        const unsigned e = edits(word, names[i]); /* 0: another case */
        if (3 * e > strlen(names[i])) continue;
        if (e < best) {
            best = e;
            picked = 0;
        }
        if (e == best && picked < MOST) pick[picked++] = i;
    }
    return join(names, pick, picked, out, out_size);
}
