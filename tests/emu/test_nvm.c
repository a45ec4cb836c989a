// SPDX-License-Identifier: MIT
/* NVM command set: range/namespace/MDTS/opcode checks, every PRP shape,
 * data integrity, Write Zeroes, deallocate, Flush, CQE fields. */
#include <string.h>

#include "harness.h"

#define GEN NVQ_SCT_GENERIC
#define NSZE ((16u << 20) / 4096)

static uint16_t rw_sqe(struct h *h, struct hq *q, struct nvq_sqe *s)
{
	return h_cmd(h, q, s, NULL);
}

static void checks(struct h *h, struct hq *q)
{
	uint8_t *b = h_alloc(h, 32768, NULL);
	struct nvq_sqe s;

	/* LBA range. */
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, NSZE, 1, b, 4096), GEN,
		 NVQ_SC_LBA_RANGE);
	CHECK_ST(h_rw(h, q, nvq_cmd_write, 1, NSZE - 1, 2, b, 8192), GEN,
		 NVQ_SC_LBA_RANGE);
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, 1ull << 63, 1, b, 4096), GEN,
		 NVQ_SC_LBA_RANGE);
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, ~0ull, 4, b, 16384), GEN,
		 NVQ_SC_LBA_RANGE);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, NSZE - 1, 1, b, 4096));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 2, NSZE - 4, 4, b, 16384));

	/*
	 * Namespaces: 0, above NN, broadcast are invalid NSIDs (Invalid
	 * Namespace or Format); 3 and 1024 (ns=2 of NN=1024) are valid but
	 * inactive: Invalid Field in Command (NVMe 2.0 3.2.1.5).
	 */
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 0, 0, 1, b, 4096), GEN,
		 NVQ_SC_INVALID_NS);
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 3, 0, 1, b, 4096), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(h_rw(h, q, nvq_cmd_write, 1024, 0, 1, b, 4096), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(h_rw(h, q, nvq_cmd_write_zeroes, 3, 0, 1, NULL, 0), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 2000, 0, 1, b, 4096), GEN,
		 NVQ_SC_INVALID_NS);
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 0xffffffff, 0, 1, b, 4096), GEN,
		 NVQ_SC_INVALID_NS);
	CHECK_ST(h_rw(h, q, nvq_cmd_write_zeroes, 0, 0, 1, NULL, 0), GEN,
		 NVQ_SC_INVALID_NS);
	CHECK_ST(h_rw(h, q, nvq_cmd_flush, 0, 0, 1, NULL, 0), GEN,
		 NVQ_SC_INVALID_NS);
	CHECK_ST(h_rw(h, q, nvq_cmd_flush, 5, 0, 1, NULL, 0), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(h_rw(h, q, nvq_cmd_flush, 1025, 0, 1, NULL, 0), GEN,
		 NVQ_SC_INVALID_NS);

	/* MDTS = 2: 16 KiB per command. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 0, 4, b, 16384));
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, 0, 5, b, 20480), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(h_rw(h, q, nvq_cmd_write, 1, 0, 8, b, 32768), GEN,
		 NVQ_SC_INVALID_FIELD);

	/* Opcodes the controller does not implement. */
	CHECK_ST(h_rw(h, q, 0x7e, 1, 0, 1, b, 4096), GEN,
		 NVQ_SC_INVALID_OPCODE);
	CHECK_ST(h_rw(h, q, nvq_cmd_compare, 1, 0, 1, b, 4096), GEN,
		 NVQ_SC_INVALID_OPCODE);
	CHECK_ST(h_rw(h, q, nvq_cmd_write_uncor, 1, 0, 1, NULL, 0), GEN,
		 NVQ_SC_INVALID_OPCODE);
	CHECK_ST(h_rw(h, q, 0xff, 1, 0, 1, b, 4096), GEN,
		 NVQ_SC_INVALID_OPCODE);

	/* Fused / SGL. */
	s = h_sqe(nvq_cmd_read);
	s.nsid = 1;
	s.flags = 2;
	h_prp(h, &s, b, 4096);
	CHECK_ST(rw_sqe(h, q, &s), GEN, NVQ_SC_INVALID_FIELD);
	s = h_sqe(nvq_cmd_read);
	s.nsid = 1;
	s.flags = 2 << 6;
	h_prp(h, &s, b, 4096);
	CHECK_ST(rw_sqe(h, q, &s), GEN, NVQ_SC_INVALID_FIELD);
	/* Directives are not supported. */
	s = h_sqe(nvq_cmd_write);
	s.nsid = 1;
	s.cdw12 = 1u << 20;
	h_prp(h, &s, b, 4096);
	CHECK_ST(rw_sqe(h, q, &s), GEN, NVQ_SC_INVALID_FIELD);
}

static void prp_offsets(struct h *h, struct hq *q)
{
	uint8_t *b = h_alloc(h, 32768, NULL);
	uint64_t *list = h_alloc(h, 4096, NULL);
	uint64_t iova = h_iova(h, b);
	struct nvq_sqe s;

	/* PRP1 not dword aligned. */
	s = h_sqe(nvq_cmd_read);
	s.nsid = 1;
	s.prp1 = iova + 2;
	CHECK_ST(rw_sqe(h, q, &s), GEN, NVQ_SC_PRP_INVALID_OFFSET);
	/* PRP2 as a data page with an offset. */
	s = h_sqe(nvq_cmd_read);
	s.nsid = 1;
	s.cdw12 = 1; /* 8 KiB */
	s.prp1 = iova;
	s.prp2 = iova + 4096 + 512;
	CHECK_ST(rw_sqe(h, q, &s), GEN, NVQ_SC_PRP_INVALID_OFFSET);
	/* PRP list pointer not qword aligned. */
	s = h_sqe(nvq_cmd_read);
	s.nsid = 1;
	s.cdw12 = 2; /* 12 KiB: PRP2 is a list */
	s.prp1 = iova;
	s.prp2 = h_iova(h, list) + 4;
	CHECK_ST(rw_sqe(h, q, &s), GEN, NVQ_SC_PRP_INVALID_OFFSET);
	/* List entry with an offset. */
	list[0] = iova + 4096;
	list[1] = iova + 8192 + 16;
	s.prp2 = h_iova(h, list);
	CHECK_ST(rw_sqe(h, q, &s), GEN, NVQ_SC_PRP_INVALID_OFFSET);
	/* Fixed, it works. */
	list[1] = iova + 8192;
	CHECK_ST_OK(rw_sqe(h, q, &s));
	/* A list pointer may carry an offset (qword aligned). */
	list[300] = iova + 4096;
	list[301] = iova + 8192;
	s.prp2 = h_iova(h, list) + 300 * 8;
	CHECK_ST_OK(rw_sqe(h, q, &s));
}

/* Write with one PRP layout, read back with another, compare. */
static void prp_data(struct h *h, struct hq *q)
{
	uint8_t *w = h_alloc(h, 65536, NULL), *r = h_alloc(h, 65536, NULL);
	uint64_t *l1 = h_alloc(h, 4096, NULL);
	struct nvq_sqe s;
	size_t off;

	/* PRP1 with an offset + PRP2 as the second data page: 4 KiB at
	 * offset 512 crosses one page boundary. */
	for (off = 4; off < 4096; off += 1020) {
		fill_pattern(w + off, 4096, off);
		CHECK_ST_OK(
			h_rw(h, q, nvq_cmd_write, 1, 100, 1, w + off, 4096));
		memset(r, 0, 8192);
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 100, 1, r, 4096));
		CHECK(!memcmp(w + off, r, 4096));
		/* And read into an offset buffer too. */
		memset(r, 0, 8192);
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 100, 1, r + off, 4096));
		CHECK(!memcmp(w + off, r + off, 4096));
	}
	/* PRP list: 16 KiB with PRP1 offset -> 5 pages, 4 list entries. */
	fill_pattern(w + 2048, 16384, 7);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 2, 200, 4, w + 2048, 16384));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 2, 200, 4, r, 16384));
	CHECK(!memcmp(w + 2048, r, 16384));
	/* Non-contiguous pages in the list (reverse order). */
	fill_pattern(w, 16384, 8);
	s = h_sqe(nvq_cmd_write);
	s.nsid = 1;
	s.cdw10 = 300;
	s.cdw12 = 3;
	s.prp1 = h_iova(h, w) + 12288;
	l1[0] = h_iova(h, w) + 8192;
	l1[1] = h_iova(h, w) + 4096;
	l1[2] = h_iova(h, w);
	s.prp2 = h_iova(h, l1);
	CHECK_ST_OK(rw_sqe(h, q, &s));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 300, 4, r, 16384));
	CHECK(!memcmp(r, w + 12288, 4096));
	CHECK(!memcmp(r + 4096, w + 8192, 4096));
	CHECK(!memcmp(r + 8192, w + 4096, 4096));
	CHECK(!memcmp(r + 12288, w, 4096));
	/* Namespaces do not overlap: ns 2 block 300 is untouched. */
	memset(r, 0xee, 4096);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 2, 300, 1, r, 4096));
	{
		uint8_t z[4096] = { 0 };

		CHECK(!memcmp(r, z, 4096));
	}
}

static void zeroes_dealloc_flush(struct h *h, struct hq *q)
{
	uint8_t *w = h_alloc(h, 16384, NULL), *r = h_alloc(h, 16384, NULL);
	struct nvq_dsm_range *rg = h_alloc(h, 4096, NULL);
	uint8_t zero[4096] = { 0 };
	struct nvq_sqe s;
	int i;

	/* Write Zeroes, plain and with DEAC. */
	fill_pattern(w, 16384, 11);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 500, 4, w, 16384));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write_zeroes, 1, 501, 1, NULL, 0));
	s = h_sqe(nvq_cmd_write_zeroes);
	s.nsid = 1;
	s.cdw10 = 502;
	s.cdw12 = NVQ_RW_DEAC;
	CHECK_ST_OK(rw_sqe(h, q, &s));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 500, 4, r, 16384));
	CHECK(!memcmp(r, w, 4096));
	CHECK(!memcmp(r + 4096, zero, 4096));
	CHECK(!memcmp(r + 8192, zero, 4096));
	CHECK(!memcmp(r + 12288, w + 12288, 4096));
	CHECK_ST(h_rw(h, q, nvq_cmd_write_zeroes, 1, NSZE - 1, 2, NULL, 0), GEN,
		 NVQ_SC_LBA_RANGE);
	/* Large Write Zeroes (no MDTS limit applies): 256 blocks. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write_zeroes, 1, 0, 256, NULL, 0));

	/* Deallocate two ranges; neighbours stay. */
	fill_pattern(w, 16384, 12);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 600, 4, w, 16384));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 2, 600, 4, w, 16384));
	rg[0].slba = 600;
	rg[0].nlb = 1;
	rg[1].slba = 603;
	rg[1].nlb = 1;
	s = h_sqe(nvq_cmd_dsm);
	s.nsid = 1;
	s.cdw10 = 1; /* two ranges */
	s.cdw11 = NVQ_DSM_AD;
	h_prp(h, &s, rg, 2 * sizeof(*rg));
	CHECK_ST_OK(rw_sqe(h, q, &s));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 600, 4, r, 16384));
	CHECK(!memcmp(r, zero, 4096));
	CHECK(!memcmp(r + 4096, w + 4096, 8192));
	CHECK(!memcmp(r + 12288, zero, 4096));
	/* The other namespace is untouched. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 2, 600, 4, r, 16384));
	CHECK(!memcmp(r, w, 16384));
	/* A range out of bounds fails the command and changes nothing. */
	rg[0].slba = 601;
	rg[0].nlb = 1;
	rg[1].slba = NSZE;
	rg[1].nlb = 1;
	s = h_sqe(nvq_cmd_dsm);
	s.nsid = 1;
	s.cdw10 = 1;
	s.cdw11 = NVQ_DSM_AD;
	h_prp(h, &s, rg, 2 * sizeof(*rg));
	CHECK_ST(rw_sqe(h, q, &s), GEN, NVQ_SC_LBA_RANGE);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 601, 1, r, 4096));
	CHECK(!memcmp(r, w + 4096, 4096));
	/* Without AD it is a hint: nothing changes. */
	s = h_sqe(nvq_cmd_dsm);
	s.nsid = 1;
	s.cdw10 = 0;
	s.cdw11 = NVQ_DSM_IDR;
	rg[0].slba = 601;
	h_prp(h, &s, rg, sizeof(*rg));
	CHECK_ST_OK(rw_sqe(h, q, &s));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 601, 1, r, 4096));
	CHECK(!memcmp(r, w + 4096, 4096));
	/* Large deallocation: 256 ranges (the maximum), the whole ns. */
	for (i = 0; i < 256; i++) {
		rg[i].slba = (uint64_t)i * 16;
		rg[i].nlb = 16;
		rg[i].cattr = 0;
	}
	s = h_sqe(nvq_cmd_dsm);
	s.nsid = 2;
	s.cdw10 = 255;
	s.cdw11 = NVQ_DSM_AD;
	h_prp(h, &s, rg, 4096);
	CHECK_ST_OK(rw_sqe(h, q, &s));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 2, 600, 4, r, 16384));
	for (i = 0; i < 4; i++)
		CHECK(!memcmp(r + i * 4096, zero, 4096));

	/* Flush: a namespace and all namespaces. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_flush, 1, 0, 1, NULL, 0));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_flush, 0xffffffff, 0, 1, NULL, 0));
}

/* CQE contents: SQ head, SQ id, CID, phase across many wraps. */
static void cqe_fields(struct h *h)
{
	struct hq *q = h_ioq(h, 3, 4, false, 0);
	uint8_t *b = h_alloc(h, 4096, NULL);
	struct nvq_sqe s;
	struct nvq_cqe c;
	int i;

	for (i = 0; i < 50; i++) {
		s = h_sqe(nvq_cmd_read);
		s.nsid = 1;
		s.cdw10 = (uint32_t)i;
		s.cid = (uint16_t)(0x1000 + i);
		h_prp(h, &s, b, 4096);
		h_push(h, q, &s);
		h_ring(h, q);
		CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
		CHECK_EQ(c.cid, 0x1000 + i);
		CHECK_EQ(c.sq_id, 3);
		CHECK_EQ(c.sq_head, (i + 1) % 4);
		CHECK_ST_OK(NVQ_STATUS(c.status));
	}
	/* Batches of three (the most a 4-entry SQ holds). */
	for (i = 0; i < 20; i++) {
		int k;

		for (k = 0; k < 3; k++) {
			s = h_sqe(nvq_cmd_flush);
			s.nsid = 1;
			h_push(h, q, &s);
		}
		h_ring(h, q);
		for (k = 0; k < 3; k++) {
			CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
			CHECK_ST_OK(NVQ_STATUS(c.status));
		}
	}
}

/* mdts=0: a 2.4 MiB transfer needs a chained PRP list (> 512 pages). */
static void chained(void)
{
	struct h *h = h_open("size=8M,mdts=0");
	size_t len = 600 * 4096 + 2048;
	uint8_t *w = h_alloc(h, len + 4096, NULL);
	uint8_t *r = h_alloc(h, len + 4096, NULL);
	uint64_t *l1 = h_alloc(h, 4096, NULL), *l2 = h_alloc(h, 4096, NULL);
	struct hq *q;
	struct nvq_sqe s;
	unsigned int i, n;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	fill_pattern(w, len + 4096, 21);
	/* Harness-built lists (chain at entry 511), PRP1 offset 2048. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 10, (uint32_t)(len / 4096),
			 w + 2048, len - 2048));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 10, (uint32_t)(len / 4096), r,
			 len - 2048));
	CHECK(!memcmp(w + 2048, r, len - 2048));

	/* A list starting 8 bytes before the end of its page: its only
	 * entry is the pointer to the next list page. */
	s = h_sqe(nvq_cmd_read);
	s.nsid = 1;
	s.cdw10 = 10;
	s.cdw12 = 9; /* 10 blocks */
	s.prp1 = h_iova(h, r);
	l1[511] = h_iova(h, l2);
	for (i = 0, n = 1; n < 10; i++, n++)
		l2[i] = h_iova(h, r) + 4096ull * n;
	s.prp2 = h_iova(h, l1) + 511 * 8;
	memset(r, 0, 40960);
	CHECK_ST_OK(h_cmd(h, q, &s, NULL));
	CHECK(!memcmp(w + 2048, r, 40960));
	/* A chain pointer with an offset is invalid. */
	l1[511] = h_iova(h, l2) + 8;
	CHECK_ST(h_cmd(h, q, &s, NULL), GEN, NVQ_SC_PRP_INVALID_OFFSET);
	/* The largest command: 65536 blocks with 512-byte LBAs. */
	h_close(h);

	h = h_open("size=64M,mdts=0,lbads=9");
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	w = h_alloc(h, 65536 * 512, NULL);
	fill_pattern(w, 65536 * 512, 3);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 1, 65536, w, 65536 * 512));
	memset(w, 0, 65536 * 512);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 1, 65536, w, 65536 * 512));
	{
		uint8_t *x = malloc(65536 * 512);

		CHECK(x);
		fill_pattern(x, 65536 * 512, 3);
		CHECK(!memcmp(x, w, 65536 * 512));
		free(x);
	}
	h_close(h);
}

static void small_lba(void)
{
	struct h *h = h_open("size=1M,lbads=9,mdts=1");
	uint8_t *w = h_alloc(h, 8192, NULL), *r = h_alloc(h, 8192, NULL);
	struct hq *q;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	fill_pattern(w, 8192, 5);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 2047, 1, w, 512));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 3, 16, w, 8192));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 3, 16, r, 8192));
	CHECK(!memcmp(w, r, 8192));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 2047, 1, r, 512));
	CHECK(!memcmp(w, r, 512));
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, 2048, 1, r, 512), GEN,
		 NVQ_SC_LBA_RANGE);
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, 0, 17, r, 8704), GEN,
		 NVQ_SC_INVALID_FIELD);
	h_close(h);
}

int main(void)
{
	struct h *h = h_open("size=16M,ns=2,mdts=2,qpairs=4");
	struct hq *q;

	h_enable(h);
	q = h_ioq(h, 1, 32, false, 0);
	checks(h, q);
	prp_offsets(h, q);
	prp_data(h, q);
	zeroes_dealloc_flush(h, q);
	cqe_fields(h);
	h_close(h);

	chained();
	small_lba();
	return 0;
}
