/*
 * quale report: results as one self-contained HTML page (tools/report.c,
 * the page's contract in docs/report.md).
 */
#ifndef QUALE_TOOLS_REPORT_H
#define QUALE_TOOLS_REPORT_H

#include "quale/quale.h"

/* One result on the page. */
typedef struct ReportInput {
    const char *name;               /* as the page names it */
    const char *source;             /* as messages name it (a path); NULL: name */
    const QualeResults *results;
    double frame_rate;              /* the video's, for time codes; 0: from its notes */
    double bitrate_kbps;            /* the distorted video's; 0: from its notes */
    const char *const *models;      /* the keys that are models; NULL: told from the
                                     * metric catalogue (a key no metric writes) */
    unsigned model_count;
    const QualeOutputNote *settings; /* more of the run's settings to list */
    unsigned setting_count;
} ReportInput;

/* `quale report ARGS`: argv[0] is "report".  Returns the exit status. */
int report_main(int argc, char *argv[]);

/* Writes the page of inputs to path (whole or not at all); prints why and
 * returns -1 on failure. */
int report_write(const ReportInput *inputs, unsigned count, const char *path);

#endif /* QUALE_TOOLS_REPORT_H */
