// SPDX-License-Identifier: MIT
/* Parameter strings: defaults, every key, and an error naming the key for
 * every kind of bad input. */
#include <errno.h>
#include <string.h>

#include "emu.h"
#include "harness.h"
#include "nvq/nvq.h"

static void bad(const char *s, const char *key)
{
	struct nvq_emu_params p;
	int ret = nvq_emu_params_parse(s, &p);

	if (ret != -EINVAL) {
		fprintf(stderr, "'%s' parsed (ret %d), expected -EINVAL\n", s,
			ret);
		exit(1);
	}
	if (!strstr(nvq_emu_errmsg(), key)) {
		fprintf(stderr, "'%s': message '%s' does not name '%s'\n", s,
			nvq_emu_errmsg(), key);
		exit(1);
	}
}

static void defaults(void)
{
	struct nvq_emu_params p;

	CHECK_EQ(nvq_emu_params_parse("", &p), 0);
	CHECK_EQ(p.ns_size, 1ull << 30);
	CHECK_EQ(p.nr_ns, 1);
	CHECK_EQ(p.lbads, 12);
	CHECK_EQ(p.qpairs, 64);
	CHECK_EQ(p.mqes, 1023);
	CHECK_EQ(p.mdts, 5);
	CHECK_EQ(p.media.read_ns, 0);
	CHECK_EQ(p.media.write_ns, 0);
	CHECK_EQ(p.file[0], 0);
	CHECK_EQ(p.msix, 65);
	CHECK_EQ(p.dstrd, 0);
	CHECK(p.dbbuf && p.vwc && p.cqr);
	CHECK_EQ(p.to, 10);
	CHECK_EQ(p.rdy_delay_ns, 0);
	CHECK_EQ(p.idle_spin_ns, 50000);
	CHECK_EQ(p.elpe, 63);
	CHECK_EQ(nvq_emu_params_parse(NULL, &p), 0);
}

static void every_key(void)
{
	struct nvq_emu_params p;

	CHECK_EQ(
		nvq_emu_params_parse(
			"size=64M,ns=2,lbads=9,qpairs=4,mqes=255,mdts=2,lat=50us,"
			"file=/tmp/x.img,msix=2,dstrd=3,dbbuf=0,vwc=0,cqr=0,to=20,"
			"rdy_delay=5ms,idle_spin=1s",
			&p),
		0);
	CHECK_EQ(p.ns_size, 64ull << 20);
	CHECK_EQ(p.nr_ns, 2);
	CHECK_EQ(p.lbads, 9);
	CHECK_EQ(p.qpairs, 4);
	CHECK_EQ(p.mqes, 255);
	CHECK_EQ(p.mdts, 2);
	CHECK_EQ(p.media.read_ns, 50000);
	CHECK_EQ(p.media.write_ns, 50000);
	CHECK(!strcmp(p.file, "/tmp/x.img"));
	CHECK_EQ(p.msix, 2);
	CHECK_EQ(p.dstrd, 3);
	CHECK(!p.dbbuf && !p.vwc && !p.cqr);
	CHECK_EQ(p.to, 20);
	CHECK_EQ(p.rdy_delay_ns, 5000000);
	CHECK_EQ(p.idle_spin_ns, 1000000000);

	CHECK_EQ(nvq_emu_params_parse("lat=80us/20us,qpairs=7", &p), 0);
	CHECK_EQ(p.media.read_ns, 80000);
	CHECK_EQ(p.media.write_ns, 20000);
	CHECK_EQ(p.msix, 8); /* qpairs + 1 */
	CHECK_EQ(nvq_emu_params_parse("size=2T,lat=1500", &p), 0);
	CHECK_EQ(p.ns_size, 2ull << 40);
	CHECK_EQ(p.media.read_ns, 1500);
	CHECK_EQ(nvq_emu_params_parse("size=4096K,lbads=12", &p), 0);
	CHECK_EQ(p.ns_size, 4ull << 20);
	CHECK_EQ(nvq_emu_params_parse("size=512,lbads=9", &p), 0);
	CHECK_EQ(nvq_emu_params_parse("elpe=255", &p), 0);
	CHECK_EQ(p.elpe, 255);
	CHECK_EQ(nvq_emu_params_parse("elpe=0", &p), 0);
	CHECK_EQ(p.elpe, 0);
}

int main(void)
{
	struct nvq_transport *t;

	defaults();
	every_key();

	bad("bogus=1", "bogus");
	bad("size", "size");
	bad("size=", "size");
	bad("size=12X", "size");
	bad("size=0", "size");
	bad("size=1000", "size"); /* not a multiple of 4096 */
	bad("size=-1", "size");
	bad("size=99999999999999999999", "size");
	bad("size=2T,ns=1024", "size");
	bad("lbads=10", "lbads");
	bad("lbads=x", "lbads");
	bad("ns=0", "ns");
	bad("ns=1025", "ns");
	bad("ns=two", "ns");
	bad("qpairs=0", "qpairs");
	bad("qpairs=65536", "qpairs");
	bad("mqes=0", "mqes");
	bad("mqes=70000", "mqes");
	bad("mdts=99", "mdts");
	bad("elpe=256", "elpe");
	bad("lat=5parsecs", "lat");
	bad("lat=1ms/xyz", "lat");
	bad("lat=/1ms", "lat");
	bad("lat=2h", "lat");
	bad("file=", "file");
	bad("msix=0", "msix");
	bad("msix=5000", "msix");
	bad("dstrd=16", "dstrd");
	bad("dbbuf=2", "dbbuf");
	bad("vwc=yes", "vwc");
	bad("cqr=x", "cqr");
	bad("to=0", "to");
	bad("to=256", "to");
	bad("rdy_delay=abc", "rdy_delay");
	bad("idle_spin=-1", "idle_spin");
	bad("ns=1,ns=2", "ns");
	bad("ns=1,", "','");
	bad(",ns=1", "empty");
	bad("ns=1,,lbads=9", "empty");

	/* Through the transport: the error reaches nvq_errmsg(). */
	CHECK_EQ(nvq_emu_transport_open("lbads=10", &t), -EINVAL);
	CHECK(strstr(nvq_errmsg(), "lbads"));
	CHECK_EQ(nvq_emu_transport_open("file=/proc/nonexistent/dir/x", &t) < 0,
		 1);
	CHECK(strstr(nvq_errmsg(), "file"));
	CHECK(nvq_emu_transport_open("file=/tmp", &t) < 0);
	CHECK(strstr(nvq_errmsg(), "file"));
	/* And good strings open. */
	CHECK_EQ(nvq_emu_transport_open("size=1M,ns=3,qpairs=2", &t), 0);
	CHECK(!strncmp(t->name, "emu:", 4));
	CHECK_EQ(t->nr_vectors, 3);
	t->ops->close(t);
	return 0;
}
