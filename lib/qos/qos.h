/* SPDX-License-Identifier: MIT */
/*
 * CPU latency QoS, the driver side (public knobs: include/nvq/qos.h).
 *
 * A queue tells QoS about activity through two words it owns: its
 * submission counter and a qos_idle flag on the submission cache line. The
 * hot path tests qos_idle once per batch and calls nvq_qos_activate() only
 * when it is set; a single timer thread per process compares the counters
 * every timeout period and sets qos_idle again when a queue went quiet.
 *
 *   core.c         queues, per-CPU aggregation, timer thread, knobs
 *   backend.c      the files: sysfs, /dev/cpu_dma_latency, recording;
 *                  the state file shared by nvq processes; restore at
 *                  exit and on SIGINT/SIGTERM
 *   auto.c         the "auto" limit from the cpuidle state table
 */
#ifndef NVQ_LIB_QOS_H
#define NVQ_LIB_QOS_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "nvq/qos.h"
#include "internal.h"
#include "sysfs.h"

/* Value of "no request" on a CPU; stricter limits are smaller. */
#define NVQ_QOS_NONE INT32_MAX

/* CPUs beyond what a cpu_set_t holds are ignored. */
#define NVQ_QOS_MAX_CPUS CPU_SETSIZE
#define NVQ_QOS_CPU_WORDS (NVQ_QOS_MAX_CPUS / 64)

struct nvq_qos_queue {
	/*
	 * CPUs noted by waiters (nvq_qos_note_cpu()). Read without the lock,
	 * bits set under it; cleared when the queue releases its limit so a
	 * waiter that moved on stops being kept awake.
	 */
	uint64_t noted[NVQ_QOS_CPU_WORDS];

	/* Everything below is protected by the QoS lock. */
	struct nvq_qos_ctrl *qc; /* NULL once the controller is gone */
	struct nvq_qos_queue *next; /* in qc's list */
	const uint64_t *submitted; /* the queue's submission counter */
	uint8_t *idle; /* the queue's qos_idle flag */
	/* the queue's qos_spin byte: what its waiters do while active */
	uint8_t *spin;
	cpu_set_t base; /* from nvq_qos_queue_set_cpus() */
	cpu_set_t held; /* CPUs this queue holds a request on */
	int32_t held_us; /* the value requested there */
	bool active; /* between activation and release */
	bool applied; /* the active period counts in the stats */
	uint64_t seen; /* counter value at the last check */
	uint64_t due_ns; /* next check */
	uint64_t since_ns; /* start of the current applied period */
	uint64_t applies, releases, held_ns;
	/*
	 * Hysteresis (nvq_qos_set_hysteresis()): the quiet periods a release
	 * waits for beyond the first (0, 1, 2 or NVQ_QOS_LINGER_MAX), the
	 * quiet periods seen so far, and when the last release was.
	 */
	unsigned int linger, quiet;
	uint64_t released_ns;

	/*
	 * Waiter polling (nvq_qos_poll_stats), bumped by the queue's waiters
	 * without the lock (atomic adds, relaxed), on their own cache line.
	 */
	struct {
		uint64_t polls, poll_ns, sleeps, sleep_ns, overslept;
		uint64_t est_ns; /* hybrid: wait -> next CQE, an average */
		uint64_t idle_sleeps, masked;
	} w __cacheline_aligned;
};

/* What a limit amounts to on this machine (method.c). */
struct nvq_qos_choice {
	enum nvq_qos_method method; /* CPUIDLE, POLL, HYBRID or NONE */
	char why[256];
	struct nvq_qos_wake wake; /* samples 0 when not needed */
};

/*
 * Choose how @eff_us (>= 0, or NVQ_QOS_OFF) is honoured when @req was
 * asked for, on the machine under @root; @probe says whether the backend
 * may place limits (0, or a negative errno with the reason in @msg). May
 * measure the wake-up cost (tens of ms, once): call without the QoS lock.
 */
void nvq_qos_choose(int eff_us, enum nvq_qos_method req, const char *root,
		    int (*probe)(char *msg, size_t len),
		    struct nvq_qos_choice *out);

/*
 * Whether a cpuidle governor under @root honours @limit_us (auto.c): true
 * where there are cpuidle states (haltpoll: only for 0). @why says what
 * was found.
 */
bool nvq_qos_cpuidle_honours(const char *root, int limit_us, char *why,
			     size_t len);

/* The wake-up cost's median once measured (0 before), for waiters. */
extern uint64_t nvq_qos_wake_p50_ns;

/* Create the QoS state of one controller: limit off, timeout 3 ms. */
int nvq_qos_ctrl_create(struct nvq_qos_ctrl **qc);

/*
 * Release every limit the controller's queues hold (restoring the files
 * where these were the last requests), detach its remaining queues and free
 * it. Joins the timer thread when this was the last controller.
 */
void nvq_qos_ctrl_destroy(struct nvq_qos_ctrl *qc);

/*
 * Attach a queue: @submitted is the queue's submission counter (the owner
 * updates it with WRITE_ONCE() or atomically, so the timer thread may read
 * it) and @idle its qos_idle flag, which QoS owns from now on: 1 means
 * "call nvq_qos_activate() after the next doorbell". Both must stay valid
 * until nvq_qos_queue_destroy(). @spin (may be NULL: the queue has no
 * waiters) is the queue's qos_spin byte, also QoS's: NVQ_QOS_METHOD_POLL or
 * _HYBRID while the queue is active and its waiters are to poll, else 0.
 */
int nvq_qos_queue_create(struct nvq_qos_ctrl *qc, const uint64_t *submitted,
			 uint8_t *idle, uint8_t *spin,
			 struct nvq_qos_queue **qq);

/*
 * Start the timer thread now rather than at the first nvq_qos_activate(),
 * so that the first activation costs what every later one does (nvq-latd
 * calls it when it watches a disk). Needs a controller: the thread ends
 * with the last nvq_qos_ctrl_destroy(). Returns 0 or a negative errno.
 */
int nvq_qos_timer_start(void);

/*
 * Hysteresis for the controller's queues (off by default; nvq-latd turns
 * it on). Without it a queue releases its limit after one quiet timeout
 * period. With it, each queue has a linger L (0 at first): its release
 * waits for 1 + L quiet periods, and while it waits its limit stays in
 * place, so nothing is written. A queue that becomes active again less
 * than 1 + L timeouts after its release (a "bounce": at QD1, gaps just
 * over what it waited) doubles L (0 -> 1 -> 2 -> NVQ_QOS_LINGER_MAX); one
 * that comes back later halves it. So a disk whose bursts are further
 * apart keeps (or returns to) the RFC's release, timeout + one period
 * after its last I/O; at worst a limit stays (2 + NVQ_QOS_LINGER_MAX)
 * timeouts after the last I/O.
 */
#define NVQ_QOS_LINGER_MAX 4u
int nvq_qos_set_hysteresis(struct nvq_qos_ctrl *qc, bool on);

/* Release the queue's limit (if held) and free it. NULL is a no-op. */
void nvq_qos_queue_destroy(struct nvq_qos_queue *qq);

/*
 * The idle -> active transition, called by a submitter that saw qos_idle
 * set, after ringing the doorbell and outside the submission lock. Clears
 * qos_idle, requests the controller's limit on the queue's CPUs and arms
 * the inactivity check. Safe when several submitters race into it; never
 * fails (problems are kept for nvq_qos_info()).
 */
void nvq_qos_activate(struct nvq_qos_queue *qq);

/*
 * Set the CPUs that run the queue's completion work (completion thread's
 * CPU, interrupt affinity). Takes effect at once if the queue is active.
 */
int nvq_qos_queue_set_cpus(struct nvq_qos_queue *qq, const cpu_set_t *cpus);

/* Add @cpu to the queue's CPUs until its next release (slow path of
 * nvq_qos_note_cpu()). */
int nvq_qos_queue_add_cpu(struct nvq_qos_queue *qq, int cpu);

/*
 * A caller about to sleep on the queue's completions runs on @cpu (from
 * sched_getcpu()): costs one load and a branch when @cpu is already known.
 */
static inline void nvq_qos_note_cpu(struct nvq_qos_queue *qq, int cpu)
{
	if (unlikely((unsigned int)cpu >= NVQ_QOS_MAX_CPUS))
		return;
	if (likely(READ_ONCE(qq->noted[cpu / 64]) & (1ull << (cpu % 64))))
		return;
	nvq_qos_queue_add_cpu(qq, cpu);
}

/*
 * Parse a kernel CPU list into @set: "0-3,8,10-11\n", or "0, 1, 2" as
 * blk-mq prints mq/N/cpu_list (blanks around commas, white space before
 * and after the list); "" is the empty set. -EINVAL if bad, the set then
 * empty. CPUs >= NVQ_QOS_MAX_CPUS make the list bad; with the _cut
 * variant they are dropped and set *@cut instead.
 */
int nvq_qos_parse_cpulist(const char *s, cpu_set_t *set);
int nvq_qos_parse_cpulist_cut(const char *s, cpu_set_t *set, bool *cut);

/*
 * Point the PM QoS and cpuidle files at @root instead of "/sys" (NULL: back
 * to the default, which is $NVQ_SYSFS_ROOT if set, else "/sys"). Under an
 * overridden root nvq never falls back to the real /dev/cpu_dma_latency.
 * -EBUSY while any limit is held.
 */
int nvq_qos_set_sysfs_root(const char *root);

/*
 * Use @path instead of /dev/cpu_dma_latency (NULL: the default). -EBUSY
 * while any limit is held.
 */
int nvq_qos_set_dma_latency_path(const char *path);

/*
 * The "auto" limit for the machine described under @sysfs_root: 0 where
 * the cpuidle governor honours only 0 (haltpoll), else just above the exit
 * latency of the shallowest enabled state that is not polling, or
 * NVQ_QOS_OFF where no limit would change anything. @reason gets what was
 * picked and why. Returns 0 or a negative errno.
 */
int nvq_qos_auto_pick(const char *sysfs_root, int *limit_us, char *reason,
		      size_t len);

/* ---- for tests: the recording backend and its log ---- */

/*
 * A third backend, for tests only: requests are recorded in memory (and
 * files written only under an overridden sysfs root). Not in nvq/qos.h:
 * nvq_qos_set_backend() refuses it; tests use nvq_qos_test_set_backend().
 */
#define NVQ_QOS_BACKEND_RECORD ((enum nvq_qos_backend)2)

/* nvq_qos_set_backend() that also accepts NVQ_QOS_BACKEND_RECORD. */
int nvq_qos_test_set_backend(enum nvq_qos_backend backend);

/* One request that reached the backend for a CPU. */
struct nvq_qos_record {
	int cpu;
	int32_t value; /* microseconds, 0 = no idle, NVQ_QOS_NONE = restore */
};

/* Number of records so far. */
unsigned int nvq_qos_record_count(void);
/* Copy record @i; -ENOENT past the end. */
int nvq_qos_record_get(unsigned int i, struct nvq_qos_record *rec);
/* The last value recorded for @cpu (NVQ_QOS_NONE if none or restored). */
int32_t nvq_qos_record_current(int cpu);
/* Forget all records. */
void nvq_qos_record_reset(void);

/* Whether /dev/cpu_dma_latency (or its override) is held open. */
bool nvq_qos_dma_latency_open(void);

/* ---- between core.c and backend.c; all with the QoS lock held ---- */

/* The one lock of QoS state in the process. */
void nvq_qos_lock(void);
void nvq_qos_unlock(void);

/*
 * Make @value the request of this process on @cpu (NVQ_QOS_NONE: none,
 * put the old file value back). Returns 0 when the request is in effect,
 * negative errno when it could not be placed (the reason goes to the
 * status text, once).
 */
int nvq_qos_be_set(int cpu, int32_t value);
/* Forget earlier failures so the next requests try the files again. */
void nvq_qos_be_retry(void);
/* Check, without changing anything, that limits can be placed; 0 or a
 * negative errno with the status text set. */
int nvq_qos_be_probe(void);
/* The current backend's name and status text ("" if fine). */
const char *nvq_qos_be_name(void);
const char *nvq_qos_be_status(void);
/* The sysfs root in use. */
const char *nvq_qos_be_root(void);

/*
 * A SIGINT/SIGTERM restore ran and the application's own handler got the
 * signal: true once per such signal, with its CLOCK_MONOTONIC time; from
 * then on limits may be placed again.
 */
bool nvq_qos_be_take_signal(uint64_t *at_ns);
/* In a fork()ed child: the parent's requests are not the child's. */
void nvq_qos_be_forked(void);
/* nvq_qos_restore_dead(), with the QoS lock held. */
int nvq_qos_be_restore_dead(struct nvq_qos_holder *holders, unsigned int max,
			    char *state_path, size_t path_len);

/* Configuration; the caller checked that no limit is held. */
int nvq_qos_be_set_kind(enum nvq_qos_backend kind);
int nvq_qos_be_set_root(const char *root);
int nvq_qos_be_set_dma_path(const char *path);

#endif /* NVQ_LIB_QOS_H */
