// SPDX-License-Identifier: MIT
/*
 * The smallest complete nvq program: open a controller, write one block
 * asynchronously, read it back, compare, close.
 *
 *   cc hello.c $(pkg-config --cflags --libs nvq) -o hello
 *   ./hello                      # the emulated controller
 *   ./hello vfio:0000:01:00.0    # a real SSD bound to vfio-pci
 */
#include <stdio.h>
#include <string.h>

#include <nvq/nvq.h>

static void done(void *arg, const struct nvq_cpl *cpl)
{
	int *result = arg;

	if (cpl->err)
		fprintf(stderr, "I/O failed: %s\n",
			nvq_status_str(cpl->status));
	*result = cpl->err ? cpl->err : 1;
}

/* Submit nothing more; reap until our one request has completed. */
static int wait_one(struct nvq_queue *q, int *result)
{
	while (!*result) {
		int n = nvq_wait(q, 1, 5000);

		if (n < 0)
			return n;
	}
	return *result < 0 ? *result : 0;
}

int main(int argc, char **argv)
{
	const char *uri = argc > 1 ? argv[1] : "emu:";
	struct nvq_ns_info ns;
	struct nvq_ctrl *ctrl;
	struct nvq_queue *q;
	char *wbuf, *rbuf;
	int ret, result;

	ret = nvq_open(uri, NULL, &ctrl);
	if (ret) {
		fprintf(stderr, "hello: %s: %s\n", uri, nvq_errmsg());
		return 1;
	}
	ret = nvq_ns_info(ctrl, 1, &ns);
	if (ret) {
		fprintf(stderr, "hello: namespace 1: %s\n", nvq_errmsg());
		goto out;
	}
	printf("%s: namespace 1 has %llu blocks of %u bytes\n", uri,
	       (unsigned long long)ns.nlba, ns.lba_size);

	/* I/O buffers must be DMA memory: allocated or registered. */
	wbuf = nvq_dma_alloc(ctrl, ns.lba_size, -1);
	rbuf = nvq_dma_alloc(ctrl, ns.lba_size, -1);
	if (!wbuf || !rbuf) {
		fprintf(stderr, "hello: %s\n", nvq_errmsg());
		ret = -1;
		goto out;
	}
	snprintf(wbuf, ns.lba_size, "hello from nvq");

	q = nvq_ctrl_queue_for_cpu(ctrl);
	result = 0;
	ret = nvq_write(q, ns.nsid, wbuf, 0, 1, 0, done, &result);
	if (!ret)
		ret = wait_one(q, &result);
	if (ret)
		goto err;
	result = 0;
	ret = nvq_read(q, ns.nsid, rbuf, 0, 1, 0, done, &result);
	if (!ret)
		ret = wait_one(q, &result);
	if (ret)
		goto err;
	ret = memcmp(wbuf, rbuf, ns.lba_size) ? -1 : 0;
	printf("read back: \"%s\" (%s)\n", rbuf, ret ? "MISMATCH" : "ok");
	goto out;
err:
	fprintf(stderr, "hello: I/O: %s\n",
		nvq_errmsg()[0] ? nvq_errmsg() : "failed");
out:
	nvq_close(ctrl); /* also frees the DMA buffers */
	return ret ? 1 : 0;
}
