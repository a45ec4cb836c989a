// SPDX-License-Identifier: MIT
/*
 * Metadata and end-to-end protection through the library, on the
 * emulator's ms=/mset=/pi=/pil= namespaces: nvq_ns_format(), data and
 * metadata round trips in both layouts, plain nvq_read()/nvq_write() with
 * PRACT, host-generated PI (PRACT=0) checked by the controller (SCT 2h SC
 * 82h/83h/84h on a bad guard, application or reference tag; type 3
 * refuses a reference tag check with 181h), extended LBAs with PI (PRACT
 * moves the data alone), MDTS splits
 * advancing MPTR and the reference tag, and the refusals.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* Extended LBA, no PI: the buffer holds data + metadata per block. */
static void test_extended(void)
{
	struct nvq_ctrl *c =
		open_or_die("emu:size=1M,lbads=9,ms=16,mset=1", NULL);
	struct nvq_ns_format f;
	size_t len = 8 * (512 + 16);
	uint8_t *w = nvq_dma_alloc(c, len, -1), *r = nvq_dma_alloc(c, len, -1);

	CHECK_OK(nvq_ns_format(c, 1, &f));
	CHECK_EQ(f.usable, 1);
	CHECK_EQ(f.extended, 1);
	CHECK_EQ(f.ms, 16);
	CHECK_EQ(f.lba_size, 512);
	CHECK_EQ(f.pi_type, 0);
	fill(w, len, 3);
	CHECK_OK(nvq_write_sync(c, 1, w, 4, 8, NULL));
	CHECK_OK(nvq_read_sync(c, 1, r, 4, 8, NULL));
	CHECK_MEMEQ(w, r, len);
	nvq_dma_free(c, w);
	nvq_dma_free(c, r);
	nvq_close(c);
}

/*
 * Extended LBAs with 8 bytes of PI: with PRACT the data buffer holds the
 * data alone (the controller inserts and strips the PI), without it data
 * and PI of each block.
 */
static void test_extended_pi(void)
{
	struct nvq_ctrl *c =
		open_or_die("emu:size=1M,lbads=9,ms=8,pi=1,mset=1", NULL);
	uint8_t *w = nvq_dma_alloc(c, 8 * 512, -1);
	uint8_t *r = nvq_dma_alloc(c, 8 * 520, -1);
	struct nvq_io io;
	uint32_t bad = 99, i;
	uint16_t st = 0;

	CHECK(w && r);
	fill(w, 8 * 512, 4);
	nvq_io_init(&io);
	io.nsid = 1;
	io.slba = 40;
	io.nlb = 8;
	io.buf = w;
	io.flags = NVQ_IO_PRACT | NVQ_IO_PRCHK_ALL;
	io.reftag = 40;
	io.apptag = 0x55aa;
	io.appmask = 0xffff;
	CHECK_OK(nvq_write_io_sync(c, &io, &st));
	io.buf = r;
	io.flags = NVQ_IO_PRCHK_ALL;
	CHECK_OK(nvq_read_io_sync(c, &io, &st));
	for (i = 0; i < 8; i++)
		CHECK_MEMEQ(w + i * 512, r + i * 520, 512);
	CHECK_EQ(nvq_pi_verify(c, 1, r, NULL, 8, 40, 0x55aa, 0xffff,
			       NVQ_IO_PRCHK_ALL, &bad),
		 0);
	memset(r, 0, 8 * 520);
	io.flags = NVQ_IO_PRACT | NVQ_IO_PRCHK_ALL;
	CHECK_OK(nvq_read_io_sync(c, &io, &st));
	CHECK_MEMEQ(w, r, 8 * 512);
	nvq_dma_free(c, w);
	nvq_dma_free(c, r);
	nvq_close(c);
}

/* Separate metadata without PI: the metadata API, and plain I/O refused. */
static void test_separate(void)
{
	struct nvq_ctrl *c = open_or_die("emu:size=1M,lbads=9,ms=16", NULL);
	uint8_t *w = nvq_dma_alloc(c, 4096, -1),
		*r = nvq_dma_alloc(c, 4096, -1);
	uint8_t *wm = nvq_dma_alloc(c, 4096, -1),
		*rm = nvq_dma_alloc(c, 4096, -1);
	struct nvq_ns_format f;
	struct nvq_io io;

	CHECK_OK(nvq_ns_format(c, 1, &f));
	CHECK_EQ(f.extended, 0);
	CHECK_EQ(f.ms, 16);
	CHECK_EQ(nvq_read_sync(c, 1, r, 0, 1, NULL), -EINVAL);
	CHECK(strstr(nvq_errmsg(), "metadata") != NULL);
	fill(w, 8 * 512, 1);
	fill(wm, 8 * 16, 9);
	nvq_io_init(&io);
	io.nsid = 1;
	io.slba = 10;
	io.nlb = 8;
	io.buf = w;
	io.md = wm;
	CHECK_OK(nvq_write_io_sync(c, &io, NULL));
	io.buf = r;
	io.md = rm;
	CHECK_OK(nvq_read_io_sync(c, &io, NULL));
	CHECK_MEMEQ(w, r, 8 * 512);
	CHECK_MEMEQ(wm, rm, 8 * 16);
	/* No metadata buffer: refused, never a command with MPTR 0. */
	io.md = NULL;
	CHECK_EQ(nvq_read_io_sync(c, &io, NULL), -EINVAL);
	nvq_dma_free(c, w);
	nvq_dma_free(c, r);
	nvq_dma_free(c, wm);
	nvq_dma_free(c, rm);
	nvq_close(c);
}

/*
 * PI type @pi, @ms bytes of separate metadata, PI first (@pil): PRACT
 * plain round trip (ms 8), host PI round trip, tag mismatches.
 */
static void test_pi(unsigned int pi, unsigned int ms, unsigned int pil,
		    const char *extra)
{
	char uri[128];
	struct nvq_ctrl *c;
	struct nvq_ns_format f;
	struct nvq_io io;
	uint8_t *w, *r, *wm, *rm;
	uint16_t st = 0;
	uint32_t bad = 99, nlb = 64;
	/* Type 3 has no reference tag to check (refused below). */
	unsigned int chk = pi == 3 ? NVQ_IO_PRCHK_GUARD | NVQ_IO_PRCHK_APP :
				     NVQ_IO_PRCHK_ALL;
	/* Type 1: the initial reference tag is the LBA's low 32 bits. */
	uint32_t ref = pi == 1 ? 200 : 1000;

	snprintf(uri, sizeof(uri), "emu:size=1M,lbads=9,ms=%u,pi=%u,pil=%u%s",
		 ms, pi, pil, extra);
	c = open_or_die(uri, NULL);
	w = nvq_dma_alloc(c, nlb * 512, -1);
	r = nvq_dma_alloc(c, nlb * 512, -1);
	wm = nvq_dma_alloc(c, nlb * ms, -1);
	rm = nvq_dma_alloc(c, nlb * ms, -1);
	CHECK(w && r && wm && rm);
	CHECK_OK(nvq_ns_format(c, 1, &f));
	CHECK_EQ(f.pi_type, pi);
	CHECK_EQ(f.pi_first, pil);
	CHECK_EQ(f.pi_size, 8);
	fill(w, nlb * 512, pi + ms);

	if (ms == 8) {
		/* The controller inserts and strips the PI. */
		CHECK_OK(nvq_write_sync(c, 1, w, 100, nlb, NULL));
		CHECK_OK(nvq_read_sync(c, 1, r, 100, nlb, NULL));
		CHECK_MEMEQ(w, r, nlb * 512);
	} else {
		CHECK_EQ(nvq_write_sync(c, 1, w, 100, nlb, NULL), -EINVAL);
	}

	/* Host-generated PI, checked by the controller. */
	fill(wm, nlb * ms, 5);
	CHECK_OK(nvq_pi_generate(c, 1, w, wm, nlb, ref, 0x1234));
	CHECK_EQ(nvq_pi_verify(c, 1, w, wm, nlb, ref, 0x1234, 0xffff, chk,
			       &bad),
		 0);
	nvq_io_init(&io);
	io.nsid = 1;
	io.slba = 200;
	io.nlb = nlb;
	io.buf = w;
	io.md = wm;
	io.reftag = ref;
	io.apptag = 0x1234;
	io.appmask = 0xffff;
	io.flags = chk;
	CHECK_OK(nvq_write_io_sync(c, &io, &st));
	io.buf = r;
	io.md = rm;
	CHECK_OK(nvq_read_io_sync(c, &io, &st));
	CHECK_MEMEQ(w, r, nlb * 512);
	CHECK_MEMEQ(wm, rm, nlb * ms);
	CHECK_EQ(nvq_pi_verify(c, 1, r, rm, nlb, ref, 0x1234, 0xffff, chk,
			       &bad),
		 0);

	/* Wrong expected tags on read: the controller says which. */
	io.apptag = 0x4321;
	CHECK_EQ(nvq_read_io_sync(c, &io, &st), -EIO);
	CHECK_EQ(st & 0x7ff, 0x283);
	io.apptag = 0x1234;
	if (pi == 2) {
		io.reftag = ref + 1;
		CHECK_EQ(nvq_read_io_sync(c, &io, &st), -EIO);
		CHECK_EQ(st & 0x7ff, 0x284);
	} else if (pi == 1) {
		/* Not the LBA: Invalid Protection Information. */
		io.reftag = ref + 1;
		CHECK_EQ(nvq_read_io_sync(c, &io, &st), -EIO);
		CHECK_EQ(st & 0x7ff, 0x181);
	} else {
		/* Type 3: a reference tag check is refused, on the device
		 * and by the host check alike (5.2.1.4). */
		io.flags = NVQ_IO_PRCHK_ALL;
		CHECK_EQ(nvq_read_io_sync(c, &io, &st), -EIO);
		CHECK_EQ(st & 0x7ff, 0x181);
		CHECK_EQ(nvq_pi_verify(c, 1, r, rm, nlb, ref, 0x1234, 0xffff,
				       NVQ_IO_PRCHK_ALL, &bad),
			 0x181);
		io.flags = chk;
	}
	io.reftag = ref;
	/* A corrupted guard, caught on write and by the host check. */
	w[3 * 512 + 7] ^= 1;
	CHECK_EQ(nvq_pi_verify(c, 1, w, wm, nlb, ref, 0x1234, 0xffff, chk,
			       &bad),
		 0x282);
	CHECK_EQ(bad, 3);
	io.buf = w;
	io.md = wm;
	CHECK_EQ(nvq_write_io_sync(c, &io, &st), -EIO);
	CHECK_EQ(st & 0x7ff, 0x282);

	/* PRACT and PRCHK need a PI namespace; md must match the layout. */
	nvq_dma_free(c, w);
	nvq_dma_free(c, r);
	nvq_dma_free(c, wm);
	nvq_dma_free(c, rm);
	nvq_close(c);
}

/* Refusals: PI flags on a plain namespace, md on an extended one. */
static void test_refusals(void)
{
	struct nvq_ctrl *c = open_or_die("emu:size=1M", NULL);
	uint8_t *b = nvq_dma_alloc(c, 4096, -1);
	struct nvq_io io;
	struct nvq_ns_format f;

	CHECK_OK(nvq_ns_format(c, 1, &f));
	CHECK_EQ(f.ms, 0);
	nvq_io_init(&io);
	io.nsid = 1;
	io.nlb = 1;
	io.buf = b;
	io.flags = NVQ_IO_PRACT;
	CHECK_EQ(nvq_read_io_sync(c, &io, NULL), -EINVAL);
	CHECK(strstr(nvq_errmsg(), "protection") != NULL);
	io.flags = 0;
	io.size = 8;
	CHECK_EQ(nvq_read_io_sync(c, &io, NULL), -EINVAL);
	io.size = sizeof(io);
	CHECK_OK(nvq_read_io_sync(c, &io, NULL));
	CHECK_EQ(nvq_ns_format(c, 7, &f), -ENOENT);
	CHECK_EQ(nvq_pi_generate(c, 1, b, NULL, 1, 0, 0), -EINVAL);
	nvq_dma_free(c, b);
	nvq_close(c);
}

/*
 * Extended LBA formats (CTRATT.ELBAS, Identify CNS 05h): PI with a 32- or
 * 64-bit guard, a qualified format or a storage tag is refused with the
 * reason (nvq computes 16-bit guards only); the 16-bit guard is driven,
 * and so is any ELBAF on a namespace without PI. The emulator's elbaf=
 * reports the dword; it implements 16-bit guards only.
 */
static void test_elbaf(void)
{
	static const struct {
		const char *opts, *why; /* why NULL: usable */
	} cases[] = {
		{ "ms=16,pi=1,elbaf=0x100", "64-bit guard" },
		{ "ms=16,pi=2,elbaf=0x80", "32-bit guard" },
		{ "ms=16,pi=3,elbaf=0x180", "qualified format" },
		{ "ms=8,pi=1,elbaf=8", "8-bit storage tag" },
		{ "ms=8,pi=1,elbaf=0", NULL },
		{ "ms=16,elbaf=0x100", NULL },
	};
	char uri[80];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nvq_ns_format f;
		struct nvq_ctrl *c;
		uint8_t *b;

		snprintf(uri, sizeof(uri), "emu:size=1M,lbads=9,%s",
			 cases[i].opts);
		c = open_or_die(uri, NULL);
		b = nvq_dma_alloc(c, 4096, -1);
		CHECK_OK(nvq_ns_format(c, 1, &f));
		if (!cases[i].why) {
			CHECK_EQ(f.usable, 1);
			CHECK_EQ(f.ms, strstr(cases[i].opts, "ms=8") ? 8 : 16);
		} else {
			CHECK_EQ(f.usable, 0);
			CHECK(strstr(f.why, cases[i].why) != NULL);
			CHECK_EQ(nvq_read_sync(c, 1, b, 0, 1, NULL), -ENOTSUP);
			CHECK(strstr(nvq_errmsg(), cases[i].why) != NULL);
		}
		nvq_dma_free(c, b);
		nvq_close(c);
	}
}

/* Raw I/O: a Read built by hand moves the data nvq_write() wrote. */
static void test_raw(void)
{
	struct nvq_ctrl *c = open_or_die("emu:size=1M,lbads=9", NULL);
	uint8_t w[1024], r[1024];
	struct nvq_sqe cmd;
	uint16_t st;

	fill(w, sizeof(w), 11);
	CHECK_OK(nvq_write_sync(c, 1, w, 6, 2, NULL));
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = 0x02;
	cmd.nsid = 1;
	cmd.cdw10 = 6;
	cmd.cdw12 = 1;
	CHECK_OK(nvq_io_raw_sync(c, &cmd, r, sizeof(r), NULL, 0, NULL, &st));
	CHECK_MEMEQ(w, r, sizeof(r));
	cmd.opcode = 0x03;
	CHECK_EQ(nvq_io_raw_sync(c, &cmd, r, sizeof(r), NULL, 0, NULL, &st),
		 -EINVAL);
	nvq_close(c);
}

/* Format NVM through nvq_admin(): nvq_ns_format() shows the new format. */
static void test_reformat(void)
{
	struct nvq_ctrl *c = open_or_die("emu:size=1M,lbads=9", NULL);
	uint8_t *w = nvq_dma_alloc(c, 4096, -1),
		*r = nvq_dma_alloc(c, 4096, -1);
	struct nvq_ns_format f;
	struct nvq_sqe cmd;

	CHECK_OK(nvq_ns_format(c, 1, &f));
	CHECK_EQ(f.ms, 0);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = 0x80;
	cmd.nsid = 1;
	/* LBA format 1 (512 + 8), PI type 1 (bits 7:5). */
	cmd.cdw10 = 1 | 1u << 5;
	CHECK_OK(nvq_admin(c, &cmd, NULL, 0, NULL, NULL));
	CHECK_OK(nvq_ns_format(c, 1, &f));
	CHECK_EQ(f.ms, 8);
	CHECK_EQ(f.pi_type, 1);
	CHECK_EQ(f.lba_size, 512);
	/* And I/O follows it: PRACT round trip. */
	fill(w, 4096, 2);
	CHECK_OK(nvq_write_sync(c, 1, w, 0, 8, NULL));
	CHECK_OK(nvq_read_sync(c, 1, r, 0, 8, NULL));
	CHECK_MEMEQ(w, r, 4096);
	nvq_dma_free(c, w);
	nvq_dma_free(c, r);
	nvq_close(c);
}

int main(void)
{
	test_reformat();
	test_refusals();
	test_elbaf();
	test_raw();
	test_extended();
	test_extended_pi();
	test_separate();
	test_pi(1, 8, 0, "");
	test_pi(2, 8, 1, "");
	test_pi(3, 8, 0, "");
	test_pi(1, 16, 0, "");
	test_pi(3, 16, 1, "");
	/* MDTS 8 KiB: 64 blocks are 4 commands, MPTR and reftag advance. */
	test_pi(1, 16, 1, ",mdts=1");
	test_pi(2, 8, 0, ",mdts=1");
	return 0;
}
