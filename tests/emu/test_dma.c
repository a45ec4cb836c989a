// SPDX-License-Identifier: MIT
/* The emulated IOMMU: every address outside a registered range gives a
 * Data Transfer Error and the device keeps working; unmapping is final;
 * queue memory unmapped under a live queue makes the controller fatal. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"

#define GEN NVQ_SCT_GENERIC

static void still_works(struct h *h, struct hq *q)
{
	uint8_t *b = h_alloc(h, 4096, NULL);

	memset(b, 0x3c, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 7, 1, b, 4096));
	memset(b, 0, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 7, 1, b, 4096));
	CHECK_EQ(b[0], 0x3c);
	CHECK_EQ(b[4095], 0x3c);
}

static uint16_t read_prp(struct h *h, struct hq *q, uint32_t nlb, uint64_t prp1,
			 uint64_t prp2)
{
	struct nvq_sqe s = h_sqe(nvq_cmd_read);

	s.nsid = 1;
	s.cdw10 = 7; /* the block still_works() writes */
	s.cdw12 = nlb - 1;
	s.prp1 = prp1;
	s.prp2 = prp2;
	return h_cmd(h, q, &s, NULL);
}

static void bad_addresses(struct h *h, struct hq *q)
{
	uint8_t *b = h_alloc(h, 16384, NULL);
	uint64_t *list = h_alloc(h, 4096, NULL);
	uint64_t iova = h_iova(h, b);
	uint64_t end = h->arena_iova + h->arena_len;
	static uint8_t host_only[8192] __attribute__((aligned(4096)));

	/* A virtual address where an IOVA belongs (a classic driver bug). */
	CHECK_ST(read_prp(h, q, 1, (uint64_t)(uintptr_t)b, 0), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	CHECK_ST(read_prp(h, q, 1, (uint64_t)(uintptr_t)host_only, 0), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	still_works(h, q);
	/* Unregistered PRP1: zero, low, random, just past the mapping. */
	CHECK_ST(read_prp(h, q, 1, 0, 0), GEN, NVQ_SC_DATA_XFER_ERROR);
	CHECK_ST(read_prp(h, q, 1, 0x1000, 0), GEN, NVQ_SC_DATA_XFER_ERROR);
	CHECK_ST(read_prp(h, q, 1, 0xfffffffffffff000ull, 0), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	CHECK_ST(read_prp(h, q, 1, end, 0), GEN, NVQ_SC_DATA_XFER_ERROR);
	CHECK_ST(read_prp(h, q, 1, h->arena_iova - 4096, 0), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	/* PRP1 offset running over the end of the mapping into PRP2. */
	CHECK_ST(read_prp(h, q, 1, end - 2048, end), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	still_works(h, q);
	/* Unregistered second data page. */
	CHECK_ST(read_prp(h, q, 2, iova, 0x2000), GEN, NVQ_SC_DATA_XFER_ERROR);
	/* Unregistered PRP list page. */
	CHECK_ST(read_prp(h, q, 3, iova, 0x5000), GEN, NVQ_SC_DATA_XFER_ERROR);
	CHECK_ST(read_prp(h, q, 3, iova, end + 8), GEN, NVQ_SC_DATA_XFER_ERROR);
	/* List entry pointing outside. */
	list[0] = iova + 4096;
	list[1] = end + 4096;
	CHECK_ST(read_prp(h, q, 3, iova, h_iova(h, list)), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	list[1] = (uint64_t)(uintptr_t)b;
	CHECK_ST(read_prp(h, q, 3, iova, h_iova(h, list)), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	list[1] = iova + 8192;
	CHECK_ST_OK(read_prp(h, q, 3, iova, h_iova(h, list)));
	still_works(h, q);
	/* Write direction too, and admin data. */
	{
		struct nvq_sqe s = h_sqe(nvq_cmd_write);

		s.nsid = 1;
		s.prp1 = 0x10000;
		CHECK_ST(h_cmd(h, q, &s, NULL), GEN, NVQ_SC_DATA_XFER_ERROR);
		s = h_sqe(nvq_admin_get_log_page);
		s.cdw10 = NVQ_LOG_SMART | 127u << 16;
		s.prp1 = 0x10000;
		CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_DATA_XFER_ERROR);
	}
	still_works(h, q);
}

static void map_unmap(struct h *h, struct hq *q)
{
	const struct nvq_transport_ops *o = h->ops;
	uint8_t *mem = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t iova, iova2;
	int i;

	CHECK(mem != MAP_FAILED);
	/* Argument checks. */
	CHECK_EQ(o->dma_map(h->t, mem + 1, 4096, &iova), -EINVAL);
	CHECK_EQ(o->dma_map(h->t, mem, 100, &iova), -EINVAL);
	CHECK_EQ(o->dma_map(h->t, mem, 0, &iova), -EINVAL);
	CHECK_EQ(o->dma_map(h->t, NULL, 4096, &iova), -EINVAL);
	CHECK(o->dma_unmap(h->t, mem, 4096) < 0);

	/* Mapped: usable; IOVA never equals the vaddr, page aligned. */
	CHECK_EQ(o->dma_map(h->t, mem, 2 * 4096, &iova), 0);
	CHECK(iova != (uint64_t)(uintptr_t)mem);
	CHECK_EQ(iova & 4095, 0);
	memset(mem, 0, 8192);
	CHECK_ST_OK(read_prp(h, q, 2, iova, iova + 4096));
	CHECK_EQ(mem[0], 0x3c); /* block 7 was written above */
	/* Wrong length does not unmap. */
	CHECK(o->dma_unmap(h->t, mem, 4096) < 0);
	CHECK_EQ(o->dma_unmap(h->t, mem, 2 * 4096), 0);
	/* Unmapped: the old IOVA is dead and the memory untouched. */
	memset(mem, 0x77, 8192);
	CHECK_ST(read_prp(h, q, 1, iova, 0), GEN, NVQ_SC_DATA_XFER_ERROR);
	CHECK_EQ(mem[0], 0x77);
	still_works(h, q);

	/* Map/unmap churn; each new mapping works, each old one is gone. */
	for (i = 0; i < 200; i++) {
		CHECK_EQ(o->dma_map(h->t, mem + (i % 2) * 4096, 4096, &iova2),
			 0);
		CHECK_ST_OK(read_prp(h, q, 1, iova2, 0));
		CHECK_EQ(o->dma_unmap(h->t, mem + (i % 2) * 4096, 4096), 0);
		CHECK_ST(read_prp(h, q, 1, iova2, 0), GEN,
			 NVQ_SC_DATA_XFER_ERROR);
	}
	munmap(mem, 3 * 4096);
}

/* Queue memory unmapped while the queue exists: the device must not
 * touch it (it cannot complete into it) and reports a fatal status. */
static void queue_unmapped(void)
{
	struct h *h = h_open("");
	const struct nvq_transport_ops *o = h->ops;
	uint8_t *mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t iova;
	struct nvq_sqe s;

	CHECK(mem != MAP_FAILED);
	h_enable(h);
	CHECK_EQ(o->dma_map(h->t, mem, 8192, &iova), 0);
	s = h_sqe(nvq_admin_create_cq);
	s.cdw10 = 1 | 15u << 16;
	s.cdw11 = NVQ_QUEUE_PHYS_CONTIG;
	s.prp1 = iova;
	CHECK_ST_OK(h_admin(h, &s, NULL));
	CHECK_EQ(o->dma_unmap(h->t, mem, 8192), 0);
	/* After unmap returned, the device has given up the memory. */
	munmap(mem, 8192);
	h_wait_csts(h, NVQ_CSTS_CFS, NVQ_CSTS_CFS);
	/* A reset recovers. */
	h_disable(h);
	CHECK_EQ(o->reg_read32(h->t, NVQ_REG_CSTS), 0);
	h_enable(h);
	still_works(h, h_ioq(h, 1, 8, false, 0));
	h_close(h);
}

int main(void)
{
	struct h *h = h_open("size=16M");
	struct hq *q;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	still_works(h, q);
	bad_addresses(h, q);
	map_unmap(h, q);
	h_close(h);

	queue_unmapped();
	return 0;
}
