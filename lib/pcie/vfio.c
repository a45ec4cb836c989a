// SPDX-License-Identifier: MIT
/*
 * The "vfio" transport: a PCIe NVMe controller bound to vfio-pci.
 *
 * Opening checks, in the order a user would fix them, that the address
 * names an NVMe controller, that it is bound to vfio-pci and that it sits
 * in an IOMMU group, then attaches it to a private IO address space
 * (iommufd where the kernel has it, type1 otherwise; vfio_iommu.c), maps
 * BAR0, turns on memory decoding and bus mastering, and wires MSI-X
 * vectors to eventfds. Register and doorbell accesses are plain volatile
 * 32-bit MMIO on the mapped BAR; 64-bit registers are accessed as two
 * 32-bit halves, low first, which every controller must accept.
 */
#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/vfio.h>

#include "internal.h"
#include "nvq/nvq.h"
#include "sysfs.h"
#include "transport.h"
#include "vfio.h"

#define PCI_CLASS_NVME 0x010802u
#define PCI_COMMAND 0x04
#define PCI_COMMAND_MEMORY 0x2u
#define PCI_COMMAND_MASTER 0x4u
#define PCI_COMMAND_INTX_DISABLE 0x400u
#define NVME_MIN_BAR 0x1008u /* registers and the admin doorbells */
#define MAX_VECTORS 2048u /* the MSI-X table limit */

struct vfio_transport {
	struct nvq_transport t;
	int device_fd;
	volatile uint8_t *bar; /* mmapped from BAR0 offset 0, or NULL */
	size_t bar_len; /* bytes of BAR0 that @bar covers */
	uint64_t bar_off; /* BAR0's offset in the device fd */
	uint64_t bar_size;
	uint64_t cfg_off; /* config space's offset in the device fd */
	unsigned int irq_index; /* VFIO_PCI_MSIX_IRQ_INDEX or MSI */
	int mask_err; /* atomic: errno of the first refused SET_IRQS mask */
	int *efds;
	struct nvq_vfio_iommu iommu;
	char bdf[16];
	char root[256];
};

static struct vfio_transport *to_vt(struct nvq_transport *t)
{
	return (struct vfio_transport *)t;
}

/*
 * Order the stores to DMA memory before the doorbell store that tells the
 * device about them. x86 keeps stores in order (also to uncached MMIO),
 * so only the compiler must not move them.
 */
static inline void io_wmb(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dmb oshst" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* ------------------------------------------------------------------ */
/* Registers                                                            */
/* ------------------------------------------------------------------ */

/* BAR accesses outside the mmapped part (a sparse mapping): through the
 * device fd. All-ones on failure, as a vanished device reads. */
static uint32_t slow_read32(struct vfio_transport *vt, uint32_t off)
{
	uint32_t v;

	if (pread(vt->device_fd, &v, 4, (off_t)(vt->bar_off + off)) != 4)
		return NVQ_REG_GONE32;
	return le32toh(v);
}

static void slow_write32(struct vfio_transport *vt, uint32_t off, uint32_t val)
{
	uint32_t v = htole32(val);

	if (pwrite(vt->device_fd, &v, 4, (off_t)(vt->bar_off + off)) != 4)
		return; /* the next read shows the device gone */
}

static uint32_t vfio_reg_read32(struct nvq_transport *t, uint32_t off)
{
	struct vfio_transport *vt = to_vt(t);

	if (likely((size_t)off + 4 <= vt->bar_len))
		return le32toh(*(volatile uint32_t *)(vt->bar + off));
	return slow_read32(vt, off);
}

static void vfio_reg_write32(struct nvq_transport *t, uint32_t off,
			     uint32_t val)
{
	struct vfio_transport *vt = to_vt(t);

	io_wmb();
	if (likely((size_t)off + 4 <= vt->bar_len))
		*(volatile uint32_t *)(vt->bar + off) = htole32(val);
	else
		slow_write32(vt, off, val);
}

static uint64_t vfio_reg_read64(struct nvq_transport *t, uint32_t off)
{
	uint64_t lo = vfio_reg_read32(t, off);
	uint64_t hi = vfio_reg_read32(t, off + 4);

	return hi << 32 | lo;
}

static void vfio_reg_write64(struct nvq_transport *t, uint32_t off,
			     uint64_t val)
{
	vfio_reg_write32(t, off, (uint32_t)val);
	vfio_reg_write32(t, off + 4, (uint32_t)(val >> 32));
}

static void vfio_db_write(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	struct vfio_transport *vt = to_vt(t);

	io_wmb();
	if (likely((size_t)off + 4 <= vt->bar_len))
		*(volatile uint32_t *)(vt->bar + off) = htole32(val);
	else
		slow_write32(vt, off, val);
}

/* ------------------------------------------------------------------ */
/* DMA and interrupts                                                  */
/* ------------------------------------------------------------------ */

static int vfio_dma_map(struct nvq_transport *t, void *vaddr, size_t len,
			uint64_t *iova)
{
	return nvq_vfio_dma_map(&to_vt(t)->iommu, vaddr, len, iova);
}

static int vfio_dma_unmap(struct nvq_transport *t, void *vaddr, size_t len)
{
	return nvq_vfio_dma_unmap(&to_vt(t)->iommu, vaddr, len);
}

static int vfio_irq_fd(struct nvq_transport *t, unsigned int vector)
{
	if (vector >= t->nr_vectors)
		return -EINVAL;
	return to_vt(t)->efds[vector];
}

/* First CPU of a list such as "0-3,8". */
static int first_cpu(const char *path)
{
	/* a list can be long on a big machine; sysfs caps it at a page */
	char buf[4096];

	if (nvq_sysfs_read(path, buf, sizeof(buf)) <= 0 ||
	    !isdigit((unsigned char)buf[0]))
		return -1;
	return atoi(buf);
}

/*
 * The host IRQ behind a vector is the /proc/interrupts line that vfio-pci
 * names "vfio-msix[V](BDF)"; its effective affinity is where the
 * interrupt (and so the eventfd signal) runs.
 */
static int vfio_irq_cpu(struct nvq_transport *t, unsigned int vector)
{
	struct vfio_transport *vt = to_vt(t);
	char path[PATH_MAX + 64], needle[64], line[4096];
	int irq = -1, cpu;
	FILE *f;

	if (vector >= t->nr_vectors)
		return -1;
	nvq_fmt(needle, sizeof(needle), "vfio-%s[%u](%s)",
		vt->irq_index == VFIO_PCI_MSIX_IRQ_INDEX ? "msix" : "msi",
		vector, vt->bdf);
	nvq_fmt(path, sizeof(path), "%s/proc/interrupts", vt->root);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, needle)) {
			irq = atoi(line);
			break;
		}
	}
	fclose(f);
	if (irq < 0)
		return -1;
	nvq_fmt(path, sizeof(path), "%s/proc/irq/%d/effective_affinity_list",
		vt->root, irq);
	cpu = first_cpu(path);
	if (cpu < 0) {
		nvq_fmt(path, sizeof(path), "%s/proc/irq/%d/smp_affinity_list",
			vt->root, irq);
		cpu = first_cpu(path);
	}
	return cpu;
}

static int set_irqs(struct vfio_transport *vt, unsigned int n)
{
	size_t sz = sizeof(struct vfio_irq_set) + n * sizeof(int);
	struct vfio_irq_set *s = calloc(1, sz);
	int rc = 0;

	if (!s)
		return -ENOMEM;
	s->argsz = (uint32_t)sz;
	s->flags = (n ? VFIO_IRQ_SET_DATA_EVENTFD : VFIO_IRQ_SET_DATA_NONE) |
		   VFIO_IRQ_SET_ACTION_TRIGGER;
	s->index = vt->irq_index;
	s->start = 0;
	s->count = n;
	if (n)
		memcpy(s->data, vt->efds, n * sizeof(int));
	if (ioctl(vt->device_fd, VFIO_DEVICE_SET_IRQS, s))
		rc = -errno;
	free(s);
	return rc;
}

/*
 * Masking for polling waiters. vfio-pci's SET_IRQS implements ACTION_MASK
 * and ACTION_UNMASK for INTx only; for MSI and MSI-X it has no handler
 * ("Need masking support exported" in vfio_pci_intrs.c) and fails with
 * ENOTTY, and the MSI-X table is not writable through the BAR region
 * (vfio-pci keeps it to itself).
 * So ask once; where the kernel refuses, say -ENOTSUP for good: the
 * interrupt then keeps firing while a waiter polls, which costs the host
 * an interrupt and an eventfd signal that wakes no one (docs/qos.md).
 */
static int vfio_irq_mask(struct nvq_transport *t, unsigned int vector,
			 bool masked)
{
	struct vfio_transport *vt = to_vt(t);
	struct vfio_irq_set s = {
		.argsz = sizeof(s),
		.flags = VFIO_IRQ_SET_DATA_NONE |
			 (masked ? VFIO_IRQ_SET_ACTION_MASK :
				   VFIO_IRQ_SET_ACTION_UNMASK),
		.index = vt->irq_index,
		.start = vector,
		.count = 1,
	};

	if (vector >= t->nr_vectors)
		return -EINVAL;
	if (__atomic_load_n(&vt->mask_err, __ATOMIC_RELAXED))
		return -ENOTSUP;
	if (ioctl(vt->device_fd, VFIO_DEVICE_SET_IRQS, &s)) {
		__atomic_store_n(&vt->mask_err, errno ? errno : EIO,
				 __ATOMIC_RELAXED);
		return -ENOTSUP;
	}
	return 0;
}

int nvq_vfio_mask_errno(struct nvq_transport *t)
{
	return __atomic_load_n(&to_vt(t)->mask_err, __ATOMIC_RELAXED);
}

static void close_efds(struct vfio_transport *vt, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (vt->efds[i] >= 0)
			close(vt->efds[i]);
	free(vt->efds);
	vt->efds = NULL;
}

/*
 * MSI-X (or MSI) vectors, one eventfd each: as many as the table has, up
 * to @want. The kernel may grant fewer interrupts than the table holds;
 * then ask for fewer, and the driver shares vectors between queues.
 */
static int setup_irqs(struct vfio_transport *vt, unsigned int want)
{
	struct vfio_irq_info info = { .argsz = sizeof(info) };
	unsigned int n, i;
	int rc;

	vt->irq_index = VFIO_PCI_MSIX_IRQ_INDEX;
	info.index = VFIO_PCI_MSIX_IRQ_INDEX;
	if (ioctl(vt->device_fd, VFIO_DEVICE_GET_IRQ_INFO, &info) ||
	    !info.count) {
		memset(&info, 0, sizeof(info));
		info.argsz = sizeof(info);
		info.index = VFIO_PCI_MSI_IRQ_INDEX;
		if (ioctl(vt->device_fd, VFIO_DEVICE_GET_IRQ_INFO, &info) ||
		    !info.count)
			return 0; /* polled mode only */
		vt->irq_index = VFIO_PCI_MSI_IRQ_INDEX;
		info.count = 1;
	}
	n = MIN(MIN(info.count, want), MAX_VECTORS);
	vt->efds = malloc(n * sizeof(int));
	if (!vt->efds)
		return nvq_err(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		vt->efds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (vt->efds[i] < 0) {
			rc = -errno;
			close_efds(vt, i);
			return nvq_err(rc, "eventfd: %s", strerror(-rc));
		}
	}
	for (;;) {
		rc = set_irqs(vt, n);
		if (!rc)
			break;
		if (n == 1 || (rc != -EINVAL && rc != -ENOSPC)) {
			close_efds(vt, MIN(MIN(info.count, want), MAX_VECTORS));
			return nvq_err(
				rc, "%s: cannot enable %s interrupts: %s",
				vt->bdf,
				vt->irq_index == VFIO_PCI_MSIX_IRQ_INDEX ?
					"MSI-X" :
					"MSI",
				strerror(-rc));
		}
		n /= 2;
	}
	/* Eventfds the kernel did not take are of no use. */
	for (i = n; i < MIN(MIN(info.count, want), MAX_VECTORS); i++)
		close(vt->efds[i]);
	vt->t.nr_vectors = n;
	return 0;
}

/* ------------------------------------------------------------------ */
/* BAR0 and config space                                               */
/* ------------------------------------------------------------------ */

static int region_info(struct vfio_transport *vt, unsigned int index,
		       struct vfio_region_info **out)
{
	size_t argsz = sizeof(struct vfio_region_info);
	struct vfio_region_info *ri = NULL;

	for (;;) {
		ri = calloc(1, argsz);
		if (!ri)
			return -ENOMEM;
		ri->argsz = (uint32_t)argsz;
		ri->index = index;
		if (ioctl(vt->device_fd, VFIO_DEVICE_GET_REGION_INFO, ri)) {
			int rc = -errno;

			free(ri);
			return rc;
		}
		if (ri->argsz <= argsz || argsz > 65536)
			break;
		argsz = ri->argsz;
		free(ri);
	}
	/* Capabilities are parsed within what was allocated. */
	if (ri->argsz > argsz)
		ri->argsz = (uint32_t)argsz;
	*out = ri;
	return 0;
}

/* How much of BAR0 from offset 0 may be mmapped: all of it, or the
 * sparse area at 0 when the MSI-X table must stay unmapped. */
static uint64_t mmap_len_at_0(const struct vfio_region_info *ri)
{
	uint32_t off;

	if (!(ri->flags & VFIO_REGION_INFO_FLAG_MMAP))
		return 0;
	off = (ri->flags & VFIO_REGION_INFO_FLAG_CAPS) ? ri->cap_offset : 0;
	while (off && off + sizeof(struct vfio_info_cap_header) <= ri->argsz) {
		const struct vfio_info_cap_header *h =
			(const void *)((const char *)ri + off);

		if (h->id == VFIO_REGION_INFO_CAP_SPARSE_MMAP) {
			const struct vfio_region_info_cap_sparse_mmap *s =
				(const void *)h;
			uint32_t i;

			if (off + sizeof(*s) +
				    (size_t)s->nr_areas * sizeof(s->areas[0]) >
			    ri->argsz)
				return 0;
			for (i = 0; i < s->nr_areas; i++)
				if (s->areas[i].offset == 0)
					return s->areas[i].size;
			return 0;
		}
		if (h->next <= off)
			break;
		off = h->next;
	}
	return ri->size;
}

static int map_bar(struct vfio_transport *vt)
{
	struct vfio_region_info *ri = NULL;
	uint64_t len;
	void *p;
	int rc;

	rc = region_info(vt, VFIO_PCI_BAR0_REGION_INDEX, &ri);
	if (rc)
		return nvq_err(rc, "%s: cannot read BAR0's region info: %s",
			       vt->bdf, strerror(-rc));
	vt->bar_off = ri->offset;
	vt->bar_size = ri->size;
	if (ri->size < NVME_MIN_BAR ||
	    !(ri->flags & VFIO_REGION_INFO_FLAG_READ) ||
	    !(ri->flags & VFIO_REGION_INFO_FLAG_WRITE)) {
		free(ri);
		return nvq_err(-ENODEV,
			       "%s: BAR0 is %llu bytes (or not read/write); "
			       "an NVMe controller has at least %u",
			       vt->bdf, (unsigned long long)vt->bar_size,
			       NVME_MIN_BAR);
	}
	len = mmap_len_at_0(ri);
	free(ri);
	if (len > SIZE_MAX)
		len = 0;
	if (len) {
		p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 vt->device_fd, (off_t)vt->bar_off);
		if (p != MAP_FAILED) {
			vt->bar = p;
			vt->bar_len = (size_t)len;
		}
	}
	/* Without a mapping every access goes through pread/pwrite: slow,
	 * but correct. */
	return 0;
}

static int config_rw(struct vfio_transport *vt, bool wr, uint32_t off,
		     void *buf, size_t len)
{
	ssize_t n;

	if (wr)
		n = pwrite(vt->device_fd, buf, len, (off_t)(vt->cfg_off + off));
	else
		n = pread(vt->device_fd, buf, len, (off_t)(vt->cfg_off + off));
	if (n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	return 0;
}

/* Memory decoding for the BAR, bus mastering for DMA and MSI-X, and no
 * legacy interrupt. */
static int enable_device(struct vfio_transport *vt)
{
	struct vfio_region_info *ri = NULL;
	uint16_t cmd;
	int rc;

	rc = region_info(vt, VFIO_PCI_CONFIG_REGION_INDEX, &ri);
	if (rc)
		return nvq_err(rc, "%s: cannot find the config space: %s",
			       vt->bdf, strerror(-rc));
	vt->cfg_off = ri->offset;
	free(ri);
	rc = config_rw(vt, false, PCI_COMMAND, &cmd, 2);
	if (!rc) {
		cmd = htole16((uint16_t)(le16toh(cmd) | PCI_COMMAND_MEMORY |
					 PCI_COMMAND_MASTER |
					 PCI_COMMAND_INTX_DISABLE));
		rc = config_rw(vt, true, PCI_COMMAND, &cmd, 2);
	}
	if (rc)
		return nvq_err(rc, "%s: cannot enable bus mastering: %s",
			       vt->bdf, strerror(-rc));
	return 0;
}

static void disable_master(struct vfio_transport *vt)
{
	uint16_t cmd;

	if (config_rw(vt, false, PCI_COMMAND, &cmd, 2))
		return;
	cmd = htole16((uint16_t)(le16toh(cmd) & ~PCI_COMMAND_MASTER));
	config_rw(vt, true, PCI_COMMAND, &cmd, 2);
}

static void vfio_close(struct nvq_transport *t)
{
	struct vfio_transport *vt = to_vt(t);

	if (vt->device_fd >= 0) {
		if (vt->efds)
			set_irqs(vt, 0);
		disable_master(vt);
	}
	if (vt->efds)
		close_efds(vt, t->nr_vectors);
	if (vt->bar)
		munmap((void *)vt->bar, vt->bar_len);
	if (vt->device_fd >= 0)
		close(vt->device_fd);
	nvq_vfio_iommu_close(&vt->iommu);
	free(vt);
}

static const struct nvq_transport_ops vfio_ops = {
	.name = "vfio",
	.close = vfio_close,
	.reg_read32 = vfio_reg_read32,
	.reg_read64 = vfio_reg_read64,
	.reg_write32 = vfio_reg_write32,
	.reg_write64 = vfio_reg_write64,
	.db_write = vfio_db_write,
	.dma_map = vfio_dma_map,
	.dma_unmap = vfio_dma_unmap,
	.irq_fd = vfio_irq_fd,
	.irq_cpu = vfio_irq_cpu,
	.irq_mask = vfio_irq_mask,
};

/* ------------------------------------------------------------------ */
/* URI                                                                  */
/* ------------------------------------------------------------------ */

static bool parse_uint(const char *s, size_t len, unsigned long max,
		       unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (!len || len > 10)
		return false;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

#define VFIO_URI \
	"vfio:DDDD:BB:DD.F[/nsid][,iommu=auto|iommufd|type1][,vectors=N]"

int nvq_vfio_parse(const char *params, struct nvq_vfio_params *p)
{
	const char *s = params, *comma, *slash, *end;
	unsigned long v;

	memset(p, 0, sizeof(*p));
	if (!s || !*s)
		return nvq_err(-EINVAL,
			       "vfio: no PCI address given (use " VFIO_URI ")");
	comma = strchr(s, ',');
	end = comma ? comma : s + strlen(s);
	slash = memchr(s, '/', (size_t)(end - s));
	if (nvq_pci_parse_bdf(s, (size_t)((slash ? slash : end) - s), p->bdf,
			      sizeof(p->bdf)))
		return nvq_err(-EINVAL,
			       "vfio: '%.*s' is not a PCI address (use "
			       "DDDD:BB:DD.F, as lspci -D prints)",
			       (int)((slash ? slash : end) - s), s);
	if (slash) {
		if (!parse_uint(slash + 1, (size_t)(end - slash - 1),
				0xfffffffeul, &v) ||
		    !v)
			return nvq_err(-EINVAL,
				       "vfio: bad namespace id '%.*s' (1..%lu)",
				       (int)(end - slash - 1), slash + 1,
				       0xfffffffeul);
		p->nsid = (uint32_t)v;
	}
	while (comma) {
		const char *opt = comma + 1, *eq;
		size_t olen;

		comma = strchr(opt, ',');
		olen = comma ? (size_t)(comma - opt) : strlen(opt);
		eq = memchr(opt, '=', olen);
		if (eq && eq - opt == 5 && !strncmp(opt, "iommu", 5)) {
			size_t vl = olen - 6;

			if (vl == 4 && !strncmp(eq + 1, "auto", 4))
				p->iommu = NVQ_VFIO_IOMMU_AUTO;
			else if (vl == 7 && !strncmp(eq + 1, "iommufd", 7))
				p->iommu = NVQ_VFIO_IOMMU_IOMMUFD;
			else if (vl == 5 && !strncmp(eq + 1, "type1", 5))
				p->iommu = NVQ_VFIO_IOMMU_TYPE1;
			else
				return nvq_err(-EINVAL,
					       "vfio: iommu=%.*s: use auto, "
					       "iommufd or type1",
					       (int)vl, eq + 1);
		} else if (eq && eq - opt == 7 && !strncmp(opt, "vectors", 7)) {
			if (!parse_uint(eq + 1, olen - 8, MAX_VECTORS, &v) ||
			    !v)
				return nvq_err(-EINVAL,
					       "vfio: vectors=%.*s: use 1..%u",
					       (int)(olen - 8), eq + 1,
					       MAX_VECTORS);
			p->vectors = (unsigned int)v;
		} else {
			return nvq_err(
				-EINVAL,
				"vfio: unknown option '%.*s' (use " VFIO_URI
				")",
				(int)olen, opt);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Open                                                                 */
/* ------------------------------------------------------------------ */

/* The vfio cdev of the device ("vfioN" under vfio-dev/), "" if none. */
static void find_cdev(const char *dev_dir, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	buf[0] = '\0';
	nvq_fmt(path, sizeof(path), "%s/vfio-dev", dev_dir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "vfio", 4)) {
			nvq_fmt(buf, len, "%s", de->d_name);
			break;
		}
	closedir(d);
}

/* The checks a user can act on, before any vfio call. */
static int check_device(const char *root, const char *bdf, const char *dir,
			int *group)
{
	char path[PATH_MAX + 32], name[64];
	struct stat st;
	long v;

	if (stat(dir, &st))
		return nvq_err(-ENODEV,
			       "vfio: no PCI device %s (lspci -D lists the "
			       "devices)",
			       bdf);
	nvq_fmt(path, sizeof(path), "%s/class", dir);
	if (!nvq_sysfs_read_long(path, 16, &v) &&
	    (unsigned long)v != PCI_CLASS_NVME)
		return nvq_err(-ENODEV,
			       "vfio: %s is not an NVMe controller (PCI class "
			       "%06lx, NVMe is %06x)",
			       bdf, (unsigned long)v, PCI_CLASS_NVME);
	nvq_fmt(path, sizeof(path), "%s/driver", dir);
	nvq_sysfs_link_name(path, name, sizeof(name));
	if (!name[0])
		return nvq_err(-ENODEV,
			       "vfio: %s is not bound to vfio-pci (it has no "
			       "driver): run 'nvq setup %s' (docs/vfio.md)",
			       bdf, bdf);
	if (strcmp(name, "vfio-pci"))
		return nvq_err(-EBUSY,
			       "vfio: %s is not bound to vfio-pci but to %s: "
			       "run 'nvq setup %s' to hand it to vfio-pci "
			       "(its block devices go away; 'nvq release %s' "
			       "gives it back)",
			       bdf, name, bdf, bdf);
	nvq_fmt(path, sizeof(path), "%s/iommu_group", dir);
	nvq_sysfs_link_name(path, name, sizeof(name));
	if (!name[0] || !isdigit((unsigned char)name[0]))
		return nvq_err(-ENODEV,
			       "vfio: %s has no IOMMU group: the IOMMU is off; "
			       "enable VT-d/AMD-Vi in the firmware and boot "
			       "with intel_iommu=on (or amd_iommu=on)",
			       bdf);
	*group = atoi(name);
	(void)root;
	return 0;
}

/*
 * The IOMMU pins every DMA buffer and charges it to RLIMIT_MEMLOCK unless
 * the process has CAP_IPC_LOCK. Below what a controller's bring-up pins
 * (the PRP pools' first chunks, the admin and I/O rings, the shadow
 * doorbell pages) nvq_open() cannot succeed: say so, with the number,
 * before touching the device.
 */
static int check_memlock(unsigned int cpus)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	unsigned long long need;
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	if (!syscall(SYS_capget, &hdr, data) &&
	    (data[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32))))
		return 0;
	/* 128 KiB of pools, admin queue and shadow pages, and the rings of
	 * one default (256-entry) queue per CPU. */
	need = 192 + 24ull * cpus;
	if ((unsigned long long)rl.rlim_cur >> 10 >= need)
		return 0;
	return nvq_err(-ENOMEM,
		       "vfio: RLIMIT_MEMLOCK is %llu KiB, too low to pin DMA "
		       "memory: nvq needs at least %llu KiB to bring a "
		       "controller up, plus its I/O buffers (raise it: ulimit "
		       "-l, memlock in /etc/security/limits.conf, or "
		       "LimitMEMLOCK=; docs/vfio.md)",
		       (unsigned long long)rl.rlim_cur >> 10, need);
}

static int attach(struct vfio_transport *vt, const struct nvq_vfio_params *p,
		  const char *dir, int group)
{
	char cdev[64], path[PATH_MAX + 128], msg[512], msg2[512];
	struct stat st;
	int rc;

	/* sysfs names the vfio device since 6.1; its /dev node (the cdev
	 * that iommufd needs) exists only with CONFIG_VFIO_DEVICE_CDEV. */
	find_cdev(dir, cdev, sizeof(cdev));
	if (cdev[0] && (!nvq_fmt(path, sizeof(path), "%s/dev/vfio/devices/%s",
				 vt->root, cdev) ||
			stat(path, &st)))
		cdev[0] = '\0';
	nvq_fmt(path, sizeof(path), "%s/dev/iommu", vt->root);
	if (p->iommu == NVQ_VFIO_IOMMU_IOMMUFD ||
	    (p->iommu == NVQ_VFIO_IOMMU_AUTO && cdev[0] && !stat(path, &st))) {
		if (!cdev[0])
			return nvq_err(-ENOTSUP,
				       "vfio: %s has no vfio cdev: this kernel "
				       "has no iommufd support for vfio "
				       "(CONFIG_VFIO_DEVICE_CDEV); use "
				       "iommu=type1",
				       vt->bdf);
		nvq_fmt(path, sizeof(path), "%s/dev/vfio/devices/%s", vt->root,
			cdev);
		rc = nvq_vfio_iommufd_open(&vt->iommu, vt->root, vt->bdf, path,
					   &vt->device_fd);
		if (!rc || p->iommu == NVQ_VFIO_IOMMU_IOMMUFD)
			return rc;
		/* The group interface may still work (permissions differ). */
		nvq_fmt(msg, sizeof(msg), "%s", nvq_errmsg());
		rc = nvq_vfio_type1_open(&vt->iommu, vt->root, vt->bdf, group,
					 &vt->device_fd);
		if (rc) {
			nvq_fmt(msg2, sizeof(msg2), "%s", nvq_errmsg());
			return nvq_err(rc, "%.300s (iommufd: %.200s)", msg2,
				       msg);
		}
		return 0;
	}
	return nvq_vfio_type1_open(&vt->iommu, vt->root, vt->bdf, group,
				   &vt->device_fd);
}

int nvq_vfio_transport_open_at(const char *root, const char *params,
			       struct nvq_transport **out)
{
	struct vfio_device_info di = { .argsz = sizeof(di) };
	struct nvq_vfio_params p;
	struct vfio_transport *vt;
	char dir[PATH_MAX + 64];
	int group = -1, rc;
	long v, cpus;

	rc = nvq_vfio_parse(params, &p);
	if (rc)
		return rc;
	if (strlen(root) >= sizeof(vt->root))
		return nvq_err(-ENAMETOOLONG, "vfio: root path too long");
	nvq_fmt(dir, sizeof(dir), "%s/sys/bus/pci/devices/%s", root, p.bdf);
	rc = check_device(root, p.bdf, dir, &group);
	if (rc)
		return rc;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		cpus = 1;
	rc = check_memlock((unsigned int)cpus);
	if (rc)
		return rc;

	vt = calloc(1, sizeof(*vt));
	if (!vt)
		return nvq_err(-ENOMEM, "out of memory");
	vt->device_fd = -1;
	vt->t.ops = &vfio_ops;
	nvq_fmt(vt->bdf, sizeof(vt->bdf), "%s", p.bdf);
	nvq_fmt(vt->root, sizeof(vt->root), "%s", root);
	rc = attach(vt, &p, dir, group);
	if (rc) {
		free(vt);
		return rc;
	}

	if (ioctl(vt->device_fd, VFIO_DEVICE_GET_INFO, &di)) {
		rc = nvq_err(-errno, "%s: VFIO_DEVICE_GET_INFO failed: %s",
			     vt->bdf, strerror(errno));
		goto fail;
	}
	if (!(di.flags & VFIO_DEVICE_FLAGS_PCI) ||
	    di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX) {
		rc = nvq_err(-ENODEV, "%s: vfio does not present a PCI device",
			     vt->bdf);
		goto fail;
	}
	rc = map_bar(vt);
	if (!rc)
		rc = enable_device(vt);
	if (rc)
		goto fail;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	rc = setup_irqs(vt, p.vectors ?
				    p.vectors :
				    (unsigned int)(cpus > 0 ? cpus : 1) + 1);
	if (rc)
		goto fail;

	nvq_fmt(dir + strlen(dir), sizeof(dir) - strlen(dir), "/numa_node");
	if (nvq_sysfs_read_long(dir, 10, &v) || v < 0)
		v = -1; /* no NUMA, or the kernel does not know */
	vt->t.numa_node = (int)v;
	nvq_fmt(vt->t.name, sizeof(vt->t.name), "vfio:%s (%s)", vt->bdf,
		vt->iommu.kind == NVQ_VFIO_IOMMU_IOMMUFD ? "iommufd" : "type1");
	*out = &vt->t;
	return 0;

fail:
	vfio_close(&vt->t);
	return rc;
}

int nvq_vfio_transport_open(const char *params, struct nvq_transport **t)
{
	return nvq_vfio_transport_open_at("", params, t);
}
