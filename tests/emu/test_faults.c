// SPDX-License-Identifier: MIT
/*
 * Fault injection at the device level (docs/faults.md), through the raw
 * harness: each fault does exactly what it says and nothing more - the
 * dropped CQE never appears, a duplicate appears twice, statuses are the
 * ones asked for, CFS is set, RDY never comes, registers read all ones
 * after vanish, interrupts stop, data is corrupted only when asked - and
 * is counted; Nth counting and seeded probabilities repeat; the device
 * can be destroyed in every state a fault leaves it in.
 *
 * The harness opens the emulator through the driver's emu transport,
 * which keeps the struct nvq_emu to itself; the tests here need it for
 * the fault API, so they open the device through a transport of their own
 * (the same calls, one line each) and hand it to the harness.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "emu.h"
#include "harness.h"

/* h_open() with the device at *@emu, to arm faults on it directly. */
static struct h *f_open(const char *params, struct nvq_emu **emu)
{
	struct h *h = h_open(params);

	*emu = nvq_emu_transport_device(h->t);
	CHECK(*emu != NULL);
	return h;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

#define NONE_MS 100 /* how long "never appears" is watched */

/* Submit a 1-block read or write of @slba into @buf; returns its CID. */
static uint16_t submit(struct h *h, struct hq *q, uint8_t opc, uint64_t slba,
		       void *buf, size_t len)
{
	struct nvq_sqe s = h_sqe(opc);
	uint16_t cid;

	s.nsid = 1;
	s.cdw10 = (uint32_t)slba;
	s.cdw12 = (uint32_t)(len / 4096 - 1);
	h_prp(h, &s, buf, len);
	cid = h_push(h, q, &s);
	h_ring(h, q);
	return cid;
}

static struct nvq_cqe reap(struct h *h, struct hq *q)
{
	struct nvq_cqe c;

	CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
	return c;
}

static bool nothing(struct h *h, struct hq *q, int ms)
{
	struct nvq_cqe c;

	(void)h;
	return h_reap_noring(q, &c, ms) == -1;
}

static uint16_t rw1(struct h *h, struct hq *q, uint8_t opc, uint64_t slba,
		    void *buf)
{
	return h_rw(h, q, opc, 1, slba, 1, buf, 4096);
}

static struct hq *setup(struct h *h)
{
	h_enable(h);
	CHECK_ST_OK(h_set_nr_queues(h, 4, 4, NULL));
	return h_ioq(h, 1, 64, true, 1);
}

/* ------------------------------------------------------------------ */
/* Completion faults                                                   */
/* ------------------------------------------------------------------ */

static void drop(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M,fault=drop-cqe@on=read@nth=2", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL), *b2 = h_alloc(h, 4096, NULL);
	struct nvq_cqe c;
	uint16_t cid;

	memset(b, 0xa5, 4096);
	CHECK_ST_OK(rw1(h, q, nvq_cmd_write, 3, b)); /* not a read */
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 3, b)); /* read 1 */
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_DROP_CQE), 0);
	memset(b, 0, 4096);
	cid = submit(h, q, nvq_cmd_read, 3, b, 4096); /* read 2 */
	CHECK(nothing(h, q, NONE_MS));
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_DROP_CQE), 1);
	/* Spent: the next one completes, and it is its own CQE. */
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 3, b2));
	CHECK(nothing(h, q, 20));
	/* The dropped one executed all the same: the data arrived (seen
	 * through the later CQE: one queue executes in order). */
	CHECK_EQ(b[0], 0xa5);
	CHECK_EQ(b[4095], 0xa5);
	(void)cid;
	/* count=2 from the API: the next two of any kind. */
	CHECK_OK(nvq_emu_fault_inject(e, "drop-cqe@count=2"));
	submit(h, q, nvq_cmd_read, 3, b, 4096);
	submit(h, q, nvq_cmd_write, 3, b, 4096);
	CHECK(nothing(h, q, NONE_MS));
	cid = submit(h, q, nvq_cmd_read, 3, b, 4096);
	c = reap(h, q);
	CHECK_EQ(c.cid, cid);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_DROP_CQE), 3);
	h_close(h);
}

static void delay(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);
	struct nvq_cqe c;
	uint64_t t0, dt;
	uint16_t cid;

	CHECK_OK(nvq_emu_fault_inject(e, "delay:1s@on=write"));
	t0 = h_now();
	cid = submit(h, q, nvq_cmd_write, 0, b, 4096);
	CHECK(nothing(h, q, NONE_MS));
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_DELAY), 1);
	/* Other commands pass it meanwhile. */
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	c = reap(h, q);
	dt = h_now() - t0;
	CHECK_EQ(c.cid, cid);
	CHECK_ST_OK(NVQ_STATUS(c.status));
	CHECK(dt >= 1000000000ull);
	CHECK(nothing(h, q, 20));

	/* Destroy with a completion still held (an hour away). */
	CHECK_OK(nvq_emu_fault_inject(e, "delay:3600s@on=read"));
	submit(h, q, nvq_cmd_read, 0, b, 4096);
	CHECK(nothing(h, q, 20));
	h_close(h);
}

static void dup_cqe(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M,fault=dup-cqe@on=read", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);
	struct nvq_cqe c1, c2, c3;
	uint16_t cid, cid2;

	cid = submit(h, q, nvq_cmd_read, 0, b, 4096);
	c1 = reap(h, q);
	c2 = reap(h, q);
	CHECK_EQ(c1.cid, cid);
	CHECK_EQ(c2.cid, cid);
	CHECK_EQ(c2.sq_id, 1);
	CHECK_ST_OK(NVQ_STATUS(c2.status));
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_DUP_CQE), 1);
	cid2 = submit(h, q, nvq_cmd_read, 0, b, 4096);
	c3 = reap(h, q);
	CHECK_EQ(c3.cid, cid2);
	CHECK(nothing(h, q, 20));

	/* On the admin queue too, combined with a delay: both come late
	 * (long enough that a descheduled test thread still sees it). */
	CHECK_OK(nvq_emu_fault_inject(e, "dup-cqe@on=admin:0x06"));
	CHECK_OK(nvq_emu_fault_inject(e, "delay:500ms@on=admin:0x06"));
	{
		struct nvq_sqe s = h_sqe(nvq_admin_identify);
		uint8_t *id = h_alloc(h, 4096, NULL);

		s.cdw10 = NVQ_ID_CNS_CTRL;
		s.prp1 = h_iova(h, id);
		cid = h_push(h, &h->aq, &s);
		h_ring(h, &h->aq);
		CHECK(nothing(h, &h->aq, 20));
		c1 = reap(h, &h->aq);
		c2 = reap(h, &h->aq);
		CHECK_EQ(c1.cid, cid);
		CHECK_EQ(c2.cid, cid);
		CHECK_EQ(c2.sq_id, 0);
	}
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_DUP_CQE), 2);
	h_close(h);
}

static void bad_ids(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);
	struct nvq_cqe c;
	uint16_t cid;

	CHECK_OK(nvq_emu_fault_inject(e, "bad-cid@on=read"));
	cid = submit(h, q, nvq_cmd_read, 0, b, 4096);
	c = reap(h, q);
	CHECK_EQ(c.cid, cid ^ 0x8000);
	CHECK_EQ(c.sq_id, 1);
	CHECK(nothing(h, q, 20)); /* and no right one besides */
	CHECK_OK(nvq_emu_fault_inject(e, "bad-cid:77"));
	submit(h, q, nvq_cmd_write, 0, b, 4096);
	CHECK_EQ(reap(h, q).cid, 77);

	CHECK_OK(nvq_emu_fault_inject(e, "bad-sqid"));
	cid = submit(h, q, nvq_cmd_read, 0, b, 4096);
	c = reap(h, q);
	CHECK_EQ(c.cid, cid);
	CHECK_EQ(c.sq_id, 1 ^ 0x8000);
	CHECK_OK(nvq_emu_fault_inject(e, "bad-sqid:0"));
	submit(h, q, nvq_cmd_read, 0, b, 4096);
	CHECK_EQ(reap(h, q).sq_id, 0);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_BAD_CID), 2);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_BAD_SQID), 2);
	/* Gone: correct again. */
	cid = submit(h, q, nvq_cmd_read, 0, b, 4096);
	c = reap(h, q);
	CHECK_EQ(c.cid, cid);
	CHECK_EQ(c.sq_id, 1);
	h_close(h);
}

static void status(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);
	uint16_t st;

	memset(b, 0x11, 4096);
	CHECK_ST_OK(rw1(h, q, nvq_cmd_write, 5, b));
	CHECK_OK(nvq_emu_fault_inject(e, "status:2/0x81@on=read@dnr=1"));
	memset(b, 0, 4096);
	st = rw1(h, q, nvq_cmd_read, 5, b);
	CHECK_ST(st, NVQ_SCT_MEDIA, NVQ_SC_READ_ERROR);
	CHECK_EQ(NVQ_DNR(st), 1);
	CHECK_EQ(NVQ_MORE(st), 0);
	CHECK_EQ(b[0], 0); /* not executed: no data */
	CHECK_OK(nvq_emu_fault_inject(e, "status:2/0x81@on=read"));
	st = rw1(h, q, nvq_cmd_read, 5, b);
	CHECK_ST(st, NVQ_SCT_MEDIA, NVQ_SC_READ_ERROR);
	CHECK_EQ(NVQ_DNR(st), 0);
	/* A failed write changes nothing on the media. */
	CHECK_OK(nvq_emu_fault_inject(e, "status:0/6@on=write"));
	memset(b, 0x22, 4096);
	st = rw1(h, q, nvq_cmd_write, 5, b);
	CHECK_ST(st, NVQ_SCT_GENERIC, NVQ_SC_INTERNAL);
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 5, b));
	CHECK_EQ(b[100], 0x11);
	/* Admin: Get Features fails as asked. */
	CHECK_OK(nvq_emu_fault_inject(e, "status:1/0x0d@on=admin:0x0a"));
	{
		struct nvq_sqe s = h_sqe(nvq_admin_get_features);

		s.cdw10 = NVQ_FEAT_NUM_QUEUES;
		st = h_admin(h, &s, NULL);
		CHECK_ST(st, NVQ_SCT_CMD_SPECIFIC, 0x0d);
		CHECK_ST_OK(h_admin(h, &s, NULL));
	}
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_STATUS), 4);
	h_close(h);
}

/* ------------------------------------------------------------------ */
/* Controller faults                                                   */
/* ------------------------------------------------------------------ */

static void cfs(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M,fault=cfs@on=io@nth=3", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);

	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	CHECK_ST_OK(rw1(h, q, nvq_cmd_write, 0, b));
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_CSTS) & NVQ_CSTS_CFS, 0);
	submit(h, q, nvq_cmd_read, 0, b, 4096);
	h_wait_csts(h, NVQ_CSTS_CFS, NVQ_CSTS_CFS);
	CHECK(nothing(h, q, NONE_MS));
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_CFS), 1);
	/* Commands submitted now are not processed either. */
	submit(h, q, nvq_cmd_read, 0, b, 4096);
	CHECK(nothing(h, q, NONE_MS));
	/* A reset brings it back. */
	h_disable(h);
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_CSTS) & NVQ_CSTS_CFS, 0);
	q = setup(h);
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	/* At once, from the API, with no command. */
	CHECK_OK(nvq_emu_fault_inject(e, "cfs@now"));
	h_wait_csts(h, NVQ_CSTS_CFS, NVQ_CSTS_CFS);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_CFS), 2);
	h_close(h); /* destroyed while fatal */
}

/* Enable without waiting for RDY; returns CSTS after @ms. */
static uint32_t enable_watch(struct h *h, int ms)
{
	uint64_t end;
	uint32_t csts = 0;

	memset(h->aq.sq, 0, 32 * 64);
	memset(h->aq.cq, 0, 32 * 16);
	h->aq.size = 32;
	h->aq.sq_tail = h->aq.cq_head = 0;
	h->aq.phase = 1;
	h->ops->reg_write32(h->t, NVQ_REG_AQA, NVQ_AQA(31, 31));
	h->ops->reg_write64(h->t, NVQ_REG_ASQ, h->aq.sq_iova);
	h->ops->reg_write64(h->t, NVQ_REG_ACQ, h->aq.cq_iova);
	h->ops->reg_write32(h->t, NVQ_REG_CC, h_cc_default());
	end = h_now() + (uint64_t)ms * 1000000;
	while (h_now() < end) {
		csts = h->ops->reg_read32(h->t, NVQ_REG_CSTS);
		if (csts & (NVQ_CSTS_RDY | NVQ_CSTS_CFS))
			break;
		usleep(1000);
	}
	return csts;
}

static void no_ready(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M,fault=no-ready@count=2", &e);
	uint32_t csts;

	csts = enable_watch(h, NONE_MS);
	CHECK_EQ(csts & (NVQ_CSTS_RDY | NVQ_CSTS_CFS), 0);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_NO_READY), 1);
	h_disable(h);
	CHECK_EQ(enable_watch(h, NONE_MS) & NVQ_CSTS_RDY, 0);
	h_disable(h);
	/* Third reset: the fault is spent. */
	CHECK_EQ(enable_watch(h, H_TIMEOUT_MS) & NVQ_CSTS_RDY, NVQ_CSTS_RDY);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_NO_READY), 2);
	{
		uint8_t *id = h_alloc(h, 4096, NULL);

		CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	}
	/* Armed on a running device: the next reset, and destroy while
	 * waiting for a RDY that never comes. */
	CHECK_OK(nvq_emu_fault_inject(e, "no-ready@count=inf"));
	h_disable(h);
	CHECK_EQ(enable_watch(h, 50) & NVQ_CSTS_RDY, 0);
	h_disable(h);
	CHECK_EQ(enable_watch(h, 50) & NVQ_CSTS_RDY, 0);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_NO_READY), 4);
	h_close(h);
}

static void vanish(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M,fault=vanish@on=io@nth=2", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);
	uint32_t off;

	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	CHECK(h->ops->reg_read32(h->t, NVQ_REG_CSTS) != UINT32_MAX);
	submit(h, q, nvq_cmd_read, 0, b, 4096);
	h_wait_csts(h, ~0u, ~0u);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_VANISH), 1);
	for (off = 0; off < 0x40; off += 4)
		CHECK_EQ(h->ops->reg_read32(h->t, off), UINT32_MAX);
	CHECK_EQ(h->ops->reg_read64(h->t, NVQ_REG_CAP), UINT64_MAX);
	CHECK_EQ(h->ops->reg_read32(h->t, 0x1000), UINT32_MAX);
	CHECK(nothing(h, q, NONE_MS));
	/* Nothing completes, admin included, and a reset does not help. */
	submit(h, q, nvq_cmd_read, 0, b, 4096);
	CHECK(nothing(h, q, NONE_MS));
	h->ops->reg_write32(h->t, NVQ_REG_CC, 0);
	usleep(20000);
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_CSTS), UINT32_MAX);
	{
		struct nvq_sqe s = h_sqe(nvq_admin_get_features);

		s.cdw10 = NVQ_FEAT_NUM_QUEUES;
		h_push(h, &h->aq, &s);
		h_ring(h, &h->aq);
		CHECK(nothing(h, &h->aq, NONE_MS));
	}
	/* DMA unmap (in h_close) and destroy still work. */
	h_close(h);

	/* At once from the API, on an idle device. */
	h = f_open("size=4M", &e);
	setup(h);
	CHECK_OK(nvq_emu_fault_inject(e, "vanish@now"));
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_CSTS), UINT32_MAX);
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_VS), UINT32_MAX);
	h_close(h);

	/* From the parameters, before anything: gone from the start. */
	h = f_open("size=4M,fault=vanish@now", &e);
	CHECK_EQ(h->ops->reg_read64(h->t, NVQ_REG_CAP), UINT64_MAX);
	h_close(h);
}

/* ------------------------------------------------------------------ */
/* Data and interrupts                                                 */
/* ------------------------------------------------------------------ */

static unsigned int diff_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
	unsigned int d = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (a[i] != b[i]) {
			CHECK_EQ(a[i] ^ b[i], 0xff); /* inverted */
			d++;
		}
	}
	return d;
}

static void corrupt(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M", &e);
	struct hq *q = setup(h);
	size_t len = 64 << 10; /* a PRP list: spread over 16 pages */
	uint8_t *w = h_alloc(h, len, NULL), *r = h_alloc(h, len, NULL);
	uint64_t s = 5;
	size_t i;

	for (i = 0; i < len; i++)
		w[i] = (uint8_t)test_rand(&s);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 16, 16, w, len));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 16, 16, r, len));
	CHECK_EQ(diff_bytes(w, r, len), 0); /* not asked: intact */

	CHECK_OK(nvq_emu_fault_inject(e, "corrupt:8"));
	/* A write is not what corrupt counts: the data still lands. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 16, 16, w, len));
	memset(r, 0, len);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 16, 16, r, len));
	CHECK_EQ(diff_bytes(w, r, len), 8);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_CORRUPT), 1);
	/* The media is intact: the next read is right. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 16, 16, r, len));
	CHECK_EQ(diff_bytes(w, r, len), 0);
	/* Default: one byte, and only on the queue asked. */
	CHECK_OK(nvq_emu_fault_inject(e, "corrupt@qid=2"));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 16, 16, r, len));
	CHECK_EQ(diff_bytes(w, r, len), 0);
	{
		struct hq *q2 = h_ioq(h, 2, 16, false, 0);

		CHECK_ST_OK(h_rw(h, q2, nvq_cmd_read, 1, 16, 1, r, 4096));
		CHECK_EQ(diff_bytes(w, r, 4096), 1);
	}
	/* A read that fails is not corrupted (and not counted). */
	CHECK_OK(nvq_emu_fault_inject(e, "corrupt"));
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, 1u << 20, 1, r, 4096),
		 NVQ_SCT_GENERIC, NVQ_SC_LBA_RANGE);
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_CORRUPT), 2);
	h_close(h);
}

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

/* Is @fd signalled within @ms? Consumes the signal. */
static bool irq(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, ms) != 1)
		return false;
	CHECK_EQ(read(fd, &v, sizeof(v)), sizeof(v));
	return true;
}

static void no_irq(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M,qpairs=4", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);
	int fd = h->ops->irq_fd(h->t, 1);
	int i;

	drain(fd);
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	CHECK(irq(fd, H_TIMEOUT_MS));
	/* Two completions without their interrupt, then they come again. */
	CHECK_OK(nvq_emu_fault_inject(e, "no-irq@on=io@count=2"));
	for (i = 0; i < 2; i++) {
		CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
		CHECK(!irq(fd, 30));
	}
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_NO_IRQ), 2);
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	CHECK(irq(fd, H_TIMEOUT_MS));
	/* From then on, until cleared. */
	CHECK_OK(nvq_emu_fault_inject(e, "no-irq@count=inf"));
	for (i = 0; i < 5; i++) {
		CHECK_ST_OK(rw1(h, q, nvq_cmd_write, 0, b));
		CHECK(!irq(fd, 10));
	}
	nvq_emu_fault_clear(e);
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	CHECK(irq(fd, H_TIMEOUT_MS));
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_NO_IRQ), 7);
	h_close(h);
}

/* ------------------------------------------------------------------ */
/* Counting, probability, queues                                       */
/* ------------------------------------------------------------------ */

/* Which of @n reads on @q fail with the injected Internal Error. */
static void hits(struct h *h, struct hq *q, unsigned int n, uint8_t *map)
{
	uint8_t *b = h_alloc(h, 4096, NULL);
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint16_t st = rw1(h, q, nvq_cmd_read, i % 64, b);

		map[i] = NVQ_SC(st) == NVQ_SC_INTERNAL;
		if (!map[i])
			CHECK_ST_OK(st);
	}
}

static unsigned int run_prob(const char *params, const char *spec, uint8_t *map,
			     unsigned int n)
{
	struct nvq_emu *e;
	struct h *h = f_open(params, &e);
	struct hq *q = setup(h);
	unsigned int i, k = 0;

	if (spec)
		CHECK_OK(nvq_emu_fault_inject(e, spec));
	hits(h, q, n, map);
	for (i = 0; i < n; i++)
		k += map[i];
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_STATUS), k);
	h_close(h);
	return k;
}

static void probability(void)
{
	enum { N = 400 };
	static uint8_t a[N], b[N], c[N], d[N];
	unsigned int k;

	k = run_prob("size=4M", "status:0/6@on=read@prob=0.25@seed=7", a, N);
	CHECK(k > N / 8 && k < N / 2); /* ~100 */
	CHECK_EQ(run_prob("size=4M", "status:0/6@on=read@prob=0.25@seed=7", b,
			  N),
		 k);
	CHECK(!memcmp(a, b, N)); /* same seed, same commands hit */
	run_prob("size=4M", "status:0/6@on=read@prob=0.25@seed=8", c, N);
	CHECK(memcmp(a, c, N)); /* another seed, others */
	/* Unseeded faults follow fault_seed=, from the parameters too. */
	run_prob("size=4M,fault_seed=3,fault=status:0/6@on=read@prob=0.25",
		 NULL, c, N);
	run_prob("size=4M,fault_seed=3,fault=status:0/6@on=read@prob=0.25",
		 NULL, d, N);
	CHECK(!memcmp(c, d, N));
	run_prob("size=4M,fault_seed=4,fault=status:0/6@on=read@prob=0.25",
		 NULL, d, N);
	CHECK(memcmp(c, d, N));
	/* prob=1 with a count: the first 3. */
	k = run_prob("size=4M", "status:0/6@on=read@prob=1@count=3", a, N);
	CHECK_EQ(k, 3);
	CHECK(a[0] && a[1] && a[2] && !a[3]);
}

static uint16_t get_nq(struct h *h)
{
	struct nvq_sqe s = h_sqe(nvq_admin_get_features);

	s.cdw10 = NVQ_FEAT_NUM_QUEUES;
	return h_admin(h, &s, NULL);
}

static void nth_and_queues(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M,qpairs=4", &e);
	struct hq *q1 = setup(h), *q2 = h_ioq(h, 2, 64, true, 2);
	uint8_t *b = h_alloc(h, 4096, NULL);
	unsigned int i;

	/* The 3rd write on queue 2, and the two after it. */
	CHECK_OK(nvq_emu_fault_inject(
		e, "status:0/6@on=write@qid=2@nth=3@count=3"));
	for (i = 1; i <= 8; i++) {
		uint16_t st;

		CHECK_ST_OK(rw1(h, q1, nvq_cmd_write, 0, b));
		CHECK_ST_OK(rw1(h, q2, nvq_cmd_read, 0, b));
		st = rw1(h, q2, nvq_cmd_write, 0, b);
		if (i >= 3 && i <= 5)
			CHECK_ST(st, NVQ_SCT_GENERIC, NVQ_SC_INTERNAL);
		else
			CHECK_ST_OK(st);
	}
	/* By opcode: the 2nd Flush (I/O 00h), and the 2nd Identify. */
	CHECK_OK(nvq_emu_fault_inject(e, "status:0/6@on=io:0@nth=2"));
	CHECK_OK(nvq_emu_fault_inject(e, "status:0/6@on=admin:0x06@nth=2"));
	for (i = 1; i <= 3; i++) {
		struct nvq_sqe s = h_sqe(nvq_cmd_flush);
		uint8_t *id = h_alloc(h, 4096, NULL);
		uint16_t st;

		s.nsid = 1;
		CHECK_ST_OK(rw1(h, q1, nvq_cmd_read, 0, b));
		st = h_cmd(h, q1, &s, NULL);
		if (i == 2)
			CHECK_ST(st, NVQ_SCT_GENERIC, NVQ_SC_INTERNAL);
		else
			CHECK_ST_OK(st);
		st = h_identify(h, NVQ_ID_CNS_CTRL, 0, id);
		if (i == 2)
			CHECK_ST(st, NVQ_SCT_GENERIC, NVQ_SC_INTERNAL);
		else
			CHECK_ST_OK(st);
	}
	/* on=admin never counts I/O; cleared faults count nothing. */
	CHECK_OK(nvq_emu_fault_inject(e, "status:0/6@on=admin@count=inf"));
	CHECK_ST_OK(rw1(h, q1, nvq_cmd_read, 0, b));
	CHECK_ST(get_nq(h), NVQ_SCT_GENERIC, NVQ_SC_INTERNAL);
	nvq_emu_fault_clear(e);
	CHECK_ST_OK(get_nq(h));
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_STATUS), 6);
	h_close(h);
}

/* Faults leave no state behind that breaks queue deletion or reset. */
static void teardown(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M,qpairs=4", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);
	struct nvq_sqe s;

	/* Delete an SQ whose completion is held: it is dropped. */
	CHECK_OK(nvq_emu_fault_inject(e, "delay:1s@on=read"));
	submit(h, q, nvq_cmd_read, 0, b, 4096);
	usleep(20000);
	s = h_sqe(nvq_admin_delete_sq);
	s.cdw10 = 1;
	CHECK_ST_OK(h_admin(h, &s, NULL));
	s = h_sqe(nvq_admin_delete_cq);
	s.cdw10 = 1;
	CHECK_ST_OK(h_admin(h, &s, NULL));
	q = h_ioq(h, 1, 64, true, 1);
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	/* Reset with held completions and a duplicate in flight. */
	CHECK_OK(nvq_emu_fault_inject(e, "delay:1s@on=write@count=4"));
	for (int i = 0; i < 4; i++)
		submit(h, q, nvq_cmd_write, 0, b, 4096);
	usleep(20000);
	h_disable(h);
	q = setup(h);
	usleep(20000);
	CHECK(nothing(h, q, 20));
	CHECK_ST_OK(rw1(h, q, nvq_cmd_read, 0, b));
	CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_DELAY), 5);
	/* Duplicates never overrun a full CQ: 2-entry CQ, one slot. */
	{
		struct hq *q3 = h_ioq(h, 3, 2, false, 0);
		struct nvq_cqe c;

		CHECK_OK(nvq_emu_fault_inject(e, "dup-cqe@qid=3@count=inf"));
		submit(h, q3, nvq_cmd_read, 0, b, 4096);
		CHECK_EQ(h_reap_noring(q3, &c, H_TIMEOUT_MS), 0);
		/* The copy waits for room the host has not given yet. */
		CHECK(nothing(h, q3, 30));
		h_ring_cq(h, q3);
		CHECK_EQ(h_reap(h, q3, &c, H_TIMEOUT_MS), 0);
		CHECK_EQ(nvq_emu_fault_count(e, NVQ_EMU_FAULT_DUP_CQE), 1);
	}
	h_close(h);
}

/* Without fault parameters nothing is armed and nothing counts. */
static void none(void)
{
	struct nvq_emu *e;
	struct h *h = f_open("size=4M", &e);
	struct hq *q = setup(h);
	uint8_t *b = h_alloc(h, 4096, NULL);
	unsigned int i;

	for (i = 0; i < 50; i++)
		CHECK_ST_OK(
			rw1(h, q, i & 1 ? nvq_cmd_read : nvq_cmd_write, i, b));
	for (i = 0; i < NVQ_EMU_FAULT_NR; i++)
		CHECK_EQ(nvq_emu_fault_count(e, i), 0);
	nvq_emu_fault_clear(e); /* harmless with nothing armed */
	h_close(h);
}

int main(void)
{
	none();
	drop();
	delay();
	dup_cqe();
	bad_ids();
	status();
	cfs();
	no_ready();
	vanish();
	corrupt();
	no_irq();
	probability();
	nth_and_queues();
	teardown();
	return 0;
}
