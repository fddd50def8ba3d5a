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

#endif /* QUALE_TOOLS_QUALE_GPUS_H */
