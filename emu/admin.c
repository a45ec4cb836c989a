// SPDX-License-Identifier: MIT
/*
 * Admin command set: queue management, Identify, Abort, Asynchronous Event
 * Request and Doorbell Buffer Config (features and logs have their own
 * files). Every field the specification lets a controller check is
 * checked, with the status code the specification names.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu_internal.h"

#define ST_INVALID_FIELD EMU_ST_GEN(NVQ_SC_INVALID_FIELD)

static void pad(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);

	memset(dst, ' ', n);
	memcpy(dst, src, l < n ? l : n);
}

/* Granted queue count: Number of Queues if set since reset, else all. */
static uint32_t granted_sqs(const struct nvq_emu *c)
{
	return c->feat.nq_set ? c->feat.nsqa : c->p.qpairs;
}

static uint32_t granted_cqs(const struct nvq_emu *c)
{
	return c->feat.nq_set ? c->feat.ncqa : c->p.qpairs;
}

/* CC as the host last wrote it: IOSQES/IOCQES may be set after the enable. */
static uint32_t cur_cc(struct nvq_emu *c)
{
	return __atomic_load_n(&c->regs[NVQ_REG_CC / 4], __ATOMIC_ACQUIRE);
}

static uint16_t create_cq(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint16_t qid = sqe->cdw10 & 0xffff;
	uint32_t qsize = sqe->cdw10 >> 16;
	bool pc = sqe->cdw11 & NVQ_QUEUE_PHYS_CONTIG;
	bool ien = sqe->cdw11 & NVQ_CQ_IRQ_ENABLED;
	uint16_t iv = (uint16_t)(sqe->cdw11 >> NVQ_CQ_IV_SHIFT);
	int ret;

	req->err_loc = NVQ_ERR_LOC(cdw10);
	if (!qid || qid > granted_cqs(c) || c->cqs[qid])
		return EMU_ST_CMD(NVQ_SC_QID_INVALID);
	req->err_loc = NVQ_ERR_LOC(cdw10) + 2;
	if (!qsize || qsize > c->p.mqes)
		return EMU_ST_CMD(NVQ_SC_QUEUE_SIZE);
	/* NVMe 2.0 3.1.3.5: a queue made before CC.IOCQES is set. */
	if (NVQ_CC_IOCQES(cur_cc(c)) != NVQ_CQES_LOG2) {
		req->err_loc = NVQ_ERR_LOC_NONE;
		return EMU_ST_CMD(NVQ_SC_QUEUE_SIZE);
	}
	req->err_loc = NVQ_ERR_LOC(cdw11);
	if (!pc && c->p.cqr)
		return ST_INVALID_FIELD;
	if (sqe->cdw11 & 0xfffc)
		return ST_INVALID_FIELD; /* reserved bits */
	req->err_loc = NVQ_ERR_LOC(cdw11) + 2;
	if (iv >= c->nr_vec)
		return EMU_ST_CMD(NVQ_SC_INVALID_VECTOR);
	req->err_loc = NVQ_ERR_LOC(prp1);
	if (!sqe->prp1 || sqe->prp1 & (c->page_size - 1))
		return ST_INVALID_FIELD;
	ret = emu_cq_create(c, qid, sqe->prp1, qsize + 1, iv, ien, pc);
	if (ret == -EFAULT)
		return EMU_ST_GEN(NVQ_SC_DATA_XFER_ERROR);
	if (ret)
		return EMU_ST_GEN(NVQ_SC_INTERNAL);
	return 0;
}

static uint16_t create_sq(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint16_t qid = sqe->cdw10 & 0xffff;
	uint32_t qsize = sqe->cdw10 >> 16;
	bool pc = sqe->cdw11 & NVQ_QUEUE_PHYS_CONTIG;
	uint16_t prio = (sqe->cdw11 >> NVQ_SQ_PRIO_SHIFT) & 3;
	uint16_t cqid = (uint16_t)(sqe->cdw11 >> NVQ_SQ_CQID_SHIFT);
	int ret;

	req->err_loc = NVQ_ERR_LOC(cdw10);
	if (!qid || qid > granted_sqs(c) || c->sqs[qid])
		return EMU_ST_CMD(NVQ_SC_QID_INVALID);
	req->err_loc = NVQ_ERR_LOC(cdw11) + 2;
	if (!cqid || cqid > c->p.qpairs || !c->cqs[cqid])
		return EMU_ST_CMD(NVQ_SC_CQ_INVALID);
	req->err_loc = NVQ_ERR_LOC(cdw10) + 2;
	if (!qsize || qsize > c->p.mqes)
		return EMU_ST_CMD(NVQ_SC_QUEUE_SIZE);
	if (NVQ_CC_IOSQES(cur_cc(c)) != NVQ_SQES_LOG2) {
		req->err_loc = NVQ_ERR_LOC_NONE;
		return EMU_ST_CMD(NVQ_SC_QUEUE_SIZE);
	}
	req->err_loc = NVQ_ERR_LOC(cdw11);
	if (!pc && c->p.cqr)
		return ST_INVALID_FIELD;
	if (sqe->cdw11 & 0xfff8)
		return ST_INVALID_FIELD; /* reserved bits */
	req->err_loc = NVQ_ERR_LOC(prp1);
	if (!sqe->prp1 || sqe->prp1 & (c->page_size - 1))
		return ST_INVALID_FIELD;
	ret = emu_sq_create(c, qid, sqe->prp1, qsize + 1, c->cqs[cqid], prio,
			    pc);
	if (ret == -EFAULT)
		return EMU_ST_GEN(NVQ_SC_DATA_XFER_ERROR);
	if (ret)
		return EMU_ST_GEN(NVQ_SC_INTERNAL);
	return 0;
}

static uint16_t delete_sq(struct nvq_emu *c, struct emu_req *req)
{
	uint16_t qid = req->sqe->cdw10 & 0xffff;

	req->err_loc = NVQ_ERR_LOC(cdw10);
	if (!qid || qid > c->p.qpairs || !c->sqs[qid])
		return EMU_ST_CMD(NVQ_SC_QID_INVALID);
	emu_sq_delete(c, c->sqs[qid]);
	return 0;
}

static uint16_t delete_cq(struct nvq_emu *c, struct emu_req *req)
{
	uint16_t qid = req->sqe->cdw10 & 0xffff;

	req->err_loc = NVQ_ERR_LOC(cdw10);
	if (!qid || qid > c->p.qpairs || !c->cqs[qid])
		return EMU_ST_CMD(NVQ_SC_QID_INVALID);
	if (c->cqs[qid]->nr_sqs)
		return EMU_ST_CMD(NVQ_SC_INVALID_QUEUE_DELETION);
	emu_cq_delete(c, c->cqs[qid]);
	return 0;
}

static void fill_id_ctrl(struct nvq_emu *c, struct nvq_id_ctrl *id)
{
	uint64_t total = c->p.ns_size * c->p.nr_ns;

	memset(id, 0, sizeof(*id));
	id->vid = 0x1d1d;
	id->ssvid = 0x1d1d;
	pad(id->sn, sizeof(id->sn), c->sn);
	pad(id->mn, sizeof(id->mn), "nvq emulated controller");
	pad(id->fr, sizeof(id->fr), "1.0");
	id->rab = 6;
	id->mdts = (uint8_t)c->p.mdts;
	id->cntlid = 1;
	id->ver = NVQ_VS(2, 0, 0);
	id->rtd3e = 1000000; /* us: a shutdown flushes the file backing */
	id->cntrltype = 1; /* I/O controller */
	/* Extended LBA formats: Identify CNS 05h says each one's PI format */
	id->ctratt = NVQ_CTRL_CTRATT_ELBAS;
	id->oacs = (c->p.dbbuf ? NVQ_CTRL_OACS_DBBUF : 0) |
		   NVQ_CTRL_OACS_FORMAT;
	/* FNA bit 0: one format for all namespaces (a Format of any of
	 * them formats all); no cryptographic erase. */
	id->fna = 0x1;
	id->oaes = 1u << 8; /* Namespace Attribute Notices (Format NVM) */
	/* SANICAP: Block Erase and Overwrite, no Crypto Erase. */
	id->sanicap = 0x6;
	id->acl = EMU_ACL;
	id->aerl = EMU_AERL;
	id->frmw = 0x3; /* one slot, read-only */
	id->lpa = (uint8_t)c->p.lpa;
	id->elpe = (uint8_t)c->p.elpe;
	id->npss = 0;
	id->wctemp = EMU_WCTEMP_K;
	id->cctemp = EMU_CCTEMP_K;
	nvq_u128_add(id->tnvmcap, total);
	id->sqes = (NVQ_SQES_LOG2 << 4) | NVQ_SQES_LOG2;
	id->cqes = (NVQ_CQES_LOG2 << 4) | NVQ_CQES_LOG2;
	id->nn = EMU_NN;
	id->oncs = NVQ_CTRL_ONCS_DSM | NVQ_CTRL_ONCS_WRITE_ZEROES;
	/* VWC bits 2:1 = 11b: Flush with NSID FFFFFFFFh is supported. */
	id->vwc = (uint8_t)(0x6 | (c->p.vwc ? NVQ_CTRL_VWC_PRESENT : 0));
	id->sgls = 0;
	snprintf(id->subnqn, sizeof(id->subnqn), "nqn.2024-01.io.nvq:emu:%s",
		 c->sn);
	id->psd[0].max_power = 2500; /* centiwatts */
	id->psd[0].entry_lat = 10;
	id->psd[0].exit_lat = 10;
}

const uint8_t emu_lbaf_ds[2] = { 9, 12 };
const uint16_t emu_lbaf_ms[EMU_NR_MS] = { 0, 8, 16, 32, 64, 128 };

int emu_lbaf_index(uint32_t lbads, uint32_t ms)
{
	int i, d = lbads == 9 ? 0 : lbads == 12 ? 1 : -1;

	for (i = 0; d >= 0 && i < EMU_NR_MS; i++)
		if (emu_lbaf_ms[i] == ms)
			return d * EMU_NR_MS + i;
	return -1;
}

static void fill_id_ns(struct nvq_emu *c, uint32_t nsid, struct nvq_id_ns *id)
{
	int i;

	memset(id, 0, sizeof(*id));
	id->nsze = id->ncap = id->nuse = c->ns_blocks;
	id->nsfeat = 0;
	/* LBA formats: 512 and 4096 bytes, each with 0 8 16 32 64 128
	 * bytes of metadata (emu_lbaf_index()). */
	for (i = 0; i < EMU_NR_LBAF; i++) {
		id->lbaf[i].ds = emu_lbaf_ds[i / EMU_NR_MS];
		id->lbaf[i].ms = emu_lbaf_ms[i % EMU_NR_MS];
	}
	id->nlbaf = EMU_NR_LBAF - 1;
	id->flbas = (uint8_t)(emu_lbaf_index(c->p.lbads, c->p.ms) |
			      (c->p.mset ? NVQ_NS_FLBAS_META_EXT : 0));
	/* MC: extended and separate metadata. DPC: types 1-3, first or
	 * last 8 bytes. DPS: the type, bit 3 first 8 bytes. */
	id->mc = 0x3;
	id->dpc = 0x1f;
	id->dps = (uint8_t)(c->p.pi | (c->p.pil ? 0x8 : 0));
	id->dlfeat = NVQ_NS_DLFEAT_READ_ZEROES | NVQ_NS_DLFEAT_WZ_DEAC;
	nvq_u128_add(id->nvmcap, c->p.ns_size);
	memcpy(id->nguid, c->sn, 12);
	memcpy(id->nguid + 12, &nsid, 4);
	id->eui64[0] = 0x02; /* locally administered */
	memcpy(id->eui64 + 4, &nsid, 4);
}

/* Namespace descriptor list: NGUID and the command set (NVM). */
static void fill_ns_descs(struct nvq_emu *c, uint32_t nsid, uint8_t *buf)
{
	struct nvq_id_ns tmp;

	memset(buf, 0, NVQ_IDENTIFY_DATA_SIZE);
	fill_id_ns(c, nsid, &tmp);
	buf[0] = 2; /* NIDT: NGUID */
	buf[1] = 16;
	memcpy(buf + 4, tmp.nguid, 16);
	buf[20] = 4; /* NIDT: CSI */
	buf[21] = 1;
	buf[24] = 0; /* NVM command set */
}

static uint16_t identify(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint8_t *buf = c->bounce;
	uint32_t nsid = sqe->nsid, n = 0, id;

	memset(buf, 0, NVQ_IDENTIFY_DATA_SIZE);
	switch (sqe->cdw10 & 0xff) {
	case NVQ_ID_CNS_NS:
		req->err_loc = NVQ_ERR_LOC(nsid);
		if (!nsid || nsid > EMU_NN)
			return EMU_ST_GEN(NVQ_SC_INVALID_NS);
		/* Valid but inactive: all zeroes. */
		if (nsid <= c->p.nr_ns)
			fill_id_ns(c, nsid, (struct nvq_id_ns *)buf);
		break;
	case NVQ_ID_CNS_CTRL:
		fill_id_ctrl(c, (struct nvq_id_ctrl *)buf);
		break;
	case NVQ_ID_CNS_NS_ACTIVE_LIST:
		req->err_loc = NVQ_ERR_LOC(nsid);
		if (nsid >= 0xfffffffe)
			return EMU_ST_GEN(NVQ_SC_INVALID_NS);
		for (id = nsid + 1; id <= c->p.nr_ns && n < 1024; id++)
			((uint32_t *)buf)[n++] = id;
		break;
	case NVQ_ID_CNS_NS_DESC_LIST:
		req->err_loc = NVQ_ERR_LOC(nsid);
		if (!nsid || nsid > EMU_NN)
			return EMU_ST_GEN(NVQ_SC_INVALID_NS);
		if (nsid > c->p.nr_ns)
			return ST_INVALID_FIELD;
		fill_ns_descs(c, nsid, buf);
		break;
	case NVQ_ID_CNS_CSI_NS:
		/* The NVM command set's: ELBAF per format (CTRATT.ELBAS). */
		req->err_loc = NVQ_ERR_LOC(nsid);
		if (!nsid || nsid > EMU_NN)
			return EMU_ST_GEN(NVQ_SC_INVALID_NS);
		if (sqe->cdw11 >> NVQ_IDENTIFY_CSI_SHIFT != NVQ_CSI_NVM) {
			req->err_loc = NVQ_ERR_LOC(cdw11) + 3;
			return ST_INVALID_FIELD;
		}
		/* Valid but inactive: all zeroes, as CNS 00h. */
		if (nsid <= c->p.nr_ns) {
			struct nvq_id_ns_nvm *nvm = (void *)buf;

			for (n = 0; n < EMU_NR_LBAF; n++)
				nvm->elbaf[n] = c->p.elbaf;
		}
		break;
	case NVQ_ID_CNS_CSI_CTRL:
		/*
		 * The NVM command set's limits: none beyond the 16-bit NLB for
		 * Write Zeroes (WZSL 0), 256 ranges of any size for
		 * Dataset Management (DMRL, DMRSL, DMSL 0).
		 */
		req->err_loc = NVQ_ERR_LOC(cdw11) + 3;
		if (sqe->cdw11 >> NVQ_IDENTIFY_CSI_SHIFT != NVQ_CSI_NVM)
			return ST_INVALID_FIELD;
		break;
	default:
		req->err_loc = NVQ_ERR_LOC(cdw10);
		return ST_INVALID_FIELD;
	}
	return emu_dma_to_host(c, sqe, buf, NVQ_IDENTIFY_DATA_SIZE);
}

static uint16_t abort_cmd(struct nvq_emu *c, struct emu_req *req)
{
	uint16_t sqid = req->sqe->cdw10 & 0xffff;
	uint16_t cid = (uint16_t)(req->sqe->cdw10 >> 16);
	struct emu_sq *sq;
	uint32_t i;

	req->dw0 = NVQ_ABORT_NOT_ABORTED;
	if (sqid > c->p.qpairs || !(sq = c->sqs[sqid]))
		return 0;
	if (!sqid) {
		for (i = 0; i < c->nr_aer; i++) {
			if (c->aer_cids[i] != cid)
				continue;
			memmove(&c->aer_cids[i], &c->aer_cids[i + 1],
				(c->nr_aer - i - 1) * sizeof(c->aer_cids[0]));
			c->nr_aer--;
			emu_complete(c, sq, cid,
				     NVQ_STATUS_MAKE(NVQ_SCT_GENERIC,
						     NVQ_SC_ABORT_REQ),
				     0, NULL);
			req->dw0 = 0;
			return 0;
		}
		return 0;
	}
	/* Only commands still waiting in the device can be aborted. */
	for (i = 0; i < sq->size; i++) {
		struct emu_cmd *cmd = &sq->cmds[i];

		if (cmd->heap_idx == UINT32_MAX || cmd->sqe.cid != cid)
			continue;
		emu_heap_remove(c, cmd);
		cmd->heap_idx = UINT32_MAX;
		sq->free_slots[sq->nr_free++] = cmd->slot;
		emu_complete(c, sq, cid,
			     NVQ_STATUS_MAKE(NVQ_SCT_GENERIC, NVQ_SC_ABORT_REQ),
			     0, NULL);
		req->dw0 = 0;
		return 0;
	}
	return 0;
}

static uint16_t async_event(struct nvq_emu *c, struct emu_req *req)
{
	if (c->nr_aer > EMU_AERL)
		return EMU_ST_CMD(NVQ_SC_AER_LIMIT);
	c->aer_cids[c->nr_aer++] = req->sqe->cid;
	req->held = true;
	emu_aer_deliver(c);
	return 0;
}

static uint16_t dbbuf_config(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint64_t mask = c->page_size - 1;
	uint32_t *dbs, *eis;

	req->err_loc = NVQ_ERR_LOC(prp1);
	if (!sqe->prp1 || sqe->prp1 & mask)
		return ST_INVALID_FIELD;
	req->err_loc = NVQ_ERR_LOC(prp2);
	if (!sqe->prp2 || sqe->prp2 & mask)
		return ST_INVALID_FIELD;
	dbs = emu_iommu_range(&c->iommu, sqe->prp1, c->page_size);
	eis = emu_iommu_range(&c->iommu, sqe->prp2, c->page_size);
	req->err_loc = dbs ? 32 : 24;
	if (!dbs || !eis)
		return ST_INVALID_FIELD;
	c->dbbuf_iova = sqe->prp1;
	c->ei_iova = sqe->prp2;
	c->dbbuf = dbs;
	c->ei = eis;
	c->dbbuf_on = true;
	emu_queues_bind_dbbuf(c);
	return 0;
}

/*
 * Format NVM (NVMe Base 2.0, 5.14; NVM Command Set 1.0, 4.1.4): every
 * namespace (FNA bit 0) to LBA format LBAFU:LBAF with MSET, PI, PIL; all
 * data and metadata erased whatever SES (1: user data erase is what
 * always happens; 2: no cryptographic erase here).
 */
static uint16_t format_nvm(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint32_t dw10 = sqe->cdw10, nsid = sqe->nsid;
	uint32_t idx = (dw10 & 0xf) | ((dw10 >> 12) & 0x3) << 4;
	uint32_t pi = (dw10 >> 5) & 0x7, ses = (dw10 >> 9) & 0x7;
	struct nvq_emu_params np = c->p;
	uint16_t ms;
	int ret;

	req->err_loc = NVQ_ERR_LOC(nsid);
	if (nsid != NVQ_NSID_ALL && nsid - 1 >= c->p.nr_ns)
		return nsid && nsid <= EMU_NN ? ST_INVALID_FIELD :
						EMU_ST_GEN(NVQ_SC_INVALID_NS);
	req->err_loc = NVQ_ERR_LOC(cdw10);
	if (ses > 1)
		return ST_INVALID_FIELD; /* 2: FNA bit 2 is clear */
	if (idx >= EMU_NR_LBAF)
		return EMU_ST_CMD(NVQ_SC_INVALID_FORMAT);
	ms = emu_lbaf_ms[idx % EMU_NR_MS];
	/* PI needs 8 bytes of metadata; types 1-3 only. */
	if (pi > 3 || (pi && ms < 8))
		return EMU_ST_CMD(NVQ_SC_INVALID_FORMAT);
	np.lbads = emu_lbaf_ds[idx / EMU_NR_MS];
	np.ms = ms;
	np.mset = ms && (dw10 & (1u << 4));
	np.pi = pi;
	np.pil = pi && (dw10 & (1u << 8));
	/* Every block erased: data zero (deallocated), metadata FFh. */
	if (emu_media_zero(&c->media, 0, c->media.len, true))
		return EMU_ST_GEN(NVQ_SC_INTERNAL);
	ret = emu_md_format(&c->media, &np);
	if (ret)
		return EMU_ST_GEN(NVQ_SC_INTERNAL);
	c->p = np;
	c->lba_size = 1u << np.lbads;
	c->ns_blocks = np.ns_size >> np.lbads;
	c->max_xfer = (uint64_t)65536 << np.lbads;
	if (np.mdts && (4096ull << np.mdts) < c->max_xfer)
		c->max_xfer = 4096ull << np.mdts;
	/* Every namespace changed: the list (log 04h), and the notice. */
	c->ns_changed = true;
	if (c->feat.async_cfg & (1u << 8))
		emu_aer_raise(c, NVQ_AER_NOTICE, 0x00, NVQ_LOG_CHANGED_NS);
	return 0;
}

void emu_admin_reset(struct nvq_emu *c)
{
	c->nr_aer = 0;
	c->nr_aerq = 0;
	c->aer_mask = 0;
}

uint16_t emu_admin_exec(struct nvq_emu *c, struct emu_req *req)
{
	switch (req->sqe->opcode) {
	case nvq_admin_delete_sq:
		return delete_sq(c, req);
	case nvq_admin_create_sq:
		return create_sq(c, req);
	case nvq_admin_get_log_page:
		return emu_get_log_page(c, req);
	case nvq_admin_delete_cq:
		return delete_cq(c, req);
	case nvq_admin_create_cq:
		return create_cq(c, req);
	case nvq_admin_identify:
		return identify(c, req);
	case nvq_admin_abort_cmd:
		return abort_cmd(c, req);
	case nvq_admin_set_features:
		return emu_set_features(c, req);
	case nvq_admin_get_features:
		return emu_get_features(c, req);
	case nvq_admin_async_event:
		return async_event(c, req);
	case EMU_ADMIN_SANITIZE:
		return emu_sanitize(c, req);
	case nvq_admin_format_nvm:
		return format_nvm(c, req);
	case nvq_admin_dbbuf:
		if (c->p.dbbuf)
			return dbbuf_config(c, req);
		break;
	default:
		break;
	}
	req->err_loc = NVQ_ERR_LOC(opcode);
	return EMU_ST_GEN(NVQ_SC_INVALID_OPCODE);
}
