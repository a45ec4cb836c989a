// SPDX-License-Identifier: MIT
/*
 * Log pages (Error Information, SMART / Health, Firmware Slot) and
 * Asynchronous Events. An event type, once reported, is masked until the
 * host reads its log page with RAE = 0, as the specification requires;
 * events raised meanwhile wait in a small queue.
 */
#include <string.h>
#include <sys/xattr.h>

#include "emu_internal.h"

#define ST_INVALID_FIELD EMU_ST_GEN(NVQ_SC_INVALID_FIELD)
#define SMART_TEMPERATURE (1u << 1) /* critical warning bit */

void emu_log_error(struct nvq_emu *c, uint16_t sqid, uint16_t cid,
		   uint16_t status, const struct emu_req *req)
{
	struct nvq_error_log *e = &c->errlog[c->err_count % (c->p.elpe + 1)];

	memset(e, 0, sizeof(*e));
	e->error_count = ++c->err_count;
	e->sqid = sqid;
	e->cid = cid;
	e->status = (uint16_t)(status << 1);
	e->param_error_location = req ? req->err_loc : 0xffff;
	if (req) {
		e->lba = req->err_lba;
		e->nsid = req->sqe->nsid;
	}
}

/*
 * Power cycles and unsafe shutdowns of a file-backed device outlive the
 * process: they are kept in an extended attribute of the backing file, so
 * the file's layout stays the namespaces alone. Where the file system has
 * no user xattrs the counts start afresh with every creation.
 */
#define SMART_XATTR "user.nvq.smart"
#define SMART_MAGIC 0x3153514eu /* "NQS1" */

struct smart_persist {
	uint32_t magic;
	uint32_t dirty;
	uint64_t power_cycles;
	uint64_t unsafe_shutdowns;
};

static void smart_save(struct nvq_emu *c)
{
	struct smart_persist r = {
		.magic = SMART_MAGIC,
		.dirty = c->smart.dirty,
		.power_cycles = c->smart.power_cycles,
		.unsafe_shutdowns = c->smart.unsafe_shutdowns,
	};

	if (c->media.fd >= 0 &&
	    fsetxattr(c->media.fd, SMART_XATTR, &r, sizeof(r), 0)) {
		/* best effort: no xattrs, no persistence */
	}
}

void emu_smart_power_on(struct nvq_emu *c)
{
	struct smart_persist r;

	if (c->media.fd >= 0 &&
	    fgetxattr(c->media.fd, SMART_XATTR, &r, sizeof(r)) ==
		    (ssize_t)sizeof(r) &&
	    r.magic == SMART_MAGIC) {
		c->smart.power_cycles = r.power_cycles;
		c->smart.unsafe_shutdowns = r.unsafe_shutdowns;
		c->smart.dirty = r.dirty != 0;
	}
	c->smart.power_cycles++;
	smart_save(c);
}

void emu_smart_enabled(struct nvq_emu *c)
{
	/* The previous enable ended without CC.SHN: power loss or reset. */
	if (c->smart.dirty)
		c->smart.unsafe_shutdowns++;
	c->smart.dirty = true;
	smart_save(c);
}

void emu_smart_shutdown(struct nvq_emu *c)
{
	c->smart.dirty = false;
	smart_save(c);
}

uint16_t emu_temperature(const struct nvq_emu *c)
{
	(void)c;
	return EMU_TEMP_K;
}

static bool over_temperature(const struct nvq_emu *c)
{
	uint16_t t = emu_temperature(c);

	return t >= c->feat.temp_over ||
	       (c->feat.temp_under && t <= c->feat.temp_under);
}

void emu_check_temperature(struct nvq_emu *c)
{
	if (over_temperature(c) && (c->feat.async_cfg & SMART_TEMPERATURE))
		emu_aer_raise(c, NVQ_AER_SMART, 0x01, NVQ_LOG_SMART);
}

void emu_aer_raise(struct nvq_emu *c, uint8_t type, uint8_t info, uint8_t lid)
{
	uint32_t i;

	for (i = 0; i < c->nr_aerq; i++)
		if (c->aerq[i].type == type && c->aerq[i].info == info)
			goto deliver; /* already waiting */
	if (c->nr_aerq == EMU_AER_QUEUE)
		goto deliver;
	c->aerq[c->nr_aerq].type = type;
	c->aerq[c->nr_aerq].info = info;
	c->aerq[c->nr_aerq].lid = lid;
	c->nr_aerq++;
deliver:
	emu_aer_deliver(c);
}

void emu_aer_deliver(struct nvq_emu *c)
{
	struct emu_sq *asq = c->sqs[0];
	uint32_t i = 0;

	if (!asq)
		return;
	while (c->nr_aer && i < c->nr_aerq) {
		struct emu_aer_event ev = c->aerq[i];
		uint16_t cid;

		if (c->aer_mask & (1u << ev.type)) {
			i++;
			continue;
		}
		memmove(&c->aerq[i], &c->aerq[i + 1],
			(c->nr_aerq - i - 1) * sizeof(c->aerq[0]));
		c->nr_aerq--;
		cid = c->aer_cids[0];
		memmove(&c->aer_cids[0], &c->aer_cids[1],
			(c->nr_aer - 1) * sizeof(c->aer_cids[0]));
		c->nr_aer--;
		c->aer_mask |= (uint8_t)(1u << ev.type);
		emu_complete(c, asq, cid, 0,
			     ev.type | (uint32_t)ev.info << 8 |
				     (uint32_t)ev.lid << 16,
			     NULL);
	}
}

/* Reading a log page with RAE = 0 re-arms events of its type. */
static void clear_events(struct nvq_emu *c, uint8_t type)
{
	c->aer_mask &= (uint8_t) ~(1u << type);
	emu_aer_deliver(c);
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static size_t smart_log(struct nvq_emu *c, uint8_t *buf)
{
	struct nvq_smart_log *s = (struct nvq_smart_log *)buf;
	uint16_t t = emu_temperature(c);
	uint64_t hours = (emu_now() - c->created_ns) / 3600000000000ull;

	memset(s, 0, sizeof(*s));
	if (over_temperature(c))
		s->critical_warning |= SMART_TEMPERATURE;
	s->temperature[0] = (uint8_t)t;
	s->temperature[1] = (uint8_t)(t >> 8);
	s->avail_spare = 100;
	s->spare_thresh = 10;
	/* Data units: thousands of 512-byte units, rounded up. */
	nvq_u128_add(s->data_units_read, div_up(c->smart.read_512, 1000));
	nvq_u128_add(s->data_units_written, div_up(c->smart.write_512, 1000));
	nvq_u128_add(s->host_reads, c->smart.host_reads);
	nvq_u128_add(s->host_writes, c->smart.host_writes);
	nvq_u128_add(s->power_cycles, c->smart.power_cycles);
	nvq_u128_add(s->unsafe_shutdowns, c->smart.unsafe_shutdowns);
	nvq_u128_add(s->power_on_hours, hours);
	nvq_u128_add(s->media_errors, c->smart.media_errors);
	nvq_u128_add(s->num_err_log_entries, c->err_count);
	s->temp_sensor[0] = t;
	return sizeof(*s);
}

static size_t error_log(struct nvq_emu *c, uint8_t *buf)
{
	struct nvq_error_log *out = (struct nvq_error_log *)buf;
	uint64_t entries = c->p.elpe + 1;
	uint64_t i, n = c->err_count < entries ? c->err_count : entries;

	memset(buf, 0, entries * sizeof(*out));
	/* Newest first. */
	for (i = 0; i < n; i++)
		out[i] = c->errlog[(c->err_count - 1 - i) % entries];
	return entries * sizeof(*out);
}

static size_t fw_log(uint8_t *buf)
{
	struct nvq_fw_slot_log *f = (struct nvq_fw_slot_log *)buf;

	memset(f, 0, sizeof(*f));
	f->afi = 1;
	memcpy(f->frs[0], "1.0     ", 8);
	return sizeof(*f);
}

uint16_t emu_get_log_page(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint8_t lid = sqe->cdw10 & 0xff;
	bool rae = sqe->cdw10 & NVQ_LOG_RAE;
	uint64_t numd =
		((uint64_t)(sqe->cdw11 & 0xffff) << 16 | (sqe->cdw10 >> 16)) +
		1;
	uint64_t len = numd * 4, off = sqe->cdw12 | (uint64_t)sqe->cdw13 << 32;
	uint8_t *buf = c->bounce;
	size_t size;
	uint16_t st;

	req->err_loc = NVQ_ERR_LOC(cdw10);
	/* without extended data, NUMDU and the offset are reserved */
	if (!(c->p.lpa & NVQ_CTRL_LPA_EXT_DATA) && (off || numd > 0x10000)) {
		req->err_loc = off ? NVQ_ERR_LOC(cdw12) : NVQ_ERR_LOC(cdw11);
		return ST_INVALID_FIELD;
	}
	switch (lid) {
	case NVQ_LOG_ERROR:
		size = error_log(c, buf);
		break;
	case NVQ_LOG_SMART:
		req->err_loc = NVQ_ERR_LOC(nsid);
		if (sqe->nsid && sqe->nsid != NVQ_NSID_ALL)
			return ST_INVALID_FIELD; /* no per-namespace SMART */
		size = smart_log(c, buf);
		break;
	case NVQ_LOG_FW_SLOT:
		size = fw_log(buf);
		break;
	case NVQ_LOG_CHANGED_NS: {
		uint32_t *l = (uint32_t *)buf, i;

		memset(buf, 0, 4096);
		for (i = 0; c->ns_changed && i < c->p.nr_ns && i < 1024; i++)
			l[i] = i + 1;
		size = 4096;
		break;
	}
	case EMU_LOG_SANITIZE:
		size = emu_sanitize_log(c, buf);
		break;
	default:
		return EMU_ST_CMD(NVQ_SC_INVALID_LOG_PAGE);
	}
	/* OT (CDW14 bit 23): no log here supports an index offset. */
	req->err_loc = NVQ_ERR_LOC_BIT(NVQ_ERR_LOC(cdw14) + 2, 7);
	if (sqe->cdw14 & (1u << 23))
		return ST_INVALID_FIELD;
	req->err_loc = NVQ_ERR_LOC(cdw12);
	if (off & 3 || off >= size)
		return ST_INVALID_FIELD;
	req->err_loc = NVQ_ERR_LOC(cdw10) + 2;
	if (len > c->max_xfer)
		return ST_INVALID_FIELD;
	if (len > size - off)
		len = size - off;
	st = emu_dma_to_host(c, sqe, buf + off, len);
	if (st)
		return st;
	if (!rae) {
		if (lid == NVQ_LOG_ERROR)
			clear_events(c, NVQ_AER_ERROR);
		else if (lid == NVQ_LOG_SMART)
			clear_events(c, NVQ_AER_SMART);
		else if (lid == NVQ_LOG_CHANGED_NS) {
			c->ns_changed = false;
			clear_events(c, NVQ_AER_NOTICE);
		}
	}
	return 0;
}
