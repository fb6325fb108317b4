// How long a thread woken from another core waits for its own core while a neighbour thread on
// that core works at low priority (SPEC §9.10: "a list refresh never stalls answers").
//
// A reader thread on CPU 0 blocks on a pipe; a writer on CPU 1 writes a timestamp every 1 ms; the
// reader records how late it ran. Meanwhile a neighbour on CPU 0 (SCHED_IDLE or nice 10) does one
// kind of work:
//   spin     a loop in user space (no system calls, no page faults)
//   touch    rewrites 64 MiB it already has (no page faults)
//   churn    malloc(64 MiB), fill, free, again: pages faulted in and handed back in one go
//   release  mmap 64 MiB, fill, give the pages back with madvise(MADV_DONTNEED) in CHUNK_KIB
//            steps, munmap, again
// A kernel built with PREEMPT_NONE preempts a thread only in user space or where the kernel offers
// to, whatever its scheduling class, so work done in the kernel (handing back tens of MB of pages)
// holds the core for as long as one call lasts.
//
// Usage: wakeup_probe none|spin|touch|churn|release idle|nice10 [CHUNK_KIB]
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { samples = 2000, region = 64 << 20 };
static int fds[2];
static volatile int stop;
static const char *work;
static int idle_class;
static size_t chunk = 1 << 20;

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *neighbour(void *unused) {
    (void)unused;
    pin(0);
    if (idle_class) {
        struct sched_param p = {0};
        sched_setscheduler(0, SCHED_IDLE, &p);
    } else {
        setpriority(PRIO_PROCESS, 0, 10);
    }
    if (!strcmp(work, "spin")) {
        volatile unsigned long x = 0;
        while (!stop) x++;
    } else if (!strcmp(work, "touch")) {
        char *p = malloc(region);
        while (!stop) memset(p, 1, region);
        free(p);
    } else if (!strcmp(work, "churn")) {
        while (!stop) {
            char *p = malloc(region);
            memset(p, 1, region);
            free(p);
        }
    } else if (!strcmp(work, "release")) {
        while (!stop) {
            char *p = mmap(0, region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) break;
            memset(p, 1, region);
            for (size_t at = 0; at < region; at += chunk) madvise(p + at, chunk < region - at ? chunk : region - at, MADV_DONTNEED);
            munmap(p, region);
        }
    }
    return 0;
}

static void *writer(void *unused) {
    (void)unused;
    pin(1);
    for (int i = 0; i < samples; i++) {
        usleep(1000);
        long t = now_ns();
        if (write(fds[1], &t, sizeof t) != sizeof t) break;
    }
    long end = 0;
    if (write(fds[1], &end, sizeof end) != sizeof end) return 0;
    return 0;
}

static int compare(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s none|spin|touch|churn|release idle|nice10 [CHUNK_KIB]\n", argv[0]);
        return 2;
    }
    work = argv[1];
    idle_class = !strcmp(argv[2], "idle");
    if (argc > 3) chunk = (size_t)atol(argv[3]) << 10;
    if (chunk == 0) chunk = region;
    if (pipe(fds)) return 1;
    pin(0);
    pthread_t n, w;
    if (strcmp(work, "none")) pthread_create(&n, 0, neighbour, 0);
    usleep(100000);
    pthread_create(&w, 0, writer, 0);
    static long late[samples];
    int count = 0;
    for (;;) {
        long t;
        if (read(fds[0], &t, sizeof t) != sizeof t || !t) break;
        if (count < samples) late[count++] = now_ns() - t;
    }
    stop = 1;
    qsort(late, count, sizeof late[0], compare);
    printf("%-8s %-7s chunk %6zu KiB: woken thread late p50 %5ld µs  p99 %5ld µs  max %6ld µs  (%d wake-ups)\n",
           work, argv[2], chunk >> 10, late[count / 2] / 1000, late[count * 99 / 100] / 1000, late[count - 1] / 1000, count);
    return 0;
}
