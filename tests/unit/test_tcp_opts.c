/* SPDX-License-Identifier: MIT */
/*
 * nvq_tcp_opts_parse(): the tcp: URI's address forms (names, IPv4,
 * bracketed IPv6, ports and service names), every option with its default
 * and bounds, the discovery defaults, strictness (unknown, duplicate,
 * empty, out of range, bad NQN or UUID), and the host identity read from
 * NVQ_TCP_ETC (hostnqn, hostid, machine-id) or made up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tcp.h"
#include "testutil.h"

#define NQN "nqn.2014-08.org.example:sub1"

static char etc[256];

static void put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", etc, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs(text, f);
	CHECK_EQ(fclose(f), 0);
}

static void rm(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", etc, name);
	unlink(path);
}

static struct nvq_tcp_opts o;

static void ok(const char *params, bool disc)
{
	memset(&o, 0x5a, sizeof(o));
	if (nvq_tcp_opts_parse(params, disc, &o)) {
		fprintf(stderr, "'%s': %s\n", params, nvq_errmsg());
		exit(T_EXIT_FAIL);
	}
}

/* @params fails with -EINVAL and a message holding @needle. */
static void bad(const char *params, bool disc, const char *needle)
{
	int rc = nvq_tcp_opts_parse(params, disc, &o);

	if (rc != -EINVAL || !strstr(nvq_errmsg(), needle)) {
		fprintf(stderr, "'%s': rc %d, message '%s', expected '%s'\n",
			params, rc, nvq_errmsg(), needle);
		exit(T_EXIT_FAIL);
	}
}

static void addresses(void)
{
	ok("127.0.0.1,nqn=" NQN, false);
	CHECK_STREQ(o.host, "127.0.0.1");
	CHECK_STREQ(o.port, "4420");
	CHECK_STREQ(o.subnqn, NQN);
	ok("127.0.0.1:4421,nqn=" NQN, false);
	CHECK_STREQ(o.port, "4421");
	ok("target.example-1.net:04420,nqn=" NQN, false);
	CHECK_STREQ(o.host, "target.example-1.net");
	CHECK_STREQ(o.port, "4420");
	ok("[::1],nqn=" NQN, false);
	CHECK_STREQ(o.host, "::1");
	CHECK_STREQ(o.port, "4420");
	ok("[fe80::1%eth0]:65535,nqn=" NQN, false);
	CHECK_STREQ(o.host, "fe80::1%eth0");
	CHECK_STREQ(o.port, "65535");
	ok("[::ffff:10.0.0.1]:1,nqn=" NQN, false);
	CHECK_STREQ(o.host, "::ffff:10.0.0.1");
	CHECK_STREQ(o.port, "1");
	ok("h:nvme-tcp,nqn=" NQN, false);
	CHECK_STREQ(o.port, "nvme-tcp");

	bad(",nqn=" NQN, false, "no host");
	bad(":4420,nqn=" NQN, false, "no host");
	bad("", false, "no host");
	bad("::1,nqn=" NQN, false, "in brackets");
	bad("fe80::1:4420,nqn=" NQN, false, "in brackets");
	bad("[::1,nqn=" NQN, false, "no ']'");
	bad("[]:4420,nqn=" NQN, false, "empty IPv6");
	bad("[::1]4420,nqn=" NQN, false, "expected :PORT");
	bad("[::g]:4420,nqn=" NQN, false, "not an IPv6 address");
	bad("ho st,nqn=" NQN, false, "bad host 'ho st'");
	bad("h/1,nqn=" NQN, false, "bad host 'h/1'");
	bad("h:,nqn=" NQN, false, "empty port");
	bad("h:0,nqn=" NQN, false, "bad port '0'");
	bad("h:65536,nqn=" NQN, false, "bad port '65536'");
	bad("h:99999999999999999999999,nqn=" NQN, false, "bad port");
	bad("h:44x,nqn=" NQN, false, "bad port '44x'");
	bad("h:-1,nqn=" NQN, false, "bad port '-1'");
	bad("h:a_b,nqn=" NQN, false, "bad port 'a_b'");
	bad("h:averyveryverylongservice,nqn=" NQN, false, "bad port");
	bad("[::1]:,nqn=" NQN, false, "empty port");
}

static void defaults(void)
{
	ok("10.0.0.1,nqn=" NQN, false);
	CHECK(!o.hdgst && !o.ddgst);
	CHECK_EQ(o.nr_io_queues, 0);
	CHECK_EQ(o.queue_size, 128);
	CHECK_EQ(o.reconnect_delay_s, 10);
	CHECK_EQ(o.ctrl_loss_tmo_s, 600);
	CHECK_EQ(o.kato_s, 5);
	CHECK_EQ(o.connect_timeout_ms, 5000);
	CHECK_EQ(o.nsid, 0);

	/* discovery: the well-known NQN, port 8009, no keep-alive */
	ok("10.0.0.1", true);
	CHECK_STREQ(o.subnqn, NVQ_DISC_NQN);
	CHECK_STREQ(o.port, "8009");
	CHECK_EQ(o.kato_s, 0);
	ok("10.0.0.1:4420,nqn=" NVQ_DISC_NQN, true);
	CHECK_STREQ(o.subnqn, NVQ_DISC_NQN);
	CHECK_STREQ(o.port, "4420");
	ok("10.0.0.1,nqn=" NQN, true); /* a unique discovery NQN */
	CHECK_STREQ(o.subnqn, NQN);
	bad("10.0.0.1", false, "no subsystem NQN");
	bad("10.0.0.1,hdgst=1", false, "no subsystem NQN");
}

static void options(void)
{
	ok("h,nqn=" NQN ",hdgst=1,ddgst=on,nr_io_queues=4,queue_size=16,"
	   "reconnect_delay=1,ctrl_loss_tmo=-1,kato=0,connect_timeout=250",
	   false);
	CHECK(o.hdgst && o.ddgst);
	CHECK_EQ(o.nr_io_queues, 4);
	CHECK_EQ(o.queue_size, 16);
	CHECK_EQ(o.reconnect_delay_s, 1);
	CHECK_EQ(o.ctrl_loss_tmo_s, -1);
	CHECK_EQ(o.kato_s, 0);
	CHECK_EQ(o.connect_timeout_ms, 250);
	ok("h,hdgst=true,ddgst=false,queue_size=1024,keep_alive_tmo=30,nqn=" NQN,
	   false);
	CHECK(o.hdgst && !o.ddgst);
	CHECK_EQ(o.queue_size, 1024);
	CHECK_EQ(o.kato_s, 30);
	ok("h,nqn=" NQN ",hdgst=off,ddgst=0", false);
	CHECK(!o.hdgst && !o.ddgst);
	/* values hold ':' and '.' */
	ok("h,nqn=nqn.2014-08.org.nvmexpress:uuid:0a1b.c:d,hostnqn=nqn.x:y.z",
	   false);
	CHECK_STREQ(o.subnqn, "nqn.2014-08.org.nvmexpress:uuid:0a1b.c:d");
	CHECK_STREQ(o.hostnqn, "nqn.x:y.z");
	ok("h,nqn=" NQN ",hostid=0123ABCD-4567-89ab-cdef-0123456789AB", false);
	CHECK_EQ(o.hostid[0], 0x01);
	CHECK_EQ(o.hostid[3], 0xcd);
	CHECK_EQ(o.hostid[4], 0x45);
	CHECK_EQ(o.hostid[15], 0xab);

	bad("h,nqn=" NQN ",bogus=1", false, "unknown option 'bogus'");
	bad("h,nqn=" NQN ",Nqn=x", false, "unknown option 'Nqn'");
	bad("h,nqn=" NQN ",nqn=" NQN, false, "option 'nqn' given twice");
	bad("h,nqn=" NQN ",kato=1,keep_alive_tmo=2", false,
	    "option 'keep_alive_tmo' given twice");
	bad("h,nqn=", false, "option 'nqn' has an empty value");
	bad("h,nqn=" NQN ",hdgst=", false, "'hdgst' has an empty value");
	bad("h,nqn=" NQN ",,hdgst=1", false, "empty option");
	bad("h,nqn=" NQN ",", false, "empty option");
	bad("h,nqn=" NQN ",hdgst", false, "option 'hdgst' has no value");
	bad("h,nqn=" NQN ",hdgst=yes", false, "'hdgst=yes': expected 0/1");
	bad("h,nqn=" NQN ",ddgst=2", false, "'ddgst=2'");
	bad("h,nqn=" NQN ",queue_size=15", false,
	    "'queue_size=15': expected a decimal number, 16..1024");
	bad("h,nqn=" NQN ",queue_size=1025", false, "16..1024");
	bad("h,nqn=" NQN ",queue_size=0x80", false, "'queue_size=0x80'");
	bad("h,nqn=" NQN ",queue_size=+128", false, "'queue_size=+128'");
	bad("h,nqn=" NQN ",nr_io_queues=-1", false, "0..65535");
	bad("h,nqn=" NQN ",reconnect_delay=0", false, "1..86400");
	bad("h,nqn=" NQN ",ctrl_loss_tmo=-2", false, "-1..");
	bad("h,nqn=" NQN ",kato=-", false, "'kato=-'");
	bad("h,nqn=" NQN ",kato=4294968", false, "0..4294967");
	bad("h,nqn=" NQN ",connect_timeout=0", false, "1..3600000");
	bad("h,nqn=" NQN ",connect_timeout=99999999999999999999999", false,
	    "connect_timeout");
	bad("h,nqn=nqn", false, "'nqn' is not an NQN");
	bad("h,nqn=nqn.", false, "'nqn.' is not an NQN");
	bad("h,nqn=iqn.2014-08.org.x:y", false, "is not an NQN");
	bad("h,nqn=nqn.a b", false, "space or control");
	bad("h,nqn=" NQN ",hostnqn=x", false, "hostnqn 'x' is not an NQN");
	bad("h,nqn=" NQN ",hostid=0123abcd-4567-89ab-cdef-0123456789a", false,
	    "is not a UUID");
	bad("h,nqn=" NQN ",hostid=0123abcd-4567-89ab-cdef-0123456789abc", false,
	    "is not a UUID");
	bad("h,nqn=" NQN ",hostid=0123abcd+4567-89ab-cdef-0123456789ab", false,
	    "is not a UUID");
	bad("h,nqn=" NQN ",hostid=0123abcd-4567-89ab-cdef-0123456789ag", false,
	    "hostid '0123abcd-4567-89ab-cdef-0123456789ag'");

	/* the NQN length limit: 223 bytes fit, 224 do not */
	{
		char uri[512], nqn[260];

		memset(nqn, 'a', sizeof(nqn));
		memcpy(nqn, "nqn.", 4);
		nqn[223] = '\0';
		snprintf(uri, sizeof(uri), "h,nqn=%s", nqn);
		ok(uri, false);
		CHECK_EQ(strlen(o.subnqn), 223);
		nqn[223] = 'a';
		nqn[224] = '\0';
		snprintf(uri, sizeof(uri), "h,nqn=%s", nqn);
		bad(uri, false, "224 bytes long, more than an NQN's 223");
		snprintf(uri, sizeof(uri), "h,nqn=" NQN ",hostnqn=%s", nqn);
		bad(uri, false, "hostnqn is 224 bytes");
	}
	CHECK_EQ(nvq_tcp_opts_parse(NULL, false, &o), -EINVAL);
	CHECK_EQ(nvq_tcp_opts_parse("h", true, NULL), -EINVAL);
}

static void identity(void)
{
	uint8_t first[16];

	/* hostnqn and hostid from the files, white space trimmed */
	put("hostnqn", "  nqn.2014-08.org.nvmexpress:uuid:host-a \n");
	put("hostid", "00112233-4455-6677-8899-aabbccddeeff\n");
	ok("h,nqn=" NQN, false);
	CHECK_STREQ(o.hostnqn, "nqn.2014-08.org.nvmexpress:uuid:host-a");
	CHECK_EQ(o.hostid[0], 0x00);
	CHECK_EQ(o.hostid[1], 0x11);
	CHECK_EQ(o.hostid[15], 0xff);
	/* the URI's win */
	ok("h,nqn=" NQN ",hostnqn=nqn.x:mine,"
	   "hostid=ffffffff-ffff-ffff-ffff-ffffffffffff",
	   false);
	CHECK_STREQ(o.hostnqn, "nqn.x:mine");
	CHECK_EQ(o.hostid[7], 0xff);

	/* no hostnqn file: one made of the host id */
	rm("hostnqn");
	ok("h,nqn=" NQN, false);
	CHECK_STREQ(o.hostnqn, "nqn.2014-08.org.nvmexpress:uuid:"
			       "00112233-4455-6677-8899-aabbccddeeff");
	ok("h,nqn=" NQN ",hostid=0123abcd-4567-89ab-cdef-0123456789AB", false);
	CHECK_STREQ(o.hostnqn, "nqn.2014-08.org.nvmexpress:uuid:"
			       "0123abcd-4567-89ab-cdef-0123456789ab");

	/* no hostid file: derived from the machine id, the same each time,
	 * not the machine id itself, a version 8 UUID */
	rm("hostid");
	put("machine-id", "0123456789abcdef0123456789abcdef\n");
	ok("h,nqn=" NQN, false);
	memcpy(first, o.hostid, 16);
	CHECK_EQ(o.hostid[6] >> 4, 8);
	CHECK_EQ(o.hostid[8] >> 6, 2);
	CHECK(first[0] != 0x01 || first[1] != 0x23);
	ok("h,nqn=" NQN, false);
	CHECK(!memcmp(first, o.hostid, 16));
	CHECK_EQ(strncmp(o.hostnqn, "nqn.2014-08.org.nvmexpress:uuid:", 32), 0);
	CHECK_EQ(strlen(o.hostnqn), 32 + 36);
	put("machine-id", "fedcba9876543210fedcba9876543210\n");
	ok("h,nqn=" NQN, false);
	CHECK(memcmp(first, o.hostid, 16) != 0);

	/* nothing at all: random, version 4 */
	rm("machine-id");
	ok("h,nqn=" NQN, false);
	CHECK_EQ(o.hostid[6] >> 4, 4);
	CHECK_EQ(o.hostid[8] >> 6, 2);

	/* bad files are errors naming the file */
	put("hostid", "not-a-uuid\n");
	bad("h,nqn=" NQN, false, "/hostid holds 'not-a-uuid', not a UUID");
	ok("h,nqn=" NQN ",hostid=00112233-4455-6677-8899-aabbccddeeff", false);
	rm("hostid");
	put("hostnqn", "host-without-prefix\n");
	bad("h,nqn=" NQN, false, "/hostnqn 'host-without-prefix' is not");
	ok("h,nqn=" NQN ",hostnqn=nqn.x:y", false);
	rm("hostnqn");
}

int main(void)
{
	test_mkdtemp(etc, sizeof(etc), "tcp-etc");
	setenv("NVQ_TCP_ETC", etc, 1);
	addresses();
	defaults();
	options();
	identity();
	rmdir(etc);
	return T_EXIT_PASS;
}
