// SPDX-License-Identifier: MIT
/*
 * DMA memory: allocation, registration of unaligned caller memory, byte
 * translation checked against the device's view, the region bounds, the
 * per-queue cache (hit, refill, invalidation), error cases, and that
 * everything is unmapped at destroy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "internal.h"
#include "mem.h"
#include "nvq/nvq.h"
#include "stub_iommu.h"

#define PG 4096ul

static struct nvq_transport *t;
static struct nvq_mem *mem;

/* Translate and check the device sees @va at the result. */
static uint64_t xlate_ok(struct nvq_mem_cache *c, const void *va, size_t len)
{
	uint64_t iova = 0;

	CHECK_EQ(nvq_mem_iova(mem, c, va, len, &iova), 0);
	CHECK_EQ((uintptr_t)stub_iova_to_va(t, iova, len), (uintptr_t)va);
	return iova;
}

static int xlate(struct nvq_mem_cache *c, const void *va, size_t len)
{
	uint64_t iova;

	return nvq_mem_iova(mem, c, va, len, &iova);
}

static void *map_area(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	return p;
}

static void test_alloc(void)
{
	static const size_t lens[] = { 1,    100,   4096,
				       4097, 65536, (4ul << 20) + 5 };
	unsigned int i, before = stub_mappings(t);

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t len = lens[i], plen = ALIGN_UP(len, PG), j;
		uint64_t iova = 0;
		unsigned char *p = nvq_mem_alloc(mem, len, 0, &iova);

		CHECK(p);
		CHECK_EQ((uintptr_t)p % PG, 0);
		CHECK(iova !=
		      (uintptr_t)p); /* the stub does not identity map */
		CHECK_EQ(iova % PG, 0);
		for (j = 0; j < plen; j++)
			if (p[j])
				CHECK_EQ(p[j], 0);
		CHECK_EQ((uintptr_t)stub_iova_to_va(t, iova, plen),
			 (uintptr_t)p);
		CHECK_EQ(xlate_ok(NULL, p, len), iova);
		CHECK_EQ(xlate_ok(NULL, p + 100 % plen, 1), iova + 100 % plen);
		/* The whole rounded-up length is the caller's. */
		CHECK_EQ(xlate_ok(NULL, p, plen), iova);
		CHECK_EQ(xlate_ok(NULL, p + plen - 1, 1), iova + plen - 1);
		CHECK_EQ(xlate(NULL, p, plen + 1), -EFAULT);
		CHECK_EQ(xlate(NULL, p + plen, 1), -EFAULT);
		CHECK_EQ(xlate(NULL, p - 1, 1), -EFAULT);
		/* Writes by the host are what the device reads. */
		p[len - 1] = 0xab;
		CHECK_EQ(*(unsigned char *)stub_iova_to_va(t, iova + len - 1,
							   1),
			 0xab);

		CHECK_EQ(nvq_mem_free(mem, p + 1), -EINVAL);
		CHECK_EQ(nvq_mem_free(mem, p), 0);
		CHECK_EQ(xlate(NULL, p, 1), -EFAULT);
		nvq_err_clear();
		CHECK_EQ(nvq_mem_free(mem, p), -EINVAL);
		CHECK(strlen(nvq_errmsg()) > 0);
		CHECK_EQ(stub_mappings(t), before);
	}

	/* Any node and no IOVA wanted. */
	{
		void *p = nvq_mem_alloc(mem, 10, -1, NULL);

		CHECK(p);
		CHECK_EQ(nvq_mem_free(mem, p), 0);
	}

	nvq_err_clear();
	CHECK(!nvq_mem_alloc(mem, 0, 0, NULL));
	CHECK(strlen(nvq_errmsg()) > 0);
	CHECK(!nvq_mem_alloc(mem, 100, nvq_numa_nodes(), NULL));
	CHECK(!nvq_mem_alloc(mem, 100, -2, NULL));
	CHECK(!nvq_mem_alloc(mem, (size_t)-1, 0, NULL));

	/* The IOMMU refuses: NULL, a message, nothing left mapped. */
	stub_fail_map_after(t, 0);
	nvq_err_clear();
	CHECK(!nvq_mem_alloc(mem, 100, 0, NULL));
	CHECK(strlen(nvq_errmsg()) > 0);
	stub_fail_map_after(t, -1);
	CHECK_EQ(stub_mappings(t), before);
	CHECK_EQ(nvq_mem_free(mem, NULL), -EINVAL);
}

static void test_register(void)
{
	unsigned char *area = map_area(8 * PG);
	unsigned char *buf = area + 100;
	size_t len = 5000; /* [100, 5100): pages 0 and 1 */
	uint64_t base, iova;
	unsigned int before = stub_mappings(t);
	size_t i;

	CHECK_EQ(nvq_mem_register(mem, buf, len), 0);
	CHECK_EQ(stub_mappings(t), before + 1);
	/* Whole pages were mapped, from the page of the first byte. */
	base = xlate_ok(NULL, buf, len);
	CHECK_EQ(base % PG, 100);
	CHECK_EQ((uintptr_t)stub_iova_to_va(t, base - 100, 2 * PG),
		 (uintptr_t)area);
	/* Every byte translates to base + its offset. */
	for (i = 0; i < len; i += 97) {
		CHECK_EQ(nvq_mem_iova(mem, NULL, buf + i, 1, &iova), 0);
		CHECK_EQ(iova, base + i);
	}
	CHECK_EQ(xlate_ok(NULL, buf + len - 1, 1), base + len - 1);
	CHECK_EQ(xlate_ok(NULL, buf + 4000, len - 4000), base + 4000);

	/* Outside the registered bytes, even in a mapped page: refused. */
	CHECK_EQ(xlate(NULL, buf + len - 10, 11), -EFAULT);
	CHECK_EQ(xlate(NULL, buf, len + 1), -EFAULT);
	CHECK_EQ(xlate(NULL, buf - 1, 2), -EFAULT);
	CHECK_EQ(xlate(NULL, buf + len, 1), -EFAULT);
	CHECK_EQ(xlate(NULL, area, 1), -EFAULT);
	CHECK_EQ(xlate(NULL, buf, (size_t)-1), -EFAULT);

	/* Overlap, including only sharing a page, is refused. */
	nvq_err_clear();
	CHECK_EQ(nvq_mem_register(mem, buf, len), -EEXIST);
	CHECK(strlen(nvq_errmsg()) > 0);
	CHECK_EQ(nvq_mem_register(mem, buf + 10, 10), -EEXIST);
	CHECK_EQ(nvq_mem_register(mem, area, 50), -EEXIST);
	CHECK_EQ(nvq_mem_register(mem, area + PG + 2000, 10), -EEXIST);
	CHECK_EQ(nvq_mem_register(mem, area, 8 * PG), -EEXIST);
	CHECK_EQ(stub_mappings(t), before + 1);
	/* The next page is free. */
	CHECK_EQ(nvq_mem_register(mem, area + 2 * PG, PG), 0);
	CHECK_EQ(xlate(NULL, buf + len - 1, 2), -EFAULT); /* two regions */

	/* Unregister: by the same pointer only. */
	CHECK_EQ(nvq_mem_unregister(mem, buf + 1), -EINVAL);
	CHECK_EQ(nvq_mem_free(mem, buf), -EINVAL); /* not an allocation */
	CHECK_EQ(nvq_mem_unregister(mem, buf), 0);
	CHECK_EQ(xlate(NULL, buf, 1), -EFAULT);
	CHECK_EQ(xlate(NULL, buf + 4096, 1), -EFAULT);
	CHECK_EQ(nvq_mem_unregister(mem, buf), -EINVAL);
	CHECK_EQ(nvq_mem_unregister(mem, area + 2 * PG), 0);
	CHECK_EQ(stub_mappings(t), before);

	/* Registering DMA memory that is already allocated: overlap. */
	{
		unsigned char *p = nvq_mem_alloc(mem, PG, 0, NULL);

		CHECK(p);
		CHECK_EQ(nvq_mem_register(mem, p + 8, 8), -EEXIST);
		CHECK_EQ(nvq_mem_unregister(mem, p), -EINVAL);
		CHECK_EQ(nvq_mem_free(mem, p), 0);
	}

	/* The IOMMU refuses: error, not registered, can retry. */
	stub_fail_map_after(t, 0);
	nvq_err_clear();
	CHECK_EQ(nvq_mem_register(mem, buf, len), -ENOSPC);
	CHECK(strlen(nvq_errmsg()) > 0);
	stub_fail_map_after(t, -1);
	CHECK_EQ(xlate(NULL, buf, 1), -EFAULT);
	CHECK_EQ(nvq_mem_register(mem, buf, len), 0);
	CHECK_EQ(nvq_mem_unregister(mem, buf), 0);

	/* Bad arguments. */
	CHECK_EQ(nvq_mem_register(mem, NULL, 10), -EINVAL);
	CHECK_EQ(nvq_mem_register(mem, buf, 0), -EINVAL);
	CHECK_EQ(nvq_mem_register(mem, (void *)(UINTPTR_MAX - 10), 100),
		 -EINVAL);
	CHECK_EQ(nvq_mem_unregister(mem, NULL), -EINVAL);
	CHECK_EQ(stub_mappings(t), before);
	munmap(area, 8 * PG);
}

/* Many regions in shuffled order: the binary search finds each one. */
static void test_many(void)
{
	enum { N = 200 };
	unsigned char *area = map_area(2 * N * PG);
	uint64_t iova[N];
	unsigned int order[N], i, seed = 42;

	for (i = 0; i < N; i++)
		order[i] = i;
	for (i = N - 1; i > 0; i--) {
		unsigned int j = rand_r(&seed) % (i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	/* Region k: [area + 2k pages + k*8, + PG), a gap page in between. */
	for (i = 0; i < N; i++) {
		unsigned int k = order[i];

		CHECK_EQ(nvq_mem_register(mem, area + 2 * k * PG + k * 8, PG),
			 0);
	}
	for (i = 0; i < N; i++) {
		unsigned char *r = area + 2 * i * PG + i * 8;

		iova[i] = xlate_ok(NULL, r, PG);
		CHECK_EQ(xlate_ok(NULL, r + 1000, 5), iova[i] + 1000);
		CHECK_EQ(xlate(NULL, r - 1, 1), -EFAULT);
		CHECK_EQ(xlate(NULL, r + PG, 1), -EFAULT);
	}
	/* Drop the even ones; the odd ones keep their IOVAs. */
	for (i = 0; i < N; i += 2)
		CHECK_EQ(nvq_mem_unregister(mem, area + 2 * i * PG + i * 8), 0);
	for (i = 0; i < N; i++) {
		unsigned char *r = area + 2 * i * PG + i * 8;
		uint64_t x;

		if (i % 2) {
			CHECK_EQ(nvq_mem_iova(mem, NULL, r + 7, 9, &x), 0);
			CHECK_EQ(x, iova[i] + 7);
		} else {
			CHECK_EQ(xlate(NULL, r + 7, 9), -EFAULT);
		}
	}
	for (i = 1; i < N; i += 2)
		CHECK_EQ(nvq_mem_unregister(mem, area + 2 * i * PG + i * 8), 0);
	munmap(area, 2 * N * PG);
}

static void test_cache(void)
{
	struct nvq_mem_cache c, zero;
	unsigned char *area = map_area(8 * PG);
	unsigned char *a = area + 12, *b = area + 4 * PG;
	uint64_t ia, ib, x;

	memset(&c, 0, sizeof(c));
	memset(&zero, 0, sizeof(zero));
	CHECK_EQ(nvq_mem_register(mem, a, 2 * PG), 0);
	CHECK_EQ(nvq_mem_register(mem, b, PG), 0);

	/* A zeroed cache never hits, even for address 0. */
	CHECK_EQ(xlate(&zero, NULL, 0), -EFAULT);

	/* Miss fills the cache with the region. */
	ia = xlate_ok(&c, a, 1);
	CHECK_EQ(c.start, (uintptr_t)a);
	CHECK_EQ(c.end, (uintptr_t)a + 2 * PG);
	CHECK_EQ(c.iova, ia);
	CHECK(c.gen != 0);

	/*
	 * Hit: with the cached IOVA doctored, a hit must answer from the
	 * cache - proof the search was skipped.
	 */
	c.iova = 0x777000;
	CHECK_EQ(nvq_mem_iova(mem, &c, a + 50, 10, &x), 0);
	CHECK_EQ(x, 0x777000 + 50);
	c.iova = ia;
	/* Past the cached region's end: not answered from the cache. */
	CHECK_EQ(xlate(&c, a + 2 * PG - 4, 8), -EFAULT);
	CHECK_EQ(c.start, (uintptr_t)a);

	/* Another region: refill. */
	ib = xlate_ok(&c, b + 5, 5) - 5;
	CHECK_EQ(c.start, (uintptr_t)b);
	CHECK_EQ(c.iova, ib);
	CHECK_EQ(xlate_ok(&c, a + 7, 1), ia + 7);
	CHECK_EQ(c.start, (uintptr_t)a);

	/* Any table change bumps the generation: the doctored entry is no
	 * longer trusted, the answer comes from the new table. */
	c.iova = 0x777000;
	{
		void *p = nvq_mem_alloc(mem, PG, 0, NULL);

		CHECK(p);
		CHECK_EQ(xlate_ok(&c, a + 9, 1), ia + 9);
		CHECK_EQ(nvq_mem_free(mem, p), 0);
	}

	/* Unregister invalidates: the cached region is not used again. */
	CHECK_EQ(xlate_ok(&c, a, 1), ia);
	CHECK_EQ(nvq_mem_unregister(mem, a), 0);
	CHECK_EQ(xlate(&c, a, 1), -EFAULT);
	CHECK_EQ(xlate(&c, a + PG, 1), -EFAULT);
	/* A new registration at the same address gets a new IOVA, and the
	 * cache follows. */
	CHECK_EQ(nvq_mem_register(mem, a, 2 * PG), 0);
	x = xlate_ok(&c, a, 1);
	CHECK(x != ia);
	CHECK_EQ(nvq_mem_unregister(mem, a), 0);
	CHECK_EQ(nvq_mem_unregister(mem, b), 0);
	CHECK_EQ(xlate(&c, b, 1), -EFAULT);
	munmap(area, 8 * PG);
}

/* Destroy releases what is still allocated or registered. */
static void test_destroy(void)
{
	struct nvq_transport *t2 = stub_transport_create();
	unsigned char *area = map_area(4 * PG);
	struct nvq_mem *m;
	int i;

	CHECK_EQ(nvq_mem_create(t2, &m), 0);
	for (i = 0; i < 5; i++)
		CHECK(nvq_mem_alloc(m, 3 * PG, 0, NULL));
	CHECK_EQ(nvq_mem_register(m, area + 1, 10), 0);
	CHECK_EQ(nvq_mem_register(m, area + 2 * PG, 10), 0);
	CHECK_EQ(stub_mappings(t2), 7);
	nvq_mem_destroy(m);
	CHECK_EQ(stub_mappings(t2), 0);
	CHECK_EQ(stub_errors(t2), 0);
	/* Registered memory still belongs to the caller. */
	area[1] = 1;
	munmap(area, 4 * PG);
	stub_transport_destroy(t2);

	nvq_mem_destroy(NULL);
	CHECK_EQ(nvq_mem_create(NULL, &m), -EINVAL);
}

int main(void)
{
	t = stub_transport_create();
	CHECK_EQ(nvq_mem_create(t, &mem), 0);

	test_alloc();
	test_register();
	test_many();
	test_cache();
	test_destroy();

	nvq_mem_destroy(mem);
	CHECK_EQ(stub_mappings(t), 0);
	CHECK_EQ(stub_errors(t), 0);
	stub_transport_destroy(t);
	return 0;
}
