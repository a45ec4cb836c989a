/* SPDX-License-Identifier: MIT */
/*
 * Inside the emulated controller: the controller state and the interfaces
 * between its files. Everything below "device thread state" is owned by
 * the device thread; host threads touch only the registers, doorbells,
 * the IOMMU table (under its lock) and the wake-up word.
 */
#ifndef NVQ_EMU_INTERNAL_H
#define NVQ_EMU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvq/spec.h"
#include "emu.h"
#include "util.h"

/* Internal to the emulator: not exported from libnvq.so. */
#pragma GCC visibility push(hidden)

#define EMU_NN 1024 /* Identify NN: highest valid NSID */
#define EMU_MAX_NS 1024
#define EMU_AERL 3 /* 0's based: 4 outstanding AERs */
#define EMU_ACL 3 /* 0's based */
#define EMU_ERRLOG_MAX 256 /* Error log entries at most (ELPE + 1) */
#define EMU_MPSMAX 4 /* 64 KiB memory pages */
#define EMU_FETCH_BATCH 64 /* SQEs taken from one SQ per pass */
#define EMU_AER_QUEUE 16 /* undelivered events kept */
#define EMU_TEMP_K 308 /* composite temperature, Kelvin */
#define EMU_WCTEMP_K 343
#define EMU_CCTEMP_K 358
#define EMU_MAX_MSIX 2048

/* Status with DNR: a retry cannot succeed. */
#define EMU_ST(sct, sc) \
	((uint16_t)(NVQ_STATUS_MAKE(sct, sc) | NVQ_STATUS_DNR_BIT))
#define EMU_ST_GEN(sc) EMU_ST(NVQ_SCT_GENERIC, sc)
#define EMU_ST_CMD(sc) EMU_ST(NVQ_SCT_CMD_SPECIFIC, sc)

/* ------------------------------------------------------------------ */
/* IOMMU (iommu.c)                                                     */
/* ------------------------------------------------------------------ */

struct emu_iommu_entry {
	uint64_t iova;
	uint64_t len;
	uint8_t *vaddr;
};

/* Immutable once published; replaced whole on every map/unmap. */
struct emu_iommu_table {
	size_t n;
	struct emu_iommu_entry e[]; /* sorted by iova */
};

struct emu_iommu {
	pthread_mutex_t lock; /* host side: serialises map/unmap */
	struct emu_iommu_table *table; /* published (atomic pointer) */
	uint64_t gen; /* atomic: bumped by every map/unmap */
	uint64_t ack; /* atomic: last gen the device thread switched to */
	/* Device thread's view: valid until it acknowledges a newer gen. */
	const struct emu_iommu_table *view;
	const struct emu_iommu_entry *last; /* translation cache */
};

/* Set up an empty IOMMU / free its table. */
int emu_iommu_init(struct emu_iommu *m);
void emu_iommu_fini(struct emu_iommu *m);

/*
 * Device thread: switch to the current table if it changed. Returns true
 * when it did (cached queue pointers must then be re-translated before
 * emu_iommu_ack(@gen)).
 */
bool emu_iommu_sync(struct emu_iommu *m, uint64_t *gen);

/* Device thread: tell map/unmap that generation @gen is in use. */
void emu_iommu_ack(struct emu_iommu *m, uint64_t gen);

/*
 * Device thread: host pointer for device address @iova, with *@avail the
 * bytes accessible from there within the same mapping. NULL if unmapped.
 */
uint8_t *emu_iommu_xlate(struct emu_iommu *m, uint64_t iova, uint64_t *avail);

/* Device thread: host pointer for [@iova, @iova + @len) in one mapping. */
void *emu_iommu_range(struct emu_iommu *m, uint64_t iova, uint64_t len);

/* ------------------------------------------------------------------ */
/* Media (media.c)                                                     */
/* ------------------------------------------------------------------ */

struct emu_seg;

struct emu_media {
	uint8_t *base; /* RAM: all namespaces, consecutively; NULL for a file */
	uint64_t len;
	uint64_t page; /* the host's page size (RAM zeroing) */
	int fd; /* the backing file, locked and reserved; -1 for RAM */
	/*
	 * RAM: one bit per MEDIA_CHUNK bytes, set once the chunk holds
	 * anything but zeroes (device thread). A read of a clear chunk
	 * stores zeroes into the host buffer and touches no media page.
	 */
	uint64_t *written;
	/*
	 * Metadata (ms > 0; mdstore.c), kept apart from the data so that a
	 * data image stays a plain image: RAM, or the sidecar file
	 * FILE.md (a 4 KiB header naming the format, then the metadata of
	 * every block in turn). Stored inverted, so that what was never
	 * written (a zero page, a hole) reads as all FFh.
	 */
	uint8_t *md; /* RAM: md_len bytes; NULL for a file or ms = 0 */
	uint64_t md_len;
	int mdfd; /* the sidecar, -1 if none */
	char mdpath[PATH_MAX + 4];
};

/* Metadata bytes per block the emulator offers (ms=). */
static inline bool emu_ms_valid(uint32_t ms)
{
	return ms == 0 || ms == 8 || ms == 16 || ms == 32 || ms == 64 ||
	       ms == 128;
}

/* Open the metadata store for @p's format (media open); 0 or -errno
 * with a message (a sidecar of another format: -EINVAL). */
int emu_md_open(struct emu_media *m, const struct nvq_emu_params *p);
void emu_md_close(struct emu_media *m);
/*
 * Move @len bytes of metadata at @off of the store (block b of
 * namespace n: ((n - 1) * blocks + b) * ms) from / to @buf. 0 or -errno.
 */
int emu_md_rw(struct emu_media *m, uint64_t off, uint8_t *buf, uint64_t len,
	      bool write);
/* Set [@off, @off + @len) to @val: FFh = never written, 0h = zeroed. */
int emu_md_fill(struct emu_media *m, uint64_t off, uint64_t len, uint8_t val);
/* Format: the store for format @p, every block's metadata FFh again. */
int emu_md_format(struct emu_media *m, const struct nvq_emu_params *p);

/*
 * RAM, or the backing file (created, locked: -EBUSY when another
 * controller or process has it; extended and reserved: -ENOSPC when the
 * file system lacks the room), for all namespaces.
 */
int emu_media_open(struct emu_media *m, const struct nvq_emu_params *p);
/* Unmap or close; no sync (an unsafe power loss keeps the page cache). */
void emu_media_close(struct emu_media *m);
/* Make [@off, @off + @len) durable (file backing); 0 or -errno. */
int emu_media_sync(struct emu_media *m, uint64_t off, uint64_t len);
/*
 * Copy between the media at @off and the host segments @seg[0..@n);
 * *@done gets the bytes moved. 0, or -errno of a media error (the file
 * ended early: -ENODATA; full: -ENOSPC) - never a signal.
 */
int emu_media_rw(struct emu_media *m, uint64_t off, const struct emu_seg *seg,
		 uint32_t n, bool write, uint64_t *done);
/*
 * Zero a range, giving whole pages back to the system (RAM) or turning
 * the range into zeroes without writing them (file); @dealloc also
 * releases a file's space. 0 or -errno.
 */
int emu_media_zero(struct emu_media *m, uint64_t off, uint64_t len,
		   bool dealloc);
/* Quantiles in a lognormal latency table (a power of two). */
#define EMU_LAT_TABLE_BITS 12

/*
 * The sampler of one command class, built from a struct nvq_emu_lat_dist
 * once: a draw is one generator step, a compare and a table load.
 */
struct emu_lat {
	bool random; /* false: always @base */
	uint64_t base; /* fixed latency, or the uniform lower bound */
	uint64_t span; /* uniform: hi - lo */
	uint32_t *table; /* lognormal quantiles (ns), or NULL */
	uint32_t slow_thr; /* P(outlier) * 2^32 */
	uint64_t slow_lo, slow_span;
};

/*
 * Build the sampler of @d (@fixed_ns for NVQ_EMU_LAT_FIXED); -EINVAL for
 * parameters the parser would reject, -ENOMEM.
 */
int emu_lat_init(struct emu_lat *l, const struct nvq_emu_lat_dist *d,
		 uint64_t fixed_ns);
/* Free what emu_lat_init() allocated. */
void emu_lat_fini(struct emu_lat *l);
/* One latency in ns from @l, advancing the generator state *@rng. */
uint64_t emu_lat_sample(const struct emu_lat *l, uint64_t *rng);

/* Build the read and write samplers of @c from its parameters. */
int emu_media_lat_init(struct nvq_emu *c);
/* Free them. */
void emu_media_lat_fini(struct nvq_emu *c);
/* Device thread: latency of the next command @opcode, in ns. */
uint64_t emu_media_latency(struct nvq_emu *c, uint8_t opcode);

/* ------------------------------------------------------------------ */
/* Queues and commands                                                 */
/* ------------------------------------------------------------------ */

struct emu_sq;

/* A fetched command waiting for its completion time. */
struct emu_cmd {
	struct nvq_sqe sqe;
	uint64_t due;
	struct emu_sq *sq;
	uint32_t heap_idx;
	uint16_t slot;
};

/* Execution context of one command. */
struct emu_req {
	const struct nvq_sqe *sqe;
	struct emu_sq *sq;
	uint32_t dw0;
	uint16_t err_loc; /* error log: byte offset in SQE | bit << 8 */
	uint64_t err_lba;
	bool held; /* not completed now (AER) */
};

struct emu_cq {
	struct nvq_cqe *ring; /* host memory */
	uint64_t iova;
	uint32_t size;
	uint16_t qid;
	uint16_t head, tail;
	uint16_t phase;
	uint16_t iv;
	bool ien;
	bool pc;
	uint32_t nr_sqs;
	uint32_t *db; /* MMIO head doorbell */
	uint32_t *shadow, *eventidx; /* Doorbell Buffer Config, or NULL */
	bool bad_db;
	uint32_t bad_val;
	/* Completions held while the CQ is full, in order. */
	struct nvq_cqe *ovf;
	uint32_t ovf_cap, ovf_head, ovf_cnt;
	/* Interrupts: CQEs posted since the last signal. */
	uint32_t irq_cnt;
	uint64_t irq_first;
	bool in_batch;
};

struct emu_sq {
	struct nvq_sqe *ring; /* host memory */
	uint64_t iova;
	uint32_t size;
	uint16_t qid;
	uint16_t head, tail;
	uint16_t prio;
	bool pc;
	struct emu_cq *cq;
	uint32_t *db; /* MMIO tail doorbell */
	uint32_t *shadow, *eventidx;
	bool bad_db;
	uint32_t bad_val;
	uint32_t idx; /* position in the controller's active list */
	/* Command slots for commands that wait for their latency. */
	struct emu_cmd *cmds;
	uint16_t *free_slots;
	uint32_t nr_free;
};

struct emu_seg {
	uint8_t *p;
	uint64_t len;
};

struct emu_features {
	uint32_t arbitration;
	uint32_t power_mgmt;
	uint16_t temp_over, temp_under;
	uint32_t err_recovery;
	bool wce;
	bool nq_set; /* Number of Queues allocated since reset */
	uint16_t nsqa, ncqa; /* granted, 1's based */
	uint32_t irq_coalesce;
	uint32_t write_atomic;
	uint32_t async_cfg;
	uint8_t *irq_cd; /* per vector: coalescing disabled */
};

struct emu_smart {
	uint64_t read_512, write_512; /* bytes / 512 */
	uint64_t host_reads, host_writes;
	uint64_t busy_ns;
	uint64_t media_errors;
	uint64_t power_cycles, unsafe_shutdowns;
	bool dirty; /* enabled since the last orderly shutdown */
};

struct emu_aer_event {
	uint8_t type, info, lid;
};

struct nvq_emu {
	/* Host-written words the device thread polls. */
	uint32_t *dbs; /* doorbell words: [2*qid] SQ tail, [2*qid+1] CQ head */
	uint8_t *db_live; /* atomic, per doorbell word: its queue exists */
	uint32_t nr_dbs;
	uint32_t dstrd;
	uint32_t regs[16]; /* BAR0 0x00..0x3f, atomic */
	uint32_t cc_events; /* atomic: CC_EV_* from host writes */
	uint32_t bad_db_reg; /* atomic: write outside the doorbell array */
	uint32_t stop; /* atomic */
	int sleeping __attribute__((aligned(64))); /* futex word */
	int running; /* atomic: the device thread is alive */
	/*
	 * Whoever runs the device holds svc: the device thread, or a host
	 * thread lending its CPU (nvq_emu_assist()). beat counts the device
	 * thread's loops (atomic), so that a host thread can tell a device
	 * thread that runs from one waiting for a CPU.
	 */
	pthread_mutex_t svc;
	uint64_t beat;
	uint64_t assist_beat; /* atomic: beat at the last assist look */
	uint64_t assist_ns; /* atomic: when assist_beat last changed */
	uint64_t assists; /* atomic: passes run by host threads */
	uint64_t idle_assists; /* device thread: assists at its last idle */
	uint64_t assisted_at; /* device thread: when they last grew */

	struct nvq_emu_params p;
	int *irq_fds;
	/*
	 * Per vector, MSI-X style (nvq_emu_irq_mask()): masked, and a signal
	 * held back while masked (the pending bit). Atomic: the host side
	 * writes irq_mask, the device thread irq_pend.
	 */
	uint8_t *irq_mask;
	uint8_t *irq_pend;
	uint64_t irq_held; /* signals held back by a mask (device thread) */
	uint32_t nr_vec;
	pthread_t thread;
	bool thread_started;
	struct emu_iommu iommu;
	struct emu_media media;
	uint64_t ns_blocks; /* NSZE */
	uint32_t lba_size;
	uint64_t max_xfer; /* bytes per command, from MDTS and NLB */
	char sn[21];
	uint64_t created_ns;

	/* ---- device thread state ---- */
	uint32_t cc; /* CC as enabled */
	bool enabled, ready, fatal, shut;
	uint64_t rdy_at;
	uint32_t page_size;
	struct emu_sq **sqs; /* [qid], qpairs + 1 */
	struct emu_cq **cqs;
	struct emu_sq **active; /* existing SQs, for the fetch loop */
	uint32_t nr_active;
	uint32_t rr;
	uint32_t nr_io_sqs, nr_io_cqs;
	uint32_t ovf_cqs; /* CQs holding completions */

	struct emu_cmd **heap; /* pending commands by due time */
	uint32_t heap_n, heap_cap;
	uint32_t nr_slots; /* command slots of all SQs: the heap's bound */

	uint16_t aer_cids[EMU_AERL + 1];
	uint32_t nr_aer;
	struct emu_aer_event aerq[EMU_AER_QUEUE];
	uint32_t nr_aerq;
	uint8_t aer_mask; /* types masked until their log page is read */

	struct emu_features feat;
	struct nvq_error_log errlog[EMU_ERRLOG_MAX]; /* p.elpe + 1 used */
	uint64_t err_count;
	struct emu_smart smart;

	struct emu_seg *segs; /* PRP walk scratch */
	uint32_t max_segs;
	uint8_t *bounce; /* admin data scratch, 4 KiB aligned */
	bool ns_changed; /* Changed Namespace List: every NSID (Format) */
	/* Sanitize (sanitize.c): SSTAT, its command, when it ends. */
	uint32_t san_sstat, san_cdw10, san_pattern;
	bool san_failed_ause, san_exited;
	uint64_t san_start, san_end;
	/* Metadata formats: a command's data and metadata (nvm.c). */
	uint8_t *xdata, *xmd;
	uint64_t xdata_len, xmd_len;
	size_t bounce_len;

	bool dbbuf_on;
	uint64_t dbbuf_iova, ei_iova;
	uint32_t *dbbuf, *ei; /* host pages */

	struct emu_cq **batch; /* CQs with unsignalled CQEs */
	uint32_t nr_batch;
	bool coalesce_on; /* Interrupt Coalescing set non-zero */

	bool shn_pending; /* CC.SHN seen, SHST not complete yet */
	uint64_t idle_start; /* 0 while busy */

	/* Media latency samplers (media.c) and their generator. */
	struct emu_lat lat_read, lat_write;
	uint64_t lat_rng;

	/*
	 * Fault injection (fault.c). The hot path reads fault_armed alone;
	 * everything else is looked at only when a fault is armed or a
	 * completion is held back.
	 */
	struct emu_faults *faults; /* armed faults, counters (own lock) */
	uint32_t fault_armed; /* atomic: faults are armed */
	uint32_t fault_kick; /* atomic: a fault to fire at once */
	uint32_t gone; /* atomic: vanished; registers read all ones */
	uint32_t nr_delayed; /* device thread: completions held back */
};

#define CC_EV_EN_RISE 0x1
#define CC_EV_EN_FALL 0x2
#define CC_EV_SHN 0x4

/* Doorbell word access. */
static inline uint32_t emu_load_acq(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void emu_store_rel(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Sequentially consistent forms, for the sleep/wake handshake. */
static inline uint32_t emu_load_sc(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static inline void emu_store_sc(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* ---- device.c ---- */

/* Host side: wake the device thread if it sleeps (cheap when it does not). */
void emu_kick(struct nvq_emu *c);

/*
 * One turn of the device loop without its sleep (device.c): what the
 * device thread does each time round, and what a harness that runs the
 * device on its own thread (tests/fuzz) calls. Returns the commands and
 * completions processed; *@events says whether a register or IOMMU event
 * was handled.
 */
unsigned int emu_service(struct nvq_emu *c, bool *events);
/* Device thread: update CSTS (the only writer). */
void emu_set_csts(struct nvq_emu *c, uint32_t set, uint32_t clear);
/* Device thread: controller fatal status; queues stop until a reset. */
void emu_fatal(struct nvq_emu *c, const char *why);
/* Execute @sqe fetched from @sq and post its completion (unless held). */
void emu_exec(struct nvq_emu *c, struct emu_sq *sq, const struct nvq_sqe *sqe);

/* ---- regs.c ---- */

/* Fill CAP and VS from the parameters. */
void emu_regs_init(struct nvq_emu *c);
/* Device thread: act on CC_EV_* events collected from host CC writes. */
void emu_cc_events(struct nvq_emu *c, uint32_t ev);
/* Device thread: CC.EN 1 -> 0, back to the power-on state. */
void emu_reset(struct nvq_emu *c);
/* Device thread: set CSTS.RDY once enabled and rdy_delay has passed. */
void emu_poll_ready(struct nvq_emu *c);

/* ---- queue.c ---- */

/*
 * Create SQ/CQ @qid of @size entries at device address @iova (@pc:
 * contiguous, else @iova is a PRP list). -EFAULT when the ring is not in
 * mapped memory, -ENOMEM. The caller checked every field.
 */
int emu_sq_create(struct nvq_emu *c, uint16_t qid, uint64_t iova, uint32_t size,
		  struct emu_cq *cq, uint16_t prio, bool pc);
int emu_cq_create(struct nvq_emu *c, uint16_t qid, uint64_t iova, uint32_t size,
		  uint16_t iv, bool ien, bool pc);
/* Delete an SQ; commands still waiting complete as aborted (SQ deletion). */
void emu_sq_delete(struct nvq_emu *c, struct emu_sq *sq);
/* Delete a CQ that has no SQs left; held completions are dropped. */
void emu_cq_delete(struct nvq_emu *c, struct emu_cq *cq);
/* Reset: drop every queue and pending command without completions. */
void emu_queues_delete_all(struct nvq_emu *c);
/* Re-translate queue rings and shadow pages after an IOMMU change;
 * false if one is no longer mapped. */
bool emu_queues_remap(struct nvq_emu *c);
/* Switch the existing I/O queues to the configured shadow doorbells. */
void emu_queues_bind_dbbuf(struct nvq_emu *c);
/* Fetch and start commands from every SQ; returns how many. */
unsigned int emu_fetch(struct nvq_emu *c);
/* Execute a command whose media latency has expired; frees its slot. */
void emu_cmd_done(struct nvq_emu *c, struct emu_cmd *cmd);
/* Post a completion for @cid of @sq (held if the CQ is full); errors are
 * logged with @req's details (may be NULL). */
void emu_complete(struct nvq_emu *c, struct emu_sq *sq, uint16_t cid,
		  uint16_t status, uint32_t dw0, const struct emu_req *req);
/* Post held completions where CQ space was freed; returns how many. */
unsigned int emu_flush_overflow(struct nvq_emu *c);
/* Signal the vectors of CQs that got entries this pass (coalescing). */
void emu_irq_flush(struct nvq_emu *c);
/* Any doorbell news? With @publish, write EventIdx first (see queue.c). */
bool emu_queues_idle_check(struct nvq_emu *c, bool publish);
/* Earliest time a coalesced interrupt is due, UINT64_MAX if none. */
uint64_t emu_irq_deadline(struct nvq_emu *c);

/* ---- admin.c, nvm.c: return the NVMe status, fill @req->dw0 ---- */

/* LBA formats of Identify Namespace: [d * EMU_NR_MS + m] is
 * emu_lbaf_ds[d] with emu_lbaf_ms[m] bytes of metadata. */
#define EMU_NR_MS 6
#define EMU_NR_LBAF (2 * EMU_NR_MS)
extern const uint8_t emu_lbaf_ds[2];
extern const uint16_t emu_lbaf_ms[EMU_NR_MS];
/* The format index of (@lbads, @ms), -1 if none. */
int emu_lbaf_index(uint32_t lbads, uint32_t ms);

/* Sanitize (sanitize.c). Admin opcode 84h, log 81h. */
#define EMU_ADMIN_SANITIZE 0x84
#define EMU_LOG_SANITIZE 0x81
/* Finish a sanitize whose time has come. */
void emu_sanitize_poll(struct nvq_emu *c);
/* 0, or the status that refuses @sqe while a sanitize runs or failed. */
uint16_t emu_sanitize_block(struct nvq_emu *c, const struct nvq_sqe *sqe,
			    bool admin);
uint16_t emu_sanitize(struct nvq_emu *c, struct emu_req *req);
/* The Sanitize Status log (512 bytes) into @buf; returns its size. */
size_t emu_sanitize_log(struct nvq_emu *c, uint8_t *buf);

/* Execute an admin command. */
uint16_t emu_admin_exec(struct nvq_emu *c, struct emu_req *req);
/* Execute an NVM command. */
uint16_t emu_nvm_exec(struct nvq_emu *c, struct emu_req *req);
/* Reset: forget outstanding AERs and queued events. */
void emu_admin_reset(struct nvq_emu *c);

/* ---- prp.c: data pointers; return an NVMe status ---- */

/* Validate and translate the PRPs of a @len-byte transfer into c->segs
 * (*@nseg entries). */
uint16_t emu_prp_map(struct nvq_emu *c, uint64_t prp1, uint64_t prp2,
		     uint64_t len, uint32_t *nseg);
/* Copy @len bytes to / from the host buffer that @sqe's PRPs describe. */
uint16_t emu_dma_to_host(struct nvq_emu *c, const struct nvq_sqe *sqe,
			 const void *src, uint64_t len);
uint16_t emu_dma_from_host(struct nvq_emu *c, const struct nvq_sqe *sqe,
			   void *dst, uint64_t len);

/* ---- timer.c: min-heap of commands by due time ---- */

/* Make room for @want entries in all (at SQ creation, not on the I/O
 * path): the command slots of every SQ. */
int emu_heap_reserve(struct nvq_emu *c, uint32_t want);
/* Add @cmd (room reserved). */
void emu_heap_push(struct nvq_emu *c, struct emu_cmd *cmd);
/* Remove and return the earliest command due at @now, or NULL. */
struct emu_cmd *emu_heap_pop_due(struct nvq_emu *c, uint64_t now);
/* Remove @cmd wherever it is (Abort, SQ deletion). */
void emu_heap_remove(struct nvq_emu *c, struct emu_cmd *cmd);
/* Due time of the earliest command, UINT64_MAX if none. */
static inline uint64_t emu_heap_next(const struct nvq_emu *c)
{
	return c->heap_n ? c->heap[0]->due : UINT64_MAX;
}

/* ---- log.c: error log, SMART, asynchronous events ---- */

/* Add an Error Information entry for a failed command. */
void emu_log_error(struct nvq_emu *c, uint16_t sqid, uint16_t cid,
		   uint16_t status, const struct emu_req *req);
/* Queue an asynchronous event and deliver what can be delivered. */
void emu_aer_raise(struct nvq_emu *c, uint8_t type, uint8_t info, uint8_t lid);
/* Complete outstanding AERs with queued, unmasked events. */
void emu_aer_deliver(struct nvq_emu *c);
/* Get Log Page. */
uint16_t emu_get_log_page(struct nvq_emu *c, struct emu_req *req);
/*
 * Power-on (creation): load the power cycle and unsafe shutdown counts of
 * a file-backed device (kept in an extended attribute of the file).
 */
void emu_smart_power_on(struct nvq_emu *c);
/* CC.EN 0 -> 1 succeeded: count it as unsafe if the last one was not
 * followed by a shutdown. */
void emu_smart_enabled(struct nvq_emu *c);
/* Shutdown processing completed (CSTS.SHST = 10b). */
void emu_smart_shutdown(struct nvq_emu *c);
/* Composite temperature in Kelvin. */
uint16_t emu_temperature(const struct nvq_emu *c);
/* Raise the SMART temperature event if a threshold is crossed. */
void emu_check_temperature(struct nvq_emu *c);

/* ---- features.c ---- */

/* Every feature to its default (creation and reset). */
void emu_features_default(struct nvq_emu *c);
/* Set Features / Get Features. */
uint16_t emu_set_features(struct nvq_emu *c, struct emu_req *req);
uint16_t emu_get_features(struct nvq_emu *c, struct emu_req *req);

/* ---- fault.c: fault injection hooks ---- */
#include "fault.h"

#pragma GCC visibility pop

#endif /* NVQ_EMU_INTERNAL_H */
