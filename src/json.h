/*
 * A small, strict JSON (RFC 8259) DOM parser for model files.
 *
 * The whole document is parsed at once into an arena that one call frees.
 * Strings are decoded (escapes, surrogate pairs) and must be valid UTF-8;
 * numbers follow the JSON grammar exactly and are converted with strtod
 * (correctly rounded, independent of the C locale).  Duplicate object keys,
 * trailing commas, comments, NaN/Infinity and data after the value are
 * errors.  Every error carries the line and column (in characters, from 1)
 * where it was found.  Any input, however damaged, gives either a document
 * or an error: nothing aborts and nothing reads outside the buffer.
 */
#ifndef QUALE_SRC_JSON_H
#define QUALE_SRC_JSON_H

#include <stdbool.h>
#include <stddef.h>

enum JsonType {
    JSON_NULL = 0,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
};

typedef struct JsonMember JsonMember;

typedef struct JsonValue {
    enum JsonType type;
    size_t offset;  /* byte offset of the value in the text (for messages) */
    union {
        bool boolean;
        struct {
            double value;
            const char *text; /* the number as written, NUL-terminated */
        } number;
        struct {
            const char *chars; /* decoded UTF-8, NUL-terminated; may hold
                                * \u0000, so use length */
            size_t length;
        } string;
        struct {
            const struct JsonValue *items;
            size_t count;
        } array;
        struct {
            const JsonMember *members; /* in document order */
            size_t count;
        } object;
    } u;
} JsonValue;

struct JsonMember {
    const char *key; /* decoded, NUL-terminated */
    size_t key_length;
    size_t key_offset;
    JsonValue value;
};

typedef struct JsonLimits {
    size_t max_depth;  /* nesting of arrays and objects; capped at 512 */
    size_t max_values; /* values of every kind in the document */
} JsonLimits;

/* 64 levels, 1 Mi values: far above any model, far below what exhausts the
 * stack or memory. */
#define JSON_DEFAULT_MAX_DEPTH 64
#define JSON_DEFAULT_MAX_VALUES ((size_t)1 << 20)
#define JSON_MAX_DEPTH_CAP 512

typedef struct JsonError {
    unsigned line, column; /* from 1; 0 when the error has no position */
    char message[160];
} JsonError;

typedef struct JsonDocument JsonDocument;

/*
 * Parses length bytes of text (no NUL needed; NUL bytes are errors outside
 * strings).  limits may be NULL for the defaults.  On success *doc holds the
 * document; on failure *doc is NULL, error (if not NULL) says why and where,
 * and the return is -EINVAL (syntax or limit) or -ENOMEM.
 */
int json_parse(JsonDocument **doc, const char *text, size_t length,
               const JsonLimits *limits, JsonError *error);

const JsonValue *json_document_root(const JsonDocument *doc);

void json_document_free(JsonDocument **doc);

/* The member of an object with this key, NULL if none (or not an object). */
const JsonValue *json_object_get(const JsonValue *object, const char *key);

/* "null", "a boolean", "a number", "a string", "an array", "an object". */
const char *json_type_name(enum JsonType type);

/* The line and column (both from 1, the column in characters) of a byte
 * offset into text. */
void json_position(const char *text, size_t length, size_t offset,
                   unsigned *line, unsigned *column);

/*
 * Reads a whole file into a NUL-terminated buffer (free() it).  Files larger
 * than max_size are refused.  error receives "<path>: <reason>".
 */
int json_read_file(const char *path, size_t max_size, char **text,
                   size_t *length, char *error, size_t error_size);

/*
 * strtod() and strtof() that read '.' as the decimal point whatever the
 * C locale says (a host program may have called setlocale()).  Same
 * contract as the standard functions.
 */
double json_strtod(const char *text, char **end);
float json_strtof(const char *text, char **end);

#endif /* QUALE_SRC_JSON_H */
