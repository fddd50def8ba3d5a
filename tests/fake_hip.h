/*
 * What the fake HIP runtime (tests/fake_hip.c) records, read back by
 * test_hip_api through fake_hip_log().
 */
#ifndef QUALE_TESTS_FAKE_HIP_H
#define QUALE_TESTS_FAKE_HIP_H

#include <stddef.h>

typedef struct FakeHipLog {
    int attributes[16]; /* hipDeviceGetAttribute's attribute numbers, in order */
    unsigned attribute_count;
    unsigned host_flags, stream_flags, event_flags;
    /* hipHostRegister: the last flags and size, and the blocks registered now */
    unsigned register_flags, registered;
    size_t register_bytes;
    const void *images[64]; /* hipModuleLoadData's images */
    unsigned image_count;
    char functions[64][64];
    unsigned function_count;
    unsigned launches;
    unsigned grid[3], block[3], shared;
    void **params;
    void *current_context;
} FakeHipLog;

FakeHipLog *fake_hip_log(void);

#endif /* QUALE_TESTS_FAKE_HIP_H */
