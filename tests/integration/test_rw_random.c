// SPDX-License-Identifier: MIT
/*
 * Randomised read-after-write against a model of the disk: random sizes
 * from one block to several times MDTS (so requests split), random
 * offsets, buffers at random dword offsets inside their first page (PRP1
 * offsets, PRP lists whose first entry follows an offset page), several
 * requests in flight and batched with NVQ_IO_MORE, with write zeroes and
 * deallocate mixed in. Every byte read is checked against the model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

#define SLOT (512u << 10) /* buffer space per request */
#define MAX_INFLIGHT 8

struct ext {
	uint64_t slba;
	uint32_t nlb;
	char *buf;
};

static uint64_t seed = 42;

static uint64_t rnd(uint64_t n)
{
	return test_rand(&seed) % n;
}

static int overlaps(const struct ext *e, int n, uint64_t slba, uint32_t nlb)
{
	int i;

	for (i = 0; i < n; i++)
		if (slba < e[i].slba + e[i].nlb && e[i].slba < slba + nlb)
			return 1;
	return 0;
}

static void run(const char *uri, unsigned int rounds)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	struct nvq_ns_info info;
	struct nvq_queue_stats st;
	struct cb_count cnt = { 0 };
	unsigned char *model;
	char *pool;
	uint32_t lbsz, maxb;
	uint64_t nlba, reqs = 0, cmds = 0;
	int expect = 0;
	unsigned int r;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 64;
	c = open_or_die(uri, &o);
	q = nvq_ctrl_queue(c, 0);
	CHECK_OK(nvq_ns_info(c, 1, &info));
	lbsz = info.lba_size;
	nlba = info.nlba;
	maxb = info.max_transfer / lbsz;
	model = calloc(nlba, lbsz);
	pool = nvq_dma_alloc(c, (size_t)SLOT * MAX_INFLIGHT, -1);
	CHECK(model && pool);

	for (r = 0; r < rounds; r++) {
		struct ext e[MAX_INFLIGHT];
		int n = (int)rnd(MAX_INFLIGHT) + 1, i;

		/* Writes (or zeroes/deallocates) to disjoint extents. */
		for (i = 0; i < n; i++) {
			uint32_t nlb;
			uint64_t slba;
			unsigned int flags = i + 1 < n ? NVQ_IO_MORE : 0;
			int kind = (int)rnd(10);

			do {
				/* Up to 4 * MDTS + 1 blocks, often exactly
				 * at a split boundary. */
				nlb = rnd(4) ? (uint32_t)rnd(4 * maxb + 1) + 1 :
					       maxb * (uint32_t)(rnd(4) + 1) +
						       (uint32_t)rnd(2);
				if ((uint64_t)nlb * lbsz > SLOT - 4096)
					nlb = (SLOT - 4096) / lbsz;
				slba = rnd(nlba - nlb + 1);
			} while (overlaps(e, i, slba, nlb));
			e[i].slba = slba;
			e[i].nlb = nlb;
			e[i].buf = pool + (size_t)i * SLOT + 4 * rnd(1024);
			if (kind == 0) {
				CHECK_OK(nvq_write_zeroes(q, 1, slba, nlb,
							  flags, count_cb,
							  &cnt));
				/* The emulator has no WZSL: commands of up to
				 * NLB's 65536 blocks, not MDTS-sized. */
				cmds += (nlb + 65535) / 65536;
				memset(model + slba * lbsz, 0,
				       (size_t)nlb * lbsz);
			} else if (kind == 1) {
				/* Deallocated blocks read as zeroes here
				 * (the emulator sets DLFEAT accordingly). */
				CHECK_OK(nvq_deallocate(q, 1, slba, nlb, flags,
							count_cb, &cnt));
				cmds++;
				memset(model + slba * lbsz, 0,
				       (size_t)nlb * lbsz);
			} else {
				fill_pattern(e[i].buf, (size_t)nlb * lbsz,
					     test_rand(&seed));
				CHECK_OK(nvq_write(q, 1, e[i].buf, slba, nlb,
						   flags, count_cb, &cnt));
				cmds += (nlb + maxb - 1) / maxb;
				memcpy(model + slba * lbsz, e[i].buf,
				       (size_t)nlb * lbsz);
			}
			reqs++;
		}
		expect += n;
		reap_until(q, &cnt, expect);
		CHECK_EQ(cnt.err, 0);
		CHECK_EQ(cnt.calls, expect);

		/* Reads of anything, compared with the model. */
		for (i = 0; i < n; i++) {
			uint32_t nlb = (uint32_t)rnd(4 * maxb + 1) + 1;

			if ((uint64_t)nlb * lbsz > SLOT - 4096)
				nlb = (SLOT - 4096) / lbsz;
			e[i].nlb = nlb;
			e[i].slba = rnd(nlba - nlb + 1);
			e[i].buf = pool + (size_t)i * SLOT + 4 * rnd(1024);
			memset(e[i].buf, 0xa5, (size_t)nlb * lbsz);
			CHECK_OK(nvq_read(q, 1, e[i].buf, e[i].slba, nlb,
					  i + 1 < n ? NVQ_IO_MORE : 0, count_cb,
					  &cnt));
			cmds += (nlb + maxb - 1) / maxb;
			reqs++;
		}
		expect += n;
		reap_until(q, &cnt, expect);
		CHECK_EQ(cnt.err, 0);
		for (i = 0; i < n; i++) {
			if (memcmp(e[i].buf, model + e[i].slba * lbsz,
				   (size_t)e[i].nlb * lbsz)) {
				fprintf(stderr,
					"%s: round %u: data mismatch reading %u blocks at %llu\n",
					uri, r, e[i].nlb,
					(unsigned long long)e[i].slba);
				exit(1);
			}
		}
	}
	CHECK_EQ(nvq_queue_inflight(q), 0);
	nvq_queue_stats(q, &st);
	/* Each request became ceil(blocks / MDTS) commands. */
	CHECK_EQ(st.submitted, cmds);
	if (maxb < 256)
		CHECK(cmds > reqs);
	CHECK_EQ(st.completed, st.submitted);
	CHECK_EQ(st.bad_cqes, 0);
	nvq_dma_free(c, pool);
	free(model);
	nvq_close(c);
}

int main(void)
{
	run("emu:size=8M,lbads=9,mdts=2", 150);
	run("emu:size=16M,lbads=12,mdts=2", 150);
	run("emu:size=16M,lbads=12,mdts=0", 40);
	printf("rw-random: ok\n");
	return 0;
}
