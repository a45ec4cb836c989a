/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the QoS tests: a fake sysfs tree in a temporary directory and
 * fake queues (a submission counter and a qos_idle flag driven by hand, as
 * lib/pcie/queue.c drives them). The checks are tests/common/check.h's; a
 * test that changes real files sets check_cleanup to put them back when a
 * check fails.
 */
#ifndef NVQ_TESTS_QOS_HELPERS_H
#define NVQ_TESTS_QOS_HELPERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "nvq/nvq.h"
#include "qos.h"
#include "testutil.h"

/* Create a fake sysfs root with @ncpus CPUs whose resume-latency files
 * say @initial; returns the malloc'd root path. */
char *fake_root(int ncpus, const char *initial);
/* Write @text to @root/@rel, creating directories. */
void fake_write(const char *root, const char *rel, const char *text);
/* The text of CPU @cpu's resume-latency file, trailing newline dropped. */
const char *fake_cpu_value(const char *root, int cpu);
/* Remove the tree and free @root. */
void fake_remove(char *root);

/* A queue as lib/queue.c would hold one. */
struct fake_queue {
	uint64_t submitted;
	uint8_t qos_idle;
	struct nvq_qos_queue *qos;
};

/* Attach @fq to @qc with CPUs @cpus (a -1 terminated list). */
void fq_init(struct fake_queue *fq, struct nvq_qos_ctrl *qc, const int *cpus);
/* One batch: bump the counter, then the hot-path check. */
void fq_submit(struct fake_queue *fq);
/* Detach. */
void fq_destroy(struct fake_queue *fq);

/* Poll @cond every millisecond for up to @secs seconds. */
#define WAIT_FOR(cond, secs)                                    \
	({                                                      \
		int i_;                                         \
		for (i_ = 0; i_ < (secs)*1000 && !(cond); i_++) \
			usleep(1000);                           \
		(bool)(cond);                                   \
	})

#endif /* NVQ_TESTS_QOS_HELPERS_H */
