// SPDX-License-Identifier: MIT
/*
 * Bad requests are refused before anything reaches the device, each with
 * its errno and a message: buffers outside DMA memory (-EFAULT),
 * misaligned buffers (-EINVAL), ranges outside the namespace (-ERANGE),
 * unknown namespaces (-ENOENT), bad URIs and options.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

static void test_uris(void)
{
	struct nvq_ctrl *c = (struct nvq_ctrl *)1;
	struct nvq_opts o;

	CHECK_EQ(nvq_open("nvme0", NULL, &c), -EINVAL);
	CHECK(!c);
	CHECK_MSG("emu:");
	CHECK_MSG("vfio:");
	CHECK_EQ(nvq_open("", NULL, &c), -EINVAL);
	CHECK_EQ(nvq_open(NULL, NULL, &c), -EINVAL);
	/* No such PCI function on any machine: a clear vfio error. */
	CHECK(nvq_open("vfio:0000:ff:1f.7", NULL, &c) < 0);
	CHECK_MSG("0000:ff:1f.7");
	CHECK(nvq_open("vfio:not-a-bdf", NULL, &c) < 0);
	CHECK_MSG("vfio");
	/* The emulator's own parameter errors name the key. */
	CHECK(nvq_open("emu:bogus=1", NULL, &c) < 0);
	CHECK_MSG("bogus");
	CHECK(nvq_open("emu:lbads=10", NULL, &c) < 0);
	CHECK_MSG("lbads");
	CHECK(!c);

	nvq_opts_init(&o);
	o.mode = (enum nvq_mode)7;
	CHECK_EQ(nvq_open("emu:", &o, &c), -EINVAL);
	CHECK_MSG("mode");
	nvq_opts_init(&o);
	o.queue_depth = 1;
	CHECK_EQ(nvq_open("emu:", &o, &c), -EINVAL);
	CHECK_MSG("depth");
}

static void never_cb(void *arg, const struct nvq_cpl *cpl)
{
	(void)arg;
	(void)cpl;
	fprintf(stderr, "callback of a rejected request ran\n");
	exit(1);
}

static void test_requests(void)
{
	struct nvq_ctrl *c = open_or_die("emu:size=4M,lbads=9", NULL);
	struct nvq_queue *q = nvq_ctrl_queue(c, 0);
	struct nvq_queue_stats st;
	char *dma = nvq_dma_alloc(c, 65536, -1);
	char *heap = malloc(8192);
	struct cb_count cnt = { 0 };
	uint64_t nlba = (4u << 20) / 512;

	CHECK(dma && heap);
	/* Not DMA memory. */
	CHECK_EQ(nvq_read(q, 1, heap, 0, 1, 0, never_cb, NULL), -EFAULT);
	CHECK_MSG("DMA memory");
	/* Starts inside DMA memory, ends outside it. */
	CHECK_EQ(nvq_read(q, 1, dma + 65536 - 512, 0, 2, 0, never_cb, NULL),
		 -EFAULT);
	/* PRP1 must be dword aligned. */
	CHECK_EQ(nvq_write(q, 1, dma + 1, 0, 1, 0, never_cb, NULL), -EINVAL);
	CHECK_MSG("aligned");
	CHECK_EQ(nvq_write(q, 1, dma + 2, 0, 1, 0, never_cb, NULL), -EINVAL);
	/* Ranges. */
	CHECK_EQ(nvq_read(q, 1, dma, 0, 0, 0, never_cb, NULL), -ERANGE);
	CHECK_EQ(nvq_read(q, 1, dma, nlba, 1, 0, never_cb, NULL), -ERANGE);
	CHECK_MSG("outside namespace 1");
	CHECK_EQ(nvq_read(q, 1, dma, nlba - 1, 2, 0, never_cb, NULL), -ERANGE);
	CHECK_EQ(nvq_read(q, 1, dma, ~0ull, 2, 0, never_cb, NULL), -ERANGE);
	CHECK_EQ(nvq_write_zeroes(q, 1, nlba - 4, 5, 0, never_cb, NULL),
		 -ERANGE);
	CHECK_EQ(nvq_deallocate(q, 1, 0, 0, 0, never_cb, NULL), -ERANGE);
	/* Namespaces. */
	CHECK_EQ(nvq_read(q, 2, dma, 0, 1, 0, never_cb, NULL), -ENOENT);
	CHECK_MSG("namespace 2");
	CHECK_EQ(nvq_read(q, 0, dma, 0, 1, 0, never_cb, NULL), -ENOENT);
	CHECK_EQ(nvq_read(q, 0xffffffffu, dma, 0, 1, 0, never_cb, NULL),
		 -ENOENT);
	CHECK_EQ(nvq_flush(q, 7, 0, never_cb, NULL), -ENOENT);
	/* Arguments. */
	CHECK_EQ(nvq_read(q, 1, dma, 0, 1, 0, NULL, NULL), -EINVAL);
	CHECK_EQ(nvq_read(q, 1, dma, 0, 1, 0x80, never_cb, NULL), -EINVAL);
	CHECK_EQ(nvq_read(NULL, 1, dma, 0, 1, 0, never_cb, NULL), -EINVAL);
	CHECK(nvq_poll(NULL, 0) < 0);

	/* None of it reached the device. */
	nvq_queue_stats(q, &st);
	CHECK_EQ(st.submitted, 0);
	CHECK_EQ(nvq_queue_inflight(q), 0);

	/* Registered caller memory works; after unregistering it does not. */
	CHECK_OK(nvq_dma_register(c, heap, 8192));
	CHECK_OK(nvq_write(q, 1, heap + 4, 3, 2, 0, count_cb, &cnt));
	reap_until(q, &cnt, 1);
	CHECK_EQ(cnt.err, 0);
	CHECK_OK(nvq_dma_unregister(c, heap));
	CHECK_EQ(nvq_read(q, 1, heap, 0, 1, 0, never_cb, NULL), -EFAULT);

	/* The broadcast namespace is fine for flush. */
	CHECK_OK(nvq_flush(q, 0xffffffffu, 0, count_cb, &cnt));
	reap_until(q, &cnt, 2);
	CHECK_EQ(cnt.err, 0);

	/* Sync helpers check the same things. */
	CHECK_EQ(nvq_read_sync(c, 1, heap, nlba, 1, NULL), -ERANGE);
	CHECK_EQ(nvq_read_sync(c, 3, heap, 0, 1, NULL), -ENOENT);
	CHECK_EQ(nvq_read_sync(c, 1, NULL, 0, 1, NULL), -EINVAL);

	nvq_dma_free(c, dma);
	free(heap);
	nvq_close(c);
}

int main(void)
{
	test_uris();
	test_requests();
	printf("errors: ok\n");
	return 0;
}
