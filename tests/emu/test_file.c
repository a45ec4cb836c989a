// SPDX-License-Identifier: MIT
/* File backing: namespaces laid out one after another in the file; data
 * survives close with and without an orderly shutdown, and a reopen. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define NS_SIZE (8u << 20)

static char path[200];
static char params[320];

static void pattern(uint8_t *b, size_t len, unsigned int tag)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(tag * 31 + i * 7 + (i >> 12));
}

static struct h *up(struct hq **q)
{
	struct h *h = h_open(params);

	h_enable(h);
	*q = h_ioq(h, 1, 16, false, 0);
	return h;
}

static void shutdown_normal(struct h *h)
{
	h->ops->reg_write32(h->t, NVQ_REG_CC,
			    h_cc_default() | NVQ_CC_SHN_NORMAL);
	h_wait_csts(h, NVQ_CSTS_SHST_MASK, NVQ_CSTS_SHST_CMPLT);
}

/* SMART Power Cycles and Unsafe Shutdowns must be @pc and @us. */
static void check_smart(struct h *h, uint64_t pc, uint64_t us)
{
	struct nvq_smart_log *sm = h_alloc(h, 4096, NULL);
	struct nvq_sqe s = h_sqe(nvq_admin_get_log_page);

	s.cdw10 = NVQ_LOG_SMART | (512 / 4 - 1) << 16;
	s.prp1 = h_iova(h, sm);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	CHECK_EQ(nvq_u128_lo(sm->power_cycles), pc);
	CHECK_EQ(nvq_u128_lo(sm->unsafe_shutdowns), us);
}

/*
 * Unsafe Shutdowns counts enables not preceded by an orderly shutdown
 * since the previous enable: a reset (EN 1 -> 0) without CC.SHN counts,
 * a power-on of a RAM device starts from zero.
 */
static void unsafe_in_process(void)
{
	struct h *h = h_open("size=8M");

	h_enable(h);
	check_smart(h, 1, 0);
	h_disable(h);
	h_enable(h);
	check_smart(h, 1, 1);
	shutdown_normal(h);
	h_disable(h);
	h_enable(h);
	check_smart(h, 1, 1);
	h_close(h);
}

static void check_blocks(struct h *h, struct hq *q, uint32_t nsid,
			 uint64_t slba, unsigned int tag)
{
	uint8_t *r = h_alloc(h, 16384, NULL);
	uint8_t w[16384];

	pattern(w, sizeof(w), tag);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, nsid, slba, 4, r, 16384));
	CHECK(!memcmp(r, w, 16384));
}

static void write_blocks(struct h *h, struct hq *q, uint32_t nsid,
			 uint64_t slba, unsigned int tag)
{
	uint8_t *w = h_alloc(h, 16384, NULL);

	pattern(w, 16384, tag);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, nsid, slba, 4, w, 16384));
}

int main(void)
{
	struct h *h;
	struct hq *q;
	struct stat st;
	uint8_t buf[16384], w[16384];
	int fd;

	snprintf(path, sizeof(path), "%s/nvq-emu-file-%d.img", test_tmpdir(),
		 (int)getpid());
	unlink(path);
	snprintf(params, sizeof(params), "file=%s,size=8M,ns=2", path);

	/* Created and sized to ns * size. */
	h = up(&q);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 2 * NS_SIZE);
	write_blocks(h, q, 1, 10, 1);
	write_blocks(h, q, 2, 20, 2);
	/* Closed without CC.SHN (an unsafe shutdown). */
	h_close(h);

	/* The layout: namespace 2 starts at 'size' bytes into the file. */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	pattern(w, sizeof(w), 1);
	CHECK_EQ(pread(fd, buf, sizeof(buf), 10 * 4096), sizeof(buf));
	CHECK(!memcmp(buf, w, sizeof(buf)));
	pattern(w, sizeof(w), 2);
	CHECK_EQ(pread(fd, buf, sizeof(buf), NS_SIZE + 20 * 4096), sizeof(buf));
	CHECK(!memcmp(buf, w, sizeof(buf)));
	close(fd);

	/* Reopen: the data is there; write more, flush, shut down orderly. */
	h = up(&q);
	/* The close above was a power loss without CC.SHN. */
	check_smart(h, 2, 1);
	check_blocks(h, q, 1, 10, 1);
	check_blocks(h, q, 2, 20, 2);
	write_blocks(h, q, 1, 2044, 3); /* the last blocks of ns 1 */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_flush, 1, 0, 1, NULL, 0));
	write_blocks(h, q, 2, 0, 4);
	/* FUA write. */
	{
		struct nvq_sqe s = h_sqe(nvq_cmd_write);
		uint8_t *b = h_alloc(h, 4096, NULL);

		memset(b, 0x66, 4096);
		s.nsid = 2;
		s.cdw10 = 100;
		s.cdw12 = NVQ_RW_FUA;
		h_prp(h, &s, b, 4096);
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
	}
	/* Deallocate on a file: reads back zeroes. */
	write_blocks(h, q, 1, 200, 5);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write_zeroes, 1, 200, 4, NULL, 0));
	{
		struct nvq_sqe s = h_sqe(nvq_cmd_write_zeroes);
		uint8_t *r = h_alloc(h, 16384, NULL);
		uint8_t z[16384] = { 0 };

		/* 64 blocks with DEAC: takes the hole-punching path. */
		write_blocks(h, q, 1, 300, 6);
		s.nsid = 1;
		s.cdw10 = 298;
		s.cdw12 = 63 | NVQ_RW_DEAC;
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 200, 4, r, 16384));
		CHECK(!memcmp(r, z, 16384));
		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 300, 4, r, 16384));
		CHECK(!memcmp(r, z, 16384));
	}
	shutdown_normal(h);
	h_close(h);

	/* Reopen once more: everything persisted. */
	h = up(&q);
	check_smart(h, 3, 1);
	check_blocks(h, q, 1, 10, 1);
	check_blocks(h, q, 2, 20, 2);
	check_blocks(h, q, 1, 2044, 3);
	check_blocks(h, q, 2, 0, 4);
	{
		uint8_t *r = h_alloc(h, 4096, NULL);

		CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 2, 100, 1, r, 4096));
		CHECK_EQ(r[0], 0x66);
		CHECK_EQ(r[4095], 0x66);
	}
	/* The serial number is stable for the same file. */
	{
		struct nvq_id_ctrl *id = h_alloc(h, 4096, NULL);
		char sn1[20];

		CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
		memcpy(sn1, id->sn, 20);
		h_close(h);
		h = up(&q);
		id = h_alloc(h, 4096, NULL);
		CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
		CHECK(!memcmp(sn1, id->sn, 20));
	}
	h_close(h);

	/* A larger existing file is used as is (not truncated). */
	CHECK_EQ(truncate(path, 3 * NS_SIZE), 0);
	h = up(&q);
	check_blocks(h, q, 1, 10, 1);
	h_close(h);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 3 * NS_SIZE);
	unlink(path);
	unsafe_in_process();
	return 0;
}
