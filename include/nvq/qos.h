/* SPDX-License-Identifier: MIT */
/*
 * CPU latency QoS: while a queue is busy, keep the CPUs that take its
 * completions out of deep idle states, and let them sleep again a few
 * milliseconds after the I/O stops.
 *
 * Knobs live per controller and may be changed at any time from any thread.
 * Requests are aggregated per CPU across every queue and controller of the
 * process: the strictest active limit wins, and the value a CPU's PM QoS
 * file held before nvq touched it is put back when the last request on
 * that CPU goes, when the controller closes, at exit and on SIGINT/SIGTERM.
 *
 * Without permission to change PM QoS settings, nothing is applied, I/O is
 * unaffected, and nvq_qos_info() says why.
 */
#ifndef NVQ_QOS_H
#define NVQ_QOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Per-controller QoS settings and per-queue activity. */
struct nvq_qos_ctrl;
struct nvq_qos_queue;

/* cpu_lat_limit_us values besides 0..NVQ_QOS_LIMIT_MAX */
#define NVQ_QOS_OFF (-1) /* no limit (the default) */
#define NVQ_QOS_AUTO (-2) /* derived from the cpuidle state table */
#define NVQ_QOS_LIMIT_MAX 1000000 /* 1 s; anything larger means nothing */

#define NVQ_QOS_TIMEOUT_MS_DEFAULT 3
#define NVQ_QOS_TIMEOUT_MS_MAX 60000

/*
 * Parse a cpu_lat_limit_us value as given on a command line: "off" or "-1",
 * "auto", "n/a" or "0" (no idle at all), or a number of microseconds.
 * Returns 0 and sets *@limit_us, or -EINVAL with a message.
 */
int nvq_qos_parse_limit(const char *s, int *limit_us);

/*
 * Set the controller's cpu_lat_limit_us: NVQ_QOS_OFF, NVQ_QOS_AUTO, 0 (the
 * CPUs may not idle at all) or N microseconds of allowed resume latency.
 * Active queues switch to the new limit (or release theirs) at once. When
 * nvq cannot apply limits (no permission), returns 0 all the same, keeps
 * the setting and leaves the reason in nvq_errmsg() and nvq_qos_info().
 * -EINVAL for values out of range.
 */
int nvq_qos_set_limit(struct nvq_qos_ctrl *qc, int limit_us);

/*
 * Set cpu_lat_timeout_ms (1..NVQ_QOS_TIMEOUT_MS_MAX, default 3): a queue
 * that saw no submission for this long releases its limit; the release
 * happens within timeout + one timeout period after the last submission.
 */
int nvq_qos_set_timeout(struct nvq_qos_ctrl *qc, unsigned int timeout_ms);

/* Which mechanism carries the limits (process-wide). */
enum nvq_qos_backend {
	/* /sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us per
	 * CPU; CPUs without that file fall back to /dev/cpu_dma_latency. */
	NVQ_QOS_BACKEND_SYSFS = 0,
	/* /dev/cpu_dma_latency only: one limit for all CPUs (the strictest
	 * of all requests), held while nvq keeps the device open. */
	NVQ_QOS_BACKEND_DMA_LATENCY = 1,
};

/*
 * Choose the backend. Only while no limit is held anywhere in the process
 * (-EBUSY otherwise).
 */
int nvq_qos_set_backend(enum nvq_qos_backend backend);

/* What a controller's QoS setting amounts to, see nvq_qos_info(). */
struct nvq_qos_info {
	int limit_us; /* as set: NVQ_QOS_OFF, NVQ_QOS_AUTO or microseconds */
	int effective_us; /* what queues request: NVQ_QOS_OFF or >= 0 */
	unsigned int timeout_ms;
	char backend[24]; /* "sysfs" or "cpu_dma_latency" */
	char reason[256]; /* for "auto": what was picked and why */
	char status[256]; /* "" or why limits could not be applied */
};

/* Fill @info for controller @qc. */
void nvq_qos_info(const struct nvq_qos_ctrl *qc, struct nvq_qos_info *info);

/* Per-queue QoS counters. */
struct nvq_qos_stats {
	uint64_t applies; /* idle -> active transitions that placed a limit */
	uint64_t releases; /* limits dropped (timeout, knob change, close) */
	uint64_t held_ns; /* total time a limit was held, the current
			   * period included */
	bool active; /* a limit is held right now */
};

/* Fill @st for queue @qq (all zero when @qq is NULL). */
void nvq_qos_queue_stats(const struct nvq_qos_queue *qq,
			 struct nvq_qos_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* NVQ_QOS_H */
