/* SPDX-License-Identifier: MIT */
/* --verify: self-describing blocks; see verify.h for the layout. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "crc32c.h"
#include "verify.h"

struct vhdr {
	uint32_t magic;
	uint32_t crc;
	uint64_t lba;
	uint64_t seq;
	uint32_t run_id;
	uint32_t size;
};

_Static_assert(sizeof(struct vhdr) == PERF_VERIFY_HDR, "verify header size");

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t block_crc(const uint8_t *b, uint32_t size)
{
	return perf_crc32c(0, b + 8, size - 8);
}

void perf_verify_fill(void *buf, uint32_t block_size, uint32_t nblocks,
		      uint64_t lba, uint64_t seq, uint32_t run_id)
{
	uint8_t *b = buf;
	uint32_t i, off;

	for (i = 0; i < nblocks; i++, b += block_size) {
		uint64_t s = (lba + i) * 0xd1342543de82ef95ull ^ seq ^
			     ((uint64_t)run_id << 32);
		struct vhdr h = {
			.magic = PERF_VERIFY_MAGIC,
			.lba = lba + i,
			.seq = seq,
			.run_id = run_id,
			.size = block_size,
		};

		for (off = PERF_VERIFY_HDR; off + 8 <= block_size; off += 8) {
			uint64_t v = splitmix64(&s);

			memcpy(b + off, &v, 8);
		}
		memcpy(b, &h, sizeof(h));
		h.crc = block_crc(b, block_size);
		memcpy(b + 4, &h.crc, 4);
	}
}

unsigned int perf_verify_check(const void *buf, uint32_t block_size,
			       uint32_t nblocks, uint64_t lba, uint32_t run_id,
			       struct perf_vfail *first)
{
	const uint8_t *b = buf;
	unsigned int bad = 0;
	uint32_t i;

	for (i = 0; i < nblocks; i++, b += block_size) {
		struct perf_vfail f = { .lba = lba + i };
		struct vhdr h;
		uint32_t crc;

		memcpy(&h, b, sizeof(h));
		f.seq = h.seq;
		if (h.magic != PERF_VERIFY_MAGIC) {
			f.field = PERF_VF_MAGIC;
			f.expected = PERF_VERIFY_MAGIC;
			f.actual = h.magic;
		} else if (h.size != block_size) {
			f.field = PERF_VF_SIZE;
			f.expected = block_size;
			f.actual = h.size;
		} else if (h.lba != lba + i) {
			f.field = PERF_VF_LBA;
			f.expected = lba + i;
			f.actual = h.lba;
		} else if ((crc = block_crc(b, block_size)) != h.crc) {
			f.field = PERF_VF_CRC;
			f.expected = h.crc;
			f.actual = crc;
		} else if (run_id && h.run_id != run_id) {
			f.field = PERF_VF_RUN;
			f.expected = run_id;
			f.actual = h.run_id;
		} else {
			continue;
		}
		if (!bad++ && first)
			*first = f;
	}
	return bad;
}

void perf_vfail_str(const struct perf_vfail *f, char *buf, size_t len)
{
	switch (f->field) {
	case PERF_VF_MAGIC:
		snprintf(buf, len,
			 "LBA %" PRIu64 ": not a verify block: magic expected "
			 "0x%08" PRIx64 ", actual 0x%08" PRIx64,
			 f->lba, f->expected, f->actual);
		break;
	case PERF_VF_SIZE:
		snprintf(buf, len,
			 "LBA %" PRIu64 ": block size expected %" PRIu64
			 ", actual %" PRIu64,
			 f->lba, f->expected, f->actual);
		break;
	case PERF_VF_LBA:
		snprintf(buf, len,
			 "LBA %" PRIu64 ": header LBA expected %" PRIu64
			 ", actual %" PRIu64 " (misplaced block)",
			 f->lba, f->expected, f->actual);
		break;
	case PERF_VF_CRC:
		snprintf(buf, len,
			 "LBA %" PRIu64 ": crc32c expected 0x%08" PRIx64
			 ", actual 0x%08" PRIx64 " (seq %" PRIu64 ")",
			 f->lba, f->expected, f->actual, f->seq);
		break;
	case PERF_VF_RUN:
		snprintf(buf, len,
			 "LBA %" PRIu64
			 ": stale block: run id expected 0x%08" PRIx64
			 ", actual 0x%08" PRIx64 " (seq %" PRIu64 ")",
			 f->lba, f->expected, f->actual, f->seq);
		break;
	}
}
