// SPDX-License-Identifier: MIT
/*
 * NVMe over Fabrics discovery over TCP: nvq_discover() reads the
 * Discovery log page (70h) of a discovery controller, and
 * nvq_disc_log_decode() turns such a page into struct nvq_disc_log.
 *
 * The controller: Connect on the admin queue (CNTLID FFFFh, no
 * keep-alive), CC.EN with CSTS.RDY, the log page read until its GENCTR
 * holds still, CC.SHN, close (NVMe-oF 1.1, 3.3 and 5.3).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "nvq/nvq.h"
#include "tcp.h"

/* The first release's struct nvq_disc_entry: smaller strides are no
 * caller's. */
#define DISC_ENTRY_SIZE_VER0 816
NVQ_STATIC_ASSERT(sizeof(struct nvq_disc_entry) == DISC_ENTRY_SIZE_VER0,
		  "struct nvq_disc_entry changed: add a size");

#define HDR_LEN sizeof(struct nvq_disc_log_hdr)
#define REC_LEN sizeof(struct nvq_disc_log_entry)
/* Reads of the page before a GENCTR that changes each time is an error
 * (as Linux's host: 10). */
#define GENCTR_TRIES 10
/* The most a discovery waits for the controller to finish shutting down:
 * a courtesy, the connection ends anyway. */
#define SHUTDOWN_MAX_MS 2000
/* The admin queue of a discovery association. */
#define DISC_AQ_DEPTH 32

/* A fixed field of @n bytes as a C string in @dst (n + 1 bytes): cut at
 * the first NUL, trailing spaces and NULs gone, never past the field. */
static void fixed_str(char *dst, const char *src, size_t n)
{
	const char *nul = memchr(src, '\0', n);

	if (nul)
		n = (size_t)(nul - src);
	while (n && src[n - 1] == ' ')
		n--;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void decode_entry(const struct nvq_disc_log_entry *r,
			 struct nvq_disc_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->trtype = r->trtype;
	e->adrfam = r->adrfam;
	e->subtype = r->subtype;
	e->treq = r->treq;
	e->portid = le16toh(r->portid);
	e->cntlid = le16toh(r->cntlid);
	e->asqsz = le16toh(r->asqsz);
	e->eflags = le16toh(r->eflags);
	fixed_str(e->trsvcid, r->trsvcid, sizeof(r->trsvcid));
	fixed_str(e->traddr, r->traddr, sizeof(r->traddr));
	fixed_str(e->subnqn, r->subnqn, sizeof(r->subnqn));
	memcpy(e->tsas, r->tsas, sizeof(e->tsas));
}

/* The header's NUMREC, checked: 0 or -EPROTO. */
static int check_hdr(const struct nvq_disc_log_hdr *h, uint64_t *numrec)
{
	uint64_t n = le64toh(h->numrec);
	uint16_t recfmt = le16toh(h->recfmt);

	if (recfmt)
		return nvq_err(-EPROTO,
			       "discovery log: record format %u (only 0 is "
			       "defined)",
			       recfmt);
	if (n > NVQ_DISC_MAX_RECORDS)
		return nvq_err(-EPROTO,
			       "discovery log: %llu records, more than the "
			       "%d taken",
			       (unsigned long long)n, NVQ_DISC_MAX_RECORDS);
	*numrec = n;
	return 0;
}

int nvq_disc_log_decode_size(const void *page, size_t len,
			     struct nvq_disc_log **logp, uint32_t entry_size)
{
	struct nvq_disc_log_hdr h;
	struct nvq_disc_log *log;
	uint64_t numrec, i;
	size_t copy;
	char *ents;
	int rc;

	if (logp)
		*logp = NULL;
	if (!page || !logp)
		return nvq_err(-EINVAL, "discovery log: no page or no result");
	if (entry_size < DISC_ENTRY_SIZE_VER0 || entry_size > (1u << 20))
		return nvq_err(-EINVAL,
			       "discovery log: entry size %u is no release's",
			       entry_size);
	if (len < HDR_LEN)
		return nvq_err(-EPROTO,
			       "discovery log: %zu bytes, less than its "
			       "%zu-byte header",
			       len, HDR_LEN);
	memcpy(&h, page, HDR_LEN);
	rc = check_hdr(&h, &numrec);
	if (rc)
		return rc;
	if ((len - HDR_LEN) / REC_LEN < numrec)
		return nvq_err(-EPROTO,
			       "discovery log: %zu bytes hold %zu of its %llu "
			       "records",
			       len, (len - HDR_LEN) / REC_LEN,
			       (unsigned long long)numrec);
	log = calloc(1, sizeof(*log));
	ents = numrec ? calloc((size_t)numrec, entry_size) : NULL;
	if (!log || (numrec && !ents)) {
		free(log);
		free(ents);
		return nvq_err(-ENOMEM,
			       "discovery log: no memory for %llu "
			       "records",
			       (unsigned long long)numrec);
	}
	log->entry_size = entry_size;
	log->nr_entries = (uint32_t)numrec;
	log->genctr = le64toh(h.genctr);
	log->recfmt = le16toh(h.recfmt);
	log->entries = (struct nvq_disc_entry *)(void *)ents;
	copy = MIN((size_t)entry_size, sizeof(struct nvq_disc_entry));
	for (i = 0; i < numrec; i++) {
		struct nvq_disc_log_entry r;
		struct nvq_disc_entry e;

		memcpy(&r, (const char *)page + HDR_LEN + i * REC_LEN,
		       sizeof(r));
		decode_entry(&r, &e);
		memcpy(ents + i * entry_size, &e, copy);
	}
	*logp = log;
	return 0;
}

void nvq_disc_log_free(struct nvq_disc_log *log)
{
	if (!log)
		return;
	free(log->entries);
	free(log);
}

/* ---- the discovery controller ------------------------------------- */

/*
 * TEMPORARY until conn.c and fabrics.c land (branch proto): their
 * functions may be missing from this build; nvq_discover() then says so.
 */
#pragma weak nvq_tcp_conn_open
#pragma weak nvq_tcp_conn_close
#pragma weak nvq_tcp_conn_error
#pragma weak nvq_tcp_conn_set_ioccsz
#pragma weak nvq_tcp_conn_sync
#pragma weak nvq_tcp_connect
#pragma weak nvq_tcp_prop_get
#pragma weak nvq_tcp_prop_set

struct disc {
	struct nvq_tcp_opts o;
	struct nvq_tcp_conn *c;
	uint32_t tmo_ms; /* each command */
	uint64_t cap;
};

static void ignore_done(void *arg, void *ctx, const struct nvq_cqe *cqe)
{
	(void)arg;
	(void)ctx;
	(void)cqe;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int prop_get(struct disc *d, uint32_t off, unsigned int size,
		    const char *name, uint64_t *val)
{
	uint16_t st = 0;
	int rc = nvq_tcp_prop_get(d->c, off, size, val, &st, d->tmo_ms);

	if (rc == -EIO)
		return nvq_err(rc,
			       "Property Get %s refused: %s "
			       "(%#x)",
			       name, nvq_status_str(st), st);
	return rc;
}

static int prop_set(struct disc *d, uint32_t off, uint64_t val,
		    const char *name)
{
	uint16_t st = 0;
	int rc = nvq_tcp_prop_set(d->c, off, 4, val, &st, d->tmo_ms);

	if (rc == -EIO)
		return nvq_err(rc,
			       "Property Set %s refused: %s "
			       "(%#x)",
			       name, nvq_status_str(st), st);
	return rc;
}

/* Wait up to @ms for CSTS & @mask == @want; CFS is an error. */
static int wait_csts(struct disc *d, uint32_t mask, uint32_t want, uint64_t ms,
		     const char *what)
{
	uint64_t end = now_ms() + ms, csts;
	int rc;

	for (;;) {
		rc = prop_get(d, NVQ_REG_CSTS, 4, "CSTS", &csts);
		if (rc)
			return rc;
		if (csts & NVQ_CSTS_CFS)
			return nvq_err(-EIO,
				       "the controller reports a "
				       "fatal status (CSTS %#llx) waiting for "
				       "%s",
				       (unsigned long long)csts, what);
		if (((uint32_t)csts & mask) == want)
			return 0;
		if (now_ms() >= end)
			return nvq_err(-ETIMEDOUT,
				       "no %s within %llu ms "
				       "(CSTS %#llx)",
				       what, (unsigned long long)ms,
				       (unsigned long long)csts);
		nvq_sleep_us(10000);
	}
}

static int enable(struct disc *d)
{
	uint32_t cc = NVQ_CC_EN | NVQ_CC_CSS_NVM | NVQ_CC_AMS_RR |
		      6u << NVQ_CC_IOSQES_SHIFT | 4u << NVQ_CC_IOCQES_SHIFT;
	int rc;

	rc = prop_get(d, NVQ_REG_CAP, 8, "CAP", &d->cap);
	if (rc)
		return rc;
	rc = prop_set(d, NVQ_REG_CC, cc, "CC");
	if (rc)
		return rc;
	/* CAP.TO: 500 ms units; 0 from a broken controller: say 500 ms */
	return wait_csts(d, NVQ_CSTS_RDY, NVQ_CSTS_RDY,
			 (uint64_t)MAX(NVQ_CAP_TO(d->cap), 1u) * 500,
			 "CSTS.RDY after CC.EN");
}

/* Best effort: a controller that does not finish shutting down (within
 * SHUTDOWN_MAX_MS) is no reason to fail a discovery that has its log. */
static void shutdown_ctrl(struct disc *d)
{
	uint32_t cc = NVQ_CC_EN | NVQ_CC_CSS_NVM | NVQ_CC_AMS_RR |
		      6u << NVQ_CC_IOSQES_SHIFT | 4u << NVQ_CC_IOCQES_SHIFT |
		      NVQ_CC_SHN_NORMAL;

	if (!prop_set(d, NVQ_REG_CC, cc, "CC"))
		wait_csts(d, NVQ_CSTS_SHST_MASK, NVQ_CSTS_SHST_CMPLT,
			  MIN((uint64_t)MAX(NVQ_CAP_TO(d->cap), 1u) * 500,
			      SHUTDOWN_MAX_MS),
			  "shutdown complete");
}

/* Get Log Page 70h: @len bytes from offset 0 into @buf. */
static int get_log(struct disc *d, void *buf, size_t len)
{
	uint32_t numd = (uint32_t)(len / 4 - 1);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct nvq_tcp_data data = {
		.iov = &iov, .iovcnt = 1, .len = len, .write = false
	};
	struct nvq_sqe sqe;
	struct nvq_cqe cqe;
	uint16_t st;
	int rc;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = nvq_admin_get_log_page;
	sqe.cdw10 = NVQ_LOG_DISCOVERY | (numd & 0xffff) << 16;
	sqe.cdw11 = numd >> 16;
	rc = nvq_tcp_conn_sync(d->c, &sqe, &data, &cqe, d->tmo_ms);
	if (rc)
		return rc;
	st = NVQ_STATUS(cqe.status) & NVQ_STATUS_CODE_MASK;
	if (st && strcmp(d->o.subnqn, NVQ_DISC_NQN))
		return nvq_err(-EIO,
			       "Get Log Page (discovery, %zu "
			       "bytes) failed: %s (%#x); is %s a discovery "
			       "subsystem?",
			       len, nvq_status_str(st), st, d->o.subnqn);
	if (st)
		return nvq_err(-EIO,
			       "Get Log Page (discovery, %zu "
			       "bytes) failed: %s (%#x)",
			       len, nvq_status_str(st), st);
	return 0;
}

/* The page, read until GENCTR is the same before and after: into
 * *@page (malloc'd) and *@len. */
static int read_log(struct disc *d, void **page, size_t *len)
{
	struct nvq_disc_log_hdr *h = malloc(HDR_LEN), *full;
	uint64_t numrec, gen = 0;
	void *buf = NULL;
	size_t n = 0;
	int tries, rc;

	if (!h)
		return nvq_err(-ENOMEM, "no memory");
	for (tries = 0; tries < GENCTR_TRIES; tries++) {
		rc = get_log(d, h, HDR_LEN);
		if (rc)
			goto out;
		rc = check_hdr(h, &numrec);
		if (rc)
			goto out;
		gen = le64toh(h->genctr);
		n = HDR_LEN + (size_t)numrec * REC_LEN;
		free(buf);
		buf = calloc(1, n);
		if (!buf) {
			rc = nvq_err(-ENOMEM,
				     "no memory for %zu "
				     "bytes",
				     n);
			goto out;
		}
		rc = numrec ? get_log(d, buf, n) : 0;
		if (rc)
			goto out;
		if (!numrec)
			memcpy(buf, h, HDR_LEN);
		full = buf;
		/* the records must be those of the header read first ... */
		if (le64toh(full->genctr) != gen ||
		    le64toh(full->numrec) != numrec ||
		    le16toh(full->recfmt) != 0)
			continue;
		if (!numrec)
			break;
		/* ... and the page the same after them */
		rc = get_log(d, h, HDR_LEN);
		if (rc)
			goto out;
		if (le64toh(h->genctr) == gen)
			break;
	}
	if (tries == GENCTR_TRIES) {
		rc = nvq_err(-EPROTO,
			     "the log page changed on each of %d "
			     "reads (generation counter %llu)",
			     GENCTR_TRIES, (unsigned long long)gen);
		goto out;
	}
	*page = buf;
	*len = n;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	free(h);
	return rc;
}

int nvq_discover_size(const char *uri, struct nvq_disc_log **logp,
		      uint32_t entry_size)
{
	struct disc d;
	uint16_t cntlid, st = 0;
	void *page = NULL;
	size_t len = 0;
	char why[256];
	int rc;

	if (logp)
		*logp = NULL;
	if (!uri || !logp)
		return nvq_err(-EINVAL, "discover: no URI or no result");
	if (entry_size < DISC_ENTRY_SIZE_VER0 || entry_size > (1u << 20))
		return nvq_err(-EINVAL,
			       "discover: entry size %u is no release's",
			       entry_size);
	if (strncmp(uri, "tcp:", 4))
		return nvq_err(-EINVAL,
			       "discover: '%.64s' is not a tcp: URI (expected "
			       "tcp:HOST[:PORT][,key=val...])",
			       uri);
	memset(&d, 0, sizeof(d));
	rc = nvq_tcp_opts_parse(uri + 4, true, &d.o);
	if (rc)
		return rc;
	/* TEMPORARY until conn.c and fabrics.c land */
	if (!nvq_tcp_conn_open || !nvq_tcp_connect || !nvq_tcp_conn_sync)
		return nvq_err(-ENOTSUP, "discover: this build has no NVMe/TCP "
					 "connections");
	d.tmo_ms = d.o.connect_timeout_ms;
	rc = nvq_tcp_conn_open(&d.o, 0, DISC_AQ_DEPTH, ignore_done, NULL, &d.c);
	if (rc)
		return rc;
	nvq_tcp_conn_set_ioccsz(d.c, 8192);
	rc = nvq_tcp_connect(d.c, &d.o, 0, DISC_AQ_DEPTH, 0xffff, 0, &cntlid,
			     &st);
	if (rc) {
		nvq_tcp_conn_close(d.c);
		return nvq_err(rc, "discover: %s:%s: %s", d.o.host, d.o.port,
			       nvq_errmsg_copy(why, sizeof(why)));
	}
	rc = enable(&d);
	if (!rc)
		rc = read_log(&d, &page, &len);
	if (!rc)
		rc = nvq_disc_log_decode_size(page, len, logp, entry_size);
	if (rc)
		nvq_errmsg_copy(why, sizeof(why));
	if (!nvq_tcp_conn_error(d.c))
		shutdown_ctrl(&d);
	nvq_tcp_conn_close(d.c);
	free(page);
	if (rc)
		return nvq_err(rc, "discover: %s:%s: %s", d.o.host, d.o.port,
			       why);
	nvq_err_clear();
	return 0;
}
