/*
 * A fixed set of worker threads running jobs from one FIFO queue.  Each
 * worker has an index (0 .. count-1) so jobs can use per-worker scratch.
 */
#ifndef QUALE_SRC_THREAD_POOL_H
#define QUALE_SRC_THREAD_POOL_H

typedef struct ThreadPool ThreadPool;
typedef void (*ThreadJobFn)(void *job, unsigned worker);

int thread_pool_open(ThreadPool **pool, unsigned workers);
/* Queues a job; never blocks. */
int thread_pool_submit(ThreadPool *pool, ThreadJobFn fn, void *job);
/*
 * Runs tasks 0 .. count-1 of fn on the calling worker and on other
 * workers, and returns when all are done.  For parallelism inside a job
 * (the metrics of one frame, the row bands of one metric): the caller
 * takes tasks itself, and helpers queued for the others take tasks only
 * when a worker reaches them, so nothing ever waits for a task that no
 * thread has started, and a busy pool simply runs every task on the
 * caller.  Helpers are queued only when no job but helpers is waiting
 * (with jobs waiting, each worker has its own, and helping would only add
 * waiting at the group's end), one for every other worker: an idle worker
 * takes it at once, a busy one when its job is done.  With
 * THREAD_TASKS_WHILE_WAITING a worker also takes it while it waits on a
 * group of its own: a caller whose tasks are all claimed runs such helpers
 * until the others' tasks of its group are done.  fn gets the index of the
 * worker that runs it.  Which worker runs a task must not change its
 * result.  -ENOMEM leaves the tasks run by the caller alone (still all
 * done).
 */
enum ThreadTasksFlags {
    /* The tasks may run on a worker that is waiting on a task group of
     * its own, in the middle of its job: they must use nothing of that
     * worker's that its job keeps across the group (a metric's row bands
     * use only their own row buffers; a frame's metrics, each a whole
     * extract() with the worker's scratch, may not). */
    THREAD_TASKS_WHILE_WAITING = 1u << 0,
};
typedef void (*ThreadTaskFn)(void *arg, unsigned task, unsigned worker);
int thread_pool_run_tasks(ThreadPool *pool, unsigned worker, unsigned count, ThreadTaskFn fn,
                          void *arg, unsigned flags);

/* Waits until the queue is empty and every worker is idle. */
void thread_pool_wait(ThreadPool *pool);
/* Waits for the queued jobs, then joins the workers. */
void thread_pool_close(ThreadPool **pool);

#endif /* QUALE_SRC_THREAD_POOL_H */
