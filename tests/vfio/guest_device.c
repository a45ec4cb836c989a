// SPDX-License-Identifier: MIT
/*
 * The vfio transport against a real device model: run inside the QEMU
 * guest (scripts/qemu/) on a controller bound to vfio-pci. One run checks
 * bring-up and identify, the vectors and queues the transport and the
 * controller grant, read/write/verify with random sizes (above MDTS too,
 * so commands split and use PRP lists) on every namespace and several
 * queues in poll, interrupt-wait and completion-thread modes, flush and
 * write zeroes, caller memory registered for DMA, shadow doorbells, and an
 * orderly shutdown whose data a second open reads back.
 *
 * usage: nvq-vfio-guest URI [--ns N] [--lba 512,4096,...] [--queues N]
 *        [--vectors N] [--mdts BYTES] [--dbbuf 0|1] [--ios N]
 * Each --expectation is checked when given. Exit 0 on success.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"
#include "ctrl.h"

#define MAX_NS 16
#define REGION (32u << 20) /* bytes of each namespace the test uses */

static const char *uri;
static long want_ns = -1, want_queues = -1, want_vectors = -1;
static long want_mdts = -1, want_dbbuf = -1;
static uint32_t want_lba[MAX_NS];
static unsigned int nr_want_lba;
static unsigned int ios = 200;

/* The byte at @off of the data written to LBA-relative byte @pos with
 * generation @gen: anything read back wrong shows. */
static void fill(unsigned char *p, size_t len, uint64_t pos, uint32_t gen)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = (pos + i) * 0x9e3779b97f4a7c15ull ^ gen;

		memcpy(p + i, &v, MIN(8, len - i));
	}
}

static void note(const char *fmt, const char *a, long b)
{
	fprintf(stderr, "nvq-vfio-guest: %s: ", uri);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

static struct nvq_ctrl *open_mode(enum nvq_mode mode, unsigned int queues,
				  bool shadow, const char *u)
{
	struct nvq_opts o;
	struct nvq_ctrl *c = NULL;
	int rc;

	nvq_opts_init(&o);
	o.mode = mode;
	o.nr_queues = queues;
	o.queue_depth = 64;
	o.shadow_doorbells = shadow;
	rc = nvq_open(u, &o, &c);
	if (rc || !c) {
		fprintf(stderr, "nvq_open(%s) failed: %d %s\n", u, rc,
			nvq_errmsg());
		exit(1);
	}
	return c;
}

/* ------------------------------------------------------------------ */

static void test_identify(void)
{
	struct nvq_ctrl *c = open_mode(NVQ_MODE_POLL, 1, true, uri);
	const struct nvq_id_ctrl *id = nvq_ctrl_id(c);
	uint32_t nsids[MAX_NS];
	struct nvq_ns_info info;
	int n, i;

	CHECK(id);
	CHECK(nvq_ctrl_vs(c) >= 0x10000);
	CHECK(NVQ_CAP_MQES(nvq_ctrl_cap(c)) >= 1);
	CHECK(id->sn[0] != ' ' && id->sn[0] != 0);
	CHECK(id->mn[0] != ' ' && id->mn[0] != 0);
	if (!strncmp(uri, "vfio:", 5))
		CHECK(strstr(c->t->name, "vfio:"));
	note("transport %s", c->t->name, 0);
	note("%s%ld vectors", "", (long)c->t->nr_vectors);
	CHECK(c->t->nr_vectors >= 1);
	if (want_vectors >= 0)
		CHECK_EQ(c->t->nr_vectors, want_vectors);
	/* The host IRQ of each vector is known: its CPU is read back. */
	for (i = 0; i < (int)c->t->nr_vectors; i++) {
		int cpu = c->t->ops->irq_cpu(c->t, (unsigned int)i);

		CHECK(cpu >= 0 && cpu < 1024);
	}
	CHECK_EQ(c->t->ops->irq_cpu(c->t, c->t->nr_vectors), -1);
	CHECK_EQ(c->t->ops->irq_fd(c->t, c->t->nr_vectors), -EINVAL);

	n = nvq_ns_list(c, nsids, MAX_NS);
	CHECK(n >= 1 && n <= MAX_NS);
	if (want_ns >= 0)
		CHECK_EQ(n, want_ns);
	for (i = 0; i < n; i++) {
		CHECK_EQ(nvq_ns_info(c, nsids[i], &info), 0);
		CHECK(info.lba_size == 512 || info.lba_size == 4096);
		CHECK(info.nlba * info.lba_size >= REGION);
		if ((unsigned int)i < nr_want_lba)
			CHECK_EQ(info.lba_size, want_lba[i]);
	}
	if (want_mdts >= 0)
		CHECK_EQ(nvq_ctrl_max_transfer(c), want_mdts);
	note("max transfer %s%ld bytes", "", (long)nvq_ctrl_max_transfer(c));
	if (want_dbbuf >= 0)
		CHECK_EQ(!!(id->oacs & NVQ_CTRL_OACS_DBBUF), want_dbbuf);
	nvq_close(c);
}

/* ------------------------------------------------------------------ */

struct io {
	struct nvq_queue *q;
	uint32_t nsid;
	uint64_t slba;
	uint32_t nlb;
	unsigned char *buf;
	_Atomic int done;
	int err;
	uint16_t status;
};

static void io_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct io *io = arg;

	io->err = cpl->err;
	io->status = cpl->status;
	atomic_store_explicit(&io->done, 1, memory_order_release);
}

/* Wait for @io in the queue's mode. */
static void io_wait(struct io *io, enum nvq_mode mode)
{
	uint64_t t0 = nvq_now_ns();

	while (!atomic_load_explicit(&io->done, memory_order_acquire)) {
		if (mode == NVQ_MODE_THREAD) {
			usleep(50);
		} else {
			int rc = nvq_wait(io->q, 1, 30000);

			CHECK(rc >= 0);
		}
		if (nvq_now_ns() - t0 > 60ull * 1000000000ull) {
			fprintf(stderr, "I/O at LBA %llu timed out\n",
				(unsigned long long)io->slba);
			exit(1);
		}
	}
	if (io->err) {
		fprintf(stderr,
			"I/O nsid %u LBA %llu nlb %u failed: %d status %#x "
			"(%s)\n",
			io->nsid, (unsigned long long)io->slba, io->nlb,
			io->err, io->status, nvq_status_str(io->status));
		exit(1);
	}
}

static int submit(struct io *io, bool wr)
{
	atomic_store(&io->done, 0);
	return wr ? nvq_write(io->q, io->nsid, io->buf, io->slba, io->nlb, 0,
			      io_cb, io) :
		    nvq_read(io->q, io->nsid, io->buf, io->slba, io->nlb, 0,
			     io_cb, io);
}

#define BATCH 4

/*
 * Random writes then reads of the same extents on every queue, BATCH in
 * flight per queue; sizes from one block to 4x MDTS.
 */
static void rw_verify(struct nvq_ctrl *c, enum nvq_mode mode,
		      unsigned char *mem, uint32_t gen, uint64_t seed)
{
	unsigned int nq = nvq_ctrl_queue_count(c), nslot = nq * BATCH;
	uint32_t nsids[MAX_NS], max = nvq_ctrl_max_transfer(c);
	struct io *slot = calloc(nslot, sizeof(*slot));
	size_t slot_bytes = 4 * (size_t)(max ? max : 65536);
	unsigned char *expect = malloc(slot_bytes);
	int nns = nvq_ns_list(c, nsids, MAX_NS), k;
	unsigned int i, done = 0;

	CHECK(slot && expect);
	if (slot_bytes > 256 * 1024)
		slot_bytes = 256 * 1024;
	for (k = 0; k < nns; k++) {
		struct nvq_ns_info info;
		uint32_t bs;
		uint64_t nblocks;

		CHECK_EQ(nvq_ns_info(c, nsids[k], &info), 0);
		bs = info.lba_size;
		nblocks = REGION / bs;
		for (done = 0; done < ios; done += nslot) {
			for (i = 0; i < nslot; i++) {
				struct io *io = &slot[i];
				uint32_t most = (uint32_t)(slot_bytes / bs);

				io->q = nvq_ctrl_queue(c, i % nq);
				io->nsid = nsids[k];
				io->buf = mem + i * slot_bytes;
				io->nlb =
					1 + (uint32_t)(test_rand(&seed) % most);
				/* Disjoint extents: slot i owns a stripe. */
				io->slba = (nblocks / nslot) * i +
					   test_rand(&seed) %
						   (nblocks / nslot - io->nlb);
				fill(io->buf, (size_t)io->nlb * bs,
				     io->slba * bs, gen + nsids[k]);
				CHECK_EQ(submit(io, true), 0);
			}
			for (i = 0; i < nslot; i++)
				io_wait(&slot[i], mode);
			if (!(done % (4 * nslot)))
				CHECK_EQ(nvq_flush_sync(c, nsids[k], NULL), 0);
			for (i = 0; i < nslot; i++) {
				memset(slot[i].buf, 0xa5,
				       (size_t)slot[i].nlb * bs);
				CHECK_EQ(submit(&slot[i], false), 0);
			}
			for (i = 0; i < nslot; i++) {
				struct io *io = &slot[i];
				size_t len = (size_t)io->nlb * bs;

				io_wait(io, mode);
				fill(expect, len, io->slba * bs,
				     gen + nsids[k]);
				if (memcmp(expect, io->buf, len)) {
					fprintf(stderr,
						"%s: data mismatch nsid %u LBA "
						"%llu nlb %u\n",
						uri, io->nsid,
						(unsigned long long)io->slba,
						io->nlb);
					exit(1);
				}
			}
		}
	}
	free(expect);
	free(slot);
}

/* Flush (async), write zeroes, and a synchronous bounce-buffered read. */
static void flush_zeroes(struct nvq_ctrl *c, enum nvq_mode mode)
{
	struct nvq_queue *q = nvq_ctrl_queue(c, 0);
	struct io io = { .q = q, .nsid = 1 };
	struct nvq_ns_info info;
	unsigned char *buf;
	size_t i, len;

	CHECK_EQ(nvq_ns_info(c, 1, &info), 0);
	atomic_store(&io.done, 0);
	CHECK_EQ(nvq_flush(q, 1, 0, io_cb, &io), 0);
	io_wait(&io, mode);

	len = 8 * (size_t)info.lba_size;
	buf = malloc(len); /* not DMA memory: the sync path bounces it */
	CHECK(buf);
	memset(buf, 0x5a, len);
	CHECK_EQ(nvq_write_sync(c, 1, buf, 100, 8, NULL), 0);
	atomic_store(&io.done, 0);
	CHECK_EQ(nvq_write_zeroes(q, 1, 102, 4, 0, io_cb, &io), 0);
	io_wait(&io, mode);
	memset(buf, 0xff, len);
	CHECK_EQ(nvq_read_sync(c, 1, buf, 100, 8, NULL), 0);
	for (i = 0; i < len; i++) {
		size_t blk = i / info.lba_size;
		unsigned char want = blk >= 2 && blk < 6 ? 0 : 0x5a;

		if (buf[i] != want) {
			fprintf(stderr, "write zeroes: byte %zu is %#x\n", i,
				buf[i]);
			exit(1);
		}
	}
	free(buf);
}

static void test_mode(enum nvq_mode mode, unsigned int queues, uint64_t seed)
{
	static const char *names[] = { "poll", "wait", "thread" };
	struct nvq_ctrl *c = open_mode(mode, queues, true, uri);
	unsigned int nq = nvq_ctrl_queue_count(c), i;
	size_t len = (size_t)nq * BATCH * 256 * 1024;
	unsigned char *mem;
	uint64_t intr = 0, sub = 0, dbs = 0;

	note("mode %s: %ld I/O queues", names[mode], (long)nq);
	CHECK(nq >= 1 && nq <= queues);
	if (want_queues >= 0)
		CHECK_EQ(nq, MIN((long)queues, want_queues));
	/* Shadow doorbells are used whenever QEMU offers them. */
	if (nvq_ctrl_id(c)->oacs & NVQ_CTRL_OACS_DBBUF)
		CHECK(c->queues[0]->sq_shadow && c->queues[0]->cq_shadow);

	/* Half of the runs use caller memory registered for DMA. */
	if (seed & 1) {
		mem = aligned_alloc(4096, len);
		CHECK(mem);
		CHECK_EQ(nvq_dma_register(c, mem, len), 0);
	} else {
		mem = nvq_dma_alloc(c, len, -1);
		CHECK(mem);
	}
	rw_verify(c, mode, mem, (uint32_t)seed, seed);
	flush_zeroes(c, mode);
	for (i = 0; i < nq; i++) {
		struct nvq_queue_stats st;

		nvq_queue_stats(nvq_ctrl_queue(c, i), &st);
		CHECK_EQ(st.bad_cqes, 0);
		CHECK(st.completed >= 1);
		CHECK(st.doorbells <= st.submitted);
		intr += st.interrupts;
		sub += st.submitted;
		dbs += st.doorbells;
	}
	fprintf(stderr,
		"nvq-vfio-guest: %s: mode %s: %llu commands, %llu MMIO "
		"doorbells, %llu interrupts\n",
		uri, names[mode], (unsigned long long)sub,
		(unsigned long long)dbs, (unsigned long long)intr);
	if (mode == NVQ_MODE_WAIT)
		CHECK(intr > 0);
	if (mode == NVQ_MODE_POLL)
		CHECK_EQ(intr, 0);
	if (seed & 1) {
		CHECK_EQ(nvq_dma_unregister(c, mem), 0);
		free(mem);
	} else {
		nvq_dma_free(c, mem);
	}
	nvq_close(c);
}

/* Data written before nvq_close() (CC.SHN) is there after a new open;
 * plain MMIO doorbells (no shadow) on the way. */
static void test_shutdown(void)
{
	struct nvq_ctrl *c = open_mode(NVQ_MODE_WAIT, 2, false, uri);
	struct nvq_ns_info info;
	unsigned char *buf, *expect;
	size_t len;

	CHECK(!c->queues[0]->sq_shadow);
	CHECK_EQ(nvq_ns_info(c, 1, &info), 0);
	len = 16 * (size_t)info.lba_size;
	buf = nvq_dma_alloc(c, len, -1);
	expect = malloc(len);
	CHECK(buf && expect);
	fill(buf, len, 4242, 77);
	memcpy(expect, buf, len);
	CHECK_EQ(nvq_write_sync(c, 1, buf, 4242, 16, NULL), 0);
	nvq_dma_free(c, buf);
	nvq_close(c);

	c = open_mode(NVQ_MODE_POLL, 1, true, uri);
	buf = nvq_dma_alloc(c, len, -1);
	CHECK(buf);
	CHECK_EQ(nvq_read_sync(c, 1, buf, 4242, 16, NULL), 0);
	CHECK(!memcmp(buf, expect, len));
	nvq_dma_free(c, buf);
	nvq_close(c);
	free(expect);
}

/* One vector for everything: admin and all I/O queues share it. */
static void test_one_vector(void)
{
	char u[128];
	struct nvq_ctrl *c;

	snprintf(u, sizeof(u), "%s,vectors=1", uri);
	c = open_mode(NVQ_MODE_WAIT, 3, true, u);
	CHECK_EQ(c->t->nr_vectors, 1);
	{
		unsigned char *mem = nvq_dma_alloc(
			c, (size_t)nvq_ctrl_queue_count(c) * BATCH * 256 * 1024,
			-1);

		CHECK(mem);
		rw_verify(c, NVQ_MODE_WAIT, mem, 99, 4);
		nvq_dma_free(c, mem);
	}
	nvq_close(c);
}

static long num_arg(const char *opt, const char *v)
{
	char *end;
	long n = strtol(v ? v : "", &end, 0);

	if (!v || *end || n < 0) {
		fprintf(stderr, "nvq-vfio-guest: bad value for %s\n", opt);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: nvq-vfio-guest URI [--ns N] [--lba "
				"A,B,..] [--queues N] [--vectors N] [--mdts "
				"BYTES] [--dbbuf 0|1] [--ios N]\n");
		return 2;
	}
	uri = argv[1];
	for (i = 2; i < argc; i += 2) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--ns"))
			want_ns = num_arg(o, v);
		else if (!strcmp(o, "--queues"))
			want_queues = num_arg(o, v);
		else if (!strcmp(o, "--vectors"))
			want_vectors = num_arg(o, v);
		else if (!strcmp(o, "--mdts"))
			want_mdts = num_arg(o, v);
		else if (!strcmp(o, "--dbbuf"))
			want_dbbuf = num_arg(o, v);
		else if (!strcmp(o, "--ios"))
			ios = (unsigned int)num_arg(o, v);
		else if (!strcmp(o, "--lba") && v) {
			char *dup = strdup(v), *tok, *save = NULL;

			for (tok = strtok_r(dup, ",", &save);
			     tok && nr_want_lba < MAX_NS;
			     tok = strtok_r(NULL, ",", &save))
				want_lba[nr_want_lba++] =
					(uint32_t)num_arg(o, tok);
			free(dup);
		} else {
			fprintf(stderr, "nvq-vfio-guest: unknown option %s\n",
				o);
			return 2;
		}
	}

	test_identify();
	test_mode(NVQ_MODE_POLL, 3, 2);
	test_mode(NVQ_MODE_WAIT, 3, 3);
	test_mode(NVQ_MODE_THREAD, 2, 5);
	/* The emulator's media lives only as long as one open. */
	if (!strncmp(uri, "vfio:", 5)) {
		test_shutdown();
		test_one_vector();
	}
	printf("nvq-vfio-guest: %s: ok\n", uri);
	return 0;
}
