/* SPDX-License-Identifier: MIT */
/*
 * What the CPUs did during a run: process user/system time (getrusage)
 * and per-CPU cpuidle residency from
 * /sys/devices/system/cpu/cpuN/cpuidle/stateK/{name,time}.
 */
#ifndef NVQ_PERF_CPUSTAT_H
#define NVQ_PERF_CPUSTAT_H

#include <stdint.h>

#define PERF_IDLE_NAME 32

/* Cumulative cpuidle counters at one moment. */
struct perf_idle_snap {
	unsigned int nr_cpus;
	unsigned int nr_states;
	int *cpu; /* [nr_cpus] CPU numbers, ascending */
	char (*names)[PERF_IDLE_NAME]; /* [nr_states] */
	uint64_t *time_us; /* [cpu * nr_states + state]; UINT64_MAX = absent */
};

/* Idle residency over an interval, in percent of wall time. */
struct perf_idle {
	unsigned int nr_cpus;
	unsigned int nr_states;
	int *cpu;
	char (*names)[PERF_IDLE_NAME];
	double *pct; /* [cpu * nr_states + state] */
	double *avg; /* [state]: mean over the CPUs */
};

/*
 * Read the counters under @root (NULL: /sys/devices/system/cpu). Returns
 * 0, -ENOENT when no CPU has cpuidle states, or -ENOMEM.
 */
int perf_idle_snapshot(struct perf_idle_snap *s, const char *root);
/* Free what perf_idle_snapshot() allocated. */
void perf_idle_snap_free(struct perf_idle_snap *s);

/*
 * Residency between snapshots @a and @b taken @wall_ns apart. Returns 0 or
 * -EINVAL when the snapshots do not describe the same CPUs and states.
 */
int perf_idle_diff(const struct perf_idle_snap *a,
		   const struct perf_idle_snap *b, uint64_t wall_ns,
		   struct perf_idle *out);
/* Free what perf_idle_diff() or perf_idle_copy() allocated. */
void perf_idle_free(struct perf_idle *r);

/* Process CPU time at one moment. */
struct perf_cpu_snap {
	uint64_t usr_ns;
	uint64_t sys_ns;
	uint64_t vctx; /* voluntary context switches */
	uint64_t ivctx; /* involuntary */
	uint64_t majflt; /* page faults that needed I/O */
	uint64_t minflt; /* page faults that did not */
};
/* Read the process's CPU time (all threads) now. */
void perf_cpu_snapshot(struct perf_cpu_snap *s);

#endif /* NVQ_PERF_CPUSTAT_H */
