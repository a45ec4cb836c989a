// SPDX-License-Identifier: MIT
/*
 * The PI guard CRC (lib/support/crc_t10dif.c) against the standard check
 * value and a bit-at-a-time reference, whole and in pieces, at every
 * length across the slicing-by-8 boundaries.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "crc_t10dif.h"

/* One bit at a time, straight from the definition. */
static uint16_t crc_ref(const uint8_t *p, size_t n)
{
	uint16_t c = 0;

	for (size_t i = 0; i < n; i++) {
		c ^= (uint16_t)(p[i] << 8);
		for (int b = 0; b < 8; b++)
			c = (uint16_t)((c & 0x8000) ? (c << 1) ^ 0x8bb7 :
						      c << 1);
	}
	return c;
}

int main(void)
{
	static uint8_t buf[4096 + 19];
	uint16_t zero4k;

	CHECK_EQ(nvq_crc_t10dif_update(0, "123456789", 9), 0xd0db);
	CHECK_EQ(nvq_crc_t10dif_update(0, buf, 0), 0);
	/* A block of zeroes has guard 0 (no initial value, no final xor). */
	zero4k = nvq_crc_t10dif_update(0, buf, 4096);
	CHECK_EQ(zero4k, 0);
	srand(7);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (size_t n = 0; n <= sizeof(buf); n += (n < 64 ? 1 : 61)) {
		uint16_t want = crc_ref(buf, n);

		CHECK_EQ(nvq_crc_t10dif_update(0, buf, n), want);
		CHECK_EQ(nvq_crc_t10dif_update(nvq_crc_t10dif_update(0, buf,
								     n / 3),
					       buf + n / 3, n - n / 3),
			 want);
	}
	return T_EXIT_PASS;
}
