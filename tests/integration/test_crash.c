// SPDX-License-Identifier: MIT
/*
 * Crash consistency of a file-backed emulated controller. Each iteration
 * forks a child that opens emu:file=IMG, arms one fault (docs/faults.md)
 * after a random number of I/Os, and runs random writes and reads on two
 * queues with several requests in flight. Every block written is a
 * self-describing stamp of (lba, generation) with a checksum
 * (tests/common/blockstamp.h). The child keeps a journal in memory shared
 * with the parent: per LBA the last generation handed to the driver
 * ("submitted", recorded before the submission) and the last one whose
 * callback reported success ("acked", recorded in the callback). At most
 * one request per LBA is in flight, so every generation in (acked,
 * submitted] is a write that failed or had not completed.
 *
 * The parent SIGKILLs the child at a random moment, reopens the image
 * without faults (so the kill released the image's lock) and checks every
 * block: its generation must lie in [acked, submitted]; never older than
 * the last acknowledged write, never one nobody wrote; a torn block
 * (checksum wrong) only where a write was in flight; never another LBA's
 * block. What it finds becomes the next iteration's baseline.
 *
 * A faulted request may succeed or fail with any errno (the driver may
 * give up on the controller or reset it and resubmit): only data is
 * judged. A child whose controller failed stops submitting and waits to
 * be killed. Nothing asserts timing; alarm() ends a hang in either
 * process. The checker itself is checked first: it must reject a block
 * put back to an older generation by hand, a torn block nothing was
 * writing, and a block of another LBA.
 *
 * NVQ_TEST_SEED replays a run; NVQ_CRASH_ITERS changes the iterations.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blockstamp.h"
#include "check.h"
#include "testutil.h"

/* The emulator behind a controller, for arming faults at a moment. */
#include "ctrl.h"
#include "emu.h"
#include "transport.h"

#define BS 4096u
#define NBLK 256u /* a 1 MiB image */
#define QUEUES 2u
#define QD 12u /* requests in flight per queue */
#define MAX_NLB 4u
#define ITERS 32u
#define SALT 0x6372617368ull
#define IO_TIMEOUT_MS 200u

/* ---- the journal, shared with the child ---- */

struct jent {
	uint64_t acked; /* generation of the last acknowledged write */
	uint64_t submitted; /* generation of the last write handed over */
};

enum child_state { CH_INIT = 0, CH_RUNNING, CH_CTRL_FAILED, CH_FAILED };

struct journal {
	int state; /* enum child_state */
	int ctrl_err; /* CH_CTRL_FAILED: what the submission returned */
	char msg[512]; /* CH_FAILED: why */
	uint64_t acked, failed, reads, corrupt_reads;
	struct nvq_ctrl_stats st; /* the child's last snapshot */
	struct jent e[NBLK];
};

static struct journal *J;

static uint64_t jload(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void jstore(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* ---- the child ---- */

enum { R_FREE = 0, R_BUSY, R_DONE };

struct creq {
	int state; /* R_*: R_DONE set by the callback (release) */
	int calls;
	int err;
	bool write;
	uint64_t lba;
	uint32_t nlb;
	uint64_t gen[MAX_NLB];
	char *buf;
};

/* The child's verdict on itself: written for the parent, then exit. */
static __attribute__((noreturn, format(printf, 1, 2))) void
child_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(J->msg, sizeof(J->msg), fmt, ap);
	va_end(ap);
	__atomic_store_n(&J->state, CH_FAILED, __ATOMIC_SEQ_CST);
	_exit(T_EXIT_FAIL);
}

static void creq_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct creq *r = arg;
	uint32_t i;

	if (__atomic_fetch_add(&r->calls, 1, __ATOMIC_ACQ_REL))
		child_fail("callback of lba %llu ran twice",
			   (unsigned long long)r->lba);
	if (cpl->err > 0)
		child_fail("callback with err %d", cpl->err);
	r->err = cpl->err;
	/* Acknowledged: only now, and only on success. */
	if (r->write && !cpl->err)
		for (i = 0; i < r->nlb; i++)
			jstore(&J->e[r->lba + i].acked, r->gen[i]);
	__atomic_store_n(&r->state, R_DONE, __ATOMIC_RELEASE);
}

struct child {
	struct nvq_ctrl *c;
	struct nvq_emu *emu;
	struct nvq_queue *q[QUEUES];
	enum nvq_mode mode;
	struct creq req[QUEUES][QD];
	bool busy[NBLK]; /* a request of this LBA is in flight */
	uint64_t rnd;
	uint64_t submitted, completed;
	uint64_t corrupt_seen;
	bool dead;
};

/* A read came back: each block must be a generation the journal allows
 * (no write to it is in flight), or a corruption the emulator did. */
static void verify_read(struct child *ch, struct creq *r)
{
	uint32_t i;

	for (i = 0; i < r->nlb; i++) {
		uint64_t lba = r->lba + i, g = 0;
		uint64_t a = jload(&J->e[lba].acked);
		uint64_t s = jload(&J->e[lba].submitted);
		enum blockstamp_kind k;

		k = blockstamp_check(r->buf + i * BS, BS, lba, SALT, &g);
		if ((k == BLOCKSTAMP_OK || k == BLOCKSTAMP_ZERO) && g >= a &&
		    g <= s)
			continue;
		if (k == BLOCKSTAMP_TORN &&
		    nvq_emu_fault_count(ch->emu, NVQ_EMU_FAULT_CORRUPT) >
			    ch->corrupt_seen) {
			/* The emulator inverted bytes on the way; the media
			 * keeps the right data. */
			ch->corrupt_seen++;
			J->corrupt_reads++;
			continue;
		}
		child_fail("read of lba %llu: kind %d generation %llu, "
			   "journal acked %llu submitted %llu",
			   (unsigned long long)lba, (int)k,
			   (unsigned long long)g, (unsigned long long)a,
			   (unsigned long long)s);
	}
}

static void finish(struct child *ch, struct creq *r)
{
	uint32_t i;

	if (__atomic_load_n(&r->calls, __ATOMIC_ACQUIRE) != 1)
		child_fail("request of lba %llu: %d callbacks",
			   (unsigned long long)r->lba, r->calls);
	if (r->write) {
		if (r->err)
			J->failed++;
		else
			J->acked++;
	} else if (!r->err) {
		J->reads++;
		verify_read(ch, r);
	}
	for (i = 0; i < r->nlb; i++)
		ch->busy[r->lba + i] = false;
	r->state = R_FREE;
	if (!(++ch->completed % 8))
		nvq_ctrl_stats(ch->c, &J->st);
}

/* Submit one random request in @r; false when the queue takes no more. */
static bool submit(struct child *ch, unsigned int k, struct creq *r)
{
	uint64_t v = test_rand(&ch->rnd);
	uint32_t nlb = 1 + (uint32_t)(v % MAX_NLB), i;
	uint64_t lba = (v >> 8) % (NBLK - nlb + 1);
	int rc;

	for (i = 0; i < nlb; i++)
		if (ch->busy[lba + i])
			return true; /* another time */
	r->write = (v >> 40) % 10 < 7;
	r->lba = lba;
	r->nlb = nlb;
	r->err = 0;
	r->calls = 0;
	if (r->write) {
		for (i = 0; i < nlb; i++) {
			uint64_t g = jload(&J->e[lba + i].submitted) + 1;

			r->gen[i] = g;
			blockstamp_fill(r->buf + i * BS, BS, lba + i, g, SALT);
			/* In flight: recorded before the device can see it. */
			jstore(&J->e[lba + i].submitted, g);
		}
	}
	r->state = R_BUSY;
	rc = r->write ?
		     nvq_write(ch->q[k], 1, r->buf, lba, nlb, 0, creq_cb, r) :
		     nvq_read(ch->q[k], 1, r->buf, lba, nlb, 0, creq_cb, r);
	if (!rc) {
		for (i = 0; i < nlb; i++)
			ch->busy[lba + i] = true;
		ch->submitted++;
		return true;
	}
	r->state = R_FREE;
	if (r->write) /* never handed over */
		for (i = 0; i < nlb; i++)
			jstore(&J->e[lba + i].submitted, r->gen[i] - 1);
	if (rc == -EAGAIN)
		return false;
	if (rc == -EINVAL || rc == -ERANGE || rc == -EFAULT || rc == -ENOENT ||
	    rc == -E2BIG)
		child_fail("submission: %d (%s)", rc, nvq_errmsg());
	/* The controller failed (-EIO, -ENODEV, -ETIMEDOUT, ...): stop. */
	ch->dead = true;
	J->ctrl_err = rc;
	__atomic_store_n(&J->state, CH_CTRL_FAILED, __ATOMIC_SEQ_CST);
	return false;
}

static __attribute__((noreturn)) void
child_main(const char *uri, enum nvq_mode mode, const char *fault,
	   uint64_t arm_after, uint64_t seed, int wfd)
{
	struct child *ch = calloc(1, sizeof(*ch));
	bool armed = !fault[0], started = false;
	struct nvq_opts o;
	unsigned int k, i;
	char *mem;
	int rc;

	alarm(30); /* not inherited from the parent */
	if (!ch)
		child_fail("out of memory");
	ch->rnd = seed;
	ch->mode = mode;
	nvq_opts_init(&o);
	o.mode = mode;
	o.nr_queues = QUEUES;
	o.queue_depth = 64;
	o.io_timeout_ms = IO_TIMEOUT_MS;
	o.admin_timeout_ms = 1000;
	rc = nvq_open(uri, &o, &ch->c);
	if (rc)
		child_fail("nvq_open(%s): %d %s", uri, rc, nvq_errmsg());
	ch->emu = nvq_emu_transport_device(ch->c->t);
	if (!ch->emu || nvq_ctrl_queue_count(ch->c) < QUEUES)
		child_fail("no emulator or fewer than %u queues", QUEUES);
	mem = nvq_dma_alloc(ch->c, (size_t)QUEUES * QD * MAX_NLB * BS, -1);
	if (!mem)
		child_fail("nvq_dma_alloc: %s", nvq_errmsg());
	for (k = 0; k < QUEUES; k++) {
		ch->q[k] = nvq_ctrl_queue(ch->c, k);
		for (i = 0; i < QD; i++)
			ch->req[k][i].buf =
				mem + ((size_t)k * QD + i) * MAX_NLB * BS;
	}
	__atomic_store_n(&J->state, CH_RUNNING, __ATOMIC_SEQ_CST);
	for (;;) {
		bool progress = false;

		for (k = 0; k < QUEUES; k++) {
			if (mode == NVQ_MODE_POLL)
				nvq_poll(ch->q[k], 0);
			else if (mode == NVQ_MODE_WAIT)
				nvq_wait(ch->q[k], 1, 2);
			for (i = 0; i < QD; i++) {
				struct creq *r = &ch->req[k][i];

				if (__atomic_load_n(&r->state,
						    __ATOMIC_ACQUIRE) ==
				    R_DONE) {
					finish(ch, r);
					progress = true;
				}
			}
			for (i = 0; i < QD && !ch->dead; i++) {
				struct creq *r = &ch->req[k][i];

				if (r->state != R_FREE)
					continue;
				if (!submit(ch, k, r))
					break;
				progress = true;
			}
		}
		if (!armed && ch->submitted >= arm_after) {
			if (nvq_emu_fault_inject(ch->emu, fault))
				child_fail("fault '%s': %s", fault,
					   nvq_emu_errmsg());
			armed = true;
		}
		if (!started && (ch->submitted || ch->dead)) {
			/* The parent's clock starts now. */
			if (write(wfd, "s", 1) != 1)
				child_fail("cannot tell the parent");
			started = true;
		}
		if (!progress && (mode == NVQ_MODE_THREAD || ch->dead))
			usleep(ch->dead ? 1000 : 100);
	}
}

/* ---- the parent ---- */

struct verdict {
	unsigned int ok; /* the last acknowledged generation */
	unsigned int newer; /* a later write that was in flight landed */
	unsigned int torn_inflight; /* torn, a write was in flight */
	unsigned int stale; /* older than the last acknowledged write */
	unsigned int future; /* a generation never submitted */
	unsigned int torn; /* torn with no write in flight */
	unsigned int misplaced; /* another LBA's (or run's) block */
};

static const char *const kind_name[] = { "zero", "ok", "torn", "misplaced" };

/*
 * Read the whole image and judge every block against the journal. @img
 * gets the data. Returns the number of blocks that break the rules,
 * printing each unless @quiet.
 */
static unsigned int check_image(struct nvq_ctrl *c, char *img,
				struct verdict *v, bool quiet)
{
	unsigned int lba, bad = 0;
	uint16_t status = 0;

	memset(v, 0, sizeof(*v));
	CHECK_OK(nvq_read_sync(c, 1, img, 0, NBLK, &status));
	for (lba = 0; lba < NBLK; lba++) {
		uint64_t a = J->e[lba].acked, s = J->e[lba].submitted, g = 0;
		enum blockstamp_kind k;
		bool broken = false;

		k = blockstamp_check(img + (size_t)lba * BS, BS, lba, SALT, &g);
		switch (k) {
		case BLOCKSTAMP_ZERO:
		case BLOCKSTAMP_OK:
			if (g < a) {
				v->stale++;
				broken = true;
			} else if (g > s) {
				v->future++;
				broken = true;
			} else if (g > a) {
				v->newer++;
			} else {
				v->ok++;
			}
			break;
		case BLOCKSTAMP_TORN:
			if (s > a) {
				v->torn_inflight++;
			} else {
				v->torn++;
				broken = true;
			}
			break;
		case BLOCKSTAMP_MISPLACED:
			v->misplaced++;
			broken = true;
			break;
		}
		if (broken) {
			bad++;
			if (!quiet)
				fprintf(stderr,
					"  lba %u: %s, generation %llu; "
					"journal: acked %llu, submitted %llu\n",
					lba, kind_name[k],
					(unsigned long long)g,
					(unsigned long long)a,
					(unsigned long long)s);
		}
	}
	return bad;
}

/* Write generation @gen of @lba through the driver, stamp intact. */
static void put_block(struct nvq_ctrl *c, uint64_t lba, uint64_t gen)
{
	uint64_t blk[BS / 8];

	blockstamp_fill(blk, BS, lba, gen, SALT);
	CHECK_OK(nvq_write_sync(c, 1, blk, lba, 1, NULL));
}

/* What the image holds is the next baseline; torn blocks are rewritten. */
static void rebase(struct nvq_ctrl *c, const char *img)
{
	unsigned int lba;

	for (lba = 0; lba < NBLK; lba++) {
		uint64_t g = 0;

		if (blockstamp_check(img + (size_t)lba * BS, BS, lba, SALT,
				     &g) == BLOCKSTAMP_TORN) {
			g = J->e[lba].submitted + 1;
			put_block(c, lba, g);
		}
		J->e[lba].acked = J->e[lba].submitted = g;
	}
}

/* Write a new generation of @lba and record it as acknowledged. */
static void advance(struct nvq_ctrl *c, uint64_t lba)
{
	uint64_t g = J->e[lba].submitted + 1;

	put_block(c, lba, g);
	J->e[lba].acked = J->e[lba].submitted = g;
}

/*
 * The checker must be able to fail: a block put back to an older
 * generation by hand, a torn block nothing was writing and another LBA's
 * block are each found; a later generation that was in flight is not an
 * error. Then everything is repaired and the image checks clean.
 */
static void self_check(const char *uri, char *img)
{
	struct nvq_ctrl *c = open_or_die(uri, NULL);
	uint64_t blk[BS / 8];
	struct verdict v;

	CHECK_EQ(check_image(c, img, &v, false), 0);
	rebase(c, img);
	/* Stale: lba 3 at generation 2 after 3 was acknowledged. */
	advance(c, 3);
	advance(c, 3);
	advance(c, 3);
	put_block(c, 3, J->e[3].acked - 1);
	/* Torn: lba 5 with one byte flipped, no write in flight. */
	advance(c, 5);
	blockstamp_fill(blk, BS, 5, J->e[5].acked, SALT);
	((unsigned char *)blk)[BS / 2] ^= 0x10;
	CHECK_OK(nvq_write_sync(c, 1, blk, 5, 1, NULL));
	/* Misplaced: lba 7's block at lba 8. */
	advance(c, 7);
	blockstamp_fill(blk, BS, 7, J->e[7].acked, SALT);
	CHECK_OK(nvq_write_sync(c, 1, blk, 8, 1, NULL));
	/* Allowed: lba 9's next generation was in flight and landed. */
	J->e[9].submitted++;
	put_block(c, 9, J->e[9].submitted);
	CHECK_EQ(check_image(c, img, &v, true), 3);
	CHECK_EQ(v.stale, 1);
	CHECK_EQ(v.torn, 1);
	CHECK_EQ(v.misplaced, 1);
	CHECK_EQ(v.newer, 1);
	CHECK_EQ(v.future, 0);
	/* A generation nobody submitted. */
	put_block(c, 10, J->e[10].submitted + 5);
	CHECK_EQ(check_image(c, img, &v, true), 4);
	CHECK_EQ(v.future, 1);
	/* Repaired, the image is clean again. */
	advance(c, 3);
	advance(c, 5);
	J->e[8].acked = J->e[8].submitted = J->e[8].submitted + 1;
	put_block(c, 8, J->e[8].acked);
	J->e[9].acked = J->e[9].submitted;
	J->e[10].acked = J->e[10].submitted = J->e[10].submitted + 5;
	CHECK_EQ(check_image(c, img, &v, false), 0);
	CHECK_EQ(v.ok, NBLK);
	nvq_close(c);
	printf("checker self-check: stale, torn, misplaced and future blocks "
	       "rejected, an in-flight generation accepted\n");
}

/* One per iteration, in turn; the numbers in them are drawn. */
enum {
	F_NONE,
	F_DELAY,
	F_STATUS_DNR,
	F_STATUS,
	F_DUP,
	F_NOIRQ,
	F_DROP,
	F_CORRUPT,
	F_NR
};

static void make_fault(unsigned int kind, uint64_t *rnd, char *out, size_t len)
{
	unsigned int nth = 1 + (unsigned int)(test_rand(rnd) % 40);
	unsigned int cnt = 1 + (unsigned int)(test_rand(rnd) % 3);
	unsigned int ms = 100 + (unsigned int)(test_rand(rnd) % 600);
	unsigned long long seed = test_rand(rnd) >> 1;

	switch (kind) {
	case F_NONE:
		snprintf(out, len, "%s", "");
		break;
	case F_DELAY:
		snprintf(out, len, "delay:%ums@on=write@nth=%u@count=%u", ms,
			 nth, cnt);
		break;
	case F_STATUS_DNR:
		snprintf(out, len,
			 "status:2/0x80@on=write@nth=%u@count=%u@dnr=1", nth,
			 cnt);
		break;
	case F_STATUS:
		snprintf(out, len, "status:0/6@on=io@nth=%u@count=%u", nth,
			 cnt);
		break;
	case F_DUP:
		snprintf(out, len, "dup-cqe@on=io@prob=5%%@seed=%llu", seed);
		break;
	case F_NOIRQ:
		snprintf(out, len, "no-irq@on=io@nth=%u@count=inf", nth);
		break;
	case F_DROP:
		snprintf(out, len, "drop-cqe@on=write@nth=%u", nth);
		break;
	case F_CORRUPT:
		snprintf(out, len, "corrupt@on=read@prob=10%%@seed=%llu", seed);
		break;
	}
}

static const char *mode_name(enum nvq_mode m)
{
	return m == NVQ_MODE_POLL ? "poll" :
	       m == NVQ_MODE_WAIT ? "wait" :
				    "thread";
}

struct totals {
	uint64_t acked, failed, reads, corrupt_reads, ctrl_failed;
	uint64_t newer, torn_inflight, timeouts, aborts, resets, retries;
	uint64_t busy_checked;
};

static void iteration(unsigned int it, const char *uri, uint64_t *rnd,
		      char *img, struct totals *t)
{
	static const enum nvq_mode modes[] = { NVQ_MODE_POLL, NVQ_MODE_WAIT,
					       NVQ_MODE_THREAD };
	enum nvq_mode mode = modes[(it / F_NR + it) % 3];
	unsigned int kind = it % F_NR;
	bool slow = kind == F_DELAY || kind == F_DROP || kind == F_NOIRQ;
	uint64_t child_seed = test_rand(rnd), arm_after;
	unsigned int kill_ms, bad;
	char fault[128], buf;
	struct nvq_ctrl *c;
	struct verdict v;
	struct pollfd pfd;
	int fds[2], st, rc;
	pid_t pid;

	make_fault(kind, rnd, fault, sizeof(fault));
	arm_after = test_rand(rnd) % 48;
	/*
	 * Mostly early; sometimes, and for the faults that end in a timeout
	 * half the time, after the timeouts (Abort, reset or failure) had
	 * time to run.
	 */
	if (test_rand(rnd) % (slow ? 2 : 3))
		kill_ms = 2 + (unsigned int)(test_rand(rnd) % 99);
	else
		kill_ms = 150 + (unsigned int)(test_rand(rnd) % 750);
	memset(J, 0, offsetof(struct journal, e));
	CHECK_OK(pipe(fds));
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		close(fds[0]);
		child_main(uri, mode, fault, arm_after, child_seed, fds[1]);
	}
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	rc = poll(&pfd, 1, 20000);
	if (rc != 1 || read(fds[0], &buf, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		check_failed(__FILE__, __LINE__, "child started I/O",
			     "iteration %u: poll %d, child: %s", it, rc,
			     J->msg);
	}
	close(fds[0]);
	if (!(it % 4)) {
		/* The image is locked while the child lives. */
		struct nvq_ctrl *other = NULL;

		CHECK_EQ(nvq_open(uri, NULL, &other), -EBUSY);
		CHECK_MSG("in use");
		t->busy_checked++;
	}
	usleep(kill_ms * 1000u);
	CHECK_OK(kill(pid, SIGKILL));
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (J->state == CH_FAILED || !WIFSIGNALED(st) ||
	    WTERMSIG(st) != SIGKILL)
		check_failed(__FILE__, __LINE__, "child killed by SIGKILL",
			     "iteration %u: status %#x, child: %s", it, st,
			     J->msg);
	/* The kill released the lock: the image opens again. */
	c = open_or_die(uri, NULL);
	bad = check_image(c, img, &v, false);
	printf("%2u %-6s %-44s kill %3u ms: acked %4llu failed %3llu "
	       "reads %4llu%s | in flight landed %u torn %u | timeouts %llu "
	       "aborts %llu resets %llu%s\n",
	       it, mode_name(mode), fault[0] ? fault : "(none)", kill_ms,
	       (unsigned long long)J->acked, (unsigned long long)J->failed,
	       (unsigned long long)J->reads,
	       J->corrupt_reads ? " (corrupt seen)" : "", v.newer,
	       v.torn_inflight, (unsigned long long)J->st.timeouts,
	       (unsigned long long)J->st.aborts,
	       (unsigned long long)J->st.resets,
	       J->state == CH_CTRL_FAILED ? " ctrl failed" : "");
	if (bad)
		check_failed(__FILE__, __LINE__, "image consistent",
			     "iteration %u (%s, %s, kill %u ms): %u bad blocks",
			     it, mode_name(mode), fault, kill_ms, bad);
	rebase(c, img);
	nvq_close(c);
	t->acked += J->acked;
	t->failed += J->failed;
	t->reads += J->reads;
	t->corrupt_reads += J->corrupt_reads;
	t->ctrl_failed += J->state == CH_CTRL_FAILED;
	t->newer += v.newer;
	t->torn_inflight += v.torn_inflight;
	t->timeouts += J->st.timeouts;
	t->aborts += J->st.aborts;
	t->resets += J->st.resets;
	t->retries += J->st.retries;
}

int main(void)
{
	const char *env = getenv("NVQ_CRASH_ITERS");
	unsigned int iters = env && *env ? (unsigned int)atoi(env) : ITERS;
	char path[256], uri[512], *img = malloc((size_t)NBLK * BS);
	struct totals t;
	uint64_t rnd;
	unsigned int it;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(200); /* a hang is a failure */
	CHECK(img != NULL);
	rnd = test_seed("crash", 0xc5a54ull);
	J = mmap(NULL, sizeof(*J), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(J != MAP_FAILED);
	fd = test_tmpfile(path, sizeof(path), "crash");
	close(fd);
	snprintf(uri, sizeof(uri), "emu:file=%s,size=%uK,lbads=12,qpairs=4",
		 path, NBLK * BS / 1024);
	self_check(uri, img);
	memset(&t, 0, sizeof(t));
	for (it = 0; it < iters; it++)
		iteration(it, uri, &rnd, img, &t);
	printf("crash: %u iterations, %llu writes acknowledged, %llu failed, "
	       "%llu reads verified (%llu corrupt as injected), %llu "
	       "controllers failed; at the kill %llu blocks held an in-flight "
	       "write, %llu torn; timeouts %llu, aborts %llu, resets %llu, "
	       "retries %llu; lock held by the child %llu times\n",
	       iters, (unsigned long long)t.acked, (unsigned long long)t.failed,
	       (unsigned long long)t.reads, (unsigned long long)t.corrupt_reads,
	       (unsigned long long)t.ctrl_failed, (unsigned long long)t.newer,
	       (unsigned long long)t.torn_inflight,
	       (unsigned long long)t.timeouts, (unsigned long long)t.aborts,
	       (unsigned long long)t.resets, (unsigned long long)t.retries,
	       (unsigned long long)t.busy_checked);
	unlink(path);
	munmap(J, sizeof(*J));
	free(img);
	printf("crash: ok\n");
	return T_EXIT_PASS;
}
