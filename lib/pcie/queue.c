// SPDX-License-Identifier: MIT
/*
 * Queue pairs: the SQ/CQ rings, their split locks, their doorbells (MMIO
 * or shadow), and the reaping of completions; the command contexts and
 * their lifecycle are the core's (lib/nvme/request.h). This is the hot path: no
 * syscalls, allocations or clock reads per command here.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dmapool.h"
#include "lock.h"
#include "qos.h"
#include "queue.h"
#include "request.h"
#include "transport.h"

/* The clock of queues without a watchdog: always 0. */
static const uint32_t no_clock;

/* CQEs consumed per cq_lock hold; also the size of the on-stack batch. */
#define REAP_BATCH 32

/* The locking switch (see queue.h): one predictable branch per batch. */
static inline void sq_lock(struct nvq_queue *q)
{
	if (q->sq_locked)
		nvq_lock(&q->sq_lock);
}

static inline void sq_unlock(struct nvq_queue *q)
{
	if (q->sq_locked)
		nvq_unlock(&q->sq_lock);
}

/*
 * The completion side's lock word. Only the benchmark build of the library
 * (NVQ_BENCH_SINGLE_LOCK) can point it at sq_lock; the library that
 * applications link takes cq_lock directly, with no extra load.
 */
static inline uint32_t *cq_lock_word(struct nvq_queue *q)
{
#ifdef NVQ_BENCH_SINGLE_LOCK
	return q->cq_lockp;
#else
	return &q->cq_lock;
#endif
}

static inline void cq_lock(struct nvq_queue *q)
{
	if (q->cq_locked)
		nvq_lock(cq_lock_word(q));
}

static inline void cq_unlock(struct nvq_queue *q)
{
	if (q->cq_locked)
		nvq_unlock(cq_lock_word(q));
}

int nvq_queue_create(const struct nvq_queue_params *p, struct nvq_queue **qp)
{
	struct nvq_queue *q;
	uint32_t nr_tags;

	if (p->depth < 2 || p->depth > 65536 || !p->sq || !p->cq)
		return nvq_err(-EINVAL, "queue %u: bad depth %u or rings",
			       p->qid, p->depth);
	q = aligned_alloc(NVQ_CACHELINE, ALIGN_UP(sizeof(*q), NVQ_CACHELINE));
	if (!q)
		return nvq_err(-ENOMEM, "queue %u: out of memory", p->qid);
	memset(q, 0, sizeof(*q));

	/* One tag fewer than entries: the SQ and CQ can never overflow. */
	nr_tags = p->depth - 1;
	q->cmds = aligned_alloc(NVQ_CACHELINE, nr_tags * sizeof(*q->cmds));
	q->tag_next = calloc(nr_tags, sizeof(*q->tag_next));
	if (!q->cmds || !q->tag_next) {
		free(q->cmds);
		free(q->tag_next);
		free(q);
		return nvq_err(-ENOMEM, "queue %u: out of memory", p->qid);
	}
	memset(q->cmds, 0, nr_tags * sizeof(*q->cmds));
	nvq_tags_init(&q->tags, q->tag_next, nr_tags);
	q->nr_tags = nr_tags;
	q->tag_bits = (uint8_t)nvq_tag_bits(nr_tags);
	q->tag_mask = (uint16_t)((1u << q->tag_bits) - 1);

	q->t = p->t;
	q->cq_t = p->t;
	q->ctrl = p->ctrl;
	q->pools = p->pools;
	q->qid = p->qid;
	q->depth = p->depth;
	q->cq_depth = p->depth;
	q->mode = p->mode;
	q->node = p->node;
	q->lock_mode = p->lock_mode;
	q->sq = p->sq;
	q->cq = p->cq;
	q->cq_pos = 1u << 16; /* head 0, expected phase 1 */
	q->sq_db_off = nvq_sq_db_offset(p->qid, p->dstrd);
	q->cq_db_off = nvq_cq_db_offset(p->qid, p->dstrd);
	if (p->dbbuf_db && p->dbbuf_ei) {
		q->sq_shadow = p->dbbuf_db + nvq_sq_db_index(p->qid, p->dstrd);
		q->cq_shadow = p->dbbuf_db + nvq_cq_db_index(p->qid, p->dstrd);
		q->sq_eventidx =
			p->dbbuf_ei + nvq_sq_db_index(p->qid, p->dstrd);
		q->cq_eventidx =
			p->dbbuf_ei + nvq_cq_db_index(p->qid, p->dstrd);
	}

	q->clock = p->clock ? p->clock : &no_clock;
	q->sq_lock = NVQ_LOCK_FREE;
	q->cq_lock = NVQ_LOCK_FREE;
	switch (p->lock_mode) {
	case NVQ_LOCK_NONE:
		q->cq_lockp = &q->cq_lock;
		break;
#ifdef NVQ_BENCH_SINGLE_LOCK
	case NVQ_LOCK_SINGLE:
		/* The benchmark baseline: completion serialises on sq_lock. */
		q->sq_locked = q->cq_locked = true;
		q->cq_lockp = &q->sq_lock;
		break;
#endif
	case NVQ_LOCK_SPLIT:
	default:
		q->sq_locked = q->cq_locked = true;
		q->cq_lockp = &q->cq_lock;
		break;
	}
	*qp = q;
	return 0;
}

void nvq_queue_destroy(struct nvq_queue *q)
{
	if (!q)
		return;
	/* Before the counter and flag QoS reads go away. */
	nvq_qos_queue_destroy(q->qos);
	free(q->cmds);
	free(q->tag_next);
	free(q);
}

/*
 * Tell the device about new SQ entries. With shadow doorbells the tail goes
 * to host memory and the MMIO write happens only when the device's
 * EventIdx says it stopped looking at the shadow value (it went to sleep).
 * The shadow store must be ordered before the EventIdx load (the kernel's
 * nvme_dbbuf_update_and_check_event() puts mb() between them): a
 * sequentially consistent exchange and load do that (xchg is a full
 * barrier on x86) in a form ThreadSanitizer understands, unlike a fence.
 * The device side pairs with a sequentially consistent EventIdx store and
 * shadow load before it sleeps.
 */
static inline void ring_sq(struct nvq_queue *q)
{
	uint16_t tail = q->sq_tail, old = q->sq_db_last;

	if (tail == old)
		return;
	q->sq_db_last = tail;
	if (q->sq_shadow) {
		uint16_t ei;

		__atomic_exchange_n(q->sq_shadow, tail, __ATOMIC_SEQ_CST);
		ei = (uint16_t)__atomic_load_n(q->sq_eventidx,
					       __ATOMIC_SEQ_CST);
		if (!nvq_dbbuf_need_event(ei, tail, old))
			return;
	}
	q->t->ops->db_write(q->t, q->sq_db_off, tail);
	WRITE_ONCE(q->stat_doorbells, q->stat_doorbells + 1);
}

static inline void ring_cq(struct nvq_queue *q, uint16_t head)
{
	uint16_t old = q->cq_db_last;

	q->cq_db_last = head;
	if (q->cq_shadow) {
		uint16_t ei;

		__atomic_exchange_n(q->cq_shadow, head, __ATOMIC_SEQ_CST);
		ei = (uint16_t)__atomic_load_n(q->cq_eventidx,
					       __ATOMIC_SEQ_CST);
		if (!nvq_dbbuf_need_event(ei, head, old))
			return;
	}
	q->cq_t->ops->db_write(q->cq_t, q->cq_db_off, head);
}

/*
 * CPU latency QoS, once per batch after the doorbell: while the queue is
 * active (or QoS is off) this is one load and a branch never taken. The
 * idle -> active transition applies the limit after the doorbell and
 * outside sq_lock, so the device already works on the batch meanwhile.
 */
static inline void qos_check(struct nvq_queue *q)
{
	if (unlikely(READ_ONCE(q->qos_idle)))
		nvq_qos_activate(q->qos);
}

void nvq_queue_post(struct nvq_queue *q, struct nvq_cmd *lead,
		    unsigned int flags)
{
	struct nvq_cmd *cmd;
	uint32_t tail, n = 0, now;

	if (unlikely(lead->nr > 1)) {
		__atomic_store_n(&lead->remaining, lead->nr, __ATOMIC_RELAXED);
		__atomic_store_n(&lead->failed, 0, __ATOMIC_RELAXED);
	}
	/*
	 * Marked in flight before the device can see the command; the
	 * doorbell's release orders these stores before its CQE.
	 */
	now = __atomic_load_n(q->clock, __ATOMIC_RELAXED);
	for (cmd = lead; cmd; cmd = cmd->next) {
		/* The watchdog reads tick after it saw state: release. */
		__atomic_store_n(&cmd->tick, now, __ATOMIC_RELAXED);
		__atomic_store_n(&cmd->state, NVQ_CMD_INFLIGHT | cmd->cid,
				 __ATOMIC_RELEASE);
	}

	sq_lock(q);
	tail = q->sq_tail;
	for (cmd = lead; cmd; cmd = cmd->next) {
		memcpy(&q->sq[tail], &cmd->sqe, sizeof(cmd->sqe));
		if (++tail == q->depth)
			tail = 0;
		n++;
	}
	q->sq_tail = (uint16_t)tail;
	/* Also the QoS activity signal: the timer compares it per period. */
	WRITE_ONCE(q->stat_submitted, q->stat_submitted + n);
	WRITE_ONCE(q->reqs_submitted, q->reqs_submitted + 1);
	if (flags & NVQ_IO_MORE) {
		sq_unlock(q);
		return;
	}
	ring_sq(q);
	sq_unlock(q);
	qos_check(q);
}

void nvq_queue_ring(struct nvq_queue *q)
{
	sq_lock(q);
	ring_sq(q);
	sq_unlock(q);
	qos_check(q);
}

/*
 * The command a CQE names, or NULL when the CQE must be ignored: a CQE for
 * another SQ, an impossible SQ head, or a command id that is not in flight
 * (nvq_req_lookup()). Nothing the device wrote is used as a pointer or
 * index unchecked.
 */
static inline struct nvq_cmd *cqe_cmd(struct nvq_queue *q, uint16_t cid,
				      uint16_t sqid, uint16_t sqhd)
{
	if (unlikely(sqid != q->qid || sqhd >= q->depth))
		return NULL;
	return nvq_req_lookup(q, cid);
}

int nvq_queue_reap(struct nvq_queue *q, unsigned int max)
{
	struct nvq_cmd *batch[REAP_BATCH];
	unsigned int budget = max ? max : UINT_MAX;
	int done = 0;

	/* Completions recovery took from the device (timeout.c). */
	if (unlikely(__atomic_load_n(&q->recovered, __ATOMIC_ACQUIRE)))
		done = nvq_req_deliver_recovered(q);
	for (;;) {
		unsigned int n = 0, seen = 0, bad = 0, i;
		/* 32 bits: a 65536-entry CQ wraps at head 65536. */
		uint32_t pos, head, phase;

		cq_lock(q);
		pos = __atomic_load_n(&q->cq_pos, __ATOMIC_RELAXED);
		head = pos & 0xffff;
		phase = pos >> 16;
		while (seen < REAP_BATCH && n < budget) {
			struct nvq_cqe *cqe = &q->cq[head];
			uint16_t st =
				__atomic_load_n(&cqe->status, __ATOMIC_ACQUIRE);
			struct nvq_cmd *cmd;

			if ((st & NVQ_CQE_PHASE) != phase)
				break;
			seen++;
			cmd = cqe_cmd(q, cqe->cid, cqe->sq_id, cqe->sq_head);
			if (unlikely(!cmd)) {
				bad++;
			} else {
				cmd->cpl_status = NVQ_STATUS(st);
				cmd->cpl_err = nvq_status_err(cmd->cpl_status);
				cmd->cpl_result = cqe->result;
				cmd->cpl_dw1 = cqe->dw1;
				batch[n++] = cmd;
			}
			if (++head == q->cq_depth) {
				head = 0;
				phase ^= 1;
			}
		}
		if (seen) {
			__atomic_store_n(&q->cq_pos, head | phase << 16,
					 __ATOMIC_RELAXED);
			ring_cq(q, (uint16_t)head);
			WRITE_ONCE(q->stat_completed, q->stat_completed + n);
			if (unlikely(bad))
				WRITE_ONCE(q->stat_bad, q->stat_bad + bad);
		}
		cq_unlock(q);

		for (i = 0; i < n; i++)
			done += nvq_req_finish(q, batch[i]);
		budget -= n;
		if (seen < REAP_BATCH || !budget)
			break;
	}
	if (done)
		__atomic_fetch_add(&q->reqs_done, (uint64_t)done,
				   __ATOMIC_RELAXED);
	return done;
}

bool nvq_queue_pending(const struct nvq_queue *q)
{
	uint32_t pos = __atomic_load_n(&q->cq_pos, __ATOMIC_RELAXED);
	uint16_t head = (uint16_t)pos;
	uint16_t st;

	/* A stale position only ever errs towards "pending". */
	if (head >= q->cq_depth)
		return true;
	st = __atomic_load_n(&q->cq[head].status, __ATOMIC_ACQUIRE);
	return (st & NVQ_CQE_PHASE) == (pos >> 16);
}

int nvq_queue_posted_cids(struct nvq_queue *q, uint16_t *cids, unsigned int max,
			  bool stopped)
{
	uint32_t pos, head, phase;
	unsigned int n = 0, seen;

	/*
	 * Entries between the head and the first stale one are the device's
	 * and not yet released to it, so it does not rewrite them - as long
	 * as the head does not move meanwhile: hold cq_lock. An exclusive
	 * queue's reaper takes no lock; unless the device is stopped, there
	 * is no telling, and the caller must do without the list.
	 */
	if (!q->cq_locked && !stopped)
		return -EBUSY;
	if (q->cq_locked)
		cq_lock(q);
	pos = __atomic_load_n(&q->cq_pos, __ATOMIC_ACQUIRE);
	head = pos & 0xffff;
	phase = pos >> 16;
	/* At most one lap: a CQ never holds more than depth - 1 entries. */
	for (seen = 0; head < q->cq_depth && seen < q->cq_depth && n < max;
	     seen++) {
		const struct nvq_cqe *cqe = &q->cq[head];
		uint16_t st = __atomic_load_n(&cqe->status, __ATOMIC_ACQUIRE);

		if ((st & NVQ_CQE_PHASE) != phase)
			break;
		/* The reaper's own checks (cqe_cmd()): what it would drop is
		 * no completion of the command. */
		if (cqe->sq_id == q->qid && cqe->sq_head < q->depth)
			cids[n++] = cqe->cid;
		if (++head == q->cq_depth) {
			head = 0;
			phase ^= 1;
		}
	}
	if (q->cq_locked)
		cq_unlock(q);
	return (int)n;
}

bool nvq_queue_irq_pending(const struct nvq_queue *q)
{
	struct pollfd pfd = { .fd = q->vec ? q->vec->fd : -1,
			      .events = POLLIN };

	return pfd.fd >= 0 && poll(&pfd, 1, 0) == 1;
}

static void deadline_ts(uint64_t deadline_ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(deadline_ns / 1000000000ull);
	ts->tv_nsec = (long)(deadline_ns % 1000000000ull);
}

int nvq_vector_sleep(struct nvq_vector *v, struct nvq_queue *q,
		     uint64_t deadline_ns)
{
	uint64_t gen;
	int rc = 0;

	/*
	 * This CPU takes the completions it sleeps for: keep it out of deep
	 * idle while the queue is busy. One load and a branch once known;
	 * noted before v->lock, as a new CPU takes the QoS lock.
	 */
	if (q->qos)
		nvq_qos_note_cpu(q->qos, sched_getcpu());
	pthread_mutex_lock(&v->lock);
	/*
	 * Checked under v->lock: a CQE that appears after this check raises
	 * the vector, which wakes the sleeper, which bumps gen under v->lock
	 * after we recorded it - so either we see the CQE here or the gen
	 * change below.
	 */
	if (nvq_queue_pending(q)) {
		pthread_mutex_unlock(&v->lock);
		return 0;
	}
	if (!v->sleeper) {
		struct pollfd pfd = { .fd = v->fd, .events = POLLIN };
		uint64_t val;
		int ms = -1, r;

		v->sleeper = true;
		pthread_mutex_unlock(&v->lock);
		if (deadline_ns) {
			uint64_t now = nvq_now_ns();

			ms = 0;
			if (deadline_ns > now) {
				uint64_t left =
					(deadline_ns - now + 999999) / 1000000;

				ms = left > INT_MAX ? INT_MAX : (int)left;
			}
		}
		r = poll(&pfd, 1, ms);
		if (r > 0 && read(v->fd, &val, sizeof(val)) == sizeof(val))
			__atomic_fetch_add(&q->stat_interrupts, 1,
					   __ATOMIC_RELAXED);
		if (r == 0)
			rc = -ETIMEDOUT;
		pthread_mutex_lock(&v->lock);
		v->sleeper = false;
		v->gen++;
		pthread_cond_broadcast(&v->cond);
		pthread_mutex_unlock(&v->lock);
		return rc;
	}

	gen = v->gen;
	while (v->gen == gen) {
		if (deadline_ns) {
			struct timespec ts;

			deadline_ts(deadline_ns, &ts);
			if (pthread_cond_timedwait(&v->cond, &v->lock, &ts) ==
			    ETIMEDOUT) {
				rc = -ETIMEDOUT;
				break;
			}
		} else {
			pthread_cond_wait(&v->cond, &v->lock);
		}
	}
	pthread_mutex_unlock(&v->lock);
	return rc;
}
