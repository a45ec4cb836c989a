// SPDX-License-Identifier: MIT
/*
 * The driver against a scripted controller that returns odd but legal
 * values the emulated controller never does: a stale CSTS.RDY, I/O Command
 * Sets without the NVM bit, an NVMe 1.0 controller (no CNS 02h), reserved
 * FLBAS bits, VWC.FB 10b, a CRTO beyond CAP.TO, a 65536-entry queue, a
 * transport whose DMA mapping fails with its own reason, a device gone
 * mid-enable and one that never finishes shutdown.
 *
 * The test defines nvq_transport_open(): linked against the static
 * library, its definition is used instead of lib/transport.c's, so every
 * nvq_open() here reaches the fake. The fake completes commands inside the
 * doorbell write; DMA addresses are the virtual ones.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"
#include "nvq/spec.h"
#include "internal.h"
#include "transport.h"

#define NR_NS 3
#define MAX_Q 4

struct fq {
	struct nvq_sqe *sq;
	struct nvq_cqe *cq;
	uint32_t depth, head, cq_tail, phase;
};

static struct fake {
	struct nvq_transport t;
	/* script */
	uint64_t cap;
	uint32_t vs, crto;
	unsigned int rdy_delay_ms; /* CSTS.RDY follows CC.EN=1 this late */
	unsigned int stale_rdy; /* CSTS reads with RDY=1 while CC.EN=0 */
	bool no_shutdown; /* CSTS.SHST never reaches complete */
	bool gone_on_enable; /* all-ones after CC.EN=1 */
	bool v10; /* NVMe 1.0: CNS 02h is read as CNS 00h */
	int map_ok; /* dma_map calls that succeed; -1 all */
	uint32_t nq_result;
	struct nvq_id_ctrl idc;
	struct nvq_id_ns ns[NR_NS + 1];
	int csi[NR_NS + 1]; /* -1: no CSI descriptor */
	/* state */
	uint32_t cc, shst;
	uint64_t rdy_at;
	bool gone;
	uint64_t asq, acq;
	uint32_t aqa;
	struct fq q[MAX_Q + 1];
	/* what the driver did */
	unsigned int cns[16], io[16];
	bool en_while_rdy;
	struct nvq_sqe last_io[4];
	struct nvq_dsm_range last_range;
} f;

static uint64_t now_ms(void)
{
	return nvq_now_ns() / 1000000u;
}

static uint32_t fake_csts(void)
{
	uint32_t v = f.shst;

	if (f.gone)
		return 0xffffffffu;
	if (f.cc & NVQ_CC_EN) {
		if (now_ms() >= f.rdy_at)
			v |= NVQ_CSTS_RDY;
	} else if (f.stale_rdy) {
		f.stale_rdy--;
		v |= NVQ_CSTS_RDY;
	}
	return v;
}

static uint32_t fake_read32(struct nvq_transport *t, uint32_t off)
{
	if (f.gone)
		return 0xffffffffu;
	switch (off) {
	case NVQ_REG_CAP:
		return (uint32_t)f.cap;
	case NVQ_REG_CAP + 4:
		return (uint32_t)(f.cap >> 32);
	case NVQ_REG_VS:
		return f.vs;
	case NVQ_REG_CC:
		return f.cc;
	case NVQ_REG_CSTS:
		return fake_csts();
	case 0x68:
		return f.crto;
	}
	return 0;
}

static uint64_t fake_read64(struct nvq_transport *t, uint32_t off)
{
	return fake_read32(t, off) | (uint64_t)fake_read32(t, off + 4) << 32;
}

static void fake_write32(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	if (off == NVQ_REG_AQA)
		f.aqa = val;
	if (off != NVQ_REG_CC)
		return;
	if ((val & NVQ_CC_EN) && !(f.cc & NVQ_CC_EN)) {
		if (fake_csts() & NVQ_CSTS_RDY)
			f.en_while_rdy = true;
		f.rdy_at = now_ms() + f.rdy_delay_ms;
		f.shst = 0;
		memset(f.q, 0, sizeof(f.q));
		f.q[0].sq = (void *)(uintptr_t)f.asq;
		f.q[0].cq = (void *)(uintptr_t)f.acq;
		f.q[0].depth = (f.aqa & 0xfff) + 1;
		f.q[0].phase = 1;
		f.gone = f.gone_on_enable;
	}
	if (!(val & NVQ_CC_EN))
		f.shst = 0;
	else if ((val & NVQ_CC_SHN_MASK) && !f.no_shutdown)
		f.shst = NVQ_CSTS_SHST_CMPLT;
	f.cc = val;
}

static void fake_write64(struct nvq_transport *t, uint32_t off, uint64_t val)
{
	if (off == NVQ_REG_ASQ)
		f.asq = val;
	if (off == NVQ_REG_ACQ)
		f.acq = val;
}

static uint16_t identify(const struct nvq_sqe *s)
{
	uint8_t cns = s->cdw10 & 0xff;
	void *buf = (void *)(uintptr_t)s->prp1;
	uint32_t *list = buf, n = 0, i;
	uint8_t *d = buf;

	f.cns[cns & 15]++;
	memset(buf, 0, NVQ_IDENTIFY_DATA_SIZE);
	if (f.v10 && cns == NVQ_ID_CNS_NS_ACTIVE_LIST)
		cns = NVQ_ID_CNS_NS; /* a 1.0 device sees bit 0 only */
	switch (cns) {
	case NVQ_ID_CNS_CTRL:
		memcpy(buf, &f.idc, sizeof(f.idc));
		return 0;
	case NVQ_ID_CNS_NS:
		if (s->nsid >= 1 && s->nsid <= NR_NS)
			memcpy(buf, &f.ns[s->nsid], sizeof(f.ns[0]));
		else /* garbage a careless host would take for nsids */
			memset(buf, 0x5a, 64);
		return 0;
	case NVQ_ID_CNS_NS_ACTIVE_LIST:
		for (i = s->nsid + 1; i <= NR_NS; i++)
			if (f.ns[i].nsze)
				list[n++] = i;
		return 0;
	case NVQ_ID_CNS_NS_DESC_LIST:
		if (s->nsid >= 1 && s->nsid <= NR_NS && f.csi[s->nsid] >= 0) {
			d[0] = 4; /* NIDT CSI */
			d[1] = 1;
			d[4] = (uint8_t)f.csi[s->nsid];
		}
		return 0;
	}
	return NVQ_SC_INVALID_FIELD;
}

static uint16_t admin(const struct nvq_sqe *s, uint32_t *result)
{
	uint16_t qid = s->cdw10 & 0xffff;
	uint32_t depth = (s->cdw10 >> 16) + 1;

	switch (s->opcode) {
	case nvq_admin_identify:
		return identify(s);
	case nvq_admin_set_features:
		*result = f.nq_result;
		return 0;
	case nvq_admin_create_cq:
		CHECK(qid >= 1 && qid <= MAX_Q);
		memset(&f.q[qid], 0, sizeof(f.q[qid]));
		f.q[qid].cq = (void *)(uintptr_t)s->prp1;
		f.q[qid].depth = depth;
		f.q[qid].phase = 1;
		return 0;
	case nvq_admin_create_sq:
		CHECK(qid >= 1 && qid <= MAX_Q && f.q[qid].depth == depth);
		f.q[qid].sq = (void *)(uintptr_t)s->prp1;
		return 0;
	case nvq_admin_delete_sq:
	case nvq_admin_delete_cq:
		return 0;
	}
	return NVQ_SC_INVALID_OPCODE;
}

static uint16_t io(const struct nvq_sqe *s)
{
	f.io[s->opcode & 15]++;
	memmove(&f.last_io[1], &f.last_io[0], 3 * sizeof(*s));
	f.last_io[0] = *s;
	if (s->opcode == nvq_cmd_dsm)
		memcpy(&f.last_range, (void *)(uintptr_t)s->prp1,
		       sizeof(f.last_range));
	if (s->opcode == nvq_cmd_flush && s->nsid == 0xffffffffu &&
	    ((f.idc.vwc >> 1) & 3) == 2)
		return NVQ_SC_INVALID_NS;
	return 0;
}

static void post(struct fq *q, uint16_t sqid, uint16_t cid, uint16_t st,
		 uint32_t result)
{
	struct nvq_cqe *c = &q->cq[q->cq_tail];

	c->result = result;
	c->dw1 = 0;
	c->sq_head = (uint16_t)q->head;
	c->sq_id = sqid;
	c->cid = cid;
	__atomic_store_n(&c->status, (uint16_t)(st << 1 | q->phase),
			 __ATOMIC_RELEASE);
	if (++q->cq_tail == q->depth) {
		q->cq_tail = 0;
		q->phase ^= 1;
	}
}

static void fake_db(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	uint32_t idx = ((off - NVQ_REG_DBS) / 4) >> NVQ_CAP_DSTRD(f.cap);
	uint16_t qid = (uint16_t)(idx / 2);
	struct fq *q;

	if (idx & 1)
		return; /* CQ head: the driver's flow control is by tags */
	CHECK(qid <= MAX_Q);
	q = &f.q[qid];
	CHECK(q->sq && val < q->depth);
	while (q->head != val) {
		const struct nvq_sqe *s = &q->sq[q->head];
		uint32_t result = 0;
		uint16_t st = qid ? io(s) : admin(s, &result);

		q->head = (q->head + 1) % q->depth;
		post(q, qid, s->cid, st, result);
	}
}

static int fake_map(struct nvq_transport *t, void *va, size_t len,
		    uint64_t *iova)
{
	if (f.map_ok == 0)
		return nvq_err(
			-ENOMEM,
			"fake: cannot pin %zu KiB: RLIMIT_MEMLOCK is 64 KiB",
			len / 1024);
	if (f.map_ok > 0)
		f.map_ok--;
	*iova = (uintptr_t)va;
	return 0;
}

static int fake_unmap(struct nvq_transport *t, void *va, size_t len)
{
	return 0;
}

static int fake_irq_fd(struct nvq_transport *t, unsigned int v)
{
	return -EINVAL;
}

static int fake_irq_cpu(struct nvq_transport *t, unsigned int v)
{
	return -1;
}

static void fake_close(struct nvq_transport *t)
{
}

static const struct nvq_transport_ops fake_ops = {
	.name = "fake",
	.close = fake_close,
	.reg_read32 = fake_read32,
	.reg_read64 = fake_read64,
	.reg_write32 = fake_write32,
	.reg_write64 = fake_write64,
	.db_write = fake_db,
	.dma_map = fake_map,
	.dma_unmap = fake_unmap,
	.irq_fd = fake_irq_fd,
	.irq_cpu = fake_irq_cpu,
};

/* Replaces lib/transport.c's: every URI opens the fake. */
int nvq_transport_open(const char *uri, struct nvq_transport **t)
{
	f.t.ops = &fake_ops;
	f.t.nr_vectors = 1;
	f.t.numa_node = -1;
	snprintf(f.t.name, sizeof(f.t.name), "fake");
	*t = &f.t;
	return 0;
}

/* A plain NVMe 1.4 controller with namespaces 1 and 3 (512-byte LBAs). */
static void reset(void)
{
	memset(&f, 0, sizeof(f));
	f.cap = 0xffffull | 1ull << 24 | (uint64_t)NVQ_CAP_CSS_NVM << 37;
	f.vs = NVQ_VS(1, 4, 0);
	f.map_ok = -1;
	f.nq_result = 0;
	f.idc.sqes = 0x66;
	f.idc.cqes = 0x44;
	f.idc.nn = NR_NS;
	f.idc.mdts = 5;
	f.idc.oncs = NVQ_CTRL_ONCS_DSM | NVQ_CTRL_ONCS_WRITE_ZEROES;
	f.ns[1].nsze = f.ns[1].ncap = 1 << 20;
	f.ns[1].lbaf[0].ds = 9;
	f.ns[3] = f.ns[1];
	f.csi[1] = f.csi[2] = f.csi[3] = -1;
}

static struct nvq_ctrl *open_fake(void)
{
	struct nvq_opts o;

	nvq_opts_init(&o);
	o.mode = NVQ_MODE_POLL;
	o.nr_queues = 1;
	o.queue_depth = 64;
	return open_or_die("fake:", &o);
}

static unsigned int nr_ns(struct nvq_ctrl *c, uint32_t *ids)
{
	int n = nvq_ns_list(c, ids, 8);

	CHECK(n >= 0);
	return (unsigned int)n;
}

/* CSTS.RDY still 1 from a previous owner while CC.EN is 0. */
static void test_stale_rdy(void)
{
	struct nvq_ctrl *c;

	reset();
	f.stale_rdy = 20;
	c = open_fake();
	CHECK(!f.en_while_rdy);
	nvq_close(c);
}

/* CAP.CSS with I/O Command Sets: CC.CSS 110b, only NVM namespaces kept. */
static void test_iocss(void)
{
	uint32_t ids[8];
	struct nvq_ctrl *c;

	reset();
	f.cap &= ~((uint64_t)0xff << 37);
	f.cap |= (uint64_t)(1u << 6) << 37; /* IOCSS alone */
	f.csi[1] = 0; /* NVM */
	f.csi[3] = 2; /* Zoned */
	c = open_fake();
	CHECK_NOTES(c, "CSI 2");
	CHECK(!*nvq_errmsg()); /* notes are not failure messages */
	CHECK_EQ((f.cc & NVQ_CC_CSS_MASK) >> NVQ_CC_CSS_SHIFT, 6);
	CHECK_EQ(nr_ns(c, ids), 1);
	CHECK_EQ(ids[0], 1);
	nvq_close(c);

	reset();
	f.cap |= (uint64_t)(1u << 6) << 37; /* NVM and IOCSS */
	c = open_fake();
	CHECK_EQ((f.cc & NVQ_CC_CSS_MASK) >> NVQ_CC_CSS_SHIFT, 6);
	CHECK_EQ(nr_ns(c, ids), 2); /* no CSI descriptor: NVM */
	nvq_close(c);

	reset();
	c = open_fake();
	CHECK_EQ(f.cc & NVQ_CC_CSS_MASK, NVQ_CC_CSS_NVM);
	CHECK_EQ(f.cns[NVQ_ID_CNS_NS_DESC_LIST], 0);
	nvq_close(c);
}

/* NVMe 1.0 has no active namespace list: scan 1..NN instead. */
static void test_v10(void)
{
	uint32_t ids[8];
	struct nvq_ctrl *c;

	reset();
	f.vs = NVQ_VS(1, 0, 0);
	f.v10 = true;
	c = open_fake();
	CHECK_EQ(f.cns[NVQ_ID_CNS_NS_ACTIVE_LIST], 0);
	CHECK_EQ(nr_ns(c, ids), 2);
	CHECK_EQ(ids[0], 1);
	CHECK_EQ(ids[1], 3);
	nvq_close(c);
}

/* FLBAS bits 6:5 count only with more than 16 LBA formats. */
static void test_flbas(void)
{
	struct nvq_ns_info info;
	struct nvq_ctrl *c;

	reset();
	f.ns[1].flbas = 0x60; /* reserved bits set, format 0 */
	c = open_fake();
	CHECK_OK(nvq_ns_info(c, 1, &info));
	CHECK_EQ(info.lba_size, 512);
	nvq_close(c);

	reset();
	f.ns[1].nlbaf = 16; /* 17 formats: format 16 needs bit 5 */
	f.ns[1].flbas = 0x20;
	f.ns[1].lbaf[16].ds = 12;
	c = open_fake();
	CHECK_OK(nvq_ns_info(c, 1, &info));
	CHECK_EQ(info.lba_size, 4096);
	nvq_close(c);
}

/* VWC.FB 10b: the broadcast Flush would fail; refuse it clearly. */
static void test_flush_broadcast(void)
{
	struct nvq_ctrl *c;
	uint16_t st = 0;

	reset();
	f.idc.vwc = 0x5;
	c = open_fake();
	CHECK_EQ(nvq_flush_sync(c, 0xffffffffu, &st), -ENOTSUP);
	CHECK_MSG("VWC.FB");
	CHECK_EQ(f.io[nvq_cmd_flush], 0);
	CHECK_OK(nvq_flush_sync(c, 1, &st));
	nvq_close(c);

	reset();
	f.idc.vwc = 0x7;
	c = open_fake();
	CHECK_OK(nvq_flush_sync(c, 0xffffffffu, &st));
	CHECK_EQ(f.io[nvq_cmd_flush], 1);
	nvq_close(c);
}

/* CAP.TO 500 ms, CRTO.CRWMT 5 s: a 1.5 s enable is within the limit. */
static void test_crto(void)
{
	struct nvq_ctrl *c;

	reset();
	f.cap |= 1ull << 59; /* CRWMS */
	f.crto = 10;
	f.rdy_delay_ms = 1500;
	c = open_fake();
	nvq_close(c);
}

/* A failed DMA mapping keeps the transport's reason at every step. */
static void test_map_fail(void)
{
	struct nvq_ctrl *c = NULL;
	int n, rc;

	for (n = 0;; n++) {
		reset();
		f.map_ok = n;
		rc = nvq_open("fake:", NULL, &c);
		if (!rc)
			break;
		CHECK(rc < 0);
		CHECK_MSG("RLIMIT_MEMLOCK");
		CHECK(n < 1000);
	}
	f.map_ok = 0;
	CHECK(!nvq_dma_alloc(c, 1 << 20, -1));
	CHECK_MSG("for the device failed");
	CHECK_MSG("RLIMIT_MEMLOCK is 64 KiB");
	nvq_close(c);
}

/* Set Features Number of Queues may grant more than asked. */
static void test_more_queues(void)
{
	struct nvq_ctrl *c;

	reset();
	f.nq_result = 63u << 16 | 63u;
	c = open_fake();
	CHECK_EQ(nvq_ctrl_queue_count(c), 1);
	nvq_close(c);
}

/* CSTS all-ones while waiting for RDY: the device is gone. */
static void test_gone(void)
{
	struct nvq_ctrl *c = NULL;

	reset();
	f.gone_on_enable = true;
	CHECK_EQ(nvq_open("fake:", NULL, &c), -ENODEV);
	CHECK_MSG("gone");
}

/* CSTS.SHST never completes: close gives up and disables. */
static void test_no_shutdown(void)
{
	struct nvq_ctrl *c;

	reset();
	f.no_shutdown = true;
	c = open_fake();
	nvq_close(c);
	CHECK_EQ(f.cc & NVQ_CC_EN, 0);
}

/* 0's based NLB everywhere, DSM NR and its 1's based range length. */
static void test_encodings(void)
{
	struct nvq_ctrl *c;
	uint16_t st;
	void *buf;

	reset();
	c = open_fake();
	buf = nvq_dma_alloc(c, 8 * 512, -1);
	CHECK(buf);
	CHECK_OK(nvq_write_sync(c, 1, buf, 10, 8, &st));
	CHECK_EQ(f.last_io[0].cdw12 & 0xffff, 7);
	CHECK_EQ(f.last_io[0].cdw10, 10);
	/* MDTS (5: 128 KiB = 256 blocks) sizes Write Zeroes commands too. */
	CHECK_OK(nvq_write_zeroes_sync(c, 1, 0, 65537, &st));
	CHECK_EQ(f.io[nvq_cmd_write_zeroes], 257);
	CHECK_EQ(f.last_io[1].cdw12 & 0xffff, 255);
	CHECK_EQ(f.last_io[0].cdw12 & 0xffff, 0);
	CHECK_EQ(f.last_io[0].cdw10, 65536);
	CHECK_OK(nvq_deallocate_sync(c, 1, 5, 100, &st));
	CHECK_EQ(f.last_io[0].cdw10 & 0xff, 0);
	CHECK_EQ(f.last_range.nlb, 100);
	CHECK_EQ(f.last_range.slba, 5);
	nvq_dma_free(c, buf);
	nvq_close(c);

	reset();
	f.idc.oncs = 0;
	c = open_fake();
	CHECK_EQ(nvq_write_zeroes_sync(c, 1, 0, 1, &st), -ENOTSUP);
	CHECK_EQ(nvq_deallocate_sync(c, 1, 0, 1, &st), -ENOTSUP);
	nvq_close(c);
}

static unsigned int nr_done;

static void watchdog(int sig)
{
	static const char msg[] =
		"max-depth: no progress in 30 s: CQ head did not wrap\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static void flush_cb(void *arg, const struct nvq_cpl *cpl)
{
	CHECK_EQ(cpl->err, 0);
	nr_done++;
}

/* CAP.MQES 0xffff allows 65536 entries: the CQ head must wrap there. */
static void test_max_depth(void)
{
	struct nvq_queue_stats qs;
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	unsigned int i, total = 2 * 65536 + 100;

	reset();
	nvq_opts_init(&o);
	o.mode = NVQ_MODE_POLL;
	o.nr_queues = 1;
	o.queue_depth = 65536;
	c = open_or_die("fake:", &o);
	q = nvq_ctrl_queue(c, 0);
	CHECK_EQ(nvq_queue_depth(q), 65536);
	/* Without the wrap the reaper spins on stale entries: fail, not hang. */
	signal(SIGALRM, watchdog);
	alarm(30);
	nr_done = 0;
	for (i = 0; i < total; i++) {
		CHECK_OK(nvq_flush(q, 1, 0, flush_cb, NULL));
		if (i % 1024 == 1023)
			nvq_poll(q, 0);
	}
	nvq_poll(q, 0);
	CHECK_EQ(nr_done, total);
	nvq_queue_stats(q, &qs);
	CHECK_EQ(qs.bad_cqes, 0);
	alarm(0);
	nvq_close(c);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "stale-rdy", test_stale_rdy },
	{ "iocss", test_iocss },
	{ "v10", test_v10 },
	{ "flbas", test_flbas },
	{ "flush-broadcast", test_flush_broadcast },
	{ "crto", test_crto },
	{ "map-fail", test_map_fail },
	{ "more-queues", test_more_queues },
	{ "gone", test_gone },
	{ "encodings", test_encodings },
	{ "max-depth", test_max_depth },
	{ "no-shutdown", test_no_shutdown },
};

/* No argument: every test; else only the one named. */
int main(int argc, char **argv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (argc > 1 && strcmp(argv[1], tests[i].name))
			continue;
		tests[i].fn();
		printf("fake-ctrl %s: ok\n", tests[i].name);
	}
	return 0;
}
