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
 * Several nvq processes share a CPU through a state file (one per boot,
 * /run/nvq/qos-BOOTID.state, or $XDG_RUNTIME_DIR/nvq/ where /run is not
 * writable): the file keeps the strictest limit of the live ones, and the
 * last one out puts the original value back. A process killed by SIGKILL
 * cannot restore anything; the next nvq process, or nvq_qos_restore_dead()
 * ("nvq qos-restore"), undoes what it left.
 *
 * Signals: where SIGINT/SIGTERM would end the process, nvq restores the
 * files and lets the signal end it. Where the application installed a
 * handler of its own before nvq's first limit, nvq restores the files,
 * then calls that handler; if the process goes on, its queues count as
 * released from then on (nvq_qos_queue_stats() says active = false) and
 * each takes its limit again with its next submission after the QoS timer's
 * next check. A handler installed after nvq's replaces nvq's: the limits
 * stay held (and reported held) until released, exit() or the next nvq
 * process after a crash. A child of fork() holds none of its parent's
 * limits: its exit() or a signal to it leaves them alone.
 *
 * Without permission to change PM QoS settings, nothing is applied, I/O is
 * unaffected, and nvq_qos_info() says why.
 *
 * The comments are kernel-doc; docs/design.md ("The QoS hook") describes
 * how queues drive the limits.
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

/**
 * nvq_qos_parse_limit() - Parse a cpu_lat_limit_us value.
 * @s: the value as given on a command line: "off" or "-1", "auto", "n/a"
 *	or "0" (no idle at all), or a number of microseconds (at most
 *	NVQ_QOS_LIMIT_MAX).
 * @limit_us: set on success.
 *
 * Return: 0 with *@limit_us set, or -EINVAL with a message.
 */
int nvq_qos_parse_limit(const char *s, int *limit_us);

/**
 * nvq_qos_set_limit() - Set a controller's cpu_lat_limit_us.
 * @qc: the controller's QoS state (nvq_ctrl_qos()).
 * @limit_us: NVQ_QOS_OFF, NVQ_QOS_AUTO, 0 (the CPUs may not idle at all)
 *	or N microseconds of allowed resume latency.
 *
 * Active queues switch to the new limit (or release theirs) at once. Any
 * thread, at any time.
 *
 * Return: 0, also when nvq cannot apply limits (no permission): the
 * setting is kept and the reason left in nvq_errmsg() and nvq_qos_info().
 * -EINVAL for values out of range or a NULL @qc.
 */
int nvq_qos_set_limit(struct nvq_qos_ctrl *qc, int limit_us);

/**
 * nvq_qos_set_timeout() - Set a controller's cpu_lat_timeout_ms.
 * @qc: the controller's QoS state (nvq_ctrl_qos()).
 * @timeout_ms: 1..NVQ_QOS_TIMEOUT_MS_MAX, default 3.
 *
 * A queue that saw no submission for this long releases its limit; the
 * release happens within timeout + one timeout period after the last
 * submission. Any thread, at any time.
 *
 * Return: 0, or -EINVAL for values out of range or a NULL @qc.
 */
int nvq_qos_set_timeout(struct nvq_qos_ctrl *qc, unsigned int timeout_ms);

/**
 * enum nvq_qos_backend - Which mechanism carries the limits (process-wide).
 * @NVQ_QOS_BACKEND_SYSFS:
 *	/sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us per CPU;
 *	CPUs without that file fall back to /dev/cpu_dma_latency.
 * @NVQ_QOS_BACKEND_DMA_LATENCY: /dev/cpu_dma_latency only: one limit for
 *	all CPUs (the strictest of all requests), held while nvq keeps the
 *	device open.
 */
enum nvq_qos_backend {
	NVQ_QOS_BACKEND_SYSFS = 0,
	NVQ_QOS_BACKEND_DMA_LATENCY = 1,
};

/**
 * nvq_qos_set_backend() - Choose the backend.
 * @backend: the mechanism for all limits of the process.
 *
 * Only while no limit is held anywhere in the process.
 *
 * Return: 0; -EBUSY while a limit is held; -EINVAL for an unknown
 * @backend.
 */
int nvq_qos_set_backend(enum nvq_qos_backend backend);

/**
 * struct nvq_qos_info - What a controller's QoS setting amounts to.
 * @limit_us: as set: NVQ_QOS_OFF, NVQ_QOS_AUTO or microseconds.
 * @effective_us: what queues request: NVQ_QOS_OFF or >= 0.
 * @timeout_ms: cpu_lat_timeout_ms.
 * @backend: "sysfs" or "cpu_dma_latency".
 * @reason: for "auto": what was picked and why.
 * @status: "" or why limits could not be applied; where they can, a note
 *	when there is no state file or only a per-user one (limits of a
 *	killed process are then not restored, or not seen by other users).
 *
 * Filled by nvq_qos_info().
 */
struct nvq_qos_info {
	int limit_us;
	int effective_us;
	unsigned int timeout_ms;
	char backend[24];
	char reason[256];
	char status[256];
};

/**
 * nvq_qos_info() - Describe a controller's QoS setting.
 * @qc: the controller's QoS state (NULL: the defaults and the backend).
 * @info: filled with the setting, the backend and its status (NULL: no-op).
 */
void nvq_qos_info(const struct nvq_qos_ctrl *qc, struct nvq_qos_info *info);

/**
 * struct nvq_qos_stats - Per-queue QoS counters.
 * @applies: idle -> active transitions that placed a limit.
 * @releases: limits dropped (timeout, knob change, close, a SIGINT or
 *	SIGTERM the application handled).
 * @held_ns: total time a limit was held, the current period included.
 * @active: a limit is held right now (the file says so).
 */
struct nvq_qos_stats {
	uint64_t applies;
	uint64_t releases;
	uint64_t held_ns;
	bool active;
};

/**
 * nvq_qos_queue_stats() - Read a queue's QoS counters.
 * @qq: the queue's QoS activity (nvq_queue_qos()).
 * @st: filled with the counters (all zero when @qq is NULL; NULL: no-op).
 */
void nvq_qos_queue_stats(const struct nvq_qos_queue *qq,
			 struct nvq_qos_stats *st);

/**
 * enum nvq_qos_method - How a limit is honoured.
 * @NVQ_QOS_METHOD_AUTO: choose (the default): the cpuidle method where a
 *	cpuidle governor honours the limit and nvq may write the PM QoS
 *	files; otherwise nothing where the measured wake-up cost already
 *	meets the limit, else the hybrid method.
 * @NVQ_QOS_METHOD_CPUIDLE: PM QoS requests on the completion CPUs (the
 *	sysfs or cpu_dma_latency backend): the kernel's idle loop keeps
 *	them out of slow idle states. Changes nothing where the machine has
 *	no cpuidle states, and needs permission to write the files.
 * @NVQ_QOS_METHOD_POLL: waiter polling, needing neither cpuidle nor root:
 *	while the queue is active, the thread waiting for its completions
 *	(the nvq_wait() caller, the completion thread) polls the CQ instead
 *	of sleeping, with the queue's interrupt masked where the transport
 *	can; when the queue goes idle it unmasks, looks at the CQ once more
 *	and sleeps.
 * @NVQ_QOS_METHOD_HYBRID: waiter polling that first sleeps through the
 *	part of the expected device time that exceeds the wake-up cost
 *	(nvq_qos_wake_cost()), then polls; on fast media it polls.
 * @NVQ_QOS_METHOD_NONE: only in struct nvq_qos_method_info: nothing is
 *	done (limit off, or the platform meets the limit by itself).
 *
 * A controller starts with the method named by $NVQ_QOS_METHOD ("auto",
 * "cpuidle", "poll", "hybrid"; for applications that offer no option, and
 * for tests), else auto; nvq_opts.cpu_lat_method other than auto and
 * nvq_qos_set_method() override it.
 */
enum nvq_qos_method {
	NVQ_QOS_METHOD_AUTO = 0,
	NVQ_QOS_METHOD_CPUIDLE = 1,
	NVQ_QOS_METHOD_POLL = 2,
	NVQ_QOS_METHOD_HYBRID = 3,
	NVQ_QOS_METHOD_NONE = 4,
};

/**
 * nvq_qos_parse_method() - Parse a method name.
 * @s: "auto", "cpuidle", "poll" or "hybrid".
 * @method: set on success.
 *
 * Return: 0, or -EINVAL with a message.
 */
int nvq_qos_parse_method(const char *s, enum nvq_qos_method *method);

/**
 * nvq_qos_method_name() - The name of a method.
 * @method: a method.
 *
 * Return: "auto", "cpuidle", "poll", "hybrid", "none", or "?" for an
 * unknown value.
 */
const char *nvq_qos_method_name(enum nvq_qos_method method);

/**
 * nvq_qos_set_method() - Choose how a controller's limit is honoured.
 * @qc: the controller's QoS state (nvq_ctrl_qos()).
 * @method: any but NVQ_QOS_METHOD_NONE.
 *
 * Active queues switch at once. Any thread, at any time. The first choice
 * that needs the wake-up cost measures it (nvq_qos_wake_cost()).
 *
 * Return: 0, or -EINVAL for a NULL @qc or an unknown @method.
 */
int nvq_qos_set_method(struct nvq_qos_ctrl *qc, enum nvq_qos_method method);

/**
 * struct nvq_qos_wake - The platform's cost of waking a sleeping thread.
 * @p50_ns: median time from an eventfd write on one CPU to the return of
 *	the read() that slept on it on another, after ~150 us of sleep.
 * @p99_ns: its 99th percentile.
 * @write_ns: median cost of the waking write() itself.
 * @samples: round trips measured (0: not measured).
 * @source: "measured", "env" ($NVQ_QOS_WAKE_NS="P50[,P99]" in ns, for
 *	tests and for machines where the measurement misleads) or "" when
 *	it could not be measured.
 */
struct nvq_qos_wake {
	uint64_t p50_ns;
	uint64_t p99_ns;
	uint64_t write_ns;
	unsigned int samples;
	char source[12];
};

/**
 * nvq_qos_wake_cost() - Measure (once per process) the wake-up cost.
 * @w: filled with the result (NULL: just measure).
 *
 * A few hundred eventfd round trips between two threads, on two CPUs
 * where the process may use two, each after a short sleep: tens of
 * milliseconds, once; later calls return the cached result. Any thread.
 *
 * Return: 0, or a negative errno (a thread or eventfd could not be made)
 * with a message; then @w->samples is 0.
 */
int nvq_qos_wake_cost(struct nvq_qos_wake *w);

/**
 * struct nvq_qos_method_info - How a controller's limit is honoured now.
 * @requested: as set (nvq_qos_set_method(), nvq_opts.cpu_lat_method).
 * @method: what active queues do: NVQ_QOS_METHOD_CPUIDLE, _POLL, _HYBRID
 *	or _NONE.
 * @why: the reason for @method, in words.
 * @wake: the wake-up cost where it was measured for the choice
 *	(@wake.samples 0 otherwise).
 *
 * Filled by nvq_qos_method_info().
 */
struct nvq_qos_method_info {
	enum nvq_qos_method requested;
	enum nvq_qos_method method;
	char why[256];
	struct nvq_qos_wake wake;
};

/**
 * nvq_qos_method_info() - Describe how a controller's limit is honoured.
 * @qc: the controller's QoS state (NULL: the defaults).
 * @mi: filled (NULL: no-op).
 */
void nvq_qos_method_info(const struct nvq_qos_ctrl *qc,
			 struct nvq_qos_method_info *mi);

/**
 * struct nvq_qos_poll_stats - What a queue's waiters did for the limit.
 * @polls: waits that polled the CQ (waiter polling or hybrid).
 * @poll_ns: time spent polling.
 * @sleeps: hybrid sleeps before polling.
 * @sleep_ns: time asked for in those sleeps.
 * @overslept: hybrid sleeps after which the completion was already there
 *	(the estimate then shrinks).
 * @est_ns: the hybrid estimate of the time from a wait to the next
 *	completion (0: none yet).
 * @idle_sleeps: waits that slept on the interrupt although the method
 *	polls, because the queue had gone idle (the inactivity timeout).
 * @masked: times the queue's interrupt was masked for polling (0 where
 *	the transport cannot mask).
 */
struct nvq_qos_poll_stats {
	uint64_t polls;
	uint64_t poll_ns;
	uint64_t sleeps;
	uint64_t sleep_ns;
	uint64_t overslept;
	uint64_t est_ns;
	uint64_t idle_sleeps;
	uint64_t masked;
};

/**
 * nvq_qos_queue_poll_stats() - Read a queue's waiter counters.
 * @qq: the queue's QoS activity (nvq_queue_qos()).
 * @st: filled (all zero when @qq is NULL; NULL: no-op).
 */
void nvq_qos_queue_poll_stats(const struct nvq_qos_queue *qq,
			      struct nvq_qos_poll_stats *st);

/**
 * struct nvq_qos_holder - A limit recorded in the QoS state file.
 * @cpu: the CPU it is on.
 * @pid: the process that placed it.
 * @limit_us: the limit that process requested (0: no idle at all).
 * @live: the process still runs, so its limit was left alone; false: it
 *	had died and its limit was taken back.
 * @value: the CPU's pm_qos_resume_latency_us text after the call (""
 *	if it could not be read).
 *
 * Filled by nvq_qos_restore_dead().
 */
struct nvq_qos_holder {
	int cpu;
	int pid;
	int limit_us;
	bool live;
	char value[16];
};

/**
 * nvq_qos_restore_dead() - Undo the limits of nvq processes that died.
 * @holders: filled with up to @max of the limits found, dead and live
 *	(NULL if @max is 0).
 * @max: room in @holders.
 * @state_path: filled with the state file's path (NULL: not wanted).
 * @path_len: size of @state_path.
 *
 * A process that died without running its exit handlers (SIGKILL, a
 * crash) leaves its limits in the sysfs files, and the state file knows
 * them. Each such CPU goes back to the strictest limit that live nvq
 * processes still hold there, or to its original value where none does;
 * a process is live when its pid runs with the start time it recorded,
 * so a reused pid does not count. Limits of live processes stay as they
 * are. Every nvq process does this before it places its first limit on a
 * CPU; the function is for when none runs ("nvq qos-restore"). The
 * cpu_dma_latency backend needs nothing of the kind: the kernel drops that
 * request when the process's file descriptor closes. Any thread.
 *
 * Return: the number of limits found, dead and live (may exceed @max; 0:
 * none recorded), or a negative errno with a message: -ENOENT when there
 * is no usable state directory (nvq_errmsg() says why), -EINVAL for a
 * NULL @holders with a non-zero @max.
 */
int nvq_qos_restore_dead(struct nvq_qos_holder *holders, unsigned int max,
			 char *state_path, size_t path_len);

#ifdef __cplusplus
}
#endif

#endif /* NVQ_QOS_H */
