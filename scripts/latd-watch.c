// SPDX-License-Identifier: MIT
/*
 * latd-watch: what nvq-latd did to the CPUs, seen from outside. Samples,
 * every INTERVAL_US (default 1000), a disk's I/O counters
 * (/sys/block/DISK/stat: I/Os completed and in flight), the storage I/O
 * of COMMAND when one is given (/proc/PID/io: read_bytes + write_bytes;
 * run fio with --thread so that its job threads count), and every CPU's
 * /sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us. Prints
 * when the I/O began and ended and when each CPU's value changed away
 * from and back to the one it had at the start:
 *
 *   watch-event T_MS cpuN VALUE              (with -v: every change)
 *   watch io_first_ms=T cmd_first_ms=T cmd_last_ms=T disk_first_ms=T
 *         disk_last_ms=T
 *         cpus=LIST changed=LIST detect_ms=D release_ms=R
 *         release_cmd_ms=R2 hold_idle_ms=H samples=N max_gap_ms=G
 *   watch-cpu N after_first_ms=D released_ms=R value=V start=S
 *
 * T_MS: milliseconds since the start. The command's I/O is the disk's
 * when there is no command; io_first: the first I/O on the disk once the
 * command did storage I/O (its first bytes may be its program read from
 * another disk). cpus: the CPUs limited from io_first until the command
 * ended; changed: those whose value changed at all ("-": none).
 * detect_ms: the longest time from io_first until one of "cpus" was
 * limited (0 where it already was). release_ms: the longest time from the
 * last I/O on the disk (anyone's) before a CPU's final release to that
 * release; release_cmd_ms: the same from the command's last I/O ("none":
 * some CPU still limited at the end). hold_idle_ms: the longest time a
 * limit stayed on while the disk had no I/O (its last I/O seen before
 * that moment; with other I/O on the disk, the check that holds).
 * max_gap_ms: the longest time between two samples, which bounds all of
 * these (under TCG the sampler is late too).
 *
 * usage: latd-watch [-i INTERVAL_US] [-t SECONDS] [-a LINGER_MS]
 *                   [-b "N=V ..."] [-o FILE] [-T] [-v] DISK
 *                   [-- COMMAND...]
 * -T counts the storage I/O of COMMAND's threads other than its first
 * only (fio --thread: its jobs, not its start-up).
 * -b gives the values to compare with (default: each CPU's at the start),
 * as latd-lib.sh's latd_qos prints them.
 * Its own lines go to FILE (default: stdout, shared with COMMAND). Runs
 * until SIGINT/SIGTERM, SECONDS, or LINGER_MS after COMMAND ended;
 * exits with COMMAND's status. Reads only; changes nothing.
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
#include <dirent.h>
#include <sys/wait.h>
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
	int changed; /* ever away from start */
	int in_window; /* limited while the command did I/O */
	double after_first; /* first I/O -> limited; -1: not yet */
	double released; /* last return to start; -1: none */
	double rel_gap; /* last disk I/O -> that return */
	double rel_cmd; /* the command's last I/O -> that return */
};

static volatile sig_atomic_t stop;
static FILE *out; /* stdout, or -o FILE */

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

/* I/Os completed (reads + writes + discards + flushes) + in flight */
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

/*
 * read_bytes + write_bytes of /proc/PID/io (storage I/O the process caused:
 * O_DIRECT reads count, its start-up's system calls do not), or -1
 */
static int64_t read_io(int fd)
{
	char buf[1024], *p;
	int64_t sum = 0;

	if (fd < 0 || read_fd(fd, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "\nread_bytes:");
	if (p)
		sum += strtoll(p + 12, NULL, 10);
	p = strstr(buf, "\nwrite_bytes:");
	if (p)
		sum += strtoll(p + 13, NULL, 10);
	return sum;
}

/*
 * The same summed over @pid's threads but its first (-T: fio --thread's
 * job threads, without the main thread's start-up, which reads fio's
 * program and libraries - from the very disk, on a host).
 */
static int64_t read_io_threads(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int64_t sum = 0, v;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/io", (int)pid,
			 e->d_name);
		fd = open(path, O_RDONLY);
		v = read_io(fd);
		if (fd >= 0)
			close(fd);
		if (v > 0)
			sum += v;
	}
	closedir(d);
	return sum;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: latd-watch [-i INTERVAL_US] [-t SECONDS]\n"
		"         [-a LINGER_MS] [-b \"N=V ...\"] [-o FILE] [-T] [-v]\n"
		"         DISK [-- COMMAND...]\n"
		"Samples /sys/block/DISK/stat, COMMAND's I/O and every CPU's\n"
		"pm_qos_resume_latency_us every INTERVAL_US (default 1000)\n"
		"until SIGINT/SIGTERM, SECONDS or LINGER_MS after COMMAND,\n"
		"and prints when the limits went on and off around the I/O.\n");
}

static long num(const char *s, long min, int opt)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min) {
		fprintf(stderr, "latd-watch: bad -%c '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

static void print_list(const char *key, const struct cpu *cpu, int ncpu,
		       int window)
{
	int i, n = 0;

	fprintf(out, " %s=", key);
	for (i = 0; i < ncpu; i++)
		if (window ? cpu[i].in_window : cpu[i].changed)
			fprintf(out, "%s%d", n++ ? "," : "", i);
	if (!n)
		fprintf(out, "-");
}

static void print_ms(const char *key, int ok, double v)
{
	if (ok)
		fprintf(out, " %s=%.3f", key, v);
	else
		fprintf(out, " %s=none", key);
}

int main(int argc, char **argv)
{
	static struct cpu cpu[MAX_CPUS];
	long interval_us = 1000, secs = 0, linger = 0;
	double t0, t, last = 0, max_gap = 0, ended = -1;
	double cmd_first = -1, cmd_last = -1, disk_first = -1, disk_last = -1;
	double io_first = -1;
	double detect = 0, release = 0, release_cmd = 0, hold_idle = 0;
	int detect_ok = 1, release_ok = 1, any = 0;
	uint64_t done0, done, inflight, samples = 0;
	int64_t io0 = -1, io;
	int verbose = 0, threads = 0, ncpu = 0, opt, sfd, iofd = -1, i,
	    status = 0;
	pid_t child = 0;
	const char *base = NULL, *p;
	char path[256];
	struct timespec period;

	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	out = stdout;
	while ((opt = getopt(argc, argv, "+i:t:a:b:o:Tv")) != -1) {
		switch (opt) {
		case 'T':
			threads = 1;
			break;
		case 'b':
			base = optarg;
			break;
		case 'o':
			out = fopen(optarg, "w");
			if (!out) {
				fprintf(stderr, "latd-watch: %s: %s\n", optarg,
					strerror(errno));
				return 1;
			}
			break;
		case 'i':
			interval_us = num(optarg, 10, opt);
			break;
		case 't':
			secs = num(optarg, 1, opt);
			break;
		case 'a':
			linger = num(optarg, 0, opt);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc ||
	    (optind + 1 < argc && strcmp(argv[optind + 1], "--")) ||
	    (optind + 1 < argc && optind + 2 >= argc)) {
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
		struct cpu *c = &cpu[i];

		c->after_first = c->released = -1;
		snprintf(path, sizeof(path), "%s/cpu%d/power/%s", CPU_DIR, i,
			 QOS_FILE);
		c->fd = open(path, O_RDONLY);
		if (c->fd < 0)
			continue;
		if (read_fd(c->fd, c->start, sizeof(c->start))) {
			close(c->fd);
			c->fd = -1;
			continue;
		}
		strcpy(c->cur, c->start);
		ncpu = i + 1;
	}
	/*
	 * The values before the daemon started (it may hold a limit by the
	 * time the sampler starts, for other I/O): "N=V N=V ...".
	 */
	for (p = base; p && *p;) {
		char *end;
		long n = strtol(p, &end, 10);
		size_t len;

		if (end == p || *end != '=' || n < 0 || n >= ncpu) {
			fprintf(stderr, "latd-watch: bad -b at '%s'\n", p);
			return 2;
		}
		p = end + 1;
		len = strcspn(p, " ");
		if (len >= sizeof(cpu[n].start))
			len = sizeof(cpu[n].start) - 1;
		memcpy(cpu[n].start, p, len);
		cpu[n].start[len] = 0;
		p += len;
		p += strspn(p, " ");
	}
	for (i = 0; i < ncpu; i++)
		if (cpu[i].fd >= 0 && strcmp(cpu[i].cur, cpu[i].start)) {
			cpu[i].changed = 1;
			strcpy(cpu[i].held, cpu[i].cur);
		}
	if (!ncpu) {
		fprintf(stderr, "latd-watch: no %s/cpu*/power/%s\n", CPU_DIR,
			QOS_FILE);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fflush(out);
	if (optind + 2 < argc) {
		child = fork();
		if (child < 0) {
			perror("latd-watch: fork");
			return 1;
		}
		if (!child) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			execvp(argv[optind + 2], argv + optind + 2);
			fprintf(stderr, "latd-watch: %s: %s\n",
				argv[optind + 2], strerror(errno));
			_exit(127);
		}
		snprintf(path, sizeof(path), "/proc/%d/io", (int)child);
		iofd = open(path, O_RDONLY);
		io0 = threads ? read_io_threads(child) : read_io(iofd);
	}
	period.tv_sec = interval_us / 1000000;
	period.tv_nsec = (interval_us % 1000000) * 1000;
	t0 = now_ms();
	while (!stop) {
		int cmd_io = 0, disk_io, running;

		t = now_ms() - t0;
		if (samples && t - last > max_gap)
			max_gap = t - last;
		last = t;
		samples++;
		disk_io = !read_stat(sfd, &done, &inflight) &&
			  (done != done0 || inflight);
		if (disk_io) {
			if (disk_first < 0)
				disk_first = t;
			disk_last = t;
			done0 = done;
			cmd_io = !child;
		}
		if (child && ended < 0) {
			io = threads ? read_io_threads(child) : read_io(iofd);
			if (io >= 0 && io != io0) {
				cmd_io = 1;
				io0 = io;
			}
		}
		if (cmd_io) {
			if (cmd_first < 0)
				cmd_first = t;
			cmd_last = t;
		}
		/*
		 * The I/O starts with the first I/O on the disk once the
		 * command did storage I/O: the command's first bytes may be
		 * its own program being read from another disk.
		 */
		if (cmd_first >= 0 && io_first < 0 && disk_io)
			io_first = t;
		running = io_first >= 0 && (child ? ended < 0 : 1);
		for (i = 0; i < ncpu; i++) {
			struct cpu *c = &cpu[i];
			char v[32];
			int limited;

			if (c->fd < 0)
				continue;
			if (!read_fd(c->fd, v, sizeof(v)) &&
			    strcmp(v, c->cur)) {
				strcpy(c->cur, v);
				if (verbose)
					fprintf(out,
						"watch-event %.3f cpu%d %s\n",
						t, i, v);
				if (strcmp(v, c->start)) {
					if (!c->changed)
						strcpy(c->held, v);
					c->changed = 1;
					c->released = -1;
				} else {
					c->released = t;
					c->rel_gap = t - disk_last;
					c->rel_cmd = t - cmd_last;
				}
			}
			limited = strcmp(c->cur, c->start) != 0;
			if (limited && running) {
				c->in_window = 1;
				if (c->after_first < 0)
					c->after_first = t - io_first;
			}
		}
		for (i = 0; i < ncpu; i++)
			if (cpu[i].fd >= 0 && strcmp(cpu[i].cur, cpu[i].start))
				break;
		if (i < ncpu && t - (disk_last < 0 ? 0 : disk_last) > hold_idle)
			hold_idle = t - (disk_last < 0 ? 0 : disk_last);
		if (child && ended < 0 && waitpid(child, &status, WNOHANG) > 0)
			ended = t;
		if (ended >= 0 && t - ended >= linger)
			break;
		if (secs && t >= secs * 1e3)
			break;
		nanosleep(&period, NULL);
	}
	if (child && ended < 0) {
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
	for (i = 0; i < ncpu; i++) {
		struct cpu *c = &cpu[i];

		if (c->in_window && c->after_first > detect)
			detect = c->after_first;
		if (!c->changed)
			continue;
		any = 1;
		if (c->released < 0 || strcmp(c->cur, c->start)) {
			release_ok = 0;
			continue;
		}
		if (c->rel_gap > release)
			release = c->rel_gap;
		if (c->rel_cmd > release_cmd)
			release_cmd = c->rel_cmd;
	}
	fprintf(out, "watch io_first_ms=%.3f", io_first);
	fprintf(out, " cmd_first_ms=%.3f cmd_last_ms=%.3f", cmd_first,
		cmd_last);
	fprintf(out, " disk_first_ms=%.3f disk_last_ms=%.3f", disk_first,
		disk_last);
	print_list("cpus", cpu, ncpu, 1);
	print_list("changed", cpu, ncpu, 0);
	detect_ok = detect_ok && any && io_first >= 0;
	print_ms("detect_ms", detect_ok, detect);
	print_ms("release_ms", release_ok && any, release);
	print_ms("release_cmd_ms", release_ok && any && cmd_last >= 0,
		 release_cmd);
	fprintf(out, " hold_idle_ms=%.3f", hold_idle);
	fprintf(out, " samples=%llu max_gap_ms=%.3f\n",
		(unsigned long long)samples, max_gap);
	for (i = 0; i < ncpu; i++) {
		struct cpu *c = &cpu[i];

		if (!c->changed)
			continue;
		fprintf(out, "watch-cpu %d", i);
		print_ms("after_first_ms", c->after_first >= 0, c->after_first);
		print_ms("released_ms", c->released >= 0, c->rel_gap);
		fprintf(out, " value=%s start=%s\n", c->held, c->start);
	}
	fclose(out);
	if (!child)
		return 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
