/* SPDX-License-Identifier: MIT */
/* What one run of one configuration measured; input of every report. */
#ifndef NVQ_PERF_RESULT_H
#define NVQ_PERF_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "cpustat.h"
#include "histogram.h"
#include "options.h"
#include "verify.h"

enum { PERF_DIR_READ, PERF_DIR_WRITE, PERF_NR_DIRS };
/* Index of the read + write sums in perf_result.bw / .iops. */
#define PERF_DIR_ALL PERF_NR_DIRS

/* Verify mismatches kept for the report (the count is exact). */
#define PERF_MAX_VFAIL 8

/* CPUs whose callbacks are counted to find the completion CPU. */
#define PERF_CPL_CPUS 256

/* CPU latency QoS of one I/O queue from the start of the jobs to the end
 * of the measured window (the ramp included). */
struct perf_qos_queue {
	unsigned int qid;
	uint64_t applies, releases, held_ns;
	/* what its waiters did (counters over the window; est_ns at its
	 * end) */
	struct nvq_qos_poll_stats poll;
};

/*
 * The emulator's completion stamps split clat into device and host time
 * for one I/O in PERF_DEVTIME_EVERY (per recording thread, the first
 * one included); the callback CPU is looked up for one completion in
 * PERF_CPU_EVERY. Both would cost the hot path more per I/O than the
 * rest of the harness; a sample is plenty for their percentiles and for
 * the CPU that runs the completions.
 */
#define PERF_DEVTIME_EVERY 32u
#define PERF_CPU_EVERY 64u

/*
 * Latencies and volume of one direction. Only clat has a histogram (its
 * percentiles are fio's); slat and lat keep fio's exact min, max, mean,
 * stddev and count.
 */
struct perf_dir_stats {
	uint64_t ios; /* written with relaxed atomic stores: the monitor */
	uint64_t bytes; /* ios x bs, filled in when a job is collected */
	/* slat and lat are recorded with every clat value, uncounted: their
	 * n is clat's, and lat's sum slat's + clat's (lat = slat + clat per
	 * I/O), both set when a job's contexts are collected */
	struct perf_stat slat; /* submission: t0 -> submit returned (t1) */
	struct perf_hist clat; /* t1 -> completion seen (t2) */
	struct perf_stat lat; /* t0 -> t2 */
	/* Emulator stamps (devtime.h), sampled: clat = dev + host. */
	struct perf_hist host; /* CQE posted -> completion seen */
	struct perf_hist dev; /* submit returned -> CQE posted */
	uint64_t bad_stamps; /* sampled stamps that were no posting time */
};

/*
 * fio's I/O depth distributions (its io_u_map, io_u_submit, io_u_complete),
 * seven buckets each:
 *  - level[]: I/Os by the depth of their queue right after their batch
 *    was submitted (1, 2, 4, 8, 16, 32, >=64: at least that many);
 *  - submit[]: submission batches by size (0, 1-4, 5-8, 9-16, 17-32,
 *    33-64, >64), counted in @submits;
 *  - complete[]: reaping calls (nvq_poll(), nvq_wait()) that reaped any
 *    completion, by how many they reaped, counted in @completes. A poll
 *    loop's empty polls are no completion event (fio's getevents waits
 *    for one). The completion threads of --mode thread reap out of
 *    sight: @completes stays 0 there.
 */
#define PERF_DEPTH_BUCKETS 7
struct perf_depths {
	uint64_t level[PERF_DEPTH_BUCKETS];
	uint64_t submit[PERF_DEPTH_BUCKETS];
	uint64_t complete[PERF_DEPTH_BUCKETS];
	uint64_t submits, completes;
};

/* fio's io_u_mark_depth() bucket of queue depth @d. */
static inline unsigned int perf_depth_level_idx(unsigned int d)
{
	unsigned int k = d > 1 ? 31 - (unsigned int)__builtin_clz(d) : 0;

	return k < PERF_DEPTH_BUCKETS - 1 ? k : PERF_DEPTH_BUCKETS - 1;
}

/* fio's __io_u_mark_map() bucket of a batch of @n. */
static inline unsigned int perf_depth_batch_idx(unsigned int n)
{
	unsigned int k;

	if (n <= 4)
		return n ? 1 : 0;
	k = 32 - (unsigned int)__builtin_clz(n - 1) - 1;
	return k < PERF_DEPTH_BUCKETS - 1 ? k : PERF_DEPTH_BUCKETS - 1;
}

/* Add @src into @dst. */
void perf_depths_merge(struct perf_depths *dst, const struct perf_depths *src);

/* min / mean / max / stddev of periodic rate samples. */
struct perf_rate {
	uint64_t samples;
	double min, mean, max, dev;
};

/*
 * The namespace's metadata format and how the run drove it (run.c): what
 * the text and JSON reports say (docs/perf.md).
 */
struct perf_md_info {
	uint32_t ms; /* metadata bytes per block, 0 = none */
	bool extended; /* in the data buffer (FLBAS bit 4) */
	uint8_t pi_type; /* 0 none, 1, 2, 3 */
	bool pi_first; /* PI in the first 8 bytes of the metadata */
	bool pract; /* the controller inserts / strips the PI (--pi-act 1) */
	bool host_pi; /* the host generates it (--pi-act 0) */
	bool pi_verify; /* ... and checks what reads return */
	unsigned int prchk; /* NVQ_IO_PRCHK_* sent */
	uint16_t apptag, appmask;
	uint32_t blk; /* bytes per LBA in the data buffer: the --bs unit */
	uint64_t md_per_io; /* separate metadata bytes per I/O */
};

struct perf_result {
	const struct perf_config *cfg;
	unsigned int config_index;
	unsigned int round; /* 1-based */

	/* The device as the run found it. */
	char model[48];
	uint32_t nsid;
	uint32_t lba_size;
	uint64_t ns_bytes;
	struct perf_md_info md;
	unsigned int nr_queues;
	uint32_t run_id;

	struct perf_dir_stats dir[PERF_NR_DIRS];
	uint64_t runtime_ns; /* measured window: ramp end -> last completion */
	/* per-interval bandwidth (bytes/s) and IOPS: read, write, all */
	struct perf_rate bw[PERF_NR_DIRS + 1];
	struct perf_rate iops[PERF_NR_DIRS + 1];

	/* Process CPU over the measured window (includes the emulated
	 * device's thread when the device is emu:). */
	uint64_t wall_ns;
	double usr_pct, sys_pct;
	uint64_t ctx_switches;
	uint64_t majflt,
		minflt; /* page faults during the run (fio's majf/minf) */
	bool have_idle;
	struct perf_idle idle;
	/* CPU time over the same window: the process's (usr + sys), and the
	 * machine's busy time from /proc/stat (every process, the kernel) */
	bool have_proc_cpu;
	uint64_t proc_cpu_ns;
	bool have_machine;
	uint64_t machine_busy_ns, machine_total_ns;
	unsigned int machine_cpus;
	/* /proc/loadavg just before the run: other work already running */
	bool have_loadavg;
	double loadavg[3];

	uint64_t verify_blocks; /* blocks checked */
	uint64_t verify_bad;
	unsigned int nr_vfail;
	struct perf_vfail vfail[PERF_MAX_VFAIL];

	uint64_t io_errors;
	char errmsg[256]; /* first I/O error, "" if none */
	int first_errno; /* its errno (positive), 0 if none */

	struct perf_depths depths; /* fio's iodepth_* distributions */
	bool have_complete; /* depths.complete[] was measured */
	bool interrupted; /* stopped early by a signal */

	/*
	 * I/O still in flight when the run gave up waiting for it (a device
	 * that stopped answering past --time or a signal): nvq_close()
	 * cancelled it; none of it is in the statistics.
	 */
	uint64_t stuck_ios;
	uint64_t stuck_oldest_ns; /* age of the oldest one then */
	uint64_t dropped[PERF_NR_DIRS]; /* stuck_ios by direction */

	/* The controller's failure path (nvq_ctrl_stats()) over the run,
	 * and the command timeouts it ran with. */
	bool have_recovery;
	struct nvq_ctrl_stats recovery;
	unsigned int io_timeout_ms, admin_timeout_ms;
	bool stamped; /* host / dev histograms were recorded */

	/* Callbacks per CPU (sampled, one in PERF_CPU_EVERY, each sample
	 * counting for that many); the completion CPU is the one with most. */
	uint64_t cpl_count[PERF_CPL_CPUS];
	int cpl_cpu; /* -1 when no callback ran */
	double cpl_share; /* its fraction of the callbacks */

	/* CPU latency QoS: the setting as the library took it, and one
	 * entry per job queue with a QoS state (none in poll mode). */
	struct nvq_qos_info qos;
	/* how the limit was honoured, read at the end of the window */
	struct nvq_qos_method_info method;
	unsigned int nr_qos;
	struct perf_qos_queue *qosq;
	uint64_t qos_span_ns; /* start of the jobs -> end of the window */
};

/* Zero @r with empty histograms. */
void perf_result_init(struct perf_result *r);

/* What perf_result_cpu_per_io() divides. */
enum perf_cpu_kind {
	PERF_CPU_PROCESS, /* usr + sys of nvq-perf (with emu: the device) */
	PERF_CPU_MACHINE, /* busy time of all CPUs (/proc/stat) */
	PERF_CPU_IDLE_POLL, /* all CPUs in cpuidle's POLL state */
};
/*
 * CPU time per measured I/O into *@ns: false when it was not measured
 * (no I/O, /proc/stat unreadable, no cpuidle POLL state).
 */
bool perf_result_cpu_per_io(const struct perf_result *r,
			    enum perf_cpu_kind kind, double *ns);
/* Measured I/Os of both directions. */
uint64_t perf_result_ios(const struct perf_result *r);

/*
 * CPUs' worth of busy time other processes (and the kernel for them) took
 * during the run: machine busy time minus the process's, over wall time.
 * False when either is unknown.
 */
bool perf_result_other_cpus(const struct perf_result *r, double *cpus);

/*
 * Was the machine busy enough to distort the result? Other work took at
 * least a quarter of the CPUs during the run, or the 1-minute load average
 * at the start was at least the number of CPUs. @why gets the evidence.
 */
bool perf_result_busy(const struct perf_result *r, char *why, size_t len);

/*
 * Did the run meet first touches of memory (the emulator's RAM media being
 * populated, new buffers)? At least 256 minor page faults, or 64 and more
 * than one per 100 I/Os: a steady run takes next to none, and with huge
 * pages one fault may zero 2 MiB.
 */
bool perf_result_populating(const struct perf_result *r);
/*
 * The waiter counters of all job queues summed into @sum; est_ns is the
 * mean of the queues that have an estimate. False when no job queue has
 * QoS state (poll mode).
 */
bool perf_result_poll_sum(const struct perf_result *r,
			  struct nvq_qos_poll_stats *sum);
/* Free what @r owns (not @r). */
void perf_result_free(struct perf_result *r);
/* Residency of idle state @k on CPU @cpu (-1 if not measured). */
double perf_result_cpu_idle(const struct perf_result *r, int cpu,
			    unsigned int k);
/* Zero @d with empty histograms. */
void perf_dir_stats_init(struct perf_dir_stats *d);
/* Add @src's counts and histograms into @dst (for per-config totals). */
void perf_result_merge_dirs(struct perf_dir_stats *dst,
			    const struct perf_dir_stats *src);

#endif /* NVQ_PERF_RESULT_H */
