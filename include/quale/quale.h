/*
 * libquale: video quality measurement (VMAF and the metrics around it).
 *
 * Every public function returns 0 (or a non-negative count) on success and a
 * negative errno value on failure; the reason is also sent, as one line of
 * text, to the log callback of the context (or to the error buffer for
 * functions that run without a context).  Nothing in the library aborts.
 */
#ifndef QUALE_QUALE_H
#define QUALE_QUALE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  if defined(QUALE_BUILDING_LIBRARY)
#    define QUALE_API __declspec(dllexport)
#  else
#    define QUALE_API
#  endif
#elif defined(__GNUC__)
#  define QUALE_API __attribute__((visibility("default")))
#else
#  define QUALE_API
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */

/** The library version, "MAJOR.MINOR.PATCH". */
QUALE_API const char *quale_version(void);

/* ------------------------------------------------------------------------ */
/* Pictures                                                                  */

enum QualeChroma {
    QUALE_CHROMA_UNKNOWN = 0,
    QUALE_CHROMA_400, /* luma only */
    QUALE_CHROMA_420,
    QUALE_CHROMA_422,
    QUALE_CHROMA_444,
};

/** The shape of every picture of a video. */
typedef struct QualeVideoFormat {
    enum QualeChroma chroma;
    unsigned bitdepth; /* 8 to 16; samples above 8 bits are uint16_t */
    unsigned width;    /* luma width in samples */
    unsigned height;   /* luma height in samples */
} QualeVideoFormat;

/**
 * A planar picture.  Planes hold uint8_t samples at 8 bits and uint16_t
 * samples (native endian) above.  Chroma planes of 4:2:0 and 4:2:2 are
 * (width + 1) / 2 wide, and those of 4:2:0 are (height + 1) / 2 high.
 * Pictures made by quale_picture_alloc() are reference counted.
 *
 * A caller may also describe memory of its own ("borrowed": buffer NULL):
 * plane_count, plane_width/height as the format says, data[] for every
 * plane, and stride[] in bytes, at least a row of samples and at most
 * 16 MiB, negative for a plane stored bottom up; rows need no alignment.
 */
typedef struct QualePicture {
    QualeVideoFormat format;
    unsigned plane_count;         /* 1 for 4:0:0, else 3 */
    unsigned plane_width[3];
    unsigned plane_height[3];
    ptrdiff_t stride[3];          /* in bytes */
    void *data[3];
    struct QualePictureBuffer *buffer; /* owner of data[], NULL if borrowed */
} QualePicture;

/** Allocates a picture of the given format (rows aligned for SIMD). */
QUALE_API int quale_picture_alloc(QualePicture *pic,
                                  const QualeVideoFormat *format);

/** Adds a reference: dst shares src's planes. */
QUALE_API int quale_picture_ref(QualePicture *dst, const QualePicture *src);

/** Drops a reference and clears *pic; the planes are freed with the last. */
QUALE_API void quale_picture_unref(QualePicture *pic);

/** "4:0:0", "4:2:0", "4:2:2", "4:4:4", or "unknown chroma". */
QUALE_API const char *quale_chroma_name(enum QualeChroma chroma);

/** Checks a format: known chroma, bit depth 8..16, non-zero dimensions
 *  that fit the library's limits. */
QUALE_API int quale_video_format_check(const QualeVideoFormat *format,
                                       char *error, size_t error_size);

/* ------------------------------------------------------------------------ */
/* Reading y4m and raw yuv                                                  */

typedef struct QualeVideoReader QualeVideoReader;

/**
 * Opens a video.  With raw == NULL the file must be YUV4MPEG2 (.y4m); with
 * raw != NULL it is read as headerless planar yuv of that format (samples
 * above 8 bits little-endian, 2 bytes each), unless its first bytes say it
 * is YUV4MPEG2: then it is read as that, whatever raw says
 * (quale_video_is_y4m() tells).  path "-" reads stdin.  On failure *reader
 * is NULL and error holds the reason; among the errors:
 *   -EPROTONOSUPPORT  a compressed file (MP4/MOV, Matroska/WebM, IVF, AVI,
 *                     MPEG-TS) in a build without FFmpeg's libraries (with
 *                     them, it is decoded: quale_video_codec() says how);
 *   -EBADMSG          a raw regular file whose size is not a whole number
 *                     of frames of the format given (the wrong format);
 *   -ENODATA          an empty file or stream where YUV4MPEG2 was expected;
 *   -EPROTO           not YUV4MPEG2, or a damaged header.
 */
QUALE_API int quale_video_open(QualeVideoReader **reader, const char *path,
                               const QualeVideoFormat *raw,
                               char *error, size_t error_size);

/**
 * Scales every frame to width x height (the reference's size, say) with
 * FFmpeg's swscale, as `ffmpeg -vf scale=W:H:flags=SCALER` does: scaler
 * "bicubic" (NULL), "bilinear", "lanczos", "neighbor", "area" or "spline".
 * The chroma format and the bit depth stay; a deeper picture
 * (quale_video_set_bitdepth(), called first) is scaled at the file's depth
 * and shifted after.  Before the first read.  -EPROTONOSUPPORT where
 * FFmpeg's libraries are not there.
 */
QUALE_API int quale_video_set_size(QualeVideoReader *reader, unsigned width, unsigned height,
                                   const char *scaler);

/**
 * As quale_video_set_size(), converting the chroma format too (between
 * 4:2:0, 4:2:2 and 4:4:4): one swscale context, as `ffmpeg -vf
 * scale=W:H:flags=SCALER,format=F` makes.  -ENOTSUP to or from 4:0:0.
 */
QUALE_API int quale_video_convert(QualeVideoReader *reader, unsigned width, unsigned height,
                                  enum QualeChroma chroma, const char *scaler);

/**
 * Puts an FFmpeg filter graph between the video and its pictures, as
 * `ffmpeg -i VIDEO -vf GRAPH` does (libavfilter's syntax: "yadif",
 * "crop=1280:720:0:180", "pad=1920:1080:-1:-1,fps=30"): *reader becomes
 * the filtered video, whose format, frame rate and frames are the graph's
 * output (quale_video_codec() and quale_video_is_y4m() still say what it
 * reads), and closing it closes the video it filters.  It decodes on the
 * CPU (quale_video_decode_on_gpu() gives 0).  Frames enter the
 * graph timed by their order at the video's frame rate (25 fps where none
 * is known), progressive; scale filters default to swscale's bicubic, as
 * in the ffmpeg tool.  The output must be planar YUV or gray, 8 to 16
 * bits, little-endian: end the graph in format=yuv420p (say) where it is
 * not.  Right after opening, before any other setting or read.  libavfilter
 * is loaded at the first graph.  On failure *reader is the video as it was
 * and error says why: -EINVAL a graph FFmpeg refuses for this video (its
 * own message), -ENOTSUP an output quale does not score, -EPROTONOSUPPORT
 * no libavfilter, -EBUSY too late.  The frames of a filtered video are not
 * known before they are read (quale_video_frames_in_file() and
 * quale_video_count_frames() give -1).
 */
QUALE_API int quale_video_filter(QualeVideoReader **reader, const char *graph,
                                 char *error, size_t error_size);

/** Whether the reader reads YUV4MPEG2 (else raw yuv or compressed video). */
QUALE_API int quale_video_is_y4m(const QualeVideoReader *reader);

/** For compressed video, what decodes it ("h264 in mov,mp4,m4a,3gp,3g2,mj2",
 *  FFmpeg's names); NULL for y4m and raw yuv. */
QUALE_API const char *quale_video_codec(const QualeVideoReader *reader);

/** The frames a regular file holds from its start, from its size at open:
 *  exact for raw yuv, for YUV4MPEG2 as if every FRAME line were "FRAME\n"
 *  (as nearly every writer has it); for compressed video the count its
 *  container declares, which can differ from the frames decoded (a
 *  fragmented MP4, an edit list; quale_video_count_frames() counts them);
 *  -1 for a pipe or stream, or a container that declares none. */
QUALE_API int64_t quale_video_frames_in_file(const QualeVideoReader *reader);

/** Same, over a stream the caller keeps open (closed by the caller). */
QUALE_API int quale_video_open_stream(QualeVideoReader **reader, FILE *stream,
                                      const char *name,
                                      const QualeVideoFormat *raw,
                                      char *error, size_t error_size);

/** The format of the video's pictures. */
QUALE_API void quale_video_get_format(const QualeVideoReader *reader,
                                      QualeVideoFormat *format);

/**
 * Delivers the pictures at a greater bit depth than the file's, up to 16:
 * every sample shifted left by the difference (8-bit 235 becomes 10-bit
 * 940), as FFmpeg converts limited-range video and as libvmaf's tools make
 * 10-bit inputs of 8-bit video (VMAF v1 is meant to be measured at 10
 * bits).  quale_video_get_format() then gives the deeper format.  Before
 * the first read; -EINVAL for a shallower depth.
 */
QUALE_API int quale_video_set_bitdepth(QualeVideoReader *reader, unsigned bitdepth);

/**
 * Which planes quale_video_read() fills: bit p set reads plane p, the others
 * are skipped in the file (their contents in the picture are left as they
 * were).  Default: all planes.
 */
QUALE_API void quale_video_set_planes(QualeVideoReader *reader,
                                      unsigned plane_mask);

/**
 * Reads the next picture into pic, which must have the reader's format
 * (allocate it with quale_picture_alloc()).  Returns 1 when a picture was
 * read, 0 at the clean end of the file, and a negative errno for a damaged
 * or truncated file (quale_video_error() then says what is wrong).
 * Samples above the bit depth's maximum are clamped to it and counted.
 */
QUALE_API int quale_video_read(QualeVideoReader *reader, QualePicture *pic);

/** Skips n pictures; same return values as quale_video_read(). */
QUALE_API int quale_video_skip(QualeVideoReader *reader, unsigned n);

/** The last error's message, "" if none. */
QUALE_API const char *quale_video_error(const QualeVideoReader *reader);

/** The number of samples clamped so far because they exceeded the bit depth. */
QUALE_API uint64_t quale_video_clamped_samples(const QualeVideoReader *reader);

/** The frame rate num/den (y4m's F tag, a container's average rate): 0 when
 *  it is constant, 1 when the container says it varies (VFR: num/den is the
 *  average), -1 when not known (raw yuv; *num and *den are then 0). */
QUALE_API int quale_video_frame_rate(const QualeVideoReader *reader, unsigned *num,
                                     unsigned *den);

/** The frames of the video as they will be read: raw yuv's from the file's
 *  size; YUV4MPEG2's FRAME lines, looked up one by one where the size does
 *  not tell; compressed video's packets that decode to a frame (an
 *  unfragmented MP4's from its index, other files demuxed once from the
 *  start, without decoding), never the count a container declares; -1 when
 *  they cannot be known (a pipe).  The reader's position is unchanged. */
QUALE_API int64_t quale_video_count_frames(QualeVideoReader *reader);

/** Compressed video: its bits per second as the container says (the video
 *  stream's, else the whole file's); -1 when not known. */
QUALE_API int64_t quale_video_bit_rate(const QualeVideoReader *reader);

/** Compressed video: the frames so far that the decoder flagged as damaged
 *  (decoded with concealment from a corrupt bitstream). */
QUALE_API uint64_t quale_video_damaged_frames(const QualeVideoReader *reader);

QUALE_API void quale_video_close(QualeVideoReader **reader);

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

enum QualeLogLevel {
    QUALE_LOG_ERROR = 0,
    QUALE_LOG_WARNING,
    QUALE_LOG_INFO,
    QUALE_LOG_DEBUG,
};

/* Called from the context's worker threads too, several at once: a
 * callback that keeps messages must take them under a lock of its own. */
typedef void (*QualeLogCallback)(void *cookie, enum QualeLogLevel level,
                                 const char *message);

enum QualeBackend {
    QUALE_BACKEND_CPU = 0,
    QUALE_BACKEND_CUDA,
    QUALE_BACKEND_VULKAN,
    QUALE_BACKEND_AUTO, /* CUDA, else HIP, else a hardware Vulkan device
                         * (never a software one), else the CPU; the
                         * choice is logged at QUALE_LOG_INFO with the
                         * device's name */
    QUALE_BACKEND_HIP,  /* the CUDA backend's kernels and code over HIP's
                         * runtime (libamdhip64: AMD GPUs; or a build on
                         * HIP's NVIDIA platform) */
};

/* Instruction sets the CPU kernels may use.  QualeSettings.cpumask leaves
 * the set bits unused (a kernel needing a masked set falls back to the next
 * lower level, down to C); the values are libvmaf's, so --cpumask means the
 * same to both tools.  No choice of kernels changes a digit of a score. */
enum QualeCpuFlags {
    QUALE_CPU_SSE2 = 1u << 0,
    QUALE_CPU_SSSE3 = 1u << 1,
    QUALE_CPU_SSE41 = 1u << 2,
    QUALE_CPU_AVX2 = 1u << 3,      /* with FMA and BMI2 */
    QUALE_CPU_AVX512 = 1u << 4,    /* F, CD, BW, DQ, VL */
    QUALE_CPU_AVX512ICL = 1u << 5, /* and Ice Lake's VNNI, VBMI, ... */
};

/** The QUALE_CPU_* sets this CPU (and its OS) can run. */
QUALE_API unsigned quale_cpu_flags(void);

typedef struct QualeSettings {
    unsigned threads;   /* worker threads; 0 = one per online CPU core.  At
                         * most twice the cores, or 8: a larger count is
                         * lowered to that (with a warning) */
    unsigned subsample; /* score every Nth frame; 0 and 1 = every frame */
    unsigned cpumask;   /* CPU features to leave unused (bits of QUALE_CPU_*) */
    enum QualeBackend backend;
    int gpu_device;     /* device index for GPU backends, -1 = default */
    enum QualeLogLevel log_level; /* messages above it are dropped */
    QualeLogCallback log;         /* NULL: messages go to stderr */
    void *log_cookie;
} QualeSettings;

/** Fills the defaults: all cores, every frame, CPU backend, log to stderr. */
QUALE_API void quale_settings_default(QualeSettings *settings);

typedef struct QualeContext QualeContext;

/*
 * Threads.  Calls on one context may come from several threads at once:
 * - quale_send_pictures() from any number of them: the calls take turns,
 *   and frames are numbered in the order the calls are taken (frames sent
 *   at the same moment by two threads come in either order, so send from
 *   one thread where the order matters, as it does to temporal metrics).
 * - quale_flush() while other threads send: it waits for the frame being
 *   taken; frames sent after it are refused (-EINVAL).
 * - quale_use_metric(), quale_use_model() and quale_use_cuda_context()
 *   while another thread sends the first frame: in that frame's run or
 *   refused, never half made.
 * - quale_frame_count(), quale_frames_done() and quale_feature_value() at
 *   any time; quale_context_alloc_picture() and
 *   quale_context_alloc_device_picture() at any time once the backend is
 *   set (quale_use_cuda_context() replaces the pools they draw from).
 * - The results (quale_feature_count(), quale_feature_name(), the pooled
 *   values, quale_write_output()) once quale_flush() has returned.
 * - quale_close() only when no other call on the context is running or
 *   will be made: it frees the context.
 * The log callback may be called from any of these threads and from the
 * workers.
 */

QUALE_API int quale_open(QualeContext **ctx, const QualeSettings *settings);

/** Ends the workers and frees everything. *ctx becomes NULL.  The last
 *  call on the context: no other thread may be in a call on it. */
QUALE_API void quale_close(QualeContext **ctx);

/**
 * Requests a metric by name, with options as in the CLI:
 * "psnr", or "psnr=enable_chroma=false:min_sse=0.5".
 * Requesting the same metric with the same options twice is a no-op.  Two
 * requests never write one key: a request whose keys (named as libvmaf
 * names option variants) include a key of another request or model of the
 * run is refused with -EEXIST, naming both.
 */
QUALE_API int quale_use_metric(QualeContext *ctx, const char *spec);

/**
 * Requests a VMAF model, with libvmaf's -m syntax: "version=vmaf_v0.6.1",
 * "path=model.json", plus ":name=NAME" (the output key, default "vmaf"; up
 * to 128 letters, digits, '_', '-' and '.', starting with a letter or '_',
 * so that every layout carries it),
 * ":disable_clip", ":enable_transform" and feature overloads such as
 * ":adm.adm_enhn_gain_limit=1.2".  The model's metrics are requested with it.
 */
QUALE_API int quale_use_model(QualeContext *ctx, const char *spec);

typedef struct QualeModelInfo {
    const char *name;  /* output key, e.g. "vmaf" */
    const char *label; /* the version or the path it was loaded from */
    int bootstrap;     /* 1 for a bootstrap collection (confidence interval) */
} QualeModelInfo;

/** The name of built-in model i ("vmaf_v0.6.1", ...), NULL past the end. */
QUALE_API const char *quale_builtin_model(unsigned index);

/** What a built-in model is for, to choose one. */
typedef struct QualeBuiltinModelInfo {
    const char *version;    /* "vmaf_v1.0.16_3d0h" */
    const char *condition;  /* the viewing condition it models: "1080p display at 3H" */
    char features[160];     /* the metrics it reads: "cambi, speed_chroma, adm, motion" */
    double score_min, score_max; /* its scores' range (its clip; 0, 0 if none) */
    int bootstrap;          /* 1 for a bootstrap collection (confidence interval) */
} QualeBuiltinModelInfo;

/** Fills info for built-in model i; -EINVAL past the end. */
QUALE_API int quale_builtin_model_info(unsigned index, QualeBuiltinModelInfo *info);

QUALE_API unsigned quale_model_count(const QualeContext *ctx);
QUALE_API int quale_model_info(const QualeContext *ctx, unsigned index,
                               QualeModelInfo *info);

/** The planes the requested metrics read: bit p for plane p (1 = luma only).
 *  Readers can skip the others. */
QUALE_API unsigned quale_planes_needed(const QualeContext *ctx);

/** The frames a run of part of the videos must read around it so that its
 *  frames get the values of a whole run: *before it (the temporal metrics'
 *  previous frames, and the ones their values of those frames looked back
 *  to) and *after it (motion2 looks at the next frame).  Ask once the
 *  models and metrics are requested. */
QUALE_API int quale_segment_margins(const QualeContext *ctx, unsigned *before, unsigned *after);

/** The backend that runs the metrics (after quale_open() resolved AUTO). */
QUALE_API enum QualeBackend quale_backend(const QualeContext *ctx);

/**
 * Allocates a picture for sending to this context: its memory is recycled
 * when released (no allocation per frame) and, with a GPU backend, is host
 * memory the device reads directly (no staging copy).  Use it in a read
 * loop instead of quale_picture_alloc(); the picture may outlive the
 * context.
 */
QUALE_API int quale_context_alloc_picture(QualeContext *ctx, QualePicture *pic,
                                          const QualeVideoFormat *format);

/**
 * Runs the context's metrics on the CUDA backend inside a CUDA context of
 * the caller's (cu_context is a CUcontext; NULL takes the default device's
 * primary context, as QUALE_BACKEND_CUDA does), so that pictures the
 * caller keeps in device memory of that context can be scored where they
 * are.  Call it before the first picture; the CUDA context must outlive
 * this context and every picture allocated from it.  Replaces the backend
 * the context was opened with.  -ENOSYS when this build has no CUDA.
 */
QUALE_API int quale_use_cuda_context(QualeContext *ctx, void *cu_context);

/**
 * Allocates a picture in device memory (CUDA backend only): data[p] are
 * CUdeviceptr values of the context's CUDA context, laid out as
 * quale_context_alloc_picture() lays out host pictures, cleared to zero.
 * The caller fills the planes on the device (copies on the context's
 * default stream are waited for) and sends it with quale_send_pictures();
 * the host never reads it, unless some requested metric runs on the CPU,
 * which then gets a copy.  Recycled when released.
 */
QUALE_API int quale_context_alloc_device_picture(QualeContext *ctx, QualePicture *pic,
                                                 const QualeVideoFormat *format);

/** Planes the caller holds in device memory (CUDA: CUdeviceptr values),
 *  each with its row pitch in bytes; the samples of a row are adjacent. */
typedef struct QualeDevicePlanes {
    uintptr_t data[3];
    size_t pitch[3];
} QualeDevicePlanes;

/** quale_device_picture_copy()'s flags. */
enum QualeDeviceCopyFlags {
    /* Return once the copies are queued, without waiting for them: the
     * caller's memory is read in cu_stream's order, so it may be reused by
     * work queued on cu_stream after the call (as the stream-ordered
     * allocators of torch and CuPy reuse it), and elsewhere once that
     * stream has reached this point. */
    QUALE_DEVICE_COPY_STREAM_ORDERED = 1 << 0,
};

/**
 * Copies planes the caller holds in device memory (a framework's tensors,
 * a decoder's surfaces) into pic, a picture from
 * quale_context_alloc_device_picture(ctx), device to device: plane p of
 * pic takes pic->plane_height[p] rows of pic->plane_width[p] samples from
 * src->data[p].  The copies are queued on cu_stream (a CUstream: the
 * stream the planes were written on, so that they come after that work;
 * NULL or CU_STREAM_LEGACY is the legacy default stream,
 * CU_STREAM_PER_THREAD the calling thread's) and, unless flags has
 * QUALE_DEVICE_COPY_STREAM_ORDERED, have finished when the call returns,
 * so the caller's memory is its own again.  Scoring waits for them either
 * way.  Planes must be device memory of the context's device, inside one
 * allocation each; -EINVAL and a message otherwise, -ENOSYS on a backend
 * without device pictures.
 */
QUALE_API int quale_device_picture_copy(QualeContext *ctx, QualePicture *pic,
                                        const QualeDevicePlanes *src, void *cu_stream,
                                        unsigned flags);

/**
 * Decodes a compressed video on ctx's GPU: with the CUDA backend, by NVDEC
 * through FFmpeg's CUDA hwaccel in the backend's own CUDA context, so that
 * frames go from the decoder to the metrics without leaving the device.
 * Call it before the first quale_video_read(); from then on every picture
 * read must come from quale_context_alloc_device_picture(ctx) in the
 * video's format.  Returns 1 when the video decodes on the GPU, 0 when it
 * stays on the CPU (quale_video_error() says why: not compressed, not the
 * CUDA backend, a codec or format NVDEC lacks, a scaled or deepened
 * video, no NVDEC in the driver), or a negative errno.  The decoder then
 * holds memory of the context's CUDA context: close the reader before the
 * context.
 */
QUALE_API int quale_video_decode_on_gpu(QualeVideoReader *reader, QualeContext *ctx);

/**
 * Hands one frame pair to the context.  Frames are numbered 0, 1, ... in
 * the order they are sent.  The first pair fixes the format; both must
 * have the same format.  Work runs on the worker threads; the call blocks
 * only while too many frames are in flight, or while another thread's
 * call on the context takes its frame (calls from several threads take
 * turns; see "Threads" above).
 *
 * Ownership: the caller's structs are cleared, accepted or not.  A
 * reference-counted picture's reference passes to the context; a borrowed
 * picture is copied before the call returns (its memory is the caller's
 * again), and so is a counted one that is not laid out as
 * quale_picture_alloc() lays it out.  ref and dist may be the same struct
 * (one picture as both inputs); two different structs must each hold a
 * reference of their own (quale_picture_ref()).
 *
 * What is checked (-EINVAL and a message naming the picture and the
 * plane, nothing read): the format; plane_count and every plane's size
 * against the format; a data pointer for every plane; strides of at least
 * a row and at most 16 MiB whose rows stay inside the address space; and,
 * for a counted picture, that every row lies inside its buffer.  What
 * cannot be checked and is trusted: that borrowed memory holds the rows
 * the picture describes, and that a counted picture's buffer is one that
 * quale made.  A refused pair is not sent: the run goes on with the next.
 * Once the run has failed (a metric refused the format, say), every call
 * returns that error.
 */
QUALE_API int quale_send_pictures(QualeContext *ctx, QualePicture *ref,
                                  QualePicture *dist);

/** Waits for every frame sent, then runs the metrics' end-of-stream work
 *  and the models.  A value that is not a finite number (a model with
 *  absurd parameters) is logged as a warning naming the key and frames.
 *  Called while another thread sends, it waits for that frame to be
 *  taken; frames sent after it are refused. */
QUALE_API int quale_flush(QualeContext *ctx);

/**
 * Readies a flushed context for the next pair of videos, keeping what its
 * start cost: the requests (models, metrics), the worker threads, the
 * picture pools and the GPU backend's device state (its kernels or
 * pipelines and memory).  The results go (read or write them before);
 * frames are numbered from 0 again.  The next pair's pictures must have
 * the format of the first pair's (-EINVAL otherwise, as for any picture of
 * another format): a pair of another format needs a context of its own.
 * Requests cannot be changed.  -EINVAL before quale_flush() once frames
 * were sent.  After a run that failed, prefer a new context: a device
 * failure stays.
 */
QUALE_API int quale_reset(QualeContext *ctx);

/** The number of frames sent so far.  Thread-safe. */
QUALE_API unsigned quale_frame_count(const QualeContext *ctx);

/** Of the frames sent, those whose metrics have all finished (the others
 *  are in flight); for a progress display.  Thread-safe. */
QUALE_API unsigned quale_frames_done(const QualeContext *ctx);

/* ------------------------------------------------------------------------ */
/* Results (after quale_flush)                                               */
/* quale_feature_pooled() and quale_write_output() need a quale_flush() that
 * succeeded: before it they return -EBUSY (the frames in flight and the
 * models are not done), after a failed run that run's error, and write
 * nothing.  quale_feature_value() answers at any time for the frames done. */

enum QualePool {
    QUALE_POOL_MIN = 0,
    QUALE_POOL_MAX,
    QUALE_POOL_MEAN,
    QUALE_POOL_HARMONIC_MEAN,
};

/** The number of feature keys the run produced, in output order. */
QUALE_API unsigned quale_feature_count(const QualeContext *ctx);

/** The name of key i (valid until quale_close). */
QUALE_API const char *quale_feature_name(const QualeContext *ctx, unsigned i);

/** The value of key at frame; -ENOENT if not computed for that frame. */
QUALE_API int quale_feature_value(const QualeContext *ctx, const char *key,
                                  unsigned frame, double *value);

/** The key pooled over the scored frames, as libvmaf pools it. */
QUALE_API int quale_feature_pooled(const QualeContext *ctx, const char *key,
                                   enum QualePool method, double *value);

/** Pooling by name: "min", "max", "mean", "harmonic_mean" (libvmaf's), "pN"
 *  the N-th percentile of the frames (0 < N < 100, linear between the
 *  closest ranks), "lowN" the mean of the lowest N% of the frames (at least
 *  one): FFmpeg's pool= and the 1% and 5% lows ("p1", "low5").  N is
 *  written in decimal, one spelling per number ("p5", "p0.5", "p99.9"; not
 *  "p05", "p5.0", "p1e1" or "p0x10").  0 when method is one of them,
 *  -EINVAL when not. */
QUALE_API int quale_pool_method_check(const char *method);

/** The key pooled by a method of quale_pool_method_check() over the scored
 *  frames. */
QUALE_API int quale_feature_pooled_by(const QualeContext *ctx, const char *key,
                                      const char *method, double *value);

enum QualeOutputFormat {
    QUALE_OUTPUT_XML = 0,
    QUALE_OUTPUT_JSON,
    QUALE_OUTPUT_CSV,
    QUALE_OUTPUT_SUB,
};

/* One fact about how the inputs were read ("distorted_scaled": "1280x720
 * to 1920x1080, bicubic"), so that a score can be reproduced. */
typedef struct QualeOutputNote {
    const char *name;  /* an XML name: a letter or '_', then letters,
                        * digits, '_', '-', '.' */
    const char *value; /* UTF-8 text */
} QualeOutputNote;

typedef struct QualeOutputOptions {
    int precision;   /* < 0: full precision (%.17g); else digits after the
                      * point, with libvmaf's rule for tiny values */
    double fps;      /* wall-clock frames per second for the header */
    /* Written as an "input" object after "fps" in JSON and an <input>
     * element after <fyi> in XML (CSV and the subtitle layout have no
     * place for them).  With none, the files are libvmaf's layout
     * exactly. */
    const QualeOutputNote *notes;
    unsigned note_count;
    /* Frames [frame_first, frame_end) of the run are written and pooled;
     * both 0: every frame.  frame_number_offset is added to the frame
     * numbers written (a run that started later in the videos numbers its
     * frames as a whole run would). */
    unsigned frame_first, frame_end;
    unsigned frame_number_offset;
    /* Set: the file is one part of a run split in segments (JSON only, at
     * full precision, with a "segment" object), which
     * quale_results_merge() joins with the other parts. */
    const struct QualeSegment *segment;
    /* More pooled values of every key, written after libvmaf's four in
     * JSON and XML under their names: methods of quale_pool_method_check()
     * ("p1", "low5"); libvmaf's own four are not repeated. */
    const char *const *pool_methods;
    unsigned pool_method_count;
    /* Provenance: what produced the results (docs/output.md), written as a
     * "provenance" object after "input" in JSON and a <provenance> element
     * after <input> in XML, where libvmaf's readers do not look (CSV and
     * the subtitle layout stay libvmaf's).  describe_run: the library's
     * own records first: "quale" (version, build), "backend" (device,
     * threads, instruction sets), a "model" per model and a "feature" per
     * metric with its options; then the caller's records (the tool adds
     * its inputs and command line).  Both unset: no provenance.  (Added
     * after the fields above; a caller that zeroes the struct gets none.) */
    int describe_run;
    const struct QualeProvenanceRecord *provenance;
    unsigned provenance_count;
} QualeOutputOptions;

/* One record of a results file's provenance: a section ("quale",
 * "backend", "model", "feature", "input", "command", or the caller's
 * own) and its facts, in order.  Sections and fact names are XML names
 * (a letter or '_', then letters, digits, '_', '-', '.'), values UTF-8;
 * a record names a fact once.  Records of one section are written
 * together, in the order they first appear. */
typedef struct QualeProvenanceRecord {
    const char *section;
    const QualeOutputNote *facts;
    unsigned fact_count;
} QualeProvenanceRecord;

/* One of the parts of a run split in segments. */
typedef struct QualeSegment {
    unsigned part, parts;   /* this is part `part` (from 1) of `parts` */
    unsigned first, end;    /* the frames it writes, [first, end), numbered
                             * as in the whole run */
    unsigned range_first;   /* the first frame of the range split (0 unless
                             * the run was a range of the videos) */
    int precision;          /* the precision the merged file is written at
                             * by default (< 0: full) */
    const char *run;        /* what was run (inputs, models, features,
                             * options): the parts of one run say the same */
} QualeSegment;

/** Writes the results in libvmaf's layout.  Fails with -EIO (and a message)
 *  if the stream reports a write error.  Keys a layout cannot carry are
 *  refused before anything is written (-EINVAL): XML attribute names (a
 *  letter or '_', then letters, digits, '_', '-', '.'), '|', '{', '}' or
 *  control characters in the subtitle layout, other than UTF-8 in JSON;
 *  JSON and CSV escape the rest.  Values that are not finite numbers are
 *  null in JSON (as in libvmaf) and nan, inf, -inf in the other layouts. */
QUALE_API int quale_write_output(const QualeContext *ctx, FILE *stream,
                                 enum QualeOutputFormat format,
                                 const QualeOutputOptions *options);

/* ------------------------------------------------------------------------ */
/* Results read back                                                         */

/* A run's results read from its JSON file (quale's layout, or libvmaf's),
 * to merge parts or to write them again in another layout. */
typedef struct QualeResults QualeResults;

/** Reads results from the JSON text of a file (length bytes; name is for
 *  messages).  Non-finite values written as null read back as NaN.  On
 *  failure (-EINVAL: not a results file, with what is wrong and where in
 *  error; -ENOMEM) *results is NULL. */
QUALE_API int quale_results_read(QualeResults **results, const char *text, size_t length,
                                 const char *name, char *error, size_t error_size);

/** Joins the parts of a run split in segments (quale --segment K/N) into
 *  the results the whole run gives: every frame's values as they were
 *  written, pooled again over every frame.  The parts may come in any
 *  order; they must be every part of one run, each once.  -EINVAL with
 *  the parts named in error when one is missing, two overlap, or they
 *  are not of the same run. */
QUALE_API int quale_results_merge(QualeResults **merged, const QualeResults *const *parts,
                                  unsigned count, char *error, size_t error_size);

/** The precision a segment's run asked for (< 0: full precision); -1 for
 *  results that were not split. */
QUALE_API int quale_results_precision(const QualeResults *results);

/** The number of frames listed. */
QUALE_API unsigned quale_results_frame_count(const QualeResults *results);

/** The number of keys, and the name of key i in output order (valid until
 *  quale_results_close()). */
QUALE_API unsigned quale_results_key_count(const QualeResults *results);
QUALE_API const char *quale_results_key_name(const QualeResults *results, unsigned i);

/** The key pooled over the frames, as quale_feature_pooled() pools a run's
 *  (-ENOENT: no such key, or a frame without it). */
QUALE_API int quale_results_pooled(const QualeResults *results, const char *key,
                                   enum QualePool method, double *value);

/** The same by a method of quale_pool_method_check(). */
QUALE_API int quale_results_pooled_by(const QualeResults *results, const char *key,
                                      const char *method, double *value);

/** Where a results file's frames are: the frame numbers listed are first,
 *  first + step, ... (step: the run's --subsample), up to end. */
QUALE_API void quale_results_frames(const QualeResults *results, unsigned *first,
                                    unsigned *end, unsigned *step);

/** A listed frame's value of key: 0, or -ENOENT. */
QUALE_API int quale_results_value(const QualeResults *results, const char *key,
                                  unsigned frame, double *value);

/** The file's notes on its inputs (its "input" object), i from 0; NULL
 *  past the last.  Its version and fps (NaN: none). */
QUALE_API const QualeOutputNote *quale_results_note(const QualeResults *results, unsigned i);
QUALE_API const char *quale_results_version(const QualeResults *results);
QUALE_API double quale_results_fps(const QualeResults *results);

/** The file's provenance records (its "provenance" object), i from 0, in
 *  the order written; NULL past the last.  Merged results keep their
 *  parts' records: those every part has once, the others with a fact
 *  "parts" naming the parts that have them ("1, 3"). */
QUALE_API const QualeProvenanceRecord *quale_results_provenance(const QualeResults *results,
                                                                 unsigned i);

/** Writes results in a layout, as quale_write_output() writes a run's.
 *  From options: the precision and the pooling methods (NULL: the precision
 *  the split run asked for, libvmaf's pooling only); the notes, provenance,
 *  fps and frames are the results' own. */
QUALE_API int quale_results_write(const QualeResults *results, FILE *stream,
                                  enum QualeOutputFormat format,
                                  const QualeOutputOptions *options, char *error,
                                  size_t error_size);

QUALE_API void quale_results_close(QualeResults **results);

/* ------------------------------------------------------------------------ */
/* Metric catalogue                                                          */

enum QualeOptionType {
    QUALE_OPTION_BOOL = 0,
    QUALE_OPTION_INT,
    QUALE_OPTION_DOUBLE,
    QUALE_OPTION_CHOICE, /* one of a list of names (libvmaf's string options) */
    QUALE_OPTION_STRING, /* free text, e.g. a path; unset by default */
};

typedef struct QualeOptionInfo {
    const char *name;
    const char *help;
    enum QualeOptionType type;
    double default_value; /* bools as 0 / 1, choices as their index; 0 for
                           * strings, which have no default (unset) */
    double min, max;
    const char *const *choices; /* NULL-terminated, for QUALE_OPTION_CHOICE */
} QualeOptionInfo;

typedef struct QualeMetricInfo {
    const char *name;
    const char *const *keys;   /* NULL-terminated: every key it can write */
    unsigned option_count;
    unsigned backends;         /* bit (1 << QualeBackend) per twin built */
} QualeMetricInfo;

/** The number of metrics in the registry. */
QUALE_API unsigned quale_metric_count(void);
QUALE_API int quale_metric_info(unsigned index, QualeMetricInfo *info);
QUALE_API int quale_metric_option(unsigned index, unsigned option,
                                  QualeOptionInfo *info);

/** Whether a backend was built into this library (not whether a device is
 *  present). */
QUALE_API int quale_backend_built(enum QualeBackend backend);

/** The backend's name: "cpu", "cuda", "vulkan", "auto". */
QUALE_API const char *quale_backend_name(enum QualeBackend backend);

/* Devices of a GPU backend                                                  */

enum QualeDeviceType {
    QUALE_DEVICE_DISCRETE,   /* a GPU of its own */
    QUALE_DEVICE_INTEGRATED, /* a GPU sharing the CPU's memory */
    QUALE_DEVICE_VIRTUAL,    /* a GPU of a virtual machine */
    QUALE_DEVICE_SOFTWARE,   /* the CPU, through a software driver (lavapipe,
                              * SwiftShader): slower than the CPU backend */
    QUALE_DEVICE_OTHER,
};

typedef struct QualeDeviceInfo {
    enum QualeBackend backend;
    unsigned index;            /* QualeSettings.gpu_device, --gpu_device */
    enum QualeDeviceType type;
    char name[256];            /* the driver's name for it */
    uint64_t memory_bytes;     /* device memory (Vulkan: its device-local
                                * heaps); 0 when not known */
    int preferred;             /* the one opened when no index is given */
} QualeDeviceInfo;

/**
 * Lists the devices of a GPU backend: up to max into devices, and the
 * number there are into *count (which may be more than max; 0 when the
 * driver is there but has no device).  Returns 0, or a negative errno with
 * the reason in error: -ENOSYS when the backend is not built, -ENODEV or
 * -EIO when its driver cannot be loaded or started, -EINVAL for the CPU,
 * AUTO or a NULL count.
 */
QUALE_API int quale_list_devices(enum QualeBackend backend, QualeDeviceInfo *devices,
                                 unsigned max, unsigned *count, char *error,
                                 size_t error_size);

/** "discrete", "integrated", "virtual", "software" or "other". */
QUALE_API const char *quale_device_type_name(enum QualeDeviceType type);

#ifdef __cplusplus
}
#endif

#endif /* QUALE_QUALE_H */
