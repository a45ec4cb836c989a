// SPDX-License-Identifier: MIT
/* The contended halves of the futex lock in lock.h. */
#include <linux/futex.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"

#define LOCK_SPIN 128

void nvq_lock_slow(uint32_t *l)
{
	uint32_t c;
	int i;

	for (i = 0; i < LOCK_SPIN; i++) {
		cpu_relax();
		c = NVQ_LOCK_FREE;
		if (__atomic_load_n(l, __ATOMIC_RELAXED) == NVQ_LOCK_FREE &&
		    __atomic_compare_exchange_n(l, &c, NVQ_LOCK_HELD, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
	}
	/* Taken as "maybe sleepers": the unlock then wakes one. */
	while (__atomic_exchange_n(l, NVQ_LOCK_SLEEPERS, __ATOMIC_ACQUIRE) !=
	       NVQ_LOCK_FREE)
		syscall(SYS_futex, l, FUTEX_WAIT_PRIVATE, NVQ_LOCK_SLEEPERS,
			NULL, NULL, 0);
}

void nvq_unlock_wake(uint32_t *l)
{
	syscall(SYS_futex, l, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
