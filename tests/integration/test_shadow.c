// SPDX-License-Identifier: MIT
/*
 * Shadow doorbells (Doorbell Buffer Config): when the controller offers
 * them nvq uses them, and while the device is busy far fewer MMIO
 * doorbells are written than commands submitted; when the device sleeps
 * between commands, EventIdx makes nvq ring it every time (no I/O hangs);
 * with dbbuf=0 (or the option off) every submission rings MMIO.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "testutil.h"
#include "ctrl.h"

#define QD 32
#define IOS 4000

static void busy(const char *uri, bool shadow)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	struct nvq_queue_stats st;
	struct cb_count cnt = { 0 };
	char *buf;
	int sub = 0;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.shadow_doorbells = shadow;
	c = open_or_die(uri, &o);
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, QD * 4096, -1);
	CHECK(buf);
	while (sub < IOS) {
		while (sub < IOS && sub - cnt.calls < QD) {
			CHECK_OK(nvq_read(q, 1, buf + (sub % QD) * 4096,
					  (uint64_t)sub % 1024, 1, 0, count_cb,
					  &cnt));
			sub++;
		}
		CHECK(nvq_poll(q, 0) >= 0);
	}
	reap_until(q, &cnt, IOS);
	CHECK_EQ(cnt.err, 0);
	nvq_queue_stats(q, &st);
	CHECK_EQ(st.submitted, IOS);
	if (shadow && strstr(uri, "dbbuf=0") == NULL) {
		CHECK(q->sq_shadow && q->cq_shadow);
		/* The device polls the shadow values while it has work. */
		CHECK(st.doorbells * 2 < st.submitted);
		fprintf(stderr, "%s: %llu MMIO doorbells for %llu commands\n",
			uri, (unsigned long long)st.doorbells,
			(unsigned long long)st.submitted);
	} else {
		CHECK(!q->sq_shadow && !q->cq_shadow);
		CHECK_EQ(st.doorbells, st.submitted);
	}
	nvq_dma_free(c, buf);
	nvq_close(c);
}

/* One command at a time with a device that sleeps as soon as it is idle:
 * each submission must reach it (EventIdx asks for MMIO). */
static void sleepy(enum nvq_mode mode)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	struct cb_count cnt = { 0 };
	char *buf;
	int i;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.mode = mode;
	c = open_or_die("emu:size=4M,idle_spin=0", &o);
	q = nvq_ctrl_queue(c, 0);
	CHECK(q->sq_shadow);
	buf = nvq_dma_alloc(c, 4096, -1);
	CHECK(buf);
	for (i = 0; i < 300; i++) {
		CHECK_OK(nvq_write(q, 1, buf, (uint64_t)i, 1, 0, count_cb,
				   &cnt));
		/* A lost doorbell shows as a 10 s timeout here. */
		CHECK_EQ(nvq_wait(q, 1, 10000), 1);
	}
	CHECK_EQ(cnt.calls, 300);
	CHECK_EQ(cnt.err, 0);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

int main(void)
{
	/* A device that keeps polling for 20 ms after its last command. */
	busy("emu:size=4M,idle_spin=20ms", true);
	busy("emu:size=4M,idle_spin=20ms", false);
	busy("emu:size=4M,dbbuf=0", true);
	sleepy(NVQ_MODE_POLL);
	sleepy(NVQ_MODE_WAIT);
	printf("shadow: ok\n");
	return 0;
}
