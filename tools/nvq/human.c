// SPDX-License-Identifier: MIT
/*
 * id-ctrl -H / id-ns -H: the bit fields of an Identify field, one line a
 * field ("  [3:3] : 0x1\tNS Management and Attachment Supported") under
 * the field's own line, as nvme-cli 2.3 prints them, so that the two
 * outputs diff line for line. The meanings are the NVMe Base 2.0 and NVM
 * Command Set 1.0 ones; each table below lists a field's bits from the
 * most significant down, with nvme-cli's wording and column positions.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum bit_kind {
	B_SUP, /* a, "Not " when 0, b: "<a>[Not ]<b>" */
	B_ALT, /* a when set, b when 0 */
	B_RSVD, /* "Reserved", only when not 0 */
	B_VAL, /* the value, then a */
	B_TAB, /* tab[value] */
	B_ZB, /* "N (0's based)\t<a>" */
	B_POW, /* "<a> (2^value)" */
	B_TEMP, /* Kelvin: "N°C (N Kelvin)\t<a>" */
	B_SGL, /* B_SUP, shown only when SGLs are supported or it is set */
	B_SGLSP, /* SGLS bits 1:0 */
	B_FPI, /* FPI bits 6:0, shown when FPI is not 0 */
};

struct bitf {
	const char *pos; /* "  [3:3] : " as nvme-cli prints it */
	unsigned char lo, width, kind;
	const char *a, *b;
	const char *const *tab; /* B_TAB: 1 << width entries */
};

struct decoder {
	const char *name;
	const struct bitf *bits;
	unsigned int n;
	bool no_blank; /* nvme-cli ends cntrltype without an empty line */
};

/* clang-format off */
#define SUP(p, lo, w, a, b) { p, lo, w, B_SUP, a, b, NULL }
#define ALT(p, lo, w, a, b) { p, lo, w, B_ALT, a, b, NULL }
#define RSVD(p, lo, w) { p, lo, w, B_RSVD, NULL, NULL, NULL }
#define VAL(p, lo, w, a) { p, lo, w, B_VAL, a, NULL, NULL }
#define TAB(p, lo, w, t) { p, lo, w, B_TAB, NULL, NULL, t }
#define SPECIAL(p, lo, w, k, a) { p, lo, w, k, a, NULL, NULL }
#define S1(bit, a) SUP("  [" #bit ":" #bit "] : ", bit, 1, a, "Supported")
/* clang-format on */

static const struct bitf cmic[] = {
	RSVD("  [7:4] : ", 4, 4),
	ALT("  [3:3] : ", 3, 1, "ANA supported", "ANA not supported"),
	ALT("  [2:2] : ", 2, 1, "SR-IOV", "PCI"),
	ALT("  [1:1] : ", 1, 1, "Multi Controller", "Single Controller"),
	ALT("  [0:0] : ", 0, 1, "Multi Port", "Single Port"),
};

static const struct bitf oaes[] = {
	S1(31, "Discovery Log Change Notice "),
	RSVD("  [30:28] : ", 28, 3),
	S1(27, "Zone Descriptor Changed Notices "),
	RSVD("  [26:16] : ", 16, 11),
	S1(15, "Normal NSS Shutdown Event "),
	S1(14, "Endurance Group Event Aggregate Log Page Change Notice "),
	S1(13, "LBA Status Information Notices "),
	S1(12, "Predictable Latency Event Aggregate Log Change Notices "),
	S1(11, "Asymmetric Namespace Access Change Notices "),
	RSVD("  [10:10] : ", 10, 1),
	S1(9, "Firmware Activation Notices "),
	S1(8, "Namespace Attribute Changed Event "),
	RSVD("  [7:0] : ", 0, 8),
};

static const struct bitf ctratt[] = {
	RSVD(" [31:20] : ", 20, 12),
	S1(19, "Flexible Data Placement "),
	RSVD("  [18:16] : ", 16, 3),
	S1(15, "Extended LBA Formats "),
	S1(14, "Delete NVM Set "),
	S1(13, "Delete Endurance Group "),
	S1(12, "Variable Capacity Management "),
	S1(11, "Fixed Capacity Management "),
	S1(10, "Multi Domain Subsystem "),
	S1(9, "UUID List "),
	S1(8, "SQ Associations "),
	S1(7, "Namespace Granularity "),
	S1(6, "Traffic Based Keep Alive "),
	S1(5, "Predictable Latency Mode "),
	S1(4, "Endurance Groups "),
	S1(3, "Read Recovery Levels "),
	S1(2, "NVM Sets "),
	S1(1, "Non-Operational Power State Permissive "),
	S1(0, "128-bit Host Identifier "),
};

static const char *const cntrltype_tab[] = {
	"Controller type not reported",
	"I/O Controller",
	"Discovery Controller",
	"Administrative Controller",
};

static const struct bitf cntrltype[] = {
	VAL("  [7:2] : ", 2, 6, "Reserved"),
	TAB("  [1:0] : ", 0, 2, cntrltype_tab),
};

static const struct bitf nvmsr[] = {
	RSVD(" [7:2] : ", 2, 6),
	SUP("  [1:1] : ", 1, 1, "NVM subsystem ", "part of an Enclosure"),
	SUP("  [0:0] : ", 0, 1, "NVM subsystem ", "part of an Storage Device"),
};

static const struct bitf vwci[] = {
	ALT("  [7:7] : ", 7, 1, "VPD Write Cycles Remaining field is valid.",
	    "VPD Write Cycles Remaining field is Not valid."),
	VAL("  [6:0] : ", 0, 7, "VPD Write Cycles Remaining "),
};

static const struct bitf mec[] = {
	RSVD(" [7:2] : ", 2, 6),
	SUP("  [1:1] : ", 1, 1, "NVM subsystem ",
	    "contains a Management Endpoint on a PCIe port"),
	SUP("  [0:0] : ", 0, 1, "NVM subsystem ",
	    "contains a Management Endpoint on an SMBus/I2C port"),
};

static const struct bitf oacs[] = {
	RSVD(" [15:11] : ", 11, 5),
	S1(10, "Lockdown Command and Feature "),
	S1(9, "Get LBA Status Capability "),
	S1(8, "Doorbell Buffer Config "),
	S1(7, "Virtualization Management "),
	S1(6, "NVMe-MI Send and Receive "),
	S1(5, "Directives "),
	S1(4, "Device Self-test "),
	S1(3, "NS Management and Attachment "),
	S1(2, "FW Commit and Download "),
	S1(1, "Format NVM "),
	S1(0, "Security Send and Receive "),
};

static const struct bitf frmw[] = {
	RSVD("  [7:6] : ", 6, 2),
	S1(5, "Multiple FW or Boot Update Detection "),
	S1(4, "Firmware Activate Without Reset "),
	VAL("  [3:1] : ", 1, 3, "Number of Firmware Slots"),
	ALT("  [0:0] : ", 0, 1, "Firmware Slot 1 Read-Only",
	    "Firmware Slot 1 Read/Write"),
};

static const struct bitf lpa[] = {
	RSVD("  [7:7] : ", 7, 1),
	S1(6, "Telemetry Log Data Area 4 "),
	S1(5, "LID 0x0, Scope of each command in LID 0x5, 0x12, 0x13 "),
	S1(4, "Persistent Event log "),
	S1(3, "Telemetry host/controller initiated log page "),
	S1(2, "Extended data for Get Log Page "),
	S1(1, "Command Effects Log Page "),
	S1(0, "SMART/Health Log Page per NS "),
};

static const struct bitf elpe[] = {
	SPECIAL("  [7:0] : ", 0, 8, B_ZB, "Error Log Page Entries (ELPE)"),
};

static const struct bitf npss[] = {
	SPECIAL("  [7:0] : ", 0, 8, B_ZB,
		"Number of Power States Support (NPSS)"),
};

static const struct bitf avscc[] = {
	RSVD("  [7:1] : ", 1, 7),
	ALT("  [0:0] : ", 0, 1,
	    "Admin Vendor Specific Commands uses NVMe Format",
	    "Admin Vendor Specific Commands uses Vendor Specific Format"),
};

static const struct bitf apsta[] = {
	RSVD("  [7:1] : ", 1, 7),
	S1(0, "Autonomous Power State Transitions "),
};

#define TEMP(name, text)                                                   \
	static const struct bitf name[] = {                                \
		SPECIAL(" [15:0] : ", 0, 16, B_TEMP, text " (" #name ")"), \
	}
TEMP(WCTEMP, "Warning Composite Temperature Threshold");
TEMP(CCTEMP, "Critical Composite Temperature Threshold");
TEMP(MNTMT, "Minimum Thermal Management Temperature");
TEMP(MXTMT, "Maximum Thermal Management Temperature");

static const struct bitf rpmbs[] = {
	VAL(" [31:24]: ", 24, 8, "Access Size"),
	VAL(" [23:16]: ", 16, 8, "Total Size"),
	RSVD(" [15:6] : ", 6, 10),
	VAL("  [5:3] : ", 3, 3, "Authentication Method"),
	VAL("  [2:0] : ", 0, 3, "Number of RPMB Units"),
};

static const struct bitf hctma[] = {
	RSVD(" [15:1] : ", 1, 15),
	S1(0, "Host Controlled Thermal Management "),
};

static const char *const nodmmas_tab[] = {
	"Additional media modification after sanitize operation completes "
	"successfully is not defined",
	"Media is not additionally modified after sanitize operation "
	"completes successfully",
	"Media is additionally modified after sanitize operation completes "
	"successfully",
	"Reserved",
};

static const struct bitf sanicap[] = {
	TAB("  [31:30] : ", 30, 2, nodmmas_tab),
	/* NDI set: the No-Deallocate After Sanitize bit is inhibited */
	ALT("  [29:29] : ", 29, 1,
	    "No-Deallocate After Sanitize bit in Sanitize command Not "
	    "Supported",
	    "No-Deallocate After Sanitize bit in Sanitize command Supported"),
	RSVD("  [28:3] : ", 3, 26),
	SUP("    [2:2] : ", 2, 1, "Overwrite Sanitize Operation ", "Supported"),
	SUP("    [1:1] : ", 1, 1, "Block Erase Sanitize Operation ",
	    "Supported"),
	SUP("    [0:0] : ", 0, 1, "Crypto Erase Sanitize Operation ",
	    "Supported"),
};

static const struct bitf anacap[] = {
	S1(7, "Non-zero group ID "),
	ALT("  [6:6] : ", 6, 1, "Group ID does not change",
	    "Group ID does change"),
	RSVD(" [5:5] : ", 5, 1),
	S1(4, "ANA Change state "),
	S1(3, "ANA Persistent Loss state "),
	S1(2, "ANA Inaccessible state "),
	S1(1, "ANA Non-optimized state "),
	S1(0, "ANA Optimized state "),
};

static const struct bitf sqes[] = {
	SPECIAL("  [7:4] : ", 4, 4, B_POW, "Max SQ Entry Size"),
	SPECIAL("  [3:0] : ", 0, 4, B_POW, "Min SQ Entry Size"),
};

static const struct bitf cqes[] = {
	SPECIAL("  [7:4] : ", 4, 4, B_POW, "Max CQ Entry Size"),
	SPECIAL("  [3:0] : ", 0, 4, B_POW, "Min CQ Entry Size"),
};

static const struct bitf oncs[] = {
	RSVD(" [15:9] : ", 9, 7),
	S1(8, "Copy "),
	S1(7, "Verify "),
	S1(6, "Timestamp "),
	S1(5, "Reservations "),
	S1(4, "Save and Select "),
	S1(3, "Write Zeroes "),
	S1(2, "Data Set Management "),
	S1(1, "Write Uncorrectable "),
	S1(0, "Compare "),
};

static const struct bitf fuses[] = {
	RSVD(" [15:1] : ", 1, 15),
	S1(0, "Fused Compare and Write "),
};

static const struct bitf fna[] = {
	RSVD("  [7:4] : ", 4, 4),
	/* FNVMBS set: a format with NSID FFFFFFFFh is not supported */
	ALT("  [3:3] : ", 3, 1,
	    "Format NVM Broadcast NSID (FFFFFFFFh) Not Supported",
	    "Format NVM Broadcast NSID (FFFFFFFFh) Supported"),
	ALT("  [2:2] : ", 2, 1,
	    "Crypto Erase Supported as part of Secure Erase",
	    "Crypto Erase Not Supported as part of Secure Erase"),
	ALT("  [1:1] : ", 1, 1, "Crypto Erase Applies to All Namespace(s)",
	    "Crypto Erase Applies to Single Namespace(s)"),
	ALT("  [0:0] : ", 0, 1, "Format Applies to All Namespace(s)",
	    "Format Applies to Single Namespace(s)"),
};

static const char *const flush_tab[] = {
	"Support for the NSID field set to FFFFFFFFh is not indicated",
	"Reserved",
	"The Flush command does not support NSID set to FFFFFFFFh",
	"The Flush command supports NSID set to FFFFFFFFh",
};

static const struct bitf vwc[] = {
	RSVD("  [7:3] : ", 3, 5),
	TAB("  [2:1] : ", 1, 2, flush_tab),
	SUP("  [0:0] : ", 0, 1, "Volatile Write Cache ", "Present"),
};

static const struct bitf icsvscc[] = {
	RSVD("  [7:1] : ", 1, 7),
	ALT("  [0:0] : ", 0, 1, "NVM Vendor Specific Commands uses NVMe Format",
	    "NVM Vendor Specific Commands uses Vendor Specific Format"),
};

static const struct bitf nwpc[] = {
	RSVD("  [7:3] : ", 3, 5),
	S1(2, "Permanent Write Protect "),
	S1(1, "Write Protect Until Power Supply "),
	S1(0, "No Write Protect and Write Protect Namespace "),
};

static const struct bitf ocfs[] = {
	RSVD("  [15:2] : ", 2, 14),
	S1(1, "Controller Copy Format 1h "),
	S1(0, "Controller Copy Format 0h "),
};

static const struct bitf sgls[] = {
	RSVD(" [31:22]: ", 22, 10),
	SPECIAL(" [21:21]: ", 21, 1, B_SGL,
		"Transport SGL Data Block Descriptor "),
	SPECIAL(" [20:20]: ", 20, 1, B_SGL, "Address Offsets "),
	SPECIAL(" [19:19]: ", 19, 1, B_SGL,
		"Metadata Pointer Containing SGL Descriptor is "),
	SPECIAL(" [18:18]: ", 18, 1, B_SGL, "SGL Length Larger than Buffer "),
	SPECIAL(" [17:17]: ", 17, 1, B_SGL, "Byte-Aligned Contig. MD Buffer "),
	SPECIAL(" [16:16]: ", 16, 1, B_SGL, "SGL Bit-Bucket "),
	VAL(" [15:8] : ", 8, 8, "SGL Descriptor Threshold"),
	RSVD(" [7:3] : ", 3, 5),
	SPECIAL("  [2:2] : ", 2, 1, B_SGL, "Keyed SGL Data Block descriptor "),
	SPECIAL("  [1:0] : ", 0, 2, B_SGLSP, NULL),
};

static const struct bitf fcatt[] = {
	RSVD("  [7:1] : ", 1, 7),
	ALT("  [0:0] : ", 0, 1, "Static Controller Model",
	    "Dynamic Controller Model"),
};

static const struct bitf ofcs[] = {
	RSVD("  [15:1] : ", 1, 15),
	ALT("  [0:0] : ", 0, 1, "Disconnect command  Supported",
	    "Disconnect command Not Supported"),
};

/* Identify Namespace (NVM Command Set 1.0, 4.1.5.1) */

static const struct bitf nsfeat[] = {
	RSVD("  [7:5] : ", 5, 3),
	S1(4, "NPWG, NPWA, NPDG, NPDA, and NOWS are "),
	ALT("  [3:3] : ", 3, 1,
	    "NGUID and EUI64 fields if non-zero, Never Reused",
	    "NGUID and EUI64 fields if non-zero, Reused"),
	S1(2, "Deallocated or Unwritten Logical Block error "),
	ALT("  [1:1] : ", 1, 1, "Namespace uses NAWUN, NAWUPF, and NACWU",
	    "Namespace uses AWUN, AWUPF, and ACWU"),
	S1(0, "Thin Provisioning "),
};

static const struct bitf flbas[] = {
	RSVD("  [7:7] : ", 7, 1),
	VAL("  [6:5] : ", 5, 2,
	    "Most significant 2 bits of Current LBA Format Selected"),
	ALT("  [4:4] : ", 4, 1, "Metadata Transferred at End of Data LBA",
	    "Metadata Transferred in Separate Contiguous Buffer"),
	VAL("  [3:0] : ", 0, 4,
	    "Least significant 4 bits of Current LBA Format Selected"),
};

static const struct bitf mc[] = {
	RSVD("  [7:2] : ", 2, 6),
	S1(1, "Metadata Pointer "),
	S1(0, "Metadata as Part of Extended Data LBA "),
};

static const struct bitf dpc[] = {
	RSVD("  [7:5] : ", 5, 3),
	S1(4, "Protection Information Transferred as Last 8 Bytes of "
	      "Metadata "),
	S1(3, "Protection Information Transferred as First 8 Bytes of "
	      "Metadata "),
	S1(2, "Protection Information Type 3 "),
	S1(1, "Protection Information Type 2 "),
	S1(0, "Protection Information Type 1 "),
};

static const char *const pit_tab[] = {
	"Protection Information Disabled",
	"Protection Information Type 1 Enabled",
	"Protection Information Type 2 Enabled",
	"Protection Information Type 3 Enabled",
	"Protection Information Reserved Enabled",
	"Protection Information Reserved Enabled",
	"Protection Information Reserved Enabled",
	"Protection Information Reserved Enabled",
};

static const struct bitf dps[] = {
	RSVD("  [7:4] : ", 4, 4),
	ALT("  [3:3] : ", 3, 1,
	    "Protection Information is Transferred as First 8 Bytes of "
	    "Metadata",
	    "Protection Information is Transferred as Last 8 Bytes of "
	    "Metadata"),
	TAB("  [2:0] : ", 0, 3, pit_tab),
};

static const struct bitf nmic[] = {
	RSVD("  [7:1] : ", 1, 7),
	SUP("  [0:0] : ", 0, 1, "Namespace Multipath ", "Capable"),
};

static const struct bitf rescap[] = {
	ALT("  [7:7] : ", 7, 1,
	    "Ignore Existing Key - Used as defined in revision 1.3 or later",
	    "Ignore Existing Key - Used as defined in revision 1.2.1 or "
	    "earlier"),
	S1(6, "Exclusive Access - All Registrants "),
	S1(5, "Write Exclusive - All Registrants "),
	S1(4, "Exclusive Access - Registrants Only "),
	S1(3, "Write Exclusive - Registrants Only "),
	S1(2, "Exclusive Access "),
	S1(1, "Write Exclusive "),
	S1(0, "Persist Through Power Loss "),
};

static const struct bitf fpi[] = {
	S1(7, "Format Progress Indicator "),
	SPECIAL("  [6:0] : ", 0, 7, B_FPI, NULL),
};

#define DLB "Bytes Read From a Deallocated Logical Block and its Metadata are "
static const char *const dlfeat_tab[] = {
	DLB "Not Reported",   DLB "0x00",	    DLB "0xFF",
	DLB "Reserved Value", DLB "Reserved Value", DLB "Reserved Value",
	DLB "Reserved Value", DLB "Reserved Value",
};

static const struct bitf dlfeat[] = {
	RSVD("  [7:5] : ", 5, 3),
	ALT("  [4:4] : ", 4, 1,
	    "Guard Field of Deallocated Logical Blocks is set to CRC of The "
	    "Value Read",
	    "Guard Field of Deallocated Logical Blocks is set to 0xFFFF"),
	S1(3, "Deallocate Bit in the Write Zeroes Command is "),
	TAB("  [2:0] : ", 0, 3, dlfeat_tab),
};

/* clang-format off */
#define DEC(f, ...) { #f, f, ARRAY_SIZE(f), __VA_ARGS__ }
#define DECN(n, f) { n, f, ARRAY_SIZE(f), false }
/* clang-format on */

static const struct decoder decoders[] = {
	DEC(cmic, false),	DEC(oaes, false),     DEC(ctratt, false),
	DEC(cntrltype, true),	DEC(nvmsr, false),    DEC(vwci, false),
	DEC(mec, false),	DEC(oacs, false),     DEC(frmw, false),
	DEC(lpa, false),	DEC(elpe, false),     DEC(npss, false),
	DEC(avscc, false),	DEC(apsta, false),    DECN("wctemp", WCTEMP),
	DECN("cctemp", CCTEMP), DEC(rpmbs, false),    DEC(hctma, false),
	DECN("mntmt", MNTMT),	DECN("mxtmt", MXTMT), DEC(sanicap, false),
	DEC(anacap, false),	DEC(sqes, false),     DEC(cqes, false),
	DEC(oncs, false),	DEC(fuses, false),    DEC(fna, false),
	DEC(vwc, false),	DEC(icsvscc, false),  DEC(nwpc, false),
	DEC(ocfs, false),	DEC(sgls, false),     DEC(fcatt, false),
	DEC(ofcs, false),	DEC(nsfeat, false),   DEC(flbas, false),
	DEC(mc, false),		DEC(dpc, false),      DEC(dps, false),
	DEC(nmic, false),	DEC(rescap, false),   DEC(fpi, false),
	DEC(dlfeat, false),
};

static void print_bits(const struct bitf *b, uint64_t field)
{
	uint64_t mask = b->width >= 64 ? ~0ull : (1ull << b->width) - 1;
	uint64_t v = field >> b->lo & mask;
	bool sgl_on = field & 0x3;

	switch (b->kind) {
	case B_RSVD:
		if (!v)
			return;
		break;
	case B_SGL:
		if (!sgl_on && !v)
			return;
		break;
	case B_FPI:
		if (!field)
			return;
		break;
	case B_SGLSP:
		if (!v) {
			/* nvme-cli's column for this one line */
			printf(" [1:0]  : %#x\tScatter-Gather Lists Not "
			       "Supported\n",
			       0u);
			return;
		}
		break;
	default:
		break;
	}
	if (b->kind == B_ZB || b->kind == B_TEMP)
		printf("%s", b->pos);
	else
		printf("%s%#" PRIx64 "\t", b->pos, v);
	switch (b->kind) {
	case B_SUP:
	case B_SGL:
		printf("%s%s%s\n", b->a, v ? "" : "Not ",
		       b->b ? b->b : "Supported");
		break;
	case B_ALT:
		printf("%s\n", v ? b->a : b->b);
		break;
	case B_RSVD:
		printf("Reserved\n");
		break;
	case B_VAL:
		printf("%s\n", b->a);
		break;
	case B_TAB:
		printf("%s\n", b->tab[v]);
		break;
	case B_ZB:
		printf("%" PRIu64 " (0's based)\t%s\n", v, b->a);
		break;
	case B_POW:
		printf("%s (%llu)\n", b->a, 1ull << v);
		break;
	case B_TEMP:
		/* nvme-cli: Kelvin - 273 */
		printf("%ld\xc2\xb0"
		       "C (%" PRIu64 " Kelvin)\t%s\n",
		       (long)v - 273, v, b->a);
		break;
	case B_SGLSP:
		printf("%s\n", v == 3 ? "Reserved" :
			       v == 2 ? "Scatter-Gather Lists Supported. "
					"Dword alignment required." :
					"Scatter-Gather Lists Supported. No "
					"Dword alignment required.");
		break;
	case B_FPI:
		printf("Format Progress Indicator (Remaining %" PRIu64 "%%)\n",
		       v);
		break;
	}
}

void human_field(const char *name, uint64_t v, const char *dec128)
{
	/* nvme-cli's two 128-bit ones: the number again, then the name */
	if (dec128 && (!strcmp(name, "tnvmcap") || !strcmp(name, "unvmcap"))) {
		printf("[127:0] : %s\n\t%s NVM Capacity (%s)\n\n", dec128,
		       name[0] == 't' ? "Total" : "Unallocated",
		       name[0] == 't' ? "TNVMCAP" : "UNVMCAP");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(decoders); i++) {
		const struct decoder *d = &decoders[i];

		if (strcmp(d->name, name))
			continue;
		for (unsigned int j = 0; j < d->n; j++)
			print_bits(&d->bits[j], v);
		if (!d->no_blank)
			printf("\n");
		return;
	}
}
