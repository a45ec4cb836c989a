// SPDX-License-Identifier: MIT
/*
 * struct nvq_opts across releases: a caller built against an older,
 * smaller struct still opens a controller and gets the defaults for the
 * fields it does not know; a caller built against a newer, larger struct
 * opens when the fields this library does not know are zero, and is
 * refused (-E2BIG, not silently ignored) when they are not. Linked against
 * libnvq.so, as an application is.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <nvq/nvq.h>

#include "check.h"

/* The layout an application built against NVQ_OPTS_SIZE_VER0 has. */
struct opts_ver0 {
	uint32_t size;
	unsigned int nr_queues;
	unsigned int queue_depth;
	enum nvq_mode mode;
	bool exclusive;
	bool shadow_doorbells;
	unsigned int admin_timeout_ms;
};

/* ... and against NVQ_OPTS_SIZE_VER1 (no command timeouts yet). */
struct opts_ver1 {
	struct opts_ver0 v0;
	int cpu_lat_limit_us;
	unsigned int cpu_lat_timeout_ms;
};

/* ... and against NVQ_OPTS_SIZE_VER2 (no QoS method yet). */
struct opts_ver2 {
	struct opts_ver1 v1;
	unsigned int io_timeout_ms;
};

/* A future application's: today's struct and one more field. */
struct opts_next {
	struct nvq_opts cur;
	unsigned int newer_knob;
	unsigned int pad;
};

#define URI "emu:size=1M"

static void test_sizes(void)
{
	CHECK_EQ(sizeof(struct opts_ver0), NVQ_OPTS_SIZE_VER0);
	CHECK_EQ(sizeof(struct opts_ver1), NVQ_OPTS_SIZE_VER1);
	CHECK_EQ(sizeof(struct opts_ver2), NVQ_OPTS_SIZE_VER2);
	CHECK_EQ(sizeof(struct nvq_opts), NVQ_OPTS_SIZE_VER3);
	CHECK_EQ(NVQ_OPTS_SIZE_VER3, 40);
	CHECK_EQ(offsetof(struct nvq_opts, cpu_lat_method), NVQ_OPTS_SIZE_VER2);
	CHECK_EQ(offsetof(struct nvq_opts, io_timeout_ms), NVQ_OPTS_SIZE_VER1);
	CHECK_EQ(offsetof(struct opts_ver2, io_timeout_ms),
		 offsetof(struct nvq_opts, io_timeout_ms));
	CHECK_EQ(offsetof(struct opts_ver1, cpu_lat_timeout_ms),
		 offsetof(struct nvq_opts, cpu_lat_timeout_ms));
	CHECK_EQ(offsetof(struct opts_ver0, admin_timeout_ms),
		 offsetof(struct nvq_opts, admin_timeout_ms));
}

/* The old caller's init writes only its own bytes. */
static void test_init_old(void)
{
	unsigned char raw[NVQ_OPTS_SIZE_VER0 + 8];
	struct opts_ver0 o;

	memset(raw, 0xa5, sizeof(raw));
	nvq_opts_init_size((struct nvq_opts *)raw, NVQ_OPTS_SIZE_VER0);
	for (size_t i = NVQ_OPTS_SIZE_VER0; i < sizeof(raw); i++)
		CHECK_EQ(raw[i], 0xa5);
	memcpy(&o, raw, sizeof(o));
	CHECK_EQ(o.size, NVQ_OPTS_SIZE_VER0);
	CHECK_EQ(o.mode, NVQ_MODE_POLL);
	CHECK(o.shadow_doorbells);
}

static void test_open_old(void)
{
	struct nvq_qos_info info;
	struct opts_ver0 o;
	struct nvq_ctrl *c;

	nvq_opts_init_size((struct nvq_opts *)&o, sizeof(o));
	o.nr_queues = 2;
	o.queue_depth = 64;
	CHECK_EQ(nvq_open(URI, (struct nvq_opts *)&o, &c), 0);
	CHECK_EQ(nvq_ctrl_queue_count(c), 2);
	CHECK_EQ(nvq_queue_depth(nvq_ctrl_queue(c, 0)), 64);
	/* The QoS fields it does not have: defaults. */
	nvq_qos_info(nvq_ctrl_qos(c), &info);
	CHECK_EQ(info.limit_us, NVQ_QOS_OFF);
	CHECK_EQ(info.timeout_ms, NVQ_QOS_TIMEOUT_MS_DEFAULT);
	nvq_close(c);
}

static void test_open_ver1(void)
{
	struct nvq_qos_info info;
	struct opts_ver1 o;
	struct nvq_ctrl *c;
	unsigned int io, admin;

	nvq_opts_init_size((struct nvq_opts *)&o, sizeof(o));
	CHECK_EQ(o.v0.size, NVQ_OPTS_SIZE_VER1);
	o.v0.nr_queues = 1;
	o.v0.admin_timeout_ms = 7000;
	o.cpu_lat_timeout_ms = 9;
	CHECK_EQ(nvq_open(URI, (struct nvq_opts *)&o, &c), 0);
	nvq_qos_info(nvq_ctrl_qos(c), &info);
	CHECK_EQ(info.timeout_ms, 9);
	/* The field it does not have: the default. */
	CHECK_OK(nvq_ctrl_timeouts(c, &io, &admin));
	CHECK_EQ(io, 30000);
	CHECK_EQ(admin, 7000);
	nvq_close(c);
}

/* A release-0.3 caller: its struct ends before cpu_lat_method, and what
 * lies after it in memory is not the library's to read. */
static void test_open_ver2(void)
{
	struct nvq_qos_method_info mi;
	unsigned char raw[NVQ_OPTS_SIZE_VER2 + 16];
	struct opts_ver2 *o = (struct opts_ver2 *)raw;
	unsigned int io, admin;
	struct nvq_ctrl *c;

	memset(raw, 0xff, sizeof(raw));
	nvq_opts_init_size((struct nvq_opts *)raw, NVQ_OPTS_SIZE_VER2);
	for (size_t i = NVQ_OPTS_SIZE_VER2; i < sizeof(raw); i++)
		CHECK_EQ(raw[i], 0xff);
	CHECK_EQ(o->v1.v0.size, NVQ_OPTS_SIZE_VER2);
	o->v1.v0.nr_queues = 1;
	o->io_timeout_ms = 4321;
	CHECK_EQ(nvq_open(URI, (struct nvq_opts *)raw, &c), 0);
	CHECK_OK(nvq_ctrl_timeouts(c, &io, &admin));
	CHECK_EQ(io, 4321);
	/* The field it does not have: the default. */
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	nvq_close(c);
}

static void test_open_current(void)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_info info;
	unsigned int io, admin;
	struct nvq_opts o;
	struct nvq_ctrl *c;

	nvq_opts_init(&o);
	CHECK_EQ(o.size, sizeof(o));
	o.nr_queues = 1;
	o.cpu_lat_timeout_ms = 7;
	o.io_timeout_ms = 1234;
	CHECK_EQ(nvq_open(URI, &o, &c), 0);
	nvq_qos_info(nvq_ctrl_qos(c), &info);
	CHECK_EQ(info.timeout_ms, 7);
	CHECK_OK(nvq_ctrl_timeouts(c, &io, &admin));
	CHECK_EQ(io, 1234);
	CHECK_EQ(admin, 60000);
	nvq_close(c);
	CHECK_EQ(nvq_open(URI, NULL, &c), 0);
	nvq_close(c);

	/* This release's field is read. */
	nvq_opts_init(&o);
	CHECK_EQ(o.cpu_lat_method, NVQ_QOS_METHOD_AUTO);
	o.nr_queues = 1;
	o.cpu_lat_method = NVQ_QOS_METHOD_HYBRID;
	CHECK_EQ(nvq_open(URI, &o, &c), 0);
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_HYBRID);
	nvq_close(c);
	o.cpu_lat_method = NVQ_QOS_METHOD_NONE;
	CHECK_EQ(nvq_open(URI, &o, &c), -EINVAL);
	CHECK(c == NULL);
}

static void test_open_newer(void)
{
	struct opts_next o;
	struct nvq_ctrl *c;

	nvq_opts_init_size(&o.cur, sizeof(o));
	CHECK_EQ(o.cur.size, sizeof(o));
	CHECK_EQ(o.newer_knob, 0);
	o.cur.nr_queues = 1;
	CHECK_EQ(nvq_open(URI, &o.cur, &c), 0);
	nvq_close(c);

	o.newer_knob = 1;
	c = (struct nvq_ctrl *)&o;
	CHECK_EQ(nvq_open(URI, &o.cur, &c), -E2BIG);
	CHECK(c == NULL);
	CHECK_MSG("does not know");
}

static void test_open_bad_size(void)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;

	memset(&o, 0, sizeof(o)); /* never initialised: size 0 */
	CHECK_EQ(nvq_open(URI, &o, &c), -EINVAL);
	CHECK_MSG("nvq_opts_init");
	nvq_opts_init(&o);
	o.size = NVQ_OPTS_SIZE_VER0 + 4; /* between two released sizes */
	CHECK_EQ(nvq_open(URI, &o, &c), -EINVAL);
	o.size = NVQ_OPTS_SIZE_VER1 + 2;
	CHECK_EQ(nvq_open(URI, &o, &c), -EINVAL);
	o.size = NVQ_OPTS_SIZE_VER2 + 2;
	CHECK_EQ(nvq_open(URI, &o, &c), -EINVAL);
	o.size = 3;
	CHECK_EQ(nvq_open(URI, &o, &c), -EINVAL);
}

int main(void)
{
	test_sizes();
	test_init_old();
	test_open_old();
	test_open_ver1();
	test_open_ver2();
	test_open_current();
	test_open_newer();
	test_open_bad_size();
	printf("opts-size: ok\n");
	return 0;
}
