/* SPDX-License-Identifier: MIT */
/*
 * NVMe over TCP (NVMe/TCP Transport Specification 1.0, NVMe-oF 1.1): the
 * library-internal interface between its parts.
 *
 *   pdu.c      CRC32C, building and checking PDUs, the receive parser
 *   conn.c     one TCP connection carrying one NVMe queue: ICReq/ICResp,
 *              command capsules with in-capsule or R2T-driven data,
 *              C2HData into the host's buffers, CapsuleResp
 *   fabrics.c  Connect, Property Get/Set, Disconnect, Keep Alive
 *   opts.c     the URI: tcp:HOST[:PORT],nqn=...,opt=val
 *   tcp.c      the nvq_transport: a fabrics controller seen through the
 *              PCIe transport's register, ring and interrupt interface
 *   discover.c the discovery controller and its log page (nvq_discover())
 *
 * The wire formats are in include/nvq/spec.h.
 */
#ifndef NVQ_TCP_H
#define NVQ_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "nvq/spec.h"

/* ---- opts.c ------------------------------------------------------- */

/*
 * The options of a tcp: URI, under nvme-cli's names and with its
 * defaults. Every field is set by nvq_tcp_opts_parse().
 */
struct nvq_tcp_opts {
	char host[256]; /* a name, IPv4 or IPv6 ("[::1]" in the URI) */
	char port[16]; /* a service: "4420" by default */
	char subnqn[NVQ_NQN_FIELD_LEN]; /* nqn= (required but for discovery) */
	char hostnqn[NVQ_NQN_FIELD_LEN]; /* hostnqn=, else
					  * /etc/nvme/hostnqn, else one made
					  * from hostid */
	uint8_t hostid[16]; /* hostid= (UUID), else /etc/nvme/hostid, else
			     * derived from the machine id */
	bool hdgst, ddgst; /* hdgst=, ddgst= (0/1, off/on): default off */
	uint32_t nr_io_queues; /* nr_io_queues=: 0 = the library decides */
	uint32_t queue_size; /* queue_size=: I/O queue entries, 128 */
	int reconnect_delay_s; /* reconnect_delay=: 10 */
	int ctrl_loss_tmo_s; /* ctrl_loss_tmo=: 600; -1: retry forever */
	uint32_t kato_s; /* kato= (keep_alive_tmo): 5; 0: no keep-alive */
	uint32_t connect_timeout_ms; /* TCP connect and ICResp: 5000 */
	uint32_t nsid; /* the URI's /NSID: 0 none */
};

/*
 * Parse the part of a tcp: URI after "tcp:" ("HOST[:PORT][,key=val...]").
 * @discovery (a discovery controller): nqn= is optional, NVQ_DISC_NQN by
 * default, and the port defaults to 8009 (NVQ_TCP_DISC_PORT), as nvme-cli
 * does; otherwise nqn= is required and the port defaults to 4420.
 * Returns 0 or -EINVAL with a message (nvq_errmsg()) that names the bad
 * part.
 */
int nvq_tcp_opts_parse(const char *params, bool discovery,
		       struct nvq_tcp_opts *o);

/*
 * Where the host identity defaults come from: hostnqn and hostid files
 * in this directory instead of /etc/nvme (and machine-id in it instead of
 * /etc/machine-id), for tests. docs/tcp.md.
 */
#define NVQ_TCP_ETC_ENV "NVQ_TCP_ETC"

/* ---- discover.c --------------------------------------------------- */

/*
 * The discovery controller is public API (nvq.h): nvq_discover_size()
 * and the page decoder nvq_disc_log_decode_size(), which the nvq tool's
 * --raw-log, the unit test and the fuzz target feed raw pages; both
 * strict about the page (NUMREC at most NVQ_DISC_MAX_RECORDS, RECFMT 0,
 * the fixed string fields never read past).
 */

/* ---- pdu.c -------------------------------------------------------- */

/*
 * CRC32C (Castagnoli), as NVMe/TCP's digests: @crc is the value returned
 * for the bytes before (0 to start), so that a digest over scattered
 * buffers is nvq_crc32c(nvq_crc32c(0, a, la), b, lb). SSE4.2 where the CPU
 * has it.
 */
uint32_t nvq_crc32c(uint32_t crc, const void *buf, size_t len);

/* What ICReq/ICResp settled for one connection. */
struct nvq_tcp_params {
	bool hdgst, ddgst;
	uint32_t cpda; /* H2C data alignment in bytes: (CPDA + 1) * 4 */
	uint32_t maxh2cdata; /* bytes of data per H2CData PDU */
	uint32_t ioccsz; /* bytes of in-capsule data the target takes */
};

/* ---- conn.c ------------------------------------------------------- */

struct nvq_tcp_conn;

/* The data of one command, in the host's buffers. */
struct nvq_tcp_data {
	const struct iovec *iov; /* kept until the command completes */
	unsigned int iovcnt;
	size_t len; /* sum of the iov lengths; 0: no data */
	bool write; /* host to controller */
};

/*
 * A command finished: @ctx is what nvq_tcp_conn_submit() got; @cqe is the
 * CapsuleResp's CQE (its CID is the wire CID, of no use to the caller),
 * or, for a C2HData PDU with the SUCCESS flag, a CQE of status 0 built by
 * the connection. Runs in whichever thread received it.
 */
typedef void (*nvq_tcp_done_fn)(void *arg, void *ctx,
				const struct nvq_cqe *cqe);

/*
 * Connect to @o->host:@o->port within o->connect_timeout_ms, TCP_NODELAY,
 * and exchange ICReq/ICResp with the digests @o asks for (the target
 * must accept them: -EPROTO otherwise). @qid (0 admin) is for messages;
 * @depth commands may be outstanding at once (wire CIDs 0..depth-1).
 * @done/@arg receive the completions. On failure a negative errno and a
 * message saying what failed (name resolution, connect refused, ICResp
 * missing or malformed).
 */
int nvq_tcp_conn_open(const struct nvq_tcp_opts *o, uint16_t qid,
		      uint32_t depth, nvq_tcp_done_fn done, void *arg,
		      struct nvq_tcp_conn **cp);

/*
 * The same over @fd, a connected stream socket (TCP, or a socketpair in
 * tests), which the connection owns from then on: closed on failure too.
 */
int nvq_tcp_conn_open_fd(int fd, const struct nvq_tcp_opts *o, uint16_t qid,
			 uint32_t depth, nvq_tcp_done_fn done, void *arg,
			 struct nvq_tcp_conn **cp);

/* Buffers one command's data may have (struct nvq_tcp_data.iovcnt). */
#define NVQ_TCP_MAX_IOV 256

/* Shut the socket down, close it and free. Outstanding commands are
 * dropped without a callback (nvq_tcp_conn_drain() first to see them). */
void nvq_tcp_conn_close(struct nvq_tcp_conn *c);

/* The socket, for poll(2)/epoll: readable when a PDU arrives. */
int nvq_tcp_conn_fd(const struct nvq_tcp_conn *c);

/* What ICReq/ICResp negotiated (ioccsz: set by nvq_tcp_conn_set_ioccsz,
 * 0 until then: no in-capsule data). */
const struct nvq_tcp_params *nvq_tcp_conn_params(const struct nvq_tcp_conn *c);

/*
 * In-capsule data the controller takes on this queue, in bytes: the admin
 * queue 8192 (NVMe/TCP 1.0, 3.6.1), I/O queues IOCCSZ * 16 - 64 from
 * Identify Controller.
 */
void nvq_tcp_conn_set_ioccsz(struct nvq_tcp_conn *c, uint32_t bytes);

/*
 * Send the capsule for @sqe with @data (NULL: none). The connection picks
 * a free wire CID and writes it and the data pointer (SGL1: in-capsule
 * offset form when a write fits ioccsz, else a Transport SGL Data Block;
 * PSDT 01b) into its copy; @sqe is not changed. A write's data beyond the
 * capsule goes out as H2CData when the target sends R2T. Returns the
 * wire CID (>= 0), -EBUSY when @depth commands are outstanding, -EINVAL
 * for data the transport cannot carry, or the connection's error once it
 * is broken (-ECONNRESET, -EPIPE, -ETIMEDOUT, -EPROTO): then every later
 * call fails the same. Any thread; while the socket cannot take the
 * bytes it also receives, so that neither side waits on the other: the
 * done callbacks of what it received run inside this call (after it let
 * its own locks go; the callback of this very command may run before
 * it returns). A command it failed to send is not outstanding: no
 * callback and no drain for it.
 */
int nvq_tcp_conn_submit(struct nvq_tcp_conn *c, const struct nvq_sqe *sqe,
			const struct nvq_tcp_data *data, void *ctx);

/*
 * The same, for a batch of commands: with @more, the capsule (and its
 * in-capsule data) may wait in the connection to go out with the ones
 * that follow, in one sendmsg(); a call without @more, or
 * nvq_tcp_conn_flush(), sends everything waiting. A caller that passes
 * @more must end the batch with one of those (also after a failed
 * call). A waiting capsule counts as sent: its CID is returned and it is
 * outstanding; should its send fail later, the connection is broken and
 * nvq_tcp_conn_drain() hands it back as any other command in flight.
 * Any send on the connection (another submitter's, an R2T's H2CData)
 * takes the waiting capsules along.
 */
int nvq_tcp_conn_submit_batch(struct nvq_tcp_conn *c, const struct nvq_sqe *sqe,
			      const struct nvq_tcp_data *data, void *ctx,
			      bool more);

/* Send the capsules nvq_tcp_conn_submit_batch() left waiting: 0 (also
 * when there were none) or the connection's error. */
int nvq_tcp_conn_flush(struct nvq_tcp_conn *c);

/*
 * Receive and act on what arrived: C2HData into the command's buffers,
 * R2T answered with H2CData, CapsuleResp (and C2HData with SUCCESS) to
 * the done callback. @timeout_ms 0: until the socket has nothing more;
 * > 0: wait up to that long for at least one completion; -1: no limit.
 * One receiver at a time (others wait for the lock). Returns the
 * completions delivered, or the connection's error: a broken socket, or
 * a target that broke the protocol (a malformed or unexpected PDU, a bad
 * digest, data out of range, C2HTermReq): then an H2CTermReq went out
 * where the specification asks for one, the connection is dead and the
 * message says what the target did.
 */
int nvq_tcp_conn_recv(struct nvq_tcp_conn *c, int timeout_ms);

/* 0 while the connection works, else the negative errno that broke
 * it (what every later call returns). */
int nvq_tcp_conn_error(const struct nvq_tcp_conn *c);

/* Mark the connection broken with @err (keep-alive timeout, the caller's
 * decision); later calls fail with it. */
void nvq_tcp_conn_kill(struct nvq_tcp_conn *c, int err, const char *why);

/*
 * Forget every outstanding command, calling @fn with each one's ctx (for
 * a connection that died: its commands are re-sent on a new one or
 * failed by the caller).
 */
void nvq_tcp_conn_drain(struct nvq_tcp_conn *c,
			void (*fn)(void *arg, void *ctx), void *arg);

/*
 * One command, synchronously: submit, then receive until it completes or
 * @timeout_ms passes (-ETIMEDOUT: the connection is then killed, since the
 * command still owns its CID). Other commands' completions received
 * meanwhile go to the done callback as usual. *@cqe gets the completion.
 * Returns 0 (whatever the NVMe status: see cqe->status) or an errno.
 */
int nvq_tcp_conn_sync(struct nvq_tcp_conn *c, const struct nvq_sqe *sqe,
		      const struct nvq_tcp_data *data, struct nvq_cqe *cqe,
		      uint32_t timeout_ms);

/* Counters, for nvq stats and tests. */
struct nvq_tcp_conn_stats {
	uint64_t pdus_sent, pdus_recv;
	uint64_t bytes_sent, bytes_recv;
	uint64_t r2t, h2c_data, c2h_data, incapsule;
	uint64_t digest_errors;
	uint64_t send_calls, recv_calls; /* sendmsg() and recv[msg]() made
					  * after ICResp */
};
void nvq_tcp_conn_get_stats(const struct nvq_tcp_conn *c,
			    struct nvq_tcp_conn_stats *st);

/* ---- fabrics.c ---------------------------------------------------- */

/*
 * Fabrics Connect on @c for queue @qid with @sqsize entries (written
 * 0's based), @cntlid (FFFFh for the admin queue of a new association;
 * the admin queue's CNTLID for I/O queues) and @kato_ms (admin only).
 * *@cntlid_out gets the controller's CNTLID. A refusal is -EIO with
 * *@status (may be NULL) set and a message with the target's reason
 * (Connect Invalid Parameters: which one, from IATTR/IPO; Invalid Host).
 */
int nvq_tcp_connect(struct nvq_tcp_conn *c, const struct nvq_tcp_opts *o,
		    uint16_t qid, uint32_t sqsize, uint16_t cntlid,
		    uint32_t kato_ms, uint16_t *cntlid_out, uint16_t *status);

/* Property Get / Set of the register at @off (CAP, VS, CC, CSTS ...),
 * @size 4 or 8. -EIO with *@status on an NVMe error. */
int nvq_tcp_prop_get(struct nvq_tcp_conn *c, uint32_t off, unsigned int size,
		     uint64_t *val, uint16_t *status, uint32_t timeout_ms);
int nvq_tcp_prop_set(struct nvq_tcp_conn *c, uint32_t off, unsigned int size,
		     uint64_t val, uint16_t *status, uint32_t timeout_ms);

/* Fabrics Disconnect of an I/O queue (best effort, bounded). */
int nvq_tcp_disconnect(struct nvq_tcp_conn *c, uint32_t timeout_ms);

/* ---- tcp.c -------------------------------------------------------- */

/* The transport constructor for "tcp:" URIs (transport.c). */
struct nvq_transport;
int nvq_tcp_transport_open(const char *params, struct nvq_transport **t);

#endif /* NVQ_TCP_H */
