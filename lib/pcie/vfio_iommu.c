// SPDX-License-Identifier: MIT
/*
 * The IOMMU side of the vfio transport: one IO address space per open
 * device, through iommufd (/dev/iommu, Linux 6.6+ vfio cdev) or the type1
 * group/container interface that every vfio kernel has. Both backends
 * share the IOVA allocator and the table of mappings; they differ only in
 * how a device is attached and which ioctl maps a range.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "internal.h"
#include "sysfs.h"
#include "vfio.h"

/*
 * iommufd and the vfio cdev ioctls (Linux 6.6 uapi). Debian 12's headers
 * predate them, so the ABI is spelled out here under our own names; the
 * layouts and numbers are fixed by the kernel's compatibility rules.
 */
#define NVQ_IOMMUFD_TYPE ';'
struct nvq_iommu_ioas_alloc {
	uint32_t size;
	uint32_t flags;
	uint32_t out_ioas_id;
};
#define NVQ_IOMMU_IOAS_ALLOC _IO(NVQ_IOMMUFD_TYPE, 0x81)

struct nvq_iommu_ioas_iova_ranges {
	uint32_t size;
	uint32_t ioas_id;
	uint32_t num_iovas;
	uint32_t reserved;
	uint64_t allowed_iovas;
	uint64_t out_iova_alignment;
};
#define NVQ_IOMMU_IOAS_IOVA_RANGES _IO(NVQ_IOMMUFD_TYPE, 0x84)

#define NVQ_IOMMU_IOAS_MAP_FIXED_IOVA (1u << 0)
#define NVQ_IOMMU_IOAS_MAP_WRITEABLE (1u << 1)
#define NVQ_IOMMU_IOAS_MAP_READABLE (1u << 2)
struct nvq_iommu_ioas_map {
	uint32_t size;
	uint32_t flags;
	uint32_t ioas_id;
	uint32_t reserved;
	uint64_t user_va;
	uint64_t length;
	uint64_t iova;
};
#define NVQ_IOMMU_IOAS_MAP _IO(NVQ_IOMMUFD_TYPE, 0x85)

struct nvq_iommu_ioas_unmap {
	uint32_t size;
	uint32_t ioas_id;
	uint64_t iova;
	uint64_t length;
};
#define NVQ_IOMMU_IOAS_UNMAP _IO(NVQ_IOMMUFD_TYPE, 0x86)

struct nvq_vfio_device_bind_iommufd {
	uint32_t argsz;
	uint32_t flags;
	int32_t iommufd;
	uint32_t out_devid;
};
#define NVQ_VFIO_DEVICE_BIND_IOMMUFD _IO(VFIO_TYPE, VFIO_BASE + 18)

struct nvq_vfio_device_attach_iommufd_pt {
	uint32_t argsz;
	uint32_t flags;
	uint32_t pt_id;
};
#define NVQ_VFIO_DEVICE_ATTACH_IOMMUFD_PT _IO(VFIO_TYPE, VFIO_BASE + 19)

/* Without an IOVA range report (kernels before 5.4): what x86 VT-d with
 * 39-bit addressing accepts, less the MSI window. */
static const struct nvq_iova_range fallback_ranges[] = {
	{ 0, 0xfedfffffull },
	{ 0xfef00000ull, (1ull << 39) - 1 },
};

static void iommu_init(struct nvq_vfio_iommu *m)
{
	memset(m, 0, sizeof(*m));
	m->container_fd = -1;
	m->group_fd = -1;
	m->maps_left = UINT32_MAX;
	pthread_mutex_init(&m->lock, NULL);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void nvq_vfio_iommu_close(struct nvq_vfio_iommu *m)
{
	/* Closing the container or iommufd drops every mapping with it. */
	close_fd(&m->group_fd);
	close_fd(&m->container_fd);
	nvq_iova_destroy(&m->iova);
	free(m->maps);
	m->maps = NULL;
	m->nr_maps = m->cap_maps = 0;
	pthread_mutex_destroy(&m->lock);
}

static const char *perm_hint(void)
{
	return getuid() ? "give your user access (chown, or a udev rule; "
			  "docs/vfio.md)" :
			  "check that vfio is loaded";
}

/* Open @path for read/write with a message in words a user can act on. */
static int open_dev(const char *path, const char *what, int *fd)
{
	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (*fd >= 0)
		return 0;
	switch (errno) {
	case EACCES:
	case EPERM:
		return nvq_err(-EACCES, "%s: permission denied opening %s: %s",
			       path, what, perm_hint());
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return nvq_err(-ENODEV,
			       "%s does not exist (%s): is the vfio-pci module "
			       "loaded (modprobe vfio-pci)?",
			       path, what);
	case EBUSY:
		return nvq_err(-EBUSY,
			       "%s is busy: another process (or another "
			       "controller of this one) already has %s open",
			       path, what);
	default:
		return nvq_err(-errno, "cannot open %s (%s): %s", path, what,
			       strerror(errno));
	}
}

/* ------------------------------------------------------------------ */
/* Type1 (group / container)                                           */
/* ------------------------------------------------------------------ */

/* The driver of @dev_path's device, "" if none. */
static void driver_of(const char *dev_path, char *buf, size_t len)
{
	char link[PATH_MAX];

	nvq_fmt(link, sizeof(link), "%s/driver", dev_path);
	nvq_sysfs_link_name(link, buf, len);
}

/*
 * A group is viable when each of its devices is bound to vfio-pci (or a
 * vfio-aware driver) or to none. Name the ones that are not, so that the
 * user knows what to unbind.
 */
static int not_viable(const char *root, int group, const char *bdf)
{
	char dir[PATH_MAX], dev[PATH_MAX + 256], drv[64], list[256] = "";
	size_t used = 0;
	struct dirent *de;
	DIR *d;

	nvq_fmt(dir, sizeof(dir), "%s/sys/kernel/iommu_groups/%d/devices", root,
		group);
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.' || !strcmp(de->d_name, bdf))
				continue;
			nvq_fmt(dev, sizeof(dev), "%s/%s", dir, de->d_name);
			driver_of(dev, drv, sizeof(drv));
			if (!drv[0] || !strcmp(drv, "vfio-pci") ||
			    !strcmp(drv, "pcieport") ||
			    !strcmp(drv, "pci-stub"))
				continue;
			if (!nvq_fmt(list + used, sizeof(list) - used,
				     "%s%s (%s)", used ? ", " : "", de->d_name,
				     drv))
				break;
			used += strlen(list + used);
		}
		closedir(d);
	}
	return nvq_err(
		-EBUSY,
		"IOMMU group %d of %s is not viable: every device in it "
		"must be bound to vfio-pci or to no driver; still bound: "
		"%s (see %s; nvq setup binds one device)",
		group, bdf, used ? list : "unknown", dir);
}

/*
 * Read VFIO_IOMMU_GET_INFO with its capability chain: the valid IOVA
 * ranges and the number of mappings still allowed.
 */
static int type1_info(struct nvq_vfio_iommu *m)
{
	struct vfio_iommu_type1_info *info;
	struct nvq_iova_range *ranges = NULL;
	size_t nr = 0, argsz = sizeof(*info);
	uint32_t off;
	int rc;

	for (;;) {
		info = calloc(1, argsz);
		if (!info)
			return nvq_err(-ENOMEM, "out of memory");
		info->argsz = (uint32_t)argsz;
		if (ioctl(m->container_fd, VFIO_IOMMU_GET_INFO, info)) {
			rc = -errno;
			free(info);
			return nvq_err(rc, "VFIO_IOMMU_GET_INFO failed: %s",
				       strerror(-rc));
		}
		if (info->argsz <= argsz || argsz > 65536)
			break;
		argsz = info->argsz;
		free(info);
	}

	off = (info->flags & VFIO_IOMMU_INFO_CAPS) ? info->cap_offset : 0;
	while (off && off + sizeof(struct vfio_info_cap_header) <= argsz) {
		struct vfio_info_cap_header *h = (void *)((char *)info + off);

		if (h->id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE &&
		    off + sizeof(struct vfio_iommu_type1_info_cap_iova_range) <=
			    argsz) {
			struct vfio_iommu_type1_info_cap_iova_range *c =
				(void *)h;
			uint32_t i, n = c->nr_iovas;

			if (off + sizeof(*c) +
				    (size_t)n * sizeof(c->iova_ranges[0]) >
			    argsz)
				n = 0;
			free(ranges);
			ranges = calloc(n ? n : 1, sizeof(*ranges));
			if (!ranges) {
				free(info);
				return nvq_err(-ENOMEM, "out of memory");
			}
			for (i = 0; i < n; i++) {
				ranges[i].start = c->iova_ranges[i].start;
				ranges[i].last = c->iova_ranges[i].end;
			}
			nr = n;
		} else if (h->id == VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL &&
			   off + sizeof(struct vfio_iommu_type1_info_dma_avail) <=
				   argsz) {
			m->maps_left =
				((struct vfio_iommu_type1_info_dma_avail *)h)
					->avail;
		}
		if (h->next <= off)
			break; /* the chain only goes forward */
		off = h->next;
	}
	free(info);

	if (ranges)
		rc = nvq_iova_init(&m->iova, ranges, nr);
	else
		rc = nvq_iova_init(&m->iova, fallback_ranges,
				   ARRAY_SIZE(fallback_ranges));
	free(ranges);
	if (rc)
		return nvq_err(rc, "out of memory");
	if (!m->iova.nr)
		return nvq_err(-ENOSPC,
			       "the IOMMU reports no usable IOVA range");
	return 0;
}

int nvq_vfio_type1_open(struct nvq_vfio_iommu *m, const char *root,
			const char *bdf, int group, int *device_fd)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };
	char path[PATH_MAX];
	int rc, type, fd;

	iommu_init(m);
	m->kind = NVQ_VFIO_IOMMU_TYPE1;
	nvq_fmt(path, sizeof(path), "%s/dev/vfio/vfio", root);
	rc = open_dev(path, "the vfio container", &m->container_fd);
	if (rc)
		goto fail;
	if (ioctl(m->container_fd, VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
		rc = nvq_err(-ENOTSUP, "%s: unknown vfio API version", path);
		goto fail;
	}
	if (ioctl(m->container_fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) >
	    0)
		type = VFIO_TYPE1v2_IOMMU;
	else if (ioctl(m->container_fd, VFIO_CHECK_EXTENSION,
		       VFIO_TYPE1_IOMMU) > 0)
		type = VFIO_TYPE1_IOMMU;
	else {
		rc = nvq_err(-ENOTSUP,
			     "the kernel offers no type1 IOMMU for vfio: "
			     "modprobe vfio_iommu_type1, and boot with the "
			     "IOMMU on (intel_iommu=on or amd_iommu=on)");
		goto fail;
	}

	nvq_fmt(path, sizeof(path), "%s/dev/vfio/%d", root, group);
	rc = open_dev(path, "the device's IOMMU group", &m->group_fd);
	if (rc)
		goto fail;
	if (ioctl(m->group_fd, VFIO_GROUP_GET_STATUS, &st)) {
		rc = nvq_err(-errno, "%s: VFIO_GROUP_GET_STATUS failed: %s",
			     path, strerror(errno));
		goto fail;
	}
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		rc = not_viable(root, group, bdf);
		goto fail;
	}
	if (!(st.flags & VFIO_GROUP_FLAGS_CONTAINER_SET) &&
	    ioctl(m->group_fd, VFIO_GROUP_SET_CONTAINER, &m->container_fd)) {
		rc = nvq_err(-errno, "%s: cannot attach the group: %s", path,
			     strerror(errno));
		goto fail;
	}
	if (ioctl(m->container_fd, VFIO_SET_IOMMU, type)) {
		rc = nvq_err(-errno, "VFIO_SET_IOMMU failed for group %d: %s",
			     group, strerror(errno));
		goto fail;
	}
	rc = type1_info(m);
	if (rc)
		goto fail;
	fd = ioctl(m->group_fd, VFIO_GROUP_GET_DEVICE_FD, bdf);
	if (fd < 0) {
		rc = nvq_err(-errno,
			     "%s: cannot get the device from group %d: %s", bdf,
			     group, strerror(errno));
		goto fail;
	}
	*device_fd = fd;
	return 0;

fail:
	nvq_vfio_iommu_close(m);
	return rc;
}

/* ------------------------------------------------------------------ */
/* iommufd                                                             */
/* ------------------------------------------------------------------ */

static int iommufd_ranges(struct nvq_vfio_iommu *m)
{
	struct nvq_iommu_ioas_iova_ranges r = {
		.size = sizeof(r),
		.ioas_id = m->ioas_id,
	};
	struct nvq_iova_range *ranges = NULL;
	int rc, tries;

	for (tries = 0; tries < 4; tries++) {
		if (!ioctl(m->container_fd, NVQ_IOMMU_IOAS_IOVA_RANGES, &r))
			break;
		if (errno != EMSGSIZE)
			return nvq_err(-errno,
				       "IOMMU_IOAS_IOVA_RANGES failed: %s",
				       strerror(errno));
		free(ranges);
		/* struct iommu_iova_range is {start, last}, as ours. */
		ranges = calloc(r.num_iovas ? r.num_iovas : 1, sizeof(*ranges));
		if (!ranges)
			return nvq_err(-ENOMEM, "out of memory");
		r.allowed_iovas = (uintptr_t)ranges;
	}
	if (tries == 4 || !ranges) {
		free(ranges);
		return nvq_err(-ENOSPC,
			       "the IOMMU reports no usable IOVA range");
	}
	if (r.out_iova_alignment > NVQ_PAGE_SIZE) {
		free(ranges);
		return nvq_err(-ENOTSUP,
			       "the IOMMU needs %llu-byte IOVA alignment; nvq "
			       "maps 4 KiB pages",
			       (unsigned long long)r.out_iova_alignment);
	}
	rc = nvq_iova_init(&m->iova, ranges, r.num_iovas);
	free(ranges);
	if (rc)
		return nvq_err(rc, "out of memory");
	if (!m->iova.nr)
		return nvq_err(-ENOSPC,
			       "the IOMMU reports no usable IOVA range");
	return 0;
}

int nvq_vfio_iommufd_open(struct nvq_vfio_iommu *m, const char *root,
			  const char *bdf, const char *cdev_path,
			  int *device_fd)
{
	struct nvq_vfio_device_bind_iommufd bind = { .argsz = sizeof(bind) };
	struct nvq_vfio_device_attach_iommufd_pt at = { .argsz = sizeof(at) };
	struct nvq_iommu_ioas_alloc ioas = { .size = sizeof(ioas) };
	char path[PATH_MAX];
	int rc, fd = -1;

	iommu_init(m);
	m->kind = NVQ_VFIO_IOMMU_IOMMUFD;
	rc = open_dev(cdev_path, "the vfio device", &fd);
	if (rc)
		goto fail;
	nvq_fmt(path, sizeof(path), "%s/dev/iommu", root);
	rc = open_dev(path, "iommufd", &m->container_fd);
	if (rc)
		goto fail;
	bind.iommufd = m->container_fd;
	if (ioctl(fd, NVQ_VFIO_DEVICE_BIND_IOMMUFD, &bind)) {
		rc = nvq_err(-errno, "%s: VFIO_DEVICE_BIND_IOMMUFD failed: %s",
			     bdf, strerror(errno));
		goto fail;
	}
	m->devid = bind.out_devid;
	if (ioctl(m->container_fd, NVQ_IOMMU_IOAS_ALLOC, &ioas)) {
		rc = nvq_err(-errno, "IOMMU_IOAS_ALLOC failed: %s",
			     strerror(errno));
		goto fail;
	}
	m->ioas_id = ioas.out_ioas_id;
	at.pt_id = m->ioas_id;
	if (ioctl(fd, NVQ_VFIO_DEVICE_ATTACH_IOMMUFD_PT, &at)) {
		rc = nvq_err(-errno,
			     "%s: cannot attach the device to an IO address "
			     "space: %s",
			     bdf, strerror(errno));
		goto fail;
	}
	/* The ranges narrow when a device attaches: ask after attaching. */
	rc = iommufd_ranges(m);
	if (rc)
		goto fail;
	*device_fd = fd;
	return 0;

fail:
	close_fd(&fd);
	nvq_vfio_iommu_close(m);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Mapping                                                             */
/* ------------------------------------------------------------------ */

/* Index of the first mapping with vaddr >= @v. */
static size_t map_lower_bound(const struct nvq_vfio_iommu *m, uintptr_t v)
{
	size_t lo = 0, hi = m->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->maps[mid].vaddr < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The message for a pin that failed with ENOMEM. */
static int pin_failed(const struct nvq_vfio_iommu *m, size_t len)
{
	struct rlimit rl;
	unsigned long long need = (m->pinned + len + 1023) >> 10;

	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    m->pinned + len > rl.rlim_cur / 2)
		return nvq_err(
			-ENOMEM,
			"cannot pin %zu KiB for DMA: RLIMIT_MEMLOCK is %llu "
			"KiB and nvq has %llu KiB pinned, so it needs at least "
			"%llu KiB (raise it: ulimit -l, memlock in "
			"/etc/security/limits.conf, or LimitMEMLOCK=; "
			"docs/vfio.md)",
			len >> 10, (unsigned long long)rl.rlim_cur >> 10,
			(unsigned long long)m->pinned >> 10, need);
	return nvq_err(-ENOMEM,
		       "cannot pin %zu KiB for DMA: out of memory (or the "
		       "locked-memory limit, RLIMIT_MEMLOCK, with %llu KiB "
		       "pinned already)",
		       len >> 10, (unsigned long long)m->pinned >> 10);
}

static int kernel_map(struct nvq_vfio_iommu *m, void *vaddr, size_t len,
		      uint64_t iova)
{
	if (m->kind == NVQ_VFIO_IOMMU_TYPE1) {
		struct vfio_iommu_type1_dma_map dm = {
			.argsz = sizeof(dm),
			.flags = VFIO_DMA_MAP_FLAG_READ |
				 VFIO_DMA_MAP_FLAG_WRITE,
			.vaddr = (uintptr_t)vaddr,
			.iova = iova,
			.size = len,
		};

		return ioctl(m->container_fd, VFIO_IOMMU_MAP_DMA, &dm) ?
			       -errno :
			       0;
	} else {
		struct nvq_iommu_ioas_map im = {
			.size = sizeof(im),
			.flags = NVQ_IOMMU_IOAS_MAP_FIXED_IOVA |
				 NVQ_IOMMU_IOAS_MAP_READABLE |
				 NVQ_IOMMU_IOAS_MAP_WRITEABLE,
			.ioas_id = m->ioas_id,
			.user_va = (uintptr_t)vaddr,
			.length = len,
			.iova = iova,
		};

		return ioctl(m->container_fd, NVQ_IOMMU_IOAS_MAP, &im) ?
			       -errno :
			       0;
	}
}

static int kernel_unmap(struct nvq_vfio_iommu *m, uint64_t iova, uint64_t len)
{
	if (m->kind == NVQ_VFIO_IOMMU_TYPE1) {
		struct vfio_iommu_type1_dma_unmap du = {
			.argsz = sizeof(du),
			.iova = iova,
			.size = len,
		};

		if (ioctl(m->container_fd, VFIO_IOMMU_UNMAP_DMA, &du))
			return -errno;
		return du.size == len ? 0 : -EIO;
	} else {
		struct nvq_iommu_ioas_unmap iu = {
			.size = sizeof(iu),
			.ioas_id = m->ioas_id,
			.iova = iova,
			.length = len,
		};

		if (ioctl(m->container_fd, NVQ_IOMMU_IOAS_UNMAP, &iu))
			return -errno;
		return iu.length == len ? 0 : -EIO;
	}
}

int nvq_vfio_dma_map(struct nvq_vfio_iommu *m, void *vaddr, size_t len,
		     uint64_t *iova)
{
	const uint64_t huge = 2ull << 20;
	uintptr_t v = (uintptr_t)vaddr;
	uint64_t align = NVQ_PAGE_SIZE, phase = 0, at;
	size_t pos;
	int rc;

	if (!len || (v | len) & (NVQ_PAGE_SIZE - 1))
		return nvq_err(
			-EINVAL,
			"vfio: DMA map of [%p, +%zu) is not page aligned",
			vaddr, len);
	/* Same offset within 2 MiB as the virtual address: large buffers
	 * (hugepages in particular) can then use large IOMMU pages. */
	if (len >= huge) {
		align = huge;
		phase = v & (huge - 1);
	}

	pthread_mutex_lock(&m->lock);
	pos = map_lower_bound(m, v);
	if ((pos < m->nr_maps && m->maps[pos].vaddr < v + len) ||
	    (pos > 0 && m->maps[pos - 1].vaddr + m->maps[pos - 1].len > v)) {
		rc = nvq_err(-EEXIST, "vfio: [%p, +%zu) is already mapped",
			     vaddr, len);
		goto out;
	}
	if (!m->maps_left) {
		rc = nvq_err(-ENOSPC,
			     "vfio: the kernel's limit on DMA mappings is "
			     "reached (%zu mappings; vfio_iommu_type1 "
			     "dma_entry_limit): use fewer, larger buffers or "
			     "raise the module parameter",
			     m->nr_maps);
		goto out;
	}
	if (m->nr_maps == m->cap_maps) {
		size_t cap = m->cap_maps ? m->cap_maps * 2 : 32;
		struct nvq_vfio_map *n = realloc(m->maps, cap * sizeof(*n));

		if (!n) {
			rc = nvq_err(-ENOMEM, "out of memory");
			goto out;
		}
		m->maps = n;
		m->cap_maps = cap;
	}
	rc = nvq_iova_alloc(&m->iova, len, align, phase, &at);
	if (rc == -ENOSPC && align > NVQ_PAGE_SIZE)
		rc = nvq_iova_alloc(&m->iova, len, NVQ_PAGE_SIZE, 0, &at);
	if (rc) {
		rc = nvq_err(
			rc,
			"vfio: no room for %zu KiB in the IOMMU's address "
			"space (%llu KiB free)",
			len >> 10,
			(unsigned long long)nvq_iova_free_bytes(&m->iova) >>
				10);
		goto out;
	}
	rc = kernel_map(m, vaddr, len, at);
	if (rc) {
		nvq_iova_free(&m->iova, at, len);
		if (rc == -ENOMEM)
			rc = pin_failed(m, len);
		else if (rc == -ENOSPC)
			rc = nvq_err(-ENOSPC,
				     "vfio: the kernel refuses more DMA "
				     "mappings (%zu made; vfio_iommu_type1 "
				     "dma_entry_limit)",
				     m->nr_maps);
		else
			rc = nvq_err(rc,
				     "vfio: DMA map of [%p, +%zu) failed: %s",
				     vaddr, len, strerror(-rc));
		goto out;
	}
	memmove(&m->maps[pos + 1], &m->maps[pos],
		(m->nr_maps - pos) * sizeof(m->maps[0]));
	m->maps[pos].vaddr = v;
	m->maps[pos].len = len;
	m->maps[pos].iova = at;
	m->nr_maps++;
	if (m->maps_left != UINT32_MAX)
		m->maps_left--;
	m->pinned += len;
	*iova = at;
out:
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int nvq_vfio_dma_unmap(struct nvq_vfio_iommu *m, void *vaddr, size_t len)
{
	uintptr_t v = (uintptr_t)vaddr;
	struct nvq_vfio_map e;
	size_t pos;
	int rc;

	pthread_mutex_lock(&m->lock);
	pos = map_lower_bound(m, v);
	if (pos == m->nr_maps || m->maps[pos].vaddr != v ||
	    m->maps[pos].len != len) {
		rc = nvq_err(-EINVAL, "vfio: [%p, +%zu) is not a DMA mapping",
			     vaddr, len);
		goto out;
	}
	e = m->maps[pos];
	rc = kernel_unmap(m, e.iova, e.len);
	if (rc) {
		/* Keep the IOVA reserved: the device may still reach it. */
		rc = nvq_err(rc, "vfio: DMA unmap of [%p, +%zu) failed: %s",
			     vaddr, len, strerror(-rc));
		goto out;
	}
	nvq_iova_free(&m->iova, e.iova, e.len);
	memmove(&m->maps[pos], &m->maps[pos + 1],
		(m->nr_maps - pos - 1) * sizeof(m->maps[0]));
	m->nr_maps--;
	if (m->maps_left != UINT32_MAX)
		m->maps_left++;
	m->pinned -= e.len;
out:
	pthread_mutex_unlock(&m->lock);
	return rc;
}
