// SPDX-License-Identifier: MIT
/* The emulated controller's parameter string: "key=val,key=val". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

void nvq_emu_params_default(struct nvq_emu_params *p)
{
	memset(p, 0, sizeof(*p));
	p->ns_size = 1ull << 30;
	p->nr_ns = 1;
	p->lbads = 12;
	p->qpairs = 64;
	p->mqes = 1023;
	p->mdts = 5;
	p->msix = 0; /* qpairs + 1, resolved after parsing */
	p->dstrd = 0;
	p->dbbuf = true;
	p->vwc = true;
	p->thp = true;
	p->assist = true;
	p->cqr = true;
	p->to = 10;
	p->rdy_delay_ns = 0;
	p->idle_spin_ns = 50000;
	p->media.seed = 0x6e76712d6c6174ull; /* fixed: runs repeat */
	p->fault_seed = 0x6e76712d666c74ull; /* fixed: faults repeat */
	p->sanitize_ns = 100000000; /* 100 ms */
	p->elpe = 63; /* 64 error log entries */
	p->lpa = NVQ_CTRL_LPA_EXT_DATA;
}

/* Unsigned decimal (or 0x hex) prefix; returns the rest, NULL if none. */
static const char *parse_num(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return NULL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s)
		return NULL;
	return end;
}

static int parse_size(const char *key, const char *s, uint64_t *out)
{
	uint64_t v, mult = 1;
	const char *r = parse_num(s, &v);

	if (!r)
		goto bad;
	switch (*r) {
	case '\0':
		break;
	case 'K':
	case 'k':
		mult = 1ull << 10;
		r++;
		break;
	case 'M':
	case 'm':
		mult = 1ull << 20;
		r++;
		break;
	case 'G':
	case 'g':
		mult = 1ull << 30;
		r++;
		break;
	case 'T':
	case 't':
		mult = 1ull << 40;
		r++;
		break;
	default:
		goto bad;
	}
	if (*r)
		goto bad;
	if (v > UINT64_MAX / mult)
		return emu_err(-EINVAL,
			       "emu parameter '%s': size '%s' too large", key,
			       s);
	*out = v * mult;
	return 0;
bad:
	return emu_err(
		-EINVAL,
		"emu parameter '%s': bad size '%s' (number with optional K, M, G or T suffix)",
		key, s);
}

static int parse_duration(const char *key, const char *s, uint64_t *out)
{
	uint64_t v, mult = 1;
	const char *r = parse_num(s, &v);

	if (!r)
		goto bad;
	if (!strcmp(r, "") || !strcmp(r, "ns"))
		mult = 1;
	else if (!strcmp(r, "us"))
		mult = 1000;
	else if (!strcmp(r, "ms"))
		mult = 1000000;
	else if (!strcmp(r, "s"))
		mult = 1000000000;
	else
		goto bad;
	/* An hour is plenty and keeps every deadline sum far from overflow. */
	if (v > 3600ull * 1000000000 / mult)
		return emu_err(-EINVAL,
			       "emu parameter '%s': duration '%s' above 1 hour",
			       key, s);
	*out = v * mult;
	return 0;
bad:
	return emu_err(
		-EINVAL,
		"emu parameter '%s': bad duration '%s' (number with ns, us, ms or s suffix)",
		key, s);
}

int emu_param_duration(const char *key, const char *s, uint64_t *out)
{
	return parse_duration(key, s, out);
}

static int parse_uint(const char *key, const char *s, uint64_t min,
		      uint64_t max, uint32_t *out)
{
	uint64_t v;
	const char *r = parse_num(s, &v);

	if (!r || *r)
		return emu_err(-EINVAL, "emu parameter '%s': bad number '%s'",
			       key, s);
	if (v < min || v > max)
		return emu_err(-EINVAL,
			       "emu parameter '%s': %s out of range %llu..%llu",
			       key, s, (unsigned long long)min,
			       (unsigned long long)max);
	*out = (uint32_t)v;
	return 0;
}

static int parse_bool(const char *key, const char *s, bool *out)
{
	if (!strcmp(s, "1") || !strcmp(s, "on") || !strcmp(s, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "0") || !strcmp(s, "off") || !strcmp(s, "false")) {
		*out = false;
		return 0;
	}
	return emu_err(-EINVAL, "emu parameter '%s': '%s' is not 0 or 1", key,
		       s);
}

/* "A-B" into two durations of at most NVQ_EMU_LAT_DIST_MAX_NS, A <= B. */
static int parse_range(const char *what, char *s, uint64_t *lo, uint64_t *hi)
{
	char *dash = strchr(s, '-');
	int ret;

	if (!dash)
		return emu_err(
			-EINVAL,
			"emu parameter 'lat': %s '%s' is not a range MIN-MAX",
			what, s);
	*dash = '\0';
	ret = parse_duration("lat", s, lo);
	if (!ret)
		ret = parse_duration("lat", dash + 1, hi);
	if (ret)
		return ret;
	if (*hi > NVQ_EMU_LAT_DIST_MAX_NS)
		return emu_err(-EINVAL,
			       "emu parameter 'lat': %s bound '%s' above 1 s",
			       what, dash + 1);
	if (*hi < *lo)
		return emu_err(-EINVAL,
			       "emu parameter 'lat': %s '%s-%s' ends before it "
			       "starts",
			       what, s, dash + 1);
	return 0;
}

/* "P%" with up to four decimals into parts per million, 0 < P <= 50. */
static int parse_pct(const char *s, uint32_t *ppm)
{
	uint64_t v = 0, scale = 10000;
	const char *p = s;
	int digits = 0;

	for (; *p >= '0' && *p <= '9' && v < 1000; p++, digits++)
		v = v * 10 + (uint64_t)(*p - '0');
	v *= 10000;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9' && scale > 1; p++, digits++) {
			scale /= 10;
			v += (uint64_t)(*p - '0') * scale;
		}
	}
	if (!digits || strcmp(p, "%") || !v || v > 500000)
		return emu_err(
			-EINVAL,
			"emu parameter 'lat': outlier share '%s' is not a "
			"percentage in 0.0001%%..50%%",
			s);
	*ppm = (uint32_t)v;
	return 0;
}

/*
 * One class: DUR, uniform:MIN-MAX or lognormal:MEDIAN-P99, optionally
 * followed by +P%:MIN-MAX (slow outliers). Writes *@ns (fixed latency or
 * the median) and @d.
 */
static int parse_lat_side(char *s, uint64_t *ns, struct nvq_emu_lat_dist *d)
{
	char *plus = strchr(s, '+'), *colon;
	int ret;

	memset(d, 0, sizeof(*d));
	if (plus) {
		*plus++ = '\0';
		colon = strchr(plus, ':');
		if (!colon)
			return emu_err(
				-EINVAL,
				"emu parameter 'lat': outliers '+%s' need the "
				"form +P%%:MIN-MAX",
				plus);
		*colon = '\0';
		ret = parse_pct(plus, &d->slow_ppm);
		if (!ret)
			ret = parse_range("outlier range", colon + 1,
					  &d->slow_lo, &d->slow_hi);
		if (ret)
			return ret;
	}
	if (!strncmp(s, "uniform:", 8)) {
		d->kind = NVQ_EMU_LAT_UNIFORM;
		ret = parse_range("uniform", s + 8, &d->lo, &d->hi);
		*ns = d->lo + (d->hi - d->lo) / 2;
		return ret;
	}
	if (!strncmp(s, "lognormal:", 10)) {
		d->kind = NVQ_EMU_LAT_LOGNORMAL;
		ret = parse_range("lognormal median-p99", s + 10, &d->lo,
				  &d->hi);
		if (ret)
			return ret;
		if (!d->lo || d->hi == d->lo)
			return emu_err(
				-EINVAL,
				"emu parameter 'lat': lognormal needs 0 < median "
				"< p99 (got '%s')",
				s + 10);
		*ns = d->lo;
		return 0;
	}
	if (strchr(s, ':'))
		return emu_err(-EINVAL,
			       "emu parameter 'lat': unknown distribution '%s' "
			       "(uniform:MIN-MAX or lognormal:MEDIAN-P99)",
			       s);
	d->kind = NVQ_EMU_LAT_FIXED;
	return parse_duration("lat", s, ns);
}

/* Named media: lat=NAME expands to these read / write classes. */
static const struct {
	const char *name;
	const char *read, *write;
} lat_profiles[] = {
	/* 3D XPoint: ~10 us both ways and a narrow tail. */
	{ "optane", "lognormal:10us-14us", "lognormal:10us-14us" },
	/* TLC NAND: reads ~80 us with rare read retries; writes land in
	 * the controller's cache (~20 us) and now and then wait for it to
	 * drain. */
	{ "nand", "lognormal:80us-250us+0.1%:1ms-4ms",
	  "lognormal:20us-60us+0.2%:500us-2ms" },
};

static int parse_lat(const char *s, struct nvq_emu_media_model *mm)
{
	char buf[128];
	char *slash;
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(lat_profiles) / sizeof(lat_profiles[0]); i++) {
		if (strcmp(s, lat_profiles[i].name))
			continue;
		strcpy(buf, lat_profiles[i].read);
		ret = parse_lat_side(buf, &mm->read_ns, &mm->read);
		if (ret)
			return ret;
		strcpy(buf, lat_profiles[i].write);
		return parse_lat_side(buf, &mm->write_ns, &mm->write);
	}
	if (strlen(s) >= sizeof(buf))
		return emu_err(-EINVAL, "emu parameter 'lat': '%s' too long",
			       s);
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash) {
		ret = parse_lat_side(buf, &mm->read_ns, &mm->read);
		mm->write_ns = mm->read_ns;
		mm->write = mm->read;
		return ret;
	}
	*slash = '\0';
	ret = parse_lat_side(buf, &mm->read_ns, &mm->read);
	if (!ret)
		ret = parse_lat_side(slash + 1, &mm->write_ns, &mm->write);
	return ret;
}

enum key_id {
	K_SIZE,
	K_NS,
	K_LBADS,
	K_QPAIRS,
	K_MQES,
	K_MDTS,
	K_LAT,
	K_FILE,
	K_MSIX,
	K_DSTRD,
	K_DBBUF,
	K_VWC,
	K_CQR,
	K_TO,
	K_RDY_DELAY,
	K_IDLE_SPIN,
	K_LAT_SEED,
	K_STAMP,
	K_THP,
	K_POPULATE,
	K_ASSIST,
	K_SN,
	K_FAULT,
	K_FAULT_SEED,
	K_MS,
	K_MSET,
	K_PI,
	K_PIL,
	K_SANITIZE_MS,
	K_SANITIZE_FAIL,
	K_ELBAF,
	K_ELPE,
	K_LPA,
	K_NR
};

static const char *const key_names[K_NR] = {
	[K_SIZE] = "size",
	[K_NS] = "ns",
	[K_LBADS] = "lbads",
	[K_QPAIRS] = "qpairs",
	[K_MQES] = "mqes",
	[K_MDTS] = "mdts",
	[K_LAT] = "lat",
	[K_FILE] = "file",
	[K_MSIX] = "msix",
	[K_DSTRD] = "dstrd",
	[K_DBBUF] = "dbbuf",
	[K_VWC] = "vwc",
	[K_CQR] = "cqr",
	[K_TO] = "to",
	[K_RDY_DELAY] = "rdy_delay",
	[K_IDLE_SPIN] = "idle_spin",
	[K_LAT_SEED] = "lat_seed",
	[K_STAMP] = "stamp",
	[K_THP] = "thp",
	[K_POPULATE] = "populate",
	[K_ASSIST] = "assist",
	[K_SN] = "sn",
	[K_FAULT] = "fault",
	[K_FAULT_SEED] = "fault_seed",
	[K_MS] = "ms",
	[K_MSET] = "mset",
	[K_PI] = "pi",
	[K_PIL] = "pil",
	[K_SANITIZE_MS] = "sanitize_ms",
	[K_SANITIZE_FAIL] = "sanitize_fail",
	[K_ELBAF] = "elbaf",
	[K_ELPE] = "elpe",
	[K_LPA] = "lpa",
};

static int set_key(struct nvq_emu_params *p, enum key_id k, const char *v)
{
	const char *name = key_names[k];
	uint32_t u;
	int ret;

	switch (k) {
	case K_SIZE:
		return parse_size(name, v, &p->ns_size);
	case K_NS:
		return parse_uint(name, v, 1, EMU_MAX_NS, &p->nr_ns);
	case K_LBADS:
		ret = parse_uint(name, v, 0, 63, &p->lbads);
		if (!ret && p->lbads != 9 && p->lbads != 12)
			ret = emu_err(
				-EINVAL,
				"emu parameter 'lbads': %s not supported (9 or 12)",
				v);
		return ret;
	case K_QPAIRS:
		return parse_uint(name, v, 1, 65535, &p->qpairs);
	case K_MQES:
		return parse_uint(name, v, 1, 65535, &p->mqes);
	case K_MDTS:
		return parse_uint(name, v, 0, 20, &p->mdts);
	case K_LAT:
		return parse_lat(v, &p->media);
	case K_FILE:
		if (!*v)
			return emu_err(-EINVAL,
				       "emu parameter 'file': empty path");
		if (strlen(v) >= sizeof(p->file))
			return emu_err(-EINVAL,
				       "emu parameter 'file': path too long");
		strcpy(p->file, v);
		return 0;
	case K_MSIX:
		return parse_uint(name, v, 1, EMU_MAX_MSIX, &p->msix);
	case K_DSTRD:
		return parse_uint(name, v, 0, 15, &p->dstrd);
	case K_DBBUF:
		return parse_bool(name, v, &p->dbbuf);
	case K_VWC:
		return parse_bool(name, v, &p->vwc);
	case K_CQR:
		return parse_bool(name, v, &p->cqr);
	case K_TO:
		ret = parse_uint(name, v, 1, 255, &u);
		p->to = u;
		return ret;
	case K_RDY_DELAY:
		return parse_duration(name, v, &p->rdy_delay_ns);
	case K_IDLE_SPIN:
		return parse_duration(name, v, &p->idle_spin_ns);
	case K_LAT_SEED: {
		const char *r = parse_num(v, &p->media.seed);

		if (!r || *r)
			return emu_err(
				-EINVAL,
				"emu parameter 'lat_seed': bad number '%s'", v);
		return 0;
	}
	case K_STAMP:
		return parse_bool(name, v, &p->stamp);
	case K_THP:
		return parse_bool(name, v, &p->thp);
	case K_POPULATE:
		return parse_bool(name, v, &p->populate);
	case K_ASSIST:
		return parse_bool(name, v, &p->assist);
	case K_SN: {
		const char *q;

		if (!*v || strlen(v) >= sizeof(p->sn))
			return emu_err(
				-EINVAL,
				"emu parameter 'sn': 1 to %zu characters",
				sizeof(p->sn) - 1);
		for (q = v; *q; q++)
			if (*q < 0x20 || *q > 0x7e)
				return emu_err(-EINVAL,
					       "emu parameter 'sn': printable "
					       "ASCII only (Identify's SN)");
		strcpy(p->sn, v);
		return 0;
	}
	case K_FAULT:
		return emu_fault_param(p, v); /* fault.c */
	case K_FAULT_SEED: {
		const char *r = parse_num(v, &p->fault_seed);

		if (!r || *r)
			return emu_err(
				-EINVAL,
				"emu parameter 'fault_seed': bad number '%s'",
				v);
		return 0;
	}
	case K_MS:
		ret = parse_uint(name, v, 0, 128, &p->ms);
		if (!ret && !emu_ms_valid(p->ms))
			ret = emu_err(
				-EINVAL,
				"emu parameter 'ms': %s metadata bytes per "
				"block not supported (0 8 16 32 64 128)",
				v);
		return ret;
	case K_MSET:
		return parse_bool(name, v, &p->mset);
	case K_PI:
		return parse_uint(name, v, 0, 3, &p->pi);
	case K_PIL:
		return parse_bool(name, v, &p->pil);
	case K_SANITIZE_MS:
		ret = parse_uint(name, v, 0, 3600000, &u);
		p->sanitize_ns = (uint64_t)u * 1000000;
		return ret;
	case K_SANITIZE_FAIL:
		return parse_bool(name, v, &p->sanitize_fail);
	case K_ELBAF:
		return parse_uint(name, v, 0, 0x1fff, &p->elbaf);
	case K_ELPE:
		return parse_uint(name, v, 0, EMU_ERRLOG_MAX - 1, &p->elpe);
	case K_LPA:
		return parse_uint(name, v, 0, 0xff, &p->lpa);
	case K_NR:
		break;
	}
	return -EINVAL;
}

static int check(struct nvq_emu_params *p)
{
	uint64_t lba = 1ull << p->lbads;

	if (!p->msix)
		p->msix = p->qpairs + 1 > EMU_MAX_MSIX ? EMU_MAX_MSIX :
							 p->qpairs + 1;
	if (p->pi && p->ms < 8)
		return emu_err(-EINVAL,
			       "emu parameter 'pi': protection information "
			       "needs 8 bytes of metadata per block: add ms=8 "
			       "(or more), or use pi=0");
	if (!p->ms && (p->mset || p->pil))
		return emu_err(-EINVAL,
			       "emu parameter '%s': only means something with "
			       "metadata: add ms=8 (or more)",
			       p->mset ? "mset" : "pil");
	if (p->pil && !p->pi)
		return emu_err(-EINVAL,
			       "emu parameter 'pil': places protection "
			       "information: add pi=1, 2 or 3");
	if (p->ns_size < lba || p->ns_size % lba)
		return emu_err(
			-EINVAL,
			"emu parameter 'size': %llu is not a non-zero multiple of the %llu-byte LBA size",
			(unsigned long long)p->ns_size,
			(unsigned long long)lba);
	/* Both sizes are far below 2^64 / 1024: no overflow. */
	if (p->ns_size > (1ull << 50))
		return emu_err(-EINVAL,
			       "emu parameter 'size': above the 1 PiB limit");
	if (p->ns_size * p->nr_ns > (1ull << 46))
		return emu_err(
			-EINVAL,
			"emu parameters 'size'/'ns': %u namespaces of %llu bytes exceed 64 TiB",
			p->nr_ns, (unsigned long long)p->ns_size);
	return 0;
}

int nvq_emu_params_parse(const char *str, struct nvq_emu_params *p)
{
	bool seen[K_NR] = { false };
	const char *s = str ? str : "";

	nvq_emu_params_default(p);
	while (*s) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		char item[PATH_MAX + 32];
		char *eq;
		int k, ret;

		if (n == 0)
			return emu_err(-EINVAL,
				       "emu parameters: empty item in '%s'",
				       str);
		if (n >= sizeof(item))
			return emu_err(-EINVAL,
				       "emu parameters: item too long");
		memcpy(item, s, n);
		item[n] = '\0';
		eq = strchr(item, '=');
		if (!eq)
			return emu_err(-EINVAL,
				       "emu parameter '%s': expected key=value",
				       item);
		*eq = '\0';
		for (k = 0; k < K_NR; k++)
			if (!strcmp(item, key_names[k]))
				break;
		if (k == K_NR)
			return emu_err(
				-EINVAL,
				"emu parameter '%s': unknown key (size ns lbads "
				"qpairs mqes mdts lat file msix dstrd dbbuf vwc "
				"cqr to rdy_delay idle_spin lat_seed stamp thp populate assist sn fault "
				"fault_seed ms mset pi pil sanitize_ms sanitize_fail elbaf "
				"elpe lpa)",
				item);
		/* fault= may repeat: one fault each. */
		if (seen[k] && k != K_FAULT)
			return emu_err(-EINVAL,
				       "emu parameter '%s': given twice", item);
		seen[k] = true;
		ret = set_key(p, k, eq + 1);
		if (ret)
			return ret;
		if (!comma)
			break;
		s = comma + 1;
		if (!*s)
			return emu_err(-EINVAL,
				       "emu parameters: trailing ',' in '%s'",
				       str);
	}
	return check(p);
}
