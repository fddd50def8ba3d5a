/*
 * A catalog of video pairs (docs/scale-out.md): a JSON list of objects or
 * a CSV file with a header row, with the fields ref, dist and output
 * (required), model and options (optional).  quale batch scores one; the
 * Slurm scripts (scripts/slurm/catalog.py) read it through
 * `quale batch --list`, so that both take it alike.
 */
#ifndef QUALE_TOOLS_CATALOG_H
#define QUALE_TOOLS_CATALOG_H

#include <stddef.h>

typedef struct CatalogPair {
    char where[32];   /* "entry 3" (JSON) or "line 4" (CSV), for messages */
    char *ref, *dist; /* from the catalog's folder where relative */
    char *output;
    char *model;      /* a -m spec, NULL if none; a path=FILE made absolute */
    char **options;   /* the options split as a shell splits them */
    unsigned option_count;
} CatalogPair;

typedef struct Catalog {
    CatalogPair *pairs;
    unsigned count;
} Catalog;

/* Reads and checks a catalog: a field that is not a string, an unknown or
 * missing one, options a shell could not split, two pairs with one output.
 * 0, or -1 with error holding the reason (its entry or line first). */
int catalog_load(const char *path, Catalog *catalog, char *error, size_t error_size);
void catalog_free(Catalog *catalog);

/* The words of text as a POSIX shell splits them (quotes, backslashes; no
 * expansions), as Python's shlex.split() does.  0, or -1 with error set. */
int catalog_split_words(const char *text, char ***words, unsigned *count, char *error,
                        size_t error_size);

#endif
