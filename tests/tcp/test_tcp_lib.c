// SPDX-License-Identifier: MIT
/*
 * The library against a real NVMe/TCP target (tcp: URI in argv[1] or
 * $NVQ_TCP_URI, namespace 1 at least 8 MiB): model-checked random writes
 * and reads in poll, wait and thread mode, on two queues; two threads
 * submitting to one shared queue; nvq_ctrl_reset() with writes in flight
 * (every acknowledged write reads back); a refused NQN. Skips (77)
 * without a URI. Run by tests/tcp/ against Linux nvmet in a QEMU guest.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

#define REGION (8u << 20) /* bytes of namespace 1 the test uses */
#define SLOT (256u << 10)
#define INFLIGHT 8
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static uint64_t seed = 7;

static uint64_t rnd(uint64_t n)
{
	return test_rand(&seed) % n;
}

/* Wait for @n callbacks in any mode (thread mode: they come by
 * themselves). */
static void wait_calls(struct nvq_queue *q, enum nvq_mode mode,
		       struct cb_count *c, int n)
{
	int spins = 0;

	if (mode != NVQ_MODE_THREAD) {
		reap_until(q, c, n);
		return;
	}
	while (calls_of(c) < n) {
		CHECK(++spins < 120000); /* 2 minutes */
		usleep(1000);
	}
}

struct ext {
	uint64_t slba;
	uint32_t nlb;
	char *buf;
};

static int overlaps(const struct ext *e, int n, uint64_t slba, uint32_t nlb)
{
	int i;

	for (i = 0; i < n; i++)
		if (slba < e[i].slba + e[i].nlb && e[i].slba < slba + nlb)
			return 1;
	return 0;
}

/* Random read-after-write rounds on queue @qi, checked against @model. */
static void random_io(struct nvq_ctrl *c, unsigned int qi, enum nvq_mode mode,
		      unsigned char *model, uint64_t first, uint64_t nblk,
		      uint32_t lbsz, unsigned int rounds)
{
	struct nvq_queue *q = nvq_ctrl_queue(c, qi);
	struct cb_count cnt = { 0 };
	uint32_t maxb = SLOT / lbsz - 1;
	char *pool;
	int expect = 0;
	unsigned int r;

	CHECK(q);
	pool = nvq_dma_alloc(c, (size_t)SLOT * INFLIGHT, -1);
	CHECK(pool);
	/* The target keeps what earlier runs wrote: start from what it
	 * holds. */
	for (uint64_t b = 0; b < nblk; b += SLOT / lbsz) {
		uint32_t nlb = (uint32_t)MIN(nblk - b, SLOT / lbsz);

		CHECK_OK(nvq_read(q, 1, pool, first + b, nlb, 0, count_cb,
				  &cnt));
		wait_calls(q, mode, &cnt, ++expect);
		CHECK_EQ(cnt.err, 0);
		memcpy(model + b * lbsz, pool, (size_t)nlb * lbsz);
	}
	for (r = 0; r < rounds; r++) {
		struct ext e[INFLIGHT];
		int n = (int)rnd(INFLIGHT) + 1, i;

		for (i = 0; i < n; i++) {
			do {
				e[i].nlb = (uint32_t)rnd(maxb) + 1;
				e[i].slba = first + rnd(nblk - e[i].nlb + 1);
			} while (overlaps(e, i, e[i].slba, e[i].nlb));
			e[i].buf = pool + (size_t)i * SLOT + 4 * rnd(256);
			fill_pattern(e[i].buf, (size_t)e[i].nlb * lbsz,
				     test_rand(&seed));
			memcpy(model + (e[i].slba - first) * lbsz, e[i].buf,
			       (size_t)e[i].nlb * lbsz);
			CHECK_OK(nvq_write(q, 1, e[i].buf, e[i].slba, e[i].nlb,
					   i + 1 < n ? NVQ_IO_MORE : 0,
					   count_cb, &cnt));
		}
		expect += n;
		wait_calls(q, mode, &cnt, expect);
		CHECK_EQ(cnt.err, 0);
		for (i = 0; i < n; i++) {
			e[i].nlb = (uint32_t)rnd(maxb) + 1;
			e[i].slba = first + rnd(nblk - e[i].nlb + 1);
			e[i].buf = pool + (size_t)i * SLOT + 4 * rnd(256);
			memset(e[i].buf, 0x5a, (size_t)e[i].nlb * lbsz);
			CHECK_OK(nvq_read(q, 1, e[i].buf, e[i].slba, e[i].nlb,
					  i + 1 < n ? NVQ_IO_MORE : 0, count_cb,
					  &cnt));
		}
		expect += n;
		wait_calls(q, mode, &cnt, expect);
		CHECK_EQ(cnt.err, 0);
		for (i = 0; i < n; i++)
			if (memcmp(e[i].buf, model + (e[i].slba - first) * lbsz,
				   (size_t)e[i].nlb * lbsz)) {
				fprintf(stderr,
					"queue %u round %u: data mismatch "
					"reading %u blocks at %llu\n",
					qi, r, e[i].nlb,
					(unsigned long long)e[i].slba);
				exit(T_EXIT_FAIL);
			}
	}
	CHECK_EQ(nvq_queue_inflight(q), 0);
	nvq_dma_free(c, pool);
}

static void modes(const char *uri)
{
	static const enum nvq_mode m[] = { NVQ_MODE_POLL, NVQ_MODE_WAIT,
					   NVQ_MODE_THREAD };
	static const char *const names[] = { "poll", "wait", "thread" };
	unsigned int i, qi;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct nvq_ns_info info;
		struct nvq_opts o;
		struct nvq_ctrl *c;
		unsigned char *model;
		uint64_t nblk;

		nvq_opts_init(&o);
		o.mode = m[i];
		o.nr_queues = 2;
		o.queue_depth = 32;
		c = open_or_die(uri, &o);
		CHECK_OK(nvq_ns_info(c, 1, &info));
		CHECK(info.nlba * info.lba_size >= REGION);
		nblk = REGION / info.lba_size / 2;
		for (qi = 0; qi < nvq_ctrl_queue_count(c) && qi < 2; qi++) {
			model = calloc(nblk, info.lba_size);
			CHECK(model);
			/* Each queue its own half: the model stays exact. */
			random_io(c, qi, m[i], model, qi * nblk, nblk,
				  info.lba_size, 20);
			free(model);
		}
		nvq_close(c);
		printf("ok - random read-after-write, %s mode\n", names[i]);
	}
}

struct sub {
	struct nvq_ctrl *c;
	unsigned int idx;
	uint32_t lbsz;
	uint64_t nblk;
};

/*
 * On a shared queue any reaper runs any callback: the other thread may
 * run this thread's, so the counter is touched with atomics only.
 */
static void shared_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct cb_count *c = arg;

	if (cpl->err)
		__atomic_store_n(&c->err, cpl->err, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->calls, 1, __ATOMIC_RELEASE);
}

/* One of two threads writing and reading back its own blocks on queue 0
 * (shared: split locks), reaping its own completions. */
static void *submitter(void *arg)
{
	struct sub *s = arg;
	struct nvq_queue *q = nvq_ctrl_queue(s->c, 0);
	struct cb_count cnt = { 0 };
	uint64_t base = s->idx * s->nblk, mine = s->idx * 1000 + 1;
	char *buf = nvq_dma_alloc(s->c, 16 * 4096, -1);
	int expect = 0, k;

	CHECK(buf);
	for (k = 0; k < 200; k++) {
		uint64_t slba = base + (uint64_t)(k % 16) * (4096 / s->lbsz);
		char *b = buf + (k % 16) * 4096;

		fill_pattern(b, 4096, mine + (uint64_t)k);
		CHECK_OK(nvq_write(q, 1, b, slba, 4096 / s->lbsz, 0, shared_cb,
				   &cnt));
		if (k % 16 == 15) {
			expect += 16;
			reap_until(q, &cnt, expect);
			CHECK_EQ(__atomic_load_n(&cnt.err, __ATOMIC_RELAXED),
				 0);
			memset(buf, 0, 16 * 4096);
			CHECK_OK(nvq_read(q, 1, buf, base, 16 * 4096 / s->lbsz,
					  0, shared_cb, &cnt));
			expect++;
			reap_until(q, &cnt, expect);
			CHECK_EQ(__atomic_load_n(&cnt.err, __ATOMIC_RELAXED),
				 0);
			for (int j = 0; j < 16; j++) {
				char want[4096];

				fill_pattern(want, 4096,
					     mine + (uint64_t)(k - 15 + j));
				CHECK(!memcmp(buf + j * 4096, want, 4096));
			}
		}
	}
	nvq_dma_free(s->c, buf);
	return NULL;
}

static void shared_queue(const char *uri)
{
	struct nvq_ns_info info;
	struct sub s[2];
	pthread_t th[2];
	struct nvq_opts o;
	struct nvq_ctrl *c;
	int i;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 64;
	c = open_or_die(uri, &o);
	CHECK_OK(nvq_ns_info(c, 1, &info));
	for (i = 0; i < 2; i++) {
		s[i] = (struct sub){ c, (unsigned int)i, info.lba_size,
				     (16 * 4096) / info.lba_size };
		CHECK_EQ(pthread_create(&th[i], NULL, submitter, &s[i]), 0);
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	nvq_close(c);
	printf("ok - two threads on one shared queue\n");
}

/* A reset with writes in flight: each is retried or completed; all read
 * back as written. */
static void reset_inflight(const char *uri)
{
	struct cb_count cnt = { 0 };
	struct nvq_ns_info info;
	struct nvq_ctrl_stats st;
	struct nvq_queue *q;
	struct nvq_opts o;
	struct nvq_ctrl *c;
	char *buf, *rd;
	uint32_t nlb;
	int i;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 32;
	c = open_or_die(uri, &o);
	CHECK_OK(nvq_ns_info(c, 1, &info));
	q = nvq_ctrl_queue(c, 0);
	nlb = 65536 / info.lba_size;
	buf = nvq_dma_alloc(c, 16 * 65536, -1);
	rd = nvq_dma_alloc(c, 16 * 65536, -1);
	CHECK(buf && rd);
	for (i = 0; i < 16; i++) {
		fill_pattern(buf + i * 65536, 65536, 99 + (uint64_t)i);
		CHECK_OK(nvq_write(q, 1, buf + i * 65536, (uint64_t)i * nlb,
				   nlb, i < 15 ? NVQ_IO_MORE : 0, count_cb,
				   &cnt));
	}
	CHECK_OK(nvq_ctrl_reset(c));
	reap_until(q, &cnt, 16);
	CHECK_EQ(cnt.err, 0);
	CHECK_OK(nvq_read(q, 1, rd, 0, 16 * nlb, 0, count_cb, &cnt));
	reap_until(q, &cnt, 17);
	CHECK_EQ(cnt.err, 0);
	CHECK(!memcmp(rd, buf, 16 * 65536));
	CHECK_OK(nvq_ctrl_stats(c, &st));
	CHECK(st.resets >= 1);
	nvq_dma_free(c, buf);
	nvq_dma_free(c, rd);
	nvq_close(c);
	printf("ok - reset with 16 writes in flight, all read back\n");
}

/* The same target with an NQN it does not serve: a clean refusal. */
static void refused(const char *uri)
{
	char bad[512];
	const char *nqn = strstr(uri, "nqn=");
	struct nvq_ctrl *c = NULL;
	int rc;

	CHECK(nqn);
	snprintf(bad, sizeof(bad), "%.*snqn=nqn.2026-12.io.nvq:nobody",
		 (int)(nqn - uri), uri);
	rc = nvq_open(bad, NULL, &c);
	CHECK(rc < 0);
	CHECK(!c);
	CHECK(strlen(nvq_errmsg()) > 0);
	printf("ok - unknown NQN refused: %s\n", nvq_errmsg());
}

int main(int argc, char **argv)
{
	const char *uri = argc > 1 ? argv[1] : getenv("NVQ_TCP_URI");

	if (!uri || !*uri) {
		printf("SKIP: no target (tcp: URI as argument or "
		       "NVQ_TCP_URI)\n");
		return T_EXIT_SKIP;
	}
	modes(uri);
	shared_queue(uri);
	reset_inflight(uri);
	refused(uri);
	printf("tcp-lib: ok\n");
	return 0;
}
