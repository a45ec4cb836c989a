/* SPDX-License-Identifier: MIT */
/*
 * nvq public API: a userspace NVMe driver and I/O engine.
 *
 * Conventions: functions return 0 (or a count) on success and a negative
 * errno on failure; the failing call leaves a message for the calling
 * thread in nvq_errmsg(). The library never prints, aborts or exits.
 * The NVMe status of a failed command reaches the completion callback
 * unchanged in struct nvq_cpl.
 *
 * The comments are kernel-doc (scripts/check-kernel-doc.py checks that
 * every function has one); docs/design.md describes the threads, locks
 * and the I/O path behind these calls.
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

/**
 * enum nvq_mode - How completions of a controller's I/O queues are reaped.
 * @NVQ_MODE_POLL: the caller calls nvq_poll(); CQs have no interrupt.
 * @NVQ_MODE_WAIT: the caller sleeps in nvq_wait() on the interrupt.
 * @NVQ_MODE_THREAD: a completion thread per interrupt vector, pinned to
 *	the interrupt's CPU, reaps the vector's queues and runs the callbacks.
 */
enum nvq_mode {
	NVQ_MODE_POLL = 0,
	NVQ_MODE_WAIT = 1,
	NVQ_MODE_THREAD = 2,
};

/**
 * struct nvq_opts - Options for nvq_open().
 * @size: set by nvq_opts_init(): the caller's sizeof(struct nvq_opts).
 * @nr_queues: I/O queue pairs to ask for; 0 = one per online CPU.
 * @queue_depth: entries per I/O queue; 0 = 256.
 * @mode: how completions are reaped (enum nvq_mode; default poll).
 * @exclusive: exclusive queues have one owner thread and take no locks
 *	(the SPDK model): at most one thread submits and one reaps at a
 *	time. Shared queues (the default) may be used by any thread: the
 *	submission side takes sq_lock, the completion side cq_lock.
 * @shadow_doorbells: use shadow doorbells when the controller offers
 *	them (default true).
 * @admin_timeout_ms: admin command timeout in ms; 0 = the default,
 *	60 s as Linux's admin_timeout (or longer when CAP.TO says the
 *	controller needs it); changeable later with nvq_ctrl_set_timeouts().
 * @cpu_lat_limit_us: CPU latency QoS (nvq/qos.h), applied at open and
 *	changeable later with nvq_qos_set_limit() on nvq_ctrl_qos(): while
 *	a wait or thread mode queue is busy, the CPUs that take its
 *	completions may not enter idle states slower to leave than this.
 *	NVQ_QOS_OFF (-1, the default), NVQ_QOS_AUTO (-2: from the cpuidle
 *	state table), 0 (no idle at all) or N us.
 * @cpu_lat_timeout_ms: a queue with no submission for this long (0 = the
 *	default, 3) lets its CPUs idle again; changeable later with
 *	nvq_qos_set_timeout().
 * @io_timeout_ms: I/O command timeout in ms; 0 = the default, 30 s as
 *	Linux's io_timeout; changeable later with nvq_ctrl_set_timeouts().
 *	What happens when it expires: docs/design.md, "Timeouts".
 * @cpu_lat_method: how the CPU latency limit is honoured (enum
 *	nvq_qos_method; 0 = NVQ_QOS_METHOD_AUTO); changeable later with
 *	nvq_qos_set_method().
 *
 * Initialise with nvq_opts_init(), which records the size of the
 * structure the caller was built with in @size: the structure grows at
 * its end from release to release, and the library reads only the fields
 * an older caller knows about (defaults for the rest), and refuses a newer
 * caller's fields it does not know unless they are zero, as the kernel's
 * clone3() does. Fields up to @admin_timeout_ms are NVQ_OPTS_SIZE_VER0;
 * NVQ_OPTS_SIZE_VER1 adds the CPU latency QoS fields, NVQ_OPTS_SIZE_VER2
 * @io_timeout_ms, NVQ_OPTS_SIZE_VER3 @cpu_lat_method.
 */
struct nvq_opts {
	uint32_t size;
	/* ---- NVQ_OPTS_SIZE_VER0: queues and completion mode ---- */
	unsigned int nr_queues;
	unsigned int queue_depth;
	enum nvq_mode mode;
	bool exclusive;
	bool shadow_doorbells;
	unsigned int admin_timeout_ms;
	/* ---- NVQ_OPTS_SIZE_VER1: + CPU latency QoS ---- */
	int cpu_lat_limit_us;
	unsigned int cpu_lat_timeout_ms;
	/* ---- NVQ_OPTS_SIZE_VER2: + I/O timeout ---- */
	unsigned int io_timeout_ms;
	/* ---- NVQ_OPTS_SIZE_VER3: + how the QoS limit is honoured ---- */
	enum nvq_qos_method cpu_lat_method;
};

/*
 * The sizes struct nvq_opts has had, the same on every ABI (no field is
 * wider than 4 bytes). nvq_open() accepts each of them, and larger ones
 * whose unknown tail is zero. A new field goes at the end with a new
 * NVQ_OPTS_SIZE_VERn; its zero value must mean "as before".
 */
#define NVQ_OPTS_SIZE_VER0 24u
#define NVQ_OPTS_SIZE_VER1 32u
#define NVQ_OPTS_SIZE_VER2 36u
#define NVQ_OPTS_SIZE_VER3 40u

/* Command timeouts: what 0 means (Linux's io_timeout and admin_timeout), and
 * the longest nvq takes (one hour). */
#define NVQ_IO_TIMEOUT_MS_DEFAULT 30000u
#define NVQ_ADMIN_TIMEOUT_MS_DEFAULT 60000u
#define NVQ_TIMEOUT_MS_MAX 3600000u

/**
 * nvq_opts_init_size() - Fill options of a given size with the defaults.
 * @opts: the options to fill.
 * @size: the caller's sizeof(struct nvq_opts).
 *
 * Fill the first @size bytes of @opts with the defaults and set
 * @opts->size = @size. Use nvq_opts_init(); this form exists so that the
 * size is the caller's, not the library's. Does nothing when @opts is
 * NULL or @size is too small to hold the size field.
 */
void nvq_opts_init_size(struct nvq_opts *opts, uint32_t size);

/**
 * nvq_opts_init() - Fill options with the defaults.
 * @opts: the options to fill.
 *
 * Fill @opts with the defaults, for the struct this caller was built with
 * (inline: the size recorded is the caller's sizeof).
 */
static inline void nvq_opts_init(struct nvq_opts *opts)
{
	nvq_opts_init_size(opts, (uint32_t)sizeof(*opts));
}

/**
 * nvq_open() - Open a controller and bring it up.
 * @uri: the device:
 *	"emu:" or "emu:key=val,..." for the built-in emulated controller,
 *	"vfio:DDDD:BB:DD.F[,opts]" for a PCIe controller bound to vfio-pci;
 *	either may name a namespace with a "/NSID" suffix ("emu:ns=2/2",
 *	"vfio:0000:01:00.0/1"), which nvq_ctrl_uri_nsid() returns.
 * @opts: NULL for defaults; otherwise set up by nvq_opts_init().
 * @ctrl: where the controller goes on success (set to NULL on failure).
 *
 * On success nvq_ctrl_notes() tells what bring-up skipped or chose, and
 * the calling thread's nvq_errmsg() is empty.
 *
 * Return: 0, or a negative errno with a message: -EINVAL for a NULL @uri
 * or @ctrl, a bad option, a "/NSID" that is no namespace id (1..FFFFFFFEh),
 * or when @opts->size is not a released size or larger; -ENOENT when the
 * "/NSID" namespace is not active (the message lists the active ones);
 * -E2BIG when a larger struct has non-zero fields this library
 * does not know; -ENODEV, -ETIMEDOUT, -ENOTSUP, -EIO, -ENOMEM, ... when
 * the device cannot be brought up.
 */
int nvq_open(const char *uri, const struct nvq_opts *opts,
	     struct nvq_ctrl **ctrl);

/**
 * nvq_close() - Shut a controller down and free it.
 * @ctrl: the controller; NULL is a no-op.
 *
 * Shut the controller down in order (CC.SHN, bounded wait), stop the
 * completion threads and free everything. Outstanding I/O is completed
 * with -ECANCELED if the controller does not finish it first. Neither
 * @ctrl nor its queues may be used afterwards.
 */
void nvq_close(struct nvq_ctrl *ctrl);

/**
 * nvq_version() - The library's version.
 *
 * Return: "MAJOR.MINOR.PATCH" of the library that runs (may differ from
 * NVQ_VERSION_* of the headers an application was built with).
 */
const char *nvq_version(void);

/**
 * nvq_errmsg() - The message of the calling thread's last failure.
 *
 * Return: a message describing the last failure on the calling thread
 * ("" if none). Each thread has its own.
 */
const char *nvq_errmsg(void);

/**
 * nvq_status_str() - Text for an NVMe status field.
 * @status: SCT/SC as in struct nvq_cpl.status.
 *
 * Return: the specification's name of the status; for unknown codes a
 * text in a per-thread buffer, valid until the thread's next call.
 */
const char *nvq_status_str(uint16_t status);

/* ------------------------------------------------------------------ */
/* Controller and namespaces                                           */
/* ------------------------------------------------------------------ */

/**
 * nvq_ctrl_id() - The Identify Controller data read at bring-up.
 * @ctrl: the controller.
 *
 * Return: the data, valid until nvq_close(); NULL for a NULL @ctrl.
 */
const struct nvq_id_ctrl *nvq_ctrl_id(const struct nvq_ctrl *ctrl);

/**
 * nvq_ctrl_cap() - The CAP register captured at bring-up.
 * @ctrl: the controller.
 *
 * Return: Controller Capabilities; 0 for a NULL @ctrl.
 */
uint64_t nvq_ctrl_cap(const struct nvq_ctrl *ctrl);

/**
 * nvq_ctrl_vs() - The VS register captured at bring-up.
 * @ctrl: the controller.
 *
 * Return: the controller's NVMe version; 0 for a NULL @ctrl.
 */
uint32_t nvq_ctrl_vs(const struct nvq_ctrl *ctrl);

/**
 * nvq_ctrl_uri() - The URI the controller was opened with.
 * @ctrl: the controller.
 *
 * Return: the URI; "" for a NULL @ctrl.
 */
const char *nvq_ctrl_uri(const struct nvq_ctrl *ctrl);

/**
 * nvq_ctrl_uri_nsid() - The namespace the URI named with "/NSID".
 * @ctrl: the controller.
 *
 * nvq_open() checked that it is active: tools that take a namespace
 * (nvq's -n, nvq-perf's --nsid, fio's nsid=) use it when none was given.
 *
 * Return: the namespace id; 0 when the URI named none, or for a NULL
 * @ctrl.
 */
uint32_t nvq_ctrl_uri_nsid(const struct nvq_ctrl *ctrl);

/**
 * nvq_ctrl_notes() - What bring-up skipped or chose without failing.
 * @ctrl: the controller.
 *
 * Return: the notes (namespaces it could not use, shadow doorbells not
 * used, a CPU latency limit not applied), separated by "; "; "" when
 * there was nothing to say or @ctrl is NULL.
 */
const char *nvq_ctrl_notes(const struct nvq_ctrl *ctrl);

/**
 * nvq_ctrl_set_timeouts() - Change the command timeouts at run time.
 * @ctrl: the controller.
 * @io_ms: I/O command timeout in ms, 0 = leave as it is.
 * @admin_ms: admin command timeout in ms, 0 = leave as it is.
 *
 * Commands already submitted keep the deadline they were given. Any
 * thread, any time.
 *
 * Return: 0, or -EINVAL for a NULL @ctrl or a timeout above one hour.
 */
int nvq_ctrl_set_timeouts(struct nvq_ctrl *ctrl, unsigned int io_ms,
			  unsigned int admin_ms);

/**
 * nvq_ctrl_timeouts() - Read the command timeouts.
 * @ctrl: the controller.
 * @io_ms: set to the I/O command timeout in ms (may be NULL).
 * @admin_ms: set to the admin command timeout in ms (may be NULL).
 *
 * Return: 0, or -EINVAL for a NULL @ctrl.
 */
int nvq_ctrl_timeouts(const struct nvq_ctrl *ctrl, unsigned int *io_ms,
		      unsigned int *admin_ms);

/**
 * struct nvq_ctrl_stats - What the failure path of a controller did.
 * @size: sizeof the struct as the caller was built (set by
 *	nvq_ctrl_stats()); the struct grows at its end.
 * @timeouts: commands (I/O and admin) whose timeout expired.
 * @lost_interrupts: timeouts resolved by reaping a completion that was
 *	already in the CQ (its interrupt never arrived).
 * @aborts: Abort commands sent for timed-out commands.
 * @resets: controller resets (disable, re-enable, queues re-created).
 * @retries: commands submitted again after a reset.
 * @failed: commands completed with an error by recovery itself
 *	(-ETIMEDOUT, -EIO, -ENODEV) rather than by the device.
 * @bad_cqes: CQEs with an unknown or stale command id, all queues.
 * @gone: 1 once the controller is gone (registers read all-ones); every
 *	command then fails with -ENODEV.
 */
struct nvq_ctrl_stats {
	uint32_t size;
	uint32_t gone;
	uint64_t timeouts;
	uint64_t lost_interrupts;
	uint64_t aborts;
	uint64_t resets;
	uint64_t retries;
	uint64_t failed;
	uint64_t bad_cqes;
};

/**
 * nvq_ctrl_stats_size() - Read a controller's failure-path counters.
 * @ctrl: the controller.
 * @st: filled with the counters.
 * @size: sizeof(*@st) as the caller was built; use nvq_ctrl_stats().
 *
 * Return: 0, or -EINVAL for a NULL @ctrl or @st.
 */
int nvq_ctrl_stats_size(const struct nvq_ctrl *ctrl, struct nvq_ctrl_stats *st,
			uint32_t size);

/**
 * nvq_ctrl_stats() - Read a controller's failure-path counters.
 * @ctrl: the controller.
 * @st: filled with the counters, @st->size with its size.
 *
 * Return: 0, or -EINVAL for a NULL @ctrl or @st.
 */
static inline int nvq_ctrl_stats(const struct nvq_ctrl *ctrl,
				 struct nvq_ctrl_stats *st)
{
	return nvq_ctrl_stats_size(ctrl, st, (uint32_t)sizeof(*st));
}

/**
 * nvq_ctrl_reset() - Reset the controller and carry on.
 * @ctrl: the controller.
 *
 * What the driver itself does when a command times out after its Abort,
 * an admin command times out or the controller reports fatal status: the
 * I/O queues are quiesced (submissions wait, reapers of exclusive queues
 * find nothing), the controller is disabled and initialised again, the
 * I/O queues are created again with their layout and what was in flight
 * is submitted again (at most 5 times per command; completions the
 * device had already posted keep their status). Queue handles stay valid
 * and every callback runs once. When the reset fails the controller is
 * failed: every command then completes with an error and nvq_close() is
 * the way out. Not from a completion callback of a thread mode queue.
 *
 * Return: 0 when the controller works again; -EINVAL for a NULL @ctrl,
 * the controller's errno once it failed, or the reset's error.
 */
int nvq_ctrl_reset(struct nvq_ctrl *ctrl);

/**
 * struct nvq_ns_info - What nvq_ns_info() tells about a namespace.
 * @nsid: the namespace id.
 * @nlba: NSZE: size in logical blocks.
 * @lba_size: bytes per logical block.
 * @max_transfer: bytes one command carries for this namespace: MDTS, and
 *	2 MiB at most when MDTS is 0 (no limit) or larger; never 0.
 * @id: the Identify Namespace data.
 */
struct nvq_ns_info {
	uint32_t nsid;
	uint64_t nlba;
	uint32_t lba_size;
	uint32_t max_transfer;
	const struct nvq_id_ns *id;
};

/**
 * nvq_ns_list() - The active namespace ids.
 * @ctrl: the controller.
 * @nsids: filled with up to @max active namespace ids in ascending order
 *	(may be NULL to count only).
 * @max: entries @nsids holds.
 *
 * Return: how many namespaces are active (may exceed @max), or -EINVAL
 * for a NULL @ctrl.
 */
int nvq_ns_list(const struct nvq_ctrl *ctrl, uint32_t *nsids, unsigned int max);

/**
 * nvq_ns_info() - Describe a namespace.
 * @ctrl: the controller.
 * @nsid: the namespace.
 * @info: filled on success.
 *
 * Return: 0; -ENOENT if @nsid is not active; -EINVAL for NULL arguments.
 */
int nvq_ns_info(const struct nvq_ctrl *ctrl, uint32_t nsid,
		struct nvq_ns_info *info);

/**
 * struct nvq_ns_format - The LBA format of a namespace, metadata included.
 * @size: sizeof the struct as the caller was built (set by
 *	nvq_ns_format()); the struct grows at its end.
 * @nsid: the namespace id.
 * @usable: 1 when nvq drives the namespace (I/O is accepted), 0 when it
 *	is active but nvq cannot drive it: @why says why.
 * @csi: the command set (0 NVM, 2 Zoned Namespace, ...).
 * @extended: 1 when metadata is transferred with each block in the data
 *	buffer (FLBAS bit 4, extended LBA), 0 when it is a separate buffer.
 * @pi_type: end-to-end protection type (DPS 2:0): 0 none, 1, 2 or 3.
 * @pi_first: 1 when the protection information is the first 8 bytes of
 *	the metadata (DPS bit 3), 0 when it is the last 8 bytes.
 * @pi_size: bytes of protection information per block (8, the 16-bit
 *	guard format); 0 without PI.
 * @lba_size: data bytes per logical block.
 * @ms: metadata bytes per logical block (0 when none).
 * @why: why the namespace is not usable ("" when it is).
 */
struct nvq_ns_format {
	uint32_t size;
	uint32_t nsid;
	uint8_t usable;
	uint8_t csi;
	uint8_t extended;
	uint8_t pi_type;
	uint8_t pi_first;
	uint8_t pi_size;
	uint16_t reserved;
	uint32_t lba_size;
	uint32_t ms;
	char why[128];
};

/**
 * nvq_ns_format_size() - Describe the LBA format of a namespace.
 * @ctrl: the controller.
 * @nsid: the namespace.
 * @fmt: filled on success.
 * @size: sizeof(*@fmt) as the caller was built; use nvq_ns_format().
 *
 * Works for every active namespace, also those nvq cannot drive (zoned or
 * other command sets, protection formats other than the 16-bit guard),
 * which nvq_ns_info() refuses: @fmt->usable is then 0 and @fmt->why says
 * why.
 *
 * Return: 0; -ENOENT if @nsid is not active; -EINVAL for NULL arguments
 * or a @size too small to hold @fmt->size.
 */
int nvq_ns_format_size(const struct nvq_ctrl *ctrl, uint32_t nsid,
		       struct nvq_ns_format *fmt, uint32_t size);

/**
 * nvq_ns_format() - Describe the LBA format of a namespace.
 * @ctrl: the controller.
 * @nsid: the namespace.
 * @fmt: filled on success, @fmt->size with its size.
 *
 * Return: as nvq_ns_format_size().
 */
static inline int nvq_ns_format(const struct nvq_ctrl *ctrl, uint32_t nsid,
				struct nvq_ns_format *fmt)
{
	return nvq_ns_format_size(ctrl, nsid, fmt, (uint32_t)sizeof(*fmt));
}

/**
 * nvq_ctrl_max_transfer() - Largest transfer one command may carry.
 * @ctrl: the controller.
 *
 * Return: bytes per command (MDTS, capped by nvq); 0 for a NULL @ctrl.
 */
uint32_t nvq_ctrl_max_transfer(const struct nvq_ctrl *ctrl);

/* ------------------------------------------------------------------ */
/* Queues                                                              */
/* ------------------------------------------------------------------ */

/**
 * nvq_ctrl_queue_count() - Number of I/O queue pairs the controller granted.
 * @ctrl: the controller.
 *
 * Return: the number of I/O queue pairs; 0 for a NULL @ctrl.
 */
unsigned int nvq_ctrl_queue_count(const struct nvq_ctrl *ctrl);

/**
 * nvq_ctrl_queue() - An I/O queue pair by index.
 * @ctrl: the controller.
 * @index: 0-based, below nvq_ctrl_queue_count().
 *
 * Return: I/O queue pair @index, or NULL if out of range.
 */
struct nvq_queue *nvq_ctrl_queue(struct nvq_ctrl *ctrl, unsigned int index);

/**
 * nvq_ctrl_queue_for_cpu() - The queue for the calling CPU.
 * @ctrl: the controller.
 *
 * CPUs map to queues in order and share them round-robin when there are
 * more CPUs than queues.
 *
 * Return: the queue, or NULL when @ctrl is NULL or has no I/O queues.
 */
struct nvq_queue *nvq_ctrl_queue_for_cpu(struct nvq_ctrl *ctrl);

/**
 * nvq_queue_id() - The NVMe queue id of a queue.
 * @q: the queue.
 *
 * Return: the queue id (1-based); 0 for a NULL @q.
 */
uint16_t nvq_queue_id(const struct nvq_queue *q);

/**
 * nvq_queue_depth() - The depth of a queue.
 * @q: the queue.
 *
 * Return: entries of the queue's rings; 0 for a NULL @q.
 */
unsigned int nvq_queue_depth(const struct nvq_queue *q);

/**
 * struct nvq_queue_stats - Per-queue counters.
 * @submitted: commands placed in the SQ.
 * @completed: CQEs reaped.
 * @doorbells: SQ tail doorbell MMIO writes.
 * @bad_cqes: CQEs with unknown or stale command id.
 * @interrupts: interrupt wakeups consumed.
 */
struct nvq_queue_stats {
	uint64_t submitted;
	uint64_t completed;
	uint64_t doorbells;
	uint64_t bad_cqes;
	uint64_t interrupts;
};

/**
 * nvq_queue_stats() - Read a queue's counters.
 * @q: the queue.
 * @st: filled with the counters (nothing happens if either is NULL).
 */
void nvq_queue_stats(const struct nvq_queue *q, struct nvq_queue_stats *st);

/**
 * enum nvq_pools_kind - Where a queue's PRP list blocks come from.
 * @NVQ_POOLS_KIND_NODE: the pools of the queue's NUMA node.
 * @NVQ_POOLS_KIND_DEVICE: one pool set for the whole device (the baseline
 *	a benchmark compares with; NVQ_PRP_POOLS=device).
 * @NVQ_POOLS_KIND_CACHE: the node's pools with a per-queue cache in front
 *	(the default).
 *
 * The environment variable NVQ_PRP_POOLS=node|device|cache, read by
 * nvq_open(), selects one: a benchmark knob (docs/numa.md).
 */
enum nvq_pools_kind {
	NVQ_POOLS_KIND_NODE = 0,
	NVQ_POOLS_KIND_DEVICE = 1,
	NVQ_POOLS_KIND_CACHE = 2,
};

/**
 * struct nvq_queue_info - Where a queue lives.
 * @size: sizeof the struct as the caller was built (set by
 *	nvq_queue_info()); the struct grows at its end.
 * @qid: the NVMe queue id.
 * @spans: 1 when the CPUs that use the queue (CPU n uses queue
 *	n % queue count, nvq_ctrl_queue_for_cpu()) are on more than one
 *	NUMA node: @node is then the node of @irq_cpu.
 * @pools: enum nvq_pools_kind.
 * @depth: entries of the queue's rings.
 * @node: the NUMA node whose PRP list pools (and cache) the queue uses.
 * @irq_cpu: the CPU its interrupt is routed to; -1 when unknown or in
 *	poll mode without a vector.
 * @first_cpu: the lowest CPU that uses the queue; -1 when none does
 *	(more queues than CPUs).
 * @nr_cpus: how many CPUs use the queue.
 */
struct nvq_queue_info {
	uint32_t size;
	uint16_t qid;
	uint8_t spans;
	uint8_t pools;
	uint32_t depth;
	int32_t node;
	int32_t irq_cpu;
	int32_t first_cpu;
	uint32_t nr_cpus;
};

/**
 * nvq_queue_info_size() - Describe where a queue lives.
 * @q: the queue.
 * @info: filled in.
 * @size: sizeof(*@info) as the caller was built; use nvq_queue_info().
 *
 * Return: 0, or -EINVAL for a NULL @q or @info.
 */
int nvq_queue_info_size(const struct nvq_queue *q, struct nvq_queue_info *info,
			uint32_t size);

/**
 * nvq_queue_info() - Describe where a queue lives.
 * @q: the queue.
 * @info: filled in, @info->size with its size.
 *
 * Return: 0, or -EINVAL for a NULL @q or @info.
 */
static inline int nvq_queue_info(const struct nvq_queue *q,
				 struct nvq_queue_info *info)
{
	return nvq_queue_info_size(q, info, (uint32_t)sizeof(*info));
}

/**
 * struct nvq_pool_stats - PRP list block counters of a queue.
 * @size: sizeof the struct as the caller was built (set by
 *	nvq_queue_pool_stats()); the struct grows at its end.
 * @node: the NUMA node of the pools (@pool_* are shared by every queue
 *	that uses them: all queues of the node, or of the device with
 *	NVQ_POOLS_KIND_DEVICE).
 * @cache_hits: list blocks the queue's cache handed out without taking a
 *	pool lock (0 without a cache).
 * @cache_recycles: of those, times the cache took back the blocks freed
 *	since (one atomic exchange, no lock).
 * @cache_refills: batches the cache took from the pool (one lock each).
 * @cache_drains: batches the cache gave back to the pool (one lock each).
 * @cache_bypass: PRP lists built from the pool directly because another
 *	thread was taking blocks from the same shared queue's cache.
 * @cache_blocks: blocks the cache holds now.
 * @pool_locks: acquisitions of the pools' locks (both block sizes).
 * @pool_contended: of those, acquisitions whose first try found the lock
 *	held by another thread.
 * @pool_grows: chunks the pools grew by.
 */
struct nvq_pool_stats {
	uint32_t size;
	int32_t node;
	uint64_t cache_hits;
	uint64_t cache_recycles;
	uint64_t cache_refills;
	uint64_t cache_drains;
	uint64_t cache_bypass;
	uint64_t cache_blocks;
	uint64_t pool_locks;
	uint64_t pool_contended;
	uint64_t pool_grows;
};

/**
 * nvq_queue_pool_stats_size() - Read a queue's PRP list block counters.
 * @q: the queue.
 * @st: filled with the counters (each read once: not a snapshot).
 * @size: sizeof(*@st) as the caller was built; use
 *	nvq_queue_pool_stats().
 *
 * Return: 0, or -EINVAL for a NULL @q or @st.
 */
int nvq_queue_pool_stats_size(const struct nvq_queue *q,
			      struct nvq_pool_stats *st, uint32_t size);

/**
 * nvq_queue_pool_stats() - Read a queue's PRP list block counters.
 * @q: the queue.
 * @st: filled with the counters, @st->size with its size.
 *
 * Return: 0, or -EINVAL for a NULL @q or @st.
 */
static inline int nvq_queue_pool_stats(const struct nvq_queue *q,
				       struct nvq_pool_stats *st)
{
	return nvq_queue_pool_stats_size(q, st, (uint32_t)sizeof(*st));
}

/* ------------------------------------------------------------------ */
/* CPU latency QoS (knobs and statistics: nvq/qos.h)                   */
/* ------------------------------------------------------------------ */

/**
 * nvq_ctrl_qos() - The QoS state of a controller.
 * @ctrl: the controller.
 *
 * For nvq_qos_set_limit(), nvq_qos_set_timeout() and nvq_qos_info().
 *
 * Return: the QoS state, valid until nvq_close(); NULL for a NULL @ctrl.
 */
struct nvq_qos_ctrl *nvq_ctrl_qos(struct nvq_ctrl *ctrl);

/**
 * nvq_queue_qos() - The QoS activity of a queue.
 * @q: the queue.
 *
 * For nvq_qos_queue_stats().
 *
 * Return: the queue's QoS activity; NULL for poll mode queues, which need
 * no limit (the stats of NULL read all zero).
 */
struct nvq_qos_queue *nvq_queue_qos(struct nvq_queue *q);

/* ------------------------------------------------------------------ */
/* I/O                                                                 */
/* ------------------------------------------------------------------ */

/**
 * struct nvq_cpl - Result of a command, passed to its callback.
 * @err: 0, -EIO (NVMe error, see @status), -ECANCELED (aborted by SQ
 *	deletion or cancelled at nvq_close(); @status is then SC 08h,
 *	Command Aborted due to SQ Deletion, as the device posts it or as
 *	the library sets it for commands it cancels), ...
 * @status: NVMe status field: SC 7:0 SCT 10:8 More DNR.
 * @result: CQE DW0.
 * @dw1: CQE DW1 (emu:stamp=1: the CQE posting time, ns).
 */
struct nvq_cpl {
	int err;
	uint16_t status;
	uint32_t result;
	uint32_t dw1;
};

/**
 * typedef nvq_cb - Completion callback of a request.
 * @arg: the @arg given at submission.
 * @cpl: the request's result; valid during the call only.
 *
 * Runs exactly once per submitted request, with no library lock held: in
 * the thread that calls nvq_poll() or nvq_wait(), on the completion
 * thread in NVQ_MODE_THREAD, or in nvq_close() for requests that finish
 * or are cancelled during shutdown.
 * The request's command slots are free again when it runs, so it may
 * submit.
 */
typedef void (*nvq_cb)(void *arg, const struct nvq_cpl *cpl);

/* Submission flags */
/* Force unit access. */
#define NVQ_IO_FUA (1u << 0)
/*
 * More follows: defer the doorbell until nvq_queue_kick() or a submission
 * without this flag.
 */
#define NVQ_IO_MORE (1u << 1)

/**
 * nvq_read() - Submit a read.
 * @q: the queue (shared queues: any thread; exclusive: the owner).
 * @nsid: the namespace.
 * @buf: destination; must lie in DMA memory (nvq_dma_alloc() or registered
 *	with nvq_dma_register()) and be aligned to 4 bytes (the PRP rule).
 * @slba: first logical block.
 * @nlb: number of logical blocks (at least 1).
 * @flags: NVQ_IO_FUA, NVQ_IO_MORE.
 * @cb: completion callback (not NULL).
 * @arg: passed to @cb.
 *
 * Read @nlb logical blocks at @slba of namespace @nsid. Transfers above
 * MDTS are split into several commands and complete once. A request that
 * needs more commands than the queue has slots is chained: it starts with
 * half of the slots, and each command that completes hands its slot to
 * the next one, submitted from the thread that reaps the queue (on an
 * exclusive queue that thread must then be the owner, or not run while
 * the owner submits). @cb runs exactly once for a submitted request. No
 * system call or allocation happens per request (docs/design.md, "The
 * hot-path contract"), except one small allocation for a chained one.
 *
 * Return: 0 once submitted; -EAGAIN when the queue has not enough free
 * command slots (reap and retry); for bad requests, with a message:
 * -EINVAL (NULL @q or @cb, unknown flags, misaligned @buf), -ENOENT
 * (namespace not active), -ERANGE (blocks outside the namespace), -EFAULT
 * (@buf not in DMA memory), -E2BIG (more commands than the queue has
 * slots, on an exclusive queue in thread mode, which cannot chain: its
 * completion thread would submit beside the owner); -ENOMEM when no PRP
 * list memory is left.
 */
int nvq_read(struct nvq_queue *q, uint32_t nsid, void *buf, uint64_t slba,
	     uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg);

/**
 * nvq_write() - Submit a write.
 * @q: the queue (shared queues: any thread; exclusive: the owner).
 * @nsid: the namespace.
 * @buf: source; the same rules as for nvq_read().
 * @slba: first logical block.
 * @nlb: number of logical blocks (at least 1).
 * @flags: NVQ_IO_FUA, NVQ_IO_MORE.
 * @cb: completion callback (not NULL).
 * @arg: passed to @cb.
 *
 * Write @nlb logical blocks at @slba of namespace @nsid, split above MDTS
 * like nvq_read(). @cb runs exactly once for a submitted request.
 *
 * Return: as nvq_read().
 */
int nvq_write(struct nvq_queue *q, uint32_t nsid, const void *buf,
	      uint64_t slba, uint32_t nlb, unsigned int flags, nvq_cb cb,
	      void *arg);

/**
 * nvq_flush() - Flush the volatile write cache of a namespace.
 * @q: the queue.
 * @nsid: the namespace, or NVQ_NSID_ALL for every namespace.
 * @flags: NVQ_IO_MORE.
 * @cb: completion callback (not NULL).
 * @arg: passed to @cb.
 *
 * Return: 0 once submitted, -EAGAIN when the queue is full, -EINVAL,
 * -ENOENT (namespace not active), -ENOTSUP when @nsid is NVQ_NSID_ALL and
 * the controller does not take that (Identify Controller VWC.FB 10b).
 */
int nvq_flush(struct nvq_queue *q, uint32_t nsid, unsigned int flags, nvq_cb cb,
	      void *arg);

/**
 * nvq_write_zeroes() - Write zeroes to a range of blocks.
 * @q: the queue.
 * @nsid: the namespace.
 * @slba: first logical block.
 * @nlb: number of logical blocks (at least 1).
 * @flags: NVQ_IO_FUA, NVQ_IO_MORE.
 * @cb: completion callback (not NULL).
 * @arg: passed to @cb.
 *
 * Write zeroes to @nlb blocks at @slba (no data transfer), in commands of
 * at most WZSL (Identify CNS 06h) or, when the controller does not say,
 * MDTS worth of blocks, as Linux sends them; chained as nvq_read() is
 * when they are more than the queue has slots.
 *
 * Return: 0 once submitted, -EAGAIN when the queue is full, -EINVAL,
 * -ENOENT, -ERANGE, -E2BIG as nvq_read(); -ENOTSUP when the controller
 * has no Write Zeroes command.
 */
int nvq_write_zeroes(struct nvq_queue *q, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg);

/**
 * nvq_deallocate() - Deallocate (trim) a range of blocks.
 * @q: the queue.
 * @nsid: the namespace.
 * @slba: first logical block.
 * @nlb: number of logical blocks (at least 1).
 * @flags: NVQ_IO_MORE.
 * @cb: completion callback (not NULL).
 * @arg: passed to @cb.
 *
 * Deallocate @nlb blocks at @slba with Dataset Management (one range).
 *
 * Return: 0 once submitted, -EAGAIN when the queue is full, -EINVAL,
 * -ENOENT, -ERANGE as nvq_read(); -E2BIG when the controller's DMRSL and
 * DMRL need more commands than the queue has slots (not chained);
 * -ENOTSUP when the controller has no Dataset Management; -ENOMEM when no
 * DMA memory is left for the range.
 */
int nvq_deallocate(struct nvq_queue *q, uint32_t nsid, uint64_t slba,
		   uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg);

/**
 * nvq_abort() - Ask the controller to abort requests in flight.
 * @q: the queue the requests were submitted on.
 * @arg: the callback argument they were submitted with; every request of
 *	@q with it is aborted (all the commands of a split one).
 *
 * Sends an Abort (NVMe 2.0 5.1) for each of their commands. Abort is best
 * effort: a command the controller aborts completes with "Command Abort
 * Requested" (-EIO, status 0x007), one it has already executed completes
 * as it would have. Either way each callback runs once, where it always
 * runs; nvq_close() cancels what is left. An aborted command of a split
 * or chained request fails the whole request. Synchronous (one admin
 * command per command), so not from a completion callback.
 *
 * Return: how many commands an Abort was sent for (0: none in flight with
 * @arg); -EINVAL for a NULL @q; the controller's errno once it failed; an
 * Abort's own error (-ETIMEDOUT, -EIO).
 */
int nvq_abort(struct nvq_queue *q, void *arg);

/**
 * nvq_queue_kick() - Ring the SQ doorbell for deferred commands.
 * @q: the queue; NULL is a no-op.
 *
 * Tell the device about commands submitted with NVQ_IO_MORE.
 */
void nvq_queue_kick(struct nvq_queue *q);

/**
 * nvq_poll() - Reap completions without sleeping.
 * @q: the queue (shared queues: any thread).
 * @max: most completions to reap; 0 = no limit.
 *
 * Reap up to @max completions and run their callbacks in the calling
 * thread. Not allowed on NVQ_MODE_THREAD queues.
 *
 * Return: the number reaped, or a negative errno: -EINVAL for a NULL @q
 * or an NVQ_MODE_THREAD queue.
 */
int nvq_poll(struct nvq_queue *q, unsigned int max);

/**
 * nvq_wait() - Reap completions, sleeping on the queue's interrupt.
 * @q: the queue (shared queues: any thread).
 * @min_cpl: return once at least this many were reaped.
 * @timeout_ms: longest wait in ms; -1 = forever, 0 = do not wait.
 *
 * Reap completions and run their callbacks in the calling thread,
 * sleeping on the queue's interrupt until at least @min_cpl were reaped
 * or @timeout_ms passed. Works in NVQ_MODE_WAIT; in NVQ_MODE_POLL it
 * spins (yielding the CPU).
 *
 * Return: the number reaped (maybe fewer than @min_cpl on timeout), or a
 * negative errno: -EINVAL for a NULL @q or an NVQ_MODE_THREAD queue.
 */
int nvq_wait(struct nvq_queue *q, unsigned int min_cpl, int timeout_ms);

/**
 * nvq_queue_inflight() - Requests whose callbacks have not run yet.
 * @q: the queue.
 *
 * Return: the number of requests submitted on @q whose callbacks have not
 * run yet; 0 for a NULL @q.
 */
unsigned int nvq_queue_inflight(const struct nvq_queue *q);

/*
 * Synchronous helpers: submit, wait for completion, return 0, a negative
 * errno, or -EIO with *@status (may be NULL) set to the NVMe status. They
 * use the calling CPU's queue and any buffer (bounce-buffered when @buf is
 * not DMA memory). Not for the hot path.
 */

/**
 * nvq_read_sync() - Read and wait.
 * @ctrl: the controller; the calling CPU's queue is used.
 * @nsid: the namespace.
 * @buf: destination, any memory (bounce-buffered when not DMA memory).
 * @slba: first logical block.
 * @nlb: number of logical blocks.
 * @status: set to the NVMe status (may be NULL).
 *
 * Synchronous helper: submits, waits for completion. Not for the hot path.
 *
 * Return: 0; -EIO with *@status set to the NVMe status; or a negative
 * errno: -EINVAL (NULL @ctrl or @buf), -ENODEV (no I/O queues), -ENOENT,
 * -ERANGE, -ENOMEM (no bounce buffer), -ECANCELED.
 */
int nvq_read_sync(struct nvq_ctrl *ctrl, uint32_t nsid, void *buf,
		  uint64_t slba, uint32_t nlb, uint16_t *status);

/**
 * nvq_write_sync() - Write and wait.
 * @ctrl: the controller; the calling CPU's queue is used.
 * @nsid: the namespace.
 * @buf: source, any memory (bounce-buffered when not DMA memory).
 * @slba: first logical block.
 * @nlb: number of logical blocks.
 * @status: set to the NVMe status (may be NULL).
 *
 * Synchronous helper: submits, waits for completion. Not for the hot path.
 *
 * Return: as nvq_read_sync().
 */
int nvq_write_sync(struct nvq_ctrl *ctrl, uint32_t nsid, const void *buf,
		   uint64_t slba, uint32_t nlb, uint16_t *status);

/**
 * nvq_flush_sync() - Flush and wait.
 * @ctrl: the controller; the calling CPU's queue is used.
 * @nsid: the namespace, or NVQ_NSID_ALL.
 * @status: set to the NVMe status (may be NULL).
 *
 * Synchronous nvq_flush(). Not for the hot path.
 *
 * Return: 0; -EIO with *@status set; or a negative errno as nvq_flush(),
 * -EINVAL for a NULL @ctrl,
 * -ENODEV when it has no I/O queues.
 */
int nvq_flush_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint16_t *status);

/**
 * nvq_write_zeroes_sync() - Write zeroes and wait.
 * @ctrl: the controller; the calling CPU's queue is used.
 * @nsid: the namespace.
 * @slba: first logical block.
 * @nlb: number of logical blocks.
 * @status: set to the NVMe status (may be NULL).
 *
 * Synchronous nvq_write_zeroes(), for any number of blocks. Not for the
 * hot path.
 *
 * Return: 0; -EIO with *@status set; or a negative errno as
 * nvq_write_zeroes(), -EINVAL for a NULL @ctrl,
 * -ENODEV when it has no I/O queues.
 */
int nvq_write_zeroes_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint64_t slba,
			  uint32_t nlb, uint16_t *status);

/**
 * nvq_deallocate_sync() - Deallocate and wait.
 * @ctrl: the controller; the calling CPU's queue is used.
 * @nsid: the namespace.
 * @slba: first logical block.
 * @nlb: number of logical blocks.
 * @status: set to the NVMe status (may be NULL).
 *
 * Synchronous nvq_deallocate(). Not for the hot path.
 *
 * Return: 0; -EIO with *@status set; or a negative errno as
 * nvq_deallocate(), -EINVAL for a NULL @ctrl,
 * -ENODEV when it has no I/O queues.
 */
int nvq_deallocate_sync(struct nvq_ctrl *ctrl, uint32_t nsid, uint64_t slba,
			uint32_t nlb, uint16_t *status);

/**
 * nvq_admin() - Admin command passthrough.
 * @ctrl: the controller.
 * @cmd: the command; CID and PRPs are filled in by nvq.
 * @buf: optional data buffer, any memory (nvq bounces it).
 * @len: bytes of @buf; 0 for none.
 * @result: set to CQE DW0 (may be NULL).
 * @status: set to the NVMe status (may be NULL).
 *
 * Send @cmd and wait for it, one admin command at a time per controller.
 * Data direction follows the opcode's low two bits as the specification
 * defines (01b host to controller, 10b controller to host).
 *
 * Return: 0; -EIO with *@status set; or a negative errno: -EINVAL (NULL
 * @ctrl or @cmd, a buffer for an opcode without data, @len above the
 * maximum transfer), -ENOMEM, -ETIMEDOUT, -EBUSY (every admin slot is held
 * by a timed-out command), -ENODEV (controller gone).
 */
int nvq_admin(struct nvq_ctrl *ctrl, const struct nvq_sqe *cmd, void *buf,
	      size_t len, uint32_t *result, uint16_t *status);

/* ------------------------------------------------------------------ */
/* Metadata, end-to-end protection, raw I/O commands (docs/metadata.md) */
/* ------------------------------------------------------------------ */

/* Protection Information Action: the controller inserts (write) or strips
 * (read) the PI and checks it (NVM Command Set 1.0, 5.2.2). */
#define NVQ_IO_PRACT (1u << 2)
/* PRCHK: check the guard, the application tag, the reference tag. */
#define NVQ_IO_PRCHK_GUARD (1u << 3)
#define NVQ_IO_PRCHK_APP (1u << 4)
#define NVQ_IO_PRCHK_REF (1u << 5)
#define NVQ_IO_PRCHK_ALL \
	(NVQ_IO_PRCHK_GUARD | NVQ_IO_PRCHK_APP | NVQ_IO_PRCHK_REF)

/**
 * struct nvq_io - A read or write with metadata and protection fields.
 * @size: sizeof the struct as the caller was built (set by nvq_io_init());
 *	the struct grows at its end, a zero new field means "as before".
 * @nsid: the namespace.
 * @nlb: number of logical blocks (at least 1).
 * @slba: first logical block.
 * @buf: data, DMA memory, 4-byte aligned; with an extended LBA format it
 *	holds (lba_size + ms) bytes per block, data and metadata
 *	interleaved.
 * @md: separate metadata (ms bytes per block, DMA memory, 4-byte
 *	aligned); NULL with an extended format, and may be NULL with
 *	NVQ_IO_PRACT when ms is 8 (the controller inserts and strips the
 *	PI, nothing is transferred).
 * @flags: NVQ_IO_FUA, NVQ_IO_MORE, NVQ_IO_PRACT, NVQ_IO_PRCHK_*.
 * @reftag: Initial Logical Block Reference Tag of @slba (types 1 and 2;
 *	advanced by the blocks of each command when split, never for
 *	type 3).
 * @apptag: Logical Block Application Tag.
 * @appmask: Logical Block Application Tag Mask.
 */
struct nvq_io {
	uint32_t size;
	uint32_t nsid;
	uint32_t nlb;
	uint32_t flags;
	uint64_t slba;
	void *buf;
	void *md;
	uint32_t reftag;
	uint16_t apptag;
	uint16_t appmask;
};

/**
 * nvq_io_init() - Zero a request and set its size.
 * @io: the request.
 */
static inline void nvq_io_init(struct nvq_io *io)
{
	uint8_t *p = (uint8_t *)io;
	size_t i;

	for (i = 0; i < sizeof(*io); i++)
		p[i] = 0;
	io->size = (uint32_t)sizeof(*io);
}

/**
 * nvq_read_io() - Submit a read with metadata and protection fields.
 * @q: the queue.
 * @io: the request (read during the call only).
 * @cb: completion callback (not NULL).
 * @arg: passed to @cb.
 *
 * As nvq_read(), for every format nvq drives: transfers above MDTS are
 * split, MPTR advancing by ms bytes per block and the reference tag by
 * the blocks of each command (PI types 1 and 2).
 *
 * Return: as nvq_read(); -EINVAL also for a @io->size nvq does not know,
 * flags the namespace's format does not allow, a missing or misaligned
 * @io->md; -ENOTSUP for a namespace nvq does not drive.
 */
int nvq_read_io(struct nvq_queue *q, const struct nvq_io *io, nvq_cb cb,
		void *arg);

/**
 * nvq_write_io() - Submit a write with metadata and protection fields.
 * @q: the queue.
 * @io: the request (read during the call only).
 * @cb: completion callback (not NULL).
 * @arg: passed to @cb.
 *
 * Return: as nvq_read_io().
 */
int nvq_write_io(struct nvq_queue *q, const struct nvq_io *io, nvq_cb cb,
		 void *arg);

/**
 * nvq_read_io_sync() - nvq_read_io() and wait.
 * @ctrl: the controller; the calling CPU's queue is used.
 * @io: the request; @io->buf and @io->md must be DMA memory.
 * @status: set to the NVMe status (may be NULL).
 *
 * Return: 0; -EIO with *@status set (e.g. 0x282, 0x283, 0x284: guard,
 * application or reference tag check error); or as nvq_read_io().
 */
int nvq_read_io_sync(struct nvq_ctrl *ctrl, const struct nvq_io *io,
		     uint16_t *status);

/**
 * nvq_write_io_sync() - nvq_write_io() and wait.
 * @ctrl: the controller; the calling CPU's queue is used.
 * @io: the request; @io->buf and @io->md must be DMA memory.
 * @status: set to the NVMe status (may be NULL).
 *
 * Return: as nvq_read_io_sync().
 */
int nvq_write_io_sync(struct nvq_ctrl *ctrl, const struct nvq_io *io,
		      uint16_t *status);

/**
 * nvq_io_raw() - Submit an arbitrary I/O command (no splitting).
 * @q: the queue.
 * @cmd: the command; CID, PRP1/PRP2 and MPTR are filled in by nvq, the
 *	rest (opcode, NSID, CDW2-3, CDW10-15, FUSE 00b) is sent as given.
 * @buf: data buffer, DMA memory, 4-byte aligned; NULL when @len is 0.
 * @len: bytes of @buf (at most nvq_ctrl_max_transfer()).
 * @md: separate metadata buffer for MPTR, DMA memory, 4-byte aligned;
 *	NULL for none (MPTR 0).
 * @md_len: bytes of @md (checked against DMA memory only).
 * @flags: NVQ_IO_MORE.
 * @cb: completion callback (not NULL).
 * @arg: passed to @cb.
 *
 * The data direction follows the opcode's low two bits (01b host to
 * controller, 10b controller to host, 00b no data; 11b is refused). nvq
 * does not interpret the command, so it does not check the namespace or
 * the LBA range: the controller does.
 *
 * Return: 0 once submitted; -EAGAIN when the queue is full; -EINVAL (NULL
 * @q, @cmd or @cb, a buffer for a command without data or none for one
 * with data, bidirectional opcode, fused command, misaligned buffers,
 * @len above the maximum transfer, unknown flags); -EFAULT (buffers not
 * in DMA memory); -ENOMEM (no PRP list memory).
 */
int nvq_io_raw(struct nvq_queue *q, const struct nvq_sqe *cmd, void *buf,
	       size_t len, void *md, size_t md_len, unsigned int flags,
	       nvq_cb cb, void *arg);

/**
 * nvq_io_raw_sync() - nvq_io_raw() and wait.
 * @ctrl: the controller; the calling CPU's queue is used.
 * @cmd: the command, as for nvq_io_raw().
 * @buf: data buffer, any memory (bounced when not DMA memory).
 * @len: bytes of @buf.
 * @md: metadata buffer, any memory (bounced when not DMA memory), or
 *	NULL.
 * @md_len: bytes of @md.
 * @result: set to CQE DW0 (may be NULL).
 * @status: set to the NVMe status (may be NULL).
 *
 * Return: 0; -EIO with *@status set; or a negative errno as nvq_io_raw(),
 * -ENODEV when the controller has no I/O queues, -ENOMEM (no bounce
 * buffer).
 */
int nvq_io_raw_sync(struct nvq_ctrl *ctrl, const struct nvq_sqe *cmd, void *buf,
		    size_t len, void *md, size_t md_len, uint32_t *result,
		    uint16_t *status);

/**
 * nvq_pi_generate() - Fill the protection information of blocks.
 * @ctrl: the controller.
 * @nsid: a namespace with PI (type 1, 2 or 3).
 * @buf: the data (extended format: data and metadata per block; the PI is
 *	written into it).
 * @md: the separate metadata (ms bytes per block), NULL with an extended
 *	format.
 * @nlb: blocks.
 * @reftag: reference tag of the first block (types 1 and 2: incremented
 *	per block; type 3: stored as given in every block).
 * @apptag: application tag of every block.
 *
 * Computes the guard (CRC-16 T10-DIF over the block's data, and with PI
 * in the last 8 bytes of metadata also over the metadata bytes before
 * it), for sending with PRACT=0.
 *
 * Return: 0; -EINVAL (NULL arguments, a namespace without PI, @md given
 * or missing against the format); -ENOENT, -ENOTSUP as nvq_ns_info().
 */
int nvq_pi_generate(const struct nvq_ctrl *ctrl, uint32_t nsid, void *buf,
		    void *md, uint32_t nlb, uint32_t reftag, uint16_t apptag);

/**
 * nvq_pi_verify() - Check the protection information of blocks.
 * @ctrl: the controller.
 * @nsid: a namespace with PI.
 * @buf: the data, as for nvq_pi_generate().
 * @md: the separate metadata, as for nvq_pi_generate().
 * @nlb: blocks.
 * @reftag: expected reference tag of the first block.
 * @apptag: expected application tag.
 * @appmask: bits of the application tag to compare.
 * @flags: NVQ_IO_PRCHK_* to check.
 * @bad: set to the index of the first failing block (may be NULL).
 *
 * Checks as a controller does (NVM Command Set 1.0, 5.2.1.2): blocks whose
 * application tag is FFFFh (types 1, 2) or whose application and
 * reference tags are FFFFh and FFFFFFFFh (type 3) are not checked.
 *
 * Return: 0 when every block passes; the NVMe status a controller would
 * report (0x282 guard, 0x283 application tag, 0x284 reference tag) for
 * the first failing block, or 0x181 (Invalid Protection Information) for
 * NVQ_IO_PRCHK_REF on type 3, which has no reference tag to check
 * (NVM Command Set 1.0, 5.2.1.4); -EINVAL, -ENOENT, -ENOTSUP as
 * nvq_pi_generate().
 */
int nvq_pi_verify(const struct nvq_ctrl *ctrl, uint32_t nsid, const void *buf,
		  const void *md, uint32_t nlb, uint32_t reftag,
		  uint16_t apptag, uint16_t appmask, unsigned int flags,
		  uint32_t *bad);

/* ------------------------------------------------------------------ */
/* DMA memory                                                          */
/* ------------------------------------------------------------------ */

/**
 * nvq_dma_alloc() - Allocate DMA memory.
 * @ctrl: the controller.
 * @len: bytes (> 0).
 * @node: NUMA node; -1 = the controller's node.
 *
 * Allocate @len bytes of DMA memory (page aligned, zeroed, pinned where
 * the transport needs it) on NUMA node @node.
 *
 * Return: the memory, or NULL with a message.
 */
void *nvq_dma_alloc(struct nvq_ctrl *ctrl, size_t len, int node);

/**
 * nvq_dma_free() - Free memory from nvq_dma_alloc().
 * @ctrl: the controller.
 * @buf: the memory; NULL is a no-op.
 */
void nvq_dma_free(struct nvq_ctrl *ctrl, void *buf);

/**
 * nvq_dma_register() - Make caller memory usable for I/O.
 * @ctrl: the controller.
 * @buf: start of the memory (any alignment; whole pages get mapped).
 * @len: bytes.
 *
 * Return: 0; -EINVAL for NULL or empty buffers; -EEXIST when a page of it
 * is already mapped by another allocation or registration (regions may
 * not share a page); -ENOMEM, -EPERM, -ENOSPC when mapping fails.
 */
int nvq_dma_register(struct nvq_ctrl *ctrl, void *buf, size_t len);

/**
 * nvq_dma_unregister() - Undo nvq_dma_register().
 * @ctrl: the controller.
 * @buf: the start of a registered buffer.
 *
 * Return: 0, or -EINVAL when @buf is not the start of a registration.
 */
int nvq_dma_unregister(struct nvq_ctrl *ctrl, void *buf);

/* ------------------------------------------------------------------ */
/* NVMe over Fabrics discovery                                         */
/* ------------------------------------------------------------------ */

/**
 * struct nvq_disc_entry - One record of a discovery log page (NVMe-oF
 *	1.1, 5.3), decoded. The numbers are the page's (NVQ_TRTYPE_*,
 *	NVQ_ADRFAM_*, NVQ_SUBTYPE_* in nvq/spec.h); the strings are its
 *	fixed fields cut at the first NUL, trailing spaces removed, always
 *	NUL-terminated, bytes otherwise as the controller sent them.
 * @trtype: transport type (3: TCP).
 * @adrfam: address family (1: IPv4, 2: IPv6).
 * @subtype: 1 a referral to another discovery controller, 2 an NVM
 *	subsystem, 3 this discovery controller.
 * @treq: transport requirements (bits 1:0 secure channel, bit 2 SQ flow
 *	control disable supported).
 * @portid: the NVM subsystem port.
 * @cntlid: the controller (FFFFh: dynamic, FFFEh: static, any).
 * @asqsz: the admin queue's maximum size.
 * @eflags: entry flags (bit 0 DUPRETINFO, bit 1 EPCSD, bit 2 NCC).
 * @trsvcid: the transport service: the TCP port.
 * @traddr: the transport address: the IP address.
 * @subnqn: the subsystem's NQN (the nqn= of a tcp: URI).
 * @tsas: the transport specific address subtype, as on the page (TCP:
 *	byte 0 SECTYPE).
 */
struct nvq_disc_entry {
	uint8_t trtype;
	uint8_t adrfam;
	uint8_t subtype;
	uint8_t treq;
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	uint16_t eflags;
	char trsvcid[33];
	char traddr[257];
	char subnqn[257];
	uint8_t tsas[256];
};

/**
 * struct nvq_disc_log - A discovery log page, decoded (nvq_discover(),
 *	nvq_disc_log_decode()); freed with nvq_disc_log_free().
 * @entry_size: the stride of @entries: sizeof(struct nvq_disc_entry) as
 *	the caller was built, so that @entries[i] indexes right; entries
 *	grow at their end.
 * @nr_entries: the records (the page's NUMREC).
 * @genctr: the page's generation counter.
 * @recfmt: the record format (0).
 * @entries: @nr_entries records (NULL when there are none).
 */
struct nvq_disc_log {
	uint32_t entry_size;
	uint32_t nr_entries;
	uint64_t genctr;
	uint16_t recfmt;
	struct nvq_disc_entry *entries;
};

/* The most records a log page may hold for nvq_discover() and
 * nvq_disc_log_decode(): a larger NUMREC is taken for a broken page. */
#define NVQ_DISC_MAX_RECORDS 1024

/**
 * nvq_discover_size() - Read the discovery log of an NVMe/TCP discovery
 *	controller.
 * @uri: "tcp:HOST[:PORT][,key=val...]" (docs/tcp.md): the port defaults
 *	to 8009 and nqn= to the well-known discovery NQN
 *	(NVQ_DISC_NQN); hostnqn=, hostid=, connect_timeout= apply as for
 *	nvq_open(). No "/NSID".
 * @log: set to the log (free it with nvq_disc_log_free()); NULL on
 *	failure.
 * @entry_size: sizeof(struct nvq_disc_entry) as the caller was built;
 *	use nvq_discover().
 *
 * Connects to the controller (Fabrics Connect, no keep-alive), enables
 * it, reads the Discovery log page (70h) until its generation counter is
 * the same before and after, shuts the controller down and disconnects.
 * Each step waits at most connect_timeout= (default 5000 ms).
 *
 * Return: 0; -EINVAL for a bad URI or argument; -ENOTSUP where the
 * library was built without NVMe/TCP; the connection's errno (name
 * resolution, -ECONNREFUSED, -ETIMEDOUT, ...); -EIO when the controller
 * refused a command (the message has its status); -EPROTO for a
 * malformed log page or a counter that never settles; -ENOMEM.
 */
int nvq_discover_size(const char *uri, struct nvq_disc_log **log,
		      uint32_t entry_size);

/**
 * nvq_discover() - Read the discovery log of an NVMe/TCP discovery
 *	controller.
 * @uri: "tcp:HOST[:PORT][,key=val...]", as nvq_discover_size().
 * @log: set to the log (free it with nvq_disc_log_free()).
 *
 * Return: as nvq_discover_size().
 */
static inline int nvq_discover(const char *uri, struct nvq_disc_log **log)
{
	return nvq_discover_size(uri, log,
				 (uint32_t)sizeof(struct nvq_disc_entry));
}

/**
 * nvq_disc_log_decode_size() - Decode a discovery log page read by other
 *	means (a file saved by `nvme discover --raw`, a Get Log Page).
 * @page: the page: its 1024-byte header, then NUMREC records of 1024
 *	bytes; bytes beyond them are ignored.
 * @len: bytes at @page.
 * @log: set to the log (free it with nvq_disc_log_free()); NULL on
 *	failure.
 * @entry_size: sizeof(struct nvq_disc_entry) as the caller was built;
 *	use nvq_disc_log_decode().
 *
 * Return: 0; -EINVAL for a NULL argument or an @entry_size smaller than
 * the first release's; -EPROTO with a message for a page that is too
 * short for its NUMREC, has more than NVQ_DISC_MAX_RECORDS records or a
 * record format other than 0; -ENOMEM.
 */
int nvq_disc_log_decode_size(const void *page, size_t len,
			     struct nvq_disc_log **log, uint32_t entry_size);

/**
 * nvq_disc_log_decode() - Decode a discovery log page read by other means.
 * @page: the page.
 * @len: bytes at @page.
 * @log: set to the log (free it with nvq_disc_log_free()).
 *
 * Return: as nvq_disc_log_decode_size().
 */
static inline int nvq_disc_log_decode(const void *page, size_t len,
				      struct nvq_disc_log **log)
{
	return nvq_disc_log_decode_size(
		page, len, log, (uint32_t)sizeof(struct nvq_disc_entry));
}

/**
 * nvq_disc_log_free() - Free a log from nvq_discover() or
 *	nvq_disc_log_decode().
 * @log: the log; NULL does nothing.
 */
void nvq_disc_log_free(struct nvq_disc_log *log);

#ifdef __cplusplus
}
#endif

#endif /* NVQ_NVQ_H */
