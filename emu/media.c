// SPDX-License-Identifier: MIT
/*
 * The media behind the namespaces: one mapping holding every namespace in
 * turn. RAM is an anonymous mapping populated on first touch; a file is
 * mapped MAP_SHARED, so data written survives the process even without a
 * shutdown (it sits in the page cache), and Flush/shutdown make it durable
 * with msync + fdatasync. Both let the I/O path copy with plain memcpy.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrl.h"

#define PG 4096ull

int emu_media_open(struct emu_media *m, const struct nvq_emu_params *p)
{
	uint64_t total = p->ns_size * p->nr_ns;
	struct stat st;
	void *base;

	m->fd = -1;
	m->len = total;
	if (!p->file[0]) {
		base = mmap(NULL, total, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED)
			return emu_err(
				-errno,
				"emu: cannot reserve %llu bytes of RAM media: %s",
				(unsigned long long)total, strerror(errno));
		m->base = base;
		return 0;
	}

	m->fd = open(p->file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (m->fd < 0)
		return emu_err(-errno,
			       "emu parameter 'file': cannot open '%s': %s",
			       p->file, strerror(errno));
	if (fstat(m->fd, &st) || !S_ISREG(st.st_mode)) {
		close(m->fd);
		m->fd = -1;
		return emu_err(
			-EINVAL,
			"emu parameter 'file': '%s' is not a regular file",
			p->file);
	}
	if ((uint64_t)st.st_size < total && ftruncate(m->fd, (off_t)total)) {
		int err = errno;

		close(m->fd);
		m->fd = -1;
		return emu_err(
			-err,
			"emu parameter 'file': cannot extend '%s' to %llu bytes: %s",
			p->file, (unsigned long long)total, strerror(err));
	}
	base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (base == MAP_FAILED) {
		int err = errno;

		close(m->fd);
		m->fd = -1;
		return emu_err(-err,
			       "emu parameter 'file': cannot map '%s': %s",
			       p->file, strerror(err));
	}
	m->base = base;
	return 0;
}

void emu_media_close(struct emu_media *m)
{
	if (m->base)
		munmap(m->base, m->len);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}

int emu_media_sync(struct emu_media *m, uint64_t off, uint64_t len)
{
	uint64_t start, end;

	if (m->fd < 0 || !len)
		return 0;
	start = off & ~(PG - 1);
	end = off + len;
	if (end > m->len)
		end = m->len;
	if (msync(m->base + start, end - start, MS_SYNC))
		return -errno;
	if (fdatasync(m->fd))
		return -errno;
	return 0;
}

void emu_media_zero(struct emu_media *m, uint64_t off, uint64_t len,
		    bool dealloc)
{
	uint64_t a = (off + PG - 1) & ~(PG - 1);
	uint64_t b = (off + len) & ~(PG - 1);

	/* Small ranges or no whole page inside: plain stores. */
	if (!dealloc || len < 16 * PG || a >= b) {
		memset(m->base + off, 0, len);
		return;
	}
	memset(m->base + off, 0, a - off);
	memset(m->base + b, 0, off + len - b);
	if (m->fd < 0) {
		if (!madvise(m->base + a, b - a, MADV_DONTNEED))
			return;
	} else if (!fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)a, (off_t)(b - a))) {
		return;
	}
	memset(m->base + a, 0, b - a);
}

uint64_t emu_media_latency(const struct nvq_emu_media_model *mm, uint8_t opcode)
{
	switch (opcode) {
	case nvme_cmd_read:
		return mm->read_ns;
	case nvme_cmd_write:
	case nvme_cmd_write_zeroes:
	case nvme_cmd_dsm:
	case nvme_cmd_flush:
		return mm->write_ns;
	default:
		return 0;
	}
}
