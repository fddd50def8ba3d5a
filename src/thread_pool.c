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
    /* For callers waiting on their task groups: a group's last task is
     * done, or a helper was queued that they may run meanwhile. */
    pthread_cond_t progress;
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
    pthread_cond_init(&pool->progress, NULL);
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
    ThreadPool *pool;
    unsigned flags;    /* THREAD_TASKS_* */
    ThreadTaskFn fn;
    void *arg;
    unsigned count;
    atomic_uint next;  /* the next task to claim */
    atomic_uint refs;  /* the caller and the queued helpers */
    unsigned done;     /* under the pool's lock */
} TaskGroup;

static void group_unref(TaskGroup *g)
{
    if (atomic_fetch_sub(&g->refs, 1) != 1) return;
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
    ThreadPool *pool = g->pool;
    pthread_mutex_lock(&pool->lock);
    g->done += ran;
    if (g->done == g->count) pthread_cond_broadcast(&pool->progress);
    pthread_mutex_unlock(&pool->lock);
}

static void group_helper(void *arg, unsigned worker)
{
    TaskGroup *g = arg;
    group_work(g, worker);
    group_unref(g);
}

/* The first helper at the front of the queue that a worker waiting on a
 * group may run (helpers are always ahead of other jobs), unlinked; NULL
 * if none.  Under the pool's lock. */
static Job *take_waiting_helper(ThreadPool *pool)
{
    Job *prev = NULL;
    for (Job *job = pool->head; job && job->fn == group_helper; prev = job, job = job->next) {
        const TaskGroup *g = job->arg;
        if (!(g->flags & THREAD_TASKS_WHILE_WAITING)) continue;
        if (prev) prev->next = job->next;
        else pool->head = job->next;
        if (pool->tail == job) pool->tail = prev;
        return job;
    }
    return NULL;
}

/* Queues a job at the front: helpers go before waiting frames, so an idle
 * worker joins the frame in progress first, and a caller waiting on its
 * group may take it. */
static int submit_helper(ThreadPool *pool, TaskGroup *g)
{
    Job *job = malloc(sizeof(*job));
    if (!job) return -ENOMEM;
    job->fn = group_helper;
    job->arg = g;
    pthread_mutex_lock(&pool->lock);
    job->next = pool->head;
    pool->head = job;
    if (!pool->tail) pool->tail = job;
    pthread_cond_signal(&pool->work_ready);
    if (g->flags & THREAD_TASKS_WHILE_WAITING) pthread_cond_broadcast(&pool->progress);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

int thread_pool_run_tasks(ThreadPool *pool, unsigned worker, unsigned count, ThreadTaskFn fn,
                          void *arg, unsigned flags)
{
    if (count == 0) return 0;
    /* With frames waiting, every worker has one of its own to take next,
     * and helpers would only add waiting at the group's end.  Otherwise
     * every other worker gets a helper: an idle one takes it at once, a
     * busy one when it is done or waiting on a group of its own (another
     * metric of the same frame, say). */
    pthread_mutex_lock(&pool->lock);
    /* helpers are queued at the front, other jobs at the back */
    const bool jobs_waiting = pool->tail && pool->tail->fn != group_helper;
    const unsigned others = jobs_waiting ? 0 : pool->worker_count - 1;
    pthread_mutex_unlock(&pool->lock);
    const unsigned helpers = count - 1 < others ? count - 1 : others;
    TaskGroup *g = helpers ? malloc(sizeof(*g)) : NULL;
    if (!g) {
        for (unsigned task = 0; task < count; task++) fn(arg, task, worker);
        return helpers ? -ENOMEM : 0;
    }
    g->pool = pool;
    g->flags = flags;
    g->fn = fn;
    g->arg = arg;
    g->count = count;
    atomic_init(&g->next, 0);
    atomic_init(&g->refs, 1);
    g->done = 0;
    for (unsigned i = 0; i < helpers; i++) {
        atomic_fetch_add(&g->refs, 1);
        if (submit_helper(pool, g)) {
            atomic_fetch_sub(&g->refs, 1);
            break; /* the caller takes what the missing helper would have */
        }
    }
    group_work(g, worker);
    /* Every task is claimed now; while other workers finish theirs, this
     * one runs the helpers of groups that allow it (they only take tasks
     * no thread has started, and return when none is left). */
    pthread_mutex_lock(&pool->lock);
    while (g->done < g->count) {
        Job *job = take_waiting_helper(pool);
        if (!job) {
            pthread_cond_wait(&pool->progress, &pool->lock);
            continue;
        }
        pthread_mutex_unlock(&pool->lock);
        job->fn(job->arg, worker);
        free(job);
        pthread_mutex_lock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
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
    pthread_cond_destroy(&pool->progress);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
    *ppool = NULL;
}
