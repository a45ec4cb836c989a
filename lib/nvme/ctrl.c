// SPDX-License-Identifier: MIT
/*
 * Controller bring-up, admin commands, namespaces and shutdown (NVMe Base
 * 2.0, 3.5.1 "Memory-based Controller Initialization" and 3.6
 * "Shutdown"). Everything read from the device is checked before use: a
 * real SSD or QEMU may differ from the emulated controller in anything the
 * specification allows.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl.h"
#include "internal.h"
#include "prp.h"
#include "qos.h"

static uint64_t next_uid = 1;

static const char *admin_name(uint8_t opc)
{
	switch (opc) {
	case nvq_admin_delete_sq:
		return "Delete I/O SQ";
	case nvq_admin_create_sq:
		return "Create I/O SQ";
	case nvq_admin_get_log_page:
		return "Get Log Page";
	case nvq_admin_delete_cq:
		return "Delete I/O CQ";
	case nvq_admin_create_cq:
		return "Create I/O CQ";
	case nvq_admin_identify:
		return "Identify";
	case nvq_admin_abort_cmd:
		return "Abort";
	case nvq_admin_set_features:
		return "Set Features";
	case nvq_admin_get_features:
		return "Get Features";
	case nvq_admin_async_event:
		return "Asynchronous Event Request";
	case nvq_admin_dbbuf:
		return "Doorbell Buffer Config";
	case nvq_admin_format_nvm:
		return "Format NVM";
	default:
		return "admin command";
	}
}

/* A copy of this thread's message, to quote it in a wider one. */
static const char *saved_msg(char *buf, size_t len)
{
	snprintf(buf, len, "%s", nvq_errmsg());
	return buf;
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static uint32_t csts(struct nvq_ctrl *c)
{
	return c->t->ops->reg_read32(c->t, NVQ_REG_CSTS);
}

/*
 * Wait until (CSTS & @mask) == @want for at most @timeout_ms. CFS fails the
 * wait when @cfs_fails (while enabling; a disable is how CFS is cleared).
 */
static int wait_csts(struct nvq_ctrl *c, uint32_t mask, uint32_t want,
		     uint32_t timeout_ms, bool cfs_fails, const char *what)
{
	uint64_t deadline = nvq_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	unsigned int delay = 1;
	uint32_t v;

	for (;;) {
		v = csts(c);
		if (v == NVQ_REG_GONE32)
			return nvq_err(
				-ENODEV,
				"%s: controller is gone (CSTS reads all-ones)",
				what);
		if ((v & mask) == want)
			return 0;
		if (cfs_fails && (v & NVQ_CSTS_CFS))
			return nvq_err(
				-EIO,
				"%s: controller fatal status (CSTS.CFS, CSTS %#x)",
				what, v);
		if (nvq_now_ns() > deadline)
			return nvq_err(-ETIMEDOUT,
				       "%s: timed out after %u ms (CSTS %#x%s)",
				       what, timeout_ms, v,
				       v & NVQ_CSTS_CFS ? ", fatal status" :
							  "");
		sleep_us(delay);
		if (delay < 1000)
			delay *= 2;
	}
}

static uint32_t cap_timeout_ms(uint64_t cap)
{
	uint32_t to = NVQ_CAP_TO(cap);

	/* CAP.TO 0 would mean "ready at once"; give slow devices 500 ms. */
	return (to ? to : 1) * 500u;
}

/* NVMe 2.0 CAP.CRMS.CRWMS and the Controller Ready Timeouts register. */
#define CAP_CRWMS (1ull << 59)
#define REG_CRTO 0x68
#define CRTO_CRWMT(crto) ((crto)&0xffff)
/* CAP.CSS bit 6: I/O Command Sets; CC.CSS 110b enables all of them. */
#define CAP_CSS_IOCSS (1u << 6)
#define CC_CSS_ALL (6u << NVQ_CC_CSS_SHIFT)
/* Namespace Identification Descriptor types (Identify CNS 03h). */
#define NIDT_CSI 4
#define CSI_NVM 0

/*
 * How long CSTS.RDY may take to follow CC.EN. CAP.TO saturates at 127.5 s;
 * a 2.0 controller with CAP.CRMS.CRWMS reports the real bound for CC.CRIME
 * = 0 (ready with media, which nvq uses) in CRTO.CRWMT, and some report a
 * CRWMT smaller than CAP.TO: take the larger (NVMe 2.0, CRTO register).
 */
static uint32_t ready_timeout_ms(struct nvq_ctrl *c)
{
	uint32_t ms = cap_timeout_ms(c->cap), crto;

	if (!(c->cap & CAP_CRWMS))
		return ms;
	crto = c->t->ops->reg_read32(c->t, REG_CRTO);
	if (crto == NVQ_REG_GONE32)
		return ms;
	return MAX(ms, CRTO_CRWMT(crto) * 500u);
}

/* ------------------------------------------------------------------ */
/* Admin commands                                                      */
/* ------------------------------------------------------------------ */

static void admin_done(void *arg, const struct nvq_cpl *cpl)
{
	struct nvq_admin_ctx *ctx = arg;

	ctx->cpl = *cpl;
	ctx->done = true;
	if (ctx->abandoned) {
		/* Late completion of a timed-out command: the device is done
		 * with its buffer now. */
		if (ctx->buf)
			nvq_mem_free(ctx->ctrl->mem, ctx->buf);
		ctx->buf = NULL;
		ctx->abandoned = false;
		ctx->busy = false;
	}
}

/*
 * Wait for the admin command of @ctx. Reaping happens here, under
 * admin_lock. While vector 0 is the admin queue's alone, sleep on its
 * eventfd; when I/O queues share it, a waiter there would steal their
 * wakeups, so back off with short sleeps instead.
 */
static int admin_wait(struct nvq_ctrl *c, struct nvq_admin_ctx *ctx)
{
	uint64_t deadline =
		nvq_now_ns() + (uint64_t)c->admin_timeout_ms * 1000000ull;
	int fd = c->admin_owns_vec0 ? c->t->ops->irq_fd(c->t, 0) : -1;
	unsigned int round = 0, delay = 10;

	for (;;) {
		uint32_t v;
		uint64_t now;

		nvq_queue_reap(c->aq, 0);
		if (ctx->done)
			return 0;
		if (round++ < 32) {
			sched_yield();
			continue;
		}
		v = csts(c);
		if (v == NVQ_REG_GONE32)
			return nvq_err(
				-ENODEV,
				"controller is gone (CSTS reads all-ones)");
		if (v & NVQ_CSTS_CFS)
			return nvq_err(-EIO,
				       "controller fatal status (CSTS %#x)", v);
		now = nvq_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (fd >= 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			uint64_t left = (deadline - now) / 1000000 + 1;
			uint64_t val;

			if (poll(&pfd, 1, left > 100 ? 100 : (int)left) > 0 &&
			    read(fd, &val, sizeof(val)) < 0) {
				/* EAGAIN: someone else consumed it. */
			}
		} else {
			sleep_us(delay);
			if (delay < 1000)
				delay *= 2;
		}
	}
}

int nvq_ctrl_admin(struct nvq_ctrl *c, struct nvq_sqe *sqe, void **bufp,
		   size_t len, uint32_t *result, uint16_t *status)
{
	void *buf = bufp ? *bufp : NULL;
	struct nvq_admin_ctx *ctx = NULL;
	struct nvq_cmd *cmd;
	uint8_t opc = sqe->opcode;
	unsigned int i;
	int rc;

	if (status)
		*status = 0;
	pthread_mutex_lock(&c->admin_lock);
	if (!c->aq) {
		pthread_mutex_unlock(&c->admin_lock);
		return nvq_err(-ENODEV, "%s: no admin queue", admin_name(opc));
	}
	for (i = 0; i < NVQ_ADMIN_DEPTH; i++) {
		if (!c->actx[i].busy) {
			ctx = &c->actx[i];
			break;
		}
	}
	cmd = ctx ? nvq_queue_get_cmds(c->aq, 1) : NULL;
	if (!cmd) {
		pthread_mutex_unlock(&c->admin_lock);
		return nvq_err(
			-EBUSY,
			"%s: every admin slot is held by a timed-out command",
			admin_name(opc));
	}
	cmd->sqe = *sqe;
	cmd->sqe.cid = cmd->cid;
	if (buf && len) {
		uint64_t iova;

		rc = nvq_mem_iova(c->mem, NULL, buf, len, &iova);
		if (!rc)
			rc = nvq_prp_build(c->aq->pools, iova, len,
					   &cmd->sqe.prp1, &cmd->sqe.prp2,
					   &cmd->prp);
		if (rc) {
			nvq_queue_put_cmds(c->aq, cmd);
			pthread_mutex_unlock(&c->admin_lock);
			return nvq_err(rc, "%s: cannot map its %zu-byte buffer",
				       admin_name(opc), len);
		}
		cmd->sqe.flags &= (uint8_t)~0xc0; /* PSDT: PRPs */
	}
	ctx->ctrl = c;
	ctx->busy = true;
	ctx->done = false;
	ctx->abandoned = false;
	ctx->buf = NULL;
	cmd->cb = admin_done;
	cmd->arg = ctx;
	nvq_queue_post(c->aq, cmd, 0);

	rc = admin_wait(c, ctx);
	if (rc) {
		/*
		 * The device may still execute the command and write its
		 * buffer: keep both until it completes or the controller is
		 * shut down.
		 */
		ctx->abandoned = true;
		ctx->buf = buf;
		if (bufp)
			*bufp = NULL;
		pthread_mutex_unlock(&c->admin_lock);
		if (rc == -ETIMEDOUT)
			return nvq_err(rc,
				       "%s (opcode %#x) timed out after %u ms",
				       admin_name(opc), opc,
				       c->admin_timeout_ms);
		return rc;
	}
	ctx->busy = false;
	pthread_mutex_unlock(&c->admin_lock);
	if (result)
		*result = ctx->cpl.result;
	if (status)
		*status = ctx->cpl.status;
	if (ctx->cpl.err)
		return nvq_err(ctx->cpl.err, "%s (opcode %#x) failed: %s",
			       admin_name(opc), opc,
			       nvq_status_str(ctx->cpl.status));
	return 0;
}

static int identify_st(struct nvq_ctrl *c, uint8_t cns, uint32_t nsid,
		       void *out, uint16_t *status)
{
	struct nvq_sqe sqe = { .opcode = nvq_admin_identify };
	void *buf;
	int rc;

	buf = nvq_mem_alloc(c->mem, NVQ_IDENTIFY_DATA_SIZE, c->node, NULL);
	if (!buf)
		return -ENOMEM;
	sqe.nsid = nsid;
	sqe.cdw10 = cns;
	rc = nvq_ctrl_admin(c, &sqe, &buf, NVQ_IDENTIFY_DATA_SIZE, NULL,
			    status);
	if (!rc)
		memcpy(out, buf, NVQ_IDENTIFY_DATA_SIZE);
	if (buf)
		nvq_mem_free(c->mem, buf);
	return rc;
}

static int identify(struct nvq_ctrl *c, uint8_t cns, uint32_t nsid, void *out)
{
	return identify_st(c, cns, nsid, out, NULL);
}

static int simple_admin(struct nvq_ctrl *c, uint8_t opc, uint32_t cdw10,
			uint32_t cdw11, uint64_t prp1, uint64_t prp2,
			uint32_t *result)
{
	struct nvq_sqe sqe = { .opcode = opc };

	sqe.cdw10 = cdw10;
	sqe.cdw11 = cdw11;
	sqe.prp1 = prp1;
	sqe.prp2 = prp2;
	return nvq_ctrl_admin(c, &sqe, NULL, 0, result, NULL);
}

/* ------------------------------------------------------------------ */
/* Bring-up                                                            */
/* ------------------------------------------------------------------ */

static int disable(struct nvq_ctrl *c)
{
	struct nvq_transport *t = c->t;
	uint32_t cc = t->ops->reg_read32(t, NVQ_REG_CC);
	uint32_t st = csts(c);
	int rc;

	if (cc == NVQ_REG_GONE32 || st == NVQ_REG_GONE32)
		return nvq_err(-ENODEV,
			       "controller is gone (registers read all-ones)");
	/*
	 * Changing EN while RDY has not caught up with it is undefined; let
	 * a controller still enabling finish first (CFS ends that early).
	 */
	if ((cc & NVQ_CC_EN) && !(st & NVQ_CSTS_RDY) && !(st & NVQ_CSTS_CFS)) {
		rc = wait_csts(c, NVQ_CSTS_RDY, NVQ_CSTS_RDY, c->ready_ms, true,
			       "waiting for the previous enable");
		if (rc && rc != -EIO)
			return rc;
	}
	if (cc & NVQ_CC_EN)
		t->ops->reg_write32(t, NVQ_REG_CC, cc & ~NVQ_CC_EN);
	return wait_csts(c, NVQ_CSTS_RDY, 0, c->ready_ms, false,
			 "disabling the controller (CC.EN=0)");
}

static int enable(struct nvq_ctrl *c)
{
	struct nvq_transport *t = c->t;
	struct nvq_queue_params p = {
		.t = t,
		.ctrl = c,
		.pools = &c->pools[c->node],
		.qid = 0,
		.depth = NVQ_ADMIN_DEPTH,
		.dstrd = c->dstrd,
		.lock_mode = NVQ_LOCK_NONE, /* admin_lock serialises */
		.mode = NVQ_MODE_POLL,
		.node = c->node,
	};
	uint64_t asq_iova, acq_iova;
	char msg[384];
	uint32_t cc;
	int rc;

	c->asq_mem = nvq_mem_alloc(c->mem, NVQ_ADMIN_DEPTH * NVQ_SQE_SIZE,
				   c->node, &asq_iova);
	if (c->asq_mem)
		c->acq_mem = nvq_mem_alloc(c->mem,
					   NVQ_ADMIN_DEPTH * NVQ_CQE_SIZE,
					   c->node, &acq_iova);
	if (!c->asq_mem || !c->acq_mem)
		return nvq_err(-ENOMEM, "cannot allocate the admin queue: %s",
			       saved_msg(msg, sizeof(msg)));
	p.sq = c->asq_mem;
	p.cq = c->acq_mem;
	rc = nvq_queue_create(&p, &c->aq);
	if (rc)
		return rc;

	t->ops->reg_write32(t, NVQ_REG_AQA,
			    NVQ_AQA(NVQ_ADMIN_DEPTH - 1, NVQ_ADMIN_DEPTH - 1));
	t->ops->reg_write64(t, NVQ_REG_ASQ, asq_iova);
	t->ops->reg_write64(t, NVQ_REG_ACQ, acq_iova);
	/* As Linux does: 110b whenever the controller has I/O Command Sets;
	 * scan_namespaces() then keeps the NVM ones. */
	cc = NVQ_CC_EN | (c->iocss ? CC_CSS_ALL : NVQ_CC_CSS_NVM) |
	     (0u << NVQ_CC_MPS_SHIFT) | NVQ_CC_AMS_RR | NVQ_CC_SHN_NONE |
	     (NVQ_SQES_LOG2 << NVQ_CC_IOSQES_SHIFT) |
	     (NVQ_CQES_LOG2 << NVQ_CC_IOCQES_SHIFT);
	t->ops->reg_write32(t, NVQ_REG_CC, cc);
	c->enabled = true;
	return wait_csts(c, NVQ_CSTS_RDY, NVQ_CSTS_RDY, c->ready_ms, true,
			 "enabling the controller (CC.EN=1)");
}

static int check_cap(struct nvq_ctrl *c)
{
	uint64_t cap = c->cap;

	if (!(NVQ_CAP_CSS(cap) & (NVQ_CAP_CSS_NVM | CAP_CSS_IOCSS)))
		return nvq_err(
			-ENOTSUP,
			"controller supports neither the NVM command set nor I/O Command Sets (CAP.CSS %#x)",
			NVQ_CAP_CSS(cap));
	c->iocss = NVQ_CAP_CSS(cap) & CAP_CSS_IOCSS;
	if (NVQ_CAP_MPSMIN(cap) > 0 ||
	    NVQ_CAP_MPSMAX(cap) < NVQ_CAP_MPSMIN(cap))
		return nvq_err(
			-ENOTSUP,
			"controller memory page sizes %u..%u bytes exclude the 4096 nvq uses",
			4096u << NVQ_CAP_MPSMIN(cap),
			4096u << NVQ_CAP_MPSMAX(cap));
	if (NVQ_CAP_MQES(cap) < 1)
		return nvq_err(-EIO, "controller reports CAP.MQES 0 (invalid)");
	return 0;
}

static int identify_ctrl(struct nvq_ctrl *c)
{
	struct nvq_id_ctrl *id;
	int rc;

	id = malloc(sizeof(*id));
	if (!id)
		return nvq_err(-ENOMEM, "out of memory");
	rc = identify(c, NVQ_ID_CNS_CTRL, 0, id);
	if (rc) {
		free(id);
		return rc;
	}
	c->id = id;
	/* SQES/CQES: bits 3:0 required size, 7:4 maximum (log2). */
	if ((id->sqes & 0xf) > NVQ_SQES_LOG2 || (id->sqes >> 4) < NVQ_SQES_LOG2)
		return nvq_err(
			-ENOTSUP,
			"controller SQ entry sizes (SQES %#x) exclude 64 bytes",
			id->sqes);
	if ((id->cqes & 0xf) > NVQ_CQES_LOG2 || (id->cqes >> 4) < NVQ_CQES_LOG2)
		return nvq_err(
			-ENOTSUP,
			"controller CQ entry sizes (CQES %#x) exclude 16 bytes",
			id->cqes);
	/* MDTS is in units of CAP.MPSMIN, which check_cap() made 4 KiB. */
	if (id->mdts == 0 || id->mdts > 9)
		c->max_xfer = NVQ_MAX_XFER;
	else
		c->max_xfer = NVQ_PAGE_SIZE << id->mdts;
	return 0;
}

/*
 * The LBA format in use. FLBAS bits 6:5 extend the index past 15 only
 * when there are more than 16 formats; below that they are reserved (the
 * host ignores them: NVMe 2.0, Identify Namespace FLBAS).
 */
static unsigned int flbas_index(const struct nvq_id_ns *id)
{
	if (id->nlbaf < 16)
		return id->flbas & NVQ_NS_FLBAS_LBA_MASK;
	return nvq_flbas_index(id->flbas);
}

static const char *ns_unusable(struct nvq_ctrl *c, const struct nvq_id_ns *id,
			       char *why, size_t len)
{
	unsigned int idx = flbas_index(id);
	const struct nvq_lbaf *f;

	if (!id->nsze) {
		snprintf(why, len, "size is 0");
		return why;
	}
	if (idx > id->nlbaf || idx >= ARRAY_SIZE(id->lbaf)) {
		snprintf(why, len, "FLBAS selects LBA format %u of %u", idx,
			 id->nlbaf + 1);
		return why;
	}
	f = &id->lbaf[idx];
	if (f->ds < 9 || f->ds > 16) {
		snprintf(why, len, "LBA data size 2^%u is not supported",
			 f->ds);
		return why;
	}
	if (f->ms) {
		snprintf(
			why, len,
			"%u bytes of metadata per block (%s) are not supported",
			f->ms,
			id->flbas & NVQ_NS_FLBAS_META_EXT ? "extended LBA" :
							    "separate buffer");
		return why;
	}
	if ((1u << f->ds) > c->max_xfer) {
		snprintf(why, len,
			 "LBA size %u exceeds the maximum transfer of %u bytes",
			 1u << f->ds, c->max_xfer);
		return why;
	}
	return NULL;
}

/*
 * With CC.CSS 110b the active namespaces include those of other I/O
 * Command Sets (Zoned, Key Value), which nvq must not drive as NVM ones:
 * the CSI descriptor of Identify CNS 03h tells (NVMe 2.0, Namespace
 * Identification Descriptor list). No
 * list, or no CSI in it, means NVM.
 */
static const char *ns_not_nvm(struct nvq_ctrl *c, uint32_t nsid, char *why,
			      size_t len)
{
	uint8_t *d = malloc(NVQ_IDENTIFY_DATA_SIZE);
	const char *bad = NULL;
	size_t off = 0;

	if (!d || identify(c, NVQ_ID_CNS_NS_DESC_LIST, nsid, d)) {
		free(d);
		return NULL;
	}
	while (off + 4 <= NVQ_IDENTIFY_DATA_SIZE && d[off]) {
		uint8_t nidt = d[off], nidl = d[off + 1];

		if (off + 4 + nidl > NVQ_IDENTIFY_DATA_SIZE)
			break;
		if (nidt == NIDT_CSI && nidl >= 1 && d[off + 4] != CSI_NVM) {
			snprintf(why, len,
				 "its I/O Command Set (CSI %u) is not NVM",
				 d[off + 4]);
			bad = why;
			break;
		}
		off += 4 + nidl;
	}
	free(d);
	return bad;
}

static void note(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 3 >= size)
		return;
	if (used) {
		strcpy(buf + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
}

/* Every nsid up to NN is a candidate; Identify Namespace tells. */
static void scan_all(struct nvq_ctrl *c, uint32_t *ids, unsigned int *nr,
		     bool *all, char *notes, size_t notes_len)
{
	uint32_t nn = c->id->nn;
	unsigned int n;

	for (n = 0; n < MIN(nn, NVQ_MAX_NS); n++)
		ids[n] = n + 1;
	if (nn > NVQ_MAX_NS)
		note(notes, notes_len,
		     "NN %u: only namespaces 1..%u are looked at", nn,
		     NVQ_MAX_NS);
	*nr = n;
	*all = true;
}

/*
 * The active namespace list (CNS 02h), paged by the last nsid seen. A
 * controller older than NVMe 1.1 may not know CNS 02h: then every nsid up
 * to NN is a candidate (*@all set) and Identify Namespace tells.
 */
static int active_nsids(struct nvq_ctrl *c, uint32_t *ids, unsigned int *nr,
			bool *all, char *notes, size_t notes_len)
{
	uint32_t *list, start = 0, nn = c->id->nn;
	unsigned int n = 0, i, page;
	uint16_t st = 0;
	int rc = 0;

	*all = false;
	/* CNS 02h is NVMe 1.1; a 1.0 controller may read it as CNS 00h. */
	if (c->vs < NVQ_VS(1, 1, 0)) {
		scan_all(c, ids, nr, all, notes, notes_len);
		return 0;
	}
	list = malloc(NVQ_IDENTIFY_DATA_SIZE);
	if (!list)
		return nvq_err(-ENOMEM, "out of memory");
	for (page = 0;; page++) {
		rc = identify_st(c, NVQ_ID_CNS_NS_ACTIVE_LIST, start, list,
				 &st);
		if (rc == -EIO && page == 0 &&
		    (st & NVQ_STATUS_CODE_MASK) == NVQ_SC_INVALID_FIELD) {
			free(list);
			scan_all(c, ids, nr, all, notes, notes_len);
			return 0;
		}
		if (rc)
			break;
		for (i = 0; i < 1024; i++) {
			uint32_t id = list[i];

			if (!id)
				break;
			if (id <= start || id > nn || id == NVQ_NSID_ALL) {
				note(notes, notes_len,
				     "bad active namespace list entry %u (nsid %u after %u, NN %u); rest ignored",
				     page * 1024 + i, id, start, nn);
				i = 0; /* stop paging */
				break;
			}
			if (n == NVQ_MAX_NS) {
				note(notes, notes_len,
				     "more than %u active namespaces; using the first %u",
				     NVQ_MAX_NS, NVQ_MAX_NS);
				i = 0;
				break;
			}
			ids[n++] = id;
			start = id;
		}
		if (i < 1024)
			break;
	}
	free(list);
	*nr = n;
	return rc;
}

static int scan_namespaces(struct nvq_ctrl *c, char *notes, size_t notes_len)
{
	struct nvq_id_ns *id = NULL;
	uint32_t *ids;
	unsigned int nr = 0, i;
	bool all = false;
	char why[128];
	int rc;

	ids = calloc(NVQ_MAX_NS, sizeof(*ids));
	c->ns = calloc(NVQ_MAX_NS, sizeof(*c->ns));
	if (!ids || !c->ns) {
		free(ids);
		return nvq_err(-ENOMEM, "out of memory");
	}
	if (c->id->nn) {
		rc = active_nsids(c, ids, &nr, &all, notes, notes_len);
		if (rc) {
			free(ids);
			return rc;
		}
	}
	for (i = 0; i < nr; i++) {
		struct nvq_ns *ns = &c->ns[c->nr_ns];
		const char *bad;

		if (!id)
			id = malloc(sizeof(*id));
		if (!id) {
			free(ids);
			return nvq_err(-ENOMEM, "out of memory");
		}
		rc = identify(c, NVQ_ID_CNS_NS, ids[i], id);
		if (rc) {
			note(notes, notes_len, "namespace %u skipped: %s",
			     ids[i], nvq_errmsg());
			continue;
		}
		/* Scanning every nsid: size 0 means inactive. */
		if (all && !id->nsze)
			continue;
		bad = ns_unusable(c, id, why, sizeof(why));
		if (!bad && c->iocss)
			bad = ns_not_nvm(c, ids[i], why, sizeof(why));
		if (bad) {
			note(notes, notes_len, "namespace %u skipped: %s",
			     ids[i], bad);
			continue;
		}
		ns->nsid = ids[i];
		ns->lbads = id->lbaf[flbas_index(id)].ds;
		ns->nlba = id->nsze;
		ns->max_blocks = MIN(c->max_xfer >> ns->lbads, 65536u);
		ns->id = id;
		id = NULL;
		if (ns->nsid < NVQ_NS_DIRECT)
			c->ns_direct[ns->nsid] = ns;
		c->nr_ns++;
	}
	free(id);
	free(ids);
	return 0;
}

static unsigned int queue_vector(const struct nvq_ctrl *c, unsigned int qid)
{
	unsigned int nv = c->nr_vectors;

	if (nv <= 1)
		return 0;
	if (nv > c->nr_queues)
		return qid;
	/* Not enough: vector 0 stays the admin queue's, the rest share. */
	return 1 + (qid - 1) % (nv - 1);
}

static int setup_dbbuf(struct nvq_ctrl *c, char *notes, size_t notes_len)
{
	uint64_t db_iova, ei_iova;
	int rc;

	if (!(c->id->oacs & NVQ_CTRL_OACS_DBBUF) || !c->opts.shadow_doorbells)
		return 0;
	/* One memory page each; the highest CQ doorbell must fit in it. */
	if (nvq_cq_db_index((uint16_t)c->nr_queues, c->dstrd) >=
	    NVQ_PAGE_SIZE / 4) {
		note(notes, notes_len,
		     "shadow doorbells not used: %u queues with stride %u do not fit one page",
		     c->nr_queues, c->dstrd);
		return 0;
	}
	c->dbbuf_db = nvq_mem_alloc(c->mem, NVQ_PAGE_SIZE, c->node, &db_iova);
	c->dbbuf_ei = nvq_mem_alloc(c->mem, NVQ_PAGE_SIZE, c->node, &ei_iova);
	if (!c->dbbuf_db || !c->dbbuf_ei)
		rc = -ENOMEM;
	else
		rc = simple_admin(c, nvq_admin_dbbuf, 0, 0, db_iova, ei_iova,
				  NULL);
	if (rc) {
		note(notes, notes_len, "shadow doorbells not used: %s",
		     nvq_errmsg());
		/* After a timeout the device may still write them: keep. */
		if (rc != -ETIMEDOUT) {
			if (c->dbbuf_db)
				nvq_mem_free(c->mem, c->dbbuf_db);
			if (c->dbbuf_ei)
				nvq_mem_free(c->mem, c->dbbuf_ei);
		}
		c->dbbuf_db = c->dbbuf_ei = NULL;
	}
	return 0;
}

static int setup_vectors(struct nvq_ctrl *c)
{
	unsigned int i;

	c->nr_vectors = c->t->nr_vectors ? c->t->nr_vectors : 1;
	c->vectors = calloc(c->nr_vectors, sizeof(*c->vectors));
	if (!c->vectors)
		return nvq_err(-ENOMEM, "out of memory");
	for (i = 0; i < c->nr_vectors; i++) {
		struct nvq_vector *v = &c->vectors[i];
		pthread_condattr_t ca;

		v->index = i;
		v->fd = -1;
		v->stop_fd = -1;
		v->cpu = c->t->ops->irq_cpu(c->t, i);
		pthread_mutex_init(&v->lock, NULL);
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&v->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	return 0;
}

static int create_queue(struct nvq_ctrl *c, unsigned int i, uint32_t depth)
{
	uint16_t qid = (uint16_t)(i + 1);
	unsigned int vec = queue_vector(c, qid);
	int cpu_node = nvq_cpu_node((int)(i % c->nr_cpus));
	int node = cpu_node < c->nr_nodes ? cpu_node : 0;
	struct nvq_queue_params p = {
		.t = c->t,
		.ctrl = c,
		.pools = &c->pools[node],
		.qid = qid,
		.depth = depth,
		.dstrd = c->dstrd,
		.dbbuf_db = c->dbbuf_db,
		.dbbuf_ei = c->dbbuf_ei,
		.lock_mode = c->opts.exclusive ? NVQ_LOCK_NONE : c->lock_mode,
		.mode = c->opts.mode,
		.node = node,
	};
	uint64_t sq_iova, cq_iova;
	struct nvq_queue *q;
	void *sq, *cq;
	uint32_t cdw11;
	int rc;

	sq = nvq_mem_alloc(c->mem, (size_t)depth * NVQ_SQE_SIZE, node,
			   &sq_iova);
	cq = sq ? nvq_mem_alloc(c->mem, (size_t)depth * NVQ_CQE_SIZE, node,
				&cq_iova) :
		  NULL;
	if (!sq || !cq) {
		char msg[384];

		rc = nvq_err(-ENOMEM, "cannot allocate I/O queue %u: %s", qid,
			     saved_msg(msg, sizeof(msg)));
		goto free_rings;
	}
	p.sq = sq;
	p.cq = cq;
	rc = nvq_queue_create(&p, &q);
	if (rc)
		goto free_rings;
	q->sq_mem = sq;
	q->cq_mem = cq;
	q->vec = &c->vectors[vec];
	/* Poll mode reaps on a spinning CPU: nothing to keep awake. */
	if (c->opts.mode != NVQ_MODE_POLL) {
		rc = nvq_qos_queue_create(c->qos, &q->stat_submitted,
					  &q->qos_idle, &q->qos);
		if (rc)
			goto free_queue;
	}

	cdw11 = NVQ_QUEUE_PHYS_CONTIG | vec << NVQ_CQ_IV_SHIFT;
	if (c->opts.mode != NVQ_MODE_POLL)
		cdw11 |= NVQ_CQ_IRQ_ENABLED;
	rc = simple_admin(c, nvq_admin_create_cq, (depth - 1) << 16 | qid,
			  cdw11, cq_iova, 0, NULL);
	if (rc)
		goto free_queue;
	rc = simple_admin(c, nvq_admin_create_sq, (depth - 1) << 16 | qid,
			  NVQ_QUEUE_PHYS_CONTIG | (uint32_t)qid
							  << NVQ_SQ_CQID_SHIFT,
			  sq_iova, 0, NULL);
	if (rc) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", nvq_errmsg());
		simple_admin(c, nvq_admin_delete_cq, qid, 0, 0, 0, NULL);
		nvq_err(rc, "%s", msg);
		goto free_queue;
	}
	c->queues[i] = q;
	return 0;

free_queue:
	nvq_queue_destroy(q);
free_rings:
	/* Rings of a queue the device may still know must stay mapped. */
	if (rc != -ETIMEDOUT) {
		if (sq)
			nvq_mem_free(c->mem, sq);
		if (cq)
			nvq_mem_free(c->mem, cq);
	}
	return rc;
}

/*
 * The CPUs each queue's QoS limit goes to from the start of a burst: the
 * CPU its completion thread is pinned to, and for a device behind a host
 * interrupt (vfio) the CPU that interrupt is routed to, which wakes to
 * signal the eventfd. The emulated device signals its eventfds from its
 * own thread: its vector CPUs only place completion threads. Waiters in
 * nvq_wait() and unpinned completion threads add their CPU as they go to
 * sleep (nvq_vector_sleep(), cthread.c).
 */
static int qos_cpus(struct nvq_ctrl *c)
{
	bool host_irq = strcmp(c->t->ops->name, "emu") != 0;
	unsigned int i;
	cpu_set_t set;
	int rc;

	for (i = 0; i < c->nr_queues; i++) {
		struct nvq_queue *q = c->queues[i];
		int cpu = q->vec->cpu;

		if (!q->qos)
			continue;
		CPU_ZERO(&set);
		if (cpu >= 0 && cpu < CPU_SETSIZE &&
		    (q->vec->pinned || host_irq))
			CPU_SET(cpu, &set);
		rc = nvq_qos_queue_set_cpus(q->qos, &set);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * The QoS knobs of nvq_opts. Lacking permission is not an error: I/O runs
 * without limits, and the reason goes to the notes of nvq_open().
 */
static int setup_qos(struct nvq_ctrl *c, char *notes, size_t notes_len)
{
	struct nvq_qos_info info;
	int rc;

	rc = nvq_qos_ctrl_create(&c->qos);
	if (rc) {
		c->qos = NULL;
		return rc;
	}
	rc = nvq_qos_set_timeout(c->qos, c->opts.cpu_lat_timeout_ms ?
						 c->opts.cpu_lat_timeout_ms :
						 NVQ_QOS_TIMEOUT_MS_DEFAULT);
	if (!rc)
		rc = nvq_qos_set_limit(c->qos, c->opts.cpu_lat_limit_us);
	if (rc || c->opts.cpu_lat_limit_us == NVQ_QOS_OFF)
		return rc;
	nvq_qos_info(c->qos, &info);
	if (info.status[0])
		note(notes, notes_len, "CPU latency limit not applied: %s",
		     info.status);
	return 0;
}

static int setup_io_queues(struct nvq_ctrl *c, char *notes, size_t notes_len)
{
	unsigned int want, granted, i;
	uint32_t result = 0, depth;
	int rc;

	want = c->opts.nr_queues ? c->opts.nr_queues : c->nr_cpus;
	want = MIN(want, NVQ_MAX_QUEUES);
	rc = simple_admin(c, nvq_admin_set_features, NVQ_FEAT_NUM_QUEUES,
			  NVQ_NUM_QUEUES(want, want), 0, 0, &result);
	if (rc)
		return rc;
	granted = MIN((result & 0xffff) + 1, (result >> 16) + 1);
	c->nr_queues = MIN(want, granted);

	depth = c->opts.queue_depth ? c->opts.queue_depth : 256;
	depth = MIN(depth, NVQ_CAP_MQES(c->cap) + 1);

	rc = setup_vectors(c);
	if (rc)
		return rc;
	c->admin_owns_vec0 = c->opts.mode == NVQ_MODE_POLL || c->nr_vectors > 1;
	rc = setup_dbbuf(c, notes, notes_len);
	if (rc)
		return rc;

	c->queues = calloc(c->nr_queues, sizeof(*c->queues));
	if (!c->queues)
		return nvq_err(-ENOMEM, "out of memory");
	for (i = 0; i < c->nr_queues; i++) {
		rc = create_queue(c, i, depth);
		if (rc)
			return rc;
	}

	/* Vector -> queues, for waiters and completion threads. */
	for (i = 0; i < c->nr_queues; i++)
		c->queues[i]->vec->nr_queues++;
	for (i = 0; i < c->nr_vectors; i++) {
		struct nvq_vector *v = &c->vectors[i];

		if (!v->nr_queues)
			continue;
		v->queues = calloc(v->nr_queues, sizeof(*v->queues));
		if (!v->queues)
			return nvq_err(-ENOMEM, "out of memory");
		v->nr_queues = 0;
		if (c->opts.mode != NVQ_MODE_POLL) {
			v->fd = c->t->ops->irq_fd(c->t, i);
			if (v->fd < 0)
				return nvq_err(
					-ENODEV,
					"interrupt vector %u has no eventfd",
					i);
		}
	}
	for (i = 0; i < c->nr_queues; i++) {
		struct nvq_vector *v = c->queues[i]->vec;

		v->queues[v->nr_queues++] = c->queues[i];
	}
	if (c->opts.mode == NVQ_MODE_THREAD) {
		c->threads_started = true;
		for (i = 0; i < c->nr_vectors; i++) {
			if (!c->vectors[i].nr_queues)
				continue;
			rc = nvq_cthread_start(&c->vectors[i]);
			if (rc)
				return rc;
		}
	}
	return qos_cpus(c);
}

/* ------------------------------------------------------------------ */
/* Shutdown and teardown                                               */
/* ------------------------------------------------------------------ */

static void shutdown_ctrl(struct nvq_ctrl *c)
{
	struct nvq_transport *t = c->t;
	uint32_t rtd3e = c->id ? c->id->rtd3e : 0;
	uint32_t ms = 5000, cc;

	/* RTD3E in us, clamped to 5..60 s as the kernel does. */
	if (rtd3e)
		ms = MIN(MAX(rtd3e / 1000, 5000u), 60000u);
	cc = t->ops->reg_read32(t, NVQ_REG_CC);
	if (cc == NVQ_REG_GONE32)
		return;
	/* Never got ready (fatal status at enable): nothing to flush. */
	if (!(csts(c) & NVQ_CSTS_RDY)) {
		disable(c);
		return;
	}
	cc = (cc & ~NVQ_CC_SHN_MASK) | NVQ_CC_SHN_NORMAL;
	t->ops->reg_write32(t, NVQ_REG_CC, cc);
	if (!wait_csts(c, NVQ_CSTS_SHST_MASK, NVQ_CSTS_SHST_CMPLT, ms, false,
		       "shutting down"))
		return;
	/* No orderly shutdown: a reset at least stops all DMA. */
	disable(c);
}

static void teardown(struct nvq_ctrl *c)
{
	bool alive = c->enabled && c->aq;
	unsigned int i;

	if (c->vectors)
		for (i = 0; i < c->nr_vectors; i++)
			nvq_cthread_stop(&c->vectors[i]);
	/*
	 * No more I/O: put the CPUs' PM QoS settings back now rather than
	 * after a shutdown that may take seconds.
	 */
	nvq_qos_ctrl_destroy(c->qos);
	c->qos = NULL;

	if (alive && csts(c) == NVQ_REG_GONE32)
		alive = false;
	for (i = 0; i < c->nr_queues; i++)
		if (c->queues[i])
			nvq_queue_reap(c->queues[i], 0);
	/*
	 * Delete SQs first: the device aborts what they still hold with
	 * "Aborted due to SQ Deletion" CQEs (-ECANCELED), reaped before the
	 * CQs go. After one failure, assume the admin queue is no use.
	 */
	for (i = 0; alive && i < c->nr_queues; i++)
		if (c->queues[i] &&
		    simple_admin(c, nvq_admin_delete_sq, c->queues[i]->qid, 0,
				 0, 0, NULL) &&
		    csts(c) == NVQ_REG_GONE32)
			alive = false;
	for (i = 0; i < c->nr_queues; i++)
		if (c->queues[i])
			nvq_queue_reap(c->queues[i], 0);
	for (i = 0; alive && i < c->nr_queues; i++)
		if (c->queues[i] &&
		    simple_admin(c, nvq_admin_delete_cq, c->queues[i]->qid, 0,
				 0, 0, NULL) &&
		    csts(c) == NVQ_REG_GONE32)
			alive = false;
	if (c->enabled && csts(c) != NVQ_REG_GONE32)
		shutdown_ctrl(c);

	/* The device no longer completes or DMAs: cancel what is left. */
	for (i = 0; i < c->nr_queues; i++)
		if (c->queues[i])
			nvq_queue_cancel(c->queues[i]);
	if (c->aq)
		nvq_queue_cancel(c->aq);

	for (i = 0; i < c->nr_queues; i++) {
		struct nvq_queue *q = c->queues[i];

		if (!q)
			continue;
		nvq_mem_free(c->mem, q->sq_mem);
		nvq_mem_free(c->mem, q->cq_mem);
		nvq_queue_destroy(q);
	}
	free(c->queues);
	if (c->vectors) {
		for (i = 0; i < c->nr_vectors; i++) {
			pthread_mutex_destroy(&c->vectors[i].lock);
			pthread_cond_destroy(&c->vectors[i].cond);
			free(c->vectors[i].queues);
		}
		free(c->vectors);
	}
	nvq_queue_destroy(c->aq);
	if (c->pools) {
		for (i = 0; i < (unsigned int)c->nr_nodes; i++)
			nvq_pools_destroy(&c->pools[i]);
		free(c->pools);
	}
	/* Rings, shadow pages and abandoned admin buffers go with it. */
	if (c->mem)
		nvq_mem_destroy(c->mem);
	if (c->t)
		c->t->ops->close(c->t);
	if (c->ns)
		for (i = 0; i < c->nr_ns; i++)
			free(c->ns[i].id);
	free(c->ns);
	free(c->id);
	free(c->uri);
	pthread_mutex_destroy(&c->admin_lock);
	free(c);
}

/*
 * Copy the caller's options, whatever release it was built with: the
 * fields it knows, defaults for the rest. A newer caller's fields that
 * this library does not know must be zero (the clone3() rule), so that an
 * option it relies on is never silently ignored.
 */
static int copy_opts(struct nvq_opts *dst, const struct nvq_opts *src)
{
	size_t n = src->size, i;

	/* nvq_open() must not read past what the caller owns. */

	if (n != NVQ_OPTS_SIZE_VER0 && n < NVQ_OPTS_SIZE_VER1)
		return nvq_err(
			-EINVAL,
			"nvq_open: opts.size %zu is not a released size of struct nvq_opts (set up opts with nvq_opts_init())",
			n);
	for (i = sizeof(*dst); i < n; i++)
		if (((const unsigned char *)src)[i])
			return nvq_err(
				-E2BIG,
				"nvq_open: opts has fields this library (%s) does not know (byte %zu of %zu is set); upgrade libnvq",
				nvq_version(), i, n);
	nvq_opts_init(dst);
	memcpy(dst, src, MIN(n, sizeof(*dst)));
	dst->size = sizeof(*dst);
	return 0;
}

static int check_opts(const struct nvq_opts *o)
{
	if (o->mode != NVQ_MODE_POLL && o->mode != NVQ_MODE_WAIT &&
	    o->mode != NVQ_MODE_THREAD)
		return nvq_err(-EINVAL, "unknown completion mode %d", o->mode);
	if (o->queue_depth == 1 || o->queue_depth > 65536)
		return nvq_err(
			-EINVAL,
			"queue depth %u is out of range (2..65536, 0 = default)",
			o->queue_depth);
	if (o->nr_queues > 65535)
		return nvq_err(-EINVAL,
			       "%u queues is out of range (at most 65535)",
			       o->nr_queues);
	if (o->cpu_lat_limit_us != NVQ_QOS_OFF &&
	    o->cpu_lat_limit_us != NVQ_QOS_AUTO &&
	    (o->cpu_lat_limit_us < 0 ||
	     o->cpu_lat_limit_us > NVQ_QOS_LIMIT_MAX))
		return nvq_err(
			-EINVAL,
			"CPU latency limit %d is out of range (-1 off, -2 auto, 0..%d us)",
			o->cpu_lat_limit_us, NVQ_QOS_LIMIT_MAX);
	if (o->cpu_lat_timeout_ms > NVQ_QOS_TIMEOUT_MS_MAX)
		return nvq_err(
			-EINVAL,
			"CPU latency timeout %u ms is out of range (1..%d, 0 = default)",
			o->cpu_lat_timeout_ms, NVQ_QOS_TIMEOUT_MS_MAX);
	return 0;
}

/*
 * The lock mode of shared queues. One lock for both halves exists only in
 * the benchmark build of the library (NVQ_BENCH_SINGLE_LOCK), so that the
 * library applications link pays nothing for it on the completion path.
 */
static int lock_mode(unsigned int flags, enum nvq_lock_mode *mode)
{
	*mode = NVQ_LOCK_SPLIT;
	if (!(flags & NVQ_OPEN_SINGLE_LOCK))
		return 0;
#ifdef NVQ_BENCH_SINGLE_LOCK
	*mode = NVQ_LOCK_SINGLE;
	return 0;
#else
	return nvq_err(-EOPNOTSUPP,
		       "single-lock queues exist only in the benchmark build");
#endif
}

/* Tear down a half-open controller, keeping the message of the failure. */
static int fail_open(struct nvq_ctrl *c, int rc)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", nvq_errmsg());
	teardown(c);
	return nvq_err(rc, "%s", msg);
}

int nvq_open_flags(const char *uri, const struct nvq_opts *opts,
		   unsigned int flags, struct nvq_ctrl **ctrlp)
{
	struct nvq_ctrl *c;
	char notes[NVQ_NOTES_LEN] = "";
	long ncpu;
	int rc = 0, i;

	if (!ctrlp)
		return nvq_err(-EINVAL, "nvq_open: NULL ctrl pointer");
	*ctrlp = NULL;
	if (!uri)
		return nvq_err(-EINVAL, "nvq_open: NULL URI");
	c = calloc(1, sizeof(*c));
	if (!c)
		return nvq_err(-ENOMEM, "out of memory");
	pthread_mutex_init(&c->admin_lock, NULL);
	if (opts)
		rc = copy_opts(&c->opts, opts);
	else
		nvq_opts_init(&c->opts);
	if (!rc)
		rc = check_opts(&c->opts);
	if (!rc)
		rc = lock_mode(flags, &c->lock_mode);
	if (rc)
		goto fail;
	c->uid = __atomic_fetch_add(&next_uid, 1, __ATOMIC_RELAXED);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	c->nr_cpus = ncpu > 0 ? (unsigned int)ncpu : 1;
	c->uri = strdup(uri);
	if (!c->uri) {
		rc = nvq_err(-ENOMEM, "out of memory");
		goto fail;
	}

	rc = nvq_transport_open(uri, &c->t);
	if (rc) {
		c->t = NULL;
		goto fail;
	}
	c->nr_nodes = nvq_numa_nodes();
	c->node = c->t->numa_node >= 0 && c->t->numa_node < c->nr_nodes ?
			  c->t->numa_node :
			  0;
	rc = nvq_mem_create(c->t, &c->mem);
	if (rc) {
		c->mem = NULL;
		goto fail;
	}
	c->pools = calloc((size_t)c->nr_nodes, sizeof(*c->pools));
	if (!c->pools) {
		rc = nvq_err(-ENOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < c->nr_nodes; i++) {
		rc = nvq_pools_create(c->mem, i, &c->pools[i]);
		if (rc)
			goto fail;
	}

	c->cap = c->t->ops->reg_read64(c->t, NVQ_REG_CAP);
	if (c->cap == NVQ_REG_GONE64) {
		rc = nvq_err(-ENODEV,
			     "%s: controller is gone (CAP reads all-ones)",
			     uri);
		goto fail;
	}
	c->vs = c->t->ops->reg_read32(c->t, NVQ_REG_VS);
	c->dstrd = NVQ_CAP_DSTRD(c->cap);
	c->ready_ms = ready_timeout_ms(c);
	c->admin_timeout_ms = c->opts.admin_timeout_ms ?
				      c->opts.admin_timeout_ms :
				      MAX(cap_timeout_ms(c->cap), 5000u);
	c->admin_owns_vec0 = true;
	rc = check_cap(c);
	if (!rc)
		rc = disable(c);
	if (!rc)
		rc = enable(c);
	if (!rc)
		rc = identify_ctrl(c);
	if (!rc)
		rc = scan_namespaces(c, notes, sizeof(notes));
	if (!rc)
		rc = setup_qos(c, notes, sizeof(notes));
	if (!rc)
		rc = setup_io_queues(c, notes, sizeof(notes));
	if (rc)
		goto fail;
	/* What was skipped is worth telling, though nvq_open() succeeded. */
	memcpy(c->notes, notes, sizeof(c->notes));
	nvq_err_clear();
	*ctrlp = c;
	return 0;

fail:
	return fail_open(c, rc);
}

int nvq_open(const char *uri, const struct nvq_opts *opts,
	     struct nvq_ctrl **ctrl)
{
	return nvq_open_flags(uri, opts, 0, ctrl);
}

void nvq_close(struct nvq_ctrl *ctrl)
{
	if (ctrl)
		teardown(ctrl);
}

const char *nvq_ctrl_notes(const struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->notes : "";
}

struct nvq_qos_ctrl *nvq_ctrl_qos(struct nvq_ctrl *ctrl)
{
	return ctrl ? ctrl->qos : NULL;
}

struct nvq_qos_queue *nvq_queue_qos(struct nvq_queue *q)
{
	return q ? q->qos : NULL;
}
