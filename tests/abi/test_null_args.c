// SPDX-License-Identifier: MIT
/*
 * Every public function given a NULL object or NULL output pointer fails
 * cleanly (-EINVAL, NULL or zero) instead of crashing, as an application's
 * error path may well call them that way. Linked against libnvq.so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nvq/nvq.h>

#include "check.h"

static void cb(void *arg, const struct nvq_cpl *cpl)
{
	(void)arg;
	(void)cpl;
}

static void null_objects(void)
{
	struct nvq_queue_stats st;
	struct nvq_queue_info qinfo;
	struct nvq_pool_stats pst;
	struct nvq_qos_method_info mi;
	struct nvq_qos_poll_stats ps, ps_zero = { 0 };
	struct nvq_qos_stats qs;
	struct nvq_qos_info qi;
	enum nvq_qos_method m;
	struct nvq_disc_log *dlog;
	struct nvq_ns_info ni;
	struct nvq_sqe sqe;
	uint32_t ids[4], r = 7;
	uint16_t s = 7;
	char buf[64];
	int lim;

	memset(&sqe, 0, sizeof(sqe));
	nvq_opts_init(NULL);
	CHECK_EQ(nvq_open(NULL, NULL, NULL), -EINVAL);
	nvq_close(NULL);
	CHECK(nvq_ctrl_id(NULL) == NULL);
	CHECK_EQ(nvq_ctrl_cap(NULL), 0);
	CHECK_EQ(nvq_ctrl_vs(NULL), 0);
	CHECK(nvq_ctrl_uri(NULL) != NULL && !*nvq_ctrl_uri(NULL));
	CHECK_EQ(nvq_ctrl_uri_nsid(NULL), 0);
	CHECK(nvq_ctrl_notes(NULL) != NULL && !*nvq_ctrl_notes(NULL));
	CHECK_EQ(nvq_ns_list(NULL, ids, 4), -EINVAL);
	CHECK_EQ(nvq_ns_info(NULL, 1, &ni), -EINVAL);
	CHECK_EQ(nvq_ctrl_max_transfer(NULL), 0);
	CHECK_EQ(nvq_ctrl_queue_count(NULL), 0);
	CHECK(nvq_ctrl_queue(NULL, 0) == NULL);
	CHECK(nvq_ctrl_queue_for_cpu(NULL) == NULL);
	CHECK_EQ(nvq_queue_id(NULL), 0);
	CHECK_EQ(nvq_queue_depth(NULL), 0);
	CHECK_EQ(nvq_queue_inflight(NULL), 0);
	memset(&st, 0xff, sizeof(st));
	nvq_queue_stats(NULL, &st);
	CHECK_EQ(nvq_queue_info(NULL, &qinfo), -EINVAL);
	CHECK_EQ(nvq_queue_info_size(NULL, &qinfo, sizeof(qinfo)), -EINVAL);
	CHECK_EQ(nvq_queue_pool_stats(NULL, &pst), -EINVAL);
	CHECK_EQ(nvq_queue_pool_stats_size(NULL, &pst, sizeof(pst)), -EINVAL);
	nvq_queue_kick(NULL);
	CHECK(nvq_ctrl_qos(NULL) == NULL);
	CHECK(nvq_queue_qos(NULL) == NULL);
	CHECK_EQ(nvq_read(NULL, 1, buf, 0, 1, 0, cb, NULL), -EINVAL);
	CHECK_EQ(nvq_write(NULL, 1, buf, 0, 1, 0, cb, NULL), -EINVAL);
	CHECK_EQ(nvq_flush(NULL, 1, 0, cb, NULL), -EINVAL);
	CHECK_EQ(nvq_write_zeroes(NULL, 1, 0, 1, 0, cb, NULL), -EINVAL);
	CHECK_EQ(nvq_deallocate(NULL, 1, 0, 1, 0, cb, NULL), -EINVAL);
	CHECK_EQ(nvq_abort(NULL, NULL), -EINVAL);
	CHECK_EQ(nvq_ctrl_reset(NULL), -EINVAL);
	CHECK_EQ(nvq_poll(NULL, 0), -EINVAL);
	CHECK_EQ(nvq_wait(NULL, 1, 0), -EINVAL);
	CHECK_EQ(nvq_read_sync(NULL, 1, buf, 0, 1, &s), -EINVAL);
	CHECK_EQ(s, 0);
	CHECK_EQ(nvq_write_sync(NULL, 1, buf, 0, 1, &s), -EINVAL);
	CHECK_EQ(nvq_flush_sync(NULL, 1, &s), -EINVAL);
	CHECK_EQ(nvq_write_zeroes_sync(NULL, 1, 0, 1, &s), -EINVAL);
	CHECK_EQ(nvq_deallocate_sync(NULL, 1, 0, 1, &s), -EINVAL);
	CHECK_EQ(nvq_admin(NULL, &sqe, NULL, 0, &r, &s), -EINVAL);
	CHECK(nvq_dma_alloc(NULL, 4096, -1) == NULL);
	CHECK_EQ(nvq_dma_register(NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_EQ(nvq_dma_unregister(NULL, buf), -EINVAL);
	nvq_dma_free(NULL, buf);
	CHECK_EQ(nvq_qos_set_limit(NULL, 5), -EINVAL);
	CHECK_EQ(nvq_qos_set_timeout(NULL, 5), -EINVAL);
	nvq_qos_info(NULL, &qi);
	CHECK_EQ(qi.limit_us, NVQ_QOS_OFF);
	nvq_qos_queue_stats(NULL, &qs);
	CHECK(!qs.active);
	CHECK_EQ(nvq_qos_parse_limit(NULL, &lim), -EINVAL);
	CHECK_EQ(nvq_qos_parse_limit("5", NULL), -EINVAL);
	m = NVQ_QOS_METHOD_POLL;
	CHECK_EQ(nvq_qos_parse_method(NULL, &m), -EINVAL);
	CHECK_EQ(m, NVQ_QOS_METHOD_POLL);
	CHECK_EQ(nvq_qos_parse_method(NULL, NULL), -EINVAL);
	CHECK_EQ(nvq_qos_parse_method("poll", NULL), -EINVAL);
	CHECK_STREQ(nvq_qos_method_name((enum nvq_qos_method)1000), "?");
	CHECK_EQ(nvq_qos_set_method(NULL, NVQ_QOS_METHOD_POLL), -EINVAL);
	CHECK_EQ(nvq_qos_set_method(NULL, NVQ_QOS_METHOD_AUTO), -EINVAL);
	memset(&mi, 0xff, sizeof(mi));
	nvq_qos_method_info(NULL, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
	CHECK(memchr(mi.why, '\0', sizeof(mi.why)) != NULL);
	CHECK_EQ(mi.wake.samples, 0);
	nvq_qos_method_info(NULL, NULL);
	memset(&ps, 0xff, sizeof(ps));
	nvq_qos_queue_poll_stats(NULL, &ps);
	CHECK_MEMEQ(&ps, &ps_zero, sizeof(ps));
	nvq_qos_queue_poll_stats(NULL, NULL);
	/* NULL: just measure (0, or an errno when it cannot). */
	CHECK(nvq_qos_wake_cost(NULL) <= 0);
	CHECK(nvq_status_str(0) != NULL);
	CHECK(nvq_version() != NULL);
	dlog = (struct nvq_disc_log *)buf;
	CHECK_EQ(nvq_discover(NULL, &dlog), -EINVAL);
	CHECK(dlog == NULL);
	CHECK_EQ(nvq_discover("tcp:127.0.0.1", NULL), -EINVAL);
	CHECK_EQ(nvq_discover_size(NULL, NULL, 0), -EINVAL);
	dlog = (struct nvq_disc_log *)buf;
	CHECK_EQ(nvq_disc_log_decode(NULL, 1024, &dlog), -EINVAL);
	CHECK(dlog == NULL);
	CHECK_EQ(nvq_disc_log_decode(buf, sizeof(buf), NULL), -EINVAL);
	CHECK_EQ(nvq_disc_log_decode_size(NULL, 0, NULL, 0), -EINVAL);
	nvq_disc_log_free(NULL);
}

static void null_outputs(void)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	char *buf;

	CHECK_EQ(nvq_open("emu:size=1M", NULL, &c), 0);
	q = nvq_ctrl_queue(c, 0);
	CHECK_EQ(nvq_admin(c, NULL, NULL, 0, NULL, NULL), -EINVAL);
	CHECK(nvq_ns_list(c, NULL, 0) >= 1); /* a count alone is fine */
	CHECK_EQ(nvq_ns_info(c, 1, NULL), -EINVAL);
	nvq_queue_stats(q, NULL);
	CHECK_EQ(nvq_queue_info(q, NULL), -EINVAL);
	CHECK_EQ(nvq_queue_pool_stats(q, NULL), -EINVAL);
	{
		struct nvq_queue_info qi;
		struct nvq_pool_stats ps;

		/* Too small to hold the size field. */
		CHECK_EQ(nvq_queue_info_size(q, &qi, 2), -EINVAL);
		CHECK_EQ(nvq_queue_pool_stats_size(q, &ps, 3), -EINVAL);
		/* An older caller's smaller struct: only its part is set. */
		memset(&qi, 0xa5, sizeof(qi));
		CHECK_EQ(nvq_queue_info_size(q, &qi, 8), 0);
		CHECK_EQ(qi.size, 8);
		CHECK_EQ(qi.qid, 1);
		CHECK_EQ((uint8_t)qi.depth, 0xa5);
		CHECK_EQ(nvq_queue_info(q, &qi), 0);
		CHECK_EQ(qi.size, sizeof(qi));
		CHECK(qi.node >= 0);
		CHECK_EQ(nvq_queue_pool_stats(q, &ps), 0);
		CHECK_EQ(ps.size, sizeof(ps));
		CHECK_EQ(ps.node, qi.node);
	}
	buf = nvq_dma_alloc(c, 4096, -1);
	CHECK(buf != NULL);
	CHECK_EQ(nvq_read(q, 1, buf, 0, 1, 0, NULL, NULL), -EINVAL);
	CHECK_EQ(nvq_read(q, 1, NULL, 0, 1, 0, cb, NULL), -EFAULT);
	nvq_qos_info(nvq_ctrl_qos(c), NULL);
	nvq_qos_queue_stats(nvq_queue_qos(q), NULL);
	CHECK_EQ(nvq_read_sync(c, 1, NULL, 0, 1, NULL), -EINVAL);
	nvq_dma_free(c, buf);
	nvq_dma_free(c, NULL);
	nvq_close(c);

	/* A WAIT-mode queue has QoS state to describe. */
	nvq_opts_init(&o);
	o.mode = NVQ_MODE_WAIT;
	o.nr_queues = 1;
	CHECK_EQ(nvq_open("emu:size=1M", &o, &c), 0);
	q = nvq_ctrl_queue(c, 0);
	CHECK(nvq_queue_qos(q) != NULL);
	nvq_qos_method_info(nvq_ctrl_qos(c), NULL);
	nvq_qos_queue_poll_stats(nvq_queue_qos(q), NULL);
	nvq_close(c);
}

int main(void)
{
	null_objects();
	null_outputs();
	printf("null-args: ok\n");
	return 0;
}
