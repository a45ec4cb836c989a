// SPDX-License-Identifier: MIT
/*
 * id-ctrl and id-ns: the Identify data in nvme-cli's field names and
 * order (nvme-print.c / nvme-print-json.c), as text, JSON or raw bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum field_kind {
	F_DEC, /* number, decimal in normal output */
	F_HEX, /* number, %#x in normal output */
	F_STR, /* space-padded ASCII */
	F_U128, /* 128-bit little-endian counter */
	F_IEEE, /* 3-byte OUI */
	F_UUID, /* 16 bytes shown as a UUID */
	F_HEXSTR, /* bytes shown as one hex string (NGUID, EUI64) */
};

struct field {
	const char *name;
	unsigned short off;
	unsigned short len;
	unsigned char kind;
	bool optperf; /* id-ns: only shown when NSFEAT bit 4 (OPTPERF) */
};

/* clang-format off */
#define FLD(type, f, k, opt) \
	{ #f, offsetof(struct type, f), sizeof(((struct type *)0)->f), k, opt }
/* clang-format on */
#define CTRL(f, k) FLD(nvq_id_ctrl, f, k, false)
#define NS(f, k) FLD(nvq_id_ns, f, k, false)
#define NSP(f) FLD(nvq_id_ns, f, F_DEC, true)

/* nvme-cli's order and names (nvme-print.c / nvme-print-json.c) */
static const struct field id_ctrl_fields[] = {
	CTRL(vid, F_HEX),	CTRL(ssvid, F_HEX),	CTRL(sn, F_STR),
	CTRL(mn, F_STR),	CTRL(fr, F_STR),	CTRL(rab, F_DEC),
	CTRL(ieee, F_IEEE),	CTRL(cmic, F_HEX),	CTRL(mdts, F_DEC),
	CTRL(cntlid, F_HEX),	CTRL(ver, F_HEX),	CTRL(rtd3r, F_HEX),
	CTRL(rtd3e, F_HEX),	CTRL(oaes, F_HEX),	CTRL(ctratt, F_HEX),
	CTRL(rrls, F_HEX),	CTRL(cntrltype, F_DEC), CTRL(fguid, F_UUID),
	CTRL(crdt1, F_DEC),	CTRL(crdt2, F_DEC),	CTRL(crdt3, F_DEC),
	CTRL(nvmsr, F_DEC),	CTRL(vwci, F_DEC),	CTRL(mec, F_DEC),
	CTRL(oacs, F_HEX),	CTRL(acl, F_DEC),	CTRL(aerl, F_DEC),
	CTRL(frmw, F_HEX),	CTRL(lpa, F_HEX),	CTRL(elpe, F_DEC),
	CTRL(npss, F_DEC),	CTRL(avscc, F_HEX),	CTRL(apsta, F_HEX),
	CTRL(wctemp, F_DEC),	CTRL(cctemp, F_DEC),	CTRL(mtfa, F_DEC),
	CTRL(hmpre, F_DEC),	CTRL(hmmin, F_DEC),	CTRL(tnvmcap, F_U128),
	CTRL(unvmcap, F_U128),	CTRL(rpmbs, F_HEX),	CTRL(edstt, F_DEC),
	CTRL(dsto, F_DEC),	CTRL(fwug, F_DEC),	CTRL(kas, F_DEC),
	CTRL(hctma, F_HEX),	CTRL(mntmt, F_DEC),	CTRL(mxtmt, F_DEC),
	CTRL(sanicap, F_HEX),	CTRL(hmminds, F_DEC),	CTRL(hmmaxd, F_DEC),
	CTRL(nsetidmax, F_DEC), CTRL(endgidmax, F_DEC), CTRL(anatt, F_DEC),
	CTRL(anacap, F_DEC),	CTRL(anagrpmax, F_DEC), CTRL(nanagrpid, F_DEC),
	CTRL(pels, F_DEC),	CTRL(domainid, F_DEC),	CTRL(megcap, F_U128),
	CTRL(sqes, F_HEX),	CTRL(cqes, F_HEX),	CTRL(maxcmd, F_DEC),
	CTRL(nn, F_DEC),	CTRL(oncs, F_HEX),	CTRL(fuses, F_HEX),
	CTRL(fna, F_HEX),	CTRL(vwc, F_HEX),	CTRL(awun, F_DEC),
	CTRL(awupf, F_DEC),	CTRL(icsvscc, F_DEC),	CTRL(nwpc, F_DEC),
	CTRL(acwu, F_DEC),	CTRL(ocfs, F_HEX),	CTRL(sgls, F_HEX),
	CTRL(mnan, F_DEC),	CTRL(maxdna, F_U128),	CTRL(maxcna, F_DEC),
	CTRL(subnqn, F_STR),	CTRL(ioccsz, F_DEC),	CTRL(iorcsz, F_DEC),
	CTRL(icdoff, F_DEC),	CTRL(fcatt, F_HEX),	CTRL(msdbd, F_DEC),
	CTRL(ofcs, F_DEC),
};

static const struct field id_ns_fields[] = {
	NS(nsze, F_HEX),
	NS(ncap, F_HEX),
	NS(nuse, F_HEX),
	NS(nsfeat, F_HEX),
	NS(nlbaf, F_DEC),
	NS(flbas, F_HEX),
	NS(mc, F_HEX),
	NS(dpc, F_HEX),
	NS(dps, F_HEX),
	NS(nmic, F_HEX),
	NS(rescap, F_HEX),
	NS(fpi, F_HEX),
	NS(dlfeat, F_DEC),
	NS(nawun, F_DEC),
	NS(nawupf, F_DEC),
	NS(nacwu, F_DEC),
	NS(nabsn, F_DEC),
	NS(nabo, F_DEC),
	NS(nabspf, F_DEC),
	NS(noiob, F_DEC),
	NS(nvmcap, F_U128),
	NSP(npwg),
	NSP(npwa),
	NSP(npdg),
	NSP(npda),
	NSP(nows),
	NS(mssrl, F_DEC),
	NS(mcl, F_DEC),
	NS(msrc, F_DEC),
	/* NULBAF (byte 81, NVM Command Set 1.0): spec.h still calls it rsvd */
	{ "nulbaf", offsetof(struct nvq_id_ns, msrc) + 1, 1, F_DEC, false },
	NS(anagrpid, F_DEC),
	NS(nsattr, F_DEC),
	NS(nvmsetid, F_DEC),
	NS(endgid, F_DEC),
	NS(nguid, F_HEXSTR),
	NS(eui64, F_HEXSTR),
};

#define NVME_NS_NSFEAT_OPTPERF (1u << 4)

static uint64_t field_uint(const uint8_t *base, const struct field *f)
{
	uint64_t v = 0;

	/* spec.h guarantees a little-endian host */
	memcpy(&v, base + f->off, f->len < sizeof(v) ? f->len : sizeof(v));
	return v;
}

/* 128-bit little-endian integer in decimal (at most 39 digits). */
void u128_str(const uint8_t *src, char out[40])
{
	uint8_t t[16];
	char digits[40];
	int n = 0;
	bool nonzero;

	memcpy(t, src, sizeof(t));
	do {
		unsigned int rem = 0;

		nonzero = false;
		for (int i = 15; i >= 0; i--) {
			unsigned int cur = rem * 256 + t[i];

			t[i] = (uint8_t)(cur / 10);
			rem = cur % 10;
			nonzero |= t[i] != 0;
		}
		digits[n++] = (char)('0' + rem);
	} while (nonzero);
	for (int i = 0; i < n; i++)
		out[i] = digits[n - 1 - i];
	out[n] = '\0';
}

static void hex_str(const uint8_t *src, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", src[i]);
	out[2 * len] = '\0';
}

static void uuid_str(const uint8_t *u, char out[37])
{
	char *p = out;

	for (int i = 0; i < 16; i++) {
		p += sprintf(p, "%02x", u[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*p++ = '-';
	}
	*p = '\0';
}

static uint32_t ieee_oui(const uint8_t *b)
{
	return (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static void print_field(const uint8_t *base, const struct field *f, int width,
			bool human)
{
	char buf[257];

	printf("%-*s: ", width, f->name);
	switch (f->kind) {
	case F_DEC:
		printf("%" PRIu64 "\n", field_uint(base, f));
		break;
	case F_HEX:
		printf("%#" PRIx64 "\n", field_uint(base, f));
		break;
	case F_STR:
		dev_string(base + f->off, f->len, buf);
		printf("%s\n", buf);
		break;
	case F_U128:
		u128_str(base + f->off, buf);
		printf("%s\n", buf);
		break;
	case F_IEEE:
		printf("%06" PRIx32 "\n", ieee_oui(base + f->off));
		break;
	case F_UUID:
		uuid_str(base + f->off, buf);
		printf("%s\n", buf);
		break;
	case F_HEXSTR:
		hex_str(base + f->off, f->len, buf);
		printf("%s\n", buf);
		break;
	}
	if (human)
		human_field(f->name, field_uint(base, f),
			    f->kind == F_U128 ? buf : NULL);
}

static void json_field(struct json_writer *w, const uint8_t *base,
		       const struct field *f)
{
	char buf[257];

	switch (f->kind) {
	case F_DEC:
	case F_HEX:
		json_uint(w, f->name, field_uint(base, f));
		break;
	case F_STR:
		dev_string(base + f->off, f->len, buf);
		json_string(w, f->name, buf);
		break;
	case F_U128:
		/* a string, as nvme-cli: exact where a double would round */
		u128_str(base + f->off, buf);
		json_string(w, f->name, buf);
		break;
	case F_IEEE:
		json_uint(w, f->name, ieee_oui(base + f->off));
		break;
	case F_UUID:
		uuid_str(base + f->off, buf);
		json_string(w, f->name, buf);
		break;
	case F_HEXSTR:
		hex_str(base + f->off, f->len, buf);
		json_string(w, f->name, buf);
		break;
	}
}

/* Power in the unit a PSD scale selects, as nvme-cli prints it. */
static void print_power(unsigned int power, unsigned int scale)
{
	switch (scale & 0x3) {
	case 0:
		printf("-");
		break;
	case 1:
		printf("%u.%04uW", power / 10000, power % 10000);
		break;
	case 2:
		printf("%u.%02uW", power / 100, power % 100);
		break;
	default:
		printf("reserved");
	}
}

/* Active Power Workload (APW, bits 2:0), as nvme-cli names them. */
static const char *psd_workload(unsigned int apw)
{
	switch (apw & 0x7) {
	case 0:
		return "-";
	case 1:
		return "1MiB 32 RW, 30s idle";
	case 2:
		return "80K 128KiB SW";
	default:
		return "reserved";
	}
}

/* nvme-cli 2.3's lines, -H or not */
static void print_psd(unsigned int i, const struct nvq_id_power_state *ps)
{
	printf("ps   %4u : mp:", i);
	/* flags bit 0: MXPS (max power in 0.0001 W), bit 1: NOPS */
	if (ps->flags & 0x1)
		printf("%u.%04uW ", ps->max_power / 10000,
		       ps->max_power % 10000);
	else
		printf("%u.%02uW ", ps->max_power / 100, ps->max_power % 100);
	printf("%soperational enlat:%" PRIu32 " exlat:%" PRIu32
	       " rrt:%u rrl:%u\n            rwt:%u rwl:%u idle_power:",
	       ps->flags & 0x2 ? "non-" : "", ps->entry_lat, ps->exit_lat,
	       ps->read_tput, ps->read_lat, ps->write_tput, ps->write_lat);
	print_power(ps->idle_power, ps->idle_scale >> 6);
	printf(" active_power:");
	print_power(ps->active_power, ps->active_work_scale >> 6);
	printf("\n            active_power_workload:%s\n",
	       psd_workload(ps->active_work_scale));
}

static int write_binary(const void *data, size_t len)
{
	int ret;

	fflush(stdout);
	ret = write_full(STDOUT_FILENO, data, len);
	if (ret)
		return fail("cannot write to standard output: %s",
			    strerror(-ret));
	return EXIT_OK;
}

static int show_id_ctrl(const struct nvq_id_ctrl *id, enum out_fmt fmt,
			bool human)
{
	const uint8_t *base = (const uint8_t *)id;
	unsigned int npss = id->npss < 32 ? id->npss : 31;
	struct json_writer w;

	if (fmt == FMT_BINARY)
		return write_binary(id, sizeof(*id));
	if (fmt == FMT_NORMAL) {
		printf("NVME Identify Controller:\n");
		for (size_t i = 0; i < ARRAY_SIZE(id_ctrl_fields); i++)
			print_field(base, &id_ctrl_fields[i], 10, human);
		for (unsigned int i = 0; i <= npss; i++)
			print_psd(i, &id->psd[i]);
		return flush_stdout();
	}

	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(id_ctrl_fields); i++)
		json_field(&w, base, &id_ctrl_fields[i]);
	json_begin_array(&w, "psds");
	for (unsigned int i = 0; i <= npss; i++) {
		const struct nvq_id_power_state *ps = &id->psd[i];

		json_begin_object(&w, NULL);
		json_uint(&w, "max_power", ps->max_power);
		json_uint(&w, "flags", ps->flags);
		json_uint(&w, "entry_lat", ps->entry_lat);
		json_uint(&w, "exit_lat", ps->exit_lat);
		json_uint(&w, "read_tput", ps->read_tput);
		json_uint(&w, "read_lat", ps->read_lat);
		json_uint(&w, "write_tput", ps->write_tput);
		json_uint(&w, "write_lat", ps->write_lat);
		json_uint(&w, "idle_power", ps->idle_power);
		/* nvme-cli's names; the scales are bits 7:6, APW 2:0 */
		json_uint(&w, "idle_scale", ps->idle_scale >> 6);
		json_uint(&w, "active_power", ps->active_power);
		json_uint(&w, "active_power_work", ps->active_work_scale & 0x7);
		json_uint(&w, "active_scale", ps->active_work_scale >> 6);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return finish_json(&w);
}

/* Relative Performance (RP, bits 1:0) as nvme-cli -H names it. */
static const char *const lbaf_rp[] = { "Best", "Better", "Good", "Degraded" };

static void print_lbaf(unsigned int i, const struct nvq_lbaf *f, bool in_use,
		       bool human)
{
	const char *use = in_use ? "(in use)" : "";

	if (!human) {
		printf("lbaf %2u : ms:%-3u lbads:%-2u rp:%#x %s\n", i, f->ms,
		       f->ds, f->rp & 0x3, use);
		return;
	}
	/* a device's LBADS of 64 or more must not shift out of range */
	printf("LBA Format %2u : Metadata Size: %-3u bytes - Data Size: "
	       "%-2" PRIu64 " bytes - Relative Performance: %#x %s %s\n",
	       i, f->ms, f->ds < 64 ? (uint64_t)1 << f->ds : 0, f->rp & 0x3,
	       lbaf_rp[f->rp & 0x3], use);
}

static int show_id_ns(uint32_t nsid, const struct nvq_id_ns *id,
		      enum out_fmt fmt, bool human)
{
	const uint8_t *base = (const uint8_t *)id;
	unsigned int nlbaf = id->nlbaf < 64 ? id->nlbaf : 63;
	unsigned int in_use = nvq_flbas_index(id->flbas);
	bool optperf = id->nsfeat & NVME_NS_NSFEAT_OPTPERF;
	struct json_writer w;

	if (fmt == FMT_BINARY)
		return write_binary(id, sizeof(*id));
	if (fmt == FMT_NORMAL) {
		printf("NVME Identify Namespace %u:\n", nsid);
		for (size_t i = 0; i < ARRAY_SIZE(id_ns_fields); i++)
			if (optperf || !id_ns_fields[i].optperf)
				print_field(base, &id_ns_fields[i], 8, human);
		for (unsigned int i = 0; i <= nlbaf; i++)
			print_lbaf(i, &id->lbaf[i], i == in_use, human);
		return flush_stdout();
	}

	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(id_ns_fields); i++)
		if (optperf || !id_ns_fields[i].optperf)
			json_field(&w, base, &id_ns_fields[i]);
	json_begin_array(&w, "lbafs");
	for (unsigned int i = 0; i <= nlbaf; i++) {
		json_begin_object(&w, NULL);
		json_uint(&w, "ms", id->lbaf[i].ms);
		json_uint(&w, "ds", id->lbaf[i].ds);
		json_uint(&w, "rp", id->lbaf[i].rp);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return finish_json(&w);
}

/* -H/--human-readable, as nvme-cli; ignored for JSON and binary, as there */
const struct xopt id_human_xopts[1] = {
	{ 'H', "human-readable", XOPT_FLAG, 0, false },
};

int run_id_ctrl(struct args *a)
{
	struct nvq_ctrl *ctrl;
	const struct nvq_id_ctrl *id;
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	id = nvq_ctrl_id(ctrl);
	if (id)
		rc = show_id_ctrl(id, a->fmt, xhas(a, 0));
	else
		rc = fail("%s: no Identify Controller data", a->pos[0]);
	nvq_close(ctrl);
	return rc;
}

/*
 * Identify a namespace the driver does not use: it may exist but be
 * inactive (zero-filled data) or have a format the driver refused.
 */
static int identify_ns_raw(struct nvq_ctrl *ctrl, uint32_t nsid,
			   struct nvq_id_ns *id)
{
	static const uint8_t zero[sizeof(id->nsze) * 3];
	struct nvq_ns_format f;
	struct nvq_sqe cmd;
	uint16_t status = 0;
	char buf[160];
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = nvq_admin_identify;
	cmd.nsid = nsid;
	cmd.cdw10 = NVQ_ID_CNS_NS;
	ret = nvq_admin(ctrl, &cmd, id, sizeof(*id), NULL, &status);
	if (ret == -EIO && NVQ_SCT(status) == NVQ_SCT_GENERIC &&
	    NVQ_SC(status) == NVQ_SC_INVALID_NS)
		return fail("namespace %u does not exist on %s (NN = %" PRIu32
			    ")",
			    nsid, nvq_ctrl_uri(ctrl), nvq_ctrl_id(ctrl)->nn);
	if (ret)
		return fail("identify namespace %u: %s", nsid,
			    io_msg(ret, status, buf, sizeof(buf)));
	/* NSZE, NCAP and NUSE all zero: an allocated but inactive nsid */
	if (!memcmp(id, zero, sizeof(zero)))
		return get_ns(ctrl, nsid, &(struct nvq_ns_info){ 0 });
	if (nvq_ns_format(ctrl, nsid, &f) || f.usable)
		snprintf(f.why, sizeof(f.why), "its format");
	fprintf(stderr,
		"nvq: note: namespace %u is not usable for I/O through nvq: "
		"%s\n",
		nsid, f.why);
	return 0;
}

int run_id_ns(struct args *a)
{
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	struct nvq_id_ns *raw = NULL;
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	rc = nvq_ns_info(ctrl, a->nsid, &ns);
	if (!rc && ns.id) {
		rc = show_id_ns(a->nsid, ns.id, a->fmt, xhas(a, 0));
	} else if (rc == -ENOENT || rc == -ENOTSUP) {
		/* inactive, or refused: the controller's data, as nvme-cli */
		raw = calloc(1, sizeof(*raw));
		if (!raw)
			rc = fail("out of memory");
		else
			rc = identify_ns_raw(ctrl, a->nsid, raw);
		if (!rc)
			rc = show_id_ns(a->nsid, raw, a->fmt, xhas(a, 0));
	} else {
		rc = fail("namespace %u: %s", a->nsid,
			  rc ? lib_msg(rc) : "no Identify Namespace data");
	}
	free(raw);
	nvq_close(ctrl);
	return rc;
}
