/*
 * Host memory for the pictures a GPU reads by DMA: mapped here, starting on
 * a huge page and taking huge pages where the kernel gives them, every page
 * present, so that the driver pins it (cuMemHostRegister, a Vulkan import
 * of host memory) in one pass.  The drivers' own pinned allocations are
 * slow: cuMemHostAlloc made 2 GB/s on the H200's host, where mapping here
 * and registering made a 4K run's 48 pictures about 2x faster to score
 * (docs/benchmarks.md, "The tool against the engine").
 */
#ifndef QUALE_SRC_HOST_PAGES_H
#define QUALE_SRC_HOST_PAGES_H

#include <stdbool.h>
#include <stddef.h>

/* A huge page: blocks of at least this start on one. */
#define HOST_PAGES_HUGE ((size_t)2 << 20)

/* At least size bytes, starting on a multiple of alignment (the page size
 * at least, a divisor of HOST_PAGES_HUGE); *mapped says how many, a
 * multiple of alignment and of the page size.  NULL when the system has
 * none. */
void *host_pages_map(size_t size, size_t alignment, size_t *mapped);
void host_pages_unmap(void *p, size_t mapped);

/* False where QUALE_HOST_PAGES=driver asks the backends to take their
 * drivers' own pinned memory instead, to compare. */
bool host_pages_wanted(void);

#endif /* QUALE_SRC_HOST_PAGES_H */
