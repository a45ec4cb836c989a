/* SPDX-License-Identifier: MIT */
/*
 * CRC32C (Castagnoli), as iSCSI, ext4 and fio's verify=crc32c use it:
 * reflected polynomial 0x82F63B78, initial value and final xor all ones.
 * crc32c("123456789") = 0xE3069283.
 */
#ifndef NVQ_PERF_CRC32C_H
#define NVQ_PERF_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * CRC32C of @len bytes at @buf, continuing from @crc (0 to start; pass a
 * previous result to checksum data in pieces). Uses the SSE4.2 crc32
 * instruction when the CPU has it, else slicing-by-8 tables.
 */
uint32_t perf_crc32c(uint32_t crc, const void *buf, size_t len);

/* The table implementation, always available (for tests). */
uint32_t perf_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* True when perf_crc32c() uses the CPU instruction. */
bool perf_crc32c_hw_available(void);

/* The instruction implementation; only call it when available. */
uint32_t perf_crc32c_hw(uint32_t crc, const void *buf, size_t len);

#endif /* NVQ_PERF_CRC32C_H */
