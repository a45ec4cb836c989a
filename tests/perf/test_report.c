/* SPDX-License-Identifier: MIT */
/*
 * Reports from synthetic results: the JSON document parses with
 * `python3 -m json.tool` and carries fio's field names, the SVG parses
 * with python3's xml.etree and has one labelled curve per configuration,
 * the text report and the compare table have their parts, medians are
 * medians.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "compare.h"
#include "options.h"
#include "plot.h"
#include "report.h"

static char err[512];

static void fill(struct perf_result *r, const struct perf_config *cfg,
		 unsigned int ci, unsigned int round, uint64_t base)
{
	unsigned int i;

	perf_result_init(r);
	r->cfg = cfg;
	r->config_index = ci;
	r->round = round;
	snprintf(r->model, sizeof(r->model), "nvq emulated controller");
	r->nsid = 1;
	r->lba_size = 4096;
	r->ns_bytes = 1 << 30;
	r->nr_queues = 2;
	r->runtime_ns = 2000000000ull;
	r->wall_ns = 2000000000ull;
	r->usr_pct = 50;
	r->sys_pct = 3;
	for (i = 0; i < 10000; i++) {
		struct perf_dir_stats *d = &r->dir[i % 4 ? 0 : 1];

		perf_stat_add(&d->slat, 100 + i % 50);
		perf_hist_add(&d->clat, base + (i * 7919) % (base * 3));
		perf_stat_add(&d->lat, base + 100 + (i * 7919) % (base * 3));
		d->ios++;
		d->bytes += 4096;
	}
	r->bw[PERF_DIR_ALL].samples = 20;
	r->bw[PERF_DIR_ALL].min = 10e6;
	r->bw[PERF_DIR_ALL].max = 30e6;
	r->bw[PERF_DIR_ALL].mean = 20e6;
	r->bw[0] = r->bw[PERF_DIR_ALL];
	r->iops[0].samples = 20;
	r->iops[0].min = 3000;
	r->iops[0].max = 6000;
	r->iops[0].mean = 5000;
	r->have_idle = true;
	r->idle.nr_cpus = 2;
	r->idle.nr_states = 2;
	r->idle.cpu = calloc(2, sizeof(int));
	r->idle.cpu[1] = 1;
	r->idle.names = calloc(2, sizeof(*r->idle.names));
	strcpy(r->idle.names[0], "POLL");
	strcpy(r->idle.names[1], "haltpoll idle");
	r->idle.pct = calloc(4, sizeof(double));
	r->idle.avg = calloc(2, sizeof(double));
	r->idle.pct[1] = 10 * round;
	r->idle.avg[1] = 5 * round;
	/* cpu0 polled in the idle loop 20% of 2 s: 40 us per I/O */
	r->idle.pct[0] = 20;
	/* 10000 I/Os: 20 us of process CPU and 50 us of machine per I/O */
	r->have_proc_cpu = true;
	r->proc_cpu_ns = 10000ull * 20000;
	r->have_machine = true;
	r->machine_busy_ns = 10000ull * 50000;
	r->machine_total_ns = 2 * r->machine_busy_ns;
	r->machine_cpus = 2;
	r->method.requested = NVQ_QOS_METHOD_POLL;
	r->method.method = NVQ_QOS_METHOD_POLL;
	snprintf(r->method.why, sizeof(r->method.why), "as asked");
	r->method.wake.p50_ns = 12000;
	r->method.wake.p99_ns = 70000;
	r->method.wake.samples = 300;
	snprintf(r->method.wake.source, sizeof(r->method.wake.source), "env");
	r->nr_qos = 1;
	r->qosq = calloc(1, sizeof(*r->qosq));
	r->qosq[0].qid = 1;
	r->qosq[0].applies = 1;
	r->qosq[0].poll.polls = 1234;
	r->qosq[0].poll.poll_ns = 5000000;
	r->qosq[0].poll.est_ns = 300;
	r->qos_span_ns = 2000000000ull;
}

/* Emulator stamps: host overhead ~900 ns, 2 % of it ~99 us. */
static void stamp(struct perf_result *r)
{
	unsigned int i;

	r->stamped = true;
	for (i = 0; i < 10000; i++)
		perf_hist_add(&r->dir[i % 4 ? 0 : 1].host,
			      i % 50 ? 913 : 99100);
}

static int run_python(const char *code, const char *path)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "python3 -c '%s' '%s'", code, path);
	return system(cmd);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[1 << 20];
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const char *json_check =
	"import json,sys\n"
	"d=json.load(open(sys.argv[1]))\n"
	"jobs=d[\"jobs\"]\n"
	"assert len(jobs)==int(sys.argv[2] if len(sys.argv)>2 else len(jobs))\n"
	"for j in jobs:\n"
	"  for k in (\"jobname\",\"job options\",\"read\",\"write\",\"usr_cpu\",\"sys_cpu\"):\n"
	"    assert k in j, k\n"
	"  r=j[\"read\"]\n"
	"  for k in (\"io_bytes\",\"bw_bytes\",\"iops\",\"runtime\",\"bw\",\"total_ios\"):\n"
	"    assert k in r, k\n"
	"  for l in (\"slat_ns\",\"clat_ns\",\"lat_ns\"):\n"
	"    for k in (\"min\",\"max\",\"mean\",\"stddev\",\"N\"):\n"
	"      assert k in r[l], (l,k)\n"
	/* as fio by default: percentiles of clat only */
	"  assert \"percentile\" not in r[\"slat_ns\"] and \"percentile\" not in r[\"lat_ns\"]\n"
	"  p=r[\"clat_ns\"][\"percentile\"]\n"
	"  for k in (\"1.000000\",\"50.000000\",\"99.000000\",\"99.900000\",\"99.990000\"):\n"
	"    assert k in p, k\n"
	"  assert r[\"io_bytes\"]==7500*4096, r[\"io_bytes\"]\n"
	"  assert r[\"runtime\"]==2000\n"
	"  assert abs(r[\"iops\"]-3750)<1e-6\n"
	"  c=r[\"clat_ns\"]\n"
	"  assert c[\"min\"]<=c[\"percentile\"][\"50.000000\"]<=c[\"max\"]\n"
	"  assert j[\"cpuidle\"][\"mean\"][\"haltpoll idle\"]>0\n"
	"  c=j[\"cpu_per_io_ns\"]\n"
	"  assert c==dict(process=20000,machine=50000,idle_poll=40000), c\n"
	"  q=j[\"cpu_lat\"]\n"
	"  assert q[\"method\"]==\"poll\" and q[\"method_requested\"]==\"poll\"\n"
	"  assert q[\"wake\"][\"p99_ns\"]==70000\n"
	"  assert q[\"wake\"][\"source\"]==\"env\"\n"
	"  assert q[\"poll\"][\"polls\"]==1234 and q[\"poll\"][\"est_ns\"]==300\n"
	"  assert q[\"queues\"][0][\"poll\"][\"poll_ns\"]==5000000\n"
	"  assert j[\"nvq\"][\"machine_cpu\"][\"cpus\"]==2\n"
	"if \"compare\" in d:\n"
	"  for c in d[\"compare\"][\"configs\"]:\n"
	"    assert c[\"median\"][\"clat_p99_ns\"]>0\n"
	"    assert \"haltpoll idle\" in c[\"median\"][\"cpuidle\"]\n"
	"    assert c[\"cpu_lat_method\"]==\"poll\"\n"
	"    m=c[\"median\"]\n"
	"    assert m[\"cpu_per_io_ns\"]==dict(process=20000,machine=50000)\n"
	"    assert m[\"cpu_lat_polls\"]==1234\n"
	/* A (emu) is stamped, B is not: no host overhead where unmeasured */
	"    if c[\"name\"]==\"A\":\n"
	"      h=m[\"host_overhead_ns\"]\n"
	"      assert set(h)=={\"p50\",\"p99\"}, h\n"
	"      assert 0<h[\"p50\"]<h[\"p99\"]<m[\"clat_p50_ns\"], h\n"
	"    else:\n"
	"      assert \"host_overhead_ns\" not in m, m\n";

/* What was not measured is not printed. */
static const char *json_unmeasured =
	"import json,sys\n"
	"j=json.load(open(sys.argv[1]))[\"jobs\"][0]\n"
	"assert j[\"cpu_per_io_ns\"]==dict(process=20000), j[\"cpu_per_io_ns\"]\n"
	"assert \"machine_cpu\" not in j[\"nvq\"]\n"
	"q=j[\"cpu_lat\"]\n"
	"assert \"wake\" not in q and \"poll\" not in q, q\n";

static const char *svg_check =
	"import sys,xml.etree.ElementTree as E\n"
	"t=E.parse(sys.argv[1]).getroot()\n"
	"ns=\"{http://www.w3.org/2000/svg}\"\n"
	"assert t.tag==ns+\"svg\", t.tag\n"
	"assert len(t.findall(\".//\"+ns+\"polyline\"))==2\n"
	"txt=\" \".join(x.text or \"\" for x in t.iter(ns+\"text\"))\n"
	"assert \"A: --mode poll <&>\" in txt, txt\n"
	"assert \"B: --mode wait\" in txt\n"
	"assert \"100us\" in txt and \"1ms\" in txt and \"%\" in txt\n";

static void json_python(const char *path, unsigned int jobs)
{
	char cmd[4096];
	FILE *f;

	/* json.tool first: the acceptance criterion of the issue. */
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool '%s' >/dev/null",
		 path);
	CHECK(system(cmd) == 0);
	f = fopen("/tmp/nvq-perf-json-check.py", "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(json_check, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "python3 /tmp/nvq-perf-json-check.py '%s' %u", path, jobs);
	CHECK(system(cmd) == 0);
	unlink("/tmp/nvq-perf-json-check.py");
}

int main(void)
{
	char *argv[] = {
		"nvq-perf", "--compare", "--mode poll -d 'emu:<&>';--mode wait",
		"--rounds", "3",	 NULL
	};
	char *argv1[] = { "nvq-perf", NULL };
	struct perf_result res[6];
	struct perf_opts o, o1;
	struct perf_curve curves[2];
	struct perf_row rows[4], med;
	char path[256], *text;
	double v[4] = { 4, 1, 3, 2 };
	unsigned int i;
	FILE *f;

	CHECK(perf_opts_parse(&o, 5, argv, err, sizeof(err)) == 0);
	CHECK(perf_opts_parse(&o1, 1, argv1, err, sizeof(err)) == 0);
	for (i = 0; i < 6; i++)
		fill(&res[i], &o.configs[i % 2], i % 2, i / 2 + 1,
		     i % 2 ? 500000 : 50000);
	/* A runs on emu: (stamped), B has no stamps (as on vfio) */
	for (i = 0; i < 6; i += 2)
		stamp(&res[i]);

	/* Single-run JSON and text. */
	res[0].cfg = &o1.configs[0];
	snprintf(path, sizeof(path), "/tmp/nvq-perf-report.%d.json", getpid());
	f = fopen(path, "w");
	CHECK(f && perf_report_json(f, &o1, res, 1) == 0);
	fclose(f);
	json_python(path, 1);
	text = slurp(path);
	CHECK(text && strstr(text, "\"fio version\""));

	f = fopen(path, "w");
	perf_report_text(f, &res[0]);
	fclose(f);
	text = slurp(path);
	CHECK(text && strstr(text, "read: IOPS=3750"));
	CHECK(text && strstr(text, "write: IOPS="));
	CHECK(text && strstr(text, "clat percentiles (usec)"));
	CHECK(text && strstr(text, "99.99th=["));
	CHECK(text && strstr(text, "slat (nsec): min=100, max=149"));
	/* the clat split: whole ns as integers, no ".00" */
	CHECK(text && strstr(text, "host (nsec): p50=913, p99=99"));
	CHECK(text && !strstr(text, "913.00"));
	/* fio's percentile units: values >= 2 us and above 99999 ns: usec,
	 * no 9-digit nanoseconds */
	CHECK(text && !strstr(text, "percentiles (nsec)"));
	CHECK(text && strstr(text, "haltpoll idle="));
	CHECK(text && strstr(text, "cpu1: "));
	CHECK(text && strstr(text, "cpu/io       : process 20us, machine "
				   "50us (2 CPUs 50.0% busy"));
	CHECK(text && strstr(text, "idle-loop polling 40us"));
	/* limit off: no method lines */
	CHECK(text && strstr(text, "cpu-lat      : off\n"));

	o1.configs[0].cpu_lat_limit_us = 0;
	f = fopen(path, "w");
	perf_report_text(f, &res[0]);
	fclose(f);
	text = slurp(path);
	CHECK(text && strstr(text, "method poll (requested poll): as asked"));
	CHECK(text && strstr(text, "wake-up cost: p50 12us, p99 70us "
				   "(env, 300 samples)"));
	CHECK(text && strstr(text, "waiters: polls=1234 (5ms)"));

	/* Nothing unmeasured in the text or the JSON. */
	res[0].have_machine = false;
	res[0].have_idle = false;
	res[0].method.wake.samples = 0;
	res[0].nr_qos = 0;
	f = fopen(path, "w");
	perf_report_text(f, &res[0]);
	fclose(f);
	text = slurp(path);
	CHECK(text && strstr(text, "cpu/io       : process 20us\n"));
	CHECK(text && !strstr(text, "wake-up cost") &&
	      !strstr(text, "waiters"));
	f = fopen(path, "w");
	CHECK(f && perf_report_json(f, &o1, res, 1) == 0);
	fclose(f);
	CHECK(run_python(json_unmeasured, path) == 0);
	/* no I/O, no per-I/O figures */
	res[0].dir[0].ios = res[0].dir[1].ios = 0;
	f = fopen(path, "w");
	perf_report_text(f, &res[0]);
	fclose(f);
	text = slurp(path);
	CHECK(text && !strstr(text, "cpu/io"));
	perf_result_free(&res[0]);
	fill(&res[0], &o.configs[0], 0, 1, 50000);
	stamp(&res[0]);

	/* Compare JSON and table. */
	f = fopen(path, "w");
	CHECK(f && perf_report_json(f, &o, res, 6) == 0);
	fclose(f);
	json_python(path, 6);
	f = fopen(path, "w");
	perf_compare_print(f, &o, res, 6);
	fclose(f);
	text = slurp(path);
	CHECK(text && strstr(text, "A: --mode poll -d 'emu:<&>'"));
	CHECK(text && strstr(text, "haltpoll idle%"));
	CHECK(text && strstr(text, "A      median"));
	CHECK(text && strstr(text, "B      median"));
	CHECK(text && strstr(text, "pcpu/io mcpu/io"));
	CHECK(text && strstr(text, "  20.00   50.00"));
	CHECK(text && strstr(text, "off/poll") == NULL);
	CHECK(text && strstr(text, "cpu-lat/method"));
	/* host overhead: A (emu, stamped) has it, B (no stamps) shows - */
	CHECK(text && strstr(text, "    p99.9  host p50  host p99   usr%"));
	CHECK(text && strstr(text, "\nA      1 ") &&
	      strstr(strstr(text, "\nA      1 "),
		     "     913ns    99.1us   50.0"));
	CHECK(text && strstr(text, "\nA      median ") &&
	      strstr(strstr(text, "\nA      median "),
		     "     913ns    99.1us   50.0"));
	CHECK(text && strstr(text, "\nB      median ") &&
	      strstr(strstr(text, "\nB      median "),
		     "1.99ms         -         -   50.0"));
	CHECK(text && strstr(text, "\nhost p50/p99: "));
	unlink(path);

	/* Medians. */
	CHECK(perf_median(v, 4) == 2.5);
	CHECK(perf_median(v, 3) == 2); /* of the sorted 1 2 3 */
	for (i = 0; i < 3; i++)
		perf_row_from_result(&res[2 * i], res[0].idle.names, 2,
				     &rows[i]);
	perf_row_median(rows, 3, &med);
	CHECK(fabs(med.idle[1] - 10) < 1e-9); /* rounds 1 2 3: 5 10 15 */
	CHECK(fabs(med.iops - 5000) < 1e-6);
	CHECK(med.clat_max == rows[0].clat_max);
	CHECK(med.host_p50 == 913 && fabs(med.host_p99 - 99100) < 400);
	/* host overhead: the median of the stamped runs, -1 when none */
	rows[0].host_p50 = rows[0].host_p99 = -1;
	rows[1].host_p50 = 2000;
	perf_row_median(rows, 3, &med);
	CHECK(med.host_p50 == (913 + 2000) / 2.0);
	perf_row_from_result(&res[1], res[0].idle.names, 2, &rows[0]);
	CHECK(rows[0].host_p50 == -1 && rows[0].host_p99 == -1);
	perf_row_median(rows, 1, &med);
	CHECK(med.host_p50 == -1 && med.host_p99 == -1);

	/* SVG: one curve per configuration, labels escaped. */
	snprintf(path, sizeof(path), "/tmp/nvq-perf-plot.%d.svg", getpid());
	curves[0].label = "A: --mode poll <&>";
	curves[0].h = &res[0].dir[0].clat;
	curves[1].label = "B: --mode wait";
	curves[1].h = &res[1].dir[0].clat;
	CHECK(perf_plot_svg(path, curves, 2, "test \"plot\"", err,
			    sizeof(err)) == 0);
	CHECK(run_python(svg_check, path) == 0);
	unlink(path);
	CHECK(perf_plot_svg("/nonexistent-dir/x.svg", curves, 2, "t", err,
			    sizeof(err)) < 0);
	CHECK(strstr(err, "--plot") != NULL);

	for (i = 0; i < 6; i++)
		perf_result_free(&res[i]);
	perf_opts_free(&o);
	perf_opts_free(&o1);
	return T_EXIT_PASS;
}
