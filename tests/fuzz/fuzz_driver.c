// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the driver against a hostile device.
 *
 * A scripted controller behind the "test:" URI (nvq_transport_set_test(),
 * as tests/common/fake_transport.c) answers every register read and every
 * command from the fuzzer's bytes: CAP and VS, CSTS (slow RDY, stale RDY,
 * fatal status, surprise removal, slow shutdown), Identify Controller,
 * Namespace, the active namespace list and descriptor lists (sane data
 * with fuzzed bytes patched in), log pages, Set Features results, and
 * for each command its CQE: status, CID, SQ id, SQ head, phase, dropped,
 * duplicated, delayed until the next doorbell, or preceded by a stray
 * one. When the bytes run out the device behaves, so a short input gets
 * through bring-up and I/O.
 *
 * Each input opens the controller, runs a few I/Os and admin commands and
 * closes it. Properties: no crash, undefined behaviour or leak; every
 * callback runs exactly once, within a bound the I/O timeout implies (no
 * hang); the driver hands the device only memory it has mapped for DMA,
 * rings only doorbells of queues it created with values inside them,
 * never unmaps what it did not map, and unmaps everything by nvq_close().
 * A broken driver rule is a crash (abort() with a message), so libFuzzer
 * keeps the input.
 *
 * The fake completes a command inside the doorbell write that submits it
 * (or later, for a delayed one) and uses virtual addresses as IOVAs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"
#include "nvq/nvq.h"
#include "nvq/spec.h"
#include "transport.h"

#define PAGE 4096u
#define MAX_Q 4 /* I/O queues the fake has */
#define MAX_MAPS 256
#define MAX_DELAYED 8
#define NR_VEC (MAX_Q + 1)
#define FAKE_NN 3
/* A callback not run this long after its submission is a hang: the I/O
 * timeout (10 ms) fails a stuck command within a few watchdog periods. */
#define HANG_NS (2000ull * 1000000)

/* NVQ_FUZZ_TRACE=1: print what the device is asked and answers. */
static bool trace;

#define TRACE(...)                                                    \
	do {                                                          \
		if (trace)                                            \
			fprintf(stderr, "fuzz-driver: " __VA_ARGS__); \
	} while (0)

/* A rule the driver broke: a crash, so that libFuzzer keeps the input. */
static void driver_bug(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void driver_bug(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz-driver: DRIVER BUG: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

struct fq {
	bool live;
	struct nvq_sqe *sq;
	struct nvq_cqe *cq;
	uint32_t sq_depth, cq_depth, head, cq_tail, phase;
	uint16_t iv;
	bool ien;
};

struct map {
	uintptr_t va;
	size_t len;
};

struct delayed {
	uint16_t qid;
	struct nvq_cqe cqe;
};

static struct dev {
	pthread_mutex_t lock;
	struct nvq_transport t;
	bool open;
	const uint8_t *p; /* the script */
	size_t n;
	/* registers */
	uint64_t cap;
	uint32_t vs, cc, aqa;
	uint64_t asq, acq;
	unsigned int rdy_reads, rdy_left, shn_reads, shn_left, stale_rdy;
	bool ready, cfs, gone, shn_done;
	/* queues and shadow doorbells */
	struct fq q[MAX_Q + 1];
	uint32_t *dbbuf, *ei;
	struct delayed delayed[MAX_DELAYED];
	unsigned int nr_delayed;
	/* the IOMMU */
	struct map maps[MAX_MAPS];
	unsigned int nr_maps;
	int irq[NR_VEC];
} dev = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- the script: past its end every answer is "as a good device" ---- */

static uint8_t s8(void)
{
	if (!dev.n)
		return 0;
	dev.n--;
	return *dev.p++;
}

static uint16_t s16(void)
{
	uint16_t lo = s8();

	return (uint16_t)(lo | s8() << 8);
}

static uint32_t s32(void)
{
	uint32_t lo = s16();

	return lo | (uint32_t)s16() << 16;
}

static uint64_t s64(void)
{
	uint64_t lo = s32();

	return lo | (uint64_t)s32() << 32;
}

/* ---- DMA: what the driver mapped ---- */

static bool mapped(uint64_t iova, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < dev.nr_maps; i++) {
		const struct map *m = &dev.maps[i];

		if (iova >= m->va && len <= m->len &&
		    iova - m->va <= m->len - len)
			return true;
	}
	return false;
}

static void *dma(const char *what, uint64_t iova, uint64_t len)
{
	if (!mapped(iova, len))
		driver_bug("%s: [%#llx, +%llu) is not mapped for DMA", what,
			   (unsigned long long)iova, (unsigned long long)len);
	return (void *)(uintptr_t)iova;
}

/* Copy @len (<= 4096) bytes of @src to the buffer @s's PRPs describe. */
static void dma_to_host(const struct nvq_sqe *s, const void *src, size_t len)
{
	size_t first = PAGE - (s->prp1 & (PAGE - 1));

	if (s->prp1 & 3)
		driver_bug("PRP1 %#llx is not dword aligned",
			   (unsigned long long)s->prp1);
	if (first >= len) {
		memcpy(dma("PRP1", s->prp1, len), src, len);
		return;
	}
	if (s->prp2 & (PAGE - 1))
		driver_bug("PRP2 %#llx is not page aligned",
			   (unsigned long long)s->prp2);
	memcpy(dma("PRP1", s->prp1, first), src, first);
	memcpy(dma("PRP2", s->prp2, len - first), (const uint8_t *)src + first,
	       len - first);
}

/* ---- answers ---- */

static void sane_id_ctrl(struct nvq_id_ctrl *id)
{
	memset(id, 0, sizeof(*id));
	id->sqes = 0x66;
	id->cqes = 0x44;
	id->nn = FAKE_NN;
	id->mdts = 5;
	id->oacs = NVQ_CTRL_OACS_DBBUF;
	id->oncs = NVQ_CTRL_ONCS_DSM | NVQ_CTRL_ONCS_WRITE_ZEROES;
	id->vwc = NVQ_CTRL_VWC_PRESENT;
}

/* Namespaces 1 (512-byte blocks) and 2 (4 KiB, second format) exist. */
static void sane_id_ns(uint32_t nsid, struct nvq_id_ns *id)
{
	memset(id, 0, sizeof(*id));
	if (nsid == 1) {
		id->nsze = id->ncap = 1u << 16;
		id->lbaf[0].ds = 9;
	} else if (nsid == 2) {
		id->nsze = id->ncap = 1u << 12;
		id->nlbaf = 1;
		id->flbas = 1;
		id->lbaf[0].ds = 9;
		id->lbaf[1].ds = 12;
	}
}

static void sane_data(const struct nvq_sqe *s, uint8_t *d)
{
	uint32_t *list = (uint32_t *)d;
	uint8_t cns = s->cdw10 & 0xff;

	memset(d, 0, PAGE);
	if (s->opcode != nvq_admin_identify)
		return;
	switch (cns) {
	case NVQ_ID_CNS_CTRL:
		sane_id_ctrl((struct nvq_id_ctrl *)d);
		break;
	case NVQ_ID_CNS_NS:
		sane_id_ns(s->nsid, (struct nvq_id_ns *)d);
		break;
	case NVQ_ID_CNS_NS_ACTIVE_LIST:
		if (s->nsid < 1)
			list[0] = 1;
		if (s->nsid < 2)
			list[s->nsid < 1 ? 1 : 0] = 2;
		break;
	case NVQ_ID_CNS_NS_DESC_LIST:
		d[0] = 4; /* CSI */
		d[1] = 1;
		break;
	}
}

/* How one command is answered: the next script byte. */
enum {
	A_NORMAL,
	A_DROP,
	A_BAD_CID,
	A_BAD_SQID,
	A_DUP,
	A_DELAY,
	A_PHASE,
	A_STRAY
};
#define A_STATUS 0x08
#define A_RESULT 0x10
#define A_PATCH 0x20
#define A_SQHD 0x40
#define A_EVENT 0x80

static void signal_cq(struct fq *cq)
{
	uint64_t one = 1;

	if (cq->ien && cq->iv < NR_VEC && dev.irq[cq->iv] >= 0 &&
	    write(dev.irq[cq->iv], &one, sizeof(one)) < 0) {
		/* EAGAIN: already signalled */
	}
}

static void post(uint16_t qid, const struct nvq_cqe *c, bool flip)
{
	struct fq *q = &dev.q[qid];
	struct nvq_cqe *slot;
	uint16_t st;

	if (!q->live || dev.gone)
		return;
	slot = dma("CQ", (uintptr_t)&q->cq[q->cq_tail], sizeof(*slot));
	st = (uint16_t)((c->status & ~1u) | (q->phase ^ flip));
	slot->result = c->result;
	slot->dw1 = c->dw1;
	slot->sq_head = c->sq_head;
	slot->sq_id = c->sq_id;
	slot->cid = c->cid;
	__atomic_store_n(&slot->status, st, __ATOMIC_RELEASE);
	if (++q->cq_tail == q->cq_depth) {
		q->cq_tail = 0;
		q->phase ^= 1;
	}
	signal_cq(q);
}

static void flush_delayed(void)
{
	unsigned int i;

	for (i = 0; i < dev.nr_delayed; i++)
		post(dev.delayed[i].qid, &dev.delayed[i].cqe, false);
	dev.nr_delayed = 0;
}

static uint16_t create_queue(const struct nvq_sqe *s)
{
	uint16_t qid = s->cdw10 & 0xffff;
	uint32_t depth = (s->cdw10 >> 16) + 1;
	struct fq *q = &dev.q[qid];

	if (!qid || qid > MAX_Q || depth < 2 ||
	    depth > NVQ_CAP_MQES(dev.cap) + 1u)
		return NVQ_STATUS_MAKE(NVQ_SCT_CMD_SPECIFIC, 1);
	if (s->opcode == nvq_admin_create_cq) {
		q->cq = dma("Create I/O CQ", s->prp1, depth * NVQ_CQE_SIZE);
		q->cq_depth = depth;
		q->cq_tail = 0;
		q->phase = 1;
		q->iv = (uint16_t)(s->cdw11 >> NVQ_CQ_IV_SHIFT);
		q->ien = s->cdw11 & NVQ_CQ_IRQ_ENABLED;
		return 0;
	}
	if (!q->cq || (s->cdw11 >> NVQ_SQ_CQID_SHIFT) != qid)
		return NVQ_STATUS_MAKE(NVQ_SCT_CMD_SPECIFIC, 0); /* bad CQ */
	q->sq = dma("Create I/O SQ", s->prp1, depth * NVQ_SQE_SIZE);
	q->sq_depth = depth;
	q->head = 0;
	q->live = true;
	return 0;
}

static uint16_t admin(const struct nvq_sqe *s, uint32_t *result, uint8_t *data,
		      size_t *len)
{
	uint16_t qid = s->cdw10 & 0xffff;
	uint32_t nq;

	switch (s->opcode) {
	case nvq_admin_identify:
		*len = PAGE;
		return 0;
	case nvq_admin_get_log_page:
		*len = ((s->cdw10 >> 16) + 1) * 4u; /* NUMDL; NUMDU ignored */
		if (*len > PAGE)
			*len = PAGE;
		return 0;
	case nvq_admin_set_features:
		nq = (s->cdw11 & 0xffff) + 1;
		nq = nq > MAX_Q ? MAX_Q : nq;
		*result = (nq - 1) | (nq - 1) << 16;
		return 0;
	case nvq_admin_create_cq:
	case nvq_admin_create_sq:
		return create_queue(s);
	case nvq_admin_delete_sq:
		if (qid && qid <= MAX_Q)
			dev.q[qid].live = false;
		return 0;
	case nvq_admin_delete_cq:
		if (qid && qid <= MAX_Q)
			dev.q[qid].cq = NULL;
		return 0;
	case nvq_admin_dbbuf:
		dev.dbbuf = dma("Doorbell Buffer Config", s->prp1, PAGE);
		dev.ei = dma("Doorbell Buffer Config", s->prp2, PAGE);
		return 0;
	case nvq_admin_abort_cmd:
		*result = 1; /* not aborted */
		return 0;
	}
	(void)data;
	return NVQ_SC_INVALID_OPCODE;
}

static void undo(const struct nvq_sqe *s)
{
	uint16_t qid = s->cdw10 & 0xffff;

	if (s->opcode == nvq_admin_dbbuf)
		dev.dbbuf = dev.ei = NULL;
	if (!qid || qid > MAX_Q)
		return;
	if (s->opcode == nvq_admin_create_sq)
		dev.q[qid].live = false;
	if (s->opcode == nvq_admin_create_cq)
		dev.q[qid].cq = NULL;
}

/* Execute one SQE of @qid and answer it as the script says. */
static void exec(uint16_t qid, const struct nvq_sqe *s)
{
	uint8_t data[PAGE];
	struct nvq_cqe c = { 0 };
	size_t len = 0;
	uint16_t st = 0;
	uint8_t a = s8(), k;

	if (qid == 0) {
		st = admin(s, &c.result, data, &len);
	} else if (s->opcode == nvq_cmd_read || s->opcode == nvq_cmd_write) {
		/* The first page, at least, must be mapped. */
		dma("I/O data", s->prp1, 1);
	}
	if (len) {
		sane_data(s, data);
		if (a & A_PATCH)
			for (k = s8() % 16; k; k--) {
				uint16_t off = s16() % PAGE;

				data[off] = s8();
			}
		dma_to_host(s, data, len);
	}
	if (a & A_STATUS)
		st = s16();
	if (a & A_RESULT)
		c.result = s32();
	if (a & A_EVENT) {
		k = s8();
		if (k == 1)
			dev.cfs = true;
		else if (k == 2)
			dev.gone = true;
	}
	/* A device that fails a command did not execute it. */
	if (!qid && (st & NVQ_STATUS_CODE_MASK))
		undo(s);
	/*
	 * Doorbell Buffer Config whose completion the driver does not see
	 * in time: the driver goes on with MMIO doorbells, rightly, and the
	 * shadow page stays zero; a device reading it anyway would take
	 * "tail 0" for a full ring of stale entries. Not the driver's fault.
	 */
	if (s->opcode == nvq_admin_dbbuf && !qid && (a & 7) != A_NORMAL &&
	    (a & 7) != A_DUP && (a & 7) != A_STRAY)
		dev.dbbuf = dev.ei = NULL;
	c.sq_head = (uint16_t)dev.q[qid].head;
	if (a & A_SQHD)
		c.sq_head = s16();
	c.sq_id = qid;
	c.cid = s->cid;
	c.status = (uint16_t)(st << 1);
	TRACE("q%u opcode %#x cid %u nsid %u cdw10 %#x: answer %#x status %#x\n",
	      qid, s->opcode, s->cid, s->nsid, s->cdw10, a, st);
	switch (a & 7) {
	case A_DROP:
		return;
	case A_BAD_CID:
		c.cid = s16();
		break;
	case A_BAD_SQID:
		c.sq_id = s16();
		break;
	case A_DUP:
		post(qid, &c, false);
		break;
	case A_DELAY:
		if (dev.nr_delayed < MAX_DELAYED) {
			dev.delayed[dev.nr_delayed].qid = qid;
			dev.delayed[dev.nr_delayed++].cqe = c;
			return;
		}
		break;
	case A_PHASE:
		post(qid, &c, true);
		return;
	case A_STRAY: {
		struct nvq_cqe x = c;

		x.cid = s16();
		x.status = (uint16_t)(s16() << 1);
		post(qid, &x, false);
		break;
	}
	}
	post(qid, &c, false);
}

/* Take the SQEs of @qid up to @tail. */
static void run_sq(uint16_t qid, uint32_t tail)
{
	struct fq *q = &dev.q[qid];
	unsigned int n = 0;

	if (tail >= q->sq_depth)
		driver_bug("SQ %u tail doorbell %u, queue depth %u", qid, tail,
			   q->sq_depth);
	while (q->head != tail && n++ < q->sq_depth && q->live) {
		struct nvq_sqe s;

		memcpy(&s, dma("SQ", (uintptr_t)&q->sq[q->head], sizeof(s)),
		       sizeof(s));
		q->head = (q->head + 1) % q->sq_depth;
		exec(qid, &s);
	}
	if (dev.ei && qid)
		dev.ei[nvq_sq_db_index(qid, NVQ_CAP_DSTRD(dev.cap))] = q->head;
}

/* Shadow doorbells: the tails the driver wrote there without ringing. */
static void run_shadow(void)
{
	uint16_t qid;

	if (!dev.dbbuf)
		return;
	for (qid = 1; qid <= MAX_Q; qid++)
		if (dev.q[qid].live)
			run_sq(qid, dev.dbbuf[nvq_sq_db_index(
					    qid, NVQ_CAP_DSTRD(dev.cap))] %
					    dev.q[qid].sq_depth);
}

/* ---- transport ops ---- */

static bool running(void)
{
	return (dev.cc & NVQ_CC_EN) && dev.ready && !dev.gone && !dev.cfs &&
	       !dev.shn_done;
}

static uint32_t csts(void)
{
	uint32_t v = 0;

	if (dev.gone)
		return UINT32_MAX;
	if (dev.cc & NVQ_CC_EN) {
		if (!dev.ready && dev.rdy_left && dev.rdy_left--)
			return dev.cfs ? NVQ_CSTS_CFS : 0;
		dev.ready = true;
		v |= NVQ_CSTS_RDY;
	} else if (dev.stale_rdy) {
		dev.stale_rdy--;
		v |= NVQ_CSTS_RDY;
	}
	if (dev.cfs)
		v |= NVQ_CSTS_CFS;
	if ((dev.cc & NVQ_CC_SHN_MASK) && (dev.cc & NVQ_CC_EN)) {
		if (dev.shn_left) {
			dev.shn_left--;
			v |= NVQ_CSTS_SHST_OCCUR;
		} else {
			dev.shn_done = true;
			v |= NVQ_CSTS_SHST_CMPLT;
		}
	}
	return v;
}

static uint32_t f_read32(struct nvq_transport *t, uint32_t off)
{
	uint32_t v = 0;

	pthread_mutex_lock(&dev.lock);
	if (dev.gone)
		v = UINT32_MAX;
	else if (off == NVQ_REG_CAP)
		v = (uint32_t)dev.cap;
	else if (off == NVQ_REG_CAP + 4)
		v = (uint32_t)(dev.cap >> 32);
	else if (off == NVQ_REG_VS)
		v = dev.vs;
	else if (off == NVQ_REG_CC)
		v = dev.cc;
	else if (off == NVQ_REG_CSTS)
		v = csts();
	pthread_mutex_unlock(&dev.lock);
	return v;
}

static uint64_t f_read64(struct nvq_transport *t, uint32_t off)
{
	uint64_t lo = f_read32(t, off);

	return lo | (uint64_t)f_read32(t, off + 4) << 32;
}

static void f_write32(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	pthread_mutex_lock(&dev.lock);
	if (off == NVQ_REG_AQA)
		dev.aqa = val;
	if (off == NVQ_REG_CC && !dev.gone) {
		if ((val & NVQ_CC_EN) && !(dev.cc & NVQ_CC_EN)) {
			uint32_t sqs = NVQ_AQA_ASQS(dev.aqa) + 1;
			uint32_t cqs = NVQ_AQA_ACQS(dev.aqa) + 1;

			memset(dev.q, 0, sizeof(dev.q));
			dev.q[0].sq = dma("ASQ", dev.asq, sqs * NVQ_SQE_SIZE);
			dev.q[0].cq = dma("ACQ", dev.acq, cqs * NVQ_CQE_SIZE);
			dev.q[0].sq_depth = sqs;
			dev.q[0].cq_depth = cqs;
			dev.q[0].phase = 1;
			dev.q[0].live = true;
			dev.q[0].ien = true;
			dev.ready = false;
			dev.rdy_left = dev.rdy_reads;
			dev.shn_left = dev.shn_reads;
			dev.shn_done = false;
		}
		if (!(val & NVQ_CC_EN)) {
			/* Reset: queues, shadow doorbells, fatal status go. */
			memset(dev.q, 0, sizeof(dev.q));
			dev.dbbuf = dev.ei = NULL;
			dev.nr_delayed = 0;
			dev.ready = dev.cfs = dev.shn_done = false;
		}
		dev.cc = val;
	}
	pthread_mutex_unlock(&dev.lock);
}

static void f_write64(struct nvq_transport *t, uint32_t off, uint64_t val)
{
	pthread_mutex_lock(&dev.lock);
	if (off == NVQ_REG_ASQ)
		dev.asq = val;
	if (off == NVQ_REG_ACQ)
		dev.acq = val;
	pthread_mutex_unlock(&dev.lock);
}

static void f_db(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	uint32_t stride = 4u << NVQ_CAP_DSTRD(dev.cap), idx;
	uint16_t qid;

	pthread_mutex_lock(&dev.lock);
	if (off < NVQ_REG_DBS || (off - NVQ_REG_DBS) % stride)
		driver_bug("doorbell write at offset %#x, stride %u", off,
			   stride);
	idx = (off - NVQ_REG_DBS) / stride;
	qid = (uint16_t)(idx / 2);
	if (!running() || qid > MAX_Q || !dev.q[qid].live)
		goto out; /* nothing there to ring: ignored, as by hardware */
	flush_delayed();
	if (idx & 1) {
		if (val >= dev.q[qid].cq_depth)
			driver_bug("CQ %u head doorbell %u, queue depth %u",
				   qid, val, dev.q[qid].cq_depth);
	} else {
		run_sq(qid, val);
	}
	run_shadow();
out:
	pthread_mutex_unlock(&dev.lock);
}

static int f_map(struct nvq_transport *t, void *va, size_t len, uint64_t *iova)
{
	int rc = 0;

	pthread_mutex_lock(&dev.lock);
	if (dev.nr_maps == MAX_MAPS) {
		rc = nvq_err(-ENOSPC, "fuzz fake: IOMMU full");
	} else {
		dev.maps[dev.nr_maps].va = (uintptr_t)va;
		dev.maps[dev.nr_maps++].len = len;
		*iova = (uintptr_t)va;
	}
	pthread_mutex_unlock(&dev.lock);
	return rc;
}

static int f_unmap(struct nvq_transport *t, void *va, size_t len)
{
	unsigned int i;

	pthread_mutex_lock(&dev.lock);
	for (i = 0; i < dev.nr_maps; i++)
		if (dev.maps[i].va == (uintptr_t)va && dev.maps[i].len == len)
			break;
	if (i == dev.nr_maps)
		driver_bug("dma_unmap of [%p, +%zu), which was never mapped",
			   va, len);
	dev.maps[i] = dev.maps[--dev.nr_maps];
	pthread_mutex_unlock(&dev.lock);
	return 0;
}

static int f_irq_fd(struct nvq_transport *t, unsigned int v)
{
	return v < NR_VEC ? dev.irq[v] : -EINVAL;
}

static int f_irq_cpu(struct nvq_transport *t, unsigned int v)
{
	return -1;
}

static void f_close(struct nvq_transport *t)
{
	dev.open = false;
}

static const struct nvq_transport_ops f_ops = {
	.name = "fuzz",
	.close = f_close,
	.reg_read32 = f_read32,
	.reg_read64 = f_read64,
	.reg_write32 = f_write32,
	.reg_write64 = f_write64,
	.db_write = f_db,
	.dma_map = f_map,
	.dma_unmap = f_unmap,
	.irq_fd = f_irq_fd,
	.irq_cpu = f_irq_cpu,
};

static int f_open(const char *params, struct nvq_transport **t)
{
	if (dev.open)
		return nvq_err(-EBUSY, "fuzz fake: already open");
	dev.open = true;
	dev.t.ops = &f_ops;
	dev.t.nr_vectors = NR_VEC;
	dev.t.numa_node = -1;
	snprintf(dev.t.name, sizeof(dev.t.name), "fuzz");
	*t = &dev.t;
	return 0;
}

/* ---- the host side ---- */

#define MAX_REQS 64

static struct req {
	unsigned int calls;
	uint64_t submitted;
} reqs[MAX_REQS];
static unsigned int nr_reqs;

static void req_done(void *arg, const struct nvq_cpl *cpl)
{
	struct req *r = arg;

	if (++r->calls != 1)
		driver_bug("callback of request %td ran %u times", r - reqs,
			   r->calls);
}

/* Reap until every request so far has completed. */
static void wait_all(struct nvq_ctrl *c, struct nvq_queue *q,
		     enum nvq_mode mode)
{
	unsigned int i;

	for (i = 0; i < nr_reqs; i++) {
		while (!__atomic_load_n(&reqs[i].calls, __ATOMIC_ACQUIRE)) {
			if (nvq_now_ns() - reqs[i].submitted > HANG_NS)
				driver_bug("hang: request %u not completed "
					   "after %llu ms",
					   i, HANG_NS / 1000000);
			if (mode == NVQ_MODE_POLL)
				nvq_poll(q, 0);
			else if (mode == NVQ_MODE_WAIT)
				nvq_wait(q, 1, 5);
			else
				nvq_sleep_us(100);
		}
	}
}

static void io(struct nvq_ctrl *c, struct nvq_queue *q, enum nvq_mode mode,
	       uint8_t *dbuf, uint8_t *mbuf)
{
	uint32_t nsids[8], nsid;
	int nr = nvq_ns_list(c, nsids, 8), rc = 0;
	struct req *r = &reqs[nr_reqs];
	struct nvq_sqe cmd;
	uint8_t k, sel;
	uint64_t slba;
	uint32_t nlb;
	uint16_t st;

	/* The device's answers come from the same bytes, on other threads
	 * too (the watchdog's Abort). */
	pthread_mutex_lock(&dev.lock);
	k = s8();
	sel = s8();
	slba = s8();
	nlb = 1 + s8() % 16;
	nsid = s32();
	pthread_mutex_unlock(&dev.lock);
	if (sel < 0xf0)
		nsid = nr > 0 ? nsids[sel % (nr < 8 ? nr : 8)] : 1;
	if (nr_reqs == MAX_REQS)
		return;
	r->submitted = nvq_now_ns();
	TRACE("host: op %u nsid %u slba %llu nlb %u\n", k % 8, nsid,
	      (unsigned long long)slba, nlb);
	switch (k % 8) {
	case 0:
		rc = nvq_read(q, nsid, dbuf, slba, nlb, 0, req_done, r);
		break;
	case 1:
		rc = nvq_write(q, nsid, dbuf, slba, nlb, NVQ_IO_FUA, req_done,
			       r);
		break;
	case 2:
		rc = nvq_flush(q, k & 0x80 ? NVQ_NSID_ALL : nsid, 0, req_done,
			       r);
		break;
	case 3:
		rc = nvq_write_zeroes(q, nsid, slba, nlb * 64, 0, req_done, r);
		break;
	case 4:
		rc = nvq_deallocate(q, nsid, slba, nlb, 0, req_done, r);
		break;
	case 5:
		/* Any memory: bounced through DMA memory by the library. */
		nvq_read_sync(c, nsid, mbuf, slba, nlb, &st);
		return;
	case 6:
		memset(&cmd, 0, sizeof(cmd));
		cmd.opcode = nvq_admin_get_log_page;
		cmd.nsid = NVQ_NSID_ALL;
		cmd.cdw10 = (uint32_t)(sel & 0x7f) | (128u * nlb - 1) << 16;
		nvq_admin(c, &cmd, mbuf, 512u * nlb, NULL, &st);
		return;
	default:
		memset(&cmd, 0, sizeof(cmd));
		cmd.opcode = nvq_admin_identify;
		cmd.nsid = nsid;
		cmd.cdw10 = sel & 3;
		nvq_admin(c, &cmd, mbuf, PAGE, NULL, &st);
		return;
	}
	if (!rc)
		nr_reqs++;
	wait_all(c, q, mode);
}

/*
 * Header, 4 bytes (zero: a plain device and poll mode):
 *   0: bits 1:0 mode (poll, wait, thread, poll), 3:2 queues - 1,
 *      4 no shadow doorbells, 5 exclusive queues, 7:6 queue depth
 *      (16, 2, 3, the default)
 *   1: CAP/VS: 0 CSS also I/O Command Sets, 1 VS 1.0, 2 VS 2.0, 3 DSTRD 1,
 *      4 MPSMIN 8 KiB, 5 MQES 1, 6 TO 0, 7 CAP ^= 8 script bytes
 *   2: CSTS: 2:0 reads before RDY, 5:3 reads before shutdown completes,
 *      7:6 reads with a stale RDY before the enable
 *   3: I/O operations after bring-up, 2 + (byte % 8)
 */
static void setup(struct nvq_opts *o)
{
	static const unsigned int depth[] = { 16, 2, 3, 0 };
	static const enum nvq_mode modes[] = { NVQ_MODE_POLL, NVQ_MODE_WAIT,
					       NVQ_MODE_THREAD, NVQ_MODE_POLL };
	uint8_t h0 = s8(), h1 = s8(), h2 = s8();
	unsigned int i;

	nvq_opts_init(o);
	o->mode = modes[h0 & 3];
	o->nr_queues = 1 + ((h0 >> 2) & 3);
	o->shadow_doorbells = !(h0 & 0x10);
	o->exclusive = (h0 & 0x20) && o->mode != NVQ_MODE_THREAD;
	o->queue_depth = depth[h0 >> 6];
	/* Short timeouts: a dropped command costs milliseconds. */
	o->admin_timeout_ms = 5;
	o->io_timeout_ms = 10;

	dev.cap = 0x3ff | 1ull << 24 | (uint64_t)NVQ_CAP_CSS_NVM << 37;
	dev.vs = NVQ_VS(1, 4, 0);
	if (h1 & 1)
		dev.cap |= 1ull << (37 + 6);
	if (h1 & 2)
		dev.vs = NVQ_VS(1, 0, 0);
	if (h1 & 4)
		dev.vs = NVQ_VS(2, 0, 0);
	if (h1 & 8)
		dev.cap |= 1ull << 32;
	if (h1 & 0x10)
		dev.cap |= 1ull << 48;
	if (h1 & 0x20)
		dev.cap = (dev.cap & ~0xffffull) | 1;
	if (h1 & 0x40)
		dev.cap &= ~(0xffull << 24);
	if (h1 & 0x80)
		dev.cap ^= s64();
	dev.rdy_reads = h2 & 7;
	dev.shn_reads = (h2 >> 3) & 7;
	dev.stale_rdy = h2 >> 6;
	for (i = 0; i < NR_VEC; i++)
		dev.irq[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvq_ctrl *c = NULL;
	struct nvq_opts o;
	unsigned int i, nops;
	uint8_t *dbuf, *mbuf;

	trace = getenv("NVQ_FUZZ_TRACE");
	pthread_mutex_lock(&dev.lock);
	memset(&dev.t, 0, sizeof(dev) - offsetof(struct dev, t));
	dev.p = data;
	dev.n = size;
	setup(&o);
	nops = 2 + s8() % 8;
	pthread_mutex_unlock(&dev.lock);
	memset(reqs, 0, sizeof(reqs));
	nr_reqs = 0;
	nvq_transport_set_test(f_open);

	if (!nvq_open("test:", &o, &c)) {
		struct nvq_queue *q = nvq_ctrl_queue(c, 0);

		dbuf = nvq_dma_alloc(c, 16 * PAGE, -1);
		mbuf = malloc(16 * PAGE);
		for (i = 0; q && dbuf && mbuf && i < nops; i++)
			io(c, q, o.mode, dbuf, mbuf);
		free(mbuf);
		nvq_dma_free(c, dbuf);
		nvq_close(c);
	} else {
		TRACE("open failed: %s\n", nvq_errmsg());
	}
	/* nvq_close() ran every callback that had not run. */
	for (i = 0; i < nr_reqs; i++)
		if (reqs[i].calls != 1)
			driver_bug("callback of request %u ran %u times by "
				   "the end of nvq_close()",
				   i, reqs[i].calls);
	if (dev.open)
		driver_bug("transport still open after nvq_close()");
	if (dev.nr_maps)
		driver_bug("%u DMA mappings left after nvq_close(), the "
			   "first at %#lx",
			   dev.nr_maps, (unsigned long)dev.maps[0].va);
	for (i = 0; i < NR_VEC; i++)
		if (dev.irq[i] >= 0)
			close(dev.irq[i]);
	return 0;
}
