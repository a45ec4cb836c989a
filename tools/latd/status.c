// SPDX-License-Identifier: MIT
/*
 * The status report `nvq-latd status` prints: what the daemon watches,
 * with which settings, which limits are held where right now, and the
 * QoS core's counters. Built in the daemon (the client only copies it),
 * as text or JSON (tools/json.c).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nvq/qos.h>

#include "daemon.h"
#include "json.h"
#include "qos.h"

/* What one disk's queues amount to now. */
struct disk_now {
	cpu_set_t held; /* CPUs with a limit of this disk */
	int32_t held_us; /* strictest value held, NVQ_QOS_NONE if none */
	uint64_t applies, releases, held_ns;
	int active; /* queues holding a limit */
};

struct queue_now {
	struct nvq_qos_stats st;
	cpu_set_t held;
	int32_t held_us;
	unsigned int linger; /* hysteresis: extra quiet periods */
};

static void queue_now(const struct ldisk_queue *q, struct queue_now *n)
{
	nvq_qos_queue_stats(q->qq, &n->st);
	/* Which CPUs and value: the QoS core's own record, under its lock. */
	nvq_qos_lock();
	n->held = q->qq->held;
	n->held_us = q->qq->applied ? q->qq->held_us : NVQ_QOS_NONE;
	n->linger = q->qq->linger;
	nvq_qos_unlock();
	if (n->held_us == NVQ_QOS_NONE)
		CPU_ZERO(&n->held);
}

static void disk_now(const struct ldisk *dk, struct disk_now *d)
{
	struct queue_now q;
	int i;

	memset(d, 0, sizeof(*d));
	d->held_us = NVQ_QOS_NONE;
	for (i = 0; i < dk->nr_queues; i++) {
		queue_now(&dk->queues[i], &q);
		d->applies += q.st.applies;
		d->releases += q.st.releases;
		d->held_ns += q.st.held_ns;
		if (q.held_us == NVQ_QOS_NONE)
			continue;
		d->active++;
		CPU_OR(&d->held, &d->held, &q.held);
		if (q.held_us < d->held_us)
			d->held_us = q.held_us;
	}
}

static void file_value(const struct latd *L, int cpu, char *buf, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path),
		 "%s/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us",
		 L->o.roots.sys, cpu);
	if (nvq_sysfs_read(path, buf, len) < 0)
		snprintf(buf, len, "?");
}

static void platform(const struct ldisk *dk, char *why, size_t len,
		     bool *honours)
{
	struct nvq_qos_info info;

	nvq_qos_info(dk ? dk->qc : NULL, &info);
	*honours = nvq_qos_cpuidle_honours(
		NULL, info.effective_us >= 0 ? info.effective_us : 0, why, len);
}

static const char *activity_why(const struct latd *L, bool *bpf)
{
	*bpf = L->bpf != NULL;
	return L->bpf	    ? "block:block_rq_issue" :
	       L->bpf_tried ? L->bpf_why :
			      "not tried: every disk polls, as asked";
}

/* ---- text ---- */

static void text_disk(const struct latd *L, const struct ldisk *dk, FILE *f)
{
	char lim[48], eff[48], a[256], b[256], why[256];
	struct nvq_qos_info info;
	struct disk_now now;
	struct queue_now qn;
	bool honours;
	int i;

	nvq_qos_info(dk->qc, &info);
	disk_now(dk, &now);
	fprintf(f, "%s (%u:%u, %s; from %s)\n", dk->d.name, dk->d.major,
		dk->d.minor, dk->d.driver[0] ? dk->d.driver : "unknown driver",
		dk->from);
	latd_limit_text(dk->s.limit_us, lim, sizeof(lim));
	latd_limit_text(info.effective_us, eff, sizeof(eff));
	fprintf(f, "  limit:      %s", lim);
	if (dk->s.limit_us == NVQ_QOS_AUTO)
		fprintf(f, " = %s (%s)", eff, info.reason);
	fprintf(f, ", timeout %u ms, hysteresis %s\n", dk->s.timeout_ms,
		dk->s.hysteresis ? "on" : "off");
	fprintf(f, "  activity:   %s (%s)", latd_activity_name(dk->mode),
		dk->mode_why);
	if (dk->mode == LATD_ACT_POLL)
		fprintf(f,
			", stat read every %.1f ms; submitting CPUs are "
			"not known when polling",
			(double)dk->interval_ns / 1e6);
	fprintf(f, "\n");
	latd_cpulist(&dk->d.irq_cpus, a, sizeof(a));
	latd_cpulist(&dk->d.submit_cpus, b, sizeof(b));
	fprintf(f, "  cpus:       interrupts %s, submitting %s\n",
		a[0] ? a : "none found", b[0] ? b : "none");
	fprintf(f, "  hw queues:  %d\n", dk->d.nr_hwq);
	for (i = 0; i < dk->d.nr_hwq; i++) {
		const struct latd_hwq *q = &dk->d.hwq[i];

		latd_cpulist(&q->cpus, a, sizeof(a));
		latd_cpulist(&q->irq_cpus, b, sizeof(b));
		if (q->irq >= 0)
			fprintf(f, "    hwq %d: CPUs %s, irq %d on %s\n",
				q->index, a, q->irq, b[0] ? b : "?");
		else
			fprintf(f, "    hwq %d: CPUs %s, no interrupt\n",
				q->index, a);
	}
	fprintf(f, "  queues:     %d%s\n", dk->nr_queues,
		dk->mode == LATD_ACT_BPF ?
			" (one per submitting CPU; those that saw I/O:)" :
			" (one for the disk)");
	for (i = 0; i < dk->nr_queues; i++) {
		const struct ldisk_queue *q = &dk->queues[i];

		queue_now(q, &qn);
		/* BPF: every online CPU has one, made in advance */
		if (q->cpu >= 0 && !qn.st.active && !qn.st.applies)
			continue;
		latd_cpulist(&q->cpus, a, sizeof(a));
		if (q->cpu >= 0)
			fprintf(f, "    cpu%d -> CPUs %s: ", q->cpu, a);
		else
			fprintf(f, "    disk -> CPUs %s: ", a);
		fprintf(f,
			"%s, applies %llu, releases %llu, held %.3f ms, "
			"linger %u\n",
			qn.st.active ? "active" : "idle",
			(unsigned long long)qn.st.applies,
			(unsigned long long)qn.st.releases,
			(double)qn.st.held_ns / 1e6, qn.linger);
	}
	if (now.held_us != NVQ_QOS_NONE) {
		latd_cpulist(&now.held, a, sizeof(a));
		latd_limit_text(now.held_us, b, sizeof(b));
		fprintf(f, "  state:      active: %s on CPUs %s via %s (", b, a,
			info.backend);
		for (i = 0, a[0] = '\0'; i < CPU_SETSIZE; i++) {
			if (!CPU_ISSET(i, &now.held))
				continue;
			file_value(L, i, b, sizeof(b));
			fprintf(f, "%scpu%d: %s", a[0] ? ", " : "", i, b);
			a[0] = 'x';
		}
		fprintf(f, ")\n");
	} else {
		fprintf(f, "  state:      idle\n");
	}
	fprintf(f, "  totals:     applies %llu, releases %llu, held %.3f ms\n",
		(unsigned long long)now.applies,
		(unsigned long long)now.releases, (double)now.held_ns / 1e6);
	platform(dk, why, sizeof(why), &honours);
	fprintf(f, "  platform:   %s (%s)\n",
		honours ? "the limit is honoured" :
			  "the limit is written but nothing here honours it",
		why);
	if (dk->d.note[0])
		fprintf(f, "  note:       %s\n", dk->d.note);
	if (dk->stat_err[0])
		fprintf(f, "  problem:    %s\n", dk->stat_err);
}

static void text(struct latd *L, FILE *f)
{
	struct nvq_qos_info info;
	const char *why;
	bool bpf, honours;
	char pw[256];
	int i;

	fprintf(f, "nvq-latd %s, pid %d, up %.1f s\n", NVQ_VERSION,
		(int)getpid(), (double)(nvq_now_ns() - L->started_ns) / 1e9);
	why = activity_why(L, &bpf);
	fprintf(f, "bpf:        %s (%s)\n", bpf ? "loaded" : "not used", why);
	platform(L->nr_disks ? L->disks[0] : NULL, pw, sizeof(pw), &honours);
	fprintf(f, "platform:   %s (%s)\n",
		honours ? "limits are honoured" :
			  "limits are written but nothing here honours them",
		pw);
	nvq_qos_info(NULL, &info);
	fprintf(f, "backend:    %s%s%s\n", info.backend,
		info.status[0] ? "; " : "", info.status);
	if (L->reloads)
		fprintf(f, "reloads:    %u (%u failed; last: %s)\n", L->reloads,
			L->reload_failures, L->last_reload);
	fprintf(f, "disks:      %d\n", L->nr_disks);
	for (i = 0; i < L->nr_disks; i++)
		text_disk(L, L->disks[i], f);
}

/* ---- JSON ---- */

static void json_cpus(struct json_writer *w, const char *key,
		      const cpu_set_t *set)
{
	char buf[512];

	latd_cpulist(set, buf, sizeof(buf));
	json_string(w, key, buf);
}

static void json_disk(const struct latd *L, const struct ldisk *dk,
		      struct json_writer *w)
{
	struct nvq_qos_info info;
	struct disk_now now;
	struct queue_now qn;
	char why[256], val[32];
	bool honours;
	int i;

	nvq_qos_info(dk->qc, &info);
	disk_now(dk, &now);
	json_begin_object(w, NULL);
	json_string(w, "name", dk->d.name);
	json_uint(w, "major", dk->d.major);
	json_uint(w, "minor", dk->d.minor);
	json_string(w, "driver", dk->d.driver);
	json_string(w, "from", dk->from);
	json_int(w, "cpu_lat_limit_us", dk->s.limit_us);
	json_int(w, "effective_limit_us", info.effective_us);
	json_string(w, "limit_reason", info.reason);
	json_uint(w, "cpu_lat_timeout_ms", dk->s.timeout_ms);
	json_bool(w, "hysteresis", dk->s.hysteresis);
	json_string(w, "activity", latd_activity_name(dk->mode));
	json_string(w, "activity_why", dk->mode_why);
	if (dk->mode == LATD_ACT_POLL)
		json_uint(w, "poll_interval_us", dk->interval_ns / 1000);
	json_cpus(w, "irq_cpus", &dk->d.irq_cpus);
	json_cpus(w, "submit_cpus", &dk->d.submit_cpus);
	json_cpus(w, "online_cpus", &dk->d.online);
	json_begin_array(w, "hw_queues");
	for (i = 0; i < dk->d.nr_hwq; i++) {
		const struct latd_hwq *q = &dk->d.hwq[i];

		json_begin_object(w, NULL);
		json_int(w, "index", q->index);
		json_cpus(w, "cpus", &q->cpus);
		json_int(w, "irq", q->irq);
		json_cpus(w, "irq_cpus", &q->irq_cpus);
		json_end_object(w);
	}
	json_end_array(w);
	json_begin_array(w, "queues");
	for (i = 0; i < dk->nr_queues; i++) {
		const struct ldisk_queue *q = &dk->queues[i];

		queue_now(q, &qn);
		json_begin_object(w, NULL);
		json_int(w, "cpu", q->cpu);
		json_cpus(w, "cpus", &q->cpus);
		json_bool(w, "active", qn.st.active);
		json_cpus(w, "held_cpus", &qn.held);
		if (qn.held_us == NVQ_QOS_NONE)
			json_null(w, "held_us");
		else
			json_int(w, "held_us", qn.held_us);
		json_uint(w, "applies", qn.st.applies);
		json_uint(w, "releases", qn.st.releases);
		json_uint(w, "held_ns", qn.st.held_ns);
		json_uint(w, "linger", qn.linger);
		json_end_object(w);
	}
	json_end_array(w);
	json_bool(w, "active", now.held_us != NVQ_QOS_NONE);
	if (now.held_us == NVQ_QOS_NONE) {
		json_null(w, "applied");
	} else {
		json_begin_object(w, "applied");
		json_int(w, "value_us", now.held_us);
		json_cpus(w, "cpus", &now.held);
		json_string(w, "backend", info.backend);
		json_begin_array(w, "files");
		for (i = 0; i < CPU_SETSIZE; i++) {
			if (!CPU_ISSET(i, &now.held))
				continue;
			file_value(L, i, val, sizeof(val));
			json_begin_object(w, NULL);
			json_int(w, "cpu", i);
			json_string(w, "value", val);
			json_end_object(w);
		}
		json_end_array(w);
		json_end_object(w);
	}
	json_uint(w, "applies", now.applies);
	json_uint(w, "releases", now.releases);
	json_uint(w, "held_ns", now.held_ns);
	platform(dk, why, sizeof(why), &honours);
	json_bool(w, "cpuidle_honours", honours);
	json_string(w, "platform_note", why);
	json_string(w, "note", dk->d.note);
	json_string(w, "problem", dk->stat_err);
	json_end_object(w);
}

static void json(struct latd *L, FILE *f)
{
	struct nvq_qos_info info;
	struct json_writer w;
	const char *why;
	bool bpf, honours;
	char pw[256];
	int i;

	json_init(&w, f, true);
	json_begin_object(&w, NULL);
	json_string(&w, "version", NVQ_VERSION);
	json_int(&w, "pid", getpid());
	json_fixed(&w, "uptime_s", (double)(nvq_now_ns() - L->started_ns) / 1e9,
		   3);
	json_string(&w, "socket", L->socket_path);
	why = activity_why(L, &bpf);
	json_bool(&w, "bpf", bpf);
	json_string(&w, "bpf_why", why);
	platform(L->nr_disks ? L->disks[0] : NULL, pw, sizeof(pw), &honours);
	json_bool(&w, "cpuidle_honours", honours);
	json_string(&w, "platform_note", pw);
	nvq_qos_info(NULL, &info);
	json_string(&w, "backend", info.backend);
	json_string(&w, "backend_status", info.status);
	json_uint(&w, "reloads", L->reloads);
	json_uint(&w, "reload_failures", L->reload_failures);
	json_string(&w, "last_reload", L->last_reload);
	json_begin_array(&w, "disks");
	for (i = 0; i < L->nr_disks; i++)
		json_disk(L, L->disks[i], &w);
	json_end_array(&w);
	json_end_object(&w);
	json_finish(&w);
}

void latd_status_write(struct latd *L, FILE *f, bool as_json)
{
	if (as_json)
		json(L, f);
	else
		text(L, f);
}
