/* SPDX-License-Identifier: MIT */
/* --verify block format: a good block passes, each kind of damage is
 * named with the right LBA and expected / actual values. */
#include <string.h>

#include "check.h"
#include "verify.h"

static uint8_t buf[8 * 4096];

int main(void)
{
	struct perf_vfail f;
	char msg[256];

	perf_verify_fill(buf, 4096, 8, 100, 5, 0xabc);
	CHECK_EQ(perf_verify_check(buf, 4096, 8, 100, 0xabc, &f), 0);
	CHECK_EQ(perf_verify_check(buf, 4096, 8, 100, 0, &f), 0);

	/* A flipped payload bit: CRC mismatch at that LBA. */
	buf[3 * 4096 + 1000] ^= 0x10;
	CHECK_EQ(perf_verify_check(buf, 4096, 8, 100, 0xabc, &f), 1);
	CHECK_EQ(f.lba, 103);
	CHECK(f.field == PERF_VF_CRC);
	CHECK(f.expected != f.actual);
	CHECK_EQ(f.seq, 5);
	perf_vfail_str(&f, msg, sizeof(msg));
	CHECK(strstr(msg, "LBA 103") && strstr(msg, "crc32c"));
	buf[3 * 4096 + 1000] ^= 0x10;

	/* The sequence number is covered by the CRC as well. */
	buf[2 * 4096 + 16] ^= 1;
	CHECK_EQ(perf_verify_check(buf, 4096, 8, 100, 0, &f), 1);
	CHECK(f.field == PERF_VF_CRC && f.lba == 102);
	buf[2 * 4096 + 16] ^= 1;

	/* Read from the wrong place: header names another LBA. */
	CHECK_EQ(perf_verify_check(buf, 4096, 8, 101, 0, &f), 8);
	CHECK(f.field == PERF_VF_LBA);
	CHECK_EQ(f.expected, 101);
	CHECK_EQ(f.actual, 100);

	/* Stale data of another run. */
	CHECK_EQ(perf_verify_check(buf, 4096, 8, 100, 0xdef, &f), 8);
	CHECK(f.field == PERF_VF_RUN);
	CHECK_EQ(f.expected, 0xdef);
	CHECK_EQ(f.actual, 0xabc);

	/* Never written (zeroes) or overwritten: no magic. */
	memset(buf + 4096 * 6, 0, 4096);
	CHECK_EQ(perf_verify_check(buf, 4096, 8, 100, 0, &f), 1);
	CHECK(f.field == PERF_VF_MAGIC && f.lba == 106 && f.actual == 0);
	perf_vfail_str(&f, msg, sizeof(msg));
	CHECK(strstr(msg, "LBA 106") != NULL);

	/* Written with 512-byte blocks, read as 4096-byte blocks. */
	perf_verify_fill(buf, 512, 8, 0, 1, 1);
	CHECK_EQ(perf_verify_check(buf, 512, 8, 0, 1, &f), 0);
	CHECK_EQ(perf_verify_check(buf, 4096, 1, 0, 1, &f), 1);
	CHECK(f.field == PERF_VF_SIZE && f.expected == 4096 && f.actual == 512);

	/* Payloads differ between LBAs and sequence numbers. */
	perf_verify_fill(buf, 4096, 1, 7, 1, 1);
	perf_verify_fill(buf + 4096, 4096, 1, 7, 2, 1);
	CHECK(memcmp(buf + 64, buf + 4096 + 64, 4096 - 64) != 0);
	return T_EXIT_PASS;
}
