/* SPDX-License-Identifier: MIT */
/* CPU time and cpuidle residency sampling. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cpustat.h"

#define SYS_CPU "/sys/devices/system/cpu"
#define MAX_STATES 16

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int read_u64(const char *path, uint64_t *v)
{
	char buf[64], *end;

	if (read_line(path, buf, sizeof(buf)))
		return -ENOENT;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* CPUs under @root that have a cpuidle directory, ascending. */
static int list_cpus(const char *root, int **out)
{
	DIR *d = opendir(root);
	struct dirent *e;
	int *cpus = NULL, n = 0, cap = 0;

	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		char path[512];
		const char *p;
		int *nc;

		if (strncmp(e->d_name, "cpu", 3) || !e->d_name[3])
			continue;
		for (p = e->d_name + 3; *p && isdigit((unsigned char)*p); p++)
			;
		if (*p)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpuidle/state0/name", root,
			 e->d_name);
		if (access(path, R_OK))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			nc = realloc(cpus, cap * sizeof(*cpus));
			if (!nc) {
				free(cpus);
				closedir(d);
				return -ENOMEM;
			}
			cpus = nc;
		}
		cpus[n++] = atoi(e->d_name + 3);
	}
	closedir(d);
	if (!n) {
		free(cpus);
		return -ENOENT;
	}
	qsort(cpus, n, sizeof(*cpus), cmp_int);
	*out = cpus;
	return n;
}

int perf_idle_snapshot(struct perf_idle_snap *s, const char *root)
{
	unsigned int c, k, nstates = 0;
	char path[512];
	int n;

	memset(s, 0, sizeof(*s));
	if (!root)
		root = SYS_CPU;
	n = list_cpus(root, &s->cpu);
	if (n < 0)
		return n;
	s->nr_cpus = (unsigned int)n;
	s->names = calloc(MAX_STATES, sizeof(*s->names));
	s->time_us = calloc((size_t)n * MAX_STATES, sizeof(*s->time_us));
	if (!s->names || !s->time_us) {
		perf_idle_snap_free(s);
		return -ENOMEM;
	}
	for (c = 0; c < s->nr_cpus; c++) {
		for (k = 0; k < MAX_STATES; k++) {
			uint64_t *t = &s->time_us[c * MAX_STATES + k];

			snprintf(path, sizeof(path),
				 "%s/cpu%d/cpuidle/state%u/time", root,
				 s->cpu[c], k);
			if (read_u64(path, t)) {
				*t = UINT64_MAX;
				continue;
			}
			if (k >= nstates)
				nstates = k + 1;
			if (!s->names[k][0]) {
				snprintf(path, sizeof(path),
					 "%s/cpu%d/cpuidle/state%u/name", root,
					 s->cpu[c], k);
				if (read_line(path, s->names[k],
					      PERF_IDLE_NAME) ||
				    !s->names[k][0])
					snprintf(s->names[k], PERF_IDLE_NAME,
						 "state%u", k);
			}
		}
	}
	if (!nstates) {
		perf_idle_snap_free(s);
		return -ENOENT;
	}
	/* Compact rows from MAX_STATES to nstates columns. */
	for (c = 0; c < s->nr_cpus; c++)
		for (k = 0; k < nstates; k++)
			s->time_us[c * nstates + k] =
				s->time_us[c * MAX_STATES + k];
	for (k = 0; k < nstates; k++)
		if (!s->names[k][0])
			snprintf(s->names[k], PERF_IDLE_NAME, "state%u", k);
	s->nr_states = nstates;
	return 0;
}

void perf_idle_snap_free(struct perf_idle_snap *s)
{
	free(s->cpu);
	free(s->names);
	free(s->time_us);
	memset(s, 0, sizeof(*s));
}

static int idle_alloc(struct perf_idle *r, unsigned int ncpu, unsigned int ns)
{
	memset(r, 0, sizeof(*r));
	r->nr_cpus = ncpu;
	r->nr_states = ns;
	r->cpu = calloc(ncpu ? ncpu : 1, sizeof(*r->cpu));
	r->names = calloc(ns ? ns : 1, sizeof(*r->names));
	r->pct = calloc((size_t)(ncpu ? ncpu : 1) * (ns ? ns : 1),
			sizeof(*r->pct));
	r->avg = calloc(ns ? ns : 1, sizeof(*r->avg));
	if (!r->cpu || !r->names || !r->pct || !r->avg) {
		perf_idle_free(r);
		return -ENOMEM;
	}
	return 0;
}

int perf_idle_diff(const struct perf_idle_snap *a,
		   const struct perf_idle_snap *b, uint64_t wall_ns,
		   struct perf_idle *out)
{
	unsigned int c, k, ns = a->nr_states;
	int rc;

	memset(out, 0, sizeof(*out));
	if (a->nr_cpus != b->nr_cpus || a->nr_states != b->nr_states ||
	    !a->nr_cpus)
		return -EINVAL;
	for (c = 0; c < a->nr_cpus; c++)
		if (a->cpu[c] != b->cpu[c])
			return -EINVAL;
	rc = idle_alloc(out, a->nr_cpus, ns);
	if (rc)
		return rc;
	memcpy(out->cpu, a->cpu, a->nr_cpus * sizeof(*a->cpu));
	memcpy(out->names, a->names, ns * sizeof(*a->names));
	for (c = 0; c < a->nr_cpus; c++) {
		for (k = 0; k < ns; k++) {
			uint64_t t0 = a->time_us[c * ns + k];
			uint64_t t1 = b->time_us[c * ns + k];
			double p = 0;

			if (t0 != UINT64_MAX && t1 != UINT64_MAX && t1 > t0 &&
			    wall_ns)
				p = (double)(t1 - t0) * 1000.0 * 100.0 /
				    (double)wall_ns;
			/* Counters tick at state exit: clamp the overshoot. */
			if (p > 100)
				p = 100;
			out->pct[c * ns + k] = p;
			out->avg[k] += p / a->nr_cpus;
		}
	}
	return 0;
}

void perf_idle_free(struct perf_idle *r)
{
	free(r->cpu);
	free(r->names);
	free(r->pct);
	free(r->avg);
	memset(r, 0, sizeof(*r));
}

int perf_cpu_snapshot(struct perf_cpu_snap *s)
{
	struct rusage ru;

	memset(s, 0, sizeof(*s));
	if (getrusage(RUSAGE_SELF, &ru))
		return -errno;
	s->usr_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull +
		    (uint64_t)ru.ru_utime.tv_usec * 1000;
	s->sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull +
		    (uint64_t)ru.ru_stime.tv_usec * 1000;
	s->vctx = (uint64_t)ru.ru_nvcsw;
	s->ivctx = (uint64_t)ru.ru_nivcsw;
	s->majflt = (uint64_t)ru.ru_majflt;
	s->minflt = (uint64_t)ru.ru_minflt;
	return 0;
}

static uint64_t ticks_ns(uint64_t ticks, long hz)
{
	return (uint64_t)((unsigned __int128)ticks * 1000000000u /
			  (unsigned long)hz);
}

int perf_machine_snapshot(struct perf_machine_snap *s, const char *path,
			  long hz)
{
	/* user nice system idle iowait irq softirq steal (guest, guest_nice
	 * are already in user and nice) */
	uint64_t v[8] = { 0 };
	char line[512];
	bool have_cpu = false;
	unsigned int n = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		return -EINVAL;
	f = fopen(path ? path : "/proc/stat", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 3, *end;

		if (strncmp(line, "cpu", 3))
			continue;
		if (isdigit((unsigned char)*p)) {
			s->nr_cpus++;
			continue;
		}
		if (*p != ' ' || have_cpu)
			continue;
		have_cpu = true;
		for (n = 0; n < 8; n++) {
			while (*p == ' ')
				p++;
			if (!isdigit((unsigned char)*p))
				break;
			errno = 0;
			v[n] = strtoull(p, &end, 10);
			if (errno)
				break;
			p = end;
		}
	}
	fclose(f);
	/* Linux has had the first five since 2.6 */
	if (!have_cpu || n < 5)
		return -EINVAL;
	s->busy_ns = ticks_ns(v[0] + v[1] + v[2] + v[5] + v[6] + v[7], hz);
	s->total_ns = s->busy_ns + ticks_ns(v[3] + v[4], hz);
	return 0;
}

int perf_loadavg(double avg[3], const char *path)
{
	FILE *f = fopen(path ? path : "/proc/loadavg", "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%lf %lf %lf", &avg[0], &avg[1], &avg[2]);
	fclose(f);
	return n == 3 ? 0 : -EINVAL;
}
