/*
 * Fuzz target: compressed input, FFmpeg's demuxers and decoders behind
 * quale's reader (src/input/decode.c), on any bytes.
 *
 * The input is a file (a memfd, so that it can seek, as an MP4 needs) read
 * without raw flags: sniffed, then decoded (or read as YUV4MPEG2, or
 * refused).  For any input:
 *  - open either succeeds with a format quale scores, or fails with a
 *    negative errno and a printable message naming the input;
 *  - reads return 1, 0 or a negative errno; after 0 they return 0 again,
 *    after an error the same error again, with a printable message;
 *  - a frame fills the picture of the reader's format (the sanitizers
 *    watch the writes);
 *  - at most FUZZ_FRAMES frames are read, so that a long stream costs
 *    little.
 * Without a decoder (a build without FFmpeg's headers, or a machine
 * without its libraries) the same holds: compressed input is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "quale/quale.h"

#define FUZZ_FRAMES 4
#define FUZZ_MAX_PICTURE_BYTES ((uint64_t)8 << 20)

int quale_fuzz_decode(const uint8_t *data, size_t size)
{
    char path[64];
    const int fd = fuzz_memfd(data, size, path, sizeof(path));
    if (fd < 0) return 0;
    QualeVideoReader *r = NULL;
    char error[1024] = "";
    const int err = quale_video_open(&r, path, NULL, error, sizeof(error));
    if (err) {
        FUZZ_CHECK(err < 0 && r == NULL && fuzz_printable(error) &&
                   !strncmp(error, path, strlen(path)));
        close(fd);
        return 0;
    }
    QualeVideoFormat f;
    quale_video_get_format(r, &f);
    char why[256];
    FUZZ_CHECK(quale_video_format_check(&f, why, sizeof(why)) == 0);
    const uint64_t bytes = (uint64_t)f.width * f.height * 3 * (f.bitdepth > 8 ? 2 : 1);
    QualePicture pic;
    const int have_pic = bytes <= FUZZ_MAX_PICTURE_BYTES && quale_picture_alloc(&pic, &f) == 0;
    int ret = 1;
    for (unsigned i = 0; i < FUZZ_FRAMES && ret == 1; i++)
        ret = have_pic && i % 2 == 0 ? quale_video_read(r, &pic) : quale_video_skip(r, 1);
    FUZZ_CHECK(ret == 1 || ret == 0 || ret < 0);
    if (ret <= 0) {
        /* The end and errors stick. */
        FUZZ_CHECK(quale_video_skip(r, 1) == ret);
        if (ret < 0) FUZZ_CHECK(fuzz_printable(quale_video_error(r)));
    }
    if (have_pic) quale_picture_unref(&pic);
    quale_video_close(&r);
    close(fd);
    return 0;
}

FUZZ_TARGET(quale_fuzz_decode)
