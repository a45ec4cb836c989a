/* SPDX-License-Identifier: MIT */
/* Helpers shared by the driver's files. Not installed. */
#ifndef NVQ_INTERNAL_H
#define NVQ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define NVQ_CACHELINE 64
#define __cacheline_aligned __attribute__((aligned(NVQ_CACHELINE)))

#define NVQ_PAGE_SIZE 4096u
#define NVQ_PAGE_SHIFT 12

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a) (((x) + ((a)-1)) & ~((__typeof__(x))(a)-1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a)-1))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/*
 * Record a message for the calling thread (see nvq_errmsg()) and return
 * @err, so that error paths read "return nvq_err(-EINVAL, "...", ...);".
 */
int nvq_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Clear the calling thread's message. */
void nvq_err_clear(void);

/* Copy the calling thread's message to @buf, to quote it in a wider one. */
const char *nvq_errmsg_copy(char *buf, size_t len);

/* Sleep about @us microseconds (bring-up and admin back-off only). */
void nvq_sleep_us(unsigned int us);

/* Number of NUMA nodes with memory (>= 1) and the node of @cpu (0 if not
 * known). Read once from sysfs. */
int nvq_numa_nodes(void);
int nvq_cpu_node(int cpu);

/* Monotonic time in nanoseconds. Not for the hot path. */
uint64_t nvq_now_ns(void);

#endif /* NVQ_INTERNAL_H */
