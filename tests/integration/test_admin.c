// SPDX-License-Identifier: MIT
/*
 * Admin passthrough (nvq_admin): data comes back through the bounce
 * buffer, and every rejection reachable this way returns the status the
 * specification names, unchanged: Invalid Opcode, Invalid Field, Invalid
 * Namespace, Invalid Log Page, Invalid Queue Identifier, Invalid Queue
 * Size, Completion Queue Invalid, Invalid Queue Deletion, Invalid
 * Interrupt Vector.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testutil.h"
#include "ctrl.h"

static struct nvq_ctrl *c;

#define SC_GEN(sc) NVQ_STATUS_MAKE(NVQ_SCT_GENERIC, (sc))
#define SC_CMD(sc) NVQ_STATUS_MAKE(NVQ_SCT_CMD_SPECIFIC, (sc))

/* Run @cmd; expect success (want 0) or -EIO with status @want. */
static void expect(int line, struct nvq_sqe *cmd, void *buf, size_t len,
		   uint16_t want, uint32_t *result)
{
	uint16_t st = 0xffff;
	int rc = nvq_admin(c, cmd, buf, len, result, &st);

	if (want == 0 && (rc || st)) {
		fprintf(stderr, "line %d: opcode %#x failed: %d %s\n", line,
			cmd->opcode, rc, nvq_errmsg());
		exit(1);
	}
	if (want && (rc != -EIO || (st & 0x7ff) != want)) {
		fprintf(stderr,
			"line %d: opcode %#x: rc %d status %#x (%s), want -EIO %#x (%s)\n",
			line, cmd->opcode, rc, st, nvq_status_str(st), want,
			nvq_status_str(want));
		exit(1);
	}
}

#define EXPECT(cmd, buf, len, want) expect(__LINE__, cmd, buf, len, want, NULL)

static struct nvq_sqe sqe(uint8_t opc, uint32_t nsid, uint32_t cdw10,
			  uint32_t cdw11)
{
	struct nvq_sqe s;

	memset(&s, 0, sizeof(s));
	s.opcode = opc;
	s.nsid = nsid;
	s.cdw10 = cdw10;
	s.cdw11 = cdw11;
	return s;
}

static struct nvq_sqe create_cq(uint16_t qid, uint32_t qsize, uint64_t iova,
				uint32_t flags)
{
	struct nvq_sqe s =
		sqe(nvq_admin_create_cq, 0, (qsize - 1) << 16 | qid, flags);

	s.prp1 = iova;
	return s;
}

static struct nvq_sqe create_sq(uint16_t qid, uint32_t qsize, uint64_t iova,
				uint16_t cqid)
{
	struct nvq_sqe s = sqe(nvq_admin_create_sq, 0, (qsize - 1) << 16 | qid,
			       NVQ_QUEUE_PHYS_CONTIG |
				       (uint32_t)cqid << NVQ_SQ_CQID_SHIFT);

	s.prp1 = iova;
	return s;
}

static void test_data(void)
{
	struct nvq_id_ctrl *id = malloc(sizeof(*id));
	struct nvq_sqe s;
	char *log = malloc(512);
	uint32_t result = 0xdead;

	CHECK(id && log);
	/* Controller to host (opcode bits 10b), into plain heap memory. */
	memset(id, 0, sizeof(*id));
	s = sqe(nvq_admin_identify, 0, NVQ_ID_CNS_CTRL, 0);
	EXPECT(&s, id, sizeof(*id), 0);
	CHECK(!memcmp(id->mn, nvq_ctrl_id(c)->mn, sizeof(id->mn)));
	CHECK(!memcmp(id->sn, nvq_ctrl_id(c)->sn, sizeof(id->sn)));
	CHECK_EQ(id->nn, nvq_ctrl_id(c)->nn);

	/* Get Features, Number of Queues: what we were granted (1). */
	s = sqe(nvq_admin_get_features, 0, NVQ_FEAT_NUM_QUEUES, 0);
	expect(__LINE__, &s, NULL, 0, 0, &result);
	CHECK_EQ(result, 0);

	/* SMART log: 512 bytes (NUMDL = 127 dwords, 0's based). */
	s = sqe(nvq_admin_get_log_page, 0xffffffffu, NVQ_LOG_SMART | 127u << 16,
		0);
	EXPECT(&s, log, 512, 0);

	/* Arguments nvq refuses itself. */
	s = sqe(nvq_admin_delete_cq, 0, 1, 0);
	CHECK_EQ(nvq_admin(c, &s, log, 16, NULL, NULL), -EINVAL);
	CHECK_MSG("no data");
	CHECK_EQ(nvq_admin(c, NULL, NULL, 0, NULL, NULL), -EINVAL);
	CHECK_EQ(nvq_admin(c, &s, NULL, 16, NULL, NULL), -EINVAL);
	free(id);
	free(log);
}

static void test_generic(void)
{
	char *buf = malloc(4096);
	struct nvq_sqe s;

	CHECK(buf);
	/* 03h is reserved in the admin command set. */
	s = sqe(0x03, 0, 0, 0);
	EXPECT(&s, NULL, 0, SC_GEN(NVQ_SC_INVALID_OPCODE));
	s = sqe(0x7e, 0, 0, 0);
	EXPECT(&s, NULL, 0, SC_GEN(NVQ_SC_INVALID_OPCODE));
	/* Identify with an unknown CNS. */
	s = sqe(nvq_admin_identify, 0, 0x55, 0);
	EXPECT(&s, buf, 4096, SC_GEN(NVQ_SC_INVALID_FIELD));
	/* Set Features with an unknown feature. */
	s = sqe(nvq_admin_set_features, 0, 0x7f, 0);
	EXPECT(&s, NULL, 0, SC_GEN(NVQ_SC_INVALID_FIELD));
	/* Identify Namespace of an nsid beyond NN. */
	s = sqe(nvq_admin_identify, 0xfffffff0u, NVQ_ID_CNS_NS, 0);
	EXPECT(&s, buf, 4096, SC_GEN(NVQ_SC_INVALID_NS));
	/* Get Log Page of a reserved log identifier. */
	s = sqe(nvq_admin_get_log_page, 0, 0x70 | 127u << 16, 0);
	EXPECT(&s, buf, 512, SC_CMD(NVQ_SC_INVALID_LOG_PAGE));
	free(buf);
}

static void test_queues(void)
{
	struct nvq_sqe s;
	uint32_t mqes = NVQ_CAP_MQES(nvq_ctrl_cap(c));
	void *ring = nvq_dma_alloc(c, 8192, -1);
	uint64_t iova;

	CHECK(ring);
	CHECK_OK(nvq_mem_iova(c->mem, NULL, ring, 8192, &iova));

	/* Our I/O CQ 1 still has SQ 1 attached. */
	s = sqe(nvq_admin_delete_cq, 0, 1, 0);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_INVALID_QUEUE_DELETION));
	/* Take queue pair 1 down to have a free, valid qid. */
	s = sqe(nvq_admin_delete_sq, 0, 1, 0);
	EXPECT(&s, NULL, 0, 0);
	s = sqe(nvq_admin_delete_sq, 0, 1, 0);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QID_INVALID));
	s = sqe(nvq_admin_delete_cq, 0, 1, 0);
	EXPECT(&s, NULL, 0, 0);
	s = sqe(nvq_admin_delete_cq, 0, 1, 0);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QID_INVALID));
	s = sqe(nvq_admin_delete_cq, 0, 0, 0);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QID_INVALID));
	s = sqe(nvq_admin_delete_sq, 0, 0, 0);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QID_INVALID));

	/* Create I/O CQ rejections. */
	s = create_cq(0, 16, iova, NVQ_QUEUE_PHYS_CONTIG);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QID_INVALID));
	s = create_cq(2, 16, iova, NVQ_QUEUE_PHYS_CONTIG); /* > granted */
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QID_INVALID));
	s = create_cq(1, 1, iova, NVQ_QUEUE_PHYS_CONTIG); /* QSIZE 0 */
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QUEUE_SIZE));
	s = create_cq(1, mqes + 2, iova, NVQ_QUEUE_PHYS_CONTIG);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QUEUE_SIZE));
	s = create_cq(1, 16, iova, 0); /* PC = 0 while CAP.CQR = 1 */
	EXPECT(&s, NULL, 0, SC_GEN(NVQ_SC_INVALID_FIELD));
	s = create_cq(1, 16, iova,
		      NVQ_QUEUE_PHYS_CONTIG | NVQ_CQ_IRQ_ENABLED |
			      99u << NVQ_CQ_IV_SHIFT);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_INVALID_VECTOR));

	/* Create I/O SQ on a CQ that does not exist. */
	s = create_sq(1, 16, iova, 1);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_CQ_INVALID));
	s = create_sq(1, 16, iova, 0);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_CQ_INVALID));

	/* A good CQ, then the same qid again. */
	s = create_cq(1, 16, iova, NVQ_QUEUE_PHYS_CONTIG);
	EXPECT(&s, NULL, 0, 0);
	s = create_cq(1, 16, iova, NVQ_QUEUE_PHYS_CONTIG);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QID_INVALID));
	/* SQ rejections with a valid CQ. */
	s = create_sq(0, 16, iova + 4096, 1);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QID_INVALID));
	s = create_sq(1, 1, iova + 4096, 1);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_QUEUE_SIZE));
	s = create_sq(1, 16, iova + 4096, 1);
	EXPECT(&s, NULL, 0, 0);
	s = sqe(nvq_admin_delete_cq, 0, 1, 0);
	EXPECT(&s, NULL, 0, SC_CMD(NVQ_SC_INVALID_QUEUE_DELETION));
	s = sqe(nvq_admin_delete_sq, 0, 1, 0);
	EXPECT(&s, NULL, 0, 0);
	s = sqe(nvq_admin_delete_cq, 0, 1, 0);
	EXPECT(&s, NULL, 0, 0);
	nvq_dma_free(c, ring);
}

int main(void)
{
	struct nvq_opts o;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	c = open_or_die("emu:size=4M,qpairs=4,msix=3", &o);
	test_data();
	test_generic();
	test_queues();
	/* Close copes with queue pair 1 being gone already. */
	nvq_close(c);
	printf("admin: ok\n");
	return 0;
}
