// SPDX-License-Identifier: MIT
/*
 * The lock-free tag stack under contention: threads take and give back
 * tags as fast as they can (singly and in groups, as split requests do);
 * a tag must never be held by two threads at once and none may be lost.
 */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "testutil.h"
#include "tags.h"

#define NR_TAGS 7
#define THREADS 4
#define ROUNDS 100000

static struct nvq_tags tags;
static uint32_t next[NR_TAGS];
static int owner[NR_TAGS];

static void take(int tag, int self)
{
	int expect = 0;

	CHECK(tag >= 0 && tag < NR_TAGS);
	if (!__atomic_compare_exchange_n(&owner[tag], &expect, self, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		fprintf(stderr,
			"tag %d handed to thread %d while %d holds it\n", tag,
			self, expect);
		exit(1);
	}
}

static void give(int tag, int self)
{
	CHECK_EQ(__atomic_exchange_n(&owner[tag], 0, __ATOMIC_ACQ_REL), self);
	nvq_tags_put(&tags, (uint32_t)tag);
}

static void *worker(void *arg)
{
	int self = (int)(intptr_t)arg, i, j;
	uint64_t seed = (uint64_t)self;

	for (i = 0; i < ROUNDS; i++) {
		int held[3], n = (int)(test_rand(&seed) % 3) + 1, got = 0;

		for (j = 0; j < n; j++) {
			int t = nvq_tags_get(&tags);

			if (t < 0)
				break;
			take(t, self);
			held[got++] = t;
		}
		for (j = 0; j < got; j++)
			give(held[j], self);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	int i, seen[NR_TAGS] = { 0 }, t;

	nvq_tags_init(&tags, next, NR_TAGS);
	for (i = 0; i < THREADS; i++)
		CHECK_OK(pthread_create(&th[i], NULL, worker,
					(void *)(intptr_t)(i + 1)));
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	/* Every tag is back, exactly once. */
	for (i = 0; i < NR_TAGS; i++) {
		t = nvq_tags_get(&tags);
		CHECK(t >= 0 && t < NR_TAGS);
		CHECK_EQ(seen[t]++, 0);
	}
	CHECK_EQ(nvq_tags_get(&tags), -1);
	printf("tags-stress: ok\n");
	return 0;
}
