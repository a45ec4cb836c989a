// SPDX-License-Identifier: MIT
/*
 * The media behind the namespaces, every namespace in turn at
 * (nsid - 1) * size.
 *
 * RAM is an anonymous mapping populated on first touch; the I/O path
 * copies with memcpy, and zeroing gives whole pages back with
 * MADV_DONTNEED (they read as zeroes again), so neither Write Zeroes nor
 * Deallocate materialises memory. Reads of 2 MiB chunks never written
 * store zeroes into the host buffer without touching the media: a first
 * touch costs a page fault and the kernel zeroing the page (~2.5 s per
 * GiB on a small VM, nearly all of a 3 s random-read run of a fresh 1 GiB
 * namespace), and reading memory nobody wrote measures only that.
 * populate=1 faults everything in at creation instead.
 *
 * A file is reached with preadv/pwritev, never through a mapping. A
 * MAP_SHARED mapping raises SIGBUS on any access past the end of a file
 * that shrank under it (another process truncated it) and on a store into
 * a hole the file system cannot fill (full disk, or a CoW file system
 * that needs new space for an overwrite). Checking the size first cannot
 * help: the file can shrink between the check and the copy, and catching
 * the signal would mean owning a process-wide handler inside a library.
 * With system calls, the same events are a short read or an error code,
 * which the NVM commands turn into the status a drive posts: Unrecovered
 * Read Error, Write Fault. The cost is one system call per command (the
 * data still moves by one copy through the page cache, as with memcpy on
 * a mapping); writes still sit in the page cache, so data written
 * survives the process without a shutdown, and Flush/shutdown make it
 * durable with fdatasync.
 *
 * At open the file is locked (flock: one open file description holds it,
 * so a second controller of the same process conflicts as a second
 * process does, and a forked child that inherits the descriptor shares
 * it) and its whole size is reserved with posix_fallocate, so that a full
 * file system fails the open with a message instead of failing writes
 * later. Write Zeroes keeps that reservation (FALLOC_FL_ZERO_RANGE);
 * Deallocate gives the space back (FALLOC_FL_PUNCH_HOLE), as a
 * thin-provisioned drive does.
 *
 * Also the media's timing: per command class a fixed latency or a
 * distribution (uniform, or lognormal from a quantile table) with rare
 * slow outliers, drawn per command from a seeded generator.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "emu_internal.h"

/* The granule of the written map (RAM): a transparent huge page. */
#define MEDIA_CHUNK_SHIFT 21
#define MEDIA_CHUNK (1ull << MEDIA_CHUNK_SHIFT)

/* Below this many whole pages, zeroing RAM with stores beats a syscall. */
#define ZERO_MADV_MIN_PAGES 16
/* iovecs per preadv/pwritev call (IOV_MAX is 1024; a PRP walk merges
 * contiguous pages, so one call nearly always suffices). */
#define IOV_BATCH 64

/* Source of the pwrite fallback of zeroing; never written (.bss). */
static uint8_t zero_buf[65536];

/*
 * Who holds the lock on the file @st, from /proc/locks (flock locks show
 * the pid of the process that took them), into @buf.
 */
static void lock_holder(const struct stat *st, char *buf, size_t len)
{
	char line[256], type[16], comm[64] = "";
	unsigned int maj, min;
	unsigned long ino;
	FILE *f;
	int pid;

	snprintf(buf, len, "another process");
	f = fopen("/proc/locks", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* "1: FLOCK  ADVISORY  WRITE 2070 fe:00:10952760 0 EOF";
		 * waiters ("1: -> FLOCK ...") do not parse as a type. */
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", type, &pid,
			   &maj, &min, &ino) != 5 ||
		    strcmp(type, "FLOCK") || maj != major(st->st_dev) ||
		    min != minor(st->st_dev) || ino != st->st_ino)
			continue;
		if (pid == getpid()) {
			snprintf(buf, len,
				 "another emulated controller of this process");
		} else if (pid > 0) {
			char path[64];
			FILE *cf;

			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			cf = fopen(path, "re");
			if (cf) {
				if (!fgets(comm, sizeof(comm), cf))
					comm[0] = 0;
				fclose(cf);
				comm[strcspn(comm, "\n")] = 0;
			}
			if (comm[0])
				snprintf(buf, len, "process %d (%s)", pid,
					 comm);
			else
				snprintf(buf, len, "process %d", pid);
		}
		break;
	}
	fclose(f);
}

/* Reserve [0, @total) of the file; fills in a message on failure. */
static int reserve(struct emu_media *m, const char *file, uint64_t total)
{
	struct statvfs sv;
	int err;

	err = posix_fallocate(m->fd, 0, (off_t)total);
	if (!err)
		return 0;
	if (err == ENOSPC && !fstatvfs(m->fd, &sv))
		return emu_err(
			-ENOSPC,
			"emu parameter 'file': cannot reserve %llu bytes for '%s': the file system has %llu bytes free",
			(unsigned long long)total, file,
			(unsigned long long)sv.f_bavail * sv.f_frsize);
	return emu_err(
		-err,
		"emu parameter 'file': cannot reserve %llu bytes for '%s': %s",
		(unsigned long long)total, file, strerror(err));
}

static int open_file(struct emu_media *m, const struct nvq_emu_params *p,
		     uint64_t total)
{
	bool created = false;
	char who[128];
	struct stat st;
	int ret;

	m->fd = open(p->file, O_RDWR | O_CLOEXEC);
	if (m->fd < 0 && errno == ENOENT) {
		/* Remember creating it: a failed open then removes it. */
		m->fd = open(p->file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			     0644);
		created = m->fd >= 0;
		if (m->fd < 0 && errno == EEXIST)
			m->fd = open(p->file, O_RDWR | O_CLOEXEC);
	}
	if (m->fd < 0)
		return emu_err(-errno,
			       "emu parameter 'file': cannot open '%s': %s",
			       p->file, strerror(errno));
	if (fstat(m->fd, &st) || !S_ISREG(st.st_mode)) {
		ret = emu_err(
			-EINVAL,
			"emu parameter 'file': '%s' is not a regular file",
			p->file);
		goto fail;
	}
	/* Before anything changes the file: it may be another's media. */
	if (flock(m->fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK) {
			lock_holder(&st, who, sizeof(who));
			ret = emu_err(
				-EBUSY,
				"emu parameter 'file': '%s' is in use by %s; an image backs one controller at a time",
				p->file, who);
		} else {
			ret = emu_err(
				-errno,
				"emu parameter 'file': cannot lock '%s': %s",
				p->file, strerror(errno));
		}
		goto fail;
	}
	ret = reserve(m, p->file, total);
	if (ret) {
		/* Leave the file as it was found. */
		if (!created && (uint64_t)st.st_size < total &&
		    ftruncate(m->fd, st.st_size)) {
			/* the message about the reservation matters more */
		}
		goto fail;
	}
	return 0;
fail:
	if (created)
		unlink(p->file);
	close(m->fd);
	m->fd = -1;
	return ret;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* populate=1: fault the RAM in now; every chunk counts as written. */
static int populate(struct emu_media *m)
{
	uint64_t off;

	if (madvise(m->base, m->len, MADV_POPULATE_WRITE)) {
		if (errno != EINVAL) {
			int e = errno;

			emu_media_close(m);
			return emu_err(-e,
				       "emu: cannot populate %llu bytes of "
				       "RAM media: %s",
				       (unsigned long long)m->len, strerror(e));
		}
		/* Before Linux 5.14: a store per page. */
		for (off = 0; off < m->len; off += m->page)
			((volatile uint8_t *)m->base)[off] = 0;
	}
	memset(m->written, 0xff,
	       ((m->len + (MEDIA_CHUNK << 6) - 1) >> (MEDIA_CHUNK_SHIFT + 6)) *
		       sizeof(*m->written));
	return 0;
}

static int data_open(struct emu_media *m, const struct nvq_emu_params *p);

int emu_media_open(struct emu_media *m, const struct nvq_emu_params *p)
{
	int ret;

	m->md = NULL;
	m->mdfd = -1;
	ret = data_open(m, p);
	if (ret)
		return ret;
	ret = emu_md_open(m, p);
	if (ret)
		emu_media_close(m);
	return ret;
}

static int data_open(struct emu_media *m, const struct nvq_emu_params *p)
{
	uint64_t total = p->ns_size * p->nr_ns;
	long pg = sysconf(_SC_PAGESIZE);
	void *base;

	m->fd = -1;
	m->base = NULL;
	m->len = total;
	m->page = pg > 0 ? (uint64_t)pg : 4096;
	if (p->file[0])
		return open_file(m, p, total);
	base = mmap(NULL, total, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return emu_err(
			-errno,
			"emu: cannot reserve %llu bytes of RAM media: %s",
			(unsigned long long)total, strerror(errno));
	/*
	 * Transparent huge pages where the kernel offers them for madvise
	 * (thp=, default on): a first touch then faults in 2 MiB at once,
	 * not 4 KiB. Best effort: without THP it stays 4 KiB pages.
	 */
	if (p->thp && madvise(base, total, MADV_HUGEPAGE)) {
		/* no THP in this kernel: 4 KiB pages */
	}
	m->base = base;
	m->written = calloc((total + (MEDIA_CHUNK << 6) - 1) >>
				    (MEDIA_CHUNK_SHIFT + 6),
			    sizeof(*m->written));
	if (!m->written) {
		emu_media_close(m);
		return emu_err(-ENOMEM, "emu: out of memory");
	}
	if (p->populate)
		return populate(m);
	return 0;
}

void emu_media_close(struct emu_media *m)
{
	emu_md_close(m);
	if (m->base)
		munmap(m->base, m->len);
	free(m->written);
	m->written = NULL;
	/* Closing the last descriptor of the description drops the lock. */
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}

int emu_media_sync(struct emu_media *m, uint64_t off, uint64_t len)
{
	/* The whole file: fdatasync has no range, and sync_file_range
	 * neither writes metadata nor flushes the disk's cache. */
	if (m->fd < 0 || !len)
		return 0;
	return fdatasync(m->fd) ? -errno : 0;
}

/*
 * preadv/pwritev the segments @seg[0..@n) at file offset @off, resuming
 * after short transfers. A read that meets the end of the file (it
 * shrank) is -ENODATA.
 */
static int file_rw(int fd, uint64_t off, const struct emu_seg *seg, uint32_t n,
		   bool write, uint64_t *done)
{
	struct iovec iov[IOV_BATCH];
	uint64_t skip = 0; /* bytes of seg[0] already moved */
	ssize_t got;
	uint32_t k;

	while (n) {
		for (k = 0; k < IOV_BATCH && k < n; k++) {
			iov[k].iov_base = seg[k].p;
			iov[k].iov_len = seg[k].len;
		}
		iov[0].iov_base = seg[0].p + skip;
		iov[0].iov_len -= skip;
		got = write ? pwritev(fd, iov, (int)k, (off_t)off) :
			      preadv(fd, iov, (int)k, (off_t)off);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!got)
			return write ? -EIO : -ENODATA;
		off += (uint64_t)got;
		*done += (uint64_t)got;
		got += (ssize_t)skip;
		while (n && (uint64_t)got >= seg->len) {
			got -= (ssize_t)seg->len;
			seg++;
			n--;
		}
		skip = (uint64_t)got;
	}
	return 0;
}

static inline bool chunk_written(const struct emu_media *m, uint64_t c)
{
	return m->written[c >> 6] >> (c & 63) & 1;
}

/* Mark the chunks of [@off, @off + @len) written. */
static void mark_written(struct emu_media *m, uint64_t off, uint64_t len)
{
	uint64_t c = off >> MEDIA_CHUNK_SHIFT;
	uint64_t last = (off + len - 1) >> MEDIA_CHUNK_SHIFT;

	if (!len)
		return;
	for (; c <= last; c++)
		m->written[c >> 6] |= 1ull << (c & 63);
}

/* Read [@p, @p + @len) of RAM media into @dst, chunk by chunk. */
static void ram_read(const struct emu_media *m, uint8_t *dst, const uint8_t *p,
		     uint64_t len)
{
	while (len) {
		uint64_t off = (uint64_t)(p - m->base);
		uint64_t room = MEDIA_CHUNK - (off & (MEDIA_CHUNK - 1));
		uint64_t n = len < room ? len : room;

		if (chunk_written(m, off >> MEDIA_CHUNK_SHIFT))
			memcpy(dst, p, n);
		else
			memset(dst, 0, n);
		dst += n;
		p += n;
		len -= n;
	}
}

int emu_media_rw(struct emu_media *m, uint64_t off, const struct emu_seg *seg,
		 uint32_t n, bool write, uint64_t *done)
{
	uint8_t *p;
	uint32_t i;

	*done = 0;
	if (m->fd >= 0)
		return file_rw(m->fd, off, seg, n, write, done);
	p = m->base + off;
	for (i = 0; i < n; i++) {
		if (write) {
			mark_written(m, (uint64_t)(p - m->base), seg[i].len);
			memcpy(p, seg[i].p, seg[i].len);
		} else {
			ram_read(m, seg[i].p, p, seg[i].len);
		}
		p += seg[i].len;
	}
	*done = (uint64_t)(p - (m->base + off));
	return 0;
}

static void ram_zero(struct emu_media *m, uint64_t off, uint64_t len)
{
	uint64_t a = (off + m->page - 1) & ~(m->page - 1);
	uint64_t b = (off + len) & ~(m->page - 1);

	if (a >= b || b - a < ZERO_MADV_MIN_PAGES * m->page) {
		memset(m->base + off, 0, len);
		return;
	}
	/* Partial pages at the edges hold other blocks: stores. */
	memset(m->base + off, 0, a - off);
	memset(m->base + b, 0, off + len - b);
	/* Private anonymous pages read as zeroes again once dropped. */
	if (madvise(m->base + a, b - a, MADV_DONTNEED)) {
		memset(m->base + a, 0, b - a);
		return;
	}
	/* Whole chunks dropped hold nothing again. */
	for (a = (a + MEDIA_CHUNK - 1) >> MEDIA_CHUNK_SHIFT;
	     (a + 1) << MEDIA_CHUNK_SHIFT <= b; a++)
		m->written[a >> 6] &= ~(1ull << (a & 63));
}

/* The fallback where the file system punches and zeroes nothing. */
static int file_write_zeroes(int fd, uint64_t off, uint64_t len)
{
	struct iovec iov[16];
	uint64_t chunk;
	ssize_t got;
	int k;

	while (len) {
		for (k = 0, chunk = 0; k < 16 && chunk < len; k++) {
			iov[k].iov_base = zero_buf;
			iov[k].iov_len = len - chunk < sizeof(zero_buf) ?
						 len - chunk :
						 sizeof(zero_buf);
			chunk += iov[k].iov_len;
		}
		got = pwritev(fd, iov, k, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		off += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return 0;
}

static int file_zero(struct emu_media *m, uint64_t off, uint64_t len,
		     bool dealloc)
{
	const int keep = FALLOC_FL_KEEP_SIZE;

	/* The kernel zeroes the partial blocks at the edges itself. */
	if (dealloc && !fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | keep,
				  (off_t)off, (off_t)len))
		return 0;
	if (!fallocate(m->fd, FALLOC_FL_ZERO_RANGE | keep, (off_t)off,
		       (off_t)len))
		return 0;
	/*
	 * No ZERO_RANGE (tmpfs, for one): punch, then take the space back
	 * for Write Zeroes. Once punched the range reads as zeroes, so a
	 * failed re-reservation is not a failed command.
	 */
	if (!fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | keep, (off_t)off,
		       (off_t)len)) {
		if (!dealloc)
			(void)fallocate(m->fd, keep, (off_t)off, (off_t)len);
		return 0;
	}
	return file_write_zeroes(m->fd, off, len);
}

int emu_media_zero(struct emu_media *m, uint64_t off, uint64_t len,
		   bool dealloc)
{
	if (!len)
		return 0;
	if (m->fd >= 0)
		return file_zero(m, off, len, dealloc);
	ram_zero(m, off, len);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Latency model                                                       */
/* ------------------------------------------------------------------ */

/* z of the 99th percentile of the standard normal distribution. */
#define Z99 2.3263478740408408

/*
 * Quantile function of the standard normal distribution (Acklam's
 * rational approximation, relative error below 1.2e-9), for 0 < p < 1.
 * Runs only while a table is built.
 */
static double norm_quantile(double p)
{
	static const double a[] = {
		-3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02,
		-3.066479806614716e+01, 2.506628277459239e+00
	};
	static const double b[] = { -5.447609879822406e+01,
				    1.615858368580409e+02,
				    -1.556989798598866e+02,
				    6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = {
		-7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838e+00, -2.549732539343734e+00,
		4.374664141464968e+00,	2.938163982698783e+00
	};
	static const double d[] = { 7.784695709041462e-03,
				    3.224671290700398e-01,
				    2.445134137142996e+00,
				    3.754408661907416e+00 };
	double q, r;

	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q +
			 c[4]) * q +
			c[5]) /
		       ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	if (p > 1 - 0.02425)
		return -norm_quantile(1 - p);
	q = p - 0.5;
	r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r +
		a[5]) *
	       q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r +
		1);
}

int emu_lat_init(struct emu_lat *l, const struct nvq_emu_lat_dist *d,
		 uint64_t fixed_ns)
{
	size_t n = (size_t)1 << EMU_LAT_TABLE_BITS, i;
	double sigma;

	memset(l, 0, sizeof(*l));
	l->base = fixed_ns;
	/* Parameters built by hand, not by the parser, get the same checks. */
	if (d->slow_ppm > 500000 || (d->slow_ppm && d->slow_hi < d->slow_lo) ||
	    d->slow_hi > NVQ_EMU_LAT_DIST_MAX_NS ||
	    (d->kind != NVQ_EMU_LAT_FIXED &&
	     (d->hi < d->lo || d->hi > NVQ_EMU_LAT_DIST_MAX_NS)) ||
	    (d->kind == NVQ_EMU_LAT_LOGNORMAL && (!d->lo || d->hi == d->lo)) ||
	    d->kind > NVQ_EMU_LAT_LOGNORMAL)
		return -EINVAL;
	if (d->slow_ppm) {
		l->random = true;
		/* ppm <= 500000: the threshold stays below 2^32. */
		l->slow_thr =
			(uint32_t)(((uint64_t)d->slow_ppm << 32) / 1000000);
		l->slow_lo = d->slow_lo;
		l->slow_span = d->slow_hi - d->slow_lo;
	}
	switch (d->kind) {
	case NVQ_EMU_LAT_FIXED:
		break;
	case NVQ_EMU_LAT_UNIFORM:
		l->random = true;
		l->base = d->lo;
		l->span = d->hi - d->lo;
		break;
	case NVQ_EMU_LAT_LOGNORMAL:
		l->random = true;
		l->base = d->lo;
		l->table = malloc(n * sizeof(*l->table));
		if (!l->table)
			return -ENOMEM;
		/* Entry i is the quantile at the middle of its 1/n slice. */
		sigma = log((double)d->hi / (double)d->lo) / Z99;
		for (i = 0; i < n; i++) {
			double x = (double)d->lo *
				   exp(sigma * norm_quantile((i + 0.5) / n));

			l->table[i] = x >= 4294967295.0 ? UINT32_MAX :
							  (uint32_t)(x + 0.5);
		}
		break;
	}
	return 0;
}

void emu_lat_fini(struct emu_lat *l)
{
	free(l->table);
	l->table = NULL;
}

/* splitmix64: one add, two multiplies; statistically sound and seedable. */
static inline uint64_t lat_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t emu_lat_sample(const struct emu_lat *l, uint64_t *rng)
{
	uint64_t r;

	if (emu_likely(!l->random))
		return l->base;
	r = lat_rand(rng);
	/* Low 32 bits pick outliers, high bits the value: independent. */
	if (emu_unlikely((uint32_t)r < l->slow_thr))
		return l->slow_lo + (((r >> 32) * l->slow_span) >> 32);
	if (l->table)
		return l->table[r >> (64 - EMU_LAT_TABLE_BITS)];
	return l->base + (((r >> 32) * l->span) >> 32);
}

int emu_media_lat_init(struct nvq_emu *c)
{
	const struct nvq_emu_media_model *mm = &c->p.media;

	int ret;

	c->lat_rng = mm->seed;
	ret = emu_lat_init(&c->lat_read, &mm->read, mm->read_ns);
	if (!ret)
		ret = emu_lat_init(&c->lat_write, &mm->write, mm->write_ns);
	if (!ret)
		return 0;
	emu_media_lat_fini(c);
	if (ret == -ENOMEM)
		return emu_err(ret, "emu: out of memory for the latency model");
	return emu_err(ret,
		       "emu parameter 'lat': invalid latency distribution");
}

void emu_media_lat_fini(struct nvq_emu *c)
{
	emu_lat_fini(&c->lat_read);
	emu_lat_fini(&c->lat_write);
}

uint64_t emu_media_latency(struct nvq_emu *c, uint8_t opcode)
{
	switch (opcode) {
	case nvq_cmd_read:
		return emu_lat_sample(&c->lat_read, &c->lat_rng);
	case nvq_cmd_write:
	case nvq_cmd_write_zeroes:
	case nvq_cmd_dsm:
	case nvq_cmd_flush:
		return emu_lat_sample(&c->lat_write, &c->lat_rng);
	default:
		return 0;
	}
}
