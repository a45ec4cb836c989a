// SPDX-License-Identifier: MIT
/*
 * Threads allocating and freeing from shared pools at once: no block is
 * handed to two owners (each owner stamps its blocks and checks the stamp
 * before freeing), the limit holds while several threads race to grow the
 * pool, and the counters return to zero.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dmapool.h"
#include "mem.h"
#include "stub_iommu.h"

#define THREADS 4
#define ROUNDS 30000
#define HOLD 24 /* blocks a thread holds at most */
#define LIMIT 70 /* < THREADS * HOLD: exhaustion happens */

struct stamp {
	uint64_t owner, serial, iova;
};

struct worker {
	pthread_t tid;
	unsigned int id;
	struct nvq_dmapool *pool;
	unsigned int limit; /* in_use may never exceed this */
	unsigned long failed; /* allocations that found the pool dry */
	int bad; /* a stamp was not ours */
};

static void *work(void *arg)
{
	struct worker *w = arg;
	void *held[HOLD];
	uint64_t io[HOLD], serial = 0;
	unsigned int seed = w->id * 7919 + 1, n = 0, r, i;

	for (r = 0; r < ROUNDS; r++) {
		/* Grow or shrink the held set by a random step. */
		if (n < HOLD && (n == 0 || rand_r(&seed) % 2)) {
			void *b = nvq_dmapool_alloc(w->pool, &io[n]);
			struct stamp *s = b;

			if (!b) {
				w->failed++;
				continue;
			}
			s->owner = w->id;
			s->serial = ++serial;
			s->iova = io[n];
			held[n++] = b;
		} else {
			struct stamp *s;

			i = rand_r(&seed) % n;
			s = held[i];
			if (s->owner != w->id || s->iova != io[i])
				w->bad = 1;
			s->owner = ~0ull;
			nvq_dmapool_free(w->pool, held[i], io[i]);
			held[i] = held[--n];
			io[i] = io[n];
		}
		if (nvq_dmapool_in_use(w->pool) > w->limit)
			w->bad = 1;
	}
	while (n) {
		n--;
		nvq_dmapool_free(w->pool, held[n], io[n]);
	}
	return NULL;
}

static void run(struct nvq_dmapool *pool, int limited)
{
	struct worker w[THREADS];
	unsigned long failed = 0;
	unsigned int i;

	for (i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i + 1;
		w[i].pool = pool;
		w[i].limit = limited ? LIMIT : THREADS * HOLD;
		CHECK_EQ(pthread_create(&w[i].tid, NULL, work, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		CHECK_EQ(pthread_join(w[i].tid, NULL), 0);
		CHECK_EQ(w[i].bad, 0);
		failed += w[i].failed;
	}
	CHECK_EQ(nvq_dmapool_in_use(pool), 0);
	if (limited) {
		CHECK(nvq_dmapool_capacity(pool) <= LIMIT);
	} else {
		/* Grown only when dry, a chunk at a time, never twice for
		 * one shortage. */
		CHECK_EQ(failed, 0);
		CHECK_EQ(nvq_dmapool_capacity(pool) % 16, 0);
		CHECK(nvq_dmapool_capacity(pool) <= THREADS * HOLD);
	}
}

int main(void)
{
	struct nvq_transport *t = stub_transport_create();
	struct nvq_dmapool *limited, *open;
	struct nvq_mem *mem;

	CHECK_EQ(nvq_mem_create(t, &mem), 0);
	/* 4 KiB blocks: 16 per chunk, so threads race to grow it. */
	limited = nvq_dmapool_create(mem, "stress-lim", 4096, LIMIT, 0);
	open = nvq_dmapool_create(mem, "stress", 4096, 0, 0);
	CHECK(limited && open);

	run(limited, 1);
	run(open, 0);

	nvq_dmapool_destroy(limited);
	nvq_dmapool_destroy(open);
	nvq_mem_destroy(mem);
	CHECK_EQ(stub_mappings(t), 0);
	CHECK_EQ(stub_errors(t), 0);
	stub_transport_destroy(t);
	return 0;
}
