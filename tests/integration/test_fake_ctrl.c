// SPDX-License-Identifier: MIT
/*
 * The driver against a scripted controller that returns odd but legal
 * values the emulated controller never does: a stale CSTS.RDY, I/O Command
 * Sets without the NVM bit, an NVMe 1.0 controller (no CNS 02h), reserved
 * FLBAS bits, VWC.FB 10b, a CRTO beyond CAP.TO, a 65536-entry queue, a
 * transport whose DMA mapping fails with its own reason, a device gone
 * mid-enable and one that never finishes shutdown.
 *
 * The controller is tests/common/fake_transport.c, opened as "test:"
 * through the library's test hook.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"
#include "fake_transport.h"
#include "internal.h"

static struct nvq_ctrl *open_fake(void)
{
	struct nvq_opts o;

	nvq_opts_init(&o);
	o.mode = NVQ_MODE_POLL;
	o.nr_queues = 1;
	o.queue_depth = 64;
	return open_or_die("test:", &o);
}

static unsigned int nr_ns(struct nvq_ctrl *c, uint32_t *ids)
{
	int n = nvq_ns_list(c, ids, 8);

	CHECK(n >= 0);
	return (unsigned int)n;
}

/* CSTS.RDY still 1 from a previous owner while CC.EN is 0. */
static void test_stale_rdy(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	fake.stale_rdy = 20;
	c = open_fake();
	CHECK(!fake.en_while_rdy);
	nvq_close(c);
}

/* CAP.CSS with I/O Command Sets: CC.CSS 110b, only NVM namespaces kept. */
static void test_iocss(void)
{
	uint32_t ids[8];
	struct nvq_ctrl *c;

	fake_reset();
	fake.cap &= ~((uint64_t)0xff << 37);
	fake.cap |= (uint64_t)(1u << 6) << 37; /* IOCSS alone */
	fake.csi[1] = 0; /* NVM */
	fake.csi[3] = 2; /* Zoned */
	c = open_fake();
	CHECK_NOTES(c, "CSI 2");
	CHECK(!*nvq_errmsg()); /* notes are not failure messages */
	CHECK_EQ((fake.cc & NVQ_CC_CSS_MASK) >> NVQ_CC_CSS_SHIFT, 6);
	CHECK_EQ(nr_ns(c, ids), 1);
	CHECK_EQ(ids[0], 1);
	nvq_close(c);

	fake_reset();
	fake.cap |= (uint64_t)(1u << 6) << 37; /* NVM and IOCSS */
	c = open_fake();
	CHECK_EQ((fake.cc & NVQ_CC_CSS_MASK) >> NVQ_CC_CSS_SHIFT, 6);
	CHECK_EQ(nr_ns(c, ids), 2); /* no CSI descriptor: NVM */
	nvq_close(c);

	fake_reset();
	c = open_fake();
	CHECK_EQ(fake.cc & NVQ_CC_CSS_MASK, NVQ_CC_CSS_NVM);
	CHECK_EQ(fake.cns[NVQ_ID_CNS_NS_DESC_LIST], 0);
	nvq_close(c);
}

/* NVMe 1.0 has no active namespace list: scan 1..NN instead. */
static void test_v10(void)
{
	uint32_t ids[8];
	struct nvq_ctrl *c;

	fake_reset();
	fake.vs = NVQ_VS(1, 0, 0);
	fake.v10 = true;
	c = open_fake();
	CHECK_EQ(fake.cns[NVQ_ID_CNS_NS_ACTIVE_LIST], 0);
	CHECK_EQ(nr_ns(c, ids), 2);
	CHECK_EQ(ids[0], 1);
	CHECK_EQ(ids[1], 3);
	nvq_close(c);
}

/* FLBAS bits 6:5 count only with more than 16 LBA formats. */
static void test_flbas(void)
{
	struct nvq_ns_info info;
	struct nvq_ctrl *c;

	fake_reset();
	fake.ns[1].flbas = 0x60; /* reserved bits set, format 0 */
	c = open_fake();
	CHECK_OK(nvq_ns_info(c, 1, &info));
	CHECK_EQ(info.lba_size, 512);
	nvq_close(c);

	fake_reset();
	fake.ns[1].nlbaf = 16; /* 17 formats: format 16 needs bit 5 */
	fake.ns[1].flbas = 0x20;
	fake.ns[1].lbaf[16].ds = 12;
	c = open_fake();
	CHECK_OK(nvq_ns_info(c, 1, &info));
	CHECK_EQ(info.lba_size, 4096);
	nvq_close(c);
}

/* VWC.FB 10b: the broadcast Flush would fail; refuse it clearly. */
static void test_flush_broadcast(void)
{
	struct nvq_ctrl *c;
	uint16_t st = 0;

	fake_reset();
	fake.idc.vwc = 0x5;
	c = open_fake();
	CHECK_EQ(nvq_flush_sync(c, 0xffffffffu, &st), -ENOTSUP);
	CHECK_MSG("VWC.FB");
	CHECK_EQ(fake.io[nvq_cmd_flush], 0);
	CHECK_OK(nvq_flush_sync(c, 1, &st));
	nvq_close(c);

	fake_reset();
	fake.idc.vwc = 0x7;
	c = open_fake();
	CHECK_OK(nvq_flush_sync(c, 0xffffffffu, &st));
	CHECK_EQ(fake.io[nvq_cmd_flush], 1);
	nvq_close(c);
}

/* CAP.TO 500 ms, CRTO.CRWMT 5 s: a 1.5 s enable is within the limit. */
static void test_crto(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	fake.cap |= 1ull << 59; /* CRWMS */
	fake.crto = 10;
	fake.rdy_delay_ms = 1500;
	c = open_fake();
	nvq_close(c);
}

/* A failed DMA mapping keeps the transport's reason at every step. */
static void test_map_fail(void)
{
	struct nvq_ctrl *c = NULL;
	int n, rc;

	for (n = 0;; n++) {
		fake_reset();
		fake.map_ok = n;
		rc = nvq_open("test:", NULL, &c);
		if (!rc)
			break;
		CHECK(rc < 0);
		CHECK_MSG("RLIMIT_MEMLOCK");
		CHECK(n < 1000);
	}
	fake.map_ok = 0;
	CHECK(!nvq_dma_alloc(c, 1 << 20, -1));
	CHECK_MSG("for the device failed");
	CHECK_MSG("RLIMIT_MEMLOCK is 64 KiB");
	nvq_close(c);
}

/* Set Features Number of Queues may grant more than asked. */
static void test_more_queues(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	fake.nq_result = 63u << 16 | 63u;
	c = open_fake();
	CHECK_EQ(nvq_ctrl_queue_count(c), 1);
	nvq_close(c);
}

/* CSTS all-ones while waiting for RDY: the device is gone. */
static void test_gone(void)
{
	struct nvq_ctrl *c = NULL;

	fake_reset();
	fake.gone_on_enable = true;
	CHECK_EQ(nvq_open("test:", NULL, &c), -ENODEV);
	CHECK_MSG("gone");
}

/* CSTS.SHST never completes: close gives up and disables. */
static void test_no_shutdown(void)
{
	struct nvq_ctrl *c;

	fake_reset();
	fake.no_shutdown = true;
	c = open_fake();
	nvq_close(c);
	CHECK_EQ(fake.cc & NVQ_CC_EN, 0);
}

/* 0's based NLB everywhere, DSM NR and its 1's based range length. */
static void test_encodings(void)
{
	struct nvq_ctrl *c;
	uint16_t st;
	void *buf;

	fake_reset();
	c = open_fake();
	buf = nvq_dma_alloc(c, 8 * 512, -1);
	CHECK(buf);
	CHECK_OK(nvq_write_sync(c, 1, buf, 10, 8, &st));
	CHECK_EQ(fake.last_io[0].cdw12 & 0xffff, 7);
	CHECK_EQ(fake.last_io[0].cdw10, 10);
	/* MDTS (5: 128 KiB = 256 blocks) sizes Write Zeroes commands too. */
	CHECK_OK(nvq_write_zeroes_sync(c, 1, 0, 65537, &st));
	CHECK_EQ(fake.io[nvq_cmd_write_zeroes], 257);
	CHECK_EQ(fake.last_io[1].cdw12 & 0xffff, 255);
	CHECK_EQ(fake.last_io[0].cdw12 & 0xffff, 0);
	CHECK_EQ(fake.last_io[0].cdw10, 65536);
	CHECK_OK(nvq_deallocate_sync(c, 1, 5, 100, &st));
	CHECK_EQ(fake.last_io[0].cdw10 & 0xff, 0);
	CHECK_EQ(fake.last_range.nlb, 100);
	CHECK_EQ(fake.last_range.slba, 5);
	nvq_dma_free(c, buf);
	nvq_close(c);

	fake_reset();
	fake.idc.oncs = 0;
	c = open_fake();
	CHECK_EQ(nvq_write_zeroes_sync(c, 1, 0, 1, &st), -ENOTSUP);
	CHECK_EQ(nvq_deallocate_sync(c, 1, 0, 1, &st), -ENOTSUP);
	nvq_close(c);
}

static unsigned int nr_done;

static void watchdog(int sig)
{
	static const char msg[] =
		"max-depth: no progress in 30 s: CQ head did not wrap\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static void flush_cb(void *arg, const struct nvq_cpl *cpl)
{
	CHECK_EQ(cpl->err, 0);
	nr_done++;
}

/* CAP.MQES 0xffff allows 65536 entries: the CQ head must wrap there. */
static void test_max_depth(void)
{
	struct nvq_queue_stats qs;
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	unsigned int i, total = 2 * 65536 + 100;

	fake_reset();
	nvq_opts_init(&o);
	o.mode = NVQ_MODE_POLL;
	o.nr_queues = 1;
	o.queue_depth = 65536;
	c = open_or_die("test:", &o);
	q = nvq_ctrl_queue(c, 0);
	CHECK_EQ(nvq_queue_depth(q), 65536);
	/* Without the wrap the reaper spins on stale entries: fail, not hang. */
	signal(SIGALRM, watchdog);
	alarm(30);
	nr_done = 0;
	for (i = 0; i < total; i++) {
		CHECK_OK(nvq_flush(q, 1, 0, flush_cb, NULL));
		if (i % 1024 == 1023)
			nvq_poll(q, 0);
	}
	nvq_poll(q, 0);
	CHECK_EQ(nr_done, total);
	nvq_queue_stats(q, &qs);
	CHECK_EQ(qs.bad_cqes, 0);
	alarm(0);
	nvq_close(c);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "stale-rdy", test_stale_rdy },
	{ "iocss", test_iocss },
	{ "v10", test_v10 },
	{ "flbas", test_flbas },
	{ "flush-broadcast", test_flush_broadcast },
	{ "crto", test_crto },
	{ "map-fail", test_map_fail },
	{ "more-queues", test_more_queues },
	{ "gone", test_gone },
	{ "encodings", test_encodings },
	{ "max-depth", test_max_depth },
	{ "no-shutdown", test_no_shutdown },
};

/* No argument: every test; else only the one named. */
int main(int argc, char **argv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (argc > 1 && strcmp(argv[1], tests[i].name))
			continue;
		tests[i].fn();
		printf("fake-ctrl %s: ok\n", tests[i].name);
	}
	return 0;
}
