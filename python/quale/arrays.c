/*
 * The arrays a frame is given as, whatever made them: objects with the
 * buffer protocol (numpy), DLPack (torch, CuPy, JAX: on the host or on a
 * CUDA device) and the CUDA array interface (Numba, CuPy).  Each becomes
 * an ArrayView: where its samples are, its shape and byte strides, and for
 * device memory the stream its producer wrote it on.
 */
#include <stdint.h>
#include <string.h>

#include "_quale.h"

/* DLPack's ABI as its header (dlpack.h) lays it out: the legacy capsule,
 * named "dltensor", that __dlpack__() returns when no max_version is
 * asked for. */
enum { DLPACK_INT = 0, DLPACK_UINT = 1 };
enum { DLPACK_CPU = 1, DLPACK_CUDA = 2, DLPACK_CUDA_HOST = 3, DLPACK_CUDA_MANAGED = 13 };

typedef struct DlpackTensor {
    void *data;
    struct { int32_t type, id; } device;
    int32_t ndim;
    struct { uint8_t code, bits; uint16_t lanes; } dtype;
    int64_t *shape;
    int64_t *strides; /* in samples; NULL: compact, row-major */
    uint64_t byte_offset;
} DlpackTensor;

typedef struct DlpackManaged {
    DlpackTensor tensor;
    void *manager;
    void (*deleter)(struct DlpackManaged *self);
} DlpackManaged;

static const char *const picture_names[2] = { "ref", "dist" };

/* The sample size of a buffer's format: 1 for uint8, 2 for uint16 in this
 * machine's byte order, 0 for anything else. */
static unsigned buffer_sample_bytes(const Py_buffer *view)
{
    const char *f = view->format ? view->format : "B";
    const uint16_t probe = 1;
    const int little = *(const uint8_t *)&probe == 1;
    if (*f == '@' || *f == '=' || (*f == '<' && little) || ((*f == '>' || *f == '!') && !little))
        f++;
    if (!strcmp(f, "B") && view->itemsize == 1) return 1;
    if (!strcmp(f, "H") && view->itemsize == 2) return 2;
    return 0;
}

static int dimensions_check(int which, int ndim)
{
    if (ndim >= 1 && ndim <= 3) return 0;
    PyErr_Format(PyExc_ValueError, "%s: a frame's arrays have 2 or 3 dimensions, not %d",
                 picture_names[which], ndim);
    return -1;
}

static int buffer_take(FramePair *pair, int which, PyObject *obj, ArrayView *a)
{
    Py_buffer *view = &pair->views[which][pair->view_count[which]];
    if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO)) return -1;
    pair->view_count[which]++;
    a->bytes = buffer_sample_bytes(view);
    if (!a->bytes) {
        PyErr_Format(PyExc_ValueError, "%s: samples must be uint8 or uint16 (native byte "
                     "order), not the buffer format '%s'", picture_names[which],
                     view->format ? view->format : "B");
        return -1;
    }
    if (dimensions_check(which, view->ndim)) return -1;
    a->data = view->buf;
    a->ndim = view->ndim;
    for (int d = 0; d < view->ndim; d++) {
        a->shape[d] = view->shape[d];
        a->strides[d] = view->strides[d];
    }
    return 0;
}

/* A compact row-major array's byte strides. */
static void compact_strides(ArrayView *a)
{
    Py_ssize_t step = a->bytes;
    for (int d = a->ndim - 1; d >= 0; d--) {
        a->strides[d] = step;
        step *= a->shape[d];
    }
}

/* An int from a Python object, or -1 with an exception. */
static int ssize_item(PyObject *obj, Py_ssize_t *out)
{
    *out = PyLong_AsSsize_t(obj);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* A tuple of ndim ints into out; 0 or -1 with an exception. */
static int ssize_tuple(int which, const char *what, PyObject *tuple, int ndim, Py_ssize_t *out)
{
    if (!PyTuple_Check(tuple) || PyTuple_Size(tuple) != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__'s %s is not a tuple of %d "
                     "ints", picture_names[which], what, ndim);
        return -1;
    }
    for (int d = 0; d < ndim; d++)
        if (ssize_item(PyTuple_GetItem(tuple, d), &out[d])) return -1;
    return 0;
}

/* The stream a CUDA array interface (version 3) says its producer wrote
 * on: none (nothing to wait for), 1 (the legacy default stream), 2 (the
 * per-thread one) or a CUstream; the driver takes 1 and 2 as they are. */
static int interface_stream(int which, PyObject *cai, ArrayView *a)
{
    PyObject *stream = PyDict_GetItemString(cai, "stream"); /* borrowed */
    a->stream = 0;
    if (!stream || stream == Py_None) return 0;
    Py_ssize_t handle;
    if (ssize_item(stream, &handle)) return -1;
    if (handle == 0) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ gives stream 0, which the "
                     "interface forbids (1 is the legacy default stream)", picture_names[which]);
        return -1;
    }
    a->stream = (uintptr_t)handle;
    return 0;
}

static int interface_take(FramePair *pair, int which, PyObject *obj, PyObject *cai,
                          ArrayView *a)
{
    if (!PyDict_Check(cai)) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ is not a dict",
                     picture_names[which]);
        return -1;
    }
    PyObject *shape = PyDict_GetItemString(cai, "shape");
    PyObject *typestr = PyDict_GetItemString(cai, "typestr");
    PyObject *data = PyDict_GetItemString(cai, "data");
    PyObject *strides = PyDict_GetItemString(cai, "strides");
    PyObject *mask = PyDict_GetItemString(cai, "mask");
    if (!shape || !typestr || !data || !PyTuple_Check(data) || PyTuple_Size(data) < 1) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ lacks shape, typestr or "
                     "data", picture_names[which]);
        return -1;
    }
    if (mask && mask != Py_None) {
        PyErr_Format(PyExc_ValueError, "%s: masked CUDA arrays are not frames",
                     picture_names[which]);
        return -1;
    }
    const char *type = PyUnicode_Check(typestr) ? PyUnicode_AsUTF8(typestr) : NULL;
    if (!type) return PyErr_Occurred() ? -1 : (PyErr_Format(PyExc_ValueError, "%s: "
                         "typestr is not a str", picture_names[which]), -1);
    if (!strcmp(type, "|u1") || !strcmp(type, "<u1")) a->bytes = 1;
    else if (!strcmp(type, "<u2") || !strcmp(type, "=u2")) a->bytes = 2;
    else {
        PyErr_Format(PyExc_ValueError, "%s: samples must be uint8 or uint16 (little-endian), "
                     "not '%s'", picture_names[which], type);
        return -1;
    }
    a->ndim = PyTuple_Check(shape) ? (int)PyTuple_Size(shape) : -1;
    if (dimensions_check(which, a->ndim) || ssize_tuple(which, "shape", shape, a->ndim, a->shape))
        return -1;
    if (!strides || strides == Py_None) compact_strides(a);
    else if (ssize_tuple(which, "strides", strides, a->ndim, a->strides)) return -1;
    Py_ssize_t address;
    if (ssize_item(PyTuple_GetItem(data, 0), &address)) return -1;
    a->data = (char *)(uintptr_t)address;
    a->on_cuda = 1;
    if (interface_stream(which, cai, a)) return -1;
    Py_INCREF(obj); /* its memory stays the producer's until the copy */
    pair->holds[which][pair->hold_count[which]++] = obj;
    return 0;
}

static int dlpack_device(int which, PyObject *obj, long *type)
{
    PyObject *device = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (!device) return -1;
    int err = -1;
    if (PyTuple_Check(device) && PyTuple_Size(device) == 2) {
        *type = PyLong_AsLong(PyTuple_GetItem(device, 0));
        err = *type == -1 && PyErr_Occurred() ? -1 : 0;
    } else {
        PyErr_Format(PyExc_ValueError, "%s: __dlpack_device__() is not a (type, id) tuple",
                     picture_names[which]);
    }
    Py_DECREF(device);
    return err;
}

/* obj.__dlpack__(); for an array on a CUDA device with stream=1 (the
 * producer makes the legacy default stream wait for its work), or -1
 * where the caller named the stream the copy is to follow. */
static PyObject *dlpack_capsule(PyObject *obj, int cuda, int stream_given)
{
    if (!cuda) return PyObject_CallMethod(obj, "__dlpack__", NULL);
    PyObject *method = PyObject_GetAttrString(obj, "__dlpack__");
    PyObject *kwargs = method ? Py_BuildValue("{s:i}", "stream", stream_given ? -1 : 1) : NULL;
    PyObject *no_args = kwargs ? PyTuple_New(0) : NULL;
    PyObject *capsule = no_args ? PyObject_Call(method, no_args, kwargs) : NULL;
    Py_XDECREF(no_args);
    Py_XDECREF(kwargs);
    Py_XDECREF(method);
    return capsule;
}

/* obj through DLPack; type: its device type (__dlpack_device__()). */
static int dlpack_take(FramePair *pair, int which, PyObject *obj, long type, ArrayView *a)
{
    if (type != DLPACK_CPU && type != DLPACK_CUDA && type != DLPACK_CUDA_HOST &&
        type != DLPACK_CUDA_MANAGED) {
        PyErr_Format(PyExc_ValueError, "%s: frames are on the host or on a CUDA device, not "
                     "on DLPack device type %ld", picture_names[which], type);
        return -1;
    }
    const int cuda = type == DLPACK_CUDA || type == DLPACK_CUDA_MANAGED;
    PyObject *capsule = dlpack_capsule(obj, cuda, pair->stream_given);
    if (!capsule) return -1;
    /* Not renamed "used_dltensor": releasing the capsule gives the tensor
     * back through its deleter once the frame is copied. */
    pair->holds[which][pair->hold_count[which]++] = capsule;
    const DlpackManaged *managed = PyCapsule_GetPointer(capsule, "dltensor");
    if (!managed) return -1;
    const DlpackTensor *t = &managed->tensor;
    if ((t->dtype.code != DLPACK_UINT) || t->dtype.lanes != 1 ||
        (t->dtype.bits != 8 && t->dtype.bits != 16)) {
        PyErr_Format(PyExc_ValueError, "%s: samples must be uint8 or uint16, not DLPack type "
                     "code %u of %u bits", picture_names[which], t->dtype.code, t->dtype.bits);
        return -1;
    }
    a->bytes = t->dtype.bits / 8;
    a->ndim = t->ndim;
    if (dimensions_check(which, a->ndim)) return -1;
    for (int d = 0; d < a->ndim; d++) a->shape[d] = (Py_ssize_t)t->shape[d];
    if (t->strides) {
        for (int d = 0; d < a->ndim; d++)
            a->strides[d] = (Py_ssize_t)t->strides[d] * (Py_ssize_t)a->bytes;
    } else {
        compact_strides(a);
    }
    a->data = (char *)t->data + t->byte_offset;
    a->on_cuda = cuda;
    a->stream = cuda ? 1 : 0;
    return 0;
}

/* torch's tensor type and sample types, found once torch is imported. */
static struct { PyObject *tensor, *uint8, *uint16; } torch_types;

static int torch_found(void)
{
    if (torch_types.tensor) return 1;
    PyObject *torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch"); /* borrowed */
    if (!torch) return 0;
    PyObject *tensor = PyObject_GetAttrString(torch, "Tensor");
    PyObject *u8 = PyObject_GetAttrString(torch, "uint8");
    PyObject *u16 = PyObject_GetAttrString(torch, "uint16"); /* torch 2.3 and later */
    PyErr_Clear();
    if (!tensor || !u8) {
        Py_XDECREF(tensor);
        Py_XDECREF(u8);
        Py_XDECREF(u16);
        return 0;
    }
    torch_types.uint8 = u8;
    torch_types.uint16 = u16;
    torch_types.tensor = tensor;
    return 1;
}

/* A torch tensor on a CUDA device, read from its own attributes (a
 * fraction of what __dlpack__() costs, per plane of every frame) where the
 * caller named the stream its work is on.  0: taken; 1: not such a tensor
 * (take it otherwise); -1: an exception. */
static int torch_take(FramePair *pair, int which, PyObject *obj, ArrayView *a)
{
    if (!pair->stream_given || !torch_found() ||
        Py_TYPE(obj) != (PyTypeObject *)torch_types.tensor)
        return 1;
    PyObject *is_cuda = PyObject_GetAttrString(obj, "is_cuda");
    if (!is_cuda) return -1;
    const int cuda = PyObject_IsTrue(is_cuda);
    Py_DECREF(is_cuda);
    if (cuda != 1) return cuda < 0 ? -1 : 1;
    PyObject *dtype = PyObject_GetAttrString(obj, "dtype");
    if (!dtype) return -1;
    a->bytes = dtype == torch_types.uint8                          ? 1
               : torch_types.uint16 && dtype == torch_types.uint16 ? 2
                                                                   : 0;
    if (!a->bytes) {
        PyErr_Format(PyExc_ValueError, "%s: samples must be uint8 or uint16, not %S",
                     picture_names[which], dtype);
        Py_DECREF(dtype);
        return -1;
    }
    Py_DECREF(dtype);
    PyObject *shape = PyObject_GetAttrString(obj, "shape");
    PyObject *strides = shape ? PyObject_CallMethod(obj, "stride", NULL) : NULL;
    PyObject *address = strides ? PyObject_CallMethod(obj, "data_ptr", NULL) : NULL;
    int err = address ? 0 : -1;
    a->ndim = shape && PyTuple_Check(shape) ? (int)PyTuple_Size(shape) : -1;
    if (!err) err = dimensions_check(which, a->ndim);
    for (int d = 0; d < a->ndim && !err; d++) {
        Py_ssize_t stride = 0;
        err = ssize_item(PyTuple_GetItem(shape, d), &a->shape[d]) ||
              ssize_item(PyTuple_GetItem(strides, d), &stride);
        a->strides[d] = stride * (Py_ssize_t)a->bytes;
    }
    if (!err) {
        const unsigned long long p = PyLong_AsUnsignedLongLong(address);
        err = PyErr_Occurred() ? -1 : 0;
        a->data = (char *)(uintptr_t)p;
    }
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(address);
    if (err) return -1;
    a->on_cuda = 1;
    Py_INCREF(obj); /* its memory stays the producer's until the copy */
    pair->holds[which][pair->hold_count[which]++] = obj;
    return 0;
}

int array_take(FramePair *pair, int which, PyObject *obj, ArrayView *a)
{
    memset(a, 0, sizeof(*a));
    if (pair->view_count[which] >= 3 || pair->hold_count[which] >= 3) {
        PyErr_Format(PyExc_ValueError, "%s: a frame is at most three arrays",
                     picture_names[which]);
        return -1;
    }
    const int tensor = torch_take(pair, which, obj, a);
    if (tensor <= 0) return tensor;
    /* The buffer protocol first (numpy); where it refuses (CuPy's arrays
     * have it, on the device, only to refuse it), the protocols that reach
     * device memory. */
    if (PyObject_CheckBuffer(obj)) {
        const unsigned views = pair->view_count[which];
        if (!buffer_take(pair, which, obj, a)) return 0;
        if (pair->view_count[which] > views || !PyErr_ExceptionMatches(PyExc_TypeError))
            return -1; /* a buffer, refused for its samples or shape */
        PyErr_Clear();
    }
    const int dlpack = PyObject_HasAttrString(obj, "__dlpack__");
    long type = DLPACK_CPU;
    if (dlpack && PyObject_HasAttrString(obj, "__dlpack_device__") &&
        dlpack_device(which, obj, &type))
        return -1;
    if (dlpack && type != DLPACK_CPU) return dlpack_take(pair, which, obj, type, a);
    if (PyObject_HasAttrString(obj, "__cuda_array_interface__")) {
        PyObject *cai = PyObject_GetAttrString(obj, "__cuda_array_interface__");
        if (!cai) return -1;
        const int err = interface_take(pair, which, obj, cai, a);
        Py_DECREF(cai);
        return err;
    }
    if (dlpack) return dlpack_take(pair, which, obj, type, a);
    PyErr_Format(PyExc_TypeError, "%s: a frame is an array (numpy, or a tensor with __dlpack__ "
                 "or __cuda_array_interface__) or a sequence of three planes, not %.100s",
                 picture_names[which], Py_TYPE(obj)->tp_name);
    return -1;
}
