/* The registry of metrics: one const array, in --list-features order
 * (the list in src/meson.build). */
#include <errno.h>
#include <string.h>

#include "common.h"
#include "gpu/gpu.h"
#include "metric.h"
#include "metric_list.h"

#define DECLARE_METRIC(name) extern const Metric metric_##name;
QUALE_METRICS(DECLARE_METRIC)

#define LIST_METRIC(name) &metric_##name,
const Metric *const quale_metrics[] = { QUALE_METRICS(LIST_METRIC) NULL };

const unsigned quale_metric_total = QUALE_ARRAY_SIZE(quale_metrics) - 1;

const Metric *metric_find(const char *name)
{
    for (unsigned i = 0; i < quale_metric_total; i++)
        if (!strcmp(quale_metrics[i]->name, name)) return quale_metrics[i];
    return NULL;
}

unsigned metric_planes(const Metric *m, const void *state)
{
    if (m->planes) return m->planes(state);
    return (m->flags & METRIC_LUMA_ONLY) ? 1u : 7u;
}

unsigned quale_metric_count(void)
{
    return quale_metric_total;
}

int quale_metric_info(unsigned index, QualeMetricInfo *info)
{
    if (index >= quale_metric_total || !info) return -EINVAL;
    const Metric *m = quale_metrics[index];
    info->name = m->name;
    info->keys = m->keys;
    info->option_count = options_count(m->options);
    info->backends = 1u << QUALE_BACKEND_CPU;
    static const enum QualeBackend gpus[] = { QUALE_BACKEND_CUDA, QUALE_BACKEND_HIP,
                                              QUALE_BACKEND_VULKAN };
    for (unsigned g = 0; g < QUALE_ARRAY_SIZE(gpus); g++) {
        const GpuOps *ops = gpu_ops(gpus[g]);
        if (!ops->unavailable && ops->twins.built(m)) info->backends |= 1u << gpus[g];
    }
    return 0;
}

int quale_metric_option(unsigned index, unsigned option, QualeOptionInfo *info)
{
    if (index >= quale_metric_total || !info) return -EINVAL;
    const Metric *m = quale_metrics[index];
    if (option >= options_count(m->options)) return -EINVAL;
    const MetricOption *o = &m->options[option];
    info->name = o->name;
    info->help = o->help;
    info->type = o->type;
    switch (o->type) {
    case QUALE_OPTION_BOOL: info->default_value = o->default_value.b; break;
    case QUALE_OPTION_INT:
    case QUALE_OPTION_CHOICE: info->default_value = o->default_value.i; break;
    case QUALE_OPTION_DOUBLE: info->default_value = o->default_value.d; break;
    case QUALE_OPTION_STRING: info->default_value = 0; break; /* unset */
    }
    info->min = o->min;
    info->max = o->max;
    info->choices = o->choices;
    return 0;
}
