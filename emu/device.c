// SPDX-License-Identifier: MIT
/*
 * The device: creation, the device thread's main loop, and sleeping.
 *
 * The loop runs passes: pick up IOMMU and CC changes, complete commands
 * whose latency expired, post held completions, fetch from every SQ,
 * signal interrupts once per CQ per pass. With nothing to do it spins
 * (yielding the CPU) for idle_spin, then sleeps on a futex. Before
 * sleeping it publishes EventIdx and re-checks every doorbell after a
 * full barrier; hosts ring with a full barrier between the doorbell store
 * and the sleeping-flag load (nvq_emu_db_write), so a doorbell is never
 * missed: either the host sees the flag and wakes us, or we see the bell.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "emu_internal.h"

/* A deadline closer than this is waited for by spinning, not sleeping. */
#define SPIN_WINDOW_NS 200000ull
/*
 * nvq_emu_assist(): a pass that has not ended after ASSIST_STALL_NS is
 * one whose thread lost its CPU; a host thread then waits on the pass at
 * most ASSIST_BLOCK_NS at a time.
 */
#define ASSIST_STALL_NS 200000ull
#define ASSIST_BLOCK_NS 1000000ull
/*
 * c->sleeping: awake (0); asleep until kicked (SLEEP_DEEP); asleep for at
 * most ASSISTED_SLEEP_NS while host threads run the passes (SLEEP_ASSISTED:
 * a command whose submitter stopped polling meanwhile waits that long).
 */
#define SLEEP_DEEP 1
#define SLEEP_ASSISTED 2
#define ASSISTED_SLEEP_NS 200000ull
/* Host threads ran a pass this recently: they are assisting. */
#define ASSISTED_RECENT_NS 1000000ull
/* Wake this early from a timed sleep: futex timeouts overshoot. */
#define SLEEP_SLACK_NS 100000ull

static void futex_wait(int *addr, int val, uint64_t timeout_ns)
{
	struct timespec ts, *tp = NULL;

	if (timeout_ns != UINT64_MAX) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000ull);
		ts.tv_nsec = (long)(timeout_ns % 1000000000ull);
		tp = &ts;
	}
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, tp, NULL, 0);
}

/*
 * Wake a sleeping device thread. One that sleeps SLEEP_ASSISTED (host
 * threads run its passes: nvq_emu_assist()) is left alone: a wake per
 * doorbell would cost the host a system call and the device thread a
 * context switch per batch, and its timed sleep ends soon anyway.
 */
void emu_kick(struct nvq_emu *c)
{
	int one = SLEEP_DEEP;

	if (__atomic_load_n(&c->sleeping, __ATOMIC_SEQ_CST) == SLEEP_DEEP &&
	    __atomic_compare_exchange_n(&c->sleeping, &one, 0, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &c->sleeping, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
}

void nvq_emu_db_write(struct nvq_emu *c, uint32_t off, uint32_t val)
{
	uint32_t rel = off - NVQ_REG_DBS, idx;

	idx = rel >> (2 + c->dstrd);
	/* Outside the array, or the doorbell of a queue that does not exist. */
	if (emu_unlikely(
		    off < NVQ_REG_DBS || (rel & ((4u << c->dstrd) - 1)) ||
		    idx >= c->nr_dbs ||
		    !__atomic_load_n(&c->db_live[idx], __ATOMIC_ACQUIRE))) {
		__atomic_store_n(&c->bad_db_reg, 1, __ATOMIC_SEQ_CST);
		emu_kick(c);
		return;
	}
	/* seq_cst: ordered before the sleeping-flag load in emu_kick(). */
	__atomic_store_n(&c->dbs[idx], val, __ATOMIC_SEQ_CST);
	emu_kick(c);
}

void emu_set_csts(struct nvq_emu *c, uint32_t set, uint32_t clear)
{
	uint32_t *r = &c->regs[NVQ_REG_CSTS / 4];
	uint32_t v = __atomic_load_n(r, __ATOMIC_RELAXED);

	__atomic_store_n(r, (v & ~clear) | set, __ATOMIC_RELEASE);
}

void emu_fatal(struct nvq_emu *c, const char *why)
{
	(void)why;
	c->fatal = true;
	emu_set_csts(c, NVQ_CSTS_CFS, 0);
}

/* Inlined into emu_exec(): the path without faults has no extra call. */
static inline uint16_t exec_cmd(struct nvq_emu *c, struct emu_req *req)
{
	if (emu_unlikely(req->sqe->flags & (NVQ_SQE_FUSE_MASK | 0xc0))) {
		/* No fused operations, no SGLs (CDW0 byte 1). */
		req->err_loc = NVQ_ERR_LOC(flags);
		return EMU_ST_GEN(NVQ_SC_INVALID_FIELD);
	}
	if (emu_unlikely(c->san_sstat >= 2)) {
		uint16_t st = emu_sanitize_block(c, req->sqe, !req->sq->qid);

		if (st)
			return st;
	}
	if (req->sq->qid)
		return emu_nvm_exec(c, req);
	return emu_admin_exec(c, req);
}

uint16_t emu_exec_cmd(struct nvq_emu *c, struct emu_req *req)
{
	return exec_cmd(c, req);
}

void emu_exec(struct nvq_emu *c, struct emu_sq *sq, const struct nvq_sqe *sqe)
{
	struct emu_req req = { .sqe = sqe,
			       .sq = sq,
			       .err_loc = NVQ_ERR_LOC_NONE };
	uint16_t st;

	/* The one test fault injection costs a command when none is armed. */
	if (emu_unlikely(__atomic_load_n(&c->fault_armed, __ATOMIC_RELAXED)) &&
	    emu_fault_exec(c, sq, sqe))
		return;
	st = exec_cmd(c, &req);
	if (!req.held)
		emu_complete(c, sq, sqe->cid, st, req.dw0, &req);
}

/* Anything to do? Used before sleeping, after the sleeping flag is set. */
static bool has_work(struct nvq_emu *c, bool publish)
{
	if (__atomic_load_n(&c->stop, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&c->cc_events, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&c->fault_kick, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&c->bad_db_reg, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&c->iommu.gen, __ATOMIC_SEQ_CST) !=
		    __atomic_load_n(&c->iommu.ack, __ATOMIC_RELAXED))
		return true;
	if (!c->ready || c->fatal || c->shut)
		return false;
	return emu_queues_idle_check(c, publish);
}

static uint64_t next_deadline(struct nvq_emu *c)
{
	/* A fatal controller runs no passes: its commands wait forever. */
	uint64_t d = c->ready && !c->fatal ? emu_heap_next(c) : UINT64_MAX;

	if (c->enabled && !c->ready && !c->fatal && c->rdy_at < d)
		d = c->rdy_at;
	/* Completions a fault holds back are due on time too. */
	if (emu_unlikely(c->nr_delayed) && c->ready && !c->fatal &&
	    emu_fault_deadline(c) < d)
		d = emu_fault_deadline(c);
	if (c->nr_batch && c->coalesce_on && c->ready && !c->fatal) {
		uint64_t i = emu_irq_deadline(c);

		if (i < d)
			d = i;
	}
	return d;
}

/*
 * Nothing to do: called with svc held, returns with it released, having
 * yielded or slept as the next deadline allows.
 */
static void idle(struct nvq_emu *c)
{
	uint64_t now = emu_now(), deadline = next_deadline(c), timeout;
	uint64_t assists = __atomic_load_n(&c->assists, __ATOMIC_RELAXED);
	bool sleep, assisted;
	int how;

	if (!c->idle_start)
		c->idle_start = now;
	if (assists != c->idle_assists) {
		c->idle_assists = assists;
		c->assisted_at = now;
	}
	/*
	 * Host threads run passes (nvq_emu_assist()): step back rather than
	 * spin. Spinning passes hold svc, and one preempted while holding it
	 * (by other work on a busy machine) stalls every host thread that
	 * polls until this thread gets a CPU again.
	 */
	assisted = now - c->assisted_at < ASSISTED_RECENT_NS;
	if (deadline <= now) {
		pthread_mutex_unlock(&c->svc);
		return;
	}
	if ((!assisted && now - c->idle_start < c->p.idle_spin_ns) ||
	    deadline - now < SPIN_WINDOW_NS) {
		pthread_mutex_unlock(&c->svc);
		sched_yield();
		return;
	}
	timeout = deadline == UINT64_MAX ? UINT64_MAX :
					   deadline - now - SLEEP_SLACK_NS;
	how = SLEEP_DEEP;
	if (assisted) {
		how = SLEEP_ASSISTED;
		if (timeout > ASSISTED_SLEEP_NS)
			timeout = ASSISTED_SLEEP_NS;
	}
	__atomic_store_n(&c->sleeping, how, __ATOMIC_SEQ_CST);
	sleep = !has_work(c, true);
	/* Work come meanwhile: the host's doorbell write cleared sleeping. */
	pthread_mutex_unlock(&c->svc);
	if (sleep)
		futex_wait(&c->sleeping, how, timeout);
	__atomic_store_n(&c->sleeping, 0, __ATOMIC_SEQ_CST);
	/* Work tends to come in bursts: spin again after waking. */
	c->idle_start = 0;
}

static void finish_shutdown(struct nvq_emu *c)
{
	emu_media_sync(&c->media, 0, c->media.len);
	emu_smart_shutdown(c);
	c->shn_pending = false;
	c->shut = true;
	emu_set_csts(c, NVQ_CSTS_SHST_CMPLT, NVQ_CSTS_SHST_MASK);
}

static unsigned int pass(struct nvq_emu *c)
{
	unsigned int work = 0;
	struct emu_cmd *cmd;

	if (c->heap_n) {
		uint64_t now = emu_now();

		while ((cmd = emu_heap_pop_due(c, now))) {
			emu_cmd_done(c, cmd);
			work++;
		}
	}
	if (c->ovf_cqs)
		work += emu_flush_overflow(c);
	if (emu_unlikely(c->nr_delayed))
		work += emu_fault_flush(c);
	if (!c->shut)
		work += emu_fetch(c);
	emu_irq_flush(c);
	if (c->shn_pending && !c->heap_n)
		finish_shutdown(c);
	return work;
}

unsigned int emu_service(struct nvq_emu *c, bool *events)
{
	uint64_t gen;
	uint32_t ev;

	*events = false;
	if (emu_iommu_sync(&c->iommu, &gen)) {
		if (!emu_queues_remap(c) && !c->fatal)
			emu_fatal(c, "queue memory unmapped");
		emu_iommu_ack(&c->iommu, gen);
		*events = true;
	}
	ev = __atomic_exchange_n(&c->cc_events, 0, __ATOMIC_ACQ_REL);
	if (ev) {
		emu_cc_events(c, ev);
		*events = true;
	}
	if (emu_unlikely(__atomic_load_n(&c->fault_kick, __ATOMIC_RELAXED)) &&
	    __atomic_exchange_n(&c->fault_kick, 0, __ATOMIC_ACQ_REL))
		emu_fault_now(c);
	/* Not on a fatal controller: its rings may be gone. */
	if (__atomic_load_n(&c->bad_db_reg, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&c->bad_db_reg, 0, __ATOMIC_ACQ_REL) &&
	    c->ready && !c->fatal)
		emu_aer_raise(c, NVQ_AER_ERROR, 0x00, NVQ_LOG_ERROR);
	if (c->enabled && !c->ready)
		emu_poll_ready(c);
	if (c->shn_pending && (!c->ready || c->fatal))
		finish_shutdown(c);
	if (!c->ready || c->fatal)
		return 0;
	return pass(c);
}

static void *device_main(void *arg)
{
	struct nvq_emu *c = arg;
	bool events;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&c->svc);
		__atomic_store_n(&c->beat, c->beat + 1, __ATOMIC_RELAXED);
		if (emu_service(c, &events)) {
			c->idle_start = 0;
			pthread_mutex_unlock(&c->svc);
			continue;
		}
		idle(c);
	}
	__atomic_store_n(&c->running, 0, __ATOMIC_RELEASE);
	return NULL;
}

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

/*
 * The serial number: sn= as given; a file-backed device's from its path
 * (it keeps it across reopen); a RAM device's from its geometry and its
 * place among this process's RAM controllers, so that the same options
 * give the same serial on every run (scripts key on it) and two
 * controllers of one process still differ.
 */
static void make_sn(struct nvq_emu *c)
{
	static uint32_t instance;
	const struct nvq_emu_params *p = &c->p;
	uint32_t h = 2166136261u, n;

	if (p->sn[0]) {
		snprintf(c->sn, sizeof(c->sn), "%s", p->sn);
		return;
	}
	if (p->file[0]) {
		h = fnv(h, p->file, strlen(p->file));
	} else {
		n = __atomic_add_fetch(&instance, 1, __ATOMIC_RELAXED);
		h = fnv(h, &p->ns_size, sizeof(p->ns_size));
		h = fnv(h, &p->nr_ns, sizeof(p->nr_ns));
		h = fnv(h, &p->lbads, sizeof(p->lbads));
		h = fnv(h, &p->qpairs, sizeof(p->qpairs));
		h = fnv(h, &p->mqes, sizeof(p->mqes));
		h = fnv(h, &p->mdts, sizeof(p->mdts));
		h = fnv(h, &n, sizeof(n));
	}
	snprintf(c->sn, sizeof(c->sn), "NVQEMU%08X", h);
}

static void free_all(struct nvq_emu *c)
{
	uint32_t i;

	if (c->sqs)
		emu_queues_delete_all(c);
	if (c->irq_fds)
		for (i = 0; i < c->nr_vec; i++)
			if (c->irq_fds[i] >= 0)
				close(c->irq_fds[i]);
	emu_fault_fini(c);
	emu_media_close(&c->media);
	emu_media_lat_fini(c);
	if (c->iommu.table)
		emu_iommu_fini(&c->iommu);
	free(c->irq_fds);
	free(c->irq_mask);
	free(c->irq_pend);
	free(c->feat.irq_cd);
	free(c->batch);
	free(c->heap);
	free(c->segs);
	free(c->bounce);
	free(c->xdata);
	free(c->xmd);
	free(c->sqs);
	free(c->cqs);
	free(c->active);
	free(c->dbs);
	free(c->db_live);
	pthread_mutex_destroy(&c->svc);
	free(c);
}

int nvq_emu_create(const struct nvq_emu_params *p, struct nvq_emu **out)
{
	struct nvq_emu *c;
	uint32_t nq = p->qpairs + 1, i;
	uint64_t seg_bytes;
	int ret;

	if (!p->nr_ns || p->nr_ns > EMU_MAX_NS ||
	    (p->lbads != 9 && p->lbads != 12) || !p->qpairs ||
	    p->qpairs > 65535 || !p->mqes || p->mqes > 65535 || !p->msix ||
	    p->msix > EMU_MAX_MSIX || p->dstrd > 15 || !p->to || p->to > 255 ||
	    p->mdts > 20 || !p->ns_size || p->ns_size % (1ull << p->lbads) ||
	    !emu_ms_valid(p->ms) || p->pi > 3 || (p->pi && p->ms < 8))
		return emu_err(-EINVAL, "emu: invalid parameters");
	c = calloc(1, sizeof(*c));
	if (!c)
		return emu_err(-ENOMEM, "emu: out of memory");
	c->p = *p;
	c->media.fd = -1;
	pthread_mutex_init(&c->svc, NULL);
	c->dstrd = p->dstrd;
	c->lba_size = 1u << p->lbads;
	c->ns_blocks = p->ns_size >> p->lbads;
	c->max_xfer = (uint64_t)65536 << p->lbads; /* NLB is 16 bits */
	if (p->mdts && (4096ull << p->mdts) < c->max_xfer)
		c->max_xfer = 4096ull << p->mdts;
	c->nr_vec = p->msix;
	c->nr_dbs = 2 * nq;
	c->page_size = 4096;
	c->created_ns = emu_now();
	make_sn(c);

	ret = emu_iommu_init(&c->iommu);
	if (ret)
		goto fail;
	c->dbs = calloc(c->nr_dbs, sizeof(*c->dbs));
	c->db_live = calloc(c->nr_dbs, 1);
	c->sqs = calloc(nq, sizeof(*c->sqs));
	c->cqs = calloc(nq, sizeof(*c->cqs));
	c->active = calloc(nq, sizeof(*c->active));
	c->batch = calloc(nq, sizeof(*c->batch));
	c->irq_fds = malloc(c->nr_vec * sizeof(*c->irq_fds));
	c->irq_mask = calloc(c->nr_vec, 1);
	c->irq_pend = calloc(c->nr_vec, 1);
	c->feat.irq_cd = calloc(c->nr_vec, 1);
	/* Admin data (Identify, logs, DSM ranges) is at most 16 KiB: the
	 * Error Information log of elpe=255 (256 entries of 64 bytes). */
	c->bounce_len = EMU_ERRLOG_MAX * sizeof(struct nvq_error_log);
	c->bounce = aligned_alloc(4096, c->bounce_len);
	/* For the largest transfer of any format (Format NVM). */
	seg_bytes = (uint64_t)65536 << 12;
	if (p->mdts && (4096ull << p->mdts) < seg_bytes)
		seg_bytes = 4096ull << p->mdts;
	/* Extended LBAs: up to 128 bytes of metadata per 512 of data. */
	seg_bytes += seg_bytes / 4;
	c->max_segs = (uint32_t)(seg_bytes / 4096 + 4);
	c->segs = malloc(c->max_segs * sizeof(*c->segs));
	if (!c->dbs || !c->db_live || !c->sqs || !c->cqs || !c->active ||
	    !c->batch || !c->irq_fds || !c->irq_mask || !c->irq_pend ||
	    !c->feat.irq_cd || !c->bounce || !c->segs) {
		ret = emu_err(-ENOMEM, "emu: out of memory");
		goto fail;
	}
	for (i = 0; i < c->nr_vec; i++)
		c->irq_fds[i] = -1;
	for (i = 0; i < c->nr_vec; i++) {
		c->irq_fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (c->irq_fds[i] < 0) {
			ret = emu_err(
				-errno,
				"emu parameter 'msix': cannot create eventfd %u of %u: %s",
				i, c->nr_vec, strerror(errno));
			goto fail;
		}
	}
	ret = emu_media_open(&c->media, p);
	if (ret)
		goto fail;
	ret = emu_media_lat_init(c);
	if (ret)
		goto fail;
	ret = emu_fault_init(c, p);
	if (ret)
		goto fail;
	emu_smart_power_on(c);
	emu_regs_init(c);
	emu_features_default(c);

	c->running = 1;
	ret = pthread_create(&c->thread, NULL, device_main, c);
	if (ret) {
		c->running = 0;
		ret = emu_err(-ret, "emu: cannot start the device thread: %s",
			      strerror(ret));
		goto fail;
	}
	c->thread_started = true;
	*out = c;
	return 0;
fail:
	free_all(c);
	return ret;
}

int nvq_emu_assist(struct nvq_emu *c)
{
	uint64_t beat = __atomic_load_n(&c->beat, __ATOMIC_RELAXED);
	uint64_t now;
	unsigned int n;
	bool events;

	if (!c->p.assist)
		return 0;
	now = emu_now();
	if (beat != __atomic_load_n(&c->assist_beat, __ATOMIC_RELAXED)) {
		/* It ran since the last look: leave the device to it. */
		__atomic_store_n(&c->assist_beat, beat, __ATOMIC_RELAXED);
		__atomic_store_n(&c->assist_ns, now, __ATOMIC_RELAXED);
		return 0;
	}
	if (__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&c->running, __ATOMIC_ACQUIRE))
		return 0;
	if (pthread_mutex_trylock(&c->svc)) {
		struct timespec ts;

		/* In a pass: a normal one ends soon. */
		if (now - __atomic_load_n(&c->assist_ns, __ATOMIC_RELAXED) <
		    ASSIST_STALL_NS)
			return -EBUSY;
		/*
		 * The pass has not moved for ASSIST_STALL_NS: the device
		 * thread was preempted inside it and waits for a CPU. Sleep
		 * on the lock: this CPU goes idle, the kernel can move the
		 * device thread here, and we run the next pass ourselves.
		 * (timedlock, not clocklock: sanitizers know only the former;
		 * a realtime clock step merely shortens or lengthens the nap.)
		 */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)ASSIST_BLOCK_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_mutex_timedlock(&c->svc, &ts))
			return -EBUSY;
	}
	n = emu_service(c, &events);
	pthread_mutex_unlock(&c->svc);
	__atomic_fetch_add(&c->assists, 1, __ATOMIC_RELAXED);
	return (int)n;
}

uint64_t nvq_emu_assists(const struct nvq_emu *c)
{
	return __atomic_load_n(&c->assists, __ATOMIC_RELAXED);
}

void nvq_emu_destroy(struct nvq_emu *c)
{
	if (!c)
		return;
	if (c->thread_started) {
		__atomic_store_n(&c->stop, 1, __ATOMIC_SEQ_CST);
		emu_kick(c);
		pthread_join(c->thread, NULL);
	}
	free_all(c);
}

unsigned int nvq_emu_nr_vectors(const struct nvq_emu *c)
{
	return c->nr_vec;
}

int nvq_emu_irq_fd(const struct nvq_emu *c, unsigned int vector)
{
	if (vector >= c->nr_vec)
		return -EINVAL;
	return c->irq_fds[vector];
}

static void irq_raise(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN only near 2^64: signalled already */
	}
}

int nvq_emu_irq_mask(struct nvq_emu *c, unsigned int vector, bool masked)
{
	if (vector >= c->nr_vec)
		return -EINVAL;
	__atomic_store_n(&c->irq_mask[vector], masked, __ATOMIC_SEQ_CST);
	/* Unmasked with the pending bit set: the message goes out now. */
	if (!masked &&
	    __atomic_exchange_n(&c->irq_pend[vector], 0, __ATOMIC_SEQ_CST))
		irq_raise(c->irq_fds[vector]);
	return 0;
}

uint64_t nvq_emu_irq_held(const struct nvq_emu *c)
{
	return __atomic_load_n(&c->irq_held, __ATOMIC_RELAXED);
}

const struct nvq_emu_params *nvq_emu_params(const struct nvq_emu *c)
{
	return &c->p;
}
