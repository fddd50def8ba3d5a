#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prefetch.h"

enum { MAX_DEPTH = 16 };

typedef struct Entry {
    int status; /* 1 picture, 0 end, < 0 error */
    QualePicture pic;
} Entry;

struct Prefetcher {
    QualeVideoReader *reader;
    QualeContext *ctx;
    QualeVideoFormat format;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    Entry queue[MAX_DEPTH];
    unsigned head, count, depth;
    bool stopping;
};

static void *prefetch_main(void *arg)
{
    Prefetcher *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (p->count == p->depth && !p->stopping) pthread_cond_wait(&p->changed, &p->lock);
        const bool stop = p->stopping;
        pthread_mutex_unlock(&p->lock);
        if (stop) break;

        Entry e = { 0 };
        e.status = quale_context_alloc_picture(p->ctx, &e.pic, &p->format);
        if (e.status == 0) {
            e.status = quale_video_read(p->reader, &e.pic);
            if (e.status != 1) quale_picture_unref(&e.pic);
        }
        pthread_mutex_lock(&p->lock);
        p->queue[(p->head + p->count) % MAX_DEPTH] = e;
        p->count++;
        pthread_cond_broadcast(&p->changed);
        pthread_mutex_unlock(&p->lock);
        if (e.status != 1) break; /* the end, or an error: nothing more to read */
    }
    return NULL;
}

int prefetch_start(Prefetcher **out, QualeVideoReader *reader, QualeContext *ctx,
                   const QualeVideoFormat *format, unsigned depth)
{
    Prefetcher *p = calloc(1, sizeof(*p));
    if (!p) return -ENOMEM;
    p->reader = reader;
    p->ctx = ctx;
    p->format = *format;
    p->depth = depth < 1 ? 1 : depth > MAX_DEPTH ? MAX_DEPTH : depth;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, NULL);
    if (pthread_create(&p->thread, NULL, prefetch_main, p)) {
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->changed);
        free(p);
        return -EAGAIN;
    }
    *out = p;
    return 0;
}

int prefetch_next(Prefetcher *p, QualePicture *pic)
{
    pthread_mutex_lock(&p->lock);
    while (p->count == 0) pthread_cond_wait(&p->changed, &p->lock);
    Entry e = p->queue[p->head];
    /* The end and errors stay queued: asking again gives the same answer. */
    if (e.status == 1) {
        p->head = (p->head + 1) % MAX_DEPTH;
        p->count--;
        pthread_cond_broadcast(&p->changed);
    }
    pthread_mutex_unlock(&p->lock);
    if (e.status == 1) *pic = e.pic;
    return e.status;
}

void prefetch_stop(Prefetcher **pp)
{
    Prefetcher *p = pp ? *pp : NULL;
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    for (unsigned i = 0; i < p->count; i++) {
        Entry *e = &p->queue[(p->head + i) % MAX_DEPTH];
        if (e->status == 1) quale_picture_unref(&e->pic);
    }
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p);
    *pp = NULL;
}
