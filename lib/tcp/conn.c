// SPDX-License-Identifier: MIT
/*
 * One NVMe/TCP connection carrying one NVMe queue (NVMe/TCP 1.0): the
 * ICReq/ICResp exchange, command capsules with in-capsule data or data
 * sent as H2CData when the target asks with R2T, C2HData received
 * straight into the command's buffers, and CapsuleResp.
 *
 * Locks, in the order they are taken (a thread holding one may take the
 * ones after it; it only ever TRIES the ones before it):
 *
 *   recv_lock  the receiver: the receive state machine (c->rx). Held by
 *              nvq_tcp_conn_recv() around one receive pass, never while
 *              waiting in poll(), so that a waiting receiver does not
 *              keep others from receiving.
 *   send_lock  the sender: whole PDUs go out under it, never
 *              interleaved, and c->tx (the iovec and header scratch).
 *   lock       the command table: slots, the free CID list, the queue of
 *              R2Ts to serve and the queue of completions to deliver,
 *              the connection's error. Held for a few stores only; no
 *              I/O and no callback under it.
 *
 * The deadlock a full socket invites: a sender holds send_lock and waits
 * for the socket to take bytes while the target waits for us to read its
 * responses. So a sender that cannot write tries recv_lock and, if it
 * gets it, runs a receive pass before it waits again (wait_writable());
 * whoever holds recv_lock never waits for send_lock, it only tries it
 * (but nvq_tcp_conn_drain(), meant for a dead connection, whose senders
 * fail at once).
 *
 * R2T: the receive pass only records an R2T (in the slot and the R2T
 * queue). It is served - its H2CData sent - by whoever holds send_lock:
 * the receiver after its pass if it gets send_lock, else the thread
 * holding it, which serves the queue before it lets send_lock go and
 * looks at the queue again after (send_unlock()), so that no R2T is
 * left behind by a receiver that found send_lock taken. One R2T per
 * command at a time (MAXR2T 0): it counts as answered just before its
 * last H2CData PDU goes out, since the target may send the next one as
 * soon as those bytes reach it; h2c_busy keeps the buffers in use until
 * the send returns.
 *
 * Completions: the receive pass puts each finished command on the
 * completion queue; the done callbacks run from it in flush(), with no
 * lock held (a callback may submit again), by the thread that received
 * or the submitter that received while it could not send. A command's
 * slot and CID are freed when its callback runs, not before: the queue
 * never holds more than @depth entries. A command completed while its
 * R2T is being served waits for the H2CData to be sent (its buffers are
 * in use until then).
 *
 * Syscalls per I/O: the receiver reads up to RX_BUF bytes at a time and
 * parses the PDUs from its buffer (a short read ends the pass, without a
 * recv() that only says EAGAIN); capsules submitted with @more wait in
 * the send iovec (a batch) and go out together with the next send.
 *
 * Nothing is allocated per command: the slots, the CID list, both queues,
 * the send iovec and the receive buffer are allocated at open.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"
#include "nvq/nvq.h"
#include "pdu.h"
#include "tcp.h"

enum { SLOT_FREE, SLOT_ACTIVE, SLOT_DONE };

struct slot {
	uint8_t state;
	bool write;
	bool incap; /* the data went in the capsule */
	bool sync; /* ctx is a struct sync_wait (or NULL: abandoned) */
	bool r2t_queued; /* an R2T waits, or its last H2CData is not out */
	bool h2c_busy; /* H2CData from the buffers is being sent */
	bool cpl_queued; /* on the completion queue */
	bool c2h_last; /* the C2HData with LAST_PDU came */
	void *ctx;
	const struct iovec *iov;
	unsigned int iovcnt;
	uint32_t len;
	uint32_t c2h_off; /* C2HData received so far (receiver) */
	uint32_t r2t_off, r2t_len; /* the R2T to serve */
	uint16_t ttag;
	struct nvq_cqe cqe;
};

struct sync_wait {
	struct nvq_cqe cqe;
	int done;
};

enum { RX_CH, RX_HDR, RX_DATA, RX_DDGST };

/* The receive state machine: where a partly received PDU stands. */
struct rx {
	int state;
	uint32_t got; /* header or digest bytes so far */
	uint8_t hdr[NVQ_TCP_RX_HDR_MAX + 8] __attribute__((aligned(8)));
	struct nvq_tcp_rx_info info;
	uint32_t data_got;
	uint32_t crc; /* data digest so far */
	uint8_t dd[NVQ_TCP_DIGEST_LEN];
	uint8_t term[NVQ_TCP_TERM_MAX_PLEN];
	/* C2HData: the command's buffers */
	uint16_t cid;
	const struct iovec *iov;
	unsigned int iovcnt;
	uint32_t datao;
};

/* recvmsg() takes the data of a C2HData this many buffers at a time. */
#define RX_IOV 16

/*
 * Receive buffering: one recv() takes up to RX_BUF bytes, from which the
 * PDUs are parsed (dozens of CapsuleResps at a time); C2HData payload
 * found there is copied into the command's buffers. When RX_DIRECT_MIN
 * bytes or more of a C2HData payload are still to come and the buffer is
 * empty, recvmsg() puts them straight into the command's buffers, with
 * the buffer as the last iovec for what follows.
 */
#define RX_BUF (64 * 1024)
#define RX_DIRECT_MIN 4096

/*
 * Send batching (nvq_tcp_conn_submit_batch() with @more): up to TX_BATCH
 * capsules wait in c->tx_iov, each header in its own c->tx_hdr[] entry
 * (the header region and the data digest after it), and go out with one
 * sendmsg().
 */
#define TX_BATCH 32
#define TX_HDR_SZ (NVQ_TCP_RX_HDR_MAX + 8)
#define TX_IOV (NVQ_TCP_MAX_IOV + 2)

struct nvq_tcp_conn {
	int fd;
	uint16_t qid;
	uint32_t depth;
	nvq_tcp_done_fn done;
	void *done_arg;
	struct nvq_tcp_params params;

	pthread_mutex_t recv_lock;
	pthread_mutex_t send_lock;
	pthread_mutex_t lock;

	/* under lock */
	int err;
	char errmsg[384];
	struct slot *slots;
	uint16_t *free_cids;
	uint32_t nr_free;
	uint16_t *r2tq, *cplq; /* rings of depth entries */
	uint32_t r2t_head, r2t_count;
	uint32_t cpl_head, cpl_count;

	/* under send_lock: tx_iov[0..tx_cnt) holds tx_pdus whole capsules
	 * not sent yet (a batch), or is the scratch of one PDU */
	struct iovec tx_iov[TX_IOV];
	unsigned int tx_cnt, tx_pdus;
	uint8_t tx_hdr[TX_BATCH][TX_HDR_SZ] __attribute__((aligned(8)));

	/* under recv_lock: rxbuf[rb_head..rb_tail) received, not parsed */
	struct rx rx;
	struct iovec rx_iov[RX_IOV + 1];
	uint8_t *rxbuf;
	uint32_t rb_head, rb_tail;

	struct nvq_tcp_conn_stats st; /* atomic adds */
};

#define STAT_ADD(c, f, v) __atomic_fetch_add(&(c)->st.f, (v), __ATOMIC_RELAXED)

static uint64_t deadline_ns(int timeout_ms)
{
	if (timeout_ms < 0)
		return UINT64_MAX;
	return nvq_now_ns() + (uint64_t)timeout_ms * 1000000ull;
}

/* Milliseconds left to @dl for poll(): -1 no limit, 0 passed. */
static int ms_left(uint64_t dl)
{
	uint64_t now;

	if (dl == UINT64_MAX)
		return -1;
	now = nvq_now_ns();
	if (now >= dl)
		return 0;
	return (int)MIN((dl - now + 999999) / 1000000, (uint64_t)INT32_MAX);
}

/* ---- errors ------------------------------------------------------- */

int nvq_tcp_conn_error(const struct nvq_tcp_conn *c)
{
	return __atomic_load_n(&c->err, __ATOMIC_ACQUIRE);
}

/* The sticky error, with its message for this thread. */
static int conn_err(struct nvq_tcp_conn *c)
{
	char msg[sizeof(c->errmsg)];
	int err;

	pthread_mutex_lock(&c->lock);
	err = c->err;
	memcpy(msg, c->errmsg, sizeof(msg));
	pthread_mutex_unlock(&c->lock);
	return err ? nvq_err(err, "%s", msg) : 0;
}

/*
 * Break the connection with @err and this thread's message (the first
 * error sticks), shut the socket down so that waiters wake, and return
 * the sticky error. @term (may be NULL): an H2CTermReq to send first.
 */
static int conn_fail(struct nvq_tcp_conn *c, int err, const void *term,
		     size_t term_len)
{
	bool first = false;

	pthread_mutex_lock(&c->lock);
	if (!c->err) {
		snprintf(c->errmsg, sizeof(c->errmsg), "tcp queue %u: %s",
			 c->qid, nvq_errmsg());
		__atomic_store_n(&c->err, err, __ATOMIC_RELEASE);
		first = true;
	}
	pthread_mutex_unlock(&c->lock);
	if (first) {
		/* Best effort, and only between PDUs: a sender in the
		 * middle of one holds send_lock. */
		if (term && !pthread_mutex_trylock(&c->send_lock)) {
			ssize_t n = send(c->fd, term, term_len,
					 MSG_DONTWAIT | MSG_NOSIGNAL);

			if (n > 0) {
				STAT_ADD(c, pdus_sent, 1);
				STAT_ADD(c, bytes_sent, (uint64_t)n);
			}
			pthread_mutex_unlock(&c->send_lock);
		}
		shutdown(c->fd, SHUT_RDWR);
	}
	return conn_err(c);
}

/* A target PDU broke the protocol (the message is set): H2CTermReq with
 * the FES in @info quoting @hdr, then the connection dies. */
static int proto_error(struct nvq_tcp_conn *c,
		       const struct nvq_tcp_rx_info *info, const void *hdr,
		       size_t hdr_len)
{
	uint8_t term[NVQ_TCP_TERM_MAX_PLEN];
	size_t n = 0;

	if (info->fes)
		n = nvq_tcp_build_h2c_term(term, info->fes, info->fei, hdr,
					   hdr_len);
	return conn_fail(c, -EPROTO, n ? term : NULL, n);
}

void nvq_tcp_conn_kill(struct nvq_tcp_conn *c, int err, const char *why)
{
	if (err > 0)
		err = -err;
	if (!err)
		err = -ECONNABORTED;
	nvq_err(err, "%s", why ? why : "connection killed");
	conn_fail(c, err, NULL, 0);
}

/* ---- iovec helpers ------------------------------------------------ */

/* The part [@off, @off + @len) of @iov in at most @max entries of @out;
 * returns the entries used (fewer bytes than @len when @max ran out). */
static unsigned int iov_sub(const struct iovec *iov, unsigned int cnt,
			    size_t off, size_t len, struct iovec *out,
			    unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < cnt && len && n < max; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n].iov_len = MIN(l - off, len);
		len -= out[n].iov_len;
		off = 0;
		n++;
	}
	return n;
}

/* CRC32C over the first @len bytes of @iov. */
static uint32_t iov_crc(uint32_t crc, const struct iovec *iov, unsigned int cnt,
			size_t len)
{
	unsigned int i;

	for (i = 0; i < cnt && len; i++) {
		size_t l = MIN(iov[i].iov_len, len);

		crc = nvq_crc32c(crc, iov[i].iov_base, l);
		len -= l;
	}
	return crc;
}

/* ---- completions -------------------------------------------------- */

static void cid_free_locked(struct nvq_tcp_conn *c, uint16_t cid)
{
	c->slots[cid].state = SLOT_FREE;
	c->slots[cid].ctx = NULL;
	c->free_cids[c->nr_free++] = cid;
}

/* Under lock: queue @cid for flush() once it is done and no R2T uses
 * its buffers any more; once only. */
static void cpl_queue_locked(struct nvq_tcp_conn *c, uint16_t cid)
{
	struct slot *s = &c->slots[cid];

	if (s->state != SLOT_DONE || s->r2t_queued || s->h2c_busy ||
	    s->cpl_queued)
		return;
	s->cpl_queued = true;
	c->cplq[(c->cpl_head + c->cpl_count++) % c->depth] = cid;
}

/* Under lock: @cid finished with @cqe; queued for flush() unless its
 * buffers are still in use by an R2T (then the R2T's server queues it). */
static void complete_locked(struct nvq_tcp_conn *c, uint16_t cid,
			    const struct nvq_cqe *cqe)
{
	struct slot *s = &c->slots[cid];

	s->cqe = *cqe;
	s->state = SLOT_DONE;
	cpl_queue_locked(c, cid);
}

/* Run the done callbacks of the completed commands (no lock held).
 * Returns how many. */
static int flush(struct nvq_tcp_conn *c)
{
	int n = 0;

	for (;;) {
		struct nvq_cqe cqe;
		void *ctx;
		uint16_t cid;
		struct slot *s;

		pthread_mutex_lock(&c->lock);
		if (!c->cpl_count) {
			pthread_mutex_unlock(&c->lock);
			return n;
		}
		cid = c->cplq[c->cpl_head];
		c->cpl_head = (c->cpl_head + 1) % c->depth;
		c->cpl_count--;
		s = &c->slots[cid];
		if (s->state != SLOT_DONE) {
			/* Forgotten by nvq_tcp_conn_drain() meanwhile. */
			pthread_mutex_unlock(&c->lock);
			continue;
		}
		cqe = s->cqe;
		ctx = s->ctx;
		if (s->sync) {
			/* The waiter's frame: written under lock, so that a
			 * waiter that gave up (ctx NULL) is never touched. */
			struct sync_wait *w = ctx;

			if (w) {
				w->cqe = cqe;
				__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
			}
			cid_free_locked(c, cid);
			pthread_mutex_unlock(&c->lock);
			n++;
			continue;
		}
		cid_free_locked(c, cid);
		pthread_mutex_unlock(&c->lock);
		c->done(c->done_arg, ctx, &cqe);
		n++;
	}
}

/* ---- sending ------------------------------------------------------ */

static int rx_pass(struct nvq_tcp_conn *c);

/*
 * The socket cannot take more: receive meanwhile if nobody else does
 * (@have_recv: this thread holds recv_lock), then wait until it can.
 */
static int wait_writable(struct nvq_tcp_conn *c, bool have_recv)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	bool got = have_recv || !pthread_mutex_trylock(&c->recv_lock);
	int rc = 0;

	if (got) {
		rc = rx_pass(c);
		if (!have_recv)
			pthread_mutex_unlock(&c->recv_lock);
		if (rc < 0)
			return rc;
		pfd.events |= POLLIN;
	}
	/* Without recv_lock: look again soon, the receiver may be gone. */
	rc = poll(&pfd, 1, got ? 100 : 10);
	if (rc < 0 && errno != EINTR)
		return conn_fail(c,
				 nvq_err(-errno, "poll: %s", strerror(errno)),
				 NULL, 0);
	return 0;
}

/*
 * Write all of c->tx_iov[0..@cnt) (send_lock held); the entries are
 * consumed.
 */
static int send_iov(struct nvq_tcp_conn *c, unsigned int cnt, bool have_recv)
{
	struct iovec *iov = c->tx_iov;

	while (cnt) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = cnt };
		ssize_t n;
		int rc;

		if (nvq_tcp_conn_error(c))
			return conn_err(c);
		n = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		STAT_ADD(c, send_calls, 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				rc = wait_writable(c, have_recv);
				if (rc < 0)
					return rc;
				continue;
			}
			rc = -errno;
			if (nvq_tcp_conn_error(c))
				return conn_err(c);
			nvq_err(rc, "send failed: %s", strerror(-rc));
			return conn_fail(c, rc, NULL, 0);
		}
		STAT_ADD(c, bytes_sent, (uint64_t)n);
		while (cnt && (size_t)n >= iov->iov_len) {
			n -= iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (uint8_t *)iov->iov_base + n;
			iov->iov_len -= n;
		}
	}
	return 0;
}

/* Send the batched capsules, if any (send_lock held). On failure the
 * connection is broken and the batch dropped. */
static int tx_flush(struct nvq_tcp_conn *c, bool have_recv)
{
	unsigned int pdus = c->tx_pdus;
	int rc;

	if (!c->tx_cnt)
		return 0;
	rc = send_iov(c, c->tx_cnt, have_recv);
	c->tx_cnt = 0;
	c->tx_pdus = 0;
	if (rc < 0)
		return rc;
	STAT_ADD(c, pdus_sent, pdus);
	return 0;
}

/* Send the H2CData PDUs for the R2T of @cid (send_lock held). */
static int send_h2c(struct nvq_tcp_conn *c, const struct slot *s, uint16_t cid,
		    bool have_recv)
{
	uint32_t off = s->r2t_off, end = s->r2t_off + s->r2t_len;
	uint32_t max = c->params.maxh2cdata;
	bool dd = c->params.ddgst;
	uint8_t *hdr = c->tx_hdr[0];
	int rc;

	/* Batched capsules first: their headers share tx_hdr. */
	rc = tx_flush(c, have_recv);
	if (rc < 0)
		return rc;
	while (off < end) {
		uint32_t l = MIN(end - off, max);
		size_t hl = nvq_tcp_build_h2c_data(
			hdr, &c->params, cid, s->ttag, off, l, off + l == end);
		uint32_t crc;
		unsigned int n;

		c->tx_iov[0].iov_base = hdr;
		c->tx_iov[0].iov_len = hl;
		n = 1 + iov_sub(s->iov, s->iovcnt, off, l, c->tx_iov + 1,
				NVQ_TCP_MAX_IOV);
		if (dd) {
			crc = iov_crc(0, c->tx_iov + 1, n - 1, l);
			memcpy(hdr + hl, &crc, sizeof(crc));
			c->tx_iov[n].iov_base = hdr + hl;
			c->tx_iov[n].iov_len = NVQ_TCP_DIGEST_LEN;
			n++;
		}
		if (off + l == end) {
			/* The target may send the command's next R2T as soon
			 * as these bytes reach it, maybe before send_iov()
			 * returns: from here on that is no second R2T. */
			pthread_mutex_lock(&c->lock);
			c->slots[cid].r2t_queued = false;
			pthread_mutex_unlock(&c->lock);
		}
		rc = send_iov(c, n, have_recv);
		if (rc < 0)
			return rc;
		STAT_ADD(c, pdus_sent, 1);
		STAT_ADD(c, h2c_data, 1);
		off += l;
	}
	return 0;
}

/* Serve the queued R2Ts (send_lock held). */
static void serve_r2ts(struct nvq_tcp_conn *c, bool have_recv)
{
	for (;;) {
		struct slot s;
		uint16_t cid;
		bool live;
		int rc = -ECANCELED;

		pthread_mutex_lock(&c->lock);
		if (!c->r2t_count) {
			pthread_mutex_unlock(&c->lock);
			return;
		}
		cid = c->r2tq[c->r2t_head];
		c->r2t_head = (c->r2t_head + 1) % c->depth;
		c->r2t_count--;
		s = c->slots[cid];
		live = s.state == SLOT_ACTIVE && !c->err;
		c->slots[cid].h2c_busy = true;
		pthread_mutex_unlock(&c->lock);

		/* A command the target completed already needs no data. */
		if (live)
			rc = send_h2c(c, &s, cid, have_recv);

		pthread_mutex_lock(&c->lock);
		c->slots[cid].h2c_busy = false;
		/* Not served, or the connection broke: no more data goes
		 * out for it (else a next R2T may be queued already). */
		if (rc < 0)
			c->slots[cid].r2t_queued = false;
		/* A completion that waited for the buffers. */
		cpl_queue_locked(c, cid);
		pthread_mutex_unlock(&c->lock);
	}
}

/* Let send_lock go, serving R2Ts first, and take it back if an R2T came
 * in meanwhile (its receiver found send_lock taken). */
static void send_unlock(struct nvq_tcp_conn *c, bool have_recv)
{
	for (;;) {
		bool more;

		serve_r2ts(c, have_recv);
		pthread_mutex_unlock(&c->send_lock);
		pthread_mutex_lock(&c->lock);
		more = c->r2t_count && !c->err;
		pthread_mutex_unlock(&c->lock);
		if (!more || pthread_mutex_trylock(&c->send_lock))
			return;
	}
}

/* ---- receiving ---------------------------------------------------- */

/* Under nothing: the slot @cid as the receiver may use it, or NULL. */
static int rx_bad_cid(struct nvq_tcp_conn *c, struct nvq_tcp_rx_info *info,
		      uint32_t fei, uint16_t cid)
{
	info->fes = NVQ_TCP_FES_INVALID_HDR;
	info->fei = fei;
	nvq_err(-EPROTO,
		"the target sent a %s for command %u, which is not outstanding",
		nvq_tcp_pdu_name(info->type), cid);
	return proto_error(c, info, c->rx.hdr, info->hdr_len);
}

static int rx_rsp(struct nvq_tcp_conn *c)
{
	struct nvq_tcp_rsp_pdu *p = (void *)c->rx.hdr;
	uint16_t cid = p->cqe.cid;

	pthread_mutex_lock(&c->lock);
	if (cid >= c->depth || c->slots[cid].state != SLOT_ACTIVE) {
		pthread_mutex_unlock(&c->lock);
		return rx_bad_cid(c, &c->rx.info,
				  offsetof(struct nvq_tcp_rsp_pdu, cqe.cid),
				  cid);
	}
	complete_locked(c, cid, &p->cqe);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int rx_r2t(struct nvq_tcp_conn *c)
{
	struct nvq_tcp_r2t_pdu *p = (void *)c->rx.hdr;
	struct nvq_tcp_rx_info *info = &c->rx.info;
	uint16_t cid = p->cccid;
	struct slot *s;

	STAT_ADD(c, r2t, 1);
	pthread_mutex_lock(&c->lock);
	if (cid >= c->depth || c->slots[cid].state != SLOT_ACTIVE) {
		pthread_mutex_unlock(&c->lock);
		return rx_bad_cid(c, info,
				  offsetof(struct nvq_tcp_r2t_pdu, cccid), cid);
	}
	s = &c->slots[cid];
	if (!s->write || s->incap) {
		pthread_mutex_unlock(&c->lock);
		info->fes = NVQ_TCP_FES_PDU_SEQ;
		nvq_err(-EPROTO,
			"the target sent an R2T for command %u, which has %s",
			cid,
			s->write ? "its data in the capsule" :
				   "no data to send");
		return proto_error(c, info, c->rx.hdr, info->hdr_len);
	}
	if (s->r2t_queued) {
		pthread_mutex_unlock(&c->lock);
		info->fes = NVQ_TCP_FES_LIMIT;
		nvq_err(-EPROTO,
			"the target sent a second R2T for command %u before "
			"the first was served (MAXR2T is 1)",
			cid);
		return proto_error(c, info, c->rx.hdr, info->hdr_len);
	}
	if ((uint64_t)p->r2to + p->r2tl > s->len) {
		uint32_t len = s->len;

		pthread_mutex_unlock(&c->lock);
		info->fes = NVQ_TCP_FES_DATA_RANGE;
		nvq_err(-EPROTO,
			"the target sent an R2T for bytes %u..%llu of command "
			"%u, which has %u",
			p->r2to, (unsigned long long)p->r2to + p->r2tl, cid,
			len);
		return proto_error(c, info, c->rx.hdr, info->hdr_len);
	}
	s->r2t_off = p->r2to;
	s->r2t_len = p->r2tl;
	s->ttag = p->ttag;
	s->r2t_queued = true;
	c->r2tq[(c->r2t_head + c->r2t_count++) % c->depth] = cid;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* A C2HData header passed: check it against its command and set up the
 * data's destination. */
static int rx_c2h_start(struct nvq_tcp_conn *c)
{
	struct nvq_tcp_data_pdu *p = (void *)c->rx.hdr;
	struct nvq_tcp_rx_info *info = &c->rx.info;
	uint16_t cid = p->cccid;
	struct slot *s;

	pthread_mutex_lock(&c->lock);
	if (cid >= c->depth || c->slots[cid].state != SLOT_ACTIVE) {
		pthread_mutex_unlock(&c->lock);
		return rx_bad_cid(
			c, info, offsetof(struct nvq_tcp_data_pdu, cccid), cid);
	}
	s = &c->slots[cid];
	if (s->c2h_last) {
		pthread_mutex_unlock(&c->lock);
		info->fes = NVQ_TCP_FES_PDU_SEQ;
		nvq_err(-EPROTO,
			"the target sent C2HData for command %u after its "
			"LAST_PDU",
			cid);
		return proto_error(c, info, c->rx.hdr, info->hdr_len);
	}
	if (s->write || !s->len) {
		pthread_mutex_unlock(&c->lock);
		info->fes = NVQ_TCP_FES_PDU_SEQ;
		nvq_err(-EPROTO,
			"the target sent C2HData for command %u, which reads "
			"no data",
			cid);
		return proto_error(c, info, c->rx.hdr, info->hdr_len);
	}
	if ((uint64_t)p->datao + p->datal > s->len || p->datao != s->c2h_off) {
		uint32_t len = s->len, exp = s->c2h_off;

		pthread_mutex_unlock(&c->lock);
		info->fes = NVQ_TCP_FES_DATA_RANGE;
		nvq_err(-EPROTO,
			"the target sent C2HData for bytes %u..%llu of command "
			"%u, which reads %u and had %u so far (data in order)",
			p->datao, (unsigned long long)p->datao + p->datal, cid,
			len, exp);
		return proto_error(c, info, c->rx.hdr, info->hdr_len);
	}
	c->rx.cid = cid;
	c->rx.iov = s->iov;
	c->rx.iovcnt = s->iovcnt;
	c->rx.datao = p->datao;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int rx_c2h_end(struct nvq_tcp_conn *c)
{
	struct nvq_tcp_data_pdu *p = (void *)c->rx.hdr;
	struct nvq_tcp_rx_info *info = &c->rx.info;
	struct slot *s;

	STAT_ADD(c, c2h_data, 1);
	if (info->ddgst) {
		uint32_t got;

		memcpy(&got, c->rx.dd, sizeof(got));
		if (got != c->rx.crc) {
			STAT_ADD(c, digest_errors, 1);
			/* No FES names data digests: 03h, the digest one. */
			info->fes = NVQ_TCP_FES_HDGST;
			nvq_err(-EPROTO,
				"the target sent C2HData for command %u with a "
				"bad data digest (%#x, computed %#x)",
				c->rx.cid, got, c->rx.crc);
			return proto_error(c, info, c->rx.hdr, info->hdr_len);
		}
	}
	pthread_mutex_lock(&c->lock);
	s = &c->slots[c->rx.cid];
	/* Not changed since rx_c2h_start(): only the receiver completes. */
	s->c2h_off += p->datal;
	if (p->hdr.flags & NVQ_TCP_F_DATA_LAST)
		s->c2h_last = true;
	if (p->hdr.flags & NVQ_TCP_F_DATA_SUCCESS) {
		struct nvq_cqe cqe = { 0 };

		if (s->c2h_off != s->len) {
			uint32_t len = s->len, got = s->c2h_off;

			pthread_mutex_unlock(&c->lock);
			info->fes = NVQ_TCP_FES_PDU_SEQ;
			nvq_err(-EPROTO,
				"the target sent SUCCESS for command %u after "
				"%u of its %u bytes",
				c->rx.cid, got, len);
			return proto_error(c, info, c->rx.hdr, info->hdr_len);
		}
		cqe.cid = c->rx.cid;
		cqe.sq_id = c->qid;
		complete_locked(c, c->rx.cid, &cqe);
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int rx_term(struct nvq_tcp_conn *c)
{
	struct nvq_tcp_term_pdu *t = (void *)c->rx.hdr;
	uint32_t fei;

	memcpy(&fei, t->fei, sizeof(fei));
	nvq_err(-EPROTO,
		"the target ended the connection with C2HTermReq: FES %#x "
		"(%s), FEI %#x",
		t->fes, nvq_tcp_fes_name(t->fes), fei);
	return conn_fail(c, -EPROTO, NULL, 0);
}

/* The PDU's header is in: check it and decide what comes next. */
static int rx_hdr_done(struct nvq_tcp_conn *c)
{
	struct rx *r = &c->rx;
	int rc;

	rc = nvq_tcp_check_psh(r->hdr, &c->params, &r->info);
	if (rc < 0) {
		if (r->info.fes == NVQ_TCP_FES_HDGST)
			STAT_ADD(c, digest_errors, 1);
		return proto_error(c, &r->info, r->hdr, r->info.hdr_len);
	}
	r->got = 0;
	r->data_got = 0;
	r->crc = 0;
	switch (r->info.type) {
	case NVQ_TCP_RSP:
		STAT_ADD(c, pdus_recv, 1);
		r->state = RX_CH;
		return rx_rsp(c);
	case NVQ_TCP_R2T:
		STAT_ADD(c, pdus_recv, 1);
		r->state = RX_CH;
		return rx_r2t(c);
	case NVQ_TCP_C2H_DATA:
		rc = rx_c2h_start(c);
		if (rc < 0)
			return rc;
		r->state = RX_DATA;
		return 0;
	case NVQ_TCP_C2H_TERM:
		if (r->info.data_len) {
			r->state = RX_DATA;
			return 0;
		}
		STAT_ADD(c, pdus_recv, 1);
		return rx_term(c);
	}
	/* ICResp: the checker lets it through only before ICResp. */
	r->info.fes = NVQ_TCP_FES_PDU_SEQ;
	nvq_err(-EPROTO, "the target sent an unexpected %s",
		nvq_tcp_pdu_name(r->info.type));
	return proto_error(c, &r->info, r->hdr, r->info.hdr_len);
}

/* The PDU's data (and digest) are in. */
static int rx_pdu_done(struct nvq_tcp_conn *c)
{
	struct rx *r = &c->rx;

	STAT_ADD(c, pdus_recv, 1);
	r->state = RX_CH;
	r->got = 0;
	if (r->info.type == NVQ_TCP_C2H_TERM)
		return rx_term(c);
	return rx_c2h_end(c);
}

/* Bytes in: advance the state machine by @n. */
static int rx_advance(struct nvq_tcp_conn *c, size_t n)
{
	struct rx *r = &c->rx;
	int rc;

	switch (r->state) {
	case RX_CH:
		r->got += n;
		if (r->got < sizeof(struct nvq_tcp_hdr))
			return 0;
		rc = nvq_tcp_check_ch((void *)r->hdr, &c->params, false,
				      &r->info);
		if (rc < 0)
			return proto_error(c, &r->info, r->hdr, r->got);
		r->state = RX_HDR;
		return 0;
	case RX_HDR:
		r->got += n;
		if (r->got < r->info.hdr_len)
			return 0;
		return rx_hdr_done(c);
	case RX_DATA:
		r->data_got += n;
		if (r->data_got < r->info.data_len)
			return 0;
		if (r->info.ddgst) {
			r->state = RX_DDGST;
			r->got = 0;
			return 0;
		}
		return rx_pdu_done(c);
	case RX_DDGST:
		r->got += n;
		if (r->got < NVQ_TCP_DIGEST_LEN)
			return 0;
		return rx_pdu_done(c);
	}
	return 0;
}

/* Where the bytes of the current state go, other than C2HData payload:
 * the header, a C2HTermReq's quoted header or the data digest. */
static uint8_t *rx_dst(struct rx *r, size_t *want)
{
	switch (r->state) {
	case RX_CH:
		*want = sizeof(struct nvq_tcp_hdr) - r->got;
		return r->hdr + r->got;
	case RX_HDR:
		*want = r->info.hdr_len - r->got;
		return r->hdr + r->got;
	case RX_DATA: /* C2HTermReq: the quoted header */
		*want = r->info.data_len - r->data_got;
		return r->term + r->data_got;
	default:
		*want = NVQ_TCP_DIGEST_LEN - r->got;
		return r->dd + r->got;
	}
}

static bool rx_in_c2h_data(const struct rx *r)
{
	return r->state == RX_DATA && r->info.type == NVQ_TCP_C2H_DATA;
}

/*
 * Parse what the receive buffer holds (recv_lock held): headers copied
 * into c->rx, C2HData payload into the command's buffers, every PDU
 * checked as it completes. Leaves the buffer empty, or returns the
 * connection's error.
 */
static int rx_consume(struct nvq_tcp_conn *c)
{
	struct rx *r = &c->rx;

	while (c->rb_head < c->rb_tail) {
		const uint8_t *src = c->rxbuf + c->rb_head;
		size_t avail = c->rb_tail - c->rb_head, n = 0, want;
		int rc;

		if (nvq_tcp_conn_error(c))
			return conn_err(c);
		if (rx_in_c2h_data(r)) {
			unsigned int k, i;

			want = MIN(avail, r->info.data_len - r->data_got);
			k = iov_sub(r->iov, r->iovcnt, r->datao + r->data_got,
				    want, c->rx_iov, RX_IOV);
			for (i = 0; i < k; i++) {
				memcpy(c->rx_iov[i].iov_base, src + n,
				       c->rx_iov[i].iov_len);
				n += c->rx_iov[i].iov_len;
			}
			if (!n && want) {
				/* Cannot be: rx_c2h_start() checked the range
				 * against the buffers. Never spin on it. */
				nvq_err(-EPROTO,
					"C2HData for command %u: no buffer for "
					"its data",
					r->cid);
				return conn_fail(c, -EPROTO, NULL, 0);
			}
			if (r->info.ddgst)
				r->crc = nvq_crc32c(r->crc, src, n);
		} else {
			uint8_t *dst = rx_dst(r, &want);

			n = MIN(avail, want);
			memcpy(dst, src, n);
		}
		c->rb_head += (uint32_t)n;
		rc = rx_advance(c, n);
		if (rc < 0)
			return rc;
	}
	c->rb_head = 0;
	c->rb_tail = 0;
	return 0;
}

/*
 * Receive what the socket has, without waiting (recv_lock held): one
 * recv() into the receive buffer (or recvmsg() of a large C2HData
 * payload straight into its buffers, the receive buffer after them),
 * parsed, again until a read comes back short (the socket had no more).
 * Returns 0 when it has nothing more, or the connection's error.
 */
static int rx_pass(struct nvq_tcp_conn *c)
{
	struct rx *r = &c->rx;

	for (;;) {
		size_t cap, direct = 0;
		ssize_t n;
		int rc;

		rc = rx_consume(c);
		if (rc < 0)
			return rc;
		if (nvq_tcp_conn_error(c))
			return conn_err(c);
		if (rx_in_c2h_data(r) &&
		    r->info.data_len - r->data_got >= RX_DIRECT_MIN) {
			struct msghdr m = { .msg_iov = c->rx_iov };
			unsigned int k, i;

			k = iov_sub(r->iov, r->iovcnt, r->datao + r->data_got,
				    r->info.data_len - r->data_got, c->rx_iov,
				    RX_IOV);
			for (i = 0; i < k; i++)
				direct += c->rx_iov[i].iov_len;
			c->rx_iov[k].iov_base = c->rxbuf;
			c->rx_iov[k].iov_len = RX_BUF;
			m.msg_iovlen = k + 1;
			cap = direct + RX_BUF;
			n = recvmsg(c->fd, &m, MSG_DONTWAIT);
			if (n > 0 && r->info.ddgst)
				r->crc = iov_crc(r->crc, c->rx_iov, k,
						 MIN((size_t)n, direct));
		} else {
			cap = RX_BUF;
			n = recv(c->fd, c->rxbuf, RX_BUF, MSG_DONTWAIT);
		}
		STAT_ADD(c, recv_calls, 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			rc = -errno;
			if (nvq_tcp_conn_error(c))
				return conn_err(c);
			nvq_err(rc, "receive failed: %s", strerror(-rc));
			return conn_fail(c, rc, NULL, 0);
		}
		if (n == 0) {
			if (nvq_tcp_conn_error(c))
				return conn_err(c);
			if (r->state == RX_CH && !r->got)
				nvq_err(-ECONNRESET,
					"the target closed the connection");
			else
				nvq_err(-ECONNRESET,
					"the target closed the connection in "
					"the middle of a %s",
					nvq_tcp_pdu_name(r->hdr[0]));
			return conn_fail(c, -ECONNRESET, NULL, 0);
		}
		STAT_ADD(c, bytes_recv, (uint64_t)n);
		if (direct) {
			size_t d = MIN((size_t)n, direct);

			c->rb_tail = (uint32_t)((size_t)n - d);
			rc = rx_advance(c, d);
			if (rc < 0)
				return rc;
		} else {
			c->rb_tail = (uint32_t)n;
		}
		if ((size_t)n < cap) {
			/* A short read: the socket is empty for now; no
			 * recv() just to hear EAGAIN. */
			return rx_consume(c);
		}
	}
}

/* One receive pass, R2Ts served, completions delivered. @wait_lock:
 * wait for recv_lock (else skip the pass when another thread holds
 * it). Returns completions delivered or the error. */
static int recv_step(struct nvq_tcp_conn *c, bool wait_lock)
{
	int rc = 0, n;

	if (wait_lock)
		pthread_mutex_lock(&c->recv_lock);
	else if (pthread_mutex_trylock(&c->recv_lock))
		return flush(c);
	rc = rx_pass(c);
	pthread_mutex_unlock(&c->recv_lock);
	if (!rc && !pthread_mutex_trylock(&c->send_lock))
		send_unlock(c, false);
	n = flush(c);
	return rc < 0 ? rc : n;
}

int nvq_tcp_conn_recv(struct nvq_tcp_conn *c, int timeout_ms)
{
	uint64_t dl = deadline_ns(timeout_ms);
	int total = 0;

	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int n = recv_step(c, true), left;

		if (n < 0)
			return n;
		total += n;
		if (!timeout_ms || total)
			return total;
		left = ms_left(dl);
		if (!left)
			return 0;
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return conn_fail(
				c, nvq_err(-errno, "poll: %s", strerror(errno)),
				NULL, 0);
	}
}

/* ---- submitting --------------------------------------------------- */

static int submit(struct nvq_tcp_conn *c, const struct nvq_sqe *sqe,
		  const struct nvq_tcp_data *data, void *ctx, bool sync,
		  bool more)
{
	struct nvq_sgl_desc *sgl;
	size_t len = 0, hl;
	unsigned int i, n;
	struct slot *s;
	uint32_t crc = 0, incap = 0;
	uint16_t cid;
	int rc;

	if (nvq_tcp_conn_error(c))
		return conn_err(c);
	if (data && data->len) {
		if (!data->iov || !data->iovcnt ||
		    data->iovcnt > NVQ_TCP_MAX_IOV)
			return nvq_err(
				-EINVAL,
				"tcp queue %u: %u data buffers (1 to %u)",
				c->qid, data->iovcnt, NVQ_TCP_MAX_IOV);
		for (i = 0; i < data->iovcnt; i++)
			len += data->iov[i].iov_len;
		if (len != data->len || len > UINT32_MAX)
			return nvq_err(-EINVAL,
				       "tcp queue %u: data of %zu bytes in "
				       "buffers of %zu",
				       c->qid, data->len, len);
		if (data->write && len <= READ_ONCE(c->params.ioccsz)) {
			incap = (uint32_t)len;
			if (c->params.ddgst)
				crc = iov_crc(0, data->iov, data->iovcnt, len);
		}
	}

	pthread_mutex_lock(&c->lock);
	if (c->err) {
		pthread_mutex_unlock(&c->lock);
		return conn_err(c);
	}
	if (!c->nr_free) {
		pthread_mutex_unlock(&c->lock);
		return nvq_err(-EBUSY,
			       "tcp queue %u: %u commands outstanding already",
			       c->qid, c->depth);
	}
	cid = c->free_cids[--c->nr_free];
	s = &c->slots[cid];
	memset(s, 0, sizeof(*s));
	s->state = SLOT_ACTIVE;
	s->sync = sync;
	s->ctx = ctx;
	if (len) {
		s->write = data->write;
		s->incap = incap != 0;
		s->iov = data->iov;
		s->iovcnt = data->iovcnt;
		s->len = (uint32_t)len;
	}
	pthread_mutex_unlock(&c->lock);

	pthread_mutex_lock(&c->send_lock);
	rc = 0;
	/* Room in the batch for the header, the data buffers, the digest. */
	if (c->tx_pdus == TX_BATCH ||
	    c->tx_cnt + 2 + (incap ? data->iovcnt : 0) > TX_IOV)
		rc = tx_flush(c, false);
	if (!rc) {
		uint8_t *hdr = c->tx_hdr[c->tx_pdus];
		struct iovec *v = c->tx_iov + c->tx_cnt;
		struct nvq_sqe cmd = *sqe;

		cmd.cid = cid;
		cmd.flags = (uint8_t)((cmd.flags & ~0xc0) |
				      (NVQ_PSDT_SGL_MPTR_CONTIG << 6));
		sgl = (struct nvq_sgl_desc *)&cmd.prp1;
		memset(sgl, 0, sizeof(*sgl));
		sgl->length = (uint32_t)len;
		sgl->type = incap ? NVQ_SGL_DATA_OFFSET :
				    NVQ_SGL_TRANSPORT_DATA;
		hl = nvq_tcp_build_cmd(hdr, &c->params, &cmd, incap);
		v[0].iov_base = hdr;
		v[0].iov_len = hl;
		n = 1;
		if (incap) {
			n += iov_sub(data->iov, data->iovcnt, 0, incap, v + 1,
				     NVQ_TCP_MAX_IOV);
			if (c->params.ddgst) {
				memcpy(hdr + hl, &crc, sizeof(crc));
				v[n].iov_base = hdr + hl;
				v[n].iov_len = NVQ_TCP_DIGEST_LEN;
				n++;
			}
			STAT_ADD(c, incapsule, 1);
		}
		c->tx_cnt += n;
		c->tx_pdus++;
		if (!more)
			rc = tx_flush(c, false);
	}
	send_unlock(c, false);
	flush(c);
	if (rc < 0) {
		/* Not sent: the caller keeps the command, not us. */
		pthread_mutex_lock(&c->lock);
		if (c->slots[cid].state == SLOT_ACTIVE &&
		    !c->slots[cid].r2t_queued && !c->slots[cid].h2c_busy) {
			cid_free_locked(c, cid);
		} else {
			/* Freed by whoever finishes it, with no callback. */
			c->slots[cid].ctx = NULL;
			c->slots[cid].sync = true;
		}
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	return cid;
}

int nvq_tcp_conn_submit(struct nvq_tcp_conn *c, const struct nvq_sqe *sqe,
			const struct nvq_tcp_data *data, void *ctx)
{
	return submit(c, sqe, data, ctx, false, false);
}

int nvq_tcp_conn_submit_batch(struct nvq_tcp_conn *c, const struct nvq_sqe *sqe,
			      const struct nvq_tcp_data *data, void *ctx,
			      bool more)
{
	return submit(c, sqe, data, ctx, false, more);
}

int nvq_tcp_conn_flush(struct nvq_tcp_conn *c)
{
	int rc;

	pthread_mutex_lock(&c->send_lock);
	rc = tx_flush(c, false);
	send_unlock(c, false);
	flush(c);
	return rc;
}

int nvq_tcp_conn_sync(struct nvq_tcp_conn *c, const struct nvq_sqe *sqe,
		      const struct nvq_tcp_data *data, struct nvq_cqe *cqe,
		      uint32_t timeout_ms)
{
	uint64_t dl = deadline_ns((int)MIN(timeout_ms, (uint32_t)INT32_MAX));
	struct sync_wait w = { 0 };
	int cid, rc;

	cid = submit(c, sqe, data, &w, true, false);
	if (cid < 0)
		return cid;
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int left;

		if (__atomic_load_n(&w.done, __ATOMIC_ACQUIRE))
			break;
		rc = recv_step(c, false);
		if (__atomic_load_n(&w.done, __ATOMIC_ACQUIRE))
			break;
		left = ms_left(dl);
		if (rc < 0 || !left) {
			/* Leave the slot, not our frame, to the connection. */
			pthread_mutex_lock(&c->lock);
			if (!w.done)
				c->slots[cid].ctx = NULL;
			pthread_mutex_unlock(&c->lock);
			if (w.done)
				break;
			if (rc < 0)
				return rc;
			nvq_err(-ETIMEDOUT,
				"command %#x (CID %d) got no answer in %u ms",
				sqe->opcode, cid, timeout_ms);
			conn_fail(c, -ETIMEDOUT, NULL, 0);
			return nvq_err(-ETIMEDOUT,
				       "tcp queue %u: command %#x got no "
				       "answer in %u ms",
				       c->qid, sqe->opcode, timeout_ms);
		}
		/* Another thread may be receiving: look again soon. */
		if (poll(&pfd, 1, MIN(left, 10)) < 0 && errno != EINTR)
			return conn_fail(
				c, nvq_err(-errno, "poll: %s", strerror(errno)),
				NULL, 0);
	}
	*cqe = w.cqe;
	return 0;
}

/* ---- open, close, the rest ---------------------------------------- */

/* Blocking I/O for the ICReq/ICResp exchange, bounded by @dl. */
static int io_all(int fd, void *buf, size_t len, bool out, uint64_t dl)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd,
				      .events = out ? POLLOUT : POLLIN };
		ssize_t n;
		int left;

		n = out ? send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) :
			  recv(fd, p, len, MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		left = ms_left(dl);
		if (!left)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static int icresp_io_err(struct nvq_tcp_conn *c, int rc, const char *what)
{
	if (rc == -ETIMEDOUT)
		return nvq_err(rc, "tcp queue %u: no %s in time", c->qid, what);
	if (rc == -ECONNRESET)
		return nvq_err(rc,
			       "tcp queue %u: the target closed the connection "
			       "instead of %s",
			       c->qid, what);
	return nvq_err(rc, "tcp queue %u: %s: %s", c->qid, what, strerror(-rc));
}

/* ICReq out, ICResp in and checked; fills c->params. */
static int exchange_ic(struct nvq_tcp_conn *c, const struct nvq_tcp_opts *o,
		       uint64_t dl)
{
	struct nvq_tcp_icreq req;
	union {
		struct nvq_tcp_icresp r;
		uint8_t b[NVQ_TCP_TERM_MAX_PLEN];
	} u;
	struct nvq_tcp_rx_info info;
	uint8_t term[NVQ_TCP_TERM_MAX_PLEN];
	size_t tl;
	int rc;

	nvq_tcp_build_icreq(&req, o->hdgst, o->ddgst);
	rc = io_all(c->fd, &req, sizeof(req), true, dl);
	if (rc < 0)
		return icresp_io_err(c, rc, "ICReq sent");
	STAT_ADD(c, pdus_sent, 1);
	STAT_ADD(c, bytes_sent, sizeof(req));

	rc = io_all(c->fd, u.b, sizeof(struct nvq_tcp_hdr), false, dl);
	if (rc < 0)
		return icresp_io_err(c, rc, "ICResp");
	c->params.hdgst = o->hdgst;
	c->params.ddgst = o->ddgst;
	rc = nvq_tcp_check_ch(&u.r.hdr, &c->params, true, &info);
	if (rc < 0)
		goto bad;
	rc = io_all(c->fd, u.b + sizeof(struct nvq_tcp_hdr),
		    info.hdr_len + info.data_len - sizeof(struct nvq_tcp_hdr),
		    false, dl);
	if (rc < 0)
		return icresp_io_err(c, rc, "ICResp");
	STAT_ADD(c, pdus_recv, 1);
	STAT_ADD(c, bytes_recv, info.hdr_len + info.data_len);
	if (info.type == NVQ_TCP_C2H_TERM) {
		struct nvq_tcp_term_pdu *t = (void *)u.b;

		return nvq_err(-EPROTO,
			       "tcp queue %u: the target answered ICReq with "
			       "C2HTermReq: FES %#x (%s)",
			       c->qid, t->fes, nvq_tcp_fes_name(t->fes));
	}
	rc = nvq_tcp_check_psh(u.b, &c->params, &info);
	if (rc < 0)
		goto bad;
	c->params.cpda = (u.r.cpda + 1u) * 4;
	c->params.maxh2cdata = u.r.maxh2cdata;
	c->params.ioccsz = 0;
	return 0;
bad:
	if (info.fes) {
		tl = nvq_tcp_build_h2c_term(term, info.fes, info.fei, u.b,
					    sizeof(struct nvq_tcp_hdr));
		(void)!send(c->fd, term, tl, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	{
		char msg[256];

		return nvq_err(rc, "tcp queue %u: ICResp: %s", c->qid,
			       nvq_errmsg_copy(msg, sizeof(msg)));
	}
}

int nvq_tcp_conn_open_fd(int fd, const struct nvq_tcp_opts *o, uint16_t qid,
			 uint32_t depth, nvq_tcp_done_fn done, void *arg,
			 struct nvq_tcp_conn **cp)
{
	uint32_t tmo = o->connect_timeout_ms ? o->connect_timeout_ms : 5000;
	struct nvq_tcp_conn *c;
	int one = 1, fl, rc;
	uint32_t i;

	*cp = NULL;
	if (!depth || depth > 65535 || !done) {
		close(fd);
		return nvq_err(-EINVAL,
			       "tcp queue %u: depth %u (1 to 65535) or no "
			       "done callback",
			       qid, depth);
	}
	c = calloc(1, sizeof(*c));
	if (c) {
		c->slots = calloc(depth, sizeof(*c->slots));
		c->free_cids = calloc(depth, sizeof(*c->free_cids));
		c->r2tq = calloc(depth, sizeof(*c->r2tq));
		c->cplq = calloc(depth, sizeof(*c->cplq));
		c->rxbuf = malloc(RX_BUF);
	}
	if (!c || !c->slots || !c->free_cids || !c->r2tq || !c->cplq ||
	    !c->rxbuf) {
		if (c) {
			free(c->rxbuf);
			free(c->slots);
			free(c->free_cids);
			free(c->r2tq);
			free(c->cplq);
			free(c);
		}
		close(fd);
		return nvq_err(-ENOMEM, "tcp queue %u: no memory for %u slots",
			       qid, depth);
	}
	c->fd = fd;
	c->qid = qid;
	c->depth = depth;
	c->done = done;
	c->done_arg = arg;
	pthread_mutex_init(&c->recv_lock, NULL);
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->lock, NULL);
	/* CID 0 handed out first. */
	for (i = 0; i < depth; i++)
		c->free_cids[i] = (uint16_t)(depth - 1 - i);
	c->nr_free = depth;

	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		rc = nvq_err(-errno, "tcp queue %u: O_NONBLOCK: %s", qid,
			     strerror(errno));
		goto fail;
	}
	/* Not a TCP socket in tests (socketpair): no matter. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	rc = exchange_ic(c, o, deadline_ns((int)MIN(tmo, (uint32_t)INT32_MAX)));
	if (rc < 0)
		goto fail;
	*cp = c;
	return 0;
fail:
	nvq_tcp_conn_close(c);
	return rc;
}

int nvq_tcp_conn_open(const struct nvq_tcp_opts *o, uint16_t qid,
		      uint32_t depth, nvq_tcp_done_fn done, void *arg,
		      struct nvq_tcp_conn **cp)
{
	uint32_t tmo = o->connect_timeout_ms ? o->connect_timeout_ms : 5000;
	uint64_t dl = deadline_ns((int)MIN(tmo, (uint32_t)INT32_MAX));
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_protocol = IPPROTO_TCP };
	struct addrinfo *res, *ai;
	char host[sizeof(o->host)];
	const char *port = o->port[0] ? o->port : "4420";
	int rc, fd = -1, last = -ECONNREFUSED;
	size_t hl;

	*cp = NULL;
	snprintf(host, sizeof(host), "%s", o->host);
	hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		return nvq_err(rc == EAI_SYSTEM ? -errno : -EHOSTUNREACH,
			       "tcp queue %u: cannot resolve %s port %s: %s",
			       qid, host, port, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd pfd;
		int soerr = 0, left;
		socklen_t sl = sizeof(soerr);

		fd = socket(ai->ai_family,
			    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			last = -errno;
			continue;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		if (errno != EINPROGRESS) {
			last = -errno;
			goto next;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		left = ms_left(dl);
		rc = left ? poll(&pfd, 1, left) : 0;
		if (rc == 0) {
			last = -ETIMEDOUT;
			goto next;
		}
		if (rc < 0) {
			last = -errno;
			goto next;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			soerr = errno;
		if (!soerr)
			break;
		last = -soerr;
next:
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return nvq_err(
			last, "tcp queue %u: cannot connect to %s:%s: %s", qid,
			host, port,
			last == -ETIMEDOUT ? "timed out" : strerror(-last));
	return nvq_tcp_conn_open_fd(fd, o, qid, depth, done, arg, cp);
}

void nvq_tcp_conn_close(struct nvq_tcp_conn *c)
{
	if (!c)
		return;
	shutdown(c->fd, SHUT_RDWR);
	close(c->fd);
	pthread_mutex_destroy(&c->recv_lock);
	pthread_mutex_destroy(&c->send_lock);
	pthread_mutex_destroy(&c->lock);
	free(c->slots);
	free(c->free_cids);
	free(c->r2tq);
	free(c->cplq);
	free(c->rxbuf);
	free(c);
}

int nvq_tcp_conn_fd(const struct nvq_tcp_conn *c)
{
	return c->fd;
}

const struct nvq_tcp_params *nvq_tcp_conn_params(const struct nvq_tcp_conn *c)
{
	return &c->params;
}

void nvq_tcp_conn_set_ioccsz(struct nvq_tcp_conn *c, uint32_t bytes)
{
	WRITE_ONCE(c->params.ioccsz, bytes);
}

void nvq_tcp_conn_drain(struct nvq_tcp_conn *c,
			void (*fn)(void *arg, void *ctx), void *arg)
{
	uint32_t i;

	/* Nothing queued is served or delivered any more. */
	pthread_mutex_lock(&c->recv_lock);
	pthread_mutex_lock(&c->send_lock);
	c->tx_cnt = 0; /* a batch not sent (the connection is dead) */
	c->tx_pdus = 0;
	pthread_mutex_lock(&c->lock);
	c->r2t_count = 0;
	c->cpl_count = 0;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&c->send_lock);
	pthread_mutex_unlock(&c->recv_lock);
	for (i = 0; i < c->depth; i++) {
		bool call = false;
		void *ctx = NULL;

		pthread_mutex_lock(&c->recv_lock);
		pthread_mutex_lock(&c->send_lock);
		pthread_mutex_lock(&c->lock);
		if (c->slots[i].state != SLOT_FREE) {
			/* A sync command's waiter is gone or gives up. */
			call = !c->slots[i].sync;
			ctx = c->slots[i].ctx;
			c->slots[i].r2t_queued = false;
			cid_free_locked(c, (uint16_t)i);
		}
		pthread_mutex_unlock(&c->lock);
		pthread_mutex_unlock(&c->send_lock);
		pthread_mutex_unlock(&c->recv_lock);
		if (call && fn)
			fn(arg, ctx);
	}
}

void nvq_tcp_conn_get_stats(const struct nvq_tcp_conn *c,
			    struct nvq_tcp_conn_stats *st)
{
	st->pdus_sent = __atomic_load_n(&c->st.pdus_sent, __ATOMIC_RELAXED);
	st->pdus_recv = __atomic_load_n(&c->st.pdus_recv, __ATOMIC_RELAXED);
	st->bytes_sent = __atomic_load_n(&c->st.bytes_sent, __ATOMIC_RELAXED);
	st->bytes_recv = __atomic_load_n(&c->st.bytes_recv, __ATOMIC_RELAXED);
	st->r2t = __atomic_load_n(&c->st.r2t, __ATOMIC_RELAXED);
	st->h2c_data = __atomic_load_n(&c->st.h2c_data, __ATOMIC_RELAXED);
	st->c2h_data = __atomic_load_n(&c->st.c2h_data, __ATOMIC_RELAXED);
	st->incapsule = __atomic_load_n(&c->st.incapsule, __ATOMIC_RELAXED);
	st->digest_errors =
		__atomic_load_n(&c->st.digest_errors, __ATOMIC_RELAXED);
	st->send_calls = __atomic_load_n(&c->st.send_calls, __ATOMIC_RELAXED);
	st->recv_calls = __atomic_load_n(&c->st.recv_calls, __ATOMIC_RELAXED);
}
