// SPDX-License-Identifier: MIT
/*
 * The metadata of every logical block (ms= bytes each), apart from the
 * data: the data media (media.c) stays a plain image whatever the format.
 *
 * RAM: an anonymous mapping of nr_ns * blocks * ms bytes. A file: the
 * sidecar FILE.md, a 4 KiB header (struct md_hdr: magic, the format)
 * followed by the metadata of namespace 1's blocks, then namespace 2's.
 * Both store the bytes inverted, so that a page never touched, or a hole
 * of the file, reads as FFh: the metadata of a block never written, which
 * disables protection information checks (NVM Command Set 1.0, 5.2.1.1).
 *
 * A sidecar written for another format (ms, lbads, geometry) fails the
 * open with a message instead of being misread; with ms=0 and no sidecar
 * nothing is created.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_internal.h"

#define MD_HDR_SIZE 4096
#define MD_MAGIC "NVQEMUMD"
#define MD_VERSION 1

struct md_hdr {
	char magic[8];
	uint32_t version;
	uint32_t ms;
	uint32_t lbads;
	uint32_t nr_ns;
	uint64_t ns_size;
};

static uint64_t md_bytes(const struct nvq_emu_params *p)
{
	return (uint64_t)p->nr_ns * (p->ns_size >> p->lbads) * p->ms;
}

static int write_hdr(struct emu_media *m, const struct nvq_emu_params *p)
{
	struct md_hdr h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MD_MAGIC, 8);
	h.version = MD_VERSION;
	h.ms = p->ms;
	h.lbads = p->lbads;
	h.nr_ns = p->nr_ns;
	h.ns_size = p->ns_size;
	if (pwrite(m->mdfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return emu_err(-EIO, "emu: cannot write '%s': %s", m->mdpath,
			       strerror(errno));
	return 0;
}

/* Size the sidecar for @p: header plus (sparse) metadata. */
static int size_sidecar(struct emu_media *m, const struct nvq_emu_params *p)
{
	if (ftruncate(m->mdfd, MD_HDR_SIZE + (off_t)md_bytes(p)))
		return emu_err(-errno, "emu: cannot size '%s': %s", m->mdpath,
			       strerror(errno));
	return 0;
}

static int check_hdr(struct emu_media *m, const struct nvq_emu_params *p)
{
	struct md_hdr h;
	ssize_t got = pread(m->mdfd, &h, sizeof(h), 0);

	if (got != (ssize_t)sizeof(h) || memcmp(h.magic, MD_MAGIC, 8) ||
	    h.version != MD_VERSION)
		return emu_err(-EINVAL,
			       "emu parameter 'file': '%s' is not an nvq "
			       "metadata file; move it away",
			       m->mdpath);
	if (h.nr_ns != p->nr_ns || h.ns_size != p->ns_size)
		return emu_err(
			-EINVAL,
			"emu parameter 'file': '%s' holds the metadata "
			"of %u namespaces of %llu bytes, not %u of %llu; "
			"use those or remove it (its metadata is lost)",
			m->mdpath, h.nr_ns, (unsigned long long)h.ns_size,
			p->nr_ns, (unsigned long long)p->ns_size);
	if (h.ms != p->ms || h.lbads != p->lbads)
		return emu_err(-EINVAL,
			       "emu parameter 'ms': '%s' is formatted with "
			       "lbads=%u,ms=%u, not lbads=%u,ms=%u; give "
			       "those, or remove '%s' (its metadata is lost)",
			       p->file, h.lbads, h.ms, p->lbads, p->ms,
			       m->mdpath);
	return 0;
}

static int ram_map(struct emu_media *m, uint64_t len)
{
	void *b;

	m->md = NULL;
	m->md_len = len;
	if (!len)
		return 0;
	b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b == MAP_FAILED)
		return emu_err(-errno,
			       "emu: cannot reserve %llu bytes of metadata: %s",
			       (unsigned long long)len, strerror(errno));
	m->md = b;
	return 0;
}

int emu_md_open(struct emu_media *m, const struct nvq_emu_params *p)
{
	int ret;

	m->md = NULL;
	m->md_len = md_bytes(p);
	m->mdfd = -1;
	m->mdpath[0] = 0;
	if (!p->file[0])
		return ram_map(m, m->md_len);
	snprintf(m->mdpath, sizeof(m->mdpath), "%s.md", p->file);
	m->mdfd = open(m->mdpath, O_RDWR | O_CLOEXEC);
	if (m->mdfd >= 0)
		return check_hdr(m, p);
	if (errno != ENOENT)
		return emu_err(-errno,
			       "emu parameter 'file': cannot open "
			       "'%s': %s",
			       m->mdpath, strerror(errno));
	if (!p->ms)
		return 0;
	m->mdfd = open(m->mdpath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (m->mdfd < 0)
		return emu_err(-errno,
			       "emu parameter 'file': cannot create "
			       "'%s': %s",
			       m->mdpath, strerror(errno));
	ret = size_sidecar(m, p);
	if (!ret)
		ret = write_hdr(m, p);
	if (ret) {
		close(m->mdfd);
		m->mdfd = -1;
		unlink(m->mdpath);
	}
	return ret;
}

void emu_md_close(struct emu_media *m)
{
	if (m->md)
		munmap(m->md, m->md_len);
	m->md = NULL;
	if (m->mdfd >= 0)
		close(m->mdfd);
	m->mdfd = -1;
}

static void invert(uint8_t *b, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		b[i] ^= 0xff;
}

static int file_io(int fd, uint64_t off, uint8_t *buf, uint64_t len, bool write)
{
	while (len) {
		ssize_t got = write ? pwrite(fd, buf, len, (off_t)off) :
				      pread(fd, buf, len, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!got)
			return write ? -EIO : -ENODATA;
		buf += got;
		off += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return 0;
}

int emu_md_rw(struct emu_media *m, uint64_t off, uint8_t *buf, uint64_t len,
	      bool write)
{
	uint64_t i;
	int ret;

	if (off > m->md_len || len > m->md_len - off)
		return -EINVAL;
	if (m->md) {
		if (write)
			for (i = 0; i < len; i++)
				m->md[off + i] = (uint8_t)~buf[i];
		else
			for (i = 0; i < len; i++)
				buf[i] = (uint8_t)~m->md[off + i];
		return 0;
	}
	if (m->mdfd < 0)
		return -EIO;
	/* The caller's buffer is left as it was. */
	if (write)
		invert(buf, len);
	ret = file_io(m->mdfd, MD_HDR_SIZE + off, buf, len, write);
	invert(buf, len);
	return ret;
}

int emu_md_fill(struct emu_media *m, uint64_t off, uint64_t len, uint8_t val)
{
	uint8_t chunk[4096];
	uint8_t stored = (uint8_t)~val;

	if (off > m->md_len || len > m->md_len - off)
		return -EINVAL;
	if (!len)
		return 0;
	if (m->md) {
		memset(m->md + off, stored, len);
		return 0;
	}
	if (m->mdfd < 0)
		return -EIO;
	if (!stored &&
	    !fallocate(m->mdfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       (off_t)(MD_HDR_SIZE + off), (off_t)len))
		return 0;
	memset(chunk, stored, sizeof(chunk));
	while (len) {
		uint64_t n = len < sizeof(chunk) ? len : sizeof(chunk);
		int ret = file_io(m->mdfd, MD_HDR_SIZE + off, chunk, n, true);

		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

int emu_md_format(struct emu_media *m, const struct nvq_emu_params *p)
{
	int ret;

	if (!p->file[0]) {
		emu_md_close(m);
		return ram_map(m, md_bytes(p));
	}
	if (m->mdfd < 0) {
		m->mdfd = open(m->mdpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (m->mdfd < 0)
			return emu_err(-errno, "emu: cannot create '%s': %s",
				       m->mdpath, strerror(errno));
	}
	/* Drop all metadata (reads FFh again), then size for @p. */
	if (ftruncate(m->mdfd, MD_HDR_SIZE))
		return emu_err(-errno, "emu: cannot truncate '%s': %s",
			       m->mdpath, strerror(errno));
	m->md_len = md_bytes(p);
	ret = size_sidecar(m, p);
	if (!ret)
		ret = write_hdr(m, p);
	return ret;
}
