/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the QoS integration tests: the emulated controller opened
 * through the public API with QoS options, I/O that reports the CPU its
 * completion ran on, and a fake sysfs tree under the recording backend.
 */
#ifndef NVQ_TESTS_QOS_WIRE_HELPERS_H
#define NVQ_TESTS_QOS_WIRE_HELPERS_H

#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "qos_helpers.h"

/* CPUs the machine has (at least 1, at most NVQ_QOS_MAX_CPUS). */
int wire_ncpus(void);

/*
 * Use the recording backend on a fresh fake tree with the machine's CPUs,
 * each resume-latency file holding @initial; returns the root path
 * (freed by wire_cleanup(), also on a failed CHECK).
 */
const char *wire_fake_root(const char *initial);

/* Open "emu:@params" with @nr_queues queues of @mode and QoS knobs. */
struct nvq_ctrl *wire_open(const char *params, enum nvq_mode mode,
			   unsigned int nr_queues, int limit_us,
			   unsigned int timeout_ms);

/*
 * Read one 4 KiB block @n times on @q, one at a time, waiting in
 * nvq_wait() (WAIT/POLL) or for the completion thread (THREAD). Returns
 * the CPU the last callback ran on.
 */
int wire_io(struct nvq_ctrl *c, struct nvq_queue *q, unsigned int n);

/* Pin the calling thread to @cpu. */
void wire_pin(int cpu);

/* CPUs with a recorded request still in place, as a set. */
void wire_held(cpu_set_t *set);

/* True when every record so far names a CPU in @allowed. */
bool wire_records_only(const cpu_set_t *allowed);

/* Fail unless the last recorded value of @cpu is @us (NVQ_QOS_NONE: none). */
#define CHECK_CPU_US(cpu, us) CHECK_EQ(nvq_qos_record_current(cpu), us)

#endif /* NVQ_TESTS_QOS_WIRE_HELPERS_H */
