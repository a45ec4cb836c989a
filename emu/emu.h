/* SPDX-License-Identifier: MIT */
/*
 * The emulated NVMe controller: a strict NVMe 2.0 controller (NVM command
 * set) running on its own thread inside the process. It knows nothing of
 * the driver; the driver reaches it through the same things a PCIe device
 * offers: BAR0 registers, doorbells, DMA through an IOMMU (the emulator is
 * that IOMMU) and MSI-X vectors delivered as eventfds.
 *
 * Threading: every function here may be called from any host thread while
 * the device thread runs. Register and doorbell accesses are atomic;
 * dma_map/dma_unmap serialise among themselves and synchronise with the
 * device thread, so that once dma_unmap returns the device no longer
 * touches that memory.
 *
 * Errors: functions return 0 or a negative errno and leave a message for
 * the calling thread in nvq_emu_errmsg().
 */
#ifndef NVQ_EMU_H
#define NVQ_EMU_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nvq_emu;

/* Shapes of a latency distribution (struct nvq_emu_lat_dist). */
enum nvq_emu_lat_kind {
	NVQ_EMU_LAT_FIXED = 0, /* the class's fixed *_ns */
	NVQ_EMU_LAT_UNIFORM, /* uniform in [lo, hi] */
	NVQ_EMU_LAT_LOGNORMAL, /* median lo, 99th percentile hi */
};

/* Distribution parameters are capped here (sampled values fit 32 bits). */
#define NVQ_EMU_LAT_DIST_MAX_NS 1000000000ull

/*
 * The latency distribution of one command class. With probability
 * slow_ppm / 10^6 a command is a slow outlier instead (a NAND read retry,
 * a cache flush stall): uniform in [slow_lo, slow_hi].
 */
struct nvq_emu_lat_dist {
	enum nvq_emu_lat_kind kind;
	uint64_t lo, hi;
	uint32_t slow_ppm; /* 0 = no outliers */
	uint64_t slow_lo, slow_hi;
};

/*
 * Media timing per command class: a fixed latency or a distribution,
 * sampled per command from tables built at creation (no syscalls, a few
 * instructions per command) with a generator seeded by @seed, so a run is
 * repeatable. A command completes no earlier than its fetch time plus its
 * latency.
 */
struct nvq_emu_media_model {
	uint64_t read_ns; /* Read: fixed latency, or the median */
	uint64_t write_ns; /* Write, Write Zeroes, DSM, Flush: the same */
	struct nvq_emu_lat_dist read, write; /* FIXED: *_ns alone */
	uint64_t seed; /* latency generator seed (lat_seed=) */
};

/* ------------------------------------------------------------------ */
/* Fault injection (emu/fault.c; the syntax is in docs/faults.md)      */
/* ------------------------------------------------------------------ */

/* What an armed fault does when its trigger fires. */
enum nvq_emu_fault_kind {
	NVQ_EMU_FAULT_DROP_CQE = 0, /* executed, no completion ever posted */
	NVQ_EMU_FAULT_DELAY, /* the completion is posted delay_ns late */
	NVQ_EMU_FAULT_DUP_CQE, /* the completion is posted twice */
	NVQ_EMU_FAULT_BAD_CID, /* ... with a wrong command id instead */
	NVQ_EMU_FAULT_BAD_SQID, /* ... with a wrong SQ id instead */
	NVQ_EMU_FAULT_STATUS, /* not executed: fails with @status */
	NVQ_EMU_FAULT_CFS, /* CSTS.CFS; the command is lost */
	NVQ_EMU_FAULT_NO_READY, /* CC.EN 0 -> 1 never sets CSTS.RDY */
	NVQ_EMU_FAULT_CORRUPT, /* a Read returns @bytes bytes inverted */
	NVQ_EMU_FAULT_NO_IRQ, /* the completion raises no interrupt */
	NVQ_EMU_FAULT_VANISH, /* surprise removal: reads all ones, no CQEs */
	NVQ_EMU_FAULT_NR
};

/* Which commands a fault counts (on=). */
enum nvq_emu_fault_on {
	NVQ_EMU_ON_ANY = 0,
	NVQ_EMU_ON_ADMIN, /* admin queue */
	NVQ_EMU_ON_IO, /* any I/O queue */
	NVQ_EMU_ON_READ, /* NVM Read */
	NVQ_EMU_ON_WRITE, /* NVM Write */
	NVQ_EMU_ON_ADMIN_OPC, /* admin command @opcode */
	NVQ_EMU_ON_IO_OPC, /* I/O command @opcode */
};

/* count: no limit. */
#define NVQ_EMU_FAULT_FOREVER UINT64_MAX
/* URI faults per controller (fault= items), and armed faults at once. */
#define NVQ_EMU_MAX_PARAM_FAULTS 16
#define NVQ_EMU_MAX_FAULTS 64

/*
 * One fault. Zero-initialised it is "drop-cqe on the next command"; the
 * string form (nvq_emu_fault_parse()) fills the same fields. A fault
 * counts the commands it matches (@on, @qid) as the controller executes
 * them and fires on the @nth one, or on each with probability @prob, at
 * most @count times; then it is spent and disarmed.
 */
struct nvq_emu_fault {
	enum nvq_emu_fault_kind kind;
	enum nvq_emu_fault_on on;
	uint8_t opcode; /* NVQ_EMU_ON_*_OPC */
	bool has_qid; /* only commands of SQ @qid; false: every queue */
	uint16_t qid;
	uint64_t nth; /* 1-based; 0 = 1 */
	double prob; /* 0 < prob <= 1 instead of @nth; 0 = use @nth */
	/* fires at most; 0 = 1 with @nth, forever with @prob; no-ready: resets */
	uint64_t count;
	bool now; /* cfs, vanish: fire at once, no command needed */
	bool seeded; /* @seed given; else derived from fault_seed */
	uint64_t seed; /* @prob and corrupt's byte positions */
	uint64_t delay_ns; /* delay: how late (at most 1 hour) */
	/* status: the status field, NVQ_STATUS_MAKE(sct, sc), and
	 * NVQ_STATUS_DNR_BIT for "do not retry" */
	uint16_t status;
	int32_t id; /* bad-cid/bad-sqid: the id posted, -1 = default */
	uint32_t bytes; /* corrupt: bytes inverted, 0 = 1 */
};

/* Device parameters; see nvq_emu_params_parse() for the string form. */
struct nvq_emu_params {
	uint64_t ns_size; /* bytes per namespace */
	uint32_t nr_ns; /* namespaces, 1..1024 */
	uint32_t lbads; /* log2 LBA size: 9 or 12 */
	uint32_t qpairs; /* I/O queue pairs granted at most */
	uint32_t mqes; /* CAP.MQES, 0's based */
	uint32_t mdts; /* log2 of max transfer in 4 KiB units, 0 = none */
	struct nvq_emu_media_model media;
	char file[PATH_MAX]; /* backing file, "" = RAM */
	/* Identify's serial number (sn=, 1-20 printable ASCII characters);
	 * "" = derived, stable for the same options (device.c make_sn()) */
	char sn[21];
	uint32_t msix; /* MSI-X vectors */
	uint32_t dstrd; /* CAP.DSTRD */
	bool dbbuf; /* offer Doorbell Buffer Config */
	bool vwc; /* volatile write cache present */
	bool cqr; /* CAP.CQR: contiguous queues required */
	uint32_t to; /* CAP.TO, 500 ms units */
	uint64_t rdy_delay_ns; /* CC.EN -> CSTS.RDY delay */
	uint64_t idle_spin_ns; /* busy-poll this long before sleeping */
	/*
	 * Measurement aid, off by default: I/O completions carry the low 32
	 * bits of CLOCK_MONOTONIC (ns) at CQE posting in DW1, which NVMe
	 * leaves reserved for the NVM Read/Write commands; a host compares
	 * it with the time it ran the callback (host overhead).
	 */
	bool stamp;
	/*
	 * RAM media (no file=) on transparent huge pages where the kernel
	 * offers them for madvise (default on): a first touch faults in
	 * 2 MiB, not 4 KiB, so a benchmark's first seconds do not measure
	 * the page-fault path. thp=0: 4 KiB pages.
	 */
	bool thp;
	/*
	 * RAM media faulted in at creation (populate=1), so that no write
	 * of a benchmark meets a first touch; costs the time the kernel
	 * needs to zero the media (about 2.5 s per GiB measured on a small
	 * VM). Default 0: reads of never-written media come from no memory
	 * at all (they read as zeroes, as deallocated blocks of a drive do),
	 * and only writes touch pages.
	 */
	bool populate;
	/*
	 * Host threads that poll may run device passes on their own CPU
	 * (nvq_emu_assist(), default on). assist=0: only the device thread
	 * does, as before; instruction counts of the host side (bench-cost)
	 * then hold no device work.
	 */
	bool assist;
	/* Faults armed at creation (fault=), and their seed (fault_seed=). */
	struct nvq_emu_fault faults[NVQ_EMU_MAX_PARAM_FAULTS];
	uint32_t nr_faults;
	uint64_t fault_seed;
	/*
	 * LBA format (docs/emu.md "Metadata and protection information"),
	 * as QEMU's nvme-ns: metadata bytes per block (0 8 16 32 64 128),
	 * extended LBA (1: metadata follows each block's data in the data
	 * buffer; 0: a separate buffer at MPTR), protection information
	 * type (0-3, needs ms >= 8, 16b guard), and its place (1: the first
	 * 8 bytes of the metadata, 0: the last 8). A Format NVM changes
	 * these and lbads: nvq_emu_params() then reports the current format.
	 */
	uint32_t ms;
	bool mset;
	uint32_t pi;
	bool pil;
	/* How long a Sanitize runs (sanitize_ms=, default 100 ms), and
	 * sanitize_fail=1: every sanitize operation fails (a test aid). */
	uint64_t sanitize_ns;
	bool sanitize_fail;
	/* elbaf=N (a test aid): the Extended LBA Format dword (STS 6:0, PIF
	 * 8:7, QPIF 12:9) that Identify CNS 05h reports for every format.
	 * Default 0, the truth: 16-bit guards, no storage tag. Protection
	 * information is computed with the 16-bit guard whatever it says. */
	uint32_t elbaf;
	/* Error Information log entries, 0's based as Identify's ELPE
	 * (elpe=, 0..255, default 63). */
	uint32_t elpe;
	/* lpa=N (a test aid): Identify's Log Page Attributes byte, default
	 * 04h (extended data: offsets and NUMDU). With bit 2 clear the
	 * controller fails a Get Log Page that gives an offset or NUMDU. */
	uint32_t lpa;
};

/*
 * Parse @str ("key=val,key=val", "" for defaults) into @p. Keys: size ns
 * lbads qpairs mqes mdts lat lat_seed file msix dstrd dbbuf vwc cqr to
 * rdy_delay idle_spin stamp thp populate assist sn fault fault_seed ms mset
 * pi pil (fault= may repeat, up to
 * NVQ_EMU_MAX_PARAM_FAULTS; see nvq_emu_fault_parse()). Sizes take K/M/G/T suffixes (binary),
 * durations ns/us/ms/s (bare numbers are nanoseconds). On error returns
 * -EINVAL with a message naming the key.
 *
 * lat= is a profile name, or one latency for both classes, or READ/WRITE:
 *   optane                     lognormal:10us-14us for reads and writes
 *   nand                       reads lognormal:80us-250us+0.1%:1ms-4ms,
 *                              writes (to cache) lognormal:20us-60us
 *                              +0.2%:500us-2ms
 *   80us                       fixed
 *   uniform:50us-150us         uniform between the bounds
 *   lognormal:80us-400us       lognormal with median 80us and p99 400us
 * and any of the last three followed by +P%:MIN-MAX: a fraction P percent
 * (0.0001 .. 50) of the commands are slow outliers, uniform in MIN..MAX.
 * Distribution durations are at most 1 s. lat_seed=N seeds the generator.
 */
int nvq_emu_params_parse(const char *str, struct nvq_emu_params *p);

/* Fill @p with the defaults. */
void nvq_emu_params_default(struct nvq_emu_params *p);

/*
 * Create the controller described by @p (media, MSI-X eventfds) and start
 * its thread. The controller starts disabled (CC.EN = 0).
 */
int nvq_emu_create(const struct nvq_emu_params *p, struct nvq_emu **emu);

/*
 * Stop the device thread, join it and free everything. Without a prior
 * shutdown (CC.SHN) this is an unsafe power loss; data written to a
 * file-backed namespace is still in the file (MAP_SHARED page cache).
 */
void nvq_emu_destroy(struct nvq_emu *emu);

/* BAR0 register access (offsets below NVQ_REG_DBS). */
uint32_t nvq_emu_reg_read32(struct nvq_emu *emu, uint32_t off);
uint64_t nvq_emu_reg_read64(struct nvq_emu *emu, uint32_t off);
void nvq_emu_reg_write32(struct nvq_emu *emu, uint32_t off, uint32_t val);
void nvq_emu_reg_write64(struct nvq_emu *emu, uint32_t off, uint64_t val);

/*
 * Doorbell write at BAR0 offset @off (>= NVQ_REG_DBS). Release semantics;
 * wakes the device thread if it sleeps. A write outside the doorbell array
 * raises an error asynchronous event.
 */
void nvq_emu_db_write(struct nvq_emu *emu, uint32_t off, uint32_t val);

/*
 * Map [@vaddr, @vaddr + @len) (page multiples) for device access at a
 * device address (IOVA) that is never equal to @vaddr.
 */
int nvq_emu_dma_map(struct nvq_emu *emu, void *vaddr, size_t len,
		    uint64_t *iova);

/* Undo nvq_emu_dma_map() of exactly [@vaddr, @vaddr + @len). */
int nvq_emu_dma_unmap(struct nvq_emu *emu, void *vaddr, size_t len);

/* Number of MSI-X vectors, and the eventfd of @vector (-EINVAL if none). */
unsigned int nvq_emu_nr_vectors(const struct nvq_emu *emu);
int nvq_emu_irq_fd(const struct nvq_emu *emu, unsigned int vector);
/*
 * Mask or unmask @vector as an MSI-X mask bit does: while masked, a signal
 * sets the vector's pending bit instead of its eventfd; unmasking with the
 * bit set signals it. Any thread. 0 or -EINVAL.
 */
int nvq_emu_irq_mask(struct nvq_emu *emu, unsigned int vector, bool masked);
/* Signals held back by masks so far (each costs no eventfd write). */
uint64_t nvq_emu_irq_held(const struct nvq_emu *emu);

/*
 * Lend the calling thread's CPU to the device for one pass, if its thread
 * is not running: the device thread and the host's threads share this
 * process's CPUs, and on a loaded machine a host thread that polls for
 * completions can otherwise spin through the whole time slice the device
 * thread waits for. Cheap when the device thread runs (one load). Returns
 * the commands the pass completed or fetched (> 0), 0 when the device
 * thread ran since the last look or had nothing to do, or -EBUSY when the
 * device thread is in a pass (then yielding the CPU may help it). Any
 * thread, never while holding a lock the device could need.
 */
int nvq_emu_assist(struct nvq_emu *emu);
/* Passes host threads ran through nvq_emu_assist(). */
uint64_t nvq_emu_assists(const struct nvq_emu *emu);

/* The parameters the controller was created with. */
const struct nvq_emu_params *nvq_emu_params(const struct nvq_emu *emu);

/*
 * Fault injection (docs/faults.md). Parse one fault, the value of a
 * fault= parameter ("drop-cqe@on=read@nth=5"), into @f; -EINVAL with a
 * message on bad syntax.
 */
int nvq_emu_fault_parse(const char *spec, struct nvq_emu_fault *f);

/*
 * Arm @f on a running controller, from any thread: it counts the commands
 * the controller executes from now on, so a test can add it right before
 * the command it means. -EINVAL for an inconsistent @f, -ENOSPC when
 * NVQ_EMU_MAX_FAULTS are armed.
 */
int nvq_emu_fault_add(struct nvq_emu *emu, const struct nvq_emu_fault *f);

/* nvq_emu_fault_parse() and nvq_emu_fault_add() in one. */
int nvq_emu_fault_inject(struct nvq_emu *emu, const char *spec);

/*
 * Disarm every fault (no-ready and no-irq included). What already
 * happened stays: a delayed completion still comes, a fatal controller
 * stays fatal and one waiting for a RDY that will not come waits until
 * the next reset, a vanished one stays gone.
 */
void nvq_emu_fault_clear(struct nvq_emu *emu);

/* How many times faults of @kind took effect since creation. */
uint64_t nvq_emu_fault_count(struct nvq_emu *emu, enum nvq_emu_fault_kind kind);

/* The string form's name of @kind ("drop-cqe"), NULL if out of range. */
const char *nvq_emu_fault_name(enum nvq_emu_fault_kind kind);

/* Message describing the calling thread's last emu failure. */
const char *nvq_emu_errmsg(void);

#endif /* NVQ_EMU_H */
