/* SPDX-License-Identifier: MIT */
/*
 * Device time vs host overhead: which URIs get stamps, and the split of
 * one I/O's times (32-bit wrap, stamps that cannot be posting times).
 */
#include <string.h>

#include "check.h"
#include "devtime.h"

static void uri(const char *in, const char *want, bool want_stamped)
{
	char buf[128];
	bool stamped = !want_stamped;
	const char *out = perf_stamp_uri(in, buf, sizeof(buf), &stamped);

	if (!out || strcmp(out, want) || stamped != want_stamped) {
		fprintf(stderr,
			"perf_stamp_uri(%s) = %s (stamped %d), expected %s "
			"(stamped %d)\n",
			in, out ? out : "NULL", stamped, want, want_stamped);
		check_exit_fail();
	}
}

int main(void)
{
	uint64_t host, dev, t0;
	bool stamped;
	char small[8];

	uri("emu:", "emu:stamp=1", true);
	uri("emu:lat=nand", "emu:lat=nand,stamp=1", true);
	uri("emu:size=8M,lat=80us/20us", "emu:size=8M,lat=80us/20us,stamp=1",
	    true);
	uri("emu:stamp=1", "emu:stamp=1", true);
	uri("emu:lat=nand,stamp=on", "emu:lat=nand,stamp=on", true);
	uri("emu:stamp=true,size=8M", "emu:stamp=true,size=8M", true);
	uri("emu:stamp=0", "emu:stamp=0", false);
	uri("emu:stamp=10", "emu:stamp=10", false);
	uri("emu:lat_stamp=1", "emu:lat_stamp=1,stamp=1", true);
	uri("vfio:0000:01:00.0", "vfio:0000:01:00.0", false);
	CHECK(!perf_stamp_uri("emu:size=8M", small, sizeof(small), &stamped));

	/* submit 1000..1100, posted at 5000, callback at 5400 */
	CHECK(perf_devtime_split(1000, 1100, 5400, 5000, &host, &dev));
	CHECK_EQ(host, 400);
	CHECK_EQ(dev, 3900);
	CHECK_EQ(host + dev, 5400 - 1100);
	/* Across a 2^32 ns boundary of the clock. */
	t0 = (5ull << 32) - 300;
	CHECK(perf_devtime_split(t0, t0 + 100, t0 + 1000, (uint32_t)(t0 + 600),
				 &host, &dev));
	CHECK_EQ(host, 400);
	CHECK_EQ(dev, 500);
	/* Callback before the submit call returned (a completion thread):
	 * clat is 0, the device time too. */
	CHECK(perf_devtime_split(1000, 2000, 1500, 1200, &host, &dev));
	CHECK_EQ(host, 300);
	CHECK_EQ(dev, 0);
	/* Stamps from before the submit or after the callback: rejected. */
	CHECK(!perf_devtime_split(1000, 1100, 5400, 900, &host, &dev));
	CHECK(!perf_devtime_split(1000, 1100, 5400, 5401, &host, &dev));
	CHECK(!perf_devtime_split(1000, 1100, 5400, 0, &host, &dev));
	return T_EXIT_PASS;
}
