/*
 * libvmaf's model files (model_file.c): their descriptions, the limits a
 * file is held to, and the text helpers the model spec shares with them.
 */
#ifndef QUALE_SRC_MODEL_FILE_H
#define QUALE_SRC_MODEL_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "model_desc.h"

/* libvmaf's limits (MAX_FEATURE_COUNT, MAX_KNOT_COUNT), and ours for the
 * rest: generous for real models, small enough to keep the stack arrays of
 * the predictor small and hostile files cheap. */
#define MODEL_MAX_FEATURES 64
#define MODEL_MAX_KNOTS 10
#define MODEL_MAX_PARTS 257         /* main model + 256 bootstrap models */
#define MODEL_MAX_OPTIONS 32        /* per feature */
#define MODEL_MAX_SV ((unsigned)1 << 20)
#define MODEL_MAX_FILE_SIZE ((size_t)64 << 20)
#define MODEL_DEFAULT_VERSION "vmaf_v0.6.1"

/* Memory of a model loaded from a file: freed all at once. */
typedef struct ModelPool {
    void **blocks;
    size_t count, capacity;
} ModelPool;

void *model_pool_alloc(ModelPool *pool, size_t count, size_t size);
void model_pool_free(ModelPool *pool);
char *model_dup_string(const char *s);
/* Formats the message into error (control characters replaced: messages
 * quote the file and the spec) and returns -EINVAL. */
int model_set_error(char *error, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int model_out_of_memory(char *error, size_t size);
/* A number's text as libvmaf normalises option values ("1.20" -> "1.2"). */
void model_normalise_number(const char *text, char *out, size_t size);
bool model_is_numeric(const char *text);

/* The model descriptions of a parsed libvmaf model file (source and path
 * name it in messages; text is the file's, for line:column): one model, or
 * a bootstrap collection.  They live in pool and point into the
 * document's strings.  feature_known says which feature names some metric
 * provides (the others are refused where the file names them). */
int model_file_descriptions(const char *source, const char *path, const char *text,
                            size_t length, ModelPool *pool, const JsonValue *root,
                            bool (*feature_known)(const char *feature), ModelDesc **descs,
                            unsigned *count, bool *collection, char *error,
                            size_t error_size);

#endif /* QUALE_SRC_MODEL_FILE_H */
