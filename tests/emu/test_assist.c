// SPDX-License-Identifier: MIT
/*
 * The device on the host's CPUs, on a machine whose CPUs are all busy.
 *
 * Sparse RAM media: reads of never-written media read as zeroes and fault
 * in no page (minor faults stay far below one per chunk read); written
 * data reads back; a Write Zeroes of whole chunks makes them sparse again.
 * populate=1 creates media that read back what was written too.
 *
 * Assist (the transport's assist op, nvq_emu_assist()): with the whole
 * process on one CPU, a host thread that spins on the CQ while calling
 * assist gets its commands done by passes it runs itself while the device
 * thread waits for the CPU (nvq_emu_assists() grows), and every command
 * completes with the right data. Nothing here is timed: a hang fails by
 * H_TIMEOUT_MS. With assist=0 no host thread ever runs a pass.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>

#include "emu.h"
#include "harness.h"

#define CHUNK (2u << 20) /* the media's written-map granule */
#define ROUNDS 400

static long minflt(void)
{
	struct rusage ru;

	CHECK_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void test_sparse(void)
{
	struct h *h = h_open("size=512M,thp=0");
	uint64_t blocks_per_chunk = CHUNK / 4096, c;
	struct nvq_sqe s;
	struct hq *q;
	long f0, f1;
	uint8_t *b;

	h_enable(h);
	q = h_ioq(h, 1, 64, false, 0);
	b = h_alloc(h, 4096, NULL);

	/* A first pass through every chunk, then the counted one. */
	for (c = 0; c < 256; c++)
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1,
				 c * blocks_per_chunk + 7, 1, b, 4096));
	f0 = minflt();
	for (c = 0; c < 256; c++) {
		memset(b, 0xa5, 4096);
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1,
				 c * blocks_per_chunk + 100, 1, b, 4096));
		CHECK(all_zero(b, 4096));
	}
	f1 = minflt();
	/*
	 * 4 KiB pages: touching media would fault 256 times at least.
	 * ThreadSanitizer faults in shadow memory of its own on every access.
	 */
#ifndef __SANITIZE_THREAD__
	CHECK(f1 - f0 < 64);
#else
	(void)f0;
	(void)f1;
#endif

	/* Written data reads back; its neighbours still read as zeroes. */
	memset(b, 0x3c, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 5 * blocks_per_chunk + 1, 1, b,
			 4096));
	memset(b, 0, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 5 * blocks_per_chunk + 1, 1, b,
			 4096));
	CHECK_EQ(b[0], 0x3c);
	CHECK_EQ(b[4095], 0x3c);
	memset(b, 0xff, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 5 * blocks_per_chunk + 2, 1, b,
			 4096));
	CHECK(all_zero(b, 4096));

	/* A write across a chunk boundary: both halves read back. */
	memset(b, 0x5a, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 9 * blocks_per_chunk - 1, 1, b,
			 4096));
	memset(b, 0, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 9 * blocks_per_chunk - 1, 1, b,
			 4096));
	CHECK_EQ(b[0], 0x5a);

	/* Write Zeroes of the whole chunk 5: it reads as zeroes again. */
	s = h_sqe(nvq_cmd_write_zeroes);
	s.nsid = 1;
	s.cdw10 = (uint32_t)(5 * blocks_per_chunk);
	s.cdw12 = (uint32_t)(blocks_per_chunk - 1);
	CHECK_ST_OK(h_cmd(h, q, &s, NULL));
	memset(b, 0xff, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 5 * blocks_per_chunk + 1, 1, b,
			 4096));
	CHECK(all_zero(b, 4096));
	h_close(h);
}

static void test_populate(void)
{
	struct h *h = h_open("size=16M,populate=1");
	struct hq *q;
	uint8_t *b;

	h_enable(h);
	q = h_ioq(h, 1, 64, false, 0);
	b = h_alloc(h, 4096, NULL);

	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 17, 1, b, 4096));
	CHECK(all_zero(b, 4096));
	memset(b, 0x77, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 17, 1, b, 4096));
	memset(b, 0, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 17, 1, b, 4096));
	CHECK_EQ(b[100], 0x77);
	h_close(h);
}

/* On one CPU (test_assist), assist=0: the device thread alone works. */
static void test_no_assist(void)
{
	struct h *h = h_open("size=16M,assist=0");
	struct nvq_emu *emu = nvq_emu_transport_device(h->t);
	struct hq *q;
	uint8_t *b;
	int i;

	h_enable(h);
	q = h_ioq(h, 1, 64, false, 0);
	b = h_alloc(h, 4096, NULL);
	for (i = 0; i < 20; i++) {
		CHECK_EQ(h->ops->assist(h->t), 0);
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 3, 1, b, 4096));
		CHECK_EQ(h->ops->assist(h->t), 0);
	}
	CHECK_EQ(nvq_emu_assists(emu), 0);
	h_close(h);
}

static void test_assist(void)
{
	cpu_set_t one;
	struct h *h;
	struct hq *q;
	struct nvq_emu *emu;
	uint8_t *b;
	int i;

	/* Before the device thread starts: it inherits the mask. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	h = h_open("size=16M");
	emu = nvq_emu_transport_device(h->t);
	CHECK(h->ops->assist != NULL);
	h_enable(h);
	q = h_ioq(h, 1, 64, false, 0);
	b = h_alloc(h, 4096, NULL);
	memset(b, 0x42, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 3, 1, b, 4096));

	for (i = 0; i < ROUNDS; i++) {
		struct nvq_sqe s = h_sqe(nvq_cmd_read);
		uint64_t t0 = h_now();
		struct nvq_cqe c;

		memset(b, 0, 4096);
		s.nsid = 1;
		s.cdw10 = 3;
		h_prp(h, &s, b, 4096);
		h_push(h, q, &s);
		h_ring(h, q);
		/* Spin as a poller does, never yielding ourselves. */
		while (!h_cqe_ready(q)) {
			int r = h->ops->assist(h->t);

			CHECK(r >= 0 || r == -EBUSY);
			CHECK(h_now() - t0 < H_TIMEOUT_MS * 1000000ull);
		}
		CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
		CHECK_ST_OK(NVQ_STATUS(c.status));
		CHECK_EQ(b[0], 0x42);
		CHECK_EQ(b[4095], 0x42);
	}
	/* The device thread could not have run every pass: we held the CPU. */
	CHECK(nvq_emu_assists(emu) > 0);
	printf("assist: %llu passes by the host thread in %d rounds\n",
	       (unsigned long long)nvq_emu_assists(emu), ROUNDS);
	h_close(h);
}

int main(void)
{
	test_sparse();
	test_populate();
	test_assist();
	test_no_assist();
	printf("emu-assist: ok\n");
	return 0;
}
