// SPDX-License-Identifier: MIT
/*
 * Completion threads (NVQ_MODE_THREAD), the kernel's model: one thread per
 * interrupt vector, pinned to the CPU that takes the vector's interrupts,
 * blocked on its eventfd, reaping every queue of the vector and running
 * the callbacks. Started at nvq_open(), joined at nvq_close(); the library
 * starts no other threads.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "qos.h"
#include "queue.h"

static void *cthread_main(void *arg)
{
	struct nvq_vector *v = arg;
	struct pollfd pfd[2] = {
		{ .fd = v->fd, .events = POLLIN },
		{ .fd = v->stop_fd, .events = POLLIN },
	};
	unsigned int i;
	uint64_t val;

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
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		/*
		 * Consume the interrupt before reaping: a CQE posted after
		 * the reap looked raises the eventfd again, so none is lost.
		 * Each queue of the vector is credited with the wakeup.
		 */
		if (read(v->fd, &val, sizeof(val)) == sizeof(val))
			for (i = 0; i < v->nr_queues; i++)
				__atomic_fetch_add(
					&v->queues[i]->stat_interrupts, 1,
					__ATOMIC_RELAXED);
		for (i = 0; i < v->nr_queues; i++)
			nvq_queue_reap(v->queues[i], 0);
	}
	return NULL;
}

int nvq_cthread_start(struct nvq_vector *v)
{
	pthread_attr_t attr;
	cpu_set_t set;
	char name[16];
	int rc;

	if (v->thread_running)
		return 0;
	v->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->stop_fd < 0)
		return nvq_err(-errno, "eventfd: %s", strerror(errno));
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
	while (write(v->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(v->thread, NULL);
	close(v->stop_fd);
	v->stop_fd = -1;
	v->thread_running = false;
}
