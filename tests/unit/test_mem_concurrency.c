// SPDX-License-Identifier: MIT
/*
 * Translation while other threads register, unregister, allocate and free
 * other regions: lookups of the stable regions always succeed with the
 * same IOVA (with and without a cache), lookups of churning regions either
 * fail with -EFAULT or give an IOVA inside the device's mappings, and
 * nothing is used after it was freed (ASan / TSan watch the snapshots).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "mem.h"
#include "stub_iommu.h"

#define PG 4096ul
#define STABLE 16
#define CHURN 32
#define READERS 2
#define WRITER_ROUNDS 1500
#define READER_ROUNDS 40000

static struct nvq_transport *t;
static struct nvq_mem *mem;
static unsigned char *stable_area, *churn_area;
static uint64_t stable_iova[STABLE];
static atomic_int writers_left;

struct reader {
	pthread_t tid;
	unsigned int seed;
	int bad;
	unsigned long hits, faults;
};

/* Region i of an area: one page at an odd offset, a gap page after it. */
static unsigned char *region(unsigned char *area, unsigned int i)
{
	return area + 2 * i * PG + 24 + i;
}

static void *reader(void *arg)
{
	struct reader *r = arg;
	struct nvq_mem_cache cache;
	unsigned int n;

	memset(&cache, 0, sizeof(cache));
	for (n = 0; n < READER_ROUNDS ||
		    atomic_load_explicit(&writers_left, memory_order_relaxed);
	     n++) {
		unsigned int i = rand_r(&r->seed) % STABLE;
		unsigned int off = rand_r(&r->seed) % 1000;
		struct nvq_mem_cache *c = n % 3 ? &cache : NULL;
		uint64_t iova;
		int err;

		err = nvq_mem_iova(mem, c, region(stable_area, i) + off, 16,
				   &iova);
		if (err || iova != stable_iova[i] + off)
			r->bad = 1;

		/* A churning region: there or not, never garbage. */
		i = rand_r(&r->seed) % CHURN;
		err = nvq_mem_iova(mem, c, region(churn_area, i) + off, 16,
				   &iova);
		if (err == 0) {
			/* The IOVA is the region's page base plus offset. */
			if ((iova & (PG - 1)) != 24 + i + off)
				r->bad = 2;
			r->hits++;
		} else if (err == -EFAULT) {
			r->faults++;
		} else {
			r->bad = 3;
		}
		if (n > 50 * READER_ROUNDS)
			break; /* writers stuck: the join check reports it */
	}
	return NULL;
}

static void *writer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg, n;
	unsigned int base = (unsigned int)(uintptr_t)arg * (CHURN / 2);
	void *allocs[4] = { 0 };

	for (n = 0; n < WRITER_ROUNDS; n++) {
		/* Each writer owns half of the churning regions. */
		unsigned int i = base + rand_r(&seed) % (CHURN / 2);
		unsigned char *p = region(churn_area, i);
		int err = nvq_mem_register(mem, p, 2000);

		if (err == -EEXIST)
			CHECK_EQ(nvq_mem_unregister(mem, p), 0);
		else
			CHECK_EQ(err, 0);

		/* Allocations come and go too. */
		i = rand_r(&seed) % 4;
		if (allocs[i]) {
			CHECK_EQ(nvq_mem_free(mem, allocs[i]), 0);
			allocs[i] = NULL;
		} else {
			allocs[i] = nvq_mem_alloc(mem, PG, 0, NULL);
			CHECK(allocs[i]);
		}
	}
	for (n = 0; n < 4; n++)
		if (allocs[n])
			CHECK_EQ(nvq_mem_free(mem, allocs[n]), 0);
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

int main(void)
{
	struct reader r[READERS];
	pthread_t w[2];
	unsigned int i;

	t = stub_transport_create();
	CHECK_EQ(nvq_mem_create(t, &mem), 0);
	stable_area = mmap(NULL, 2 * STABLE * PG, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	churn_area = mmap(NULL, 2 * CHURN * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(stable_area != MAP_FAILED && churn_area != MAP_FAILED);
	for (i = 0; i < STABLE; i++) {
		CHECK_EQ(nvq_mem_register(mem, region(stable_area, i), 2000),
			 0);
		CHECK_EQ(nvq_mem_iova(mem, NULL, region(stable_area, i), 1,
				      &stable_iova[i]),
			 0);
	}

	atomic_store(&writers_left, 2);
	for (i = 0; i < READERS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].seed = i + 1;
		CHECK_EQ(pthread_create(&r[i].tid, NULL, reader, &r[i]), 0);
	}
	for (i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&w[i], NULL, writer,
					(void *)(uintptr_t)i),
			 0);
	for (i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(w[i], NULL), 0);
	for (i = 0; i < READERS; i++) {
		CHECK_EQ(pthread_join(r[i].tid, NULL), 0);
		if (r[i].bad)
			fprintf(stderr, "reader %u: bad result kind %d\n", i,
				r[i].bad);
		CHECK_EQ(r[i].bad, 0);
	}

	nvq_mem_destroy(mem);
	CHECK_EQ(stub_mappings(t), 0);
	CHECK_EQ(stub_errors(t), 0);
	stub_transport_destroy(t);
	munmap(stable_area, 2 * STABLE * PG);
	munmap(churn_area, 2 * CHURN * PG);
	return 0;
}
