/* SPDX-License-Identifier: MIT */
/* --compare tables and medians. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "format.h"

char perf_config_letter(unsigned int i)
{
	return (char)('A' + i % 26);
}

void perf_row_from_result(const struct perf_result *r,
			  char (*names)[PERF_IDLE_NAME], unsigned int nr_names,
			  struct perf_row *row)
{
	struct perf_dir_stats all;
	unsigned int d, k, s;
	uint64_t bytes = 0, ios = 0;
	double secs = (double)r->runtime_ns / 1e9;

	memset(row, 0, sizeof(*row));
	perf_dir_stats_init(&all);
	for (d = 0; d < PERF_NR_DIRS; d++) {
		perf_result_merge_dirs(&all, &r->dir[d]);
		bytes += r->dir[d].bytes;
		ios += r->dir[d].ios;
	}
	if (secs > 0) {
		row->iops = (double)ios / secs;
		row->bw_avg = (double)bytes / secs / 1048576.0;
	}
	/* min-avg-max of the same samples, when there are any */
	if (r->bw[PERF_DIR_ALL].samples)
		row->bw_avg = r->bw[PERF_DIR_ALL].mean / 1048576.0;
	row->bw_min = r->bw[PERF_DIR_ALL].min / 1048576.0;
	row->bw_max = r->bw[PERF_DIR_ALL].max / 1048576.0;
	row->slat_max = (double)all.slat.max;
	row->clat_max = (double)all.clat.max;
	row->lat_max = (double)all.lat.max;
	row->clat_p50 = (double)perf_hist_percentile(&all.clat, 50);
	row->clat_p99 = (double)perf_hist_percentile(&all.clat, 99);
	row->clat_p999 = (double)perf_hist_percentile(&all.clat, 99.9);
	if (r->stamped && all.host.n) {
		row->host_p50 = (double)perf_hist_percentile(&all.host, 50);
		row->host_p99 = (double)perf_hist_percentile(&all.host, 99);
	} else {
		row->host_p50 = row->host_p99 = -1;
	}
	row->usr = r->usr_pct;
	row->sys = r->sys_pct;
	if (!perf_result_cpu_per_io(r, PERF_CPU_PROCESS, &row->cpu_io_proc))
		row->cpu_io_proc = -1;
	if (!perf_result_cpu_per_io(r, PERF_CPU_MACHINE, &row->cpu_io_mach))
		row->cpu_io_mach = -1;
	row->nr_idle = nr_names < PERF_ROW_MAX_IDLE ? nr_names :
						      PERF_ROW_MAX_IDLE;
	for (k = 0; k < row->nr_idle; k++) {
		if (!r->have_idle)
			continue;
		for (s = 0; s < r->idle.nr_states; s++) {
			if (strcmp(r->idle.names[s], names[k]))
				continue;
			row->idle[k] = r->idle.avg[s];
			row->cpl_idle[k] =
				fmax(0, perf_result_cpu_idle(r, r->cpl_cpu, s));
		}
	}
	for (k = 0; k < r->nr_qos; k++) {
		row->qos_polls += (double)r->qosq[k].poll.polls;
		row->qos_applies += (double)r->qosq[k].applies;
		row->qos_releases += (double)r->qosq[k].releases;
		if (r->qos_span_ns)
			row->qos_held += (double)r->qosq[k].held_ns * 100.0 /
					 (double)r->qos_span_ns / r->nr_qos;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double perf_median(double *v, unsigned int n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void perf_row_median(const struct perf_row *rows, unsigned int n,
		     struct perf_row *out)
{
	/* A row is an array of doubles plus nr_idle; take each field. */
#define MED(field)                              \
	do {                                    \
		for (i = 0; i < n; i++)         \
			v[i] = rows[i].field;   \
		out->field = perf_median(v, n); \
	} while (0)
	/* Of the rows that have the field (>= 0); -1 when none has. */
#define MED_MEASURED(field)                              \
	do {                                             \
		unsigned int m = 0;                      \
		for (i = 0; i < n; i++)                  \
			if (rows[i].field >= 0)          \
				v[m++] = rows[i].field;  \
		out->field = m ? perf_median(v, m) : -1; \
	} while (0)
	double *v;
	unsigned int i, k;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	v = calloc(n, sizeof(*v));
	if (!v)
		return;
	MED(iops);
	MED(bw_min);
	MED(bw_avg);
	MED(bw_max);
	MED(slat_max);
	MED(clat_max);
	MED(lat_max);
	MED(clat_p50);
	MED(clat_p99);
	MED(clat_p999);
	MED_MEASURED(host_p50);
	MED_MEASURED(host_p99);
	MED(usr);
	MED(sys);
	MED_MEASURED(cpu_io_proc);
	MED_MEASURED(cpu_io_mach);
	MED(qos_applies);
	MED(qos_releases);
	MED(qos_held);
	MED(qos_polls);
	out->nr_idle = rows[0].nr_idle;
	for (k = 0; k < out->nr_idle; k++) {
		MED(idle[k]);
		MED(cpl_idle[k]);
	}
	free(v);
#undef MED
#undef MED_MEASURED
}

unsigned int perf_compare_idle_names(const struct perf_result *res,
				     unsigned int nres,
				     char (**names)[PERF_IDLE_NAME])
{
	unsigned int i;

	for (i = 0; i < nres; i++) {
		if (res[i].have_idle) {
			*names = res[i].idle.names;
			return res[i].idle.nr_states < PERF_ROW_MAX_IDLE ?
				       res[i].idle.nr_states :
				       PERF_ROW_MAX_IDLE;
		}
	}
	*names = NULL;
	return 0;
}

/* Idle columns are as wide as their state name, at least 8. */
static int idle_width(char (*names)[PERF_IDLE_NAME], unsigned int k)
{
	int w = (int)strlen(names[k]) + 1;

	return w < 8 ? 8 : w;
}

/* A latency in a column of @width, "-" when not measured (< 0). */
static void ns_cell(FILE *f, int width, double ns)
{
	char buf[16];

	fprintf(f, " %*s", width,
		ns < 0 ? "-" : perf_fmt_ns(buf, sizeof(buf), ns));
}

/* CPU us per I/O in a column of @width, "-" when not measured. */
static void cpu_io_cell(FILE *f, int width, double ns)
{
	if (ns < 0)
		fprintf(f, " %*s", width, "-");
	else
		fprintf(f, " %*.2f", width, ns / 1000.0);
}

static void print_row(FILE *f, const char *cfg, const char *round,
		      const struct perf_row *r, char (*names)[PERF_IDLE_NAME])
{
	char iops[16], s[16], c[16], l[16], p50[16], p99[16], p999[16];
	char bw[48];
	unsigned int k;

	snprintf(bw, sizeof(bw), "%.0f-%.0f-%.0f", r->bw_min, r->bw_avg,
		 r->bw_max);
	fprintf(f, "%-6s %-6s %8s %20s %9s %9s %9s %9s %9s %9s", cfg, round,
		perf_fmt_count(iops, sizeof(iops), r->iops), bw,
		perf_fmt_ns(s, sizeof(s), r->slat_max),
		perf_fmt_ns(c, sizeof(c), r->clat_max),
		perf_fmt_ns(l, sizeof(l), r->lat_max),
		perf_fmt_ns(p50, sizeof(p50), r->clat_p50),
		perf_fmt_ns(p99, sizeof(p99), r->clat_p99),
		perf_fmt_ns(p999, sizeof(p999), r->clat_p999));
	ns_cell(f, 9, r->host_p50);
	ns_cell(f, 9, r->host_p99);
	fprintf(f, " %6.1f %6.1f", r->usr, r->sys);
	cpu_io_cell(f, 7, r->cpu_io_proc);
	cpu_io_cell(f, 7, r->cpu_io_mach);
	for (k = 0; k < r->nr_idle; k++)
		fprintf(f, " %*.1f", idle_width(names, k), r->idle[k]);
	fputc('\n', f);
}

/*
 * "off", "auto=0/poll", "50/cpuidle": the limit of @r as set and, for
 * auto, taken, and the method that honoured it.
 */
static const char *cpu_lat_cell(const struct perf_result *r, char *buf,
				size_t len)
{
	const char *m = nvq_qos_method_name(r->method.method);
	char lim[16];

	perf_cpu_lat_name(r->cfg->cpu_lat_limit_us, lim, sizeof(lim));
	if (r->cfg->cpu_lat_limit_us == NVQ_QOS_OFF)
		snprintf(buf, len, "%s", lim);
	else if (r->cfg->cpu_lat_limit_us == NVQ_QOS_AUTO &&
		 r->qos.effective_us >= 0)
		snprintf(buf, len, "auto=%d/%s", r->qos.effective_us, m);
	else if (r->method.method == NVQ_QOS_METHOD_CPUIDLE && r->qos.status[0])
		snprintf(buf, len, "%s(n/a)/%s", lim, m); /* could not apply */
	else
		snprintf(buf, len, "%s/%s", lim, m);
	return buf;
}

static void print_cpl_row(FILE *f, const char *cfg, const char *round,
			  const char *lat, const char *cpu,
			  const struct perf_row *r,
			  char (*names)[PERF_IDLE_NAME], unsigned int nn)
{
	unsigned int k;

	fprintf(f, "%-6s %-6s %-16s %4s", cfg, round, lat, cpu);
	for (k = 0; k < nn; k++)
		fprintf(f, " %*.1f", idle_width(names, k), r->cpl_idle[k]);
	fprintf(f, " %8.0f %8.0f %6.1f %9.0f\n", r->qos_applies,
		r->qos_releases, r->qos_held, r->qos_polls);
}

/*
 * The second table: CPU latency QoS per run and the idle residency of
 * the CPU that ran the completions, where a deep idle state costs.
 */
static void print_cpl_table(FILE *f, const struct perf_opts *o,
			    const struct perf_result *res, unsigned int nres,
			    const struct perf_row *rows,
			    char (*names)[PERF_IDLE_NAME], unsigned int nn)
{
	char cfgname[8], round[16], lat[24], cpu[16];
	struct perf_row *sel, med;
	unsigned int i, c, k, n;

	sel = calloc(nres ? nres : 1, sizeof(*sel));
	if (!sel)
		return;
	fprintf(f, "\n%-6s %-6s %-16s %4s", "config", "round", "cpu-lat/method",
		"ccpu");
	for (k = 0; k < nn; k++) {
		char h[PERF_IDLE_NAME + 2];

		snprintf(h, sizeof(h), "%s%%", names[k]);
		fprintf(f, " %*s", idle_width(names, k), h);
	}
	fprintf(f, " %8s %8s %6s %9s\n", "applied", "released", "held%",
		"polls");
	for (i = 0; i < nres; i++) {
		snprintf(cfgname, sizeof(cfgname), "%c",
			 perf_config_letter(res[i].config_index));
		snprintf(round, sizeof(round), "%u", res[i].round);
		snprintf(cpu, sizeof(cpu), "%d", res[i].cpl_cpu);
		print_cpl_row(f, cfgname, round,
			      cpu_lat_cell(&res[i], lat, sizeof(lat)), cpu,
			      &rows[i], names, nn);
	}
	for (c = 0; c < o->nr_configs; c++) {
		const struct perf_result *first = NULL;

		for (i = 0, n = 0; i < nres; i++) {
			if (res[i].config_index != c)
				continue;
			if (!first)
				first = &res[i];
			sel[n++] = rows[i];
		}
		if (!n)
			continue;
		perf_row_median(sel, n, &med);
		snprintf(cfgname, sizeof(cfgname), "%c", perf_config_letter(c));
		print_cpl_row(f, cfgname, "median",
			      cpu_lat_cell(first, lat, sizeof(lat)), "-", &med,
			      names, nn);
	}
	fprintf(f,
		"\nccpu: the CPU that ran most completion callbacks, with its "
		"cpuidle residency;\napplied/released/held%%: CPU latency "
		"limit of the job queues (held: %% of the run);\npolls: "
		"waits that polled the CQ for the limit (poll, hybrid)\n");
	free(sel);
}

void perf_compare_print(FILE *f, const struct perf_opts *o,
			const struct perf_result *res, unsigned int nres)
{
	char(*names)[PERF_IDLE_NAME] = NULL;
	unsigned int nn = perf_compare_idle_names(res, nres, &names);
	unsigned int i, c, k, n;
	struct perf_row *rows;
	char cfgname[8], round[16], bs[16];
	const struct perf_config *b = &o->configs[0];

	rows = calloc(nres ? nres : 1, sizeof(*rows));
	if (!rows)
		return;
	fprintf(f,
		"nvq-perf: %u configuration%s x %u round%s (%s, bs=%s, "
		"qd=%u, threads=%u, mode=%s, on %s)\n",
		o->nr_configs, o->nr_configs == 1 ? "" : "s", o->rounds,
		o->rounds == 1 ? "" : "s", perf_rw_name(b->rw),
		perf_fmt_bytes(bs, sizeof(bs), b->bs), b->qd, b->threads,
		perf_mode_name(b->mode), b->uri);
	for (c = 0; c < o->nr_configs; c++)
		fprintf(f, "  %c: %s\n", perf_config_letter(c),
			o->configs[c].label ? o->configs[c].label :
					      "(the options above)");
	fprintf(f,
		"\n%-6s %-6s %8s %20s %9s %9s %9s %9s %9s %9s %9s %9s %6s "
		"%6s %7s %7s",
		"config", "round", "IOPS", "MiB/s min-avg-max", "slat max",
		"clat max", "lat max", "clat p50", "p99", "p99.9", "host p50",
		"host p99", "usr%", "sys%", "pcpu/io", "mcpu/io");
	for (k = 0; k < nn; k++) {
		/* Idle columns carry the real state name, e.g. "C6%". */
		char h[PERF_IDLE_NAME + 2];

		snprintf(h, sizeof(h), "%s%%", names[k]);
		fprintf(f, " %*s", idle_width(names, k), h);
	}
	fputc('\n', f);
	for (i = 0; i < nres; i++) {
		perf_row_from_result(&res[i], names, nn, &rows[i]);
		snprintf(cfgname, sizeof(cfgname), "%c",
			 perf_config_letter(res[i].config_index));
		snprintf(round, sizeof(round), "%u", res[i].round);
		print_row(f, cfgname, round, &rows[i], names);
	}
	for (c = 0; c < o->nr_configs; c++) {
		struct perf_row *sel = calloc(nres ? nres : 1, sizeof(*sel));
		struct perf_row med;

		if (!sel)
			break;
		for (i = 0, n = 0; i < nres; i++)
			if (res[i].config_index == c)
				sel[n++] = rows[i];
		if (n) {
			perf_row_median(sel, n, &med);
			snprintf(cfgname, sizeof(cfgname), "%c",
				 perf_config_letter(c));
			print_row(f, cfgname, "median", &med, names);
		}
		free(sel);
	}
	fprintf(f,
		"\nusr/sys: process CPU time, %% of one CPU; pcpu/io, mcpu/io: "
		"CPU us per I/O of\nthe process and of the whole machine "
		"(/proc/stat busy time, every process)\nhost p50/p99: "
		"the host overhead in clat, CQE posted -> callback (the\n"
		"emulator's stamp=1; -: the run has no stamps, e.g. vfio)\n");
	if (nn)
		fprintf(f,
			"idle columns: mean cpuidle residency over %u CPUs\n",
			res[0].have_idle ? res[0].idle.nr_cpus :
					   (unsigned int)0);
	print_cpl_table(f, o, res, nres, rows, names, nn);
	free(rows);
}
