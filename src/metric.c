/*
 * The metric interface's own functions: the tasks a metric splits its
 * work into, run through the runner its MetricFrame carries (the
 * context's scheduler), or in turn without one.
 */
#include "common.h"
#include "metric.h"

int metric_run_tasks(const MetricFrame *frame, void *scratch, unsigned count, MetricTaskFn fn,
                     void *arg)
{
    const MetricRunner *runner = frame->runner;
    if (!runner || count < 2) {
        for (unsigned task = 0; task < count; task++) fn(arg, task, scratch);
        return 0;
    }
    return runner->run_tasks(runner, frame->worker, scratch, count, fn, arg);
}

unsigned metric_band_rows(const MetricFrame *frame, unsigned rows, unsigned min_rows)
{
    enum { BANDS_PER_THREAD = 4 };
    const unsigned threads = frame->runner ? frame->runner->threads : 1;
    if (threads < 2 || rows == 0) return rows ? rows : 1;
    const unsigned bands = QUALE_MIN(threads * BANDS_PER_THREAD, (unsigned)METRIC_MAX_BANDS);
    const unsigned band_rows = QUALE_MAX((rows + bands - 1) / bands, min_rows);
    return QUALE_MIN(band_rows, rows);
}
