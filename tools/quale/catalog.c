/* A catalog of video pairs read and checked (catalog.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "catalog.h"
#include "json.h"

#define CATALOG_MAX_BYTES ((size_t)256 << 20)

static const char *const fields[] = { "ref", "dist", "model", "options", "output" };
enum { FIELD_REF, FIELD_DIST, FIELD_MODEL, FIELD_OPTIONS, FIELD_OUTPUT, FIELD_COUNT };

static int fail(char *error, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *error, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, size, format, args);
    va_end(args);
    return -1;
}

static int field_of(const char *name)
{
    for (int f = 0; f < FIELD_COUNT; f++)
        if (!strcmp(name, fields[f])) return f;
    return -1;
}

/* ---- words, as a shell splits them ---------------------------------------- */

/* A growing word or list. */
typedef struct Buffer {
    char *text;
    size_t length, size;
} Buffer;

static int buffer_put(Buffer *b, char c)
{
    if (b->length + 2 > b->size) {
        const size_t size = b->size ? 2 * b->size : 32;
        char *text = realloc(b->text, size);
        if (!text) return -1;
        b->text = text;
        b->size = size;
    }
    b->text[b->length++] = c;
    b->text[b->length] = '\0';
    return 0;
}

static int words_add(char ***words, unsigned *count, Buffer *word)
{
    char **grown = realloc(*words, sizeof(**words) * (*count + 2));
    if (!grown) return -1;
    *words = grown;
    grown[(*count)++] = word->text ? word->text : strdup("");
    grown[*count] = NULL;
    *word = (Buffer){ 0 };
    return grown[*count - 1] ? 0 : -1;
}

int catalog_split_words(const char *text, char ***words, unsigned *count, char *error,
                        size_t error_size)
{
    *words = NULL;
    *count = 0;
    Buffer word = { 0 };
    bool in_word = false;
    int err = 0;
    for (const char *c = text; *c && !err; c++) {
        if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') {
            if (in_word) err = words_add(words, count, &word);
            in_word = false;
            continue;
        }
        in_word = true;
        if (*c == '\'') {
            const char *end = strchr(c + 1, '\'');
            if (!end) return free(word.text), fail(error, error_size, "no closing quotation");
            for (const char *q = c + 1; q < end && !err; q++) err = buffer_put(&word, *q);
            c = end;
        } else if (*c == '"') {
            for (c++; *c && *c != '"' && !err; c++) {
                /* in double quotes a backslash escapes only these */
                if (*c == '\\' && c[1] && strchr("\\\"$`\n", c[1])) c++;
                err = buffer_put(&word, *c);
            }
            if (!*c) return free(word.text), fail(error, error_size, "no closing quotation");
        } else if (*c == '\\') {
            if (!c[1]) return free(word.text), fail(error, error_size, "no escaped character");
            err = buffer_put(&word, *++c);
        } else {
            err = buffer_put(&word, *c);
        }
    }
    if (!err && in_word) err = words_add(words, count, &word);
    if (err) {
        free(word.text);
        return fail(error, error_size, "out of memory");
    }
    return 0;
}

/* ---- paths ---------------------------------------------------------------- */

/* path from folder (absolute) where it is relative, with "." and ".." and
 * doubled slashes taken out as the name reads (Python's normpath). */
static char *resolve(const char *folder, const char *path)
{
    const size_t size = strlen(folder) + strlen(path) + 3;
    char *joined = malloc(size), *out = malloc(size);
    if (!joined || !out) return free(joined), free(out), NULL;
    if (path[0] == '/') snprintf(joined, size, "%s", path);
    else snprintf(joined, size, "%s/%s", folder, path);
    /* the parts, with '.' dropped and '..' taking back the last one */
    size_t length = 0;
    for (char *save = NULL, *part = strtok_r(joined, "/", &save); part;
         part = strtok_r(NULL, "/", &save)) {
        if (!strcmp(part, ".")) continue;
        if (!strcmp(part, "..")) {
            while (length && out[length - 1] != '/') length--;
            if (length) length--;
            continue;
        }
        out[length++] = '/';
        memcpy(out + length, part, strlen(part));
        length += strlen(part);
    }
    if (!length) out[length++] = '/';
    out[length] = '\0';
    free(joined);
    return out;
}

/* ---- the entries ---------------------------------------------------------- */

/* An entry's fields as text (NULL where absent), stripped of surrounding
 * white space. */
typedef struct Entry {
    char where[32];
    const char *value[FIELD_COUNT];
    char *owned[FIELD_COUNT];
} Entry;

static char *stripped(const char *s, size_t length)
{
    while (length && strchr(" \t\r\n", *s)) s++, length--;
    while (length && strchr(" \t\r\n", s[length - 1])) length--;
    char *out = malloc(length + 1);
    if (out) memcpy(out, s, length), out[length] = '\0';
    return out;
}

static int entry_set(Entry *e, int field, const char *text, size_t length, char *error,
                     size_t size)
{
    e->owned[field] = stripped(text, length);
    e->value[field] = e->owned[field];
    return e->owned[field] ? 0 : fail(error, size, "out of memory");
}

static void entries_free(Entry *entries, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        for (int f = 0; f < FIELD_COUNT; f++) free(entries[i].owned[f]);
    free(entries);
}

static int json_entries(const char *text, size_t length, Entry **out, unsigned *count,
                        char *error, size_t size)
{
    JsonDocument *doc = NULL;
    JsonError jerr = { 0 };
    if (json_parse(&doc, text, length, NULL, &jerr))
        return fail(error, size, "not valid JSON: %s (line %u, column %u)", jerr.message,
                    jerr.line, jerr.column);
    const JsonValue *root = json_document_root(doc);
    int err = 0;
    if (root->type != JSON_ARRAY) err = fail(error, size, "a JSON catalog is a list of objects");
    Entry *entries = err ? NULL : calloc(root->u.array.count + 1, sizeof(*entries));
    if (!err && !entries) err = fail(error, size, "out of memory");
    for (size_t i = 0; !err && i < root->u.array.count; i++) {
        const JsonValue *item = &root->u.array.items[i];
        Entry *e = &entries[i];
        snprintf(e->where, sizeof(e->where), "entry %zu", i + 1);
        if (item->type != JSON_OBJECT) {
            err = fail(error, size, "%s: not an object", e->where);
            break;
        }
        for (size_t m = 0; !err && m < item->u.object.count; m++) {
            const JsonMember *member = &item->u.object.members[m];
            const int f = field_of(member->key);
            if (f < 0)
                err = fail(error, size, "%s: unknown field '%s' (known: ref, dist, model, "
                           "options, output)", e->where, member->key);
            else if (member->value.type != JSON_STRING)
                err = fail(error, size, "%s: the field '%s' must be a string", e->where,
                           member->key);
            else
                err = entry_set(e, f, member->value.u.string.chars,
                                strlen(member->value.u.string.chars), error, size);
        }
    }
    /* the count before the document goes: root is the document's */
    const unsigned n = root->type == JSON_ARRAY ? (unsigned)root->u.array.count : 0;
    json_document_free(&doc);
    if (err) {
        entries_free(entries, entries ? n : 0);
        return -1;
    }
    *out = entries;
    *count = n;
    return 0;
}

/* One CSV row (RFC 4180: ',' between cells, '"' around one, '""' a quote
 * in it) from *p, which moves past it; its first max cells into cells[]
 * (their text NULL where empty), their count in *count.  -1 for a quote
 * left open (nothing kept). */
static int csv_row(const char **p, const char *end, Buffer cells[], unsigned max,
                   unsigned *count)
{
    const char *c = *p;
    unsigned n = 0;
    Buffer extra = { 0 }; /* a cell past max: read, not kept */
    for (;; c++) {
        Buffer *cell = n < max ? &cells[n] : &extra;
        free(extra.text);
        extra = (Buffer){ 0 };
        *cell = (Buffer){ 0 };
        n++;
        if (c < end && *c == '"') {
            for (c++; c < end && !(*c == '"' && (c + 1 >= end || c[1] != '"')); c++) {
                if (*c == '"') c++;
                buffer_put(cell, *c);
            }
            if (c >= end) {
                for (unsigned i = 0; i < n && i < max; i++) free(cells[i].text);
                free(extra.text);
                return -1;
            }
            c++;
        }
        while (c < end && *c != ',' && *c != '\n') buffer_put(cell, *c++);
        if (c >= end || *c != ',') break;
    }
    free(extra.text);
    *p = c < end ? c + 1 : end;
    *count = n;
    return 0;
}

static int csv_entries(const char *text, size_t length, Entry **out, unsigned *count,
                       char *error, size_t size)
{
    const char *p = text, *end = text + length;
    Buffer cells[FIELD_COUNT + 1];
    unsigned n = 0, line = 1;
    int header[FIELD_COUNT];
    if (csv_row(&p, end, cells, FIELD_COUNT + 1, &n))
        return fail(error, size, "line 1: a quote is not closed");
    unsigned columns = n;
    int err = 0;
    for (unsigned i = 0; i < n && i < FIELD_COUNT + 1; i++) {
        char *name = stripped(cells[i].text ? cells[i].text : "", cells[i].length);
        const int f = name ? field_of(name) : -1;
        if (i >= FIELD_COUNT || f < 0)
            err = err ? err : fail(error, size, "header: unknown field '%s' (known: ref, dist, "
                                   "model, options, output)", name ? name : "");
        else header[i] = f;
        free(name);
        free(cells[i].text);
    }
    if (!err && (n == 0 || (n == 1 && !cells[0].length)))
        err = fail(error, size, "the CSV catalog has no header row");
    Entry *entries = NULL;
    unsigned used = 0;
    while (!err && p < end) {
        line++;
        if (csv_row(&p, end, cells, FIELD_COUNT + 1, &n)) {
            err = fail(error, size, "line %u: a quote is not closed", line);
            break;
        }
        bool blank = true;
        for (unsigned i = 0; i < n && i < FIELD_COUNT + 1; i++)
            for (size_t k = 0; k < cells[i].length; k++)
                blank &= strchr(" \t\r", cells[i].text[k]) != NULL;
        if (!blank && n != columns)
            err = fail(error, size, "line %u: %u fields, the header has %u", line, n, columns);
        Entry *grown = !err && !blank ? realloc(entries, sizeof(*entries) * (used + 1)) : NULL;
        if (!err && !blank && !grown) err = fail(error, size, "out of memory");
        if (grown) {
            entries = grown;
            Entry *e = &entries[used++];
            *e = (Entry){ 0 };
            snprintf(e->where, sizeof(e->where), "line %u", line);
            for (unsigned i = 0; i < n && !err; i++)
                err = entry_set(e, header[i], cells[i].text ? cells[i].text : "",
                                cells[i].length, error, size);
        }
        for (unsigned i = 0; i < n && i < FIELD_COUNT + 1; i++) free(cells[i].text);
    }
    if (err) {
        entries_free(entries, used);
        return -1;
    }
    *out = entries;
    *count = used;
    return 0;
}

/* ---- pairs ---------------------------------------------------------------- */

static int pair_make(CatalogPair *pair, const Entry *e, const char *folder, char *error,
                     size_t size)
{
    snprintf(pair->where, sizeof(pair->where), "%s", e->where);
    static const int required[] = { FIELD_REF, FIELD_DIST, FIELD_OUTPUT };
    for (unsigned i = 0; i < 3; i++)
        if (!e->value[required[i]] || !*e->value[required[i]])
            return fail(error, size, "%s: the field '%s' is missing or empty", e->where,
                        fields[required[i]]);
    pair->ref = resolve(folder, e->value[FIELD_REF]);
    pair->dist = resolve(folder, e->value[FIELD_DIST]);
    pair->output = resolve(folder, e->value[FIELD_OUTPUT]);
    const char *model = e->value[FIELD_MODEL];
    if (model && *model && !strncmp(model, "path=", 5)) {
        /* path=FILE[:options]: the file from the catalog's folder too */
        const char *colon = strchr(model + 5, ':');
        char *file = strndup(model + 5, colon ? (size_t)(colon - model - 5) : strlen(model + 5));
        char *resolved = file ? resolve(folder, file) : NULL;
        const size_t length = (resolved ? strlen(resolved) : 0) + strlen(model) + 8;
        pair->model = resolved ? malloc(length) : NULL;
        if (pair->model) snprintf(pair->model, length, "path=%s%s", resolved, colon ? colon : "");
        free(file);
        free(resolved);
    } else if (model && *model) {
        pair->model = strdup(model);
    }
    if (!pair->ref || !pair->dist || !pair->output || (model && *model && !pair->model))
        return fail(error, size, "out of memory");
    char why[128];
    if (catalog_split_words(e->value[FIELD_OPTIONS] ? e->value[FIELD_OPTIONS] : "",
                            &pair->options, &pair->option_count, why, sizeof(why)))
        return fail(error, size, "%s: options: %s", e->where, why);
    return 0;
}

static int by_output(const void *a, const void *b)
{
    const CatalogPair *const *x = a, *const *y = b;
    const int c = strcmp((*x)->output, (*y)->output);
    return c ? c : (*x < *y ? -1 : *x > *y);
}

/* No two pairs write one output (sorted, so that a catalog of a hundred
 * thousand pairs is checked at once). */
static int outputs_once(const Catalog *c, char *error, size_t size)
{
    const CatalogPair **sorted = malloc(sizeof(*sorted) * c->count);
    if (!sorted) return fail(error, size, "out of memory");
    for (unsigned i = 0; i < c->count; i++) sorted[i] = &c->pairs[i];
    qsort(sorted, c->count, sizeof(*sorted), by_output);
    int err = 0;
    for (unsigned i = 1; i < c->count && !err; i++)
        if (!strcmp(sorted[i - 1]->output, sorted[i]->output))
            err = fail(error, size, "%s: the output %s is also that of %s", sorted[i]->where,
                       sorted[i]->output, sorted[i - 1]->where);
    free(sorted);
    return err;
}

int catalog_load(const char *path, Catalog *catalog, char *error, size_t error_size)
{
    *catalog = (Catalog){ 0 };
    char *text = NULL;
    size_t length = 0;
    char why[512];
    if (json_read_file(path, CATALOG_MAX_BYTES, &text, &length, why, sizeof(why)))
        return fail(error, error_size, "cannot read the catalog: %s", why);
    const char *dot = strrchr(path, '.');
    Entry *entries = NULL;
    unsigned count = 0;
    int err;
    if (dot && !strcasecmp(dot, ".json"))
        err = json_entries(text, length, &entries, &count, error, error_size);
    else if (dot && !strcasecmp(dot, ".csv"))
        err = csv_entries(text, length, &entries, &count, error, error_size);
    else
        err = fail(error, error_size, "the catalog's name must end in .json or .csv");
    free(text);
    if (!err && !count) err = fail(error, error_size, "the catalog has no pairs");
    /* the catalog's folder, absolute: relative paths in it are from there */
    char *cwd = err ? NULL : getcwd(NULL, 0);
    char *base = cwd ? resolve(cwd, path) : NULL;
    free(cwd);
    if (base) {
        char *slash = strrchr(base, '/');
        slash[slash == base ? 1 : 0] = '\0';
    }
    if (!err && !base) err = fail(error, error_size, "out of memory");
    catalog->pairs = err ? NULL : calloc(count, sizeof(*catalog->pairs));
    if (!err && !catalog->pairs) err = fail(error, error_size, "out of memory");
    for (unsigned i = 0; !err && i < count; i++) {
        catalog->count = i + 1;
        err = pair_make(&catalog->pairs[i], &entries[i], base, error, error_size);
    }
    if (!err) err = outputs_once(catalog, error, error_size);
    free(base);
    entries_free(entries, count);
    if (err) catalog_free(catalog);
    return err;
}

void catalog_free(Catalog *catalog)
{
    for (unsigned i = 0; catalog->pairs && i < catalog->count; i++) {
        CatalogPair *p = &catalog->pairs[i];
        free(p->ref);
        free(p->dist);
        free(p->output);
        free(p->model);
        for (unsigned k = 0; k < p->option_count; k++) free(p->options[k]);
        free(p->options);
    }
    free(catalog->pairs);
    *catalog = (Catalog){ 0 };
}
