// SPDX-License-Identifier: MIT
/* Admin command set: Identify contents and every rejection path with its
 * exact status code type and status code. */
#include <string.h>

#include "harness.h"

#define GEN NVQ_SCT_GENERIC
#define CMD NVQ_SCT_CMD_SPECIFIC

static uint16_t set_feat(struct h *h, uint32_t cdw10, uint32_t cdw11,
			 uint32_t nsid, uint32_t *dw0)
{
	struct nvq_sqe s = h_sqe(nvq_admin_set_features);
	struct nvq_cqe c;
	uint16_t st;

	s.nsid = nsid;
	s.cdw10 = cdw10;
	s.cdw11 = cdw11;
	st = h_admin(h, &s, &c);
	if (dw0)
		*dw0 = c.result;
	return st;
}

static uint16_t get_feat(struct h *h, uint32_t fid, uint32_t sel,
			 uint32_t cdw11, uint32_t *dw0)
{
	struct nvq_sqe s = h_sqe(nvq_admin_get_features);
	struct nvq_cqe c;
	uint16_t st;

	s.cdw10 = fid | sel << NVQ_FEAT_SEL_SHIFT;
	s.cdw11 = cdw11;
	st = h_admin(h, &s, &c);
	if (dw0)
		*dw0 = c.result;
	return st;
}

static uint16_t get_log(struct h *h, uint8_t lid, uint32_t nsid, void *buf,
			uint32_t len, uint64_t off, bool rae)
{
	struct nvq_sqe s = h_sqe(nvq_admin_get_log_page);
	uint32_t numd = len / 4 - 1;

	s.nsid = nsid;
	s.cdw10 = lid | (rae ? NVQ_LOG_RAE : 0) | (numd & 0xffff) << 16;
	s.cdw11 = numd >> 16;
	s.cdw12 = (uint32_t)off;
	s.cdw13 = (uint32_t)(off >> 32);
	h_prp(h, &s, buf, len);
	return h_admin(h, &s, NULL);
}

static uint16_t raw_cq(struct h *h, uint32_t cdw10, uint32_t cdw11,
		       uint64_t prp1)
{
	struct nvq_sqe s = h_sqe(nvq_admin_create_cq);

	s.cdw10 = cdw10;
	s.cdw11 = cdw11;
	s.prp1 = prp1;
	return h_admin(h, &s, NULL);
}

static uint16_t raw_sq(struct h *h, uint32_t cdw10, uint32_t cdw11,
		       uint64_t prp1)
{
	struct nvq_sqe s = h_sqe(nvq_admin_create_sq);

	s.cdw10 = cdw10;
	s.cdw11 = cdw11;
	s.prp1 = prp1;
	return h_admin(h, &s, NULL);
}

static uint16_t del_q(struct h *h, uint8_t opcode, uint16_t qid)
{
	struct nvq_sqe s = h_sqe(opcode);

	s.cdw10 = qid;
	return h_admin(h, &s, NULL);
}

static void identify(void)
{
	struct h *h = h_open("size=16M,ns=3,mdts=3,lbads=9");
	struct nvq_id_ctrl *id = h_alloc(h, 4096, NULL);
	struct nvq_id_ns *ns = h_alloc(h, 4096, NULL);
	uint32_t *list = h_alloc(h, 4096, NULL);
	uint8_t *zero = h_alloc(h, 4096, NULL);
	struct nvq_sqe s;

	h_enable(h);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	CHECK(!memcmp(id->mn, "nvq emulated controller                 ", 40));
	CHECK(id->sn[0] != ' ' && id->sn[0] != 0);
	CHECK(id->fr[0] != ' ' && id->fr[0] != 0);
	CHECK_EQ(id->mdts, 3);
	CHECK_EQ(id->ver, NVQ_VS(2, 0, 0));
	CHECK_EQ(id->sqes, 0x66);
	CHECK_EQ(id->cqes, 0x44);
	CHECK_EQ(id->nn, 1024);
	CHECK(id->oacs & NVQ_CTRL_OACS_DBBUF);
	CHECK_EQ(id->oncs & (NVQ_CTRL_ONCS_DSM | NVQ_CTRL_ONCS_WRITE_ZEROES),
		 NVQ_CTRL_ONCS_DSM | NVQ_CTRL_ONCS_WRITE_ZEROES);
	CHECK(id->vwc & NVQ_CTRL_VWC_PRESENT);
	CHECK_EQ(id->aerl, 3);
	CHECK_EQ(id->acl, 3);
	CHECK_EQ(id->elpe, 63);
	CHECK(id->cntlid != 0xffff);
	CHECK_EQ(id->sgls, 0);
	CHECK(!strncmp(id->subnqn, "nqn.", 4));
	CHECK(id->psd[0].max_power != 0);
	CHECK_EQ(nvq_u128_lo(id->tnvmcap), 3 * (16u << 20));

	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_NS, 2, ns));
	CHECK_EQ(ns->nsze, (16u << 20) / 512);
	CHECK_EQ(ns->ncap, ns->nsze);
	CHECK_EQ(ns->nuse, ns->nsze);
	CHECK_EQ(ns->nlbaf, 11); /* 512 and 4096, each with 6 metadata sizes */
	CHECK_EQ(nvq_flbas_index(ns->flbas), 0);
	CHECK_EQ(ns->lbaf[0].ds, 9);
	CHECK_EQ(ns->lbaf[0].ms, 0);
	CHECK_EQ(ns->dlfeat & 7, NVQ_NS_DLFEAT_READ_ZEROES);

	/* Valid but inactive nsid: zero-filled data, success. */
	memset(ns, 0xff, 4096);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_NS, 4, ns));
	CHECK(!memcmp(ns, zero, 4096));
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_NS, 1024, ns));
	CHECK_ST(h_identify(h, NVQ_ID_CNS_NS, 0, ns), GEN, NVQ_SC_INVALID_NS);
	CHECK_ST(h_identify(h, NVQ_ID_CNS_NS, 1025, ns), GEN,
		 NVQ_SC_INVALID_NS);
	CHECK_ST(h_identify(h, NVQ_ID_CNS_NS, 0xffffffff, ns), GEN,
		 NVQ_SC_INVALID_NS);

	/* Active namespace list: ids above the given nsid, ascending. */
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_NS_ACTIVE_LIST, 0, list));
	CHECK_EQ(list[0], 1);
	CHECK_EQ(list[1], 2);
	CHECK_EQ(list[2], 3);
	CHECK_EQ(list[3], 0);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_NS_ACTIVE_LIST, 2, list));
	CHECK_EQ(list[0], 3);
	CHECK_EQ(list[1], 0);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_NS_ACTIVE_LIST, 3, list));
	CHECK_EQ(list[0], 0);
	CHECK_ST(h_identify(h, NVQ_ID_CNS_NS_ACTIVE_LIST, 0xfffffffe, list),
		 GEN, NVQ_SC_INVALID_NS);
	CHECK_ST(h_identify(h, NVQ_ID_CNS_NS_ACTIVE_LIST, 0xffffffff, list),
		 GEN, NVQ_SC_INVALID_NS);

	/* Unsupported CNS. */
	CHECK_ST(h_identify(h, 0x1f, 0, id), GEN, NVQ_SC_INVALID_FIELD);

	/* CNS 06h: the NVM command set's limits, none of them set; only
	 * CSI 00h (NVM) exists. */
	memset(id, 0xa5, 4096);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CSI_CTRL, 0, id));
	{
		const struct nvq_id_ctrl_nvm *nvm = (const void *)id;

		CHECK_EQ(nvm->wzsl, 0);
		CHECK_EQ(nvm->dmrl, 0);
		CHECK_EQ(nvm->dmrsl, 0);
		CHECK_EQ(nvm->dmsl, 0);
	}
	s = h_sqe(nvq_admin_identify);
	s.cdw10 = NVQ_ID_CNS_CSI_CTRL;
	s.cdw11 = 1u << NVQ_IDENTIFY_CSI_SHIFT; /* CSI 01h: Key Value */
	s.prp1 = h_iova(h, id);
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);

	/* CNS 05h (CTRATT.ELBAS): the NVM command set's namespace data, the
	 * 16-bit guard and no storage tag for every format; inactive
	 * nsid zeroes; other CSIs invalid. */
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	CHECK(id->ctratt & NVQ_CTRL_CTRATT_ELBAS);
	memset(ns, 0xa5, 4096);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CSI_NS, 2, ns));
	{
		const struct nvq_id_ns_nvm *nvm = (const void *)ns;

		CHECK_EQ(nvm->lbstm, 0);
		CHECK_EQ(nvm->pic, 0);
		for (int i = 0; i < 64; i++)
			CHECK_EQ(nvm->elbaf[i], 0);
	}
	memset(ns, 0xa5, 4096);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CSI_NS, 9, ns));
	CHECK(!memcmp(ns, zero, 4096));
	CHECK_ST(h_identify(h, NVQ_ID_CNS_CSI_NS, 0, ns), GEN,
		 NVQ_SC_INVALID_NS);
	s = h_sqe(nvq_admin_identify);
	s.nsid = 1;
	s.cdw10 = NVQ_ID_CNS_CSI_NS;
	s.cdw11 = 2u << NVQ_IDENTIFY_CSI_SHIFT; /* CSI 02h: Zoned */
	s.prp1 = h_iova(h, ns);
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);

	/* Data pointer outside DMA memory. */
	s = h_sqe(nvq_admin_identify);
	s.cdw10 = NVQ_ID_CNS_CTRL;
	s.prp1 = (uint64_t)(uintptr_t)id; /* a vaddr, not an IOVA */
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_DATA_XFER_ERROR);
	/* PRP1 not dword aligned. */
	s.prp1 = h_iova(h, id) + 2;
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_PRP_INVALID_OFFSET);
	h_close(h);

	/* elbaf= (a test aid) is what CNS 05h reports, for the 12 formats */
	h = h_open("ms=16,pi=1,elbaf=0x100");
	ns = h_alloc(h, 4096, NULL);
	h_enable(h);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CSI_NS, 1, ns));
	{
		const struct nvq_id_ns_nvm *nvm = (const void *)ns;

		CHECK_EQ(nvm->elbaf[0], 0x100);
		CHECK_EQ(nvm->elbaf[11], 0x100);
		CHECK_EQ(nvm->elbaf[12], 0); /* beyond NLBAF: reserved */
	}
	h_close(h);

	/* dbbuf=0, vwc=0: OACS and VWC say so. */
	h = h_open("dbbuf=0,vwc=0");
	id = h_alloc(h, 4096, NULL);
	h_enable(h);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	CHECK(!(id->oacs & NVQ_CTRL_OACS_DBBUF));
	CHECK(!(id->vwc & NVQ_CTRL_VWC_PRESENT));
	CHECK_EQ(id->mdts, 5);
	CHECK_ST(set_feat(h, NVQ_FEAT_VOLATILE_WC, 1, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(get_feat(h, NVQ_FEAT_VOLATILE_WC, 0, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	s = h_sqe(nvq_admin_dbbuf);
	h_alloc(h, 4096, &s.prp1);
	h_alloc(h, 4096, &s.prp2);
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_OPCODE);
	h_close(h);
}

static void opcodes(struct h *h)
{
	static const uint8_t bad[] = { 0x03, 0x07, 0x0d, 0x10, 0x11,
				       0x18, 0x7f, 0x81, 0xc0, 0xff };
	struct nvq_sqe s;
	unsigned int i;

	for (i = 0; i < sizeof(bad); i++) {
		s = h_sqe(bad[i]);
		CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_OPCODE);
	}
	/* Fused operations and SGLs are not supported. */
	s = h_sqe(nvq_admin_get_features);
	s.cdw10 = NVQ_FEAT_ARBITRATION;
	s.flags = 1; /* FUSE first */
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);
	s = h_sqe(nvq_admin_get_features);
	s.cdw10 = NVQ_FEAT_ARBITRATION;
	s.flags = 1 << 6; /* PSDT SGL */
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);
}

static void features(struct h *h)
{
	uint32_t dw0;

	CHECK_ST(set_feat(h, 0x7f, 0, 0, NULL), GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST(get_feat(h, 0x7f, 0, 0, NULL), GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST(get_feat(h, 0x00, 0, 0, NULL), GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST(get_feat(h, NVQ_FEAT_ARBITRATION, 4, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(set_feat(h, NVQ_FEAT_ARBITRATION | NVQ_FEAT_SV, 0, 0, NULL),
		 CMD, NVQ_SC_FEATURE_NOT_SAVEABLE);
	CHECK_ST(set_feat(h, NVQ_FEAT_ARBITRATION, 0, 1, NULL), CMD,
		 NVQ_SC_FEATURE_NOT_PER_NS);

	/* Number of Queues: 0xFFFF is invalid; grants are capped. */
	CHECK_ST(set_feat(h, NVQ_FEAT_NUM_QUEUES, 0xffff, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(set_feat(h, NVQ_FEAT_NUM_QUEUES, 0xffff0000, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(get_feat(h, NVQ_FEAT_NUM_QUEUES, 0, 0, &dw0), 0, 0);
	CHECK_EQ(dw0, NVQ_NUM_QUEUES(4, 4)); /* default: all */
	CHECK_ST_OK(h_set_nr_queues(h, 100, 3, &dw0));
	CHECK_EQ(dw0, NVQ_NUM_QUEUES(4, 3));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_NUM_QUEUES, 0, 0, &dw0));
	CHECK_EQ(dw0, NVQ_NUM_QUEUES(4, 3));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_NUM_QUEUES, NVQ_FEAT_SEL_DEFAULT, 0,
			     &dw0));
	CHECK_EQ(dw0, NVQ_NUM_QUEUES(4, 4));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_NUM_QUEUES, NVQ_FEAT_SEL_SUPPORTED, 0,
			     &dw0));
	CHECK_EQ(dw0 & 1, 0); /* not saveable */

	/* Temperature threshold: only the composite sensor, over/under. */
	CHECK_ST(set_feat(h, NVQ_FEAT_TEMP_THRESH, 350 | 2u << 20, 0, NULL),
		 GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST(set_feat(h, NVQ_FEAT_TEMP_THRESH, 350 | 1u << 16, 0, NULL),
		 GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_TEMP_THRESH, 350, 0, NULL));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_TEMP_THRESH, 0, 0, &dw0));
	CHECK_EQ(dw0, 350);
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_TEMP_THRESH, 200 | 1u << 20, 0, NULL));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_TEMP_THRESH, 0, 1u << 20, &dw0));
	CHECK_EQ(dw0, 200 | 1u << 20); /* DW0 names the threshold, as CDW11 */

	/* Interrupt vector configuration: IV must exist. */
	CHECK_ST(set_feat(h, NVQ_FEAT_IRQ_CONFIG, 5, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_IRQ_CONFIG, 1 | 1u << 16, 0, NULL));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_IRQ_CONFIG, 0, 1, &dw0));
	CHECK_EQ(dw0, 1 | 1u << 16);
	CHECK_ST(get_feat(h, NVQ_FEAT_IRQ_CONFIG, 0, 5, &dw0), GEN,
		 NVQ_SC_INVALID_FIELD);

	/* Power management: only power state 0 exists. */
	CHECK_ST(set_feat(h, NVQ_FEAT_POWER_MGMT, 1, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_POWER_MGMT, 0, 0, NULL));

	/* Volatile write cache round trip. */
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_VOLATILE_WC, 0, 0, NULL));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_VOLATILE_WC, 0, 0, &dw0));
	CHECK_EQ(dw0, 0);
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_VOLATILE_WC, 1, 0, NULL));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_VOLATILE_WC, 0, 0, &dw0));
	CHECK_EQ(dw0, 1);
	CHECK_ST(set_feat(h, NVQ_FEAT_VOLATILE_WC, 2, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);

	/* Coalescing, arbitration, async event config, error recovery. */
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_IRQ_COALESCE, 0x0203, 0, NULL));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_IRQ_COALESCE, 0, 0, &dw0));
	CHECK_EQ(dw0, 0x0203);
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_IRQ_COALESCE, 0, 0, NULL));
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_ARBITRATION, 0x01020303, 0, NULL));
	CHECK_ST_OK(get_feat(h, NVQ_FEAT_ARBITRATION, 0, 0, &dw0));
	CHECK_EQ(dw0, 0x01020303);
	CHECK_ST_OK(
		get_feat(h, NVQ_FEAT_ARBITRATION, NVQ_FEAT_SEL_SAVED, 0, &dw0));
	CHECK_EQ(dw0, 0);
	CHECK_ST(set_feat(h, NVQ_FEAT_ASYNC_EVENT, 1u << 31, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(set_feat(h, NVQ_FEAT_ERR_RECOVERY, 1u << 16, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_ERR_RECOVERY, 10, 0, NULL));
	CHECK_ST_OK(set_feat(h, NVQ_FEAT_WRITE_ATOMIC, 1, 0, NULL));
	CHECK_ST(set_feat(h, NVQ_FEAT_WRITE_ATOMIC, 2, 0, NULL), GEN,
		 NVQ_SC_INVALID_FIELD);
}

static void queues(struct h *h)
{
	uint64_t mem, mem2;
	const uint32_t pc = NVQ_QUEUE_PHYS_CONTIG;

	h_alloc(h, 64 * 64, &mem);
	h_alloc(h, 64 * 64, &mem2);
	/* Create I/O CQ. Granted: 4 SQs, 3 CQs (see features()). */
	CHECK_ST(raw_cq(h, 0 | 15u << 16, pc, mem), CMD, NVQ_SC_QID_INVALID);
	CHECK_ST(raw_cq(h, 4 | 15u << 16, pc, mem), CMD, NVQ_SC_QID_INVALID);
	CHECK_ST(raw_cq(h, 0xffff | 15u << 16, pc, mem), CMD,
		 NVQ_SC_QID_INVALID);
	CHECK_ST(raw_cq(h, 1 | 0u << 16, pc, mem), CMD, NVQ_SC_QUEUE_SIZE);
	CHECK_ST(raw_cq(h, 1 | 64u << 16, pc, mem), CMD, NVQ_SC_QUEUE_SIZE);
	CHECK_ST(raw_cq(h, 1 | 15u << 16, 0, mem), GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST(raw_cq(h, 1 | 15u << 16, pc | NVQ_CQ_IRQ_ENABLED | 3u << 16,
			mem),
		 CMD, NVQ_SC_INVALID_VECTOR);
	CHECK_ST(raw_cq(h, 1 | 15u << 16, pc | 0xffffu << 16, mem), CMD,
		 NVQ_SC_INVALID_VECTOR);
	CHECK_ST(raw_cq(h, 1 | 15u << 16, pc, mem + 512), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(raw_cq(h, 1 | 15u << 16, pc, 0), GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST(raw_cq(h, 1 | 15u << 16, pc, 0x7f0000000000ull), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	CHECK_ST_OK(raw_cq(h, 1 | 15u << 16, pc | NVQ_CQ_IRQ_ENABLED | 2u << 16,
			   mem));
	CHECK_ST(raw_cq(h, 1 | 15u << 16, pc, mem2), CMD, NVQ_SC_QID_INVALID);
	CHECK_ST_OK(raw_cq(h, 2 | 63u << 16, pc, mem2));

	/* Create I/O SQ. */
	h_alloc(h, 64 * 64, &mem);
	CHECK_ST(raw_sq(h, 0 | 15u << 16, pc | 1u << 16, mem), CMD,
		 NVQ_SC_QID_INVALID);
	CHECK_ST(raw_sq(h, 5 | 15u << 16, pc | 1u << 16, mem), CMD,
		 NVQ_SC_QID_INVALID);
	CHECK_ST(raw_sq(h, 1 | 15u << 16, pc | 0u << 16, mem), CMD,
		 NVQ_SC_CQ_INVALID);
	CHECK_ST(raw_sq(h, 1 | 15u << 16, pc | 3u << 16, mem), CMD,
		 NVQ_SC_CQ_INVALID);
	CHECK_ST(raw_sq(h, 1 | 15u << 16, pc | 0xffffu << 16, mem), CMD,
		 NVQ_SC_CQ_INVALID);
	CHECK_ST(raw_sq(h, 1 | 0u << 16, pc | 1u << 16, mem), CMD,
		 NVQ_SC_QUEUE_SIZE);
	CHECK_ST(raw_sq(h, 1 | 64u << 16, pc | 1u << 16, mem), CMD,
		 NVQ_SC_QUEUE_SIZE);
	CHECK_ST(raw_sq(h, 1 | 15u << 16, 1u << 16, mem), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(raw_sq(h, 1 | 15u << 16, pc | 1u << 16, mem + 64), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(raw_sq(h, 1 | 15u << 16, pc | 1u << 16, 0x1000), GEN,
		 NVQ_SC_DATA_XFER_ERROR);
	CHECK_ST_OK(raw_sq(h, 1 | 15u << 16, pc | 1u << 16, mem));
	CHECK_ST(raw_sq(h, 1 | 15u << 16, pc | 1u << 16, mem), CMD,
		 NVQ_SC_QID_INVALID);
	h_alloc(h, 64 * 64, &mem);
	CHECK_ST_OK(raw_sq(h, 4 | 15u << 16, pc | 1u << 16, mem));

	/* Number of Queues cannot change once I/O queues exist. */
	CHECK_ST(h_set_nr_queues(h, 2, 2, NULL), GEN, NVQ_SC_CMD_SEQ_ERROR);

	/* Delete. */
	CHECK_ST(del_q(h, nvq_admin_delete_sq, 0), CMD, NVQ_SC_QID_INVALID);
	CHECK_ST(del_q(h, nvq_admin_delete_sq, 2), CMD, NVQ_SC_QID_INVALID);
	CHECK_ST(del_q(h, nvq_admin_delete_sq, 0xffff), CMD,
		 NVQ_SC_QID_INVALID);
	CHECK_ST(del_q(h, nvq_admin_delete_cq, 0), CMD, NVQ_SC_QID_INVALID);
	CHECK_ST(del_q(h, nvq_admin_delete_cq, 3), CMD, NVQ_SC_QID_INVALID);
	CHECK_ST(del_q(h, nvq_admin_delete_cq, 1), CMD,
		 NVQ_SC_INVALID_QUEUE_DELETION);
	CHECK_ST_OK(del_q(h, nvq_admin_delete_sq, 1));
	CHECK_ST(del_q(h, nvq_admin_delete_sq, 1), CMD, NVQ_SC_QID_INVALID);
	/* SQ 4 still uses CQ 1. */
	CHECK_ST(del_q(h, nvq_admin_delete_cq, 1), CMD,
		 NVQ_SC_INVALID_QUEUE_DELETION);
	CHECK_ST_OK(del_q(h, nvq_admin_delete_sq, 4));
	CHECK_ST_OK(del_q(h, nvq_admin_delete_cq, 1));
	CHECK_ST_OK(del_q(h, nvq_admin_delete_cq, 2));
	CHECK_ST(del_q(h, nvq_admin_delete_cq, 2), CMD, NVQ_SC_QID_INVALID);
}

static void logs(struct h *h)
{
	uint8_t *buf = h_alloc(h, 8192, NULL);
	struct nvq_error_log *e = (struct nvq_error_log *)buf;
	struct nvq_smart_log *sm = (struct nvq_smart_log *)buf;
	struct nvq_fw_slot_log *fw = (struct nvq_fw_slot_log *)buf;
	struct nvq_sqe s;
	uint64_t count;
	uint16_t cid;

	CHECK_ST(get_log(h, 0x7f, 0, buf, 512, 0, false), CMD,
		 NVQ_SC_INVALID_LOG_PAGE);
	CHECK_ST(get_log(h, 0x00, 0, buf, 512, 0, false), CMD,
		 NVQ_SC_INVALID_LOG_PAGE);
	CHECK_ST(get_log(h, NVQ_LOG_SMART, 0, buf, 512, 2, false), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(get_log(h, NVQ_LOG_SMART, 0, buf, 512, 512, false), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(get_log(h, NVQ_LOG_SMART, 0, buf, 512, 1ull << 40, false), GEN,
		 NVQ_SC_INVALID_FIELD);
	CHECK_ST(get_log(h, NVQ_LOG_SMART, 1, buf, 512, 0, false), GEN,
		 NVQ_SC_INVALID_FIELD);
	/* NUMD beyond MDTS (128 KiB by default). */
	s = h_sqe(nvq_admin_get_log_page);
	s.cdw10 = NVQ_LOG_SMART | 0xffffu << 16;
	s.cdw11 = 0x1;
	s.prp1 = h_iova(h, buf);
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);
	/* Offset Type = index (CDW14 bit 23): not supported by any log. */
	s = h_sqe(nvq_admin_get_log_page);
	s.cdw10 = NVQ_LOG_SMART | (512 / 4 - 1) << 16;
	s.cdw14 = 1u << 23;
	s.prp1 = h_iova(h, buf);
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);

	/* The error log has the newest error first, counts increasing. */
	CHECK_ST_OK(get_log(h, NVQ_LOG_ERROR, 0, buf, 4096, 0, false));
	count = e[0].error_count;
	CHECK(count > 0);
	CHECK(e[1].error_count == count - 1);
	s = h_sqe(0x7e);
	cid = h_push(h, &h->aq, &s);
	h_ring(h, &h->aq);
	{
		struct nvq_cqe c;

		CHECK_EQ(h_reap(h, &h->aq, &c, H_TIMEOUT_MS), 0);
		CHECK_ST(NVQ_STATUS(c.status), GEN, NVQ_SC_INVALID_OPCODE);
	}
	CHECK_ST_OK(get_log(h, NVQ_LOG_ERROR, 0, buf, 4096, 0, false));
	CHECK_EQ(e[0].error_count, count + 1);
	CHECK_EQ(e[0].cid, cid);
	CHECK_EQ(e[0].sqid, 0);
	CHECK_EQ(NVQ_SC(NVQ_STATUS(e[0].status)), NVQ_SC_INVALID_OPCODE);
	/* Partial read at an offset: the second entry. */
	CHECK_ST_OK(get_log(h, NVQ_LOG_ERROR, 0, buf, 64, 64, false));
	CHECK_EQ(e[0].error_count, count);

	CHECK_ST_OK(get_log(h, NVQ_LOG_SMART, 0xffffffff, buf, 512, 0, false));
	CHECK(sm->temperature[0] | sm->temperature[1]);
	CHECK_EQ(sm->avail_spare, 100);
	CHECK(nvq_u128_lo(sm->num_err_log_entries) >= count + 1);
	CHECK_EQ(nvq_u128_lo(sm->power_cycles), 1);

	CHECK_ST_OK(get_log(h, NVQ_LOG_FW_SLOT, 0, buf, 512, 0, false));
	CHECK_EQ(fw->afi & 7, 1);
	CHECK(fw->frs[0][0] != 0);
}

static void dbbuf_config(struct h *h)
{
	struct nvq_sqe s = h_sqe(nvq_admin_dbbuf);
	uint64_t a, b;

	h_alloc(h, 4096, &a);
	h_alloc(h, 4096, &b);
	s.prp1 = a + 8;
	s.prp2 = b;
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);
	s = h_sqe(nvq_admin_dbbuf);
	s.prp1 = a;
	s.prp2 = b + 4;
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);
	s = h_sqe(nvq_admin_dbbuf);
	s.prp1 = 0x7000000;
	s.prp2 = b;
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);
	s = h_sqe(nvq_admin_dbbuf);
	s.prp1 = a;
	s.prp2 = 0;
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_INVALID_FIELD);
	s = h_sqe(nvq_admin_dbbuf);
	s.prp1 = a;
	s.prp2 = b;
	CHECK_ST_OK(h_admin(h, &s, NULL));
}

/*
 * Each admin round trip takes at least one device pass, and every pass
 * looks at every SQ: after two, commands rung before have been fetched.
 */
static void fetched(struct h *h)
{
	struct nvq_sqe s;
	int i;

	for (i = 0; i < 2; i++) {
		s = h_sqe(nvq_admin_get_features);
		s.cdw10 = NVQ_FEAT_ARBITRATION;
		CHECK_ST_OK(h_admin(h, &s, NULL));
	}
}

/* Abort and SQ deletion act on commands still inside the device. */
static void abort_and_delete(void)
{
	struct h *h = h_open("lat=30s,qpairs=2");
	uint8_t *buf = h_alloc(h, 4096, NULL);
	struct nvq_cqe c;
	struct nvq_sqe s;
	struct hq *q;
	uint16_t rcid, acid, aer, i;
	int seen;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	/* Nothing with that CID: not aborted (DW0 bit 0 set). */
	s = h_sqe(nvq_admin_abort_cmd);
	s.cdw10 = 1 | 0x1234u << 16;
	CHECK_ST_OK(h_admin(h, &s, &c));
	CHECK_EQ(c.result & 1, 1);
	s = h_sqe(nvq_admin_abort_cmd);
	s.cdw10 = 9 | 0x1234u << 16; /* no such SQ */
	CHECK_ST_OK(h_admin(h, &s, &c));
	CHECK_EQ(c.result & 1, 1);

	/* A read waiting out its 30 s latency gets aborted. */
	s = h_sqe(nvq_cmd_read);
	s.nsid = 1;
	h_prp(h, &s, buf, 4096);
	rcid = h_push(h, q, &s);
	h_ring(h, q);
	fetched(h);
	s = h_sqe(nvq_admin_abort_cmd);
	s.cdw10 = 1 | (uint32_t)rcid << 16;
	acid = h_push(h, &h->aq, &s);
	h_ring(h, &h->aq);
	CHECK_EQ(h_reap(h, &h->aq, &c, H_TIMEOUT_MS), 0);
	CHECK_EQ(c.cid, acid);
	CHECK_ST_OK(NVQ_STATUS(c.status));
	CHECK_EQ(c.result & 1, 0);
	CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
	CHECK_EQ(c.cid, rcid);
	CHECK_ST(NVQ_STATUS(c.status), GEN, NVQ_SC_ABORT_REQ);

	/* An outstanding AER can be aborted too. */
	s = h_sqe(nvq_admin_async_event);
	aer = h_push(h, &h->aq, &s);
	h_ring(h, &h->aq);
	s = h_sqe(nvq_admin_abort_cmd);
	s.cdw10 = 0 | (uint32_t)aer << 16;
	acid = h_push(h, &h->aq, &s);
	h_ring(h, &h->aq);
	seen = 0;
	for (i = 0; i < 2; i++) {
		CHECK_EQ(h_reap(h, &h->aq, &c, H_TIMEOUT_MS), 0);
		if (c.cid == aer) {
			CHECK_ST(NVQ_STATUS(c.status), GEN, NVQ_SC_ABORT_REQ);
			seen |= 1;
		} else {
			CHECK_EQ(c.cid, acid);
			CHECK_EQ(c.result & 1, 0);
			seen |= 2;
		}
	}
	CHECK_EQ(seen, 3);

	/* Deleting an SQ completes its pending commands as aborted due to
	 * SQ deletion, before the Delete SQ itself completes. */
	for (i = 0; i < 3; i++) {
		s = h_sqe(nvq_cmd_read);
		s.nsid = 1;
		s.cdw10 = i;
		h_prp(h, &s, buf, 4096);
		h_push(h, q, &s);
	}
	h_ring(h, q);
	fetched(h);
	CHECK_ST_OK(del_q(h, nvq_admin_delete_sq, 1));
	for (i = 0; i < 3; i++) {
		CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
		CHECK_ST(NVQ_STATUS(c.status), GEN, NVQ_SC_ABORT_QUEUE);
	}
	CHECK_ST_OK(del_q(h, nvq_admin_delete_cq, 1));

	/* Delete SQ (posting aborts to its CQ) and Delete CQ in one batch:
	 * the CQ goes away in the same device pass that wrote to it. */
	q = h_ioq(h, 1, 16, true, 1);
	for (i = 0; i < 3; i++) {
		s = h_sqe(nvq_cmd_read);
		s.nsid = 1;
		h_prp(h, &s, buf, 4096);
		h_push(h, q, &s);
	}
	h_ring(h, q);
	fetched(h);
	s = h_sqe(nvq_admin_delete_sq);
	s.cdw10 = 1;
	h_push(h, &h->aq, &s);
	s = h_sqe(nvq_admin_delete_cq);
	s.cdw10 = 1;
	h_push(h, &h->aq, &s);
	h_ring(h, &h->aq);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(h_reap(h, &h->aq, &c, H_TIMEOUT_MS), 0);
		CHECK_ST_OK(NVQ_STATUS(c.status));
	}
	for (i = 0; i < 3; i++) {
		CHECK_EQ(h_reap_noring(q, &c, H_TIMEOUT_MS), 0);
		CHECK_ST(NVQ_STATUS(c.status), GEN, NVQ_SC_ABORT_QUEUE);
	}
	h_close(h);
}

int main(void)
{
	struct h *h;

	identify();

	h = h_open("qpairs=4,msix=3,mqes=63");
	h_enable(h);
	opcodes(h);
	features(h);
	queues(h);
	logs(h);
	dbbuf_config(h);
	h_close(h);

	abort_and_delete();
	return 0;
}
