// SPDX-License-Identifier: MIT
/*
 * Write Zeroes and Deallocate release their range instead of writing it:
 * on RAM media the process's resident memory does not grow by the range
 * (it shrinks by what was written there), on file media the image's
 * allocated blocks do not grow; either way the range reads back as
 * zeroes and the blocks around it keep their data. Bounds are on memory
 * and blocks, never on time.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define MIB (1ull << 20)
/* Far below any range zeroed here: edges, page tables, allocator noise. */
#define SLACK (16 * MIB)

static char path[260];

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

static uint64_t rss(void)
{
	unsigned long size, res;
	FILE *f = fopen("/proc/self/statm", "r");

	CHECK(f);
	CHECK_EQ(fscanf(f, "%lu %lu", &size, &res), 2);
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t blocks(void)
{
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

/* Write Zeroes of @nlb (any count) blocks at @slba, in commands of at
 * most 65536 blocks (NLB is 16 bits). */
static void write_zeroes(struct h *h, struct hq *q, uint64_t slba, uint64_t nlb,
			 bool deac)
{
	while (nlb) {
		struct nvq_sqe s = h_sqe(nvq_cmd_write_zeroes);
		uint64_t n = nlb < 65536 ? nlb : 65536;

		s.nsid = 1;
		s.cdw10 = (uint32_t)slba;
		s.cdw11 = (uint32_t)(slba >> 32);
		s.cdw12 = (uint32_t)(n - 1) | (deac ? NVQ_RW_DEAC : 0);
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
		slba += n;
		nlb -= n;
	}
}

static void deallocate(struct h *h, struct hq *q, uint64_t slba, uint32_t nlb)
{
	struct nvq_dsm_range *r = h_alloc(h, 4096, NULL);
	struct nvq_sqe s = h_sqe(nvq_cmd_dsm);

	r->slba = slba;
	r->nlb = nlb;
	s.nsid = 1;
	s.cdw11 = NVQ_DSM_AD;
	s.prp1 = h_iova(h, r);
	CHECK_ST_OK(h_cmd(h, q, &s, NULL));
}

/* Write @len bytes of pattern @tag at @slba in 128 KiB commands. */
static void write_data(struct h *h, struct hq *q, uint8_t *buf,
		       unsigned int lbads, uint64_t slba, uint64_t len,
		       unsigned int tag)
{
	uint64_t done, per = 128 * 1024 >> lbads;

	memset(buf, tag, 128 * 1024);
	for (done = 0; done < len >> lbads; done += per)
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, slba + done,
				 (uint32_t)per, buf, 128 * 1024));
}

/* Every byte of @nlb blocks at @slba is @val (read in 128 KiB pieces). */
static void expect(struct h *h, struct hq *q, uint8_t *buf, unsigned int lbads,
		   uint64_t slba, uint32_t nlb, uint8_t val)
{
	uint32_t per = 128 * 1024 >> lbads;

	while (nlb) {
		uint32_t n = nlb < per ? nlb : per;
		size_t len = (size_t)n << lbads, i;

		memset(buf, val ^ 0xff, len);
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, slba, n, buf, len));
		for (i = 0; i < len; i++)
			if (buf[i] != val)
				check_failed(
					__FILE__, __LINE__, "read back",
					"LBA %llu byte %zu is %#x, expected %#x",
					(unsigned long long)slba + (i >> lbads),
					i & ((1u << lbads) - 1), buf[i], val);
		slba += n;
		nlb -= n;
	}
}

/* 1 GiB of RAM media: zeroing it costs no memory, data in it goes. */
static void ram(bool dsm, bool deac)
{
	struct h *h = h_open("size=1G");
	struct hq *q;
	uint8_t *buf;
	uint64_t before, written;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	buf = h_alloc(h, 128 * 1024, NULL);
	before = rss();
	write_data(h, q, buf, 12, 1000, 64 * MIB, 0x5a);
	written = rss();
	CHECK(written >= before + 60 * MIB); /* the data is resident */
	if (dsm)
		deallocate(h, q, 0, 262144);
	else
		write_zeroes(h, q, 0, 262144, deac);
	/* Nothing materialised, and the 64 MiB written went back. */
	if (rss() > before + SLACK)
		check_failed(
			__FILE__, __LINE__, "RSS bound",
			"RSS %llu MiB after zeroing 1 GiB, %llu MiB before "
			"(%llu MiB with the data)",
			(unsigned long long)(rss() / MIB),
			(unsigned long long)(before / MIB),
			(unsigned long long)(written / MIB));
	expect(h, q, buf, 12, 1000, 32, 0);
	expect(h, q, buf, 12, 1000 + 16384 - 32, 32, 0);
	expect(h, q, buf, 12, 262144 - 32, 32, 0);
	h_close(h);
}

/* 512-byte blocks: the partial pages at the edges keep their neighbours. */
static void ram_edges(void)
{
	struct h *h = h_open("size=16M,lbads=9");
	struct hq *q;
	uint8_t *buf;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	buf = h_alloc(h, 128 * 1024, NULL);
	write_data(h, q, buf, 9, 0, 1 * MIB, 0x77);
	/* Blocks 3..2040: unaligned at both ends, whole pages between. */
	write_zeroes(h, q, 3, 2038, false);
	expect(h, q, buf, 9, 0, 3, 0x77);
	expect(h, q, buf, 9, 3, 2038, 0);
	expect(h, q, buf, 9, 2041, 7, 0x77);
	/* Small and inside one page. */
	write_zeroes(h, q, 2042, 2, true);
	expect(h, q, buf, 9, 2041, 1, 0x77);
	expect(h, q, buf, 9, 2042, 2, 0);
	expect(h, q, buf, 9, 2044, 4, 0x77);
	h_close(h);
}

/* File media: the image's allocation does not grow; deallocation frees. */
static void file(void)
{
	char params[400];
	struct h *h;
	struct hq *q;
	uint8_t *buf;
	uint64_t reserved, b;
	struct nvq_sqe s;

	snprintf(params, sizeof(params), "file=%s,size=256M", path);
	h = h_open(params);
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	buf = h_alloc(h, 128 * 1024, NULL);
	write_data(h, q, buf, 12, 4096, 16 * MIB, 0x3c);
	reserved = blocks();
	/* Reserved at open: ns x size is allocated. */
	CHECK(reserved >= 256 * MIB);

	write_zeroes(h, q, 0, 65536, false);
	CHECK(blocks() <= reserved);
	expect(h, q, buf, 12, 4096, 32, 0);
	expect(h, q, buf, 12, 4096 + 4096 - 32, 32, 0);

	write_data(h, q, buf, 12, 4096, 16 * MIB, 0x3c);
	write_zeroes(h, q, 0, 65536, true);
	b = blocks();
	CHECK(b <= reserved);
	expect(h, q, buf, 12, 4096, 32, 0);

	write_data(h, q, buf, 12, 8192, 16 * MIB, 0x3d);
	deallocate(h, q, 0, 65536);
	CHECK(blocks() <= reserved);
	expect(h, q, buf, 12, 8192, 32, 0);
	expect(h, q, buf, 12, 65536 - 32, 32, 0);
	/* FUA and a flush after it all still succeed. */
	s = h_sqe(nvq_cmd_write_zeroes);
	s.nsid = 1;
	s.cdw10 = 10;
	s.cdw12 = 7 | NVQ_RW_FUA;
	CHECK_ST_OK(h_cmd(h, q, &s, NULL));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_flush, 1, 0, 1, NULL, 0));
	h_close(h);
	printf("file: %llu MiB allocated at open, %llu MiB after deallocating "
	       "the namespace\n",
	       (unsigned long long)(reserved / MIB),
	       (unsigned long long)(blocks() / MIB));
}

int main(void)
{
	int fd = test_tmpfile(path, sizeof(path), "emu-zeroes");

	close(fd);
	unlink(path); /* the controller creates it */
	check_cleanup = cleanup;
	ram(false, false);
	ram(false, true);
	ram(true, false);
	ram_edges();
	file();
	cleanup();
	return 0;
}
