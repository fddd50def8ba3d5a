/*
 * The CPython extension over libquale: what its parts share.
 *
 * module.c   the module: errors, listings, version
 * run.c      quale._quale.Run, one QualeContext: frames in, results out
 * frames.c   buffer objects (numpy arrays) described as QualePictures
 */
#ifndef QUALE_PYTHON_QUALE_H
#define QUALE_PYTHON_QUALE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "quale/quale.h"

/* Raises the exception a negative errno from libquale calls for, carrying
 * quale's message: ValueError for what the caller must fix, MemoryError,
 * OSError subclasses for files (FileNotFoundError...), RuntimeError for
 * the rest (a device, a backend that is not there).  Returns NULL. */
PyObject *quale_py_raise(int err, const char *message, const char *filename);

/* The frames of one push: the buffers it holds, the pictures over them,
 * and copies where a buffer's layout cannot be borrowed. */
typedef struct FramePair {
    Py_buffer views[2][3];
    unsigned view_count[2];
    void *copies[2][3];
    QualePicture pictures[2];
} FramePair;

/* Describes ref and dist (2-D arrays, (3, H, W) arrays or sequences of
 * three 2-D planes, uint8 or uint16) as pictures of one format; bit_depth
 * 0: 8 for uint8, required for uint16.  Raises ValueError and returns -1
 * on a bad frame; frame_pair_release() in any case. */
int frame_pair_describe(FramePair *pair, PyObject *ref, PyObject *dist, unsigned bit_depth);
void frame_pair_release(FramePair *pair);

extern PyTypeObject QualeRunType;

#endif
