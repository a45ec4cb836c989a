// SPDX-License-Identifier: MIT
/* The unit tests' stub transport: a recording fake IOMMU (see the header). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub_iommu.h"

struct mapping {
	uintptr_t va;
	size_t len;
	uint64_t iova;
};

struct stub {
	struct nvq_transport t; /* first: the driver sees only this */
	pthread_mutex_t lock;
	struct mapping *maps;
	unsigned int nr, cap;
	unsigned int errors, map_calls;
	int fail_after;
	uint64_t next_iova;
	void (*db_hook)(struct nvq_transport *t, uint32_t off, uint32_t val);
};

static struct stub *to_stub(struct nvq_transport *t)
{
	return (struct stub *)t;
}

static int stub_dma_map(struct nvq_transport *t, void *vaddr, size_t len,
			uint64_t *iova)
{
	struct stub *s = to_stub(t);
	uintptr_t va = (uintptr_t)vaddr;
	unsigned int i;
	int err = 0;

	pthread_mutex_lock(&s->lock);
	s->map_calls++;
	if ((va | len) & 4095 || !len) {
		s->errors++;
		err = -EINVAL;
		goto out;
	}
	if (s->fail_after == 0) {
		err = -ENOSPC;
		goto out;
	}
	if (s->fail_after > 0)
		s->fail_after--;
	for (i = 0; i < s->nr; i++) {
		if (va < s->maps[i].va + s->maps[i].len &&
		    s->maps[i].va < va + len) {
			s->errors++;
			err = -EEXIST;
			goto out;
		}
	}
	if (s->nr == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->maps = realloc(s->maps, s->cap * sizeof(*s->maps));
		if (!s->maps)
			abort();
	}
	s->maps[s->nr].va = va;
	s->maps[s->nr].len = len;
	s->maps[s->nr].iova = s->next_iova;
	s->nr++;
	*iova = s->next_iova;
	/* A guard page between mappings: contiguity must not be assumed. */
	s->next_iova += len + 4096;
out:
	pthread_mutex_unlock(&s->lock);
	return err;
}

static int stub_dma_unmap(struct nvq_transport *t, void *vaddr, size_t len)
{
	struct stub *s = to_stub(t);
	unsigned int i;
	int err = -ENOENT;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nr; i++) {
		if (s->maps[i].va == (uintptr_t)vaddr &&
		    s->maps[i].len == len) {
			s->maps[i] = s->maps[--s->nr];
			err = 0;
			break;
		}
	}
	if (err)
		s->errors++;
	pthread_mutex_unlock(&s->lock);
	return err;
}

static uint32_t stub_read32(struct nvq_transport *t, uint32_t off)
{
	return ~0u;
}

static uint64_t stub_read64(struct nvq_transport *t, uint32_t off)
{
	return ~0ull;
}

static void stub_write32(struct nvq_transport *t, uint32_t off, uint32_t v)
{
}

static void stub_write64(struct nvq_transport *t, uint32_t off, uint64_t v)
{
}

static void stub_db_write(struct nvq_transport *t, uint32_t off, uint32_t v)
{
	struct stub *s = to_stub(t);

	if (s->db_hook)
		s->db_hook(t, off, v);
}

static int stub_irq_fd(struct nvq_transport *t, unsigned int vector)
{
	return -EINVAL;
}

static int stub_irq_cpu(struct nvq_transport *t, unsigned int vector)
{
	return -1;
}

static void stub_close(struct nvq_transport *t)
{
	stub_transport_destroy(t);
}

static const struct nvq_transport_ops stub_ops = {
	.name = "stub",
	.close = stub_close,
	.reg_read32 = stub_read32,
	.reg_read64 = stub_read64,
	.reg_write32 = stub_write32,
	.reg_write64 = stub_write64,
	.db_write = stub_db_write,
	.dma_map = stub_dma_map,
	.dma_unmap = stub_dma_unmap,
	.irq_fd = stub_irq_fd,
	.irq_cpu = stub_irq_cpu,
};

struct nvq_transport *stub_transport_create(void)
{
	struct stub *s = calloc(1, sizeof(*s));

	if (!s)
		abort();
	s->t.ops = &stub_ops;
	s->t.numa_node = -1;
	snprintf(s->t.name, sizeof(s->t.name), "stub");
	pthread_mutex_init(&s->lock, NULL);
	s->fail_after = -1;
	s->next_iova = STUB_IOVA_BASE;
	return &s->t;
}

void stub_transport_destroy(struct nvq_transport *t)
{
	struct stub *s = to_stub(t);

	pthread_mutex_destroy(&s->lock);
	free(s->maps);
	free(s);
}

unsigned int stub_mappings(struct nvq_transport *t)
{
	struct stub *s = to_stub(t);
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	n = s->nr;
	pthread_mutex_unlock(&s->lock);
	return n;
}

unsigned int stub_errors(struct nvq_transport *t)
{
	struct stub *s = to_stub(t);
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	n = s->errors;
	pthread_mutex_unlock(&s->lock);
	return n;
}

unsigned int stub_map_calls(struct nvq_transport *t)
{
	struct stub *s = to_stub(t);
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	n = s->map_calls;
	pthread_mutex_unlock(&s->lock);
	return n;
}

void stub_fail_map_after(struct nvq_transport *t, int n)
{
	struct stub *s = to_stub(t);

	pthread_mutex_lock(&s->lock);
	s->fail_after = n;
	pthread_mutex_unlock(&s->lock);
}

void stub_set_db_hook(struct nvq_transport *t,
		      void (*fn)(struct nvq_transport *t, uint32_t off,
				 uint32_t val))
{
	to_stub(t)->db_hook = fn;
}

void *stub_iova_to_va(struct nvq_transport *t, uint64_t iova, size_t len)
{
	struct stub *s = to_stub(t);
	void *va = NULL;
	unsigned int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nr; i++) {
		struct mapping *m = &s->maps[i];

		if (iova >= m->iova && iova - m->iova < m->len &&
		    len <= m->len - (iova - m->iova)) {
			va = (void *)(m->va + (iova - m->iova));
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return va;
}
