// SPDX-License-Identifier: MIT
/*
 * nvq-latd discovery (tools/latd/discover.c): block device -> hardware
 * queues, interrupts, CPUs, on fixture trees this test builds in a
 * temporary directory, then on this host's real /sys and /proc.
 *
 * The fixtures copy the layouts of real trees (kernel 6.x):
 *
 * nvme-pci: the PCI function holds the controller, the controller (class
 * nvme, no driver link of its own) holds its namespaces' disks:
 *   sys/devices/pci0000:00/0000:00:04.0/{driver -> .../drivers/nvme,
 *       msi_irqs/40..44}
 *   sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/{transport "pcie",
 *       device -> ../../../0000:00:04.0}
 *   .../nvme/nvme0/nvme0n1/{dev "259:0", device -> ../../nvme0,
 *       mq/N/cpu_list "0, 1"}
 *   sys/block/nvme0n1 -> ../devices/.../nvme0n1 (and sys/class/block/)
 *   proc/interrupts " 41: 0 0 IR-PCI-MSIX-0000:00:04.0 1-edge nvme0q1";
 *   q0 is the admin queue, blk-mq hwq N is nvme0q(N+1), poll queues have
 *   no row; a single vector shows "nvme1q0, nvme1q1".
 * nvme multipath: the head is virtual, with no mq/, and links its hidden
 * path disks, which live under their controllers:
 *   sys/devices/virtual/nvme-subsystem/nvme-subsys2/nvme2n1/multipath/
 *       nvme2c2n1 -> ../../../../../pci0000:00/0000:00:06.0/nvme/nvme2/
 *       nvme2c2n1
 *   .../nvme2/nvme2c2n1/{hidden "1", dev, device -> ../../nvme2, mq/}
 * virtio-blk (this host's vda, as seen on it):
 *   sys/block/vda -> ../devices/pci0000:00/0000:00:02.0/virtio1/block/vda
 *   .../vda/device -> ../../../virtio1, virtio1/driver -> .../virtio_blk
 *   proc/interrupts " 36: 0 76952 PCI-MSIX-0000:00:02.0 1-edge
 *   virtio1-req.0" (35 is virtio1-config), proc/irq/36/
 *   effective_affinity_list "1", smp_affinity_list "0-1".
 * Partitions: sys/class/block/vda1 -> ../../devices/.../vda/vda1 with a
 * "partition" file; /dev/disk/by-id links are relative ("../../vda").
 * Other PCI disks (SCSI behind an HBA): .../0000:00:07.0/host0/
 * target0:0:0/0:0:0:0/block/sdz, device -> ../../../0:0:0:0.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

#include "latd.h"

static char root[PATH_MAX];
static char sysd[PATH_MAX + 8], procd[PATH_MAX + 8], devd[PATH_MAX + 8];
static struct latd_roots fx = { sysd, procd, devd };

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

static void remove_tree(void)
{
	if (root[0])
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	root[0] = '\0';
}

/* mkdir -p of @dir, relative to the fixture root */
static void mkdirs(const char *rel)
{
	char path[PATH_MAX * 2], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			check_failed(__FILE__, __LINE__, "mkdir", "%s: %s",
				     path, strerror(errno));
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		check_failed(__FILE__, __LINE__, "mkdir", "%s: %s", path,
			     strerror(errno));
}

static void parent_of(const char *rel)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", rel);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(dir);
	}
}

/* Write @len bytes at @buf as file @rel (parents made). */
static void put_bytes(const char *rel, const void *buf, size_t len)
{
	char path[PATH_MAX * 2];
	FILE *f;

	parent_of(rel);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	CHECK(f);
	CHECK_EQ(fwrite(buf, 1, len, f), len);
	CHECK_OK(fclose(f));
}

static void put(const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(const char *rel, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	CHECK(n >= 0 && n < (int)sizeof(buf));
	put_bytes(rel, buf, (size_t)n);
}

static void lnk(const char *rel, const char *target)
{
	char path[PATH_MAX * 2];

	parent_of(rel);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
	if (symlink(target, path))
		check_failed(__FILE__, __LINE__, "symlink", "%s: %s", path,
			     strerror(errno));
}

static void rm(const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

/* "0-3", "0,2", "" */
static const char *fmt_cpus(const cpu_set_t *s, char *buf, size_t size)
{
	size_t len = 0;
	int c, e;

	buf[0] = '\0';
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, s))
			continue;
		for (e = c; e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, s); e++)
			;
		if (e == c)
			len += snprintf(buf + len, size - len, "%s%d",
					len ? "," : "", c);
		else
			len += snprintf(buf + len, size - len, "%s%d-%d",
					len ? "," : "", c, e);
		if (len >= size)
			break;
		c = e;
	}
	return buf;
}

#define CHECK_CPUS(set, want)                                            \
	do {                                                             \
		char cb_[256];                                           \
		CHECK_STREQ(fmt_cpus(&(set), cb_, sizeof(cb_)), (want)); \
	} while (0)

/* One hwq: index, interrupt, submitting CPUs, interrupt CPUs. */
static void check_hwq(const struct latd_disk *d, int i, int index, int irq,
		      const char *cpus, const char *irq_cpus)
{
	char b[256];

	CHECK(i < d->nr_hwq);
	if (d->hwq[i].index != index || d->hwq[i].irq != irq ||
	    strcmp(fmt_cpus(&d->hwq[i].cpus, b, sizeof(b)), cpus))
		check_failed(__FILE__, __LINE__, "hwq",
			     "%s hwq[%d]: "
			     "index %d irq %d cpus %s, want %d %d %s",
			     d->name, i, d->hwq[i].index, d->hwq[i].irq, b,
			     index, irq, cpus);
	CHECK_CPUS(d->hwq[i].irq_cpus, irq_cpus);
}

static void discover(const char *name, struct latd_disk *d)
{
	char err[256] = "";
	int ret = latd_discover(&fx, name, d, err, sizeof(err));

	if (ret)
		check_failed(__FILE__, __LINE__, "latd_discover", "%s: %d: %s",
			     name, ret, err);
	printf("%s: %d queues, driver \"%s\", note \"%s\"\n", d->name,
	       d->nr_hwq, d->driver, d->note);
}

/* An interrupt row of /proc/interrupts with 4 CPUs' counts. */
static size_t irq_row(char *buf, size_t size, int irq, const char *chip,
		      const char *names)
{
	return (size_t)snprintf(buf, size,
				"%4d:          0          0          0"
				"          0  %s   %s\n",
				irq, chip, names);
}

#define NVME0 "sys/devices/pci0000:00/0000:00:04.0"
#define NVME1 "sys/devices/pci0000:00/0000:00:05.0"
#define NVME2 "sys/devices/pci0000:00/0000:00:06.0"
#define VIRTIO1 "sys/devices/pci0000:00/0000:00:02.0"
#define VIRTIO7 "sys/devices/pci0000:00/0000:00:08.0"
#define HBA "sys/devices/pci0000:00/0000:00:07.0"
#define SUBSYS2 "sys/devices/virtual/nvme-subsystem/nvme-subsys2"

/* A disk's sys/block and sys/class/block links to @dir (under sys/). */
static void block_links(const char *name, const char *dir)
{
	char rel[PATH_MAX], target[PATH_MAX];

	snprintf(rel, sizeof(rel), "sys/block/%s", name);
	snprintf(target, sizeof(target), "../%s", dir + 4);
	lnk(rel, target);
	snprintf(rel, sizeof(rel), "sys/class/block/%s", name);
	snprintf(target, sizeof(target), "../../%s", dir + 4);
	lnk(rel, target);
}

static void affinity(int irq, const char *eff, const char *smp)
{
	char rel[64];

	if (eff) {
		snprintf(rel, sizeof(rel),
			 "proc/irq/%d/effective_affinity_list", irq);
		put(rel, "%s\n", eff);
	}
	if (smp) {
		snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list",
			 irq);
		put(rel, "%s\n", smp);
	}
}

/* An nvme-pci controller nvme@ctrl at PCI function @fn with @nvec MSI-X
 * vectors from @irq0. */
static void nvme_ctrl(const char *fn, int ctrl, int irq0, int nvec)
{
	char rel[PATH_MAX], target[64];
	int i;

	lnk(strcat(strcpy(rel, fn), "/driver"),
	    "../../../bus/pci/drivers/nvme");
	for (i = 0; i < nvec; i++) {
		snprintf(rel, sizeof(rel), "%s/msi_irqs/%d", fn, irq0 + i);
		put(rel, "msix\n");
	}
	snprintf(rel, sizeof(rel), "%s/nvme/nvme%d/transport", fn, ctrl);
	put(rel, "pcie\n");
	/* the controller's device link names the PCI function */
	snprintf(rel, sizeof(rel), "%s/nvme/nvme%d/device", fn, ctrl);
	snprintf(target, sizeof(target), "../../../%s", strrchr(fn, '/') + 1);
	lnk(rel, target);
}

/* Disk @disk of controller nvme@ctrl under @fn: dev, device link, the
 * cpu_lists of its queues. */
static void nvme_disk(const char *fn, int ctrl, const char *disk,
		      const char *devno, const char *const *cpu_lists, int nq)
{
	char dir[PATH_MAX], rel[PATH_MAX * 2], target[32];
	int i;

	snprintf(dir, sizeof(dir), "%s/nvme/nvme%d/%s", fn, ctrl, disk);
	snprintf(rel, sizeof(rel), "%s/dev", dir);
	put(rel, "%s\n", devno);
	snprintf(rel, sizeof(rel), "%s/device", dir);
	snprintf(target, sizeof(target), "../../nvme%d", ctrl);
	lnk(rel, target);
	for (i = 0; i < nq; i++) {
		snprintf(rel, sizeof(rel), "%s/mq/%d/cpu_list", dir, i);
		put(rel, "%s\n", cpu_lists[i]);
	}
	block_links(disk, dir);
}

static void build_tree(void)
{
	static const char *const percpu[] = { "0", "1", "2", "3" };
	static const char *const all4[] = { "0, 1, 2, 3", "0, 1, 2, 3" };
	static const char *const halves[] = { "0, 1", "2, 3" };
	char irqs[8192];
	size_t n = 0;
	int i;

	test_mkdtemp(root, sizeof(root), "latd-discover");
	check_cleanup = remove_tree;
	snprintf(sysd, sizeof(sysd), "%s/sys", root);
	snprintf(procd, sizeof(procd), "%s/proc", root);
	snprintf(devd, sizeof(devd), "%s/dev", root);
	put("sys/devices/system/cpu/online", "0-3\n");
	mkdirs("dev");

	/* nvme0: per-CPU queues, vector 0 admin, 1..4 the queues */
	nvme_ctrl(NVME0, 0, 40, 5);
	nvme_disk(NVME0, 0, "nvme0n1", "259:0", percpu, 4);
	n += irq_row(irqs + n, sizeof(irqs) - n, 40,
		     "IR-PCI-MSIX-0000:00:04.0 0-edge", "nvme0q0");
	for (i = 0; i < 4; i++) {
		char name[16], cpu[4];

		snprintf(name, sizeof(name), "nvme0q%d", i + 1);
		snprintf(cpu, sizeof(cpu), "%d", i);
		n += irq_row(irqs + n, sizeof(irqs) - n, 41 + i,
			     "IR-PCI-MSIX-0000:00:04.0 1-edge", name);
		affinity(41 + i, cpu, cpu);
	}
	affinity(40, "0", "0-3");

	/* nvme1: one vector shared by the admin queue and q1, q2 polled */
	nvme_ctrl(NVME1, 1, 50, 1);
	nvme_disk(NVME1, 1, "nvme1n1", "259:1", all4, 2);
	n += irq_row(irqs + n, sizeof(irqs) - n, 50,
		     "IR-PCI-MSIX-0000:00:05.0 0-edge", "nvme1q0, nvme1q1");
	affinity(50, "2", "0-3");
	/* decoys: names that contain nvme1q1 and nvme1q2 */
	n += irq_row(irqs + n, sizeof(irqs) - n, 51, "PCI-MSIX 0-edge",
		     "xnvme1q2");
	n += irq_row(irqs + n, sizeof(irqs) - n, 52, "PCI-MSIX 0-edge",
		     "nvme11q1, nvme1q20");

	/* nvme2n1: a multipath head, one path nvme2c2n1 on controller nvme2 */
	nvme_ctrl(NVME2, 2, 60, 3);
	nvme_disk(NVME2, 2, "nvme2c2n1", "259:3", halves, 2);
	put(NVME2 "/nvme/nvme2/nvme2c2n1/hidden", "1\n");
	put(SUBSYS2 "/nvme2n1/dev", "259:2\n");
	put(SUBSYS2 "/nvme2n1/hidden", "0\n");
	lnk(SUBSYS2 "/nvme2n1/device", "../../nvme-subsys2");
	lnk(SUBSYS2 "/nvme2n1/multipath/nvme2c2n1",
	    "../../../../../pci0000:00/0000:00:06.0/nvme/nvme2/nvme2c2n1");
	block_links("nvme2n1", SUBSYS2 "/nvme2n1");
	for (i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "nvme2q%d", i);
		n += irq_row(irqs + n, sizeof(irqs) - n, 60 + i,
			     "IR-PCI-MSIX-0000:00:06.0 0-edge", name);
	}
	affinity(61, "0-1", "0-1");
	affinity(62, "3", "2-3");

	/* vda: virtio-blk, one queue, its request interrupt on CPU 1 */
	lnk(VIRTIO1 "/virtio1/driver",
	    "../../../../bus/virtio/drivers/virtio_blk");
	put(VIRTIO1 "/msi_irqs/35", "msix\n");
	put(VIRTIO1 "/msi_irqs/36", "msix\n");
	put(VIRTIO1 "/virtio1/block/vda/dev", "254:0\n");
	lnk(VIRTIO1 "/virtio1/block/vda/device", "../../../virtio1");
	put(VIRTIO1 "/virtio1/block/vda/mq/0/cpu_list", "0, 1, 2, 3\n");
	block_links("vda", VIRTIO1 "/virtio1/block/vda");
	/* its partition */
	put(VIRTIO1 "/virtio1/block/vda/vda1/partition", "1\n");
	put(VIRTIO1 "/virtio1/block/vda/vda1/dev", "254:1\n");
	lnk("sys/class/block/vda1",
	    "../../devices/pci0000:00/0000:00:02.0/virtio1/block/vda/vda1");
	n += irq_row(irqs + n, sizeof(irqs) - n, 35,
		     "PCI-MSIX-0000:00:02.0 0-edge", "virtio1-config");
	n += irq_row(irqs + n, sizeof(irqs) - n, 36,
		     "PCI-MSIX-0000:00:02.0 1-edge", "virtio1-req.0");
	affinity(36, "1", "0-3");

	/* sdz: a SCSI disk behind an HBA with three vectors, two in use */
	put(HBA "/msi_irqs/70", "msix\n");
	put(HBA "/msi_irqs/71", "msix\n");
	put(HBA "/msi_irqs/72", "msix\n");
	put(HBA "/msi_irqs/garbage", "msix\n");
	lnk(HBA "/driver", "../../../bus/pci/drivers/mpt3sas");
	put(HBA "/host0/target0:0:0/0:0:0:0/block/sdz/dev", "8:0\n");
	lnk(HBA "/host0/target0:0:0/0:0:0:0/block/sdz/device",
	    "../../../0:0:0:0");
	lnk(HBA "/host0/target0:0:0/0:0:0:0/driver",
	    "../../../../../../bus/scsi/drivers/sd");
	put(HBA "/host0/target0:0:0/0:0:0:0/block/sdz/mq/0/cpu_list", "0-1\n");
	put(HBA "/host0/target0:0:0/0:0:0:0/block/sdz/mq/1/cpu_list", "2-3\n");
	block_links("sdz", HBA "/host0/target0:0:0/0:0:0:0/block/sdz");
	n += irq_row(irqs + n, sizeof(irqs) - n, 71,
		     "IR-PCI-MSIX-0000:00:07.0 1-edge", "mpt3sas0-msix0");
	n += irq_row(irqs + n, sizeof(irqs) - n, 72,
		     "IR-PCI-MSIX-0000:00:07.0 2-edge", "mpt3sas0-msix1");
	affinity(71, "zz", "0-1"); /* garbage: smp_affinity_list instead */
	affinity(72, "3", "2-3");

	/* zram0: bio-based, no device */
	put("sys/devices/virtual/block/zram0/dev", "252:0\n");
	block_links("zram0", "sys/devices/virtual/block/zram0");
	/* loop0: blk-mq, no device */
	put("sys/devices/virtual/block/loop0/dev", "7:0\n");
	put("sys/devices/virtual/block/loop0/mq/0/cpu_list", "0, 1, 2, 3\n");
	block_links("loop0", "sys/devices/virtual/block/loop0");

	/* vdg: virtio7, garbage everywhere */
	put(VIRTIO7 "/virtio7/block/vdg/dev", "254:16\n");
	lnk(VIRTIO7 "/virtio7/block/vdg/device", "../../../virtio7");
	put(VIRTIO7 "/virtio7/block/vdg/mq/0/cpu_list", "0, 5000\n");
	put(VIRTIO7 "/virtio7/block/vdg/mq/1/cpu_list", "banana\n");
	put(VIRTIO7 "/virtio7/block/vdg/mq/2/cpu_list",
	    "99999999999999999999999999\n");
	mkdirs(VIRTIO7 "/virtio7/block/vdg/mq/3");
	put(VIRTIO7 "/virtio7/block/vdg/mq/junk/cpu_list", "0\n");
	put(VIRTIO7 "/virtio7/block/vdg/mq/4/cpu_list", "3-1\n");
	block_links("vdg", VIRTIO7 "/virtio7/block/vdg");
	n += irq_row(irqs + n, sizeof(irqs) - n, 81,
		     "PCI-MSIX-0000:00:08.0 1-edge", "virtio7-req.0");
	affinity(81, "0-4294967296", NULL);
	/* rows cut short, an empty one, an absurd IRQ number */
	n += (size_t)snprintf(irqs + n, sizeof(irqs) - n,
			      " 82:\n 83\n99999999999999999999: 1 virtio7-req.1"
			      "\n:\n  84: 0 0 0 0 PCI-MSIX virtio7-req.");

	/* bad0: a dev file of garbage; bad1: a major beyond dev_t's */
	put("sys/devices/virtual/block/bad0/dev", "garbage\n");
	block_links("bad0", "sys/devices/virtual/block/bad0");
	put("sys/devices/virtual/block/bad1/dev", "4096:0\n");
	block_links("bad1", "sys/devices/virtual/block/bad1");

	put_bytes("proc/interrupts", irqs, n);

	/* /dev: nodes as files, by-id and by-path links */
	put_bytes("dev/vda", "", 0);
	put_bytes("dev/vda1", "", 0);
	put_bytes("dev/nvme0n1", "", 0);
	put_bytes("dev/notadisk", "", 0);
	lnk("dev/disk/by-id/virtio-SER123", "../../vda");
	lnk("dev/disk/by-id/virtio-SER123-part1", "../../vda1");
	lnk("dev/disk/by-id/nvme-eui.0001", "../../nvme0n1");
	lnk("dev/disk/by-id/abs", "/dev/vda1");
	lnk("dev/disk/by-id/chain", "nvme-eui.0001");
	lnk("dev/disk/by-id/loop-a", "loop-b");
	lnk("dev/disk/by-id/loop-b", "loop-a");
	lnk("dev/disk/by-id/escape", "../../../etc/passwd");
	lnk("dev/disk/by-id/outside", "/etc/passwd");
	lnk("dev/disk/by-path/pci-0000:00:02.0", "../../vda");
}

static void test_nvme_per_cpu(void)
{
	struct latd_disk d;
	int i;

	discover("nvme0n1", &d);
	CHECK_STREQ(d.driver, "nvme");
	CHECK_EQ(d.major, 259);
	CHECK_EQ(d.minor, 0);
	CHECK_EQ(d.nr_hwq, 4);
	CHECK_EQ(d.nr_paths, 0);
	for (i = 0; i < 4; i++) {
		char cpu[4];

		snprintf(cpu, sizeof(cpu), "%d", i);
		check_hwq(&d, i, i, 41 + i, cpu, cpu);
		CHECK_EQ(d.hwq[i].path, -1);
		CHECK(latd_hwq_of_cpu(&d, i) == &d.hwq[i]);
	}
	CHECK_CPUS(d.online, "0-3");
	CHECK_CPUS(d.irq_cpus, "0-3");
	CHECK_CPUS(d.submit_cpus, "0-3");
	CHECK_STREQ(d.note, "");
	CHECK(!latd_hwq_of_cpu(&d, 4));
	CHECK(!latd_hwq_of_cpu(&d, -1));
	CHECK(!latd_hwq_of_cpu(&d, 1 << 30));
	latd_disk_free(&d);
	CHECK(!d.hwq);
	CHECK_EQ(d.nr_hwq, 0);
	latd_disk_free(&d); /* twice is harmless */
}

static void test_offline_cpu(void)
{
	struct latd_disk d;

	put("sys/devices/system/cpu/online", "0-2\n");
	discover("nvme0n1", &d);
	CHECK_EQ(d.nr_hwq, 4);
	/* the queue keeps what its files say, the disk's sets are online */
	check_hwq(&d, 3, 3, 44, "3", "3");
	CHECK_CPUS(d.online, "0-2");
	CHECK_CPUS(d.irq_cpus, "0-2");
	CHECK_CPUS(d.submit_cpus, "0-2");
	CHECK_CONTAINS(d.note, "hwq 3: its interrupt's CPUs are offline");
	latd_disk_free(&d);

	/* no online file: every CPU listed, with a note */
	rm("sys/devices/system/cpu/online");
	discover("nvme0n1", &d);
	CHECK_CPUS(d.online, "0-3");
	CHECK_CPUS(d.irq_cpus, "0-3");
	CHECK_CONTAINS(d.note, "online CPUs unknown");
	latd_disk_free(&d);
	put("sys/devices/system/cpu/online", "0-3\n");
}

static void test_nvme_shared_and_poll(void)
{
	struct latd_disk d;

	discover("nvme1n1", &d);
	CHECK_STREQ(d.driver, "nvme");
	CHECK_EQ(d.nr_hwq, 2);
	/* q1 on the vector it shares with the admin queue; q2 polled */
	check_hwq(&d, 0, 0, 50, "0-3", "2");
	check_hwq(&d, 1, 1, -1, "0-3", "");
	CHECK_CPUS(d.irq_cpus, "2");
	CHECK_CPUS(d.submit_cpus, "0-3");
	CHECK_CONTAINS(d.note, "hwq 1 without interrupt (poll queues)");
	CHECK_CONTAINS(d.note, "irq 50 shared by 2 handlers");
	CHECK(latd_hwq_of_cpu(&d, 3) == &d.hwq[0]);
	latd_disk_free(&d);
}

static void test_multipath(void)
{
	char names[4][LATD_NAME_MAX], err[256];
	struct latd_disk d;

	discover("nvme2n1", &d);
	CHECK_EQ(d.major, 259);
	CHECK_EQ(d.minor, 2);
	CHECK_EQ(d.nr_paths, 1);
	CHECK_STREQ(d.paths[0].name, "nvme2c2n1");
	CHECK_EQ(d.paths[0].major, 259);
	CHECK_EQ(d.paths[0].minor, 3);
	CHECK_STREQ(d.driver, "nvme");
	CHECK_EQ(d.nr_hwq, 2);
	/* the path's queues through its own controller: nvme2q1, nvme2q2 */
	check_hwq(&d, 0, 0, 61, "0-1", "0-1");
	check_hwq(&d, 1, 1, 62, "2-3", "3");
	CHECK_EQ(d.hwq[0].path, 0);
	CHECK_EQ(d.hwq[1].path, 0);
	CHECK_CPUS(d.irq_cpus, "0-1,3");
	CHECK_CPUS(d.submit_cpus, "0-3");
	CHECK(latd_hwq_of_cpu(&d, 2) == &d.hwq[1]);
	latd_disk_free(&d);

	/* the path disk itself is a disk too */
	discover("nvme2c2n1", &d);
	CHECK_EQ(d.nr_paths, 0);
	CHECK_EQ(d.nr_hwq, 2);
	check_hwq(&d, 1, 1, 62, "2-3", "3");
	latd_disk_free(&d);

	/* a glob matches the head, not its hidden path */
	CHECK_EQ(latd_resolve(&fx, "nvme2*", names, 4, err, sizeof(err)), 1);
	CHECK_STREQ(names[0], "nvme2n1");
	/* named, the path resolves */
	CHECK_EQ(latd_resolve(&fx, "nvme2c2n1", names, 4, err, sizeof(err)), 1);
	CHECK_STREQ(names[0], "nvme2c2n1");
}

static void test_virtio(void)
{
	struct latd_disk d;

	discover("vda", &d);
	CHECK_STREQ(d.driver, "virtio_blk");
	CHECK_EQ(d.major, 254);
	CHECK_EQ(d.minor, 0);
	CHECK_EQ(d.nr_hwq, 1);
	check_hwq(&d, 0, 0, 36, "0-3", "1");
	CHECK_CPUS(d.irq_cpus, "1");
	CHECK_CPUS(d.submit_cpus, "0-3");
	CHECK_STREQ(d.note, "");
	CHECK(latd_hwq_of_cpu(&d, 3) == &d.hwq[0]);
	latd_disk_free(&d);
}

static void test_other_pci(void)
{
	struct latd_disk d;

	/* msi_irqs 70-72, 70 not requested: two vectors, two queues */
	discover("sdz", &d);
	CHECK_STREQ(d.driver, "sd");
	CHECK_EQ(d.nr_hwq, 2);
	check_hwq(&d, 0, 0, 71, "0-1", "0-1");
	check_hwq(&d, 1, 1, 72, "2-3", "3");
	CHECK_CONTAINS(d.note, "mapped to queues by order");
	CHECK_CONTAINS(d.note, "irq 71: no effective affinity");
	latd_disk_free(&d);

	/* three in use for two queues: each queue takes all of them */
	{
		char row[160];
		size_t n;

		n = irq_row(row, sizeof(row), 70,
			    "IR-PCI-MSIX-0000:00:07.0 0-edge", "mpt3sas0-ctl");
		put_bytes("proc/interrupts.extra", row, n);
	}
	{
		char path[PATH_MAX * 2], *all = NULL;
		size_t len = 0;
		FILE *f, *o;
		int ch;

		/* prepend the row for irq 70 */
		snprintf(path, sizeof(path), "%s/proc/interrupts", root);
		f = fopen(path, "r");
		CHECK(f);
		o = open_memstream(&all, &len);
		CHECK(o);
		snprintf(path, sizeof(path), "%s/proc/interrupts.extra", root);
		{
			FILE *e = fopen(path, "r");

			CHECK(e);
			while ((ch = fgetc(e)) != EOF)
				fputc(ch, o);
			fclose(e);
		}
		while ((ch = fgetc(f)) != EOF)
			fputc(ch, o);
		fclose(f);
		fclose(o);
		put_bytes("proc/interrupts", all, len);
		free(all);
	}
	affinity(70, "2", "0-3");
	discover("sdz", &d);
	CHECK_EQ(d.nr_hwq, 2);
	check_hwq(&d, 0, 0, -1, "0-1", "0-3");
	check_hwq(&d, 1, 1, -1, "2-3", "0-3");
	CHECK_CONTAINS(d.note, "3 vectors for 2 queues: each takes all");
	latd_disk_free(&d);
}

static void test_virtual(void)
{
	struct latd_disk d;

	discover("zram0", &d);
	CHECK_EQ(d.nr_hwq, 0);
	CHECK_STREQ(d.driver, "");
	CHECK_CONTAINS(d.note, "no mq/ (bio-based)");
	CHECK(!latd_hwq_of_cpu(&d, 0));
	latd_disk_free(&d);

	discover("loop0", &d);
	CHECK_EQ(d.nr_hwq, 1);
	check_hwq(&d, 0, 0, -1, "0-3", "");
	CHECK_CPUS(d.submit_cpus, "0-3");
	CHECK_CPUS(d.irq_cpus, "");
	CHECK_CONTAINS(d.note, "no device");
	latd_disk_free(&d);
}

static void test_garbage(void)
{
	char err[256];
	struct latd_disk d;
	int ret;

	discover("vdg", &d);
	/* mq/0..4 (junk skipped), sorted by index */
	CHECK_EQ(d.nr_hwq, 5);
	check_hwq(&d, 0, 0, 81, "0", "0-1023");
	check_hwq(&d, 1, 1, -1, "", "");
	check_hwq(&d, 2, 2, -1, "", "");
	check_hwq(&d, 3, 3, -1, "", "");
	check_hwq(&d, 4, 4, -1, "", "");
	CHECK_CPUS(d.irq_cpus, "0-3");
	CHECK_CPUS(d.submit_cpus, "0");
	CHECK_CONTAINS(d.note, "CPUs above 1023 ignored");
	CHECK_CONTAINS(d.note, "mq/1/cpu_list: not a CPU list");
	latd_disk_free(&d);

	ret = latd_discover(&fx, "bad0", &d, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	CHECK_CONTAINS(err, "not a MAJOR:MINOR");
	CHECK(!d.hwq);
	ret = latd_discover(&fx, "bad1", &d, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	ret = latd_discover(&fx, "nosuch", &d, err, sizeof(err));
	CHECK_EQ(ret, -ENODEV);
	CHECK_CONTAINS(err, "no disk nosuch");
	ret = latd_discover(&fx, "../block", &d, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	ret = latd_discover(&fx, "", &d, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	ret = latd_discover(&fx, "a-name-far-longer-than-thirty-one-bytes", &d,
			    err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	/* no error buffer at all */
	CHECK_EQ(latd_discover(&fx, "nosuch", &d, NULL, 0), -ENODEV);

	/* no /proc/interrupts: queues without interrupts, and a note */
	rm("proc/interrupts");
	discover("vda", &d);
	CHECK_EQ(d.nr_hwq, 1);
	check_hwq(&d, 0, 0, -1, "0-3", "");
	CHECK_CONTAINS(d.note, "interrupts unknown");
	latd_disk_free(&d);
}

/* Mutate what discovery reads into random text (of the characters those
 * files hold, and a few others) or bytes: it must end cleanly, every
 * time. */
static void test_random_garbage(void)
{
	static const char *const files[] = {
		"proc/interrupts",
		"proc/irq/36/effective_affinity_list",
		"proc/irq/36/smp_affinity_list",
		"proc/irq/50/effective_affinity_list",
		VIRTIO1 "/virtio1/block/vda/mq/0/cpu_list",
		NVME1 "/nvme/nvme1/nvme1n1/mq/0/cpu_list",
		NVME1 "/nvme/nvme1/nvme1n1/dev",
		"sys/devices/system/cpu/online",
		NVME1 "/nvme/nvme1/transport",
	};
	static const char alphabet[] = "0123456789,- :\n\tabnvmeq.virtio-req";
	uint64_t seed = test_seed("random garbage", 0x1a7d), v;
	char buf[512], err[256];
	struct latd_disk d;
	int round, i, n, ret;

	for (round = 0; round < 300; round++) {
		v = test_rand(&seed);
		i = (int)(v % (sizeof(files) / sizeof(files[0])));
		n = (int)((v >> 8) % sizeof(buf));
		for (int k = 0; k < n; k++) {
			v = test_rand(&seed);
			buf[k] = round % 4 ?
					 alphabet[v % (sizeof(alphabet) - 1)] :
					 (char)v;
		}
		put_bytes(files[i], buf, (size_t)n);
		err[0] = '\0';
		ret = latd_discover(&fx, round % 2 ? "vda" : "nvme1n1", &d, err,
				    sizeof(err));
		if (ret) {
			CHECK(ret < 0);
			CHECK(err[0]);
			CHECK(!d.hwq);
			continue;
		}
		CHECK(strlen(d.note) < sizeof(d.note));
		CHECK(d.nr_hwq >= 0 && d.nr_hwq <= 4096);
		for (int k = 0; k < d.nr_hwq; k++)
			CHECK(d.hwq[k].irq >= -1);
		latd_disk_free(&d);
	}
}

static void resolve1(const char *spec, const char *want)
{
	char names[2][LATD_NAME_MAX], err[256] = "";
	int ret = latd_resolve(&fx, spec, names, 2, err, sizeof(err));

	if (ret != 1)
		check_failed(__FILE__, __LINE__, "latd_resolve", "%s: %d: %s",
			     spec, ret, err);
	CHECK_STREQ(names[0], want);
}

static void resolve_fails(const char *spec, int want, const char *msg)
{
	char names[2][LATD_NAME_MAX], err[256] = "";
	int ret = latd_resolve(&fx, spec, names, 2, err, sizeof(err));

	if (ret != want)
		check_failed(__FILE__, __LINE__, "latd_resolve",
			     "%s: %d, want %d: %s", spec, ret, want, err);
	CHECK_CONTAINS(err, msg);
}

static void test_resolve(void)
{
	char names[8][LATD_NAME_MAX], err[256];

	resolve1("vda", "vda");
	resolve1("vda1", "vda");
	resolve1("/dev/vda", "vda");
	resolve1("/dev/vda1", "vda");
	resolve1("/dev/disk/by-id/virtio-SER123", "vda");
	resolve1("/dev/disk/by-id/virtio-SER123-part1", "vda");
	resolve1("/dev/disk/by-path/pci-0000:00:02.0", "vda");
	resolve1("/dev/disk/by-id/nvme-eui.0001", "nvme0n1");
	resolve1("/dev/disk/by-id/chain", "nvme0n1");
	resolve1("/dev/disk/by-id/abs", "vda");
	resolve1("/dev//disk/./by-id/../by-id/abs", "vda");

	resolve_fails("nosuch", -ENODEV, "no such disk: nosuch");
	resolve_fails("/dev/nosuch", -ENODEV, "no such device");
	resolve_fails("/dev/notadisk", -ENOTBLK, "not a block device");
	resolve_fails("/dev/disk", -ENOTBLK, "not a block device");
	resolve_fails("/dev/disk/by-id/loop-a", -ELOOP, "too many");
	resolve_fails("/dev/disk/by-id/escape", -EXDEV, "outside /dev");
	resolve_fails("/dev/disk/by-id/outside", -EXDEV, "outside /dev");
	resolve_fails("/dev/../etc/passwd", -EXDEV, "outside /dev");
	resolve_fails("/tmp/vda", -EINVAL, "not a disk name or a path");
	resolve_fails("", -EINVAL, "empty");
	resolve_fails("a/b", -EINVAL, "not a disk name");
	resolve_fails("/dev/*/by-id/virtio-*", -EINVAL, "last part");
	resolve_fails("/tmp/*", -EINVAL, "last part");
	resolve_fails("/dev/nodir/*", -ENODEV, "/dev/nodir");

	/* a block node named unlike its disk (/dev/mapper/..., a udev
	 * rename): its device number names the disk; needs CAP_MKNOD */
	lnk("sys/dev/block/254:1", "../../devices/pci0000:00/0000:00:02.0/"
				   "virtio1/block/vda/vda1");
	{
		char node[PATH_MAX * 2];

		mkdirs("dev/mapper");
		snprintf(node, sizeof(node), "%s/dev/mapper/boot", root);
		if (!mknod(node, S_IFBLK | 0600, makedev(254, 1))) {
			resolve1("/dev/mapper/boot", "vda");
		} else {
			printf("mknod: %s: block node case not run\n",
			       strerror(errno));
		}
	}

	/* globs: sorted whole disks, none, too many */
	CHECK_EQ(latd_resolve(&fx, "nvme*n1", names, 8, err, sizeof(err)), 3);
	CHECK_STREQ(names[0], "nvme0n1");
	CHECK_STREQ(names[1], "nvme1n1");
	CHECK_STREQ(names[2], "nvme2n1");
	CHECK_EQ(latd_resolve(&fx, "vd[a-f]", names, 8, err, sizeof(err)), 1);
	CHECK_STREQ(names[0], "vda");
	CHECK_EQ(latd_resolve(&fx, "sd?", names, 8, err, sizeof(err)), 1);
	CHECK_EQ(latd_resolve(&fx, "hd*", names, 8, err, sizeof(err)), 0);
	CHECK_EQ(latd_resolve(&fx, "*", names, 2, err, sizeof(err)), -E2BIG);
	CHECK_CONTAINS(err, "more than 2");
	/* a glob over links: a disk and its partition count once; links
	 * that lead nowhere are skipped */
	CHECK_EQ(latd_resolve(&fx, "/dev/disk/by-id/virtio-*", names, 8, err,
			      sizeof(err)),
		 1);
	CHECK_STREQ(names[0], "vda");
	CHECK_EQ(latd_resolve(&fx, "/dev/disk/by-id/*", names, 8, err,
			      sizeof(err)),
		 2);
	CHECK_STREQ(names[0], "nvme0n1");
	CHECK_STREQ(names[1], "vda");
	CHECK_EQ(latd_resolve(&fx, "/dev/disk/by-id/*", names, 1, err,
			      sizeof(err)),
		 -E2BIG);
	CHECK_EQ(latd_resolve(&fx, "/dev/disk/by-id/sas-*", names, 8, err,
			      sizeof(err)),
		 0);
	CHECK_EQ(latd_resolve(&fx, "vda", names, 0, err, sizeof(err)), -EINVAL);
}

/* This host: every disk discovers; vda's request interrupt is found. */
static void test_real_host(void)
{
	static const struct latd_roots real = { "/sys", "/proc", "/dev" };
	char err[256], names[2][LATD_NAME_MAX], row[512], want[16];
	struct latd_disk d;
	struct dirent *e;
	int ret, i, found = 0, disks = 0;
	DIR *dir;
	FILE *f;

	dir = opendir("/sys/block");
	if (!dir) {
		printf("real host: no /sys/block, skipped\n");
		return;
	}
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= LATD_NAME_MAX)
			continue;
		ret = latd_discover(&real, e->d_name, &d, err, sizeof(err));
		if (ret)
			check_failed(__FILE__, __LINE__, "real latd_discover",
				     "%s: %d: %s", e->d_name, ret, err);
		printf("host %s: %u:%u, %d queues, driver \"%s\", note "
		       "\"%s\"\n",
		       d.name, d.major, d.minor, d.nr_hwq, d.driver, d.note);
		disks++;
		latd_disk_free(&d);
	}
	closedir(dir);
	CHECK(disks > 0);

	if (access("/sys/block/vda", F_OK)) {
		printf("real host: no vda, its interrupt check skipped\n");
		return;
	}
	ret = latd_discover(&real, "vda", &d, err, sizeof(err));
	CHECK_OK(ret);
	CHECK_STREQ(d.driver, "virtio_blk");
	CHECK(d.nr_hwq >= 1);
	/* each interrupt found is a row of /proc/interrupts naming
	 * virtioN-req.M */
	for (i = 0; i < d.nr_hwq; i++) {
		if (d.hwq[i].irq < 0)
			continue;
		CHECK(CPU_COUNT(&d.hwq[i].irq_cpus) > 0);
		snprintf(want, sizeof(want), "%d:", d.hwq[i].irq);
		f = fopen("/proc/interrupts", "r");
		CHECK(f);
		while (fgets(row, sizeof(row), f)) {
			char *p = row;

			while (*p == ' ')
				p++;
			if (strncmp(p, want, strlen(want)))
				continue;
			row[strcspn(row, "\n")] = '\0';
			if (!fnmatch("*virtio*-req*", row, 0))
				found++;
			printf("vda hwq %d: %s\n", d.hwq[i].index, row);
		}
		fclose(f);
	}
	CHECK(found > 0);
	CHECK(CPU_COUNT(&d.irq_cpus) > 0);
	latd_disk_free(&d);

	CHECK_EQ(latd_resolve(&real, "vda", names, 2, err, sizeof(err)), 1);
	CHECK_STREQ(names[0], "vda");
	if (!access("/dev/vda", F_OK)) {
		/* a real block node: its device number names the disk */
		CHECK_EQ(latd_resolve(&real, "/dev/vda", names, 2, err,
				      sizeof(err)),
			 1);
		CHECK_STREQ(names[0], "vda");
	}
}

int main(void)
{
	build_tree();
	test_nvme_per_cpu();
	test_offline_cpu();
	test_nvme_shared_and_poll();
	test_multipath();
	test_virtio();
	test_other_pci();
	test_virtual();
	test_resolve();
	test_garbage(); /* removes proc/interrupts */
	test_random_garbage(); /* last: leaves garbage */
	remove_tree();
	check_cleanup = NULL;
	test_real_host();
	return T_EXIT_PASS;
}
