#pragma once
// Thread scheduling calls that Swift cannot make directly: glibc has no wrapper for
// sched_setattr(2)/sched_getattr(2) (reached through the variadic syscall(2), which Swift cannot
// call), and CPU_COUNT and pthread_setname_np are macros or _GNU_SOURCE declarations that the
// Glibc module does not import.

#ifdef __cplusplus
extern "C" {
#endif

/// Asks the kernel to give the calling thread a time slice of `nanoseconds` under the fair class
/// (sched_setattr(2), `sched_runtime` of a SCHED_OTHER thread; Linux 6.12 and later honour it,
/// from 100 µs to 100 ms). The thread's policy and nice value are read first and kept; threads it
/// creates start with the default slice (SCHED_FLAG_RESET_ON_FORK). Returns 0, or the errno of the
/// failed call.
int scrolloff_set_fair_slice(unsigned long long nanoseconds);

/// Moves the calling thread to SCHED_IDLE (sched(7)): it weighs 3 against a nice-0 thread's 1024,
/// so it gets a sliver of a core other threads keep busy, and a waking ordinary thread preempts it
/// at once (the kernel's fair scheduler). Returns 0 or an errno.
int scrolloff_set_idle_policy(void);

/// 1 if the calling thread runs under SCHED_IDLE, else 0.
int scrolloff_thread_is_idle_policy(void);

/// The calling thread's fair-class time slice in nanoseconds as the kernel reports it
/// (sched_getattr(2)); 0 when the kernel has no per-thread slice or the call fails.
unsigned long long scrolloff_fair_slice(void);

/// The number of CPUs in the calling thread's affinity mask (sched_getaffinity(2), as `taskset`
/// and systemd's CPUAffinity= set it); 0 if it cannot be read.
int scrolloff_affinity_cpu_count(void);

/// Names the calling thread (at most 15 bytes are kept), as `ps -L`, `top -H` and `perf sched`
/// show it. Returns 0 or an errno.
int scrolloff_name_thread(const char *name);

#ifdef __cplusplus
}
#endif
