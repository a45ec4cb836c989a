// SPDX-License-Identifier: MIT
/*
 * format: Format NVM (NVMe Base 2.0, 5.14; NVM Command Set 1.0, 4.1.4)
 * with nvme-cli 2.3's options. It says what will be lost and asks first
 * (--force does not ask); afterwards the library has identified the
 * namespaces again, and the new format is shown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* nvme-cli's default: 600 s, a format of a large device takes long */
#define FORMAT_TIMEOUT_MS 600000u

/* FNA bit 0: a format of one namespace formats all of them */
#define FNA_ALL_NS 0x1

enum {
	X_LBAF,
	X_SES,
	X_PI,
	X_PIL,
	X_MS,
	X_RESET,
	X_FORCE,
	X_TIMEOUT,
	X_BS,
	X_NR
};

static const struct xopt format_xopts[X_NR] = {
	[X_LBAF] = { 'l', "lbaf", XOPT_NUM, 63, false },
	[X_SES] = { 's', "ses", XOPT_NUM, 7, false },
	[X_PI] = { 'i', "pi", XOPT_NUM, 7, false },
	[X_PIL] = { 'p', "pil", XOPT_NUM, 1, false },
	[X_MS] = { 'm', "ms", XOPT_NUM, 1, false },
	[X_RESET] = { 'r', "reset", XOPT_FLAG, 0, false },
	[X_FORCE] = { 'f', "force", XOPT_FLAG, 0, false },
	[X_TIMEOUT] = { 't', "timeout", XOPT_NUM, NVQ_TIMEOUT_MS_MAX, false },
	[X_BS] = { 'b', "block-size", XOPT_NUM, UINT32_MAX, false },
};

/* "LBA format 1 (512-byte blocks, 8 bytes of metadata)" */
static void print_lbaf(const struct nvq_id_ns *id, unsigned int i)
{
	if (i > id->nlbaf) {
		fprintf(stderr,
			"LBA format %u (not one of the namespace's "
			"%u)",
			i, id->nlbaf + 1);
		return;
	}
	fprintf(stderr, "LBA format %u (", i);
	if (id->lbaf[i].ds >= 9 && id->lbaf[i].ds < 32)
		fprintf(stderr, "%" PRIu32 "-byte blocks",
			(uint32_t)1 << id->lbaf[i].ds);
	else
		fprintf(stderr, "LBADS %u", id->lbaf[i].ds);
	fprintf(stderr, ", %u bytes of metadata)", id->lbaf[i].ms);
}

static void print_ns_loss(struct nvq_ctrl *ctrl, uint32_t nsid)
{
	struct nvq_ns_info ns;

	if (nvq_ns_info(ctrl, nsid, &ns) || !ns.id) {
		fprintf(stderr, "  namespace %u: all its data\n", nsid);
		return;
	}
	fprintf(stderr,
		"  namespace %u: %" PRIu64 " blocks of %u bytes (%" PRIu64
		" bytes), all erased; now ",
		nsid, ns.nlba, ns.lba_size, ns.nlba * ns.lba_size);
	print_lbaf(ns.id, nvq_flbas_index(ns.id->flbas));
	fputc('\n', stderr);
}

/* What will be lost, as nvme-cli's warning; the namespaces from @ctrl. */
static void show_loss(const struct args *a, struct nvq_ctrl *ctrl,
		      const struct nvq_id_ns *id, unsigned int lbaf, bool all)
{
	uint32_t ids[64];
	int n;

	fprintf(stderr, "You are about to format %s, namespace %#x%s.\n",
		a->pos[0], a->nsid,
		all ? " (ALL namespaces: FNA bit 0, a format of one "
		      "namespace formats every namespace)" :
		      "");
	n = all ? nvq_ns_list(ctrl, ids, ARRAY_SIZE(ids)) : 0;
	if (n <= 0)
		print_ns_loss(ctrl, a->nsid);
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(ids); i++)
		print_ns_loss(ctrl, ids[i]);
	if (n > (int)ARRAY_SIZE(ids))
		fprintf(stderr, "  and %d more namespaces\n",
			n - (int)ARRAY_SIZE(ids));
	fprintf(stderr, "New format: ");
	print_lbaf(id, lbaf);
	fprintf(stderr, ", metadata %s, protection information ",
		a->x[X_MS] ? "extended (with each block)" : "separate");
	if (a->x[X_PI])
		fprintf(stderr, "type %" PRIu64 " (%s 8 bytes)", a->x[X_PI],
			a->x[X_PIL] ? "first" : "last");
	else
		fprintf(stderr, "off");
	fprintf(stderr, ", secure erase setting %" PRIu64 "\n", a->x[X_SES]);
	fprintf(stderr,
		"WARNING: Format may irrevocably delete this device's data.\n");
}

/* The LBA format with @bs-byte blocks and no metadata, as nvme-cli -b. */
static int lbaf_for_block_size(const struct args *a, const struct nvq_id_ns *id,
			       unsigned int *lbaf)
{
	uint64_t bs = a->x[X_BS];

	if (!bs || (bs & (bs - 1)))
		return usage_error(a->cmd,
				   "-b/--block-size %" PRIu64 " is not a "
				   "power of two",
				   bs);
	for (unsigned int i = 0; i <= id->nlbaf && i < 64; i++) {
		if (id->lbaf[i].ds < 64 && (1ull << id->lbaf[i].ds) == bs &&
		    !id->lbaf[i].ms) {
			*lbaf = i;
			return 0;
		}
	}
	return fail("namespace %u has no LBA format of %" PRIu64 "-byte "
		    "blocks without metadata: see 'nvq id-ns %s -n %u' and "
		    "give -l/--lbaf",
		    a->nsid, bs, a->pos[0], a->nsid);
}

/* The hint an emu: image needs: FILE.md records the format. */
static void emu_hint(const char *uri, const struct nvq_ns_format *f)
{
	if (strncmp(uri, "emu:", 4) || !strstr(uri, "file="))
		return;
	printf("emu: the image is now formatted lbads=%u,ms=%u",
	       31 - __builtin_clz(f->lba_size), f->ms);
	if (f->extended)
		printf(",mset=1");
	if (f->pi_type)
		printf(",pi=%u%s", f->pi_type, f->pi_first ? ",pil=1" : "");
	printf(": open it with those parameters\n");
}

static int show_new_format(const struct args *a, struct nvq_ctrl *ctrl)
{
	struct nvq_ns_format f;
	struct nvq_ns_info ns;
	int rc;

	rc = nvq_ns_format(ctrl, a->nsid, &f);
	if (rc)
		return fail("formatted, but namespace %u cannot be described "
			    "now: %s",
			    a->nsid, lib_msg(rc));
	rc = nvq_ns_info(ctrl, a->nsid, &ns);
	printf("namespace %u: LBA format %u, %u-byte blocks, %u bytes of "
	       "metadata (%s), protection information ",
	       a->nsid, !rc && ns.id ? nvq_flbas_index(ns.id->flbas) : 0,
	       f.lba_size, f.ms, f.extended ? "extended" : "separate");
	if (f.pi_type)
		printf("type %u (%s 8 bytes)", f.pi_type,
		       f.pi_first ? "first" : "last");
	else
		printf("off");
	if (!rc)
		printf(", %" PRIu64 " blocks\n", ns.nlba);
	else
		printf("\n");
	if (!f.usable)
		fprintf(stderr,
			"nvq: note: nvq cannot do I/O to namespace "
			"%u in this format: %s\n",
			a->nsid, f.why);
	emu_hint(a->pos[0], &f);
	return EXIT_OK;
}

static int format_run(struct args *a)
{
	const struct nvq_id_ctrl *idc;
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	struct nvq_sqe cmd;
	unsigned int lbaf;
	uint16_t status = 0;
	char buf[160];
	bool all;
	int rc;

	if (xhas(a, X_LBAF) && xhas(a, X_BS))
		return usage_error(a->cmd, "give -l/--lbaf or -b/--block-size, "
					   "not both");
	if (xhas(a, X_TIMEOUT) && !a->x[X_TIMEOUT])
		return usage_error(a->cmd, "-t/--timeout must be at least 1 "
					   "(milliseconds)");
	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	idc = nvq_ctrl_id(ctrl);
	if (!idc || !(idc->oacs & NVQ_CTRL_OACS_FORMAT)) {
		rc = fail("%s does not support Format NVM (OACS bit 1 is 0)",
			  a->pos[0]);
		goto out;
	}
	all = idc->fna & FNA_ALL_NS;
	/* Not get_ns(): a namespace nvq cannot drive may be formatted */
	rc = nvq_ns_info(ctrl, a->nsid, &ns);
	if (rc == -ENOENT) {
		rc = get_ns(ctrl, a->nsid, &ns);
		goto out;
	}
	if (rc || !ns.id) {
		rc = fail("namespace %u: %s", a->nsid,
			  rc ? lib_msg(rc) : "no Identify Namespace data");
		goto out;
	}
	/* Default: the current format, as nvme-cli */
	lbaf = nvq_flbas_index(ns.id->flbas);
	if (xhas(a, X_LBAF))
		lbaf = (unsigned int)a->x[X_LBAF];
	if (xhas(a, X_BS)) {
		rc = lbaf_for_block_size(a, ns.id, &lbaf);
		if (rc)
			goto out;
	}

	/* nvme-cli warns only without --force */
	if (!xhas(a, X_FORCE))
		show_loss(a, ctrl, ns.id, lbaf, all);
	rc = confirm(a->cmd, xhas(a, X_FORCE), "format");
	if (rc != CONTINUE)
		goto out;

	nvq_ctrl_set_timeouts(ctrl, 0,
			      xhas(a, X_TIMEOUT) ?
				      (unsigned int)a->x[X_TIMEOUT] :
				      FORMAT_TIMEOUT_MS);
	/* CDW10: LBAF 3:0, MSET 4, PI 7:5, PIL 8, SES 11:9, LBAFU 13:12 */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = nvq_admin_format_nvm;
	cmd.nsid = a->nsid;
	cmd.cdw10 = (lbaf & 0xf) | (uint32_t)a->x[X_MS] << 4 |
		    (uint32_t)a->x[X_PI] << 5 | (uint32_t)a->x[X_PIL] << 8 |
		    (uint32_t)a->x[X_SES] << 9 | (lbaf >> 4 & 0x3) << 12;
	rc = nvq_admin(ctrl, &cmd, NULL, 0, NULL, &status);
	if (rc) {
		/* after a timeout the device may still be formatting */
		rc = fail("format of namespace %u failed: %s%s", a->nsid,
			  io_msg(rc, status, buf, sizeof(buf)),
			  rc == -ETIMEDOUT ? "; the controller may still be "
					     "formatting (see -t/--timeout)" :
					     "");
		goto out;
	}
	printf("Success formatting namespace:%x\n", a->nsid);
	rc = show_new_format(a, ctrl);
	if (!rc && xhas(a, X_RESET)) {
		rc = nvq_ctrl_reset(ctrl);
		if (rc)
			rc = fail("%s: formatted, but the controller reset "
				  "failed: %s",
				  a->pos[0], lib_msg(rc));
		else
			printf("%s: controller reset\n", a->pos[0]);
	}
	if (!rc)
		rc = flush_stdout();
out:
	nvq_close(ctrl);
	return rc;
}

/* clang-format off */
const struct cmd format_cmd = {
	.name = "format",
	.run = format_run,
	.opts = OPT_NSID,
	.required = OPT_NSID,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = format_xopts,
	.nxopts = X_NR,
	.synopsis = "URI[/NSID] [-n NSID] [-l LBAF] [-i PI] [-p PIL] [-m MS] [-s SES] [-f]",
	.summary =
		"Format NVM: give namespace NSID another LBA format (block and\n"
		"metadata size, protection information), erasing its data. Where\n"
		"the controller formats all namespaces at once (FNA bit 0) all\n"
		"are erased. Says what will be lost and asks for y on the\n"
		"terminal unless --force; without a terminal --force is needed.\n"
		"Afterwards it shows the namespace's new format.\n",
	.help = HELP_URI HELP_NSID
		"  -l, --lbaf=N             LBA format to apply, 0..63 (default: the\n"
		"                           current one; see 'nvq id-ns')\n"
		"  -b, --block-size=BYTES   the LBA format of BYTES blocks without\n"
		"                           metadata, instead of -l\n"
		"  -s, --ses=N              secure erase: 0 none (default), 1 user\n"
		"                           data erase, 2 cryptographic erase\n"
		"  -i, --pi=N               protection information: 0 off (default),\n"
		"                           type 1, 2 or 3\n"
		"  -p, --pil=N              PI location: 0 last (default), 1 first 8\n"
		"                           bytes of the metadata\n"
		"  -m, --ms=N               metadata: 0 separate buffer (default),\n"
		"                           1 extended LBA (with each block)\n"
		"  -r, --reset              reset the controller after the format\n"
		"  -f, --force              do not ask for confirmation\n"
		"  -t, --timeout=MS         format command timeout, 1..3600000 ms\n"
		"                           (default 600000)\n"
		HELP_HELP HELP_NUMBERS,
};
/* clang-format on */
