// SPDX-License-Identifier: MIT
/*
 * dmapool behaviour: LIFO reuse, alignment and page containment for every
 * block size, IOVAs that match the device's view, exhaustion and recovery,
 * statistics, per-node pool sets, and release of all DMA memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "dmapool.h"
#include "internal.h"
#include "mem.h"
#include "nvq/nvq.h"
#include "stub_iommu.h"

static struct nvq_transport *t;
static struct nvq_mem *mem;

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static void test_bad_args(void)
{
	static const size_t bad[] = { 0, 1, 8, 24, 100, 8192 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		nvq_err_clear();
		CHECK(!nvq_dmapool_create(mem, "bad", bad[i], 0, -1));
		CHECK(strlen(nvq_errmsg()) > 0);
	}
	CHECK(!nvq_dmapool_create(mem, "bad", 64, 0, nvq_numa_nodes()));
	CHECK(!nvq_dmapool_create(mem, "bad", 64, 0, -2));
	CHECK(!nvq_dmapool_create(NULL, "bad", 64, 0, -1));
}

static void test_lifo(void)
{
	struct nvq_dmapool *p = nvq_dmapool_create(mem, "lifo", 64, 0, 0);
	uint64_t ia, ib, ic, id;
	void *a, *b, *c, *d;

	CHECK(p);
	a = nvq_dmapool_alloc(p, &ia);
	b = nvq_dmapool_alloc(p, &ib);
	CHECK(a && b && a != b);
	nvq_dmapool_free(p, a, ia);
	nvq_dmapool_free(p, b, ib);
	c = nvq_dmapool_alloc(p, &ic);
	d = nvq_dmapool_alloc(p, &id);
	CHECK(c == b);
	CHECK_EQ(ic, ib);
	CHECK(d == a);
	CHECK_EQ(id, ia);
	nvq_dmapool_free(p, c, ic);
	nvq_dmapool_free(p, d, id);
	CHECK_EQ(nvq_dmapool_in_use(p), 0);
	nvq_dmapool_destroy(p);
}

/* Enough blocks to need several chunks at every size. */
#define MANY 300

static void test_geometry(void)
{
	size_t bs;

	for (bs = 16; bs <= 4096; bs *= 2) {
		struct nvq_dmapool *p;
		uintptr_t va[MANY];
		uint64_t iova[MANY];
		unsigned int i, before = stub_mappings(t);

		p = nvq_dmapool_create(mem, "geom", bs, 0, -1);
		CHECK(p);
		CHECK_EQ(nvq_dmapool_block_size(p), bs);
		/* One 64 KiB chunk up front. */
		CHECK_EQ(nvq_dmapool_capacity(p), 65536 / bs);
		for (i = 0; i < MANY; i++) {
			void *b = nvq_dmapool_alloc(p, &iova[i]);

			CHECK(b);
			va[i] = (uintptr_t)b;
			CHECK_EQ(va[i] % bs, 0);
			CHECK_EQ(iova[i] % bs, 0);
			/* Never crosses a 4 KiB boundary, in either space. */
			CHECK((va[i] & 4095) + bs <= 4096);
			CHECK((iova[i] & 4095) + bs <= 4096);
			/* The device sees this block at this IOVA. */
			CHECK_EQ((uintptr_t)stub_iova_to_va(t, iova[i], bs),
				 va[i]);
			/* Writable in full. */
			memset(b, 0x5a, bs);
			CHECK_EQ(nvq_dmapool_in_use(p), i + 1);
		}
		CHECK(nvq_dmapool_capacity(p) >= MANY);
		/* No block handed out twice, none overlapping another. */
		qsort(va, MANY, sizeof(va[0]), cmp_ptr);
		for (i = 1; i < MANY; i++)
			CHECK(va[i - 1] + bs <= va[i]);
		CHECK(stub_mappings(t) > before);
		/* Destroy with blocks out: the memory goes all the same. */
		nvq_dmapool_destroy(p);
		CHECK_EQ(stub_mappings(t), before);
	}
}

static void test_exhaustion(void)
{
	/* Limit below one chunk. */
	struct nvq_dmapool *p = nvq_dmapool_create(mem, "ex", 512, 5, 0);
	void *b[6];
	uint64_t io[6];
	unsigned int i;

	CHECK(p);
	CHECK_EQ(nvq_dmapool_capacity(p), 5);
	for (i = 0; i < 5; i++) {
		b[i] = nvq_dmapool_alloc(p, &io[i]);
		CHECK(b[i]);
	}
	nvq_err_clear();
	CHECK(!nvq_dmapool_alloc(p, &io[5]));
	CHECK(strlen(nvq_errmsg()) > 0);
	CHECK(!nvq_dmapool_alloc(p, &io[5]));
	CHECK_EQ(nvq_dmapool_in_use(p), 5);
	CHECK_EQ(nvq_dmapool_capacity(p), 5);
	nvq_dmapool_free(p, b[2], io[2]);
	CHECK_EQ(nvq_dmapool_in_use(p), 4);
	b[5] = nvq_dmapool_alloc(p, &io[5]);
	CHECK(b[5] == b[2]);
	CHECK_EQ(io[5], io[2]);
	CHECK(!nvq_dmapool_alloc(p, &io[2]));
	for (i = 0; i < 6; i++)
		if (i != 2)
			nvq_dmapool_free(p, b[i], io[i]);
	CHECK_EQ(nvq_dmapool_in_use(p), 0);
	nvq_dmapool_destroy(p);

	/* Limit spanning chunks: grows 16 at a time, stops exactly there. */
	{
		enum { MAXB = 40 };
		void *v[MAXB];
		uint64_t iv[MAXB], x;

		p = nvq_dmapool_create(mem, "ex2", 4096, MAXB, 0);
		CHECK(p);
		CHECK_EQ(nvq_dmapool_capacity(p), 16);
		for (i = 0; i < MAXB; i++) {
			v[i] = nvq_dmapool_alloc(p, &iv[i]);
			CHECK(v[i]);
		}
		CHECK_EQ(nvq_dmapool_capacity(p), MAXB);
		CHECK(!nvq_dmapool_alloc(p, &x));
		CHECK_EQ(nvq_dmapool_capacity(p), MAXB);
		for (i = 0; i < MAXB; i++)
			nvq_dmapool_free(p, v[i], iv[i]);
		CHECK_EQ(nvq_dmapool_in_use(p), 0);
		/* Everything is reusable after the storm. */
		for (i = 0; i < MAXB; i++) {
			v[i] = nvq_dmapool_alloc(p, &iv[i]);
			CHECK(v[i]);
		}
		CHECK(!nvq_dmapool_alloc(p, &x));
		nvq_dmapool_destroy(p);
	}
}

/* The NUMA node of the page at @p, or -1 if the kernel will not say. */
static int page_node(void *p)
{
	void *pages[1] = { p };
	int status[1] = { -1 };

	if (syscall(SYS_move_pages, 0, 1ul, pages, NULL, status, 0))
		return -1;
	return status[0];
}

static void test_nodes(void)
{
	int n, nodes = nvq_numa_nodes();

	CHECK(nodes >= 1);
	for (n = 0; n < nodes; n++) {
		struct nvq_pools set;
		uint64_t io;
		void *b;
		int where;

		CHECK_EQ(nvq_pools_create(mem, n, &set), 0);
		CHECK(set.small && set.page);
		CHECK_EQ(nvq_dmapool_block_size(set.small), 256);
		CHECK_EQ(nvq_dmapool_block_size(set.page), 4096);
		CHECK_EQ(nvq_dmapool_node(set.small), n);
		CHECK_EQ(nvq_dmapool_node(set.page), n);
		b = nvq_dmapool_alloc(set.page, &io);
		CHECK(b);
		where = page_node(b);
		if (where >= 0)
			CHECK_EQ(where, n);
		else
			fprintf(stderr,
				"note: move_pages unavailable, node "
				"placement of node %d not checked\n",
				n);
		nvq_dmapool_free(set.page, b, io);
		nvq_pools_destroy(&set);
		CHECK(!set.small && !set.page);
	}
	/* A node that does not exist: an error and nothing left behind. */
	{
		struct nvq_pools set;
		unsigned int before = stub_mappings(t);

		nvq_err_clear();
		CHECK_EQ(nvq_pools_create(mem, nodes, &set), -EINVAL);
		CHECK(strlen(nvq_errmsg()) > 0);
		CHECK(!set.small && !set.page);
		CHECK_EQ(stub_mappings(t), before);
	}
	/* -1 = no preference. */
	{
		struct nvq_pools set;

		CHECK_EQ(nvq_pools_create(mem, -1, &set), 0);
		CHECK_EQ(nvq_dmapool_node(set.page), -1);
		nvq_pools_destroy(&set);
	}
}

static void test_map_failure(void)
{
	struct nvq_dmapool *p;
	void *b[17];
	uint64_t io[17];
	unsigned int i, before = stub_mappings(t);

	/* The first chunk cannot be mapped: create fails cleanly. */
	stub_fail_map_after(t, 0);
	CHECK(!nvq_dmapool_create(mem, "nomap", 4096, 0, 0));
	CHECK_EQ(stub_mappings(t), before);

	/* Growth fails: NULL, and the pool still works. */
	stub_fail_map_after(t, 1);
	p = nvq_dmapool_create(mem, "nogrow", 4096, 0, 0);
	CHECK(p);
	for (i = 0; i < 16; i++) {
		b[i] = nvq_dmapool_alloc(p, &io[i]);
		CHECK(b[i]);
	}
	CHECK(!nvq_dmapool_alloc(p, &io[16]));
	CHECK_EQ(nvq_dmapool_capacity(p), 16);
	stub_fail_map_after(t, -1);
	b[16] = nvq_dmapool_alloc(p, &io[16]);
	CHECK(b[16]);
	CHECK_EQ(nvq_dmapool_capacity(p), 32);
	for (i = 0; i < 17; i++)
		nvq_dmapool_free(p, b[i], io[i]);
	nvq_dmapool_destroy(p);
	CHECK_EQ(stub_mappings(t), before);
}

int main(void)
{
	t = stub_transport_create();
	CHECK_EQ(nvq_mem_create(t, &mem), 0);

	test_bad_args();
	test_lifo();
	test_geometry();
	test_exhaustion();
	test_nodes();
	test_map_failure();

	CHECK_EQ(stub_mappings(t), 0);
	nvq_mem_destroy(mem);
	CHECK_EQ(stub_mappings(t), 0);
	CHECK_EQ(stub_errors(t), 0);
	stub_transport_destroy(t);
	return 0;
}
