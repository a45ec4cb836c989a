// SPDX-License-Identifier: MIT
// The public headers from C++ (extern "C", no C-only constructs such as
// _Static_assert): this translation unit compiles as C++11 with -pedantic
// -Werror, links against libnvq and opens, reads and closes the emulated
// controller through the C API.
#include <nvq/nvq.h>
#include <nvq/qos.h>
#include <nvq/spec.h>

#include <cstdio>
#include <cstdlib>

static bool done;
static int err;

static void on_done(void *arg, const struct nvq_cpl *cpl)
{
	(void)arg;
	err = cpl->err;
	done = true;
}

int main()
{
	struct nvq_ctrl *c = nullptr;
	struct nvq_queue *q;
	void *buf;
	int rc;

	static_assert(sizeof(struct nvq_sqe) == NVQ_SQE_SIZE, "SQE size");
	if (nvq_open("emu:size=16M", nullptr, &c)) {
		std::fprintf(stderr, "nvq_open: %s\n", nvq_errmsg());
		return 1;
	}
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, 4096, -1);
	if (!q || !buf) {
		std::fprintf(stderr, "no queue or buffer: %s\n", nvq_errmsg());
		return 1;
	}
	rc = nvq_read(q, 1, buf, 0, 1, 0, on_done, nullptr);
	while (!rc && !done)
		rc = nvq_wait(q, 1, 1000) < 0 ? -1 : 0;
	nvq_dma_free(c, buf);
	nvq_close(c);
	if (rc || err) {
		std::fprintf(stderr, "read: rc %d, err %d\n", rc, err);
		return 1;
	}
	std::printf("abi-cxx: ok (nvq %s)\n", nvq_version());
	return 0;
}
