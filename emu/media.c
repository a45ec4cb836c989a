// SPDX-License-Identifier: MIT
/*
 * The media behind the namespaces: one mapping holding every namespace in
 * turn. RAM is an anonymous mapping populated on first touch; a file is
 * mapped MAP_SHARED, so data written survives the process even without a
 * shutdown (it sits in the page cache), and Flush/shutdown make it durable
 * with msync + fdatasync. Both let the I/O path copy with plain memcpy.
 *
 * Also the media's timing: per command class a fixed latency or a
 * distribution (uniform, or lognormal from a quantile table) with rare
 * slow outliers, drawn per command from a seeded generator.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu_internal.h"

#define PG 4096ull

int emu_media_open(struct emu_media *m, const struct nvq_emu_params *p)
{
	uint64_t total = p->ns_size * p->nr_ns;
	struct stat st;
	void *base;

	m->fd = -1;
	m->len = total;
	if (!p->file[0]) {
		base = mmap(NULL, total, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED)
			return emu_err(
				-errno,
				"emu: cannot reserve %llu bytes of RAM media: %s",
				(unsigned long long)total, strerror(errno));
		m->base = base;
		return 0;
	}

	m->fd = open(p->file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (m->fd < 0)
		return emu_err(-errno,
			       "emu parameter 'file': cannot open '%s': %s",
			       p->file, strerror(errno));
	if (fstat(m->fd, &st) || !S_ISREG(st.st_mode)) {
		close(m->fd);
		m->fd = -1;
		return emu_err(
			-EINVAL,
			"emu parameter 'file': '%s' is not a regular file",
			p->file);
	}
	if ((uint64_t)st.st_size < total && ftruncate(m->fd, (off_t)total)) {
		int err = errno;

		close(m->fd);
		m->fd = -1;
		return emu_err(
			-err,
			"emu parameter 'file': cannot extend '%s' to %llu bytes: %s",
			p->file, (unsigned long long)total, strerror(err));
	}
	base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (base == MAP_FAILED) {
		int err = errno;

		close(m->fd);
		m->fd = -1;
		return emu_err(-err,
			       "emu parameter 'file': cannot map '%s': %s",
			       p->file, strerror(err));
	}
	m->base = base;
	return 0;
}

void emu_media_close(struct emu_media *m)
{
	if (m->base)
		munmap(m->base, m->len);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}

int emu_media_sync(struct emu_media *m, uint64_t off, uint64_t len)
{
	uint64_t start, end;

	if (m->fd < 0 || !len)
		return 0;
	start = off & ~(PG - 1);
	end = off + len;
	if (end > m->len)
		end = m->len;
	if (msync(m->base + start, end - start, MS_SYNC))
		return -errno;
	if (fdatasync(m->fd))
		return -errno;
	return 0;
}

void emu_media_zero(struct emu_media *m, uint64_t off, uint64_t len,
		    bool dealloc)
{
	uint64_t a = (off + PG - 1) & ~(PG - 1);
	uint64_t b = (off + len) & ~(PG - 1);

	/* Small ranges or no whole page inside: plain stores. */
	if (!dealloc || len < 16 * PG || a >= b) {
		memset(m->base + off, 0, len);
		return;
	}
	memset(m->base + off, 0, a - off);
	memset(m->base + b, 0, off + len - b);
	if (m->fd < 0) {
		if (!madvise(m->base + a, b - a, MADV_DONTNEED))
			return;
	} else if (!fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)a, (off_t)(b - a))) {
		return;
	}
	memset(m->base + a, 0, b - a);
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
