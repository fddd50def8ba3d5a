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
 * Runs tasks 0 .. count-1 of fn on the calling worker and on workers that
 * are idle, and returns when all are done.  For parallelism inside a job
 * (the metrics of one frame, the row bands of one metric): the caller
 * takes tasks itself, and helpers queued for the others take tasks only
 * when a worker reaches them, so nothing ever waits for a task that no
 * thread has started, and a busy pool simply runs every task on the
 * caller.  Helpers are queued only for the workers idle at the call: with
 * jobs waiting, each worker has its own, and helping would only add
 * waiting at the group's end.  fn gets the index of the worker that runs
 * it.  Which worker
 * runs a task must not change its result.  -ENOMEM leaves the tasks run
 * by the caller alone (still all done).
 */
typedef void (*ThreadTaskFn)(void *arg, unsigned task, unsigned worker);
int thread_pool_run_tasks(ThreadPool *pool, unsigned worker, unsigned count, ThreadTaskFn fn,
                          void *arg);

/* Waits until the queue is empty and every worker is idle. */
void thread_pool_wait(ThreadPool *pool);
/* Waits for the queued jobs, then joins the workers. */
void thread_pool_close(ThreadPool **pool);

#endif /* QUALE_SRC_THREAD_POOL_H */
