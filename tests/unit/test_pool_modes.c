// SPDX-License-Identifier: MIT
/*
 * The three PRP pool variants through nvq_open() on the emulated
 * controller (NVQ_PRP_POOLS=device|node|cache): 32 KiB reads, which need
 * a list block each, read back what was written in every variant; the
 * counters say where the blocks came from (the pool lock twice per
 * command without a cache, almost never with one); queue information
 * names each queue's node and CPUs; a bad value fails nvq_open(). Then
 * four threads share one queue with caches on (suite concurrency, so it
 * also runs under ThreadSanitizer): the cache's try-lock lets one
 * allocate while the others go to the pool, and nothing is lost.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define BS 32768u
#define QD 8u
#define IOS 400u
#define THREADS 4
#define OFF 512u /* the buffer's offset into its page */

static uint32_t lba_size;

struct cnt {
	unsigned int done;
	int err;
};

static void on_done(void *arg, const struct nvq_cpl *cpl)
{
	struct cnt *c = arg;

	if (cpl->err)
		c->err = cpl->err;
	__atomic_fetch_add(&c->done, 1, __ATOMIC_RELAXED);
}

static struct nvq_ctrl *open_mode(const char *mode, unsigned int queues,
				  bool exclusive)
{
	struct nvq_ctrl *c;
	struct nvq_opts o;

	if (mode)
		CHECK_OK(setenv("NVQ_PRP_POOLS", mode, 1));
	else
		unsetenv("NVQ_PRP_POOLS");
	nvq_opts_init(&o);
	o.nr_queues = queues;
	o.exclusive = exclusive;
	o.mode = NVQ_MODE_POLL;
	CHECK_OK(nvq_open("emu:size=16M", &o, &c));
	unsetenv("NVQ_PRP_POOLS");
	{
		struct nvq_ns_info ni;

		CHECK_OK(nvq_ns_info(c, 1, &ni));
		lba_size = ni.lba_size;
		CHECK(ni.nlba * lba_size >= 400ull * BS);
	}
	return c;
}

/* @ios 32 KiB reads at QD8 on @q, the buffer at a 512-byte offset. */
static void reads(struct nvq_ctrl *c, struct nvq_queue *q, char *buf,
		  unsigned int ios, unsigned int seed)
{
	struct cnt cnt = { 0 };
	unsigned int sent = 0;

	while (__atomic_load_n(&cnt.done, __ATOMIC_RELAXED) < ios) {
		unsigned int done =
			__atomic_load_n(&cnt.done, __ATOMIC_RELAXED);

		while (sent < ios && sent - done < QD) {
			uint64_t lba =
				(uint64_t)((seed + sent) * 7919u % 400u) *
				(BS / lba_size);
			int rc = nvq_read(q, 1, buf + (sent % QD) * BS + OFF,
					  lba, BS / lba_size, 0, on_done, &cnt);

			if (rc == -EAGAIN)
				break; /* another thread holds the slots */
			CHECK_OK(rc);
			sent++;
		}
		CHECK(nvq_poll(q, 0) >= 0);
	}
	CHECK_EQ(cnt.err, 0);
	(void)c;
}

static void check_mode(const char *mode, enum nvq_pools_kind kind,
		       bool exclusive)
{
	struct nvq_ctrl *c = open_mode(mode, 2, exclusive);
	unsigned int i, n = nvq_ctrl_queue_count(c);
	char *buf = nvq_dma_alloc(c, (QD + 1) * BS, -1);
	struct nvq_pool_stats before, ps;
	struct nvq_queue_info qi;

	CHECK(buf);
	CHECK_EQ(n, 2);
	/* Data written at LBA 0 reads back through a list. */
	for (i = 0; i < BS; i++)
		buf[OFF + i] = (char)(i * 13 + 1);
	CHECK_OK(nvq_write_sync(c, 1, buf + OFF, 0, BS / lba_size, NULL));
	memset(buf, 0, (QD + 1) * BS);
	{
		struct nvq_queue *q = nvq_ctrl_queue(c, 0);
		struct cnt cnt = { 0 };

		CHECK_OK(nvq_read(q, 1, buf + OFF, 0, BS / lba_size, 0, on_done,
				  &cnt));
		while (!__atomic_load_n(&cnt.done, __ATOMIC_RELAXED))
			CHECK(nvq_poll(q, 0) >= 0);
		CHECK_EQ(cnt.err, 0);
		for (i = 0; i < BS; i++)
			CHECK_EQ((unsigned char)buf[OFF + i],
				 (unsigned char)(i * 13 + 1));
	}
	for (i = 0; i < n; i++) {
		struct nvq_queue *q = nvq_ctrl_queue(c, i);

		CHECK_OK(nvq_queue_info(q, &qi));
		CHECK_EQ(qi.qid, i + 1);
		CHECK_EQ(qi.pools, kind);
		CHECK(qi.node >= 0);
		CHECK_EQ(qi.depth, nvq_queue_depth(q));
		CHECK(qi.first_cpu == -1 || qi.first_cpu == (int32_t)i);
		CHECK(qi.spans <= 1);
		CHECK_OK(nvq_queue_pool_stats(q, &before));
		CHECK_EQ(before.node, qi.node);
		reads(c, q, buf, IOS, i);
		CHECK_OK(nvq_queue_pool_stats(q, &ps));
		if (kind == NVQ_POOLS_KIND_CACHE) {
			/* Every list from the cache; a handful of locks. */
			CHECK(ps.cache_hits - before.cache_hits +
				      ps.cache_refills - before.cache_refills >=
			      IOS);
			CHECK(ps.pool_locks - before.pool_locks < IOS / 8);
			CHECK(ps.cache_blocks <= 2 * (64 + 16));
			CHECK_EQ(ps.cache_bypass, 0);
		} else {
			/* A lock to take the block, one to give it back. */
			CHECK_EQ(ps.cache_hits, 0);
			CHECK(ps.pool_locks - before.pool_locks >= 2 * IOS);
		}
	}
	if (kind == NVQ_POOLS_KIND_DEVICE) {
		/* One pool set for all: the same counters. */
		struct nvq_pool_stats a, b;

		CHECK_OK(nvq_queue_pool_stats(nvq_ctrl_queue(c, 0), &a));
		CHECK_OK(nvq_queue_pool_stats(nvq_ctrl_queue(c, 1), &b));
		CHECK_EQ(a.pool_locks, b.pool_locks);
		CHECK_EQ(a.node, b.node);
	}
	nvq_dma_free(c, buf);
	nvq_close(c);
}

struct job {
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	unsigned int id;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	char *buf = nvq_dma_alloc(j->c, (QD + 1) * BS, -1);

	CHECK(buf);
	reads(j->c, j->q, buf, IOS / 2, j->id * 100);
	nvq_dma_free(j->c, buf);
	return NULL;
}

static void check_shared_threads(void)
{
	struct nvq_ctrl *c = open_mode("cache", 1, false);
	struct job jobs[THREADS];
	pthread_t tid[THREADS];
	struct nvq_pool_stats ps;
	unsigned int i;

	for (i = 0; i < THREADS; i++) {
		jobs[i].c = c;
		jobs[i].q = nvq_ctrl_queue(c, 0);
		jobs[i].id = i;
		CHECK_OK(pthread_create(&tid[i], NULL, job_main, &jobs[i]));
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	CHECK_OK(nvq_queue_pool_stats(nvq_ctrl_queue(c, 0), &ps));
	CHECK(ps.cache_hits + ps.cache_bypass + ps.cache_refills >=
	      THREADS * (IOS / 2));
	printf("shared queue, %d threads: hits %llu bypass %llu refills %llu "
	       "drains %llu locks %llu contended %llu\n",
	       THREADS, (unsigned long long)ps.cache_hits,
	       (unsigned long long)ps.cache_bypass,
	       (unsigned long long)ps.cache_refills,
	       (unsigned long long)ps.cache_drains,
	       (unsigned long long)ps.pool_locks,
	       (unsigned long long)ps.pool_contended);
	nvq_close(c);
}

int main(void)
{
	struct nvq_ctrl *c;
	struct nvq_opts o;

	check_mode(NULL, NVQ_POOLS_KIND_CACHE, false);
	check_mode("node", NVQ_POOLS_KIND_NODE, true);
	check_mode("device", NVQ_POOLS_KIND_DEVICE, false);
	check_mode("cache", NVQ_POOLS_KIND_CACHE, false);
	check_mode("cache", NVQ_POOLS_KIND_CACHE, true);

	nvq_opts_init(&o);
	CHECK_OK(setenv("NVQ_PRP_POOLS", "numa", 1));
	CHECK_EQ(nvq_open("emu:size=16M", &o, &c), -EINVAL);
	CHECK(strstr(nvq_errmsg(), "NVQ_PRP_POOLS") != NULL);
	unsetenv("NVQ_PRP_POOLS");

	check_shared_threads();
	printf("pool-modes: ok\n");
	return 0;
}
