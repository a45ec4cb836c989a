// SPDX-License-Identifier: MIT
/*
 * Synchronous helpers in every completion mode: any buffer (heap, odd
 * alignment: bounced; DMA memory: direct), transfers far beyond MDTS and
 * the queue's slots, write zeroes and deallocate reading back zeroes,
 * flush, and status reporting.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

#define BIG (3u << 20)

static void run(enum nvq_mode mode)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	char *w = malloc(BIG + 1), *r = malloc(BIG + 1);
	char *dw, *dr, *zero = calloc(1, 65536);
	uint16_t st = 0xffff;

	CHECK(w && r && zero);
	nvq_opts_init(&o);
	o.mode = mode;
	o.nr_queues = 1;
	o.queue_depth = 8;
	/* MDTS 2 (16 KiB) and 7 slots: 3 MiB needs chunking. */
	c = open_or_die("emu:size=8M,mdts=2", &o);
	dw = nvq_dma_alloc(c, BIG, -1);
	dr = nvq_dma_alloc(c, BIG, -1);
	CHECK(dw && dr);

	/* Heap buffers, bounced. */
	fill_pattern(w, BIG, 1);
	CHECK_OK(nvq_write_sync(c, 1, w, 5, BIG / 4096, &st));
	CHECK_EQ(st, 0);
	memset(r, 0, BIG);
	CHECK_OK(nvq_read_sync(c, 1, r, 5, BIG / 4096, &st));
	CHECK(!memcmp(w, r, BIG));

	/* Not even dword aligned: bounced too. */
	memset(r, 0, BIG + 1);
	CHECK_OK(nvq_read_sync(c, 1, r + 1, 5, 3, NULL));
	CHECK(!memcmp(w, r + 1, 3 * 4096));
	fill_pattern(w + 1, 4096, 9);
	CHECK_OK(nvq_write_sync(c, 1, w + 1, 100, 1, NULL));
	CHECK_OK(nvq_read_sync(c, 1, r, 100, 1, NULL));
	CHECK(!memcmp(w + 1, r, 4096));

	/* DMA memory, used directly. */
	fill_pattern(dw, BIG, 2);
	CHECK_OK(nvq_write_sync(c, 1, dw, 1000, BIG / 4096, NULL));
	CHECK_OK(nvq_read_sync(c, 1, dr, 1000, BIG / 4096, NULL));
	CHECK(!memcmp(dw, dr, BIG));
	CHECK_OK(nvq_flush_sync(c, 1, &st));
	CHECK_EQ(st, 0);

	/* Zeroes over a range far beyond MDTS (no data moves). */
	CHECK_OK(nvq_write_zeroes_sync(c, 1, 1000, 700, NULL));
	CHECK_OK(nvq_read_sync(c, 1, dr, 1000, 16, NULL));
	CHECK(!memcmp(dr, zero, 65536));
	CHECK_OK(nvq_read_sync(c, 1, dr, 1700, 16, NULL));
	CHECK(!memcmp(dr, dw + 700 * 4096, 65536));
	CHECK_OK(nvq_deallocate_sync(c, 1, 5, 16, NULL));
	CHECK_OK(nvq_read_sync(c, 1, r, 5, 17, NULL));
	CHECK(!memcmp(r, zero, 65536));
	/* The block after the range kept its data. */
	CHECK(!memcmp(r + 65536, w + 65536, 4096));

	/* Errors found before the device. */
	CHECK_EQ(nvq_write_zeroes_sync(c, 1, 2047, 2, NULL), -ERANGE);
	CHECK_EQ(nvq_deallocate_sync(c, 9, 0, 1, NULL), -ENOENT);
	CHECK_EQ(nvq_flush_sync(c, 9, NULL), -ENOENT);

	nvq_close(c);
	free(w);
	free(r);
	free(zero);
}

int main(void)
{
	run(NVQ_MODE_POLL);
	run(NVQ_MODE_WAIT);
	run(NVQ_MODE_THREAD);
	printf("sync: ok\n");
	return 0;
}
