/*
 * Provenance records that own their text.  The facts of every record sit
 * in one array, so that a record added later never moves another's; the
 * records' fact pointers are set when they are handed out.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provenance.h"

/* Grows *array (of *capacity items of size) to hold one more. */
static int grow(void **array, unsigned *capacity, unsigned count, size_t size)
{
    if (count < *capacity) return 0;
    const unsigned more = *capacity ? *capacity * 2 : 8;
    void *bigger = realloc(*array, (size_t)more * size);
    if (!bigger) return -ENOMEM;
    *array = bigger;
    *capacity = more;
    return 0;
}

static int failed(Provenance *p)
{
    p->error = -ENOMEM;
    return -ENOMEM;
}

int provenance_begin(Provenance *p, const char *section)
{
    if (p->count == p->capacity) {
        /* the records and their first facts grow together */
        const unsigned more = p->capacity ? p->capacity * 2 : 8;
        void *records = realloc(p->records, (size_t)more * sizeof(*p->records));
        if (!records) return failed(p);
        p->records = records;
        void *firsts = realloc(p->first_fact, (size_t)more * sizeof(*p->first_fact));
        if (!firsts) return failed(p);
        p->first_fact = firsts;
        p->capacity = more;
    }
    char *name = strdup(section);
    if (!name) return failed(p);
    p->records[p->count] = (QualeProvenanceRecord){ .section = name };
    p->first_fact[p->count] = p->fact_count;
    p->count++;
    return 0;
}

int provenance_fact(Provenance *p, const char *name, const char *value)
{
    if (!p->count) return -EINVAL;
    if (grow((void **)&p->facts, &p->fact_capacity, p->fact_count, sizeof(*p->facts)))
        return failed(p);
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return failed(p);
    }
    p->facts[p->fact_count++] = (QualeOutputNote){ n, v };
    p->records[p->count - 1].fact_count++;
    return 0;
}

int provenance_factf(Provenance *p, const char *name, const char *format, ...)
{
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof(text), format, args);
    va_end(args);
    return provenance_fact(p, name, text);
}

int provenance_copy(Provenance *p, const QualeProvenanceRecord *r)
{
    int err = provenance_begin(p, r->section);
    for (unsigned i = 0; i < r->fact_count && !err; i++)
        err = provenance_fact(p, r->facts[i].name, r->facts[i].value);
    return err;
}

const QualeProvenanceRecord *provenance_records(Provenance *p)
{
    for (unsigned i = 0; i < p->count; i++) p->records[i].facts = p->facts + p->first_fact[i];
    return p->records;
}

void provenance_free(Provenance *p)
{
    for (unsigned i = 0; i < p->count; i++) free((char *)p->records[i].section);
    for (unsigned i = 0; i < p->fact_count; i++) {
        free((char *)p->facts[i].name);
        free((char *)p->facts[i].value);
    }
    free(p->records);
    free(p->first_fact);
    free(p->facts);
    *p = (Provenance){ 0 };
}

bool provenance_equal(const QualeProvenanceRecord *a, const QualeProvenanceRecord *b)
{
    if (strcmp(a->section, b->section) || a->fact_count != b->fact_count) return false;
    for (unsigned i = 0; i < a->fact_count; i++)
        if (strcmp(a->facts[i].name, b->facts[i].name) ||
            strcmp(a->facts[i].value, b->facts[i].value))
            return false;
    return true;
}
