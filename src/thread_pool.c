#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "thread_pool.h"

typedef struct Job {
    struct Job *next;
    ThreadJobFn fn;
    void *arg;
} Job;

typedef struct Worker {
    ThreadPool *pool;
    unsigned index;
    pthread_t thread;
} Worker;

struct ThreadPool {
    pthread_mutex_t lock;
    pthread_cond_t work_ready;
    pthread_cond_t all_idle;
    Job *head, *tail;
    unsigned busy;
    bool stopping;
    Worker *workers;
    unsigned worker_count;
};

static void *worker_main(void *arg)
{
    Worker *w = arg;
    ThreadPool *pool = w->pool;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->head && !pool->stopping)
            pthread_cond_wait(&pool->work_ready, &pool->lock);
        if (!pool->head) break; /* stopping and drained */
        Job *job = pool->head;
        pool->head = job->next;
        if (!pool->head) pool->tail = NULL;
        pool->busy++;
        pthread_mutex_unlock(&pool->lock);

        job->fn(job->arg, w->index);
        free(job);

        pthread_mutex_lock(&pool->lock);
        pool->busy--;
        if (!pool->head && !pool->busy) pthread_cond_broadcast(&pool->all_idle);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

int thread_pool_open(ThreadPool **out, unsigned workers)
{
    if (!workers) return -EINVAL;
    ThreadPool *pool = calloc(1, sizeof(*pool));
    if (!pool) return -ENOMEM;
    pool->workers = calloc(workers, sizeof(*pool->workers));
    if (!pool->workers) {
        free(pool);
        return -ENOMEM;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work_ready, NULL);
    pthread_cond_init(&pool->all_idle, NULL);
    for (unsigned i = 0; i < workers; i++) {
        pool->workers[i].pool = pool;
        pool->workers[i].index = i;
        if (pthread_create(&pool->workers[i].thread, NULL, worker_main, &pool->workers[i])) {
            *out = pool;
            thread_pool_close(out);
            return -EAGAIN;
        }
        pool->worker_count++;
    }
    *out = pool;
    return 0;
}

int thread_pool_submit(ThreadPool *pool, ThreadJobFn fn, void *arg)
{
    Job *job = malloc(sizeof(*job));
    if (!job) return -ENOMEM;
    job->next = NULL;
    job->fn = fn;
    job->arg = arg;
    pthread_mutex_lock(&pool->lock);
    if (pool->tail) pool->tail->next = job;
    else pool->head = job;
    pool->tail = job;
    pthread_cond_signal(&pool->work_ready);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

void thread_pool_wait(ThreadPool *pool)
{
    pthread_mutex_lock(&pool->lock);
    while (pool->head || pool->busy) pthread_cond_wait(&pool->all_idle, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

void thread_pool_close(ThreadPool **ppool)
{
    ThreadPool *pool = ppool ? *ppool : NULL;
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->work_ready);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->worker_count; i++)
        pthread_join(pool->workers[i].thread, NULL);
    pthread_cond_destroy(&pool->work_ready);
    pthread_cond_destroy(&pool->all_idle);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
    *ppool = NULL;
}
