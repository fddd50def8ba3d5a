/*
 * --gpu: one run's frames spread over several GPUs.
 */
#ifndef QUALE_TOOLS_QUALE_GPUS_H
#define QUALE_TOOLS_QUALE_GPUS_H

#include "cli.h"

/* The frames split in one part per GPU, each scored on its own context and
 * device at once (run() with its RunPart), then merged as quale merge
 * joins parts: the file and the summary of one GPU's run.  The exit
 * status. */
int run_on_gpus(const CliSettings *s);

/* The devices --gpu names (s->gpus, or with s->gpu_all every hardware
 * device of s->backend; a software renderer is not a GPU).  0, or an exit
 * status after saying why. */
int gpus_choose(const CliSettings *s, unsigned gpus[CLI_MAX_GPUS], unsigned *count);

#endif /* QUALE_TOOLS_QUALE_GPUS_H */
