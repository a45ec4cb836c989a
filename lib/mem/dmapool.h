/* SPDX-License-Identifier: MIT */
/*
 * O(1) pools of small fixed-size DMA blocks (PRP lists, DSM ranges), as
 * the kernel's dmapool: free blocks form a LIFO list threaded through the
 * blocks themselves; the pool grows by whole DMA chunks up to a limit.
 * A controller has one pool set per NUMA node, as Linux's 2025 "nvme/pci:
 * make PRP list DMA pools per-NUMA-node" does (docs/design.md): each queue
 * uses the pools of its own node, so queues on different nodes never share
 * a pool lock or a cache line.
 *
 * In front of a node's pools a queue may keep a small cache of blocks
 * (struct nvq_pool_cache): allocation pops the queue's own list, freeing
 * pushes onto the queue's lock-free stack, and the node's pool lock is
 * taken only to refill or drain a batch (docs/design.md, "Memory and
 * NUMA").
 */
#ifndef NVQ_DMAPOOL_H
#define NVQ_DMAPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nvq_mem;
struct nvq_dmapool;

/*
 * Create a pool of @block_size-byte blocks (a power of two, 16..4096),
 * each aligned to its size and never crossing a 4096-byte page, on NUMA
 * node @node, holding at most @max_blocks blocks (0 = unlimited). The pool
 * structure itself is allocated on @node too.
 */
struct nvq_dmapool *nvq_dmapool_create(struct nvq_mem *mem, const char *name,
				       size_t block_size,
				       unsigned int max_blocks, int node);
/* Free the pool and all its DMA memory; blocks still in use die with it. */
void nvq_dmapool_destroy(struct nvq_dmapool *pool);

/*
 * A free block's first 16 bytes: the next free block and the block's own
 * IOVA. Lists of free blocks (a pool's, a cache's, a batch) are threaded
 * through them, so a batch moves between a cache and a pool in O(1).
 */
struct nvq_dmapool_block {
	struct nvq_dmapool_block *next;
	uint64_t iova;
};

/* O(1). NULL when the pool is exhausted and cannot grow. Thread-safe. */
void *nvq_dmapool_alloc(struct nvq_dmapool *pool, uint64_t *iova);
/* O(1). @vaddr/@iova as returned by nvq_dmapool_alloc(). Thread-safe. */
void nvq_dmapool_free(struct nvq_dmapool *pool, void *vaddr, uint64_t iova);

/*
 * Take up to @n blocks under one acquisition of the pool lock (growing the
 * pool if it is empty), as a list threaded through the blocks, each with
 * its IOVA. Returns how many; 0 when the pool is exhausted and cannot grow
 * (with a message). Thread-safe.
 */
unsigned int nvq_dmapool_alloc_batch(struct nvq_dmapool *pool,
				     struct nvq_dmapool_block **list,
				     unsigned int n);
/*
 * Give back the @n blocks of the list @head .. @tail (each with its IOVA
 * in ->iova) under one acquisition of the pool lock. Thread-safe.
 */
void nvq_dmapool_free_batch(struct nvq_dmapool *pool,
			    struct nvq_dmapool_block *head,
			    struct nvq_dmapool_block *tail, unsigned int n);

/*
 * What a pool did since it was created: acquisitions of its lock, those
 * that found it held (the first try failed: another thread was inside),
 * and chunks it grew by.
 */
struct nvq_dmapool_stats {
	uint64_t locks;
	uint64_t contended;
	uint64_t grows;
};
void nvq_dmapool_stats(const struct nvq_dmapool *pool,
		       struct nvq_dmapool_stats *st);

/*
 * The address of the first byte of chunk @i (0 = the newest) of @pool, or
 * NULL past the last: for tests that check where the pool's memory lives.
 * Not thread-safe against growth.
 */
void *nvq_dmapool_chunk(const struct nvq_dmapool *pool, unsigned int i);

/* The block size and the NUMA node the pool was created with. */
size_t nvq_dmapool_block_size(const struct nvq_dmapool *pool);
int nvq_dmapool_node(const struct nvq_dmapool *pool);
/* Blocks currently handed out, and total blocks the pool holds. */
unsigned int nvq_dmapool_in_use(const struct nvq_dmapool *pool);
unsigned int nvq_dmapool_capacity(const struct nvq_dmapool *pool);

/*
 * Where a controller's queues take PRP list blocks from (NVQ_PRP_POOLS, a
 * benchmark knob read by nvq_open(); docs/numa.md):
 *   NVQ_POOLS_NODE    one pool set per NUMA node, each queue uses its own
 *                     node's (Linux 6.16)
 *   NVQ_POOLS_DEVICE  one pool set for the whole device, on its node, as
 *                     Linux before 6.16: the baseline
 *   NVQ_POOLS_CACHE   per-node pool sets, and a per-queue cache in front
 *                     (the default)
 */
enum nvq_pools_mode {
	NVQ_POOLS_NODE = 0,
	NVQ_POOLS_DEVICE = 1,
	NVQ_POOLS_CACHE = 2,
};

struct nvq_pool_cache;

/*
 * The per-node pool set of a controller; a queue holds a copy of its
 * node's with its own cache (NULL when it has none).
 */
struct nvq_pools {
	struct nvq_dmapool *small; /* 256-byte blocks: lists of <= 32 PRPs */
	struct nvq_dmapool *page; /* 4096-byte blocks: full PRP list pages */
	struct nvq_pool_cache *cache; /* a queue's copy only */
	enum nvq_pools_mode mode;
	/* The pools belong to another node's set (NVQ_POOLS_DEVICE). */
	bool borrowed;
};

/*
 * Create the pool set of NUMA node @node (-1 = any): the 256-byte and the
 * 4096-byte pool, unlimited, each starting with one 64 KiB chunk. On
 * failure nothing is left allocated and both pointers are NULL.
 */
int nvq_pools_create(struct nvq_mem *mem, int node, struct nvq_pools *pools);
/*
 * Destroy both pools of @pools (either may be NULL) and clear them; a
 * borrowed set is only cleared.
 */
void nvq_pools_destroy(struct nvq_pools *pools);

/*
 * The node whose pools queue @index of @nr_queues serves best, given that
 * CPU c uses queue c % nr_queues (nvq_ctrl_queue_for_cpu()): the node of
 * its CPUs, or, where they span nodes, the node of @irq_cpu (the CPU its
 * interrupt is routed to, -1 if unknown: then the first CPU's). @cpu_node
 * maps a CPU to its node (nvq_cpu_node() outside tests); nodes outside
 * 0..@nr_nodes-1 count as node 0. *@spans (may be NULL) says whether the
 * CPUs span nodes.
 */
int nvq_pools_queue_node(unsigned int index, unsigned int nr_queues,
			 unsigned int nr_cpus, int irq_cpu, int nr_nodes,
			 int (*cpu_node)(int cpu), bool *spans);

/*
 * The per-queue cache: for each of the two pools, a list the queue's
 * allocating side owns and a lock-free stack that any thread frees onto,
 * each at most @NVQ_POOL_CACHE_SMALL / @NVQ_POOL_CACHE_PAGE blocks. The
 * allocating side pops its list; when it is empty it takes the whole
 * stack (no lock), and only when that is empty too a batch of half the
 * bound from the pool (one lock). A free that finds the stack full drains
 * it to the pool (one lock). So in the steady state of a queue whose
 * in-flight lists fit the bound no pool lock is taken at all.
 */
#define NVQ_POOL_CACHE_SMALL 64u
#define NVQ_POOL_CACHE_PAGE 16u

/*
 * Per-queue cache counters, summed over both pools: allocations served
 * without the pool lock (@hits), of which @recycles took the freed stack
 * first; batches taken from the pool (@refills) and given back
 * (@drains); allocations that went to the pool directly because another
 * thread was allocating on the same shared queue (@bypass); and blocks
 * the cache holds now (@cached).
 */
struct nvq_pool_cache_stats {
	uint64_t hits;
	uint64_t recycles;
	uint64_t refills;
	uint64_t drains;
	uint64_t bypass;
	uint64_t cached;
};

/*
 * Create the cache of a queue in front of @pools (node @node: the cache's
 * own memory is placed there). @shared: more than one thread may allocate
 * at once (a shared queue), so the allocating side takes a per-queue
 * try-lock; an exclusive queue's needs none. NULL on failure, with a
 * message.
 */
struct nvq_pool_cache *nvq_pool_cache_create(const struct nvq_pools *pools,
					     int node, bool shared);
/* Drain every cached block back to its pool and free the cache. */
void nvq_pool_cache_destroy(struct nvq_pool_cache *cache);

/*
 * The allocating side. nvq_pool_cache_enter() returns false when another
 * thread is inside on a shared queue: the caller then uses the pools
 * directly (counted as bypass). Between enter and exit,
 * nvq_pool_cache_alloc() takes a block of the small (@page false) or page
 * pool, NULL when the pool is exhausted.
 */
bool nvq_pool_cache_enter(struct nvq_pool_cache *cache);
void nvq_pool_cache_exit(struct nvq_pool_cache *cache);
void *nvq_pool_cache_alloc(struct nvq_pool_cache *cache, bool page,
			   uint64_t *iova);
/* Any thread, no enter needed: give back a block of either pool. */
void nvq_pool_cache_free(struct nvq_pool_cache *cache, bool page, void *vaddr,
			 uint64_t iova);
/*
 * What the I/O path uses: all @n blocks of a command's list, enter and
 * exit included. Returns @n, 0 when the pool is exhausted (nothing is
 * taken), or -EBUSY when another thread is allocating from the shared
 * queue's cache (counted as bypass: use the pool).
 */
int nvq_pool_cache_get(struct nvq_pool_cache *cache, bool page, unsigned int n,
		       void **va, uint64_t *iova);
/* Any thread: give back @n blocks of one pool with one push. */
void nvq_pool_cache_put(struct nvq_pool_cache *cache, bool page, unsigned int n,
			void *const *va, const uint64_t *iova);
/* Read the counters (any thread; each is read once, not as a snapshot). */
void nvq_pool_cache_stats(const struct nvq_pool_cache *cache,
			  struct nvq_pool_cache_stats *st);

#endif /* NVQ_DMAPOOL_H */
