/* SPDX-License-Identifier: MIT */
/*
 * DMA memory of one controller: allocation (NUMA-aware, page aligned,
 * hugepages when available), registration of caller memory, and the
 * virtual address -> IOVA translation used on the I/O path.
 */
#ifndef NVQ_MEM_H
#define NVQ_MEM_H

#include <stddef.h>
#include <stdint.h>

struct nvq_transport;
struct nvq_mem;

/*
 * Per-queue (or per-thread) translation cache: remembers the last region
 * hit so that repeated I/O to the same buffer costs a compare, not a
 * search. Zero-initialise; owned by one thread at a time.
 */
struct nvq_mem_cache {
	uintptr_t start, end; /* [start, end) of the cached region */
	uint64_t iova; /* IOVA of start */
	uint64_t gen; /* region table generation it was taken from */
};

/* Create the DMA memory state for transport @t. */
int nvq_mem_create(struct nvq_transport *t, struct nvq_mem **mem);
/* Unmap and free everything (allocations and registrations). */
void nvq_mem_destroy(struct nvq_mem *mem);

/*
 * Allocate @len bytes (rounded up to pages) of zeroed DMA memory on NUMA
 * node @node (-1 = any), mapped for the device. *@iova (may be NULL) gets
 * the IOVA of the first byte. NULL on failure, with a message.
 */
void *nvq_mem_alloc(struct nvq_mem *mem, size_t len, int node, uint64_t *iova);
/* Free memory from nvq_mem_alloc(); -EINVAL if @vaddr is not such. */
int nvq_mem_free(struct nvq_mem *mem, void *vaddr);

/*
 * Register caller memory (any alignment; whole pages get mapped). Only the
 * bytes [@vaddr, @vaddr + @len) translate. -EEXIST if a page of it is
 * already mapped by another allocation or registration: the transport maps
 * whole pages, so two regions may not share one.
 */
int nvq_mem_register(struct nvq_mem *mem, void *vaddr, size_t len);
/* Undo nvq_mem_register(@vaddr, ...); -EINVAL if nothing starts there. */
int nvq_mem_unregister(struct nvq_mem *mem, void *vaddr);

/*
 * Translate [@vaddr, @vaddr + @len) to an IOVA. The range must lie within
 * one allocation or registration; otherwise -EFAULT (no message: the hot
 * path caller words it). @cache may be NULL. Safe to call concurrently with
 * register/unregister of other regions.
 */
int nvq_mem_iova(struct nvq_mem *mem, struct nvq_mem_cache *cache,
		 const void *vaddr, size_t len, uint64_t *iova);

#endif /* NVQ_MEM_H */
