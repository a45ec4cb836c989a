/* SPDX-License-Identifier: MIT */
/*
 * nvq public API: a userspace NVMe driver and I/O engine.
 *
 * Conventions: functions return 0 (or a count) on success and a negative
 * errno on failure; the failing call leaves a message for the calling
 * thread in nvq_errmsg(). The library never prints, aborts or exits.
 * The NVMe status of a failed command reaches the completion callback
 * unchanged in struct nvq_cpl.
 */
#ifndef NVQ_NVQ_H
#define NVQ_NVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvq/qos.h>
#include <nvq/spec.h>
#include <nvq/version.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nvq_ctrl;
struct nvq_queue;

/* How completions of a controller's I/O queues are reaped. */
enum nvq_mode {
	NVQ_MODE_POLL = 0, /* caller calls nvq_poll(); CQs have no interrupt */
	NVQ_MODE_WAIT = 1, /* caller sleeps in nvq_wait() on the interrupt */
	NVQ_MODE_THREAD = 2, /* a completion thread per queue, pinned to the
			      * interrupt's CPU, runs the callbacks */
};

/*
 * Options for nvq_open(). Initialise with nvq_opts_init(), which records
 * the size of the structure the caller was built with in @size: the
 * structure grows at its end from release to release, and the library
 * reads only the fields an older caller knows about (defaults for the
 * rest), and refuses a newer caller's fields it does not know unless they
 * are zero, as the kernel's clone3() does.
 */
struct nvq_opts {
	uint32_t size; /* set by nvq_opts_init(): the caller's sizeof */
	/* ---- NVQ_OPTS_SIZE_VER0: queues and completion mode ---- */
	unsigned int nr_queues; /* I/O queue pairs; 0 = one per online CPU */
	unsigned int queue_depth; /* entries per I/O queue; 0 = 256 */
	enum nvq_mode mode;
	/*
	 * Exclusive queues have one owner thread and take no locks (the SPDK
	 * model). Shared queues (default) may be used by any thread: the
	 * submission side takes sq_lock, the completion side cq_lock.
	 */
	bool exclusive;
	/* Use shadow doorbells when the controller offers them (default). */
	bool shadow_doorbells;
	/* Admin command timeout in ms; 0 = derived from CAP.TO (min 5 s). */
	unsigned int admin_timeout_ms;
	/* ---- NVQ_OPTS_SIZE_VER1: + CPU latency QoS ---- */
	/*
	 * CPU latency QoS (nvq/qos.h), applied at open and changeable later
	 * with nvq_qos_set_limit() / nvq_qos_set_timeout() on
	 * nvq_ctrl_qos(): while a wait or thread mode queue is busy, the
	 * CPUs that take its completions may not enter idle states slower
	 * to leave than cpu_lat_limit_us. NVQ_QOS_OFF (-1, the default),
	 * NVQ_QOS_AUTO (-2: from the cpuidle state table), 0 (no idle at
	 * all) or N us. A queue with no submission for cpu_lat_timeout_ms
	 * (0 = the default, 3) lets its CPUs idle again.
	 */
	int cpu_lat_limit_us;
	unsigned int cpu_lat_timeout_ms;
};

/*
 * The sizes struct nvq_opts has had, the same on every ABI (no field is
 * wider than 4 bytes). nvq_open() accepts each of them, and larger ones
 * whose unknown tail is zero. A new field goes at the end with a new
 * NVQ_OPTS_SIZE_VERn; its zero value must mean "as before".
 */
#define NVQ_OPTS_SIZE_VER0 24u
#define NVQ_OPTS_SIZE_VER1 32u

/*
 * Fill the first @size bytes of @opts with the defaults and set
 * @opts->size = @size. Use nvq_opts_init(); this form exists so that the
 * size is the caller's, not the library's.
 */
void nvq_opts_init_size(struct nvq_opts *opts, uint32_t size);

/* Fill @opts with the defaults (for the struct this caller was built with). */
static inline void nvq_opts_init(struct nvq_opts *opts)
{
	nvq_opts_init_size(opts, (uint32_t)sizeof(*opts));
}

/*
 * Open the controller named by @uri and bring it up:
 *   "emu:" or "emu:key=val,..."  the built-in emulated controller
 *   "vfio:DDDD:BB:DD.F"          a PCIe controller bound to vfio-pci
 * @opts may be NULL for defaults; otherwise set up by nvq_opts_init()
 * (-EINVAL when @opts->size is not a released size or larger, -E2BIG when
 * a larger struct has non-zero fields this library does not know). On
 * success *@ctrl is set, and nvq_ctrl_notes() tells what bring-up chose.
 */
int nvq_open(const char *uri, const struct nvq_opts *opts,
	     struct nvq_ctrl **ctrl);

/*
 * Shut the controller down in order (CC.SHN, bounded wait), stop the
 * completion threads and free everything. Outstanding I/O is completed with
 * -ECANCELED if the controller does not finish it first.
 */
void nvq_close(struct nvq_ctrl *ctrl);

/* The library's version, "MAJOR.MINOR.PATCH" (may differ from NVQ_VERSION_*
 * of the headers an application was built with). */
const char *nvq_version(void);

/* Message describing the last failure on the calling thread ("" if none). */
const char *nvq_errmsg(void);

/* Text for an NVMe status field (SCT/SC as in struct nvq_cpl.status). */
const char *nvq_status_str(uint16_t status);

/* ------------------------------------------------------------------ */
/* Controller and namespaces                                           */
/* ------------------------------------------------------------------ */

/* The Identify Controller data read at bring-up. */
const struct nvq_id_ctrl *nvq_ctrl_id(const struct nvq_ctrl *ctrl);

/* Controller registers captured at bring-up. */
uint64_t nvq_ctrl_cap(const struct nvq_ctrl *ctrl);
uint32_t nvq_ctrl_vs(const struct nvq_ctrl *ctrl);

/* The URI the controller was opened with. */
const char *nvq_ctrl_uri(const struct nvq_ctrl *ctrl);

/*
 * What bring-up skipped or chose without failing (namespaces it could not
 * use, shadow doorbells not used, a CPU latency limit not applied),
 * separated by "; "; "" when there was nothing to say.
 */
const char *nvq_ctrl_notes(const struct nvq_ctrl *ctrl);

struct nvq_ns_info {
	uint32_t nsid;
	uint64_t nlba; /* NSZE: size in logical blocks */
	uint32_t lba_size; /* bytes */
	uint32_t max_transfer; /* bytes per command (MDTS), 0 = no limit */
	const struct nvq_id_ns *id; /* Identify Namespace data */
};

/*
 * Fill @nsids with up to @max active namespace ids in ascending order;
 * returns how many namespaces are active (may exceed @max).
 */
int nvq_ns_list(const struct nvq_ctrl *ctrl, uint32_t *nsids, unsigned int max);

/* Describe namespace @nsid; -ENOENT if it is not active. */
int nvq_ns_info(const struct nvq_ctrl *ctrl, uint32_t nsid,
		struct nvq_ns_info *info);

/* Largest transfer in bytes that one command may carry (MDTS). */
uint32_t nvq_ctrl_max_transfer(const struct nvq_ctrl *ctrl);

/* ------------------------------------------------------------------ */
/* Queues                                                              */
/* ------------------------------------------------------------------ */

/* Number of I/O queue pairs the controller granted. */
unsigned int nvq_ctrl_queue_count(const struct nvq_ctrl *ctrl);

/* I/O queue pair @index (0-based), or NULL if out of range. */
struct nvq_queue *nvq_ctrl_queue(struct nvq_ctrl *ctrl, unsigned int index);

/*
 * The queue for the calling CPU: CPUs map to queues in order and share them
 * round-robin when there are more CPUs than queues.
 */
struct nvq_queue *nvq_ctrl_queue_for_cpu(struct nvq_ctrl *ctrl);

/* The NVMe queue id (1-based) and depth of @q. */
uint16_t nvq_queue_id(const struct nvq_queue *q);
unsigned int nvq_queue_depth(const struct nvq_queue *q);

/* Per-queue counters. */
struct nvq_queue_stats {
	uint64_t submitted; /* commands placed in the SQ */
	uint64_t completed; /* CQEs reaped */
	uint64_t doorbells; /* SQ tail doorbell MMIO writes */
	uint64_t bad_cqes; /* CQEs with unknown or stale command id */
	uint64_t interrupts; /* interrupt wakeups consumed */
};
void nvq_queue_stats(const struct nvq_queue *q, struct nvq_queue_stats *st);

/* ------------------------------------------------------------------ */
/* CPU latency QoS (knobs and statistics: nvq/qos.h)                   */
/* ------------------------------------------------------------------ */

/*
 * The QoS state of @ctrl, for nvq_qos_set_limit(), nvq_qos_set_timeout()
 * and nvq_qos_info(). Valid until nvq_close(); NULL for a NULL @ctrl.
 */
struct nvq_qos_ctrl *nvq_ctrl_qos(struct nvq_ctrl *ctrl);

/*
 * The QoS activity of queue @q, for nvq_qos_queue_stats(): NULL for poll
 * mode queues, which need no limit (the stats of NULL read all zero).
 */
struct nvq_qos_queue *nvq_queue_qos(struct nvq_queue *q);

/* ------------------------------------------------------------------ */
/* I/O                                                                 */
/* ------------------------------------------------------------------ */

/* Result of a command, passed to its callback. */
struct nvq_cpl {
	int err; /* 0, -EIO (NVMe error, see status), -ECANCELED, ... */
	uint16_t status; /* NVMe status field: SC 7:0 SCT 10:8 More DNR */
	uint32_t result; /* CQE DW0 */
	uint32_t dw1; /* CQE DW1 (emu:stamp=1: the CQE posting time, ns) */
};

typedef void (*nvq_cb)(void *arg, const struct nvq_cpl *cpl);

/* Submission flags */
/* Force unit access. */
#define NVQ_IO_FUA (1u << 0)
/* More follows: defer the doorbell until nvq_queue_kick() or a submission
 * without this flag. */
#define NVQ_IO_MORE (1u << 1)

/*
 * Submit a read or write of @nlb logical blocks at @slba of namespace
 * @nsid. @buf must lie in DMA memory (nvq_dma_alloc() or registered with
 * nvq_dma_register()) and be aligned to 4 bytes (the PRP rule); transfers
 * above MDTS are split into several commands and complete once.
 * Returns 0 once submitted, -EAGAIN when the queue has not enough free
 * command slots (reap and retry), -EINVAL / -ERANGE / -EFAULT for bad
 * requests (with a message). @cb runs exactly once for a submitted request.
 */
int nvq_read(struct nvq_queue *q, uint32_t nsid, void *buf, uint64_t slba,
	     uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg);
int nvq_write(struct nvq_queue *q, uint32_t nsid, const void *buf,
	      uint64_t slba, uint32_t nlb, unsigned int flags, nvq_cb cb,
	      void *arg);
/* Flush the volatile write cache of @nsid. */
int nvq_flush(struct nvq_queue *q, uint32_t nsid, unsigned int flags, nvq_cb cb,
	      void *arg);
/* Write zeroes to @nlb blocks at @slba (no data transfer). */
int nvq_write_zeroes(struct nvq_queue *q, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg);
/* Deallocate (trim) @nlb blocks at @slba with Dataset Management. */
int nvq_deallocate(struct nvq_queue *q, uint32_t nsid, uint64_t slba,
		   uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg);

/* Ring the SQ doorbell for commands submitted with NVQ_IO_MORE. */
void nvq_queue_kick(struct nvq_queue *q);

/*
 * Reap up to @max completions (0 = no limit) and run their callbacks in
 * the calling thread. Returns the number reaped, or a negative errno.
 * Not allowed on NVQ_MODE_THREAD queues (-EINVAL).
 */
int nvq_poll(struct nvq_queue *q, unsigned int max);

/*
 * Reap completions, sleeping on the queue's interrupt until at least
 * @min_cpl were reaped or @timeout_ms passed (-1 = forever). Returns the
 * number reaped (maybe fewer than @min_cpl on timeout), or a negative
 * errno. Works in NVQ_MODE_WAIT; in NVQ_MODE_POLL it spins.
 */
int nvq_wait(struct nvq_queue *q, unsigned int min_cpl, int timeout_ms);

/* Number of commands submitted on @q whose callbacks have not run yet. */
unsigned int nvq_queue_inflight(const struct nvq_queue *q);

/*
 * Synchronous helpers: submit, wait for completion, return 0, a negative
 * errno, or -EIO with *@status (may be NULL) set to the NVMe status. They
 * use the calling CPU's queue and any buffer (bounce-buffered when @buf is
 * not DMA memory). Not for the hot path.
 */
int nvq_read_sync(struct nvq_ctrl *ctrl, uint32_t nsid, void *buf,
		  uint64_t slba, uint32_t nlb, uint16_t *status);
int nvq_write_sync(struct nvq_ctrl *ctrl, uint32_t nsid, const void *buf,
		   uint64_t slba, uint32_t nlb, uint16_t *status);
int nvq_flush_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint16_t *status);
int nvq_write_zeroes_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint64_t slba,
			  uint32_t nlb, uint16_t *status);
int nvq_deallocate_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint64_t slba,
			uint32_t nlb, uint16_t *status);

/*
 * Admin passthrough: send @cmd (CID and PRPs are filled in by nvq) with an
 * optional data buffer of @len bytes (any memory; nvq bounces it). Data
 * direction follows the opcode's low two bits as the specification defines
 * (01b host to controller, 10b controller to host). Returns 0, a negative
 * errno, or -EIO with *@status set. *@result (may be NULL) gets CQE DW0.
 */
int nvq_admin(struct nvq_ctrl *ctrl, const struct nvq_sqe *cmd, void *buf,
	      size_t len, uint32_t *result, uint16_t *status);

/* ------------------------------------------------------------------ */
/* DMA memory                                                          */
/* ------------------------------------------------------------------ */

/*
 * Allocate @len bytes of DMA memory (page aligned, zeroed, pinned where the
 * transport needs it) on NUMA node @node (-1: the controller's node).
 */
void *nvq_dma_alloc(struct nvq_ctrl *ctrl, size_t len, int node);
void nvq_dma_free(struct nvq_ctrl *ctrl, void *buf);

/* Make caller memory usable for I/O, and undo it. */
int nvq_dma_register(struct nvq_ctrl *ctrl, void *buf, size_t len);
int nvq_dma_unregister(struct nvq_ctrl *ctrl, void *buf);

#ifdef __cplusplus
}
#endif

#endif /* NVQ_NVQ_H */
