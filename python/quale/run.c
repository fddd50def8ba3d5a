/*
 * quale._quale.Run: one QualeContext.  Frames go in (push, score_files),
 * results come out once it is flushed.  Calls that score release the GIL;
 * several threads may push at once (the library takes turns).  The context
 * is freed only when the object is, so a closed run still answers for its
 * results, and no call can be in flight when it is freed (each holds a
 * reference).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_quale.h"

typedef struct {
    PyObject_HEAD
    QualeContext *ctx;
    pthread_mutex_t log_lock;
    char last_error[1024]; /* the last error quale logged on any thread */
    int closed;            /* no more frames: close() or a flush */
    int flushed;
    /* What the results' "input" object says of the videos scored from
     * files, as the tool's notes say it (decoders, bit depth, scaling). */
    char note_name[8][32], note_text[8][256];
    QualeOutputNote notes[8];
    unsigned note_count;
    /* Warnings quale logged on any thread, raised as UserWarnings when the
     * call that is running returns (run_done()). */
    char warnings[8][512];
    atomic_uint warning_count;
    unsigned warnings_dropped;
} RunObject;

static void note_add(RunObject *run, const char *name, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void note_add(RunObject *run, const char *name, const char *format, ...)
{
    if (run->note_count >= sizeof(run->notes) / sizeof(run->notes[0])) return;
    const unsigned i = run->note_count++;
    snprintf(run->note_name[i], sizeof(run->note_name[i]), "%s", name);
    va_list args;
    va_start(args, format);
    vsnprintf(run->note_text[i], sizeof(run->note_text[i]), format, args);
    va_end(args);
    run->notes[i] = (QualeOutputNote){ run->note_name[i], run->note_text[i] };
}

/* The error quale logged on this thread during the current call: the
 * message an exception carries (errors logged by workers land in
 * last_error only). */
static _Thread_local char thread_error[1024];

static void run_log(void *cookie, enum QualeLogLevel level, const char *message)
{
    RunObject *run = cookie;
    if (level == QUALE_LOG_WARNING) {
        pthread_mutex_lock(&run->log_lock);
        const unsigned n = atomic_load(&run->warning_count);
        if (n < sizeof(run->warnings) / sizeof(run->warnings[0])) {
            snprintf(run->warnings[n], sizeof(run->warnings[n]), "%s", message);
            atomic_store(&run->warning_count, n + 1);
        } else {
            run->warnings_dropped++;
        }
        pthread_mutex_unlock(&run->log_lock);
        return;
    }
    if (level != QUALE_LOG_ERROR) return;
    snprintf(thread_error, sizeof(thread_error), "%s", message);
    pthread_mutex_lock(&run->log_lock);
    snprintf(run->last_error, sizeof(run->last_error), "%s", message);
    pthread_mutex_unlock(&run->log_lock);
}

/* A call's result, after the warnings quale logged meanwhile are raised
 * as UserWarnings (NULL where a warnings filter makes one an error). */
static PyObject *run_done(RunObject *run, PyObject *result)
{
    if (!result || !atomic_load(&run->warning_count)) return result;
    char pending[8][512];
    pthread_mutex_lock(&run->log_lock);
    const unsigned n = atomic_load(&run->warning_count), dropped = run->warnings_dropped;
    memcpy(pending, run->warnings, sizeof(pending));
    atomic_store(&run->warning_count, 0);
    run->warnings_dropped = 0;
    pthread_mutex_unlock(&run->log_lock);
    int failed = 0;
    for (unsigned i = 0; i < n && !failed; i++)
        failed = PyErr_WarnFormat(PyExc_UserWarning, 1, "%s", pending[i]) < 0;
    if (!failed && dropped)
        failed = PyErr_WarnFormat(PyExc_UserWarning, 1, "%u more warnings", dropped) < 0;
    if (failed) Py_CLEAR(result);
    return result;
}

/* Raises for a failed call on the run, with the message quale logged. */
static PyObject *run_raise(RunObject *run, int err)
{
    char message[1024];
    if (thread_error[0]) {
        snprintf(message, sizeof(message), "%s", thread_error);
    } else {
        pthread_mutex_lock(&run->log_lock);
        snprintf(message, sizeof(message), "%s", run->last_error);
        pthread_mutex_unlock(&run->log_lock);
    }
    return quale_py_raise(err, message[0] ? message : NULL, NULL);
}

static int backend_parse(const char *name, enum QualeBackend *backend)
{
    static const struct { const char *name; enum QualeBackend backend; } names[] = {
        { "cpu", QUALE_BACKEND_CPU }, { "cuda", QUALE_BACKEND_CUDA },
        { "vulkan", QUALE_BACKEND_VULKAN }, { "hip", QUALE_BACKEND_HIP },
        { "auto", QUALE_BACKEND_AUTO },
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!strcmp(name, names[i].name)) {
            *backend = names[i].backend;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown backend '%s': cpu, cuda, vulkan, hip or auto", name);
    return -1;
}

static int run_init(PyObject *self, PyObject *args, PyObject *kwargs)
{
    RunObject *run = (RunObject *)self;
    static char *keywords[] = { "backend", "device", "threads", "subsample", "cpumask", NULL };
    const char *backend_name = "cpu";
    int device = -1;
    unsigned threads = 0, subsample = 0, cpumask = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|siIII", keywords, &backend_name, &device,
                                     &threads, &subsample, &cpumask))
        return -1;
    if (run->ctx) {
        PyErr_SetString(PyExc_RuntimeError, "a Run is initialised once");
        return -1;
    }
    QualeSettings settings;
    quale_settings_default(&settings);
    if (backend_parse(backend_name, &settings.backend)) return -1;
    settings.gpu_device = device;
    settings.threads = threads;
    settings.subsample = subsample;
    settings.cpumask = cpumask;
    settings.log_level = QUALE_LOG_WARNING;
    settings.log = run_log;
    settings.log_cookie = run;
    thread_error[0] = 0;
    int err;
    /* Opening a GPU backend starts its driver: not under the GIL. */
    Py_BEGIN_ALLOW_THREADS
    err = quale_open(&run->ctx, &settings);
    Py_END_ALLOW_THREADS
    if (err) {
        run->ctx = NULL;
        run_raise(run, err);
        return -1;
    }
    Py_INCREF(Py_None);
    PyObject *done = run_done(run, Py_None);
    Py_XDECREF(done);
    return done ? 0 : -1;
}

static PyObject *run_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    RunObject *run = (RunObject *)type->tp_alloc(type, 0);
    if (run) pthread_mutex_init(&run->log_lock, NULL);
    return (PyObject *)run;
}

static void run_dealloc(PyObject *self)
{
    RunObject *run = (RunObject *)self;
    if (run->ctx) {
        Py_BEGIN_ALLOW_THREADS
        quale_close(&run->ctx);
        Py_END_ALLOW_THREADS
    }
    pthread_mutex_destroy(&run->log_lock);
    Py_TYPE(self)->tp_free(self);
}

/* The run must be open (initialised); for input, not closed either. */
static int run_ready(RunObject *run, int for_input)
{
    if (!run->ctx) {
        PyErr_SetString(PyExc_ValueError, "the session was not opened");
        return -1;
    }
    if (for_input && run->closed) {
        PyErr_SetString(PyExc_ValueError, run->flushed
                        ? "the session's results were taken: it takes no more frames"
                        : "the session is closed");
        return -1;
    }
    return 0;
}

static int results_ready(RunObject *run)
{
    if (run_ready(run, 0)) return -1;
    if (!run->flushed) {
        PyErr_SetString(PyExc_ValueError, "no results yet: the session is not flushed");
        return -1;
    }
    return 0;
}

static PyObject *run_request(PyObject *self, PyObject *args, int model)
{
    RunObject *run = (RunObject *)self;
    const char *spec;
    if (!PyArg_ParseTuple(args, "s", &spec) || run_ready(run, 1)) return NULL;
    thread_error[0] = 0;
    const int err = model ? quale_use_model(run->ctx, spec) : quale_use_metric(run->ctx, spec);
    if (err) {
        /* A model file that is not there is a file error, as open() says. */
        if (err == -ENOENT && model && strstr(spec, "path=")) return run_raise(run, err);
        return run_raise(run, err == -ENOENT ? -EINVAL : err);
    }
    Py_INCREF(Py_None);
    return run_done(run, Py_None);
}

static PyObject *run_use_model(PyObject *self, PyObject *args) { return run_request(self, args, 1); }
static PyObject *run_use_metric(PyObject *self, PyObject *args) { return run_request(self, args, 0); }

/* A pair on a CUDA device: copied on the device, on the producer's
 * stream, into the context's device pictures, which are then sent.  The
 * copies are in the stream's order: the arrays (released when push()
 * returns) are reused by their allocator only for work queued after them
 * on that stream, as torch's and CuPy's stream-ordered pools do; where the
 * stream was not named, the copies are waited for. */
static int send_device(RunObject *run, FramePair *pair)
{
    QualePicture device[2] = { 0 };
    int err = 0;
    for (int i = 0; i < 2 && !err; i++) {
        const QualePicture *pic = &pair->pictures[i];
        QualeDevicePlanes planes = { 0 };
        for (unsigned p = 0; p < pic->plane_count; p++) {
            planes.data[p] = (uintptr_t)pic->data[p];
            planes.pitch[p] = (size_t)pic->stride[p];
        }
        err = quale_context_alloc_device_picture(run->ctx, &device[i], &pic->format);
        /* Where the caller named the stream (torch's current one), its
         * arrays are reused in that stream's order: no wait here. */
        if (!err)
            err = quale_device_picture_copy(run->ctx, &device[i], &planes, (void *)pair->stream,
                                            pair->stream_given ? QUALE_DEVICE_COPY_STREAM_ORDERED
                                                               : 0);
    }
    if (err) {
        quale_picture_unref(&device[0]);
        quale_picture_unref(&device[1]);
        return err;
    }
    return quale_send_pictures(run->ctx, &device[0], &device[1]);
}

static PyObject *run_push(PyObject *self, PyObject *args, PyObject *kwargs)
{
    RunObject *run = (RunObject *)self;
    static char *keywords[] = { "ref", "dist", "bit_depth", "stream", NULL };
    PyObject *ref, *dist, *stream = Py_None;
    unsigned bit_depth = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|IO", keywords, &ref, &dist, &bit_depth,
                                     &stream) ||
        run_ready(run, 1))
        return NULL;
    FramePair pair;
    if (frame_pair_describe(&pair, ref, dist, bit_depth, stream)) {
        frame_pair_release(&pair);
        return NULL;
    }
    int err;
    /* quale copies borrowed planes (and send_device() the device ones)
     * before it returns: the arrays are held until then, released after. */
    Py_BEGIN_ALLOW_THREADS
    thread_error[0] = 0;
    err = pair.on_cuda ? send_device(run, &pair)
                       : quale_send_pictures(run->ctx, &pair.pictures[0], &pair.pictures[1]);
    Py_END_ALLOW_THREADS
    frame_pair_release(&pair);
    if (err) return run_raise(run, err);
    Py_INCREF(Py_None);
    return run_done(run, Py_None);
}

static PyObject *run_flush(PyObject *self, PyObject *unused)
{
    RunObject *run = (RunObject *)self;
    if (run_ready(run, 0)) return NULL;
    if (run->flushed) Py_RETURN_NONE;
    run->closed = 1;
    int err;
    Py_BEGIN_ALLOW_THREADS
    thread_error[0] = 0;
    err = quale_flush(run->ctx);
    Py_END_ALLOW_THREADS
    if (err) return run_raise(run, err);
    run->flushed = 1;
    Py_INCREF(Py_None);
    return run_done(run, Py_None);
}

static PyObject *run_close(PyObject *self, PyObject *unused)
{
    ((RunObject *)self)->closed = 1;
    Py_RETURN_NONE;
}

static PyObject *run_get_closed(PyObject *self, void *unused)
{
    return PyBool_FromLong(((RunObject *)self)->closed);
}

static PyObject *run_get_backend(PyObject *self, void *unused)
{
    RunObject *run = (RunObject *)self;
    if (run_ready(run, 0)) return NULL;
    return PyUnicode_FromString(quale_backend_name(quale_backend(run->ctx)));
}

static PyObject *run_frame_count(PyObject *self, PyObject *unused)
{
    RunObject *run = (RunObject *)self;
    if (run_ready(run, 0)) return NULL;
    return PyLong_FromUnsignedLong(quale_frame_count(run->ctx));
}

static PyObject *run_feature_names(PyObject *self, PyObject *unused)
{
    RunObject *run = (RunObject *)self;
    if (results_ready(run)) return NULL;
    const unsigned n = quale_feature_count(run->ctx);
    PyObject *names = PyList_New(n);
    for (unsigned i = 0; names && i < n; i++) {
        PyObject *name = PyUnicode_FromString(quale_feature_name(run->ctx, i));
        if (!name) {
            Py_CLEAR(names);
            break;
        }
        PyList_SET_ITEM(names, i, name);
    }
    return names;
}

static PyObject *run_value(PyObject *self, PyObject *args)
{
    RunObject *run = (RunObject *)self;
    const char *key;
    unsigned frame;
    if (!PyArg_ParseTuple(args, "sI", &key, &frame) || run_ready(run, 0)) return NULL;
    double value;
    if (quale_feature_value(run->ctx, key, frame, &value)) Py_RETURN_NONE;
    return PyFloat_FromDouble(value);
}

static PyObject *run_pooled(PyObject *self, PyObject *args)
{
    RunObject *run = (RunObject *)self;
    const char *key, *method;
    if (!PyArg_ParseTuple(args, "ss", &key, &method) || results_ready(run)) return NULL;
    if (quale_pool_method_check(method)) {
        return PyErr_Format(PyExc_ValueError, "unknown pooling '%s': min, max, mean, "
                            "harmonic_mean, pN (a percentile) or lowN (the lowest N%%)", method);
    }
    double value;
    thread_error[0] = 0;
    const int err = quale_feature_pooled_by(run->ctx, key, method, &value);
    if (err == -ENOENT) return PyErr_Format(PyExc_KeyError, "%s", key);
    if (err) return run_raise(run, err);
    return PyFloat_FromDouble(value);
}

/* The pooling methods (a sequence of str) into a C array; NULL on error. */
static const char **methods_parse(PyObject *seq_obj, Py_ssize_t *count, PyObject **keep)
{
    PyObject *seq = PySequence_Fast(seq_obj, "pool methods are a sequence of str");
    if (!seq) return NULL;
    *count = PySequence_Fast_GET_SIZE(seq);
    const char **methods = calloc((size_t)*count + 1, sizeof(*methods));
    if (!methods) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *count; i++) {
        methods[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        if (!methods[i] || quale_pool_method_check(methods[i])) {
            if (methods[i])
                PyErr_Format(PyExc_ValueError, "unknown pooling '%s': pN (a percentile) or lowN "
                             "(the lowest N%%)", methods[i]);
            free(methods);
            Py_DECREF(seq);
            return NULL;
        }
    }
    *keep = seq;
    return methods;
}

/* The results in the tool's JSON layout (libvmaf's, with the library's provenance). */
static PyObject *run_write_json(PyObject *self, PyObject *args, PyObject *kwargs)
{
    RunObject *run = (RunObject *)self;
    static char *keywords[] = { "precision", "pool_methods", "fps", NULL };
    int precision = -1;
    PyObject *pools = NULL, *keep = NULL;
    double fps = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|iOd", keywords, &precision, &pools, &fps) ||
        results_ready(run))
        return NULL;
    Py_ssize_t pool_count = 0;
    const char **methods = NULL;
    if (pools && pools != Py_None && !(methods = methods_parse(pools, &pool_count, &keep)))
        return NULL;
    QualeOutputOptions options = { .precision = precision < 0 ? -1 : precision, .fps = fps,
                                   .pool_methods = methods,
                                   .pool_method_count = (unsigned)pool_count,
                                   .notes = run->notes, .note_count = run->note_count,
                                   .describe_run = 1 };
    char *text = NULL;
    size_t length = 0;
    FILE *stream = open_memstream(&text, &length);
    int err = stream ? 0 : -ENOMEM;
    thread_error[0] = 0;
    if (stream) {
        err = quale_write_output(run->ctx, stream, QUALE_OUTPUT_JSON, &options);
        if (fclose(stream) && !err) err = -EIO;
    }
    free(methods);
    Py_XDECREF(keep);
    PyObject *json = err ? run_raise(run, err) : PyUnicode_DecodeUTF8(text, (Py_ssize_t)length,
                                                                      "strict");
    free(text);
    return json;
}

/* ---- files ---------------------------------------------------------------- */

typedef struct FileRun {
    QualeVideoReader *readers[2];
    unsigned frame_limit;
    int frames;           /* sent; -1 after an error */
    int ended_first;      /* which video ended before the other, or -1 */
    int error;            /* a negative errno */
    char message[1024];
} FileRun;

/* Reads both videos and sends every pair, without the GIL. */
static void file_run_score(FileRun *f, QualeContext *ctx, const QualeVideoFormat *format)
{
    f->ended_first = -1;
    while (!f->frame_limit || (unsigned)f->frames < f->frame_limit) {
        QualePicture pics[2] = { 0 };
        int got[2] = { 0, 0 };
        for (int i = 0; i < 2; i++) {
            f->error = quale_context_alloc_picture(ctx, &pics[i], format);
            if (f->error) break;
            got[i] = quale_video_read(f->readers[i], &pics[i]);
            if (got[i] < 0) {
                f->error = got[i];
                snprintf(f->message, sizeof(f->message), "%s", quale_video_error(f->readers[i]));
                break;
            }
        }
        if (f->error || got[0] != 1 || got[1] != 1) {
            quale_picture_unref(&pics[0]);
            quale_picture_unref(&pics[1]);
            if (!f->error && got[0] != got[1]) f->ended_first = got[0] ? 1 : 0;
            return;
        }
        f->error = quale_send_pictures(ctx, &pics[0], &pics[1]);
        if (f->error) return;
        f->frames++;
    }
}

static int file_open(RunObject *run, FileRun *f, int i, PyObject *path_obj,
                     const QualeVideoFormat *raw)
{
    PyObject *bytes;
    if (!PyUnicode_FSConverter(path_obj, &bytes)) return -1;
    const char *path = PyBytes_AS_STRING(bytes);
    char error[1024] = "";
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = quale_video_open(&f->readers[i], path, raw, error, sizeof(error));
    Py_END_ALLOW_THREADS
    if (err) quale_py_raise(err, error, path);
    else quale_video_set_planes(f->readers[i], quale_planes_needed(run->ctx));
    Py_DECREF(bytes);
    return err ? -1 : 0;
}

static int chroma_parse(const char *name, enum QualeChroma *chroma)
{
    static const struct { const char *name; enum QualeChroma chroma; } names[] = {
        { "420", QUALE_CHROMA_420 }, { "422", QUALE_CHROMA_422 }, { "444", QUALE_CHROMA_444 },
        { "400", QUALE_CHROMA_400 },
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!strcmp(name, names[i].name)) {
            *chroma = names[i].chroma;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown pixel format '%s': 420, 422, 444 or 400", name);
    return -1;
}

/* The raw format of the arguments, or NULL (y4m and compressed video). */
static const QualeVideoFormat *raw_format(QualeVideoFormat *raw, unsigned width,
                                          unsigned height, const char *chroma,
                                          unsigned bitdepth, int *failed)
{
    *failed = 0;
    if (!width && !height && !chroma && !bitdepth) return NULL;
    if (!width || !height || !chroma || !bitdepth) {
        PyErr_SetString(PyExc_ValueError, "raw video needs width, height, pixel_format and "
                        "bitdepth");
        *failed = 1;
        return NULL;
    }
    *raw = (QualeVideoFormat){ .width = width, .height = height, .bitdepth = bitdepth };
    char error[256];
    if (chroma_parse(chroma, &raw->chroma) ||
        (quale_video_format_check(raw, error, sizeof(error)) &&
         !PyErr_Format(PyExc_ValueError, "%s", error))) {
        *failed = 1;
        return NULL;
    }
    return raw;
}

static PyObject *file_run_finish(RunObject *run, FileRun *f, PyObject *ref, PyObject *dist)
{
    if (f->error) {
        if (f->message[0]) return quale_py_raise(f->error, f->message, NULL);
        return run_raise(run, f->error);
    }
    if (f->ended_first >= 0 &&
        PyErr_WarnFormat(PyExc_UserWarning, 1, "%S ended after %d frames, before %S; scored "
                         "the %d frames both have", f->ended_first ? dist : ref, f->frames,
                         f->ended_first ? ref : dist, f->frames))
        return NULL;
    return PyLong_FromLong(f->frames);
}

/* Two videos of different formats scored as the tool scores them: the
 * shallower one's samples shifted up to the deeper one's bit depth, then
 * the distorted video converted to the reference's size and chroma format
 * (swscale, accurate_rnd+bitexact); each said in a UserWarning, as the tool
 * says it in a note.  formats[] become what is scored. */
static int formats_match(RunObject *run, FileRun *f, PyObject *ref, PyObject *dist,
                         const char *scaler, QualeVideoFormat formats[2])
{
    PyObject *paths[2] = { ref, dist };
    quale_video_get_format(f->readers[0], &formats[0]);
    quale_video_get_format(f->readers[1], &formats[1]);
    if (formats[0].bitdepth != formats[1].bitdepth) {
        const int up = formats[1].bitdepth < formats[0].bitdepth;
        const unsigned from = formats[up].bitdepth, depth = formats[!up].bitdepth;
        if (quale_video_set_bitdepth(f->readers[up], depth)) {
            PyErr_Format(PyExc_ValueError, "%s", quale_video_error(f->readers[up]));
            return -1;
        }
        if (PyErr_WarnFormat(PyExc_UserWarning, 1, "%S is %u-bit: scored at the %u bits of %S "
                             "(samples shifted left by %u)", paths[up], from, depth, paths[!up],
                             depth - from))
            return -1;
        note_add(run, up ? "distorted_bitdepth" : "reference_bitdepth",
                 "%u, shifted left by %u to %u", from, depth - from, depth);
        quale_video_get_format(f->readers[up], &formats[up]);
    }
    const QualeVideoFormat r = formats[0], d = formats[1];
    if (d.width == r.width && d.height == r.height && d.chroma == r.chroma) return 0;
    if (quale_video_convert(f->readers[1], r.width, r.height, r.chroma, scaler)) {
        PyErr_Format(PyExc_ValueError, "%s", quale_video_error(f->readers[1]));
        return -1;
    }
    if (PyErr_WarnFormat(PyExc_UserWarning, 1, "%S is %ux%u %s: converted to the reference's "
                         "%ux%u %s (%s, FFmpeg's swscale with accurate_rnd+bitexact)", dist,
                         d.width, d.height, quale_chroma_name(d.chroma), r.width, r.height,
                         quale_chroma_name(r.chroma), scaler))
        return -1;
    note_add(run, "distorted_scaled", "%ux%u %s to %ux%u %s, %s (swscale, accurate_rnd+bitexact)",
             d.width, d.height, quale_chroma_name(d.chroma), r.width, r.height,
             quale_chroma_name(r.chroma), scaler);
    quale_video_get_format(f->readers[1], &formats[1]);
    return 0;
}

/* The notes the tool makes of compressed videos: their decoders, and the
 * distorted video's bitrate and frame rate. */
static void decoder_notes(RunObject *run, const FileRun *f)
{
    for (int i = 0; i < 2; i++)
        if (quale_video_codec(f->readers[i]))
            note_add(run, i ? "distorted_decoder" : "reference_decoder",
                     "%s, decoded in software (FFmpeg)", quale_video_codec(f->readers[i]));
    const QualeVideoReader *dist = f->readers[1];
    if (!quale_video_codec(dist)) return;
    const int64_t bits = quale_video_bit_rate(dist);
    unsigned num, den;
    if (bits > 0) note_add(run, "distorted_bitrate", "%.1f kb/s", bits / 1000.);
    if (quale_video_frame_rate(dist, &num, &den) >= 0)
        note_add(run, "distorted_frame_rate", "%u/%u", num, den);
}

static PyObject *run_score_files(PyObject *self, PyObject *args, PyObject *kwargs)
{
    RunObject *run = (RunObject *)self;
    static char *keywords[] = { "ref", "dist", "width", "height", "pixel_format", "bitdepth",
                                "frame_count", "scaler", NULL };
    PyObject *ref, *dist;
    unsigned width = 0, height = 0, bitdepth = 0;
    const char *chroma = NULL, *scaler = "bicubic";
    FileRun f = { .frames = 0 };
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|IIzIIs", keywords, &ref, &dist, &width,
                                     &height, &chroma, &bitdepth, &f.frame_limit, &scaler) ||
        run_ready(run, 1))
        return NULL;
    int failed;
    QualeVideoFormat raw_storage, formats[2];
    const QualeVideoFormat *raw = raw_format(&raw_storage, width, height, chroma, bitdepth,
                                             &failed);
    PyObject *result = NULL;
    if (failed || file_open(run, &f, 0, ref, raw) || file_open(run, &f, 1, dist, raw))
        goto done;
    decoder_notes(run, &f);
    if (formats_match(run, &f, ref, dist, scaler, formats)) goto done;
    Py_BEGIN_ALLOW_THREADS
    thread_error[0] = 0;
    file_run_score(&f, run->ctx, &formats[0]);
    Py_END_ALLOW_THREADS
    result = file_run_finish(run, &f, ref, dist);
done:
    quale_video_close(&f.readers[0]);
    quale_video_close(&f.readers[1]);
    return run_done(run, result);
}

static PyMethodDef run_methods[] = {
    { "use_model", run_use_model, METH_VARARGS, "use_model(spec): request a model (-m syntax)" },
    { "use_metric", run_use_metric, METH_VARARGS, "use_metric(spec): request a metric" },
    { "push", (PyCFunction)(void (*)(void))run_push, METH_VARARGS | METH_KEYWORDS,
      "push(ref, dist, bit_depth=0, stream=None): score one frame pair" },
    { "score_files", (PyCFunction)(void (*)(void))run_score_files, METH_VARARGS | METH_KEYWORDS,
      "score_files(ref, dist, width, height, pixel_format, bitdepth, frame_count, scaler): "
      "score two videos; returns the frames scored" },
    { "flush", run_flush, METH_NOARGS, "flush(): finish the frames and run the models" },
    { "close", run_close, METH_NOARGS, "close(): take no more frames" },
    { "frame_count", run_frame_count, METH_NOARGS, "frame_count(): frames sent so far" },
    { "feature_names", run_feature_names, METH_NOARGS, "feature_names(): keys in output order" },
    { "value", run_value, METH_VARARGS, "value(key, frame): a frame's value or None" },
    { "pooled", run_pooled, METH_VARARGS, "pooled(key, method): a key pooled by name" },
    { "write_json", (PyCFunction)(void (*)(void))run_write_json, METH_VARARGS | METH_KEYWORDS,
      "write_json(precision=-1, pool_methods=(), fps=0.0): the results in the tool's JSON" },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef run_getset[] = {
    { "backend", run_get_backend, NULL, "the backend that runs the metrics", NULL },
    { "closed", run_get_closed, NULL, "whether the run takes no more frames", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject QualeRunType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "quale._quale.Run",
    .tp_doc = "Run(backend='cpu', device=-1, threads=0, subsample=0, cpumask=0): one quale "
              "context (quale.Session is the interface to use)",
    .tp_basicsize = sizeof(RunObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = run_new,
    .tp_init = run_init,
    .tp_dealloc = run_dealloc,
    .tp_methods = run_methods,
    .tp_getset = run_getset,
};
