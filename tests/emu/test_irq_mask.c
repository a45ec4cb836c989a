// SPDX-License-Identifier: MIT
/*
 * MSI-X masking (nvq_emu_irq_mask(), the transport's irq_mask): a masked
 * vector does not signal its eventfd when a completion comes - the signal
 * is held (nvq_emu_irq_held() grows) - and unmasking signals it exactly
 * then, once, however many completions came meanwhile; unmasking with
 * nothing held signals nothing; other vectors are unaffected. Then the
 * race the mask exists for: unmasking while the device is signalling
 * yields exactly one signal per completion, never none (a device that
 * does not look at the mask again after setting the pending bit fails
 * this within 2000 rounds most of the time).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "emu.h"
#include "harness.h"

#define ROUNDS 2000

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

/* The eventfd's counter (0: not signalled), taken. */
static uint64_t take(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof(v));

	if (r < 0) {
		CHECK_EQ(errno, EAGAIN);
		return 0;
	}
	CHECK_EQ(r, sizeof(v));
	return v;
}

/* Wait for @fd's signal (only a hang fails) and take it. */
static uint64_t wait_irq(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	CHECK_EQ(poll(&p, 1, H_TIMEOUT_MS), 1);
	return take(fd);
}

/*
 * Every signal of a completion reaped so far has been sent or held: the
 * device posts, then flushes signals in the order the CQs got entries, so
 * an admin completion posted after them is signalled after them.
 */
static void sync_device(struct h *h, int fd0, uint8_t *b)
{
	drain(fd0);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, b));
	CHECK(wait_irq(fd0) >= 1);
}

/* Submit @n 1-block reads on @q at once and reap them all. */
static void reads(struct h *h, struct hq *q, uint8_t *b, int n)
{
	struct nvq_cqe c;
	int i;

	for (i = 0; i < n; i++) {
		struct nvq_sqe s = h_sqe(nvq_cmd_read);

		s.nsid = 1;
		h_prp(h, &s, b, 4096);
		h_push(h, q, &s);
	}
	h_ring(h, q);
	for (i = 0; i < n; i++) {
		CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
		CHECK_ST_OK(NVQ_STATUS(c.status));
	}
}

int main(void)
{
	struct h *h = h_open("qpairs=2,msix=3");
	const struct nvq_transport_ops *o = h->ops;
	struct nvq_emu *emu = nvq_emu_transport_device(h->t);
	uint64_t held, t0, rs = test_seed("emu-irq-mask", 0x3a5c);
	int fd0, fd1, fd2, i, nheld = 0;
	struct hq *q1, *q2;
	uint8_t *b;

	CHECK(emu != NULL);
	CHECK(o->irq_mask != NULL);
	CHECK_EQ(nvq_emu_nr_vectors(emu), 3);
	CHECK_EQ(nvq_emu_irq_mask(emu, 3, true), -EINVAL);
	CHECK_EQ(nvq_emu_irq_mask(emu, 3, false), -EINVAL);
	CHECK_EQ(nvq_emu_irq_mask(emu, 1u << 20, true), -EINVAL);
	CHECK_EQ(o->irq_mask(h->t, 3, true), -EINVAL);
	fd0 = o->irq_fd(h->t, 0);
	fd1 = o->irq_fd(h->t, 1);
	fd2 = o->irq_fd(h->t, 2);
	CHECK(fd0 >= 0 && fd1 >= 0 && fd2 >= 0);

	h_enable(h);
	b = h_alloc(h, 4096, NULL);
	q1 = h_ioq(h, 1, 16, true, 1);
	q2 = h_ioq(h, 2, 16, true, 2);
	sync_device(h, fd0, b);
	drain(fd1);
	drain(fd2);

	/* Unmasked: signalled as usual. */
	reads(h, q1, b, 1);
	CHECK(wait_irq(fd1) >= 1);

	/* Masked: held, not signalled; vector 2 goes on as usual. */
	held = nvq_emu_irq_held(emu);
	CHECK_OK(nvq_emu_irq_mask(emu, 1, true));
	reads(h, q1, b, 1);
	sync_device(h, fd0, b);
	CHECK(nvq_emu_irq_held(emu) > held);
	CHECK_EQ(take(fd1), 0);
	reads(h, q2, b, 1);
	CHECK(wait_irq(fd2) >= 1);
	/* Masking again changes nothing. */
	CHECK_OK(nvq_emu_irq_mask(emu, 1, true));
	CHECK_EQ(take(fd1), 0);
	/* Unmasked: the held signal goes out now, once. */
	CHECK_OK(nvq_emu_irq_mask(emu, 1, false));
	CHECK_EQ(take(fd1), 1);
	CHECK_OK(nvq_emu_irq_mask(emu, 1, false));
	CHECK_EQ(take(fd1), 0);

	/* Many completions while masked (through the transport op): still
	 * one signal at the unmask - a pending bit, not a counter. */
	held = nvq_emu_irq_held(emu);
	CHECK_OK(o->irq_mask(h->t, 1, true));
	reads(h, q1, b, 4);
	for (i = 0; i < 5; i++)
		reads(h, q1, b, 1);
	sync_device(h, fd0, b);
	CHECK(nvq_emu_irq_held(emu) > held);
	CHECK_EQ(take(fd1), 0);
	CHECK_OK(o->irq_mask(h->t, 1, false));
	CHECK_EQ(take(fd1), 1);

	/* Mask and unmask with nothing in between: no signal. */
	held = nvq_emu_irq_held(emu);
	CHECK_OK(nvq_emu_irq_mask(emu, 1, true));
	CHECK_OK(nvq_emu_irq_mask(emu, 1, false));
	CHECK_EQ(take(fd1), 0);
	CHECK_EQ(nvq_emu_irq_held(emu), held);
	/* And unmasked again, completions are signalled directly. */
	reads(h, q1, b, 1);
	sync_device(h, fd0, b);
	CHECK_EQ(nvq_emu_irq_held(emu), held);
	CHECK(take(fd1) >= 1);

	/*
	 * The race: unmask at a random moment around the completion. The
	 * device holds the signal or sends it, the unmask sends a held one:
	 * exactly one signal either way.
	 */
	held = nvq_emu_irq_held(emu);
	t0 = h_now();
	/* Bounded in time too: a loaded machine makes each round slow. */
	for (i = 0; i < ROUNDS && h_now() - t0 < 5000000000ull; i++) {
		struct nvq_sqe s = h_sqe(nvq_cmd_read);
		struct nvq_cqe c;
		uint64_t spins = test_rand(&rs) % 20000, k;

		CHECK_OK(nvq_emu_irq_mask(emu, 1, true));
		s.nsid = 1;
		h_prp(h, &s, b, 4096);
		h_push(h, q1, &s);
		h_ring(h, q1);
		for (k = 0; k < spins; k++)
			__asm__ __volatile__("" ::: "memory");
		if (i & 1)
			sched_yield();
		CHECK_OK(nvq_emu_irq_mask(emu, 1, false));
		CHECK_EQ(h_reap(h, q1, &c, H_TIMEOUT_MS), 0);
		sync_device(h, fd0, b);
		if (take(fd1) != 1)
			check_failed(__FILE__, __LINE__, "one signal",
				     "round %d, %llu spins", i,
				     (unsigned long long)spins);
		if (nvq_emu_irq_held(emu) != held) {
			held = nvq_emu_irq_held(emu);
			nheld++;
		}
	}
	printf("emu-irq-mask: %d of %d rounds held the signal\n", nheld, i);
	CHECK_EQ(take(fd2), 0);
	h_close(h);
	printf("emu-irq-mask: ok\n");
	return 0;
}
