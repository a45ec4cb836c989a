// SPDX-License-Identifier: MIT
/*
 * The admin command engine: one synchronous admin command at a time per
 * caller (admin_lock), bounded by the admin timeout, with the buffer of a
 * timed-out command kept until the device is done with it. Identify and
 * the other admin commands of bring-up are built on nvq_ctrl_admin().
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"
#include "internal.h"

__thread bool nvq_admin_in_reset;

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

static void admin_unlock(struct nvq_ctrl *c)
{
	if (!nvq_admin_in_reset)
		pthread_mutex_unlock(&c->admin_lock);
}

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
 * admin_lock, through the transport (on PCIe the admin CQ; how it sleeps
 * between looks is the transport's business too).
 */
static int admin_wait(struct nvq_ctrl *c, struct nvq_admin_ctx *ctx)
{
	uint64_t deadline =
		nvq_now_ns() + (uint64_t)__atomic_load_n(&c->admin_timeout_ms,
							 __ATOMIC_RELAXED) *
				       1000000ull;
	unsigned int round = 0, attempt = 0;
	int rc;

	for (;;) {
		uint32_t v;
		uint64_t now;

		c->ops->admin_reap(c);
		if (ctx->done)
			return 0;
		rc = __atomic_load_n(&c->failed, __ATOMIC_ACQUIRE);
		if (rc)
			return nvq_err(rc, "the controller failed: %s",
				       c->fail_msg);
		/* A reset empties the admin queue: this one is lost. */
		if (!nvq_admin_in_reset &&
		    __atomic_load_n(&c->resetting, __ATOMIC_ACQUIRE))
			return nvq_err(-EIO,
				       "aborted by a reset of the controller");
		if (round++ < 32) {
			sched_yield();
			continue;
		}
		v = nvq_ctrl_csts(c);
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
		c->ops->admin_sleep(c, attempt++,
				    (deadline - now) / 1000000 + 1);
	}
}

int nvq_ctrl_admin(struct nvq_ctrl *c, struct nvq_sqe *sqe, void **bufp,
		   size_t len, uint32_t *result, uint16_t *status)
{
	void *buf = bufp ? *bufp : NULL;
	struct nvq_admin_ctx *ctx = NULL;
	uint8_t opc = sqe->opcode;
	struct nvq_cpl cpl;
	unsigned int i;
	int rc;

	if (status)
		*status = 0;
	/* A reset holds admin_lock while it runs: others wait for it. */
	if (!nvq_admin_in_reset)
		pthread_mutex_lock(&c->admin_lock);
	for (i = 0; i < NVQ_ADMIN_DEPTH; i++) {
		if (!c->actx[i].busy) {
			ctx = &c->actx[i];
			break;
		}
	}
	if (!ctx) {
		admin_unlock(c);
		return nvq_err(
			-EBUSY,
			"%s: every admin slot is held by a timed-out command",
			admin_name(opc));
	}
	ctx->ctrl = c;
	ctx->busy = true;
	ctx->done = false;
	ctx->abandoned = false;
	ctx->buf = NULL;
	rc = c->ops->admin_submit(c, sqe, buf, len, admin_done, ctx);
	if (rc) {
		ctx->busy = false;
		admin_unlock(c);
		if (rc == -ENODEV)
			return nvq_err(rc, "%s: no admin queue",
				       admin_name(opc));
		if (rc == -EBUSY)
			return nvq_err(
				rc,
				"%s: every admin slot is held by a timed-out command",
				admin_name(opc));
		return nvq_err(rc, "%s: cannot map its %zu-byte buffer",
			       admin_name(opc), len);
	}

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
		admin_unlock(c);
		/*
		 * An admin command that times out means the controller
		 * needs a reset, as nvme_timeout() decides for the admin
		 * queue (the reset's own commands fail the reset instead).
		 * Not an Asynchronous Event Request: the device holds it
		 * until an event, and a timeout there is no fault.
		 */
		if (rc == -ETIMEDOUT && !nvq_admin_in_reset &&
		    opc != nvq_admin_async_event)
			nvq_ctrl_request_reset(c, -EIO,
					       "an admin command timed out");
		if (rc == -ETIMEDOUT)
			return nvq_err(rc,
				       "%s (opcode %#x) timed out after %u ms",
				       admin_name(opc), opc,
				       __atomic_load_n(&c->admin_timeout_ms,
						       __ATOMIC_RELAXED));
		return rc;
	}
	/* Copied while the slot is ours: the next command may take it. */
	cpl = ctx->cpl;
	ctx->busy = false;
	admin_unlock(c);
	if (result)
		*result = cpl.result;
	if (status)
		*status = cpl.status;
	if (cpl.err)
		return nvq_err(cpl.err, "%s (opcode %#x) failed: %s",
			       admin_name(opc), opc,
			       nvq_status_str(cpl.status));
	return 0;
}

int nvq_ctrl_identify(struct nvq_ctrl *c, uint8_t cns, uint32_t nsid, void *out,
		      uint16_t *status)
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

int nvq_ctrl_admin_simple(struct nvq_ctrl *c, uint8_t opc, uint32_t cdw10,
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
