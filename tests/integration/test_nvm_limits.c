// SPDX-License-Identifier: MIT
/*
 * Write Zeroes and Deallocate are sized by the NVM command set's own
 * limits (Identify CNS 06h, CSI 00h: WZSL, DMRL, DMRSL, DMSL), not by MDTS,
 * which limits data transfers only; without that Identify, Write Zeroes
 * keeps MDTS as its limit, as Linux does. Against the scripted fake
 * controller, which records every command and DSM range it gets.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "fake_transport.h"
#include "testutil.h"

static struct nvq_ctrl *open_fake(void)
{
	struct nvq_opts o;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 64;
	return open_or_die("test:", &o);
}

static unsigned int wz_cmds(void)
{
	return fake.io[nvq_cmd_write_zeroes & 15];
}

/* NVMe 1.4, no CNS 06h asked: Write Zeroes by MDTS (128 KiB, 256 LBAs). */
static void test_mdts_fallback(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	c = open_fake();
	CHECK_EQ(fake.cns[NVQ_ID_CNS_CSI_CTRL], 0);
	CHECK_OK(nvq_write_zeroes_sync(c, 1, 0, 1000, NULL));
	CHECK_EQ(wz_cmds(), 4);
	nvq_close(c);
}

/* NVMe 2.0 that does not know CNS 06h: asked, refused, still MDTS. */
static void test_cns6_refused(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	fake.vs = NVQ_VS(2, 0, 0);
	c = open_fake();
	CHECK_EQ(fake.cns[NVQ_ID_CNS_CSI_CTRL], 1);
	CHECK(!*nvq_errmsg());
	CHECK_OK(nvq_write_zeroes_sync(c, 1, 0, 1000, NULL));
	CHECK_EQ(wz_cmds(), 4);
	nvq_close(c);
}

/* WZSL 0: no limit but the 16-bit NLB (65536 blocks a command). */
static void test_wzsl_unlimited(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	fake.vs = NVQ_VS(2, 0, 0);
	fake.has_id_nvm = true;
	c = open_fake();
	CHECK_OK(nvq_write_zeroes_sync(c, 1, 0, 100000, NULL));
	CHECK_EQ(wz_cmds(), 2);
	/* The first command: all 65536 blocks (NLB 0's based). */
	CHECK_EQ(fake.last_io[1].cdw12 & 0xffff, 65535);
	CHECK_EQ(fake.last_io[0].cdw12 & 0xffff, 100000 - 65536 - 1);
	CHECK_EQ(fake.last_io[0].cdw10, 65536);
	nvq_close(c);
}

/* WZSL 1: 2^1 pages of 4 KiB = 16 LBAs of 512 bytes a command. */
static void test_wzsl_limit(void)
{
	struct nvq_queue_stats st;
	struct cb_count cnt = { 0 };
	struct nvq_ctrl *c;
	struct nvq_queue *q;

	fake_reset();
	fake.vs = NVQ_VS(2, 0, 0);
	fake.has_id_nvm = true;
	fake.id_nvm.wzsl = 1;
	c = open_fake();
	q = nvq_ctrl_queue(c, 0);
	CHECK_OK(nvq_write_zeroes(q, 1, 7, 40, 0, count_cb, &cnt));
	reap_until(q, &cnt, 1);
	CHECK_EQ(cnt.err, 0);
	CHECK_EQ(wz_cmds(), 3);
	nvq_queue_stats(q, &st);
	CHECK_EQ(st.submitted, 3);
	CHECK_EQ(fake.last_io[2].cdw10, 7);
	CHECK_EQ(fake.last_io[1].cdw10, 23);
	CHECK_EQ(fake.last_io[0].cdw12 & 0xffff, 40 - 32 - 1);
	nvq_close(c);
}

/* The ranges sent cover [@slba, @slba + @nlb) in order, each <= @max. */
static void check_ranges(uint64_t slba, uint64_t nlb, uint32_t max)
{
	uint64_t at = slba;
	unsigned int i;

	for (i = 0; i < fake.nr_ranges; i++) {
		CHECK_EQ(fake.ranges[i].slba, at);
		CHECK(fake.ranges[i].nlb >= 1 && fake.ranges[i].nlb <= max);
		at += fake.ranges[i].nlb;
	}
	CHECK_EQ(at, slba + nlb);
}

/* DMRSL 100, DMRL 4: 1000 blocks are 10 ranges in 3 commands. */
static void test_dsm_ranges(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	fake.vs = NVQ_VS(2, 0, 0);
	fake.has_id_nvm = true;
	fake.id_nvm.dmrsl = 100;
	fake.id_nvm.dmrl = 4;
	c = open_fake();
	CHECK_OK(nvq_deallocate_sync(c, 1, 5, 1000, NULL));
	CHECK_EQ(fake.dsm_cmds, 3);
	CHECK_EQ(fake.nr_ranges, 10);
	check_ranges(5, 1000, 100);
	/* NR of the last command: two ranges left, 0's based. */
	CHECK_EQ(fake.last_io[0].cdw10 & 0xff, 1);
	nvq_close(c);
}

/* DMSL 150 caps a command's blocks: one 100-block range each. */
static void test_dsm_size_limit(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	fake.vs = NVQ_VS(2, 0, 0);
	fake.has_id_nvm = true;
	fake.id_nvm.dmrsl = 100;
	fake.id_nvm.dmrl = 4;
	fake.id_nvm.dmsl = 150;
	c = open_fake();
	CHECK_OK(nvq_deallocate_sync(c, 1, 0, 1000, NULL));
	CHECK_EQ(fake.dsm_cmds, 10);
	check_ranges(0, 1000, 100);
	nvq_close(c);
}

/* No limits: one command, one range, however long. */
static void test_dsm_one_range(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	c = open_fake();
	CHECK_OK(nvq_deallocate_sync(c, 1, 0, 1 << 20, NULL));
	CHECK_EQ(fake.dsm_cmds, 1);
	CHECK_EQ(fake.nr_ranges, 1);
	check_ranges(0, 1 << 20, UINT32_MAX);
	nvq_close(c);
}

/*
 * The emulated controller answers CNS 06h with no Write Zeroes limit: a
 * 1 GiB zeroing is four commands (NLB's 65536 blocks each), not the 8192
 * MDTS-sized ones of before, and an asynchronous one far above
 * (depth - 1) x MDTS is accepted.
 */
static void test_emu(void)
{
	struct nvq_queue_stats st;
	struct cb_count cnt = { 0 };
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	struct nvq_opts o;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 32;
	c = open_or_die("emu:size=1G,mdts=5", &o);
	q = nvq_ctrl_queue(c, 0);
	CHECK_OK(nvq_write_zeroes_sync(c, 1, 0, 262144, NULL));
	nvq_queue_stats(q, &st);
	CHECK_EQ(st.submitted, 4);
	CHECK_OK(nvq_write_zeroes(q, 1, 0, 16384, 0, count_cb, &cnt));
	reap_until(q, &cnt, 1);
	CHECK_EQ(cnt.err, 0);
	nvq_close(c);
}

int main(void)
{
	test_emu();
	test_mdts_fallback();
	test_cns6_refused();
	test_wzsl_unlimited();
	test_wzsl_limit();
	test_dsm_ranges();
	test_dsm_size_limit();
	test_dsm_one_range();
	printf("nvm-limits: ok\n");
	return T_EXIT_PASS;
}
