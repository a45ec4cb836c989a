/* SPDX-License-Identifier: MIT */
/*
 * nvq-perf option parsing. Options live in one table: each row names the
 * option, whether it takes a value, whether it belongs to a configuration
 * (and so may appear inside --compare) or to the whole run, and the
 * function that stores it. Garbage is an error that names the option and
 * the value; nothing falls back to a default silently.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options.h"

enum scope {
	SCOPE_CONFIG, /* per configuration, allowed inside --compare */
	SCOPE_GLOBAL, /* whole invocation only */
};

struct option_def;
typedef int (*setter)(const struct option_def *d, struct perf_opts *o,
		      struct perf_config *c, const char *val, char *err,
		      size_t errlen);

struct option_def {
	const char *name; /* long name without "--" */
	char short_name; /* 0 if none */
	bool has_arg;
	enum scope scope;
	setter set;
	const char *metavar;
	const char *help;
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* Number parsers                                                      */
/* ------------------------------------------------------------------ */

/* Leading digits (decimal, or hex after 0x) into *@v; *@end past them. */
static int parse_digits(const char *s, uint64_t *v, const char **end)
{
	unsigned int base = 10;
	uint64_t acc = 0;
	const char *p = s;
	int ndig = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (;; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = (tolower((unsigned char)*p) - 'a') + 10;
		else
			break;
		if (acc > (UINT64_MAX - d) / base)
			return -EINVAL;
		acc = acc * base + d;
		ndig++;
	}
	if (!ndig)
		return -EINVAL;
	*v = acc;
	*end = p;
	return 0;
}

int perf_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;

	if (!s || parse_digits(s, &v, &end) || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int perf_parse_size(const char *s, uint64_t *out)
{
	const char *end;
	unsigned int shift = 0;
	uint64_t v;

	if (!s || parse_digits(s, &v, &end))
		return -EINVAL;
	switch (tolower((unsigned char)*end)) {
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	case 't':
		shift = 40;
		break;
	}
	if (shift) {
		end++;
		if (tolower((unsigned char)*end) == 'i' &&
		    tolower((unsigned char)end[1]) == 'b')
			end += 2;
		else if (tolower((unsigned char)*end) == 'b')
			end++;
	} else if (tolower((unsigned char)*end) == 'b') {
		end++;
	}
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

int perf_parse_time(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t mult;
	} units[] = {
		{ "ns", 1 },
		{ "us", 1000 },
		{ "ms", 1000000 },
		{ "s", 1000000000ull },
		{ "", 1000000000ull },
		{ "m", 60000000000ull },
		{ "min", 60000000000ull },
		{ "h", 3600000000000ull },
	};
	uint64_t ipart, frac = 0, fscale = 1, mult = 0, v;
	const char *p;
	unsigned int i;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	ipart = 0;
	for (p = s; isdigit((unsigned char)*p); p++) {
		if (ipart > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		ipart = ipart * 10 + (*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		/* Nanosecond resolution needs at most 9 fraction digits. */
		for (; isdigit((unsigned char)*p); p++) {
			if (fscale < 1000000000ull) {
				frac = frac * 10 + (*p - '0');
				fscale *= 10;
			}
		}
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(p, units[i].unit)) {
			mult = units[i].mult;
			break;
		}
	}
	if (!mult)
		return -EINVAL;
	if (ipart > UINT64_MAX / mult)
		return -EINVAL;
	v = ipart * mult;
	/* frac < fscale <= 1e9 and mult <= 3.6e12: the product fits. */
	v += (uint64_t)((unsigned __int128)frac * mult / fscale);
	if (v < ipart * mult)
		return -EINVAL;
	*ns = v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Setters                                                             */
/* ------------------------------------------------------------------ */

static int bad_value(const struct option_def *d, const char *what,
		     const char *val, const char *hint, char *err,
		     size_t errlen)
{
	return fail(err, errlen, "--%s: invalid %s '%s'%s%s", d->name, what,
		    val, hint ? " " : "", hint ? hint : "");
}

static int set_uint(const struct option_def *d, const char *val, uint64_t min,
		    uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	int rc = perf_parse_uint(val, min, max, out);

	if (rc == -ERANGE)
		return fail(err, errlen,
			    "--%s: %s is out of range (%llu..%llu)", d->name,
			    val, (unsigned long long)min,
			    (unsigned long long)max);
	if (rc)
		return bad_value(d, "number", val,
				 "(expected a decimal or 0x hex integer)", err,
				 errlen);
	return 0;
}

static int set_size(const struct option_def *d, const char *val, uint64_t min,
		    uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	uint64_t v;

	if (perf_parse_size(val, &v))
		return bad_value(
			d, "size", val,
			"(expected bytes with an optional k, m, g or t suffix)",
			err, errlen);
	if (v < min || v > max)
		return fail(err, errlen,
			    "--%s: %s is out of range (%llu..%llu bytes)",
			    d->name, val, (unsigned long long)min,
			    (unsigned long long)max);
	*out = v;
	return 0;
}

static int set_time(const struct option_def *d, const char *val, bool zero_ok,
		    uint64_t *out, char *err, size_t errlen)
{
	/* A year: anything longer is a typo, and sums stay far from 2^64. */
	const uint64_t max = 365ull * 24 * 3600 * 1000000000ull;
	uint64_t v;

	if (perf_parse_time(val, &v))
		return bad_value(d, "duration", val,
				 "(expected e.g. 10s, 500ms, 2m, 100us)", err,
				 errlen);
	if ((!v && !zero_ok) || v > max)
		return fail(err, errlen,
			    "--%s: %s is out of range (%s..1 year)", d->name,
			    val, zero_ok ? "0" : "1ns");
	*out = v;
	return 0;
}

static int set_rw(const struct option_def *d, struct perf_opts *o,
		  struct perf_config *c, const char *val, char *err,
		  size_t errlen)
{
	static const struct {
		const char *name;
		enum perf_rw rw;
	} names[] = {
		{ "read", PERF_RW_READ },
		{ "write", PERF_RW_WRITE },
		{ "randread", PERF_RW_RANDREAD },
		{ "randwrite", PERF_RW_RANDWRITE },
		{ "randrw", PERF_RW_RANDRW },
		{ "rw", PERF_RW_RW },
		{ "readwrite", PERF_RW_RW },
	};
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(val, names[i].name)) {
			c->rw = names[i].rw;
			return 0;
		}
	}
	return bad_value(
		d, "workload", val,
		"(expected read, write, randread, randwrite, randrw or rw)",
		err, errlen);
}

static int set_rwmix(const struct option_def *d, struct perf_opts *o,
		     struct perf_config *c, const char *val, char *err,
		     size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 0, 100, &v, err, errlen);

	if (rc)
		return rc;
	c->rwmix = (unsigned int)v;
	c->rwmix_set = true;
	return 0;
}

static int set_bs(const struct option_def *d, struct perf_opts *o,
		  struct perf_config *c, const char *val, char *err,
		  size_t errlen)
{
	return set_size(d, val, 1, 1ull << 30, &c->bs, err, errlen);
}

static int set_qd(const struct option_def *d, struct perf_opts *o,
		  struct perf_config *c, const char *val, char *err,
		  size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 1, 65535, &v, err, errlen);

	if (!rc)
		c->qd = (unsigned int)v;
	return rc;
}

static int set_threads(const struct option_def *d, struct perf_opts *o,
		       struct perf_config *c, const char *val, char *err,
		       size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 1, 1024, &v, err, errlen);

	if (!rc)
		c->threads = (unsigned int)v;
	return rc;
}

static int set_runtime(const struct option_def *d, struct perf_opts *o,
		       struct perf_config *c, const char *val, char *err,
		       size_t errlen)
{
	return set_time(d, val, false, &c->time_ns, err, errlen);
}

static int set_ramp(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	return set_time(d, val, true, &c->ramp_ns, err, errlen);
}

static int set_ios(const struct option_def *d, struct perf_opts *o,
		   struct perf_config *c, const char *val, char *err,
		   size_t errlen)
{
	return set_uint(d, val, 1, UINT64_MAX >> 1, &c->ios, err, errlen);
}

static int set_offset(const struct option_def *d, struct perf_opts *o,
		      struct perf_config *c, const char *val, char *err,
		      size_t errlen)
{
	return set_size(d, val, 0, UINT64_MAX >> 1, &c->offset, err, errlen);
}

static int set_region(const struct option_def *d, struct perf_opts *o,
		      struct perf_config *c, const char *val, char *err,
		      size_t errlen)
{
	return set_size(d, val, 1, UINT64_MAX >> 1, &c->size, err, errlen);
}

static int set_seed(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	return set_uint(d, val, 0, UINT64_MAX, &c->seed, err, errlen);
}

static int set_nsid(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 1, 0xfffffffe, &v, err, errlen);

	if (!rc)
		c->nsid = (uint32_t)v;
	return rc;
}

static int set_mode(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	if (!strcmp(val, "poll"))
		c->mode = NVQ_MODE_POLL;
	else if (!strcmp(val, "wait"))
		c->mode = NVQ_MODE_WAIT;
	else if (!strcmp(val, "thread"))
		c->mode = NVQ_MODE_THREAD;
	else
		return bad_value(d, "mode", val,
				 "(expected poll, wait or thread)", err,
				 errlen);
	return 0;
}

static int set_uri(const struct option_def *d, struct perf_opts *o,
		   struct perf_config *c, const char *val, char *err,
		   size_t errlen)
{
	if (!*val)
		return fail(err, errlen,
			    "--%s: empty device URI (expected e.g. emu: or "
			    "vfio:0000:01:00.0)",
			    d->name);
	c->uri = val;
	return 0;
}

static int set_exclusive(const struct option_def *d, struct perf_opts *o,
			 struct perf_config *c, const char *val, char *err,
			 size_t errlen)
{
	c->exclusive = true;
	return 0;
}

int perf_parse_cpu_lat(const char *s, int *us)
{
	/* The library's parser: one grammar for every tool and the API. */
	return nvq_qos_parse_limit(s, us) ? -EINVAL : 0;
}

const char *perf_cpu_lat_name(int us, char *buf, size_t len)
{
	if (us == NVQ_QOS_OFF)
		snprintf(buf, len, "off");
	else if (us == NVQ_QOS_AUTO)
		snprintf(buf, len, "auto");
	else
		snprintf(buf, len, "%d", us);
	return buf;
}

static int set_cpu_lat(const struct option_def *d, struct perf_opts *o,
		       struct perf_config *c, const char *val, char *err,
		       size_t errlen)
{
	if (perf_parse_cpu_lat(val, &c->cpu_lat_limit_us))
		return bad_value(d, "limit", val,
				 "(expected off, auto, 0 for no idle, or "
				 "1..1000000 us)",
				 err, errlen);
	return 0;
}

int perf_parse_cpu_lat_method(const char *s, enum nvq_qos_method *m)
{
	enum nvq_qos_method v;

	/* "none" is what the library reports, not a choice. */
	if (!s || nvq_qos_parse_method(s, &v) || v == NVQ_QOS_METHOD_NONE)
		return -EINVAL;
	*m = v;
	return 0;
}

static int set_cpu_lat_method(const struct option_def *d, struct perf_opts *o,
			      struct perf_config *c, const char *val, char *err,
			      size_t errlen)
{
	if (perf_parse_cpu_lat_method(val, &c->cpu_lat_method))
		return bad_value(d, "method", val,
				 "(expected auto, cpuidle, poll or hybrid)",
				 err, errlen);
	c->cpu_lat_method_set = true;
	return 0;
}

static int set_think(const struct option_def *d, struct perf_opts *o,
		     struct perf_config *c, const char *val, char *err,
		     size_t errlen)
{
	return set_time(d, val, true, &c->think_ns, err, errlen);
}

static int set_rate(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	return set_uint(d, val, 0, PERF_RATE_IOPS_MAX, &c->rate_iops, err,
			errlen);
}

static int set_cpu_lat_timeout(const struct option_def *d, struct perf_opts *o,
			       struct perf_config *c, const char *val,
			       char *err, size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 1, NVQ_QOS_TIMEOUT_MS_MAX, &v, err, errlen);

	if (!rc)
		c->cpu_lat_timeout_ms = (unsigned int)v;
	return rc;
}

static int set_timeout(const struct option_def *d, struct perf_opts *o,
		       struct perf_config *c, const char *val, char *err,
		       size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 1, NVQ_TIMEOUT_MS_MAX, &v, err, errlen);

	if (rc)
		return rc;
	if (!strcmp(d->name, "io-timeout-ms"))
		c->io_timeout_ms = (unsigned int)v;
	else
		c->admin_timeout_ms = (unsigned int)v;
	return 0;
}

static int set_lock(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	if (!strcmp(val, "split"))
		c->single_lock = false;
	else if (!strcmp(val, "single"))
		c->single_lock = true;
	else
		return bad_value(d, "lock mode", val,
				 "(expected split or single)", err, errlen);
	c->lock_set = true;
	return 0;
}

static int set_shared_queue(const struct option_def *d, struct perf_opts *o,
			    struct perf_config *c, const char *val, char *err,
			    size_t errlen)
{
	c->shared_queue = true;
	return 0;
}

static int set_verify(const struct option_def *d, struct perf_opts *o,
		      struct perf_config *c, const char *val, char *err,
		      size_t errlen)
{
	c->verify = true;
	return 0;
}

static int set_pi_act(const struct option_def *d, struct perf_opts *o,
		      struct perf_config *c, const char *val, char *err,
		      size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 0, 1, &v, err, errlen);

	if (!rc)
		c->pi_act = v != 0;
	return rc;
}

int perf_parse_pi_chk(const char *s, unsigned int *flags)
{
	static const struct {
		const char *name;
		unsigned int flag;
	} names[] = {
		{ "GUARD", NVQ_IO_PRCHK_GUARD },
		{ "REFTAG", NVQ_IO_PRCHK_REF },
		{ "APPTAG", NVQ_IO_PRCHK_APP },
	};
	unsigned int f = 0, i;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	if (!strcasecmp(s, "none")) {
		*flags = 0;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len &&
			    !strncasecmp(p, names[i].name, len))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		f |= names[i].flag;
		if (!p[len])
			break;
		p += len + 1;
	}
	*flags = f;
	return 0;
}

const char *perf_pi_chk_name(unsigned int flags, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s%s",
		 flags & NVQ_IO_PRCHK_GUARD ? "GUARD" : "",
		 (flags & NVQ_IO_PRCHK_GUARD) && (flags & (NVQ_IO_PRCHK_REF |
							   NVQ_IO_PRCHK_APP)) ?
			 "," :
			 "",
		 flags & NVQ_IO_PRCHK_REF ? "REFTAG" : "",
		 (flags & NVQ_IO_PRCHK_REF) && (flags & NVQ_IO_PRCHK_APP) ?
			 "," :
			 "",
		 flags & NVQ_IO_PRCHK_APP ? "APPTAG" : "",
		 flags & NVQ_IO_PRCHK_ALL ? "" : "none");
	return buf;
}

static int set_pi_chk(const struct option_def *d, struct perf_opts *o,
		      struct perf_config *c, const char *val, char *err,
		      size_t errlen)
{
	if (perf_parse_pi_chk(val, &c->pi_chk))
		return bad_value(d, "check list", val,
				 "(expected GUARD, REFTAG, APPTAG separated by "
				 "commas, or none)",
				 err, errlen);
	c->pi_chk_set = true;
	return 0;
}

static int set_apptag(const struct option_def *d, struct perf_opts *o,
		      struct perf_config *c, const char *val, char *err,
		      size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 0, 0xffff, &v, err, errlen);

	if (rc)
		return rc;
	if (!strcmp(d->name, "apptag"))
		c->apptag = (uint16_t)v;
	else
		c->apptag_mask = (uint16_t)v;
	return 0;
}

static int set_pi_verify(const struct option_def *d, struct perf_opts *o,
			 struct perf_config *c, const char *val, char *err,
			 size_t errlen)
{
	c->pi_verify = true;
	return 0;
}

static int set_json(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	o->json = true;
	return 0;
}

static int set_plot(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	if (!*val)
		return fail(err, errlen, "--%s: empty file name", d->name);
	o->plot = val;
	return 0;
}

static int set_compare(const struct option_def *d, struct perf_opts *o,
		       struct perf_config *c, const char *val, char *err,
		       size_t errlen)
{
	/* Split after all plain options are known: they form the base. */
	o->compare_text = val;
	o->compare = true;
	return 0;
}

static int set_rounds(const struct option_def *d, struct perf_opts *o,
		      struct perf_config *c, const char *val, char *err,
		      size_t errlen)
{
	uint64_t v;
	int rc = set_uint(d, val, 1, 1000, &v, err, errlen);

	if (!rc) {
		o->rounds = (unsigned int)v;
		o->rounds_set = true;
	}
	return rc;
}

static int set_help(const struct option_def *d, struct perf_opts *o,
		    struct perf_config *c, const char *val, char *err,
		    size_t errlen)
{
	return PERF_OPTS_HELP;
}

static int set_version(const struct option_def *d, struct perf_opts *o,
		       struct perf_config *c, const char *val, char *err,
		       size_t errlen)
{
	return PERF_OPTS_VERSION;
}

static const struct option_def option_table[] = {
	{ "device", 'd', true, SCOPE_CONFIG, set_uri, "URI",
	  "device: emu:[key=val,...] or vfio:DDDD:BB:DD.F (default emu:); "
	  "a /N suffix names namespace N" },
	{ "rw", 0, true, SCOPE_CONFIG, set_rw, "RW",
	  "read, write, randread, randwrite, randrw, rw (default randread)" },
	{ "rwmix", 0, true, SCOPE_CONFIG, set_rwmix, "PCT",
	  "percent reads for randrw and rw (default 50)" },
	{ "bs", 0, true, SCOPE_CONFIG, set_bs, "SIZE",
	  "bytes per I/O, k/m/g suffixes (default 4k); the driver splits" },
	{ "qd", 0, true, SCOPE_CONFIG, set_qd, "N",
	  "requests in flight per thread (default 32)" },
	{ "threads", 0, true, SCOPE_CONFIG, set_threads, "N",
	  "job threads, each with its own I/O queue (default 1)" },
	{ "time", 0, true, SCOPE_CONFIG, set_runtime, "DUR",
	  "measured time, e.g. 10s, 500ms, 2m (default 5s)" },
	{ "ios", 0, true, SCOPE_CONFIG, set_ios, "N",
	  "stop after N measured I/Os per thread (with --time: first wins)" },
	{ "ramp", 0, true, SCOPE_CONFIG, set_ramp, "DUR",
	  "warm-up time whose I/Os are not counted (default 0)" },
	{ "offset", 0, true, SCOPE_CONFIG, set_offset, "SIZE",
	  "first byte of the region (default 0)" },
	{ "size", 0, true, SCOPE_CONFIG, set_region, "SIZE",
	  "region length (default: to the end of the namespace)" },
	{ "seed", 0, true, SCOPE_CONFIG, set_seed, "N",
	  "seed of the offset generator (same seed, same offsets)" },
	{ "nsid", 0, true, SCOPE_CONFIG, set_nsid, "N",
	  "namespace id (default: the first active one)" },
	{ "mode", 0, true, SCOPE_CONFIG, set_mode, "MODE",
	  "completions: poll, wait or thread (default poll)" },
	{ "exclusive", 0, false, SCOPE_CONFIG, set_exclusive, NULL,
	  "lock-free queues owned by one thread (not with --mode thread)" },
	{ "verify", 0, false, SCOPE_CONFIG, set_verify, NULL,
	  "writes carry LBA, sequence and CRC32C; reads check them" },
	{ "shared-queue", 0, false, SCOPE_CONFIG, set_shared_queue, NULL,
	  "all threads submit to one I/O queue (split-lock comparison)" },
	{ "lock", 0, true, SCOPE_CONFIG, set_lock, "split|single",
	  "shared queue locking: split sq/cq locks (default) or one lock "
	  "(benchmark baseline)" },
	{ "cpu-lat-limit-us", 0, true, SCOPE_CONFIG, set_cpu_lat, "US",
	  "CPU latency limit of busy wait/thread queues: off (default), "
	  "auto, 0 (no idle) or N us" },
	{ "cpu-lat-timeout-ms", 0, true, SCOPE_CONFIG, set_cpu_lat_timeout, "N",
	  "idle ms after which a queue drops its limit (default 3)" },
	{ "cpu-lat-method", 0, true, SCOPE_CONFIG, set_cpu_lat_method, "M",
	  "how the limit is kept: auto (default), cpuidle, poll, hybrid" },
	{ "think-time", 0, true, SCOPE_CONFIG, set_think, "DUR",
	  "pause between a slot's completion and its next I/O (0: off)" },
	{ "rate-iops", 0, true, SCOPE_CONFIG, set_rate, "N",
	  "at most N submissions per second per thread (default 0: off)" },
	{ "io-timeout-ms", 0, true, SCOPE_CONFIG, set_timeout, "N",
	  "I/O command timeout, 1..3600000 ms (default 30000)" },
	{ "admin-timeout-ms", 0, true, SCOPE_CONFIG, set_timeout, "N",
	  "admin command timeout, 1..3600000 ms (default 60000)" },
	{ "pi-act", 0, true, SCOPE_CONFIG, set_pi_act, "0|1",
	  "PI namespaces: 1 the controller inserts/strips the PI (PRACT, "
	  "default), 0 the host generates it" },
	{ "pi-chk", 0, true, SCOPE_CONFIG, set_pi_chk, "LIST",
	  "PI fields the controller checks: GUARD,REFTAG,APPTAG or none "
	  "(default GUARD,REFTAG)" },
	{ "apptag", 0, true, SCOPE_CONFIG, set_apptag, "N",
	  "PI application tag written and checked (default 0x1234)" },
	{ "apptag-mask", 0, true, SCOPE_CONFIG, set_apptag, "N",
	  "bits of --apptag the checks compare (default 0xffff)" },
	{ "pi-verify", 0, false, SCOPE_CONFIG, set_pi_verify, NULL,
	  "with --pi-act 0: the host checks the PI reads return too" },
	{ "json", 0, false, SCOPE_GLOBAL, set_json, NULL,
	  "print fio-style JSON instead of text" },
	{ "plot", 0, true, SCOPE_GLOBAL, set_plot, "FILE.svg",
	  "write the clat CDF (one curve per configuration) as SVG" },
	{ "compare", 0, true, SCOPE_GLOBAL, set_compare, "\"A;B;...\"",
	  "run option sets A, B, ... alternately on top of the others" },
	{ "rounds", 0, true, SCOPE_GLOBAL, set_rounds, "N",
	  "rounds of A B ... (default 3); also repeats a single run" },
	{ "help", 'h', false, SCOPE_GLOBAL, set_help, NULL, "this text" },
	{ "version", 0, false, SCOPE_GLOBAL, set_version, NULL,
	  "print the version" },
};

#define NR_OPTIONS (sizeof(option_table) / sizeof(option_table[0]))

void perf_usage(FILE *f)
{
	unsigned int i;

	fprintf(f, "usage: nvq-perf [-d URI] [options]\n"
		   "Benchmark an NVMe controller through nvq (default device: "
		   "the emulated one).\n\n");
	for (i = 0; i < NR_OPTIONS; i++) {
		const struct option_def *d = &option_table[i];
		char lhs[48];

		if (d->short_name)
			snprintf(lhs, sizeof(lhs), "-%c, --%s%s%s",
				 d->short_name, d->name, d->metavar ? " " : "",
				 d->metavar ? d->metavar : "");
		else
			snprintf(lhs, sizeof(lhs), "    --%s%s%s", d->name,
				 d->metavar ? " " : "",
				 d->metavar ? d->metavar : "");
		fprintf(f, "  %-26s %s\n", lhs, d->help);
	}
	fprintf(f,
		"\nWithout --time and --ios a run lasts 5s; with --verify it "
		"makes one pass\nover the region instead. --ios counts per "
		"thread. Writes with --verify are\nread back and checked "
		"after the run. Inside --compare only per-configuration\n"
		"options are allowed (not --json, --plot, --compare, --rounds, "
		"--help).\n"
		"--think-time and --rate-iops pace submissions: latencies are "
		"measured from\nthe submission, so the pause is in none of "
		"them; in poll mode the thread keeps\npolling through it, in "
		"wait and thread mode it sleeps.\n"
		"Example: nvq-perf --qd 1 --time 2s --compare \"--mode poll;"
		"--mode wait\" --rounds 5\n");
}

/* ------------------------------------------------------------------ */
/* Argument walking                                                    */
/* ------------------------------------------------------------------ */

static const struct option_def *find_long(const char *name, size_t len)
{
	unsigned int i;

	for (i = 0; i < NR_OPTIONS; i++) {
		if (strlen(option_table[i].name) == len &&
		    !strncmp(option_table[i].name, name, len))
			return &option_table[i];
	}
	return NULL;
}

static const struct option_def *find_short(char c)
{
	unsigned int i;

	for (i = 0; i < NR_OPTIONS; i++) {
		if (option_table[i].short_name == c)
			return &option_table[i];
	}
	return NULL;
}

/*
 * Apply @argv[0..@argc) to @c (and @o for global options when
 * @global_ok). Returns 0, PERF_OPTS_HELP, PERF_OPTS_VERSION or -EINVAL.
 */
static int apply_args(struct perf_opts *o, struct perf_config *c, int argc,
		      char **argv, bool global_ok, char *err, size_t errlen)
{
	int i, rc;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *val = NULL;
		const struct option_def *d;

		if (arg[0] == '-' && arg[1] == '-' && arg[2]) {
			const char *eq = strchr(arg + 2, '=');
			size_t len = eq ? (size_t)(eq - arg - 2) :
					  strlen(arg + 2);

			d = find_long(arg + 2, len);
			if (!d)
				return fail(
					err, errlen,
					"unknown option '%.*s' (see --help)",
					(int)len + 2, arg);
			if (eq) {
				if (!d->has_arg)
					return fail(
						err, errlen,
						"option --%s takes no value "
						"(got '%s')",
						d->name, eq + 1);
				val = eq + 1;
			}
		} else if (arg[0] == '-' && arg[1] && arg[1] != '-') {
			d = find_short(arg[1]);
			if (!d)
				return fail(err, errlen,
					    "unknown option '-%c' (see --help)",
					    arg[1]);
			if (arg[2]) {
				if (!d->has_arg)
					return fail(err, errlen,
						    "option -%c takes no value "
						    "(got '%s')",
						    arg[1], arg + 2);
				val = arg + 2;
			}
		} else {
			return fail(err, errlen,
				    "unexpected argument '%s' (see --help)",
				    arg);
		}
		if (d->scope == SCOPE_GLOBAL && !global_ok)
			return fail(err, errlen,
				    "--%s applies to the whole run, not to one "
				    "configuration",
				    d->name);
		if (d->has_arg && !val) {
			if (i + 1 >= argc)
				return fail(err, errlen,
					    "option --%s needs a value (%s)",
					    d->name, d->metavar);
			val = argv[++i];
		}
		rc = d->set(d, o, c, val, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static void config_defaults(struct perf_config *c)
{
	memset(c, 0, sizeof(*c));
	c->uri = PERF_DEFAULT_URI;
	c->rw = PERF_RW_RANDREAD;
	c->rwmix = 50;
	c->bs = PERF_DEFAULT_BS;
	c->qd = PERF_DEFAULT_QD;
	c->threads = 1;
	c->seed = PERF_DEFAULT_SEED;
	c->nsid = 0;
	c->mode = NVQ_MODE_POLL;
	c->cpu_lat_limit_us = NVQ_QOS_OFF;
	c->pi_act = true;
	c->apptag = PERF_DEFAULT_APPTAG;
	c->apptag_mask = PERF_DEFAULT_APPTAG_MASK;
}

/* Cross-option checks once a configuration is complete. */
static int finish_config(struct perf_config *c, const char *where, char *err,
			 size_t errlen)
{
	bool mixed = c->rw == PERF_RW_RANDRW || c->rw == PERF_RW_RW;

	if (c->rwmix_set && !mixed)
		return fail(err, errlen,
			    "%s--rwmix: only meaningful with --rw randrw or "
			    "rw (got --rw %s)",
			    where, perf_rw_name(c->rw));
	if (c->verify && mixed)
		return fail(err, errlen,
			    "%s--verify: supported with read, write, randread "
			    "and randwrite (got --rw %s)",
			    where, perf_rw_name(c->rw));
	if (c->exclusive && c->mode == NVQ_MODE_THREAD)
		return fail(err, errlen,
			    "%s--exclusive: a completion thread also uses the "
			    "queue; not with --mode thread",
			    where);
	if (c->exclusive && c->lock_set)
		return fail(err, errlen,
			    "%s--lock: exclusive queues take no locks; not "
			    "with --exclusive",
			    where);
	if (c->exclusive && c->shared_queue && c->threads > 1)
		return fail(err, errlen,
			    "%s--shared-queue: an exclusive queue has one "
			    "owner thread; not with --exclusive and --threads "
			    "%u",
			    where, c->threads);
	if (c->pi_verify && c->pi_act)
		return fail(err, errlen,
			    "%s--pi-verify: the host checks the PI it "
			    "generates; needs --pi-act 0",
			    where);
	if (!c->time_ns && !c->ios && !c->verify)
		c->time_ns = PERF_DEFAULT_TIME_NS;
	return 0;
}

/*
 * Split @text in place into whitespace-separated words, honouring single
 * and double quotes. Returns the word count or -EINVAL.
 */
static int split_words(char *text, char **words, int max)
{
	char *r = text, *w = text;
	int n = 0;

	for (;;) {
		char quote = 0;

		while (isspace((unsigned char)*r))
			r++;
		if (!*r)
			return n;
		if (n == max)
			return -E2BIG;
		words[n++] = w;
		while (*r && (quote || !isspace((unsigned char)*r))) {
			if (!quote && (*r == '\'' || *r == '"'))
				quote = *r++;
			else if (quote && *r == quote)
				quote = 0, r++;
			else
				*w++ = *r++;
		}
		if (quote)
			return -EINVAL;
		if (*r)
			r++;
		*w++ = '\0';
	}
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_compare(struct perf_opts *o, const char *text, char *err,
			 size_t errlen)
{
	size_t len = strlen(text);
	char *buf, *seg, *next;
	unsigned int n = 0;

	/* Labels and words point into one buffer: the text twice. */
	buf = malloc(2 * (len + 1));
	if (!buf)
		return fail(err, errlen, "--compare: out of memory");
	o->strbuf = buf;
	memcpy(buf, text, len + 1);
	memcpy(buf + len + 1, text, len + 1);

	for (seg = buf + len + 1; seg; seg = next) {
		char *label_src, *words[128], where[96];
		struct perf_config *c;
		int nw, rc;

		next = strchr(seg, ';');
		if (next)
			*next++ = '\0';
		/* The same segment in the first copy becomes the label. */
		label_src = buf + (seg - (buf + len + 1));
		label_src[strlen(seg)] = '\0';
		label_src = trim(label_src);
		if (n == PERF_MAX_CONFIGS)
			return fail(err, errlen,
				    "--compare: more than %d configurations",
				    PERF_MAX_CONFIGS);
		if (!*label_src)
			return fail(err, errlen,
				    "--compare: configuration %u is empty "
				    "(in '%s')",
				    n + 1, text);
		snprintf(where, sizeof(where),
			 "--compare configuration %u: ", n + 1);
		nw = split_words(seg, words, 128);
		if (nw < 0)
			return fail(err, errlen,
				    "--compare: configuration %u ('%s'): %s",
				    n + 1, label_src,
				    nw == -E2BIG ? "too many words" :
						   "unterminated quote");
		c = &o->configs[n];
		*c = o->base;
		c->label = label_src;
		rc = apply_args(o, c, nw, words, false, err, errlen);
		if (rc) {
			char inner[256];

			snprintf(inner, sizeof(inner), "%s", err);
			return fail(err, errlen, "%s%s", where, inner);
		}
		rc = finish_config(c, where, err, errlen);
		if (rc)
			return rc;
		n++;
	}
	o->nr_configs = n;
	return 0;
}

int perf_opts_parse(struct perf_opts *o, int argc, char **argv, char *err,
		    size_t errlen)
{
	int rc;

	memset(o, 0, sizeof(*o));
	config_defaults(&o->base);
	o->rounds = PERF_DEFAULT_ROUNDS;
	if (errlen)
		err[0] = '\0';

	rc = apply_args(o, &o->base, argc - 1, argv + 1, true, err, errlen);
	if (rc)
		return rc;
	if (o->compare)
		return parse_compare(o, o->compare_text, err, errlen);

	rc = finish_config(&o->base, "", err, errlen);
	if (rc)
		return rc;
	o->configs[0] = o->base;
	o->nr_configs = 1;
	if (!o->rounds_set)
		o->rounds = 1;
	return 0;
}

void perf_opts_free(struct perf_opts *o)
{
	free(o->strbuf);
	o->strbuf = NULL;
}

const char *perf_rw_name(enum perf_rw rw)
{
	switch (rw) {
	case PERF_RW_READ:
		return "read";
	case PERF_RW_WRITE:
		return "write";
	case PERF_RW_RANDREAD:
		return "randread";
	case PERF_RW_RANDWRITE:
		return "randwrite";
	case PERF_RW_RANDRW:
		return "randrw";
	case PERF_RW_RW:
		return "rw";
	}
	return "?";
}

const char *perf_mode_name(enum nvq_mode mode)
{
	switch (mode) {
	case NVQ_MODE_POLL:
		return "poll";
	case NVQ_MODE_WAIT:
		return "wait";
	case NVQ_MODE_THREAD:
		return "thread";
	}
	return "?";
}

bool perf_rw_random(enum perf_rw rw)
{
	return rw == PERF_RW_RANDREAD || rw == PERF_RW_RANDWRITE ||
	       rw == PERF_RW_RANDRW;
}

unsigned int perf_read_pct(const struct perf_config *c)
{
	switch (c->rw) {
	case PERF_RW_READ:
	case PERF_RW_RANDREAD:
		return 100;
	case PERF_RW_WRITE:
	case PERF_RW_RANDWRITE:
		return 0;
	case PERF_RW_RANDRW:
	case PERF_RW_RW:
		return c->rwmix;
	}
	return 100;
}
