/*
 * The CPython extension over libquale: what its parts share.
 *
 * module.c   the module: errors, listings, version
 * run.c      quale._quale.Run, one QualeContext: frames in, results out
 * frames.c   frames (arrays or three planes) described as QualePictures
 * arrays.c   arrays: the buffer protocol, DLPack, the CUDA array interface
 */
#ifndef QUALE_PYTHON_QUALE_H
#define QUALE_PYTHON_QUALE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "quale/quale.h"

/* Raises the exception a negative errno from libquale calls for, carrying
 * quale's message: ValueError for what the caller must fix, MemoryError,
 * OSError subclasses for files (FileNotFoundError...), RuntimeError for
 * the rest (a device, a backend that is not there).  Returns NULL. */
PyObject *quale_py_raise(int err, const char *message, const char *filename);

/* One array a frame or plane is given as (arrays.c): its samples, shape
 * and byte strides; for CUDA device memory, the stream it was written on
 * (0: none to wait for; 1, 2 and CUstreams as the driver takes them). */
typedef struct ArrayView {
    char *data; /* a host pointer, or a device address */
    int ndim;
    Py_ssize_t shape[3], strides[3];
    unsigned bytes; /* 1: uint8, 2: uint16 */
    int on_cuda;
    uintptr_t stream;
} ArrayView;

/* The frames of one push: what they hold (buffers, DLPack capsules, the
 * producers of CUDA arrays), the pictures over them, and copies where a
 * host buffer's layout cannot be borrowed.  on_cuda: the pictures' planes
 * are CUDA device addresses, to be copied on `stream` into the context's
 * device pictures. */
typedef struct FramePair {
    Py_buffer views[2][3];
    unsigned view_count[2];
    PyObject *holds[2][3];
    unsigned hold_count[2];
    void *copies[2][3];
    QualePicture pictures[2];
    int on_cuda;
    uintptr_t stream;
    int stream_given; /* the caller named the stream: producers need not wait */
} FramePair;

/* Takes obj (buffer protocol, __dlpack__ or __cuda_array_interface__) as
 * one of the pair's arrays; raises and returns -1 if it cannot be. */
int array_take(FramePair *pair, int which, PyObject *obj, ArrayView *a);

/* Describes ref and dist (2-D arrays, (3, H, W) arrays or sequences of
 * three 2-D planes, uint8 or uint16, all on the host or all on one CUDA
 * device) as pictures of one format; bit_depth 0: 8 for uint8, required
 * for uint16.  stream: the CUDA stream the caller says the frames were
 * written on (an int, None where it does not say).  Raises ValueError and
 * returns -1 on a bad frame; frame_pair_release() in any case. */
int frame_pair_describe(FramePair *pair, PyObject *ref, PyObject *dist, unsigned bit_depth,
                        PyObject *stream);
void frame_pair_release(FramePair *pair);

extern PyTypeObject QualeRunType;

#endif
