// SPDX-License-Identifier: MIT
/* Device URIs: which transport a URI names. */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "internal.h"
#include "transport.h"

#define ACCEPTED "emu:[key=val,...] or vfio:DDDD:BB:DD.F"

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

int nvq_transport_open(const char *uri, struct nvq_transport **t)
{
	if (!uri || !t)
		return nvq_err(-EINVAL,
			       "no device URI given (use " ACCEPTED ")");
	if (!strncmp(uri, "emu:", 4))
		return nvq_emu_transport_open(uri + 4, t);
	if (!strncmp(uri, "vfio:", 5))
		return nvq_vfio_transport_open(uri + 5, t);
	if (test_open && !strncmp(uri, "test:", 5))
		return test_open(uri + 5, t);
	return nvq_err(-EINVAL, "unknown device URI '%s' (use " ACCEPTED ")",
		       uri);
}
