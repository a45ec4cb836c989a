// SPDX-License-Identifier: MIT
/* Bring-up and one write/read round trip: the basic path works. */
#include <string.h>

#include "harness.h"

int main(void)
{
	struct h *h = h_open("");
	struct nvq_id_ctrl *id = h_alloc(h, 4096, NULL);
	uint8_t *w = h_alloc(h, 8192, NULL), *r = h_alloc(h, 8192, NULL);
	struct hq *q;
	uint32_t dw0;
	int i;

	h_enable(h);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	CHECK(!memcmp(id->mn, "nvq emulated controller", 23));
	CHECK_ST_OK(h_set_nr_queues(h, 4, 4, &dw0));
	CHECK_EQ(dw0, NVQ_NUM_QUEUES(4, 4));
	q = h_ioq(h, 1, 64, false, 0);
	for (i = 0; i < 8192; i++)
		w[i] = (uint8_t)(i * 7 + 3);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 10, 2, w, 8192));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 10, 2, r, 8192));
	CHECK(!memcmp(w, r, 8192));
	h_close(h);
	return 0;
}
