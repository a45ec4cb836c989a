// SPDX-License-Identifier: MIT
/*
 * Sharing: more CPUs than queues (qpairs=1: every CPU maps to the one
 * queue and threads on different CPUs use it at once), and more queues
 * than interrupt vectors (msix=2 with 4 queues, msix=1 where the admin
 * queue shares too): threads sleeping on different queues of one vector
 * never lose a wakeup, and a completion thread serves all of them.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"
#include "ctrl.h"

#define ROUNDS 300

struct job {
	struct nvq_ctrl *c;
	struct nvq_queue *q; /* NULL: nvq_ctrl_queue_for_cpu() */
	int cpu; /* pin here if >= 0 */
	int id;
	enum nvq_mode mode;
	struct nvq_queue *seen_q;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_OK(pthread_setaffinity_np(pthread_self(), sizeof(set), &set));
}

static void wait_calls(struct job *j, struct nvq_queue *q, struct cb_count *cnt,
		       int n)
{
	while (calls_of(cnt) < n) {
		if (j->mode == NVQ_MODE_THREAD) {
			sched_yield();
		} else if (j->q) {
			/* Nobody else reaps this queue: a lost wakeup
			 * shows as a 10 s timeout. */
			CHECK(nvq_wait(q, 1, 10000) > 0);
		} else {
			/* A thread sharing the queue may reap ours while
			 * we sleep. */
			CHECK(nvq_wait(q, 1, 20) >= 0);
		}
	}
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	struct cb_count cnt = { 0 };
	char *buf = nvq_dma_alloc(j->c, 8192, -1);
	char *heap = malloc(4096);
	uint64_t lba = (uint64_t)j->id * 16;
	int i, async = 0;

	CHECK(buf && heap);
	if (j->cpu >= 0) {
		pin(j->cpu);
		j->seen_q = nvq_ctrl_queue_for_cpu(j->c);
	}
	for (i = 0; i < ROUNDS; i++) {
		struct nvq_queue *q = j->q ? j->q :
					     nvq_ctrl_queue_for_cpu(j->c);

		fill_pattern(buf, 4096, (uint64_t)(j->id * 1000 + i));
		memset(buf + 4096, 0, 4096);
		if (!j->q && i % 3 == 0) {
			/* Sync helpers (on the CPU's queue), bounced. */
			memcpy(heap, buf, 4096);
			CHECK_OK(nvq_write_sync(j->c, 1, heap, lba, 1, NULL));
			CHECK_OK(nvq_read_sync(j->c, 1, heap, lba, 1, NULL));
			memcpy(buf + 4096, heap, 4096);
		} else {
			CHECK_OK(nvq_write(q, 1, buf, lba, 1, 0, count_cb,
					   &cnt));
			wait_calls(j, q, &cnt, ++async);
			CHECK_OK(nvq_read(q, 1, buf + 4096, lba, 1, 0, count_cb,
					  &cnt));
			wait_calls(j, q, &cnt, ++async);
		}
		CHECK(!memcmp(buf, buf + 4096, 4096));
	}
	CHECK_EQ(cnt.err, 0);
	nvq_dma_free(j->c, buf);
	free(heap);
	return NULL;
}

static void run_jobs(struct nvq_ctrl *c, int n, bool own_queue, bool pinned,
		     enum nvq_mode mode)
{
	struct job j[8];
	pthread_t th[8];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int i;

	for (i = 0; i < n; i++) {
		memset(&j[i], 0, sizeof(j[i]));
		j[i].c = c;
		j[i].id = i;
		j[i].mode = mode;
		j[i].q = own_queue ? nvq_ctrl_queue(c, (unsigned int)i) : NULL;
		j[i].cpu = pinned ? (int)(i % cpus) : -1;
		CHECK_OK(pthread_create(&th[i], NULL, job_main, &j[i]));
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n && pinned; i++)
		CHECK(j[i].seen_q == nvq_ctrl_queue_for_cpu(c) ||
		      nvq_ctrl_queue_count(c) > 1);
}

/*
 * Lockstep rounds: each thread submits one command on its own queue and
 * sleeps until it completes, then all meet at a barrier. Within a round
 * no interrupt follows the last completion, so a wakeup that one waiter
 * consumed for another's queue is never made up for by a later one: the
 * lost waiter times out and the test fails.
 */
struct step {
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	pthread_barrier_t *bar;
	int id;
};

static void *step_main(void *arg)
{
	struct step *s = arg;
	struct cb_count cnt = { 0 };
	char *buf = nvq_dma_alloc(s->c, 4096, -1);
	int i;

	CHECK(buf);
	for (i = 0; i < ROUNDS; i++) {
		CHECK_OK(nvq_read(s->q, 1, buf, (uint64_t)s->id, 1, 0, count_cb,
				  &cnt));
		while (calls_of(&cnt) <= i)
			CHECK(nvq_wait(s->q, 1, 10000) > 0);
		pthread_barrier_wait(s->bar);
	}
	CHECK_EQ(cnt.err, 0);
	nvq_dma_free(s->c, buf);
	return NULL;
}

static void test_lockstep(unsigned int msix)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	pthread_barrier_t bar;
	struct step s[4];
	pthread_t th[4];
	char uri[64];
	int i;

	nvq_opts_init(&o);
	o.mode = NVQ_MODE_WAIT;
	o.nr_queues = 4;
	snprintf(uri, sizeof(uri), "emu:size=4M,qpairs=4,msix=%u", msix);
	c = open_or_die(uri, &o);
	pthread_barrier_init(&bar, NULL, 4);
	for (i = 0; i < 4; i++) {
		s[i].c = c;
		s[i].q = nvq_ctrl_queue(c, (unsigned int)i);
		s[i].bar = &bar;
		s[i].id = i;
		CHECK_OK(pthread_create(&th[i], NULL, step_main, &s[i]));
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	nvq_close(c);
}

/* One queue pair for every CPU. */
static void test_queue_sharing(enum nvq_mode mode)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;

	nvq_opts_init(&o);
	o.mode = mode;
	c = open_or_die("emu:size=4M,qpairs=1", &o);
	CHECK_EQ(nvq_ctrl_queue_count(c), 1);
	CHECK(nvq_ctrl_queue_for_cpu(c) == nvq_ctrl_queue(c, 0));
	run_jobs(c, 4, false, true, mode);
	nvq_close(c);
}

/* Four queues on @msix vectors; one thread per queue. */
static void test_vector_sharing(enum nvq_mode mode, unsigned int msix)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue_stats st;
	char uri[64];
	unsigned int i;
	uint64_t irqs = 0;

	nvq_opts_init(&o);
	o.mode = mode;
	o.nr_queues = 4;
	snprintf(uri, sizeof(uri), "emu:size=4M,qpairs=4,msix=%u", msix);
	c = open_or_die(uri, &o);
	CHECK_EQ(nvq_ctrl_queue_count(c), 4);
	for (i = 0; i < 4; i++) {
		struct nvq_queue *q = nvq_ctrl_queue(c, i);

		/* msix=2: vector 0 is the admin queue's, all share 1. */
		CHECK_EQ(q->vec->index, msix > 1 ? 1 : 0);
		CHECK_EQ(q->vec->nr_queues, 4);
	}
	CHECK(c->admin_owns_vec0 == (msix > 1));
	run_jobs(c, 4, true, false, mode);
	for (i = 0; i < 4; i++) {
		nvq_queue_stats(nvq_ctrl_queue(c, i), &st);
		CHECK_EQ(st.bad_cqes, 0);
		irqs += st.interrupts;
	}
	CHECK(irqs > 0);
	/* Admin commands still work with vector 0 shared. */
	CHECK_OK(nvq_flush_sync(c, 1, NULL));
	nvq_close(c);
}

int main(void)
{
	test_queue_sharing(NVQ_MODE_POLL);
	test_queue_sharing(NVQ_MODE_WAIT);
	test_lockstep(2);
	test_lockstep(1);
	test_vector_sharing(NVQ_MODE_WAIT, 2);
	test_vector_sharing(NVQ_MODE_THREAD, 2);
	test_vector_sharing(NVQ_MODE_WAIT, 1);
	test_vector_sharing(NVQ_MODE_THREAD, 1);
	printf("sharing: ok\n");
	return 0;
}
