/* SPDX-License-Identifier: MIT */
/*
 * The discovery log page decoder (nvq_disc_log_decode()): records and
 * their fixed string fields (space and NUL padded, or full to the last
 * byte: never read past, under ASan on exact-size buffers), the header's
 * checks (NUMREC bounded, RECFMT 0, a page too short for its NUMREC),
 * the caller's entry stride; and nvq_discover()'s argument checks, which
 * need no network.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nvq/nvq.h"

#define HDR 1024
#define REC 1024

/* An exact-size page of @numrec records (NUMREC @hdr_numrec). */
static unsigned char *page(uint64_t genctr, uint64_t hdr_numrec,
			   unsigned int numrec, size_t *len)
{
	struct nvq_disc_log_hdr h;
	unsigned char *p;

	*len = HDR + (size_t)numrec * REC;
	p = calloc(1, *len);
	CHECK(p != NULL);
	memset(&h, 0, sizeof(h));
	h.genctr = genctr;
	h.numrec = hdr_numrec;
	memcpy(p, &h, sizeof(h));
	return p;
}

static struct nvq_disc_log_entry *rec(unsigned char *p, unsigned int i)
{
	return (struct nvq_disc_log_entry *)(void *)(p + HDR + (size_t)i * REC);
}

static void fill(struct nvq_disc_log_entry *e, const char *traddr,
		 const char *svc, const char *nqn)
{
	e->trtype = NVQ_TRTYPE_TCP;
	e->adrfam = NVQ_ADRFAM_IP4;
	e->subtype = NVQ_SUBTYPE_NVME;
	e->treq = 2;
	e->portid = 1;
	e->cntlid = 0xffff;
	e->asqsz = 32;
	e->eflags = 0;
	/* space padded, as Linux's target sends them */
	memset(e->trsvcid, ' ', sizeof(e->trsvcid));
	memcpy(e->trsvcid, svc, strlen(svc));
	memset(e->traddr, ' ', sizeof(e->traddr));
	memcpy(e->traddr, traddr, strlen(traddr));
	memcpy(e->subnqn, nqn, strlen(nqn));
}

static void records(void)
{
	struct nvq_disc_log *log;
	size_t len;
	unsigned char *p = page(7, 3, 3, &len);
	struct nvq_disc_log_entry *e;

	fill(rec(p, 0), "127.0.0.1", "4420", "nqn.2014-08.org.example:a");
	fill(rec(p, 1), "::1", "4421", "nqn.2014-08.org.example:b");
	rec(p, 1)->adrfam = NVQ_ADRFAM_IP6;
	rec(p, 1)->tsas[0] = 1;
	rec(p, 1)->eflags = 3;
	rec(p, 1)->portid = 0x1234;
	/* every field full to its last byte, no NUL, no space */
	e = rec(p, 2);
	e->subtype = NVQ_SUBTYPE_CURRENT_DISC;
	memset(e->trsvcid, 'S', sizeof(e->trsvcid));
	memset(e->traddr, 'A', sizeof(e->traddr));
	memset(e->subnqn, 'N', sizeof(e->subnqn));

	CHECK_OK(nvq_disc_log_decode(p, len, &log));
	CHECK_EQ(log->entry_size, sizeof(struct nvq_disc_entry));
	CHECK_EQ(log->nr_entries, 3);
	CHECK_EQ(log->genctr, 7);
	CHECK_EQ(log->recfmt, 0);
	CHECK_EQ(log->entries[0].trtype, NVQ_TRTYPE_TCP);
	CHECK_EQ(log->entries[0].adrfam, NVQ_ADRFAM_IP4);
	CHECK_EQ(log->entries[0].subtype, NVQ_SUBTYPE_NVME);
	CHECK_EQ(log->entries[0].treq, 2);
	CHECK_EQ(log->entries[0].portid, 1);
	CHECK_EQ(log->entries[0].cntlid, 0xffff);
	CHECK_EQ(log->entries[0].asqsz, 32);
	CHECK_STREQ(log->entries[0].traddr, "127.0.0.1");
	CHECK_STREQ(log->entries[0].trsvcid, "4420");
	CHECK_STREQ(log->entries[0].subnqn, "nqn.2014-08.org.example:a");
	CHECK_EQ(log->entries[1].adrfam, NVQ_ADRFAM_IP6);
	CHECK_EQ(log->entries[1].tsas[0], 1);
	CHECK_EQ(log->entries[1].eflags, 3);
	CHECK_EQ(log->entries[1].portid, 0x1234);
	CHECK_STREQ(log->entries[1].traddr, "::1");
	CHECK_EQ(strlen(log->entries[2].trsvcid), 32);
	CHECK_EQ(strlen(log->entries[2].traddr), 256);
	CHECK_EQ(strlen(log->entries[2].subnqn), 256);
	CHECK_EQ(log->entries[2].subtype, NVQ_SUBTYPE_CURRENT_DISC);
	nvq_disc_log_free(log);

	/* bytes after the records are ignored; a NUL in the middle cuts */
	{
		unsigned char *q = malloc(len + 100);

		CHECK(q != NULL);
		memcpy(q, p, len);
		memset(q + len, 0xee, 100);
		memcpy(rec(q, 0)->traddr, "10.0.0.1\0garbage", 16);
		CHECK_OK(nvq_disc_log_decode(q, len + 100, &log));
		CHECK_EQ(log->nr_entries, 3);
		CHECK_STREQ(log->entries[0].traddr, "10.0.0.1");
		nvq_disc_log_free(log);
		free(q);
	}
	free(p);

	/* an empty log: no entries */
	p = page(1, 0, 0, &len);
	CHECK_OK(nvq_disc_log_decode(p, len, &log));
	CHECK_EQ(log->nr_entries, 0);
	CHECK(log->entries == NULL);
	CHECK_EQ(log->genctr, 1);
	nvq_disc_log_free(log);
	free(p);
	nvq_disc_log_free(NULL);
}

/* A caller built with a larger entry (a later release's header): the
 * stride is its size, the part this library does not know zero. */
static void strides(void)
{
	struct big {
		struct nvq_disc_entry e;
		uint64_t later;
	};
	struct nvq_disc_log *log;
	const struct big *b;
	size_t len;
	unsigned char *p = page(3, 2, 2, &len);

	fill(rec(p, 0), "10.0.0.1", "4420", "nqn.x:a");
	fill(rec(p, 1), "10.0.0.2", "4421", "nqn.x:b");
	CHECK_OK(nvq_disc_log_decode_size(p, len, &log, sizeof(struct big)));
	CHECK_EQ(log->entry_size, sizeof(struct big));
	b = (const struct big *)(const void *)log->entries;
	CHECK_STREQ(b[0].e.traddr, "10.0.0.1");
	CHECK_STREQ(b[1].e.traddr, "10.0.0.2");
	CHECK_STREQ(b[1].e.trsvcid, "4421");
	CHECK_EQ(b[0].later, 0);
	CHECK_EQ(b[1].later, 0);
	nvq_disc_log_free(log);

	log = (struct nvq_disc_log *)&log; /* must be set to NULL */
	CHECK_EQ(nvq_disc_log_decode_size(p, len, &log, 64), -EINVAL);
	CHECK(log == NULL);
	CHECK_MSG("entry size 64");
	free(p);
}

static void malformed(void)
{
	struct nvq_disc_log *log;
	unsigned char *p;
	size_t len;

	/* NUMREC says 2, one record's bytes */
	p = page(1, 2, 1, &len);
	CHECK_EQ(nvq_disc_log_decode(p, len, &log), -EPROTO);
	CHECK(log == NULL);
	CHECK_MSG("2048 bytes hold 1 of its 2 records");
	free(p);
	/* a NUMREC that would overflow a size computation */
	p = page(1, ~0ull, 0, &len);
	CHECK_EQ(nvq_disc_log_decode(p, len, &log), -EPROTO);
	CHECK_MSG("more than the 1024 taken");
	free(p);
	p = page(1, 1025, 0, &len);
	CHECK_EQ(nvq_disc_log_decode(p, len, &log), -EPROTO);
	CHECK_MSG("1025 records");
	free(p);
	/* RECFMT 1 */
	p = page(1, 0, 0, &len);
	p[16] = 1;
	CHECK_EQ(nvq_disc_log_decode(p, len, &log), -EPROTO);
	CHECK_MSG("record format 1");
	/* shorter than the header */
	CHECK_EQ(nvq_disc_log_decode(p, HDR - 1, &log), -EPROTO);
	CHECK_MSG("1023 bytes, less than its 1024-byte header");
	CHECK_EQ(nvq_disc_log_decode(p, 0, &log), -EPROTO);
	CHECK_EQ(nvq_disc_log_decode(NULL, len, &log), -EINVAL);
	CHECK_EQ(nvq_disc_log_decode(p, len, NULL), -EINVAL);
	free(p);
	/* the most records taken */
	p = page(9, 1024, 1024, &len);
	CHECK_OK(nvq_disc_log_decode(p, len, &log));
	CHECK_EQ(log->nr_entries, 1024);
	nvq_disc_log_free(log);
	free(p);
}

static void discover_args(void)
{
	struct nvq_disc_log *log = (struct nvq_disc_log *)&log;

	CHECK_EQ(nvq_discover(NULL, &log), -EINVAL);
	CHECK(log == NULL);
	CHECK_EQ(nvq_discover("tcp:127.0.0.1", NULL), -EINVAL);
	CHECK_EQ(nvq_discover("emu:", &log), -EINVAL);
	CHECK_MSG("'emu:' is not a tcp: URI");
	CHECK_EQ(nvq_discover("tcp:", &log), -EINVAL);
	CHECK_MSG("no host");
	CHECK_EQ(nvq_discover("tcp:127.0.0.1,bogus=1", &log), -EINVAL);
	CHECK_MSG("unknown option 'bogus'");
	CHECK_EQ(nvq_discover("tcp:127.0.0.1:4420/1", &log), -EINVAL);
	CHECK_MSG("bad port '4420/1'");
	CHECK_EQ(nvq_discover_size("tcp:127.0.0.1", &log, 8), -EINVAL);
	CHECK_MSG("entry size 8");
}

int main(void)
{
	records();
	strides();
	malformed();
	discover_args();
	return T_EXIT_PASS;
}
