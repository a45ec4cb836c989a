// SPDX-License-Identifier: MIT
/*
 * get-feature and set-feature: Get Features / Set Features through
 * nvq_admin(), with nvme-cli 2.3's options (-f -n -s -c -l -U -b -H for
 * get, -f -n -v -c -U -l -d -s for set) and its output lines, so that
 * scripts reading "get-feature:0x06 (Volatile Write Cache), Current
 * value:0x00000001" work unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define OPC_SET_FEATURES 0x09
#define OPC_GET_FEATURES 0x0a
#define SEL_CHANGED 8 /* nvme-cli's: current where it differs from default */
#define FEAT_DATA_MAX (1u << 20) /* -l: more is no feature's data */

/* Feature identifiers beyond 0Bh that nvq names (NVMe 2.0, Figure 317) */
enum {
	FID_AUTO_PST = 0x0c,
	FID_HOST_MEM_BUF = 0x0d,
	FID_TIMESTAMP = 0x0e,
	FID_KATO = 0x0f,
	FID_HCTM = 0x10,
	FID_NOPSC = 0x11,
	FID_RRL = 0x12,
	FID_PLM_CONFIG = 0x13,
	FID_PLM_WINDOW = 0x14,
	FID_LBA_STS_INTERVAL = 0x15,
	FID_HOST_BEHAVIOR = 0x16,
	FID_SANITIZE = 0x17,
	FID_ENDURANCE_EVT_CFG = 0x18,
	FID_IOCS_PROFILE = 0x19,
	FID_SPINUP_CONTROL = 0x1a,
	FID_FDP = 0x1d,
	FID_FDP_EVENTS = 0x1e,
	FID_ENH_CTRL_METADATA = 0x7d,
	FID_CTRL_METADATA = 0x7e,
	FID_NS_METADATA = 0x7f,
	FID_SW_PROGRESS = 0x80,
	FID_HOST_ID = 0x81,
	FID_RESV_MASK = 0x82,
	FID_RESV_PERSIST = 0x83,
	FID_WRITE_PROTECT = 0x84,
};

/* nvme-cli's names of the features */
static const char *feature_name(uint8_t fid)
{
	switch (fid) {
	case NVQ_FEAT_ARBITRATION:
		return "Arbitration";
	case NVQ_FEAT_POWER_MGMT:
		return "Power Management";
	case NVQ_FEAT_LBA_RANGE:
		return "LBA Range Type";
	case NVQ_FEAT_TEMP_THRESH:
		return "Temperature Threshold";
	case NVQ_FEAT_ERR_RECOVERY:
		return "Error Recovery";
	case NVQ_FEAT_VOLATILE_WC:
		return "Volatile Write Cache";
	case NVQ_FEAT_NUM_QUEUES:
		return "Number of Queues";
	case NVQ_FEAT_IRQ_COALESCE:
		return "Interrupt Coalescing";
	case NVQ_FEAT_IRQ_CONFIG:
		return "Interrupt Vector Configuration";
	case NVQ_FEAT_WRITE_ATOMIC:
		return "Write Atomicity Normal";
	case NVQ_FEAT_ASYNC_EVENT:
		return "Async Event Configuration";
	case FID_AUTO_PST:
		return "Autonomous Power State Transition";
	case FID_HOST_MEM_BUF:
		return "Host Memory Buffer";
	case FID_TIMESTAMP:
		return "Timestamp";
	case FID_KATO:
		return "Keep Alive Timer";
	case FID_HCTM:
		return "Host Controlled Thermal Management";
	case FID_NOPSC:
		return "Non-Operational Power State Config";
	case FID_RRL:
		return "Read Recovery Level";
	case FID_PLM_CONFIG:
		return "Predictable Latency Mode Config";
	case FID_PLM_WINDOW:
		return "Predictable Latency Mode Window";
	case FID_LBA_STS_INTERVAL:
		return "LBA Status Interval";
	case FID_HOST_BEHAVIOR:
		return "Host Behavior";
	case FID_SANITIZE:
		return "Sanitize";
	case FID_ENDURANCE_EVT_CFG:
		return "Endurance Event Group Configuration";
	case FID_IOCS_PROFILE:
		return "I/O Command Set Profile";
	case FID_SPINUP_CONTROL:
		return "Spinup Control";
	case FID_FDP:
		return "Flexible Direct Placement";
	case FID_FDP_EVENTS:
		return "Flexible Direct Placement Events";
	case FID_ENH_CTRL_METADATA:
		return "Enhanced Controller Metadata";
	case FID_CTRL_METADATA:
		return "Controller Metadata";
	case FID_NS_METADATA:
		return "Namespace Metadata";
	case FID_SW_PROGRESS:
		return "Software Progress";
	case FID_HOST_ID:
		return "Host Identifier";
	case FID_RESV_MASK:
		return "Reservation Notification Mask";
	case FID_RESV_PERSIST:
		return "Reservation Persistence";
	case FID_WRITE_PROTECT:
		return "Namespace Write Protect";
	}
	return "Unknown";
}

static const char *select_name(unsigned int sel)
{
	switch (sel) {
	case 0:
		return "Current";
	case 1:
		return "Default";
	case 2:
		return "Saved";
	case 3:
		return "Supported capabilities";
	case SEL_CHANGED:
		return "Changed";
	}
	return "Reserved";
}

/*
 * Bytes of data a feature transfers when -l is not given (libnvme's
 * table, which nvme-cli uses): 0 for the features whose value is all in
 * CDW11 / DW0 and for those nvq does not know.
 */
static uint32_t feature_data_len(uint8_t fid, uint32_t cdw11, bool set)
{
	switch (fid) {
	case NVQ_FEAT_LBA_RANGE:
	case FID_ENH_CTRL_METADATA:
	case FID_CTRL_METADATA:
	case FID_NS_METADATA:
		return 4096;
	case FID_HOST_MEM_BUF:
		return set ? 0 : 4096; /* attributes: read only */
	case FID_AUTO_PST:
		return 256;
	case FID_PLM_CONFIG:
	case FID_HOST_BEHAVIOR:
		return 512;
	case FID_TIMESTAMP:
		return 8;
	case FID_HOST_ID:
		return cdw11 & 1 ? 16 : 8; /* EXHID: 128-bit host id */
	}
	return 0;
}

static long kelvin_to_celsius(uint32_t k)
{
	return (long)k - 273;
}

static const char *aen(uint32_t result, uint32_t bit)
{
	return result & bit ? "Send async event" : "Do not send async event";
}

static void show_lba_ranges(const uint8_t *buf, uint32_t len, uint32_t nr)
{
	for (uint32_t i = 0; i <= nr && (i + 1) * 64 <= len; i++) {
		const uint8_t *e = buf + i * 64;
		uint64_t slba, nlb;
		uint8_t type = e[0], attr = e[1];
		const char *tname;

		memcpy(&slba, e + 16, 8);
		memcpy(&nlb, e + 24, 8);
		switch (type) {
		case 1:
			tname = "Filesystem";
			break;
		case 2:
			tname = "RAID";
			break;
		case 3:
			tname = "Cache";
			break;
		case 4:
			tname = "Page / Swap file";
			break;
		default:
			tname = type <= 0x7f ? "Reserved" : "Vendor Specific";
		}
		printf("\ttype       : %#x - %s\n", type, tname);
		printf("\tattributes : %#x - %s, %s\n", attr,
		       attr & 1 ? "LBA range may be overwritten" :
				  "LBA range should not be overwritten",
		       attr & 2 ? "LBA range should be hidden from the "
				  "OS/EFI/BIOS" :
				  "LBA range should be visible from the "
				  "OS/EFI/BIOS");
		printf("\tslba       : %#" PRIx64 "\n", slba);
		printf("\tnlb        : %#" PRIx64 "\n", nlb);
		printf("\tguid       : ");
		for (int j = 0; j < 16; j++)
			printf("%02x", e[32 + j]);
		printf("\n");
	}
}

/* -H: the fields of a feature's value in nvme-cli's words. */
static void show_fields(uint8_t fid, uint32_t r, const uint8_t *buf,
			uint32_t len)
{
	static const char *const wl_hints[] = {
		"No Workload",
		"Extended Idle Period with a Burst of Random Writes",
		"Heavy Sequential Writes",
	};
	static const char *const thsel[] = { "Over Temperature Threshold",
					     "Under Temperature Threshold" };
	unsigned int f;

	switch (fid) {
	case NVQ_FEAT_ARBITRATION:
		printf("\tHigh Priority Weight   (HPW): %u\n", (r >> 24) + 1);
		printf("\tMedium Priority Weight (MPW): %u\n",
		       ((r >> 16) & 0xff) + 1);
		printf("\tLow Priority Weight    (LPW): %u\n",
		       ((r >> 8) & 0xff) + 1);
		printf("\tArbitration Burst       (AB): ");
		if ((r & 7) == 7)
			printf("No limit\n");
		else
			printf("%u\n", 1u << (r & 7));
		break;
	case NVQ_FEAT_POWER_MGMT:
		f = (r >> 5) & 7;
		printf("\tWorkload Hint (WH): %u - %s\n", f,
		       f < ARRAY_SIZE(wl_hints) ? wl_hints[f] : "Reserved");
		printf("\tPower State   (PS): %u\n", r & 0x1f);
		break;
	case NVQ_FEAT_LBA_RANGE:
		f = r & 0x3f;
		printf("\tNumber of LBA Ranges (NUM): %u\n", f + 1);
		if (buf)
			show_lba_ranges(buf, len, f);
		break;
	case NVQ_FEAT_TEMP_THRESH:
		f = (r >> 20) & 3;
		printf("\tThreshold Type Select         (THSEL): %u - %s\n", f,
		       f < ARRAY_SIZE(thsel) ? thsel[f] : "Reserved");
		f = (r >> 16) & 0xf;
		if (!f)
			printf("\tThreshold Temperature Select (TMPSEL): %u - "
			       "Composite Temperature\n",
			       f);
		else if (f <= 8)
			printf("\tThreshold Temperature Select (TMPSEL): %u - "
			       "Temperature Sensor %u\n",
			       f, f);
		else
			printf("\tThreshold Temperature Select (TMPSEL): %u - "
			       "Reserved\n",
			       f);
		printf("\tTemperature Threshold         (TMPTH): %ld°C "
		       "(%u Kelvin)\n",
		       kelvin_to_celsius(r & 0xffff), r & 0xffff);
		break;
	case NVQ_FEAT_ERR_RECOVERY:
		printf("\tDeallocated or Unwritten Logical Block Error Enable "
		       "(DULBE): %s\n",
		       r & 0x10000 ? "Enabled" : "Disabled");
		printf("\tTime Limited Error Recovery                          "
		       "(TLER): %u ms\n",
		       (r & 0xffff) * 100);
		break;
	case NVQ_FEAT_VOLATILE_WC:
		printf("\tVolatile Write Cache Enable (WCE): %s\n",
		       r & 1 ? "Enabled" : "Disabled");
		break;
	case NVQ_FEAT_NUM_QUEUES:
		/* both counts are 0-based in DW0 */
		printf("\tNumber of IO Completion Queues "
		       "Allocated (NCQA): %u\n",
		       (r >> 16) + 1);
		printf("\tNumber of IO Submission Queues "
		       "Allocated (NSQA): %u\n",
		       (r & 0xffff) + 1);
		break;
	case NVQ_FEAT_IRQ_COALESCE:
		printf("\tAggregation Time     (TIME): %u usec\n",
		       ((r >> 8) & 0xff) * 100);
		printf("\tAggregation Threshold (THR): %u\n", (r & 0xff) + 1);
		break;
	case NVQ_FEAT_IRQ_CONFIG:
		printf("\tCoalescing Disable (CD): %s\n",
		       r & 0x10000 ? "True" : "False");
		printf("\tInterrupt Vector   (IV): %u\n", r & 0xffff);
		break;
	case NVQ_FEAT_WRITE_ATOMIC:
		printf("\tDisable Normal (DN): %s\n", r & 1 ? "True" : "False");
		break;
	case NVQ_FEAT_ASYNC_EVENT:
		printf("\tDiscovery Log Page Change Notices                   "
		       "      : %s\n",
		       aen(r, 1u << 31));
		printf("\tEndurance Group Event Aggregate Log Change Notices  "
		       "      : %s\n",
		       aen(r, 1u << 14));
		printf("\tLBA Status Information Notices                      "
		       "      : %s\n",
		       aen(r, 1u << 13));
		printf("\tPredictable Latency Event Aggregate Log Change "
		       "Notices    : %s\n",
		       aen(r, 1u << 12));
		printf("\tAsymmetric Namespace Access Change Notices          "
		       "      : %s\n",
		       aen(r, 1u << 11));
		printf("\tTelemetry Log Notices                               "
		       "      : %s\n",
		       aen(r, 1u << 10));
		printf("\tFirmware Activation Notices                         "
		       "      : %s\n",
		       aen(r, 1u << 9));
		printf("\tNamespace Attribute Notices                         "
		       "      : %s\n",
		       aen(r, 1u << 8));
		printf("\tSMART / Health Critical Warnings                    "
		       "      : %s\n",
		       aen(r, 0xff));
		break;
	case FID_AUTO_PST:
		printf("\tAutonomous Power State Transition Enable (APSTE): "
		       "%s\n",
		       r & 1 ? "Enabled" : "Disabled");
		break;
	case FID_KATO:
		printf("\tKeep Alive Timeout (KATO) in milliseconds: %u\n", r);
		break;
	case FID_HCTM:
		printf("\tThermal Management Temperature 1 (TMT1) : %u Kelvin "
		       "(%ld°C)\n",
		       r >> 16, kelvin_to_celsius(r >> 16));
		printf("\tThermal Management Temperature 2 (TMT2) : %u Kelvin "
		       "(%ld°C)\n",
		       r & 0xffff, kelvin_to_celsius(r & 0xffff));
		break;
	default:
		/* no decoder: the data as it came, if any */
		if (buf && len)
			hex_dump(buf, len);
		break;
	}
}

/* ---------------------------------------------------------------- */
/* get-feature */

enum {
	G_FID,
	G_NSID,
	G_SEL,
	G_LEN,
	G_RAW,
	G_CDW11,
	G_UUID,
	G_HUMAN,
};

static const struct xopt get_feature_xopts[] = {
	[G_FID] = { 'f', "feature-id", XOPT_NUM, 0xff, false },
	[G_NSID] = { 'n', "namespace-id", XOPT_NUM, UINT32_MAX, false },
	[G_SEL] = { 's', "sel", XOPT_NUM, SEL_CHANGED, false },
	[G_LEN] = { 'l', "data-len", XOPT_NUM, FEAT_DATA_MAX, false },
	[G_RAW] = { 'b', "raw-binary", XOPT_FLAG, 0, false },
	[G_CDW11] = { 'c', "cdw11", XOPT_NUM, UINT32_MAX, false },
	[G_UUID] = { 'U', "uuid-index", XOPT_NUM, 127, false },
	[G_HUMAN] = { 'H', "human-readable", XOPT_FLAG, 0, false },
};

struct feat_get {
	struct nvq_ctrl *ctrl;
	uint32_t nsid, cdw11, len;
	uint8_t fid, uuid;
	bool raw, human, len_given;
};

/* One Get Features; *@buf (malloc'ed, or NULL) holds its data. */
static int get_one(const struct feat_get *g, uint8_t fid, unsigned int sel,
		   uint8_t **buf, uint32_t *len, uint32_t *result,
		   uint16_t *status)
{
	struct nvq_sqe cmd = { 0 };

	*len = g->len_given ? g->len : feature_data_len(fid, g->cdw11, false);
	if (sel == NVQ_FEAT_SEL_SUPPORTED)
		*len = 0; /* capabilities are all in DW0 */
	*buf = NULL;
	if (*len) {
		*buf = calloc(1, *len);
		if (!*buf)
			return -ENOMEM;
	}
	cmd.opcode = OPC_GET_FEATURES;
	cmd.nsid = g->nsid;
	cmd.cdw10 = fid | (sel & 7) << NVQ_FEAT_SEL_SHIFT;
	cmd.cdw11 = g->cdw11;
	cmd.cdw14 = g->uuid;
	return nvq_admin(g->ctrl, &cmd, *buf, *len, result, status);
}

static void print_feature(const struct feat_get *g, uint8_t fid,
			  unsigned int sel, uint32_t result, const uint8_t *buf,
			  uint32_t len)
{
	if (g->raw && buf) {
		fwrite(buf, 1, len, stdout);
		return;
	}
	/* nvme-cli's widths: "0x06" for a FID, "00000000" for a zero value */
	printf("get-feature:%#0*x (%s), %s value:%#0*x\n", fid ? 4 : 2, fid,
	       feature_name(fid), select_name(sel), result ? 10 : 8, result);
	if (sel == NVQ_FEAT_SEL_SUPPORTED) {
		if (result & 1)
			printf("  Feature is saveable\n");
		if (result & 2)
			printf("  Feature is per-namespace\n");
		if (result & 4)
			printf("  Feature is changeable\n");
	} else if (g->human) {
		show_fields(fid, result, buf, len);
	} else if (buf) {
		hex_dump(buf, len);
	}
}

static bool invalid_field(int ret, uint16_t status)
{
	return ret == -EIO && (status & NVQ_STATUS_CODE_MASK) ==
				      NVQ_STATUS_MAKE(0, NVQ_SC_INVALID_FIELD);
}

/*
 * One feature with SEL @sel, or with nvme-cli's SEL 8 its current value
 * where it differs from the default. Returns 0, or the failed call's
 * result with *@status set.
 */
static int show_feature(const struct feat_get *g, uint8_t fid, unsigned int sel,
			uint16_t *status)
{
	uint8_t *buf, *dbuf = NULL;
	uint32_t len, dlen, result = 0, dres = 0;
	int ret;

	ret = get_one(g, fid, sel == SEL_CHANGED ? 0 : sel, &buf, &len, &result,
		      status);
	if (!ret && sel == SEL_CHANGED) {
		uint16_t dst;
		int dret = get_one(g, fid, NVQ_FEAT_SEL_DEFAULT, &dbuf, &dlen,
				   &dres, &dst);

		/* unchanged: the same value and the same data */
		if (!dret && dres == result &&
		    (!buf || !memcmp(buf, dbuf, len))) {
			free(buf);
			free(dbuf);
			return 0;
		}
	}
	if (!ret)
		print_feature(g, fid, sel, result, buf, len);
	free(buf);
	free(dbuf);
	return ret;
}

static int run_get_feature(struct args *a)
{
	struct feat_get g = { 0 };
	unsigned int sel = xhas(a, G_SEL) ? (unsigned int)a->x[G_SEL] : 0;
	unsigned int first = 0, last = 0xff;
	char msg[160];
	uint16_t status = 0;
	int ret = 0, rc;

	if (sel > NVQ_FEAT_SEL_SUPPORTED && sel != SEL_CHANGED)
		return usage_error(a->cmd,
				   "-s/--sel %u is reserved (0 current, 1 "
				   "default, 2 saved, 3 supported "
				   "capabilities, 8 changed)",
				   sel);
	g.fid = (uint8_t)a->x[G_FID];
	g.nsid = (uint32_t)a->x[G_NSID];
	g.cdw11 = (uint32_t)a->x[G_CDW11];
	g.len = (uint32_t)a->x[G_LEN];
	g.len_given = xhas(a, G_LEN);
	g.uuid = (uint8_t)a->x[G_UUID];
	g.raw = a->x[G_RAW];
	g.human = a->x[G_HUMAN];
	/* as nvme-cli: no -f (or -f 0) walks every feature */
	if (g.fid)
		first = last = g.fid;

	rc = open_ctrl(a->pos[0], &g.ctrl);
	if (rc)
		return rc;
	for (unsigned int fid = first; fid <= last; fid++) {
		ret = show_feature(&g, (uint8_t)fid, sel, &status);
		/* walking: what the device does not support is skipped */
		if (ret && (first == last || !invalid_field(ret, status))) {
			if (ret == -EIO)
				show_nvme_status(status);
			fail("get-feature %#04x (%s): %s", fid,
			     feature_name((uint8_t)fid),
			     io_msg(ret, status, msg, sizeof(msg)));
			nvq_close(g.ctrl);
			return EXIT_FAIL;
		}
	}
	nvq_close(g.ctrl);
	return flush_stdout();
}

/* clang-format off */
const struct cmd get_feature_cmd = {
	.name = "get-feature",
	.run = run_get_feature,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = get_feature_xopts,
	.nxopts = ARRAY_SIZE(get_feature_xopts),
	.synopsis = "URI [-f FID] [-n NSID] [-s SEL] [-c CDW11] [-l LEN] "
		    "[-U UUID] [-b|-H]",
	.summary =
		"Read a feature (Get Features), as nvme-cli's get-feature: its\n"
		"value (CDW0 of the completion) and its data, if it has any.\n"
		"Without -f every feature is read; those the controller rejects\n"
		"with Invalid Field in Command are skipped.\n",
	.help = HELP_URI
		"  -f, --feature-id=FID     feature identifier (default: all)\n"
		"  -n, --namespace-id=NSID  namespace of a per-namespace feature\n"
		"                           (default 0: the controller)\n"
		"  -s, --sel=SEL            0 current (default), 1 default, 2 saved,\n"
		"                           3 supported capabilities, 8 changed\n"
		"                           (current where not the default)\n"
		"  -c, --cdw11=N            feature specific dword 11 (e.g. the\n"
		"                           vector of feature 09h, THSEL of 04h)\n"
		"  -l, --data-len=LEN       bytes of data to read (default: the\n"
		"                           feature's, e.g. 4096 for 03h)\n"
		"  -U, --uuid-index=N       UUID index (CDW14), 0..127\n"
		"  -b, --raw-binary         the feature's data as raw bytes\n"
		"  -H, --human-readable     decode the value's fields\n"
		HELP_HELP HELP_NUMBERS,
};
/* clang-format on */

/* ---------------------------------------------------------------- */
/* set-feature */

enum {
	S_NSID,
	S_FID,
	S_VALUE,
	S_CDW12,
	S_UUID,
	S_LEN,
	S_DATA,
	S_SAVE,
};

static const struct xopt set_feature_xopts[] = {
	[S_NSID] = { 'n', "namespace-id", XOPT_NUM, UINT32_MAX, false },
	[S_FID] = { 'f', "feature-id", XOPT_NUM, 0xff, true },
	[S_VALUE] = { 'v', "value", XOPT_NUM, UINT64_MAX, false },
	[S_CDW12] = { 'c', "cdw12", XOPT_NUM, UINT32_MAX, false },
	[S_UUID] = { 'U', "uuid-index", XOPT_NUM, 127, false },
	[S_LEN] = { 'l', "data-len", XOPT_NUM, FEAT_DATA_MAX, false },
	[S_DATA] = { 'd', "data", XOPT_STR, 0, false },
	[S_SAVE] = { 's', "save", XOPT_FLAG, 0, false },
};

/* All of @len bytes of @path (- or none: standard input) into @buf. */
static int read_feature_data(const char *path, uint8_t *buf, uint32_t len)
{
	int fd = STDIN_FILENO;
	size_t got = 0;

	if (path && strcmp(path, "-")) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return fail("cannot open '%s': %s", path,
				    strerror(errno));
	}
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n ? errno : 0;

			if (fd != STDIN_FILENO)
				close(fd);
			if (err)
				return fail("cannot read '%s': %s",
					    path ? path : "standard input",
					    strerror(err));
			return fail("%s holds %zu bytes, the feature's data "
				    "is %u (-l/--data-len)",
				    path ? path : "standard input", got, len);
		}
		got += (size_t)n;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return 0;
}

static int run_set_feature(struct args *a)
{
	uint8_t fid = (uint8_t)a->x[S_FID];
	uint64_t value = a->x[S_VALUE];
	uint32_t cdw12 = (uint32_t)a->x[S_CDW12], len, result = 0;
	bool save = a->x[S_SAVE];
	struct nvq_sqe cmd = { 0 };
	struct nvq_ctrl *ctrl;
	uint8_t *buf = NULL;
	uint16_t status = 0;
	char msg[160];
	int ret, rc;

	if (!fid)
		return usage_error(a->cmd, "feature identifier 0 is reserved");
	if (!xhas(a, S_VALUE) && !xhas(a, S_DATA))
		return usage_error(a->cmd, "missing -v/--value (or -d/--data "
					   "for a feature with data)");
	/* a 64-bit value only for the Timestamp's data, as in nvme-cli */
	if (value > UINT32_MAX && fid != FID_TIMESTAMP)
		return usage_error(a->cmd,
				   "-v/--value %#" PRIx64 " does not fit in "
				   "CDW11 (32 bits)",
				   value);
	if (value >> 48 && fid == FID_TIMESTAMP)
		return usage_error(a->cmd, "-v/--value: a timestamp has 48 "
					   "bits");
	len = xhas(a, S_LEN) ? (uint32_t)a->x[S_LEN] :
			       feature_data_len(fid, (uint32_t)value, true);
	if (xhas(a, S_DATA) && !len)
		return usage_error(a->cmd,
				   "feature %#04x (%s) has no data: give "
				   "-l/--data-len with -d/--data",
				   fid, feature_name(fid));
	if (len) {
		buf = calloc(1, len);
		if (!buf)
			return fail("no memory for %u bytes of feature data",
				    len);
		if (fid == FID_TIMESTAMP && value && !xhas(a, S_DATA)) {
			for (int i = 0; i < 6 && (uint32_t)i < len; i++)
				buf[i] = (uint8_t)(value >> (8 * i));
		} else {
			rc = read_feature_data(a->xs[S_DATA], buf, len);
			if (rc) {
				free(buf);
				return rc;
			}
		}
	}

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc) {
		free(buf);
		return rc;
	}
	cmd.opcode = OPC_SET_FEATURES;
	cmd.nsid = (uint32_t)a->x[S_NSID];
	cmd.cdw10 = fid | (save ? NVQ_FEAT_SV : 0);
	cmd.cdw11 = (uint32_t)value;
	cmd.cdw12 = cdw12;
	cmd.cdw14 = (uint32_t)a->x[S_UUID];
	ret = nvq_admin(ctrl, &cmd, buf, len, &result, &status);
	nvq_close(ctrl);
	if (ret) {
		if (ret == -EIO)
			show_nvme_status(status);
		free(buf);
		return fail("set-feature %#04x (%s): %s", fid,
			    feature_name(fid),
			    io_msg(ret, status, msg, sizeof(msg)));
	}
	printf("set-feature:%#0*x (%s), value:%#0*" PRIx64 ", cdw12:%#0*x, "
	       "save:%#x\n",
	       fid ? 4 : 2, fid, feature_name(fid), value ? 10 : 8, value,
	       cdw12 ? 10 : 8, cdw12, save);
	if (buf)
		hex_dump(buf, len);
	free(buf);
	return flush_stdout();
}

/* clang-format off */
const struct cmd set_feature_cmd = {
	.name = "set-feature",
	.run = run_set_feature,
	.min_pos = 1,
	.max_pos = 1,
	.xopts = set_feature_xopts,
	.nxopts = ARRAY_SIZE(set_feature_xopts),
	.synopsis = "URI -f FID -v VALUE [-n NSID] [-c CDW12] [-s] "
		    "[-d FILE [-l LEN]]",
	.summary =
		"Change a feature (Set Features), as nvme-cli's set-feature.\n"
		"The emulator (emu:) is a new controller each run: what is set\n"
		"lasts as long as the command.\n",
	.help = HELP_URI
		"  -f, --feature-id=FID     feature identifier (required)\n"
		"  -v, --value=N            the new value (CDW11); for the\n"
		"                           Timestamp (0Eh) its 48-bit data\n"
		"  -n, --namespace-id=NSID  namespace of a per-namespace feature\n"
		"                           (default 0: the controller)\n"
		"  -c, --cdw12=N            feature specific dword 12\n"
		"  -s, --save               save the value across resets (SV);\n"
		"                           refused for a feature not saveable\n"
		"  -d, --data=FILE          the feature's data (- or none: standard\n"
		"                           input), for a feature that has data\n"
		"  -l, --data-len=LEN       bytes of data (default: the feature's)\n"
		"  -U, --uuid-index=N       UUID index (CDW14), 0..127\n"
		HELP_HELP HELP_NUMBERS,
};
/* clang-format on */
