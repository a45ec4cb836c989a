// SPDX-License-Identifier: MIT
/*
 * Set Features / Get Features. Nothing is saveable (SV -> Feature
 * Identifier Not Saveable; SEL=saved reports the default); every feature
 * here is changeable and controller-wide.
 */
#include <string.h>

#include "emu_internal.h"

#define ST_INVALID_FIELD EMU_ST_GEN(NVQ_SC_INVALID_FIELD)
#define AEC_SUPPORTED 0x1fu /* SMART critical warning bits 4:0 */
#define AEC_NS_ATTR (1u << 8) /* Namespace Attribute Notices */
#define CAP_CHANGEABLE 0x4u /* Get Features SEL=3: bit 2 */

void emu_features_default(struct nvq_emu *c)
{
	struct emu_features *f = &c->feat;

	f->arbitration = 0;
	f->power_mgmt = 0;
	f->temp_over = EMU_WCTEMP_K;
	f->temp_under = 0;
	f->err_recovery = 0;
	f->wce = c->p.vwc;
	f->nq_set = false;
	f->nsqa = f->ncqa = (uint16_t)c->p.qpairs;
	f->irq_coalesce = 0;
	f->write_atomic = 0;
	/* SMART warnings are reported unless the host turns them off. */
	f->async_cfg = AEC_SUPPORTED;
	if (f->irq_cd)
		memset(f->irq_cd, 0, c->nr_vec);
	c->coalesce_on = false;
}

static bool known_fid(uint8_t fid)
{
	switch (fid) {
	case NVQ_FEAT_ARBITRATION:
	case NVQ_FEAT_POWER_MGMT:
	case NVQ_FEAT_TEMP_THRESH:
	case NVQ_FEAT_ERR_RECOVERY:
	case NVQ_FEAT_VOLATILE_WC:
	case NVQ_FEAT_NUM_QUEUES:
	case NVQ_FEAT_IRQ_COALESCE:
	case NVQ_FEAT_IRQ_CONFIG:
	case NVQ_FEAT_WRITE_ATOMIC:
	case NVQ_FEAT_ASYNC_EVENT:
		return true;
	default:
		return false;
	}
}

/* Temperature Threshold CDW11: TMPSEL 19:16 (only composite), THSEL 21:20. */
static uint16_t temp_sel(uint32_t cdw11, bool *under)
{
	uint32_t tmpsel = (cdw11 >> 16) & 0xf, thsel = (cdw11 >> 20) & 0x3;

	if (tmpsel != 0 || thsel > 1)
		return ST_INVALID_FIELD;
	*under = thsel == 1;
	return 0;
}

uint16_t emu_set_features(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	struct emu_features *f = &c->feat;
	uint8_t fid = sqe->cdw10 & 0xff;
	uint32_t v = sqe->cdw11;
	uint16_t st;
	bool under;

	req->err_loc = NVQ_ERR_LOC(cdw10);
	if (!known_fid(fid))
		return ST_INVALID_FIELD;
	if (sqe->cdw10 & NVQ_FEAT_SV)
		return EMU_ST_CMD(NVQ_SC_FEATURE_NOT_SAVEABLE);
	req->err_loc = NVQ_ERR_LOC(nsid);
	if (sqe->nsid && sqe->nsid != NVQ_NSID_ALL)
		return EMU_ST_CMD(NVQ_SC_FEATURE_NOT_PER_NS);
	req->err_loc = NVQ_ERR_LOC(cdw11);
	switch (fid) {
	case NVQ_FEAT_ARBITRATION:
		f->arbitration = v;
		break;
	case NVQ_FEAT_POWER_MGMT:
		if ((v & 0x1f) > 0 || v & ~0xffu)
			return ST_INVALID_FIELD; /* NPSS = 0 */
		f->power_mgmt = v;
		break;
	case NVQ_FEAT_TEMP_THRESH:
		st = temp_sel(v, &under);
		if (st)
			return st;
		if (under)
			f->temp_under = v & 0xffff;
		else
			f->temp_over = v & 0xffff;
		emu_check_temperature(c);
		break;
	case NVQ_FEAT_ERR_RECOVERY:
		if (v & ~0xffffu)
			return ST_INVALID_FIELD; /* DULBE not supported */
		f->err_recovery = v;
		break;
	case NVQ_FEAT_VOLATILE_WC:
		if (!c->p.vwc || v & ~1u)
			return ST_INVALID_FIELD;
		/* Turning the cache off writes it back first. */
		if (f->wce && !(v & 1))
			emu_media_sync(&c->media, 0, c->media.len);
		f->wce = v & 1;
		break;
	case NVQ_FEAT_NUM_QUEUES:
		if ((v & 0xffff) == 0xffff || (v >> 16) == 0xffff)
			return ST_INVALID_FIELD;
		if (c->nr_io_sqs || c->nr_io_cqs)
			return EMU_ST_GEN(NVQ_SC_CMD_SEQ_ERROR);
		/* The allocation holds until the next reset. */
		if (!f->nq_set) {
			uint32_t nsq = (v & 0xffff) + 1, ncq = (v >> 16) + 1;

			f->nsqa = (uint16_t)(nsq < c->p.qpairs ? nsq :
								 c->p.qpairs);
			f->ncqa = (uint16_t)(ncq < c->p.qpairs ? ncq :
								 c->p.qpairs);
			f->nq_set = true;
		}
		req->dw0 = NVQ_NUM_QUEUES(f->nsqa, f->ncqa);
		break;
	case NVQ_FEAT_IRQ_COALESCE:
		if (v & ~0xffffu)
			return ST_INVALID_FIELD;
		f->irq_coalesce = v;
		c->coalesce_on = v != 0;
		break;
	case NVQ_FEAT_IRQ_CONFIG:
		if ((v & 0xffff) >= c->nr_vec || v & ~0x1ffffu)
			return ST_INVALID_FIELD;
		f->irq_cd[v & 0xffff] = (v >> 16) & 1;
		break;
	case NVQ_FEAT_WRITE_ATOMIC:
		if (v & ~1u)
			return ST_INVALID_FIELD;
		f->write_atomic = v;
		break;
	case NVQ_FEAT_ASYNC_EVENT:
		if (v & ~(AEC_SUPPORTED | AEC_NS_ATTR))
			return ST_INVALID_FIELD;
		f->async_cfg = v;
		break;
	}
	return 0;
}

static uint16_t feature_value(struct nvq_emu *c, const struct emu_features *f,
			      uint8_t fid, uint32_t cdw11, uint32_t *dw0)
{
	uint16_t st;
	bool under;

	switch (fid) {
	case NVQ_FEAT_ARBITRATION:
		*dw0 = f->arbitration;
		break;
	case NVQ_FEAT_POWER_MGMT:
		*dw0 = f->power_mgmt;
		break;
	case NVQ_FEAT_TEMP_THRESH:
		st = temp_sel(cdw11, &under);
		if (st)
			return st;
		/* DW0 has CDW11's layout: the threshold TMPSEL and THSEL
		 * selected, and its value (Base 2.0, 5.27.1.4) */
		*dw0 = (cdw11 & 0x3f0000u) |
		       (under ? f->temp_under : f->temp_over);
		break;
	case NVQ_FEAT_ERR_RECOVERY:
		*dw0 = f->err_recovery;
		break;
	case NVQ_FEAT_VOLATILE_WC:
		if (!c->p.vwc)
			return ST_INVALID_FIELD;
		*dw0 = f->wce;
		break;
	case NVQ_FEAT_NUM_QUEUES:
		*dw0 = NVQ_NUM_QUEUES(f->nsqa, f->ncqa);
		break;
	case NVQ_FEAT_IRQ_COALESCE:
		*dw0 = f->irq_coalesce;
		break;
	case NVQ_FEAT_IRQ_CONFIG:
		if ((cdw11 & 0xffff) >= c->nr_vec)
			return ST_INVALID_FIELD;
		*dw0 = (cdw11 & 0xffff) |
		       (f->irq_cd ? (uint32_t)f->irq_cd[cdw11 & 0xffff] << 16 :
				    0);
		break;
	case NVQ_FEAT_WRITE_ATOMIC:
		*dw0 = f->write_atomic;
		break;
	case NVQ_FEAT_ASYNC_EVENT:
		*dw0 = f->async_cfg;
		break;
	default:
		return ST_INVALID_FIELD;
	}
	return 0;
}

uint16_t emu_get_features(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint8_t fid = sqe->cdw10 & 0xff;
	uint32_t sel = (sqe->cdw10 >> NVQ_FEAT_SEL_SHIFT) & 0x7;
	struct emu_features def;

	req->err_loc = NVQ_ERR_LOC(cdw10);
	if (!known_fid(fid) || sel > NVQ_FEAT_SEL_SUPPORTED)
		return ST_INVALID_FIELD;
	req->err_loc = NVQ_ERR_LOC(cdw11);
	switch (sel) {
	case NVQ_FEAT_SEL_CURRENT:
		return feature_value(c, &c->feat, fid, sqe->cdw11, &req->dw0);
	case NVQ_FEAT_SEL_DEFAULT:
	case NVQ_FEAT_SEL_SAVED: /* not saveable: saved = default */
		def = c->feat;
		def.irq_cd = NULL;
		def.arbitration = 0;
		def.power_mgmt = 0;
		def.temp_over = EMU_WCTEMP_K;
		def.temp_under = 0;
		def.err_recovery = 0;
		def.wce = c->p.vwc;
		def.nsqa = def.ncqa = (uint16_t)c->p.qpairs;
		def.irq_coalesce = 0;
		def.write_atomic = 0;
		def.async_cfg = AEC_SUPPORTED;
		return feature_value(c, &def, fid, sqe->cdw11, &req->dw0);
	default:
		if (fid == NVQ_FEAT_VOLATILE_WC && !c->p.vwc)
			return ST_INVALID_FIELD;
		req->dw0 = CAP_CHANGEABLE;
		return 0;
	}
}
