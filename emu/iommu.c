// SPDX-License-Identifier: MIT
/*
 * The emulated IOMMU. The host maps page ranges and gets device addresses
 * (IOVAs) from a range no user virtual address can occupy (at and above
 * 2^56, beyond even 5-level paging's user half), so a driver that puts a
 * virtual address in a PRP gets a Data Transfer Error, not silent success.
 *
 * Concurrency: the table is immutable once published. map/unmap build a
 * new table, publish it, bump the generation and wait until the device
 * thread acknowledges it (it does so between commands, after dropping
 * every pointer taken from older tables). Only then is the old table
 * freed and unmap returns - an unmapped page is never touched afterwards,
 * like an IOTLB flush. Device-side lookups take no lock.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define IOVA_BASE (1ull << 56)
#define IOVA_LIMIT (1ull << 62)
#define IOVA_GUARD 4096ull /* unmapped page between mappings */
#define MAP_ALIGN 4096ull

int emu_iommu_init(struct emu_iommu *m)
{
	memset(m, 0, sizeof(*m));
	m->table = calloc(1, sizeof(*m->table));
	if (!m->table)
		return emu_err(-ENOMEM, "emu: out of memory");
	pthread_mutex_init(&m->lock, NULL);
	m->view = m->table;
	return 0;
}

void emu_iommu_fini(struct emu_iommu *m)
{
	free(m->table);
	m->table = NULL;
	pthread_mutex_destroy(&m->lock);
}

bool emu_iommu_sync(struct emu_iommu *m, uint64_t *gen)
{
	uint64_t g = __atomic_load_n(&m->gen, __ATOMIC_ACQUIRE);

	*gen = g;
	if (g == __atomic_load_n(&m->ack, __ATOMIC_RELAXED))
		return false;
	m->view = __atomic_load_n(&m->table, __ATOMIC_ACQUIRE);
	m->last = NULL;
	return true;
}

void emu_iommu_ack(struct emu_iommu *m, uint64_t gen)
{
	__atomic_store_n(&m->ack, gen, __ATOMIC_RELEASE);
}

uint8_t *emu_iommu_xlate(struct emu_iommu *m, uint64_t iova, uint64_t *avail)
{
	const struct emu_iommu_entry *e = m->last;
	size_t lo, hi;

	if (emu_likely(e && iova - e->iova < e->len))
		goto hit;
	lo = 0;
	hi = m->view->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		e = &m->view->e[mid];
		if (iova < e->iova)
			hi = mid;
		else if (iova - e->iova >= e->len)
			lo = mid + 1;
		else
			goto found;
	}
	return NULL;
found:
	m->last = e;
hit:
	*avail = e->len - (iova - e->iova);
	return e->vaddr + (iova - e->iova);
}

void *emu_iommu_range(struct emu_iommu *m, uint64_t iova, uint64_t len)
{
	uint64_t avail;
	uint8_t *p = emu_iommu_xlate(m, iova, &avail);

	if (!p || avail < len)
		return NULL;
	return p;
}

/* Publish @t and wait until the device thread no longer uses older ones. */
static void publish(struct nvq_emu *c, struct emu_iommu_table *t)
{
	struct emu_iommu *m = &c->iommu;
	struct emu_iommu_table *old = m->table;
	uint64_t g;

	__atomic_store_n(&m->table, t, __ATOMIC_RELEASE);
	g = __atomic_add_fetch(&m->gen, 1, __ATOMIC_SEQ_CST);
	emu_kick(c);
	while (__atomic_load_n(&m->ack, __ATOMIC_ACQUIRE) < g &&
	       __atomic_load_n(&c->running, __ATOMIC_ACQUIRE))
		sched_yield();
	free(old);
}

int nvq_emu_dma_map(struct nvq_emu *c, void *vaddr, size_t len, uint64_t *iova)
{
	struct emu_iommu *m = &c->iommu;
	struct emu_iommu_table *t, *n;
	uint64_t cand = IOVA_BASE;
	size_t i, pos;

	if (!vaddr || !len || (uintptr_t)vaddr % MAP_ALIGN || len % MAP_ALIGN)
		return emu_err(
			-EINVAL,
			"emu dma_map: address %p and length %zu must be non-zero multiples of 4096",
			vaddr, len);
	if ((uintptr_t)vaddr + len < (uintptr_t)vaddr ||
	    len > IOVA_LIMIT - IOVA_BASE)
		return emu_err(-EINVAL, "emu dma_map: range wraps");

	pthread_mutex_lock(&m->lock);
	t = m->table;
	/* First fit in IOVA order, keeping a guard page between mappings. */
	for (pos = 0; pos < t->n; pos++) {
		const struct emu_iommu_entry *e = &t->e[pos];

		if (cand + len + IOVA_GUARD <= e->iova)
			break;
		if (e->iova + e->len + IOVA_GUARD > cand)
			cand = e->iova + e->len + IOVA_GUARD;
	}
	if (cand + len > IOVA_LIMIT || cand + len < cand) {
		pthread_mutex_unlock(&m->lock);
		return emu_err(-ENOSPC, "emu dma_map: IOVA space exhausted");
	}
	n = malloc(sizeof(*n) + (t->n + 1) * sizeof(n->e[0]));
	if (!n) {
		pthread_mutex_unlock(&m->lock);
		return emu_err(-ENOMEM, "emu dma_map: out of memory");
	}
	n->n = t->n + 1;
	for (i = 0; i < pos; i++)
		n->e[i] = t->e[i];
	n->e[pos].iova = cand;
	n->e[pos].len = len;
	n->e[pos].vaddr = vaddr;
	for (i = pos; i < t->n; i++)
		n->e[i + 1] = t->e[i];
	publish(c, n);
	pthread_mutex_unlock(&m->lock);
	*iova = cand;
	return 0;
}

int nvq_emu_dma_unmap(struct nvq_emu *c, void *vaddr, size_t len)
{
	struct emu_iommu *m = &c->iommu;
	struct emu_iommu_table *t, *n;
	size_t i, pos;

	pthread_mutex_lock(&m->lock);
	t = m->table;
	for (pos = 0; pos < t->n; pos++)
		if (t->e[pos].vaddr == vaddr && t->e[pos].len == len)
			break;
	if (pos == t->n) {
		pthread_mutex_unlock(&m->lock);
		return emu_err(-ENOENT,
			       "emu dma_unmap: [%p, +%zu) is not a mapping",
			       vaddr, len);
	}
	n = malloc(sizeof(*n) + (t->n - 1) * sizeof(n->e[0]) + 1);
	if (!n) {
		pthread_mutex_unlock(&m->lock);
		return emu_err(-ENOMEM, "emu dma_unmap: out of memory");
	}
	n->n = t->n - 1;
	for (i = 0; i < pos; i++)
		n->e[i] = t->e[i];
	for (i = pos + 1; i < t->n; i++)
		n->e[i - 1] = t->e[i];
	publish(c, n);
	pthread_mutex_unlock(&m->lock);
	return 0;
}
