// SPDX-License-Identifier: MIT
/*
 * Opening the controller a command names and finding its namespace, with
 * the messages that tell a user what to give instead.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <pthread.h>

#include "cli.h"

static struct args *cmd_args;

void set_cmd_args(struct args *a)
{
	cmd_args = a;
}

/*
 * -n and the URI's /NSID (nvq_ctrl_uri_nsid(): the library read it and
 * checked that it is active): one may stand for the other, both must
 * agree.
 */
static int uri_nsid(const char *uri, struct nvq_ctrl *ctrl)
{
	struct args *a = cmd_args;
	uint32_t n = nvq_ctrl_uri_nsid(ctrl);
	char ex[32] = "";

	if (!a || !a->npos || strcmp(uri, a->pos[0]) ||
	    !(a->cmd->opts & OPT_NSID))
		return 0;
	if (n && a->has_nsid && a->nsid != n) {
		snprintf(ex, sizeof(ex), a->nsid == NVQ_NSID_ALL ? "%#x" : "%u",
			 a->nsid);
		return usage_error(
			a->cmd,
			"-n %s and the URI's /%u (%s) name different "
			"namespaces: give one of them, or the same",
			ex, n, uri);
	}
	if (n && !a->has_nsid) {
		a->nsid = n;
		a->has_nsid = true;
	}
	if (a->need_nsid && !a->has_nsid)
		return usage_error(a->cmd,
				   "missing -n/--namespace-id (or a /NSID at "
				   "the end of the URI)");
	return 0;
}

/* nvq_open() for one command at a time: 0 or its negative errno. */
static int open_quiet(const char *uri, enum nvq_mode mode, unsigned int io_ms,
		      unsigned int admin_ms, struct nvq_ctrl **ctrl)
{
	sigset_t block, old;
	struct nvq_opts o;
	int ret;

	nvq_opts_init(&o);
	o.nr_queues = 1; /* one command at a time: one queue is plenty */
	o.mode = mode;
	o.io_timeout_ms = io_ms;
	o.admin_timeout_ms = admin_ms;

	/* Threads the library starts inherit this mask: signals stay with us */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	ret = nvq_open(uri, &o, ctrl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int try_open_ctrl(const char *uri, struct nvq_ctrl **ctrl)
{
	return open_quiet(uri, NVQ_MODE_POLL, 0, 0, ctrl);
}

static int open_mode(const char *uri, enum nvq_mode mode, unsigned int io_ms,
		     unsigned int admin_ms, struct nvq_ctrl **ctrl)
{
	const char *msg;
	int ret;

	ret = open_quiet(uri, mode, io_ms, admin_ms, ctrl);
	if (!ret) {
		ret = uri_nsid(uri, *ctrl);
		if (ret) {
			nvq_close(*ctrl);
			*ctrl = NULL;
		}
		return ret;
	}
	msg = lib_msg(ret);
	fail("cannot open '%s': %s", uri, msg);
	/* unless the library's message already said what a URI looks like */
	if (strncmp(uri, "emu:", 4) && strncmp(uri, "vfio:", 5) &&
	    !strstr(msg, "emu:"))
		fprintf(stderr, "nvq: a URI is %s\n", URI_FORMS);
	return EXIT_FAIL;
}

int open_ctrl(const char *uri, struct nvq_ctrl **ctrl)
{
	return open_mode(uri, NVQ_MODE_POLL, 0, 0, ctrl);
}

int open_ctrl_io(const struct args *a, struct nvq_ctrl **ctrl)
{
	return open_mode(a->pos[0], NVQ_MODE_WAIT, a->io_timeout_ms,
			 a->admin_timeout_ms, ctrl);
}

int get_ns(struct nvq_ctrl *ctrl, uint32_t nsid, struct nvq_ns_info *ns)
{
	uint32_t ids[16];
	char list[16 * 12 + 8]; /* 16 times ", 4294967295", then ", ..." */
	size_t len = 0;
	int ret, n;

	ret = nvq_ns_info(ctrl, nsid, ns);
	if (!ret) {
		if (!ns->lba_size || !ns->id)
			return fail("namespace %u: the driver reports no "
				    "LBA size",
				    nsid);
		return 0;
	}
	if (ret != -ENOENT) {
		const char *m = lib_msg(ret);

		/* the library's message may name the namespace itself */
		if (!strncmp(m, "namespace ", 10))
			return fail("%s", m);
		return fail("namespace %u: %s", nsid, m);
	}

	n = nvq_ns_list(ctrl, ids, ARRAY_SIZE(ids));
	list[0] = '\0';
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(ids); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u",
					i ? ", " : "", ids[i]);
	if (n > (int)ARRAY_SIZE(ids))
		snprintf(list + len, sizeof(list) - len, ", ...");
	return fail("namespace %u is not active on %s (active: %s)", nsid,
		    nvq_ctrl_uri(ctrl), n > 0 ? list : "none");
}

/*
 * reset URI: a Controller Level Reset through the driver (nvme-cli's
 * reset). A bare PCI address is what 'nvq release' takes: say so.
 */
int run_reset(struct args *a)
{
	const char *uri = a->pos[0];
	unsigned int d, b, dv, f;
	struct nvq_ctrl *ctrl;
	int rc, n = -1;

	if (!strchr(uri, ':') ||
	    (sscanf(uri, "%x:%x:%x.%x%n", &d, &b, &dv, &f, &n) == 4 &&
	     n == (int)strlen(uri)) ||
	    (sscanf(uri, "%x:%x.%x%n", &b, &dv, &f, &n) == 3 &&
	     n == (int)strlen(uri)))
		return usage_error(
			a->cmd,
			"takes a device URI (vfio:%s, emu:); to "
			"give the PCI function %s back to the kernel's "
			"nvme driver use 'nvq release %s'",
			uri, uri, uri);
	rc = open_ctrl(uri, &ctrl);
	if (rc)
		return rc;
	rc = nvq_ctrl_reset(ctrl);
	if (rc)
		rc = fail("%s: controller reset failed: %s", uri, lib_msg(rc));
	else
		printf("%s: controller reset: disabled (CC.EN=0), enabled "
		       "again and its queues created again\n",
		       uri);
	nvq_close(ctrl);
	return rc;
}
