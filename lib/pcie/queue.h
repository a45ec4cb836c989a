/* SPDX-License-Identifier: MIT */
/*
 * A queue pair: SQ and CQ rings, their doorbells (MMIO or shadow), command
 * contexts and tags, and the reaping of completions.
 *
 * The structure has a submission half and a completion half, each on its
 * own cache lines with its own lock (sq_lock, cq_lock): submitters never
 * take cq_lock and completers never take sq_lock, so submission and
 * completion on different CPUs do not serialise on each other (Jens Axboe's
 * 2018 series "Split queue lock into submission/completion locks", Linux
 * 4.18; docs/design.md).
 * Tags are shared by both sides through a lock-free stack (tags.h).
 *
 * Locking mode, chosen when the queue is created (checked once per batch):
 *   NVQ_LOCK_SPLIT   sq_lock / cq_lock (shared queues, the default)
 *   NVQ_LOCK_SINGLE  one lock for both halves, as the kernel did before the
 *                    split; only in the benchmark build of the library
 *                    (NVQ_BENCH_SINGLE_LOCK), so that a benchmark can
 *                    compare
 *   NVQ_LOCK_NONE    exclusive queues: at most one submitting thread and
 *                    one completing thread at a time (they may differ: the
 *                    halves share nothing but the tag stack)
 */
#ifndef NVQ_QUEUE_H
#define NVQ_QUEUE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nvq/nvq.h"
#include "internal.h"
#include "mem.h"
#include "dmapool.h"
#include "prp.h"
#include "tags.h"

struct nvq_transport;
struct nvq_ctrl;
struct nvq_vector;

enum nvq_lock_mode {
	NVQ_LOCK_SPLIT = 0,
	NVQ_LOCK_SINGLE = 1,
	NVQ_LOCK_NONE = 2,
};

/* The state word of a command context while the device owns it. */
#define NVQ_CMD_INFLIGHT (1u << 16)
/*
 * ... and once recovery took it from the device (timeout.c): the reaper
 * of the queue delivers its completion (cpl_err set), so that callbacks
 * run where they always run.
 */
#define NVQ_CMD_RECOVERED (1u << 17)
/* tmo: what the watchdog did to the command with this CID. */
#define NVQ_TMO_ABORTED (1u << 16)

/*
 * The gate of a queue (q->gate), read by submitters (and the reapers of
 * exclusive queues) once per batch inside their critical section:
 *   NVQ_GATE_OPEN    normal operation
 *   NVQ_GATE_CLOSED  recovery owns the rings (a controller reset): a
 *                    submitter waits until it opens, a reaper of an
 *                    exclusive queue returns without reaping
 *   NVQ_GATE_DEAD    the controller failed for good: a submission
 *                    completes at once with q->dead
 */
#define NVQ_GATE_OPEN 0u
#define NVQ_GATE_CLOSED 1u
#define NVQ_GATE_DEAD 2u

/*
 * Per-tag command context. A request that is split into several commands
 * uses one context per command; the first ("lead") holds the request's
 * callback and collects the outcome of all of them.
 */
struct nvq_cmd {
	/* Built outside sq_lock, copied into the ring under it. */
	struct nvq_sqe sqe;
	nvq_cb cb;
	void *arg;
	struct nvq_cmd *lead;
	struct nvq_cmd *next; /* next command of the same request */
	struct nvq_chain *chain; /* lead only: a chained request, or NULL */
	uint32_t state; /* atomic: NVQ_CMD_INFLIGHT | cid while submitted */
	uint32_t tick; /* atomic: watchdog clock (ms) at submission */
	uint32_t tmo; /* watchdog only: NVQ_TMO_ABORTED | cid */
	uint16_t cid;
	uint16_t gen;
	uint32_t retries; /* times a reset submitted this command again */
	/* Lead only: the request. */
	uint32_t nr; /* commands in the request */
	uint32_t remaining; /* atomic: commands not finished yet */
	uint32_t failed; /* atomic: set by the first command that failed */
	int err;
	uint16_t status;
	uint32_t result;
	/* This command's own completion, filled in by the reaper. */
	int cpl_err;
	uint16_t cpl_status;
	uint32_t cpl_result;
	uint32_t cpl_dw1;
	/* DMA blocks freed at completion. */
	struct nvq_prp_lists prp;
	void *dsm;
	uint64_t dsm_iova;
} __cacheline_aligned;

struct nvq_queue {
	/* ---- submission half: written by submitters under sq_lock ---- */
	uint32_t sq_lock; /* futex lock word (queue.c) */
	bool sq_locked; /* take sq_lock at all (not exclusive) */
	/*
	 * CPU latency QoS: 1 asks the next submitter to call
	 * nvq_qos_activate() after its doorbell. Written by QoS only; 0
	 * forever in poll mode or with QoS off, so the hot path pays one
	 * load and one never-taken branch per batch.
	 */
	uint8_t qos_idle;
	/*
	 * Exclusive queues: 1 while the submitter is between its gate check
	 * and the end of nvq_queue_post() - the lock a reset waits for,
	 * where shared queues have sq_lock (see nvq_queue_gate_close()).
	 */
	uint8_t sq_busy;
	uint16_t sq_tail;
	uint16_t sq_db_last; /* tail value the device was last told */
	uint32_t sq_db_off;
	struct nvq_sqe *sq;
	uint32_t *sq_shadow; /* shadow doorbell, NULL when not in use */
	uint32_t *sq_eventidx;
	struct nvq_transport *t;
	uint64_t stat_submitted;
	uint64_t stat_doorbells;
	uint64_t reqs_submitted;
	/* IOVA cache for exclusive queues (shared ones use per-thread). */
	struct nvq_mem_cache mcache;

	/* ---- read-mostly, set at creation ---- */
	struct nvq_cmd *cmds __cacheline_aligned;
	/* &qpools: the node's pools and this queue's cache, if any */
	struct nvq_pools *pools;
	struct nvq_ctrl *ctrl;
	/* The watchdog's coarse clock in ms (timeout.c); a zero word in
	 * queues without a controller. */
	const uint32_t *clock;
	/* atomic: non-zero once the controller failed; new I/O gets it */
	int dead;
	uint32_t gate; /* atomic: NVQ_GATE_* */
	bool sgl; /* the transport takes SGLs, not PRPs (nvq_dptr_build()) */
	struct nvq_vector *vec;
	uint32_t nr_tags;
	uint16_t tag_mask;
	uint8_t tag_bits;
	uint16_t qid;
	uint32_t depth;
	enum nvq_mode mode;
	enum nvq_lock_mode lock_mode;
	int node; /* of the pools: its CPUs', or its interrupt CPU's */
	bool node_spans; /* the CPUs that use the queue span nodes */
	void *sq_mem, *cq_mem; /* ring allocations, freed by the owner */
	struct nvq_pools qpools;
	uint32_t *tag_next;
	/* QoS activity of this queue; NULL in poll mode (no limit needed) */
	struct nvq_qos_queue *qos;

	/* ---- the tag stack: written by both sides ---- */
	struct nvq_tags tags __cacheline_aligned;

	/* ---- completion half: written by completers under cq_lock ---- */
	uint32_t cq_lock __cacheline_aligned; /* futex lock word */
	/* &cq_lock, or &sq_lock in single mode (benchmark build only) */
	uint32_t *cq_lockp;
	bool cq_locked;
	uint8_t cq_busy; /* exclusive queues: sq_busy's twin for reapers */
	/*
	 * CPU latency QoS, written by QoS only: NVQ_QOS_METHOD_POLL or
	 * _HYBRID while the queue is active and its waiters poll instead of
	 * sleeping (nvq_vector_sleep(), the completion thread), else 0.
	 */
	uint8_t qos_spin;
	uint16_t cq_db_last;
	uint32_t cq_depth;
	/* head | phase << 16, atomic so waiters can peek without the lock */
	uint32_t cq_pos;
	uint32_t cq_db_off;
	struct nvq_cqe *cq;
	uint32_t *cq_shadow;
	uint32_t *cq_eventidx;
	struct nvq_transport *cq_t;
	/* cq_t's pump (transport.h), NULL for devices that write the CQ */
	void (*pump)(struct nvq_transport *t, uint16_t qid);
	uint64_t stat_completed;
	uint64_t stat_bad;
	uint64_t stat_interrupts; /* atomic add: bumped outside cq_lock */
	uint64_t reqs_done; /* atomic add: bumped after callbacks */
	/* atomic: recovery left completions to deliver (NVQ_CMD_RECOVERED) */
	uint32_t recovered;
};

/* What nvq_queue_create() needs; memory is owned by the caller. */
struct nvq_queue_params {
	struct nvq_transport *t;
	struct nvq_ctrl *ctrl; /* back pointer, may be NULL in tests */
	const uint32_t *clock; /* watchdog clock, NULL: none */
	struct nvq_pools *pools; /* PRP lists and DSM ranges */
	uint16_t qid;
	uint32_t depth; /* entries per ring, 2..65536 */
	uint32_t dstrd; /* CAP.DSTRD */
	void *sq; /* depth * 64 bytes, zeroed */
	void *cq; /* depth * 16 bytes, zeroed */
	uint32_t *dbbuf_db; /* shadow doorbell page or NULL */
	uint32_t *dbbuf_ei; /* EventIdx page or NULL */
	enum nvq_lock_mode lock_mode;
	enum nvq_mode mode;
	int node;
};

/*
 * One interrupt vector and the queues whose CQs signal it. In WAIT mode
 * the threads sleeping on queues of one vector take turns: one sleeps in
 * poll(2) on the eventfd, the rest on a condition variable that it
 * broadcasts when it wakes, so that a wakeup consumed by one waiter is
 * never lost for a waiter of another queue. In THREAD mode a completion
 * thread owns the eventfd.
 */
struct nvq_vector {
	unsigned int index;
	int fd; /* the transport's eventfd, -1 if none */
	/*
	 * WAIT mode: an epoll instance watching fd edge-triggered, so that a
	 * sleeper wakes with one syscall and never has to read() the
	 * counter: every signal after epoll_wait() returned is a new edge.
	 */
	int epfd;
	struct nvq_transport *t;
	/*
	 * The interrupt is masked for polling waiters (under lock; read
	 * without it as a hint). Only while no thread sleeps on fd: a
	 * sleeper unmasks before it looks at the CQ a last time.
	 */
	bool masked;
	bool nomask; /* the transport cannot mask this vector */
	int cpu; /* irq_cpu(), -1 if unknown */
	bool pinned; /* THREAD mode: the completion thread runs only on cpu */
	unsigned int nr_queues;
	struct nvq_queue **queues;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	bool sleeper; /* a thread is in poll() on fd */
	uint64_t gen; /* bumped each time the sleeper wakes */
	/* THREAD mode */
	pthread_t thread;
	bool thread_running;
	bool stop; /* atomic: the completion thread is to end */
	int stop_fd;
	int cthread_epfd; /* the thread's epoll: fd and stop_fd */
	bool cthread_asleep; /* atomic: the thread is in epoll_wait() */
};

/*
 * Create a queue pair in host memory (the device learns of it through the
 * Create I/O CQ/SQ commands, which are the caller's business).
 */
int nvq_queue_create(const struct nvq_queue_params *p, struct nvq_queue **q);

/*
 * Free what nvq_queue_create() allocated (not the rings), its QoS state
 * (releasing the limit it holds) included.
 */
void nvq_queue_destroy(struct nvq_queue *q);

/*
 * Reserve @n command contexts, linked through ->next from the returned
 * lead, each with a fresh CID in ->cid. NULL when not enough tags are free
 * (then nothing stays reserved). Any thread.
 */
struct nvq_cmd *nvq_queue_get_cmds(struct nvq_queue *q, unsigned int n);

/* Give back contexts reserved by nvq_queue_get_cmds() and never posted. */
void nvq_queue_put_cmds(struct nvq_queue *q, struct nvq_cmd *lead);

/*
 * nvq_queue_post() flag, never an application's: @lead is one more
 * command of a chained request already under way (its accounting is set).
 */
#define NVQ_POST_CHAINED (1u << 31)

/*
 * Copy the prepared SQEs of the request @lead into the SQ and, unless
 * @flags has NVQ_IO_MORE, ring the doorbell. The lead's cb/arg must be set.
 */
void nvq_queue_post(struct nvq_queue *q, struct nvq_cmd *lead,
		    unsigned int flags);

/* Ring the SQ doorbell for posted commands the device was not told of. */
void nvq_queue_ring(struct nvq_queue *q);

/*
 * Consume up to @max CQEs (0 = all there are), then run the callbacks of
 * the requests they finish outside the lock. Returns the number of
 * requests finished (callbacks run).
 */
int nvq_queue_reap(struct nvq_queue *q, unsigned int max);

/*
 * The command ids of the CQEs waiting in @q's CQ, from its head, up to
 * @max; under cq_lock. For an exclusive queue (no cq_lock) only when the
 * device is @stopped (it writes no more CQEs), else -EBUSY.
 */
int nvq_queue_posted_cids(struct nvq_queue *q, uint16_t *cids, unsigned int max,
			  bool stopped);

/*
 * Whether @q's interrupt eventfd holds a signal. Sleepers never read it
 * (edge-triggered epoll), so this takes the count and puts a signal back
 * (a new edge: a sleeper wakes) where there was one. For the watchdog.
 */
bool nvq_queue_irq_pending(const struct nvq_queue *q);

/* Whether a thread sleeps on @q's vector right now (a hint, no lock). */
bool nvq_queue_sleeping(const struct nvq_queue *q);

/*
 * Whether a CQE is waiting at the CQ head (a lock-free peek), or recovery
 * left completions to deliver.
 */
bool nvq_queue_pending(const struct nvq_queue *q);

/*
 * Recovery's hold on the rings (a controller reset, timeout.c/reset.c).
 * nvq_queue_gate_close() closes the gates of @n queues and waits until no
 * submitter or reaper is inside one of them: it takes sq_lock and cq_lock
 * of shared queues (held until nvq_queue_gate_open()) and waits for the
 * busy flags of exclusive ones, made visible by one membarrier(2) for all
 * of them (the fast path stores the flag without a fence). Returns 0, or
 * -ENOTSUP when exclusive queues are among them and the kernel has no
 * membarrier: then nothing is held.
 */
int nvq_queue_gate_close(struct nvq_queue **qs, unsigned int n);

/*
 * Open the gates again (@dead: NVQ_GATE_DEAD instead, for a controller
 * that failed) and release what nvq_queue_gate_close() took; wakes the
 * queues' waiters and completion threads.
 */
void nvq_queue_gate_open(struct nvq_queue **qs, unsigned int n, bool dead);

/*
 * With the gate closed and the device stopped: hand every completion
 * waiting in the CQ to recovery (NVQ_CMD_RECOVERED with the device's
 * status), so that it is delivered with it, and count what names no
 * command in flight. Returns how many commands it took.
 */
unsigned int nvq_queue_drain_stopped(struct nvq_queue *q);

/*
 * With the gate closed, once the device re-created the queue on rings that
 * nvq_queue_rings_reset() emptied: every command still NVQ_CMD_INFLIGHT
 * posted again in tag order, and the doorbell rung. Returns how many were
 * posted.
 */
unsigned int nvq_queue_restart(struct nvq_queue *q);

/*
 * Empty rings: CQ phase bits cleared, heads and tails 0 (an I/O queue's
 * gate closed; the admin queue's gate is admin_lock).
 */
void nvq_queue_rings_reset(struct nvq_queue *q);

/* Wake whoever reaps @q: a waiter or completion thread on its vector. */
void nvq_queue_wake(struct nvq_queue *q);

/*
 * Finish every command still owned by the device with -ECANCELED. Only
 * when the device can no longer complete or DMA (after shutdown/reset).
 */
void nvq_queue_cancel(struct nvq_queue *q);

/*
 * WAIT mode: sleep until the vector of @q fires, a CQE is pending on @q or
 * @deadline_ns (nvq_now_ns() clock; 0 = none) passes. Returns 0, or
 * -ETIMEDOUT. The sleeping CPU is noted for the queue's CPU latency QoS.
 */
int nvq_vector_sleep(struct nvq_vector *v, struct nvq_queue *q,
		     uint64_t deadline_ns);

/*
 * Mask (@on) or unmask the vector's interrupt for polling, where the
 * transport can; with v->lock held. Unmasking re-raises an interrupt that
 * arrived while masked. Returns whether the vector is masked now.
 */
bool nvq_vector_set_mask(struct nvq_vector *v, bool on);

/* THREAD mode: start / stop-and-join the completion thread of @v. */
int nvq_cthread_start(struct nvq_vector *v);
void nvq_cthread_stop(struct nvq_vector *v);

/*
 * Use @pools (a node's set; NVQ_POOLS_CACHE gives the queue a cache of
 * its own in front of them) on @node from now on. Before the queue's
 * first I/O only. 0 or -ENOMEM.
 */
int nvq_queue_set_pools(struct nvq_queue *q, const struct nvq_pools *pools,
			int node, bool spans);

/* Free the PRP list and DSM range blocks a command holds. */
static inline void nvq_cmd_release_dma(struct nvq_queue *q, struct nvq_cmd *cmd)
{
	if (cmd->prp.nr)
		nvq_prp_free(q->pools, &cmd->prp);
	if (cmd->dsm) {
		nvq_dmapool_free(q->pools->small, cmd->dsm, cmd->dsm_iova);
		cmd->dsm = NULL;
	}
}

/*
 * The data pointer of @sqe for @len (> 0) bytes at @iova, contiguous in
 * IOVA space: PRPs (lists from the queue's pools into @lists), or on a
 * transport that takes SGLs (fabrics) one SGL Data Block descriptor with
 * PSDT 01b. Errors as nvq_prp_build().
 */
static inline int nvq_dptr_build(struct nvq_queue *q, struct nvq_sqe *sqe,
				 uint64_t iova, size_t len,
				 struct nvq_prp_lists *lists)
{
	if (unlikely(q->sgl)) {
		struct nvq_sgl_desc d = { .addr = iova };

		if (len > UINT32_MAX)
			return -E2BIG;
		d.length = (uint32_t)len;
		memcpy(&sqe->prp1, &d, sizeof(d));
		sqe->flags = (uint8_t)((sqe->flags & ~0xc0) |
				       NVQ_PSDT_SGL_MPTR_CONTIG << 6);
		lists->nr = 0;
		return 0;
	}
	return nvq_prp_build(q->pools, iova, len, &sqe->prp1, &sqe->prp2,
			     lists);
}

/* Map a completion status field to the errno a callback sees. */
static inline int nvq_status_err(uint16_t status)
{
	if (likely(!(status & NVQ_STATUS_CODE_MASK)))
		return 0;
	if (NVQ_SCT(status) == NVQ_SCT_GENERIC &&
	    NVQ_SC(status) == NVQ_SC_ABORT_QUEUE)
		return -ECANCELED;
	return -EIO;
}

#endif /* NVQ_QUEUE_H */
