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
/* Waits until the queue is empty and every worker is idle. */
void thread_pool_wait(ThreadPool *pool);
/* Waits for the queued jobs, then joins the workers. */
void thread_pool_close(ThreadPool **pool);

#endif /* QUALE_SRC_THREAD_POOL_H */
