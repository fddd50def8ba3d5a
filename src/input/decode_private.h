/*
 * The decoder's internals, shared by its files (FFmpeg's builds only):
 * decode.c (FFmpeg's functions, opening, reading, delivering frames),
 * decode_gpu.c (NVDEC), decode_demux.c (a demuxer of its own: the frame
 * count, NVDEC's probe), decode_sessions.c (several sessions at once).
 */
#ifndef QUALE_SRC_INPUT_DECODE_PRIVATE_H
#define QUALE_SRC_INPUT_DECODE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "gpu/gpu.h"
#include "reader.h"
#include "scale.h"

#define IO_BUFFER_SIZE (1 << 16)

/* FFmpeg's functions, loaded at the first compressed file (decode.c:
 * ff_load(), in the order of ff_libraries). */
struct FFmpegFunctions {
    AVFormatContext *(*avformat_alloc_context)(void);
    int (*avformat_open_input)(AVFormatContext **, const char *, const AVInputFormat *, AVDictionary **);
    int (*avformat_find_stream_info)(AVFormatContext *, AVDictionary **);
    int (*av_find_best_stream)(AVFormatContext *, enum AVMediaType, int, int, const AVCodec **, int);
    void (*avformat_close_input)(AVFormatContext **);
    int (*av_read_frame)(AVFormatContext *, AVPacket *);
    int (*avformat_index_get_entries_count)(const AVStream *);
    const AVIndexEntry *(*avformat_index_get_entry)(AVStream *, int);
    AVIOContext *(*avio_alloc_context)(unsigned char *, int, int, void *, int (*)(void *, uint8_t *, int), int (*)(void *, uint8_t *, int), int64_t (*)(void *, int64_t, int));
    void (*avio_context_free)(AVIOContext **);
    AVCodecContext *(*avcodec_alloc_context3)(const AVCodec *);
    int (*avcodec_parameters_to_context)(AVCodecContext *, const AVCodecParameters *);
    int (*avcodec_open2)(AVCodecContext *, const AVCodec *, AVDictionary **);
    void (*avcodec_free_context)(AVCodecContext **);
    int (*avcodec_send_packet)(AVCodecContext *, const AVPacket *);
    int (*avcodec_receive_frame)(AVCodecContext *, AVFrame *);
    void (*avcodec_flush_buffers)(AVCodecContext *);
    const AVCodec *(*avcodec_find_decoder_by_name)(const char *);
    AVPacket *(*av_packet_alloc)(void);
    void (*av_packet_free)(AVPacket **);
    void (*av_packet_unref)(AVPacket *);
    const AVCodecHWConfig *(*avcodec_get_hw_config)(const AVCodec *, int);
    void (*av_log_set_level)(int);
    void *(*av_malloc)(size_t);
    void (*av_free)(void *);
    void (*av_freep)(void *);
    int (*av_strerror)(int, char *, size_t);
    AVFrame *(*av_frame_alloc)(void);
    void (*av_frame_free)(AVFrame **);
    void (*av_frame_unref)(AVFrame *);
    void (*av_frame_move_ref)(AVFrame *, AVFrame *);
    int (*av_frame_get_buffer)(AVFrame *, int);
    AVFrameSideData *(*av_frame_get_side_data)(const AVFrame *, enum AVFrameSideDataType);
    const AVPixFmtDescriptor *(*av_pix_fmt_desc_get)(enum AVPixelFormat);
    AVBufferRef *(*av_hwdevice_ctx_alloc)(enum AVHWDeviceType);
    int (*av_hwdevice_ctx_init)(AVBufferRef *);
    AVBufferRef *(*av_buffer_ref)(const AVBufferRef *);
    void (*av_buffer_unref)(AVBufferRef **);
    struct SwsContext *(*sws_getCachedContext)(struct SwsContext *, int, int, enum AVPixelFormat, int, int, enum AVPixelFormat, int, SwsFilter *, SwsFilter *, const double *);
    int (*sws_scale)(struct SwsContext *, const uint8_t *const[], const int[], int, int, uint8_t *const[], const int[]);
    void (*sws_freeContext)(struct SwsContext *);
};
extern struct FFmpegFunctions ff;

/* Loads ff (once): NULL, or why the libraries could not be loaded. */
const char *ffmpeg_load(void);
/* The planar little-endian layout of a quale format (NONE: no such). */
enum AVPixelFormat ffmpeg_layout_of(const QualeVideoFormat *f);
/* Whether quale reads a layout as it is: planar YUV or gray, one sample
 * per element, little-endian, 8 to 16 bits. */
bool ffmpeg_readable_as_is(const AVPixFmtDescriptor *d);

/* quale_video_set_size()'s swscale context (scaler_open()). */
struct Scaler {
    struct SwsContext *sws;
    enum AVPixelFormat pix_fmt;
    char name[16];
};

struct Decoder {
    AVFormatContext *format;
    AVIOContext *io;
    AVCodecContext *codec;
    int stream;
    AVPacket *packet;
    AVFrame *frame;
    bool draining;
    bool seekable; /* a regular file */
    /* Conversion of a layout quale does not read to planar YUV. */
    struct SwsContext *sws;
    enum AVPixelFormat target;
    AVFrame *converted;
    char description[160]; /* "h264 in mov,mp4,m4a,3gp,3g2,mj2" */
    /* Decoding on the GPU (decoder_use_gpu()): frames stay in device
     * memory and go into the context's device pictures. */
    AVBufferRef *hw_device;
    GpuImporter gpu; /* gpu.ops set: decoding on the GPU */
    unsigned gpu_bytes, gpu_shift;
    /* A scaled or deepened video resamples on the GPU as it is imported:
     * the plan of the CPU's swscale arithmetic, and the backend's copy of
     * its tables. */
    ScalePlan *gpu_scale;
    void *gpu_scale_state;
    /* Several decoding sessions over the file at once (parallel_start(),
     * tried at the first read). */
    struct Parallel *parallel;
    bool parallel_checked;
};

/* FFmpeg's text for an error, in buf. */
const char *error_text(int err, char *buf, size_t size);

/* decode.c: a frame's size against the video's (-EPROTO, said, when it
 * changed); a decoded frame into pic (NULL: dropped), on the host or the
 * GPU. */
int check_frame_size(struct QualeVideoReader *r, const AVFrame *f);
int deliver_frame(struct QualeVideoReader *r, const AVFrame *f, QualePicture *pic);

/* decode_gpu.c: a frame NVDEC decoded into the device picture pic. */
int gpu_frame(struct QualeVideoReader *r, const AVFrame *f, QualePicture *pic);

/* decode_demux.c: reading a file through a position of one's own (pread),
 * so that several demuxers share one descriptor; and such a demuxer. */
int cursor_read(int fd, int64_t *position, uint8_t *buf, int size);
int64_t cursor_seek(int fd, int64_t *position, int64_t offset, int whence);

struct PrivateDemuxer {
    int fd;
    int64_t position;
    AVIOContext *io;
    AVFormatContext *format;
    AVPacket *packet;
};
/* 0, or -1 (close it all the same) when the file cannot be opened or has
 * no stream `stream`. */
int private_demuxer_open(struct PrivateDemuxer *m, int fd, int stream);
void private_demuxer_close(struct PrivateDemuxer *m);

/* decode_sessions.c: several decoding sessions over one file. */
void parallel_stop(struct Decoder *d);
int parallel_start(struct QualeVideoReader *r);
int parallel_read(struct QualeVideoReader *r, QualePicture *pic);

#endif /* QUALE_SRC_INPUT_DECODE_PRIVATE_H */
