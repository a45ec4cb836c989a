/* SPDX-License-Identifier: MIT */
/* The /NSID suffix of an emu: URI (uri.h); vfio: is the library's. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "uri.h"

static char buf[256], err[256];

/* @uri splits into @open and @nsid. */
static void ok(const char *uri, const char *open, uint32_t nsid)
{
	const char *got = NULL;
	uint32_t n = 7;

	CHECK_EQ(perf_uri_split_nsid(uri, buf, sizeof(buf), &got, &n, err,
				     sizeof(err)),
		 0);
	CHECK(got && !strcmp(got, open));
	CHECK_EQ(n, nsid);
	/* nothing taken off: the caller's own string */
	if (!nsid)
		CHECK(got == uri);
}

static void bad(const char *uri, const char *needle)
{
	const char *got;
	uint32_t n;

	err[0] = '\0';
	CHECK_EQ(perf_uri_split_nsid(uri, buf, sizeof(buf), &got, &n, err,
				     sizeof(err)),
		 -EINVAL);
	CHECK(strstr(err, needle) != NULL);
}

int main(void)
{
	ok("emu:", "emu:", 0);
	ok("emu:size=64M,ns=2", "emu:size=64M,ns=2", 0);
	ok("emu:size=64M,ns=2/2", "emu:size=64M,ns=2", 2);
	ok("emu:/1", "emu:", 1);
	ok("emu:lat=nand/3", "emu:lat=nand", 3);
	ok("emu:lat=80us/20us/4294967294", "emu:lat=80us/20us", 4294967294u);
	/* not digits: a parameter's own '/', for the emulator to parse */
	ok("emu:lat=80us/20us", "emu:lat=80us/20us", 0);
	ok("emu:fault=status:2/0x80", "emu:fault=status:2/0x80", 0);
	ok("emu:size=64M/x", "emu:size=64M/x", 0);
	/* other schemes: untouched (vfio's parser is the library's) */
	ok("vfio:0000:01:00.0/2", "vfio:0000:01:00.0/2", 0);
	ok("test:x/2", "test:x/2", 0);

	bad("emu:size=64M/0", "bad namespace id '0'");
	bad("emu:size=64M/4294967295", "bad namespace id");
	bad("emu:size=64M/184467440737095516160", "bad namespace id");
	bad("emu:size=64M/", "no namespace id after '/'");
	{
		const char *got;
		uint32_t n;
		char small[8];

		CHECK_EQ(perf_uri_split_nsid("emu:size=64M/2", small,
					     sizeof(small), &got, &n, err,
					     sizeof(err)),
			 -EINVAL);
	}
	return 0;
}
