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
#include <linux/membarrier.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

/*
 * The reaping side's critical section (the locking switch of queue.h, one
 * predictable branch per batch): cq_lock, or an exclusive queue's busy
 * flag and its gate. False: recovery owns the rings, reap nothing.
 */
static inline bool cq_enter(struct nvq_queue *q)
{
	if (q->cq_locked) {
		nvq_lock(cq_lock_word(q));
		return true;
	}
	__atomic_store_n(&q->cq_busy, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (likely(__atomic_load_n(&q->gate, __ATOMIC_ACQUIRE) !=
		   NVQ_GATE_CLOSED))
		return true;
	__atomic_store_n(&q->cq_busy, 0, __ATOMIC_RELEASE);
	return false;
}

static inline void cq_exit(struct nvq_queue *q)
{
	if (q->cq_locked)
		nvq_unlock(cq_lock_word(q));
	else
		__atomic_store_n(&q->cq_busy, 0, __ATOMIC_RELEASE);
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
	if (p->t) {
		q->pump = p->t->ops->pump;
		q->sgl = p->t->sgl;
	}
	q->ctrl = p->ctrl;
	if (p->pools)
		q->qpools = *p->pools;
	q->qpools.cache = NULL;
	q->pools = &q->qpools;
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
	/* The admin queue is serialised by admin_lock: no cache needed. */
	if (p->qid && p->pools &&
	    nvq_queue_set_pools(q, p->pools, p->node, false)) {
		nvq_queue_destroy(q);
		return -ENOMEM;
	}
	*qp = q;
	return 0;
}

int nvq_queue_set_pools(struct nvq_queue *q, const struct nvq_pools *pools,
			int node, bool spans)
{
	struct nvq_pool_cache *cache = NULL;

	if (pools->mode == NVQ_POOLS_CACHE) {
		cache = nvq_pool_cache_create(pools, node,
					      q->lock_mode != NVQ_LOCK_NONE);
		if (!cache)
			return -ENOMEM;
	}
	nvq_pool_cache_destroy(q->qpools.cache);
	q->qpools = *pools;
	q->qpools.cache = cache;
	q->node = node;
	q->node_spans = spans;
	return 0;
}

void nvq_queue_destroy(struct nvq_queue *q)
{
	if (!q)
		return;
	/* Before the counter and flag QoS reads go away. */
	nvq_qos_queue_destroy(q->qos);
	nvq_pool_cache_destroy(q->qpools.cache);
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

/*
 * The submission side's critical section: sq_lock, or for an exclusive
 * queue its busy flag, stored without a fence - nvq_queue_gate_close()
 * pairs it with membarrier(2). Then the gate, one load per batch.
 */
static inline uint32_t sq_enter(struct nvq_queue *q)
{
	if (q->sq_locked) {
		nvq_lock(&q->sq_lock);
	} else {
		__atomic_store_n(&q->sq_busy, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	return __atomic_load_n(&q->gate, __ATOMIC_ACQUIRE);
}

static inline void sq_exit(struct nvq_queue *q)
{
	if (q->sq_locked)
		nvq_unlock(&q->sq_lock);
	else
		__atomic_store_n(&q->sq_busy, 0, __ATOMIC_RELEASE);
}

void nvq_queue_wake(struct nvq_queue *q)
{
	uint64_t one = 1;

	if (q->mode != NVQ_MODE_POLL && q->vec && q->vec->fd >= 0 &&
	    write(q->vec->fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, they will wake. */
	}
}

/*
 * A submission that found the gate shut, outside the critical section.
 * Closed: wait for recovery to finish and return true (try again). Dead:
 * the request completes with the controller's errno, delivered by the
 * queue's next reap like recovery's own completions.
 */
static bool __attribute__((noinline))
post_gated(struct nvq_queue *q, struct nvq_cmd *lead, uint32_t gate)
{
	struct nvq_cmd *cmd;
	unsigned int us = 10;
	int err;

	while (gate == NVQ_GATE_CLOSED) {
		nvq_sleep_us(us);
		if (us < 1000)
			us *= 2;
		gate = __atomic_load_n(&q->gate, __ATOMIC_ACQUIRE);
	}
	if (gate == NVQ_GATE_OPEN)
		return true;
	err = __atomic_load_n(&q->dead, __ATOMIC_ACQUIRE);
	for (cmd = lead; cmd; cmd = cmd->next) {
		cmd->cpl_err = err ? err : -EIO;
		cmd->cpl_status = 0;
		cmd->cpl_result = 0;
		cmd->cpl_dw1 = 0;
		__atomic_store_n(&cmd->state, NVQ_CMD_RECOVERED | cmd->cid,
				 __ATOMIC_RELEASE);
	}
	__atomic_store_n(&q->recovered, 1, __ATOMIC_RELEASE);
	nvq_queue_wake(q);
	return false;
}

void nvq_queue_post(struct nvq_queue *q, struct nvq_cmd *lead,
		    unsigned int flags)
{
	struct nvq_cmd *cmd;
	uint32_t tail, n = 0, now, gate;

	if (unlikely(lead->nr > 1) && !(flags & NVQ_POST_CHAINED)) {
		__atomic_store_n(&lead->remaining, lead->nr, __ATOMIC_RELAXED);
		__atomic_store_n(&lead->failed, 0, __ATOMIC_RELAXED);
	}
	now = __atomic_load_n(q->clock, __ATOMIC_RELAXED);
again:
	gate = sq_enter(q);
	if (unlikely(gate != NVQ_GATE_OPEN)) {
		sq_exit(q);
		if (post_gated(q, lead, gate))
			goto again;
		return;
	}
	/*
	 * Marked in flight inside the critical section, so that a reset
	 * that holds it sees exactly the commands that are in the ring;
	 * before the doorbell, whose release orders these stores before
	 * the device's CQE.
	 */
	tail = q->sq_tail;
	for (cmd = lead; cmd; cmd = cmd->next) {
		/* The watchdog reads tick after it saw state: release. */
		__atomic_store_n(&cmd->tick, now, __ATOMIC_RELAXED);
		__atomic_store_n(&cmd->state, NVQ_CMD_INFLIGHT | cmd->cid,
				 __ATOMIC_RELEASE);
		memcpy(&q->sq[tail], &cmd->sqe, sizeof(cmd->sqe));
		if (++tail == q->depth)
			tail = 0;
		n++;
	}
	q->sq_tail = (uint16_t)tail;
	/* Also the QoS activity signal: the timer compares it per period. */
	WRITE_ONCE(q->stat_submitted, q->stat_submitted + n);
	/* A chained request's later commands are no new requests. */
	WRITE_ONCE(q->reqs_submitted,
		   q->reqs_submitted + !(flags & NVQ_POST_CHAINED));
	if (flags & NVQ_IO_MORE) {
		sq_exit(q);
		return;
	}
	ring_sq(q);
	sq_exit(q);
	qos_check(q);
}

void nvq_queue_ring(struct nvq_queue *q)
{
	/* Closed: the reset rings what it posts again; dead: nothing to. */
	if (sq_enter(q) == NVQ_GATE_OPEN)
		ring_sq(q);
	sq_exit(q);
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

		if (unlikely(!cq_enter(q)))
			break;
		if (unlikely(q->pump))
			q->pump(q->cq_t, q->qid);
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
		cq_exit(q);

		for (i = 0; i < n; i++)
			done += nvq_req_finish(q, batch[i]);
		budget -= n;
		if (seen < REAP_BATCH || !budget)
			break;
	}
	if (done)
		__atomic_fetch_add(&q->reqs_done, (uint64_t)done,
				   __ATOMIC_RELAXED);
	else
		nvq_transport_idle(q->t);
	return done;
}

bool nvq_queue_pending(const struct nvq_queue *q)
{
	uint32_t pos = __atomic_load_n(&q->cq_pos, __ATOMIC_RELAXED);
	uint16_t head = (uint16_t)pos;
	uint16_t st;

	/* A stale position only ever errs towards "pending". */
	if (head >= q->cq_depth ||
	    unlikely(__atomic_load_n(&q->recovered, __ATOMIC_ACQUIRE)))
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
	int fd = q->vec ? q->vec->fd : -1;
	uint64_t val, one = 1;

	/*
	 * Sleepers never read the counter (epoll, edge-triggered), so it
	 * says nothing by itself: take it, and where it held a signal put
	 * one back - a new edge, which wakes a sleeper that missed the
	 * first one. Only the watchdog asks, once per late command.
	 */
	if (fd < 0 || read(fd, &val, sizeof(val)) != sizeof(val))
		return false;
	if (write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: signalled again meanwhile */
	}
	return true;
}

bool nvq_queue_sleeping(const struct nvq_queue *q)
{
	const struct nvq_vector *v = q->vec;

	return v && (__atomic_load_n(&v->sleeper, __ATOMIC_RELAXED) ||
		     __atomic_load_n(&v->cthread_asleep, __ATOMIC_RELAXED));
}

static void deadline_ts(uint64_t deadline_ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(deadline_ns / 1000000000ull);
	ts->tv_nsec = (long)(deadline_ns % 1000000000ull);
}

bool nvq_vector_set_mask(struct nvq_vector *v, bool on)
{
	const struct nvq_transport_ops *ops = v->t ? v->t->ops : NULL;

	if (v->masked == on || v->nomask)
		return v->masked;
	if (!ops || !ops->irq_mask || ops->irq_mask(v->t, v->index, on) < 0) {
		/* Unmasking cannot fail where masking worked. */
		v->nomask = true;
		return v->masked;
	}
	__atomic_store_n(&v->masked, on, __ATOMIC_RELAXED);
	return on;
}

/*
 * A polling waiter's hybrid sleep: 1 ns of timer slack for this thread
 * while it sleeps so (the default 50 us would be most of the sleep), the
 * thread's own value back once it sleeps on the interrupt again.
 */
static __thread long saved_slack = -1;

static void slack_tight(void)
{
	if (saved_slack >= 0)
		return;
	saved_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (saved_slack < 0 || prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0))
		saved_slack = -1;
}

static void slack_restore(void)
{
	if (saved_slack < 0)
		return;
	prctl(PR_SET_TIMERSLACK, (unsigned long)saved_slack, 0, 0, 0);
	saved_slack = -1;
}

#define ADD(qq, f, v) __atomic_fetch_add(&(qq)->w.f, (v), __ATOMIC_RELAXED)

/* Empty looks at the CQ between clock reads (a device on our CPUs gets
 * its share through nvq_transport_idle()). */
#define SPIN_CLOCK_EVERY 16u

/*
 * Hybrid: sleep before polling when the next completion is expected
 * later than the wake-up cost and a margin from now. Returns the time
 * asked for (0: no sleep).
 */
static uint64_t hybrid_sleep(struct nvq_qos_queue *qq, uint64_t t0,
			     uint64_t deadline_ns)
{
	uint64_t est = __atomic_load_n(&qq->w.est_ns, __ATOMIC_RELAXED);
	uint64_t wake = __atomic_load_n(&nvq_qos_wake_p50_ns, __ATOMIC_RELAXED);
	uint64_t margin = wake / 2 + 2000, ns, until;
	struct timespec ts;

	if (!wake || est <= wake + margin + wake)
		return 0;
	ns = est - wake - margin;
	until = t0 + ns;
	if (deadline_ns && until > deadline_ns)
		return 0;
	slack_tight();
	deadline_ts(until, &ts);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	ADD(qq, sleeps, 1);
	ADD(qq, sleep_ns, ns);
	return ns;
}

/* A new sample of the time from a wait to its completion. */
static void est_update(struct nvq_qos_queue *qq, uint64_t sample)
{
	uint64_t est = __atomic_load_n(&qq->w.est_ns, __ATOMIC_RELAXED);

	est = est ? est - est / 8 + sample / 8 : sample;
	__atomic_store_n(&qq->w.est_ns, est, __ATOMIC_RELAXED);
}

/*
 * Waiter polling: look at the CQ until a completion is there (0), the
 * deadline passes (-ETIMEDOUT) or the queue went idle (-EAGAIN: sleep on
 * the interrupt now). The vector is masked meanwhile where that is
 * possible and no thread sleeps on it.
 */
static int spin_wait(struct nvq_vector *v, struct nvq_queue *q, uint8_t how,
		     uint64_t deadline_ns)
{
	struct nvq_qos_queue *qq = q->qos;
	uint64_t t0 = nvq_now_ns(), now = t0, slept = 0;
	unsigned int n = 0;
	int rc = 0;

	if (!READ_ONCE(v->masked) && !v->nomask) {
		pthread_mutex_lock(&v->lock);
		if (!v->sleeper && !v->masked && nvq_vector_set_mask(v, true))
			ADD(qq, masked, 1);
		pthread_mutex_unlock(&v->lock);
	}
	if (how == NVQ_QOS_METHOD_HYBRID && !nvq_queue_pending(q)) {
		slept = hybrid_sleep(qq, t0, deadline_ns);
		if (slept && nvq_queue_pending(q)) {
			/* Too long: the sample is censored; sleep less. */
			uint64_t est = __atomic_load_n(&qq->w.est_ns,
						       __ATOMIC_RELAXED);

			__atomic_store_n(&qq->w.est_ns, est - est / 8,
					 __ATOMIC_RELAXED);
			ADD(qq, overslept, 1);
			ADD(qq, polls, 1);
			return 0;
		}
	}
	for (;;) {
		if (nvq_queue_pending(q))
			break;
		if (!(++n % SPIN_CLOCK_EVERY)) {
			now = nvq_now_ns();
			if (deadline_ns && now >= deadline_ns) {
				rc = -ETIMEDOUT;
				break;
			}
			if (!__atomic_load_n(&q->qos_spin, __ATOMIC_ACQUIRE)) {
				rc = -EAGAIN;
				break;
			}
		}
		nvq_transport_idle(q->t);
		cpu_relax();
	}
	now = nvq_now_ns();
	if (!rc && how == NVQ_QOS_METHOD_HYBRID)
		est_update(qq, now - t0);
	ADD(qq, polls, 1);
	if (now - t0 > slept)
		ADD(qq, poll_ns, now - t0 - slept);
	return rc;
}

int nvq_vector_sleep(struct nvq_vector *v, struct nvq_queue *q,
		     uint64_t deadline_ns)
{
	uint8_t spin = __atomic_load_n(&q->qos_spin, __ATOMIC_ACQUIRE);
	uint64_t gen;
	int rc = 0;

	if (spin && q->qos) {
		rc = spin_wait(v, q, spin, deadline_ns);
		if (rc != -EAGAIN)
			return rc;
		rc = 0;
	}
	/*
	 * This CPU takes the completions it sleeps for: keep it out of deep
	 * idle while the queue is busy. One load and a branch once known;
	 * noted before v->lock, as a new CPU takes the QoS lock.
	 */
	if (q->qos) {
		nvq_qos_note_cpu(q->qos, sched_getcpu());
		slack_restore();
	}
	pthread_mutex_lock(&v->lock);
	/*
	 * The NAPI order: unmask first, then look at the CQ - a completion
	 * that came while masked is either seen here or re-raised by the
	 * unmask, so the sleep below cannot miss it.
	 */
	if (v->masked)
		nvq_vector_set_mask(v, false);
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
	if (spin && q->qos)
		ADD(q->qos, idle_sleeps, 1);
	if (!v->sleeper) {
		struct epoll_event ev;
		int ms = -1, r;

		__atomic_store_n(&v->sleeper, true, __ATOMIC_RELAXED);
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
		/*
		 * One syscall per wake-up: edge-triggered, nothing to read
		 * afterwards (a signal after this returns is a new edge).
		 */
		r = epoll_wait(v->epfd, &ev, 1, ms);
		if (r > 0)
			__atomic_fetch_add(&q->stat_interrupts, 1,
					   __ATOMIC_RELAXED);
		if (r == 0)
			rc = -ETIMEDOUT;
		pthread_mutex_lock(&v->lock);
		__atomic_store_n(&v->sleeper, false, __ATOMIC_RELAXED);
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

/* ------------------------------------------------------------------ */
/* Recovery's hold on the rings                                        */
/* ------------------------------------------------------------------ */

/*
 * A full barrier on every thread of the process (membarrier(2), private
 * expedited, registered on first use): what makes the busy flags that
 * exclusive queues store without a fence visible to the reset.
 */
static int process_barrier(void)
{
	static int registered; /* 1 yes, -1 unavailable */
	int r = __atomic_load_n(&registered, __ATOMIC_ACQUIRE);

	if (!r) {
		r = syscall(__NR_membarrier,
			    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) ?
			    -1 :
			    1;
		__atomic_store_n(&registered, r, __ATOMIC_RELEASE);
	}
	if (r < 0 ||
	    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return -ENOTSUP;
	return 0;
}

/* Wait until the flag a submitter or reaper holds drops (microseconds). */
static void wait_flag_clear(const uint8_t *flag)
{
	unsigned int spins = 0;

	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (++spins < 100)
			cpu_relax();
		else
			nvq_sleep_us(spins < 1000 ? 1 : 100);
	}
}

static bool single_lock(struct nvq_queue *q)
{
	return cq_lock_word(q) == &q->sq_lock;
}

int nvq_queue_gate_close(struct nvq_queue **qs, unsigned int n)
{
	bool excl = false;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!qs[i]->sq_locked || !qs[i]->cq_locked)
			excl = true;
	for (i = 0; i < n; i++)
		__atomic_store_n(&qs[i]->gate, NVQ_GATE_CLOSED,
				 __ATOMIC_SEQ_CST);
	if (excl && process_barrier()) {
		for (i = 0; i < n; i++)
			__atomic_store_n(&qs[i]->gate, NVQ_GATE_OPEN,
					 __ATOMIC_RELEASE);
		return -ENOTSUP;
	}
	for (i = 0; i < n; i++) {
		struct nvq_queue *q = qs[i];

		if (q->sq_locked)
			nvq_lock(&q->sq_lock);
		else
			wait_flag_clear(&q->sq_busy);
		if (q->cq_locked) {
			if (!single_lock(q))
				nvq_lock(cq_lock_word(q));
		} else {
			wait_flag_clear(&q->cq_busy);
		}
	}
	return 0;
}

void nvq_queue_gate_open(struct nvq_queue **qs, unsigned int n, bool dead)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct nvq_queue *q = qs[i];

		__atomic_store_n(&q->gate, dead ? NVQ_GATE_DEAD : NVQ_GATE_OPEN,
				 __ATOMIC_RELEASE);
		if (q->cq_locked && !single_lock(q))
			nvq_unlock(cq_lock_word(q));
		if (q->sq_locked)
			nvq_unlock(&q->sq_lock);
		nvq_queue_wake(q);
	}
}

unsigned int nvq_queue_drain_stopped(struct nvq_queue *q)
{
	uint32_t pos = __atomic_load_n(&q->cq_pos, __ATOMIC_ACQUIRE);
	uint32_t head = pos & 0xffff, phase = pos >> 16;
	unsigned int seen, n = 0, bad = 0;

	for (seen = 0; head < q->cq_depth && seen < q->cq_depth; seen++) {
		struct nvq_cqe *cqe = &q->cq[head];
		uint16_t st = __atomic_load_n(&cqe->status, __ATOMIC_ACQUIRE);
		struct nvq_cmd *cmd;

		if ((st & NVQ_CQE_PHASE) != phase)
			break;
		cmd = cqe_cmd(q, cqe->cid, cqe->sq_id, cqe->sq_head);
		if (!cmd) {
			bad++;
		} else {
			cmd->cpl_status = NVQ_STATUS(st);
			cmd->cpl_err = nvq_status_err(cmd->cpl_status);
			cmd->cpl_result = cqe->result;
			cmd->cpl_dw1 = cqe->dw1;
			__atomic_store_n(&cmd->state,
					 NVQ_CMD_RECOVERED | cmd->cid,
					 __ATOMIC_RELEASE);
			n++;
		}
		if (++head == q->cq_depth) {
			head = 0;
			phase ^= 1;
		}
	}
	__atomic_store_n(&q->cq_pos, head | phase << 16, __ATOMIC_RELEASE);
	WRITE_ONCE(q->stat_completed, q->stat_completed + n);
	if (bad)
		WRITE_ONCE(q->stat_bad, q->stat_bad + bad);
	if (n)
		__atomic_store_n(&q->recovered, 1, __ATOMIC_RELEASE);
	return n;
}

void nvq_queue_rings_reset(struct nvq_queue *q)
{
	uint32_t i;

	/* Phase 0 everywhere: the device's first lap writes phase 1. */
	for (i = 0; i < q->cq_depth; i++)
		__atomic_store_n(&q->cq[i].status, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&q->cq_pos, 1u << 16, __ATOMIC_RELEASE);
	q->cq_db_last = 0;
	q->sq_tail = 0;
	q->sq_db_last = 0;
}

unsigned int nvq_queue_restart(struct nvq_queue *q)
{
	uint32_t now = __atomic_load_n(q->clock, __ATOMIC_RELAXED);
	uint32_t tag, tail = 0, n = 0;

	for (tag = 0; tag < q->nr_tags; tag++) {
		struct nvq_cmd *cmd = &q->cmds[tag];
		uint32_t st = __atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE);

		if (!(st & NVQ_CMD_INFLIGHT))
			continue;
		__atomic_store_n(&cmd->tick, now, __ATOMIC_RELAXED);
		memcpy(&q->sq[tail], &cmd->sqe, sizeof(cmd->sqe));
		tail++;
		n++;
	}
	q->sq_tail = (uint16_t)(tail % q->depth);
	ring_sq(q);
	return n;
}
