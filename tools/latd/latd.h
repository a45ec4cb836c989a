/* SPDX-License-Identifier: MIT */
/*
 * nvq-latd: the block layer's CPU latency QoS (the RFC's per-disk
 * cpu_lat_limit_us / cpu_lat_timeout_ms) for the kernel's own disks.
 *
 *   discover.c      block device -> hardware queues, interrupts, CPUs
 *   activity_bpf.c  BPF activity source (block:block_rq_issue)
 *   bpf/latd.bpf.c  the BPF program itself (CO-RE, libbpf skeleton)
 *   config.c        config file and command line settings
 *   main.c          the daemon: QoS core per disk, poll activity source,
 *                   status socket, signals, reload
 *
 * The daemon reuses the library's QoS core (lib/qos/qos.h): one
 * nvq_qos_ctrl per disk carries its limit and timeout, and one
 * nvq_qos_queue per activity counter: per (disk, submitting CPU) with the
 * BPF source, per disk with the poll source.
 */
#ifndef NVQ_LATD_H
#define NVQ_LATD_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/* util.c: snprintf into @err (NULL or 0 @len: nothing) */
void latd_set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* util.c: a cpu_lat_limit_us as status prints it: off, auto, N us */
void latd_limit_text(int us, char *buf, size_t len);

#define LATD_MAX_DISKS 64
#define LATD_NAME_MAX 32
/* Path disks of one nvme multipath head that discovery reports. */
#define LATD_MAX_PATHS 8

/*
 * Where the system's trees are: "/sys", "/proc" and "/dev" normally; tests
 * point them at fixture trees (tests/latd/fixtures/).
 */
struct latd_roots {
	const char *sys;
	const char *proc;
	const char *dev;
};

/* One blk-mq hardware queue of a disk (/sys/block/DEV/mq/N). */
struct latd_hwq {
	int index; /* N */
	cpu_set_t cpus; /* mq/N/cpu_list: the CPUs that submit through it */
	int irq; /* its interrupt, -1 where none was found (polled, unknown) */
	/* /proc/irq/IRQ/effective_affinity_list (else smp_affinity_list) */
	cpu_set_t irq_cpus;
	/* whose queue: -1 the disk's own, else an index into its paths[] */
	int path;
};

/* A hidden path disk of an nvme multipath head ("nvme0c0n1"). */
struct latd_path {
	char name[LATD_NAME_MAX];
	unsigned int major, minor; /* what block:block_rq_issue reports */
};

struct latd_disk {
	char name[LATD_NAME_MAX]; /* "nvme0n1", "vda" */
	unsigned int major, minor; /* from /sys/block/DEV/dev */
	char driver[32]; /* "nvme", "virtio_blk", ... or "" */
	int nr_hwq;
	struct latd_hwq *hwq; /* nr_hwq entries, malloc()ed */
	cpu_set_t online; /* /sys/devices/system/cpu/online */
	cpu_set_t irq_cpus; /* union of the queues' irq_cpus, online only */
	cpu_set_t submit_cpus; /* union of the queues' cpus, online only */
	/* what discovery could not find or had to guess, for status; "" */
	char note[256];
	/*
	 * An nvme multipath head (bio-based, no queues of its own): the path
	 * disks its I/O is issued to; hwq[] holds their queues (hwq.path).
	 * 0 for every other disk.
	 */
	int nr_paths;
	struct latd_path paths[LATD_MAX_PATHS];
};

/*
 * Resolve @spec - a disk name ("nvme0n1"), a path ("/dev/nvme0n1", a
 * /dev/disk/by-id/ link, resolved under @r->dev), or a glob over the names
 * in @r->sys/block ("nvme*n1"; hidden multipath path disks left out) or
 * over the last part of a /dev path ("/dev/disk/by-id/nvme-*") - to
 * whole-disk names, written to @names (at most @max, each once, sorted).
 * A partition resolves to its disk. Returns the count (0 for a glob that
 * matched nothing), or a negative errno with the reason in @err: -ENODEV
 * no such disk, -ENOTBLK not a block device, -E2BIG more than @max,
 * -EINVAL a bad spec, -ELOOP, -EXDEV (a link leading out of /dev).
 */
int latd_resolve(const struct latd_roots *r, const char *spec,
		 char (*names)[LATD_NAME_MAX], int max, char *err, size_t len);

/*
 * Find the queues, interrupts and CPUs of disk @name. Returns 0 (with
 * d->note saying what was partial), or a negative errno with the reason in
 * @err. Free with latd_disk_free().
 */
int latd_discover(const struct latd_roots *r, const char *name,
		  struct latd_disk *d, char *err, size_t len);
void latd_disk_free(struct latd_disk *d);

/*
 * The hardware queue CPU @cpu submits through, or NULL. For a multipath
 * head: the first path's queue (each path has one for every CPU).
 */
const struct latd_hwq *latd_hwq_of_cpu(const struct latd_disk *d, int cpu);

/*
 * ---- the BPF activity source (activity_bpf.c) ----
 *
 * A program on block:block_rq_issue counts the requests issued to each
 * watched disk per issuing CPU, in a memory-mapped array the daemon reads
 * directly (the QoS core's "submission counter"), and writes an event to a
 * ring buffer only when that (disk, CPU)'s idle flag was set - the
 * idle -> active transition - claiming the flag so one event is sent.
 */
struct latd_bpf;

/*
 * Load and attach. Returns 0, or a negative errno with the reason in @err
 * (built without BPF: -ENOSYS; no BTF; not permitted: -EPERM).
 */
int latd_bpf_open(struct latd_bpf **b, char *err, size_t len);
void latd_bpf_close(struct latd_bpf *b);

/* CPUs the counters cover (possible CPUs). */
int latd_bpf_nr_cpus(const struct latd_bpf *b);

/* Watch the disk @major:@minor in @slot (< LATD_MAX_DISKS); unwatch. */
int latd_bpf_watch(struct latd_bpf *b, int slot, unsigned int major,
		   unsigned int minor);
int latd_bpf_unwatch(struct latd_bpf *b, int slot);

/*
 * The request count of @slot issued from @cpu, incremented by the program
 * (atomically), and its idle flag, which the QoS core owns (1: report the
 * next issue). Both stay valid until latd_bpf_close().
 */
const uint64_t *latd_bpf_counter(struct latd_bpf *b, int slot, int cpu);
uint8_t *latd_bpf_idle(struct latd_bpf *b, int slot, int cpu);

/* A descriptor that polls readable when events wait. */
int latd_bpf_fd(const struct latd_bpf *b);

/* Call @fn for each waiting idle -> active event; returns the count. */
int latd_bpf_drain(struct latd_bpf *b, void (*fn)(void *arg, int slot, int cpu),
		   void *arg);

#endif
