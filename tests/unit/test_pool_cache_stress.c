// SPDX-License-Identifier: MIT
/*
 * A queue's cache under threads, as a shared queue uses it: several
 * submitters build PRP lists at once (one gets the cache, the others
 * bypass it to the pool), completers on other threads free them onto the
 * cache's stack, and submitters free some themselves (a submission that
 * failed). Then an exclusive queue's: one allocator, several freers. Each
 * block is stamped by its owner and checked before it is freed, so a
 * block handed to two owners is found; at the end every block is back in
 * the pools. Run under ThreadSanitizer in the concurrency suite.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dmapool.h"
#include "internal.h"
#include "mem.h"
#include "prp.h"
#include "stub_iommu.h"

#define SUBMITTERS 3
#define COMPLETERS 2
#define ROUNDS 20000
#define RING 64

/* After the 16 bytes a free block uses for its list link. */
struct stamp {
	uint64_t link[2];
	uint64_t owner, serial;
};

/* What the "device" hands a completer: a command's lists and stamp. */
struct item {
	struct nvq_prp_lists l;
	uint64_t owner, serial;
};

struct ring {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item it[RING];
	unsigned int head, tail;
	bool done;
};

static struct nvq_transport *t;
static struct nvq_mem *mem;
static struct nvq_pools qpools; /* the queue's copy, with its cache */
static struct ring rings[COMPLETERS];
static int bad;

static void stamp(struct nvq_prp_lists *l, uint64_t owner, uint64_t serial)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		struct stamp *s = l->va[i];

		s->owner = owner;
		s->serial = serial;
	}
}

static void check_stamp(struct nvq_prp_lists *l, uint64_t owner,
			uint64_t serial)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		struct stamp *s = l->va[i];

		if (s->owner != owner || s->serial != serial)
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		s->owner = 0;
	}
}

static void ring_put(struct ring *r, const struct item *it)
{
	pthread_mutex_lock(&r->lock);
	while (r->tail - r->head == RING)
		pthread_cond_wait(&r->cond, &r->lock);
	r->it[r->tail++ % RING] = *it;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static bool ring_get(struct ring *r, struct item *it)
{
	pthread_mutex_lock(&r->lock);
	while (r->tail == r->head && !r->done)
		pthread_cond_wait(&r->cond, &r->lock);
	if (r->tail == r->head) {
		pthread_mutex_unlock(&r->lock);
		return false;
	}
	*it = r->it[r->head++ % RING];
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return true;
}

static void *submitter(void *arg)
{
	uint64_t id = (uintptr_t)arg, serial = 0, p1, p2;
	unsigned int seed = (unsigned int)id * 7919u, r;
	/* 3 pages (small list) to 1026 pages (three chained pages). */
	static const unsigned int pages[] = { 3, 8, 9, 33, 34, 600, 1026 };

	for (r = 0; r < ROUNDS; r++) {
		struct item it;
		size_t len =
			(size_t)pages[rand_r(&seed) % ARRAY_SIZE(pages)] * 4096;

		if (nvq_prp_build(&qpools, 0x10000000ull, len, &p1, &p2,
				  &it.l)) {
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		it.owner = id;
		it.serial = ++serial;
		stamp(&it.l, it.owner, it.serial);
		if (rand_r(&seed) % 8 == 0) {
			/* A submission that failed frees on this thread. */
			check_stamp(&it.l, it.owner, it.serial);
			nvq_prp_free(&qpools, &it.l);
			continue;
		}
		ring_put(&rings[rand_r(&seed) % COMPLETERS], &it);
	}
	return NULL;
}

static void *completer(void *arg)
{
	struct ring *r = arg;
	struct item it;

	while (ring_get(r, &it)) {
		check_stamp(&it.l, it.owner, it.serial);
		nvq_prp_free(&qpools, &it.l);
	}
	return NULL;
}

static void run(bool shared, unsigned int submitters)
{
	pthread_t s[SUBMITTERS], c[COMPLETERS];
	struct nvq_pool_cache_stats st;
	struct nvq_pools node;
	unsigned int i;

	CHECK_EQ(nvq_pools_create(mem, 0, &node), 0);
	qpools = node;
	qpools.cache = nvq_pool_cache_create(&node, 0, shared);
	CHECK(qpools.cache);
	for (i = 0; i < COMPLETERS; i++) {
		memset(&rings[i], 0, sizeof(rings[i]));
		pthread_mutex_init(&rings[i].lock, NULL);
		pthread_cond_init(&rings[i].cond, NULL);
		CHECK_EQ(pthread_create(&c[i], NULL, completer, &rings[i]), 0);
	}
	for (i = 0; i < submitters; i++)
		CHECK_EQ(pthread_create(&s[i], NULL, submitter,
					(void *)(uintptr_t)(i + 1)),
			 0);
	for (i = 0; i < submitters; i++)
		pthread_join(s[i], NULL);
	for (i = 0; i < COMPLETERS; i++) {
		pthread_mutex_lock(&rings[i].lock);
		rings[i].done = true;
		pthread_cond_broadcast(&rings[i].cond);
		pthread_mutex_unlock(&rings[i].lock);
	}
	for (i = 0; i < COMPLETERS; i++) {
		pthread_join(c[i], NULL);
		pthread_mutex_destroy(&rings[i].lock);
		pthread_cond_destroy(&rings[i].cond);
	}
	CHECK_EQ(__atomic_load_n(&bad, __ATOMIC_RELAXED), 0);
	nvq_pool_cache_stats(qpools.cache, &st);
	CHECK(st.hits > 0);
	CHECK(st.cached <= 2 * (NVQ_POOL_CACHE_SMALL + NVQ_POOL_CACHE_PAGE));
	CHECK_EQ(nvq_dmapool_in_use(node.small) + nvq_dmapool_in_use(node.page),
		 st.cached);
	if (!shared)
		CHECK_EQ(st.bypass, 0);
	printf("%s, %u submitter(s): hits %llu recycles %llu refills %llu "
	       "drains %llu bypass %llu\n",
	       shared ? "shared" : "exclusive", submitters,
	       (unsigned long long)st.hits, (unsigned long long)st.recycles,
	       (unsigned long long)st.refills, (unsigned long long)st.drains,
	       (unsigned long long)st.bypass);
	nvq_pool_cache_destroy(qpools.cache);
	CHECK_EQ(nvq_dmapool_in_use(node.small), 0);
	CHECK_EQ(nvq_dmapool_in_use(node.page), 0);
	nvq_pools_destroy(&node);
}

int main(void)
{
	t = stub_transport_create();
	CHECK_EQ(nvq_mem_create(t, &mem), 0);
	run(true, SUBMITTERS);
	run(false, 1);
	nvq_mem_destroy(mem);
	CHECK_EQ(stub_mappings(t), 0);
	stub_transport_destroy(t);
	printf("pool-cache-stress: ok\n");
	return 0;
}
