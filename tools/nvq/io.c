// SPDX-License-Identifier: MIT
/*
 * The I/O commands: read, write, flush, write-zeroes and trim. Data moves
 * in chunks through one DMA buffer; a range is checked against the
 * namespace before the first command, and SIGINT/SIGTERM end a transfer
 * between chunks (exit status 130).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Data moves through one DMA buffer of this size, whatever the length. */
#define CHUNK_BYTES (1u << 20)
/* Write Zeroes carries a 16-bit 0's based block count per command. */
#define WZ_MAX_BLOCKS 65536u
/* A DSM range holds a 32-bit count; stay well inside it per call. */
#define TRIM_MAX_BLOCKS (1u << 30)

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * Let SIGINT/SIGTERM end a long transfer between chunks, so the
 * controller is still shut down in order (CC.SHN) rather than abandoned
 * mid-command.
 */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Refuse a range that does not lie inside the namespace, before any I/O. */
static int check_range(const struct nvq_ns_info *ns, uint64_t slba,
		       uint64_t count)
{
	if (slba < ns->nlba && count <= ns->nlba - slba)
		return 0;
	return fail("LBA range %" PRIu64 "+%" PRIu64 " (SLBA+COUNT) lies "
		    "beyond the end of namespace %u, which has %" PRIu64
		    " blocks of %u bytes (LBA 0..%" PRIu64 ")",
		    slba, count, ns->nsid, ns->nlba, ns->lba_size,
		    ns->nlba ? ns->nlba - 1 : 0);
}

/* A DMA buffer for up to CHUNK_BYTES of whole blocks (at least one). */
static int alloc_chunk(struct nvq_ctrl *ctrl, const struct nvq_ns_info *ns,
		       uint64_t max_blocks, void **buf, uint32_t *chunk_blocks)
{
	uint64_t blocks = CHUNK_BYTES / ns->lba_size;
	size_t bytes;

	if (!blocks)
		blocks = 1;
	if (max_blocks && blocks > max_blocks)
		blocks = max_blocks;
	bytes = (size_t)blocks * ns->lba_size;
	*buf = nvq_dma_alloc(ctrl, bytes, -1);
	if (!*buf)
		return fail("cannot allocate %zu bytes of DMA memory: %s",
			    bytes, lib_msg(-ENOMEM));
	*chunk_blocks = (uint32_t)blocks;
	return 0;
}

/* Read until @len bytes or end of file; *@got says how many arrived. */
static int read_full(int fd, void *buf, size_t len, size_t *got)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r;

		/* after a partial read the signal is no longer pending */
		if (stop_signal)
			return -EINTR;
		r = read(fd, (char *)buf + done, len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

int write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r;

		/* after a partial write the signal is no longer pending */
		if (stop_signal)
			return -EINTR;
		r = write(fd, (const char *)buf + done, len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return 0;
}

static const char *file_name(const char *path, bool output)
{
	if (strcmp(path, "-"))
		return path;
	return output ? "standard output" : "standard input";
}

static int interrupted(uint64_t done, uint64_t total)
{
	fprintf(stderr, "nvq: interrupted by signal %d after %" PRIu64,
		(int)stop_signal, done);
	if (total)
		fprintf(stderr, " of %" PRIu64, total);
	fputs(" blocks\n", stderr);
	return EXIT_INTR;
}

/* What read and write share: the controller, the namespace, the buffer. */
struct xfer {
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	void *buf;
	uint32_t chunk_blocks;
	int fd;
};

static void xfer_end(struct xfer *x)
{
	if (x->fd > STDERR_FILENO)
		close(x->fd);
	if (x->buf)
		nvq_dma_free(x->ctrl, x->buf);
	if (x->ctrl)
		nvq_close(x->ctrl);
}

int run_read(struct args *a)
{
	struct xfer x = { .fd = -1 };
	uint64_t done = 0, lba = a->slba;
	const char *name = file_name(a->data, true);
	int rc;

	rc = open_ctrl(a->pos[0], &x.ctrl);
	if (rc)
		return rc;
	rc = get_ns(x.ctrl, a->nsid, &x.ns);
	if (!rc)
		rc = check_range(&x.ns, a->slba, a->count);
	if (!rc)
		rc = alloc_chunk(x.ctrl, &x.ns, a->count, &x.buf,
				 &x.chunk_blocks);
	if (rc)
		goto out;
	/* Opened only now so that a refused request leaves the file alone. */
	if (!strcmp(a->data, "-"))
		x.fd = STDOUT_FILENO;
	else
		x.fd = open(a->data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0666);
	if (x.fd < 0) {
		rc = fail("cannot open '%s' for writing: %s", a->data,
			  strerror(errno));
		goto out;
	}

	catch_signals();
	while (done < a->count) {
		uint64_t left = a->count - done;
		uint32_t n = left < x.chunk_blocks ? (uint32_t)left :
						     x.chunk_blocks;
		uint16_t status = 0;
		char msg[160];
		int ret;

		if (stop_signal) {
			rc = interrupted(done, a->count);
			goto out;
		}
		ret = nvq_read_sync(x.ctrl, a->nsid, x.buf, lba, n, &status);
		if (ret) {
			rc = fail("read of %u blocks at LBA %" PRIu64
				  " failed: %s",
				  n, lba,
				  io_msg(ret, status, msg, sizeof(msg)));
			goto out;
		}
		ret = write_full(x.fd, x.buf, (size_t)n * x.ns.lba_size);
		if (ret) {
			rc = stop_signal ? interrupted(done, a->count) :
					   fail("cannot write to '%s': %s",
						name, strerror(-ret));
			goto out;
		}
		done += n;
		lba += n;
	}
	if (x.fd > STDERR_FILENO) {
		int fd = x.fd;

		x.fd = -1;
		if (close(fd))
			rc = fail("cannot write to '%s': %s", name,
				  strerror(errno));
	}
out:
	xfer_end(&x);
	return rc;
}

/*
 * With no COUNT the file's length decides it, and it must be whole
 * blocks; with COUNT the file must hold at least that much. Pipes cannot
 * be measured: their length is checked as the data arrives.
 */
static int write_plan(const struct args *a, const struct xfer *x,
		      const char *name, uint64_t *count)
{
	uint32_t lbs = x->ns.lba_size;
	struct stat st;
	uint64_t need;

	*count = a->has_count ? a->count : 0;
	if (fstat(x->fd, &st))
		return fail("cannot stat '%s': %s", name, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail("cannot read '%s': %s", name, strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		return a->has_count ? check_range(&x->ns, a->slba, *count) : 0;

	if (!a->has_count) {
		if (!st.st_size)
			return fail("'%s' is empty: nothing to write", name);
		if ((uint64_t)st.st_size % lbs)
			return fail("size of '%s' (%jd bytes) is not a "
				    "multiple of the LBA size of namespace "
				    "%u (%u bytes)",
				    name, (intmax_t)st.st_size, a->nsid, lbs);
		*count = (uint64_t)st.st_size / lbs;
		return check_range(&x->ns, a->slba, *count);
	}
	if (check_range(&x->ns, a->slba, *count))
		return EXIT_FAIL;
	if (__builtin_mul_overflow(*count, lbs, &need) ||
	    (uint64_t)st.st_size < need)
		return fail("'%s' has %jd bytes, fewer than the %" PRIu64
			    " blocks of %u bytes to write",
			    name, (intmax_t)st.st_size, *count, lbs);
	return 0;
}

/* How much of a refused input went to the device anyway. */
static void written_msg(uint64_t done, char *buf, size_t len)
{
	if (done)
		snprintf(buf, len, "%" PRIu64 " blocks were written", done);
	else
		snprintf(buf, len, "nothing was written");
}

/*
 * The input ended before the chunk was full. Decide before writing that
 * chunk, so input refused as a whole (the usual case: less than one
 * chunk) leaves the device untouched.
 */
static int short_input(const struct args *a, const char *name, uint64_t count,
		       uint64_t done, size_t got, uint32_t lbs)
{
	uint64_t total = done * lbs + got;
	char written[64];

	written_msg(done, written, sizeof(written));
	if (count)
		return fail("'%s' ended after %" PRIu64 " bytes, but %" PRIu64
			    " blocks of %u bytes were asked for; %s",
			    name, total, count, lbs, written);
	if (got % lbs)
		return fail("length of '%s' (%" PRIu64 " bytes) is not a "
			    "multiple of the LBA size of namespace %u (%u "
			    "bytes); %s",
			    name, total, a->nsid, lbs, written);
	if (!total)
		return fail("'%s' is empty: nothing to write", name);
	return 0;
}

int run_write(struct args *a)
{
	struct xfer x = { .fd = -1 };
	uint64_t count, done = 0, lba = a->slba;
	const char *name = file_name(a->data, false);
	uint32_t lbs;
	int rc;

	/* A missing input file is the cheapest error: before bring-up. */
	if (!strcmp(a->data, "-"))
		x.fd = STDIN_FILENO;
	else
		x.fd = open(a->data, O_RDONLY | O_CLOEXEC);
	if (x.fd < 0)
		return fail("cannot open '%s' for reading: %s", a->data,
			    strerror(errno));

	rc = open_ctrl(a->pos[0], &x.ctrl);
	if (rc)
		goto out;
	rc = get_ns(x.ctrl, a->nsid, &x.ns);
	if (!rc)
		rc = write_plan(a, &x, name, &count);
	if (!rc)
		rc = alloc_chunk(x.ctrl, &x.ns, count, &x.buf, &x.chunk_blocks);
	if (rc)
		goto out;
	lbs = x.ns.lba_size;

	catch_signals();
	while (!count || done < count) {
		uint64_t want = x.chunk_blocks;
		uint16_t status = 0;
		bool last;
		size_t got = 0;
		uint32_t n;
		char msg[160];
		int ret;

		if (count && count - done < want)
			want = count - done;
		if (stop_signal) {
			rc = interrupted(done, count);
			break;
		}
		ret = read_full(x.fd, x.buf, (size_t)want * lbs, &got);
		if (ret) {
			rc = stop_signal ? interrupted(done, count) :
					   fail("cannot read '%s': %s", name,
						strerror(-ret));
			break;
		}
		last = got < (size_t)want * lbs;
		if (last) {
			rc = short_input(a, name, count, done, got, lbs);
			if (rc)
				break;
		}
		n = (uint32_t)(got / lbs);
		if (n > x.ns.nlba - lba) {
			written_msg(done, msg, sizeof(msg));
			rc = fail("'%s' continues beyond the end of namespace "
				  "%u (%" PRIu64 " blocks of %u bytes); %s",
				  name, a->nsid, x.ns.nlba, lbs, msg);
			break;
		}
		if (n) {
			ret = nvq_write_sync(x.ctrl, a->nsid, x.buf, lba, n,
					     &status);
			if (ret) {
				rc = fail("write of %u blocks at LBA %" PRIu64
					  " failed: %s",
					  n, lba,
					  io_msg(ret, status, msg,
						 sizeof(msg)));
				break;
			}
			done += n;
			lba += n;
		}
		if (last)
			break;
	}
out:
	xfer_end(&x);
	return rc;
}

int run_flush(struct args *a)
{
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	uint16_t status = 0;
	char msg[160];
	int rc, ret;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	if (a->nsid != NVQ_NSID_ALL)
		rc = get_ns(ctrl, a->nsid, &ns);
	if (!rc) {
		ret = nvq_flush_sync(ctrl, a->nsid, &status);
		if (ret)
			rc = fail("flush of namespace %#x failed: %s", a->nsid,
				  io_msg(ret, status, msg, sizeof(msg)));
	}
	nvq_close(ctrl);
	return rc;
}

typedef int (*range_op)(struct nvq_ctrl *ctrl, uint32_t nsid, uint64_t slba,
			uint32_t nlb, uint16_t *status);

/* Write Zeroes or Deallocate over a range, in commands of @max blocks. */
static int run_range(struct args *a, range_op op, uint32_t max,
		     const char *what)
{
	struct nvq_ctrl *ctrl;
	struct nvq_ns_info ns;
	uint64_t done = 0;
	int rc;

	rc = open_ctrl(a->pos[0], &ctrl);
	if (rc)
		return rc;
	rc = get_ns(ctrl, a->nsid, &ns);
	if (!rc)
		rc = check_range(&ns, a->slba, a->count);
	if (!rc)
		catch_signals();
	while (!rc && done < a->count) {
		uint64_t left = a->count - done;
		uint32_t n = left < max ? (uint32_t)left : max;
		uint16_t status = 0;
		char msg[160];
		int ret;

		if (stop_signal) {
			rc = interrupted(done, a->count);
			break;
		}
		ret = op(ctrl, a->nsid, a->slba + done, n, &status);
		if (ret)
			rc = fail("%s of %u blocks at LBA %" PRIu64
				  " failed: %s",
				  what, n, a->slba + done,
				  io_msg(ret, status, msg, sizeof(msg)));
		done += n;
	}
	nvq_close(ctrl);
	return rc;
}

int run_write_zeroes(struct args *a)
{
	return run_range(a, nvq_write_zeroes_sync, WZ_MAX_BLOCKS,
			 "write zeroes");
}

int run_trim(struct args *a)
{
	return run_range(a, nvq_deallocate_sync, TRIM_MAX_BLOCKS, "deallocate");
}
