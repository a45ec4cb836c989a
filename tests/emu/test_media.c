// SPDX-License-Identifier: MIT
/*
 * Media models: every lat= form parses to the distribution it names, the
 * sampler's median, 99th percentile and outlier share match the spec on a
 * large deterministic sample, the generator repeats per seed, bad strings
 * are rejected naming the key, and through the device a distribution's
 * lower bound holds and stamp=1 puts the posting time in CQE DW1.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "emu_internal.h"
#include "harness.h"

#define NSAMPLES 200000

/* @v within a fraction @tol of @want (tests/common/check.h reports it). */
#define CHECK_NEAR(v, want, tol)                                              \
	do {                                                                  \
		double _v = (double)(v), _w = (double)(want);                 \
		if (fabs(_v - _w) > (tol)*_w)                                 \
			check_failed(__FILE__, __LINE__, #v " near " #want,   \
				     "%.0f, expected %.0f within %.1f%%", _v, \
				     _w, (tol)*100);                          \
	} while (0)

struct sample {
	uint64_t v[NSAMPLES]; /* sorted */
	uint64_t min, max;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void parse_ok(const char *s, struct nvq_emu_params *p)
{
	if (nvq_emu_params_parse(s, p)) {
		fprintf(stderr, "'%s' rejected: %s\n", s, nvq_emu_errmsg());
		exit(1);
	}
}

/* NSAMPLES draws of the read (@write false) or write class of @params. */
static void draw(const char *params, bool write, struct sample *s)
{
	struct nvq_emu_params p;
	struct emu_lat l;
	uint64_t rng;
	size_t i;

	parse_ok(params, &p);
	CHECK_EQ(emu_lat_init(&l, write ? &p.media.write : &p.media.read,
			      write ? p.media.write_ns : p.media.read_ns),
		 0);
	rng = p.media.seed;
	for (i = 0; i < NSAMPLES; i++)
		s->v[i] = emu_lat_sample(&l, &rng);
	emu_lat_fini(&l);
	qsort(s->v, NSAMPLES, sizeof(s->v[0]), cmp_u64);
	s->min = s->v[0];
	s->max = s->v[NSAMPLES - 1];
}

/* Exact percentile of the sample (nearest rank). */
static uint64_t pct(const struct sample *s, double p)
{
	size_t rank = (size_t)ceil(p / 100 * NSAMPLES);

	return s->v[rank ? rank - 1 : 0];
}

/* Share of the sample at or above @v, in percent. */
static double share_above(const struct sample *s, uint64_t v)
{
	size_t n = 0, i;

	for (i = 0; i < NSAMPLES; i++)
		n += s->v[i] >= v;
	return 100.0 * (double)n / NSAMPLES;
}

static void parsing(void)
{
	struct nvq_emu_params p;

	/* The old forms keep their meaning. */
	parse_ok("lat=80us", &p);
	CHECK_EQ(p.media.read_ns, 80000);
	CHECK_EQ(p.media.write_ns, 80000);
	CHECK_EQ(p.media.read.kind, NVQ_EMU_LAT_FIXED);
	CHECK_EQ(p.media.read.slow_ppm, 0);
	parse_ok("lat=80us/20us", &p);
	CHECK_EQ(p.media.read_ns, 80000);
	CHECK_EQ(p.media.write_ns, 20000);
	CHECK_EQ(p.media.write.kind, NVQ_EMU_LAT_FIXED);

	parse_ok("lat=uniform:50us-150us", &p);
	CHECK_EQ(p.media.read.kind, NVQ_EMU_LAT_UNIFORM);
	CHECK_EQ(p.media.read.lo, 50000);
	CHECK_EQ(p.media.read.hi, 150000);
	CHECK_EQ(p.media.read_ns, 100000);
	CHECK_EQ(p.media.write.kind, NVQ_EMU_LAT_UNIFORM);

	parse_ok("lat=lognormal:80us-400us+0.25%:1ms-3ms/15us", &p);
	CHECK_EQ(p.media.read.kind, NVQ_EMU_LAT_LOGNORMAL);
	CHECK_EQ(p.media.read.lo, 80000);
	CHECK_EQ(p.media.read.hi, 400000);
	CHECK_EQ(p.media.read.slow_ppm, 2500);
	CHECK_EQ(p.media.read.slow_lo, 1000000);
	CHECK_EQ(p.media.read.slow_hi, 3000000);
	CHECK_EQ(p.media.read_ns, 80000);
	CHECK_EQ(p.media.write.kind, NVQ_EMU_LAT_FIXED);
	CHECK_EQ(p.media.write_ns, 15000);

	parse_ok("lat=nand", &p);
	CHECK_EQ(p.media.read.kind, NVQ_EMU_LAT_LOGNORMAL);
	CHECK_EQ(p.media.read_ns, 80000);
	CHECK_EQ(p.media.write_ns, 20000);
	CHECK_EQ(p.media.read.slow_ppm, 1000);
	CHECK_EQ(p.media.write.slow_ppm, 2000);
	parse_ok("lat=optane", &p);
	CHECK_EQ(p.media.read_ns, 10000);
	CHECK_EQ(p.media.write_ns, 10000);

	parse_ok("", &p);
	CHECK(p.thp); /* huge pages for RAM media by default */
	parse_ok("thp=0", &p);
	CHECK(!p.thp);
	parse_ok("lat_seed=42,stamp=1", &p);
	CHECK_EQ(p.media.seed, 42);
	CHECK(p.stamp);
	parse_ok("", &p);
	CHECK(!p.stamp);
}

static void bad(const char *s, const char *key)
{
	struct nvq_emu_params p;

	if (nvq_emu_params_parse(s, &p) != -EINVAL) {
		fprintf(stderr, "'%s' was accepted\n", s);
		exit(1);
	}
	if (!strstr(nvq_emu_errmsg(), key)) {
		fprintf(stderr, "'%s': message '%s' does not name '%s'\n", s,
			nvq_emu_errmsg(), key);
		exit(1);
	}
}

static void rejects(void)
{
	bad("lat=uniform:5us", "'lat'");
	bad("lat=uniform:9us-5us", "'lat'");
	bad("lat=uniform:1us-2s", "'lat'"); /* above 1 s */
	bad("lat=uniform:-1us-5us", "'lat'");
	bad("lat=lognormal:80us-40us", "'lat'");
	bad("lat=lognormal:80us-80us", "'lat'");
	bad("lat=lognormal:0-80us", "'lat'");
	bad("lat=lognormal:80us", "'lat'");
	bad("lat=gauss:1us-2us", "'lat'");
	bad("lat=80us+5%", "'lat'");
	bad("lat=80us+0%:1ms-2ms", "'lat'");
	bad("lat=80us+51%:1ms-2ms", "'lat'");
	bad("lat=80us+x%:1ms-2ms", "'lat'");
	bad("lat=80us+1:1ms-2ms", "'lat'");
	bad("lat=80us+1%:2ms-1ms", "'lat'");
	bad("lat=80us+1%:1ms", "'lat'");
	bad("lat=nand/20us", "'lat'");
	bad("lat=NAND", "'lat'");
	bad("lat=", "'lat'");
	bad("lat_seed=x", "'lat_seed'");
	bad("lat_seed=", "'lat_seed'");
	bad("stamp=2", "'stamp'");
	bad("thp=2", "'thp'");
	bad("lat=nand,lat=optane", "'lat'");
}

static void distributions(void)
{
	static struct sample s;

	draw("lat=lognormal:80us-400us", false, &s);
	CHECK_NEAR(pct(&s, 50), 80000, 0.02);
	CHECK_NEAR(pct(&s, 99), 400000, 0.03);

	draw("lat=uniform:50us-150us", false, &s);
	CHECK(s.min >= 50000 && s.max <= 150000);
	CHECK_NEAR(pct(&s, 50), 100000, 0.01);
	CHECK_NEAR(pct(&s, 99), 149000, 0.01);

	draw("lat=optane", false, &s);
	CHECK_NEAR(pct(&s, 50), 10000, 0.02);
	CHECK_NEAR(pct(&s, 99), 14000, 0.03);
	draw("lat=optane", true, &s);
	CHECK_NEAR(pct(&s, 50), 10000, 0.02);

	/* NAND: the body as specified, plus 0.1 % reads of 1..4 ms. */
	draw("lat=nand", false, &s);
	CHECK_NEAR(pct(&s, 50), 80000, 0.02);
	CHECK_NEAR(pct(&s, 99), 250000, 0.03);
	CHECK_NEAR(share_above(&s, 1000000), 0.1, 0.15);
	CHECK(s.max <= 4000000);
	/* Writes: 20 us median; 0.2 % of 0.5..2 ms push p99 just above the
	 * body's 60 us (its quantile 0.99 / 0.998 is ~62 us). */
	draw("lat=nand", true, &s);
	CHECK_NEAR(pct(&s, 50), 20000, 0.02);
	CHECK(pct(&s, 99) >= 60000 && pct(&s, 99) <= 66000);
	CHECK_NEAR(share_above(&s, 500000), 0.2, 0.15);
	CHECK(s.max <= 2000000);

	/* A fixed latency with outliers: exactly 80 us or 1..2 ms. */
	draw("lat=80us+1%:1ms-2ms", false, &s);
	CHECK_EQ(pct(&s, 98), 80000);
	CHECK_NEAR(share_above(&s, 1000000), 1.0, 0.1);
	CHECK(pct(&s, 99.5) >= 1000000 && s.max <= 2000000);
	CHECK(share_above(&s, 80001) == share_above(&s, 1000000));

	/* Fixed: no generator involved. */
	draw("lat=80us/20us", true, &s);
	CHECK(s.min == 20000 && s.max == 20000);
}

static void seeding(void)
{
	struct nvq_emu_params p;
	struct emu_lat l;
	uint64_t a = 7, b = 7, c = 8;
	int i, same = 0;

	parse_ok("lat=lognormal:80us-400us", &p);
	CHECK_EQ(emu_lat_init(&l, &p.media.read, p.media.read_ns), 0);
	for (i = 0; i < 1000; i++) {
		uint64_t x = emu_lat_sample(&l, &a);

		CHECK_EQ(x, emu_lat_sample(&l, &b));
		same += x == emu_lat_sample(&l, &c);
	}
	CHECK(same < 100);
	emu_lat_fini(&l);

	/* Distributions built by hand get the parser's checks. */
	p.media.read.hi = 10;
	CHECK_EQ(emu_lat_init(&l, &p.media.read, 0), -EINVAL);
}

/* Through the device: a uniform distribution's lower bound holds. */
static void device_latency(void)
{
	struct h *h = h_open("lat=uniform:1ms-2ms/lognormal:10us-14us");
	struct hq *q;
	uint8_t *b;
	int i;

	h_enable(h);
	q = h_ioq(h, 1, 32, false, 0);
	b = h_alloc(h, 4096, NULL);
	for (i = 0; i < 5; i++) {
		uint64_t t0 = h_now();

		CHECK_ST_OK(
			h_rw(h, q, nvq_cmd_read, 1, (uint64_t)i, 1, b, 4096));
		CHECK(h_now() - t0 >= 1000000);
		CHECK_ST_OK(
			h_rw(h, q, nvq_cmd_write, 1, (uint64_t)i, 1, b, 4096));
	}
	h_close(h);
}

/* stamp=1: DW1 of an I/O CQE is the posting time, low 32 bits. */
static void stamp(void)
{
	struct h *h = h_open("stamp=1");
	struct nvq_cqe c;
	struct nvq_sqe s;
	struct hq *q;
	uint8_t *b;
	int i;

	h_enable(h);
	q = h_ioq(h, 1, 32, false, 0);
	b = h_alloc(h, 4096, NULL);
	for (i = 0; i < 20; i++) {
		uint64_t t0 = h_now(), t1;

		s = h_sqe(i % 2 ? nvq_cmd_write : nvq_cmd_read);
		s.nsid = 1;
		h_prp(h, &s, b, 4096);
		CHECK_ST_OK(h_cmd(h, q, &s, &c));
		t1 = h_now();
		/* t0 <= posted <= t1, in 32-bit wrapping arithmetic. */
		CHECK((uint32_t)(c.dw1 - (uint32_t)t0) <= (uint32_t)(t1 - t0));
	}
	/* Admin completions keep DW1 as the command defines it. */
	s = h_sqe(nvq_admin_identify);
	s.cdw10 = NVQ_ID_CNS_CTRL;
	h_prp(h, &s, b, 4096);
	CHECK_ST_OK(h_admin(h, &s, &c));
	CHECK_EQ(c.dw1, 0);
	h_close(h);

	/* Off by default: reserved DW1 stays zero. */
	h = h_open("");
	h_enable(h);
	q = h_ioq(h, 1, 32, false, 0);
	b = h_alloc(h, 4096, NULL);
	s = h_sqe(nvq_cmd_read);
	s.nsid = 1;
	h_prp(h, &s, b, 4096);
	CHECK_ST_OK(h_cmd(h, q, &s, &c));
	CHECK_EQ(c.dw1, 0);
	h_close(h);
}

int main(void)
{
	parsing();
	rejects();
	distributions();
	seeding();
	device_latency();
	stamp();
	return 0;
}
