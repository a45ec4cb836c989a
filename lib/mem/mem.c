// SPDX-License-Identifier: MIT
/*
 * DMA memory of one controller.
 *
 * Every allocation and registration is a region: a byte range the caller
 * may hand to the device, backed by whole pages mapped through the
 * transport. The authoritative region table lives under a mutex; readers
 * never take it. Each change builds an immutable, sorted snapshot of
 * {start, end, iova} and publishes it with an atomic pointer, so the I/O
 * path translates with a per-queue cache compare or, on a miss, a binary
 * search over memory nobody writes.
 *
 * Old snapshots are reclaimed without a grace-period thread: a reader on
 * the slow path announces itself in one of a few per-thread counter slots
 * for the duration of its search; a writer that, after publishing, sees
 * every slot at zero knows that nobody can still hold an older snapshot
 * (a reader that arrives later loads the new pointer) and frees them.
 * Otherwise they wait for the next change, or for nvq_mem_destroy().
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvq/nvq.h"
#include "internal.h"
#include "mem.h"
#include "transport.h"

#define HUGE_SIZE (2ul << 20)
#define MPOL_BIND_MODE 2 /* MPOL_BIND from <linux/mempolicy.h> */
#define MAX_NODES 1024 /* node mask size handed to mbind */

/* Reader slots: enough that threads rarely share one. Power of two. */
#define NR_READER_SLOTS 16

enum region_kind { REGION_ALLOC, REGION_USER };

/* One entry of the authoritative table (under mem->lock). */
struct region {
	uintptr_t start, end; /* bytes the caller may DMA: [start, end) */
	uint64_t iova; /* IOVA of start */
	void *map_va; /* page-aligned range given to dma_map */
	size_t map_len;
	size_t mmap_len; /* REGION_ALLOC: what to munmap from map_va */
	enum region_kind kind;
};

/* What a lookup needs, packed for the binary search. */
struct snap_ent {
	uintptr_t start, end;
	uint64_t iova;
};

struct snapshot {
	uint64_t gen;
	size_t nr;
	struct snapshot *retired_next; /* writer-side list of old ones */
	struct snap_ent ent[];
};

struct reader_slot {
	atomic_uint active;
} __cacheline_aligned;

struct nvq_mem {
	/* Read on every I/O: keep together, away from the writer's state. */
	_Atomic(uint64_t) gen __cacheline_aligned;
	_Atomic(struct snapshot *) snap;

	struct reader_slot readers[NR_READER_SLOTS];

	pthread_mutex_t lock __cacheline_aligned;
	struct nvq_transport *t;
	struct region *regions; /* sorted by start, pages never overlap */
	size_t nr, cap;
	uint64_t next_gen;
	struct snapshot *retired;
};

static uintptr_t page_floor(uintptr_t v)
{
	return v & ~(uintptr_t)(NVQ_PAGE_SIZE - 1);
}

/* Round up to a page; false if that overflows. */
static bool page_ceil(uintptr_t v, uintptr_t *out)
{
	if (v > UINTPTR_MAX - (NVQ_PAGE_SIZE - 1))
		return false;
	*out = ALIGN_UP(v, (uintptr_t)NVQ_PAGE_SIZE);
	return true;
}

static unsigned int reader_slot_index(void)
{
	static atomic_uint next_slot;
	/* 0 = not assigned yet. initial-exec: a plain TLS load even in the
	 * shared library. */
	static __thread unsigned int slot
		__attribute__((tls_model("initial-exec")));

	if (unlikely(!slot)) {
		unsigned int n = atomic_fetch_add_explicit(
			&next_slot, 1, memory_order_relaxed);

		slot = n % NR_READER_SLOTS + 1;
	}
	return slot - 1;
}

static struct snapshot *snapshot_build(struct nvq_mem *mem)
{
	struct snapshot *s;
	size_t i;

	s = malloc(sizeof(*s) + mem->nr * sizeof(s->ent[0]));
	if (!s)
		return NULL;
	s->gen = ++mem->next_gen;
	s->nr = mem->nr;
	s->retired_next = NULL;
	for (i = 0; i < mem->nr; i++) {
		s->ent[i].start = mem->regions[i].start;
		s->ent[i].end = mem->regions[i].end;
		s->ent[i].iova = mem->regions[i].iova;
	}
	return s;
}

static void free_retired(struct nvq_mem *mem)
{
	struct snapshot *s, *next;

	for (s = mem->retired; s; s = next) {
		next = s->retired_next;
		free(s);
	}
	mem->retired = NULL;
}

/*
 * Publish @s (built from the current table) and retire the old snapshot.
 * The seq_cst store pairs with the readers' seq_cst slot increment: either
 * a reader's increment is visible to the scan below, or that reader loads
 * @s and never sees what is retired here.
 */
static void snapshot_publish(struct nvq_mem *mem, struct snapshot *s)
{
	struct snapshot *old;
	unsigned int i;

	old = atomic_exchange_explicit(&mem->snap, s, memory_order_seq_cst);
	atomic_store_explicit(&mem->gen, s->gen, memory_order_release);
	old->retired_next = mem->retired;
	mem->retired = old;

	for (i = 0; i < NR_READER_SLOTS; i++)
		if (atomic_load_explicit(&mem->readers[i].active,
					 memory_order_seq_cst))
			return;
	free_retired(mem);
}

int nvq_mem_create(struct nvq_transport *t, struct nvq_mem **memp)
{
	struct nvq_mem *mem;
	struct snapshot *s;

	if (!t || !t->ops || !t->ops->dma_map || !t->ops->dma_unmap || !memp)
		return nvq_err(-EINVAL,
			       "nvq_mem_create: transport without DMA mapping");
	mem = aligned_alloc(NVQ_CACHELINE,
			    ALIGN_UP(sizeof(*mem), (size_t)NVQ_CACHELINE));
	if (!mem)
		return nvq_err(-ENOMEM, "out of memory for DMA memory state");
	memset(mem, 0, sizeof(*mem));
	mem->t = t;
	s = snapshot_build(mem);
	if (!s) {
		free(mem);
		return nvq_err(-ENOMEM, "out of memory for DMA memory state");
	}
	pthread_mutex_init(&mem->lock, NULL);
	atomic_init(&mem->snap, s);
	atomic_init(&mem->gen, s->gen);
	*memp = mem;
	return 0;
}

static void region_release(struct nvq_mem *mem, struct region *r)
{
	mem->t->ops->dma_unmap(mem->t, r->map_va, r->map_len);
	if (r->kind == REGION_ALLOC)
		munmap(r->map_va, r->mmap_len);
}

void nvq_mem_destroy(struct nvq_mem *mem)
{
	size_t i;

	if (!mem)
		return;
	for (i = 0; i < mem->nr; i++)
		region_release(mem, &mem->regions[i]);
	free(mem->regions);
	free_retired(mem);
	free(atomic_load_explicit(&mem->snap, memory_order_relaxed));
	pthread_mutex_destroy(&mem->lock);
	free(mem);
}

/* Index of the first region whose pages end after @page_start. */
static size_t table_lower_bound(const struct nvq_mem *mem, uintptr_t pstart)
{
	size_t lo = 0, hi = mem->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct region *r = &mem->regions[mid];

		if ((uintptr_t)r->map_va + r->map_len <= pstart)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Where @r goes in the table, or -EEXIST if it shares a page with a
 * region already there. Called with the lock held.
 */
static int table_slot(struct nvq_mem *mem, const struct region *r,
		      const char *what, size_t *posp)
{
	uintptr_t pstart = (uintptr_t)r->map_va;
	size_t pos = table_lower_bound(mem, pstart);
	const struct region *o = pos < mem->nr ? &mem->regions[pos] : NULL;

	if (o && (uintptr_t)o->map_va < pstart + r->map_len)
		return nvq_err(
			-EEXIST,
			"%s: [%p, +%zu) shares memory pages with the "
			"%s region [%p, +%zu); regions may not share a "
			"page",
			what, (void *)r->start, (size_t)(r->end - r->start),
			o->kind == REGION_ALLOC ? "allocated" : "registered",
			(void *)o->start, (size_t)(o->end - o->start));
	*posp = pos;
	return 0;
}

/*
 * Insert the mapped region @r at @pos (from table_slot()) and publish.
 * Called with the lock held; on failure nothing changed.
 */
static int table_insert(struct nvq_mem *mem, const struct region *r, size_t pos,
			const char *what)
{
	struct snapshot *s;

	if (mem->nr == mem->cap) {
		size_t cap = mem->cap ? mem->cap * 2 : 16;
		struct region *n = realloc(mem->regions, cap * sizeof(*n));

		if (!n)
			return nvq_err(-ENOMEM, "%s: out of memory", what);
		mem->regions = n;
		mem->cap = cap;
	}
	memmove(&mem->regions[pos + 1], &mem->regions[pos],
		(mem->nr - pos) * sizeof(*r));
	mem->regions[pos] = *r;
	mem->nr++;
	s = snapshot_build(mem);
	if (!s) {
		mem->nr--;
		memmove(&mem->regions[pos], &mem->regions[pos + 1],
			(mem->nr - pos) * sizeof(*r));
		return nvq_err(-ENOMEM, "%s: out of memory", what);
	}
	snapshot_publish(mem, s);
	return 0;
}

/*
 * Remove the region of @kind whose first byte is @vaddr, publish, and
 * then release it: a lookup that starts after this returns no longer
 * finds it. -EINVAL if there is no such region.
 */
static int table_remove(struct nvq_mem *mem, void *vaddr, enum region_kind kind,
			const char *what)
{
	struct snapshot *s;
	struct region r;
	size_t pos;
	int err = 0;

	pthread_mutex_lock(&mem->lock);
	pos = table_lower_bound(mem, page_floor((uintptr_t)vaddr));
	if (pos == mem->nr || mem->regions[pos].start != (uintptr_t)vaddr ||
	    mem->regions[pos].kind != kind) {
		err = nvq_err(-EINVAL, "%s: %p is not the start of %s", what,
			      vaddr,
			      kind == REGION_ALLOC ?
				      "memory from nvq_mem_alloc()" :
				      "a registered buffer");
		goto out;
	}
	r = mem->regions[pos];
	mem->nr--;
	memmove(&mem->regions[pos], &mem->regions[pos + 1],
		(mem->nr - pos) * sizeof(r));
	s = snapshot_build(mem);
	if (!s) {
		/* Keep lookups consistent with the table: put it back. */
		memmove(&mem->regions[pos + 1], &mem->regions[pos],
			(mem->nr - pos) * sizeof(r));
		mem->regions[pos] = r;
		mem->nr++;
		err = nvq_err(-ENOMEM, "%s: out of memory", what);
		goto out;
	}
	snapshot_publish(mem, s);
	region_release(mem, &r);
out:
	pthread_mutex_unlock(&mem->lock);
	return err;
}

/*
 * Prefer @node for pages of [addr, addr + len). Failure to bind is not
 * fatal where the kernel or the sandbox has no NUMA policy support.
 */
static int bind_node(void *addr, size_t len, int node)
{
	const unsigned long bits = 8 * sizeof(unsigned long);
	unsigned long mask[MAX_NODES / (8 * sizeof(unsigned long))];

	if (node < 0 || nvq_numa_nodes() == 1)
		return 0;
	if ((size_t)node >= ARRAY_SIZE(mask) * bits)
		return -EINVAL;
	memset(mask, 0, sizeof(mask));
	mask[node / bits] |= 1ul << (node % bits);
	/* The kernel reads maxnode - 1 bits (a historical off-by-one). */
	if (syscall(SYS_mbind, addr, len, MPOL_BIND_MODE, mask,
		    ARRAY_SIZE(mask) * bits + 1, 0)) {
		if (errno == ENOSYS || errno == EPERM)
			return 0;
		return -errno;
	}
	return 0;
}

/*
 * Map [@va, +@len) through the transport. On failure the transport's own
 * message (RLIMIT_MEMLOCK, IOMMU space, ...) is what a user can act on:
 * keep it after @what's context instead of a bare strerror().
 */
static int map_for_device(struct nvq_mem *mem, void *va, size_t len,
			  uint64_t *iova, const char *what, void *user_va,
			  size_t user_len)
{
	char prev[512], why[384];
	int err;

	/* Success leaves this thread's message as it was. */
	snprintf(prev, sizeof(prev), "%s", nvq_errmsg());
	nvq_err_clear();
	err = mem->t->ops->dma_map(mem->t, va, len, iova);
	if (!err) {
		nvq_err(0, "%s", prev);
		return 0;
	}
	snprintf(why, sizeof(why), "%s",
		 nvq_errmsg()[0] ? nvq_errmsg() : strerror(-err));
	return nvq_err(err, "%s: mapping [%p, +%zu) for the device failed: %s",
		       what, user_va, user_len, why);
}

void *nvq_mem_alloc(struct nvq_mem *mem, size_t len, int node, uint64_t *iova)
{
	struct region r = { .kind = REGION_ALLOC };
	void *p = MAP_FAILED;
	size_t plen, pos;
	int err;

	if (!mem || !len || len > SIZE_MAX / 2) {
		nvq_err(-EINVAL, "nvq_mem_alloc: invalid length %zu", len);
		return NULL;
	}
	if (node >= nvq_numa_nodes() || node < -1) {
		nvq_err(-EINVAL,
			"nvq_mem_alloc: NUMA node %d does not exist (%d "
			"node(s))",
			node, nvq_numa_nodes());
		return NULL;
	}
	plen = ALIGN_UP(len, (size_t)NVQ_PAGE_SIZE);

	/* Large buffers: one TLB entry per 2 MiB when the system has some. */
	if (plen >= HUGE_SIZE) {
		r.mmap_len = ALIGN_UP(plen, HUGE_SIZE);
		p = mmap(NULL, r.mmap_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
				 (21 << MAP_HUGE_SHIFT),
			 -1, 0);
	}
	if (p == MAP_FAILED) {
		r.mmap_len = plen;
		p = mmap(NULL, r.mmap_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (p == MAP_FAILED) {
		nvq_err(-errno, "nvq_mem_alloc: mmap of %zu bytes failed: %s",
			plen, strerror(errno));
		return NULL;
	}
	err = bind_node(p, r.mmap_len, node);
	if (err) {
		nvq_err(err, "nvq_mem_alloc: cannot bind memory to node %d: %s",
			node, strerror(-err));
		goto err_unmap;
	}
	/* Fault every page in now, on the node the policy names. */
	memset(p, 0, plen);

	r.map_va = p;
	r.map_len = plen;
	r.start = (uintptr_t)p;
	r.end = r.start + plen;
	err = map_for_device(mem, p, plen, &r.iova, "nvq_mem_alloc", p, len);
	if (err)
		goto err_unmap;

	pthread_mutex_lock(&mem->lock);
	err = table_slot(mem, &r, "nvq_mem_alloc", &pos);
	if (!err)
		err = table_insert(mem, &r, pos, "nvq_mem_alloc");
	pthread_mutex_unlock(&mem->lock);
	if (err) {
		mem->t->ops->dma_unmap(mem->t, p, plen);
		goto err_unmap;
	}
	if (iova)
		*iova = r.iova;
	return p;

err_unmap:
	munmap(p, r.mmap_len);
	return NULL;
}

int nvq_mem_free(struct nvq_mem *mem, void *vaddr)
{
	if (!mem || !vaddr)
		return nvq_err(-EINVAL, "nvq_mem_free: NULL pointer");
	return table_remove(mem, vaddr, REGION_ALLOC, "nvq_mem_free");
}

int nvq_mem_register(struct nvq_mem *mem, void *vaddr, size_t len)
{
	struct region r = { .kind = REGION_USER };
	uintptr_t v = (uintptr_t)vaddr, pend;
	size_t pos;
	int err;

	if (!mem || !vaddr || !len)
		return nvq_err(-EINVAL,
			       "nvq_mem_register: NULL buffer or zero length");
	if (len > UINTPTR_MAX - v || !page_ceil(v + len, &pend))
		return nvq_err(-EINVAL,
			       "nvq_mem_register: [%p, +%zu) wraps the "
			       "address space",
			       vaddr, len);
	r.start = v;
	r.end = v + len;
	r.map_va = (void *)page_floor(v);
	r.map_len = pend - page_floor(v);

	/*
	 * Check for overlap before mapping: the transport keys unmapping by
	 * range, and a page mapped twice could not be unmapped unambiguously.
	 * The lock is held across dma_map so that nobody takes the slot.
	 */
	pthread_mutex_lock(&mem->lock);
	err = table_slot(mem, &r, "nvq_mem_register", &pos);
	if (err)
		goto out;
	err = map_for_device(mem, r.map_va, r.map_len, &r.iova,
			     "nvq_mem_register", vaddr, len);
	if (err)
		goto out;
	r.iova += v - page_floor(v);
	err = table_insert(mem, &r, pos, "nvq_mem_register");
	if (err)
		mem->t->ops->dma_unmap(mem->t, r.map_va, r.map_len);
out:
	pthread_mutex_unlock(&mem->lock);
	return err;
}

int nvq_mem_unregister(struct nvq_mem *mem, void *vaddr)
{
	if (!mem || !vaddr)
		return nvq_err(-EINVAL, "nvq_mem_unregister: NULL pointer");
	return table_remove(mem, vaddr, REGION_USER, "nvq_mem_unregister");
}

/* Slow path: search the published snapshot; fill @cache on success. */
static int __attribute__((noinline))
iova_lookup(struct nvq_mem *mem, struct nvq_mem_cache *cache, uintptr_t v,
	    size_t len, uint64_t *iova)
{
	struct reader_slot *slot = &mem->readers[reader_slot_index()];
	const struct snapshot *s;
	const struct snap_ent *e;
	size_t lo, hi;
	int ret = -EFAULT;

	atomic_fetch_add_explicit(&slot->active, 1, memory_order_seq_cst);
	s = atomic_load_explicit(&mem->snap, memory_order_seq_cst);

	/* Last entry with start <= v. */
	lo = 0;
	hi = s->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ent[mid].start <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		e = &s->ent[lo - 1];
		if (v < e->end && len <= e->end - v) {
			*iova = e->iova + (v - e->start);
			if (cache) {
				cache->start = e->start;
				cache->end = e->end;
				cache->iova = e->iova;
				cache->gen = s->gen;
			}
			ret = 0;
		}
	}
	atomic_fetch_sub_explicit(&slot->active, 1, memory_order_release);
	return ret;
}

int nvq_mem_iova(struct nvq_mem *mem, struct nvq_mem_cache *cache,
		 const void *vaddr, size_t len, uint64_t *iova)
{
	uintptr_t v = (uintptr_t)vaddr;

	if (likely(cache) &&
	    likely(cache->gen ==
		   atomic_load_explicit(&mem->gen, memory_order_acquire)) &&
	    likely(v >= cache->start && v < cache->end &&
		   len <= cache->end - v)) {
		*iova = cache->iova + (v - cache->start);
		return 0;
	}
	return iova_lookup(mem, cache, v, len, iova);
}
