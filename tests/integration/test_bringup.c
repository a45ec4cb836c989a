// SPDX-License-Identifier: MIT
/*
 * Bring-up and close: registers, Identify contents (MN, NN, MDTS ->
 * max_transfer), namespaces, queue count and depth, repeated open/close.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

static void test_defaults(void)
{
	struct nvq_ctrl *c = open_or_die("emu:", NULL);
	const struct nvq_id_ctrl *id = nvq_ctrl_id(c);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct nvq_ns_info info;
	uint32_t nsids[4];
	unsigned int i;

	CHECK(id);
	CHECK(!strncmp(id->mn, "nvq emulated controller", 23));
	/* NN bounds the nsids; the active ones come from CNS 02h. */
	CHECK(id->nn >= 1);
	CHECK_EQ(id->sqes, 0x66);
	CHECK_EQ(id->cqes, 0x44);
	CHECK(!strcmp(nvq_ctrl_uri(c), "emu:"));
	CHECK(nvq_ctrl_cap(c) != 0 && nvq_ctrl_cap(c) != ~0ull);
	CHECK(NVQ_VS_MJR(nvq_ctrl_vs(c)) >= 1);
	/* Default MDTS 5: 128 KiB per command. */
	CHECK_EQ(id->mdts, 5);
	CHECK_EQ(nvq_ctrl_max_transfer(c), 4096u << 5);

	CHECK_EQ(nvq_ns_list(c, nsids, 4), 1);
	CHECK_EQ(nsids[0], 1);
	CHECK_OK(nvq_ns_info(c, 1, &info));
	CHECK_EQ(info.nsid, 1);
	CHECK_EQ(info.lba_size, 4096);
	CHECK_EQ(info.nlba, (1ull << 30) / 4096);
	CHECK_EQ(info.max_transfer, 4096u << 5);
	CHECK(info.id && info.id->nsze == info.nlba);
	CHECK_EQ(nvq_ns_info(c, 2, &info), -ENOENT);
	CHECK_EQ(nvq_ns_info(c, 0, &info), -ENOENT);

	/* One queue per online CPU (the emulator grants 64). */
	CHECK_EQ(nvq_ctrl_queue_count(c), cpus < 64 ? cpus : 64);
	for (i = 0; i < nvq_ctrl_queue_count(c); i++) {
		struct nvq_queue *q = nvq_ctrl_queue(c, i);

		CHECK(q);
		CHECK_EQ(nvq_queue_id(q), i + 1);
		CHECK_EQ(nvq_queue_depth(q), 256);
		CHECK_EQ(nvq_queue_inflight(q), 0);
	}
	CHECK(!nvq_ctrl_queue(c, nvq_ctrl_queue_count(c)));
	CHECK(nvq_ctrl_queue_for_cpu(c));
	nvq_close(c);
}

static void test_params(void)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_ns_info info;
	uint32_t nsids[8];

	/* MDTS 2 -> 16 KiB; MQES 63 caps the depth at 64. */
	nvq_opts_init(&o);
	o.nr_queues = 3;
	o.queue_depth = 1000;
	c = open_or_die("emu:mdts=2,mqes=63,size=4M,ns=3,lbads=9", &o);
	CHECK_EQ(nvq_ctrl_id(c)->mdts, 2);
	CHECK_EQ(nvq_ctrl_max_transfer(c), 16384);
	CHECK(nvq_ctrl_id(c)->nn >= 3);
	CHECK_EQ(nvq_ns_list(c, nsids, 2), 3);
	CHECK_EQ(nsids[0], 1);
	CHECK_EQ(nsids[1], 2);
	CHECK_EQ(nvq_ns_list(c, nsids, 8), 3);
	CHECK_EQ(nsids[2], 3);
	CHECK_OK(nvq_ns_info(c, 3, &info));
	CHECK_EQ(info.lba_size, 512);
	CHECK_EQ(info.nlba, 4u << 20 >> 9);
	CHECK_EQ(info.max_transfer, 16384);
	CHECK_EQ(nvq_ctrl_queue_count(c), 3);
	CHECK_EQ(nvq_queue_depth(nvq_ctrl_queue(c, 2)), 64);
	nvq_close(c);

	/* MDTS 0 (no limit): the driver caps commands at 2 MiB. */
	c = open_or_die("emu:mdts=0,size=8M", NULL);
	CHECK_EQ(nvq_ctrl_max_transfer(c), 2u << 20);
	nvq_close(c);

	/* The controller grants fewer queues than asked: use what it gave. */
	o.nr_queues = 8;
	o.queue_depth = 0;
	c = open_or_die("emu:qpairs=2,size=4M", &o);
	CHECK_EQ(nvq_ctrl_queue_count(c), 2);
	nvq_close(c);

	/* The smallest queues (2 entries, one command slot) and a doorbell
	 * stride: I/O still works, shadow doorbells included. */
	c = open_or_die("emu:mqes=1,dstrd=2,size=4M", NULL);
	CHECK_EQ(nvq_queue_depth(nvq_ctrl_queue(c, 0)), 2);
	{
		char blk[4096], back[4096];

		fill_pattern(blk, sizeof(blk), 5);
		CHECK_OK(nvq_write_sync(c, 1, blk, 9, 1, NULL));
		CHECK_OK(nvq_read_sync(c, 1, back, 9, 1, NULL));
		CHECK(!memcmp(blk, back, sizeof(blk)));
	}
	nvq_close(c);

	/* Slow ready (rdy_delay) is waited for. */
	c = open_or_die("emu:rdy_delay=20ms,size=4M", NULL);
	nvq_close(c);
}

static void test_reopen(void)
{
	int i;

	/* Open/close cycles leak nothing (ASan's leak check) and each
	 * controller comes up clean. */
	for (i = 0; i < 5; i++) {
		struct nvq_ctrl *c = open_or_die("emu:size=4M", NULL);
		struct nvq_ctrl *d = open_or_die("emu:size=4M,ns=2", NULL);

		CHECK_EQ(nvq_ns_list(c, NULL, 0), 1);
		CHECK_EQ(nvq_ns_list(d, NULL, 0), 2);
		nvq_close(c);
		nvq_close(d);
	}
	nvq_close(NULL);
}

int main(void)
{
	test_defaults();
	test_params();
	test_reopen();
	printf("bringup: ok\n");
	return 0;
}
