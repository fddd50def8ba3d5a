/*
 * Provenance records (QualeProvenanceRecord) that own their text: the
 * ones a context describes itself with (src/context/provenance.c), the
 * ones read back from a file and a merge's (src/results.c).
 */
#ifndef QUALE_SRC_PROVENANCE_H
#define QUALE_SRC_PROVENANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "quale/quale.h"

typedef struct Provenance {
    QualeProvenanceRecord *records; /* facts set by provenance_records() */
    unsigned count, capacity;
    unsigned *first_fact;           /* each record's first fact in facts */
    QualeOutputNote *facts;         /* name and value strings owned */
    unsigned fact_count, fact_capacity;
    int error;                      /* -ENOMEM once an addition failed */
} Provenance;

/* Starts a record of section; the facts added next are its own.  Each
 * returns 0 or -ENOMEM (kept in p->error: a builder may add on and look
 * once at the end). */
int provenance_begin(Provenance *p, const char *section);
int provenance_fact(Provenance *p, const char *name, const char *value);
int provenance_factf(Provenance *p, const char *name, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A copy of record r (its section and every fact). */
int provenance_copy(Provenance *p, const QualeProvenanceRecord *r);

/* The records with their facts in place (valid until the next addition). */
const QualeProvenanceRecord *provenance_records(Provenance *p);

void provenance_free(Provenance *p);

/* Whether two records hold the same section and facts, in order. */
bool provenance_equal(const QualeProvenanceRecord *a, const QualeProvenanceRecord *b);

#endif /* QUALE_SRC_PROVENANCE_H */
