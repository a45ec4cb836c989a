// SPDX-License-Identifier: MIT
/*
 * Random SQEs on the admin and I/O queues, random PRPs, random doorbell
 * and register writes: the device never crashes, completes every command
 * it accepted, and still works afterwards. Memory the harness itself
 * lives on (queue rings, shadow doorbell pages) is kept out of reach of
 * the random addresses; everything else is fair game.
 */
#include <string.h>

#include "harness.h"

#define QPAIRS 6
#define DATA_LEN (1u << 20)
#define ITERS 6000

static uint64_t seed = 0x5eed1234abcdull;
static uint8_t *data;
static uint64_t data_iova;
static uint64_t dbbuf_iova[2];
static unsigned int aers_held, other_cqes, created;

static uint64_t rnd(void)
{
	return test_rand(&seed);
}

static uint64_t rnd_addr(struct h *h)
{
	switch (rnd() % 9) {
	case 0:
		return 0;
	case 1:
		return rnd();
	case 2:
		return data_iova + rnd() % DATA_LEN;
	case 3:
		return data_iova + (rnd() % (DATA_LEN / 4096)) * 4096;
	case 4:
		return data_iova + (rnd() % (DATA_LEN / 8)) * 8;
	case 5:
		return (uint64_t)(uintptr_t)data + rnd() % DATA_LEN;
	case 6:
		return h->arena_iova + h->arena_len + rnd() % 65536;
	case 7:
		return h->arena_iova - 4096 + rnd() % 4096;
	default:
		return data_iova + DATA_LEN - 4096 + (rnd() % 512) * 8;
	}
}

/* Submit @s on @q, reap until its own CQE shows up; its status. */
static uint16_t run(struct h *h, struct hq *q, struct nvq_sqe *s)
{
	struct nvq_cqe c;
	uint16_t cid = h_push(h, q, s);

	h_ring(h, q);
	for (;;) {
		if (h_reap(h, q, &c, H_TIMEOUT_MS)) {
			fprintf(stderr,
				"no completion for opcode 0x%02x cid %u on queue %u\n",
				s->opcode, cid, q->qid);
			exit(1);
		}
		if (c.sq_id == q->qid && c.cid == cid)
			return NVQ_STATUS(c.status);
		other_cqes++;
	}
}

static uint16_t final_cmd(struct h *h, struct hq *q, uint8_t opcode,
			  uint8_t *buf)
{
	struct nvq_sqe s = h_sqe(opcode);

	s.nsid = q->qid ? 1 : 0;
	s.cdw10 = q->qid ? 17 : NVQ_ID_CNS_CTRL;
	s.cdw12 = q->qid ? 1 : 0;
	h_prp(h, &s, buf, q->qid ? 8192 : 4096);
	return run(h, q, &s);
}

static void random_common(struct h *h, struct nvq_sqe *s)
{
	s->flags = rnd() % 10 ? 0 : (uint8_t)rnd();
	s->mptr = rnd() % 4 ? 0 : rnd();
	s->prp1 = rnd_addr(h);
	s->prp2 = rnd_addr(h);
	s->cdw2 = rnd() % 4 ? 0 : (uint32_t)rnd();
	s->cdw3 = rnd() % 4 ? 0 : (uint32_t)rnd();
	s->cdw13 = (uint32_t)rnd();
	s->cdw14 = (uint32_t)rnd();
	s->cdw15 = (uint32_t)rnd();
}

static uint32_t rnd_nsid(void)
{
	static const uint32_t odd[] = {
		0, 3, 1024, 1025, 0xffffffff, 0xfffffffe
	};

	switch (rnd() % 4) {
	case 0:
	case 1:
		return 1;
	case 2:
		return 2;
	default:
		return rnd() % 2 ? odd[rnd() % 6] : (uint32_t)rnd();
	}
}

static void fuzz_io(struct h *h, struct hq *q)
{
	static const uint8_t ops[] = { nvq_cmd_read, nvq_cmd_write,
				       nvq_cmd_flush, nvq_cmd_write_zeroes,
				       nvq_cmd_dsm };
	struct nvq_sqe s;

	memset(&s, 0, sizeof(s));
	s.cid = 0xffff;
	s.opcode = rnd() % 5 ? ops[rnd() % 5] : (uint8_t)rnd();
	s.nsid = rnd_nsid();
	random_common(h, &s);
	if (rnd() % 3) {
		uint64_t slba = rnd() % 1100; /* 1024 blocks per ns */

		s.cdw10 = (uint32_t)slba;
		s.cdw11 = 0;
		s.cdw12 = (uint32_t)(rnd() % 12);
		if (!(rnd() % 4))
			s.cdw12 |= (uint32_t)rnd() & 0xffff0000u;
	} else {
		s.cdw10 = (uint32_t)rnd();
		s.cdw11 = (uint32_t)rnd();
		s.cdw12 = (uint32_t)rnd();
	}
	run(h, q, &s);
}

static void adopt_dbbuf(struct h *h)
{
	int i;

	h->dbbuf = (uint32_t *)(h->arena + (dbbuf_iova[0] - h->arena_iova));
	h->ei = (uint32_t *)(h->arena + (dbbuf_iova[1] - h->arena_iova));
	for (i = 1; i <= 2; i++) {
		struct hq *q = &h->ioq[i];

		q->shadow = true;
		q->sdb_sq = h->dbbuf + nvq_sq_db_index(q->qid, h->dstrd);
		q->sdb_cq = h->dbbuf + nvq_cq_db_index(q->qid, h->dstrd);
		q->ei_sq = h->ei + nvq_sq_db_index(q->qid, h->dstrd);
		q->ei_cq = h->ei + nvq_cq_db_index(q->qid, h->dstrd);
	}
}

static void fuzz_admin(struct h *h)
{
	static const uint8_t ops[] = {
		nvq_admin_delete_sq,	nvq_admin_create_sq,
		nvq_admin_get_log_page, nvq_admin_delete_cq,
		nvq_admin_create_cq,	nvq_admin_identify,
		nvq_admin_abort_cmd,	nvq_admin_set_features,
		nvq_admin_get_features, nvq_admin_async_event,
		nvq_admin_dbbuf,
	};
	struct nvq_sqe s;
	uint16_t qid;

	memset(&s, 0, sizeof(s));
	s.cid = 0xffff;
	s.opcode = rnd() % 6 ? ops[rnd() % sizeof(ops)] : (uint8_t)rnd();
	/* Format NVM and Sanitize would change or erase what the final
	 * checks use (tests/emu/test_format.c, test_sanitize.c). */
	if (s.opcode == 0x80 || s.opcode == 0x84)
		s.opcode = nvq_admin_get_features;
	s.nsid = rnd() % 2 ? 0 : rnd_nsid();
	random_common(h, &s);
	s.cdw10 = (uint32_t)rnd();
	s.cdw11 = (uint32_t)rnd();
	s.cdw12 = rnd() % 2 ? 0 : (uint32_t)rnd();
	switch (s.opcode) {
	case nvq_admin_delete_sq:
	case nvq_admin_delete_cq:
	case nvq_admin_create_sq:
	case nvq_admin_create_cq:
		/* Mostly plausible queue ids and sizes; never ours. */
		if (rnd() % 4) {
			qid = (uint16_t)(rnd() % (QPAIRS + 2));
			s.cdw10 = qid | (uint32_t)(rnd() % 70) << 16;
			if (rnd() % 5)
				s.cdw11 = (s.cdw11 & 0xffff0000u) | 1 |
					  (uint32_t)(rnd() % 4);
			if (rnd() % 5)
				s.cdw11 = (s.cdw11 & 0xffff) |
					  (uint32_t)(rnd() % (QPAIRS + 2))
						  << 16;
		}
		/* Often a plausible ring in the data region: queues that
		 * exist get rung by fuzz_bells() and run data garbage. */
		if (rnd() % 4) {
			s.flags = 0;
			s.prp1 = data_iova +
				 (rnd() % (DATA_LEN / 4096 - 1)) * 4096;
		}
		qid = s.cdw10 & 0xffff;
		if ((s.opcode == nvq_admin_delete_sq ||
		     s.opcode == nvq_admin_delete_cq) &&
		    (qid == 1 || qid == 2))
			s.cdw10 += 2;
		break;
	case nvq_admin_get_log_page:
		if (rnd() % 3)
			s.cdw10 = (uint32_t)(rnd() % 5) |
				  (uint32_t)(rnd() % 2) << 15 |
				  (uint32_t)(rnd() % 1200) << 16;
		if (rnd() % 2)
			s.cdw11 = 0;
		break;
	case nvq_admin_identify:
		if (rnd() % 3)
			s.cdw10 = (uint32_t)(rnd() % 5);
		break;
	case nvq_admin_set_features:
	case nvq_admin_get_features:
		if (rnd() % 4)
			s.cdw10 = (uint32_t)(rnd() % 12) | (uint32_t)(rnd() % 5)
								   << 8;
		if (!(rnd() % 8))
			s.cdw10 |= 1u << 31;
		break;
	case nvq_admin_dbbuf:
		/* Valid pages only from the protected area. */
		if (rnd() % 2) {
			s.prp1 = dbbuf_iova[0];
			s.prp2 = dbbuf_iova[1];
		} else {
			s.prp1 = rnd() % 2 ? rnd() : dbbuf_iova[0] + 8;
			s.prp2 = rnd();
		}
		break;
	default:
		break;
	}
	if (s.opcode == nvq_admin_async_event) {
		/* Held by the device: do not wait for it. */
		h_push(h, &h->aq, &s);
		h_ring(h, &h->aq);
		aers_held++;
		return;
	}
	{
		struct nvq_cqe c;
		uint16_t cid = h_push(h, &h->aq, &s);

		h_ring(h, &h->aq);
		for (;;) {
			CHECK_EQ(h_reap(h, &h->aq, &c, H_TIMEOUT_MS), 0);
			if (c.cid == cid)
				break;
			other_cqes++;
		}
		if (s.opcode == nvq_admin_dbbuf && !NVQ_STATUS(c.status))
			adopt_dbbuf(h);
		if ((s.opcode == nvq_admin_create_sq ||
		     s.opcode == nvq_admin_create_cq) &&
		    !NVQ_STATUS(c.status))
			created++;
	}
}

static void fuzz_bells(struct h *h)
{
	const struct nvq_transport_ops *o = h->ops;
	uint16_t qid = (uint16_t)(3 + rnd() % (QPAIRS - 2));
	struct hq *q = &h->ioq[1 + rnd() % 2];

	switch (rnd() % 5) {
	case 0: /* fuzz-created queues (may not exist) */
		o->db_write(h->t, nvq_sq_db_offset(qid, h->dstrd),
			    (uint32_t)(rnd() % 80));
		break;
	case 1:
		o->db_write(h->t, nvq_cq_db_offset(qid, h->dstrd),
			    (uint32_t)(rnd() % 80));
		break;
	case 2: /* an invalid value on our queue, then the right one */
		o->db_write(h->t, nvq_sq_db_offset(q->qid, h->dstrd),
			    q->size + (uint32_t)(rnd() % 100));
		if (!q->shadow)
			o->db_write(h->t, nvq_sq_db_offset(q->qid, h->dstrd),
				    q->sq_tail);
		break;
	case 3: /* outside the doorbell array, or misaligned */
		o->db_write(h->t, NVQ_REG_DBS + (uint32_t)(rnd() % 0x100000),
			    (uint32_t)rnd());
		break;
	default: /* registers other than CC */
	{
		static const uint32_t regs[] = {
			NVQ_REG_CAP,	NVQ_REG_VS,   NVQ_REG_INTMS,
			NVQ_REG_INTMC,	NVQ_REG_CSTS, NVQ_REG_NSSR,
			NVQ_REG_CMBLOC, 0x40,	      0x44,
		};

		o->reg_write32(h->t, regs[rnd() % 9], (uint32_t)rnd());
	} break;
	}
}

static void fuzz_run(const char *params, unsigned int iters)
{
	struct h *h = h_open(params);
	struct hq *q1, *q2;
	uint64_t *p, seed0 = seed;
	unsigned int i;
	uint8_t *b;

	aers_held = other_cqes = created = 0;
	h_enable(h);
	q1 = h_ioq(h, 1, 32, true, 1);
	q2 = h_ioq(h, 2, 32, false, 0);
	h_alloc(h, 4096, &dbbuf_iova[0]);
	h_alloc(h, 4096, &dbbuf_iova[1]);
	b = h_alloc(h, 16384, NULL);
	data = h_alloc(h, DATA_LEN, &data_iova);
	/* Random bytes, with plenty of valid page addresses in it. */
	for (p = (uint64_t *)data; p < (uint64_t *)(data + DATA_LEN); p++)
		*p = rnd() % 3 ?
			     data_iova + (rnd() % (DATA_LEN / 4096)) * 4096 :
			     rnd();

	for (i = 0; i < iters; i++) {
		unsigned int r = (unsigned int)(rnd() % 10);

		if (r < 4)
			fuzz_admin(h);
		else if (r < 9)
			fuzz_io(h, rnd() % 2 ? q1 : q2);
		else
			fuzz_bells(h);
	}

	/* Still healthy. */
	CHECK(!(h->ops->reg_read32(h->t, NVQ_REG_CSTS) & NVQ_CSTS_CFS));
	/* (Late AER or fuzz-SQ completions may still arrive: run() skips.) */
	memset(b, 0xa5, 16384);
	CHECK_ST_OK(final_cmd(h, q1, nvq_cmd_write, b));
	memset(b, 0, 16384);
	CHECK_ST_OK(final_cmd(h, q2, nvq_cmd_read, b));
	for (i = 0; i < 8192; i++)
		CHECK_EQ(b[i], 0xa5);
	CHECK_ST_OK(final_cmd(h, &h->aq, nvq_admin_identify, b));
	CHECK_EQ(((struct nvq_id_ctrl *)b)->nn, 1024);
	printf("fuzz '%s': seed 0x%llx, %u iterations, %u AERs, %u queues "
	       "created, %u other CQEs\n",
	       params, (unsigned long long)seed0, iters, aers_held, created,
	       other_cqes);
	h_close(h);
}

int main(void)
{
	unsigned int iters = ITERS;

	if (getenv("NVQ_FUZZ_SEED"))
		seed = strtoull(getenv("NVQ_FUZZ_SEED"), NULL, 0);
	if (getenv("NVQ_FUZZ_ITERS"))
		iters = (unsigned int)strtoul(getenv("NVQ_FUZZ_ITERS"), NULL,
					      0);
	fuzz_run("size=4M,ns=2,qpairs=6,mqes=63,mdts=3,msix=4", iters);
	/* With media latency: commands wait in the device (heap, Abort,
	 * SQ deletion paths); a sleeping device (idle_spin=0). */
	fuzz_run("size=4M,ns=2,qpairs=6,mqes=63,mdts=3,msix=4,lat=20us/5us,"
		 "idle_spin=0",
		 iters / 3);
	return 0;
}
