// SPDX-License-Identifier: MIT
/*
 * Controller reset (lib/nvme/reset.c) under load: threads keep verified
 * writes and reads in flight - on their own queues and, two at a time, on
 * a shared one - while the main thread resets the controller again and
 * again with nvq_ctrl_reset(), in every completion mode, with shared and
 * with exclusive queues. Every request must succeed with verified data
 * (what a reset takes back is submitted again), every callback must run
 * exactly once, the queue handles must keep working, and the counters must
 * say how many resets ran. Admin commands racing with the resets either
 * complete or fail with -EIO, never hang. A reset that cannot bring the
 * controller back (no-ready) fails it cleanly. Nothing here asserts time.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ctrl.h"
#include "emu.h"
#include "testutil.h"

#define QUEUES 3
#define WORKERS 4 /* workers 2 and 3 share queue 2 (shared mode only) */
#define SLOTS 8 /* requests per worker in flight */
#define RESETS 12

struct slot {
	struct worker *w;
	uint64_t lba;
	uint64_t gen;
	bool writing;
	int calls; /* atomic: callbacks since submission */
	int err;
};

struct worker {
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	enum nvq_mode mode;
	unsigned int id;
	uint8_t *buf;
	struct slot slots[SLOTS];
	int stop; /* atomic */
	unsigned long ios, bad, errors, twice;
};

static void slot_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct slot *s = arg;

	s->err = cpl->err;
	if (__atomic_fetch_add(&s->calls, 1, __ATOMIC_ACQ_REL))
		s->w->twice++;
}

static uint8_t *slot_buf(struct worker *w, unsigned int i)
{
	return w->buf + (size_t)i * 4096;
}

static void submit(struct worker *w, unsigned int i)
{
	struct slot *s = &w->slots[i];
	int rc;

	__atomic_store_n(&s->calls, 0, __ATOMIC_RELEASE);
	do {
		if (s->writing) {
			fill_pattern(slot_buf(w, i), 4096,
				     s->lba << 20 | s->gen);
			rc = nvq_write(w->q, 1, slot_buf(w, i), s->lba, 1, 0,
				       slot_cb, s);
		} else {
			memset(slot_buf(w, i), 0, 4096);
			rc = nvq_read(w->q, 1, slot_buf(w, i), s->lba, 1, 0,
				      slot_cb, s);
		}
		/* Full: a shared queue's neighbour holds the slots. */
		if (rc == -EAGAIN)
			sched_yield();
	} while (rc == -EAGAIN);
	CHECK_OK(rc);
}

/* The slot's request finished: check it, then write or read next. */
static void advance(struct worker *w, unsigned int i)
{
	struct slot *s = &w->slots[i];
	uint8_t want[4096];

	w->ios++;
	if (s->err) {
		w->errors++;
		return;
	}
	if (!s->writing) {
		fill_pattern(want, sizeof(want), s->lba << 20 | s->gen);
		if (memcmp(want, slot_buf(w, i), sizeof(want)))
			w->bad++;
		s->gen++;
	}
	s->writing = !s->writing;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int i, busy = SLOTS;

	for (i = 0; i < SLOTS; i++) {
		w->slots[i].w = w;
		w->slots[i].lba = w->id * SLOTS + i;
		w->slots[i].gen = 1;
		w->slots[i].writing = true;
		submit(w, i);
	}
	while (busy) {
		if (w->mode == NVQ_MODE_THREAD)
			usleep(200);
		else
			CHECK(nvq_wait(w->q, 1, 50) >= 0);
		for (i = 0; i < SLOTS; i++) {
			struct slot *s = &w->slots[i];

			if (s->lba == UINT64_MAX ||
			    !__atomic_load_n(&s->calls, __ATOMIC_ACQUIRE))
				continue;
			advance(w, i);
			if (__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE) ||
			    s->err) {
				s->lba = UINT64_MAX;
				busy--;
				continue;
			}
			submit(w, i);
		}
	}
	return NULL;
}

/* Identify, over and over, until told to stop: a reset may abort one. */
struct admin_racer {
	struct nvq_ctrl *c;
	int stop;
	unsigned long ok, aborted;
};

static void *admin_main(void *arg)
{
	struct admin_racer *a = arg;
	struct nvq_sqe sqe;
	char id[4096];

	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		int rc;

		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = nvq_admin_identify;
		sqe.cdw10 = NVQ_ID_CNS_CTRL;
		rc = nvq_admin(a->c, &sqe, id, sizeof(id), NULL, NULL);
		if (rc == 0) {
			CHECK(!memcmp(id + 24, nvq_ctrl_id(a->c)->mn, 40));
			a->ok++;
		} else {
			CHECK_EQ(rc, -EIO);
			a->aborted++;
		}
		usleep(500);
	}
	return NULL;
}

static void run(enum nvq_mode mode, bool excl)
{
	struct worker w[WORKERS];
	pthread_t th[WORKERS], at;
	struct admin_racer racer = { 0 };
	struct nvq_ctrl_stats st;
	struct nvq_ctrl *c;
	struct nvq_opts o;
	unsigned int i, nw = excl ? QUEUES : WORKERS;
	unsigned long ios = 0;

	nvq_opts_init(&o);
	o.mode = mode;
	o.exclusive = excl;
	o.nr_queues = QUEUES;
	o.queue_depth = 32;
	c = open_or_die("emu:size=8M,lbads=12", &o);
	memset(w, 0, sizeof(w));
	for (i = 0; i < nw; i++) {
		w[i].c = c;
		w[i].id = i;
		w[i].mode = mode;
		w[i].q = nvq_ctrl_queue(c, i < QUEUES ? i : QUEUES - 1);
		w[i].buf = nvq_dma_alloc(c, SLOTS * 4096, -1);
		CHECK(w[i].buf != NULL);
	}
	for (i = 0; i < nw; i++)
		CHECK_OK(pthread_create(&th[i], NULL, worker_main, &w[i]));
	racer.c = c;
	CHECK_OK(pthread_create(&at, NULL, admin_main, &racer));
	for (i = 0; i < RESETS; i++) {
		usleep(2000);
		CHECK_OK(nvq_ctrl_reset(c));
	}
	for (i = 0; i < nw; i++)
		__atomic_store_n(&w[i].stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&racer.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nw; i++)
		CHECK_OK(pthread_join(th[i], NULL));
	CHECK_OK(pthread_join(at, NULL));
	for (i = 0; i < nw; i++) {
		CHECK_EQ(w[i].twice, 0);
		CHECK_EQ(w[i].errors, 0);
		CHECK_EQ(w[i].bad, 0);
		ios += w[i].ios;
	}
	CHECK_OK(nvq_ctrl_stats(c, &st));
	CHECK_EQ(st.resets, RESETS);
	CHECK_EQ(st.failed, 0);
	CHECK_EQ(st.gone, 0);
	/* The handles still work after the last reset. */
	for (i = 0; i < QUEUES; i++) {
		struct cb_count cnt = { 0 };

		CHECK_OK(nvq_read(nvq_ctrl_queue(c, i), 1, w[0].buf, 0, 1, 0,
				  count_cb, &cnt));
		if (mode == NVQ_MODE_THREAD)
			while (!calls_of(&cnt))
				usleep(100);
		else
			reap_until(nvq_ctrl_queue(c, i), &cnt, 1);
		CHECK_EQ(cnt.err, 0);
	}
	printf("  %-6s %-4s ok: %lu I/Os, %u resets, %llu retried, admin %lu ok %lu aborted\n",
	       mode == NVQ_MODE_POLL ? "poll" :
	       mode == NVQ_MODE_WAIT ? "wait" :
				       "thread",
	       excl ? "excl" : "shrd", ios, RESETS,
	       (unsigned long long)st.retries, racer.ok, racer.aborted);
	for (i = 0; i < (excl ? QUEUES : WORKERS); i++)
		nvq_dma_free(c, w[i].buf);
	nvq_close(c);
}

/* A controller that does not come back from its reset fails cleanly. */
static void failed_reset(void)
{
	struct nvq_ctrl_stats st;
	struct cb_count cnt = { 0 };
	struct nvq_ctrl *c;
	struct nvq_opts o;
	void *buf;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	c = open_or_die("emu:size=1M,lbads=12", &o);
	buf = nvq_dma_alloc(c, 4096, -1);
	CHECK(buf != NULL);
	CHECK_OK(nvq_emu_fault_inject(nvq_emu_transport_device(c->t),
				      "no-ready@count=inf"));
	CHECK_EQ(nvq_ctrl_reset(c), -EIO);
	CHECK_MSG("reset failed");
	CHECK_OK(nvq_ctrl_stats(c, &st));
	CHECK_EQ(st.resets, 1);
	/* Failed for good: I/O fails at once, so does another reset. */
	CHECK_EQ(nvq_read(nvq_ctrl_queue(c, 0), 1, buf, 0, 1, 0, count_cb,
			  &cnt),
		 -EIO);
	CHECK_EQ(nvq_ctrl_reset(c), -EIO);
	CHECK_EQ(nvq_ctrl_reset(NULL), -EINVAL);
	nvq_dma_free(c, buf);
	nvq_close(c);
	printf("  failed reset ok\n");
}

int main(void)
{
	static const enum nvq_mode modes[] = { NVQ_MODE_POLL, NVQ_MODE_WAIT,
					       NVQ_MODE_THREAD };
	unsigned int m;

	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(300);
	for (m = 0; m < 3; m++) {
		run(modes[m], false);
		run(modes[m], true);
	}
	failed_reset();
	printf("reset: ok\n");
	return T_EXIT_PASS;
}
