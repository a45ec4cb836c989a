// SPDX-License-Identifier: MIT
/*
 * The per-queue cache in front of a node's pools: allocation from the
 * queue's list takes no pool lock, what is freed comes back without one,
 * the pool is refilled from and drained to in batches, the cache never
 * holds more than its bound, a shared queue's second allocator bypasses
 * it, and destroying it gives every block back. Also PRP lists built
 * through a cache, the counted pool lock, and the choice of a queue's
 * NUMA node from its CPUs and its interrupt CPU.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "dmapool.h"
#include "internal.h"
#include "mem.h"
#include "prp.h"
#include "stub_iommu.h"

#define PG 4096u
#define DATA 0x10000000ull

static struct nvq_transport *t;
static struct nvq_mem *mem;

static uint64_t pool_locks(struct nvq_dmapool *p)
{
	struct nvq_dmapool_stats st;

	nvq_dmapool_stats(p, &st);
	return st.locks;
}

static void test_pool_counters(void)
{
	struct nvq_dmapool *p = nvq_dmapool_create(mem, "cnt", 256, 0, 0);
	struct nvq_dmapool_block *list, *tail;
	struct nvq_dmapool_stats st;
	uint64_t io, before;
	unsigned int n;
	void *b;

	CHECK(p);
	nvq_dmapool_stats(p, &st);
	CHECK_EQ(st.grows, 1); /* the first chunk */
	CHECK_EQ(st.contended, 0);
	before = st.locks;
	b = nvq_dmapool_alloc(p, &io);
	CHECK(b);
	nvq_dmapool_free(p, b, io);
	CHECK_EQ(pool_locks(p), before + 2);

	/* A batch: one lock, n blocks, IOVAs as a single alloc gives. */
	n = nvq_dmapool_alloc_batch(p, &list, 10);
	CHECK_EQ(n, 10);
	CHECK_EQ(pool_locks(p), before + 3);
	CHECK_EQ(nvq_dmapool_in_use(p), 10);
	for (tail = list, n = 1; tail->next; tail = tail->next)
		n++;
	CHECK_EQ(n, 10);
	CHECK(nvq_mem_iova(mem, NULL, list, 256, &io) == 0);
	CHECK_EQ(io, list->iova);
	nvq_dmapool_free_batch(p, list, tail, 10);
	CHECK_EQ(pool_locks(p), before + 4);
	CHECK_EQ(nvq_dmapool_in_use(p), 0);
	/* More than the pool has: it grows, under the same call. */
	n = nvq_dmapool_alloc_batch(p, &list, 1000);
	CHECK(n >= 1);
	for (tail = list; tail->next; tail = tail->next)
		;
	nvq_dmapool_free_batch(p, list, tail, n);
	CHECK_EQ(nvq_dmapool_in_use(p), 0);
	CHECK(nvq_dmapool_chunk(p, 0) != NULL);
	CHECK(nvq_dmapool_chunk(p, 1000) == NULL);
	nvq_dmapool_destroy(p);
}

static void test_cache_basics(void)
{
	struct nvq_pools set;
	struct nvq_pool_cache *c;
	struct nvq_pool_cache_stats st;
	void *b[NVQ_POOL_CACHE_SMALL * 2 + 2];
	uint64_t io[ARRAY_SIZE(b)], locks, iova;
	unsigned int i, n;

	CHECK_EQ(nvq_pools_create(mem, 0, &set), 0);
	CHECK(set.cache == NULL && !set.borrowed);
	CHECK(!nvq_pool_cache_create(NULL, 0, false));
	c = nvq_pool_cache_create(&set, 0, false);
	CHECK(c);
	nvq_pool_cache_stats(c, &st);
	CHECK_EQ(st.hits + st.refills + st.drains + st.cached, 0);

	/* The first allocation refills a batch (one lock). */
	locks = pool_locks(set.small);
	CHECK(nvq_pool_cache_enter(c));
	b[0] = nvq_pool_cache_alloc(c, false, &io[0]);
	nvq_pool_cache_exit(c);
	CHECK(b[0]);
	CHECK(nvq_mem_iova(mem, NULL, b[0], 256, &iova) == 0);
	CHECK_EQ(iova, io[0]);
	CHECK_EQ(pool_locks(set.small), locks + 1);
	nvq_pool_cache_stats(c, &st);
	CHECK_EQ(st.refills, 1);
	CHECK_EQ(st.hits, 0);
	CHECK_EQ(st.cached, NVQ_POOL_CACHE_SMALL / 2 - 1);
	CHECK_EQ(nvq_dmapool_in_use(set.small), NVQ_POOL_CACHE_SMALL / 2);

	/* The rest of the batch: hits, no lock. */
	CHECK(nvq_pool_cache_enter(c));
	for (i = 1; i < NVQ_POOL_CACHE_SMALL / 2; i++) {
		b[i] = nvq_pool_cache_alloc(c, false, &io[i]);
		CHECK(b[i] && b[i] != b[i - 1]);
	}
	nvq_pool_cache_exit(c);
	CHECK_EQ(pool_locks(set.small), locks + 1);
	nvq_pool_cache_stats(c, &st);
	CHECK_EQ(st.hits, NVQ_POOL_CACHE_SMALL / 2 - 1);
	CHECK_EQ(st.cached, 0);

	/* Freed blocks come back to the queue without a lock... */
	for (i = 0; i < NVQ_POOL_CACHE_SMALL / 2; i++)
		nvq_pool_cache_free(c, false, b[i], io[i]);
	CHECK_EQ(pool_locks(set.small), locks + 1);
	nvq_pool_cache_stats(c, &st);
	CHECK_EQ(st.cached, NVQ_POOL_CACHE_SMALL / 2);
	CHECK(nvq_pool_cache_enter(c));
	for (i = 0; i < NVQ_POOL_CACHE_SMALL / 2; i++) {
		b[i] = nvq_pool_cache_alloc(c, false, &io[i]);
		CHECK(b[i]);
		CHECK(nvq_mem_iova(mem, NULL, b[i], 256, &iova) == 0);
		CHECK_EQ(iova, io[i]);
	}
	nvq_pool_cache_exit(c);
	nvq_pool_cache_stats(c, &st);
	CHECK_EQ(st.recycles, 1);
	CHECK_EQ(st.hits, NVQ_POOL_CACHE_SMALL - 1);
	CHECK_EQ(pool_locks(set.small), locks + 1);

	/* ...and more than the bound drains to the pool, in one lock. */
	CHECK(nvq_pool_cache_enter(c));
	for (n = NVQ_POOL_CACHE_SMALL / 2; n < ARRAY_SIZE(b); n++)
		CHECK((b[n] = nvq_pool_cache_alloc(c, false, &io[n])) != NULL);
	nvq_pool_cache_exit(c);
	locks = pool_locks(set.small);
	for (i = 0; i < n; i++) {
		nvq_pool_cache_free(c, false, b[i], io[i]);
		nvq_pool_cache_stats(c, &st);
		CHECK(st.cached <= 2 * NVQ_POOL_CACHE_SMALL);
	}
	nvq_pool_cache_stats(c, &st);
	CHECK(st.drains >= 1);
	CHECK_EQ(pool_locks(set.small), locks + st.drains);
	CHECK_EQ(nvq_dmapool_in_use(set.small), st.cached);

	/* Page blocks have their own part. */
	CHECK(nvq_pool_cache_enter(c));
	b[0] = nvq_pool_cache_alloc(c, true, &io[0]);
	nvq_pool_cache_exit(c);
	CHECK(b[0] && !((uintptr_t)b[0] & (PG - 1)));
	CHECK_EQ(nvq_dmapool_in_use(set.page), NVQ_POOL_CACHE_PAGE / 2);
	nvq_pool_cache_free(c, true, b[0], io[0]);
	/* Misaligned or NULL: ignored, as nvq_dmapool_free() does. */
	nvq_pool_cache_free(c, true, (char *)b[0] + 8, io[0]);
	nvq_pool_cache_free(c, false, NULL, 0);

	/* Destroying the cache gives everything back. */
	nvq_pool_cache_destroy(c);
	nvq_pool_cache_destroy(NULL);
	CHECK_EQ(nvq_dmapool_in_use(set.small), 0);
	CHECK_EQ(nvq_dmapool_in_use(set.page), 0);
	nvq_pools_destroy(&set);
}

static void test_shared_bypass(void)
{
	struct nvq_pools set;
	struct nvq_pool_cache *c;
	struct nvq_pool_cache_stats st;

	CHECK_EQ(nvq_pools_create(mem, 0, &set), 0);
	c = nvq_pool_cache_create(&set, 0, true);
	CHECK(c);
	CHECK(nvq_pool_cache_enter(c));
	/* A second allocator on the same shared queue: not inside. */
	CHECK(!nvq_pool_cache_enter(c));
	nvq_pool_cache_exit(c);
	CHECK(nvq_pool_cache_enter(c));
	nvq_pool_cache_exit(c);
	nvq_pool_cache_stats(c, &st);
	CHECK_EQ(st.bypass, 1);
	nvq_pool_cache_destroy(c);
	/* An exclusive queue's cache has no try-lock to fail. */
	c = nvq_pool_cache_create(&set, 0, false);
	CHECK(nvq_pool_cache_enter(c) && nvq_pool_cache_enter(c));
	nvq_pool_cache_destroy(c);
	nvq_pools_destroy(&set);
}

/* PRP lists through a queue's pools copy with a cache. */
static void test_prp_through_cache(void)
{
	struct nvq_pools node, q;
	struct nvq_pool_cache_stats st;
	struct nvq_prp_lists l[40];
	uint64_t p1, p2, locks;
	unsigned int i, round;

	CHECK_EQ(nvq_pools_create(mem, 0, &node), 0);
	q = node;
	q.cache = nvq_pool_cache_create(&node, 0, false);
	CHECK(q.cache);
	/* 32 KiB at an offset: 9 pages, a small list of 8 entries. */
	CHECK_EQ(nvq_prp_build(&q, DATA + 512, 8 * PG, &p1, &p2, &l[0]), 0);
	CHECK_EQ(l[0].nr, 1);
	CHECK(l[0].small);
	CHECK_EQ(le64toh(((uint64_t *)l[0].va[0])[0]), DATA + PG);
	CHECK_EQ(p2, l[0].iova[0]);
	nvq_prp_free(&q, &l[0]);
	/* Steady state at a depth below the bound: no pool lock at all. */
	locks = pool_locks(node.small);
	for (round = 0; round < 10; round++) {
		for (i = 0; i < 20; i++)
			CHECK_EQ(nvq_prp_build(&q, DATA, 8 * PG, &p1, &p2,
					       &l[i]),
				 0);
		for (i = 0; i < 20; i++)
			nvq_prp_free(&q, &l[i]);
	}
	CHECK_EQ(pool_locks(node.small), locks);
	/* Chained page lists: 1026 pages need three page blocks. */
	CHECK_EQ(nvq_prp_build(&q, DATA, 1026 * PG, &p1, &p2, &l[0]), 0);
	CHECK_EQ(l[0].nr, 3);
	CHECK(!l[0].small);
	nvq_prp_free(&q, &l[0]);
	nvq_pool_cache_stats(q.cache, &st);
	CHECK(st.hits >= 200);
	nvq_pool_cache_destroy(q.cache);
	CHECK_EQ(nvq_dmapool_in_use(node.small), 0);
	CHECK_EQ(nvq_dmapool_in_use(node.page), 0);
	nvq_pools_destroy(&node);
}

/* A machine of 4 CPUs on 2 nodes: 0-1 on node 0, 2-3 on node 1. */
static int two_nodes(int cpu)
{
	return cpu >= 2 ? 1 : 0;
}

/* CPUs alternate: even on node 0, odd on node 1. */
static int interleaved(int cpu)
{
	return cpu & 1;
}

static int bogus(int cpu)
{
	return cpu ? 7 : -3;
}

static void test_queue_node(void)
{
	bool spans = true;

	/* A queue per CPU: each on its CPU's node, never spanning. */
	CHECK_EQ(nvq_pools_queue_node(0, 4, 4, 1, 2, two_nodes, &spans), 0);
	CHECK(!spans);
	CHECK_EQ(nvq_pools_queue_node(1, 4, 4, 2, 2, two_nodes, &spans), 0);
	CHECK(!spans); /* the interrupt CPU does not matter then */
	CHECK_EQ(nvq_pools_queue_node(2, 4, 4, 3, 2, two_nodes, &spans), 1);
	CHECK_EQ(nvq_pools_queue_node(3, 4, 4, 0, 2, two_nodes, &spans), 1);
	CHECK(!spans);
	/* Two queues: queue 0 serves CPUs 0 and 2, on both nodes. */
	CHECK_EQ(nvq_pools_queue_node(0, 2, 4, 1, 2, two_nodes, &spans), 0);
	CHECK(spans);
	CHECK_EQ(nvq_pools_queue_node(0, 2, 4, 2, 2, two_nodes, &spans), 1);
	CHECK(spans);
	/* Unknown interrupt CPU: the first CPU's node. */
	CHECK_EQ(nvq_pools_queue_node(1, 2, 4, -1, 2, two_nodes, &spans), 0);
	CHECK(spans);
	/* Interleaved: two queues each stay on one node. */
	CHECK_EQ(nvq_pools_queue_node(1, 2, 4, 0, 2, interleaved, &spans), 1);
	CHECK(!spans);
	/* One queue for all. */
	CHECK_EQ(nvq_pools_queue_node(0, 1, 4, 3, 2, two_nodes, &spans), 1);
	CHECK(spans);
	/* More queues than CPUs: the interrupt CPU, else index % CPUs. */
	CHECK_EQ(nvq_pools_queue_node(6, 8, 4, 2, 2, two_nodes, &spans), 1);
	CHECK(!spans);
	CHECK_EQ(nvq_pools_queue_node(6, 8, 4, -1, 2, two_nodes, &spans), 1);
	/* Nodes out of range count as node 0; zero counts are survivable. */
	CHECK_EQ(nvq_pools_queue_node(0, 2, 4, -1, 2, bogus, &spans), 0);
	CHECK_EQ(nvq_pools_queue_node(0, 0, 0, -1, 1, two_nodes, NULL), 0);
}

static void test_borrowed(void)
{
	struct nvq_pools set, other;

	CHECK_EQ(nvq_pools_create(mem, 0, &set), 0);
	other = set;
	other.borrowed = true;
	nvq_pools_destroy(&other); /* clears, frees nothing */
	CHECK(!other.small && !other.page && !other.borrowed);
	CHECK(nvq_dmapool_capacity(set.small) > 0);
	nvq_pools_destroy(&set);
	CHECK_EQ(stub_mappings(t), 0);
}

int main(void)
{
	t = stub_transport_create();
	CHECK_EQ(nvq_mem_create(t, &mem), 0);
	test_pool_counters();
	test_cache_basics();
	test_shared_bypass();
	test_prp_through_cache();
	test_queue_node();
	test_borrowed();
	nvq_mem_destroy(mem);
	CHECK_EQ(stub_mappings(t), 0);
	CHECK_EQ(stub_errors(t), 0);
	stub_transport_destroy(t);
	printf("pool-cache: ok\n");
	return 0;
}
