/*
 * Choosing the model: -m auto, and what a user should know of the one
 * chosen (VMAF v1 on 8-bit video).
 */
#ifndef QUALE_TOOLS_QUALE_MODEL_CHOICE_H
#define QUALE_TOOLS_QUALE_MODEL_CHOICE_H

#include <stdbool.h>
#include <stddef.h>

#include "quale/quale.h"

/* -m auto: VMAF v1's model for the reference's size and frame rate
 * (frame_rate 0: not known): the 4K models above 1920x1080, the HFR ones
 * from 48 fps, at their standard viewing distances.  Writes the model's
 * version to version and why it was taken to why. */
void choose_auto_model(const QualeVideoFormat *reference, double frame_rate, char *version,
                       size_t version_size, char *why, size_t why_size);

/* A VMAF v1 model (built in, or a file of one by its name). */
bool model_is_v1(const char *label);

/* What the summary calls a model: its version, or for a model file the
 * name given with name=, else the file's name without .json. */
void model_title(const QualeModelInfo *info, char *title, size_t size);

#endif /* QUALE_TOOLS_QUALE_MODEL_CHOICE_H */
