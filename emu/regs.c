// SPDX-License-Identifier: MIT
/*
 * The register file (BAR0 below the doorbells) and the controller state
 * machine driven by CC. Host threads read and write the registers
 * atomically; a CC write turns into events (EN rise/fall, SHN) that the
 * device thread handles in order, so a quick EN 1->0->1 is never lost.
 */
#include <string.h>

#include "emu_internal.h"

#define REG(off) (off / 4)

static uint32_t rd(struct nvq_emu *c, uint32_t off)
{
	return __atomic_load_n(&c->regs[REG(off)], __ATOMIC_ACQUIRE);
}

static void wr(struct nvq_emu *c, uint32_t off, uint32_t v)
{
	__atomic_store_n(&c->regs[REG(off)], v, __ATOMIC_RELEASE);
}

void emu_regs_init(struct nvq_emu *c)
{
	uint64_t cap = 0;

	cap |= c->p.mqes & 0xffff;
	cap |= (uint64_t)(c->p.cqr ? 1 : 0) << 16;
	cap |= (uint64_t)(c->p.to & 0xff) << 24;
	cap |= (uint64_t)(c->p.dstrd & 0xf) << 32;
	cap |= (uint64_t)NVQ_CAP_CSS_NVM << 37;
	cap |= (uint64_t)0 << 48; /* MPSMIN: 4 KiB */
	cap |= (uint64_t)EMU_MPSMAX << 52;
	wr(c, NVQ_REG_CAP, (uint32_t)cap);
	wr(c, NVQ_REG_CAP + 4, (uint32_t)(cap >> 32));
	wr(c, NVQ_REG_VS, NVQ_VS(2, 0, 0));
}

uint32_t nvq_emu_reg_read32(struct nvq_emu *c, uint32_t off)
{
	/* Surprise removal (vanish fault): the read completes as all ones. */
	if (emu_unlikely(__atomic_load_n(&c->gone, __ATOMIC_ACQUIRE)))
		return UINT32_MAX;
	if (off & 3 || off >= sizeof(c->regs))
		return 0;
	return rd(c, off);
}

uint64_t nvq_emu_reg_read64(struct nvq_emu *c, uint32_t off)
{
	if (emu_unlikely(__atomic_load_n(&c->gone, __ATOMIC_ACQUIRE)))
		return UINT64_MAX;
	if (off & 3 || off + 8 > sizeof(c->regs))
		return 0;
	return rd(c, off) | (uint64_t)rd(c, off + 4) << 32;
}

/* CC bits a host can write; 3:1, CRIME (CAP.CRMS = 0) and 31:25 are RO 0. */
#define CC_RW                                                              \
	(NVQ_CC_EN | NVQ_CC_CSS_MASK | NVQ_CC_MPS_MASK | NVQ_CC_AMS_MASK | \
	 NVQ_CC_SHN_MASK | NVQ_CC_IOSQES_MASK | NVQ_CC_IOCQES_MASK)
/*
 * Fields that may change only while CC.EN = 0 (NVMe 2.0 3.1.3.5): a write
 * that keeps EN set leaves them as they were, so that what the host reads
 * back is what the controller runs with.
 */
#define CC_FROZEN (NVQ_CC_CSS_MASK | NVQ_CC_MPS_MASK | NVQ_CC_AMS_MASK)

/* Store a CC write; returns the previous value. */
static uint32_t cc_write(struct nvq_emu *c, uint32_t val)
{
	uint32_t *r = &c->regs[REG(NVQ_REG_CC)];
	uint32_t old = __atomic_load_n(r, __ATOMIC_ACQUIRE), nv;

	do {
		nv = val & CC_RW;
		if (old & nv & NVQ_CC_EN)
			nv = (nv & ~CC_FROZEN) | (old & CC_FROZEN);
	} while (!__atomic_compare_exchange_n(
		r, &old, nv, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return old;
}

void nvq_emu_reg_write32(struct nvq_emu *c, uint32_t off, uint32_t val)
{
	uint32_t old, ev = 0;

	switch (off) {
	case NVQ_REG_CC:
		old = cc_write(c, val);
		if (!(old & NVQ_CC_EN) && (val & NVQ_CC_EN))
			ev |= CC_EV_EN_RISE;
		if ((old & NVQ_CC_EN) && !(val & NVQ_CC_EN))
			ev |= CC_EV_EN_FALL;
		if (!(old & NVQ_CC_SHN_MASK) && (val & NVQ_CC_SHN_MASK))
			ev |= CC_EV_SHN;
		if (ev) {
			__atomic_fetch_or(&c->cc_events, ev, __ATOMIC_SEQ_CST);
			emu_kick(c);
		}
		break;
	case NVQ_REG_AQA:
		/* Admin queue properties change only while CC.EN = 0. */
		if (!(rd(c, NVQ_REG_CC) & NVQ_CC_EN))
			wr(c, off, val & 0x0fff0fff);
		break;
	case NVQ_REG_ASQ:
	case NVQ_REG_ACQ:
		/* Kept as written: a misaligned base fails the enable. */
	case NVQ_REG_ASQ + 4:
	case NVQ_REG_ACQ + 4:
		if (!(rd(c, NVQ_REG_CC) & NVQ_CC_EN))
			wr(c, off, val);
		break;
	default:
		/*
		 * CAP, VS, CSTS, CMBLOC, CMBSZ are read-only; INTMS/INTMC do
		 * not apply under MSI-X; NSSR is not offered (CAP.NSSRS = 0).
		 */
		break;
	}
}

void nvq_emu_reg_write64(struct nvq_emu *c, uint32_t off, uint64_t val)
{
	if (off != NVQ_REG_ASQ && off != NVQ_REG_ACQ)
		return;
	nvq_emu_reg_write32(c, off, (uint32_t)val);
	nvq_emu_reg_write32(c, off + 4, (uint32_t)(val >> 32));
}

/* CC.EN 0 -> 1: validate everything the host configured. */
static void enable(struct nvq_emu *c, uint32_t cc)
{
	uint32_t aqa = rd(c, NVQ_REG_AQA);
	uint64_t asq = rd(c, NVQ_REG_ASQ) | (uint64_t)rd(c, NVQ_REG_ASQ + 4)
						    << 32;
	uint64_t acq = rd(c, NVQ_REG_ACQ) | (uint64_t)rd(c, NVQ_REG_ACQ + 4)
						    << 32;
	uint32_t mps = NVQ_CC_MPS(cc);
	uint32_t asqs = NVQ_AQA_ASQS(aqa) + 1, acqs = NVQ_AQA_ACQS(aqa) + 1;
	uint64_t psz;

	c->enabled = true;
	c->cc = cc;
	/*
	 * IOSQES/IOCQES: the specification lets a host leave them 0 at the
	 * enable and set them before creating I/O queues (Create I/O SQ/CQ
	 * then checks them). A value that is set but not 6/4 - the only sizes
	 * this controller supports (SQES/CQES 66h/44h) - is a configuration
	 * error at the enable: CSTS.CFS, never a silent acceptance.
	 */
	if ((NVQ_CC_IOSQES(cc) && NVQ_CC_IOSQES(cc) != NVQ_SQES_LOG2) ||
	    (NVQ_CC_IOCQES(cc) && NVQ_CC_IOCQES(cc) != NVQ_CQES_LOG2))
		goto fatal;
	if ((cc & NVQ_CC_CSS_MASK) != NVQ_CC_CSS_NVM ||
	    (cc & NVQ_CC_AMS_MASK) != NVQ_CC_AMS_RR || mps > EMU_MPSMAX ||
	    asqs < NVQ_AQ_MIN_ENTRIES || acqs < NVQ_AQ_MIN_ENTRIES)
		goto fatal;
	psz = 4096ull << mps;
	if (!asq || !acq || asq & (psz - 1) || acq & (psz - 1))
		goto fatal;
	c->page_size = (uint32_t)psz;
	emu_features_default(c);
	if (emu_cq_create(c, 0, acq, acqs, 0, true, true))
		goto fatal;
	if (emu_sq_create(c, 0, asq, asqs, c->cqs[0], 0, true)) {
		emu_cq_delete(c, c->cqs[0]);
		goto fatal;
	}
	emu_smart_enabled(c);
	c->rdy_at = emu_now() + c->p.rdy_delay_ns;
	/* no-ready fault: UINT64_MAX is "never" to emu_poll_ready(). */
	if (emu_unlikely(__atomic_load_n(&c->fault_armed, __ATOMIC_RELAXED)) &&
	    emu_fault_no_ready(c))
		c->rdy_at = UINT64_MAX;
	emu_poll_ready(c);
	return;
fatal:
	emu_fatal(c, "invalid configuration at enable");
}

void emu_poll_ready(struct nvq_emu *c)
{
	if (!c->enabled || c->ready || c->fatal ||
	    emu_unlikely(c->rdy_at == UINT64_MAX))
		return;
	if (c->p.rdy_delay_ns && emu_now() < c->rdy_at)
		return;
	c->ready = true;
	emu_set_csts(c, NVQ_CSTS_RDY, 0);
}

/* CC.EN 1 -> 0: back to the power-on state, media contents aside. */
void emu_reset(struct nvq_emu *c)
{
	uint32_t i;

	emu_queues_delete_all(c);
	emu_admin_reset(c);
	emu_features_default(c);
	c->dbbuf_on = false;
	c->dbbuf = c->ei = NULL;
	for (i = 0; i < c->nr_dbs; i++)
		__atomic_store_n(&c->dbs[i], 0, __ATOMIC_RELAXED);
	c->enabled = c->ready = c->fatal = c->shut = false;
	c->shn_pending = false;
	c->page_size = 4096;
	emu_set_csts(c, 0, ~0u);
}

void emu_cc_events(struct nvq_emu *c, uint32_t ev)
{
	uint32_t cc = rd(c, NVQ_REG_CC);

	/* A vanished device hears nothing the host writes: no reset. */
	if (emu_unlikely(__atomic_load_n(&c->gone, __ATOMIC_RELAXED)))
		return;
	if (ev & CC_EV_EN_FALL)
		emu_reset(c);
	if ((ev & CC_EV_EN_RISE) && (cc & NVQ_CC_EN) && !c->enabled)
		enable(c, cc);
	if ((ev & CC_EV_SHN) && (cc & NVQ_CC_SHN_MASK) && !c->shut &&
	    !c->shn_pending) {
		c->shn_pending = true;
		emu_set_csts(c, NVQ_CSTS_SHST_OCCUR, NVQ_CSTS_SHST_MASK);
	}
}
