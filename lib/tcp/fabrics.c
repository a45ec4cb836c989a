// SPDX-License-Identifier: MIT
/*
 * The Fabrics commands a host sends on its queues (NVMe-oF 1.1, 3.3 and
 * 6): Connect, Property Get and Set, Disconnect. Each is one synchronous
 * command on a connection (nvq_tcp_conn_sync()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tcp.h"

#define SF_SC(sf) ((sf)&0xff)
#define SF_SCT(sf) (((sf) >> 8) & 0x7)
#define SCT_GENERIC 0
#define SCT_CMD_SPECIFIC 1

static void fabrics_cmd(struct nvq_fabrics_cmd *cmd, uint8_t fctype)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opcode = NVQ_FABRICS_OPC;
	cmd->fctype = fctype;
}

static uint16_t cqe_sf(const struct nvq_cqe *cqe)
{
	return (uint16_t)(cqe->status >> 1);
}

/* The field of Connect a target named in IATTR/IPO. */
static const char *connect_field(bool in_data, uint16_t ipo)
{
	if (in_data) {
		if (ipo < offsetof(struct nvq_connect_data, cntlid))
			return "HOSTID";
		if (ipo < offsetof(struct nvq_connect_data, rsvd))
			return "CNTLID";
		if (ipo >= offsetof(struct nvq_connect_data, subnqn) &&
		    ipo < offsetof(struct nvq_connect_data, hostnqn))
			return "SUBNQN";
		if (ipo >= offsetof(struct nvq_connect_data, hostnqn) &&
		    ipo < offsetof(struct nvq_connect_data, rsvd2))
			return "HOSTNQN";
		return "a reserved field of the data";
	}
	switch (ipo) {
	case offsetof(struct nvq_fabrics_cmd, connect.recfmt):
		return "RECFMT";
	case offsetof(struct nvq_fabrics_cmd, connect.qid):
		return "QID";
	case offsetof(struct nvq_fabrics_cmd, connect.sqsize):
		return "SQSIZE";
	case offsetof(struct nvq_fabrics_cmd, connect.cattr):
		return "CATTR";
	case offsetof(struct nvq_fabrics_cmd, connect.kato):
		return "KATO";
	}
	return "a field of the command";
}

/* The message for a Connect the target refused. */
static int connect_refused(uint16_t qid, const struct nvq_cqe *cqe,
			   const struct nvq_tcp_opts *o)
{
	uint16_t sf = cqe_sf(cqe);

	if (SF_SCT(sf) == SCT_CMD_SPECIFIC) {
		switch (SF_SC(sf)) {
		case NVQ_SC_CONNECT_INVALID_PARAM: {
			bool in_data = (cqe->result >> 16) & 1;
			uint16_t ipo = cqe->result & 0xffff;

			return nvq_err(-EIO,
				       "Connect of queue %u refused: invalid "
				       "parameter %s (%s offset %u)",
				       qid, connect_field(in_data, ipo),
				       in_data ? "data" : "command", ipo);
		}
		case NVQ_SC_CONNECT_INVALID_HOST:
			return nvq_err(
				-EIO,
				"Connect of queue %u refused: host %s is "
				"not allowed to reach %s",
				qid, o->hostnqn, o->subnqn);
		case NVQ_SC_CONNECT_CTRL_BUSY:
			return nvq_err(
				-EIO,
				"Connect of queue %u refused: controller "
				"busy",
				qid);
		case NVQ_SC_CONNECT_INCOMPAT_FMT:
			return nvq_err(-EIO,
				       "Connect of queue %u refused: "
				       "incompatible format (RECFMT 0)",
				       qid);
		case NVQ_SC_CONNECT_RESTART_DISC:
			return nvq_err(-EIO,
				       "Connect of queue %u refused: restart "
				       "discovery",
				       qid);
		case NVQ_SC_AUTH_REQUIRED:
			return nvq_err(-EIO,
				       "Connect of queue %u refused: the "
				       "target requires authentication",
				       qid);
		}
	}
	return nvq_err(-EIO,
		       "Connect of queue %u refused: status %#x (SCT %u SC "
		       "%#x)",
		       qid, sf, SF_SCT(sf), SF_SC(sf));
}

static void copy_nqn(char *dst, const char *src)
{
	size_t n = strnlen(src, NVQ_NQN_FIELD_LEN - 1);

	memset(dst, 0, NVQ_NQN_FIELD_LEN);
	memcpy(dst, src, n);
}

int nvq_tcp_connect(struct nvq_tcp_conn *c, const struct nvq_tcp_opts *o,
		    uint16_t qid, uint32_t sqsize, uint16_t cntlid,
		    uint32_t kato_ms, uint16_t *cntlid_out, uint16_t *status)
{
	uint32_t tmo = o->connect_timeout_ms ? o->connect_timeout_ms : 5000;
	struct nvq_connect_data d;
	struct nvq_fabrics_cmd cmd;
	struct iovec iov = { .iov_base = &d, .iov_len = sizeof(d) };
	struct nvq_tcp_data data = {
		.iov = &iov, .iovcnt = 1, .len = sizeof(d), .write = true
	};
	struct nvq_cqe cqe;
	int rc;

	if (status)
		*status = 0;
	if (!sqsize || sqsize > 65536)
		return nvq_err(-EINVAL, "Connect of queue %u: %u entries", qid,
			       sqsize);
	memset(&d, 0, sizeof(d));
	memcpy(d.hostid, o->hostid, sizeof(d.hostid));
	d.cntlid = cntlid;
	copy_nqn(d.subnqn, o->subnqn);
	copy_nqn(d.hostnqn, o->hostnqn);

	fabrics_cmd(&cmd, NVQ_FCTYPE_CONNECT);
	cmd.connect.recfmt = 0;
	cmd.connect.qid = qid;
	cmd.connect.sqsize = (uint16_t)(sqsize - 1);
	cmd.connect.cattr = 0;
	cmd.connect.kato = qid ? 0 : kato_ms;

	/* In the capsule: a target answers no R2T before Connect. */
	if (nvq_tcp_conn_params(c)->ioccsz < sizeof(d))
		nvq_tcp_conn_set_ioccsz(c, qid ? sizeof(d) : 8192);

	rc = nvq_tcp_conn_sync(c, (const struct nvq_sqe *)&cmd, &data, &cqe,
			       tmo);
	if (rc < 0) {
		char msg[256];

		return nvq_err(rc, "Connect of queue %u: %s", qid,
			       nvq_errmsg_copy(msg, sizeof(msg)));
	}
	if (cqe_sf(&cqe)) {
		if (status)
			*status = cqe_sf(&cqe);
		return connect_refused(qid, &cqe, o);
	}
	if (cntlid_out)
		*cntlid_out = (uint16_t)(cqe.result & 0xffff);
	return 0;
}

static int prop_size(unsigned int size, uint8_t *attrib)
{
	if (size == 4)
		*attrib = NVQ_PROP_SIZE_4;
	else if (size == 8)
		*attrib = NVQ_PROP_SIZE_8;
	else
		return nvq_err(-EINVAL, "property size %u (4 or 8)", size);
	return 0;
}

static int prop_cmd(struct nvq_tcp_conn *c, struct nvq_fabrics_cmd *cmd,
		    const char *what, uint32_t off, struct nvq_cqe *cqe,
		    uint16_t *status, uint32_t timeout_ms)
{
	int rc;

	if (status)
		*status = 0;
	rc = nvq_tcp_conn_sync(c, (const struct nvq_sqe *)cmd, NULL, cqe,
			       timeout_ms);
	if (rc < 0) {
		char msg[256];

		return nvq_err(rc, "%s of %#x: %s", what, off,
			       nvq_errmsg_copy(msg, sizeof(msg)));
	}
	if (cqe_sf(cqe)) {
		if (status)
			*status = cqe_sf(cqe);
		return nvq_err(-EIO, "%s of %#x failed: status %#x", what, off,
			       cqe_sf(cqe));
	}
	return 0;
}

int nvq_tcp_prop_get(struct nvq_tcp_conn *c, uint32_t off, unsigned int size,
		     uint64_t *val, uint16_t *status, uint32_t timeout_ms)
{
	struct nvq_fabrics_cmd cmd;
	struct nvq_cqe cqe;
	uint8_t attrib;
	int rc;

	rc = prop_size(size, &attrib);
	if (rc < 0)
		return rc;
	fabrics_cmd(&cmd, NVQ_FCTYPE_PROP_GET);
	cmd.prop.attrib = attrib;
	cmd.prop.offset = off;
	rc = prop_cmd(c, &cmd, "Property Get", off, &cqe, status, timeout_ms);
	if (rc < 0)
		return rc;
	*val = cqe.result;
	if (size == 8)
		*val |= (uint64_t)cqe.dw1 << 32;
	return 0;
}

int nvq_tcp_prop_set(struct nvq_tcp_conn *c, uint32_t off, unsigned int size,
		     uint64_t val, uint16_t *status, uint32_t timeout_ms)
{
	struct nvq_fabrics_cmd cmd;
	struct nvq_cqe cqe;
	uint8_t attrib;
	int rc;

	rc = prop_size(size, &attrib);
	if (rc < 0)
		return rc;
	if (size == 4 && val > UINT32_MAX)
		return nvq_err(-EINVAL, "Property Set of %#x: %#llx in 4 bytes",
			       off, (unsigned long long)val);
	fabrics_cmd(&cmd, NVQ_FCTYPE_PROP_SET);
	cmd.prop.attrib = attrib;
	cmd.prop.offset = off;
	cmd.prop.value = val;
	return prop_cmd(c, &cmd, "Property Set", off, &cqe, status, timeout_ms);
}

int nvq_tcp_disconnect(struct nvq_tcp_conn *c, uint32_t timeout_ms)
{
	struct nvq_fabrics_cmd cmd;
	struct nvq_cqe cqe;
	int rc;

	fabrics_cmd(&cmd, NVQ_FCTYPE_DISCONNECT);
	cmd.disconnect.recfmt = 0;
	rc = nvq_tcp_conn_sync(c, (const struct nvq_sqe *)&cmd, NULL, &cqe,
			       timeout_ms);
	if (rc < 0) {
		char msg[256];

		return nvq_err(rc, "Disconnect: %s",
			       nvq_errmsg_copy(msg, sizeof(msg)));
	}
	if (cqe_sf(&cqe))
		return nvq_err(-EIO, "Disconnect failed: status %#x",
			       cqe_sf(&cqe));
	return 0;
}
