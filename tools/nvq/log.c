// SPDX-License-Identifier: MIT
/*
 * The log page commands: smart-log (02h), error-log (01h), fw-log (03h),
 * sanitize-log (81h) decoded in nvme-cli 2.3's text and JSON names, and
 * get-log, any log page as a hex dump or raw bytes with nvme-cli 2.3's
 * options. A log larger than one command may carry is read in pieces at
 * increasing offsets (LPOL/LPOU), as libnvme does, where the controller
 * supports that (LPA bit 2); RAE is kept set until the last piece so that
 * the log stays latched while it is read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Base 2.0, Figure 280: the Sanitize Status log page (the first bytes) */
struct sanitize_log {
	uint16_t sprog;
	uint16_t sstat;
	uint32_t scdw10;
	uint32_t eto;
	uint32_t etbe;
	uint32_t etce;
	uint32_t etond;
	uint32_t etbend;
	uint32_t etcend;
	uint8_t rsvd32[480];
};
_Static_assert(sizeof(struct sanitize_log) == 512, "sanitize log 512");

#define LOG_SANITIZE 0x81
#define SSTAT_STATUS(s) ((s)&0x7)
#define SSTAT_PASSES(s) (((s) >> 3) & 0x1f)
#define SSTAT_GLOBAL_ERASED (1u << 8)
#define SSTAT_IN_PROGRESS 2

/* What one Get Log Page reads (Base 2.0, 5.16) */
struct log_req {
	uint32_t nsid;
	uint8_t lid;
	uint8_t lsp; /* 7 bits */
	uint16_t lsi;
	uint64_t lpo; /* byte offset; an index with ot */
	uint8_t uuidx; /* 7 bits */
	uint8_t csi;
	bool rae, ot;
};

/*
 * Read @len bytes (a multiple of 4) of the log @r names into @buf: one
 * command, or pieces of at most the maximum transfer at increasing byte
 * offsets where the controller supports offsets (extended data, LPA bit
 * 2). 0; EXIT_FAIL after the message, which names @what and ends
 * with @hint (if not NULL) when the device refused the command.
 */
static int get_log(struct nvq_ctrl *ctrl, const char *what,
		   const struct log_req *r, void *buf, size_t len,
		   const char *hint)
{
	const struct nvq_id_ctrl *id = nvq_ctrl_id(ctrl);
	bool ext = id && (id->lpa & NVQ_CTRL_LPA_EXT_DATA);
	uint64_t chunk = nvq_ctrl_max_transfer(ctrl) & ~(uint64_t)3;
	uint8_t *p = buf;
	size_t off = 0;
	char msg[160];

	/* without extended data NUMDU and the offset are reserved */
	if (!ext && chunk > 0x10000 * 4)
		chunk = 0x10000 * 4;
	if (!chunk)
		return fail("%s: the controller reports no maximum transfer",
			    what);
	if (!ext && r->lpo)
		return fail("%s: the controller does not support log page "
			    "offsets (LPA bit 2 clear): read from offset 0",
			    what);
	if (len > chunk && !ext)
		return fail("%s: %zu bytes need %" PRIu64 " commands, and "
			    "the controller does not support log page "
			    "offsets (LPA bit 2 clear): read at most %" PRIu64
			    " bytes",
			    what, len, (len + chunk - 1) / chunk, chunk);
	if (len > chunk && r->ot)
		return fail("%s: with --ot the offset is an index, so the "
			    "log cannot be read in pieces: read at most "
			    "%" PRIu64 " bytes",
			    what, chunk);
	while (off < len) {
		size_t n = len - off > chunk ? (size_t)chunk : len - off;
		uint32_t numd = (uint32_t)(n / 4 - 1);
		uint64_t lpo = r->lpo + off;
		struct nvq_sqe cmd;
		uint16_t status = 0;
		int ret;

		memset(&cmd, 0, sizeof(cmd));
		cmd.opcode = nvq_admin_get_log_page;
		cmd.nsid = r->nsid;
		/* RAE until the last piece: the log stays latched */
		cmd.cdw10 = r->lid | (uint32_t)(r->lsp & 0x7f) << 8 |
			    (off + n < len || r->rae ? NVQ_LOG_RAE : 0) |
			    (numd & 0xffff) << 16;
		cmd.cdw11 = numd >> 16 | (uint32_t)r->lsi << 16;
		cmd.cdw12 = (uint32_t)lpo;
		cmd.cdw13 = (uint32_t)(lpo >> 32);
		cmd.cdw14 = (r->uuidx & 0x7fu) | (r->ot ? 1u << 23 : 0) |
			    (uint32_t)r->csi << 24;
		ret = nvq_admin(ctrl, &cmd, p + off, n, NULL, &status);
		if (ret)
			return fail("%s: %s%s%s", what,
				    io_msg(ret, status, msg, sizeof(msg)),
				    ret == -EIO && hint ? "; " : "",
				    ret == -EIO && hint ? hint : "");
		off += n;
	}
	return 0;
}

static int write_raw(const void *data, size_t len)
{
	int ret;

	if (fflush(stdout))
		return flush_stdout();
	ret = write_full(STDOUT_FILENO, data, len);
	if (ret)
		return fail("cannot write to standard output: %s",
			    strerror(-ret));
	return EXIT_OK;
}

/* Kelvin to Celsius as nvme-cli prints it */
static long celsius(unsigned int kelvin)
{
	return (long)kelvin - 273;
}

/* nvme-cli's "%.2Lf %sB" of a 128-bit count of @unit bytes (SI) */
static void si_str(const uint8_t v[16], unsigned int unit, char *out,
		   size_t len)
{
	static const struct {
		long double mag;
		const char *suffix;
	} si[] = {
		{ 1e30L, "Q" }, { 1e27L, "R" }, { 1e24L, "Y" }, { 1e21L, "Z" },
		{ 1e18L, "E" }, { 1e15L, "P" }, { 1e12L, "T" }, { 1e9L, "G" },
		{ 1e6L, "M" },	{ 1e3L, "k" },
	};
	long double bytes = 0;
	const char *suffix = "";

	for (int i = 15; i >= 0; i--)
		bytes = bytes * 256 + v[i];
	bytes *= unit;
	for (size_t i = 0; i < ARRAY_SIZE(si); i++)
		if (bytes >= si[i].mag) {
			bytes /= si[i].mag;
			suffix = si[i].suffix;
			break;
		}
	snprintf(out, len, "%.2Lf %sB", bytes, suffix);
}

/* Options shared by the decoded logs: -b/--raw-binary */
#define HELP_RAW_BINARY \
	"  -b, --raw-binary         the log's bytes as read (as -o binary)\n"

/* ------------------------------------------------------------------ */
/* smart-log                                                           */
/* ------------------------------------------------------------------ */

enum { SMART_RAW, SMART_HUMAN, NR_SMART_XOPTS };

static const struct xopt smart_xopts[] = {
	[SMART_RAW] = { 'b', "raw-binary", XOPT_FLAG, 0, false },
	[SMART_HUMAN] = { 'H', "human-readable", XOPT_FLAG, 0, false },
};

/* The 128-bit counters in nvme-cli's JSON names and text labels */
static const struct {
	const char *json, *text;
	size_t off;
} smart_u128[] = {
	{ "data_units_read", "Data Units Read\t\t\t\t",
	  offsetof(struct nvq_smart_log, data_units_read) },
	{ "data_units_written", "Data Units Written\t\t\t",
	  offsetof(struct nvq_smart_log, data_units_written) },
	{ "host_read_commands", "host_read_commands\t\t\t",
	  offsetof(struct nvq_smart_log, host_reads) },
	{ "host_write_commands", "host_write_commands\t\t\t",
	  offsetof(struct nvq_smart_log, host_writes) },
	{ "controller_busy_time", "controller_busy_time\t\t\t",
	  offsetof(struct nvq_smart_log, ctrl_busy_time) },
	{ "power_cycles", "power_cycles\t\t\t\t",
	  offsetof(struct nvq_smart_log, power_cycles) },
	{ "power_on_hours", "power_on_hours\t\t\t\t",
	  offsetof(struct nvq_smart_log, power_on_hours) },
	{ "unsafe_shutdowns", "unsafe_shutdowns\t\t\t",
	  offsetof(struct nvq_smart_log, unsafe_shutdowns) },
	{ "media_errors", "media_errors\t\t\t\t",
	  offsetof(struct nvq_smart_log, media_errors) },
	{ "num_err_log_entries", "num_err_log_entries\t\t\t",
	  offsetof(struct nvq_smart_log, num_err_log_entries) },
};

static const char *const crit_warn_json[] = {
	"available_spare", "temp_threshold", "reliability_degraded", "ro",
	"vmbu_failed",	   "pmr_ro",
};
static const char *const crit_warn_text[] = {
	"Available Spare[0]             ", "Temp. Threshold[1]             ",
	"NVM subsystem Reliability[2]   ", "Read-only[3]                   ",
	"Volatile mem. backup failed[4] ", "Persistent Mem. RO[5]          ",
};

static int smart_json(const struct nvq_smart_log *s, bool human)
{
	const uint8_t *base = (const uint8_t *)s;
	unsigned int temp = s->temperature[0] | s->temperature[1] << 8;
	struct json_writer w;
	char buf[48];

	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	if (human) {
		json_begin_object(&w, "critical_warning");
		json_uint(&w, "value", s->critical_warning);
		for (unsigned int i = 0; i < ARRAY_SIZE(crit_warn_json); i++)
			json_uint(&w, crit_warn_json[i],
				  (s->critical_warning >> i) & 1);
		json_end_object(&w);
	} else {
		json_uint(&w, "critical_warning", s->critical_warning);
	}
	json_uint(&w, "temperature", temp);
	json_uint(&w, "avail_spare", s->avail_spare);
	json_uint(&w, "spare_thresh", s->spare_thresh);
	json_uint(&w, "percent_used", s->percent_used);
	json_uint(&w, "endurance_grp_critical_warning_summary",
		  s->endu_grp_crit_warn_sumry);
	/* nvme-cli 2.3: exact decimal strings (util_json_object_new_uint128) */
	for (size_t i = 0; i < ARRAY_SIZE(smart_u128); i++) {
		u128_str(base + smart_u128[i].off, buf);
		json_string(&w, smart_u128[i].json, buf);
	}
	json_uint(&w, "warning_temp_time", s->warning_temp_time);
	json_uint(&w, "critical_comp_time", s->critical_comp_time);
	for (unsigned int i = 0; i < 8; i++) {
		if (!s->temp_sensor[i])
			continue;
		snprintf(buf, sizeof(buf), "temperature_sensor_%u", i + 1);
		json_uint(&w, buf, s->temp_sensor[i]);
	}
	json_uint(&w, "thm_temp1_trans_count", s->thm_temp1_trans_count);
	json_uint(&w, "thm_temp2_trans_count", s->thm_temp2_trans_count);
	json_uint(&w, "thm_temp1_total_time", s->thm_temp1_total_time);
	json_uint(&w, "thm_temp2_total_time", s->thm_temp2_total_time);
	json_end_object(&w);
	return finish_json(&w);
}

static void smart_text(const struct nvq_smart_log *s, const char *dev,
		       uint32_t nsid, bool human)
{
	const uint8_t *base = (const uint8_t *)s;
	unsigned int temp = s->temperature[0] | s->temperature[1] << 8;
	char num[40], si[48];

	printf("Smart Log for NVME device:%s namespace-id:%x\n", dev, nsid);
	printf("critical_warning\t\t\t: %#x\n", s->critical_warning);
	if (human)
		for (unsigned int i = 0; i < ARRAY_SIZE(crit_warn_text); i++)
			printf("      %s: %u\n", crit_warn_text[i],
			       (s->critical_warning >> i) & 1);
	printf("temperature\t\t\t\t: %ld°C (%u Kelvin)\n", celsius(temp), temp);
	printf("available_spare\t\t\t\t: %u%%\n", s->avail_spare);
	printf("available_spare_threshold\t\t: %u%%\n", s->spare_thresh);
	printf("percentage_used\t\t\t\t: %u%%\n", s->percent_used);
	printf("endurance group critical warning summary: %#x\n",
	       s->endu_grp_crit_warn_sumry);
	for (size_t i = 0; i < ARRAY_SIZE(smart_u128); i++) {
		u128_str(base + smart_u128[i].off, num);
		printf("%s: %s", smart_u128[i].text, num);
		if (i < 2) { /* data units: thousands of 512 bytes */
			si_str(base + smart_u128[i].off, 1000 * 512, si,
			       sizeof(si));
			printf(" (%s)", si);
		}
		printf("\n");
	}
	printf("Warning Temperature Time\t\t: %" PRIu32 "\n",
	       s->warning_temp_time);
	printf("Critical Composite Temperature Time\t: %" PRIu32 "\n",
	       s->critical_comp_time);
	for (unsigned int i = 0; i < 8; i++) {
		unsigned int t = s->temp_sensor[i];

		if (!t)
			continue;
		printf("Temperature Sensor %u           : %ld°C (%u Kelvin)\n",
		       i + 1, celsius(t), t);
	}
	printf("Thermal Management T1 Trans Count\t: %" PRIu32 "\n",
	       s->thm_temp1_trans_count);
	printf("Thermal Management T2 Trans Count\t: %" PRIu32 "\n",
	       s->thm_temp2_trans_count);
	printf("Thermal Management T1 Total Time\t: %" PRIu32 "\n",
	       s->thm_temp1_total_time);
	printf("Thermal Management T2 Total Time\t: %" PRIu32 "\n",
	       s->thm_temp2_total_time);
}

/* -o binary or -b */
static bool raw_out(const struct args *a, int raw_xopt)
{
	return a->fmt == FMT_BINARY || xhas(a, raw_xopt);
}

static int run_smart_log(struct args *a)
{
	struct log_req r = {
		.nsid = a->has_nsid ? a->nsid : NVQ_NSID_ALL,
		.lid = NVQ_LOG_SMART,
	};
	const struct nvq_id_ctrl *id;
	struct nvq_smart_log s;
	struct nvq_ctrl *ctrl;
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	memset(&s, 0, sizeof(s));
	id = nvq_ctrl_id(ctrl);
	rc = get_log(ctrl, "smart log", &r, &s, sizeof(s),
		     r.nsid && r.nsid != NVQ_NSID_ALL && id &&
				     !(id->lpa & NVQ_CTRL_LPA_SMART_PER_NS) ?
			     "the controller keeps no SMART log per namespace "
			     "(LPA bit 0 clear): leave out -n" :
			     NULL);
	nvq_close(ctrl);
	if (rc)
		return rc;
	if (raw_out(a, SMART_RAW))
		return write_raw(&s, sizeof(s));
	if (a->fmt == FMT_JSON) {
		return smart_json(&s, xhas(a, SMART_HUMAN));
	}
	smart_text(&s, a->pos[0], r.nsid, xhas(a, SMART_HUMAN));
	return flush_stdout();
}

/* clang-format off */
const struct cmd smart_log_cmd = {
	.name = "smart-log",
	.run = run_smart_log,
	.opts = OPT_NSID | OPT_NSID_ALL | OPT_NSID_ZERO | OPT_FMT | OPT_FMT_BIN,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = smart_xopts,
	.nxopts = NR_SMART_XOPTS,
	.synopsis = "URI [-n NSID] [-o normal|json|binary] [-H] [-b]",
	.summary =
		"Show the SMART / Health Information log (log page 02h) in\n"
		"nvme-cli's names: the 128-bit counters exact, temperatures in\n"
		"Kelvin as reported (the text output adds Celsius).\n",
	.help = HELP_URI
		"  -n, --namespace-id=NSID  the namespace's log where the controller\n"
		"                           keeps one (LPA bit 0); default\n"
		"                           0xffffffff, the controller's\n"
		HELP_FMT_BIN
		"  -H, --human-readable     decode the critical warning bits\n"
		HELP_RAW_BINARY HELP_HELP HELP_NUMBERS,
};
/* clang-format on */

/* ------------------------------------------------------------------ */
/* error-log                                                           */
/* ------------------------------------------------------------------ */

enum { ERR_ENTRIES, ERR_RAW, NR_ERR_XOPTS };

static const struct xopt err_xopts[] = {
	[ERR_ENTRIES] = { 'e', "log-entries", XOPT_NUM, 256, false },
	[ERR_RAW] = { 'b', "raw-binary", XOPT_FLAG, 0, false },
};

static const char *trtype_str(uint8_t t)
{
	switch (t) {
	case 0:
		return "The transport type is not indicated or the error is "
		       "not transport related.";
	case 1:
		return "RDMA Transport error.";
	case 2:
		return "Fibre Channel Transport error.";
	case 3:
		return "TCP Transport error.";
	case 254:
		return "Intra-host Transport error.";
	default:
		return "Reserved";
	}
}

static int error_json(const struct nvq_error_log *e, unsigned int n)
{
	struct json_writer w;

	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	json_begin_array(&w, "errors");
	for (unsigned int i = 0; i < n; i++) {
		json_begin_object(&w, NULL);
		json_uint(&w, "error_count", e[i].error_count);
		json_uint(&w, "sqid", e[i].sqid);
		json_uint(&w, "cmdid", e[i].cid);
		json_uint(&w, "status_field", e[i].status >> 1);
		json_uint(&w, "phase_tag", e[i].status & 1);
		json_uint(&w, "parm_error_location", e[i].param_error_location);
		json_uint(&w, "lba", e[i].lba);
		json_uint(&w, "nsid", e[i].nsid);
		json_uint(&w, "vs", e[i].vs);
		json_uint(&w, "trtype", e[i].trtype);
		json_uint(&w, "cs", e[i].cs);
		json_uint(&w, "trtype_spec_info", e[i].trtype_spec_info);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return finish_json(&w);
}

static void error_text(const struct nvq_error_log *e, unsigned int n,
		       const char *dev)
{
	printf("Error Log Entries for device:%s entries:%u\n", dev, n);
	printf(".................\n");
	for (unsigned int i = 0; i < n; i++) {
		uint16_t st = e[i].status >> 1;

		printf(" Entry[%2u]   \n", i);
		printf(".................\n");
		printf("error_count\t: %" PRIu64 "\n", e[i].error_count);
		printf("sqid\t\t: %u\n", e[i].sqid);
		printf("cmdid\t\t: %#x\n", e[i].cid);
		printf("status_field\t: %#x(%s)\n", st, nvq_status_str(st));
		printf("phase_tag\t: %#x\n", e[i].status & 1);
		printf("parm_err_loc\t: %#x\n", e[i].param_error_location);
		printf("lba\t\t: %#" PRIx64 "\n", e[i].lba);
		printf("nsid\t\t: %#x\n", e[i].nsid);
		printf("vs\t\t: %u\n", e[i].vs);
		printf("trtype\t\t: %s\n", trtype_str(e[i].trtype));
		printf("cs\t\t: %#" PRIx64 "\n", e[i].cs);
		printf("trtype_spec_info: %#x\n", e[i].trtype_spec_info);
		printf(".................\n");
	}
}

static int run_error_log(struct args *a)
{
	struct log_req r = { .nsid = NVQ_NSID_ALL, .lid = NVQ_LOG_ERROR };
	const struct nvq_id_ctrl *id;
	struct nvq_error_log *e;
	struct nvq_ctrl *ctrl;
	unsigned int n;
	int rc;

	if (xhas(a, ERR_ENTRIES) && !a->x[ERR_ENTRIES])
		return usage_error(a->cmd, "-e/--log-entries must be at "
					   "least 1");
	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	id = nvq_ctrl_id(ctrl);
	if (!id) {
		nvq_close(ctrl);
		return fail("%s: no Identify Controller data", a->pos[0]);
	}
	/* ELPE + 1 entries at most, as nvme-cli */
	n = id->elpe + 1u;
	if (xhas(a, ERR_ENTRIES) && a->x[ERR_ENTRIES] < n)
		n = (unsigned int)a->x[ERR_ENTRIES];
	e = calloc(n, sizeof(*e));
	if (!e) {
		nvq_close(ctrl);
		return fail("out of memory");
	}
	rc = get_log(ctrl, "error log", &r, e, n * sizeof(*e), NULL);
	nvq_close(ctrl);
	if (!rc) {
		if (raw_out(a, ERR_RAW)) {
			rc = write_raw(e, n * sizeof(*e));
		} else if (a->fmt == FMT_JSON) {
			rc = error_json(e, n);
		} else {
			error_text(e, n, a->pos[0]);
			rc = flush_stdout();
		}
	}
	free(e);
	return rc;
}

/* clang-format off */
const struct cmd error_log_cmd = {
	.name = "error-log",
	.run = run_error_log,
	.opts = OPT_FMT | OPT_FMT_BIN,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = err_xopts,
	.nxopts = NR_ERR_XOPTS,
	.synopsis = "URI [-e N] [-o normal|json|binary] [-b]",
	.summary =
		"Show the Error Information log (log page 01h), newest entry\n"
		"first, in nvme-cli's names.\n",
	.help = HELP_URI
		"  -e, --log-entries=N      entries to read, 1..256 (default and\n"
		"                           most: the controller's ELPE + 1)\n"
		HELP_FMT_BIN HELP_RAW_BINARY HELP_HELP HELP_NUMBERS,
};
/* clang-format on */

/* ------------------------------------------------------------------ */
/* fw-log                                                              */
/* ------------------------------------------------------------------ */

enum { FW_RAW, NR_FW_XOPTS };

static const struct xopt fw_xopts[] = {
	[FW_RAW] = { 'b', "raw-binary", XOPT_FLAG, 0, false },
};

/* nvme-cli's util_fw_to_string(): 8 characters, '.' if not printable */
static void fw_str(const char *c, char out[9])
{
	for (int i = 0; i < 8; i++)
		out[i] = c[i] >= '!' && c[i] <= '~' ? c[i] : '.';
	out[8] = '\0';
}

static int run_fw_log(struct args *a)
{
	struct log_req r = { .nsid = NVQ_NSID_ALL, .lid = NVQ_LOG_FW_SLOT };
	struct nvq_fw_slot_log f;
	struct json_writer w;
	struct nvq_ctrl *ctrl;
	char str[48], key[24], rev[9];
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	memset(&f, 0, sizeof(f));
	rc = get_log(ctrl, "fw log", &r, &f, sizeof(f), NULL);
	nvq_close(ctrl);
	if (rc)
		return rc;
	if (raw_out(a, FW_RAW))
		return write_raw(&f, sizeof(f));
	if (a->fmt == FMT_JSON) {
		json_init(&w, stdout, true);
		json_begin_object(&w, NULL);
		json_begin_object(&w, a->pos[0]);
		json_uint(&w, "Active Firmware Slot (afi)", f.afi);
	} else {
		printf("Firmware Log for device:%s\n", a->pos[0]);
		printf("afi  : %#x\n", f.afi);
	}
	for (int i = 0; i < 7; i++) {
		uint64_t v;

		if (!f.frs[i][0])
			continue; /* an empty slot */
		memcpy(&v, f.frs[i], sizeof(v));
		fw_str(f.frs[i], rev);
		if (a->fmt == FMT_JSON) {
			snprintf(key, sizeof(key), "Firmware Rev Slot %d",
				 i + 1);
			snprintf(str, sizeof(str), "%" PRIu64 " (%s)", v, rev);
			json_string(&w, key, str);
		} else {
			printf("frs%d : %#016" PRIx64 " (%s)\n", i + 1, v, rev);
		}
	}
	if (a->fmt != FMT_JSON)
		return flush_stdout();
	json_end_object(&w);
	json_end_object(&w);
	return finish_json(&w);
}

/* clang-format off */
const struct cmd fw_log_cmd = {
	.name = "fw-log",
	.run = run_fw_log,
	.opts = OPT_FMT | OPT_FMT_BIN,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = fw_xopts,
	.nxopts = NR_FW_XOPTS,
	.synopsis = "URI [-o normal|json|binary] [-b]",
	.summary =
		"Show the Firmware Slot Information log (log page 03h): the\n"
		"active slot (afi) and the revision in each slot, as nvme-cli.\n"
		"The JSON object is keyed by the URI.\n",
	.help = HELP_URI HELP_FMT_BIN HELP_RAW_BINARY HELP_HELP,
};
/* clang-format on */

/* ------------------------------------------------------------------ */
/* sanitize-log                                                        */
/* ------------------------------------------------------------------ */

enum { SAN_RAE, SAN_HUMAN, SAN_RAW, NR_SAN_XOPTS };

static const struct xopt san_xopts[] = {
	[SAN_RAE] = { 'r', "rae", XOPT_FLAG, 0, false },
	[SAN_HUMAN] = { 'H', "human-readable", XOPT_FLAG, 0, false },
	[SAN_RAW] = { 'b', "raw-binary", XOPT_FLAG, 0, false },
};

static const char *sstat_str(uint16_t sstat)
{
	switch (SSTAT_STATUS(sstat)) {
	case 0:
		return "NVM Subsystem has never been sanitized.";
	case 1:
		return "Most Recent Sanitize Command Completed Successfully.";
	case 2:
		return "Sanitize in Progress.";
	case 3:
		return "Most Recent Sanitize Command Failed.";
	case 4:
		return "Most Recent Sanitize Command (No-Deallocate After "
		       "Sanitize) Completed Successfully.";
	default:
		return "Unknown";
	}
}

static int sanitize_json(const struct sanitize_log *s, const char *dev)
{
	struct json_writer w;
	char str[160];

	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	json_begin_object(&w, dev);
	json_uint(&w, "sprog", s->sprog);
	json_begin_object(&w, "sstat");
	json_uint(&w, "global_erased", !!(s->sstat & SSTAT_GLOBAL_ERASED));
	json_uint(&w, "no_cmplted_passes", SSTAT_PASSES(s->sstat));
	snprintf(str, sizeof(str), "(%u) %s", SSTAT_STATUS(s->sstat),
		 sstat_str(s->sstat));
	json_string(&w, "status", str);
	json_end_object(&w);
	json_uint(&w, "cdw10_info", s->scdw10);
	json_uint(&w, "time_over_write", s->eto);
	json_uint(&w, "time_block_erase", s->etbe);
	json_uint(&w, "time_crypto_erase", s->etce);
	json_uint(&w, "time_over_write_no_dealloc", s->etond);
	json_uint(&w, "time_block_erase_no_dealloc", s->etbend);
	json_uint(&w, "time_crypto_erase_no_dealloc", s->etcend);
	json_end_object(&w);
	json_end_object(&w);
	return finish_json(&w);
}

static void est_time(const char *text, uint32_t v)
{
	printf("%s:  %" PRIu32 "%s\n", text, v,
	       v == 0xffffffff ? " (No time period reported)" : "");
}

static void sanitize_text(const struct sanitize_log *s, bool human)
{
	unsigned int st = SSTAT_STATUS(s->sstat);

	printf("Sanitize Progress                      (SPROG) :  %u",
	       s->sprog);
	if (human && st == SSTAT_IN_PROGRESS)
		printf("\t(%f%%)\n", (double)s->sprog * 100 / 0x10000);
	else
		printf("\n");
	printf("Sanitize Status                        (SSTAT) :  %#x\n", st);
	if (human) {
		printf("\t[2:0]\t%s\n", sstat_str(s->sstat));
		printf("\t[7:3]\tNumber of completed passes if most recent "
		       "operation was overwrite:\t%u\n",
		       SSTAT_PASSES(s->sstat));
		printf("\t  [8]\t%s\n",
		       s->sstat & SSTAT_GLOBAL_ERASED ?
			       "Global Data Erased set: no NS LB in the NVM "
			       "subsystem has been written to and no PMR in "
			       "the NVM subsystem has been enabled" :
			       "Global Data Erased cleared: a NS LB in the "
			       "NVM subsystem has been written to or a PMR in "
			       "the NVM subsystem has been enabled");
	}
	printf("Sanitize Command Dword 10 Information (SCDW10) :  %#x\n",
	       s->scdw10);
	est_time("Estimated Time For Overwrite                   ", s->eto);
	est_time("Estimated Time For Block Erase                 ", s->etbe);
	est_time("Estimated Time For Crypto Erase                ", s->etce);
	est_time("Estimated Time For Overwrite (No-Deallocate)   ", s->etond);
	est_time("Estimated Time For Block Erase (No-Deallocate) ", s->etbend);
	est_time("Estimated Time For Crypto Erase (No-Deallocate)", s->etcend);
}

static int run_sanitize_log(struct args *a)
{
	struct log_req r = {
		.nsid = NVQ_NSID_ALL,
		.lid = LOG_SANITIZE,
		.rae = xhas(a, SAN_RAE),
	};
	struct sanitize_log s;
	struct nvq_ctrl *ctrl;
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	memset(&s, 0, sizeof(s));
	rc = get_log(ctrl, "sanitize status log", &r, &s, sizeof(s), NULL);
	nvq_close(ctrl);
	if (rc)
		return rc;
	if (raw_out(a, SAN_RAW))
		return write_raw(&s, sizeof(s));
	if (a->fmt == FMT_JSON) {
		return sanitize_json(&s, a->pos[0]);
	}
	sanitize_text(&s, xhas(a, SAN_HUMAN));
	return flush_stdout();
}

/* clang-format off */
const struct cmd sanitize_log_cmd = {
	.name = "sanitize-log",
	.run = run_sanitize_log,
	.opts = OPT_FMT | OPT_FMT_BIN,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = san_xopts,
	.nxopts = NR_SAN_XOPTS,
	.synopsis = "URI [-o normal|json|binary] [-H] [-r] [-b]",
	.summary =
		"Show the Sanitize Status log (log page 81h): progress, status\n"
		"and estimated times, in nvme-cli's names. The JSON object is\n"
		"keyed by the URI.\n",
	.help = HELP_URI HELP_FMT_BIN
		"  -H, --human-readable     decode SSTAT and the progress\n"
		"  -r, --rae                retain the asynchronous event\n"
		HELP_RAW_BINARY HELP_HELP,
};
/* clang-format on */

/* ------------------------------------------------------------------ */
/* get-log                                                             */
/* ------------------------------------------------------------------ */

enum {
	GL_LID,
	GL_LEN,
	GL_AEN,
	GL_LPO,
	GL_LSP,
	GL_LSI,
	GL_RAE,
	GL_UUID,
	GL_RAW,
	GL_CSI,
	GL_OT,
	NR_GL_XOPTS
};

/* nvme-cli 2.3's letters and names (nvme.c get_log) */
static const struct xopt gl_xopts[] = {
	[GL_LID] = { 'i', "log-id", XOPT_NUM, 0xff, false },
	[GL_LEN] = { 'l', "log-len", XOPT_NUM, 0xfffffffc, false },
	[GL_AEN] = { 'a', "aen", XOPT_NUM, UINT32_MAX, false },
	[GL_LPO] = { 'o', "lpo", XOPT_NUM, UINT64_MAX, false },
	[GL_LSP] = { 's', "lsp", XOPT_NUM, 0x7f, false },
	[GL_LSI] = { 'S', "lsi", XOPT_NUM, 0xffff, false },
	[GL_RAE] = { 'r', "rae", XOPT_FLAG, 0, false },
	[GL_UUID] = { 'U', "uuid-index", XOPT_NUM, 0x7f, false },
	[GL_RAW] = { 'b', "raw-binary", XOPT_FLAG, 0, false },
	[GL_CSI] = { 'y', "csi", XOPT_NUM, 0xff, false },
	[GL_OT] = { 'O', "ot", XOPT_FLAG, 0, false },
};

static int run_get_log(struct args *a)
{
	struct log_req r = {
		.nsid = a->has_nsid ? a->nsid : NVQ_NSID_ALL,
		.lpo = a->x[GL_LPO],
		.lsp = (uint8_t)a->x[GL_LSP],
		.lsi = (uint16_t)a->x[GL_LSI],
		.uuidx = (uint8_t)a->x[GL_UUID],
		.csi = (uint8_t)a->x[GL_CSI],
		.rae = xhas(a, GL_RAE),
		.ot = xhas(a, GL_OT),
	};
	struct nvq_ctrl *ctrl;
	uint64_t len;
	uint8_t *buf;
	char what[32];
	int rc;

	if (xhas(a, GL_AEN)) {
		/* nvme-cli: the log page of an event, 4096 bytes */
		if (xhas(a, GL_LID) || xhas(a, GL_LEN))
			return usage_error(a->cmd, "-a/--aen gives the log id "
						   "and length: not with "
						   "-i or -l");
		r.lid = (uint8_t)NVQ_AER_LOG_PAGE(a->x[GL_AEN]);
		len = 4096;
	} else {
		if (!xhas(a, GL_LID))
			return usage_error(a->cmd, "missing -i/--log-id");
		if (!xhas(a, GL_LEN))
			return usage_error(a->cmd, "missing -l/--log-len");
		r.lid = (uint8_t)a->x[GL_LID];
		len = a->x[GL_LEN];
	}
	if (!len || len % 4)
		return usage_error(a->cmd,
				   "-l/--log-len must be a non-zero multiple "
				   "of 4 (the log is read in dwords), not "
				   "%" PRIu64,
				   len);
	buf = calloc(1, (size_t)len);
	if (!buf)
		return fail("out of memory for %" PRIu64 " bytes", len);
	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc) {
		free(buf);
		return rc;
	}
	snprintf(what, sizeof(what), "log page %#x", r.lid);
	rc = get_log(ctrl, what, &r, buf, (size_t)len, NULL);
	nvq_close(ctrl);
	if (!rc) {
		if (xhas(a, GL_RAW)) {
			rc = write_raw(buf, (size_t)len);
		} else {
			printf("Device:%s log-id:%u namespace-id:%#x\n",
			       a->pos[0], r.lid, r.nsid);
			hex_dump(buf, (size_t)len);
			rc = flush_stdout();
		}
	}
	free(buf);
	return rc;
}

/* clang-format off */
const struct cmd get_log_cmd = {
	.name = "get-log",
	.run = run_get_log,
	.opts = OPT_NSID | OPT_NSID_ALL | OPT_NSID_ZERO,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = gl_xopts,
	.nxopts = NR_GL_XOPTS,
	.synopsis = "URI -i LID -l LEN [-n NSID] [-o LPO] [-s LSP] [-S LSI] "
		    "[-r] [-U N] [-y CSI] [-O] [-b]",
	.summary =
		"Read LEN bytes of log page LID and show them as a hex dump\n"
		"(nvme-cli's format) or raw (-b). More than one command carries\n"
		"is read in pieces at increasing offsets where the controller\n"
		"supports log page offsets (LPA bit 2), as libnvme does.\n",
	.help = HELP_URI
		"  -i, --log-id=LID         log page identifier, 0..0xff\n"
		"  -l, --log-len=LEN        bytes to read: a multiple of 4, not 0\n"
		"  -a, --aen=DW0            the log page of an asynchronous event\n"
		"                           (its completion dword 0), 4096 bytes;\n"
		"                           instead of -i and -l\n"
		"  -n, --namespace-id=NSID  namespace (default 0xffffffff)\n"
		"  -o, --lpo=OFFSET         log page offset in bytes (default 0)\n"
		"  -s, --lsp=LSP            log specific field, 0..127\n"
		"  -S, --lsi=LSI            log specific identifier, 0..0xffff\n"
		"  -r, --rae                retain the asynchronous event\n"
		"  -U, --uuid-index=N       UUID index, 0..127\n"
		"  -y, --csi=CSI            command set identifier (default 0,\n"
		"                           NVM)\n"
		"  -O, --ot                 offset type: -o is an index\n"
		"  -b, --raw-binary         the bytes as read\n"
		HELP_HELP HELP_NUMBERS,
};
/* clang-format on */
