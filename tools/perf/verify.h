/* SPDX-License-Identifier: MIT */
/*
 * --verify block format. Every logical block written with --verify
 * starts with a header (little endian):
 *   u32 magic "nvqv", u32 crc32c, u64 lba, u64 seq, u32 run id, u32 size
 * followed by a pseudo-random payload derived from (lba, seq, run id).
 * The CRC32C covers the block from byte 8 (after magic and crc) to its
 * end, so any flipped bit, a block written to the wrong LBA, or a block
 * left over from another run (when the run id is known) is caught.
 */
#ifndef NVQ_PERF_VERIFY_H
#define NVQ_PERF_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#define PERF_VERIFY_MAGIC 0x7671766eu /* "nvqv" in memory */
#define PERF_VERIFY_HDR 32u

/* What a failed check found wrong. */
enum perf_vfield {
	PERF_VF_MAGIC, /* not a --verify block (never written, overwritten) */
	PERF_VF_SIZE, /* written with another LBA size */
	PERF_VF_LBA, /* header names another LBA: misdirected write/read */
	PERF_VF_CRC, /* content changed after it was written */
	PERF_VF_RUN, /* stale: written by another run */
};

/* First mismatch of a perf_verify_check(). */
struct perf_vfail {
	uint64_t lba; /* the LBA that was read */
	enum perf_vfield field;
	uint64_t expected;
	uint64_t actual;
	uint64_t seq; /* sequence number the header carries */
};

/*
 * Fill @nblocks blocks of @block_size bytes at @buf for LBAs @lba... with
 * headers carrying @seq and @run_id. @block_size >= PERF_VERIFY_HDR.
 */
void perf_verify_fill(void *buf, uint32_t block_size, uint32_t nblocks,
		      uint64_t lba, uint64_t seq, uint32_t run_id);

/*
 * Check @nblocks blocks read from LBAs @lba...; @run_id 0 accepts any run.
 * Returns the number of bad blocks and describes the first in *@first.
 */
unsigned int perf_verify_check(const void *buf, uint32_t block_size,
			       uint32_t nblocks, uint64_t lba, uint32_t run_id,
			       struct perf_vfail *first);

/* One-line description of @f ("LBA 5: crc32c mismatch: expected ..."). */
void perf_vfail_str(const struct perf_vfail *f, char *buf, size_t len);

#endif /* NVQ_PERF_VERIFY_H */
