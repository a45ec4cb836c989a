/* SPDX-License-Identifier: MIT */
/*
 * Command ids of one queue.
 *
 * Free tags live in a lock-free LIFO stack (a Treiber stack) so that any
 * submitter can take tags before it takes sq_lock, and any completer can
 * give them back after it dropped cq_lock, without either side touching the
 * other's lock. The head word carries a 32-bit modification count beside
 * the top tag so that a pop racing with pop+push of the same tag (ABA)
 * fails its compare-and-swap. LIFO also keeps the hottest command contexts
 * in cache.
 *
 * The command id on the wire is (generation << tag_bits) | tag: the
 * generation changes each time a tag is handed out, so a late or duplicated
 * CQE for an earlier use of a tag does not match the command now holding
 * it. CID 0xFFFF is never used (the Error Information log uses it to mean
 * "no command").
 */
#ifndef NVQ_TAGS_H
#define NVQ_TAGS_H

#include <stdint.h>

struct nvq_tags {
	uint64_t head; /* count << 32 | (top tag + 1); low half 0 = empty */
	uint32_t *next; /* next[tag] = tag below it + 1, 0 = bottom */
	uint32_t nr; /* tags 0 .. nr - 1 */
};

/*
 * Set up @nr tags (1..65535), all free. @next must hold @nr entries.
 * Not thread-safe; call before the queue is used.
 */
static inline void nvq_tags_init(struct nvq_tags *tags, uint32_t *next,
				 uint32_t nr)
{
	uint32_t i;

	tags->next = next;
	tags->nr = nr;
	/* Tag 0 on top: low tags are handed out first. */
	for (i = 0; i < nr; i++)
		next[i] = i + 2 <= nr ? i + 2 : 0;
	tags->head = nr ? 1 : 0;
}

/* Take a free tag; -1 when none is free. Lock-free, any thread. */
static inline int nvq_tags_get(struct nvq_tags *tags)
{
	uint64_t old = __atomic_load_n(&tags->head, __ATOMIC_ACQUIRE);
	uint64_t new;
	uint32_t top;

	do {
		top = (uint32_t)old;
		if (!top)
			return -1;
		new = ((old >> 32) + 1) << 32 |
		      __atomic_load_n(&tags->next[top - 1], __ATOMIC_RELAXED);
	} while (!__atomic_compare_exchange_n(
		&tags->head, &old, new, 1, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE));
	return (int)(top - 1);
}

/*
 * Give @tag back. Release semantics: everything the caller wrote to the
 * tag's command context is visible to the next thread that takes the tag.
 */
static inline void nvq_tags_put(struct nvq_tags *tags, uint32_t tag)
{
	uint64_t old = __atomic_load_n(&tags->head, __ATOMIC_RELAXED);
	uint64_t new;

	do {
		__atomic_store_n(&tags->next[tag], (uint32_t)old,
				 __ATOMIC_RELAXED);
		new = ((old >> 32) + 1) << 32 | (tag + 1);
	} while (!__atomic_compare_exchange_n(
		&tags->head, &old, new, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Number of bits the tag part of a CID needs for @nr tags. */
static inline unsigned int nvq_tag_bits(uint32_t nr)
{
	return nr <= 2 ? 1 : 32 - (unsigned int)__builtin_clz(nr - 1);
}

#endif /* NVQ_TAGS_H */
