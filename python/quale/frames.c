/*
 * Frames (arrays.c's arrays, alone or three planes) as QualePictures.  A
 * host plane whose samples are adjacent is borrowed where it lies (quale
 * copies it into its own pool before quale_send_pictures() returns); only
 * one whose samples are not (a column slice, a transposed array) is
 * gathered into a copy first.  A CUDA plane is described where it lies
 * and copied on the device by the caller (run.c); its samples must be
 * adjacent, as a device-to-device copy of rows takes them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_quale.h"

/* quale's limit on a borrowed picture's stride (quale.h). */
#define MAX_STRIDE ((Py_ssize_t)16 << 20)

static const char *const picture_names[2] = { "ref", "dist" };

/* One plane: rows x columns samples from data, rows row_stride bytes
 * apart, samples sample_stride apart. */
typedef struct PlaneView {
    char *data;
    Py_ssize_t rows, columns, row_stride, sample_stride;
} PlaneView;

/* Points the picture's plane p at the view, or at a packed copy of it
 * where its layout cannot be borrowed. */
static int plane_attach(FramePair *pair, int which, unsigned p, const PlaneView *v,
                        unsigned bytes)
{
    QualePicture *pic = &pair->pictures[which];
    const Py_ssize_t row_bytes = v->columns * (Py_ssize_t)bytes;
    Py_ssize_t stride = v->rows == 1 ? row_bytes : v->row_stride;
    const int adjacent = v->sample_stride == (Py_ssize_t)bytes || v->columns == 1;
    const Py_ssize_t magnitude = stride < 0 ? -stride : stride;
    pic->plane_width[p] = (unsigned)v->columns;
    pic->plane_height[p] = (unsigned)v->rows;
    if (pair->on_cuda) {
        if (!adjacent || stride < row_bytes) {
            PyErr_Format(PyExc_ValueError, "%s: plane %u on the CUDA device is not in rows of "
                         "adjacent samples, in order (make it contiguous first: .contiguous() "
                         "in torch)", picture_names[which], p);
            return -1;
        }
        pic->data[p] = v->data;
        pic->stride[p] = stride;
        return 0;
    }
    if (adjacent && magnitude >= row_bytes && magnitude <= MAX_STRIDE) {
        pic->data[p] = v->data;
        pic->stride[p] = stride;
        return 0;
    }
    char *copy = malloc((size_t)(row_bytes * v->rows));
    if (!copy) {
        PyErr_NoMemory();
        return -1;
    }
    pair->copies[which][p] = copy;
    for (Py_ssize_t y = 0; y < v->rows; y++) {
        const char *row = v->data + y * v->row_stride;
        char *out = copy + y * row_bytes;
        for (Py_ssize_t x = 0; x < v->columns; x++)
            memcpy(out + x * bytes, row + x * v->sample_stride, bytes);
    }
    pic->data[p] = copy;
    pic->stride[p] = row_bytes;
    return 0;
}

/* Takes obj as the next array of the pair's picture `which`: all of a
 * pair's arrays live in one place (the host or a CUDA device), and those
 * on the device were written on one stream. */
static int array_next(FramePair *pair, int which, PyObject *obj, ArrayView *a)
{
    if (array_take(pair, which, obj, a)) return -1;
    const int first = pair->view_count[0] + pair->hold_count[0] + pair->view_count[1] +
                      pair->hold_count[1] == 1;
    if (pair->stream_given) a->stream = pair->stream;
    if (first) {
        pair->on_cuda = a->on_cuda;
        pair->stream = a->stream;
        return 0;
    }
    if (a->on_cuda != pair->on_cuda) {
        PyErr_Format(PyExc_ValueError, "%s: its arrays are %s while the pair's first is %s: "
                     "both frames of a pair are on the host or both on the GPU",
                     picture_names[which], a->on_cuda ? "on a CUDA device" : "on the host",
                     pair->on_cuda ? "on a CUDA device" : "on the host");
        return -1;
    }
    if (a->on_cuda && a->stream && pair->stream && a->stream != pair->stream) {
        PyErr_Format(PyExc_ValueError, "%s: its arrays were written on another CUDA stream than "
                     "the pair's first (synchronise them first)", picture_names[which]);
        return -1;
    }
    if (a->on_cuda && !pair->stream) pair->stream = a->stream;
    return 0;
}

static int size_check(int which, Py_ssize_t rows, Py_ssize_t columns)
{
    if (rows > 0 && columns > 0 && rows <= 65536 && columns <= 65536) return 0;
    PyErr_Format(PyExc_ValueError, "%s: a plane of %zd x %zd samples (rows x columns) is "
                 "empty or too large", picture_names[which], rows, columns);
    return -1;
}

/* Which chroma format a luma plane and chroma planes of these sizes are. */
static enum QualeChroma chroma_of(const unsigned w[3], const unsigned h[3])
{
    if (w[1] != w[2] || h[1] != h[2]) return QUALE_CHROMA_UNKNOWN;
    const unsigned half_w = (w[0] + 1) / 2, half_h = (h[0] + 1) / 2;
    if (w[1] == w[0] && h[1] == h[0]) return QUALE_CHROMA_444;
    if (w[1] == half_w && h[1] == half_h) return QUALE_CHROMA_420;
    if (w[1] == half_w && h[1] == h[0]) return QUALE_CHROMA_422;
    return QUALE_CHROMA_UNKNOWN;
}

static int describe_array(FramePair *pair, int which, PyObject *obj, unsigned *bytes)
{
    QualePicture *pic = &pair->pictures[which];
    ArrayView array, *view = &array;
    if (array_next(pair, which, obj, view)) return -1;
    *bytes = view->bytes;
    if (view->ndim == 2) {
        const PlaneView plane = { view->data, view->shape[0], view->shape[1], view->strides[0],
                                  view->strides[1] };
        if (size_check(which, plane.rows, plane.columns)) return -1;
        pic->plane_count = 1;
        pic->format.chroma = QUALE_CHROMA_400;
        return plane_attach(pair, which, 0, &plane, *bytes);
    }
    if (view->ndim == 3 && view->shape[0] == 3) {
        pic->plane_count = 3;
        pic->format.chroma = QUALE_CHROMA_444;
        for (unsigned p = 0; p < 3; p++) {
            const PlaneView plane = { view->data + (Py_ssize_t)p * view->strides[0],
                                      view->shape[1], view->shape[2], view->strides[1],
                                      view->strides[2] };
            if (size_check(which, plane.rows, plane.columns) ||
                plane_attach(pair, which, p, &plane, *bytes))
                return -1;
        }
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "%s: an array frame is (H, W) luma or (3, H, W) 4:4:4, not "
                 "an array of %d dimension%s%s", picture_names[which], view->ndim,
                 view->ndim == 1 ? "" : "s",
                 view->ndim == 3 ? " whose first is not 3" : "");
    return -1;
}

static int describe_planes(FramePair *pair, int which, PyObject *seq, unsigned *bytes)
{
    QualePicture *pic = &pair->pictures[which];
    if (PySequence_Fast_GET_SIZE(seq) != 3) {
        PyErr_Format(PyExc_ValueError, "%s: a frame given as planes has three (Y, U, V), not "
                     "%zd", picture_names[which], PySequence_Fast_GET_SIZE(seq));
        return -1;
    }
    for (unsigned p = 0; p < 3; p++) {
        ArrayView array, *view = &array;
        if (array_next(pair, which, PySequence_Fast_GET_ITEM(seq, p), view)) return -1;
        const unsigned plane_bytes = view->bytes;
        if (view->ndim != 2) {
            PyErr_Format(PyExc_ValueError, "%s: plane %u is a 2-D array, not one of %d "
                         "dimensions", picture_names[which], p, view->ndim);
            return -1;
        }
        if (p && plane_bytes != *bytes) {
            PyErr_Format(PyExc_ValueError, "%s: the planes mix uint8 and uint16",
                         picture_names[which]);
            return -1;
        }
        *bytes = plane_bytes;
        const PlaneView plane = { view->data, view->shape[0], view->shape[1], view->strides[0],
                                  view->strides[1] };
        if (size_check(which, plane.rows, plane.columns) ||
            plane_attach(pair, which, p, &plane, plane_bytes))
            return -1;
    }
    pic->plane_count = 3;
    pic->format.chroma = chroma_of(pic->plane_width, pic->plane_height);
    if (pic->format.chroma == QUALE_CHROMA_UNKNOWN) {
        PyErr_Format(PyExc_ValueError, "%s: planes of %ux%u, %ux%u and %ux%u (width x height) "
                     "are not 4:2:0, 4:2:2 or 4:4:4", picture_names[which],
                     pic->plane_width[0], pic->plane_height[0], pic->plane_width[1],
                     pic->plane_height[1], pic->plane_width[2], pic->plane_height[2]);
        return -1;
    }
    return 0;
}

static int describe_one(FramePair *pair, int which, PyObject *obj, unsigned bit_depth)
{
    QualePicture *pic = &pair->pictures[which];
    unsigned bytes = 0;
    int err;
    if (PyTuple_Check(obj) || PyList_Check(obj)) {
        PyObject *seq = PySequence_Fast(obj, "planes");
        if (!seq) return -1;
        err = describe_planes(pair, which, seq, &bytes);
        Py_DECREF(seq);
    } else {
        err = describe_array(pair, which, obj, &bytes);
    }
    if (err) return -1;
    if (bytes == 1 && bit_depth && bit_depth != 8) {
        PyErr_Format(PyExc_ValueError, "%s: uint8 samples are 8-bit; bit_depth %u needs uint16 "
                     "frames", picture_names[which], bit_depth);
        return -1;
    }
    if (bytes == 2 && (bit_depth < 9 || bit_depth > 16)) {
        PyErr_Format(PyExc_ValueError, "%s: uint16 frames need bit_depth from 9 to 16%s",
                     picture_names[which], bit_depth ? "" : " (none was given)");
        return -1;
    }
    pic->format.bitdepth = bytes == 1 ? 8 : bit_depth;
    pic->format.width = pic->plane_width[0];
    pic->format.height = pic->plane_height[0];
    return 0;
}

static void format_text(const QualeVideoFormat *f, char *text, size_t size)
{
    snprintf(text, size, "%ux%u %s %u-bit", f->width, f->height, quale_chroma_name(f->chroma),
             f->bitdepth);
}

int frame_pair_describe(FramePair *pair, PyObject *ref, PyObject *dist, unsigned bit_depth,
                        PyObject *stream)
{
    memset(pair, 0, sizeof(*pair));
    if (stream && stream != Py_None) {
        const Py_ssize_t handle = PyLong_AsSsize_t(stream);
        if (handle == -1 && PyErr_Occurred()) return -1;
        if (handle < 0) {
            PyErr_SetString(PyExc_ValueError, "stream is a CUstream handle (0: the legacy default "
                            "stream), not a negative number");
            return -1;
        }
        pair->stream = (uintptr_t)handle;
        pair->stream_given = 1;
    }
    if (describe_one(pair, 0, ref, bit_depth) || describe_one(pair, 1, dist, bit_depth))
        return -1;
    const QualeVideoFormat *a = &pair->pictures[0].format, *b = &pair->pictures[1].format;
    if (memcmp(a, b, sizeof(*a))) {
        char ta[64], tb[64];
        format_text(a, ta, sizeof(ta));
        format_text(b, tb, sizeof(tb));
        PyErr_Format(PyExc_ValueError, "ref is %s and dist is %s: both frames of a pair must "
                     "have one size, chroma format and bit depth", ta, tb);
        return -1;
    }
    return 0;
}

void frame_pair_release(FramePair *pair)
{
    for (int which = 0; which < 2; which++) {
        for (unsigned i = 0; i < pair->view_count[which]; i++)
            PyBuffer_Release(&pair->views[which][i]);
        pair->view_count[which] = 0;
        for (unsigned i = 0; i < pair->hold_count[which]; i++) Py_CLEAR(pair->holds[which][i]);
        pair->hold_count[which] = 0;
        for (unsigned p = 0; p < 3; p++) {
            free(pair->copies[which][p]);
            pair->copies[which][p] = NULL;
        }
    }
}
