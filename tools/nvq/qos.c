// SPDX-License-Identifier: MIT
/*
 * qos-restore: undo the CPU latency limits that nvq processes left in the
 * PM QoS files when they died without restoring them (SIGKILL, a crash).
 * The library does the work from the state file every nvq process keeps
 * (nvq_qos_restore_dead() in include/nvq/qos.h); limits of processes that
 * still run are left alone and listed.
 */
#include <stdio.h>
#include <stdlib.h>

#include <nvq/qos.h>

#include "cli.h"

int run_qos_restore(struct args *a);

/* More than any machine has CPUs times nvq processes on them. */
#define MAX_HOLDERS 4096

static void limit_text(int us, char *buf, size_t len)
{
	if (us == 0)
		snprintf(buf, len, "0 us (no idle)");
	else
		snprintf(buf, len, "%d us", us);
}

static void print_json(const struct nvq_qos_holder *h, int n, const char *path,
		       struct json_writer *w)
{
	static const char *const keys[2] = { "restored", "held" };

	json_begin_object(w, NULL);
	json_string(w, "state_file", path);
	for (int live = 0; live < 2; live++) {
		json_begin_array(w, keys[live]);
		for (int i = 0; i < n; i++) {
			if (h[i].live != live)
				continue;
			json_begin_object(w, NULL);
			json_int(w, "cpu", h[i].cpu);
			json_int(w, "pid", h[i].pid);
			json_int(w, "limit_us", h[i].limit_us);
			json_string(w, "value", h[i].value);
			json_end_object(w);
		}
		json_end_array(w);
	}
	json_end_object(w);
}

static void print_normal(const struct nvq_qos_holder *h, int n,
			 const char *path)
{
	char lim[32];

	printf("state file: %s\n", path);
	if (!n)
		printf("nothing to restore: no nvq process holds or left a "
		       "CPU latency limit\n");
	for (int i = 0; i < n; i++) {
		limit_text(h[i].limit_us, lim, sizeof(lim));
		if (h[i].live)
			printf("cpu%d: left alone: pid %d runs and holds %s "
			       "(the file says %s)\n",
			       h[i].cpu, h[i].pid, lim, h[i].value);
		else
			printf("cpu%d: restored to %s (pid %d died holding "
			       "%s)\n",
			       h[i].cpu, h[i].value, h[i].pid, lim);
	}
}

int run_qos_restore(struct args *a)
{
	struct nvq_qos_holder *h;
	struct json_writer w;
	char path[512];
	int n, shown, rc;

	h = calloc(MAX_HOLDERS, sizeof(*h));
	if (!h)
		return fail("out of memory");
	n = nvq_qos_restore_dead(h, MAX_HOLDERS, path, sizeof(path));
	if (n < 0) {
		free(h);
		return fail("cannot restore the CPU latency limits: %s",
			    lib_msg(n));
	}
	shown = n < MAX_HOLDERS ? n : MAX_HOLDERS;
	if (a->fmt == FMT_JSON) {
		json_init(&w, stdout, true);
		print_json(h, shown, path, &w);
		rc = finish_json(&w);
	} else {
		print_normal(h, shown, path);
		if (n > shown)
			printf("(%d more not shown)\n", n - shown);
		rc = flush_stdout();
	}
	free(h);
	return rc;
}
