/* SPDX-License-Identifier: MIT */
/*
 * The I/O engine of one job thread: one I/O queue, QD requests ("lanes")
 * kept in flight, offsets from a seeded generator, latencies into
 * histograms.
 *
 * Timestamps per I/O, each clock read only where a metric needs it: t0
 * when the submission starts, t1 when the submit call returned, t2 when
 * the completion was seen. In a batch of submissions the t1 of one is
 * the t0 of the next (one read per submission, plus one per batch). In
 * poll and wait mode t2 is read once per reaping call, after it returned,
 * for all the completions it reaped (as fio reads the time once per batch
 * of events); in thread mode the callback reads it. slat = t1 - t0. In
 * --mode thread the callback may run on the completion thread before the
 * submitter has even taken t1; the I/O is complete for the application
 * when both have happened, so clat = max(t1, t2) - t1 and lat = max(t1,
 * t2) - t0 (= slat + clat). Per I/O the hot path records clat in a
 * histogram, slat and lat as exact count/min/max/sum/sumsq, and samples
 * the emulator's stamps and the completion CPU (result.h).
 *
 * Who finishes an I/O: in a racy job (thread mode, --shared-queue) the
 * submitter and the callback each drop one of two references on the
 * lane; whoever drops the last one records the latencies and starts the
 * lane's next I/O. So a lane has one owner at a time and its fields need
 * no locks. Otherwise the callback runs only inside the job thread's own
 * reaping call, after the submitter is done with the lane.
 *
 * Where the next I/O is submitted:
 *  - poll / wait: callbacks run in the job thread inside nvq_poll() /
 *    nvq_wait(); finished lanes go on a ready list and the job loop
 *    submits them as one batch (NVQ_IO_MORE on all but the last), one
 *    doorbell per batch.
 *  - thread: callbacks run on the library's completion thread, and the
 *    callback resubmits right there. Handing the lane back to the job
 *    thread would add a second thread wake-up per I/O, which is not
 *    the cost being measured, and would let QD drain while the job
 *    thread sleeps. The job thread primes the lanes, retries those that
 *    met a full queue (-EAGAIN is rare; retrying inside the callback
 *    could spin on slots that only this thread's callbacks free), and
 *    sleeps until the lanes retire. Each thread records into its own
 *    perf_job_ctx; they are merged after the run.
 *
 * Pacing (--think-time, --rate-iops): lane_next() gives each new I/O the
 * time it is due (the completion of the lane's previous I/O plus the think
 * time, no earlier than the job's next rate slot). A lane not yet due
 * waits in the job's delayed heap, ordered by that time:
 *  - poll: the job thread keeps polling the queue until it is due (a
 *    poll-mode application spins, so its CPU cost shows);
 *  - wait: the job thread sleeps in nvq_wait() no longer than until the
 *    earliest due time, or in clock_nanosleep() when nothing is in flight;
 *  - thread: the callback hands the lane to the job thread, which sleeps
 *    on its condition variable until the lane is due and submits it (the
 *    completion thread must not sleep for one lane).
 * t0 is taken at the submission, so the pause is in no latency.
 */
#ifndef NVQ_PERF_JOB_H
#define NVQ_PERF_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <nvq/nvq.h>

#include "options.h"
#include "randmap.h"
#include "result.h"

/* Monotonic nanoseconds (vDSO clock_gettime, no syscall). */
static inline uint64_t perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The device and region one run works on, resolved by run.c. */
struct perf_target {
	struct nvq_ctrl *ctrl;
	uint32_t nsid;
	uint32_t lba_size;
	uint64_t region_lba; /* first LBA of the region */
	uint64_t region_blocks; /* bs-sized blocks in the region */
	uint32_t nlb; /* LBAs per I/O */
	uint64_t bs;
	uint32_t run_id; /* stamped into --verify blocks */
	bool stamped; /* CQE DW1 holds posting times (devtime.h) */
	/*
	 * Metadata (docs/perf.md). @blk: bytes of one LBA as the I/O moves
	 * it, the unit of --bs, --offset and --size (lba_size + ms with an
	 * extended format whose metadata is transferred); @buf_bytes: a
	 * lane's data buffer as the library maps it; @md_bytes: a lane's
	 * separate metadata buffer (0: none).
	 */
	uint32_t blk;
	uint32_t buf_blk; /* bytes per LBA the library maps */
	uint32_t md_blk; /* separate metadata bytes per LBA, 0: none */
	uint64_t buf_bytes;
	uint64_t md_bytes;
	uint32_t ms;
	uint8_t pi_type;
	bool md_io; /* nvq_read_io() / nvq_write_io() with the fields below */
	bool host_pi; /* --pi-act 0: writes carry PI the host generated */
	bool pi_verify; /* reads' PI checked on the host too */
	unsigned int io_flags; /* NVQ_IO_PRACT, NVQ_IO_PRCHK_* */
	uint16_t apptag, appmask;
};

/* What the job threads do in one phase (the run, or the verify pass). */
struct perf_phase {
	bool random;
	unsigned int read_pct;
	bool record; /* latencies count (false for the verify pass) */
	uint64_t ios; /* measured I/Os per job, 0 = no limit */
	bool one_pass; /* a region's worth of I/O (each job: its slice) */
	uint64_t t_begin;
	uint64_t ramp_end; /* I/Os started before this are not measured */
	uint64_t deadline; /* no new I/O from here on; 0 = none */
	bool verify_fill; /* writes carry --verify blocks */
	bool verify_check; /* reads are checked */
	uint32_t check_run_id; /* 0 = accept blocks from any run */
	bool replay; /* repeat the previous phase's offsets exactly */
	uint64_t think_ns; /* pause after each completion, per lane */
	uint64_t rate_ns; /* least spacing of a job's submissions; 0 = none */
};

/* State shared by all jobs of a run. */
struct perf_shared {
	atomic_bool stop; /* error or signal: retire lanes */
	/*
	 * The monitor gave up on the I/O still in flight (a device that
	 * stopped answering): job threads return at once and leave it to
	 * nvq_close(), which cancels it.
	 */
	atomic_bool abandon;
	const struct perf_phase *phase;
	const struct perf_target *tgt;
	/* job threads report here when they finish a phase */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int finished;
};

struct perf_job;

/* One request slot, with its own offset generator. */
struct perf_lane {
	struct perf_job *job;
	void *buf;
	void *md; /* separate metadata, perf_target.md_bytes; or NULL */
	uint64_t slba;
	bool write;
	bool measured;
	int err;
	uint16_t status;
	uint64_t t0, t1, t2;
	uint64_t due; /* the prepared I/O is not submitted before this */
	uint32_t dw1; /* the CQE's DW1: posting time when stamped */
	atomic_int parts; /* submitter + callback references (racy jobs) */
	/* While submitted and the callback has not run: t0 with its lowest
	 * bit replaced by @write, else 0. What the monitor reads to report
	 * I/O stuck in the device, by direction. */
	atomic_uint_fast64_t inflight_since;
	uint64_t rng; /* generator state */
	uint64_t rng_start; /* for replay */
	/*
	 * In a phase that writes --verify blocks: the bs block of the lane's
	 * I/O from its choice until its next one, PERF_NO_BLOCK when none.
	 * No other lane of the job takes that block meanwhile (job.c:
	 * verify_claim()), so no block has two I/Os in flight, one a write.
	 */
	atomic_uint_fast64_t vblk;
	struct perf_lane *next;
};

#define PERF_NO_BLOCK UINT64_MAX

/* What one thread records; never shared between threads while running. */
struct perf_job_ctx {
	struct perf_dir_stats dir[PERF_NR_DIRS];
	uint64_t last_done; /* end of the last measured I/O */
	uint64_t verify_blocks;
	uint64_t verify_bad;
	unsigned int nr_vfail;
	struct perf_vfail vfail[PERF_MAX_VFAIL];
	uint64_t io_errors;
	char errmsg[256];
	int first_errno; /* of the first error, positive */
	uint64_t cpl_cpu[PERF_CPL_CPUS]; /* callbacks per CPU, sampled */
	/* completions until the next sample of the emulator's stamps and of
	 * the callback CPU (result.h: PERF_DEVTIME_EVERY, PERF_CPU_EVERY) */
	unsigned int stamp_left, cpu_left;
	struct perf_depths depths; /* fio's iodepth_* (result.h) */
} __attribute__((aligned(64)));

struct perf_job {
	struct perf_shared *sh;
	const struct perf_config *cfg;
	struct nvq_queue *q;
	unsigned int index;
	bool threaded; /* callbacks on the completion thread */
	/*
	 * A callback may run in another thread than the submitter's, even
	 * before the submit call returned (thread mode, --shared-queue): the
	 * lanes' reference counts (perf_lane.parts) decide who finishes.
	 * Otherwise callbacks run in this job's own nvq_poll() / nvq_wait()
	 * only, and the counts are not needed.
	 */
	bool racy;
	/* The phase as lane_next() sees it: a plain one (random offsets,
	 * one direction, no pacing, verify or replay) takes its fast path. */
	bool plain, plain_write;
	uint64_t limit; /* measured I/Os, 0 = none */
	uint64_t deadline; /* UINT64_MAX = none */
	uint64_t ramp_end;
	/* the target's region, copied: one load each on the hot path */
	uint64_t region_lba, region_blocks;
	uint32_t nlb;
	nvq_cb cb; /* the callback of the job's mode (job.c) */
	/*
	 * Poll mode with more spinning threads (job threads plus the emulated
	 * device's) than CPUs: an empty poll yields, or the pollers would
	 * starve the device thread and measure the scheduler's time slices.
	 */
	bool yield_empty;
	pthread_t tid; /* the job thread of the current phase */

	/*
	 * The slice of the region this job works on, in bs blocks: its
	 * sequential offsets, and with --verify its random ones too, which
	 * then follow @map (a permutation per pass: fio's random map, each
	 * block once per pass) at index @cursor, so that jobs never share
	 * a block and a read-back finds each block written exactly once.
	 */
	uint64_t slice_start;
	uint64_t slice_len;
	atomic_uint_fast64_t cursor;
	struct perf_randmap map;
	/* verify_claim()'s choice among the lanes' vblk */
	pthread_mutex_t vlock;
	unsigned int verify_lanes; /* lanes started in such a phase */
	bool cursor_limited;
	uint64_t cursor_end; /* sequential offsets stop here when limited */

	atomic_uint_fast64_t claimed; /* measured I/Os started */
	atomic_uint_fast64_t wseq; /* --verify write sequence */
	atomic_uint active; /* lanes not retired */

	struct perf_lane *lanes;
	unsigned int nr_lanes;
	void *bufmem;
	void *mdmem; /* the lanes' metadata buffers */

	struct perf_lane *ready; /* poll / wait: lanes to submit */
	struct perf_lane *done; /* poll / wait: reaped, to finish */
	struct perf_lane *failed; /* ... of them, those that failed */

	/*
	 * Pacing: lanes waiting for their due time, a min-heap on
	 * perf_lane.due (under @lock in thread mode; else the job thread's
	 * own, holding other jobs' lanes too with --shared-queue), and the
	 * job's next free --rate-iops slot.
	 */
	struct perf_lane **delayed;
	unsigned int nr_delayed, cap_delayed;
	atomic_uint_fast64_t rate_next;

	/* thread mode: lanes to retry, and the job thread's sleep */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct perf_lane *retry;

	struct perf_job_ctx ctx[2]; /* [0] job thread, [1] completion thread */
};

/*
 * Set up @j (lanes, generators, sequential slice) for job @index of
 * @nr_jobs. Lane buffers come from nvq_dma_alloc(). Returns 0 or a
 * negative errno with a message in @err.
 */
int perf_job_init(struct perf_job *j, struct perf_shared *sh,
		  const struct perf_config *cfg, struct nvq_queue *q,
		  unsigned int index, unsigned int nr_jobs, char *err,
		  size_t errlen);

/*
 * Prepare @j for the next phase in sh->phase: a replay phase reuses each
 * lane's start state and stops where the previous phase stopped.
 */
void perf_job_rearm(struct perf_job *j);

/*
 * Free @j's lanes, and its DMA buffers when @free_dma (only while no I/O of
 * @j is outstanding and the controller is open).
 */
void perf_job_release(struct perf_job *j, bool free_dma);

/* True when all lanes of @j retired. */
bool perf_job_idle(struct perf_job *j);

/*
 * Count @j's requests in flight into *@n and @dir[] (by direction) and
 * lower *@oldest to the submission time of the oldest (from any thread,
 * while the job runs).
 */
void perf_job_inflight(struct perf_job *j, uint64_t *n,
		       uint64_t dir[PERF_NR_DIRS], uint64_t *oldest);

/* Wake @j's thread if it sleeps (thread mode), to see sh->abandon. */
void perf_job_wake(struct perf_job *j);

/* Add the measured I/Os of @j so far into @ios (from any thread). */
void perf_job_progress(const struct perf_job *j, uint64_t ios[PERF_NR_DIRS]);

/* Thread body: run the current phase of the job @arg to completion. */
void *perf_job_main(void *arg);

/* Add the job's contexts into @res (histograms, counts, verify, errors)
 * and return the end of the last measured I/O. */
uint64_t perf_job_collect(const struct perf_job *j, struct perf_result *res);

#endif /* NVQ_PERF_JOB_H */
