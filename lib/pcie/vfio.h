/* SPDX-License-Identifier: MIT */
/*
 * The vfio-pci transport's parts: the IOVA allocator, the IOMMU backends
 * (iommufd, or the type1 group/container interface) and the sysfs
 * look-ups that turn "0000:01:00.0" into a device the user can open.
 * Internal to lib/; the transport itself is in transport_vfio.c.
 */
#ifndef NVQ_VFIO_H
#define NVQ_VFIO_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct nvq_transport;

/*
 * snprintf() for paths and names: true when everything fit. (A truncated
 * path fails to open, which the callers report.)
 */
static inline bool __attribute__((format(printf, 3, 4)))
nvq_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

/* ------------------------------------------------------------------ */
/* IOVA allocator                                                      */
/* ------------------------------------------------------------------ */

/* An inclusive range of IO virtual addresses. */
struct nvq_iova_range {
	uint64_t start, last;
};

/*
 * Free IOVA space as a sorted list of disjoint free extents: first fit,
 * merge on free. Not thread safe; the IOMMU layer serialises it.
 */
struct nvq_iova {
	struct nvq_iova_range *free;
	size_t nr, cap;
};

/*
 * Start with the @nr ranges the IOMMU allows (any order, may overlap),
 * minus IOVA page 0 (a zero DMA address hides too many bugs). Only whole
 * 4 KiB pages inside the ranges are used.
 */
int nvq_iova_init(struct nvq_iova *a, const struct nvq_iova_range *ranges,
		  size_t nr);

/* Release the allocator's memory. */
void nvq_iova_destroy(struct nvq_iova *a);

/*
 * Allocate @len bytes (a multiple of 4096) at an IOVA congruent to @phase
 * modulo @align (a power of two >= 4096; @phase < @align, a multiple of
 * 4096). Congruence with the virtual address lets the IOMMU use large
 * pages. -ENOSPC when no free extent fits, -EINVAL for bad arguments.
 */
int nvq_iova_alloc(struct nvq_iova *a, uint64_t len, uint64_t align,
		   uint64_t phase, uint64_t *iova);

/*
 * Give back [@iova, @iova + @len). -EINVAL if any of it is already free
 * (a double free) or it wraps.
 */
int nvq_iova_free(struct nvq_iova *a, uint64_t iova, uint64_t len);

/* Total free bytes (for tests and messages). */
uint64_t nvq_iova_free_bytes(const struct nvq_iova *a);

/* ------------------------------------------------------------------ */
/* Device address and options                                          */
/* ------------------------------------------------------------------ */

enum nvq_vfio_iommu_kind {
	NVQ_VFIO_IOMMU_AUTO = 0, /* iommufd when offered, else type1 */
	NVQ_VFIO_IOMMU_IOMMUFD,
	NVQ_VFIO_IOMMU_TYPE1,
};

/* What "vfio:..." says. */
struct nvq_vfio_params {
	char bdf[16]; /* normalised "DDDD:BB:DD.F" */
	uint32_t nsid; /* from "/nsid", 0 if absent (a tool concern) */
	enum nvq_vfio_iommu_kind iommu;
	unsigned int vectors; /* 0 = min(MSI-X table, online CPUs + 1) */
};

/*
 * Parse the part of a URI after "vfio:":
 *   BDF[/nsid][,iommu=auto|iommufd|type1][,vectors=N]
 * BDF is "DDDD:BB:DD.F" or "BB:DD.F" (domain 0), hex digits. -EINVAL with
 * a message naming the bad part.
 */
int nvq_vfio_parse(const char *params, struct nvq_vfio_params *p);

/* ------------------------------------------------------------------ */
/* IOMMU: one address space per open device                            */
/* ------------------------------------------------------------------ */

/* One DMA mapping: which virtual range sits at which IOVA. */
struct nvq_vfio_map {
	uintptr_t vaddr;
	uint64_t len, iova;
};

struct nvq_vfio_iommu {
	enum nvq_vfio_iommu_kind kind; /* IOMMUFD or TYPE1 once open */
	int container_fd; /* type1: /dev/vfio/vfio; iommufd: /dev/iommu */
	int group_fd; /* type1 only, else -1 */
	uint32_t ioas_id; /* iommufd only */
	uint32_t devid; /* iommufd only: the device's bond */

	pthread_mutex_t lock; /* everything below */
	struct nvq_iova iova;
	struct nvq_vfio_map *maps; /* sorted by vaddr */
	size_t nr_maps, cap_maps;
	/* Mappings the kernel still allows (type1 dma_entry_limit);
	 * UINT32_MAX when it does not say. */
	uint32_t maps_left;
	uint64_t pinned; /* bytes mapped, for RLIMIT_MEMLOCK messages */
};

/*
 * Open the device @bdf through iommufd (the vfio cdev @cdev_path, e.g.
 * "/dev/vfio/devices/vfio0", and /dev/iommu). On success *@device_fd is
 * the device, attached to a fresh IOAS. @root prefixes every path ("" for
 * the real system).
 */
int nvq_vfio_iommufd_open(struct nvq_vfio_iommu *m, const char *root,
			  const char *bdf, const char *cdev_path,
			  int *device_fd);

/*
 * Open the device @bdf through its IOMMU group @group (type1): container,
 * group viability, IOMMU type, IOVA ranges and mapping limit. On success
 * *@device_fd is the device.
 */
int nvq_vfio_type1_open(struct nvq_vfio_iommu *m, const char *root,
			const char *bdf, int group, int *device_fd);

/* Drop every mapping and close the IOMMU (after the device fd). */
void nvq_vfio_iommu_close(struct nvq_vfio_iommu *m);

/*
 * Map [@vaddr, @vaddr + @len) (page aligned) for device reads and writes
 * at a fresh IOVA. -ENOSPC when IOVA space or the kernel's mapping count
 * runs out, -ENOMEM when pinning exceeds RLIMIT_MEMLOCK (the message says
 * how much is needed), other negative errnos as the kernel says.
 */
int nvq_vfio_dma_map(struct nvq_vfio_iommu *m, void *vaddr, size_t len,
		     uint64_t *iova);

/* Undo nvq_vfio_dma_map() of exactly that range. */
int nvq_vfio_dma_unmap(struct nvq_vfio_iommu *m, void *vaddr, size_t len);

/* ------------------------------------------------------------------ */
/* The transport                                                        */
/* ------------------------------------------------------------------ */

/*
 * nvq_vfio_transport_open() with every /sys, /dev and /proc path prefixed
 * by @root: the tests point it at a fake tree to check the messages for
 * devices that are missing, bound elsewhere or without an IOMMU group.
 */
int nvq_vfio_transport_open_at(const char *root, const char *params,
			       struct nvq_transport **t);

/*
 * The errno with which the kernel refused to mask a vector (SET_IRQS
 * ACTION_MASK), 0 if it never did (or was never asked): for tests and the
 * guest benchmark, which report what masking did on the host kernel.
 */
int nvq_vfio_mask_errno(struct nvq_transport *t);

#endif /* NVQ_VFIO_H */
