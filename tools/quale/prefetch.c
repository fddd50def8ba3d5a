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

typedef struct Lane {
    struct Prefetcher *owner;
    QualeVideoReader *reader;
    pthread_t thread;
    bool started;
    Entry queue[MAX_DEPTH];
    unsigned head, count;
} Lane;

struct Prefetcher {
    QualeContext *ctx;
    QualeVideoFormat format;
    bool on_device; /* device pictures: the readers decode on the GPU */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    Lane lanes[PREFETCH_MAX_LANES];
    unsigned lane_count, depth;
    unsigned next;      /* the frame the caller asks for next */
    int failed_lane;    /* -1 until a lane reports an error */
    bool stopping;
};

static void *lane_main(void *arg)
{
    Lane *lane = arg;
    Prefetcher *p = lane->owner;
    const unsigned skip = p->lane_count - 1;
    bool first = true;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (lane->count == p->depth && !p->stopping) pthread_cond_wait(&p->changed, &p->lock);
        const bool stop = p->stopping;
        pthread_mutex_unlock(&p->lock);
        if (stop) break;

        /* Lane k reads every lane_count-th frame: skip the others' frames. */
        Entry e = { 0 };
        e.status = first || skip == 0 ? 1 : quale_video_skip(lane->reader, skip);
        first = false;
        if (e.status == 1)
            e.status = p->on_device ? quale_context_alloc_device_picture(p->ctx, &e.pic, &p->format)
                                    : quale_context_alloc_picture(p->ctx, &e.pic, &p->format);
        if (e.status == 0) {
            e.status = quale_video_read(lane->reader, &e.pic);
            if (e.status != 1) quale_picture_unref(&e.pic);
        } else if (e.status > 0) {
            e.status = -EIO; /* unreachable: alloc returns 0 or < 0 */
        }
        pthread_mutex_lock(&p->lock);
        lane->queue[(lane->head + lane->count) % MAX_DEPTH] = e;
        lane->count++;
        pthread_cond_broadcast(&p->changed);
        pthread_mutex_unlock(&p->lock);
        if (e.status != 1) break; /* the end, or an error: nothing more to read */
    }
    return NULL;
}

int prefetch_start(Prefetcher **out, QualeVideoReader *const *readers, unsigned lanes,
                   QualeContext *ctx, const QualeVideoFormat *format, unsigned depth,
                   bool on_device)
{
    if (lanes == 0 || lanes > PREFETCH_MAX_LANES) return -EINVAL;
    Prefetcher *p = calloc(1, sizeof(*p));
    if (!p) return -ENOMEM;
    p->ctx = ctx;
    p->format = *format;
    p->on_device = on_device;
    p->lane_count = lanes;
    p->depth = depth < 1 ? 1 : depth > MAX_DEPTH ? MAX_DEPTH : depth;
    p->failed_lane = -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, NULL);
    for (unsigned i = 0; i < lanes; i++) {
        p->lanes[i].owner = p;
        p->lanes[i].reader = readers[i];
    }
    for (unsigned i = 0; i < lanes; i++) {
        if (pthread_create(&p->lanes[i].thread, NULL, lane_main, &p->lanes[i])) {
            prefetch_stop(&p);
            return -EAGAIN;
        }
        p->lanes[i].started = true;
    }
    *out = p;
    return 0;
}

int prefetch_next(Prefetcher *p, QualePicture *pic)
{
    pthread_mutex_lock(&p->lock);
    Lane *lane = &p->lanes[p->next % p->lane_count];
    while (lane->count == 0) pthread_cond_wait(&p->changed, &p->lock);
    Entry e = lane->queue[lane->head];
    /* The end and errors stay queued: asking again gives the same answer. */
    if (e.status == 1) {
        lane->head = (lane->head + 1) % MAX_DEPTH;
        lane->count--;
        p->next++;
        pthread_cond_broadcast(&p->changed);
    } else if (e.status < 0) {
        p->failed_lane = (int)(lane - p->lanes);
    }
    pthread_mutex_unlock(&p->lock);
    if (e.status == 1) *pic = e.pic;
    return e.status;
}

const char *prefetch_error(const Prefetcher *p)
{
    return p->failed_lane >= 0 ? quale_video_error(p->lanes[p->failed_lane].reader) : "";
}

void prefetch_stop(Prefetcher **pp)
{
    Prefetcher *p = pp ? *pp : NULL;
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    for (unsigned l = 0; l < p->lane_count; l++) {
        Lane *lane = &p->lanes[l];
        if (lane->started) pthread_join(lane->thread, NULL);
        for (unsigned i = 0; i < lane->count; i++) {
            Entry *e = &lane->queue[(lane->head + i) % MAX_DEPTH];
            if (e->status == 1) quale_picture_unref(&e->pic);
        }
    }
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p);
    *pp = NULL;
}
