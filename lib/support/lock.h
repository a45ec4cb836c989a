/* SPDX-License-Identifier: MIT */
/*
 * The driver's lock: a futex word, the classic three-state mutex (free,
 * held, held with possible sleepers). Taking and dropping a free lock is
 * one atomic instruction each; a glibc adaptive mutex costs ~75
 * instructions for the pair, which the queues would pay per command (see
 * docs/perf.md). Under contention it spins briefly first - the sections it
 * guards (SQ copy + doorbell, CQ reap, a pool's free list) are a few
 * stores long, so the spin almost always resolves it - and then sleeps, so
 * a preempted holder does not make waiters burn a time slice on machines
 * with more threads than CPUs.
 */
#ifndef NVQ_LOCK_H
#define NVQ_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

#define NVQ_LOCK_FREE 0u
#define NVQ_LOCK_HELD 1u
#define NVQ_LOCK_SLEEPERS 2u

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* The contended paths, out of line. */
void nvq_lock_slow(uint32_t *l);
void nvq_unlock_wake(uint32_t *l);

/* Take @l (a zero-initialised uint32_t). */
static inline void nvq_lock(uint32_t *l)
{
	uint32_t c = NVQ_LOCK_FREE;

	if (likely(__atomic_compare_exchange_n(l, &c, NVQ_LOCK_HELD, false,
					       __ATOMIC_ACQUIRE,
					       __ATOMIC_RELAXED)))
		return;
	nvq_lock_slow(l);
}

/* Drop @l; wakes one sleeper if there may be any. */
static inline void nvq_unlock(uint32_t *l)
{
	if (unlikely(__atomic_exchange_n(l, NVQ_LOCK_FREE, __ATOMIC_RELEASE) ==
		     NVQ_LOCK_SLEEPERS))
		nvq_unlock_wake(l);
}

#endif /* NVQ_LOCK_H */
