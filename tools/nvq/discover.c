// SPDX-License-Identifier: MIT
/*
 * discover: the discovery log of an NVMe/TCP discovery controller
 * (nvq_discover()), printed as nvme-cli 2.3's `nvme discover` prints it:
 * the same lines and names in normal output, the same keys in JSON.
 * --raw-log decodes a saved page instead (nvme discover --raw FILE), so
 * that the output can be checked without a target.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { X_RAW_LOG, X_NR };

static const struct xopt discover_xopts[X_NR] = {
	[X_RAW_LOG] = { 0, "raw-log", XOPT_STR, 0, false },
};

/* A saved page is its header and at most NVQ_DISC_MAX_RECORDS records. */
#define RAW_MAX ((size_t)(NVQ_DISC_MAX_RECORDS + 1) * 1024)

/* libnvme's names (nvmf_*_str), "unrecognized" for other values. */
static const char *name_of(const char *const *names, size_t n, unsigned int v)
{
	return v < n && names[v] ? names[v] : "unrecognized";
}

static const char *trtype_str(uint8_t v)
{
	static const char *const n[] = {
		[NVQ_TRTYPE_RDMA] = "rdma",
		[NVQ_TRTYPE_FC] = "fc",
		[NVQ_TRTYPE_TCP] = "tcp",
		[NVQ_TRTYPE_LOOP] = "loop",
	};
	return name_of(n, ARRAY_SIZE(n), v);
}

static const char *adrfam_str(uint8_t v)
{
	static const char *const n[] = {
		"pci", "ipv4", "ipv6", "infiniband", "fibre-channel",
	};
	return name_of(n, ARRAY_SIZE(n), v);
}

static const char *subtype_str(uint8_t v)
{
	static const char *const n[] = {
		[NVQ_SUBTYPE_REFERRAL] = "discovery subsystem referral",
		[NVQ_SUBTYPE_NVME] = "nvme subsystem",
		[NVQ_SUBTYPE_CURRENT_DISC] = "current discovery subsystem",
	};
	return name_of(n, ARRAY_SIZE(n), v);
}

static const char *treq_str(uint8_t v)
{
	static const char *const n[] = {
		"not specified",
		"required",
		"not required",
		NULL,
		"not specified, sq flow control disable supported",
	};
	return name_of(n, ARRAY_SIZE(n), v);
}

static const char *eflags_str(uint16_t v)
{
	/* bit 0 DUPRETINFO, bit 1 EPCSD, bit 2 NCC */
	static const char *const n[] = {
		"none",
		"duplicate discovery information",
		"explicit discovery connections",
		"explicit discovery connections, duplicate discovery "
		"information",
		"no cdc connectivity",
		"duplicate discovery information, no cdc connectivity",
		"explicit discovery connections, no cdc connectivity",
		"explicit discovery connections, duplicate discovery "
		"information, no cdc connectivity",
	};
	return name_of(n, ARRAY_SIZE(n), v);
}

static const char *sectype_str(uint8_t v)
{
	static const char *const n[] = { "none", "tls", "tls13" };

	return name_of(n, ARRAY_SIZE(n), v);
}

static const char *prtype_str(uint8_t v)
{
	static const char *const n[] = {
		NULL, "not specified", "infiniband", "roce", "roce-v2", "iwarp",
	};
	return name_of(n, ARRAY_SIZE(n), v);
}

static const char *qptype_str(uint8_t v)
{
	static const char *const n[] = { NULL, "connected", "datagram" };

	return name_of(n, ARRAY_SIZE(n), v);
}

static const char *cms_str(uint8_t v)
{
	static const char *const n[] = { NULL, "rdma-cm" };

	return name_of(n, ARRAY_SIZE(n), v);
}

/* The entry's strings as printable ASCII. */
struct texts {
	char trsvcid[33], traddr[257], subnqn[257];
};

static void texts_of(const struct nvq_disc_entry *e, struct texts *t)
{
	dev_string(e->trsvcid, sizeof(e->trsvcid) - 1, t->trsvcid);
	dev_string(e->traddr, sizeof(e->traddr) - 1, t->traddr);
	dev_string(e->subnqn, sizeof(e->subnqn) - 1, t->subnqn);
}

/* RDMA's TSAS: QPTYPE, PRTYPE, CMS, 5 reserved, PKEY. */
static uint16_t rdma_pkey(const struct nvq_disc_entry *e)
{
	return (uint16_t)(e->tsas[8] | e->tsas[9] << 8);
}

static int show_normal(const struct nvq_disc_log *log)
{
	printf("\nDiscovery Log Number of Records %u, Generation counter "
	       "%" PRIu64 "\n",
	       log->nr_entries, log->genctr);
	for (uint32_t i = 0; i < log->nr_entries; i++) {
		const struct nvq_disc_entry *e = &log->entries[i];
		struct texts t;

		texts_of(e, &t);
		printf("=====Discovery Log Entry %u======\n", i);
		printf("trtype:  %s\n", trtype_str(e->trtype));
		printf("adrfam:  %s\n",
		       t.traddr[0] ? adrfam_str(e->adrfam) : "");
		printf("subtype: %s\n", subtype_str(e->subtype));
		printf("treq:    %s\n", treq_str(e->treq));
		printf("portid:  %u\n", e->portid);
		printf("trsvcid: %s\n", t.trsvcid);
		printf("subnqn:  %s\n", t.subnqn);
		printf("traddr:  %s\n", t.traddr);
		printf("eflags:  %s\n", eflags_str(e->eflags));
		if (e->trtype == NVQ_TRTYPE_RDMA) {
			printf("rdma_prtype: %s\n", prtype_str(e->tsas[1]));
			printf("rdma_qptype: %s\n", qptype_str(e->tsas[0]));
			printf("rdma_cms:    %s\n", cms_str(e->tsas[2]));
			printf("rdma_pkey: 0x%04x\n", rdma_pkey(e));
		} else if (e->trtype == NVQ_TRTYPE_TCP) {
			printf("sectype: %s\n", sectype_str(e->tsas[0]));
		}
	}
	return flush_stdout();
}

static int show_json(const struct nvq_disc_log *log)
{
	struct json_writer w;

	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	json_uint(&w, "genctr", log->genctr);
	json_begin_array(&w, "records");
	for (uint32_t i = 0; i < log->nr_entries; i++) {
		const struct nvq_disc_entry *e = &log->entries[i];
		struct texts t;

		texts_of(e, &t);
		json_begin_object(&w, NULL);
		json_string(&w, "trtype", trtype_str(e->trtype));
		json_string(&w, "adrfam", adrfam_str(e->adrfam));
		json_string(&w, "subtype", subtype_str(e->subtype));
		json_string(&w, "treq", treq_str(e->treq));
		json_uint(&w, "portid", e->portid);
		json_string(&w, "trsvcid", t.trsvcid);
		json_string(&w, "subnqn", t.subnqn);
		json_string(&w, "traddr", t.traddr);
		json_string(&w, "eflags", eflags_str(e->eflags));
		if (e->trtype == NVQ_TRTYPE_RDMA) {
			json_string(&w, "rdma_prtype", prtype_str(e->tsas[1]));
			json_string(&w, "rdma_qptype", qptype_str(e->tsas[0]));
			json_string(&w, "rdma_cms", cms_str(e->tsas[2]));
			json_uint(&w, "rdma_pkey", rdma_pkey(e));
		} else if (e->trtype == NVQ_TRTYPE_TCP) {
			json_string(&w, "sectype", sectype_str(e->tsas[0]));
		}
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return finish_json(&w);
}

/* The saved page @path, decoded. */
static int raw_log(const char *path, struct nvq_disc_log **log)
{
	unsigned char *buf;
	size_t n;
	FILE *f;
	int rc;

	f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return fail("%s: %s", path, strerror(errno));
	buf = malloc(RAW_MAX + 1);
	if (!buf) {
		if (f != stdin)
			fclose(f);
		return fail("no memory");
	}
	n = fread(buf, 1, RAW_MAX + 1, f);
	rc = ferror(f);
	if (f != stdin)
		fclose(f);
	if (rc) {
		free(buf);
		return fail("%s: read error", path);
	}
	if (n > RAW_MAX) {
		free(buf);
		return fail("%s: more than %zu bytes: not a discovery log page",
			    path, RAW_MAX);
	}
	rc = nvq_disc_log_decode(buf, n, log);
	free(buf);
	if (rc)
		return fail("%s: %s", path, lib_msg(rc));
	return EXIT_OK;
}

static int discover_run(struct args *a)
{
	struct nvq_disc_log *log = NULL;
	const char *raw = a->xs[X_RAW_LOG];
	int rc;

	if (xhas(a, X_RAW_LOG) && a->npos)
		return usage_error(a->cmd, "give a URI or --raw-log, not both");
	if (!xhas(a, X_RAW_LOG) && !a->npos)
		return usage_error(a->cmd, "no URI given (tcp:HOST[:PORT])");
	if (xhas(a, X_RAW_LOG)) {
		rc = raw_log(raw, &log);
		if (rc)
			return rc;
	} else {
		if (strncmp(a->pos[0], "tcp:", 4))
			return usage_error(a->cmd,
					   "'%s' is not a tcp: URI "
					   "(tcp:HOST[:PORT][,key=val...])",
					   a->pos[0]);
		rc = nvq_discover(a->pos[0], &log);
		if (rc)
			return fail("%s", lib_msg(rc));
	}
	rc = a->fmt == FMT_JSON ? show_json(log) : show_normal(log);
	nvq_disc_log_free(log);
	return rc;
}

/* clang-format off */
const struct cmd discover_cmd = {
	.name = "discover",
	.run = discover_run,
	.opts = OPT_FMT,
	.min_pos = 0,
	.max_pos = 1,
	.xopts = discover_xopts,
	.nxopts = X_NR,
	.synopsis = "tcp:HOST[:PORT][,key=val...] [-o normal|json]",
	.summary =
		"Read the discovery log of an NVMe/TCP discovery controller and\n"
		"list the subsystems (and referrals) it offers, as nvme-cli's\n"
		"discover does: each entry's traddr, trsvcid and subnqn make the\n"
		"URI tcp:TRADDR:TRSVCID,nqn=SUBNQN. The port defaults to 8009,\n"
		"nqn= to the well-known discovery NQN.\n",
	.help =
		"  URI                      tcp:HOST[:PORT][,key=val...]: the\n"
		"                           discovery controller; [IPv6] in\n"
		"                           brackets; hostnqn=, hostid=,\n"
		"                           connect_timeout=MS ... as docs/tcp.md\n"
		"  -o, --output-format=FMT  normal (default) or json\n"
		"      --raw-log=FILE       decode the saved log page FILE (nvme\n"
		"                           discover --raw FILE; - for standard\n"
		"                           input) instead of asking a controller\n"
		"                           (for debugging)\n"
		HELP_HELP,
};
/* clang-format on */
