/*
 * The internals libvmaf's API shares between its files (src/libvmaf/):
 * libvmaf_api.c (the log, contexts, frames, scores), libvmaf_models.c
 * (feature dictionaries, models, collections), libvmaf_pictures.c
 * (pictures, preallocated pools, CUDA), libvmaf_output.c (the results
 * files).
 */
#ifndef QUALE_SRC_LIBVMAF_LIBVMAF_PRIVATE_H
#define QUALE_SRC_LIBVMAF_LIBVMAF_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "libvmaf/libvmaf.h"
#include "libvmaf/libvmaf_cuda.h"
#include "quale/quale.h"

/* The libvmaf API version this face implements. */
#define VMAF_API_VERSION "3.0.0"

/* A message on stderr at libvmaf's log level; the library's log. */
void say(enum VmafLogLevel level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void log_from_quale(void *cookie, enum QualeLogLevel level, const char *message);

/* A growing string; text_take() gives it (NULL if any addition failed). */
typedef struct Text {
    char *s;
    size_t len, cap;
    bool failed;
} Text;

void text_add(Text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
char *text_take(Text *t);

struct VmafFeatureDictionary {
    unsigned count;
    char **key, **value;
};

/* "k=v:k2=v2" into t, each key prefixed with prefix ("adm." or ""). */
void add_options(Text *t, const VmafFeatureDictionary *d, const char *prefix);

struct VmafModel {
    char *spec; /* quale's model spec: version= or path=, name=, flags, overloads */
    char *name; /* the key of its scores */
    int fd;     /* the file of a path holding ':' (see model_path()), else -1 */
};

struct VmafModelCollection {
    VmafModel *model; /* the collection's own copy */
};

/* The owners of a picture vmaf_picture_alloc() or a preallocated pool
 * made: the memory is a quale picture. */
struct VmafRef {
    atomic_int count;
    QualePicture pic;
};

/* libvmaf's pixel format and size as quale's format: 0, or -EINVAL. */
int format_of(enum VmafPixelFormat pix_fmt, unsigned bpc, unsigned w, unsigned h,
              QualeVideoFormat *f);
void ref_release(struct VmafRef *ref);

struct VmafCudaState {
    void *cu_ctx; /* the caller's CUcontext, or NULL for the primary one */
};

/* Every context ever made stays listed; a closed one keeps its husk, so
 * that a call on it (a second vmaf_close(), say) is refused instead of
 * reading freed memory.
 *
 * Every call on a context holds its lock from start to end (enter() and
 * leave()), so that calls from several threads take turns: two
 * vmaf_read_pictures() cannot both take one index, a flush waits for the
 * frame being read, and vmaf_close() waits for the calls in progress
 * (those after it find the context closed).  The husk keeps the lock, so
 * it is never destroyed. */
struct VmafContext {
    struct VmafContext *next_made;
    pthread_mutex_t lock;
    bool closed; /* under lock */

    QualeContext *ctx;
    VmafConfiguration cfg;
    unsigned next_index;       /* the index vmaf_read_pictures() expects */
    bool flushed;
    double started, elapsed;   /* for the fps of the output files */

    bool preallocated;
    bool pool_on_device; /* vmaf_cuda_preallocate_pictures(), DEVICE */
    QualeVideoFormat pool_format;
    enum VmafPixelFormat pool_pix_fmt;
    VmafCudaState *cuda_state; /* imported: freed with the context */
};

/* A call on vmaf begins (its lock taken, when it is an open context made
 * by vmaf_init(); else said, and the call refused) and ends; a request
 * that must come before the first frame. */
bool enter(VmafContext *vmaf, const char *caller);
void leave(VmafContext *vmaf);
bool before_frames(VmafContext *vmaf, const char *caller);

#endif /* QUALE_SRC_LIBVMAF_LIBVMAF_PRIVATE_H */
