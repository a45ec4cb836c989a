// SPDX-License-Identifier: MIT
/* Device URIs: which transport a URI names. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "transport.h"

#define ACCEPTED                                   \
	"emu:[key=val,...], vfio:DDDD:BB:DD.F or " \
	"tcp:HOST[:PORT],nqn=NQN[,key=val...]"

/* The "test:" scheme's constructor, set by a test (never by libnvq.so). */
static nvq_transport_open_fn test_open;

void nvq_transport_set_test(nvq_transport_open_fn open)
{
	test_open = open;
}

static __thread unsigned int idle_looks;

void nvq_transport_idle_slow(struct nvq_transport *t)
{
	unsigned int n = ++idle_looks;

	if (n % NVQ_IDLE_ASSIST_EVERY)
		return;
	if ((t->ops->assist && t->ops->assist(t) == -EBUSY) ||
	    !(n % NVQ_IDLE_YIELD_EVERY))
		sched_yield();
}

/* "/NSID": the digits @s (@n bytes) as a namespace id into *@nsid. */
static int parse_nsid(const char *s, size_t n, uint32_t *nsid)
{
	unsigned long long v = 0;
	size_t i;

	if (!n)
		return nvq_err(-EINVAL,
			       "no namespace id after the URI's '/' (expected "
			       "/NSID, NSID 1..%u)",
			       NVQ_URI_NSID_MAX);
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 10)
			break;
		v = v * 10 + (unsigned long long)(s[i] - '0');
	}
	if (i < n || !v || v > NVQ_URI_NSID_MAX)
		return nvq_err(-EINVAL,
			       "bad namespace id '%.*s' after the URI's '/' "
			       "(expected a decimal NSID, 1..%u)",
			       (int)n, s, NVQ_URI_NSID_MAX);
	*nsid = (uint32_t)v;
	return 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Where the "/NSID" of an emu: URI's @body starts and ends; NULL: none. */
static const char *emu_suffix(const char *body)
{
	const char *part = strrchr(body, ','), *slash, *eq;

	part = part ? part + 1 : body;
	slash = strchr(part, '/');
	if (!slash)
		return NULL;
	eq = memchr(part, '=', (size_t)(slash - part));
	if (!eq)
		return slash; /* no key: all of it is the suffix */
	slash = strrchr(part, '/');
	/* Not digits: the value's own '/', for the emulator to judge. */
	return !slash[1] || all_digits(slash + 1) ? slash : NULL;
}

/*
 * Where the "/NSID" of a tcp: URI's @body starts (NULL: none) and *@end
 * where it ends: right after HOST[:PORT] (before the first ','), or a
 * trailing "/DIGITS" (or a trailing '/') at the very end. A '/' with other
 * text after it in the last option is the value's own (the NQN's).
 */
static const char *tcp_suffix(const char *body, const char **end)
{
	const char *addr_end, *p = body, *slash, *last;

	if (*p == '[') {
		p = strchr(p, ']');
		if (!p)
			p = body;
	}
	addr_end = p + strcspn(p, ",");
	slash = memchr(p, '/', (size_t)(addr_end - p));
	if (slash) {
		*end = addr_end;
		return slash;
	}
	if (!*addr_end)
		return NULL;
	last = strrchr(addr_end, ',') + 1;
	slash = strrchr(last, '/');
	if (!slash || (slash[1] && !all_digits(slash + 1)))
		return NULL;
	*end = slash + strlen(slash);
	return slash;
}

int nvq_uri_split_nsid(const char *uri, char *dev, size_t len, uint32_t *nsid)
{
	const char *cut = NULL, *end = NULL;
	size_t n = uri ? strlen(uri) : 0;
	int rc;

	*nsid = 0;
	if (!uri)
		return nvq_err(-EINVAL,
			       "no device URI given (use " ACCEPTED ")");
	if (!strncmp(uri, "emu:", 4)) {
		cut = emu_suffix(uri + 4);
		end = uri + n;
	} else if (!strncmp(uri, "vfio:", 5)) {
		end = uri + 5 + strcspn(uri + 5, ",");
		cut = memchr(uri + 5, '/', (size_t)(end - uri - 5));
	} else if (!strncmp(uri, "tcp:", 4)) {
		cut = tcp_suffix(uri + 4, &end);
	}
	if (cut) {
		rc = parse_nsid(cut + 1, (size_t)(end - cut - 1), nsid);
		if (rc)
			return rc;
	}
	if (n >= len)
		return nvq_err(-ENAMETOOLONG, "device URI '%.40s...' too long",
			       uri);
	if (!cut) {
		memcpy(dev, uri, n + 1);
		return 0;
	}
	memcpy(dev, uri, (size_t)(cut - uri));
	memcpy(dev + (cut - uri), end, n - (size_t)(end - uri) + 1);
	return 0;
}

int nvq_transport_open(const char *uri, struct nvq_transport **t)
{
	if (!uri || !t)
		return nvq_err(-EINVAL,
			       "no device URI given (use " ACCEPTED ")");
	if (!strncmp(uri, "emu:", 4))
		return nvq_emu_transport_open(uri + 4, t);
	if (!strncmp(uri, "vfio:", 5))
		return nvq_vfio_transport_open(uri + 5, t);
	if (!strncmp(uri, "tcp:", 4))
		return nvq_tcp_transport_open(uri + 4, t);
	if (test_open && !strncmp(uri, "test:", 5))
		return test_open(uri + 5, t);
	return nvq_err(-EINVAL, "unknown device URI '%s' (use " ACCEPTED ")",
		       uri);
}
