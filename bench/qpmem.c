// SPDX-License-Identifier: MIT
/*
 * bench-qpmem: the memory one I/O queue pair costs at a given depth
 * (default: nvq's default, 256 entries), computed from the driver's
 * structures, then checked against what the allocations really take:
 *  - the queue's heap part (struct nvq_queue, command contexts, tag
 *    links) against the heap in use before and after nvq_queue_create()
 *    (glibc's mallinfo2(), main arena: the caller's thread);
 *  - the rings against the resident memory nvq_mem_alloc() adds (it
 *    rounds to pages and faults every page in).
 * PRP list memory comes from per-NUMA-node pools that all queues of a
 * node share, so a queue pair holds no PRP pages of its own; the pools'
 * initial size is printed beside. The emulated controller's own
 * per-queue state (same process, not the driver's) is listed apart.
 *
 *   bench-qpmem [depth]      exit 1 when a check fails
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu_internal.h"
#include "dmapool.h"
#include "mem.h"
#include "qos.h"
#include "queue.h"
#include "transport.h"

/* Ring allocations measured; the smallest growth counts. */
#define TRIES 5

/* What malloc hands out for @n bytes (glibc: 8-byte header, 16 align). */
static size_t chunk(size_t n)
{
	return ALIGN_UP(n + 8, (size_t)16);
}

static long resident_pages(void)
{
	long size, res;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	fclose(f);
	return res;
}

static int check(const char *what, long measured, long computed, long slack)
{
	long d = measured - computed;
	int ok = d >= -slack && d <= slack;

	printf("  check %-28s computed %8ld  measured %8ld  %s\n", what,
	       computed, measured, ok ? "ok" : "MISMATCH");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	uint32_t depth = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 256;
	uint32_t tags = depth - 1;
	size_t sq =
		ALIGN_UP((size_t)depth * NVQ_SQE_SIZE, (size_t)NVQ_PAGE_SIZE);
	size_t cq =
		ALIGN_UP((size_t)depth * NVQ_CQE_SIZE, (size_t)NVQ_PAGE_SIZE);
	size_t qs = ALIGN_UP(sizeof(struct nvq_queue), (size_t)NVQ_CACHELINE);
	size_t cmds = (size_t)tags * sizeof(struct nvq_cmd);
	size_t links = (size_t)tags * sizeof(uint32_t);
	size_t heap = qs + cmds + links, total = sq + cq + heap;
	size_t emu =
		sizeof(struct emu_sq) + sizeof(struct emu_cq) +
		(size_t)depth *
			(sizeof(struct emu_cmd) + sizeof(uint16_t) +
			 sizeof(struct emu_cmd *) + sizeof(struct nvq_cqe));
	struct nvq_queue_params p = { 0 };
	struct nvq_transport *t;
	struct nvq_queue *q;
	struct mallinfo2 m0, m1;
	struct nvq_mem *mem;
	long r0, r1, min_pages = -1, pg = sysconf(_SC_PAGESIZE);
	void *ring_sq[TRIES] = { NULL }, *ring_cq[TRIES] = { NULL };
	int bad = 0, i;

	if (depth < 2 || depth > 65536) {
		fprintf(stderr, "usage: bench-qpmem [depth 2..65536]\n");
		return 2;
	}
	printf("one I/O queue pair, depth %u (%u command ids)\n", depth, tags);
	printf("  SQ ring       %8zu  %u x %u B, page rounded\n", sq, depth,
	       NVQ_SQE_SIZE);
	printf("  CQ ring       %8zu  %u x %u B, page rounded\n", cq, depth,
	       NVQ_CQE_SIZE);
	printf("  queue struct  %8zu  struct nvq_queue (both halves, tags)\n",
	       qs);
	printf("  cmd contexts  %8zu  %u x %zu B struct nvq_cmd (SQE, "
	       "callback, PRP list slots)\n",
	       cmds, tags, sizeof(struct nvq_cmd));
	printf("  tag links     %8zu  %u x 4 B (lock-free tag stack)\n", links,
	       tags);
	printf("  PRP pages            0  none per queue: per-node pools of "
	       "256 B and 4 KiB blocks, 64 KiB each to start, shared\n");
	printf("  total         %8zu  bytes (%.1f KiB)\n", total,
	       total / 1024.0);
	printf("  + wait/thread mode QoS state %zu B (struct nvq_qos_queue)\n",
	       sizeof(struct nvq_qos_queue));
	printf("  emulated device's own state for the pair: %zu B (not the "
	       "driver's)\n",
	       emu);

	/* The queue's heap part, as nvq_queue_create() allocates it. */
	p.depth = depth;
	p.qid = 1;
	p.sq = calloc(depth, NVQ_SQE_SIZE);
	p.cq = calloc(depth, NVQ_CQE_SIZE);
	if (!p.sq || !p.cq)
		return 1;
	m0 = mallinfo2();
	if (nvq_queue_create(&p, &q)) {
		fprintf(stderr, "bench-qpmem: %s\n", nvq_errmsg());
		return 1;
	}
	m1 = mallinfo2();
	if (m1.uordblks == m0.uordblks && m1.hblkhd == m0.hblkhd) {
		printf("  check heap: not available (mallinfo2 does not see "
		       "this allocator, e.g. a sanitizer's)\n");
	} else {
		/*
		 * aligned_alloc may keep alignment padding; a large block is
		 * its own mmap (hblkhd), rounded to pages.
		 */
		size_t hb = m1.hblkhd - m0.hblkhd;

		bad |= check("heap (nvq_queue_create)",
			     (long)(m1.uordblks - m0.uordblks + hb),
			     (long)(chunk(qs) + chunk(cmds) + chunk(links)),
			     4 * NVQ_CACHELINE + (hb ? pg : 0));
	}
	nvq_queue_destroy(q);
	free(p.sq);
	free(p.cq);

	/* The rings, as the controller allocates them (DMA memory). */
	if (nvq_emu_transport_open("size=1M", &t) || nvq_mem_create(t, &mem)) {
		fprintf(stderr, "bench-qpmem: %s\n", nvq_errmsg());
		return 1;
	}
	/*
	 * Other threads (the device's) may fault pages in meanwhile: that
	 * only adds, so the smallest of a few tries is the rings' own.
	 */
	for (i = 0; i < TRIES; i++) {
		r0 = resident_pages();
		ring_sq[i] = nvq_mem_alloc(mem, (size_t)depth * NVQ_SQE_SIZE,
					   -1, NULL);
		ring_cq[i] = nvq_mem_alloc(mem, (size_t)depth * NVQ_CQE_SIZE,
					   -1, NULL);
		r1 = resident_pages();
		if (!ring_sq[i] || !ring_cq[i] || r0 < 0 || r1 < 0)
			break;
		if (min_pages < 0 || r1 - r0 < min_pages)
			min_pages = r1 - r0;
	}
	if (i < TRIES)
		printf("  check rings: not available\n");
	else
		bad |= check("rings (nvq_mem_alloc)", min_pages * pg,
			     (long)(sq + cq), 0);
	for (i = 0; i < TRIES; i++) {
		if (ring_sq[i])
			nvq_mem_free(mem, ring_sq[i]);
		if (ring_cq[i])
			nvq_mem_free(mem, ring_cq[i]);
	}
	nvq_mem_destroy(mem);
	t->ops->close(t);
	return bad;
}
