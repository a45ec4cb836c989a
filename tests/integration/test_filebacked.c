// SPDX-License-Identifier: MIT
/*
 * File-backed emulated controller: data written survives nvq_close() and
 * a reopen of the same file (the next "process"), lands in the file at
 * namespace offset + LBA * block size, and a second namespace starts
 * where the first ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

#define SIZE (4u << 20)

int main(void)
{
	char path[256], uri[512];
	struct nvq_ctrl *c;
	char *w = malloc(SIZE), *r = malloc(SIZE);
	int fd, round;

	CHECK(w && r);
	snprintf(path, sizeof(path), "%s/nvq-itest-%d.img", test_tmpdir(),
		 (int)getpid());
	unlink(path);
	snprintf(uri, sizeof(uri), "emu:file=%s,size=4M,ns=2,lbads=9", path);

	for (round = 0; round < 3; round++) {
		/* Write through one controller... */
		c = open_or_die(uri, NULL);
		if (round) {
			/* ...the previous round's data is still there. */
			fill_pattern(w, SIZE, (uint64_t)round - 1);
			CHECK_OK(nvq_read_sync(c, 2, r, 0, SIZE / 512, NULL));
			CHECK(!memcmp(w, r, SIZE));
		}
		fill_pattern(w, SIZE, (uint64_t)round);
		CHECK_OK(nvq_write_sync(c, 2, w, 0, SIZE / 512, NULL));
		CHECK_OK(nvq_write_sync(c, 1, w, 10, 1, NULL));
		nvq_close(c);
	}

	/* The bytes are in the file where the layout says. */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, r, SIZE, SIZE), SIZE);
	CHECK(!memcmp(w, r, SIZE));
	CHECK_EQ(pread(fd, r, 512, 10 * 512), 512);
	CHECK(!memcmp(w, r, 512));
	close(fd);

	/* Zeroes and deallocation persist too. */
	c = open_or_die(uri, NULL);
	CHECK_OK(nvq_write_zeroes_sync(c, 2, 0, 8, NULL));
	CHECK_OK(nvq_deallocate_sync(c, 2, 8, 8, NULL));
	nvq_close(c);
	c = open_or_die(uri, NULL);
	memset(r, 0xff, 16 * 512);
	CHECK_OK(nvq_read_sync(c, 2, r, 0, 17, NULL));
	memset(w, 0, 16 * 512);
	CHECK(!memcmp(w, r, 16 * 512));
	fill_pattern(w, SIZE, 2);
	CHECK(!memcmp(w + 16 * 512, r + 16 * 512, 512));
	nvq_close(c);

	unlink(path);
	free(w);
	free(r);
	printf("filebacked: ok\n");
	return 0;
}
