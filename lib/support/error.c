// SPDX-License-Identifier: MIT
/* Per-thread error messages and small system helpers. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvq/nvq.h"
#include "internal.h"

static __thread char errbuf[512];

int nvq_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return err;
}

void nvq_err_clear(void)
{
	errbuf[0] = '\0';
}

const char *nvq_errmsg(void)
{
	return errbuf;
}

uint64_t nvq_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int nr_nodes;
static pthread_once_t nodes_once = PTHREAD_ONCE_INIT;

static void read_nodes(void)
{
	char path[64];
	int n = 0;

	for (;;) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d",
			 n);
		if (access(path, F_OK))
			break;
		n++;
	}
	nr_nodes = n ? n : 1;
}

int nvq_numa_nodes(void)
{
	pthread_once(&nodes_once, read_nodes);
	return nr_nodes;
}

int nvq_cpu_node(int cpu)
{
	char path[96];
	int node;

	if (cpu < 0 || nvq_numa_nodes() == 1)
		return 0;
	for (node = 0; node < nr_nodes; node++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/cpu%d", node, cpu);
		if (!access(path, F_OK))
			return node;
	}
	return 0;
}

const char *nvq_errmsg_copy(char *buf, size_t len)
{
	snprintf(buf, len, "%s", nvq_errmsg());
	return buf;
}

void nvq_sleep_us(unsigned int us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}
