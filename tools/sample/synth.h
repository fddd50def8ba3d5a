/*
 * Deterministic synthetic clips: a camera panning over a procedural scene,
 * and a distorted version of each frame (blocky quantisation, blur and
 * noise, as a codec at a low bit rate would leave).  Used where no real
 * content is at hand: the sample pair of the README and the benchmark on a
 * machine without ffmpeg.  The same arguments give the same bytes on every
 * machine (integer arithmetic and a fixed pseudo-random generator).
 */
#ifndef QUALE_TOOLS_SYNTH_H
#define QUALE_TOOLS_SYNTH_H

#include "quale/quale.h"

/* Fills pic (allocated with the format) with frame `index` of the scene. */
void synth_reference(QualePicture *pic, unsigned index);

/* Fills dist with the distorted version of ref (same format). strength 0..4. */
void synth_distort(const QualePicture *ref, QualePicture *dist, unsigned index,
                   unsigned strength);

#endif /* QUALE_TOOLS_SYNTH_H */
