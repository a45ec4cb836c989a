// SPDX-License-Identifier: MIT
/* MSI-X as eventfds: a CQ with IEN=1 signals its vector, IEN=0 never
 * does; the admin CQ uses vector 0; vectors may be shared; coalescing
 * still delivers. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

/* Wait until @fd is signalled (no upper bound asserted beyond the
 * harness timeout); returns the counter. */
static uint64_t wait_irq(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v;

	CHECK_EQ(poll(&p, 1, H_TIMEOUT_MS), 1);
	CHECK_EQ(read(fd, &v, sizeof(v)), sizeof(v));
	CHECK(v >= 1);
	return v;
}

static bool signalled(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof(v));

	if (r < 0)
		CHECK_EQ(errno, EAGAIN);
	return r == sizeof(v);
}

static void read1(struct h *h, struct hq *q, uint8_t *b)
{
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 0, 1, b, 4096));
}

int main(void)
{
	struct h *h = h_open("qpairs=4,msix=3");
	const struct nvq_transport_ops *o = h->ops;
	int fd0, fd1, fd2;
	struct hq *q1, *q2, *q3;
	uint8_t *b;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int i;

	CHECK_EQ(h->t->nr_vectors, 3);
	fd0 = o->irq_fd(h->t, 0);
	fd1 = o->irq_fd(h->t, 1);
	fd2 = o->irq_fd(h->t, 2);
	CHECK(fd0 >= 0 && fd1 >= 0 && fd2 >= 0);
	CHECK(fd0 != fd1 && fd1 != fd2);
	CHECK_EQ(o->irq_fd(h->t, 3), -EINVAL);
	for (i = 0; i < 3; i++)
		CHECK_EQ(o->irq_cpu(h->t, (unsigned int)i), i % cpus);

	h_enable(h);
	b = h_alloc(h, 4096, NULL);
	/* Admin completions signal vector 0. */
	drain(fd0);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, b));
	wait_irq(fd0);

	q1 = h_ioq(h, 1, 16, true, 1);
	q2 = h_ioq(h, 2, 16, false, 2); /* IEN = 0 on vector 2 */
	q3 = h_ioq(h, 3, 16, true, 1); /* shares vector 1 with q1 */
	drain(fd0);
	drain(fd1);
	drain(fd2);

	read1(h, q1, b);
	wait_irq(fd1);
	read1(h, q3, b);
	wait_irq(fd1);

	/* IEN = 0: no interrupt. A later IEN = 1 completion is signalled
	 * after anything an earlier one would have caused. */
	for (i = 0; i < 10; i++)
		read1(h, q2, b);
	read1(h, q1, b);
	wait_irq(fd1);
	CHECK(!signalled(fd2));
	CHECK(!signalled(fd0));

	/* A batch of completions: at least one signal, at most one per CQE. */
	{
		struct nvq_sqe s;
		struct nvq_cqe c;
		uint64_t n;

		for (i = 0; i < 8; i++) {
			s = h_sqe(nvq_cmd_flush);
			s.nsid = 1;
			h_push(h, q1, &s);
		}
		h_ring(h, q1);
		for (i = 0; i < 8; i++)
			CHECK_EQ(h_reap(h, q1, &c, H_TIMEOUT_MS), 0);
		n = wait_irq(fd1);
		while (signalled(fd1))
			n++;
		CHECK(n >= 1 && n <= 8);
	}

	/* Interrupt coalescing (threshold 16, time 100 us): a lone CQE is
	 * still signalled once the aggregation time passes. */
	{
		struct nvq_sqe s = h_sqe(nvq_admin_set_features);

		s.cdw10 = NVQ_FEAT_IRQ_COALESCE;
		s.cdw11 = 15 | 1u << 8;
		CHECK_ST_OK(h_admin(h, &s, NULL));
		drain(fd1);
		read1(h, q1, b);
		wait_irq(fd1);
		/* Coalescing disabled for vector 1: immediate again. */
		s = h_sqe(nvq_admin_set_features);
		s.cdw10 = NVQ_FEAT_IRQ_CONFIG;
		s.cdw11 = 1 | 1u << 16;
		CHECK_ST_OK(h_admin(h, &s, NULL));
		read1(h, q1, b);
		wait_irq(fd1);
	}
	h_close(h);
	return 0;
}
