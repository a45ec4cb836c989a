/* SPDX-License-Identifier: MIT */
/*
 * What the CPUs did during a run: process user/system time (getrusage),
 * the whole machine's busy time (/proc/stat) and per-CPU cpuidle residency
 * from /sys/devices/system/cpu/cpuN/cpuidle/stateK/{name,time}.
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
/* Read the process's CPU time (all threads) now: 0, or -errno (then *@s
 * is zero). */
int perf_cpu_snapshot(struct perf_cpu_snap *s);

/*
 * The machine's CPU time at one moment, all CPUs summed, from the "cpu"
 * line of /proc/stat. busy = user + nice + system + irq + softirq + steal
 * (guest time is inside user and nice); idle and iowait are not busy.
 * The kernel counts its idle loop as idle, polling in it too (cpuidle's
 * POLL state, haltpoll): that shows in the cpuidle residency only.
 */
struct perf_machine_snap {
	uint64_t busy_ns;
	uint64_t total_ns; /* busy + idle + iowait */
	unsigned int nr_cpus; /* "cpuN" lines */
};

/*
 * Read @path (NULL: /proc/stat); ticks become ns with @hz ticks per
 * second (0: sysconf(_SC_CLK_TCK)). Returns 0, -errno when the file cannot
 * be read, or -EINVAL when its "cpu" line is not there or malformed.
 */
int perf_machine_snapshot(struct perf_machine_snap *s, const char *path,
			  long hz);

/*
 * The load averages (1, 5, 15 minutes) from @path (NULL: /proc/loadavg):
 * 0, -errno, or -EINVAL when the file does not start with three numbers.
 */
int perf_loadavg(double avg[3], const char *path);

/* Name of cpuidle's polling state (x86 poll_idle): time in it is a CPU
 * spinning in the kernel's idle loop. */
#define PERF_IDLE_POLL_STATE "POLL"

#endif /* NVQ_PERF_CPUSTAT_H */
