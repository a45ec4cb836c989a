// SPDX-License-Identifier: MIT
/*
 * The "auto" CPU latency limit, read off the machine's cpuidle tables.
 *
 * Menu, teo and ladder skip every state whose exit latency exceeds the
 * limit, so a limit just above the shallowest state that really idles
 * keeps that cheap state and forbids the deep ones: most of the power
 * saving, little of the wake-up cost (what a PM maintainer suggested
 * instead of polling). haltpoll looks only at whether the limit is 0, so
 * there 0 is the only limit that does anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qos.h"

#define MAX_STATES 32

struct idle_state {
	char name[32];
	unsigned long latency_us;
	bool disabled;
	bool poll;
};

static int read_ulong(const char *path, unsigned long *v)
{
	long l;
	int err;

	err = nvq_sysfs_read_long(path, 10, &l);
	if (!err && l < 0)
		err = -EINVAL;
	if (!err)
		*v = (unsigned long)l;
	return err;
}

/* States of the first CPU that has any; returns how many (0: none). */
static int read_states(const char *root, struct idle_state *st, int *cpu_out)
{
	char path[512];
	unsigned long v;
	struct stat sb;
	int cpu, k, err;

	for (cpu = 0; cpu < NVQ_QOS_MAX_CPUS; cpu++) {
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d",
			 root, cpu);
		if (stat(path, &sb))
			break;
		for (k = 0; k < MAX_STATES; k++) {
			struct idle_state *s = &st[k];

			snprintf(
				path, sizeof(path),
				"%s/devices/system/cpu/cpu%d/cpuidle/state%d/name",
				root, cpu, k);
			if (nvq_sysfs_read(path, s->name, sizeof(s->name)) < 0)
				break;
			snprintf(
				path, sizeof(path),
				"%s/devices/system/cpu/cpu%d/cpuidle/state%d/latency",
				root, cpu, k);
			err = read_ulong(path, &s->latency_us);
			if (err)
				return err;
			snprintf(
				path, sizeof(path),
				"%s/devices/system/cpu/cpu%d/cpuidle/state%d/disable",
				root, cpu, k);
			s->disabled = !read_ulong(path, &v) && v;
			/* The kernel's polling loop, state0 on x86. */
			s->poll = !strcasecmp(s->name, "POLL");
		}
		if (k) {
			*cpu_out = cpu;
			return k;
		}
	}
	return 0;
}

/* The cpuidle governor's name under @root, "" if there is none. */
static void read_governor(const char *root, char *gov, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path),
		 "%s/devices/system/cpu/cpuidle/current_governor", root);
	if (nvq_sysfs_read(path, gov, len) >= 0)
		return;
	snprintf(path, sizeof(path),
		 "%s/devices/system/cpu/cpuidle/current_governor_ro", root);
	if (nvq_sysfs_read(path, gov, len) < 0)
		gov[0] = '\0';
}

static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

int nvq_qos_auto_pick(const char *root, int *limit_us, char *reason, size_t len)
{
	struct idle_state st[MAX_STATES];
	const struct idle_state *shallow = NULL;
	char gov[32] = "", r[256] = "";
	int n, i, cpu = 0, limit, blocked = 0;

	if (!root)
		root = nvq_qos_be_root();
	read_governor(root, gov, sizeof(gov));

	if (!strcmp(gov, "haltpoll")) {
		snprintf(r, sizeof(r),
			 "cpuidle governor haltpoll honours only a limit of 0 "
			 "(then it polls instead of halting): 0");
		limit = 0;
		goto out;
	}
	n = read_states(root, st, &cpu);
	if (n < 0) {
		snprintf(r, sizeof(r), "cannot read the cpuidle states: %s",
			 strerror(-n));
		limit = NVQ_QOS_OFF;
		goto out;
	}
	if (!n) {
		snprintf(r, sizeof(r),
			 "no cpuidle states: the CPUs idle without cpuidle "
			 "and no limit changes that: off");
		limit = NVQ_QOS_OFF;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (st[i].poll || st[i].disabled)
			continue;
		if (!shallow || st[i].latency_us < shallow->latency_us)
			shallow = &st[i];
	}
	if (!shallow) {
		snprintf(
			r, sizeof(r),
			"cpu%d has no enabled idle state besides polling: nothing to limit: off",
			cpu);
		limit = NVQ_QOS_OFF;
		goto out;
	}
	/* sysfs truncates exit latencies to whole us: one more keeps it. */
	limit = (int)MIN(shallow->latency_us + 1,
			 (unsigned long)NVQ_QOS_LIMIT_MAX);
	snprintf(r, sizeof(r),
		 "governor %s, cpu%d: %s (exit latency %lu us) stays allowed",
		 gov[0] ? gov : "unknown", cpu, shallow->name,
		 shallow->latency_us);
	for (i = 0; i < n; i++) {
		const struct idle_state *s = &st[i];

		if (s == shallow || s->poll || s->disabled)
			continue;
		if (s->latency_us <= (unsigned long)limit) {
			append(r, sizeof(r), ", %s (%lu us) too", s->name,
			       s->latency_us);
			continue;
		}
		append(r, sizeof(r), "%s %s (%lu us)",
		       blocked++ ? "," : "; not allowed:", s->name,
		       s->latency_us);
	}
	if (!blocked) {
		snprintf(r, sizeof(r),
			 "governor %s, cpu%d: %s (exit latency %lu us) is the "
			 "deepest enabled state: a limit changes nothing: off",
			 gov[0] ? gov : "unknown", cpu, shallow->name,
			 shallow->latency_us);
		limit = NVQ_QOS_OFF;
		goto out;
	}
	append(r, sizeof(r), ": %d us", limit);
out:
	*limit_us = limit;
	if (reason && len)
		snprintf(reason, len, "%s", r);
	return 0;
}

bool nvq_qos_cpuidle_honours(const char *root, int limit_us, char *why,
			     size_t len)
{
	struct idle_state st[MAX_STATES];
	char drv[32] = "", gov[32] = "", path[512];
	int n, cpu = 0;

	if (!root)
		root = nvq_qos_be_root();
	snprintf(path, sizeof(path),
		 "%s/devices/system/cpu/cpuidle/current_driver", root);
	if (nvq_sysfs_read(path, drv, sizeof(drv)) >= 0 &&
	    !strcmp(drv, "none")) {
		snprintf(why, len,
			 "cpuidle driver none: no idle states for a limit to "
			 "forbid");
		return false;
	}
	read_governor(root, gov, sizeof(gov));
	if (!strcmp(gov, "haltpoll")) {
		if (limit_us == 0) {
			snprintf(why, len,
				 "governor haltpoll polls instead of halting "
				 "under a limit of 0");
			return true;
		}
		snprintf(
			why, len,
			"governor haltpoll honours only a limit of 0, not %d us",
			limit_us);
		return false;
	}
	n = read_states(root, st, &cpu);
	if (n <= 0) {
		snprintf(why, len,
			 n < 0 ? "cannot read the cpuidle states" :
				 "no cpuidle states: nothing for a limit to "
				 "forbid");
		return false;
	}
	snprintf(why, len, "governor %s, %d idle states on cpu%d",
		 gov[0] ? gov : "?", n, cpu);
	return true;
}
