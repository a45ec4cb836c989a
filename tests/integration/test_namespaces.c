// SPDX-License-Identifier: MIT
/*
 * Several namespaces with 512- and 4096-byte blocks, on two controllers
 * open at once: each namespace keeps its own data, sizes and limits are
 * reported per namespace, and the same LBA on two namespaces is two
 * different places.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

static void check_ns(struct nvq_ctrl *c, uint32_t nsid, uint32_t lbsz,
		     uint64_t bytes)
{
	struct nvq_ns_info info;

	CHECK_OK(nvq_ns_info(c, nsid, &info));
	CHECK_EQ(info.nsid, nsid);
	CHECK_EQ(info.lba_size, lbsz);
	CHECK_EQ(info.nlba, bytes / lbsz);
	CHECK_EQ(info.max_transfer, nvq_ctrl_max_transfer(c));
	CHECK_EQ(info.id->lbaf[nvq_flbas_index(info.id->flbas)].ds,
		 __builtin_ctz(lbsz));
}

/* Write a distinct pattern to LBA 0..n-1 of each namespace, then read
 * every one back. */
static void check_data(struct nvq_ctrl *c, unsigned int nr_ns, uint32_t lbsz)
{
	size_t len = 8 * (size_t)lbsz;
	char *w = nvq_dma_alloc(c, len, -1), *r = nvq_dma_alloc(c, len, -1);
	struct nvq_queue *q = nvq_ctrl_queue(c, 0);
	struct cb_count cnt = { 0 };
	unsigned int ns;
	int calls = 0;

	CHECK(w && r);
	for (ns = 1; ns <= nr_ns; ns++) {
		struct nvq_ns_info info;

		fill_pattern(w, len, ns * 7919u);
		CHECK_OK(nvq_write(q, ns, w, 0, 8, 0, count_cb, &cnt));
		reap_until(q, &cnt, ++calls);
		/* And the last blocks of the namespace. */
		CHECK_OK(nvq_ns_info(c, ns, &info));
		CHECK_OK(nvq_write(q, ns, w, info.nlba - 8, 8, 0, count_cb,
				   &cnt));
		reap_until(q, &cnt, ++calls);
	}
	for (ns = 1; ns <= nr_ns; ns++) {
		struct nvq_ns_info info;

		CHECK_OK(nvq_ns_info(c, ns, &info));
		fill_pattern(w, len, ns * 7919u);
		memset(r, 0, len);
		CHECK_OK(nvq_read(q, ns, r, 0, 8, 0, count_cb, &cnt));
		reap_until(q, &cnt, ++calls);
		CHECK(!memcmp(w, r, len));
		memset(r, 0, len);
		CHECK_OK(nvq_read_sync(c, ns, r, info.nlba - 8, 8, NULL));
		CHECK(!memcmp(w, r, len));
	}
	CHECK_EQ(cnt.err, 0);
	nvq_dma_free(c, w);
	nvq_dma_free(c, r);
}

int main(void)
{
	struct nvq_ctrl *a = open_or_die("emu:ns=3,lbads=9,size=2M", NULL);
	struct nvq_ctrl *b = open_or_die("emu:ns=2,lbads=12,size=4M", NULL);
	uint32_t ids[4];

	CHECK_EQ(nvq_ns_list(a, ids, 4), 3);
	CHECK_EQ(nvq_ns_list(b, ids, 4), 2);
	check_ns(a, 1, 512, 2u << 20);
	check_ns(a, 3, 512, 2u << 20);
	check_ns(b, 2, 4096, 4u << 20);
	CHECK_EQ(nvq_ns_info(a, 4, &(struct nvq_ns_info){ 0 }), -ENOENT);
	check_data(a, 3, 512);
	check_data(b, 2, 4096);
	/* Flush every namespace at once and each one. */
	CHECK_OK(nvq_flush_sync(a, 0xffffffffu, NULL));
	CHECK_OK(nvq_flush_sync(b, 2, NULL));
	nvq_close(a);
	nvq_close(b);
	printf("namespaces: ok\n");
	return 0;
}
