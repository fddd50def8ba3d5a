#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host_pages.h"

void *host_pages_map(size_t size, size_t alignment, size_t *mapped)
{
    const long page_size = sysconf(_SC_PAGESIZE);
    const size_t page = page_size > 0 ? (size_t)page_size : 4096;
    const size_t unit = alignment > page ? alignment : page;
    if (size == 0 || size > SIZE_MAX / 2 || unit > HOST_PAGES_HUGE || HOST_PAGES_HUGE % unit)
        return NULL;
    const size_t bytes = (size + unit - 1) / unit * unit;
    /* Large blocks start on a huge page, so that all but their last part
     * can be huge pages; the last is small pages, nothing is wasted. */
    const size_t start = bytes >= HOST_PAGES_HUGE ? HOST_PAGES_HUGE : unit;
    uint8_t *area = mmap(NULL, bytes + start, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
    if (area == MAP_FAILED) return NULL;
    const size_t lead = (start - (uintptr_t)area % start) % start;
    if (lead) munmap(area, lead);
    if (start - lead) munmap(area + lead + bytes, start - lead);
    uint8_t *p = area + lead;
#ifdef MADV_HUGEPAGE
    if (bytes >= HOST_PAGES_HUGE) madvise(p, bytes, MADV_HUGEPAGE); /* a hint: small pages work too */
#endif
    /* Every page present before a driver pins them (one fault a huge page
     * where the kernel gave them). */
    for (size_t at = 0; at < bytes; at += page) ((volatile uint8_t *)p)[at] = 0;
    *mapped = bytes;
    return p;
}

void host_pages_unmap(void *p, size_t mapped)
{
    if (p) munmap(p, mapped);
}

bool host_pages_wanted(void)
{
    const char *how = getenv("QUALE_HOST_PAGES");
    return !(how && !strcmp(how, "driver"));
}
