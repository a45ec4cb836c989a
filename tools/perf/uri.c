// SPDX-License-Identifier: MIT
/* The namespace suffix of a device URI; see uri.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "uri.h"

#define NSID_MAX 0xfffffffeull

int perf_uri_split_nsid(const char *uri, char *buf, size_t len,
			const char **open, uint32_t *nsid, char *err,
			size_t errlen)
{
	const char *slash, *p;
	unsigned long long v = 0;
	size_t n;

	*open = uri;
	*nsid = 0;
	if (strncmp(uri, "emu:", 4))
		return 0;
	slash = strrchr(uri, '/');
	if (!slash)
		return 0;
	/* Not digits: part of a parameter's value, the emulator's to judge. */
	for (p = slash + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	if (p == slash + 1) {
		snprintf(err, errlen,
			 "-d %s: no namespace id after '/' (expected /N, "
			 "N = 1..%llu)",
			 uri, NSID_MAX);
		return -EINVAL;
	}
	for (p = slash + 1; *p && v <= NSID_MAX; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	if (!v || v > NSID_MAX) {
		snprintf(err, errlen,
			 "-d %s: bad namespace id '%s' (expected 1..%llu)", uri,
			 slash + 1, NSID_MAX);
		return -EINVAL;
	}
	n = (size_t)(slash - uri);
	if (n >= len) {
		snprintf(err, errlen, "-d %s: URI too long", uri);
		return -EINVAL;
	}
	memcpy(buf, uri, n);
	buf[n] = '\0';
	*open = buf;
	*nsid = (uint32_t)v;
	return 0;
}
