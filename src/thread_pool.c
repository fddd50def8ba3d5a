#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
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

/* ---- task groups ----------------------------------------------------------- */

typedef struct TaskGroup {
    ThreadTaskFn fn;
    void *arg;
    unsigned count;
    atomic_uint next;  /* the next task to claim */
    atomic_uint refs;  /* the caller and the queued helpers */
    pthread_mutex_t lock;
    pthread_cond_t finished;
    unsigned done;     /* under lock */
} TaskGroup;

static void group_unref(TaskGroup *g)
{
    if (atomic_fetch_sub(&g->refs, 1) != 1) return;
    pthread_cond_destroy(&g->finished);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* Claims and runs tasks until none is left; the tasks it ran count as done. */
static void group_work(TaskGroup *g, unsigned worker)
{
    unsigned ran = 0;
    for (;;) {
        const unsigned task = atomic_fetch_add(&g->next, 1);
        if (task >= g->count) break;
        g->fn(g->arg, task, worker);
        ran++;
    }
    if (!ran) return;
    pthread_mutex_lock(&g->lock);
    g->done += ran;
    if (g->done == g->count) pthread_cond_broadcast(&g->finished);
    pthread_mutex_unlock(&g->lock);
}

static void group_helper(void *arg, unsigned worker)
{
    TaskGroup *g = arg;
    group_work(g, worker);
    group_unref(g);
}

/* Queues a job at the front: helpers go before waiting frames, so an idle
 * worker joins the frame in progress first. */
static int submit_front(ThreadPool *pool, ThreadJobFn fn, void *arg)
{
    Job *job = malloc(sizeof(*job));
    if (!job) return -ENOMEM;
    job->fn = fn;
    job->arg = arg;
    pthread_mutex_lock(&pool->lock);
    job->next = pool->head;
    pool->head = job;
    if (!pool->tail) pool->tail = job;
    pthread_cond_signal(&pool->work_ready);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

int thread_pool_run_tasks(ThreadPool *pool, unsigned worker, unsigned count, ThreadTaskFn fn,
                          void *arg)
{
    if (count == 0) return 0;
    /* Help only from workers that are idle now: with other jobs waiting,
     * every worker already has a frame of its own, and helpers would only
     * add waiting at the group's end. */
    pthread_mutex_lock(&pool->lock);
    const unsigned idle = pool->head ? 0 : pool->worker_count - pool->busy;
    pthread_mutex_unlock(&pool->lock);
    const unsigned helpers = count - 1 < idle ? count - 1 : idle;
    TaskGroup *g = helpers ? malloc(sizeof(*g)) : NULL;
    if (!g) {
        for (unsigned task = 0; task < count; task++) fn(arg, task, worker);
        return helpers ? -ENOMEM : 0;
    }
    g->fn = fn;
    g->arg = arg;
    g->count = count;
    atomic_init(&g->next, 0);
    atomic_init(&g->refs, 1);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->finished, NULL);
    g->done = 0;
    for (unsigned i = 0; i < helpers; i++) {
        atomic_fetch_add(&g->refs, 1);
        if (submit_front(pool, group_helper, g)) {
            atomic_fetch_sub(&g->refs, 1);
            break; /* the caller takes what the missing helper would have */
        }
    }
    group_work(g, worker);
    /* Every task is claimed now; wait for those other workers are running. */
    pthread_mutex_lock(&g->lock);
    while (g->done < g->count) pthread_cond_wait(&g->finished, &g->lock);
    pthread_mutex_unlock(&g->lock);
    group_unref(g);
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
