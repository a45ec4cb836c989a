// SPDX-License-Identifier: MIT
/*
 * stats: what the controller's failure path did (nvq_ctrl_stats()) and
 * the command timeouts in force (nvq_ctrl_timeouts()), as "key : value"
 * lines or JSON. The counters belong to the controller as this process
 * opened it: they say what recovery bring-up needed, and they are the
 * names and units nvq-perf's "recovery" section and the fio engine report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct counter {
	const char *name;
	uint64_t value;
};

static int show_stats(const struct args *a, const struct nvq_ctrl_stats *st,
		      unsigned int io_ms, unsigned int admin_ms)
{
	const struct counter c[] = {
		{ "timeouts", st->timeouts },
		{ "lost_interrupts", st->lost_interrupts },
		{ "aborts", st->aborts },
		{ "resets", st->resets },
		{ "retries", st->retries },
		{ "failed", st->failed },
		{ "bad_cqes", st->bad_cqes },
		{ "gone", st->gone },
		{ "io_timeout_ms", io_ms },
		{ "admin_timeout_ms", admin_ms },
	};
	struct json_writer w;

	if (a->fmt != FMT_JSON) {
		for (size_t i = 0; i < ARRAY_SIZE(c); i++)
			printf("%-16s : %" PRIu64 "\n", c[i].name, c[i].value);
		return flush_stdout();
	}
	json_init(&w, stdout, true);
	json_begin_object(&w, NULL);
	json_string(&w, "uri", a->pos[0]);
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		if (!strcmp(c[i].name, "gone"))
			json_bool(&w, c[i].name, c[i].value);
		else
			json_uint(&w, c[i].name, c[i].value);
	}
	json_end_object(&w);
	return finish_json(&w);
}

int run_stats(struct args *a)
{
	struct nvq_ctrl *ctrl;
	struct nvq_ctrl_stats st;
	unsigned int io_ms = 0, admin_ms = 0;
	int rc, ret;

	rc = open_ctrl_io(a, &ctrl);
	if (rc)
		return rc;
	ret = nvq_ctrl_stats(ctrl, &st);
	if (!ret)
		ret = nvq_ctrl_timeouts(ctrl, &io_ms, &admin_ms);
	if (ret)
		rc = fail("%s: cannot read the counters: %s", a->pos[0],
			  lib_msg(ret));
	nvq_close(ctrl);
	return rc ? rc : show_stats(a, &st, io_ms, admin_ms);
}
