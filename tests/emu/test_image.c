// SPDX-License-Identifier: MIT
/*
 * A file-backed namespace behaves as a drive when its image misbehaves:
 * an image truncated under a live controller gives Unrecovered Read
 * Errors (never SIGBUS: the test would die of it), a full file system
 * gives Write Faults, a second controller or process gets -EBUSY with a
 * message naming the holder, and an image that does not fit fails the
 * open with ENOSPC instead of failing writes later.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu.h"
#include "harness.h"

static char dir[200], path[260], params[400];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static void fill(uint8_t *b, size_t len, unsigned int tag)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(tag + i * 13 + (i >> 12));
}

/* Create a controller on @prm the way the transport does; returns the
 * error (0: *@out is live). */
static int try_create(const char *prm, struct nvq_emu **out)
{
	struct nvq_emu_params p;
	int ret = nvq_emu_params_parse(prm, &p);

	CHECK_EQ(ret, 0);
	*out = NULL;
	return nvq_emu_create(&p, out);
}

static uint64_t smart_media_errors(struct h *h)
{
	struct nvq_smart_log *sm = h_alloc(h, 4096, NULL);
	struct nvq_sqe s = h_sqe(nvq_admin_get_log_page);

	s.cdw10 = NVQ_LOG_SMART | (512 / 4 - 1) << 16;
	s.prp1 = h_iova(h, sm);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	return nvq_u128_lo(sm->media_errors);
}

/* The newest Error Information entry. */
static struct nvq_error_log last_error(struct h *h)
{
	struct nvq_error_log *e = h_alloc(h, 4096, NULL);
	struct nvq_sqe s = h_sqe(nvq_admin_get_log_page);

	s.cdw10 = NVQ_LOG_ERROR | (4096 / 4 - 1) << 16;
	s.prp1 = h_iova(h, e);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	return e[0];
}

/* Truncated under a live controller: statuses, no signal. */
static void truncated(void)
{
	struct h *h;
	struct hq *q;
	struct nvq_error_log e;
	uint8_t *w, *r;
	uint16_t st;

	snprintf(params, sizeof(params), "file=%s,size=8M", path);
	h = h_open(params);
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	w = h_alloc(h, 8192, NULL);
	r = h_alloc(h, 8192, NULL);
	fill(w, 8192, 1);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 0, 2, w, 8192));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 1000, 2, w, 8192));
	CHECK_EQ(smart_media_errors(h), 0);

	/* Another process (or `nvq read -d` on its own image) cuts it. */
	CHECK_EQ(truncate(path, 1 << 20), 0);
	st = h_rw(h, q, nvq_cmd_read, 1, 1000, 2, r, 8192);
	CHECK_ST(st, NVQ_SCT_MEDIA, NVQ_SC_READ_ERROR);
	CHECK(st & NVQ_STATUS_DNR_BIT);
	e = last_error(h);
	CHECK_EQ(e.lba, 1000);
	CHECK_EQ(e.nsid, 1);
	CHECK_EQ(e.param_error_location, NVQ_ERR_LOC_NONE);
	CHECK_ST(e.status >> 1, NVQ_SCT_MEDIA, NVQ_SC_READ_ERROR);
	/* Across the new end: the first block past it is the one lost. */
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, 255, 2, r, 8192), NVQ_SCT_MEDIA,
		 NVQ_SC_READ_ERROR);
	CHECK_EQ(last_error(h).lba, 256);
	CHECK_EQ(smart_media_errors(h), 2);
	/* What is left reads back. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 0, 2, r, 8192));
	CHECK(!memcmp(r, w, 8192));
	/* Zeroing, deallocating and flushing lost blocks complete. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write_zeroes, 1, 1500, 64, NULL, 0));
	{
		struct nvq_sqe s = h_sqe(nvq_cmd_write_zeroes);

		s.nsid = 1;
		s.cdw10 = 1600;
		s.cdw12 = 63 | NVQ_RW_DEAC;
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
	}
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_flush, 1, 0, 1, NULL, 0));

	/* To nothing: every read fails, a write re-creates its blocks. */
	CHECK_EQ(truncate(path, 0), 0);
	CHECK_ST(h_rw(h, q, nvq_cmd_read, 1, 0, 2, r, 8192), NVQ_SCT_MEDIA,
		 NVQ_SC_READ_ERROR);
	fill(w, 8192, 2);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 2046, 2, w, 8192));
	memset(r, 0, 8192);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 2046, 2, r, 8192));
	CHECK(!memcmp(r, w, 8192));
	/* The controller still works. */
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_flush, 1, 0, 1, NULL, 0));
	h_close(h);
	unlink(path);
}

/* A second controller of this process, then another process. */
static void locked(void)
{
	struct nvq_emu *a, *b;
	struct stat st;
	int ready[2], go[2], status;
	char msg[64], c;
	pid_t pid;

	snprintf(params, sizeof(params), "file=%s,size=8M", path);
	CHECK_EQ(try_create(params, &a), 0);
	/* Bigger: the refused open must not have touched the file. */
	snprintf(params, sizeof(params), "file=%s,size=16M", path);
	CHECK_EQ(try_create(params, &b), -EBUSY);
	CHECK(!b);
	CHECK(strstr(nvq_emu_errmsg(), path));
	CHECK(strstr(nvq_emu_errmsg(),
		     "in use by another emulated controller of this process"));
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 8 << 20);
	nvq_emu_destroy(a);
	/* Released with the controller. */
	CHECK_EQ(try_create(params, &b), 0);
	nvq_emu_destroy(b);

	/* A child holds it: the parent is refused and told who. */
	CHECK_EQ(pipe(ready), 0);
	CHECK_EQ(pipe(go), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		if (try_create(params, &a))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		nvq_emu_destroy(a);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	CHECK_EQ(try_create(params, &b), -EBUSY);
	snprintf(msg, sizeof(msg), "in use by process %d", (int)pid);
	if (!strstr(nvq_emu_errmsg(), msg))
		check_failed(__FILE__, __LINE__, "holder named", "'%s' in '%s'",
			     msg, nvq_emu_errmsg());
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	close(go[1]);
	CHECK_EQ(try_create(params, &b), 0);
	nvq_emu_destroy(b);
	unlink(path);
}

/*
 * In a child with a private mount namespace, on a 4 MiB tmpfs: an image
 * larger than the file system fails the open with ENOSPC (and is not left
 * behind); one that fits and is deallocated fails writes with Write
 * Fault once the file system is full. Exit 77 without the privilege.
 */
static int small_fs_child(void)
{
	char mnt[220], img[300], filler[300], prm[400];
	static uint8_t junk[65536];
	struct nvq_emu *e;
	struct h *h;
	struct hq *q;
	uint8_t *w, *r;
	int fd, ret;

	if (unshare(CLONE_NEWNS)) {
		printf("SKIP: unshare(CLONE_NEWNS): %s\n", strerror(errno));
		return T_EXIT_SKIP;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		printf("SKIP: private mounts: %s\n", strerror(errno));
		return T_EXIT_SKIP;
	}
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	CHECK_EQ(mkdir(mnt, 0700), 0);
	if (mount("nvq-test", mnt, "tmpfs", 0, "size=4m")) {
		printf("SKIP: mount tmpfs: %s\n", strerror(errno));
		return T_EXIT_SKIP;
	}
	snprintf(img, sizeof(img), "%s/disk.img", mnt);
	snprintf(filler, sizeof(filler), "%s/filler", mnt);

	snprintf(prm, sizeof(prm), "file=%s,size=8M", img);
	ret = try_create(prm, &e);
	CHECK_EQ(ret, -ENOSPC);
	CHECK(strstr(nvq_emu_errmsg(), img));
	CHECK(strstr(nvq_emu_errmsg(), "cannot reserve 8388608 bytes"));
	CHECK(access(img, F_OK) && errno == ENOENT);

	snprintf(prm, sizeof(prm), "file=%s,size=2M", img);
	h = h_open(prm);
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	w = h_alloc(h, 8192, NULL);
	r = h_alloc(h, 8192, NULL);
	fill(w, 8192, 3);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 0, 2, w, 8192));
	{
		/* Deallocate all 512 blocks: the space goes back. */
		struct nvq_dsm_range *rg = h_alloc(h, 4096, NULL);
		struct nvq_sqe s = h_sqe(nvq_cmd_dsm);

		rg->slba = 0;
		rg->nlb = 512;
		s.nsid = 1;
		s.cdw11 = NVQ_DSM_AD;
		s.prp1 = h_iova(h, rg);
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
	}
	/* Someone else takes it all. */
	fd = open(filler, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	while (write(fd, junk, sizeof(junk)) > 0)
		;
	close(fd);
	CHECK_ST(h_rw(h, q, nvq_cmd_write, 1, 100, 2, w, 8192), NVQ_SCT_MEDIA,
		 NVQ_SC_WRITE_FAULT);
	CHECK_EQ(last_error(h).lba, 100);
	CHECK_EQ(smart_media_errors(h), 1);
	/* Deallocated blocks still read as zeroes. */
	memset(r, 0xff, 8192);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 0, 2, r, 8192));
	CHECK_EQ(r[0], 0);
	CHECK_EQ(r[8191], 0);
	/* Room again: the same write succeeds. */
	CHECK_EQ(unlink(filler), 0);
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_write, 1, 100, 2, w, 8192));
	CHECK_ST_OK(h_rw(h, q, nvq_cmd_read, 1, 100, 2, r, 8192));
	CHECK(!memcmp(r, w, 8192));
	h_close(h);
	unlink(img);
	umount(mnt);
	rmdir(mnt);
	return 0;
}

static void small_fs(void)
{
	int status;
	pid_t pid;

	/* unshare(CLONE_NEWNS) wants a single-threaded caller. */
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(small_fs_child());
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	if (WEXITSTATUS(status) == T_EXIT_SKIP) {
		cleanup();
		SKIP("no private tmpfs for the ENOSPC cases (needs root)");
	}
	CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	test_mkdtemp(dir, sizeof(dir), "emu-image");
	snprintf(path, sizeof(path), "%s/disk.img", dir);
	check_cleanup = cleanup;
	truncated();
	locked();
	small_fs();
	cleanup();
	return 0;
}
