// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the emulated controller's command processing.
 *
 * Each input creates a controller through emu/emu.h, plays host
 * operations decoded from the input against it (register writes with any
 * value, doorbells at any offset with any value, SQEs built from raw bytes
 * or from a template with fuzzed fields, PRPs and PRP list entries that
 * point anywhere, DMA unmaps of memory the device may still use) and
 * destroys it. Properties: no crash, no undefined behaviour, no access to
 * host memory outside the DMA mappings, no leak, no hang.
 *
 * The host memory the device may reach is heap memory this file owns, so
 * AddressSanitizer's redzones sit right outside every mapping and a freed
 * (unmapped) buffer stays poisoned: a device access past a mapping or
 * after an unmap is reported at the faulting instruction.
 *
 * The device thread is stopped right after creation and its main loop is
 * run here, synchronously, after every host operation: an input then
 * always does the same thing (a crash reproduces), no CPU is spent on
 * a second thread, and a device loop that never ends is a libFuzzer
 * timeout on the input that caused it. dev_pass() is one turn of the
 * device thread's own loop (emu_service(), emu/device.c), so the fuzzed
 * device is the real one.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "emu_internal.h"
#include "nvq/spec.h"

/* Passes per host operation: enough to drain 64-entry fetch batches. */
#define SETTLE_PASSES 16
#define PAGE 4096u

/* Host memory the device may be given, per input. */
enum { B_ADMIN, B_QUEUE, B_DATA, B_LIST, NR_BUF };
static const uint32_t buf_pages[NR_BUF] = { 4, 16, 16, 1 };

struct buf {
	uint8_t *p; /* NULL once unmapped and freed */
	size_t len;
	uint64_t iova;
};

/* The host's idea of a queue pair: where it writes SQEs, reads CQEs. */
struct hq {
	uint32_t sq_off, sq_cap; /* in its buffer, entries that fit */
	uint32_t cq_off, cq_cap;
	int buf;
	uint32_t size; /* as created (1's based); 0 = sq_cap */
	uint32_t tail, head, phase;
};

#define NR_HQ 5 /* admin + 4 I/O queues */

/* NVQ_FUZZ_TRACE=1: print the CQEs the host reaps (replaying an input). */
static bool trace;

struct in {
	const uint8_t *p;
	size_t n;
};

struct fz {
	struct nvq_emu *c;
	struct buf b[NR_BUF];
	struct hq q[NR_HQ];
	uint32_t dstrd;
	struct in in;
};

/* Input bytes; past the end everything reads as zero. */
static uint8_t u8(struct fz *f)
{
	if (!f->in.n)
		return 0;
	f->in.n--;
	return *f->in.p++;
}

/* Little-endian; one statement per byte: operand order is unspecified. */
static uint16_t u16(struct fz *f)
{
	uint16_t lo = u8(f);

	return (uint16_t)(lo | u8(f) << 8);
}

static uint32_t u32(struct fz *f)
{
	uint32_t lo = u16(f);

	return lo | (uint32_t)u16(f) << 16;
}

static uint64_t u64(struct fz *f)
{
	uint64_t lo = u32(f);

	return lo | (uint64_t)u32(f) << 32;
}

/* ---- the device loop, run in this thread ---- */

static void finish_shutdown(struct nvq_emu *c)
{
	emu_media_sync(&c->media, 0, c->media.len);
	emu_smart_shutdown(c);
	c->shn_pending = false;
	c->shut = true;
	emu_set_csts(c, NVQ_CSTS_SHST_CMPLT, NVQ_CSTS_SHST_MASK);
}

/* One turn of device_main()'s loop; true when it did any work. */
static bool dev_pass(struct nvq_emu *c)
{
	bool events;

	return emu_service(c, &events) || events;
}

static void settle(struct fz *f, unsigned int passes)
{
	while (passes-- && dev_pass(f->c))
		;
}

/* ---- host memory ---- */

/*
 * Heap buffers survive from input to input (fresh ones per input cost a
 * page fault per page: most of the run time); one that an input unmapped
 * was freed and is allocated again.
 */
static uint8_t *pool[NR_BUF];

static int buf_map(struct fz *f, int i)
{
	struct buf *b = &f->b[i];

	b->len = (size_t)buf_pages[i] * PAGE;
	if (!pool[i])
		pool[i] = aligned_alloc(PAGE, b->len);
	b->p = pool[i];
	if (!b->p)
		return -1;
	memset(b->p, 0, b->len);
	if (nvq_emu_dma_map(f->c, b->p, b->len, &b->iova)) {
		b->p = NULL;
		return -1;
	}
	return 0;
}

static void buf_unmap(struct fz *f, int i)
{
	struct buf *b = &f->b[i];

	if (!b->p)
		return;
	nvq_emu_dma_unmap(f->c, b->p, b->len);
	/* Freed at once: ASan reports any later device access to it. */
	free(b->p);
	pool[i] = b->p = NULL;
}

/*
 * A device address: mostly inside or at the edges of a mapping, but also
 * past its end, a host virtual address (never a valid IOVA), or anything.
 */
static uint64_t addr(struct fz *f)
{
	uint8_t sel = u8(f);
	const struct buf *b = &f->b[(sel >> 3) % NR_BUF];
	uint64_t base = b->iova,
		 len = (uint64_t)buf_pages[(sel >> 3) % NR_BUF] * PAGE;

	switch (sel & 7) {
	case 0:
		return base + (u8(f) % (len / PAGE)) * PAGE;
	case 1:
		return base + u16(f);
	case 2:
		return base + len - (uint64_t)u8(f) * 8;
	case 3:
		return u64(f);
	case 4:
		return (uint64_t)(uintptr_t)b->p + u16(f);
	case 5:
		return 0;
	case 6:
		base += (u8(f) % (len / PAGE)) * PAGE;
		return base + (u8(f) & 0x3f) * 4;
	default:
		return base + u32(f);
	}
}

static uint8_t *hq_sq(struct fz *f, struct hq *q, uint32_t idx)
{
	uint8_t *p = f->b[q->buf].p;

	return p ? p + q->sq_off + (idx % q->sq_cap) * NVQ_SQE_SIZE : NULL;
}

static void ring_sq(struct fz *f, uint16_t qid)
{
	nvq_emu_db_write(f->c, nvq_sq_db_offset(qid, f->dstrd), f->q[qid].tail);
}

/* Place @sqe at @qid's tail and ring its doorbell. */
static void submit(struct fz *f, uint16_t qid, struct nvq_sqe *sqe)
{
	struct hq *q = &f->q[qid];
	uint32_t size = q->size ? q->size : q->sq_cap;
	uint8_t *slot = hq_sq(f, q, q->tail);

	if (slot)
		memcpy(slot, sqe, sizeof(*sqe));
	q->tail = (q->tail + 1) % size;
	ring_sq(f, qid);
}

/* Take the CQEs the device posted to @qid and ring its head doorbell. */
static void reap(struct fz *f, uint16_t qid)
{
	struct hq *q = &f->q[qid];
	uint32_t size = q->size ? q->size : q->cq_cap, n = 0;
	uint8_t *base = f->b[q->buf].p;

	if (!base)
		return;
	while (n++ < size) {
		struct nvq_cqe *cqe = (struct nvq_cqe *)(base + q->cq_off +
							 (q->head % q->cq_cap) *
								 NVQ_CQE_SIZE);

		if ((cqe->status & 1) != q->phase)
			break;
		if (trace)
			fprintf(stderr,
				"fuzz-emu: CQ %u: cid %u sq %u head %u status %#x\n",
				qid, cqe->cid, cqe->sq_id, cqe->sq_head,
				cqe->status >> 1);
		if (++q->head >= size) {
			q->head = 0;
			q->phase ^= 1;
		}
	}
	nvq_emu_db_write(f->c, nvq_cq_db_offset(qid, f->dstrd), q->head);
}

/* ---- operations ---- */

enum {
	OP_REG32,
	OP_REG64,
	OP_REG_READ,
	OP_ENABLE,
	OP_DISABLE,
	OP_SQE_RAW,
	OP_ADMIN,
	OP_IO,
	OP_POKE,
	OP_DB_RAW,
	OP_DB_Q,
	OP_REAP,
	OP_RUN,
	OP_UNMAP,
	OP_REMAP,
	OP_NR
};

static void op_enable(struct fz *f)
{
	uint8_t a = u8(f);
	/* Mostly a valid size; any 12-bit value now and then. */
	uint32_t sqs = a & 0x80 ? u16(f) & 0xfff : 1 + a % 127;
	uint32_t cqs = a & 0x40 ? u16(f) & 0xfff : 1 + a % 127;
	uint32_t cc = NVQ_CC_EN | NVQ_CC_CSS_NVM | NVQ_CC_AMS_RR |
		      (NVQ_SQES_LOG2 << NVQ_CC_IOSQES_SHIFT) |
		      (NVQ_CQES_LOG2 << NVQ_CC_IOCQES_SHIFT);
	struct hq *q = &f->q[0];

	if (a & 0x20)
		cc ^= u32(f);
	nvq_emu_reg_write32(f->c, NVQ_REG_CC, 0);
	settle(f, SETTLE_PASSES);
	nvq_emu_reg_write32(f->c, NVQ_REG_AQA, NVQ_AQA(sqs, cqs));
	nvq_emu_reg_write64(f->c, NVQ_REG_ASQ, f->b[B_ADMIN].iova);
	nvq_emu_reg_write64(f->c, NVQ_REG_ACQ, f->b[B_ADMIN].iova + 2 * PAGE);
	q->size = sqs + 1 < cqs + 1 ? sqs + 1 : cqs + 1;
	q->tail = q->head = 0;
	q->phase = 1;
	nvq_emu_reg_write32(f->c, NVQ_REG_CC, cc);
}

static void prps(struct fz *f, struct nvq_sqe *s, uint8_t how)
{
	uint64_t *list;
	unsigned int n, i;

	switch (how & 3) {
	case 0: /* one data page */
		s->prp1 = f->b[B_DATA].iova + (u8(f) & 15) * PAGE;
		s->prp2 = s->prp1 + PAGE;
		break;
	case 1: /* anything */
		s->prp1 = addr(f);
		s->prp2 = addr(f);
		break;
	default: /* a PRP list whose entries point anywhere */
		s->prp1 = addr(f);
		s->prp2 = f->b[B_LIST].iova + (u8(f) & 0x1f) * 8;
		list = (uint64_t *)f->b[B_LIST].p;
		n = u8(f) & 31;
		for (i = 0; list && i < n; i++)
			list[i] = u8(f) & 1 ?
					  addr(f) :
					  f->b[B_DATA].iova + (i % 16) * PAGE;
		break;
	}
}

/* An admin command from a template, with fuzzed fields. */
static void op_admin(struct fz *f)
{
	static const uint8_t opc[] = {
		nvq_admin_create_cq,	nvq_admin_create_sq,
		nvq_admin_delete_sq,	nvq_admin_delete_cq,
		nvq_admin_identify,	nvq_admin_get_log_page,
		nvq_admin_set_features, nvq_admin_get_features,
		nvq_admin_async_event,	nvq_admin_abort_cmd,
		nvq_admin_dbbuf,	nvq_admin_keep_alive,
		nvq_admin_format_nvm,	nvq_admin_ns_mgmt,
	};
	uint8_t k = u8(f), how = u8(f);
	struct nvq_sqe s;
	uint32_t qid = u8(f), size;

	memset(&s, 0, sizeof(s));
	s.opcode = k < 0xf0 ? opc[k % sizeof(opc)] : u8(f);
	s.cid = u16(f);
	/* Mostly queues 1..4 that the host has memory for. */
	if (!(how & 0x80))
		qid = 1 + qid % (NR_HQ - 1);
	size = how & 0x40 ? u16(f) : 2 + u8(f) % 127;
	switch (s.opcode) {
	case nvq_admin_create_cq:
	case nvq_admin_create_sq:
		s.cdw10 = qid | (size - 1) << 16;
		s.cdw11 = how & 0x20 ? u32(f) : NVQ_QUEUE_PHYS_CONTIG;
		if (s.opcode == nvq_admin_create_sq)
			s.cdw11 |= (uint32_t)(how & 0x10 ? u16(f) : qid)
				   << NVQ_SQ_CQID_SHIFT;
		else
			s.cdw11 |= (uint32_t)(u8(f) % 8) << NVQ_CQ_IV_SHIFT |
				   (how & 8 ? NVQ_CQ_IRQ_ENABLED : 0);
		if (qid < NR_HQ && !(how & 4)) {
			struct hq *q = &f->q[qid];
			const struct buf *b = &f->b[q->buf];

			s.prp1 = b->iova + (s.opcode == nvq_admin_create_cq ?
						    q->cq_off :
						    q->sq_off);
			q->size = size;
			if (s.opcode == nvq_admin_create_cq) {
				q->head = 0;
				q->phase = 1;
			} else {
				q->tail = 0;
			}
		} else {
			s.prp1 = addr(f);
		}
		break;
	case nvq_admin_delete_sq:
	case nvq_admin_delete_cq:
		s.cdw10 = how & 2 ? u32(f) : qid;
		break;
	case nvq_admin_abort_cmd:
		s.cdw10 = u32(f);
		break;
	case nvq_admin_dbbuf:
		/* The spare pages of the queue buffer, or anything. */
		s.prp1 = how & 2 ? addr(f) : f->b[B_QUEUE].iova + 12 * PAGE;
		s.prp2 = how & 1 ? addr(f) : f->b[B_QUEUE].iova + 13 * PAGE;
		break;
	default:
		s.nsid = how & 2 ? u32(f) : u8(f) % 5;
		s.cdw10 = u32(f);
		s.cdw11 = how & 1 ? u32(f) : 0;
		s.cdw12 = u32(f);
		s.cdw13 = u32(f);
		s.cdw14 = how & 1 ? u32(f) : 0;
		prps(f, &s, how >> 2);
		break;
	}
	if (how & 0x80 && u8(f) & 1)
		s.flags = u8(f);
	submit(f, 0, &s);
}

/* An NVM command on I/O queue 1..4 from a template. */
static void op_io(struct fz *f)
{
	static const uint8_t opc[] = { nvq_cmd_read, nvq_cmd_write,
				       nvq_cmd_flush, nvq_cmd_write_zeroes,
				       nvq_cmd_dsm };
	uint8_t k = u8(f), how = u8(f);
	uint16_t qid = (uint16_t)(1 + u8(f) % (NR_HQ - 1));
	struct nvq_sqe s;

	memset(&s, 0, sizeof(s));
	s.opcode = k < 0xf0 ? opc[k % sizeof(opc)] : u8(f);
	s.cid = u16(f);
	s.nsid = how & 1 ? u32(f) : 1 + u8(f) % 4;
	s.cdw10 = how & 2 ? u32(f) : u8(f);
	s.cdw11 = how & 2 ? u32(f) : 0;
	s.cdw12 = how & 4 ? u32(f) : u8(f) % 32;
	if (how & 8) {
		s.cdw13 = u32(f);
		s.cdw14 = u32(f);
		s.cdw15 = u32(f);
	}
	if (how & 0x10)
		s.flags = u8(f);
	prps(f, &s, how >> 5);
	submit(f, qid, &s);
}

static void op(struct fz *f, uint8_t code)
{
	uint32_t off, i;
	struct nvq_sqe s;
	uint8_t a;

	switch (code % OP_NR) {
	case OP_REG32:
		off = (uint32_t)u8(f) * 4;
		nvq_emu_reg_write32(f->c, off,
				    u8(f) & 1 ? u32(f) : (uint32_t)addr(f));
		break;
	case OP_REG64:
		off = (uint32_t)u8(f) * 4;
		nvq_emu_reg_write64(f->c, off, addr(f));
		break;
	case OP_REG_READ:
		off = u16(f);
		nvq_emu_reg_read32(f->c, off);
		nvq_emu_reg_read64(f->c, off);
		break;
	case OP_ENABLE:
		op_enable(f);
		break;
	case OP_DISABLE:
		a = u8(f);
		if (a & 1)
			nvq_emu_reg_write32(
				f->c, NVQ_REG_CC,
				nvq_emu_reg_read32(f->c, NVQ_REG_CC) |
					(a & 2 ? NVQ_CC_SHN_NORMAL :
						 NVQ_CC_SHN_ABRUPT));
		else
			nvq_emu_reg_write32(f->c, NVQ_REG_CC, 0);
		break;
	case OP_SQE_RAW:
		a = u8(f);
		for (i = 0; i < sizeof(s); i++)
			((uint8_t *)&s)[i] = u8(f);
		if (a & 0x10)
			s.prp1 = addr(f);
		if (a & 0x20)
			s.prp2 = addr(f);
		submit(f, a % NR_HQ, &s);
		break;
	case OP_ADMIN:
		op_admin(f);
		break;
	case OP_IO:
		op_io(f);
		break;
	case OP_POKE: {
		/* PRP list entries, shadow doorbells, queue entries. */
		struct buf *b = &f->b[u8(f) % NR_BUF];
		uint64_t v;

		off = u16(f) % (b->len ? b->len : PAGE) & ~7u;
		v = u8(f) & 1 ? addr(f) : u32(f);
		if (b->p)
			memcpy(b->p + off, &v, sizeof(v));
		break;
	}
	case OP_DB_RAW:
		off = NVQ_REG_DBS + u16(f);
		if (u8(f) & 1)
			off = u32(f);
		nvq_emu_db_write(f->c, off, u32(f));
		break;
	case OP_DB_Q:
		a = u8(f);
		nvq_emu_db_write(f->c,
				 a & 1 ? nvq_cq_db_offset(a >> 1, f->dstrd) :
					 nvq_sq_db_offset(a >> 1, f->dstrd),
				 u16(f));
		break;
	case OP_REAP:
		reap(f, u8(f) % NR_HQ);
		break;
	case OP_RUN:
		settle(f, 1 + u8(f) % 64);
		break;
	case OP_UNMAP:
		buf_unmap(f, u8(f) % NR_BUF);
		break;
	case OP_REMAP:
		a = u8(f) % NR_BUF;
		if (!f->b[a].p)
			buf_map(f, a);
		break;
	}
}

static void params(struct fz *f, struct nvq_emu_params *p)
{
	static const uint32_t mqes[] = { 1023, 1, 2, 15, 63, 255, 4095, 65535 };
	uint8_t a = u8(f), b = u8(f), c = u8(f), d = u8(f);

	nvq_emu_params_default(p);
	p->qpairs = 1 + (a & 3);
	p->dstrd = (a >> 2) & 3;
	p->dbbuf = !(a & 0x10);
	p->cqr = a & 0x20;
	p->vwc = !(a & 0x40);
	p->lbads = a & 0x80 ? 9 : 12;
	p->mdts = b & 7;
	p->nr_ns = 1 + ((b >> 3) & 3);
	p->mqes = mqes[b >> 5];
	/* Small namespaces: Write Zeroes or Deallocate of all of one is cheap. */
	p->ns_size = (uint64_t)(1 + (c & 15)) * 65536;
	p->msix = 1 + d % (p->qpairs + 1);
	p->to = 1;
	p->idle_spin_ns = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvq_emu_params p;
	struct fz f;
	unsigned int i, n;

	trace = getenv("NVQ_FUZZ_TRACE");
	memset(&f, 0, sizeof(f));
	f.in.p = data;
	f.in.n = size;
	params(&f, &p);
	if (nvq_emu_create(&p, &f.c))
		abort(); /* valid parameters: creation must work */
	/* Stop the device thread: dev_pass() runs the device from here. */
	__atomic_store_n(&f.c->stop, 1, __ATOMIC_SEQ_CST);
	emu_kick(f.c);
	pthread_join(f.c->thread, NULL);
	f.c->thread_started = false;
	f.dstrd = p.dstrd;

	for (i = 0; i < NR_BUF; i++)
		if (buf_map(&f, (int)i))
			abort();
	f.q[0] = (struct hq){ .sq_off = 0,
			      .sq_cap = 2 * PAGE / NVQ_SQE_SIZE,
			      .cq_off = 2 * PAGE,
			      .cq_cap = 2 * PAGE / NVQ_CQE_SIZE,
			      .buf = B_ADMIN,
			      .phase = 1 };
	for (i = 1; i < NR_HQ; i++)
		f.q[i] = (struct hq){ .sq_off = (i - 1) * 3 * PAGE,
				      .sq_cap = 2 * PAGE / NVQ_SQE_SIZE,
				      .cq_off = (i - 1) * 3 * PAGE + 2 * PAGE,
				      .cq_cap = PAGE / NVQ_CQE_SIZE,
				      .buf = B_QUEUE,
				      .phase = 1 };

	/* A bounded number of operations, each followed by device passes. */
	for (n = 0; f.in.n && n < 256; n++) {
		op(&f, u8(&f));
		settle(&f, SETTLE_PASSES);
	}
	/* A reset with everything still in place, then power off. */
	nvq_emu_reg_write32(f.c, NVQ_REG_CC, 0);
	settle(&f, SETTLE_PASSES);

	nvq_emu_destroy(f.c);
	return 0;
}
