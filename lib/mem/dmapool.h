/* SPDX-License-Identifier: MIT */
/*
 * O(1) pools of small fixed-size DMA blocks (PRP lists, DSM ranges), as
 * the kernel's dmapool: free blocks form a LIFO list threaded through the
 * blocks themselves; the pool grows by whole DMA chunks up to a limit.
 * A controller has one pool set per NUMA node, as Linux's 2025 "nvme/pci:
 * make PRP list DMA pools per-NUMA-node" does (docs/design.md): each queue
 * uses the pools of its own node, so queues on different nodes never share
 * a pool lock or a cache line.
 */
#ifndef NVQ_DMAPOOL_H
#define NVQ_DMAPOOL_H

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

/* O(1). NULL when the pool is exhausted and cannot grow. Thread-safe. */
void *nvq_dmapool_alloc(struct nvq_dmapool *pool, uint64_t *iova);
/* O(1). @vaddr/@iova as returned by nvq_dmapool_alloc(). Thread-safe. */
void nvq_dmapool_free(struct nvq_dmapool *pool, void *vaddr, uint64_t iova);

/* The block size and the NUMA node the pool was created with. */
size_t nvq_dmapool_block_size(const struct nvq_dmapool *pool);
int nvq_dmapool_node(const struct nvq_dmapool *pool);
/* Blocks currently handed out, and total blocks the pool holds. */
unsigned int nvq_dmapool_in_use(const struct nvq_dmapool *pool);
unsigned int nvq_dmapool_capacity(const struct nvq_dmapool *pool);

/* The per-node pool set of a controller. */
struct nvq_pools {
	struct nvq_dmapool *small; /* 256-byte blocks: lists of <= 32 PRPs */
	struct nvq_dmapool *page; /* 4096-byte blocks: full PRP list pages */
};

/*
 * Create the pool set of NUMA node @node (-1 = any): the 256-byte and the
 * 4096-byte pool, unlimited, each starting with one 64 KiB chunk. On
 * failure nothing is left allocated and both pointers are NULL.
 */
int nvq_pools_create(struct nvq_mem *mem, int node, struct nvq_pools *pools);
/* Destroy both pools of @pools (either may be NULL) and clear them. */
void nvq_pools_destroy(struct nvq_pools *pools);

#endif /* NVQ_DMAPOOL_H */
