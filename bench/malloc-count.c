/*
 * Counts calls to the C allocator, for bench/matcher.sh (LD_PRELOAD). The matcher benchmark reads
 * the count before and after its lookup loop through scrolloff_malloc_calls() (found with dlsym),
 * so "0 allocations per lookup" is a measured number, not a claim.
 *
 * Limits: it sees calls that go through the dynamic symbols malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, memalign and valloc, which is how the Swift runtime allocates
 * (swift_slowAlloc). Memory taken straight from mmap, or allocator calls made inside glibc through
 * its private aliases, are not counted; neither happens on the lookup path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);

static _Atomic uint64_t calls;

uint64_t scrolloff_malloc_calls(void) { return calls; }

void *malloc(size_t size) { calls++; return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { calls++; return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { calls++; return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { calls++; return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { calls++; return __libc_memalign(alignment, size); }
void *valloc(size_t size) { calls++; return __libc_valloc(size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    calls++;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
