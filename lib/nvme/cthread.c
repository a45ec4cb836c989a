// SPDX-License-Identifier: MIT
/*
 * Completion threads (NVQ_MODE_THREAD), the kernel's model: one thread per
 * interrupt vector, pinned to the CPU that takes the vector's interrupts,
 * blocked on its eventfd, reaping every queue of the vector and running
 * the callbacks. Started at nvq_open(), joined at nvq_close(); the library
 * starts no other threads.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lock.h"
#include "qos.h"
#include "queue.h"
#include "transport.h"

/* Whether any queue of the vector is active with a polling method. */
static bool any_spin(const struct nvq_vector *v)
{
	unsigned int i;

	for (i = 0; i < v->nr_queues; i++)
		if (__atomic_load_n(&v->queues[i]->qos_spin, __ATOMIC_ACQUIRE))
			return true;
	return false;
}

/*
 * Waiter polling on the completion thread: reap the vector's queues
 * without sleeping, the interrupt masked where possible (this thread is
 * its only consumer), for as long as one of them is active; then unmask
 * and reap once more before sleeping again (the NAPI order).
 */
static void cthread_spin(struct nvq_vector *v)
{
	uint64_t t0 = nvq_now_ns();
	unsigned int i, n = 0;
	bool masked;

	pthread_mutex_lock(&v->lock);
	masked = nvq_vector_set_mask(v, true);
	pthread_mutex_unlock(&v->lock);
	for (i = 0; i < v->nr_queues; i++) {
		struct nvq_qos_queue *qq = v->queues[i]->qos;

		if (qq && masked)
			__atomic_fetch_add(&qq->w.masked, 1, __ATOMIC_RELAXED);
	}
	for (;;) {
		int done = 0;

		for (i = 0; i < v->nr_queues; i++)
			done += nvq_queue_reap(v->queues[i], 0);
		/* An empty reap lent the CPU to a device on our CPUs. */
		if (done)
			continue;
		if (++n % 16 == 0 && (!any_spin(v) || READ_ONCE(v->stop)))
			break;
		cpu_relax();
	}
	for (i = 0; i < v->nr_queues; i++) {
		struct nvq_qos_queue *qq = v->queues[i]->qos;

		if (qq) {
			__atomic_fetch_add(&qq->w.polls, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&qq->w.poll_ns, nvq_now_ns() - t0,
					   __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_lock(&v->lock);
	nvq_vector_set_mask(v, false);
	pthread_mutex_unlock(&v->lock);
}

static void *cthread_main(void *arg)
{
	struct nvq_vector *v = arg;
	struct epoll_event ev;
	unsigned int i;
	int r;

	for (;;) {
		/*
		 * This CPU wakes for the vector's completions. Pinned, it is
		 * the queues' QoS CPU already; unpinned, note where the
		 * thread sleeps now (a load and a branch once known).
		 */
		if (!v->pinned) {
			int cpu = sched_getcpu();

			for (i = 0; i < v->nr_queues; i++)
				if (v->queues[i]->qos)
					nvq_qos_note_cpu(v->queues[i]->qos,
							 cpu);
		}
		if (any_spin(v))
			cthread_spin(v);
		/*
		 * Reap before sleeping: the edge of a CQE posted after this
		 * look wakes the epoll_wait() below, so none is lost; one
		 * posted before it is reaped here.
		 */
		for (i = 0; i < v->nr_queues; i++)
			nvq_queue_reap(v->queues[i], 0);
		if (READ_ONCE(v->stop))
			break;
		/* One syscall per wake-up: edge-triggered, nothing to read. */
		__atomic_store_n(&v->cthread_asleep, true, __ATOMIC_RELAXED);
		r = epoll_wait(v->cthread_epfd, &ev, 1, -1);
		__atomic_store_n(&v->cthread_asleep, false, __ATOMIC_RELAXED);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (ev.data.u32 == 1 || READ_ONCE(v->stop))
			break;
		/* Each queue of the vector is credited with the wakeup. */
		for (i = 0; i < v->nr_queues; i++)
			__atomic_fetch_add(&v->queues[i]->stat_interrupts, 1,
					   __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Watch @fd edge-triggered on @ep, tagged @tag. */
static int watch(int ep, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET,
				  .data.u32 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

int nvq_cthread_start(struct nvq_vector *v)
{
	pthread_attr_t attr;
	cpu_set_t set;
	char name[16];
	int rc;

	if (v->thread_running)
		return 0;
	v->stop = false;
	v->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->stop_fd < 0)
		return nvq_err(-errno, "eventfd: %s", strerror(errno));
	v->cthread_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (v->cthread_epfd < 0 || watch(v->cthread_epfd, v->fd, 0) ||
	    watch(v->cthread_epfd, v->stop_fd, 1)) {
		rc = -errno;
		if (v->cthread_epfd >= 0)
			close(v->cthread_epfd);
		v->cthread_epfd = -1;
		close(v->stop_fd);
		v->stop_fd = -1;
		return nvq_err(rc, "epoll: %s", strerror(-rc));
	}
	/* A transport whose news needs pump() (tcp): its fd, level-
	 * triggered, wakes the thread like the interrupt (tag 0). */
	if (v->t && v->t->ops->poll_fd) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };
		int pfd = v->t->ops->poll_fd(v->t, v->index);

		if (pfd >= 0 &&
		    epoll_ctl(v->cthread_epfd, EPOLL_CTL_ADD, pfd, &ev)) {
			rc = -errno;
			close(v->cthread_epfd);
			v->cthread_epfd = -1;
			close(v->stop_fd);
			v->stop_fd = -1;
			return nvq_err(rc, "epoll: %s", strerror(-rc));
		}
	}
	pthread_attr_init(&attr);
	v->pinned = false;
	if (v->cpu >= 0 && v->cpu < CPU_SETSIZE) {
		CPU_ZERO(&set);
		CPU_SET(v->cpu, &set);
		v->pinned =
			!pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	rc = pthread_create(&v->thread, &attr, cthread_main, v);
	if (rc && v->pinned) {
		/* The CPU may be outside our cpuset: run unpinned then. */
		v->pinned = false;
		pthread_attr_destroy(&attr);
		pthread_attr_init(&attr);
		rc = pthread_create(&v->thread, &attr, cthread_main, v);
	}
	pthread_attr_destroy(&attr);
	if (rc) {
		close(v->stop_fd);
		v->stop_fd = -1;
		close(v->cthread_epfd);
		v->cthread_epfd = -1;
		return nvq_err(
			-rc,
			"cannot start the completion thread of vector %u: %s",
			v->index, strerror(rc));
	}
	snprintf(name, sizeof(name), "nvq-cq%u", v->index);
	pthread_setname_np(v->thread, name);
	v->thread_running = true;
	return 0;
}

void nvq_cthread_stop(struct nvq_vector *v)
{
	uint64_t one = 1;

	if (!v->thread_running)
		return;
	__atomic_store_n(&v->stop, true, __ATOMIC_RELEASE);
	while (write(v->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(v->thread, NULL);
	close(v->stop_fd);
	v->stop_fd = -1;
	close(v->cthread_epfd);
	v->cthread_epfd = -1;
	v->thread_running = false;
}
