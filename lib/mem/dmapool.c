// SPDX-License-Identifier: MIT
/*
 * O(1) DMA block pools, after the kernel's dmapool.
 *
 * A free block holds, in its first 16 bytes, the next free block and its
 * own IOVA, so alloc pops the head and knows the IOVA without any lookup,
 * and free pushes in two stores. Chunks are page aligned and blocks are a
 * power of two no larger than a page, so every block is aligned to its
 * size and never crosses a page.
 *
 * The pool lock (lock.h: spins, sleeps only when the holder was
 * preempted) guards only the list head and the counters: a critical
 * section is a handful of instructions. Growing the pool (mmap, DMA
 * mapping) happens outside it, under a mutex that only growers take.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dmapool.h"
#include "lock.h"
#include "internal.h"
#include "mem.h"

#define CHUNK_SIZE (64u * 1024)
#define MIN_BLOCK 16u
#define MPOL_PREFERRED_MODE 1 /* from <linux/mempolicy.h> */
#define MAX_NODES 1024

struct free_block {
	struct free_block *next;
	uint64_t iova;
};

struct chunk {
	struct chunk *next;
	void *va;
};

struct nvq_dmapool {
	/* Hot: everything alloc/free touch, on one cache line. */
	uint32_t lock __cacheline_aligned; /* lock.h */
	struct free_block *free;
	unsigned int in_use;
	unsigned int capacity;

	/* Cold. */
	pthread_mutex_t grow_lock __cacheline_aligned;
	struct chunk *chunks;
	struct nvq_mem *mem;
	size_t block_size;
	size_t struct_len; /* what to munmap */
	unsigned int max_blocks; /* UINT_MAX when unlimited */
	int node;
	char name[32];
};

/* The pool's own memory, preferring @node; never fatal if NUMA is absent. */
static void *alloc_on_node(size_t len, int node)
{
	const unsigned long bits = 8 * sizeof(unsigned long);
	unsigned long mask[MAX_NODES / (8 * sizeof(unsigned long))];
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (node >= 0 && node < MAX_NODES && nvq_numa_nodes() > 1) {
		memset(mask, 0, sizeof(mask));
		mask[node / bits] |= 1ul << (node % bits);
		/* Best effort: the struct is small and only has to be near. */
		(void)syscall(SYS_mbind, p, len, MPOL_PREFERRED_MODE, mask,
			      ARRAY_SIZE(mask) * bits + 1, 0);
	}
	return p;
}

/*
 * Add one chunk of up to @want blocks. Called with grow_lock held and the
 * pool lock not held: mapping memory may sleep.
 */
static int pool_grow(struct nvq_dmapool *pool, unsigned int want)
{
	size_t bs = pool->block_size, len;
	struct free_block *first, *b;
	struct chunk *c;
	uint64_t iova;
	unsigned int i, n;
	char *va;

	n = (unsigned int)MIN((size_t)want, CHUNK_SIZE / bs);
	len = ALIGN_UP(n * bs, (size_t)NVQ_PAGE_SIZE);

	c = malloc(sizeof(*c));
	if (!c)
		return nvq_err(-ENOMEM, "dmapool %s: out of memory",
			       pool->name);
	va = nvq_mem_alloc(pool->mem, len, pool->node, &iova);
	if (!va) {
		free(c);
		return -ENOMEM; /* nvq_mem_alloc left the message */
	}
	c->va = va;

	/* Thread in address order, so that a fresh pool hands out the first
	 * block first. */
	for (i = 0; i < n; i++) {
		b = (struct free_block *)(va + i * bs);
		b->next = i + 1 < n ? (struct free_block *)(va + (i + 1) * bs) :
				      NULL;
		b->iova = iova + i * bs;
	}
	first = (struct free_block *)va;
	b = (struct free_block *)(va + (n - 1) * bs);

	nvq_lock(&pool->lock);
	b->next = pool->free;
	pool->free = first;
	WRITE_ONCE(pool->capacity, pool->capacity + n);
	nvq_unlock(&pool->lock);

	c->next = pool->chunks;
	pool->chunks = c;
	return 0;
}

static int pool_create(struct nvq_mem *mem, const char *name, size_t block_size,
		       unsigned int max_blocks, int node,
		       struct nvq_dmapool **out)
{
	struct nvq_dmapool *pool;
	size_t len = ALIGN_UP(sizeof(*pool), (size_t)NVQ_PAGE_SIZE);
	int err;

	if (!name)
		name = "pool";
	if (!mem)
		return nvq_err(-EINVAL, "dmapool %s: no DMA memory state",
			       name);
	if (block_size < MIN_BLOCK || block_size > NVQ_PAGE_SIZE ||
	    (block_size & (block_size - 1)))
		return nvq_err(-EINVAL,
			       "dmapool %s: block size %zu is not a power of "
			       "two in 16..4096",
			       name, block_size);
	if (node < -1 || node >= nvq_numa_nodes())
		return nvq_err(-EINVAL,
			       "dmapool %s: NUMA node %d does not exist (%d "
			       "node(s))",
			       name, node, nvq_numa_nodes());
	pool = alloc_on_node(len, node);
	if (!pool)
		return nvq_err(-ENOMEM, "dmapool %s: out of memory", name);
	memset(pool, 0, sizeof(*pool));
	pool->lock = NVQ_LOCK_FREE;
	pthread_mutex_init(&pool->grow_lock, NULL);
	pool->mem = mem;
	pool->block_size = block_size;
	pool->struct_len = len;
	pool->max_blocks = max_blocks ? max_blocks : UINT_MAX;
	pool->node = node;
	snprintf(pool->name, sizeof(pool->name), "%s", name);

	/* One chunk up front: the first I/O should not pay for an mmap. */
	err = pool_grow(pool, pool->max_blocks);
	if (err) {
		nvq_dmapool_destroy(pool);
		return err;
	}
	*out = pool;
	return 0;
}

struct nvq_dmapool *nvq_dmapool_create(struct nvq_mem *mem, const char *name,
				       size_t block_size,
				       unsigned int max_blocks, int node)
{
	struct nvq_dmapool *pool = NULL;

	pool_create(mem, name, block_size, max_blocks, node, &pool);
	return pool;
}

void nvq_dmapool_destroy(struct nvq_dmapool *pool)
{
	struct chunk *c, *next;

	if (!pool)
		return;
	for (c = pool->chunks; c; c = next) {
		next = c->next;
		nvq_mem_free(pool->mem, c->va);
		free(c);
	}
	pthread_mutex_destroy(&pool->grow_lock);
	munmap(pool, pool->struct_len);
}

/* Empty list: grow by a chunk unless at the limit, then retry. */
static void *__attribute__((noinline))
alloc_slow(struct nvq_dmapool *pool, uint64_t *iova)
{
	struct free_block *b;
	unsigned int cap;

	pthread_mutex_lock(&pool->grow_lock);
	nvq_lock(&pool->lock);
	b = pool->free;
	if (!b) {
		cap = pool->capacity;
		nvq_unlock(&pool->lock);
		if (cap >= pool->max_blocks) {
			pthread_mutex_unlock(&pool->grow_lock);
			nvq_err(-ENOMEM, "dmapool %s: all %u blocks in use",
				pool->name, cap);
			return NULL;
		}
		/* On failure the list stays empty; the message is set. */
		pool_grow(pool, pool->max_blocks - cap);
		nvq_lock(&pool->lock);
		b = pool->free;
	}
	if (b) {
		pool->free = b->next;
		WRITE_ONCE(pool->in_use, pool->in_use + 1);
	}
	nvq_unlock(&pool->lock);
	pthread_mutex_unlock(&pool->grow_lock);
	if (!b)
		return NULL;
	*iova = b->iova;
	return b;
}

void *nvq_dmapool_alloc(struct nvq_dmapool *pool, uint64_t *iova)
{
	struct free_block *b;

	nvq_lock(&pool->lock);
	b = pool->free;
	if (unlikely(!b)) {
		nvq_unlock(&pool->lock);
		return alloc_slow(pool, iova);
	}
	pool->free = b->next;
	WRITE_ONCE(pool->in_use, pool->in_use + 1);
	nvq_unlock(&pool->lock);
	*iova = b->iova;
	return b;
}

void nvq_dmapool_free(struct nvq_dmapool *pool, void *vaddr, uint64_t iova)
{
	struct free_block *b = vaddr;

	/* The only O(1) sanity check there is: a block is size aligned. */
	if (unlikely(!b || ((uintptr_t)b & (pool->block_size - 1))))
		return;
	b->iova = iova;
	nvq_lock(&pool->lock);
	b->next = pool->free;
	pool->free = b;
	WRITE_ONCE(pool->in_use, pool->in_use - 1);
	nvq_unlock(&pool->lock);
}

size_t nvq_dmapool_block_size(const struct nvq_dmapool *pool)
{
	return pool->block_size;
}

int nvq_dmapool_node(const struct nvq_dmapool *pool)
{
	return pool->node;
}

unsigned int nvq_dmapool_in_use(const struct nvq_dmapool *pool)
{
	return READ_ONCE(pool->in_use);
}

unsigned int nvq_dmapool_capacity(const struct nvq_dmapool *pool)
{
	return READ_ONCE(pool->capacity);
}

int nvq_pools_create(struct nvq_mem *mem, int node, struct nvq_pools *pools)
{
	char name[32];
	int err;

	if (!pools)
		return nvq_err(-EINVAL, "nvq_pools_create: NULL pools");
	pools->small = pools->page = NULL;
	snprintf(name, sizeof(name), "prp-small-n%d", node);
	err = pool_create(mem, name, 256, 0, node, &pools->small);
	if (err)
		return err;
	snprintf(name, sizeof(name), "prp-page-n%d", node);
	err = pool_create(mem, name, NVQ_PAGE_SIZE, 0, node, &pools->page);
	if (err) {
		nvq_dmapool_destroy(pools->small);
		pools->small = NULL;
	}
	return err;
}

void nvq_pools_destroy(struct nvq_pools *pools)
{
	if (!pools)
		return;
	nvq_dmapool_destroy(pools->small);
	nvq_dmapool_destroy(pools->page);
	pools->small = NULL;
	pools->page = NULL;
}
