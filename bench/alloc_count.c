/*
 * Allocation counter for the benchmarks, loaded with LD_PRELOAD by bench/*.sh.
 *
 * Every allocation entry point of glibc (malloc, calloc, realloc, posix_memalign, aligned_alloc,
 * memalign, valloc) is counted and forwarded to glibc's own exported implementation (__libc_*),
 * so no dlsym bootstrapping is needed. The benchmark reads the count through
 * scrolloff_alloc_count(), found with dlsym at run time; without the preload it reports that the
 * count is unavailable instead of pretending it is zero.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static uint64_t allocations;

static inline void count(void) { __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED); }

uint64_t scrolloff_alloc_count(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }

void *malloc(size_t n) { count(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { count(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { count(); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t align, size_t n) { count(); return __libc_memalign(align, n); }
void *aligned_alloc(size_t align, size_t n) { count(); return __libc_memalign(align, n); }
void *valloc(size_t n) { count(); return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n); }

int posix_memalign(void **out, size_t align, size_t n) {
    count();
    void *p = __libc_memalign(align, n);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}
