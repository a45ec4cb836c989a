// SPDX-License-Identifier: MIT
/*
 * The PCIe transport at the controller level (struct nvq_ctrl_ops for the
 * core, as the kernel's pci.c is for nvme core): registers in BAR0, the
 * admin queue's rings in AQA/ASQ/ACQ, I/O queue pairs created with Create
 * I/O CQ/SQ, shadow doorbells (Doorbell Buffer Config), and MSI-X vectors
 * with their waiters and completion threads. Both backends, emu and vfio,
 * are reached through struct nvq_transport (transport.h).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ctrl.h"
#include "internal.h"
#include "prp.h"
#include "qos.h"

static uint32_t pcie_reg_read32(struct nvq_ctrl *c, uint32_t off)
{
	return c->t->ops->reg_read32(c->t, off);
}

static uint64_t pcie_reg_read64(struct nvq_ctrl *c, uint32_t off)
{
	return c->t->ops->reg_read64(c->t, off);
}

static void pcie_reg_write32(struct nvq_ctrl *c, uint32_t off, uint32_t val)
{
	c->t->ops->reg_write32(c->t, off, val);
}

/* The admin queue's rings, given to the controller before CC.EN. */
static int pcie_admin_queue_create(struct nvq_ctrl *c)
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
	int rc;

	c->asq_mem = nvq_mem_alloc(c->mem, NVQ_ADMIN_DEPTH * NVQ_SQE_SIZE,
				   c->node, &asq_iova);
	if (c->asq_mem)
		c->acq_mem = nvq_mem_alloc(c->mem,
					   NVQ_ADMIN_DEPTH * NVQ_CQE_SIZE,
					   c->node, &acq_iova);
	if (!c->asq_mem || !c->acq_mem)
		return nvq_err(-ENOMEM, "cannot allocate the admin queue: %s",
			       nvq_errmsg_copy(msg, sizeof(msg)));
	p.sq = c->asq_mem;
	p.cq = c->acq_mem;
	rc = nvq_queue_create(&p, &c->aq);
	if (rc)
		return rc;

	t->ops->reg_write32(t, NVQ_REG_AQA,
			    NVQ_AQA(NVQ_ADMIN_DEPTH - 1, NVQ_ADMIN_DEPTH - 1));
	t->ops->reg_write64(t, NVQ_REG_ASQ, asq_iova);
	t->ops->reg_write64(t, NVQ_REG_ACQ, acq_iova);
	return 0;
}

/*
 * Reset: the device is disabled, so nothing the admin queue held will
 * complete - cancel it (timed-out commands' buffers are freed by their
 * callbacks) - and give the controller the same rings, empty, again.
 */
static int pcie_admin_queue_reinit(struct nvq_ctrl *c)
{
	struct nvq_transport *t = c->t;
	uint64_t asq_iova, acq_iova;

	if (!c->aq)
		return nvq_err(-ENODEV, "no admin queue");
	nvq_queue_cancel(c->aq);
	nvq_queue_rings_reset(c->aq);
	if (nvq_mem_iova(c->mem, NULL, c->asq_mem,
			 NVQ_ADMIN_DEPTH * NVQ_SQE_SIZE, &asq_iova) ||
	    nvq_mem_iova(c->mem, NULL, c->acq_mem,
			 NVQ_ADMIN_DEPTH * NVQ_CQE_SIZE, &acq_iova))
		return nvq_err(-EFAULT, "the admin rings lost their mapping");
	t->ops->reg_write32(t, NVQ_REG_AQA,
			    NVQ_AQA(NVQ_ADMIN_DEPTH - 1, NVQ_ADMIN_DEPTH - 1));
	t->ops->reg_write64(t, NVQ_REG_ASQ, asq_iova);
	t->ops->reg_write64(t, NVQ_REG_ACQ, acq_iova);
	return 0;
}

/*
 * Place one admin command in the admin SQ: a slot, its PRPs for @buf
 * (DMA memory) and the doorbell. -ENODEV without an admin queue, -EBUSY
 * when every slot is taken (by commands that timed out).
 */
static int pcie_admin_submit(struct nvq_ctrl *c, const struct nvq_sqe *sqe,
			     void *buf, size_t len, nvq_cb cb, void *arg)
{
	struct nvq_cmd *cmd;
	int rc;

	if (!c->aq)
		return -ENODEV;
	cmd = nvq_queue_get_cmds(c->aq, 1);
	if (!cmd)
		return -EBUSY;
	cmd->sqe = *sqe;
	cmd->sqe.cid = cmd->cid;
	if (buf && len) {
		uint64_t iova;

		rc = nvq_mem_iova(c->mem, NULL, buf, len, &iova);
		cmd->sqe.flags &= (uint8_t)~0xc0; /* PSDT: PRPs, or ... */
		if (!rc)
			rc = nvq_dptr_build(c->aq, &cmd->sqe, iova, len,
					    &cmd->prp);
		if (rc) {
			nvq_queue_put_cmds(c->aq, cmd);
			return rc;
		}
	}
	cmd->cb = cb;
	cmd->arg = arg;
	nvq_queue_post(c->aq, cmd, 0);
	return 0;
}

static void pcie_admin_reap(struct nvq_ctrl *c)
{
	nvq_queue_reap(c->aq, 0);
}

/*
 * Between two looks at the admin CQ. While vector 0 is the admin queue's
 * alone, sleep on its eventfd; when I/O queues share it, a waiter there
 * would steal their wakeups, so back off with short sleeps instead.
 */
static void pcie_admin_sleep(struct nvq_ctrl *c, unsigned int attempt,
			     uint64_t max_ms)
{
	int fd = c->admin_owns_vec0 ? c->t->ops->irq_fd(c->t, 0) : -1;

	if (fd >= 0) {
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
					 { .fd = -1, .events = POLLIN } };
		uint64_t val;

		/* A transport whose news needs pump(): its fd too. */
		if (c->t->ops->poll_fd)
			pfd[1].fd = c->t->ops->poll_fd(c->t, 0);
		if (poll(pfd, 2, max_ms > 100 ? 100 : (int)max_ms) > 0 &&
		    (pfd[0].revents & POLLIN) &&
		    read(fd, &val, sizeof(val)) < 0) {
			/* EAGAIN: someone else consumed it. */
		}
	} else {
		nvq_sleep_us(attempt < 7 ? 10u << attempt : 1000u);
	}
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
		nvq_note(
			notes, notes_len,
			"shadow doorbells not used: %u queues with stride %u do not fit one page",
			c->nr_queues, c->dstrd);
		return 0;
	}
	c->dbbuf_db = nvq_mem_alloc(c->mem, NVQ_PAGE_SIZE, c->node, &db_iova);
	c->dbbuf_ei = nvq_mem_alloc(c->mem, NVQ_PAGE_SIZE, c->node, &ei_iova);
	if (!c->dbbuf_db || !c->dbbuf_ei)
		rc = -ENOMEM;
	else
		rc = nvq_ctrl_admin_simple(c, nvq_admin_dbbuf, 0, 0, db_iova,
					   ei_iova, NULL);
	if (rc) {
		nvq_note(notes, notes_len, "shadow doorbells not used: %s",
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
		v->epfd = -1;
		v->stop_fd = -1;
		v->cthread_epfd = -1;
		v->t = c->t;
		v->cpu = c->t->ops->irq_cpu(c->t, i);
		pthread_mutex_init(&v->lock, NULL);
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&v->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	return 0;
}

/*
 * A transport whose completions arrive through pump() (transport.h) has a
 * second fd per vector: level-triggered in @epfd beside the eventfd, so
 * that a sleeper wakes when news waits there and reaps (which pumps).
 */
static int add_poll_fd(struct nvq_ctrl *c, struct nvq_vector *v, int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };
	int fd;

	if (!c->t->ops->poll_fd)
		return 0;
	fd = c->t->ops->poll_fd(c->t, v->index);
	if (fd < 0)
		return 0;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		return nvq_err(-errno, "epoll for vector %u: %s", v->index,
			       strerror(errno));
	return 0;
}

/* Create I/O CQ and SQ @qid on the device, for rings at the given IOVAs. */
static int create_on_device(struct nvq_ctrl *c, uint16_t qid, uint32_t depth,
			    unsigned int vec, uint64_t sq_iova,
			    uint64_t cq_iova)
{
	uint32_t cdw11 = NVQ_QUEUE_PHYS_CONTIG | vec << NVQ_CQ_IV_SHIFT;
	int rc;

	if (c->opts.mode != NVQ_MODE_POLL)
		cdw11 |= NVQ_CQ_IRQ_ENABLED;
	rc = nvq_ctrl_admin_simple(c, nvq_admin_create_cq,
				   (depth - 1) << 16 | qid, cdw11, cq_iova, 0,
				   NULL);
	if (rc)
		return rc;
	rc = nvq_ctrl_admin_simple(
		c, nvq_admin_create_sq, (depth - 1) << 16 | qid,
		NVQ_QUEUE_PHYS_CONTIG | (uint32_t)qid << NVQ_SQ_CQID_SHIFT,
		sq_iova, 0, NULL);
	if (rc) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", nvq_errmsg());
		nvq_ctrl_admin_simple(c, nvq_admin_delete_cq, qid, 0, 0, 0,
				      NULL);
		nvq_err(rc, "%s", msg);
	}
	return rc;
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
		.clock = &c->wd_clock,
		.lock_mode = c->opts.exclusive ? NVQ_LOCK_NONE : c->lock_mode,
		.mode = c->opts.mode,
		.node = node,
	};
	uint64_t sq_iova, cq_iova;
	struct nvq_queue *q;
	void *sq, *cq;
	int rc;

	sq = nvq_mem_alloc(c->mem, (size_t)depth * NVQ_SQE_SIZE, node,
			   &sq_iova);
	cq = sq ? nvq_mem_alloc(c->mem, (size_t)depth * NVQ_CQE_SIZE, node,
				&cq_iova) :
		  NULL;
	if (!sq || !cq) {
		char msg[384];

		rc = nvq_err(-ENOMEM, "cannot allocate I/O queue %u: %s", qid,
			     nvq_errmsg_copy(msg, sizeof(msg)));
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
					  &q->qos_idle, &q->qos_spin, &q->qos);
		if (rc)
			goto free_queue;
	}

	rc = create_on_device(c, qid, depth, vec, sq_iova, cq_iova);
	if (rc)
		goto free_queue;
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
 * Reset: the controller is enabled again and knows nothing. Shadow
 * doorbells first (zeroed: every tail and head starts at 0), then each
 * queue as it was - same rings, vector and depth - and what stayed in
 * flight posted again. The gates are closed: nobody else touches a ring.
 */
static int pcie_io_queues_recreate(struct nvq_ctrl *c)
{
	uint64_t db_iova, ei_iova, sq_iova, cq_iova;
	unsigned int i;
	int rc;

	if (c->dbbuf_db) {
		memset(c->dbbuf_db, 0, NVQ_PAGE_SIZE);
		memset(c->dbbuf_ei, 0, NVQ_PAGE_SIZE);
		if (nvq_mem_iova(c->mem, NULL, c->dbbuf_db, NVQ_PAGE_SIZE,
				 &db_iova) ||
		    nvq_mem_iova(c->mem, NULL, c->dbbuf_ei, NVQ_PAGE_SIZE,
				 &ei_iova))
			return nvq_err(
				-EFAULT,
				"the shadow doorbells lost their mapping");
		rc = nvq_ctrl_admin_simple(c, nvq_admin_dbbuf, 0, 0, db_iova,
					   ei_iova, NULL);
		if (rc)
			return rc;
	}
	for (i = 0; i < c->nr_queues; i++) {
		struct nvq_queue *q = c->queues[i];

		if (nvq_mem_iova(c->mem, NULL, q->sq_mem,
				 (size_t)q->depth * NVQ_SQE_SIZE, &sq_iova) ||
		    nvq_mem_iova(c->mem, NULL, q->cq_mem,
				 (size_t)q->depth * NVQ_CQE_SIZE, &cq_iova))
			return nvq_err(
				-EFAULT,
				"the rings of queue %u lost their mapping",
				q->qid);
		/* Empty before the device may write the CQ. */
		nvq_queue_rings_reset(q);
		rc = create_on_device(c, q->qid, q->depth, q->vec->index,
				      sq_iova, cq_iova);
		if (rc)
			return rc;
	}
	for (i = 0; i < c->nr_queues; i++)
		nvq_queue_restart(c->queues[i]);
	return 0;
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
	/* tcp: completions are received by the thread that reaps. */
	bool host_irq = strcmp(c->t->ops->name, "emu") != 0 &&
			strcmp(c->t->ops->name, "tcp") != 0;
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
 * Create the c->nr_queues I/O queue pairs of @depth entries the core
 * negotiated (Set Features Number of Queues), their vectors, shadow
 * doorbells and, in thread mode, completion threads.
 */
static int pcie_io_queues_create(struct nvq_ctrl *c, uint32_t depth,
				 char *notes, size_t notes_len)
{
	unsigned int i;
	int rc;

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
		if (c->opts.mode == NVQ_MODE_WAIT) {
			struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

			v->epfd = epoll_create1(EPOLL_CLOEXEC);
			if (v->epfd < 0 ||
			    epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->fd, &ev))
				return nvq_err(-errno,
					       "epoll for vector %u: %s", i,
					       strerror(errno));
			rc = add_poll_fd(c, v, v->epfd);
			if (rc)
				return rc;
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

/* Stop the completion threads: no callback runs after this. */
static void pcie_quiesce(struct nvq_ctrl *c)
{
	unsigned int i;

	if (c->vectors)
		for (i = 0; i < c->nr_vectors; i++)
			nvq_cthread_stop(&c->vectors[i]);
}

/*
 * Delete the I/O queues on the device while it is @alive, reaping what
 * they finish; returns whether the device still is.
 */
static bool pcie_io_queues_delete(struct nvq_ctrl *c, bool alive)
{
	unsigned int i;

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
		    nvq_ctrl_admin_simple(c, nvq_admin_delete_sq,
					  c->queues[i]->qid, 0, 0, 0, NULL) &&
		    nvq_ctrl_csts(c) == NVQ_REG_GONE32)
			alive = false;
	for (i = 0; i < c->nr_queues; i++)
		if (c->queues[i])
			nvq_queue_reap(c->queues[i], 0);
	for (i = 0; alive && i < c->nr_queues; i++)
		if (c->queues[i] &&
		    nvq_ctrl_admin_simple(c, nvq_admin_delete_cq,
					  c->queues[i]->qid, 0, 0, 0, NULL) &&
		    nvq_ctrl_csts(c) == NVQ_REG_GONE32)
			alive = false;
	return alive;
}

/*
 * Free the queues, vectors and rings once the device no longer completes
 * or DMAs (after shutdown), cancelling what it never finished.
 */
static void pcie_queues_free(struct nvq_ctrl *c)
{
	unsigned int i;

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
			if (c->vectors[i].epfd >= 0)
				close(c->vectors[i].epfd);
			pthread_mutex_destroy(&c->vectors[i].lock);
			pthread_cond_destroy(&c->vectors[i].cond);
			free(c->vectors[i].queues);
		}
		free(c->vectors);
	}
	nvq_queue_destroy(c->aq);
}

static void pcie_close(struct nvq_ctrl *c)
{
	if (c->t)
		c->t->ops->close(c->t);
}

const struct nvq_ctrl_ops nvq_pcie_ctrl_ops = {
	.name = "pcie",
	.reg_read32 = pcie_reg_read32,
	.reg_read64 = pcie_reg_read64,
	.reg_write32 = pcie_reg_write32,
	.admin_queue_create = pcie_admin_queue_create,
	.admin_submit = pcie_admin_submit,
	.admin_reap = pcie_admin_reap,
	.admin_sleep = pcie_admin_sleep,
	.io_queues_create = pcie_io_queues_create,
	.admin_queue_reinit = pcie_admin_queue_reinit,
	.io_queues_recreate = pcie_io_queues_recreate,
	.quiesce = pcie_quiesce,
	.io_queues_delete = pcie_io_queues_delete,
	.queues_free = pcie_queues_free,
	.close = pcie_close,
};
