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

#define free_block nvq_dmapool_block

struct chunk {
	struct chunk *next;
	void *va;
};

struct nvq_dmapool {
	/* Hot: everything alloc/free touch, on one cache line. */
	uint32_t lock __cacheline_aligned; /* lock.h */
	unsigned int in_use;
	struct free_block *free;
	unsigned int capacity;
	/* Under the lock, read without it: what the lock costs. */
	uint64_t locks;
	uint64_t contended;
	uint64_t grows;

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

/*
 * The pool lock, counted: one compare-and-swap when free, as nvq_lock();
 * a first try that fails is a contended acquisition.
 */
static inline void pool_lock(struct nvq_dmapool *pool)
{
	uint32_t c = NVQ_LOCK_FREE;

	if (unlikely(!__atomic_compare_exchange_n(
		    &pool->lock, &c, NVQ_LOCK_HELD, false, __ATOMIC_ACQUIRE,
		    __ATOMIC_RELAXED))) {
		nvq_lock_slow(&pool->lock);
		WRITE_ONCE(pool->contended, pool->contended + 1);
	}
	WRITE_ONCE(pool->locks, pool->locks + 1);
}

/* nvq_unlock(), here so that a profile can tell the pool lock apart. */
static inline void pool_unlock(struct nvq_dmapool *pool)
{
	if (unlikely(__atomic_exchange_n(&pool->lock, NVQ_LOCK_FREE,
					 __ATOMIC_RELEASE) ==
		     NVQ_LOCK_SLEEPERS))
		nvq_unlock_wake(&pool->lock);
}

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

	pool_lock(pool);
	b->next = pool->free;
	pool->free = first;
	WRITE_ONCE(pool->capacity, pool->capacity + n);
	WRITE_ONCE(pool->grows, pool->grows + 1);
	pool_unlock(pool);

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

/*
 * Pop up to @n blocks off the free list into *@list (NULL-terminated);
 * with the pool lock held. Returns how many.
 */
static unsigned int take(struct nvq_dmapool *pool, struct free_block **list,
			 unsigned int n)
{
	struct free_block *head = pool->free, *b = head;
	unsigned int i;

	if (!b)
		return 0;
	for (i = 1; i < n && b->next; i++)
		b = b->next;
	pool->free = b->next;
	b->next = NULL;
	WRITE_ONCE(pool->in_use, pool->in_use + i);
	*list = head;
	return i;
}

/* Empty list: grow by a chunk unless at the limit, then take up to @n. */
static unsigned int __attribute__((noinline))
alloc_slow(struct nvq_dmapool *pool, struct free_block **list, unsigned int n)
{
	unsigned int cap, got;

	pthread_mutex_lock(&pool->grow_lock);
	pool_lock(pool);
	got = take(pool, list, n);
	if (!got) {
		cap = pool->capacity;
		pool_unlock(pool);
		if (cap >= pool->max_blocks) {
			pthread_mutex_unlock(&pool->grow_lock);
			nvq_err(-ENOMEM, "dmapool %s: all %u blocks in use",
				pool->name, cap);
			return 0;
		}
		/* On failure the list stays empty; the message is set. */
		pool_grow(pool, pool->max_blocks - cap);
		pool_lock(pool);
		got = take(pool, list, n);
	}
	pool_unlock(pool);
	pthread_mutex_unlock(&pool->grow_lock);
	return got;
}

void *nvq_dmapool_alloc(struct nvq_dmapool *pool, uint64_t *iova)
{
	struct free_block *b;

	pool_lock(pool);
	b = pool->free;
	if (unlikely(!b)) {
		pool_unlock(pool);
		if (!alloc_slow(pool, &b, 1))
			return NULL;
	} else {
		pool->free = b->next;
		WRITE_ONCE(pool->in_use, pool->in_use + 1);
		pool_unlock(pool);
	}
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
	pool_lock(pool);
	b->next = pool->free;
	pool->free = b;
	WRITE_ONCE(pool->in_use, pool->in_use - 1);
	pool_unlock(pool);
}

unsigned int nvq_dmapool_alloc_batch(struct nvq_dmapool *pool,
				     struct free_block **list, unsigned int n)
{
	unsigned int got;

	*list = NULL;
	if (!n)
		return 0;
	pool_lock(pool);
	got = take(pool, list, n);
	pool_unlock(pool);
	return got ? got : alloc_slow(pool, list, n);
}

void nvq_dmapool_free_batch(struct nvq_dmapool *pool, struct free_block *head,
			    struct free_block *tail, unsigned int n)
{
	if (!n)
		return;
	pool_lock(pool);
	tail->next = pool->free;
	pool->free = head;
	WRITE_ONCE(pool->in_use, pool->in_use - n);
	pool_unlock(pool);
}

void nvq_dmapool_stats(const struct nvq_dmapool *pool,
		       struct nvq_dmapool_stats *st)
{
	st->locks = READ_ONCE(pool->locks);
	st->contended = READ_ONCE(pool->contended);
	st->grows = READ_ONCE(pool->grows);
}

void *nvq_dmapool_chunk(const struct nvq_dmapool *pool, unsigned int i)
{
	const struct chunk *c = pool->chunks;

	while (c && i--)
		c = c->next;
	return c ? c->va : NULL;
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
	memset(pools, 0, sizeof(*pools));
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
	if (!pools->borrowed) {
		nvq_dmapool_destroy(pools->small);
		nvq_dmapool_destroy(pools->page);
	}
	pools->small = NULL;
	pools->page = NULL;
	pools->borrowed = false;
}

static int clamp_node(int node, int nr_nodes)
{
	return node >= 0 && node < nr_nodes ? node : 0;
}

int nvq_pools_queue_node(unsigned int index, unsigned int nr_queues,
			 unsigned int nr_cpus, int irq_cpu, int nr_nodes,
			 int (*cpu_node)(int cpu), bool *spans)
{
	int first = -1, node;
	bool span = false;
	unsigned int cpu;

	if (!nr_queues)
		nr_queues = 1;
	if (!nr_cpus)
		nr_cpus = 1;
	for (cpu = index; cpu < nr_cpus; cpu += nr_queues) {
		node = clamp_node(cpu_node((int)cpu), nr_nodes);
		if (first < 0)
			first = node;
		else if (node != first)
			span = true;
	}
	if (spans)
		*spans = span;
	/* Where the CPUs disagree, the CPU that takes the interrupt (and in
	 * thread mode runs the completion thread) decides. */
	if ((span || first < 0) && irq_cpu >= 0)
		return clamp_node(cpu_node(irq_cpu), nr_nodes);
	if (first < 0) /* more queues than CPUs: nvq_ctrl_queue() only */
		first = clamp_node(cpu_node((int)(index % nr_cpus)), nr_nodes);
	return first;
}

/*
 * The per-queue cache. Each pool has an allocating part (the list the
 * queue's submitter pops, on the submission cache line) and a freeing
 * part (a Treiber stack any thread pushes onto). The stack's word is the
 * top block's address with the number of blocks in its low bits: blocks
 * are aligned to their size, which is larger than the bound. Only whole
 * stacks are ever taken (one exchange), never single blocks, so the
 * stack has no ABA problem and needs no generation counter.
 */
struct alloc_part {
	struct free_block *local;
	uint64_t taken; /* blocks handed out */
	uint64_t filled; /* blocks put on the list; filled - taken on it */
	uint64_t refills; /* from the pool: each block after one is a miss */
};

struct free_part {
	uintptr_t stack; /* atomic: top | count */
	uint64_t drains; /* atomic add */
};

struct nvq_pool_cache {
	/* Allocating side: its owner only (busy held on a shared queue). */
	uint32_t busy __cacheline_aligned; /* atomic */
	bool shared;
	struct alloc_part a[2]; /* [0] small, [1] page */
	uint64_t recycles[2];

	/* Freeing side: any thread. */
	struct free_part f[2] __cacheline_aligned;

	/* Cold. */
	uint64_t bypass __cacheline_aligned; /* atomic add */
	struct nvq_dmapool *pool[2];
	uintptr_t mask[2]; /* low address bits holding the stack's count */
	unsigned int cap[2];
	unsigned int batch[2];
	size_t struct_len;
};

struct nvq_pool_cache *nvq_pool_cache_create(const struct nvq_pools *pools,
					     int node, bool shared)
{
	size_t len =
		ALIGN_UP(sizeof(struct nvq_pool_cache), (size_t)NVQ_PAGE_SIZE);
	struct nvq_pool_cache *c;
	unsigned int k;

	if (!pools || !pools->small || !pools->page) {
		nvq_err(-EINVAL, "pool cache: no pools");
		return NULL;
	}
	c = alloc_on_node(len, node);
	if (!c) {
		nvq_err(-ENOMEM, "pool cache: out of memory");
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->shared = shared;
	c->struct_len = len;
	c->pool[0] = pools->small;
	c->pool[1] = pools->page;
	c->cap[0] = NVQ_POOL_CACHE_SMALL;
	c->cap[1] = NVQ_POOL_CACHE_PAGE;
	for (k = 0; k < 2; k++) {
		size_t bs = nvq_dmapool_block_size(c->pool[k]);

		c->mask[k] = bs - 1;
		/* The count must fit below the block alignment. */
		c->cap[k] = (unsigned int)MIN((size_t)c->cap[k], bs - 1);
		c->batch[k] = MAX(1u, c->cap[k] / 2);
	}
	return c;
}

/* The last block of @list and its length. */
static struct free_block *list_tail(struct free_block *list, unsigned int *n)
{
	unsigned int i = 1;

	while (list->next) {
		list = list->next;
		i++;
	}
	*n = i;
	return list;
}

void nvq_pool_cache_destroy(struct nvq_pool_cache *c)
{
	struct free_block *list, *tail;
	unsigned int k, n;

	if (!c)
		return;
	for (k = 0; k < 2; k++) {
		list = c->a[k].local;
		if (list) {
			tail = list_tail(list, &n);
			nvq_dmapool_free_batch(c->pool[k], list, tail, n);
		}
		list = (struct free_block *)(c->f[k].stack & ~c->mask[k]);
		if (list) {
			tail = list_tail(list, &n);
			nvq_dmapool_free_batch(c->pool[k], list, tail, n);
		}
	}
	munmap(c, c->struct_len);
}

/* Static, so that the I/O path inlines them (the library is PIC). */
static inline bool cache_enter(struct nvq_pool_cache *c)
{
	if (!c->shared)
		return true;
	if (likely(!__atomic_exchange_n(&c->busy, 1, __ATOMIC_ACQUIRE)))
		return true;
	__atomic_fetch_add(&c->bypass, 1, __ATOMIC_RELAXED);
	return false;
}

static inline void cache_exit(struct nvq_pool_cache *c)
{
	if (c->shared)
		__atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
}

bool nvq_pool_cache_enter(struct nvq_pool_cache *c)
{
	return cache_enter(c);
}

void nvq_pool_cache_exit(struct nvq_pool_cache *c)
{
	cache_exit(c);
}

/*
 * The allocating list is empty: take what was freed (no lock), else a
 * batch from the pool (one lock). Returns 0 after taking the freed
 * blocks, 1 after a refill from the pool, -1 when the pool is exhausted.
 */
static int __attribute__((noinline))
cache_refill(struct nvq_pool_cache *c, unsigned int k)
{
	struct alloc_part *a = &c->a[k];
	struct free_block *list;
	unsigned int n;
	uintptr_t w;

	w = __atomic_exchange_n(&c->f[k].stack, 0, __ATOMIC_ACQUIRE);
	if (w) {
		a->local = (struct free_block *)(w & ~c->mask[k]);
		WRITE_ONCE(a->filled, a->filled + (w & c->mask[k]));
		WRITE_ONCE(c->recycles[k], c->recycles[k] + 1);
		return 0;
	}
	n = nvq_dmapool_alloc_batch(c->pool[k], &list, c->batch[k]);
	if (!n)
		return -1;
	a->local = list;
	WRITE_ONCE(a->filled, a->filled + n);
	WRITE_ONCE(a->refills, a->refills + 1);
	return 1;
}

/* Pop up to @n blocks of pool @k; inside the allocating side. */
static inline unsigned int take_blocks(struct nvq_pool_cache *c, unsigned int k,
				       unsigned int n, void **va,
				       uint64_t *iova)
{
	struct alloc_part *a = &c->a[k];
	struct free_block *b;
	unsigned int i;

	for (i = 0; i < n; i++) {
		b = a->local;
		if (unlikely(!b)) {
			if (cache_refill(c, k) < 0)
				break;
			b = a->local;
		}
		a->local = b->next;
		va[i] = b;
		iova[i] = b->iova;
	}
	WRITE_ONCE(a->taken, a->taken + i);
	return i;
}

/* Any count, refills, failures: the general case of nvq_pool_cache_get(). */
static int __attribute__((noinline))
get_slow(struct nvq_pool_cache *c, bool page, unsigned int n, void **va,
	 uint64_t *iova)
{
	struct alloc_part *a = &c->a[page];
	unsigned int got, i;

	if (!cache_enter(c))
		return -EBUSY;
	got = take_blocks(c, page, n, va, iova);
	if (unlikely(got < n)) {
		/* All or nothing: what was taken goes back to the list. */
		for (i = 0; i < got; i++) {
			struct free_block *b = va[i];

			b->iova = iova[i];
			b->next = a->local;
			a->local = b;
		}
		WRITE_ONCE(a->taken, a->taken - got);
		got = 0;
	}
	cache_exit(c);
	return (int)got;
}

int nvq_pool_cache_get(struct nvq_pool_cache *c, bool page, unsigned int n,
		       void **va, uint64_t *iova)
{
	struct alloc_part *a = &c->a[page];
	struct free_block *b;

	/* The common case inline: one block, and the list has it. */
	if (unlikely(!cache_enter(c)))
		return -EBUSY;
	b = a->local;
	if (unlikely(n != 1 || !b)) {
		cache_exit(c);
		return get_slow(c, page, n, va, iova);
	}
	a->local = b->next;
	WRITE_ONCE(a->taken, a->taken + 1);
	*va = b;
	*iova = b->iova;
	cache_exit(c);
	return 1;
}

void *nvq_pool_cache_alloc(struct nvq_pool_cache *c, bool page, uint64_t *iova)
{
	void *va;

	return take_blocks(c, page, 1, &va, iova) ? va : NULL;
}

/*
 * The freed stack would pass its bound: give it and the chain @head ..
 * @tail (@n blocks) back to the pool, in one lock.
 */
static void __attribute__((noinline))
cache_drain(struct nvq_pool_cache *c, unsigned int k, struct free_block *head,
	    struct free_block *tail, unsigned int n)
{
	unsigned int more = 0;
	uintptr_t w;

	w = __atomic_exchange_n(&c->f[k].stack, 0, __ATOMIC_ACQUIRE);
	tail->next = (struct free_block *)(w & ~c->mask[k]);
	if (tail->next)
		tail = list_tail(tail->next, &more);
	nvq_dmapool_free_batch(c->pool[k], head, tail, n + more);
	__atomic_fetch_add(&c->f[k].drains, 1, __ATOMIC_RELAXED);
}

static void __attribute__((noinline))
put_slow(struct nvq_pool_cache *c, bool page, unsigned int n, void *const *va,
	 const uint64_t *iova)
{
	struct free_part *f = &c->f[page];
	uintptr_t mask = c->mask[page], old, cnt;
	struct free_block *head = NULL, *tail = NULL, *b;
	unsigned int i, m = 0;

	/* Chain them first: one push for a command's blocks. */
	for (i = n; i-- > 0;) {
		b = va[i];
		/* As nvq_dmapool_free(): a block is aligned to its size. */
		if (unlikely(!b || ((uintptr_t)b & mask)))
			continue;
		b->iova = iova[i];
		b->next = head;
		head = b;
		if (!tail)
			tail = b;
		m++;
	}
	if (unlikely(!m))
		return;
	old = __atomic_load_n(&f->stack, __ATOMIC_RELAXED);
	do {
		cnt = old & mask;
		if (unlikely(cnt + m > c->cap[page])) {
			cache_drain(c, page, head, tail, m);
			return;
		}
		tail->next = (struct free_block *)(old & ~mask);
		/* Release: the taker sees the chain; acquire: and the blocks
		 * below it, pushed by other threads. */
	} while (!__atomic_compare_exchange_n(
		&f->stack, &old, (uintptr_t)head | (cnt + m), false,
		__ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

void nvq_pool_cache_put(struct nvq_pool_cache *c, bool page, unsigned int n,
			void *const *va, const uint64_t *iova)
{
	struct free_part *f = &c->f[page];
	uintptr_t mask = c->mask[page], old, cnt;
	struct free_block *b = va[0];

	/* The common case inline: one aligned block onto a stack with room. */
	if (unlikely(n != 1 || !b || ((uintptr_t)b & mask))) {
		put_slow(c, page, n, va, iova);
		return;
	}
	b->iova = iova[0];
	old = __atomic_load_n(&f->stack, __ATOMIC_RELAXED);
	do {
		cnt = old & mask;
		if (unlikely(cnt >= c->cap[page])) {
			cache_drain(c, page, b, b, 1);
			return;
		}
		b->next = (struct free_block *)(old & ~mask);
	} while (!__atomic_compare_exchange_n(
		&f->stack, &old, (uintptr_t)b | (cnt + 1), false,
		__ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

void nvq_pool_cache_free(struct nvq_pool_cache *c, bool page, void *vaddr,
			 uint64_t iova)
{
	nvq_pool_cache_put(c, page, 1, &vaddr, &iova);
}

void nvq_pool_cache_stats(const struct nvq_pool_cache *c,
			  struct nvq_pool_cache_stats *st)
{
	unsigned int k;

	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	for (k = 0; k < 2; k++) {
		uint64_t refills = READ_ONCE(c->a[k].refills);
		uint64_t filled = READ_ONCE(c->a[k].filled);
		uint64_t taken = READ_ONCE(c->a[k].taken);

		/* The block taken right after a refill from the pool cost
		 * the lock; every other one came from the cache. */
		st->hits += taken - MIN(refills, taken);
		st->recycles += READ_ONCE(c->recycles[k]);
		st->refills += refills;
		st->drains += READ_ONCE(c->f[k].drains);
		st->cached += (filled > taken ? filled - taken : 0) +
			      (READ_ONCE(c->f[k].stack) & c->mask[k]);
	}
	st->bypass = READ_ONCE(c->bypass);
}
