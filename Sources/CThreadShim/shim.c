#define _GNU_SOURCE
#include "CThreadShim.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// struct sched_attr of include/uapi/linux/sched/types.h, up to the utilization clamps
// (SCHED_ATTR_SIZE_VER1, 56 bytes). Declared here because glibc 2.36 does not ship it.
struct scrolloff_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
    uint32_t sched_util_min;
    uint32_t sched_util_max;
};

// include/uapi/linux/sched.h
#define SCROLLOFF_SCHED_FLAG_RESET_ON_FORK 0x01ULL

static int read_attr(struct scrolloff_sched_attr *attr) {
    memset(attr, 0, sizeof *attr);
    if (syscall(SYS_sched_getattr, 0, attr, (unsigned int)sizeof *attr, 0u) != 0) return errno;
    return 0;
}

int scrolloff_set_fair_slice(unsigned long long nanoseconds) {
    struct scrolloff_sched_attr attr;
    int failed = read_attr(&attr);
    if (failed != 0) return failed;
    // Only the fair classes have a slice; a thread someone made real-time is left as it is.
    if (attr.sched_policy != SCHED_OTHER && attr.sched_policy != SCHED_BATCH) return EINVAL;
    attr.size = sizeof attr;
    // The utilization clamps read back are not set again (SCHED_FLAG_UTIL_CLAMP unset).
    // SCHED_FLAG_RESET_ON_FORK: a thread this one creates (a libdispatch worker started while a
    // loop resumes a continuation, say) would otherwise inherit the short slice, and list work
    // on it would be favoured like a loop. Setting the flag needs no privilege; clearing it does.
    attr.sched_flags = SCROLLOFF_SCHED_FLAG_RESET_ON_FORK;
    attr.sched_runtime = nanoseconds;
    if (syscall(SYS_sched_setattr, 0, &attr, 0u) != 0) return errno;
    return 0;
}

int scrolloff_set_idle_policy(void) {
    struct sched_param param = { .sched_priority = 0 };
    if (sched_setscheduler(0, SCHED_IDLE, &param) != 0) return errno;
    return 0;
}

int scrolloff_thread_is_idle_policy(void) {
    return sched_getscheduler(0) == SCHED_IDLE ? 1 : 0;
}

unsigned long long scrolloff_fair_slice(void) {
    struct scrolloff_sched_attr attr;
    if (read_attr(&attr) != 0) return 0;
    return attr.sched_runtime;
}

int scrolloff_affinity_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}

int scrolloff_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = '\0';
    return pthread_setname_np(pthread_self(), shortened);
}
