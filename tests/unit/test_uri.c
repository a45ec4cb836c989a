/* SPDX-License-Identifier: MIT */
/*
 * The "/NSID" suffix of a device URI (nvq_uri_split_nsid(), the grammar
 * nvq_open(), nvq-perf and the fio engine share), and nvq_open() with it:
 * nvq_ctrl_uri_nsid(), an inactive namespace, malformed suffixes.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "transport.h"

static char buf[256];

/* @uri splits into @dev and @nsid. */
static void ok(const char *uri, const char *dev, uint32_t nsid)
{
	uint32_t n = 7;

	CHECK_EQ(nvq_uri_split_nsid(uri, buf, sizeof(buf), &n), 0);
	if (strcmp(buf, dev)) {
		fprintf(stderr, "%s: device part '%s', expected '%s'\n", uri,
			buf, dev);
		exit(T_EXIT_FAIL);
	}
	CHECK_EQ(n, nsid);
}

/* @uri fails with @err and a message holding @needle. */
static void bad(const char *uri, int err, const char *needle)
{
	uint32_t n = 7;

	CHECK_EQ(nvq_uri_split_nsid(uri, buf, sizeof(buf), &n), err);
	CHECK_EQ(n, 0);
	if (!strstr(nvq_errmsg(), needle)) {
		fprintf(stderr, "%s: message '%s' lacks '%s'\n", uri,
			nvq_errmsg(), needle);
		exit(T_EXIT_FAIL);
	}
}

static void split(void)
{
	char small[8];
	uint32_t n;

	ok("emu:", "emu:", 0);
	ok("emu:size=64M,ns=2", "emu:size=64M,ns=2", 0);
	ok("emu:size=64M,ns=2/2", "emu:size=64M,ns=2", 2);
	ok("emu:/1", "emu:", 1);
	ok("emu:lat=nand/3", "emu:lat=nand", 3);
	ok("emu:lat=80us/20us/4294967294", "emu:lat=80us/20us", 4294967294u);
	/* not digits: a parameter's own '/', for the emulator to parse */
	ok("emu:lat=80us/20us", "emu:lat=80us/20us", 0);
	ok("emu:fault=status:2/0x80", "emu:fault=status:2/0x80", 0);
	ok("emu:file=/tmp/disk.img,size=1M", "emu:file=/tmp/disk.img,size=1M",
	   0);
	ok("emu:size=1M,file=/tmp/d.img/1", "emu:size=1M,file=/tmp/d.img", 1);
	ok("vfio:0000:01:00.0", "vfio:0000:01:00.0", 0);
	ok("vfio:0000:01:00.0/2", "vfio:0000:01:00.0", 2);
	ok("vfio:01:00.0/2,vectors=4", "vfio:01:00.0,vectors=4", 2);
	ok("vfio:0000:01:00.0,iommu=type1", "vfio:0000:01:00.0,iommu=type1", 0);
	/* tcp: right after HOST[:PORT], or a trailing /DIGITS */
	ok("tcp:127.0.0.1,nqn=nqn.x:y", "tcp:127.0.0.1,nqn=nqn.x:y", 0);
	ok("tcp:127.0.0.1:4420/1,nqn=nqn.x:y", "tcp:127.0.0.1:4420,nqn=nqn.x:y",
	   1);
	ok("tcp:127.0.0.1/7,nqn=nqn.x:y", "tcp:127.0.0.1,nqn=nqn.x:y", 7);
	ok("tcp:127.0.0.1:4420/3", "tcp:127.0.0.1:4420", 3);
	ok("tcp:[::1]:4420/2,nqn=nqn.x:y", "tcp:[::1]:4420,nqn=nqn.x:y", 2);
	ok("tcp:[::1]/2", "tcp:[::1]", 2);
	ok("tcp:127.0.0.1,nqn=nqn.x:y/1", "tcp:127.0.0.1,nqn=nqn.x:y", 1);
	ok("tcp:127.0.0.1,nqn=nqn.x:y,kato=5/4294967294",
	   "tcp:127.0.0.1,nqn=nqn.x:y,kato=5", 4294967294u);
	/* an NQN's own '/' followed by other text stays the NQN's */
	ok("tcp:h,nqn=nqn.x:a/b", "tcp:h,nqn=nqn.x:a/b", 0);
	ok("tcp:h,nqn=nqn.x:a/b/2", "tcp:h,nqn=nqn.x:a/b", 2);
	ok("tcp:h,nqn=nqn.x:a/1b", "tcp:h,nqn=nqn.x:a/1b", 0);
	bad("tcp:127.0.0.1/,nqn=nqn.x:y", -EINVAL,
	    "no namespace id after the URI's '/'");
	bad("tcp:127.0.0.1:4420/0,nqn=nqn.x:y", -EINVAL,
	    "bad namespace id '0'");
	bad("tcp:127.0.0.1:4420/x,nqn=nqn.x:y", -EINVAL,
	    "bad namespace id 'x'");
	bad("tcp:[::1]/1/2", -EINVAL, "bad namespace id '1/2'");
	bad("tcp:h,nqn=nqn.x:y/", -EINVAL,
	    "no namespace id after the URI's '/'");
	bad("tcp:h,nqn=nqn.x:y/0", -EINVAL, "bad namespace id '0'");
	bad("tcp:h,nqn=nqn.x:y/4294967295", -EINVAL,
	    "bad namespace id '4294967295'");
	/* other schemes: untouched */
	ok("test:x/2", "test:x/2", 0);
	ok("bogus", "bogus", 0);

	bad("emu:/", -EINVAL, "no namespace id after the URI's '/'");
	bad("emu:size=64M/", -EINVAL, "no namespace id after the URI's '/'");
	bad("emu:/0", -EINVAL, "bad namespace id '0'");
	bad("emu:size=64M/0", -EINVAL, "bad namespace id '0'");
	bad("emu:/x", -EINVAL, "bad namespace id 'x'");
	bad("emu:ns=2,/1/2", -EINVAL, "bad namespace id '1/2'");
	bad("emu:/4294967295", -EINVAL, "bad namespace id '4294967295'");
	bad("emu:/4294967296", -EINVAL, "1..4294967294");
	bad("emu:/184467440737095516160", -EINVAL, "bad namespace id");
	bad("vfio:0000:01:00.0/", -EINVAL,
	    "no namespace id after the URI's '/'");
	bad("vfio:0000:01:00.0/0", -EINVAL, "bad namespace id '0'");
	bad("vfio:0000:01:00.0/x,vectors=2", -EINVAL, "bad namespace id 'x'");
	bad("vfio:0000:01:00.0/1/2", -EINVAL, "bad namespace id '1/2'");
	bad("vfio:0000:01:00.0/4294967296", -EINVAL, "bad namespace id");
	CHECK_EQ(nvq_uri_split_nsid("emu:size=64M/2", small, sizeof(small), &n),
		 -ENAMETOOLONG);
	CHECK_EQ(nvq_uri_split_nsid(NULL, buf, sizeof(buf), &n), -EINVAL);
}

static void open_with_nsid(void)
{
	struct nvq_ctrl *c;

	CHECK_EQ(nvq_open("emu:size=4M,ns=3/3", NULL, &c), 0);
	CHECK_EQ(nvq_ctrl_uri_nsid(c), 3);
	/* the URI as given, suffix and all */
	CHECK(!strcmp(nvq_ctrl_uri(c), "emu:size=4M,ns=3/3"));
	nvq_close(c);

	CHECK_EQ(nvq_open("emu:size=4M", NULL, &c), 0);
	CHECK_EQ(nvq_ctrl_uri_nsid(c), 0);
	nvq_close(c);

	CHECK_EQ(nvq_open("emu:size=4M,ns=2/3", NULL, &c), -ENOENT);
	CHECK(c == NULL);
	CHECK(strstr(nvq_errmsg(),
		     "namespace 3 is not active (active: 1, 2)") != NULL);

	CHECK_EQ(nvq_open("emu:size=4M/0", NULL, &c), -EINVAL);
	CHECK(strstr(nvq_errmsg(), "bad namespace id '0'") != NULL);
	CHECK_EQ(nvq_open("emu:/x", NULL, &c), -EINVAL);
	CHECK(strstr(nvq_errmsg(), "bad namespace id 'x'") != NULL);

	/* tcp: reaches its transport, the suffix split off first */
	CHECK_EQ(nvq_open("tcp:127.0.0.1/0,nqn=nqn.x:y", NULL, &c), -EINVAL);
	CHECK(strstr(nvq_errmsg(), "bad namespace id '0'") != NULL);
}

int main(void)
{
	split();
	open_with_nsid();
	return T_EXIT_PASS;
}
