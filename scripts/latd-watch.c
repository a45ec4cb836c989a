// SPDX-License-Identifier: MIT
/*
 * latd-watch: what nvq-latd did to the CPUs, seen from outside. Samples,
 * every INTERVAL_US (default 1000), a disk's I/O counters
 * (/sys/block/DISK/stat: I/Os completed and in flight) and every CPU's
 * /sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us, and prints
 * when the disk's I/O began and ended and when each CPU's value changed
 * away from and back to what it was at the start:
 *
 *   watch-event T_MS cpuN VALUE           (with -v: every change)
 *   watch-cpu N applied=T_MS released=T_MS value=V
 *   watch io_first_ms=T io_last_ms=T cpus=LIST detect_ms=D release_ms=R
 *         samples=N max_gap_ms=G
 *
 * T_MS are milliseconds since the start. detect_ms: from the first I/O
 * seen to the first change on any CPU ("none": no change, or no I/O);
 * release_ms: from the last I/O seen to the last changed CPU back at its
 * start value ("none": not released while watching; negative: released
 * before the I/O ended). max_gap_ms is the longest time between two
 * samples, which bounds both (under TCG the sampler is late too). cpus:
 * the CPUs whose value changed at all ("-" for none).
 *
 * usage: latd-watch [-i INTERVAL_US] [-t SECONDS] [-v] DISK
 * Runs until SIGINT/SIGTERM or SECONDS. Reads only; changes nothing.
 * Built by scripts/latd-host.sh and scripts/qemu/latd-guest.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 1024
#define CPU_DIR "/sys/devices/system/cpu"
#define QOS_FILE "pm_qos_resume_latency_us"

struct cpu {
	int fd;
	char start[32]; /* the value at the start */
	char cur[32];
	char held[32]; /* the first value it changed to */
	double applied, released; /* ms; -1: not seen */
	int changed;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int read_fd(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

/* I/Os completed (reads + writes + discards + flushes) and in flight */
static int read_stat(int fd, uint64_t *done, uint64_t *inflight)
{
	char buf[512];
	uint64_t f[17] = { 0 };
	char *p = buf, *end;
	int i;

	if (read_fd(fd, buf, sizeof(buf)))
		return -1;
	for (i = 0; i < 17; i++) {
		f[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	if (i < 11)
		return -1;
	*done = f[0] + f[4] + f[11] + f[15];
	*inflight = f[8];
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: latd-watch [-i INTERVAL_US] [-t SECONDS] [-v] DISK\n"
		"Samples /sys/block/DISK/stat and every CPU's\n"
		"pm_qos_resume_latency_us every INTERVAL_US (default 1000)\n"
		"until SIGINT/SIGTERM or SECONDS, and prints when the limits\n"
		"went on and off relative to the disk's I/O.\n");
}

int main(int argc, char **argv)
{
	static struct cpu cpu[MAX_CPUS];
	long interval_us = 1000, secs = 0;
	double t0, t, last = 0, max_gap = 0, io_first = -1, io_last = -1;
	double detect = 0, release = -1e9;
	int detect_ok = 0, released;
	uint64_t done0, done, inflight, samples = 0;
	int verbose = 0, ncpu = 0, opt, sfd, i, first_cpu = 1;
	char path[256], *end;
	struct timespec period;

	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	while ((opt = getopt(argc, argv, "i:t:v")) != -1) {
		switch (opt) {
		case 'i':
			interval_us = strtol(optarg, &end, 10);
			if (*end || interval_us < 10) {
				fprintf(stderr, "latd-watch: bad -i '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			secs = strtol(optarg, &end, 10);
			if (*end || secs < 1) {
				fprintf(stderr, "latd-watch: bad -t '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/block/%s/stat", argv[optind]);
	sfd = open(path, O_RDONLY);
	if (sfd < 0 || read_stat(sfd, &done0, &inflight)) {
		fprintf(stderr, "latd-watch: %s: %s\n", path,
			sfd < 0 ? strerror(errno) : "not a disk stat file");
		return 1;
	}
	for (i = 0; i < MAX_CPUS; i++) {
		cpu[i].fd = -1;
		cpu[i].applied = cpu[i].released = -1;
		snprintf(path, sizeof(path), "%s/cpu%d/power/%s", CPU_DIR, i,
			 QOS_FILE);
		cpu[i].fd = open(path, O_RDONLY);
		if (cpu[i].fd < 0)
			continue;
		if (read_fd(cpu[i].fd, cpu[i].start, sizeof(cpu[i].start))) {
			close(cpu[i].fd);
			cpu[i].fd = -1;
			continue;
		}
		strcpy(cpu[i].cur, cpu[i].start);
		ncpu = i + 1;
	}
	if (!ncpu) {
		fprintf(stderr, "latd-watch: no %s/cpu*/power/%s\n", CPU_DIR,
			QOS_FILE);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	period.tv_sec = interval_us / 1000000;
	period.tv_nsec = (interval_us % 1000000) * 1000;
	t0 = now_ms();
	while (!stop) {
		t = now_ms() - t0;
		if (samples && t - last > max_gap)
			max_gap = t - last;
		last = t;
		samples++;
		if (!read_stat(sfd, &done, &inflight) &&
		    (done != done0 || inflight)) {
			if (io_first < 0)
				io_first = t;
			io_last = t;
			done0 = done;
		}
		for (i = 0; i < ncpu; i++) {
			char v[32];
			struct cpu *c = &cpu[i];

			if (c->fd < 0 || read_fd(c->fd, v, sizeof(v)) ||
			    !strcmp(v, c->cur))
				continue;
			strcpy(c->cur, v);
			if (verbose)
				printf("watch-event %.3f cpu%d %s\n", t, i, v);
			if (strcmp(v, c->start)) {
				if (!c->changed) {
					c->applied = t;
					strcpy(c->held, v);
				}
				c->changed = 1;
				c->released = -1;
			} else {
				c->released = t;
			}
		}
		if (secs && t >= secs * 1e3)
			break;
		nanosleep(&period, NULL);
	}
	printf("watch io_first_ms=%.3f io_last_ms=%.3f cpus=", io_first,
	       io_last);
	for (i = 0; i < ncpu; i++) {
		struct cpu *c = &cpu[i];

		if (!c->changed)
			continue;
		printf("%s%d", first_cpu ? "" : ",", i);
		first_cpu = 0;
		if (io_first >= 0 && c->applied >= 0 &&
		    (!detect_ok || c->applied - io_first < detect)) {
			detect = c->applied - io_first;
			detect_ok = 1;
		}
	}
	if (first_cpu)
		printf("-");
	/*
	 * Released: every changed CPU back to its start value; negative when
	 * that happened before the last I/O was seen (released too early).
	 */
	released = !first_cpu && io_last >= 0;
	for (i = 0; i < ncpu && released; i++) {
		struct cpu *c = &cpu[i];

		if (!c->changed)
			continue;
		if (c->released < 0)
			released = 0;
		else if (c->released - io_last > release)
			release = c->released - io_last;
	}
	if (detect_ok)
		printf(" detect_ms=%.3f", detect);
	else
		printf(" detect_ms=none");
	if (released)
		printf(" release_ms=%.3f", release);
	else
		printf(" release_ms=none");
	printf(" samples=%llu max_gap_ms=%.3f\n", (unsigned long long)samples,
	       max_gap);
	for (i = 0; i < ncpu; i++) {
		struct cpu *c = &cpu[i];

		if (!c->changed)
			continue;
		printf("watch-cpu %d applied=%.3f released=%.3f", i, c->applied,
		       c->released);
		printf(" value=%s start=%s\n", c->held, c->start);
	}
	return 0;
}
