// SPDX-License-Identifier: MIT
/*
 * The NVMe/TCP transport: a fabrics controller seen through the same view
 * the driver has of a PCIe one (transport.h). The library plays the
 * device's side of the rings: a doorbell write sends the new SQEs as
 * command capsules on the queue's connection, and what the target answers
 * becomes CQEs in the host's CQ ring when a reaper calls pump(). The
 * registers are the controller's properties (Property Get/Set); creating
 * an I/O queue opens its connection and sends Connect; CC.EN 1 -> 0 ends
 * the association and 0 -> 1 makes a new one, retrying every
 * reconnect_delay until ctrl_loss_tmo has passed since it was lost.
 *
 * Locks, outermost first:
 *   assoc_lock   the association: connections made and ended, register
 *                writes, the keep-alive exchange
 *   q->tx_lock   a queue's connection pointer for senders (doorbells)
 *   q->rx_lock   the same for receivers (pump, keep-alive)
 *   q->lock      a leaf: the queue's command slots and its completions
 *                waiting for the CQ ring (the connection's done callback
 *                takes it, from whichever thread receives)
 * The core guarantees one submitter per SQ doorbell at a time (sq_lock or
 * an exclusive queue) and one reaper per CQ (cq_lock or the gate).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "nvq/nvq.h"
#include "internal.h"
#include "tcp.h"
#include "transport.h"

#define TCP_MAX_QID 1024
/* Linux nvmet's admin queue holds 32 entries (NVMe-oF: at most 4096). */
#define TCP_ADMIN_ENTRIES 32
/* Keep-alive, properties and commands of our own beside the core's 32. */
#define TCP_ADMIN_CONN_DEPTH (TCP_ADMIN_ENTRIES + 4)
#define TCP_ADMIN_ICD 8192 /* NVMe/TCP 1.0, 3.6.1 */

/* What a completion must be looked at for before the host sees it. */
enum snoop {
	SNOOP_NONE,
	SNOOP_IDENTIFY_CTRL, /* IOCCSZ, ICDOFF */
	SNOOP_NUM_QUEUES, /* capped at nr_io_queues */
};

struct tcp_slot {
	bool busy;
	uint8_t snoop;
	uint16_t host_cid;
	int wire_cid; /* -1 until the connection said */
	uint32_t gen;
	struct iovec iov;
	struct nvq_tcp_data data;
};

struct tcp_ctrl;

struct tcp_queue {
	struct tcp_ctrl *tc;
	uint16_t qid;
	unsigned int vector;
	bool ien;

	pthread_mutex_t tx_lock;
	pthread_mutex_t rx_lock;
	struct nvq_tcp_conn *conn;

	/* The SQ ring: its entries are consumed at the doorbell. */
	struct nvq_sqe *sq;
	uint32_t sq_depth;
	uint32_t sq_head; /* atomic: read by the done callback for SQHD */
	bool sq_live;

	/* The CQ ring, written only by pump() (and by teardown). */
	struct nvq_cqe *cq;
	uint32_t cq_depth;
	uint32_t cq_tail;
	uint16_t cq_phase;
	uint32_t cq_head; /* atomic: the host's CQ head doorbell */
	bool cq_live;

	pthread_mutex_t lock;
	struct tcp_slot *slots;
	uint32_t nr_slots;
	uint32_t *free_slots;
	uint32_t nr_free;
	uint32_t gen;
	struct nvq_cqe *pend; /* completions for the CQ ring, in order */
	uint32_t pend_cap, pend_first, pend_cnt;
};

struct region {
	uintptr_t start;
	size_t len;
};

struct tcp_ctrl {
	struct nvq_transport t;
	struct nvq_tcp_opts o;
	long nr_cpus;

	pthread_mutex_t assoc_lock;
	bool assoc; /* connected: the admin queue's connection is up */
	bool gone; /* ctrl_loss_tmo passed: registers read all-ones */
	bool faulted; /* the fault callback ran for this association */
	uint64_t lost_ns; /* when the association was lost (0: never) */
	uint16_t cntlid;
	uint64_t cap, target_cap;
	uint32_t vs, cc, csts_last;
	uint32_t aqa;
	uint64_t asq, acq;
	uint32_t ioccsz_bytes; /* I/O queues' in-capsule data, 0: none */
	uint32_t prop_tmo_ms;

	struct tcp_queue *q[TCP_MAX_QID + 1];
	int *irq_fds; /* eventfd per vector */
	int *vec_epfd; /* per vector: the sockets of its queues */

	pthread_rwlock_t regions_lock;
	struct region *regions;
	size_t nr_regions, cap_regions;

	/* keep-alive */
	pthread_t ka_thread;
	bool ka_started;
	pthread_mutex_t ka_mutex;
	pthread_cond_t ka_cond;
	bool ka_stop;
	bool ka_done; /* atomic: the outstanding Keep Alive completed */
	uint16_t ka_status;
	struct tcp_slot ka_slot;

	/* cancel(): ends a reconnect's wait at once */
	int cancel_fd;
	bool cancelled;
};

/* The queue whose pump() runs on this thread: no interrupt for it. */
static __thread struct tcp_queue *pumping;

static struct tcp_ctrl *to_tc(struct nvq_transport *t)
{
	return (struct tcp_ctrl *)t;
}

/* ---- DMA: identity IOVAs, checked against what was mapped ---------- */

static int tcp_dma_map(struct nvq_transport *t, void *vaddr, size_t len,
		       uint64_t *iova)
{
	struct tcp_ctrl *tc = to_tc(t);
	struct region r = { (uintptr_t)vaddr, len };
	size_t i;

	if (((uintptr_t)vaddr | len) & (NVQ_PAGE_SIZE - 1) || !len)
		return nvq_err(-EINVAL, "tcp: DMA map of an unaligned range");
	pthread_rwlock_wrlock(&tc->regions_lock);
	if (tc->nr_regions == tc->cap_regions) {
		size_t n = tc->cap_regions ? tc->cap_regions * 2 : 16;
		struct region *nr = realloc(tc->regions, n * sizeof(*nr));

		if (!nr) {
			pthread_rwlock_unlock(&tc->regions_lock);
			return nvq_err(-ENOMEM, "tcp: out of memory");
		}
		tc->regions = nr;
		tc->cap_regions = n;
	}
	for (i = 0; i < tc->nr_regions; i++)
		if (tc->regions[i].start > r.start)
			break;
	memmove(&tc->regions[i + 1], &tc->regions[i],
		(tc->nr_regions - i) * sizeof(r));
	tc->regions[i] = r;
	tc->nr_regions++;
	pthread_rwlock_unlock(&tc->regions_lock);
	*iova = (uint64_t)(uintptr_t)vaddr;
	return 0;
}

static int tcp_dma_unmap(struct nvq_transport *t, void *vaddr, size_t len)
{
	struct tcp_ctrl *tc = to_tc(t);
	size_t i;

	pthread_rwlock_wrlock(&tc->regions_lock);
	for (i = 0; i < tc->nr_regions; i++) {
		if (tc->regions[i].start == (uintptr_t)vaddr &&
		    tc->regions[i].len == len) {
			memmove(&tc->regions[i], &tc->regions[i + 1],
				(tc->nr_regions - i - 1) *
					sizeof(tc->regions[0]));
			tc->nr_regions--;
			pthread_rwlock_unlock(&tc->regions_lock);
			return 0;
		}
	}
	pthread_rwlock_unlock(&tc->regions_lock);
	return nvq_err(-EINVAL, "tcp: DMA unmap of a range never mapped");
}

/* The host memory at device address @iova for @len bytes, or NULL. */
static void *dma_ptr(struct tcp_ctrl *tc, uint64_t iova, size_t len)
{
	size_t lo = 0, hi;
	void *p = NULL;

	if (iova + len < iova)
		return NULL;
	pthread_rwlock_rdlock(&tc->regions_lock);
	hi = tc->nr_regions;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct region *r = &tc->regions[mid];

		if (iova < r->start) {
			hi = mid;
		} else if (iova >= r->start + r->len) {
			lo = mid + 1;
		} else {
			if (iova + len <= r->start + r->len)
				p = (void *)(uintptr_t)iova;
			break;
		}
	}
	pthread_rwlock_unlock(&tc->regions_lock);
	return p;
}

/* ---- completions ---------------------------------------------------- */

static void irq_signal(struct tcp_queue *q)
{
	uint64_t one = 1;

	if (pumping == q || (!q->ien && q->qid))
		return;
	if (write(q->tc->irq_fds[q->vector], &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, a wake-up is due anyway */
	}
}

/* Queue @cqe (host CID and SQ id set) for the CQ ring. q->lock held. */
static void pend_push_locked(struct tcp_queue *q, struct nvq_cqe *cqe)
{
	uint32_t i;

	cqe->sq_head = (uint16_t)__atomic_load_n(&q->sq_head, __ATOMIC_RELAXED);
	if (q->pend_cnt == q->pend_cap)
		return; /* cannot happen: one completion per slot */
	i = (q->pend_first + q->pend_cnt) % q->pend_cap;
	q->pend[i] = *cqe;
	q->pend_cnt++;
}

static void complete_local(struct tcp_queue *q, uint16_t cid, uint16_t status,
			   uint32_t result)
{
	struct nvq_cqe cqe = { .result = result, .cid = cid, .sq_id = q->qid };

	cqe.status = (uint16_t)(status << 1);
	pthread_mutex_lock(&q->lock);
	pend_push_locked(q, &cqe);
	pthread_mutex_unlock(&q->lock);
	irq_signal(q);
}

static void slot_free_locked(struct tcp_queue *q, struct tcp_slot *s)
{
	s->busy = false;
	q->free_slots[q->nr_free++] = (uint32_t)(s - q->slots);
}

static void snoop(struct tcp_queue *q, struct tcp_slot *s, struct nvq_cqe *cqe)
{
	struct tcp_ctrl *tc = q->tc;

	if (NVQ_STATUS(cqe->status) & NVQ_STATUS_CODE_MASK)
		return;
	if (s->snoop == SNOOP_IDENTIFY_CTRL &&
	    s->iov.iov_len >= sizeof(struct nvq_id_ctrl)) {
		const struct nvq_id_ctrl *id = s->iov.iov_base;
		uint32_t ioccsz = id->ioccsz;

		/* Data at an offset into the capsule (ICDOFF) is not ours. */
		if (id->icdoff || ioccsz < 4 || ioccsz > 0x10000)
			ioccsz = 4;
		__atomic_store_n(&tc->ioccsz_bytes, ioccsz * 16 - 64,
				 __ATOMIC_RELAXED);
	} else if (s->snoop == SNOOP_NUM_QUEUES && tc->o.nr_io_queues) {
		uint32_t max = tc->o.nr_io_queues - 1;
		uint32_t nsq = MIN(cqe->result & 0xffff, max);
		uint32_t ncq = MIN(cqe->result >> 16, max);

		cqe->result = nsq | ncq << 16;
	}
}

/* The connection's done callback: a command of queue @arg finished. */
static void on_done(void *arg, void *ctx, const struct nvq_cqe *wire)
{
	struct tcp_queue *q = arg;
	struct tcp_slot *s = ctx;
	struct nvq_cqe cqe;

	if (s == &q->tc->ka_slot) {
		q->tc->ka_status = NVQ_STATUS(wire->status);
		__atomic_store_n(&q->tc->ka_done, true, __ATOMIC_RELEASE);
		return;
	}
	cqe = *wire;
	snoop(q, s, &cqe);
	cqe.cid = s->host_cid;
	cqe.sq_id = q->qid;
	pthread_mutex_lock(&q->lock);
	pend_push_locked(q, &cqe);
	slot_free_locked(q, s);
	pthread_mutex_unlock(&q->lock);
	irq_signal(q);
}

/* Move waiting completions into the CQ ring while it has room. */
static void flush_pending(struct tcp_queue *q)
{
	uint32_t head;

	if (!q->cq_live)
		return;
	pthread_mutex_lock(&q->lock);
	head = __atomic_load_n(&q->cq_head, __ATOMIC_ACQUIRE);
	while (q->pend_cnt && (q->cq_tail + 1) % q->cq_depth != head) {
		struct nvq_cqe cqe = q->pend[q->pend_first];
		struct nvq_cqe *dst = &q->cq[q->cq_tail];

		q->pend_first = (q->pend_first + 1) % q->pend_cap;
		q->pend_cnt--;
		cqe.status =
			(uint16_t)((cqe.status & ~NVQ_CQE_PHASE) | q->cq_phase);
		/* Everything before the phase tag, then the tag. */
		memcpy(dst, &cqe, offsetof(struct nvq_cqe, status));
		__atomic_store_n(&dst->status, cqe.status, __ATOMIC_RELEASE);
		if (++q->cq_tail == q->cq_depth) {
			q->cq_tail = 0;
			q->cq_phase ^= 1;
		}
	}
	pthread_mutex_unlock(&q->lock);
}

static void report_fault(struct tcp_ctrl *tc, int err, const char *why)
{
	if (__atomic_exchange_n(&tc->faulted, true, __ATOMIC_ACQ_REL))
		return;
	if (tc->t.fault)
		tc->t.fault(tc->t.fault_arg, err, why);
}

static void conn_broke(struct tcp_queue *q, int err)
{
	char why[300];

	snprintf(why, sizeof(why), "NVMe/TCP queue %u: %s", q->qid,
		 nvq_errmsg());
	report_fault(q->tc, err, why);
}

static void tcp_pump(struct nvq_transport *t, uint16_t qid)
{
	struct tcp_ctrl *tc = to_tc(t);
	struct tcp_queue *q = qid <= TCP_MAX_QID ? tc->q[qid] : NULL;
	int rc = 0;

	if (!q)
		return;
	pthread_mutex_lock(&q->rx_lock);
	if (q->conn && !nvq_tcp_conn_error(q->conn)) {
		pumping = q;
		rc = nvq_tcp_conn_recv(q->conn, 0);
		pumping = NULL;
	}
	pthread_mutex_unlock(&q->rx_lock);
	if (rc < 0)
		conn_broke(q, rc);
	flush_pending(q);
}

/* ---- queues ----------------------------------------------------------- */

static void queue_free(struct tcp_queue *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->tx_lock);
	pthread_mutex_destroy(&q->rx_lock);
	pthread_mutex_destroy(&q->lock);
	free(q->slots);
	free(q->free_slots);
	free(q->pend);
	free(q);
}

/* The queue @qid with room for @depth commands (kept across resets). */
static struct tcp_queue *queue_get(struct tcp_ctrl *tc, uint16_t qid,
				   uint32_t depth)
{
	struct tcp_queue *q = tc->q[qid];
	uint32_t i;

	if (q && q->nr_slots >= depth)
		return q;
	if (q) {
		/* Deeper than before: only while it has no connection. */
		struct tcp_slot *s = calloc(depth, sizeof(*s));
		uint32_t *f = calloc(depth, sizeof(*f));
		struct nvq_cqe *p = calloc(2 * (size_t)depth, sizeof(*p));

		if (!s || !f || !p) {
			free(s);
			free(f);
			free(p);
			return NULL;
		}
		pthread_mutex_lock(&q->lock);
		free(q->slots);
		free(q->free_slots);
		free(q->pend);
		q->slots = s;
		q->free_slots = f;
		q->pend = p;
		q->nr_slots = depth;
		q->pend_cap = 2 * depth;
		q->pend_first = q->pend_cnt = 0;
		q->nr_free = depth;
		for (i = 0; i < depth; i++)
			f[i] = depth - 1 - i;
		pthread_mutex_unlock(&q->lock);
		return q;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->tc = tc;
	q->qid = qid;
	pthread_mutex_init(&q->tx_lock, NULL);
	pthread_mutex_init(&q->rx_lock, NULL);
	pthread_mutex_init(&q->lock, NULL);
	q->slots = calloc(depth, sizeof(*q->slots));
	q->free_slots = calloc(depth, sizeof(*q->free_slots));
	q->pend = calloc(2 * (size_t)depth, sizeof(*q->pend));
	if (!q->slots || !q->free_slots || !q->pend) {
		queue_free(q);
		return NULL;
	}
	q->nr_slots = depth;
	q->pend_cap = 2 * depth;
	q->nr_free = depth;
	for (i = 0; i < depth; i++)
		q->free_slots[i] = depth - 1 - i;
	tc->q[qid] = q;
	return q;
}

/* Forget every command and completion of @q (its connection is gone). */
static void queue_forget(struct tcp_queue *q)
{
	uint32_t i;

	pthread_mutex_lock(&q->lock);
	q->nr_free = 0;
	for (i = 0; i < q->nr_slots; i++) {
		q->slots[i].busy = false;
		q->free_slots[q->nr_free++] = q->nr_slots - 1 - i;
	}
	q->pend_first = q->pend_cnt = 0;
	pthread_mutex_unlock(&q->lock);
}

static void epoll_set(struct tcp_ctrl *tc, struct tcp_queue *q, bool add)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = nvq_tcp_conn_fd(q->conn);

	if (fd < 0 || !tc->vec_epfd)
		return;
	if (add)
		epoll_ctl(tc->vec_epfd[q->vector], EPOLL_CTL_ADD, fd, &ev);
	else
		epoll_ctl(tc->vec_epfd[q->vector], EPOLL_CTL_DEL, fd, NULL);
}

/* Publish @conn as @q's connection. */
static void queue_attach(struct tcp_queue *q, struct nvq_tcp_conn *conn)
{
	pthread_mutex_lock(&q->tx_lock);
	pthread_mutex_lock(&q->rx_lock);
	q->conn = conn;
	epoll_set(q->tc, q, true);
	pthread_mutex_unlock(&q->rx_lock);
	pthread_mutex_unlock(&q->tx_lock);
}

/* Close @q's connection; its outstanding commands are forgotten. */
static void queue_detach(struct tcp_queue *q)
{
	struct nvq_tcp_conn *conn;

	pthread_mutex_lock(&q->tx_lock);
	pthread_mutex_lock(&q->rx_lock);
	conn = q->conn;
	if (conn) {
		epoll_set(q->tc, q, false);
		q->conn = NULL;
	}
	pthread_mutex_unlock(&q->rx_lock);
	pthread_mutex_unlock(&q->tx_lock);
	if (conn)
		nvq_tcp_conn_close(conn);
}

/* ---- commands --------------------------------------------------------- */

/*
 * Send one SQE of @q on its connection: the data pointer (one SGL Data
 * Block from nvq_dptr_build()) becomes the buffer the connection moves
 * data to or from. Refusals complete at once with an NVMe status.
 */
static void send_sqe_more(struct tcp_queue *q, const struct nvq_sqe *in,
			  uint8_t snoop_kind, bool more)
{
	struct tcp_ctrl *tc = q->tc;
	struct nvq_sqe sqe = *in;
	struct tcp_slot *s;
	uint32_t gen;
	int rc;

	pthread_mutex_lock(&q->lock);
	if (!q->nr_free) {
		pthread_mutex_unlock(&q->lock);
		complete_local(q, in->cid,
			       NVQ_STATUS_MAKE(NVQ_SCT_GENERIC,
					       NVQ_SC_INTERNAL) |
				       NVQ_STATUS_DNR_BIT,
			       0);
		return;
	}
	s = &q->slots[q->free_slots[--q->nr_free]];
	s->busy = true;
	s->host_cid = in->cid;
	s->wire_cid = -1;
	s->snoop = snoop_kind;
	s->gen = gen = ++q->gen;
	pthread_mutex_unlock(&q->lock);

	s->iov.iov_base = NULL;
	s->iov.iov_len = 0;
	memset(&s->data, 0, sizeof(s->data));
	if (NVQ_SQE_PSDT(sqe.flags) == NVQ_PSDT_SGL_MPTR_CONTIG) {
		struct nvq_sgl_desc d;

		memcpy(&d, &sqe.prp1, sizeof(d));
		if (d.length) {
			void *p = d.type == 0 ? dma_ptr(tc, d.addr, d.length) :
						NULL;
			uint8_t dir = sqe.opcode & 3;

			if (!p || dir == 0 || dir == 3 || sqe.mptr)
				goto refuse;
			s->iov.iov_base = p;
			s->iov.iov_len = d.length;
			s->data.iov = &s->iov;
			s->data.iovcnt = 1;
			s->data.len = d.length;
			s->data.write = dir == 1;
		}
	} else if (sqe.prp1 || sqe.mptr) {
		/* PRPs or separate metadata: fabrics carries neither. */
		goto refuse;
	}
	pthread_mutex_lock(&q->tx_lock);
	rc = q->conn ? nvq_tcp_conn_submit_batch(q->conn, &sqe,
						 s->data.len ? &s->data : NULL,
						 s, more) :
		       -ENOTCONN;
	pthread_mutex_unlock(&q->tx_lock);
	if (rc >= 0) {
		pthread_mutex_lock(&q->lock);
		if (s->busy && s->gen == gen)
			s->wire_cid = rc;
		pthread_mutex_unlock(&q->lock);
		return;
	}
	if (rc == -EINVAL)
		goto refuse;
	/* The connection is broken: the command stays in flight for the
	 * reset that takes it back. */
	if (rc != -ENOTCONN)
		conn_broke(q, rc);
	return;

refuse:
	pthread_mutex_lock(&q->lock);
	slot_free_locked(q, s);
	pthread_mutex_unlock(&q->lock);
	complete_local(q, in->cid,
		       NVQ_STATUS_MAKE(NVQ_SCT_GENERIC, NVQ_SC_INVALID_FIELD) |
			       NVQ_STATUS_DNR_BIT,
		       0);
}

/* One SQE, sent at once (@more in send_sqe_more(): more SQEs of the same
 * doorbell follow, the caller flushes the connection after them). */
static void send_sqe(struct tcp_queue *q, const struct nvq_sqe *in,
		     uint8_t snoop_kind)
{
	send_sqe_more(q, in, snoop_kind, false);
}

static uint16_t sc_generic(uint8_t sc)
{
	return NVQ_STATUS_MAKE(NVQ_SCT_GENERIC, sc) | NVQ_STATUS_DNR_BIT;
}

static uint16_t sc_cmd(uint8_t sc)
{
	return NVQ_STATUS_MAKE(NVQ_SCT_CMD_SPECIFIC, sc) | NVQ_STATUS_DNR_BIT;
}

static uint16_t create_cq(struct tcp_ctrl *tc, const struct nvq_sqe *sqe)
{
	uint16_t qid = (uint16_t)sqe->cdw10;
	uint32_t qsize = (sqe->cdw10 >> 16) + 1;
	unsigned int iv = sqe->cdw11 >> 16;
	struct tcp_queue *q;
	void *ring;

	if (!qid || qid > TCP_MAX_QID || (tc->q[qid] && tc->q[qid]->cq_live))
		return sc_cmd(NVQ_SC_QID_INVALID);
	if (qsize < 2 || qsize > NVQ_CAP_MQES(tc->cap) + 1)
		return sc_cmd(NVQ_SC_QUEUE_SIZE);
	if (!(sqe->cdw11 & 1) || iv >= tc->t.nr_vectors)
		return sc_generic(NVQ_SC_INVALID_FIELD);
	ring = dma_ptr(tc, sqe->prp1, (size_t)qsize * NVQ_CQE_SIZE);
	if (!ring)
		return sc_generic(NVQ_SC_DATA_XFER_ERROR);
	q = queue_get(tc, qid, qsize);
	if (!q)
		return sc_generic(NVQ_SC_INTERNAL);
	q->cq = ring;
	q->cq_depth = qsize;
	q->cq_tail = 0;
	q->cq_phase = 1;
	__atomic_store_n(&q->cq_head, 0, __ATOMIC_RELEASE);
	q->vector = iv;
	q->ien = sqe->cdw11 & 2;
	q->cq_live = true;
	return 0;
}

static uint16_t create_sq(struct tcp_ctrl *tc, const struct nvq_sqe *sqe)
{
	uint16_t qid = (uint16_t)sqe->cdw10, st = 0;
	uint32_t qsize = (sqe->cdw10 >> 16) + 1;
	uint16_t cqid = (uint16_t)(sqe->cdw11 >> 16);
	struct nvq_tcp_conn *conn;
	struct tcp_queue *q;
	uint16_t cntlid;
	void *ring;
	int rc;

	if (!qid || qid > TCP_MAX_QID || !tc->q[qid] || tc->q[qid]->sq_live)
		return sc_cmd(NVQ_SC_QID_INVALID);
	/* One connection carries one SQ and its CQ: no sharing of CQs. */
	if (cqid != qid || !tc->q[qid]->cq_live)
		return sc_cmd(NVQ_SC_CQ_INVALID);
	q = tc->q[qid];
	if (qsize < 2 || qsize > q->cq_depth)
		return sc_cmd(NVQ_SC_QUEUE_SIZE);
	if (!(sqe->cdw11 & 1))
		return sc_generic(NVQ_SC_INVALID_FIELD);
	ring = dma_ptr(tc, sqe->prp1, (size_t)qsize * NVQ_SQE_SIZE);
	if (!ring)
		return sc_generic(NVQ_SC_DATA_XFER_ERROR);
	rc = nvq_tcp_conn_open(&tc->o, qid, qsize, on_done, q, &conn);
	if (!rc) {
		nvq_tcp_conn_set_ioccsz(
			conn, MAX(__atomic_load_n(&tc->ioccsz_bytes,
						  __ATOMIC_RELAXED),
				  (uint32_t)sizeof(struct nvq_connect_data)));
		rc = nvq_tcp_connect(conn, &tc->o, qid, qsize, tc->cntlid, 0,
				     &cntlid, &st);
		if (rc)
			nvq_tcp_conn_close(conn);
	}
	if (rc) {
		char why[300];

		snprintf(why, sizeof(why),
			 "NVMe/TCP: connecting I/O queue %u failed: %s", qid,
			 nvq_errmsg());
		if (rc == -EIO && st)
			return st;
		report_fault(tc, rc, why);
		return sc_generic(NVQ_SC_INTERNAL);
	}
	/* In-capsule data from here on: IOCCSZ, not Connect's minimum. */
	nvq_tcp_conn_set_ioccsz(conn, __atomic_load_n(&tc->ioccsz_bytes,
						      __ATOMIC_RELAXED));
	q->sq = ring;
	q->sq_depth = qsize;
	__atomic_store_n(&q->sq_head, 0, __ATOMIC_RELEASE);
	queue_forget(q);
	q->sq_live = true;
	queue_attach(q, conn);
	return 0;
}

/* Outstanding commands of a deleted SQ end "aborted due to SQ deletion". */
static uint16_t delete_sq(struct tcp_ctrl *tc, const struct nvq_sqe *sqe)
{
	uint16_t qid = (uint16_t)sqe->cdw10;
	struct tcp_queue *q;
	uint32_t i;

	if (!qid || qid > TCP_MAX_QID || !tc->q[qid] || !tc->q[qid]->sq_live)
		return sc_cmd(NVQ_SC_QID_INVALID);
	q = tc->q[qid];
	queue_detach(q);
	q->sq_live = false;
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->nr_slots; i++) {
		struct tcp_slot *s = &q->slots[i];
		struct nvq_cqe cqe = { .cid = s->host_cid, .sq_id = qid };

		if (!s->busy)
			continue;
		cqe.status = (uint16_t)(NVQ_STATUS_MAKE(NVQ_SCT_GENERIC,
							NVQ_SC_ABORT_QUEUE)
					<< 1);
		pend_push_locked(q, &cqe);
		slot_free_locked(q, s);
	}
	pthread_mutex_unlock(&q->lock);
	irq_signal(q);
	return 0;
}

static uint16_t delete_cq(struct tcp_ctrl *tc, const struct nvq_sqe *sqe)
{
	uint16_t qid = (uint16_t)sqe->cdw10;
	struct tcp_queue *q;

	if (!qid || qid > TCP_MAX_QID || !tc->q[qid] || !tc->q[qid]->cq_live)
		return sc_cmd(NVQ_SC_QID_INVALID);
	q = tc->q[qid];
	if (q->sq_live)
		return sc_cmd(0x0c); /* Invalid Queue Deletion */
	q->cq_live = false;
	q->cq = NULL;
	return 0;
}

/* Abort names the host's CID: the target knows the wire's. */
static void abort_translate(struct tcp_ctrl *tc, struct nvq_sqe *sqe)
{
	uint16_t sqid = (uint16_t)sqe->cdw10,
		 cid = (uint16_t)(sqe->cdw10 >> 16);
	struct tcp_queue *q = sqid <= TCP_MAX_QID ? tc->q[sqid] : NULL;
	uint32_t i;
	int wire = -1;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->nr_slots; i++)
		if (q->slots[i].busy && q->slots[i].host_cid == cid)
			wire = q->slots[i].wire_cid;
	pthread_mutex_unlock(&q->lock);
	/* Unknown, or not sent yet: a CID no command has, "not aborted". */
	sqe->cdw10 = (uint32_t)sqid | (uint32_t)(wire >= 0 ? wire : 0xffff)
					      << 16;
}

static void admin_sqe(struct tcp_ctrl *tc, struct tcp_queue *aq,
		      const struct nvq_sqe *in)
{
	struct nvq_sqe sqe = *in;
	uint8_t kind = SNOOP_NONE;
	uint16_t st;

	switch (sqe.opcode) {
	case nvq_admin_create_cq:
		st = create_cq(tc, &sqe);
		break;
	case nvq_admin_create_sq:
		st = create_sq(tc, &sqe);
		break;
	case nvq_admin_delete_sq:
		st = delete_sq(tc, &sqe);
		break;
	case nvq_admin_delete_cq:
		st = delete_cq(tc, &sqe);
		break;
	case nvq_admin_dbbuf:
	case NVQ_FABRICS_OPC:
		/* Not for a fabrics controller, nor from the host's user. */
		st = sc_generic(NVQ_SC_INVALID_OPCODE);
		break;
	case nvq_admin_abort_cmd:
		abort_translate(tc, &sqe);
		send_sqe(aq, &sqe, kind);
		return;
	case nvq_admin_identify:
		if ((sqe.cdw10 & 0xff) == NVQ_ID_CNS_CTRL)
			kind = SNOOP_IDENTIFY_CTRL;
		send_sqe(aq, &sqe, kind);
		return;
	case nvq_admin_set_features:
		if ((sqe.cdw10 & 0xff) == NVQ_FEAT_NUM_QUEUES &&
		    tc->o.nr_io_queues) {
			uint32_t max = tc->o.nr_io_queues - 1;

			sqe.cdw11 = MIN(sqe.cdw11 & 0xffff, max) |
				    MIN(sqe.cdw11 >> 16, max) << 16;
			kind = SNOOP_NUM_QUEUES;
		}
		send_sqe(aq, &sqe, kind);
		return;
	default:
		send_sqe(aq, &sqe, kind);
		return;
	}
	complete_local(aq, in->cid, st, 0);
}

static void tcp_db_write(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	struct tcp_ctrl *tc = to_tc(t);
	uint32_t idx = (off - NVQ_REG_DBS) / 4;
	uint32_t qid = idx / 2;
	struct tcp_queue *q;

	if (off < NVQ_REG_DBS || qid > TCP_MAX_QID ||
	    __atomic_load_n(&tc->gone, __ATOMIC_ACQUIRE))
		return;
	q = tc->q[qid];
	if (!q)
		return;
	if (idx & 1) {
		if (q->cq_live && val < q->cq_depth)
			__atomic_store_n(&q->cq_head, val, __ATOMIC_RELEASE);
		return;
	}
	if (!q->sq_live || val >= q->sq_depth)
		return;
	while (q->sq_head != val) {
		struct nvq_sqe sqe;

		memcpy(&sqe, &q->sq[q->sq_head], sizeof(sqe));
		__atomic_store_n(&q->sq_head, (q->sq_head + 1) % q->sq_depth,
				 __ATOMIC_RELEASE);
		if (qid)
			send_sqe_more(q, &sqe, SNOOP_NONE, true);
		else
			admin_sqe(tc, q, &sqe);
	}
	if (qid) {
		/* The batch goes out in one sendmsg(). */
		int rc;

		pthread_mutex_lock(&q->tx_lock);
		rc = q->conn ? nvq_tcp_conn_flush(q->conn) : 0;
		pthread_mutex_unlock(&q->tx_lock);
		if (rc < 0)
			conn_broke(q, rc);
	}
}

/* ---- the association ------------------------------------------------ */

static int prop_get(struct tcp_ctrl *tc, uint32_t off, unsigned int size,
		    uint64_t *val)
{
	struct tcp_queue *aq = tc->q[0];
	uint16_t st = 0;
	int rc;

	pthread_mutex_lock(&aq->tx_lock);
	rc = aq->conn ? nvq_tcp_prop_get(aq->conn, off, size, val, &st,
					 tc->prop_tmo_ms) :
			-ENOTCONN;
	pthread_mutex_unlock(&aq->tx_lock);
	return rc;
}

static int prop_set(struct tcp_ctrl *tc, uint32_t off, unsigned int size,
		    uint64_t val)
{
	struct tcp_queue *aq = tc->q[0];
	uint16_t st = 0;
	int rc;

	pthread_mutex_lock(&aq->tx_lock);
	rc = aq->conn ? nvq_tcp_prop_set(aq->conn, off, size, val, &st,
					 tc->prop_tmo_ms) :
			-ENOTCONN;
	pthread_mutex_unlock(&aq->tx_lock);
	return rc;
}

/*
 * CAP as the driver sees it: the target's, with the doorbell stride 0,
 * queues no deeper than queue_size (admin: what the admin connection
 * takes), no NVM subsystem reset, boot partitions, PMR or CMB.
 */
static uint64_t host_cap(struct tcp_ctrl *tc, uint64_t cap)
{
	uint32_t mqes = MIN(NVQ_CAP_MQES(cap), tc->o.queue_size - 1);

	cap &= ~0xffffull; /* MQES */
	cap &= ~(0xfull << 32); /* DSTRD */
	cap &= ~(1ull << 36); /* NSSRS */
	cap &= ~(1ull << 45); /* BPS */
	cap &= ~(3ull << 56); /* PMRS, CMBS */
	cap &= ~(1ull << 59); /* CRMS.CRWMS: no CRTO register here */
	return cap | mqes;
}

/* Connect the admin queue and read the controller's identity registers.
 * assoc_lock held. */
static int assoc_connect(struct tcp_ctrl *tc)
{
	struct tcp_queue *aq = tc->q[0];
	struct nvq_tcp_conn *conn;
	uint64_t v = 0;
	uint16_t st = 0;
	int rc;

	rc = nvq_tcp_conn_open(&tc->o, 0, TCP_ADMIN_CONN_DEPTH, on_done, aq,
			       &conn);
	if (rc)
		return rc;
	nvq_tcp_conn_set_ioccsz(conn, TCP_ADMIN_ICD);
	rc = nvq_tcp_connect(conn, &tc->o, 0, TCP_ADMIN_ENTRIES, 0xffff,
			     tc->o.kato_s * 1000u, &tc->cntlid, &st);
	if (rc) {
		nvq_tcp_conn_close(conn);
		return rc;
	}
	queue_forget(aq);
	queue_attach(aq, conn);
	rc = prop_get(tc, NVQ_REG_CAP, 8, &tc->target_cap);
	if (!rc)
		rc = prop_get(tc, NVQ_REG_VS, 4, &v);
	tc->vs = (uint32_t)v;
	if (!rc)
		rc = prop_get(tc, NVQ_REG_CC, 4, &v);
	tc->cc = (uint32_t)v;
	if (!rc && tc->target_cap == NVQ_REG_GONE64)
		rc = nvq_err(-EPROTO, "the target's CAP property reads "
				      "all-ones");
	if (rc) {
		char msg[256];

		nvq_errmsg_copy(msg, sizeof(msg));
		queue_detach(aq);
		return nvq_err(rc, "reading the controller's properties: %s",
			       msg);
	}
	tc->cap = host_cap(tc, tc->target_cap);
	__atomic_store_n(&tc->faulted, false, __ATOMIC_RELEASE);
	tc->assoc = true;
	tc->csts_last = 0;
	return 0;
}

/*
 * End the association: collect what already arrived into the CQ rings
 * (the reset reads them, as after a PCIe controller stops), then close
 * every connection; commands still outstanding are the core's to retry.
 * assoc_lock held.
 */
static void assoc_teardown(struct tcp_ctrl *tc)
{
	unsigned int i;

	if (!tc->assoc)
		return;
	for (i = 0; i <= TCP_MAX_QID; i++) {
		struct tcp_queue *q = tc->q[i];

		if (!q)
			continue;
		pthread_mutex_lock(&q->rx_lock);
		if (q->conn && !nvq_tcp_conn_error(q->conn))
			nvq_tcp_conn_recv(q->conn, 0);
		pthread_mutex_unlock(&q->rx_lock);
		flush_pending(q);
		queue_detach(q);
		queue_forget(q);
		q->sq_live = false;
		if (i)
			q->cq_live = false;
	}
	tc->assoc = false;
	tc->lost_ns = nvq_now_ns();
	nvq_err_clear();
}

/* Sleep @ms unless cancel() ends it first: false when cancelled. */
static bool nap(struct tcp_ctrl *tc, unsigned int ms)
{
	struct pollfd p = { .fd = tc->cancel_fd, .events = POLLIN };

	if (__atomic_load_n(&tc->cancelled, __ATOMIC_ACQUIRE))
		return false;
	poll(&p, 1, (int)ms);
	return !__atomic_load_n(&tc->cancelled, __ATOMIC_ACQUIRE);
}

/*
 * A new association for CC.EN = 1 after one was lost: try at once, then
 * every reconnect_delay until ctrl_loss_tmo has passed since the loss;
 * after that the controller is gone. assoc_lock held.
 */
static int assoc_reconnect(struct tcp_ctrl *tc)
{
	uint64_t tmo_ns =
		tc->o.ctrl_loss_tmo_s < 0 ?
			UINT64_MAX :
			(uint64_t)tc->o.ctrl_loss_tmo_s * 1000000000ull;
	unsigned int delay_ms =
		(unsigned int)MAX(tc->o.reconnect_delay_s, 0) * 1000u;
	int rc;

	for (;;) {
		if (__atomic_load_n(&tc->cancelled, __ATOMIC_ACQUIRE))
			rc = nvq_err(-ECANCELED, "NVMe/TCP: closing");
		else
			rc = assoc_connect(tc);
		if (!rc)
			return 0;
		if (rc == -ECANCELED ||
		    nvq_now_ns() - tc->lost_ns +
				    (uint64_t)delay_ms * 1000000ull >
			    tmo_ns ||
		    !nap(tc, delay_ms ? delay_ms : 100)) {
			char msg[256];

			nvq_errmsg_copy(msg, sizeof(msg));
			__atomic_store_n(&tc->gone, true, __ATOMIC_RELEASE);
			return nvq_err(-ENODEV,
				       "NVMe/TCP: no new association within "
				       "ctrl_loss_tmo (%d s): %s",
				       tc->o.ctrl_loss_tmo_s, msg);
		}
	}
}

/* CC.EN = 1: the admin rings the driver set in AQA/ASQ/ACQ. */
static int admin_rings(struct tcp_ctrl *tc)
{
	struct tcp_queue *aq = tc->q[0];
	uint32_t sqs = (tc->aqa & 0xfff) + 1,
		 cqs = ((tc->aqa >> 16) & 0xfff) + 1;

	if (sqs > TCP_ADMIN_ENTRIES || cqs < 2 || sqs < 2)
		return -EINVAL;
	aq->sq = dma_ptr(tc, tc->asq, (size_t)sqs * NVQ_SQE_SIZE);
	aq->cq = dma_ptr(tc, tc->acq, (size_t)cqs * NVQ_CQE_SIZE);
	if (!aq->sq || !aq->cq)
		return -EFAULT;
	aq->sq_depth = sqs;
	aq->cq_depth = cqs;
	__atomic_store_n(&aq->sq_head, 0, __ATOMIC_RELEASE);
	aq->cq_tail = 0;
	aq->cq_phase = 1;
	__atomic_store_n(&aq->cq_head, 0, __ATOMIC_RELEASE);
	aq->vector = 0;
	aq->ien = true;
	queue_forget(aq);
	aq->sq_live = aq->cq_live = true;
	return 0;
}

static void cc_write(struct tcp_ctrl *tc, uint32_t val)
{
	bool was = tc->cc & NVQ_CC_EN, now = val & NVQ_CC_EN;

	if (was && !now) {
		struct tcp_queue *aq = tc->q[0];

		/* Best effort: the target may be why we reset. */
		if (tc->assoc && aq->conn && !nvq_tcp_conn_error(aq->conn) &&
		    !tc->faulted)
			prop_set(tc, NVQ_REG_CC, 4, val);
		tc->q[0]->sq_live = tc->q[0]->cq_live = false;
		assoc_teardown(tc);
		tc->cc = val;
		return;
	}
	if (!was && now) {
		if (!tc->assoc && assoc_reconnect(tc))
			return; /* gone: CSTS reads all-ones */
		if (admin_rings(tc)) {
			tc->csts_last = NVQ_CSTS_CFS;
			return;
		}
	}
	tc->cc = val;
	if (tc->assoc && prop_set(tc, NVQ_REG_CC, 4, val))
		report_fault(tc, -EIO, "NVMe/TCP: Property Set CC failed");
}

static uint32_t tcp_reg_read32(struct nvq_transport *t, uint32_t off)
{
	struct tcp_ctrl *tc = to_tc(t);
	uint64_t v = 0;
	uint32_t r;

	if (__atomic_load_n(&tc->gone, __ATOMIC_ACQUIRE))
		return NVQ_REG_GONE32;
	pthread_mutex_lock(&tc->assoc_lock);
	switch (off) {
	case NVQ_REG_VS:
		r = tc->vs;
		break;
	case NVQ_REG_CC:
		r = tc->cc;
		break;
	case NVQ_REG_AQA:
		r = tc->aqa;
		break;
	case NVQ_REG_CSTS:
		if (!tc->assoc) {
			r = tc->csts_last & ~NVQ_CSTS_RDY;
		} else if (__atomic_load_n(&tc->faulted, __ATOMIC_ACQUIRE) ||
			   prop_get(tc, NVQ_REG_CSTS, 4, &v)) {
			/*
			 * A broken association: the fault callback asked for
			 * the reset already (or does now). No CFS here, or
			 * the watchdog would reset a second time.
			 */
			report_fault(tc, -EIO,
				     "NVMe/TCP: Property Get CSTS "
				     "failed");
			r = tc->csts_last;
		} else {
			r = tc->csts_last = (uint32_t)v;
		}
		break;
	case NVQ_REG_CAP:
		r = (uint32_t)tc->cap;
		break;
	case NVQ_REG_CAP + 4:
		r = (uint32_t)(tc->cap >> 32);
		break;
	default:
		r = 0;
		break;
	}
	pthread_mutex_unlock(&tc->assoc_lock);
	return r;
}

static uint64_t tcp_reg_read64(struct nvq_transport *t, uint32_t off)
{
	struct tcp_ctrl *tc = to_tc(t);
	uint64_t r;

	if (__atomic_load_n(&tc->gone, __ATOMIC_ACQUIRE))
		return NVQ_REG_GONE64;
	pthread_mutex_lock(&tc->assoc_lock);
	switch (off) {
	case NVQ_REG_CAP:
		r = tc->cap;
		break;
	case NVQ_REG_ASQ:
		r = tc->asq;
		break;
	case NVQ_REG_ACQ:
		r = tc->acq;
		break;
	default:
		r = 0;
		break;
	}
	pthread_mutex_unlock(&tc->assoc_lock);
	return r;
}

static void tcp_reg_write32(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	struct tcp_ctrl *tc = to_tc(t);

	if (__atomic_load_n(&tc->gone, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&tc->assoc_lock);
	if (off == NVQ_REG_CC)
		cc_write(tc, val);
	else if (off == NVQ_REG_AQA)
		tc->aqa = val;
	pthread_mutex_unlock(&tc->assoc_lock);
}

static void tcp_reg_write64(struct nvq_transport *t, uint32_t off, uint64_t val)
{
	struct tcp_ctrl *tc = to_tc(t);

	pthread_mutex_lock(&tc->assoc_lock);
	if (off == NVQ_REG_ASQ)
		tc->asq = val;
	else if (off == NVQ_REG_ACQ)
		tc->acq = val;
	pthread_mutex_unlock(&tc->assoc_lock);
}

/* ---- keep-alive ------------------------------------------------------- */

/* Send one Keep Alive and wait up to KATO for its answer. assoc_lock. */
static int keep_alive(struct tcp_ctrl *tc)
{
	struct nvq_sqe sqe = { .opcode = nvq_admin_keep_alive };
	struct tcp_queue *aq = tc->q[0];
	uint64_t deadline;
	int rc;

	__atomic_store_n(&tc->ka_done, false, __ATOMIC_RELEASE);
	pthread_mutex_lock(&aq->tx_lock);
	rc = aq->conn ?
		     nvq_tcp_conn_submit(aq->conn, &sqe, NULL, &tc->ka_slot) :
		     -ENOTCONN;
	pthread_mutex_unlock(&aq->tx_lock);
	if (rc < 0)
		return rc;
	deadline = nvq_now_ns() + (uint64_t)tc->o.kato_s * 1000000000ull;
	while (!__atomic_load_n(&tc->ka_done, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { .events = POLLIN };

		if (nvq_now_ns() > deadline)
			return -ETIMEDOUT;
		if (__atomic_load_n(&tc->cancelled, __ATOMIC_ACQUIRE))
			return 0;
		pthread_mutex_lock(&aq->rx_lock);
		p.fd = aq->conn ? nvq_tcp_conn_fd(aq->conn) : -1;
		pthread_mutex_unlock(&aq->rx_lock);
		if (p.fd < 0)
			return -ENOTCONN;
		/* Poll without the lock: the admin reaper may take it. */
		poll(&p, 1, 10);
		pthread_mutex_lock(&aq->rx_lock);
		rc = aq->conn ? nvq_tcp_conn_recv(aq->conn, 0) : -ENOTCONN;
		pthread_mutex_unlock(&aq->rx_lock);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void *ka_main(void *arg)
{
	struct tcp_ctrl *tc = arg;
	unsigned int period_ms = tc->o.kato_s * 1000u / 2;

	pthread_mutex_lock(&tc->ka_mutex);
	while (!tc->ka_stop) {
		struct timespec ts;
		int rc = 0;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += period_ms / 1000;
		ts.tv_nsec += (long)(period_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!tc->ka_stop &&
		       pthread_cond_timedwait(&tc->ka_cond, &tc->ka_mutex,
					      &ts) != ETIMEDOUT)
			;
		if (tc->ka_stop)
			break;
		pthread_mutex_unlock(&tc->ka_mutex);
		pthread_mutex_lock(&tc->assoc_lock);
		if (tc->assoc &&
		    !__atomic_load_n(&tc->faulted, __ATOMIC_ACQUIRE))
			rc = keep_alive(tc);
		pthread_mutex_unlock(&tc->assoc_lock);
		if (rc) {
			struct tcp_queue *aq = tc->q[0];

			pthread_mutex_lock(&aq->rx_lock);
			if (aq->conn)
				nvq_tcp_conn_kill(aq->conn, -ETIMEDOUT,
						  "keep-alive not answered");
			pthread_mutex_unlock(&aq->rx_lock);
			report_fault(
				tc, rc,
				rc == -ETIMEDOUT ?
					"NVMe/TCP: Keep Alive not answered "
					"within KATO" :
					"NVMe/TCP: Keep Alive failed");
		}
		pthread_mutex_lock(&tc->ka_mutex);
	}
	pthread_mutex_unlock(&tc->ka_mutex);
	return NULL;
}

/* ---- the rest of the transport ---------------------------------------- */

static int tcp_irq_fd(struct nvq_transport *t, unsigned int vector)
{
	struct tcp_ctrl *tc = to_tc(t);

	return vector < t->nr_vectors ? tc->irq_fds[vector] : -EINVAL;
}

static int tcp_irq_cpu(struct nvq_transport *t, unsigned int vector)
{
	struct tcp_ctrl *tc = to_tc(t);

	if (vector >= t->nr_vectors)
		return -1;
	return (int)(vector % (unsigned int)tc->nr_cpus);
}

static int tcp_poll_fd(struct nvq_transport *t, unsigned int vector)
{
	struct tcp_ctrl *tc = to_tc(t);

	return vector < t->nr_vectors ? tc->vec_epfd[vector] : -1;
}

static void tcp_cancel(struct nvq_transport *t)
{
	struct tcp_ctrl *tc = to_tc(t);
	uint64_t one = 1;

	__atomic_store_n(&tc->cancelled, true, __ATOMIC_RELEASE);
	if (write(tc->cancel_fd, &one, sizeof(one)) < 0) {
		/* saturated: already signalled */
	}
}

static void tcp_close(struct nvq_transport *t)
{
	struct tcp_ctrl *tc = to_tc(t);
	unsigned int i;

	tcp_cancel(t);
	if (tc->ka_started) {
		pthread_mutex_lock(&tc->ka_mutex);
		tc->ka_stop = true;
		pthread_cond_signal(&tc->ka_cond);
		pthread_mutex_unlock(&tc->ka_mutex);
		pthread_join(tc->ka_thread, NULL);
	}
	pthread_mutex_lock(&tc->assoc_lock);
	for (i = 0; i <= TCP_MAX_QID; i++)
		if (tc->q[i])
			queue_detach(tc->q[i]);
	tc->assoc = false;
	pthread_mutex_unlock(&tc->assoc_lock);
	for (i = 0; i <= TCP_MAX_QID; i++)
		queue_free(tc->q[i]);
	for (i = 0; tc->irq_fds && i < t->nr_vectors; i++)
		if (tc->irq_fds[i] >= 0)
			close(tc->irq_fds[i]);
	for (i = 0; tc->vec_epfd && i < t->nr_vectors; i++)
		if (tc->vec_epfd[i] >= 0)
			close(tc->vec_epfd[i]);
	free(tc->irq_fds);
	free(tc->vec_epfd);
	if (tc->cancel_fd >= 0)
		close(tc->cancel_fd);
	free(tc->regions);
	pthread_rwlock_destroy(&tc->regions_lock);
	pthread_mutex_destroy(&tc->assoc_lock);
	pthread_mutex_destroy(&tc->ka_mutex);
	pthread_cond_destroy(&tc->ka_cond);
	free(tc);
}

static const struct nvq_transport_ops tcp_ops = {
	.name = "tcp",
	.close = tcp_close,
	.reg_read32 = tcp_reg_read32,
	.reg_read64 = tcp_reg_read64,
	.reg_write32 = tcp_reg_write32,
	.reg_write64 = tcp_reg_write64,
	.db_write = tcp_db_write,
	.dma_map = tcp_dma_map,
	.dma_unmap = tcp_dma_unmap,
	.irq_fd = tcp_irq_fd,
	.irq_cpu = tcp_irq_cpu,
	.pump = tcp_pump,
	.poll_fd = tcp_poll_fd,
	.cancel = tcp_cancel,
};

int nvq_tcp_transport_open(const char *params, struct nvq_transport **out)
{
	struct tcp_ctrl *tc;
	pthread_condattr_t ca;
	unsigned int i, nvec;
	char msg[384];
	int rc;

	tc = calloc(1, sizeof(*tc));
	if (!tc)
		return nvq_err(-ENOMEM, "tcp transport: out of memory");
	rc = nvq_tcp_opts_parse(params, false, &tc->o);
	if (rc) {
		free(tc);
		return rc;
	}
	tc->t.ops = &tcp_ops;
	tc->t.sgl = true;
	tc->t.numa_node = -1;
	tc->nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (tc->nr_cpus < 1)
		tc->nr_cpus = 1;
	tc->prop_tmo_ms = MAX(tc->o.connect_timeout_ms, 1000u);
	snprintf(tc->t.name, sizeof(tc->t.name), "tcp:%.36s:%.8s,nqn=%.36s",
		 tc->o.host, tc->o.port, tc->o.subnqn);
	nvec = (tc->o.nr_io_queues ? tc->o.nr_io_queues :
				     (unsigned int)tc->nr_cpus) +
	       1;
	nvec = MIN(nvec, TCP_MAX_QID + 1);
	tc->t.nr_vectors = nvec;
	pthread_mutex_init(&tc->assoc_lock, NULL);
	pthread_mutex_init(&tc->ka_mutex, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&tc->ka_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_rwlock_init(&tc->regions_lock, NULL);
	tc->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	tc->irq_fds = calloc(nvec, sizeof(int));
	tc->vec_epfd = calloc(nvec, sizeof(int));
	if (tc->cancel_fd < 0 || !tc->irq_fds || !tc->vec_epfd) {
		rc = nvq_err(-ENOMEM, "tcp transport: out of memory or fds");
		goto fail;
	}
	for (i = 0; i < nvec; i++)
		tc->irq_fds[i] = tc->vec_epfd[i] = -1;
	for (i = 0; i < nvec; i++) {
		tc->irq_fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		tc->vec_epfd[i] = epoll_create1(EPOLL_CLOEXEC);
		if (tc->irq_fds[i] < 0 || tc->vec_epfd[i] < 0) {
			rc = nvq_err(-errno, "tcp transport: %s",
				     strerror(errno));
			goto fail;
		}
	}
	if (!queue_get(tc, 0, TCP_ADMIN_CONN_DEPTH)) {
		rc = nvq_err(-ENOMEM, "tcp transport: out of memory");
		goto fail;
	}
	pthread_mutex_lock(&tc->assoc_lock);
	rc = assoc_connect(tc);
	pthread_mutex_unlock(&tc->assoc_lock);
	if (rc) {
		nvq_errmsg_copy(msg, sizeof(msg));
		rc = nvq_err(rc, "%s:%s, %s: %s", tc->o.host, tc->o.port,
			     tc->o.subnqn, msg);
		goto fail;
	}
	if (tc->o.kato_s) {
		rc = -pthread_create(&tc->ka_thread, NULL, ka_main, tc);
		if (rc) {
			rc = nvq_err(rc, "tcp transport: keep-alive thread: %s",
				     strerror(-rc));
			goto fail;
		}
		tc->ka_started = true;
	}
	*out = &tc->t;
	return 0;

fail:
	nvq_errmsg_copy(msg, sizeof(msg));
	tcp_close(&tc->t);
	return nvq_err(rc, "%s", msg);
}
