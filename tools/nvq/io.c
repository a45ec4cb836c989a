// SPDX-License-Identifier: MIT
/*
 * The I/O commands: read, write, flush, write-zeroes and trim.
 *
 * Data streams through a few DMA buffers of bounded size (XFER_SLOTS x at
 * most CHUNK_BYTES), whatever the length of the transfer: read keeps
 * several chunks in flight and writes them out in order, write reads ahead
 * the same way. A range is checked against the namespace before the first
 * command.
 *
 * Nothing here waits without watching for SIGINT/SIGTERM: commands are
 * submitted asynchronously and reaped in short slices, so a signal ends the
 * command within one slice even when the device never answers. What is
 * still in flight is left to nvq_close(), which cancels it; the exit status
 * is 128 + the signal number, as a shell reports a process killed by it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/*
 * Memory for data is XFER_SLOTS x CHUNK_BYTES at most: enough requests in
 * flight to keep a device busy while the other side of the copy (the file)
 * catches up, and no more.
 */
#define CHUNK_BYTES (1u << 20)
#define XFER_SLOTS 4u
/* Longest sleep between two looks at the signal flag. */
#define WAIT_SLICE_MS 20
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
 * Let SIGINT/SIGTERM end a command at the next look at the flag, so that
 * the controller is still shut down in order (CC.SHN, outstanding commands
 * cancelled) rather than abandoned mid-command. Installed before the
 * controller is opened: a signal during bring-up waits (open_ctrl() blocks
 * it) and then ends the command before its first I/O.
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

/* Read until @len bytes or end of file; *@got says how many arrived. */
static int read_full(int fd, void *buf, size_t len, size_t *got)
{
	size_t done = 0;

	*got = 0;
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
	return exit_for_signal(stop_signal);
}

/* One request and the buffer it moves. */
struct slot {
	void *buf;
	void *md; /* separate metadata (-M), NULL without */
	uint64_t lba;
	uint32_t nlb;
	bool busy; /* submitted, callback not yet run */
	int err;
	uint16_t status;
};

/*
 * What every I/O command shares: the controller, its queue, the slots.
 * Read and write use the slots round-robin: head is the oldest request,
 * the next to be written out (read) or counted (write); tail the next one
 * to fill; outstanding how many are between them.
 */
struct xfer {
	struct nvq_ctrl *ctrl;
	struct nvq_queue *q;
	struct nvq_ns_info ns;
	struct slot slot[XFER_SLOTS];
	unsigned int nr_slots; /* slots with a buffer */
	unsigned int head, tail, outstanding;
	uint32_t chunk_blocks;
	unsigned int io_flags; /* NVQ_IO_FUA for -f, PRACT/PRCHK for -p */
	struct nvq_ns_format fmt;
	uint32_t bsz; /* bytes per block in -d: data, + metadata if extended */
	uint32_t msz; /* bytes per block in -M: 0 without */
	bool md_io; /* through nvq_read_io()/nvq_write_io() */
	int fd, mdfd;
};

static void slot_done(void *arg, const struct nvq_cpl *cpl)
{
	struct slot *s = arg;

	s->err = cpl->err;
	s->status = cpl->status;
	s->busy = false;
}

/* Requests of @x whose callbacks have not run. */
static unsigned int busy_slots(const struct xfer *x)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < XFER_SLOTS; i++)
		n += x->slot[i].busy;
	return n;
}

/*
 * Reap until @s completed (NULL: until one more request of @x did, or none
 * is left). -EINTR as soon as a signal asked to stop, whatever the device
 * does; the negative errno of a failed reap.
 */
static int wait_slot(struct xfer *x, struct slot *s)
{
	unsigned int before = busy_slots(x);

	for (;;) {
		unsigned int busy = busy_slots(x);
		int ret;

		if (s ? !s->busy : busy < before || !busy)
			return 0;
		if (stop_signal)
			return -EINTR;
		ret = nvq_wait(x->q, 1, WAIT_SLICE_MS);
		if (ret < 0)
			return ret;
	}
}

/* Mark @s in flight before the library can complete it, undo on refusal. */
static int slot_submit(struct slot *s,
		       int (*submit)(struct xfer *x, struct slot *s,
				     const void *arg),
		       struct xfer *x, const void *arg)
{
	int ret;

	s->busy = true;
	s->err = 0;
	s->status = 0;
	ret = submit(x, s, arg);
	if (ret)
		s->busy = false;
	return ret;
}

/*
 * Submit, and when the queue is full (-EAGAIN) let one of the other
 * requests finish first. The library's refusal, or -EINTR / a reap error.
 */
static int submit_retry(struct slot *s,
			int (*submit)(struct xfer *x, struct slot *s,
				      const void *arg),
			struct xfer *x, const void *arg)
{
	for (;;) {
		int ret = slot_submit(s, submit, x, arg);

		if (ret != -EAGAIN || !busy_slots(x))
			return ret;
		ret = wait_slot(x, NULL);
		if (ret)
			return ret;
	}
}

/* The controller, its queue and the namespace; a signal handler first. */
static int xfer_begin(struct args *a, struct xfer *x)
{
	int rc;

	x->io_flags = a->fua ? NVQ_IO_FUA : 0;
	catch_signals();
	rc = open_ctrl_io(a, &x->ctrl);
	if (rc)
		return rc;
	x->q = nvq_ctrl_queue(x->ctrl, 0);
	if (!x->q)
		return fail("%s has no I/O queue", nvq_ctrl_uri(x->ctrl));
	return get_ns(x->ctrl, a->nsid, &x->ns);
}

/*
 * DMA buffers of up to CHUNK_BYTES of whole blocks (at least one) for up
 * to XFER_SLOTS requests. A chunk also stays within what the queue can hold
 * with every slot busy, as the library splits a request into commands of
 * the namespace's maximum transfer.
 */
static int alloc_slots(struct xfer *x, uint64_t max_blocks)
{
	uint32_t lbs = x->bsz ? x->bsz : x->ns.lba_size;
	uint64_t blocks = CHUNK_BYTES / lbs, per_cmd, cmds, slots;
	unsigned int n = XFER_SLOTS;
	size_t bytes;

	per_cmd = x->ns.max_transfer / lbs ? x->ns.max_transfer / lbs : 1;
	slots = nvq_queue_depth(x->q) > 1 ? nvq_queue_depth(x->q) - 1 : 1;
	cmds = slots / XFER_SLOTS ? slots / XFER_SLOTS : 1;
	if (blocks > per_cmd * cmds)
		blocks = per_cmd * cmds;
	if (!blocks)
		blocks = 1;
	if (max_blocks && blocks > max_blocks)
		blocks = max_blocks;
	/* a short transfer needs no more buffers than it has chunks */
	if (max_blocks && (max_blocks + blocks - 1) / blocks < n)
		n = (unsigned int)((max_blocks + blocks - 1) / blocks);
	bytes = (size_t)blocks * lbs;
	for (unsigned int i = 0; i < n; i++) {
		x->slot[i].buf = nvq_dma_alloc(x->ctrl, bytes, -1);
		if (!x->slot[i].buf)
			return fail("cannot allocate %zu bytes of DMA memory: "
				    "%s",
				    bytes, lib_msg(-ENOMEM));
		x->nr_slots = i + 1;
		if (!x->msz)
			continue;
		x->slot[i].md = nvq_dma_alloc(x->ctrl, blocks * x->msz, -1);
		if (!x->slot[i].md)
			return fail("cannot allocate %" PRIu64 " bytes of DMA "
				    "memory: %s",
				    blocks * x->msz, lib_msg(-ENOMEM));
	}
	x->chunk_blocks = (uint32_t)blocks;
	return 0;
}

static void xfer_end(struct xfer *x)
{
	unsigned int i;

	if (x->fd > STDERR_FILENO)
		close(x->fd);
	if (x->mdfd > STDERR_FILENO)
		close(x->mdfd);
	/*
	 * A request still in flight (a signal, an error in another chunk)
	 * may yet be written by the device: nvq_close() cancels it and frees
	 * the buffers itself.
	 */
	for (i = 0; i < XFER_SLOTS; i++)
		if (x->slot[i].busy)
			break;
	if (i == XFER_SLOTS)
		for (i = 0; i < x->nr_slots; i++) {
			nvq_dma_free(x->ctrl, x->slot[i].buf);
			if (x->slot[i].md)
				nvq_dma_free(x->ctrl, x->slot[i].md);
		}
	if (x->ctrl)
		nvq_close(x->ctrl);
}

/* "emu:...,file=PATH,...": PATH, split as the emulator splits its URI. */
static bool emu_image(const char *uri, char *path, size_t len)
{
	const char *s;

	if (strncmp(uri, "emu:", 4))
		return false;
	for (s = uri + 4; *s;) {
		size_t n = strcspn(s, ",");

		if (n > 5 && !strncmp(s, "file=", 5) && n - 5 < len) {
			memcpy(path, s + 5, n - 5);
			path[n - 5] = '\0';
			return true;
		}
		s += n;
		if (*s)
			s++;
	}
	return false;
}

/*
 * The absolute name @path has once symlinks are resolved, also when the
 * file itself does not exist yet (its directory must).
 */
static bool canonical(const char *path, char *out)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base = strrchr(path, '/');
	size_t dl;

	if (realpath(path, out))
		return true;
	if (!base) {
		snprintf(dir, sizeof(dir), ".");
		base = path;
	} else {
		dl = base == path ? 1 : (size_t)(base - path);
		if (dl >= sizeof(dir))
			return false;
		memcpy(dir, path, dl);
		dir[dl] = '\0';
		base++;
	}
	if (!*base || !realpath(dir, real) ||
	    strlen(real) + 1 + strlen(base) >= PATH_MAX)
		return false;
	snprintf(out, PATH_MAX, "%s%s%s", real, strcmp(real, "/") ? "/" : "",
		 base);
	return true;
}

/*
 * Would -d name the very image the emulated controller runs on? Writing a
 * read into it (or reading a write from it) truncates or overwrites the
 * namespace under the command, so it is refused before anything opens:
 * the same file (st_dev/st_ino, through symlinks and hard links), or the
 * same name once resolved when one of them does not exist yet.
 */
static int check_not_image(const struct args *a)
{
	char image[PATH_MAX], ci[PATH_MAX], cd[PATH_MAX];
	struct stat si, sd;

	if (!strcmp(a->data, "-") || !emu_image(a->pos[0], image, PATH_MAX))
		return 0;
	if (!stat(image, &si) && !stat(a->data, &sd)) {
		if (si.st_dev != sd.st_dev || si.st_ino != sd.st_ino)
			return 0;
	} else if (!canonical(image, ci) || !canonical(a->data, cd) ||
		   strcmp(ci, cd)) {
		return 0;
	}
	return usage_error(a->cmd,
			   "-d/--data '%s' is the image of the emulated "
			   "controller (file=%s): it cannot also be the %s",
			   a->data, image,
			   a->cmd->run == run_read ? "output" : "input");
}

/* The same check on the file as opened, for what changed meanwhile. */
static int check_fd_not_image(const struct args *a, int fd)
{
	char image[PATH_MAX];
	struct stat si, sd;

	if (!emu_image(a->pos[0], image, PATH_MAX) || stat(image, &si) ||
	    fstat(fd, &sd) || si.st_dev != sd.st_dev || si.st_ino != sd.st_ino)
		return 0;
	return usage_error(a->cmd,
			   "-d/--data '%s' is the image of the emulated "
			   "controller (file=%s): it cannot also be the %s",
			   a->data, image,
			   a->cmd->run == run_read ? "output" : "input");
}

/* Open the output of a read: created, truncated only once it is not the
 * image (an O_TRUNC would have destroyed the image already). */
static int open_output(const struct args *a, struct xfer *x)
{
	int rc;

	if (!strcmp(a->data, "-")) {
		x->fd = STDOUT_FILENO;
		return 0;
	}
	x->fd = open(a->data, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (x->fd < 0)
		return fail("cannot open '%s' for writing: %s", a->data,
			    strerror(errno));
	rc = check_fd_not_image(a, x->fd);
	if (rc)
		return rc;
	if (ftruncate(x->fd, 0)) {
		struct stat st;

		/* a FIFO or a device has no length to cut */
		if (fstat(x->fd, &st) || S_ISREG(st.st_mode))
			return fail("cannot truncate '%s': %s", a->data,
				    strerror(errno));
	}
	return 0;
}

/* The request of @s for a namespace with metadata (or -p). */
static void md_request(const struct xfer *x, const struct slot *s,
		       const struct args *a, struct nvq_io *io)
{
	nvq_io_init(io);
	io->nsid = a->nsid;
	io->slba = s->lba;
	io->nlb = s->nlb;
	io->buf = s->buf;
	io->md = s->md;
	io->flags = x->io_flags;
	/*
	 * Types 1 and 2: the tag of each chunk's first block. Type 1's must
	 * be the LBA (Invalid Protection Information otherwise): without
	 * -r it is, as nvme-cli users must spell out with -r SLBA.
	 */
	io->reftag = a->ref_tag;
	if (x->fmt.pi_type == 1 && !a->has_ref_tag)
		io->reftag = (uint32_t)a->slba;
	if (x->fmt.pi_type == 1 || x->fmt.pi_type == 2)
		io->reftag += (uint32_t)(s->lba - a->slba);
	io->apptag = a->app_tag;
	io->appmask = a->app_tag_mask;
}

static int submit_read(struct xfer *x, struct slot *s, const void *arg)
{
	if (x->md_io) {
		struct nvq_io io;

		md_request(x, s, arg, &io);
		return nvq_read_io(x->q, &io, slot_done, s);
	}
	return nvq_read(x->q, ((const struct args *)arg)->nsid, s->buf, s->lba,
			s->nlb, x->io_flags, slot_done, s);
}

static int submit_write(struct xfer *x, struct slot *s, const void *arg)
{
	if (x->md_io) {
		struct nvq_io io;

		md_request(x, s, arg, &io);
		return nvq_write_io(x->q, &io, slot_done, s);
	}
	return nvq_write(x->q, ((const struct args *)arg)->nsid, s->buf, s->lba,
			 s->nlb, x->io_flags, slot_done, s);
}

/* nvme-cli's -p: bit 3 PRACT, bits 2:0 PRCHK guard, app tag, ref tag. */
static unsigned int prinfo_flags(uint8_t p)
{
	return (p & 8 ? NVQ_IO_PRACT : 0) | (p & 4 ? NVQ_IO_PRCHK_GUARD : 0) |
	       (p & 2 ? NVQ_IO_PRCHK_APP : 0) | (p & 1 ? NVQ_IO_PRCHK_REF : 0);
}

/*
 * The namespace's format and what it asks of -d, -M and -p: extended LBAs
 * carry each block's metadata after its data in -d, separate metadata
 * goes through -M, and with PRACT on 8 bytes of metadata (all of it PI)
 * the controller inserts and strips it: nothing is transferred.
 */
static int md_format(struct args *a, struct xfer *x)
{
	const struct nvq_ns_format *f = &x->fmt;
	bool pract_all;
	int ret;

	ret = nvq_ns_format(x->ctrl, a->nsid, &x->fmt);
	if (ret)
		return fail("cannot read the format of namespace %u: %s",
			    a->nsid, lib_msg(ret));
	if (a->prinfo && !f->pi_type)
		return usage_error(a->cmd,
				   "-p/--prinfo %u needs protection "
				   "information; namespace %u has none",
				   a->prinfo, a->nsid);
	if ((a->has_ref_tag || a->has_app_tag || a->has_app_tag_mask) &&
	    !f->pi_type)
		return usage_error(a->cmd,
				   "-r/-a/-m (PI tags) need protection "
				   "information; namespace %u has none",
				   a->nsid);
	pract_all = (a->prinfo & 8) && f->ms == f->pi_size;
	x->io_flags |= prinfo_flags(a->prinfo);
	x->bsz = f->lba_size + (f->extended && !pract_all ? f->ms : 0);
	x->md_io = f->ms || a->prinfo;
	if (a->metadata) {
		if (!f->ms || f->extended)
			return usage_error(
				a->cmd,
				"-M/--metadata needs separate metadata; "
				"namespace %u has %s",
				a->nsid,
				!f->ms ? "no metadata" :
					 "extended LBAs (each block's "
					 "metadata follows its data in -d)");
		if (pract_all)
			return usage_error(
				a->cmd,
				"-M/--metadata with PRACT (-p 8..15) on %u "
				"bytes of metadata: the controller inserts "
				"and strips the PI, nothing is transferred",
				f->ms);
		x->msz = f->ms;
	} else if (f->ms && !f->extended && !pract_all) {
		return usage_error(a->cmd,
				   "namespace %u has %u bytes of separate "
				   "metadata per block: -M/--metadata FILE "
				   "is needed%s",
				   a->nsid, f->ms,
				   f->pi_size && f->ms == f->pi_size ?
					   " (or PRACT, -p 8..15)" :
					   "");
	}
	if (a->has_md_size && !x->msz)
		return usage_error(a->cmd, "-y/--metadata-size without "
					   "-M/--metadata");
	return 0;
}

/* -y/--metadata-size, nvme-cli's bytes of -M, against the block count. */
static int check_md_size(const struct args *a, const struct xfer *x)
{
	if (!a->has_md_size || a->md_size == a->count * x->msz)
		return 0;
	return usage_error(a->cmd,
			   "-y/--metadata-size %" PRIu64 " does not match "
			   "%" PRIu64 " blocks of %u bytes of metadata "
			   "(%" PRIu64 " bytes)",
			   a->md_size, a->count, x->msz, a->count * x->msz);
}

/*
 * -z/--data-size (bytes of -d, nvme-cli's option) as a block count: whole
 * blocks, and when -c is given too, the same number of them. nvq's -c is
 * the number of blocks; nvme-cli's is 0-based (blocks - 1), so a -c and
 * -z copied from an nvme-cli command line disagree by one block, and the
 * message says which -c nvq wants.
 */
static int size_to_count(struct args *a, const struct xfer *x)
{
	uint32_t bs = x->bsz;
	uint64_t blocks;

	if (!a->has_data_size)
		return 0;
	if (a->data_size % bs)
		return usage_error(a->cmd,
				   "-z/--data-size %" PRIu64 " is not a "
				   "multiple of the %u-byte blocks of "
				   "namespace %u%s",
				   a->data_size, bs, a->nsid,
				   x->fmt.extended ? " (data and metadata: "
						     "extended LBAs)" :
						     "");
	blocks = a->data_size / bs;
	if (a->has_count && a->count != blocks) {
		char hint[96] = "";

		if (a->count + 1 == blocks)
			snprintf(hint, sizeof(hint),
				 "; -c %" PRIu64 " looks like nvme-cli's: "
				 "nvq wants -c %" PRIu64,
				 a->count, blocks);
		return usage_error(a->cmd,
				   "-c/--block-count %" PRIu64 " and "
				   "-z/--data-size %" PRIu64 " disagree: "
				   "nvq's -c is the number of blocks "
				   "(1-based), %" PRIu64 " blocks of %u "
				   "bytes; nvme-cli's -c is 0-based "
				   "(blocks - 1)%s",
				   a->count, a->data_size, blocks, bs, hint);
	}
	a->count = blocks;
	a->has_count = true;
	return 0;
}

/* A failed reap or submission (-EINTR: the signal's exit status). */
static int xfer_error(int ret, const char *what, const struct slot *s,
		      uint64_t done, uint64_t total)
{
	if (ret == -EINTR)
		return interrupted(done, total);
	if (!s)
		return fail("reaping completions failed: %s", lib_msg(ret));
	return fail("%s of %u blocks at LBA %" PRIu64 " failed: %s", what,
		    s->nlb, s->lba, lib_msg(ret));
}

int run_read(struct args *a)
{
	struct xfer x = { .fd = -1, .mdfd = -1 };
	uint64_t done = 0, next = a->slba, end;
	const char *name = file_name(a->data, true);
	int rc;

	rc = check_not_image(a);
	if (!rc)
		rc = xfer_begin(a, &x);
	if (!rc)
		rc = md_format(a, &x);
	if (!rc)
		rc = size_to_count(a, &x);
	if (!rc)
		rc = check_md_size(a, &x);
	if (!rc)
		rc = check_range(&x.ns, a->slba, a->count);
	if (!rc)
		rc = alloc_slots(&x, a->count);
	/* Opened only now so that a refused request leaves the file alone. */
	if (!rc)
		rc = open_output(a, &x);
	if (!rc && a->metadata) {
		x.mdfd = open(a->metadata,
			      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (x.mdfd < 0)
			rc = fail("cannot open '%s' for writing: %s",
				  a->metadata, strerror(errno));
	}
	if (rc)
		goto out;
	end = a->slba + a->count;

	while (done < a->count) {
		struct slot *s;
		char msg[160];
		int ret;

		if (stop_signal) {
			rc = interrupted(done, a->count);
			goto out;
		}
		if (next < end && x.outstanding < x.nr_slots) {
			uint64_t left = end - next;

			s = &x.slot[x.tail];
			s->lba = next;
			s->nlb = left < x.chunk_blocks ? (uint32_t)left :
							 x.chunk_blocks;
			ret = slot_submit(s, submit_read, &x, a);
			if (!ret) {
				next += s->nlb;
				x.tail = (x.tail + 1) % x.nr_slots;
				x.outstanding++;
				continue;
			}
			/* a full queue waits for the oldest read below */
			if (ret != -EAGAIN || !x.outstanding) {
				rc = xfer_error(ret, "read", s, done, a->count);
				goto out;
			}
		}
		s = &x.slot[x.head];
		ret = wait_slot(&x, s);
		if (ret) {
			rc = xfer_error(ret, "read", NULL, done, a->count);
			goto out;
		}
		if (s->err) {
			rc = fail("read of %u blocks at LBA %" PRIu64
				  " failed: %s",
				  s->nlb, s->lba,
				  io_msg(s->err, s->status, msg, sizeof(msg)));
			goto out;
		}
		ret = write_full(x.fd, s->buf, (size_t)s->nlb * x.bsz);
		if (!ret && x.msz) {
			name = a->metadata;
			ret = write_full(x.mdfd, s->md, (size_t)s->nlb * x.msz);
			if (!ret)
				name = file_name(a->data, true);
		}
		if (ret) {
			rc = stop_signal ? interrupted(done, a->count) :
					   fail("cannot write to '%s': %s",
						name, strerror(-ret));
			goto out;
		}
		done += s->nlb;
		x.head = (x.head + 1) % x.nr_slots;
		x.outstanding--;
	}
	if (x.fd > STDERR_FILENO) {
		int fd = x.fd;

		x.fd = -1;
		if (close(fd))
			rc = fail("cannot write to '%s': %s", name,
				  strerror(errno));
	}
	if (x.mdfd >= 0) {
		int fd = x.mdfd;

		x.mdfd = -1;
		if (close(fd) && !rc)
			rc = fail("cannot write to '%s': %s", a->metadata,
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
	uint32_t lbs = x->bsz;
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

/*
 * Wait for the oldest write (@all: for every one), adding what completed
 * to *@done. The first failure in order is the one reported: what follows
 * it may have reached the device too, but is not counted as written.
 */
static int write_retire(struct xfer *x, uint64_t *done, uint64_t count,
			bool all)
{
	while (x->outstanding) {
		struct slot *s = &x->slot[x->head];
		char msg[160];
		int ret;

		ret = wait_slot(x, s);
		if (ret)
			return xfer_error(ret, "write", NULL, *done, count);
		if (s->err)
			return fail("write of %u blocks at LBA %" PRIu64
				    " failed: %s",
				    s->nlb, s->lba,
				    io_msg(s->err, s->status, msg,
					   sizeof(msg)));
		*done += s->nlb;
		x->head = (x->head + 1) % x->nr_slots;
		x->outstanding--;
		if (!all)
			break;
	}
	return 0;
}

int run_write(struct args *a)
{
	struct xfer x = { .fd = -1, .mdfd = -1 };
	uint64_t count, done = 0, lba = a->slba, placed = 0;
	const char *name = file_name(a->data, false);
	uint32_t lbs;
	int rc;

	rc = check_not_image(a);
	if (rc)
		return rc;
	/* A missing input file is the cheapest error: before bring-up. */
	if (!strcmp(a->data, "-"))
		x.fd = STDIN_FILENO;
	else
		x.fd = open(a->data, O_RDONLY | O_CLOEXEC);
	if (x.fd < 0)
		return fail("cannot open '%s' for reading: %s", a->data,
			    strerror(errno));
	if (a->metadata) {
		x.mdfd = open(a->metadata, O_RDONLY | O_CLOEXEC);
		if (x.mdfd < 0) {
			rc = fail("cannot open '%s' for reading: %s",
				  a->metadata, strerror(errno));
			goto out;
		}
	}

	rc = xfer_begin(a, &x);
	if (!rc)
		rc = check_fd_not_image(a, x.fd);
	if (!rc)
		rc = md_format(a, &x);
	if (!rc)
		rc = size_to_count(a, &x);
	if (!rc && a->has_count)
		rc = check_md_size(a, &x);
	if (!rc)
		rc = write_plan(a, &x, name, &count);
	if (!rc)
		rc = alloc_slots(&x, count);
	if (rc)
		goto out;
	lbs = x.bsz;

	while (!count || placed < count) {
		struct slot *s;
		uint64_t want = x.chunk_blocks;
		bool last;
		size_t got = 0;
		uint32_t n;
		char msg[160];
		int ret;

		if (stop_signal) {
			rc = interrupted(done, count);
			break;
		}
		/* every buffer in use: the oldest write must finish first */
		if (x.outstanding == x.nr_slots) {
			rc = write_retire(&x, &done, count, false);
			if (rc)
				break;
		}
		s = &x.slot[x.tail];
		if (count && count - placed < want)
			want = count - placed;
		ret = read_full(x.fd, s->buf, (size_t)want * lbs, &got);
		if (ret) {
			rc = stop_signal ? interrupted(done, count) :
					   fail("cannot read '%s': %s", name,
						strerror(-ret));
			break;
		}
		last = got < (size_t)want * lbs;
		if (last) {
			/* the messages say what was written: finish that */
			rc = write_retire(&x, &done, count, true);
			if (!rc)
				rc = short_input(a, name, count, done, got,
						 lbs);
			if (rc)
				break;
		}
		n = (uint32_t)(got / lbs);
		if (n && x.msz) {
			size_t mgot = 0;

			ret = read_full(x.mdfd, s->md, (size_t)n * x.msz,
					&mgot);
			if (ret || mgot < (size_t)n * x.msz) {
				rc = write_retire(&x, &done, count, true);
				written_msg(done, msg, sizeof(msg));
				if (!rc && ret)
					rc = fail("cannot read '%s': %s; %s",
						  a->metadata, strerror(-ret),
						  msg);
				else if (!rc)
					rc = fail("'%s' ended after %" PRIu64
						  " bytes, short of the "
						  "metadata of %" PRIu64
						  " blocks (%u bytes each); "
						  "%s",
						  a->metadata,
						  placed * x.msz + mgot,
						  placed + n, x.msz, msg);
				break;
			}
		}
		if (n > x.ns.nlba - lba) {
			rc = write_retire(&x, &done, count, true);
			if (rc)
				break;
			written_msg(done, msg, sizeof(msg));
			rc = fail("'%s' continues beyond the end of namespace "
				  "%u (%" PRIu64 " blocks of %u bytes); %s",
				  name, a->nsid, x.ns.nlba, lbs, msg);
			break;
		}
		if (n) {
			s->lba = lba;
			s->nlb = n;
			ret = submit_retry(s, submit_write, &x, a);
			if (ret == -EINTR) {
				rc = interrupted(done, count);
				break;
			}
			if (ret) {
				/* an earlier failure in order comes first */
				rc = write_retire(&x, &done, count, true);
				if (!rc)
					rc = xfer_error(ret, "write", s, done,
							count);
				break;
			}
			placed += n;
			lba += n;
			x.tail = (x.tail + 1) % x.nr_slots;
			x.outstanding++;
		}
		if (last)
			break;
	}
	if (!rc)
		rc = write_retire(&x, &done, count, true);
out:
	xfer_end(&x);
	return rc;
}

/* Submit one request into slot 0 of @x and wait for it, watching signals. */
static int one_request(struct xfer *x,
		       int (*submit)(struct xfer *x, struct slot *s,
				     const void *arg),
		       const void *arg, int *err, uint16_t *status)
{
	struct slot *s = &x->slot[0];
	int ret;

	ret = slot_submit(s, submit, x, arg);
	if (!ret)
		ret = wait_slot(x, s);
	if (ret)
		return ret;
	*err = s->err;
	*status = s->status;
	return 0;
}

static int submit_flush(struct xfer *x, struct slot *s, const void *arg)
{
	return nvq_flush(x->q, *(const uint32_t *)arg, 0, slot_done, s);
}

int run_flush(struct args *a)
{
	struct xfer x = { .fd = -1 };
	uint16_t status = 0;
	char msg[160];
	int rc, ret, err = 0;

	catch_signals();
	rc = open_ctrl_io(a, &x.ctrl);
	if (rc)
		return rc;
	x.q = nvq_ctrl_queue(x.ctrl, 0);
	if (!x.q)
		rc = fail("%s has no I/O queue", nvq_ctrl_uri(x.ctrl));
	if (!rc && a->nsid != NVQ_NSID_ALL)
		rc = get_ns(x.ctrl, a->nsid, &x.ns);
	if (!rc) {
		ret = one_request(&x, submit_flush, &a->nsid, &err, &status);
		if (ret == -EINTR) {
			fprintf(stderr, "nvq: interrupted by signal %d\n",
				(int)stop_signal);
			rc = exit_for_signal(stop_signal);
		} else if (ret || err) {
			rc = fail("flush of namespace %#x failed: %s", a->nsid,
				  io_msg(ret ? ret : err, status, msg,
					 sizeof(msg)));
		}
	}
	xfer_end(&x);
	return rc;
}

struct range_op {
	const char *what;
	int (*submit)(struct nvq_queue *q, uint32_t nsid, uint64_t slba,
		      uint32_t nlb, unsigned int flags, nvq_cb cb, void *arg);
	uint32_t max; /* blocks per call */
};

struct range_req {
	const struct range_op *op;
	uint32_t nsid;
	uint64_t slba;
	uint32_t nlb;
};

static int submit_range(struct xfer *x, struct slot *s, const void *arg)
{
	const struct range_req *r = arg;

	return r->op->submit(x->q, r->nsid, r->slba, r->nlb, 0, slot_done, s);
}

/*
 * Write Zeroes or Deallocate over a range, one request at a time of at
 * most op->max blocks; a request the library refuses as too large for the
 * queue (-E2BIG: it splits Write Zeroes by the maximum transfer) is halved
 * until it fits.
 */
static int run_range(struct args *a, const struct range_op *op)
{
	struct xfer x = { .fd = -1 };
	uint64_t done = 0;
	uint32_t max = op->max;
	int rc;

	rc = xfer_begin(a, &x);
	if (!rc)
		rc = check_range(&x.ns, a->slba, a->count);
	while (!rc && done < a->count) {
		uint64_t left = a->count - done;
		struct range_req r = { op, a->nsid, a->slba + done,
				       left < max ? (uint32_t)left : max };
		uint16_t status = 0;
		char msg[160];
		int ret, err = 0;

		if (stop_signal) {
			rc = interrupted(done, a->count);
			break;
		}
		ret = one_request(&x, submit_range, &r, &err, &status);
		if (ret == -E2BIG && max > 1) {
			max /= 2;
			continue;
		}
		if (ret == -EINTR) {
			rc = interrupted(done, a->count);
			break;
		}
		if (ret || err)
			rc = fail("%s of %u blocks at LBA %" PRIu64
				  " failed: %s",
				  op->what, r.nlb, r.slba,
				  io_msg(ret ? ret : err, status, msg,
					 sizeof(msg)));
		done += r.nlb;
	}
	xfer_end(&x);
	return rc;
}

int run_write_zeroes(struct args *a)
{
	static const struct range_op op = { "write zeroes", nvq_write_zeroes,
					    WZ_MAX_BLOCKS };

	return run_range(a, &op);
}

int run_trim(struct args *a)
{
	static const struct range_op op = { "deallocate", nvq_deallocate,
					    TRIM_MAX_BLOCKS };

	return run_range(a, &op);
}
