// SPDX-License-Identifier: MIT
/* The scripted controller of fake_transport.h. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "fake_transport.h"
#include "internal.h"

struct fake_ctrl fake;

static uint64_t now_ms(void)
{
	return nvq_now_ns() / 1000000u;
}

static uint32_t fake_csts(void)
{
	uint32_t v = fake.shst;

	if (fake.gone)
		return 0xffffffffu;
	if (fake.cc & NVQ_CC_EN) {
		if (now_ms() >= fake.rdy_at)
			v |= NVQ_CSTS_RDY;
	} else if (fake.stale_rdy) {
		fake.stale_rdy--;
		v |= NVQ_CSTS_RDY;
	}
	return v;
}

static uint32_t fake_read32(struct nvq_transport *t, uint32_t off)
{
	if (fake.gone)
		return 0xffffffffu;
	switch (off) {
	case NVQ_REG_CAP:
		return (uint32_t)fake.cap;
	case NVQ_REG_CAP + 4:
		return (uint32_t)(fake.cap >> 32);
	case NVQ_REG_VS:
		return fake.vs;
	case NVQ_REG_CC:
		return fake.cc;
	case NVQ_REG_CSTS:
		return fake_csts();
	case 0x68:
		return fake.crto;
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
		fake.aqa = val;
	if (off != NVQ_REG_CC)
		return;
	if ((val & NVQ_CC_EN) && !(fake.cc & NVQ_CC_EN)) {
		if (fake_csts() & NVQ_CSTS_RDY)
			fake.en_while_rdy = true;
		fake.rdy_at = now_ms() + fake.rdy_delay_ms;
		fake.shst = 0;
		memset(fake.q, 0, sizeof(fake.q));
		fake.q[0].sq = (void *)(uintptr_t)fake.asq;
		fake.q[0].cq = (void *)(uintptr_t)fake.acq;
		fake.q[0].depth = (fake.aqa & 0xfff) + 1;
		fake.q[0].phase = 1;
		fake.gone = fake.gone_on_enable;
	}
	if (!(val & NVQ_CC_EN))
		fake.shst = 0;
	else if ((val & NVQ_CC_SHN_MASK) && !fake.no_shutdown)
		fake.shst = NVQ_CSTS_SHST_CMPLT;
	fake.cc = val;
}

static void fake_write64(struct nvq_transport *t, uint32_t off, uint64_t val)
{
	if (off == NVQ_REG_ASQ)
		fake.asq = val;
	if (off == NVQ_REG_ACQ)
		fake.acq = val;
}

static uint16_t identify(const struct nvq_sqe *s)
{
	uint8_t cns = s->cdw10 & 0xff;
	void *buf = (void *)(uintptr_t)s->prp1;
	uint32_t *list = buf, n = 0, i;
	uint8_t *d = buf;

	fake.cns[cns & 15]++;
	memset(buf, 0, NVQ_IDENTIFY_DATA_SIZE);
	if (fake.v10 && cns == NVQ_ID_CNS_NS_ACTIVE_LIST)
		cns = NVQ_ID_CNS_NS; /* a 1.0 device sees bit 0 only */
	switch (cns) {
	case NVQ_ID_CNS_CTRL:
		memcpy(buf, &fake.idc, sizeof(fake.idc));
		return 0;
	case NVQ_ID_CNS_NS:
		if (s->nsid >= 1 && s->nsid <= FAKE_NR_NS)
			memcpy(buf, &fake.ns[s->nsid], sizeof(fake.ns[0]));
		else /* garbage a careless host would take for nsids */
			memset(buf, 0x5a, 64);
		return 0;
	case NVQ_ID_CNS_NS_ACTIVE_LIST:
		for (i = s->nsid + 1; i <= FAKE_NR_NS; i++)
			if (fake.ns[i].nsze)
				list[n++] = i;
		return 0;
	case NVQ_ID_CNS_NS_DESC_LIST:
		if (s->nsid >= 1 && s->nsid <= FAKE_NR_NS &&
		    fake.csi[s->nsid] >= 0) {
			d[0] = 4; /* NIDT CSI */
			d[1] = 1;
			d[4] = (uint8_t)fake.csi[s->nsid];
		}
		return 0;
	case NVQ_ID_CNS_CSI_CTRL:
		if (!fake.has_id_nvm ||
		    s->cdw11 >> NVQ_IDENTIFY_CSI_SHIFT != NVQ_CSI_NVM)
			break;
		memcpy(buf, &fake.id_nvm, sizeof(fake.id_nvm));
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
		*result = fake.nq_result;
		return 0;
	case nvq_admin_create_cq:
		CHECK(qid >= 1 && qid <= FAKE_MAX_Q);
		memset(&fake.q[qid], 0, sizeof(fake.q[qid]));
		fake.q[qid].cq = (void *)(uintptr_t)s->prp1;
		fake.q[qid].depth = depth;
		fake.q[qid].phase = 1;
		return 0;
	case nvq_admin_create_sq:
		CHECK(qid >= 1 && qid <= FAKE_MAX_Q &&
		      fake.q[qid].depth == depth);
		fake.q[qid].sq = (void *)(uintptr_t)s->prp1;
		return 0;
	case nvq_admin_delete_sq:
	case nvq_admin_delete_cq:
		return 0;
	}
	return NVQ_SC_INVALID_OPCODE;
}

static uint16_t io(const struct nvq_sqe *s)
{
	fake.io[s->opcode & 15]++;
	memmove(&fake.last_io[1], &fake.last_io[0], 3 * sizeof(*s));
	fake.last_io[0] = *s;
	if (s->opcode == nvq_cmd_dsm) {
		const struct nvq_dsm_range *r = (void *)(uintptr_t)s->prp1;
		unsigned int i, nr = (s->cdw10 & 0xff) + 1;

		memcpy(&fake.last_range, r, sizeof(fake.last_range));
		fake.dsm_cmds++;
		for (i = 0; i < nr && fake.nr_ranges < 64; i++)
			fake.ranges[fake.nr_ranges++] = r[i];
	}
	if (s->opcode == nvq_cmd_flush && s->nsid == 0xffffffffu &&
	    ((fake.idc.vwc >> 1) & 3) == 2)
		return NVQ_SC_INVALID_NS;
	return 0;
}

static void post(struct fake_q *q, uint16_t sqid, uint16_t cid, uint16_t st,
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
	uint32_t idx = ((off - NVQ_REG_DBS) / 4) >> NVQ_CAP_DSTRD(fake.cap);
	uint16_t qid = (uint16_t)(idx / 2);
	struct fake_q *q;

	if (idx & 1)
		return; /* CQ head: the driver's flow control is by tags */
	CHECK(qid <= FAKE_MAX_Q);
	q = &fake.q[qid];
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
	if (fake.map_ok == 0)
		return nvq_err(
			-ENOMEM,
			"fake: cannot pin %zu KiB: RLIMIT_MEMLOCK is 64 KiB",
			len / 1024);
	if (fake.map_ok > 0)
		fake.map_ok--;
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
	fake.open = false;
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

/* The "test:" scheme's constructor. Only "test:" itself: the script is
 * set through @fake, not the URI. */
static int fake_open(const char *params, struct nvq_transport **t)
{
	if (*params)
		return nvq_err(-EINVAL,
			       "fake transport: unknown parameters '%s' "
			       "(the script is set through 'fake')",
			       params);
	if (fake.open)
		return nvq_err(-EBUSY, "fake transport: already open");
	fake.open = true;
	fake.t.ops = &fake_ops;
	fake.t.nr_vectors = 1;
	fake.t.numa_node = -1;
	snprintf(fake.t.name, sizeof(fake.t.name), "fake");
	*t = &fake.t;
	return 0;
}

void fake_reset(void)
{
	nvq_transport_set_test(fake_open);
	memset(&fake, 0, sizeof(fake));
	fake.cap = 0xffffull | 1ull << 24 | (uint64_t)NVQ_CAP_CSS_NVM << 37;
	fake.vs = NVQ_VS(1, 4, 0);
	fake.map_ok = -1;
	fake.nq_result = 0;
	fake.idc.sqes = 0x66;
	fake.idc.cqes = 0x44;
	fake.idc.nn = FAKE_NR_NS;
	fake.idc.mdts = 5;
	fake.idc.oncs = NVQ_CTRL_ONCS_DSM | NVQ_CTRL_ONCS_WRITE_ZEROES;
	fake.ns[1].nsze = fake.ns[1].ncap = 1 << 20;
	fake.ns[1].lbaf[0].ds = 9;
	fake.ns[3] = fake.ns[1];
	fake.csi[1] = fake.csi[2] = fake.csi[3] = -1;
}
