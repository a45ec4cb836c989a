// SPDX-License-Identifier: MIT
/*
 * The -H decoder on values the emulator never reports: reserved bits
 * set, SGLs supported, a format in progress, PI type 7. Exact lines, as
 * nvme-cli 2.3 prints them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nvq/cli.h"

/* What human_field() printed for @name = @v. */
static char *decode(const char *name, uint64_t v, const char *dec128)
{
	static char out[8192];
	FILE *f = tmpfile();
	int saved = dup(STDOUT_FILENO);
	size_t n;

	CHECK(f != NULL && saved >= 0);
	fflush(stdout);
	CHECK(dup2(fileno(f), STDOUT_FILENO) >= 0);
	human_field(name, v, dec128);
	fflush(stdout);
	CHECK(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

#define HAS(out, line) CHECK_CONTAINS(out, line "\n")
#define LACKS(out, text)                                                 \
	do {                                                             \
		if (strstr(out, text))                                   \
			check_failed(__FILE__, __LINE__, "lacks " #text, \
				     "\"%s\"", out);                     \
	} while (0)

int main(void)
{
	char *o;

	/* SGLS all ones: reserved bits 31:22, each feature, 1:0 = 11b */
	o = decode("sgls", 0xffffffff, NULL);
	HAS(o, " [31:22]: 0x3ff\tReserved");
	HAS(o, " [21:21]: 0x1\tTransport SGL Data Block Descriptor Supported");
	HAS(o, " [15:8] : 0xff\tSGL Descriptor Threshold");
	HAS(o, " [7:3] : 0x1f\tReserved");
	HAS(o, "  [2:2] : 0x1\tKeyed SGL Data Block descriptor Supported");
	HAS(o, "  [1:0] : 0x3\tReserved");
	/* SGLs supported: the features that are not are listed too */
	o = decode("sgls", 0x1, NULL);
	HAS(o, " [20:20]: 0\tAddress Offsets Not Supported");
	HAS(o, "  [1:0] : 0x1\tScatter-Gather Lists Supported. No Dword "
	       "alignment required.");
	o = decode("sgls", 0x2, NULL);
	HAS(o, "  [1:0] : 0x2\tScatter-Gather Lists Supported. Dword "
	       "alignment required.");
	/* not supported: only the features that are set anyway */
	o = decode("sgls", 1u << 16, NULL);
	HAS(o, " [16:16]: 0x1\tSGL Bit-Bucket Supported");
	LACKS(o, "Address Offsets");
	HAS(o, " [1:0]  : 0\tScatter-Gather Lists Not Supported");

	o = decode("cmic", 0xff, NULL);
	HAS(o, "  [7:4] : 0xf\tReserved");
	HAS(o, "  [3:3] : 0x1\tANA supported");
	HAS(o, "  [2:2] : 0x1\tSR-IOV");
	o = decode("oaes", 0xffffffff, NULL);
	HAS(o, "  [31:31] : 0x1\tDiscovery Log Change Notice Supported");
	HAS(o, "  [26:16] : 0x7ff\tReserved");
	HAS(o, "  [7:0] : 0xff\tReserved");
	o = decode("fuses", 0xffff, NULL);
	HAS(o, " [15:1] : 0x7fff\tReserved");
	o = decode("sanicap", 0xffffffff, NULL);
	HAS(o, "  [31:30] : 0x3\tReserved");
	HAS(o, "  [29:29] : 0x1\tNo-Deallocate After Sanitize bit in "
	       "Sanitize command Not Supported");
	HAS(o, "  [28:3] : 0x3ffffff\tReserved");
	o = decode("fna", 0x8, NULL);
	HAS(o, "  [3:3] : 0x1\tFormat NVM Broadcast NSID (FFFFFFFFh) Not "
	       "Supported");
	o = decode("vwc", 0x2, NULL);
	HAS(o, "  [2:1] : 0x1\tReserved");
	o = decode("ofcs", 0x1, NULL);
	HAS(o, "  [0:0] : 0x1\tDisconnect command  Supported");
	o = decode("cntrltype", 0xff, NULL);
	HAS(o, "  [7:2] : 0x3f\tReserved");
	HAS(o, "  [1:0] : 0x3\tAdministrative Controller");
	CHECK(o[strlen(o) - 2] != '\n'); /* no empty line after it */
	o = decode("mntmt", 273, NULL);
	HAS(o, " [15:0] : 0\xc2\xb0"
	       "C (273 Kelvin)\tMinimum Thermal Management Temperature "
	       "(MNTMT)");
	o = decode("unvmcap", 0, "340282366920938463463374607431768211455");
	CHECK_STREQ(o, "[127:0] : 340282366920938463463374607431768211455\n"
		       "\tUnallocated NVM Capacity (UNVMCAP)\n\n");

	/* id-ns */
	o = decode("fpi", 0x85, NULL);
	HAS(o, "  [7:7] : 0x1\tFormat Progress Indicator Supported");
	HAS(o, "  [6:0] : 0x5\tFormat Progress Indicator (Remaining 5%)");
	o = decode("fpi", 0, NULL);
	LACKS(o, "[6:0]");
	o = decode("dps", 0x7, NULL);
	HAS(o, "  [2:0] : 0x7\tProtection Information Reserved Enabled");
	o = decode("dlfeat", 0xfa, NULL);
	HAS(o, "  [7:5] : 0x7\tReserved");
	HAS(o, "  [4:4] : 0x1\tGuard Field of Deallocated Logical Blocks is "
	       "set to CRC of The Value Read");
	HAS(o, "  [2:0] : 0x2\tBytes Read From a Deallocated Logical Block "
	       "and its Metadata are 0xFF");
	o = decode("flbas", 0xff, NULL);
	HAS(o, "  [7:7] : 0x1\tReserved");
	HAS(o, "  [6:5] : 0x3\tMost significant 2 bits of Current LBA "
	       "Format Selected");
	o = decode("rescap", 0xff, NULL);
	HAS(o, "  [7:7] : 0x1\tIgnore Existing Key - Used as defined in "
	       "revision 1.3 or later");

	/* a field without bits to decode prints nothing */
	CHECK_STREQ(decode("mdts", 5, NULL), "");
	CHECK_STREQ(decode("nsze", 0x1000, NULL), "");
	return T_EXIT_PASS;
}
