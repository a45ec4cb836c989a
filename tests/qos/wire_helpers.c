// SPDX-License-Identifier: MIT
/* Helpers of the QoS integration tests, see wire_helpers.h. */
#include <errno.h>
#include <unistd.h>

#include "wire_helpers.h"

static char *root;

static void remove_root(void)
{
	fake_remove(root);
	root = NULL;
}

int wire_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		return 1;
	return n > NVQ_QOS_MAX_CPUS ? NVQ_QOS_MAX_CPUS : (int)n;
}

const char *wire_fake_root(const char *initial)
{
	remove_root();
	CHECK_EQ(nvq_qos_test_set_backend(NVQ_QOS_BACKEND_RECORD), 0);
	root = fake_root(wire_ncpus(), initial);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
	nvq_qos_record_reset();
	check_cleanup = remove_root;
	atexit(remove_root);
	return root;
}

struct nvq_ctrl *wire_open(const char *params, enum nvq_mode mode,
			   unsigned int nr_queues, int limit_us,
			   unsigned int timeout_ms)
{
	struct nvq_ctrl *c = NULL;
	struct nvq_opts o;
	char uri[128];
	int rc;

	nvq_opts_init(&o);
	o.mode = mode;
	o.nr_queues = nr_queues;
	o.queue_depth = 8;
	o.cpu_lat_limit_us = limit_us;
	o.cpu_lat_timeout_ms = timeout_ms;
	snprintf(uri, sizeof(uri), "emu:%s", params ? params : "size=1M");
	rc = nvq_open(uri, &o, &c);
	if (rc)
		fprintf(stderr, "nvq_open(%s): %s\n", uri, nvq_errmsg());
	CHECK_EQ(rc, 0);
	return c;
}

struct io_done {
	int done; /* atomic */
	int err;
	int cpu;
};

static void io_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct io_done *d = arg;

	d->err = cpl->err;
	d->cpu = sched_getcpu();
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
}

int wire_io(struct nvq_ctrl *c, struct nvq_queue *q, unsigned int n)
{
	struct io_done d = { 0 };
	unsigned int i, spins;
	void *buf;

	buf = nvq_dma_alloc(c, 4096, -1);
	CHECK(buf != NULL);
	for (i = 0; i < n; i++) {
		d.done = 0;
		d.err = 0;
		CHECK_EQ(nvq_read(q, 1, buf, i % 64, 1, 0, io_cb, &d), 0);
		if (nvq_poll(q, 0) == -EINVAL) {
			/* The completion thread reaps: wait for it (10 s cap
			 * against a hang, not a timing assertion). */
			for (spins = 0;
			     spins < 1000000 &&
			     !__atomic_load_n(&d.done, __ATOMIC_ACQUIRE);
			     spins++)
				usleep(10);
		} else {
			while (!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE))
				CHECK(nvq_wait(q, 1, 10000) >= 0);
		}
		CHECK_EQ(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), 1);
		CHECK_EQ(d.err, 0);
	}
	nvq_dma_free(c, buf);
	return d.cpu;
}

void wire_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	CHECK_EQ(sched_getcpu(), cpu);
}

void wire_held(cpu_set_t *set)
{
	int cpu;

	CPU_ZERO(set);
	for (cpu = 0; cpu < wire_ncpus(); cpu++)
		if (nvq_qos_record_current(cpu) != NVQ_QOS_NONE)
			CPU_SET(cpu, set);
}

bool wire_records_only(const cpu_set_t *allowed)
{
	struct nvq_qos_record rec;
	unsigned int i;

	for (i = 0; !nvq_qos_record_get(i, &rec); i++) {
		if (!CPU_ISSET(rec.cpu, allowed)) {
			fprintf(stderr, "record %u: CPU %d got %d\n", i,
				rec.cpu, rec.value);
			return false;
		}
	}
	return true;
}
