/* SPDX-License-Identifier: MIT */
/*
 * The transport interface: everything the driver may do to a controller.
 * A transport exposes the controller's registers (BAR0), doorbells, DMA
 * mapping (the IOMMU) and interrupt vectors as eventfds - the same view a
 * driver has of a PCIe device. The driver never learns what is behind it.
 */
#ifndef NVQ_TRANSPORT_H
#define NVQ_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nvq_transport;

struct nvq_transport_ops {
	const char *name; /* "emu", "vfio" */

	/* Release everything the transport holds (the device is disabled
	 * by the driver before this). */
	void (*close)(struct nvq_transport *t);

	/* Controller register access at byte offset @off of BAR0. */
	uint32_t (*reg_read32)(struct nvq_transport *t, uint32_t off);
	uint64_t (*reg_read64)(struct nvq_transport *t, uint32_t off);
	void (*reg_write32)(struct nvq_transport *t, uint32_t off,
			    uint32_t val);
	void (*reg_write64)(struct nvq_transport *t, uint32_t off,
			    uint64_t val);

	/*
	 * Doorbell write at byte offset @off (>= NVQ_REG_DBS). Hot path: one
	 * call per batch. Has release semantics: queue memory written before
	 * the call is visible to the device when it sees the new value.
	 */
	void (*db_write)(struct nvq_transport *t, uint32_t off, uint32_t val);

	/*
	 * Map [@vaddr, @vaddr + @len) for device access; both must be multiples
	 * of 4096. On success *@iova is the device address of @vaddr (also a
	 * multiple of 4096). -ENOSPC when the IOMMU has no room, -EPERM/-ENOMEM
	 * when pinning fails.
	 */
	int (*dma_map)(struct nvq_transport *t, void *vaddr, size_t len,
		       uint64_t *iova);
	/* Undo dma_map of exactly that range. */
	int (*dma_unmap)(struct nvq_transport *t, void *vaddr, size_t len);

	/* The eventfd signalled by MSI-X vector @vector, or -EINVAL. */
	int (*irq_fd)(struct nvq_transport *t, unsigned int vector);

	/* The CPU that takes vector @vector's interrupts, -1 if unknown. */
	int (*irq_cpu)(struct nvq_transport *t, unsigned int vector);

	/*
	 * Optional: mask (@masked) or unmask vector @vector, as the MSI-X
	 * table's mask bit does: a masked vector does not signal its eventfd
	 * but remembers that it would have, and signals it when unmasked.
	 * 0, or -ENOTSUP where the transport cannot (then it never will).
	 */
	int (*irq_mask)(struct nvq_transport *t, unsigned int vector,
			bool masked);

	/*
	 * Optional, for host_cpu devices: a poller found nothing; let the
	 * device use this CPU for a moment if it is not running (see
	 * nvq_emu_assist()). > 0 when it did work, 0 when it needed none,
	 * -EBUSY when it is running and yielding the CPU may help.
	 */
	int (*assist)(struct nvq_transport *t);

	/*
	 * Optional, for transports whose device side runs in the library
	 * (tcp): move what the device received for queue @qid into its CQ
	 * ring. Reapers call it before they look at the CQ, inside their
	 * critical section (cq_lock, or the exclusive queue's gate).
	 */
	void (*pump)(struct nvq_transport *t, uint16_t qid);

	/*
	 * Optional, with pump: a file descriptor that polls readable while
	 * vector @vector's queues may have news that only pump() brings
	 * (level-triggered; never read or written by the caller, stable for
	 * the transport's life). Waiters and completion threads watch it
	 * beside the eventfd. -1: none.
	 */
	int (*poll_fd)(struct nvq_transport *t, unsigned int vector);

	/*
	 * Optional: the driver is closing; end now what the device side may
	 * be waiting for (a reconnect's delay), so that close never waits
	 * out a timeout. Any thread, before the watchdog is joined.
	 */
	void (*cancel)(struct nvq_transport *t);
};

struct nvq_transport {
	const struct nvq_transport_ops *ops;
	/*
	 * The device runs on this process's CPUs (the emulator): a poll loop
	 * must let it run, where a real device needs no CPU of ours.
	 */
	bool host_cpu;
	unsigned int nr_vectors; /* MSI-X vectors available */
	int numa_node; /* the device's NUMA node, -1 if unknown */
	char name[96]; /* human-readable device name */
	/*
	 * The device takes data pointers as SGLs only (PSDT 01b, one Data
	 * Block descriptor per command: fabrics transports); PRPs otherwise.
	 */
	bool sgl;
	/*
	 * Set by the driver: the transport found the device broken (a
	 * connection died, keep-alive expired) and asks for a controller
	 * reset. Any thread; must not block.
	 */
	void (*fault)(void *arg, int err, const char *why);
	void *fault_arg;
};

/*
 * A poll loop found no completion on a device of transport @t. Polling a
 * real device needs no CPU of ours: nothing happens. A device that runs
 * on our CPUs (host_cpu) gets this CPU lent every NVQ_IDLE_ASSIST_EVERY
 * empty looks, and the CPU is yielded every NVQ_IDLE_YIELD_EVERY, so that
 * no poller starves the device thread or another thread of the process
 * on a machine whose CPUs are all busy. Per thread; no shared state.
 */
#define NVQ_IDLE_ASSIST_EVERY 16u
#define NVQ_IDLE_YIELD_EVERY 64u
void nvq_transport_idle_slow(struct nvq_transport *t);
static inline void nvq_transport_idle(struct nvq_transport *t)
{
	if (__builtin_expect(t && t->host_cpu, 0))
		nvq_transport_idle_slow(t);
}

/*
 * Open the transport for @uri ("emu:...", "vfio:...", "tcp:..."). On
 * failure returns a negative errno and leaves a message (nvq_errmsg()).
 */
int nvq_transport_open(const char *uri, struct nvq_transport **t);

/* The largest namespace id a URI may name (FFFFFFFFh is the broadcast). */
#define NVQ_URI_NSID_MAX 0xfffffffeu

/*
 * The namespace a device URI names with its "/NSID" suffix, the one
 * grammar of nvq_open(), nvq-perf's -d and the fio engine's file names:
 *   vfio:DDDD:BB:DD.F[/NSID][,opts]  right after the PCI address;
 *   emu:[key=val,...][/NSID]        at the very end;
 *   tcp:HOST[:PORT][/NSID][,opts]   right after the address, or
 *   tcp:HOST[:PORT],opts[/NSID]     at the very end (a trailing
 *                                   "/DIGITS": an NQN's own '/' followed
 *                                   by other text stays the NQN's).
 * An emu: parameter's value may hold a '/' (lat=80us/20us): a trailing
 * "/DIGITS" is the namespace all the same, other text after the last '/'
 * of a value is the value's; a last part without '=' before its first '/'
 * ("emu:/x", "emu:ns=2,/1/2") is a suffix and must be one NSID.
 * *@nsid gets the namespace (0: none) and @dev (@len bytes) the URI
 * without the suffix. Other schemes come back unchanged with *@nsid 0.
 * Returns 0, or -EINVAL with a message for a suffix that is no namespace
 * id (empty, not decimal, 0, above NVQ_URI_NSID_MAX) or -ENAMETOOLONG
 * when the URI does not fit @dev.
 */
int nvq_uri_split_nsid(const char *uri, char *dev, size_t len, uint32_t *nsid);

/* Transport constructors, called by nvq_transport_open() with the part of
 * the URI after the scheme's colon. */
typedef int (*nvq_transport_open_fn)(const char *params,
				     struct nvq_transport **t);
int nvq_emu_transport_open(const char *params, struct nvq_transport **t);
int nvq_vfio_transport_open(const char *params, struct nvq_transport **t);
int nvq_tcp_transport_open(const char *params, struct nvq_transport **t);

/*
 * The emulated device behind an "emu:" transport, NULL for any other: for
 * tests that arm faults on the device (emu/emu.h) at a precise moment.
 */
struct nvq_emu;
struct nvq_emu *nvq_emu_transport_device(struct nvq_transport *t);

/*
 * For tests (static archive only): URIs "test:PARAMS" open a transport
 * through @open (NULL: the scheme is unknown again), so that a test can put
 * a scripted fake device behind nvq_open() without symbol interposition.
 */
void nvq_transport_set_test(nvq_transport_open_fn open);

#endif /* NVQ_TRANSPORT_H */
