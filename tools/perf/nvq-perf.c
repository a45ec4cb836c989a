/* SPDX-License-Identifier: MIT */
/*
 * nvq-perf: an fio-grade benchmark for nvq. Runs one configuration, or
 * several alternately (--compare "A;B", --rounds N), and reports like fio
 * (text or --json) with an optional latency CDF (--plot).
 *
 * Exit status: 0 success, 1 runtime failure / I/O error / verify mismatch,
 * 2 bad usage, 128 + N when signal N (SIGINT, SIGTERM) ended the run.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvq/version.h>

#include "compare.h"
#include "format.h"
#include "options.h"
#include "plot.h"
#include "report.h"
#include "run.h"

/* The signal that asked to stop (SIGINT, SIGTERM), 0 for none. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* A second signal kills as usual. */
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Curves for --plot: per configuration (all rounds, both directions), or
 * per direction for a single run. */
static int write_plot(const struct perf_opts *o, struct perf_result *res,
		      unsigned int nres, char *err, size_t errlen)
{
	struct perf_curve curves[PERF_MAX_CONFIGS + PERF_NR_DIRS];
	struct perf_dir_stats *sum;
	char labels[PERF_MAX_CONFIGS + PERF_NR_DIRS][200];
	char title[256], bs[16];
	const struct perf_config *b = &o->configs[0];
	unsigned int n = 0, c, i, d;
	int rc;

	sum = calloc(PERF_MAX_CONFIGS, sizeof(*sum));
	if (!sum) {
		snprintf(err, errlen, "--plot: out of memory");
		return -1;
	}
	snprintf(title, sizeof(title),
		 "nvq-perf clat CDF: %s bs=%s qd=%u threads=%u on %s",
		 perf_rw_name(b->rw), perf_fmt_bytes(bs, sizeof(bs), b->bs),
		 b->qd, b->threads, b->uri);
	if (o->nr_configs == 1 && nres == 1) {
		for (d = 0; d < PERF_NR_DIRS; d++) {
			if (!res[0].dir[d].ios)
				continue;
			snprintf(labels[n], sizeof(labels[n]), "%s (mode %s)",
				 d == PERF_DIR_READ ? "read" : "write",
				 perf_mode_name(b->mode));
			curves[n].label = labels[n];
			curves[n].h = &res[0].dir[d].clat;
			n++;
		}
	} else {
		for (c = 0; c < o->nr_configs; c++) {
			char p50[16], p99[16];

			perf_dir_stats_init(&sum[c]);
			for (i = 0; i < nres; i++)
				if (res[i].config_index == c)
					for (d = 0; d < PERF_NR_DIRS; d++)
						perf_result_merge_dirs(
							&sum[c],
							&res[i].dir[d]);
			snprintf(labels[n], sizeof(labels[n]),
				 "%c: %s (p50 %s, p99 %s)",
				 perf_config_letter(c),
				 o->configs[c].label ? o->configs[c].label :
						       perf_rw_name(b->rw),
				 perf_fmt_ns(p50, sizeof(p50),
					     (double)perf_hist_percentile(
						     &sum[c].clat, 50)),
				 perf_fmt_ns(p99, sizeof(p99),
					     (double)perf_hist_percentile(
						     &sum[c].clat, 99)));
			curves[n].label = labels[n];
			curves[n].h = &sum[c].clat;
			n++;
		}
	}
	rc = perf_plot_svg(o->plot, curves, n, title, err, errlen);
	free(sum);
	return rc;
}

int main(int argc, char **argv)
{
	struct perf_opts o;
	struct perf_result *res;
	struct perf_run_ctl ctl = { 0 };
	unsigned int nres = 0, r, c;
	uint64_t problems = 0;
	char err[512], tag[64];
	int rc, status = 0;

	rc = perf_opts_parse(&o, argc, argv, err, sizeof(err));
	if (rc == PERF_OPTS_HELP) {
		perf_usage(stdout);
		perf_opts_free(&o);
		return 0;
	}
	if (rc == PERF_OPTS_VERSION) {
		/* as `nvq --version`: the project version from meson */
		printf("nvq-perf %s\n", NVQ_VERSION_STRING);
		perf_opts_free(&o);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "nvq-perf: %s\n", err);
		perf_opts_free(&o);
		return 2;
	}
	res = calloc((size_t)o.nr_configs * o.rounds, sizeof(*res));
	if (!res) {
		fprintf(stderr, "nvq-perf: out of memory\n");
		perf_opts_free(&o);
		return 1;
	}
	install_signals();
	ctl.status = isatty(STDERR_FILENO);
	ctl.interrupted = &interrupted;
	ctl.tag = NULL;

	/* A B A B ...: drift in the machine hits every configuration. */
	for (r = 0; r < o.rounds && !interrupted; r++) {
		for (c = 0; c < o.nr_configs && !interrupted; c++) {
			struct perf_result *x = &res[nres];

			perf_result_init(x);
			x->config_index = c;
			x->round = r + 1;
			if (o.nr_configs > 1 || o.rounds > 1) {
				snprintf(tag, sizeof(tag), "%c %u/%u",
					 perf_config_letter(c), r + 1,
					 o.rounds);
				ctl.tag = tag;
			}
			rc = perf_run(&o.configs[c], &ctl, x, err, sizeof(err));
			if (rc) {
				if (o.compare)
					fprintf(stderr,
						"nvq-perf: configuration %c "
						"('%s'): %s\n",
						perf_config_letter(c),
						o.configs[c].label, err);
				else
					fprintf(stderr, "nvq-perf: %s\n", err);
				perf_result_free(x);
				status = rc == PERF_EUSAGE ? 2 : 1;
				goto out;
			}
			nres++;
		}
	}

	if (o.json) {
		if (perf_report_json(stdout, &o, res, nres)) {
			fprintf(stderr, "nvq-perf: writing JSON failed\n");
			status = 1;
		}
	} else if (o.compare || o.rounds > 1)
		perf_compare_print(stdout, &o, res, nres);
	else if (nres)
		perf_report_text(stdout, &res[0]);
	fflush(stdout);
	for (r = 0; r < nres; r++)
		problems += perf_report_problems(stderr, &res[r]);
	if (o.plot && write_plot(&o, res, nres, err, sizeof(err))) {
		fprintf(stderr, "nvq-perf: %s\n", err);
		status = 1;
	}
	if (problems)
		status = 1;
	/* as a shell reports a process the signal killed: 130, 143 */
	if (interrupted && !status)
		status = 128 + interrupted;
out:
	for (r = 0; r < nres; r++)
		perf_result_free(&res[r]);
	free(res);
	perf_opts_free(&o);
	return status;
}
