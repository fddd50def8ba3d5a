/*
 * The module quale._quale: errors, the catalogue (models, metrics,
 * devices) and the Run type (run.c).
 */
#include <errno.h>
#include <string.h>

#include "_quale.h"

PyObject *quale_py_raise(int err, const char *message, const char *filename)
{
    const int code = err < 0 ? -err : err;
    const char *text = message && *message ? message : strerror(code);
    switch (code) {
    case ENOMEM:
        return PyErr_Format(PyExc_MemoryError, "%s", text);
    case EINVAL: case EEXIST: case ERANGE: case EDOM: case EBADMSG: case EPROTO:
    case ENODATA: case ENOTSUP: case EBUSY:
        return PyErr_Format(PyExc_ValueError, "%s", text);
    case ENOENT: case EACCES: case EISDIR: case ENOTDIR: case EPERM: {
        /* OSError(errno, text, filename) becomes FileNotFoundError and
         * its kin, as open() raises them. */
        PyObject *exc = filename
            ? PyObject_CallFunction(PyExc_OSError, "isy", code, text, filename)
            : PyObject_CallFunction(PyExc_OSError, "is", code, text);
        if (exc) {
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
        }
        return NULL;
    }
    default:
        return PyErr_Format(PyExc_RuntimeError, "%s", text);
    }
}

static PyObject *module_version(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(quale_version());
}

static PyObject *module_models(PyObject *self, PyObject *unused)
{
    PyObject *list = PyList_New(0);
    QualeBuiltinModelInfo info;
    for (unsigned i = 0; list && !quale_builtin_model_info(i, &info); i++) {
        PyObject *item = Py_BuildValue(
            "{s:s, s:s, s:s, s:(dd), s:O}", "version", info.version, "condition",
            info.condition ? info.condition : "", "features", info.features, "range",
            info.score_min, info.score_max, "bootstrap", info.bootstrap ? Py_True : Py_False);
        if (!item || PyList_Append(list, item)) Py_CLEAR(list);
        Py_XDECREF(item);
    }
    return list;
}

static PyObject *backend_names(unsigned mask)
{
    static const enum QualeBackend all[] = { QUALE_BACKEND_CPU, QUALE_BACKEND_CUDA,
                                              QUALE_BACKEND_HIP, QUALE_BACKEND_VULKAN };
    PyObject *names = PyList_New(0);
    for (size_t b = 0; names && b < sizeof(all) / sizeof(all[0]); b++) {
        if (!(mask & (1u << all[b]))) continue;
        PyObject *name = PyUnicode_FromString(quale_backend_name(all[b]));
        if (!name || PyList_Append(names, name)) Py_CLEAR(names);
        Py_XDECREF(name);
    }
    return names;
}

static PyObject *string_list(const char *const *items)
{
    PyObject *list = PyList_New(0);
    for (; list && items && *items; items++) {
        PyObject *s = PyUnicode_FromString(*items);
        if (!s || PyList_Append(list, s)) Py_CLEAR(list);
        Py_XDECREF(s);
    }
    return list;
}

static PyObject *metric_options(unsigned index, unsigned count)
{
    static const char *const types[] = { "bool", "int", "double", "choice", "string" };
    PyObject *options = PyDict_New();
    QualeOptionInfo o;
    for (unsigned k = 0; options && k < count; k++) {
        if (quale_metric_option(index, k, &o)) continue;
        PyObject *item = Py_BuildValue("{s:s, s:s, s:d, s:d, s:d, s:N}", "type",
                                       (unsigned)o.type < 5 ? types[o.type] : "?", "help",
                                       o.help ? o.help : "", "default", o.default_value, "min",
                                       o.min, "max", o.max, "choices", string_list(o.choices));
        if (!item || PyDict_SetItemString(options, o.name, item)) Py_CLEAR(options);
        Py_XDECREF(item);
    }
    return options;
}

static PyObject *module_features(PyObject *self, PyObject *unused)
{
    PyObject *list = PyList_New(0);
    QualeMetricInfo info;
    for (unsigned i = 0; list && i < quale_metric_count(); i++) {
        if (quale_metric_info(i, &info)) continue;
        PyObject *item = Py_BuildValue("{s:s, s:N, s:N, s:N}", "name", info.name, "keys",
                                       string_list(info.keys), "options",
                                       metric_options(i, info.option_count), "backends",
                                       backend_names(info.backends));
        if (!item || PyList_Append(list, item)) Py_CLEAR(list);
        Py_XDECREF(item);
    }
    return list;
}

/* The devices of every GPU backend built; a backend whose driver is not
 * there has none. */
static PyObject *module_devices(PyObject *self, PyObject *unused)
{
    static const enum QualeBackend backends[] = { QUALE_BACKEND_CUDA, QUALE_BACKEND_HIP,
                                                  QUALE_BACKEND_VULKAN };
    PyObject *list = PyList_New(0);
    for (size_t b = 0; list && b < sizeof(backends) / sizeof(backends[0]); b++) {
        if (!quale_backend_built(backends[b])) continue;
        QualeDeviceInfo devices[16];
        unsigned count = 0;
        char error[256];
        int err;
        Py_BEGIN_ALLOW_THREADS
        err = quale_list_devices(backends[b], devices, 16, &count, error, sizeof(error));
        Py_END_ALLOW_THREADS
        if (err) continue;
        for (unsigned i = 0; list && i < count && i < 16; i++) {
            const QualeDeviceInfo *d = &devices[i];
            PyObject *item = Py_BuildValue(
                "{s:s, s:I, s:s, s:s, s:K, s:O}", "backend", quale_backend_name(d->backend),
                "index", d->index, "type", quale_device_type_name(d->type), "name", d->name,
                "memory_bytes", (unsigned long long)d->memory_bytes, "preferred",
                d->preferred ? Py_True : Py_False);
            if (!item || PyList_Append(list, item)) Py_CLEAR(list);
            Py_XDECREF(item);
        }
    }
    return list;
}

static PyObject *module_backends(PyObject *self, PyObject *unused)
{
    unsigned mask = 0;
    for (int b = QUALE_BACKEND_CPU; b <= QUALE_BACKEND_HIP; b++)
        if (b != QUALE_BACKEND_AUTO && quale_backend_built((enum QualeBackend)b)) mask |= 1u << b;
    return backend_names(mask);
}

static PyObject *module_pool_method_ok(PyObject *self, PyObject *args)
{
    const char *method;
    if (!PyArg_ParseTuple(args, "s", &method)) return NULL;
    return PyBool_FromLong(quale_pool_method_check(method) == 0);
}

/* The frame rate a video file declares (y4m, a container), as (num, den),
 * or None: raw video, or a file that cannot be opened (score() says why
 * when it opens it). */
static PyObject *module_frame_rate(PyObject *self, PyObject *args)
{
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    QualeVideoReader *reader = NULL;
    char error[256];
    unsigned num = 0, den = 0;
    int known = 0;
    Py_BEGIN_ALLOW_THREADS
    if (quale_video_open(&reader, path, NULL, error, sizeof(error)) == 0) {
        known = quale_video_frame_rate(reader, &num, &den) >= 0 && num && den;
        quale_video_close(&reader);
    }
    Py_END_ALLOW_THREADS
    if (!known) Py_RETURN_NONE;
    return Py_BuildValue("(II)", num, den);
}

static PyMethodDef module_methods[] = {
    { "frame_rate", module_frame_rate, METH_VARARGS,
      "frame_rate(path): the (num, den) a y4m or container file declares, or None" },
    { "pool_method_ok", module_pool_method_ok, METH_VARARGS,
      "pool_method_ok(name): whether quale pools by that name" },
    { "version", module_version, METH_NOARGS, "version(): libquale's version" },
    { "models", module_models, METH_NOARGS, "models(): the built-in models" },
    { "features", module_features, METH_NOARGS, "features(): the metrics, keys and options" },
    { "devices", module_devices, METH_NOARGS, "devices(): the GPU devices found" },
    { "backends", module_backends, METH_NOARGS, "backends(): the backends built in" },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "quale._quale",
    .m_doc = "libquale's C API for Python (the package quale is the interface to use)",
    .m_size = -1,
    .m_methods = module_methods,
};

/* The one symbol the extension exports: the interpreter calls it at import. */
PyMODINIT_FUNC PyInit__quale(void);

PyMODINIT_FUNC PyInit__quale(void)
{
    if (PyType_Ready(&QualeRunType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&QualeRunType);
    if (PyModule_AddObject(m, "Run", (PyObject *)&QualeRunType) < 0) {
        Py_DECREF(&QualeRunType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
