// SPDX-License-Identifier: MIT
/*
 * Asynchronous events: an AER is held until an event (temperature above
 * its threshold, an invalid doorbell write), an event type stays masked
 * until its log page is read with RAE = 0, and more than AERL + 1
 * outstanding requests fail with AER Limit Exceeded.
 */
#include <string.h>

#include "harness.h"

static uint16_t submit(struct h *h, struct nvq_sqe *s)
{
	uint16_t cid = h_push(h, &h->aq, s);

	h_ring(h, &h->aq);
	return cid;
}

static uint16_t aer(struct h *h)
{
	struct nvq_sqe s = h_sqe(nvq_admin_async_event);

	return submit(h, &s);
}

/* Run an admin command; CQEs arriving for @aer_cid are stored in *@ev. */
static uint16_t admin_ev(struct h *h, struct nvq_sqe *s, uint16_t aer_cid,
			 struct nvq_cqe *ev, int *got)
{
	uint16_t cid = submit(h, s);
	struct nvq_cqe c;

	for (;;) {
		CHECK_EQ(h_reap(h, &h->aq, &c, H_TIMEOUT_MS), 0);
		if (c.cid == cid)
			return NVQ_STATUS(c.status);
		CHECK_EQ(c.cid, aer_cid);
		*ev = c;
		(*got)++;
	}
}

static struct nvq_sqe temp_thresh(uint16_t kelvin)
{
	struct nvq_sqe s = h_sqe(nvq_admin_set_features);

	s.cdw10 = NVQ_FEAT_TEMP_THRESH;
	s.cdw11 = kelvin;
	return s;
}

static struct nvq_sqe log_page(struct h *h, uint8_t lid, bool rae, void *buf)
{
	struct nvq_sqe s = h_sqe(nvq_admin_get_log_page);

	s.cdw10 = lid | (rae ? NVQ_LOG_RAE : 0) | (512 / 4 - 1) << 16;
	s.prp1 = h_iova(h, buf);
	return s;
}

int main(void)
{
	struct h *h = h_open("qpairs=2");
	struct nvq_smart_log *sm;
	struct nvq_cqe ev;
	struct nvq_sqe s;
	uint16_t a1, a2, a[4];
	int got = 0, i;

	h_enable(h);
	sm = h_alloc(h, 4096, NULL);

	/* Held: other commands complete, the AER does not. */
	a1 = aer(h);
	for (i = 0; i < 5; i++) {
		s = h_sqe(nvq_admin_identify);
		s.cdw10 = NVQ_ID_CNS_CTRL;
		s.prp1 = h_iova(h, sm);
		CHECK_ST_OK(admin_ev(h, &s, a1, &ev, &got));
	}
	/* A threshold above the temperature raises nothing. */
	s = temp_thresh(400);
	CHECK_ST_OK(admin_ev(h, &s, a1, &ev, &got));
	CHECK_EQ(got, 0);
	CHECK(!h_cqe_ready(&h->aq));

	/* Below the current temperature: SMART event, temperature. */
	s = temp_thresh(250);
	CHECK_ST_OK(admin_ev(h, &s, a1, &ev, &got));
	CHECK_EQ(got, 1);
	CHECK_ST_OK(NVQ_STATUS(ev.status));
	CHECK_EQ(NVQ_AER_TYPE(ev.result), NVQ_AER_SMART);
	CHECK_EQ(NVQ_AER_INFO(ev.result), 0x01);
	CHECK_EQ(NVQ_AER_LOG_PAGE(ev.result), NVQ_LOG_SMART);
	s = log_page(h, NVQ_LOG_SMART, true, sm);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	CHECK(sm->critical_warning & 0x2);

	/* Masked until the log is read with RAE = 0. */
	got = 0;
	a2 = aer(h);
	s = temp_thresh(260);
	CHECK_ST_OK(admin_ev(h, &s, a2, &ev, &got));
	s = log_page(h, NVQ_LOG_SMART, true, sm); /* RAE = 1: still masked */
	CHECK_ST_OK(admin_ev(h, &s, a2, &ev, &got));
	CHECK_EQ(got, 0);
	CHECK(!h_cqe_ready(&h->aq));
	s = log_page(h, NVQ_LOG_SMART, false, sm);
	CHECK_ST_OK(admin_ev(h, &s, a2, &ev, &got));
	CHECK_EQ(got, 1);
	CHECK_EQ(NVQ_AER_TYPE(ev.result), NVQ_AER_SMART);
	/* Re-armed: clear the condition for what follows. */
	s = temp_thresh(343);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	s = log_page(h, NVQ_LOG_SMART, false, sm);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	CHECK(!(sm->critical_warning & 0x2));

	/* Async Event Configuration off: no SMART event. */
	got = 0;
	a1 = aer(h);
	s = h_sqe(nvq_admin_set_features);
	s.cdw10 = NVQ_FEAT_ASYNC_EVENT;
	s.cdw11 = 0;
	CHECK_ST_OK(admin_ev(h, &s, a1, &ev, &got));
	s = temp_thresh(250);
	CHECK_ST_OK(admin_ev(h, &s, a1, &ev, &got));
	CHECK_EQ(got, 0);
	CHECK(!h_cqe_ready(&h->aq));

	/* AERL = 3: four may be outstanding (a1 + 3 more), the fifth fails. */
	for (i = 0; i < 3; i++)
		a[i] = aer(h);
	s = h_sqe(nvq_admin_async_event);
	CHECK_ST(admin_ev(h, &s, 0xffff, &ev, &got), NVQ_SCT_CMD_SPECIFIC,
		 NVQ_SC_AER_LIMIT);
	CHECK_EQ(got, 0);

	/* An invalid doorbell value (>= queue size): error event. */
	{
		struct hq *q = h_ioq(h, 1, 16, false, 0);

		h->ops->db_write(h->t, nvq_sq_db_offset(1, h->dstrd), 16);
		CHECK_EQ(h_reap(h, &h->aq, &ev, H_TIMEOUT_MS), 0);
		CHECK(ev.cid == a1 || ev.cid == a[0]);
		CHECK_EQ(NVQ_AER_TYPE(ev.result), NVQ_AER_ERROR);
		CHECK_EQ(NVQ_AER_INFO(ev.result), 0x01);
		CHECK_EQ(NVQ_AER_LOG_PAGE(ev.result), NVQ_LOG_ERROR);
		/* The queue still works with valid values. */
		{
			uint8_t *b = h_alloc(h, 4096, NULL);

			CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 0, 1, b, 4096));
		}
		/* Error events masked until the error log is read. */
		s = h_sqe(nvq_admin_get_log_page);
		s.cdw10 = NVQ_LOG_ERROR | (4096 / 4 - 1) << 16;
		s.prp1 = h_iova(h, h_alloc(h, 4096, NULL));
		CHECK_ST_OK(h_admin(h, &s, NULL));
		/* A write to a doorbell register that does not exist. */
		h->ops->db_write(h->t, nvq_sq_db_offset(200, h->dstrd), 1);
		CHECK_EQ(h_reap(h, &h->aq, &ev, H_TIMEOUT_MS), 0);
		CHECK_EQ(NVQ_AER_TYPE(ev.result), NVQ_AER_ERROR);
		CHECK_EQ(NVQ_AER_INFO(ev.result), 0x00);
		/*
		 * The doorbell of a queue that was not created (qid 2 of
		 * qpairs=2: inside the doorbell array) is just as invalid
		 * (NVMe 2.0 5.2.2, Error information 00h).
		 */
		CHECK_ST_OK(h_admin(h, &s, NULL));
		h->ops->db_write(h->t, nvq_cq_db_offset(2, h->dstrd), 1);
		CHECK_EQ(h_reap(h, &h->aq, &ev, H_TIMEOUT_MS), 0);
		CHECK_EQ(NVQ_AER_TYPE(ev.result), NVQ_AER_ERROR);
		CHECK_EQ(NVQ_AER_INFO(ev.result), 0x00);
	}

	/* A reset drops outstanding AERs: none complete afterwards. */
	h_disable(h);
	h_enable(h);
	s = temp_thresh(250);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	CHECK(!h_cqe_ready(&h->aq));
	h_close(h);
	return 0;
}
