// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: an NVMe/TCP connection (lib/tcp/conn.c, pdu.c)
 * receiving a hostile target's byte stream.
 *
 * Input: 3 configuration bytes, then the bytes the target sends after
 * its ICResp.
 *   byte 0  bit 0 header digest, bit 1 data digest, bit 2 in-capsule
 *           writes (ioccsz 1024, else 0: every write by R2T), bits 5:3
 *           CPDA
 *   byte 1  MAXH2CDATA: 4096 * (1 + (b & 3))
 *   byte 2  the stream is fed to the connection in pieces of 1 + b
 *           bytes, each followed by a non-blocking nvq_tcp_conn_recv()
 * The ICResp itself is built from bytes 0 and 1 (valid, so that every
 * input reaches the PDU stream).
 *
 * Before the stream six commands are outstanding, CIDs 0 to 5 in order:
 *   0  read 2048 bytes into buffers of 700, 1300 and 48 bytes
 *   1  write 2048 bytes (1500 + 548): by R2T
 *   2  write 512 bytes: in the capsule if byte 0 bit 2, else by R2T
 *   3  read 100 bytes
 *   4  no data
 *   5  read 1 byte
 * A command that completes is submitted again (same kind, the CID the
 * free list gives) up to 4 times, so CIDs 6 and 7 and reuse are reached.
 * Then the target closes its end.
 *
 * Every buffer is its own heap block of the exact size, so a write or
 * read outside them is an ASan report. Properties (abort() otherwise):
 * every submitted command is reported exactly once, by the done
 * callback or by nvq_tcp_conn_drain() at the end; a write's buffers are
 * never changed; a completion comes only for an outstanding command;
 * the connection ends broken (the target closed it) with one of the
 * documented errors.
 *
 * The target side is a socketpair read back after each piece, so that
 * H2CData the connection sends never fills it; nothing runs in another
 * thread and an input always does the same thing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"
#include "nvq/nvq.h"
#include "tcp.h"

#define NR_CMD 6
#define ROUNDS 4
#define MAX_BUF 3

struct fcmd {
	int kind;
	int outstanding; /* 1 while submitted and not reported */
	int rounds;
	unsigned int nbuf;
	uint8_t *buf[MAX_BUF];
	size_t len[MAX_BUF];
	struct iovec iov[MAX_BUF];
	struct nvq_tcp_data d;
	bool write;
};

static struct fcmd cmds[NR_CMD];
static struct nvq_tcp_conn *conn;
static bool incap;
/* NVQ_FUZZ_TRACE=1: print completions and how the connection ended. */
static bool trace;

static void fuzz_bug(const char *what)
{
	fprintf(stderr, "fuzz-tcp-pdu: BUG: %s\n", what);
	abort();
}

/* The bytes a write sends: never changed by the connection. */
static uint8_t wbyte(size_t i, unsigned int b)
{
	return (uint8_t)(i * 7 + b * 13 + 1);
}

static void cmd_setup(struct fcmd *f, int kind)
{
	static const size_t sizes[NR_CMD][MAX_BUF] = {
		{ 700, 1300, 48 }, { 1500, 548, 0 }, { 512, 0, 0 },
		{ 100, 0, 0 },	   { 0, 0, 0 },	     { 1, 0, 0 },
	};
	unsigned int b;
	size_t i, total = 0;

	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->write = kind == 1 || kind == 2;
	for (b = 0; b < MAX_BUF && sizes[kind][b]; b++) {
		f->len[b] = sizes[kind][b];
		f->buf[b] = malloc(f->len[b]);
		if (!f->buf[b])
			abort();
		for (i = 0; i < f->len[b]; i++)
			f->buf[b][i] = f->write ? wbyte(i, b) : 0;
		f->iov[b].iov_base = f->buf[b];
		f->iov[b].iov_len = f->len[b];
		total += f->len[b];
	}
	f->nbuf = b;
	f->d.iov = f->iov;
	f->d.iovcnt = b;
	f->d.len = total;
	f->d.write = f->write;
}

static void cmd_check(struct fcmd *f)
{
	unsigned int b;
	size_t i;

	if (!f->write)
		return;
	for (b = 0; b < f->nbuf; b++)
		for (i = 0; i < f->len[b]; i++)
			if (f->buf[b][i] != wbyte(i, b))
				fuzz_bug("a write's buffer changed");
}

static void cmd_free(struct fcmd *f)
{
	unsigned int b;

	for (b = 0; b < f->nbuf; b++)
		free(f->buf[b]);
	f->nbuf = 0;
}

static int submit(struct fcmd *f)
{
	struct nvq_sqe sqe;
	int rc;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = f->kind == 4 ? 0x00 : f->write ? 0x01 : 0x02;
	sqe.nsid = 1;
	rc = nvq_tcp_conn_submit(conn, &sqe, f->d.len ? &f->d : NULL, f);
	if (rc >= 0) {
		if (f->outstanding)
			fuzz_bug("submitted twice");
		f->outstanding = 1;
	}
	return rc;
}

static void done(void *arg, void *ctx, const struct nvq_cqe *cqe)
{
	struct fcmd *f = ctx;

	(void)arg;
	(void)cqe;
	if (f < cmds || f >= cmds + NR_CMD)
		fuzz_bug("a completion with a context never submitted");
	if (!f->outstanding)
		fuzz_bug("a completion for a command not outstanding");
	f->outstanding = 0;
	cmd_check(f);
	if (trace)
		fprintf(stderr, "fuzz-tcp-pdu: kind %d %s, status %#x\n",
			f->kind, cqe ? "completed" : "drained",
			cqe ? cqe->status >> 1 : 0);
}

static void drained(void *arg, void *ctx)
{
	done(arg, ctx, NULL);
}

/* Read back (and drop) what the connection sent the target. */
static void target_drain(int fd)
{
	uint8_t b[16384];

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		;
}

static void icresp(int fd, uint8_t cfg, uint8_t maxh)
{
	struct nvq_tcp_icresp r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = NVQ_TCP_ICRESP;
	r.hdr.hlen = sizeof(r);
	r.hdr.plen = sizeof(r);
	r.cpda = (cfg >> 3) & 7;
	r.digest = cfg & 3;
	r.maxh2cdata = 4096u * (1 + (maxh & 3));
	if (send(fd, &r, sizeof(r), MSG_NOSIGNAL) != sizeof(r))
		abort();
}

static void resubmit(void)
{
	int i;

	for (i = 0; i < NR_CMD; i++) {
		struct fcmd *f = &cmds[i];

		if (f->outstanding || f->rounds >= ROUNDS ||
		    nvq_tcp_conn_error(conn))
			continue;
		f->rounds++;
		if (submit(f) < 0 && !nvq_tcp_conn_error(conn))
			fuzz_bug("a submit failed on a working connection");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvq_tcp_opts o;
	size_t pos, chunk;
	int sv[2], i, rc, big = 1 << 20;

	if (size < 3)
		return 0;
	trace = getenv("NVQ_FUZZ_TRACE");
	memset(&o, 0, sizeof(o));
	o.hdgst = data[0] & 1;
	o.ddgst = data[0] & 2;
	o.connect_timeout_ms = 1000;
	incap = data[0] & 4;
	chunk = 1 + (size_t)data[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		abort();
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	icresp(sv[1], data[0], data[1]);
	if (nvq_tcp_conn_open_fd(sv[0], &o, 1, 8, done, NULL, &conn))
		fuzz_bug("open failed on a valid ICResp");
	target_drain(sv[1]);
	if (incap)
		nvq_tcp_conn_set_ioccsz(conn, 1024);

	for (i = 0; i < NR_CMD; i++) {
		cmd_setup(&cmds[i], i);
		rc = submit(&cmds[i]);
		if (rc != i)
			fuzz_bug("the first commands did not get CIDs 0..5");
	}
	target_drain(sv[1]);

	for (pos = 3; pos < size && !nvq_tcp_conn_error(conn);) {
		size_t n = size - pos < chunk ? size - pos : chunk;

		if (send(sv[1], data + pos, n, MSG_NOSIGNAL) != (ssize_t)n)
			abort();
		pos += n;
		rc = nvq_tcp_conn_recv(conn, 0);
		if (rc < 0 && rc != nvq_tcp_conn_error(conn))
			fuzz_bug("recv failed but the connection works");
		target_drain(sv[1]);
		resubmit();
		target_drain(sv[1]);
	}
	close(sv[1]);
	while (!nvq_tcp_conn_error(conn))
		if (nvq_tcp_conn_recv(conn, 0) < 0)
			break;
	rc = nvq_tcp_conn_error(conn);
	if (trace)
		fprintf(stderr, "fuzz-tcp-pdu: ended with %d: %s\n", rc,
			nvq_errmsg());
	if (rc != -EPROTO && rc != -ECONNRESET && rc != -EPIPE)
		fuzz_bug("the connection ended with an undocumented error");
	nvq_tcp_conn_drain(conn, drained, NULL);
	for (i = 0; i < NR_CMD; i++) {
		if (cmds[i].outstanding)
			fuzz_bug("a command never reported");
		cmd_free(&cmds[i]);
	}
	nvq_tcp_conn_close(conn);
	conn = NULL;
	return 0;
}
