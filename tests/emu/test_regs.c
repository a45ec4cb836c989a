// SPDX-License-Identifier: MIT
/* Register file and CC state machine: CAP/VS contents, RDY, CFS for every
 * invalid enable, SHN -> SHST, EN 1->0 deleting queues, rdy_delay. */
#include <string.h>

#include "harness.h"

static void cap_fields(void)
{
	struct h *h = h_open("mqes=255,cqr=0,to=20,dstrd=2");
	struct nvq_transport *t = h->t;
	uint64_t cap = h->cap;

	CHECK_EQ(NVQ_CAP_MQES(cap), 255);
	CHECK_EQ(NVQ_CAP_CQR(cap), 0);
	CHECK_EQ(NVQ_CAP_TO(cap), 20);
	CHECK_EQ(NVQ_CAP_DSTRD(cap), 2);
	CHECK_EQ(NVQ_CAP_CSS(cap), NVQ_CAP_CSS_NVM);
	CHECK_EQ(NVQ_CAP_MPSMIN(cap), 0);
	CHECK(NVQ_CAP_MPSMAX(cap) >= 1);
	CHECK_EQ(NVQ_CAP_CMBS(cap), 0);
	CHECK_EQ(NVQ_CAP_NSSRS(cap), 0);
	CHECK_EQ(h->ops->reg_read32(t, NVQ_REG_VS), NVQ_VS(2, 0, 0));
	CHECK_EQ(h->ops->reg_read32(t, NVQ_REG_CMBLOC), 0);
	CHECK_EQ(h->ops->reg_read32(t, NVQ_REG_CMBSZ), 0);
	CHECK_EQ(h->ops->reg_read32(t, NVQ_REG_CSTS), 0);
	CHECK_EQ(h->ops->reg_read32(t, NVQ_REG_CC), 0);
	/* Read-only registers ignore writes. */
	h->ops->reg_write32(t, NVQ_REG_CAP, 0);
	h->ops->reg_write32(t, NVQ_REG_VS, 0);
	h->ops->reg_write32(t, NVQ_REG_CSTS, NVQ_CSTS_RDY);
	CHECK_EQ(h->ops->reg_read64(t, NVQ_REG_CAP), cap);
	CHECK_EQ(h->ops->reg_read32(t, NVQ_REG_VS), NVQ_VS(2, 0, 0));
	CHECK_EQ(h->ops->reg_read32(t, NVQ_REG_CSTS), 0);
	/* Registers read back what was written. */
	h->ops->reg_write32(t, NVQ_REG_AQA, NVQ_AQA(15, 31));
	CHECK_EQ(h->ops->reg_read32(t, NVQ_REG_AQA), NVQ_AQA(15, 31));
	h->ops->reg_write64(t, NVQ_REG_ASQ, 0x123456789000ull);
	CHECK_EQ(h->ops->reg_read64(t, NVQ_REG_ASQ), 0x123456789000ull);
	/* Offsets past the register file read as zero. */
	CHECK_EQ(h->ops->reg_read32(t, 0x800), 0);
	/* With DSTRD = 2, the doorbells are 16 bytes apart: I/O works. */
	h_enable(h);
	{
		struct hq *q = h_ioq(h, 1, 16, false, 0);
		uint8_t *b = h_alloc(h, 4096, NULL);

		memset(b, 0x5a, 4096);
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 3, 1, b, 4096));
		memset(b, 0, 4096);
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 3, 1, b, 4096));
		CHECK_EQ(b[4095], 0x5a);
	}
	h_close(h);
}

/* Enabling with @cc must fail with CFS and no RDY; EN=0 then clears it. */
static void expect_cfs(struct h *h, uint32_t aq, uint32_t cc, const char *what)
{
	uint32_t csts = h_enable_cc(h, aq, cc);

	if ((csts & (NVQ_CSTS_RDY | NVQ_CSTS_CFS)) != NVQ_CSTS_CFS) {
		fprintf(stderr, "enable with %s: CSTS 0x%x, expected CFS\n",
			what, csts);
		exit(1);
	}
	h->ops->reg_write32(h->t, NVQ_REG_CC, 0);
	h_wait_csts(h, ~0u, 0);
}

static void invalid_enables(void)
{
	struct h *h = h_open("");
	uint32_t cc = h_cc_default();
	uint64_t good_asq = h->aq.sq_iova;

	expect_cfs(h, 32, cc | (5u << NVQ_CC_MPS_SHIFT), "MPS 5 > MPSMAX");
	expect_cfs(h, 32, cc | 1u << NVQ_CC_CSS_SHIFT, "CSS 1");
	expect_cfs(h, 32, cc | 1u << NVQ_CC_AMS_SHIFT, "AMS WRR");
	expect_cfs(h, 1, cc, "1-entry admin queues");
	/* Entry sizes that are set but not 64/16 bytes (0 = not yet set). */
	expect_cfs(h, 32,
		   (cc & ~NVQ_CC_IOSQES_MASK) | 7u << NVQ_CC_IOSQES_SHIFT,
		   "IOSQES 7");
	expect_cfs(h, 32,
		   (cc & ~NVQ_CC_IOSQES_MASK) | 5u << NVQ_CC_IOSQES_SHIFT,
		   "IOSQES 5");
	expect_cfs(h, 32,
		   (cc & ~NVQ_CC_IOCQES_MASK) | 5u << NVQ_CC_IOCQES_SHIFT,
		   "IOCQES 5");

	/* Misaligned and unregistered admin queue bases. */
	h->aq.sq_iova = good_asq + 64;
	expect_cfs(h, 32, cc, "ASQ not page aligned");
	h->aq.sq_iova = 0x1000;
	expect_cfs(h, 32, cc, "ASQ not mapped");
	h->aq.sq_iova = good_asq;

	/* 8 KiB pages (MPS 1) are valid: queue memory is 8K aligned here. */
	CHECK_EQ(h_enable_cc(h, 32, cc | 1u << NVQ_CC_MPS_SHIFT) &
			 (NVQ_CSTS_RDY | NVQ_CSTS_CFS),
		 NVQ_CSTS_RDY);
	{
		struct nvq_id_ctrl *id = h_alloc(h, 8192, NULL);

		CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
		CHECK_EQ(id->sqes, 0x66);
	}
	h_disable(h);
	/* And the largest admin queue. */
	CHECK_EQ(h_enable_cc(h, 4096, cc) & (NVQ_CSTS_RDY | NVQ_CSTS_CFS),
		 NVQ_CSTS_RDY);
	h_disable(h);
	h_close(h);
}

/*
 * NVMe 2.0 3.1.3.5: IOSQES/IOCQES may be set after the enable; a Create
 * I/O CQ/SQ made before they hold a supported value fails with Invalid
 * Queue Size. CSS, MPS and AMS change only while EN = 0: a write with EN
 * kept at 1 leaves them, and the reserved bits read 0. AQA/ASQ/ACQ are
 * only writable while EN = 0.
 */
static void cc_while_enabled(void)
{
	struct h *h = h_open("qpairs=2");
	uint32_t es = NVQ_CC_IOSQES_MASK | NVQ_CC_IOCQES_MASK;
	uint32_t cc = h_cc_default() & ~es, aqa;
	uint8_t *b;

	CHECK_EQ(h_enable_cc(h, 32, cc) & (NVQ_CSTS_RDY | NVQ_CSTS_CFS),
		 NVQ_CSTS_RDY);
	CHECK_ST(h_create_cq(h, 1, 16, false, 0), NVQ_SCT_CMD_SPECIFIC,
		 NVQ_SC_QUEUE_SIZE);
	h->ops->reg_write32(h->t, NVQ_REG_CC, cc | 3u << NVQ_CC_IOCQES_SHIFT);
	CHECK_ST(h_create_cq(h, 1, 16, false, 0), NVQ_SCT_CMD_SPECIFIC,
		 NVQ_SC_QUEUE_SIZE);
	h->ops->reg_write32(h->t, NVQ_REG_CC,
			    cc | NVQ_CQES_LOG2 << NVQ_CC_IOCQES_SHIFT);
	CHECK_ST_OK(h_create_cq(h, 1, 16, false, 0));
	CHECK_ST(h_create_sq(h, 1, 16, 1), NVQ_SCT_CMD_SPECIFIC,
		 NVQ_SC_QUEUE_SIZE);
	h->ops->reg_write32(h->t, NVQ_REG_CC,
			    cc | NVQ_CQES_LOG2 << NVQ_CC_IOCQES_SHIFT |
				    7u << NVQ_CC_IOSQES_SHIFT);
	CHECK_ST(h_create_sq(h, 1, 16, 1), NVQ_SCT_CMD_SPECIFIC,
		 NVQ_SC_QUEUE_SIZE);
	h->ops->reg_write32(h->t, NVQ_REG_CC, h_cc_default());
	CHECK_ST_OK(h_create_sq(h, 1, 16, 1));

	/* MPS 1, CSS 1, AMS 1 and reserved bits written while enabled. */
	h->ops->reg_write32(h->t, NVQ_REG_CC,
			    h_cc_default() | 1u << NVQ_CC_MPS_SHIFT |
				    1u << NVQ_CC_CSS_SHIFT |
				    1u << NVQ_CC_AMS_SHIFT | 0xfe00000eu);
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_CC), h_cc_default());
	aqa = h->ops->reg_read32(h->t, NVQ_REG_AQA);
	h->ops->reg_write32(h->t, NVQ_REG_AQA, NVQ_AQA(3, 3));
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_AQA), aqa);
	/* Still running with 4 KiB pages: an I/O queue pair works. */
	b = h_alloc(h, 8192, NULL);
	CHECK_ST_OK(h_rw(h, h_ioq(h, 2, 16, false, 0), nvq_cmd_read, 1, 0, 2, b,
			 8192));
	CHECK(!(h->ops->reg_read32(h->t, NVQ_REG_CSTS) & NVQ_CSTS_CFS));
	h_close(h);
}

static void shutdown_and_reset(void)
{
	struct h *h = h_open("size=16M");
	uint32_t csts;

	h_enable(h);
	h_ioq(h, 1, 16, false, 0);
	/* The qid is taken now. */
	CHECK_ST(h_create_cq(h, 1, 16, false, 0), NVQ_SCT_CMD_SPECIFIC,
		 NVQ_SC_QID_INVALID);
	/* EN 1 -> 0 deletes every queue: the same qid works again. */
	h_disable(h);
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_CSTS), 0);
	h_enable(h);
	h_ioq(h, 1, 16, false, 0);

	/* Normal shutdown: SHST goes to complete, RDY stays. */
	h->ops->reg_write32(h->t, NVQ_REG_CC,
			    h_cc_default() | NVQ_CC_SHN_NORMAL);
	csts = h_wait_csts(h, NVQ_CSTS_SHST_MASK, NVQ_CSTS_SHST_CMPLT);
	CHECK(csts & NVQ_CSTS_RDY);
	CHECK(!(csts & NVQ_CSTS_CFS));
	/* Reset brings SHST back to normal. */
	h_disable(h);
	CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_CSTS) & NVQ_CSTS_SHST_MASK,
		 NVQ_CSTS_SHST_NORMAL);
	h_enable(h);
	h_ioq(h, 1, 16, false, 0);
	/* Abrupt shutdown too. */
	h->ops->reg_write32(h->t, NVQ_REG_CC,
			    h_cc_default() | NVQ_CC_SHN_ABRUPT);
	h_wait_csts(h, NVQ_CSTS_SHST_MASK, NVQ_CSTS_SHST_CMPLT);
	h_disable(h);
	/* Shutdown notification while disabled completes too. */
	h->ops->reg_write32(h->t, NVQ_REG_CC, NVQ_CC_SHN_NORMAL);
	h_wait_csts(h, NVQ_CSTS_SHST_MASK, NVQ_CSTS_SHST_CMPLT);
	h->ops->reg_write32(h->t, NVQ_REG_CC, 0);
	h_close(h);
}

static void rdy_delay(void)
{
	struct h *h = h_open("rdy_delay=20ms");
	uint64_t t0 = h_now();

	h_enable(h);
	/* A lower bound only. */
	CHECK(h_now() - t0 >= 20000000ull);
	h_close(h);
}

int main(void)
{
	cap_fields();
	invalid_enables();
	cc_while_enabled();
	shutdown_and_reset();
	rdy_delay();
	return 0;
}
