/* SPDX-License-Identifier: MIT */
/* CRC32C: known vectors, software and instruction paths agree. */
#include <string.h>

#include "check.h"
#include "crc32c.h"

int main(void)
{
	static uint8_t buf[4096 + 16];
	uint32_t a, b;
	size_t off, len;
	unsigned int i;

	CHECK_EQ(perf_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ(perf_crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ(perf_crc32c(0, "", 0), 0);
	/* RFC 3720 B.4: 32 bytes of zeros, of ones, ascending. */
	memset(buf, 0, 32);
	CHECK_EQ(perf_crc32c_sw(0, buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, 32);
	CHECK_EQ(perf_crc32c_sw(0, buf, 32), 0x62A8AB43u);
	for (i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	CHECK_EQ(perf_crc32c_sw(0, buf, 32), 0x46DD794Eu);
	CHECK_EQ(perf_crc32c(0, buf, 32), 0x46DD794Eu);
	/* Continuation equals one pass. */
	a = perf_crc32c(0, "12345", 5);
	CHECK_EQ(perf_crc32c(a, "6789", 4), 0xE3069283u);

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	/* Every alignment and tail length, both implementations. */
	for (off = 0; off < 8; off++) {
		for (len = 0; len < 80; len++) {
			a = perf_crc32c_sw(0, buf + off, len);
			b = perf_crc32c(0, buf + off, len);
			CHECK_EQ(a, b);
			if (perf_crc32c_hw_available())
				CHECK_EQ(perf_crc32c_hw(0, buf + off, len), a);
		}
		a = perf_crc32c_sw(0, buf + off, 4096);
		CHECK_EQ(perf_crc32c(0, buf + off, 4096), a);
	}
	printf("crc32c: instruction %s\n",
	       perf_crc32c_hw_available() ? "used" : "not available");
	return T_EXIT_PASS;
}
