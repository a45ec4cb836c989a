/* SPDX-License-Identifier: MIT */
/*
 * A controller as the driver sees it: transport, DMA memory, the admin
 * queue, namespaces, I/O queues and their interrupt vectors.
 */
#ifndef NVQ_CTRL_H
#define NVQ_CTRL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvq/nvq.h"
#include "dmapool.h"
#include "mem.h"
#include "bench.h"
#include "queue.h"
#include "transport.h"

/* Namespaces nvq tracks at most (Identify data is 4 KiB each). */
#define NVQ_MAX_NS 1024
/* nsids below this are looked up in a direct table. */
#define NVQ_NS_DIRECT 64
/* Entries of the admin queue. */
#define NVQ_ADMIN_DEPTH 32
/* I/O queues nvq creates at most. */
#define NVQ_MAX_QUEUES 1024
/* Per-command transfer cap when MDTS is 0 or larger (NVQ_PRP_MAX_LISTS). */
#define NVQ_MAX_XFER (2u << 20)

/* Bytes of bring-up notes kept per controller. */
#define NVQ_NOTES_LEN 512

struct nvq_ns {
	uint32_t nsid;
	uint32_t lbads; /* log2 of the LBA size */
	uint64_t nlba;
	uint32_t max_blocks; /* blocks per command */
	uint32_t wz_blocks; /* blocks per Write Zeroes command */
	struct nvq_id_ns *id;
	/* Metadata (docs/metadata.md); md 0: none, the lean path. */
	uint8_t md;
	uint8_t ext; /* extended LBA: metadata follows each block's data */
	uint8_t pi_type; /* DPS 2:0 */
	uint8_t pi_first; /* DPS bit 3 */
	uint32_t ms; /* metadata bytes per block */
	uint32_t blk_bytes; /* buffer bytes per block: data (+ms if ext) */
};

/* An active namespace nvq does not drive, and why (ns.c). */
#define NVQ_MAX_BAD_NS 16
struct nvq_ns_bad {
	uint32_t nsid;
	uint8_t csi;
	char why[119];
};

/* A synchronous admin command in flight (see admin.c). */
struct nvq_admin_ctx {
	struct nvq_ctrl *ctrl;
	bool busy;
	bool done;
	bool abandoned; /* timed out: the buffer belongs to the context */
	struct nvq_cpl cpl;
	void *buf; /* DMA buffer to free once the device is done with it */
};

struct nvq_ctrl;

/*
 * What the core asks of a transport at the controller level, as nvme core
 * asks pci.c / tcp.c through nvme_ctrl_ops in Linux and SPDK's core its
 * nvme_transport_ops. The PCIe transport (lib/pcie/pcie.c) implements it
 * over BAR0 and queue rings; a fabrics transport would reach registers
 * through Property Get/Set and create queues with Connect. Nothing here is
 * on the I/O path: requests go to the queue API of queue.h, per batch.
 */
struct nvq_ctrl_ops {
	const char *name;
	/* Controller registers (NVMe 2.0, 3.1.4): BAR0 or properties. */
	uint32_t (*reg_read32)(struct nvq_ctrl *c, uint32_t off);
	uint64_t (*reg_read64)(struct nvq_ctrl *c, uint32_t off);
	void (*reg_write32)(struct nvq_ctrl *c, uint32_t off, uint32_t val);
	/* Give the controller its admin queue; before CC.EN is set. */
	int (*admin_queue_create)(struct nvq_ctrl *c);
	/* Send one admin command (@sqe's CID and data pointer are the
	 * transport's) with @len bytes of DMA memory at @buf; @cb runs from
	 * admin_reap. -ENODEV: no admin queue; -EBUSY: no free slot. */
	int (*admin_submit)(struct nvq_ctrl *c, const struct nvq_sqe *sqe,
			    void *buf, size_t len, nvq_cb cb, void *arg);
	/* Reap admin completions (under admin_lock). */
	void (*admin_reap)(struct nvq_ctrl *c);
	/* Wait at most @max_ms for the admin queue to have news; @attempt
	 * counts the waits of one command, for back-off. */
	void (*admin_sleep)(struct nvq_ctrl *c, unsigned int attempt,
			    uint64_t max_ms);
	/* Create c->nr_queues I/O queue pairs of @depth entries (and their
	 * interrupts and completion threads); notes go to @notes. */
	int (*io_queues_create)(struct nvq_ctrl *c, uint32_t depth, char *notes,
				size_t notes_len);
	/*
	 * Controller reset (reset.c), with the device disabled: cancel what
	 * the admin queue held, empty its rings and give them to the
	 * controller again (before CC.EN is set).
	 */
	int (*admin_queue_reinit)(struct nvq_ctrl *c);
	/*
	 * ... and once it is enabled again: re-create the I/O queues with
	 * their layout (rings, vectors, shadow doorbells), the gates closed,
	 * then post what stayed in flight again (nvq_queue_restart()).
	 */
	int (*io_queues_recreate)(struct nvq_ctrl *c);
	/* Stop completion threads: no I/O callback runs afterwards. */
	void (*quiesce)(struct nvq_ctrl *c);
	/* Delete the I/O queues on a device that is @alive; returns whether
	 * it still is. */
	bool (*io_queues_delete)(struct nvq_ctrl *c, bool alive);
	/* After shutdown: cancel what the device never finished, free the
	 * queues. */
	void (*queues_free)(struct nvq_ctrl *c);
	/* Release the transport itself (after DMA memory is gone). */
	void (*close)(struct nvq_ctrl *c);
};

extern const struct nvq_ctrl_ops nvq_pcie_ctrl_ops;

struct nvq_ctrl {
	uint64_t uid; /* unique per nvq_open() in this process */
	const struct nvq_ctrl_ops *ops;
	char *uri; /* as given, with its /NSID */
	uint32_t uri_nsid; /* the URI's /NSID, 0 if none */
	struct nvq_opts opts;
	enum nvq_lock_mode lock_mode;
	/* The PCIe transport's backend (emu, vfio) and DMA memory. */
	struct nvq_transport *t;
	struct nvq_mem *mem;
	int node; /* the device's NUMA node, 0 if unknown */

	uint64_t cap;
	uint32_t vs;
	uint32_t dstrd;
	uint32_t admin_timeout_ms; /* atomic */
	uint32_t ready_ms; /* CSTS.RDY may take this long to follow CC.EN */
	bool iocss; /* CAP.CSS has I/O Command Sets: CC.CSS is 110b */
	uint32_t max_xfer; /* bytes per command, after the driver's caps */
	/*
	 * Limits that are not MDTS (Identify CNS 06h, CSI NVM): Write
	 * Zeroes bytes per command (0: no limit but NLB's), DSM ranges per
	 * command, blocks per range and per command (0: no limit).
	 */
	uint64_t wz_max_bytes;
	uint32_t dmrl, dmrsl;
	uint64_t dmsl;
	struct nvq_id_ctrl *id;
	bool enabled; /* CC.EN was set by us */

	/* Per NUMA node pools; index = node. */
	int nr_nodes;
	struct nvq_pools *pools;

	/* Admin queue, serialised by admin_lock. */
	pthread_mutex_t admin_lock;
	struct nvq_queue *aq;
	void *asq_mem, *acq_mem;
	struct nvq_admin_ctx actx[NVQ_ADMIN_DEPTH];
	bool admin_owns_vec0; /* no I/O queue signals vector 0 */

	/* Namespaces, sorted by nsid. */
	unsigned int nr_ns;
	struct nvq_ns *ns;
	struct nvq_ns *ns_direct[NVQ_NS_DIRECT];
	/* Those without metadata only: the lean path of nvq_read(). */
	struct nvq_ns *ns_plain[NVQ_NS_DIRECT];
	unsigned int nr_bad_ns;
	struct nvq_ns_bad bad_ns[NVQ_MAX_BAD_NS];

	/* Shadow doorbell and EventIdx pages, NULL when not in use. */
	uint32_t *dbbuf_db, *dbbuf_ei;

	/* I/O queues and their vectors. */
	unsigned int nr_queues;
	struct nvq_queue **queues;
	unsigned int nr_vectors;
	struct nvq_vector *vectors; /* index = MSI-X vector */
	unsigned int nr_cpus;
	bool threads_started;

	/* CPU latency QoS knobs and the queues' activity (qos.h). */
	struct nvq_qos_ctrl *qos;

	/* What bring-up skipped or chose, for nvq_ctrl_notes(). */
	char notes[NVQ_NOTES_LEN];

	/* Timeouts and the failure path (timeout.c). */
	uint32_t io_timeout_ms; /* atomic */
	uint32_t wd_clock; /* atomic: ms since open, per watchdog period */
	uint64_t wd_start_ns;
	pthread_t wd_thread;
	pthread_mutex_t wd_lock;
	pthread_cond_t wd_cond;
	bool wd_init, wd_running, wd_stop;
	uint16_t *wd_cids; /* the watchdog's scratch: CIDs posted in a CQ */
	int failed; /* atomic: the errno every command gets once failed */
	char fail_msg[256];
	/* Reset (reset.c): in progress, asked for, finished (generation). */
	int resetting; /* atomic */
	int reset_req; /* atomic, under wd_lock: the errno of the cause */
	char reset_why[128]; /* under wd_lock */
	uint64_t reset_gen; /* under wd_lock: resets finished */
	int reset_rc; /* under wd_lock: the outcome of the last one */
	struct {
		uint64_t timeouts, lost_interrupts, aborts, resets, retries;
		uint64_t failed;
	} st; /* atomic adds */
};

/*
 * Run one admin command synchronously: @sqe (CID and PRPs are filled in),
 * data in *@bufp (DMA memory from nvq_mem_alloc(), @len bytes, or NULL).
 * Returns 0, -EIO with *@status set (may be NULL), -ETIMEDOUT, ... On
 * -ETIMEDOUT the command keeps its slot and the buffer: *@bufp is set to
 * NULL and the controller frees it once the device completes the command
 * or at close.
 */
int nvq_ctrl_admin(struct nvq_ctrl *ctrl, struct nvq_sqe *sqe, void **bufp,
		   size_t len, uint32_t *result, uint16_t *status);

/*
 * Identify with CNS @cns into @out (4 KiB); -EIO with *@status (may be
 * NULL) set when the controller fails it.
 */
int nvq_ctrl_identify(struct nvq_ctrl *ctrl, uint8_t cns, uint32_t nsid,
		      void *out, uint16_t *status);

/* An admin command without data buffer (PRPs given as they are). */
int nvq_ctrl_admin_simple(struct nvq_ctrl *ctrl, uint8_t opc, uint32_t cdw10,
			  uint32_t cdw11, uint64_t prp1, uint64_t prp2,
			  uint32_t *result);

/*
 * Fail for @nsid that nvq_ctrl_ns() did not find, with its real reason
 * (not active, or why nvq does not drive it): -ENOENT or -ENOTSUP (ns.c).
 */
int nvq_ns_absent(const struct nvq_ctrl *ctrl, uint32_t nsid);

/*
 * Identify the namespaces again after Format NVM or Sanitize, updating
 * their format in place; the caller has quiesced their I/O (ns.c).
 */
int nvq_ns_refresh(struct nvq_ctrl *ctrl);

/* Find the active namespaces nvq can drive (ns.c). */
int nvq_ctrl_scan_namespaces(struct nvq_ctrl *ctrl, char *notes,
			     size_t notes_len);

/*
 * How Deallocate is cut up (io.c): blocks per range and ranges per
 * command, from DMRSL, DMRL and DMSL.
 */
void nvq_dsm_shape(const struct nvq_ctrl *ctrl, uint64_t *per_range,
		   uint64_t *ranges);

/* Append a "; "-separated note to @buf (see nvq_ctrl_notes()). */
void nvq_note(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Start / stop-and-join the timeout watchdog (timeout.c). */
int nvq_watchdog_start(struct nvq_ctrl *ctrl);
void nvq_watchdog_stop(struct nvq_ctrl *ctrl);

/*
 * Ask the watchdog to reset the controller (reset.c); @err is what the
 * commands get that a reset cannot retry. Any thread; a no-op while the
 * watchdog does not run (bring-up, teardown).
 */
void nvq_ctrl_request_reset(struct nvq_ctrl *ctrl, int err, const char *why);

/*
 * The watchdog's own: reset now (disable, re-initialise, re-create the
 * queues, retry what was in flight), or, when that fails, fail the
 * controller. nvq_ctrl_fail(): fail it at once - every command in flight
 * completes with @err and so does every later submission.
 */
int nvq_ctrl_reset_now(struct nvq_ctrl *ctrl, int err, const char *why);
void nvq_ctrl_fail(struct nvq_ctrl *ctrl, int err, const char *why);

/*
 * Set while the calling thread is the reset itself: its admin commands
 * neither take admin_lock (the reset holds it) nor give up because a
 * reset runs (admin.c).
 */
extern __thread bool nvq_admin_in_reset;

/* Times a reset submits one command again before it fails (Linux: 5). */
#define NVQ_MAX_RETRIES 5

/* CC.EN = 0 and wait for CSTS.RDY = 0 (bounded), ctrl.c. */
int nvq_ctrl_disable(struct nvq_ctrl *ctrl);

/* CC.EN = 1 with nvq's CC, and wait for CSTS.RDY = 1, ctrl.c. */
int nvq_ctrl_enable(struct nvq_ctrl *ctrl);

static inline uint32_t nvq_ctrl_reg_read32(struct nvq_ctrl *c, uint32_t off)
{
	return c->ops->reg_read32(c, off);
}

static inline void nvq_ctrl_reg_write32(struct nvq_ctrl *c, uint32_t off,
					uint32_t val)
{
	c->ops->reg_write32(c, off, val);
}

static inline uint32_t nvq_ctrl_csts(struct nvq_ctrl *c)
{
	return nvq_ctrl_reg_read32(c, NVQ_REG_CSTS);
}

/* The active namespace @nsid, or NULL. Hot path. */
static inline struct nvq_ns *nvq_ctrl_ns(const struct nvq_ctrl *ctrl,
					 uint32_t nsid)
{
	unsigned int lo = 0, hi = ctrl->nr_ns;

	if (nsid < NVQ_NS_DIRECT)
		return ctrl->ns_direct[nsid];
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (ctrl->ns[mid].nsid == nsid)
			return &ctrl->ns[mid];
		if (ctrl->ns[mid].nsid < nsid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * nvq_ctrl_ns() for nvq_read()/nvq_write(): NULL for namespaces with
 * metadata too, which take the slow path (io.c), so that plain ones pay
 * nothing for them.
 */
static inline struct nvq_ns *nvq_ctrl_ns_plain(const struct nvq_ctrl *ctrl,
					       uint32_t nsid)
{
	struct nvq_ns *ns;

	if (nsid < NVQ_NS_DIRECT)
		return ctrl->ns_plain[nsid];
	ns = nvq_ctrl_ns(ctrl, nsid);
	return ns && !ns->md ? ns : NULL;
}

#endif /* NVQ_CTRL_H */
