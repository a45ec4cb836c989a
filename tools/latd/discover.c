// SPDX-License-Identifier: MIT
/*
 * Block device -> hardware queues, interrupts and CPUs, for nvq-latd.
 *
 * Pure functions over the three roots of struct latd_roots: no globals, no
 * writes. Everything read is untrusted (a fixture, a racing hotplug):
 * missing files, garbage, truncated rows and CPU numbers beyond cpu_set_t
 * give a clear error or a note in latd_disk.note, never a crash.
 *
 * The mapping rules:
 *
 * Queues. /sys/block/DEV/mq/N/ is blk-mq hardware queue N; its cpu_list
 * ("0, 1, 2": comma and space) names the CPUs that submit through it,
 * offline ones included. A disk without mq/ is bio-based (zram, dm, md,
 * an nvme multipath head): no queues of its own.
 *
 * nvme (the disk's device link is a controller "nvmeX"): nvme-pci names
 * each queue's interrupt "nvme<X>q<qid>" with X the controller instance
 * and qid the NVMe queue id, qid 0 being the admin queue. blk-mq hardware
 * queue N is NVMe I/O queue N + 1 (the driver's init_hctx takes queue
 * hctx_idx + 1), whatever its map (default, read, poll): the maps take
 * consecutive hctx ranges in that order, so poll queues come last. Poll
 * queues get no interrupt, so "nvmeXq(N+1)" is absent for them (irq -1).
 * With a single vector the admin queue and I/O queue 1 share it, the row
 * then names both: "nvme0q0, nvme0q1" (so does every queue on vector 0
 * under the Apple quirk); matching by name covers both. Controllers of
 * other transports (device/transport other than "pcie": tcp, rdma, fc,
 * loop) have no queue interrupts at all.
 * Multipath (/sys/block/DEV/multipath/ exists): DEV is a bio-based head
 * whose requests are issued to the hidden path disks that directory
 * lists (nvme0c0n1, one per controller); discovery reports them in
 * latd_disk.paths and their queues in hwq[] (hwq.path says whose), each
 * mapped as above through the path's own controller (nvme0c1n1 ->
 * nvme1 -> "nvme1qN").
 *
 * virtio-blk (device link "virtioN"): virtqueue M is hardware queue M and
 * its interrupt is "virtioN-req.M". Fallbacks virtio-pci uses when it
 * gets too few vectors: one vector for all queues, "virtioN-virtqueues",
 * or the function's INTx line, "virtioN" (both noted). Poll queues
 * ("req_poll.M") have no interrupt.
 *
 * Anything else: the disk's PCI function is the nearest directory above
 * the device with msi_irqs/ (its names are the vectors). Only vectors
 * that /proc/interrupts shows (requested ones) count; when their number
 * equals the queue count they map by order, else every queue takes all
 * of them (irq -1, irq_cpus the union; noted). A function without MSI
 * uses its INTx line (the "irq" file). A disk without device (loop, zram,
 * dm) has no interrupts: its I/O completes on the submitting CPUs.
 *
 * Interrupt rows: /proc/interrupts rows are "IRQ: counts chip hwirq-type
 * name[, name...]"; a name matches where it follows a blank or ", " and
 * ends the row or is followed by ",". Affinity: /proc/irq/IRQ/
 * effective_affinity_list, else (missing, empty, garbage: noted)
 * smp_affinity_list.
 *
 * Names (latd_resolve): a name is looked up in /sys/class/block (disks
 * and partitions) and /sys/block (disks); a partition (its directory has
 * a "partition" file) resolves to its disk, the directory it sits in. A
 * /dev path is followed link by link under the dev root (relative
 * targets against the link's directory, absolute ones re-rooted, none may
 * climb out of /dev); a block node names its disk by its device number
 * (/sys/dev/block/MAJ:MIN), a regular file (a fixture's node) by its
 * name. Globs: fnmatch over /sys/block, or over the last part of a /dev
 * path.
 *
 * CPUs: the disk's irq_cpus and submit_cpus are intersected with
 * /sys/devices/system/cpu/online (unknown online mask: noted, the union
 * of the CPUs seen is taken); the queues keep what their files say. CPUs
 * >= CPU_SETSIZE are dropped with a note.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "latd.h"
#include "qos.h"
#include "sysfs.h"

/* More queues than any device has; mq/ entries beyond are ignored. */
#define MAX_HWQ 4096
/* /proc/interrupts of a big machine is a few MiB; more is not that file. */
#define MAX_PROC_INTERRUPTS (64u << 20)
/* cpu_list of 1024+ CPUs printed one by one ("0, 1, 2, ...") */
#define CPULIST_MAX 16384
/* Symlinks followed from a /dev path. */
#define MAX_LINK_HOPS 40

/* Append to d->note ("; " between notes), ending in "..." once full. */
static void note(struct latd_disk *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct latd_disk *d, const char *fmt, ...)
{
	size_t cur = strlen(d->note), room = sizeof(d->note);
	char msg[sizeof(d->note)];
	va_list ap;
	int n;

	if (cur >= 3 && !strcmp(d->note + cur - 3, "..."))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = snprintf(d->note + cur, room - cur, "%s%s", cur ? "; " : "", msg);
	if (n < 0 || (size_t)n >= room - cur)
		memcpy(d->note + room - 4, "...", 4);
}

/* snprintf into a path buffer; -ENAMETOOLONG when it does not fit. */
static int pathf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* A decimal number of digits only, at most @max; -1 otherwise. */
static long parse_index(const char *s, long max)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	return v;
}

/* @s is @prefix followed by a decimal instance number: that, else -1. */
static long prefixed_index(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n))
		return -1;
	return parse_index(s + n, INT_MAX);
}

/* A name that can be a directory entry of /sys/block. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= LATD_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || !isgraph((unsigned char)*s))
			return false;
	return true;
}

/* Copy a name valid_name() accepted (shorter than LATD_NAME_MAX). */
static void copy_name(char *dst, const char *src)
{
	size_t n = strnlen(src, LATD_NAME_MAX - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * Read and parse the CPU list file @path: "0-3,8", or "0, 1, 2" as blk-mq
 * prints cpu_list (the QoS core's parser). CPUs >= CPU_SETSIZE are dropped
 * and set *@cut. 0 or a negative errno.
 */
static int read_cpus(const char *path, cpu_set_t *set, bool *cut)
{
	char *buf = malloc(CPULIST_MAX);
	int n;

	CPU_ZERO(set);
	if (!buf)
		return -ENOMEM;
	n = nvq_sysfs_read(path, buf, CPULIST_MAX);
	if (n >= 0)
		n = nvq_qos_parse_cpulist_cut(buf, set, cut);
	free(buf);
	return n < 0 ? n : 0;
}

/* ---- /proc/interrupts ---- */

struct irq_row {
	int irq;
	const char *text; /* the row after "IRQ:", trailing blanks cut */
};

struct irq_tab {
	char *buf;
	struct irq_row *rows;
	int n;
};

static void irq_tab_free(struct irq_tab *t)
{
	free(t->buf);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* Read the whole file @path (a procfs file has no size) into *@out. */
static int read_all(const char *path, char **out, size_t *outlen)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap), *nb;
	int fd, err = 0;
	ssize_t n;

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= MAX_PROC_INTERRUPTS) {
				err = -EFBIG;
				break;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/* Rows that do not start with "IRQ:" (the header, NMI:, truncated ones)
 * are skipped. */
static int irq_tab_load(const struct latd_roots *r, struct irq_tab *t)
{
	char path[PATH_MAX], *s, *line, *eol, *colon, *end;
	size_t len = 0, cap = 0;
	struct irq_row *nr;
	long irq;
	int err;

	memset(t, 0, sizeof(*t));
	err = pathf(path, sizeof(path), "%s/interrupts", r->proc);
	if (!err)
		err = read_all(path, &t->buf, &len);
	if (err)
		return err;
	/* a NUL byte would end every string early: treat it as a row end */
	for (s = t->buf; s < t->buf + len; s++)
		if (!*s)
			*s = '\n';
	for (line = t->buf; line < t->buf + len; line = eol + 1) {
		eol = strchr(line, '\n');
		if (!eol)
			eol = t->buf + len;
		*eol = '\0';
		s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		colon = strchr(s, ':');
		if (!colon || colon == s)
			continue;
		*colon = '\0';
		irq = parse_index(s, INT_MAX);
		if (irq < 0)
			continue;
		end = eol;
		while (end > colon + 1 && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (t->n == (int)cap) {
			cap = cap ? cap * 2 : 64;
			nr = realloc(t->rows, cap * sizeof(*nr));
			if (!nr) {
				irq_tab_free(t);
				return -ENOMEM;
			}
			t->rows = nr;
		}
		t->rows[t->n].irq = (int)irq;
		t->rows[t->n].text = colon + 1;
		t->n++;
	}
	return 0;
}

/* Whether the row @text names the handler @name. */
static bool row_names(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while ((p = strstr(p, name))) {
		if (p > text &&
		    (p[-1] == ' ' || p[-1] == '\t' || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ','))
			return true;
		p++;
	}
	return false;
}

/* The interrupt whose row names @name, -1 if none; *@shared: how many
 * handlers share it. */
static int irq_find(const struct irq_tab *t, const char *name, int *shared)
{
	const char *p;
	int i;

	for (i = 0; i < t->n; i++) {
		if (!row_names(t->rows[i].text, name))
			continue;
		if (shared) {
			*shared = 1;
			for (p = t->rows[i].text; (p = strstr(p, ", ")); p++)
				(*shared)++;
		}
		return t->rows[i].irq;
	}
	return -1;
}

static bool irq_listed(const struct irq_tab *t, int irq)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->rows[i].irq == irq)
			return true;
	return false;
}

/* ---- one disk ---- */

struct ctx {
	const struct latd_roots *r;
	struct irq_tab irqs;
	bool have_irqs;
	char sysreal[PATH_MAX]; /* realpath of r->sys: where walks stop */
	bool cut; /* some CPU >= CPU_SETSIZE was dropped */
	bool smp_noted;
};

/* The affinity of @irq into @set; 0, or -ENOENT when neither file has
 * one. */
static int irq_affinity(struct ctx *c, struct latd_disk *d, int irq,
			cpu_set_t *set)
{
	char path[PATH_MAX];
	int err;

	err = pathf(path, sizeof(path), "%s/irq/%d/effective_affinity_list",
		    c->r->proc, irq);
	if (!err)
		err = read_cpus(path, set, &c->cut);
	if (!err && CPU_COUNT(set))
		return 0;
	err = pathf(path, sizeof(path), "%s/irq/%d/smp_affinity_list",
		    c->r->proc, irq);
	if (!err)
		err = read_cpus(path, set, &c->cut);
	if (!err && CPU_COUNT(set)) {
		if (!c->smp_noted)
			note(d,
			     "irq %d: no effective affinity, used "
			     "smp_affinity_list",
			     irq);
		c->smp_noted = true;
		return 0;
	}
	note(d, "irq %d: affinity unreadable", irq);
	return -ENOENT;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/*
 * The numeric entries of directory @path, sorted, at most @max (more are
 * dropped, *@more set). Returns the count or a negative errno.
 */
static int numeric_entries(const char *path, long max_value, long **out,
			   int max, bool *more)
{
	long *v = NULL, *nv, x;
	int n = 0, cap = 0;
	struct dirent *e;
	DIR *dir;

	*out = NULL;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		x = parse_index(e->d_name, max_value);
		if (x < 0)
			continue;
		if (n == max) {
			*more = true;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, (size_t)cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = x;
	}
	closedir(dir);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_long);
	*out = v;
	return n;
}

/* "MAJ:MIN" of /sys/block/@name/dev. */
static int read_devno(const struct latd_roots *r, const char *name,
		      unsigned int *major, unsigned int *minor, char *err,
		      size_t len)
{
	char path[PATH_MAX], buf[32], *colon;
	long ma, mi;
	int ret;

	ret = pathf(path, sizeof(path), "%s/block/%s/dev", r->sys, name);
	if (!ret)
		ret = nvq_sysfs_read(path, buf, sizeof(buf));
	if (ret < 0) {
		latd_set_err(err, len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	/* the kernel's dev_t: 12 bits of major, 20 of minor */
	ma = colon ? parse_index(buf, 4095) : -1;
	mi = colon ? parse_index(colon + 1, (1 << 20) - 1) : -1;
	if (ma < 0 || mi < 0) {
		latd_set_err(err, len, "%s: not a MAJOR:MINOR device number",
			     path);
		return -EINVAL;
	}
	*major = (unsigned int)ma;
	*minor = (unsigned int)mi;
	return 0;
}

enum kind { KIND_NONE, KIND_NVME, KIND_VIRTIO, KIND_OTHER };

struct devinfo {
	enum kind kind;
	long instance; /* X of nvmeX, N of virtioN */
	bool pcie; /* nvme: the controller is nvme-pci */
	char real[PATH_MAX]; /* realpath of /sys/block/DEV/device */
	char driver[32];
};

static void disk_device(struct ctx *c, const char *name, struct devinfo *di)
{
	char path[PATH_MAX], buf[32];
	const char *base;
	char *real;

	memset(di, 0, sizeof(*di));
	di->kind = KIND_NONE;
	if (pathf(path, sizeof(path), "%s/block/%s/device", c->r->sys, name))
		return;
	real = realpath(path, NULL);
	if (!real)
		return;
	if (strlen(real) >= sizeof(di->real)) {
		free(real);
		return;
	}
	strcpy(di->real, real);
	free(real);
	base = strrchr(di->real, '/');
	base = base ? base + 1 : di->real;
	if (!pathf(path, sizeof(path), "%s/driver", di->real))
		nvq_sysfs_link_name(path, di->driver, sizeof(di->driver));
	di->instance = prefixed_index(base, "nvme");
	if (di->instance >= 0) {
		di->kind = KIND_NVME;
		di->pcie = true;
		if (!pathf(path, sizeof(path), "%s/transport", di->real) &&
		    nvq_sysfs_read(path, buf, sizeof(buf)) > 0 &&
		    strcmp(buf, "pcie")) {
			di->pcie = false;
			snprintf(di->driver, sizeof(di->driver), "nvme_%.20s",
				 buf);
		} else if (!di->driver[0]) {
			/* a class device: the PCI function has the driver */
			if (!pathf(path, sizeof(path), "%s/device/driver",
				   di->real))
				nvq_sysfs_link_name(path, di->driver,
						    sizeof(di->driver));
			if (!di->driver[0])
				strcpy(di->driver, "nvme");
		}
		return;
	}
	di->instance = prefixed_index(base, "virtio");
	if (di->instance >= 0) {
		di->kind = KIND_VIRTIO;
		return;
	}
	di->kind = KIND_OTHER;
}

/* Queues of @name's own mq/ appended to d->hwq, owner @path. Returns the
 * index of the first appended one, or a negative errno. */
static int add_queues(struct ctx *c, struct latd_disk *d, const char *name,
		      int path, int *added)
{
	char dir[PATH_MAX], file[PATH_MAX];
	struct latd_hwq *nh, *q;
	bool more = false;
	long *idx;
	int n, i, first = d->nr_hwq, err;

	*added = 0;
	err = pathf(dir, sizeof(dir), "%s/block/%s/mq", c->r->sys, name);
	if (err)
		return err;
	n = numeric_entries(dir, INT_MAX, &idx, MAX_HWQ, &more);
	if (n == -ENOENT || n == -ENOTDIR) {
		note(d, "%s: no mq/ (bio-based): no hardware queues", name);
		return first;
	}
	if (n < 0)
		return n;
	if (more)
		note(d, "%s: only the first %d hardware queues", name, MAX_HWQ);
	if (!n) {
		free(idx);
		note(d, "%s: mq/ lists no hardware queues", name);
		return first;
	}
	nh = realloc(d->hwq, (size_t)(d->nr_hwq + n) * sizeof(*nh));
	if (!nh) {
		free(idx);
		return -ENOMEM;
	}
	d->hwq = nh;
	for (i = 0; i < n; i++) {
		q = &d->hwq[d->nr_hwq++];
		memset(q, 0, sizeof(*q));
		q->index = (int)idx[i];
		q->irq = -1;
		q->path = path;
		err = pathf(file, sizeof(file), "%s/%ld/cpu_list", dir, idx[i]);
		if (!err)
			err = read_cpus(file, &q->cpus, &c->cut);
		if (err)
			note(d, "%s: mq/%ld/cpu_list: %s", name, idx[i],
			     err == -EINVAL ? "not a CPU list" :
					      strerror(-err));
	}
	free(idx);
	*added = n;
	return first;
}

/* The indexes of the queues in @q[0..n) without an interrupt, as
 * "0, 3, 4", into @buf. */
static void list_queues(const struct latd_hwq *q, int n, char *buf, size_t size)
{
	size_t len = 0;
	int i, w;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (q[i].irq >= 0)
			continue;
		w = snprintf(buf + len, size - len, "%s%d", len ? ", " : "",
			     q[i].index);
		if (w < 0 || (size_t)w >= size - len) {
			if (size > 4)
				memcpy(buf + size - 4, "...", 4);
			return;
		}
		len += (size_t)w;
	}
}

static void map_nvme(struct ctx *c, struct latd_disk *d, const char *name,
		     const struct devinfo *di, struct latd_hwq *q, int n)
{
	char irqname[48], list[64];
	int i, shared, missing = 0, shared_irq = -1, handlers = 0;

	if (!di->pcie) {
		note(d, "%s: %s controller: no queue interrupts", name,
		     di->driver);
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(irqname, sizeof(irqname), "nvme%ldq%d", di->instance,
			 q[i].index + 1);
		shared = 1;
		q[i].irq = c->have_irqs ? irq_find(&c->irqs, irqname, &shared) :
					  -1;
		if (q[i].irq < 0)
			missing++;
		else if (shared > 1 && shared_irq < 0) {
			shared_irq = q[i].irq;
			handlers = shared;
		}
	}
	if (shared_irq >= 0)
		note(d, "%s: irq %d shared by %d handlers", name, shared_irq,
		     handlers);
	if (!missing || !c->have_irqs)
		return;
	if (missing == n) {
		note(d, "%s: no nvme%ldqN interrupts: all queues polled?", name,
		     di->instance);
		return;
	}
	list_queues(q, n, list, sizeof(list));
	note(d, "%s: hwq %s without interrupt (poll queues)", name, list);
}

static void map_virtio(struct ctx *c, struct latd_disk *d, const char *name,
		       const struct devinfo *di, struct latd_hwq *q, int n)
{
	char irqname[48], list[64];
	int i, missing = 0, fallback = -1;
	const char *how = NULL;

	if (!c->have_irqs)
		return;
	for (i = 0; i < n; i++) {
		snprintf(irqname, sizeof(irqname), "virtio%ld-req.%d",
			 di->instance, q[i].index);
		q[i].irq = irq_find(&c->irqs, irqname, NULL);
		if (q[i].irq < 0)
			missing++;
	}
	if (!missing)
		return;
	if (missing == n) {
		/* virtio-pci with one vector for all queues, or INTx */
		snprintf(irqname, sizeof(irqname), "virtio%ld-virtqueues",
			 di->instance);
		fallback = irq_find(&c->irqs, irqname, NULL);
		how = "one vector for all queues";
		if (fallback < 0) {
			snprintf(irqname, sizeof(irqname), "virtio%ld",
				 di->instance);
			fallback = irq_find(&c->irqs, irqname, NULL);
			how = "INTx";
		}
	}
	if (fallback >= 0) {
		for (i = 0; i < n; i++)
			q[i].irq = fallback;
		note(d, "%s: %s (irq %d, %s)", name, irqname, fallback, how);
		return;
	}
	if (missing == n) {
		note(d, "%s: no virtio%ld-req.N interrupts found", name,
		     di->instance);
		return;
	}
	list_queues(q, n, list, sizeof(list));
	note(d, "%s: hwq %s without interrupt (poll queues)", name, list);
}

/*
 * The PCI function at or above @real (below the sys root) into @fn: the
 * nearest directory with msi_irqs/ (*@msi), else the nearest one named
 * by a PCI address.
 */
static bool pci_function(struct ctx *c, const char *real, char *fn, size_t size,
			 bool *msi)
{
	char dir[PATH_MAX], path[PATH_MAX], bdf[NVQ_BDF_LEN];
	size_t root = strlen(c->sysreal);
	char *slash;

	*msi = false;
	fn[0] = '\0';
	if (strlen(real) >= sizeof(dir))
		return false;
	strcpy(dir, real);
	while (strlen(dir) > root && !strncmp(dir, c->sysreal, root)) {
		if (!pathf(path, sizeof(path), "%s/msi_irqs", dir) &&
		    is_dir(path)) {
			*msi = true;
			return !pathf(fn, size, "%s", dir);
		}
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		if (!fn[0] && !nvq_pci_parse_bdf(slash + 1, strlen(slash + 1),
						 bdf, sizeof(bdf)))
			pathf(fn, size, "%s", dir);
		*slash = '\0';
	}
	return fn[0] != '\0';
}

static void map_other(struct ctx *c, struct latd_disk *d, const char *name,
		      const struct devinfo *di, struct latd_hwq *q, int n)
{
	char fn[PATH_MAX], path[PATH_MAX];
	int i, k = 0, m;
	bool msi, more = false;
	long *v = NULL, irq;
	cpu_set_t all, one;

	if (!pci_function(c, di->real, fn, sizeof(fn), &msi)) {
		note(d, "%s: no PCI function found: interrupts unknown", name);
		return;
	}
	if (msi) {
		if (pathf(path, sizeof(path), "%s/msi_irqs", fn))
			return;
		m = numeric_entries(path, INT_MAX, &v, MAX_HWQ, &more);
		if (m < 0) {
			note(d, "%s: %s: %s", name, path, strerror(-m));
			return;
		}
		/* only the vectors that are requested carry anything */
		for (i = 0; i < m; i++)
			if (!c->have_irqs || irq_listed(&c->irqs, (int)v[i]))
				v[k++] = v[i];
		m = k;
	} else {
		if (pathf(path, sizeof(path), "%s/irq", fn) ||
		    nvq_sysfs_read_long(path, 10, &irq) || irq <= 0 ||
		    irq > INT_MAX) {
			note(d, "%s: %s has no interrupt", name, fn);
			return;
		}
		v = malloc(sizeof(*v));
		if (!v)
			return;
		v[0] = irq;
		m = 1;
		note(d, "%s: INTx irq %ld for all queues", name, irq);
	}
	if (!m) {
		free(v);
		note(d, "%s: the PCI function's vectors are not in use", name);
		return;
	}
	if (m == n) {
		for (i = 0; i < n; i++)
			q[i].irq = (int)v[i];
		if (msi)
			note(d, "%s: %d vectors mapped to queues by order",
			     name, m);
		free(v);
		return;
	}
	CPU_ZERO(&all);
	for (i = 0; i < m; i++)
		if (!irq_affinity(c, d, (int)v[i], &one))
			CPU_OR(&all, &all, &one);
	for (i = 0; i < n; i++) {
		q[i].irq = m == 1 ? (int)v[0] : -1;
		q[i].irq_cpus = all;
	}
	if (msi)
		note(d, "%s: %d vectors for %d queues: each takes all", name, m,
		     n);
	free(v);
}

/*
 * Queues of disk @name (the disk itself, path -1, or a path disk) with
 * their interrupts and affinities, appended to d->hwq.
 */
static int disk_queues(struct ctx *c, struct latd_disk *d, const char *name,
		       int path)
{
	struct devinfo di;
	struct latd_hwq *q;
	int first, n, i;

	disk_device(c, name, &di);
	if (!d->driver[0] && di.driver[0])
		snprintf(d->driver, sizeof(d->driver), "%s", di.driver);
	first = add_queues(c, d, name, path, &n);
	if (first < 0)
		return first;
	if (!n)
		return 0;
	q = &d->hwq[first];
	if (!c->have_irqs && di.kind != KIND_NONE)
		note(d, "interrupts unknown (%s/interrupts unreadable)",
		     c->r->proc);
	switch (di.kind) {
	case KIND_NONE:
		note(d,
		     "%s: no device: no interrupts, completions on the "
		     "submitting CPUs",
		     name);
		return 0;
	case KIND_NVME:
		map_nvme(c, d, name, &di, q, n);
		break;
	case KIND_VIRTIO:
		map_virtio(c, d, name, &di, q, n);
		break;
	case KIND_OTHER:
		map_other(c, d, name, &di, q, n);
		break;
	}
	for (i = 0; i < n; i++)
		if (q[i].irq >= 0)
			irq_affinity(c, d, q[i].irq, &q[i].irq_cpus);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The path disks of multipath head @name: d->paths and their queues. */
static int head_paths(struct ctx *c, struct latd_disk *d, const char *name)
{
	char why[128];
	char dir[PATH_MAX], (*names)[LATD_NAME_MAX] = NULL,
			    (*nn)[LATD_NAME_MAX];
	int n = 0, cap = 0, i, ret;
	struct latd_path *p;
	struct dirent *e;
	DIR *dh;

	ret = pathf(dir, sizeof(dir), "%s/block/%s/multipath", c->r->sys, name);
	if (ret)
		return ret;
	dh = opendir(dir);
	if (!dh) {
		note(d, "multipath/: %s", strerror(errno));
		return 0;
	}
	while ((e = readdir(dh))) {
		if (e->d_name[0] == '.')
			continue;
		if (!valid_name(e->d_name)) {
			note(d, "multipath/: odd entry skipped");
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			nn = realloc(names, (size_t)cap * sizeof(*names));
			if (!nn) {
				closedir(dh);
				free(names);
				return -ENOMEM;
			}
			names = nn;
		}
		copy_name(names[n++], e->d_name);
	}
	closedir(dh);
	if (n)
		qsort(names, (size_t)n, sizeof(*names), cmp_name);
	if (n > LATD_MAX_PATHS) {
		note(d, "%d paths, watching the first %d", n, LATD_MAX_PATHS);
		n = LATD_MAX_PATHS;
	}
	for (i = 0; i < n; i++) {
		p = &d->paths[d->nr_paths];
		if (read_devno(c->r, names[i], &p->major, &p->minor, why,
			       sizeof(why))) {
			note(d, "path %s skipped: %s", names[i], why);
			continue;
		}
		snprintf(p->name, sizeof(p->name), "%s", names[i]);
		ret = disk_queues(c, d, names[i], d->nr_paths);
		if (ret) {
			free(names);
			return ret;
		}
		d->nr_paths++;
	}
	free(names);
	if (!d->nr_paths)
		note(d, "multipath head without usable paths");
	return 0;
}

int latd_discover(const struct latd_roots *r, const char *name,
		  struct latd_disk *d, char *err, size_t len)
{
	char path[PATH_MAX], *real;
	struct ctx *c;
	bool online_known, cut = false;
	cpu_set_t seen, x;
	int ret, i, err_irq;

	memset(d, 0, sizeof(*d));
	if (err && len)
		err[0] = '\0';
	if (!r || !r->sys || !r->proc || !name) {
		latd_set_err(err, len, "latd_discover: missing arguments");
		return -EINVAL;
	}
	if (!valid_name(name)) {
		latd_set_err(err, len, "\"%.40s\": not a disk name", name);
		return -EINVAL;
	}
	snprintf(d->name, sizeof(d->name), "%s", name);
	ret = pathf(path, sizeof(path), "%s/block/%s", r->sys, name);
	if (ret || !is_dir(path)) {
		latd_set_err(err, len, "no disk %s in %s/block", name, r->sys);
		return -ENODEV;
	}
	ret = read_devno(r, name, &d->major, &d->minor, err, len);
	if (ret)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c) {
		latd_set_err(err, len, "out of memory");
		return -ENOMEM;
	}
	c->r = r;
	real = realpath(r->sys, NULL);
	if (real && strlen(real) < sizeof(c->sysreal))
		strcpy(c->sysreal, real);
	free(real);
	err_irq = irq_tab_load(r, &c->irqs);
	c->have_irqs = !err_irq;

	ret = pathf(path, sizeof(path), "%s/devices/system/cpu/online", r->sys);
	if (!ret)
		ret = read_cpus(path, &d->online, &cut);
	online_known = !ret && CPU_COUNT(&d->online);
	if (!online_known)
		note(d, "online CPUs unknown (%s): taking every CPU listed",
		     ret ? strerror(-ret) : "empty");

	ret = pathf(path, sizeof(path), "%s/block/%s/multipath", r->sys, name);
	if (!ret && is_dir(path))
		ret = head_paths(c, d, name);
	else if (!ret)
		ret = disk_queues(c, d, name, -1);
	if (ret) {
		latd_set_err(err, len, "%s: %s", name, strerror(-ret));
		latd_disk_free(d);
		irq_tab_free(&c->irqs);
		free(c);
		return ret;
	}
	if (c->cut || cut)
		note(d, "CPUs above %d ignored", CPU_SETSIZE - 1);

	CPU_ZERO(&seen);
	for (i = 0; i < d->nr_hwq; i++) {
		CPU_OR(&seen, &seen, &d->hwq[i].cpus);
		CPU_OR(&seen, &seen, &d->hwq[i].irq_cpus);
	}
	if (!online_known)
		d->online = seen;
	for (i = 0; i < d->nr_hwq; i++) {
		CPU_AND(&x, &d->hwq[i].cpus, &d->online);
		CPU_OR(&d->submit_cpus, &d->submit_cpus, &x);
		CPU_AND(&x, &d->hwq[i].irq_cpus, &d->online);
		CPU_OR(&d->irq_cpus, &d->irq_cpus, &x);
		if (CPU_COUNT(&d->hwq[i].irq_cpus) && !CPU_COUNT(&x))
			note(d, "hwq %d: its interrupt's CPUs are offline",
			     d->hwq[i].index);
	}
	CPU_AND(&x, &seen, &d->online);
	if (!CPU_EQUAL(&x, &seen))
		note(d, "offline CPUs left out");
	irq_tab_free(&c->irqs);
	free(c);
	return 0;
}

void latd_disk_free(struct latd_disk *d)
{
	if (!d)
		return;
	free(d->hwq);
	d->hwq = NULL;
	d->nr_hwq = 0;
}

const struct latd_hwq *latd_hwq_of_cpu(const struct latd_disk *d, int cpu)
{
	int i;

	if (!d || cpu < 0 || cpu >= CPU_SETSIZE)
		return NULL;
	for (i = 0; i < d->nr_hwq; i++)
		if (CPU_ISSET(cpu, &d->hwq[i].cpus))
			return &d->hwq[i];
	return NULL;
}

/* ---- latd_resolve ---- */

/* @name (a disk or a partition) -> its whole disk's name in @out. */
static int whole_disk(const struct latd_roots *r, const char *name, char *out,
		      char *err, size_t len)
{
	char path[PATH_MAX], part[PATH_MAX], *real, *slash, *base;
	int ret;

	if (!valid_name(name)) {
		latd_set_err(err, len, "\"%.40s\": not a disk name", name);
		return -EINVAL;
	}
	ret = pathf(path, sizeof(path), "%s/class/block/%s", r->sys, name);
	if (!ret && exists(path) &&
	    !pathf(part, sizeof(part), "%s/partition", path) && exists(part)) {
		/* a partition's directory sits in its disk's */
		real = realpath(path, NULL);
		slash = real ? strrchr(real, '/') : NULL;
		if (slash)
			*slash = '\0';
		base = real ? strrchr(real, '/') : NULL;
		if (!base || !valid_name(base + 1)) {
			free(real);
			latd_set_err(err, len, "%s: partition without a disk",
				     name);
			return -ENODEV;
		}
		snprintf(out, LATD_NAME_MAX, "%s", base + 1);
		free(real);
		name = out;
	}
	ret = pathf(path, sizeof(path), "%s/block/%s", r->sys, name);
	if (ret || !is_dir(path)) {
		latd_set_err(err, len, "no such disk: %s (not in %s/block)",
			     name, r->sys);
		return -ENODEV;
	}
	if (out != name)
		snprintf(out, LATD_NAME_MAX, "%s", name);
	return 0;
}

/*
 * Join directory @dir and @rel (relative to /dev) into @out, resolving
 * "." and ".." lexically; -EXDEV when it climbs out of /dev.
 */
static int dev_join(char *out, size_t size, const char *dir, const char *rel)
{
	char tmp[PATH_MAX], *save, *tok, *slash;
	size_t len = 0;

	if (pathf(tmp, sizeof(tmp), "%s/%s", dir, rel))
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (tok = strtok_r(tmp, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			if (!len)
				return -EXDEV;
			slash = strrchr(out, '/');
			len = slash ? (size_t)(slash - out) : 0;
			out[len] = '\0';
			continue;
		}
		if (len + strlen(tok) + 2 > size)
			return -ENAMETOOLONG;
		len += (size_t)sprintf(out + len, "%s%s", len ? "/" : "", tok);
	}
	return 0;
}

/* The disk a path under /dev names, following its links under r->dev. */
static int dev_path(const struct latd_roots *r, const char *spec, char *out,
		    char *err, size_t len)
{
	char rel[PATH_MAX], full[PATH_MAX], target[PATH_MAX], dir[PATH_MAX];
	char devlink[PATH_MAX], kname[LATD_NAME_MAX];
	const char *base;
	struct stat st;
	ssize_t n;
	int hops, ret;

	if (strncmp(spec, "/dev/", 5) || !r->dev) {
		latd_set_err(err, len,
			     "%s: not a disk name or a path under /dev", spec);
		return -EINVAL;
	}
	ret = dev_join(rel, sizeof(rel), "", spec + 5);
	if (ret == -EXDEV)
		goto outside;
	if (ret || !rel[0])
		goto bad_path;
	for (hops = 0;; hops++) {
		if (hops > MAX_LINK_HOPS) {
			latd_set_err(err, len, "%s: too many symbolic links",
				     spec);
			return -ELOOP;
		}
		if (pathf(full, sizeof(full), "%s/%s", r->dev, rel))
			goto bad_path;
		if (lstat(full, &st)) {
			ret = -errno;
			latd_set_err(err, len, "%s: %s", spec,
				     ret == -ENOENT ? "no such device" :
						      strerror(-ret));
			return ret == -ENOENT ? -ENODEV : ret;
		}
		if (!S_ISLNK(st.st_mode))
			break;
		n = readlink(full, target, sizeof(target) - 1);
		if (n <= 0)
			goto bad_path;
		target[n] = '\0';
		if (target[0] == '/') {
			if (strncmp(target, "/dev/", 5)) {
				latd_set_err(err, len,
					     "%s: links to %s, outside "
					     "/dev",
					     spec, target);
				return -EXDEV;
			}
			ret = dev_join(rel, sizeof(rel), "", target + 5);
		} else {
			snprintf(dir, sizeof(dir), "%s", rel);
			base = strrchr(dir, '/');
			dir[base ? base - dir : 0] = '\0';
			ret = dev_join(rel, sizeof(rel), dir, target);
		}
		if (ret == -EXDEV)
			goto outside;
		if (ret || !rel[0])
			goto bad_path;
	}
	base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	if (S_ISBLK(st.st_mode)) {
		/* the kernel's name of the node, whatever /dev calls it */
		if (!pathf(devlink, sizeof(devlink), "%s/dev/block/%u:%u",
			   r->sys, major(st.st_rdev), minor(st.st_rdev)) &&
		    nvq_sysfs_link_name(devlink, kname, sizeof(kname)) > 0)
			base = kname;
		return whole_disk(r, base, out, err, len);
	}
	/* a fixture tree's stand-in for a node: a file named as the disk */
	if (S_ISREG(st.st_mode) && valid_name(base) &&
	    !whole_disk(r, base, out, NULL, 0))
		return 0;
	latd_set_err(err, len, "%s: not a block device", spec);
	return -ENOTBLK;
outside:
	latd_set_err(err, len, "%s: leads outside /dev", spec);
	return -EXDEV;
bad_path:
	latd_set_err(err, len, "%s: bad path", spec);
	return -EINVAL;
}

/* "1" in /sys/block/@name/hidden: an nvme multipath path disk. */
static bool hidden_disk(const struct latd_roots *r, const char *name)
{
	char path[PATH_MAX];
	long v;

	return !pathf(path, sizeof(path), "%s/block/%s/hidden", r->sys, name) &&
	       !nvq_sysfs_read_long(path, 10, &v) && v == 1;
}

static int glob_disks(const struct latd_roots *r, const char *spec,
		      char (*names)[LATD_NAME_MAX], int max, char *err,
		      size_t len)
{
	char dir[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *dh;

	if (pathf(dir, sizeof(dir), "%s/block", r->sys) ||
	    !(dh = opendir(dir))) {
		latd_set_err(err, len, "%s/block: %s", r->sys, strerror(errno));
		return -ENODEV;
	}
	while ((e = readdir(dh))) {
		if (e->d_name[0] == '.' || !valid_name(e->d_name) ||
		    fnmatch(spec, e->d_name, 0))
			continue;
		/* path disks belong to their head, which a glob matches too */
		if (hidden_disk(r, e->d_name))
			continue;
		if (n == max) {
			closedir(dh);
			latd_set_err(err, len, "%s matches more than %d disks",
				     spec, max);
			return -E2BIG;
		}
		copy_name(names[n++], e->d_name);
	}
	closedir(dh);
	if (n)
		qsort(names, (size_t)n, sizeof(*names), cmp_name);
	return n;
}

/* Add @name to @names[0..*n) unless there; -E2BIG past @max. */
static int add_unique(char (*names)[LATD_NAME_MAX], int *n, int max,
		      const char *name)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(names[i], name))
			return 0;
	if (*n == max)
		return -E2BIG;
	copy_name(names[(*n)++], name);
	return 0;
}

/*
 * A glob in the last component of a /dev path ("/dev/disk/by-id/nvme-*"):
 * the disks of the entries that resolve, each once (a disk's partitions
 * match too). Entries that are no disk are skipped.
 */
static int glob_dev(const struct latd_roots *r, const char *spec,
		    char (*names)[LATD_NAME_MAX], int max, char *err,
		    size_t len)
{
	char dir[PATH_MAX], entry[PATH_MAX], name[LATD_NAME_MAX];
	const char *slash = strrchr(spec, '/'), *pattern = slash + 1;
	struct dirent *e;
	int n = 0, ret;
	DIR *dh;

	if (strncmp(spec, "/dev/", 5) || !r->dev ||
	    strcspn(spec, "*?[") < (size_t)(slash - spec)) {
		latd_set_err(
			err, len,
			"%s: a glob matches disk names, or the last part of "
			"a path under /dev",
			spec);
		return -EINVAL;
	}
	if (pathf(dir, sizeof(dir), "%s/%.*s", r->dev, (int)(slash - spec - 5),
		  spec + 5) ||
	    !(dh = opendir(dir))) {
		latd_set_err(err, len, "%.*s: %s", (int)(slash - spec), spec,
			     strerror(errno));
		return -ENODEV;
	}
	while ((e = readdir(dh))) {
		if (fnmatch(pattern, e->d_name, FNM_PERIOD) ||
		    pathf(entry, sizeof(entry), "%.*s/%s", (int)(slash - spec),
			  spec, e->d_name) ||
		    dev_path(r, entry, name, NULL, 0))
			continue;
		ret = add_unique(names, &n, max, name);
		if (ret) {
			closedir(dh);
			latd_set_err(err, len, "%s matches more than %d disks",
				     spec, max);
			return ret;
		}
	}
	closedir(dh);
	if (n)
		qsort(names, (size_t)n, sizeof(*names), cmp_name);
	return n;
}

int latd_resolve(const struct latd_roots *r, const char *spec,
		 char (*names)[LATD_NAME_MAX], int max, char *err, size_t len)
{
	int ret;

	if (err && len)
		err[0] = '\0';
	if (!r || !r->sys || !spec || !names || max < 1) {
		latd_set_err(err, len, "latd_resolve: missing arguments");
		return -EINVAL;
	}
	if (!*spec) {
		latd_set_err(err, len, "empty device name");
		return -EINVAL;
	}
	if (strpbrk(spec, "*?[") && strchr(spec, '/'))
		return glob_dev(r, spec, names, max, err, len);
	if (strpbrk(spec, "*?["))
		return glob_disks(r, spec, names, max, err, len);
	if (spec[0] == '/')
		ret = dev_path(r, spec, names[0], err, len);
	else
		ret = whole_disk(r, spec, names[0], err, len);
	return ret < 0 ? ret : 1;
}
