// SPDX-License-Identifier: MIT
/* Device time versus host overhead; see devtime.h. */
#include <stdio.h>
#include <string.h>

#include "devtime.h"

/* Value of key "stamp" in the emu parameter list @p, or NULL. */
static const char *find_stamp(const char *p)
{
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n >= 6 && !strncmp(p, "stamp=", 6))
			return p + 6;
		if (!end)
			break;
		p = end + 1;
	}
	return NULL;
}

const char *perf_stamp_uri(const char *uri, char *buf, size_t len,
			   bool *stamped)
{
	const char *params, *v;
	int n;

	*stamped = false;
	if (strncmp(uri, "emu:", 4))
		return uri;
	params = uri + 4;
	v = find_stamp(params);
	if (v) {
		size_t vl = strcspn(v, ",");

		/* The emulator parses the value; these are its "on" words. */
		*stamped = (vl == 1 && !strncmp(v, "1", 1)) ||
			   (vl == 2 && !strncmp(v, "on", 2)) ||
			   (vl == 4 && !strncmp(v, "true", 4));
		return uri;
	}
	n = snprintf(buf, len, "%s%sstamp=1", uri, *params ? "," : "");
	if (n < 0 || (size_t)n >= len)
		return NULL;
	*stamped = true;
	return buf;
}

bool perf_devtime_split(uint64_t t0, uint64_t t1, uint64_t t2, uint32_t dw1,
			uint64_t *host, uint64_t *dev)
{
	uint64_t end = t2 > t1 ? t2 : t1;
	uint32_t h = (uint32_t)t2 - dw1;

	/* Posted no earlier than the submit call began. */
	if (t2 < t0 || h > t2 - t0)
		return false;
	*host = h;
	/* clat - host; 0 when the CQE was posted before the submit call
	 * returned (a completion thread may run the callback that early). */
	*dev = end - t1 > h ? end - t1 - h : 0;
	return true;
}
