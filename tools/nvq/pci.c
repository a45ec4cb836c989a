// SPDX-License-Identifier: MIT
/*
 * The PCI side of nvq: the NVMe controllers sysfs lists, and setup /
 * reset, which hand a controller to vfio-pci and back to the kernel's
 * nvme driver. Test aids: NVQ_SYSFS_PCI replaces /sys/bus/pci/devices,
 * NVQ_SYSFS_NVME_SUBSYS /sys/class/nvme-subsystem, NVQ_PCI_IDS the
 * pci.ids file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "sysfs.h"

/* "@dir/@name" into @out; false when it does not fit. */
static bool path_join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", dir, name);

	return n >= 0 && (size_t)n < len;
}

/* @src into @dst of @len bytes, cut short if need be. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static const char *pci_root(void)
{
	const char *root = getenv("NVQ_SYSFS_PCI");

	return root && *root ? root : "/sys/bus/pci/devices";
}

/* The text of the attribute @dir/@name; false if none (or empty). */
static bool read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];

	return path_join(path, sizeof(path), dir, name) &&
	       nvq_sysfs_read(path, buf, len) > 0;
}

/* The hex number in the attribute @dir/@name, 0 if there is none. */
static unsigned int read_hex(const char *dir, const char *name)
{
	char path[PATH_MAX];
	long v;

	if (!path_join(path, sizeof(path), dir, name) ||
	    nvq_sysfs_read_long(path, 16, &v))
		return 0;
	return (unsigned int)v;
}

/* Last component of the symlink @dir/@name, "none" if there is none. */
static void link_base(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];

	if (!path_join(path, sizeof(path), dir, name) ||
	    nvq_sysfs_link_name(path, buf, len) < 0)
		copy_str(buf, len, "none");
}

/* Model, serial and firmware of a controller the kernel's nvme owns. */
static void pci_nvme_names(const char *dev, struct pci_nvme *p)
{
	char dir[PATH_MAX], buf[64];
	struct dirent *de;
	DIR *d;

	if (!path_join(dir, sizeof(dir), dev, "nvme"))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char sub[PATH_MAX];

		if (strncmp(de->d_name, "nvme", 4))
			continue;
		if (!path_join(sub, sizeof(sub), dir, de->d_name))
			continue;
		if (read_line(sub, "model", buf, sizeof(buf)))
			dev_string(buf, sizeof(p->model) - 1, p->model);
		if (read_line(sub, "serial", buf, sizeof(buf)))
			dev_string(buf, sizeof(p->serial) - 1, p->serial);
		if (read_line(sub, "firmware_rev", buf, sizeof(buf)))
			dev_string(buf, sizeof(p->firmware) - 1, p->firmware);
		rtrim(p->model);
		rtrim(p->serial);
		rtrim(p->firmware);
		break;
	}
	closedir(d);
}

/* NVMe controllers (class 01h/08h/02h) in sysfs, sorted by address. */
int pci_scan(struct pci_nvme **out, size_t *nr)
{
	const char *root = pci_root();
	struct dirent **list;
	struct pci_nvme *v = NULL;
	size_t n = 0;
	int entries;

	*out = NULL;
	*nr = 0;
	entries = scandir(root, &list, NULL, alphasort);
	if (entries < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int i = 0; i < entries; i++) {
		char dev[PATH_MAX], cls[32];
		struct pci_nvme *p, *nv;

		if (list[i]->d_name[0] == '.' ||
		    !path_join(dev, sizeof(dev), root, list[i]->d_name) ||
		    !read_line(dev, "class", cls, sizeof(cls)) ||
		    strtoul(cls, NULL, 16) != 0x010802)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		p = &v[n++];
		memset(p, 0, sizeof(*p));
		copy_str(p->bdf, sizeof(p->bdf), list[i]->d_name);
		p->vendor = read_hex(dev, "vendor");
		p->device = read_hex(dev, "device");
		link_base(dev, "driver", p->driver, sizeof(p->driver));
		if (!strcmp(p->driver, "nvme"))
			pci_nvme_names(dev, p);
	}
	for (int i = 0; i < entries; i++)
		free(list[i]);
	free(list);
	*out = v;
	*nr = n;
	return 0;
}

/* --- the kernel's namespaces of a controller --------------------------- */

static const char *subsys_root(void)
{
	const char *root = getenv("NVQ_SYSFS_NVME_SUBSYS");

	return root && *root ? root : "/sys/class/nvme-subsystem";
}

/* The namespace block device in @dir (nsid, size, block sizes) into @k. */
static void read_ns(const char *dir, struct kernel_ns *k)
{
	char path[PATH_MAX];
	long v;

	k->ms = -1;
	if (path_join(path, sizeof(path), dir, "nsid") &&
	    !nvq_sysfs_read_long(path, 10, &v) && v > 0 && v <= 0xffffffffL)
		k->nsid = (uint32_t)v;
	/* "size" counts 512-byte sectors whatever the LBA size */
	if (path_join(path, sizeof(path), dir, "size") &&
	    !nvq_sysfs_read_long(path, 10, &v) && v > 0)
		k->bytes = (uint64_t)v * 512;
	if (path_join(path, sizeof(path), dir, "queue/logical_block_size") &&
	    !nvq_sysfs_read_long(path, 10, &v) && v > 0 && v <= 1L << 20)
		k->lba_size = (uint32_t)v;
	if (path_join(path, sizeof(path), dir, "metadata_bytes") &&
	    !nvq_sysfs_read_long(path, 10, &v) && v >= 0 && v <= 65535)
		k->ms = (int)v;
}

static int cmp_kns(const void *a, const void *b)
{
	const struct kernel_ns *x = a, *y = b;

	if (x->index != y->index)
		return x->index - y->index;
	return strverscmp(x->block, y->block);
}

/* One namespace entry @name of controller @ctrl (instance @inst) in @cdir. */
static bool kernel_ns_of(const char *cdir, const char *ctrl, int inst,
			 const char *name, struct kernel_ns *k)
{
	unsigned int x, y, z;
	char dir[PATH_MAX], head[PATH_MAX];
	int n = -1;

	memset(k, 0, sizeof(*k));
	copy_str(k->ctrl, sizeof(k->ctrl), ctrl);
	k->index = inst;
	if (sscanf(name, "nvme%uc%un%u%n", &x, &y, &z, &n) == 3 &&
	    n == (int)strlen(name)) {
		/* native multipath: the path's block device is the head's */
		snprintf(k->block, sizeof(k->block), "nvme%un%u", x, z);
		snprintf(k->generic, sizeof(k->generic), "ng%un%u", y, z);
		snprintf(head, sizeof(head), "%s/nvme-subsys%u/%s",
			 subsys_root(), x, k->block);
		if (path_join(dir, sizeof(dir), cdir, name))
			read_ns(dir, k);
		if (!access(head, F_OK))
			read_ns(head, k);
		return true;
	}
	n = -1;
	if (sscanf(name, "nvme%un%u%n", &x, &z, &n) == 2 &&
	    n == (int)strlen(name)) {
		copy_str(k->block, sizeof(k->block), name);
		snprintf(k->generic, sizeof(k->generic), "ng%un%u", x, z);
		if (path_join(dir, sizeof(dir), cdir, name))
			read_ns(dir, k);
		return true;
	}
	return false;
}

int pci_kernel_ns(const struct pci_nvme *p, char *ctrls, size_t len,
		  struct kernel_ns **out, size_t *nr)
{
	char dev[PATH_MAX], dir[PATH_MAX];
	struct kernel_ns *v = NULL;
	struct dirent *de;
	size_t n = 0, cl = 0;
	DIR *d;

	*out = NULL;
	*nr = 0;
	ctrls[0] = '\0';
	if (!path_join(dev, sizeof(dev), pci_root(), p->bdf) ||
	    !path_join(dir, sizeof(dir), dev, "nvme"))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char cdir[PATH_MAX];
		struct dirent *e;
		unsigned int inst;
		int k = -1;
		DIR *c;

		if (sscanf(de->d_name, "nvme%u%n", &inst, &k) != 1 ||
		    k != (int)strlen(de->d_name) ||
		    !path_join(cdir, sizeof(cdir), dir, de->d_name))
			continue;
		if (cl < len)
			cl += (size_t)snprintf(ctrls + cl, len - cl, "%s%s",
					       cl ? "," : "", de->d_name);
		c = opendir(cdir);
		if (!c)
			continue;
		while ((e = readdir(c))) {
			struct kernel_ns ns, *nv;

			if (!kernel_ns_of(cdir, de->d_name, (int)inst,
					  e->d_name, &ns))
				continue;
			nv = realloc(v, (n + 1) * sizeof(*v));
			if (!nv) {
				closedir(c);
				closedir(d);
				free(v);
				return -ENOMEM;
			}
			v = nv;
			v[n++] = ns;
		}
		closedir(c);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_kns);
	*out = v;
	*nr = n;
	return 0;
}

/* One "ID  NAME" line of pci.ids at @indent tabs, for @id; its name. */
static bool ids_line(const char *line, int indent, unsigned int id, char *name,
		     size_t len)
{
	unsigned int v;
	int n = -1;

	for (int i = 0; i < indent; i++)
		if (line[i] != '\t')
			return false;
	line += indent;
	if (*line == '\t' || sscanf(line, "%4x  %n", &v, &n) != 1 || n < 0 ||
	    v != id)
		return false;
	copy_str(name, len, line + n);
	name[strcspn(name, "\n")] = '\0';
	return true;
}

bool pci_ids_name(unsigned int vendor, unsigned int device, char *buf,
		  size_t len)
{
	static const char *const files[] = { "/usr/share/misc/pci.ids",
					     "/usr/share/hwdata/pci.ids" };
	const char *env = getenv("NVQ_PCI_IDS");
	char line[512], vname[256] = "", dname[256] = "";
	FILE *f = NULL;

	if (env && *env)
		f = fopen(env, "re");
	for (size_t i = 0; !f && !env && i < ARRAY_SIZE(files); i++)
		f = fopen(files[i], "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!vname[0]) {
			ids_line(line, 0, vendor, vname, sizeof(vname));
			continue;
		}
		if (line[0] != '\t' && line[0] != '#')
			break; /* the next vendor */
		if (ids_line(line, 1, device, dname, sizeof(dname)))
			break;
	}
	fclose(f);
	if (!vname[0] || !dname[0])
		return false;
	snprintf(buf, len, "%s %s", vname, dname);
	return true;
}

/* --- setup / release: hand a controller to vfio-pci and back ---------- */

static int write_attr(const char *dir, const char *name, const char *val)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (!path_join(path, sizeof(path), dir, name))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

/* The PID of a process that holds @path open, 0 if none. */
static long holder_of(const char *path, char *comm, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;
	long pid = 0;

	if (!proc)
		return 0;
	while (!pid && (p = readdir(proc))) {
		char fddir[300], fdp[600], target[PATH_MAX];
		struct dirent *f;
		DIR *fds;

		if (p->d_name[0] < '1' || p->d_name[0] > '9' ||
		    snprintf(fddir, sizeof(fddir), "/proc/%.32s/fd",
			     p->d_name) < 0)
			continue;
		fds = opendir(fddir);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			ssize_t l;

			if (!path_join(fdp, sizeof(fdp), fddir, f->d_name))
				continue;
			l = readlink(fdp, target, sizeof(target) - 1);
			if (l > 0 &&
			    (target[l] = '\0', !strcmp(target, path))) {
				pid = atol(p->d_name);
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	if (pid) {
		char dir[64];

		snprintf(dir, sizeof(dir), "/proc/%ld", pid);
		if (!read_line(dir, "comm", comm, len))
			copy_str(comm, len, "?");
	}
	return pid;
}

/* A mounted (or swapped-on) namespace of the controller at @dev, if any. */
static bool ns_in_use(const char *dev, char *what, size_t len)
{
	static const char *const tables[] = { "/proc/mounts", "/proc/swaps" };
	char dir[PATH_MAX], ctrl[PATH_MAX], line[1024];
	struct dirent *c, *b;
	DIR *cd, *bd;
	bool busy = false;

	if (!path_join(dir, sizeof(dir), dev, "nvme") || !(cd = opendir(dir)))
		return false;
	while (!busy && (c = readdir(cd))) {
		if (strncmp(c->d_name, "nvme", 4) ||
		    !path_join(ctrl, sizeof(ctrl), dir, c->d_name) ||
		    !(bd = opendir(ctrl)))
			continue;
		while (!busy && (b = readdir(bd))) {
			char name[300];

			if (strncmp(b->d_name, "nvme", 4) ||
			    !strchr(b->d_name, 'n'))
				continue;
			snprintf(name, sizeof(name), "/dev/%s", b->d_name);
			for (size_t t = 0; !busy && t < ARRAY_SIZE(tables);
			     t++) {
				FILE *f = fopen(tables[t], "re");

				while (f && !busy &&
				       fgets(line, sizeof(line), f))
					if (!strncmp(line, name,
						     strlen(name))) {
						busy = true;
						copy_str(what, len, line);
						what[strcspn(what, "\n")] =
							'\0';
					}
				if (f)
					fclose(f);
			}
		}
		closedir(bd);
	}
	closedir(cd);
	return busy;
}

/* Load @mod unless its PCI driver is there already. */
static void load_driver(const char *mod)
{
	char dir[PATH_MAX];
	struct stat st;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/../drivers/%s", pci_root(), mod);
	if (!stat(dir, &st) || getenv("NVQ_SYSFS_PCI"))
		return;
	pid = fork();
	if (pid == 0) {
		execlp("modprobe", "modprobe", mod, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* The device directory of the controller @a names, or a failure. */
static int nvme_device(const struct args *a, char *bdf, size_t blen, char *dev,
		       size_t dlen)
{
	const char *arg = a->pos[0];
	char cls[32];

	if (nvq_pci_parse_bdf(arg, strlen(arg), bdf, blen))
		return usage_error(a->cmd,
				   "'%s' is not a PCI address (DDDD:BB:DD.F, "
				   "as 'nvq list' shows)",
				   arg);
	if (!path_join(dev, dlen, pci_root(), bdf) ||
	    !read_line(dev, "class", cls, sizeof(cls)))
		return fail("no PCI device %s (see 'nvq list')", bdf);
	if (strtoul(cls, NULL, 16) != 0x010802)
		return fail("%s is not an NVMe controller (class %s)", bdf,
			    cls);
	return CONTINUE;
}

/*
 * Move the device at @dev to the driver @drv ("" = whatever matches):
 * driver_override, unbind, drivers_probe - the kernel's documented way.
 */
static int move_device(const char *bdf, const char *dev, const char *drv)
{
	char old[64], probe[PATH_MAX];
	int ret;

	ret = write_attr(dev, "driver_override", drv[0] ? drv : "\n");
	if (ret)
		return fail("%s: cannot write driver_override: %s%s", bdf,
			    strerror(-ret),
			    ret == -EACCES || ret == -EPERM ? " (run as root)" :
							      "");
	link_base(dev, "driver", old, sizeof(old));
	if (strcmp(old, "none")) {
		ret = write_attr(dev, "driver/unbind", bdf);
		if (ret)
			return fail("%s: cannot unbind it from %s: %s", bdf,
				    old, strerror(-ret));
	}
	snprintf(probe, sizeof(probe), "%s/..", pci_root());
	ret = write_attr(probe, "drivers_probe", bdf);
	if (ret && ret != -ENODEV && ret != -EINVAL)
		return fail("%s: drivers_probe failed: %s", bdf,
			    strerror(-ret));
	return EXIT_OK;
}

/* What keeps vfio-pci from taking the controller, EXIT_OK if nothing. */
static int vfio_may_take(const char *bdf, const char *dev, const char *grp)
{
	char busy[256];

	if (!strcmp(grp, "none"))
		return fail("%s has no IOMMU group: the IOMMU is off; enable "
			    "VT-d/AMD-Vi in the firmware and boot with "
			    "intel_iommu=on (or amd_iommu=on)",
			    bdf);
	if (ns_in_use(dev, busy, sizeof(busy)))
		return fail("%s is in use by the kernel: %s; unmount it first",
			    bdf, busy);
	return EXIT_OK;
}

/* What keeps the driver @drv from letting go, EXIT_OK if nothing. */
static int may_release(const char *bdf, const char *drv, const char *grp)
{
	char path[64], comm[64];
	long pid;

	/* Unbinding from vfio-pci blocks until its user lets go. */
	snprintf(path, sizeof(path), "/dev/vfio/%s", grp);
	if (!strcmp(drv, "vfio-pci") &&
	    (pid = holder_of(path, comm, sizeof(comm))))
		return fail("%s is in use: process %ld (%s) has %s open; stop "
			    "it first",
			    bdf, pid, comm, path);
	return EXIT_OK;
}

/*
 * setup and release: hand the controller named on the command line to
 * @target, vfio-pci or the kernel's nvme. Leave it where it is if it is
 * there already, refuse while something still uses it, and check after
 * the move that @target took it: drivers_probe says nothing when no
 * driver does.
 */
static int rebind(struct args *a, const char *target)
{
	bool to_vfio = !strcmp(target, "vfio-pci");
	char bdf[32], dev[PATH_MAX], drv[64], grp[32];
	int rc;

	rc = nvme_device(a, bdf, sizeof(bdf), dev, sizeof(dev));
	if (rc != CONTINUE)
		return rc;
	link_base(dev, "driver", drv, sizeof(drv));
	link_base(dev, "iommu_group", grp, sizeof(grp));
	if (!strcmp(drv, target)) {
		if (to_vfio)
			printf("%s: already bound to vfio-pci (IOMMU group "
			       "%s); open it as vfio:%s\n",
			       bdf, grp, bdf);
		else
			printf("%s: already bound to %s\n", bdf, target);
		return EXIT_OK;
	}
	rc = to_vfio ? vfio_may_take(bdf, dev, grp) :
		       may_release(bdf, drv, grp);
	if (rc)
		return rc;
	load_driver(target);
	/* vfio-pci binds only what driver_override names it for; with the
	 * override cleared nvme binds by class */
	rc = move_device(bdf, dev, to_vfio ? target : "");
	if (rc)
		return rc;
	link_base(dev, "driver", drv, sizeof(drv));
	if (strcmp(drv, target))
		return to_vfio ? fail("%s: vfio-pci did not take it (driver: "
				      "%s); is vfio-pci loaded? dmesg tells "
				      "why",
				      bdf, drv) :
				 fail("%s: the nvme driver did not take it "
				      "(driver: %s); is the nvme module "
				      "available?",
				      bdf, drv);
	if (to_vfio)
		printf("%s: bound to vfio-pci; IOMMU group %s (/dev/vfio/%s); "
		       "open it as vfio:%s\n",
		       bdf, grp, grp, bdf);
	else
		printf("%s: returned to the kernel's nvme driver\n", bdf);
	return EXIT_OK;
}

int run_setup(struct args *a)
{
	return rebind(a, "vfio-pci");
}

int run_release(struct args *a)
{
	return rebind(a, "nvme");
}
