/* SPDX-License-Identifier: MIT */
/* CRC32C: slicing-by-8 in software, the SSE4.2 instruction where present. */
#include <pthread.h>
#include <string.h>

#include "crc32c.h"

#define CRC32C_POLY 0x82f63b78u

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	unsigned int i, j;

	for (i = 0; i < 256; i++) {
		uint32_t c = i;

		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (c & 1 ? CRC32C_POLY : 0);
		table[0][i] = c;
	}
	/* table[k][b]: the CRC of byte b followed by k zero bytes. */
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			table[j][i] = (table[j - 1][i] >> 8) ^
				      table[0][table[j - 1][i] & 0xff];
}

uint32_t perf_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, table_init);
	crc = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo, hi;

		/* Little-endian load: byte order of the reflected CRC. */
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
		      table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t
perf_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c;

	crc = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		crc = __builtin_ia32_crc32qi(crc, *p++);
		len--;
	}
	c = crc;
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return ~crc;
}

bool perf_crc32c_hw_available(void)
{
	return __builtin_cpu_supports("sse4.2");
}
#else
uint32_t perf_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	return perf_crc32c_sw(crc, buf, len);
}

bool perf_crc32c_hw_available(void)
{
	return false;
}
#endif

uint32_t perf_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static int hw = -1;
	int use = __atomic_load_n(&hw, __ATOMIC_RELAXED);

	if (use < 0) {
		use = perf_crc32c_hw_available();
		__atomic_store_n(&hw, use, __ATOMIC_RELAXED);
	}
	return use ? perf_crc32c_hw(crc, buf, len) :
		     perf_crc32c_sw(crc, buf, len);
}
