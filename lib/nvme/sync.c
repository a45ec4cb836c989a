// SPDX-License-Identifier: MIT
/*
 * Synchronous helpers (submit and wait, any buffer) and the admin
 * passthrough. Not the hot path: they may allocate bounce buffers and
 * sleep.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>

#include "ctrl.h"
#include "queue.h"

/* Requests of one sync call in flight at once, at most. */
#define SYNC_CMDS 4

struct sync_wait {
	bool use_cond; /* THREAD mode: the callback runs on another thread */
	int done;
	struct nvq_cpl cpl;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void sync_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct sync_wait *w = arg;

	w->cpl = *cpl;
	if (w->use_cond) {
		pthread_mutex_lock(&w->lock);
		w->done = 1;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
	} else {
		__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	}
}

/* Reap (or let the completion thread reap) a little before retrying. */
static void make_progress(struct nvq_queue *q)
{
	if (q->mode == NVQ_MODE_POLL) {
		if (!nvq_queue_reap(q, 0))
			sched_yield();
	} else if (q->mode == NVQ_MODE_WAIT) {
		nvq_wait(q, 1, 5);
	} else {
		sched_yield();
	}
}

static void wait_done(struct nvq_queue *q, struct sync_wait *w)
{
	if (w->use_cond) {
		pthread_mutex_lock(&w->lock);
		while (!w->done)
			pthread_cond_wait(&w->cond, &w->lock);
		pthread_mutex_unlock(&w->lock);
		return;
	}
	/*
	 * Another thread sharing the queue may reap our completion while we
	 * sleep on the interrupt, hence the bounded sleeps.
	 */
	while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
		make_progress(q);
}

enum sync_op { OP_READ, OP_WRITE, OP_FLUSH, OP_ZEROES, OP_DEALLOC };

static const char *const op_names[] = { "read", "write", "flush",
					"write zeroes", "deallocate" };

static int submit(struct nvq_queue *q, enum sync_op op, uint32_t nsid,
		  void *buf, uint64_t slba, uint32_t nlb, struct sync_wait *w)
{
	switch (op) {
	case OP_READ:
		return nvq_read(q, nsid, buf, slba, nlb, 0, sync_cb, w);
	case OP_WRITE:
		return nvq_write(q, nsid, buf, slba, nlb, 0, sync_cb, w);
	case OP_FLUSH:
		return nvq_flush(q, nsid, 0, sync_cb, w);
	case OP_ZEROES:
		return nvq_write_zeroes(q, nsid, slba, nlb, 0, sync_cb, w);
	case OP_DEALLOC:
	default:
		return nvq_deallocate(q, nsid, slba, nlb, 0, sync_cb, w);
	}
}

/* Submit one request (retrying while the queue is full) and wait. */
static int run_one(struct nvq_queue *q, enum sync_op op, uint32_t nsid,
		   void *buf, uint64_t slba, uint32_t nlb, uint16_t *status)
{
	struct sync_wait w = { .use_cond = q->mode == NVQ_MODE_THREAD };
	int rc;

	if (w.use_cond) {
		pthread_mutex_init(&w.lock, NULL);
		pthread_cond_init(&w.cond, NULL);
	}
	while ((rc = submit(q, op, nsid, buf, slba, nlb, &w)) == -EAGAIN)
		make_progress(q);
	if (!rc) {
		wait_done(q, &w);
		if (status)
			*status = w.cpl.status;
		rc = w.cpl.err;
		if (rc)
			nvq_err(rc,
				"%s of %u blocks at %llu on namespace %u failed: %s",
				op_names[op], nlb, (unsigned long long)slba,
				nsid,
				rc == -EIO ? nvq_status_str(w.cpl.status) :
					     "cancelled");
	}
	if (w.use_cond) {
		pthread_mutex_destroy(&w.lock);
		pthread_cond_destroy(&w.cond);
	}
	return rc;
}

static struct nvq_queue *sync_queue(struct nvq_ctrl *ctrl)
{
	struct nvq_queue *q = ctrl ? nvq_ctrl_queue_for_cpu(ctrl) : NULL;

	if (!ctrl)
		nvq_err(-EINVAL, "NULL controller");
	else if (!q)
		nvq_err(-ENODEV, "the controller has no I/O queues");
	return q;
}

static int rw_sync(struct nvq_ctrl *ctrl, enum sync_op op, uint32_t nsid,
		   void *buf, uint64_t slba, uint32_t nlb, uint16_t *status)
{
	struct nvq_queue *q = sync_queue(ctrl);
	const struct nvq_ns *ns;
	uint64_t iova, chunk, done;
	void *bounce = NULL;
	size_t len;
	int rc = 0;

	if (status)
		*status = 0;
	if (!q)
		return ctrl ? -ENODEV : -EINVAL;
	ns = nvq_ctrl_ns(ctrl, nsid);
	if (!ns)
		return nvq_ns_absent(ctrl, nsid);
	if (!nlb || slba >= ns->nlba || nlb > ns->nlba - slba)
		return nvq_err(
			-ERANGE,
			"blocks %llu..%llu are outside namespace %u (%llu blocks)",
			(unsigned long long)slba,
			(unsigned long long)slba + nlb - 1, nsid,
			(unsigned long long)ns->nlba);
	if (!buf)
		return nvq_err(-EINVAL, "NULL buffer");
	len = (size_t)nlb * ns->blk_bytes;
	/* A few commands' worth per request keeps -E2BIG and bounce
	 * buffers small whatever the caller asks for. */
	chunk = (uint64_t)ns->max_blocks * MIN(q->nr_tags, SYNC_CMDS);
	if (((uintptr_t)buf & 3) ||
	    nvq_mem_iova(ctrl->mem, NULL, buf, len, &iova)) {
		bounce = nvq_mem_alloc(ctrl->mem,
				       (size_t)MIN(chunk, nlb) * ns->blk_bytes,
				       -1, NULL);
		if (!bounce)
			return nvq_err(-ENOMEM,
				       "no DMA memory for a bounce buffer");
	}
	for (done = 0; done < nlb && !rc; done += chunk) {
		uint32_t k = (uint32_t)MIN(chunk, nlb - done);
		char *p = (char *)buf + done * ns->blk_bytes;
		void *io = bounce ? bounce : p;

		if (bounce && op == OP_WRITE)
			memcpy(bounce, p, (size_t)k * ns->blk_bytes);
		rc = run_one(q, op, nsid, io, slba + done, k, status);
		if (!rc && bounce && op == OP_READ)
			memcpy(p, bounce, (size_t)k * ns->blk_bytes);
	}
	if (bounce)
		nvq_mem_free(ctrl->mem, bounce);
	return rc;
}

int nvq_read_sync(struct nvq_ctrl *ctrl, uint32_t nsid, void *buf,
		  uint64_t slba, uint32_t nlb, uint16_t *status)
{
	return rw_sync(ctrl, OP_READ, nsid, buf, slba, nlb, status);
}

int nvq_write_sync(struct nvq_ctrl *ctrl, uint32_t nsid, const void *buf,
		   uint64_t slba, uint32_t nlb, uint16_t *status)
{
	/* Only read from: the cast serves the shared read/write code. */
	return rw_sync(ctrl, OP_WRITE, nsid, (void *)(uintptr_t)buf, slba, nlb,
		       status);
}

int nvq_flush_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint16_t *status)
{
	struct nvq_queue *q = sync_queue(ctrl);

	if (status)
		*status = 0;
	if (!q)
		return ctrl ? -ENODEV : -EINVAL;
	return run_one(q, OP_FLUSH, nsid, NULL, 0, 0, status);
}

int nvq_write_zeroes_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint64_t slba,
			  uint32_t nlb, uint16_t *status)
{
	struct nvq_queue *q = sync_queue(ctrl);
	const struct nvq_ns *ns;
	uint64_t chunk, done;
	int rc = 0;

	if (status)
		*status = 0;
	if (!q)
		return ctrl ? -ENODEV : -EINVAL;
	ns = nvq_ctrl_ns(ctrl, nsid);
	if (!ns || !nlb || slba >= ns->nlba || nlb > ns->nlba - slba)
		/* nvq_write_zeroes() words the error. */
		return run_one(q, OP_ZEROES, nsid, NULL, slba, nlb, status);
	/* Commands are WZSL- or MDTS-sized (io.c): a few per request. */
	chunk = (uint64_t)ns->wz_blocks * MIN(q->nr_tags, SYNC_CMDS);
	for (done = 0; done < nlb && !rc; done += chunk)
		rc = run_one(q, OP_ZEROES, nsid, NULL, slba + done,
			     (uint32_t)MIN(chunk, nlb - done), status);
	return rc;
}

int nvq_deallocate_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint64_t slba,
			uint32_t nlb, uint16_t *status)
{
	struct nvq_queue *q = sync_queue(ctrl);
	uint64_t per_range, ranges, chunk, done;
	int rc = 0;

	if (status)
		*status = 0;
	if (!q)
		return ctrl ? -ENODEV : -EINVAL;
	/* DMRSL/DMRL may make one request many commands: a few at a time. */
	nvq_dsm_shape(ctrl, &per_range, &ranges);
	chunk = per_range * ranges * MIN(q->nr_tags, SYNC_CMDS);
	if (!nlb || chunk >= nlb)
		return run_one(q, OP_DEALLOC, nsid, NULL, slba, nlb, status);
	for (done = 0; done < nlb && !rc; done += chunk)
		rc = run_one(q, OP_DEALLOC, nsid, NULL, slba + done,
			     (uint32_t)MIN(chunk, nlb - done), status);
	return rc;
}

int nvq_admin(struct nvq_ctrl *ctrl, const struct nvq_sqe *cmd, void *buf,
	      size_t len, uint32_t *result, uint16_t *status)
{
	/* Opcode bits 1:0: 01b host to controller, 10b controller to host,
	 * 11b both. */
	unsigned int dir = cmd ? cmd->opcode & 3 : 0;
	struct nvq_sqe sqe;
	void *bounce = NULL;
	int rc;

	if (status)
		*status = 0;
	if (!ctrl || !cmd)
		return nvq_err(-EINVAL,
			       "nvq_admin: NULL controller or command");
	if (len && !buf)
		return nvq_err(-EINVAL, "nvq_admin: NULL buffer of %zu bytes",
			       len);
	if (len && !dir)
		return nvq_err(
			-EINVAL,
			"nvq_admin: opcode %#x transfers no data (bits 1:0 are 00b) but a %zu-byte buffer was given",
			cmd->opcode, len);
	if (len > ctrl->max_xfer)
		return nvq_err(
			-EINVAL,
			"nvq_admin: %zu bytes exceed the controller's maximum transfer of %u",
			len, ctrl->max_xfer);
	if (len) {
		bounce = nvq_mem_alloc(ctrl->mem, len, -1, NULL);
		if (!bounce)
			return nvq_err(
				-ENOMEM,
				"no DMA memory for a %zu-byte admin buffer",
				len);
		if (dir & 1)
			memcpy(bounce, buf, len);
	}
	sqe = *cmd;
	rc = nvq_ctrl_admin(ctrl, &sqe, &bounce, len, result, status);
	if (!rc && (dir & 2) && bounce)
		memcpy(buf, bounce, len);
	/* Format NVM, Sanitize: the namespaces' format may have changed. */
	if (!rc && (cmd->opcode == 0x80 || cmd->opcode == 0x84))
		nvq_ns_refresh(ctrl);
	/* NULL after a timeout: the controller keeps it until completion. */
	if (bounce)
		nvq_mem_free(ctrl->mem, bounce);
	return rc;
}

/* One metadata or raw request: submit (retrying while full) and wait. */
static int io_sync(struct nvq_ctrl *ctrl, int write, const struct nvq_io *io,
		   const struct nvq_sqe *sqe, void *buf, size_t len, void *md,
		   size_t md_len, uint32_t *result, uint16_t *status)
{
	struct nvq_queue *q = sync_queue(ctrl);
	struct sync_wait w = { 0 };
	int rc;

	if (status)
		*status = 0;
	if (!q)
		return ctrl ? -ENODEV : -EINVAL;
	w.use_cond = q->mode == NVQ_MODE_THREAD;
	if (w.use_cond) {
		pthread_mutex_init(&w.lock, NULL);
		pthread_cond_init(&w.cond, NULL);
	}
	for (;;) {
		if (io)
			rc = write ? nvq_write_io(q, io, sync_cb, &w) :
				     nvq_read_io(q, io, sync_cb, &w);
		else
			rc = nvq_io_raw(q, sqe, buf, len, md, md_len, 0,
					sync_cb, &w);
		if (rc != -EAGAIN)
			break;
		make_progress(q);
	}
	if (!rc) {
		wait_done(q, &w);
		if (status)
			*status = w.cpl.status;
		if (result)
			*result = w.cpl.result;
		rc = w.cpl.err;
		if (rc)
			nvq_err(rc, "I/O command failed: %s",
				rc == -EIO ? nvq_status_str(w.cpl.status) :
					     "cancelled");
	}
	if (w.use_cond) {
		pthread_mutex_destroy(&w.lock);
		pthread_cond_destroy(&w.cond);
	}
	return rc;
}

int nvq_read_io_sync(struct nvq_ctrl *ctrl, const struct nvq_io *io,
		     uint16_t *status)
{
	return io_sync(ctrl, 0, io, NULL, NULL, 0, NULL, 0, NULL, status);
}

int nvq_write_io_sync(struct nvq_ctrl *ctrl, const struct nvq_io *io,
		      uint16_t *status)
{
	return io_sync(ctrl, 1, io, NULL, NULL, 0, NULL, 0, NULL, status);
}

/* A DMA copy of @p when it is not DMA memory (NULL: use @p itself). */
static int bounce_for(struct nvq_ctrl *ctrl, void *p, size_t len, void **bounce)
{
	uint64_t iova;

	*bounce = NULL;
	if (!p || !len ||
	    (!((uintptr_t)p & 3) &&
	     !nvq_mem_iova(ctrl->mem, NULL, p, len, &iova)))
		return 0;
	*bounce = nvq_mem_alloc(ctrl->mem, len, -1, NULL);
	if (!*bounce)
		return nvq_err(-ENOMEM, "no DMA memory for a bounce buffer");
	memcpy(*bounce, p, len);
	return 0;
}

int nvq_io_raw_sync(struct nvq_ctrl *ctrl, const struct nvq_sqe *cmd, void *buf,
		    size_t len, void *md, size_t md_len, uint32_t *result,
		    uint16_t *status)
{
	void *bb = NULL, *mb = NULL;
	int rc;

	if (status)
		*status = 0;
	if (!ctrl || !cmd)
		return nvq_err(-EINVAL, "NULL controller or command");
	if (!buf)
		len = 0;
	if (!md)
		md_len = 0;
	if (len > ctrl->max_xfer)
		return nvq_err(-EINVAL,
			       "%zu bytes exceed the maximum transfer of %u",
			       len, ctrl->max_xfer);
	rc = bounce_for(ctrl, buf, len, &bb);
	if (!rc)
		rc = bounce_for(ctrl, md, md_len, &mb);
	if (!rc)
		rc = io_sync(ctrl, 0, NULL, cmd, bb ? bb : buf, len,
			     mb ? mb : md, md_len, result, status);
	/* Controller to host: the data comes back. */
	if (!rc && (cmd->opcode & 3) == 2) {
		if (bb)
			memcpy(buf, bb, len);
		if (mb)
			memcpy(md, mb, md_len);
	}
	if (bb)
		nvq_mem_free(ctrl->mem, bb);
	if (mb)
		nvq_mem_free(ctrl->mem, mb);
	return rc;
}
