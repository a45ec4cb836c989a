// SPDX-License-Identifier: MIT
/*
 * nvq-latd's BPF activity source on this host's kernel, with read-only
 * O_DIRECT reads (never a write): the program counts the requests issued
 * to the watched disk on the CPU the test is pinned to, reports the
 * idle -> active transition exactly once per arming, and stops counting
 * when the disk is unwatched.
 *
 * The disk: $NVQ_LATD_TEST_DISK, else vda, else the disk holding the C
 * library. The reads go to /dev/DISK when it opens, else (sandboxes that
 * deny opening the root disk) to an old file on a filesystem on it (the
 * C library itself, which nothing writes), which O_DIRECT still reads
 * from the disk.
 *
 * Needs root (or CAP_BPF + CAP_PERFMON) and a kernel with BTF; skips with
 * the reason otherwise.
 *
 * Also a small tool for scripts/latd-bpf-cost.sh: --hold DISK SECONDS
 * keeps the program attached and DISK watched for that long, then prints
 * the requests it counted.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "latd.h"

#define SLOT 5
#define NREADS 8
#define BLK 4096

struct target {
	char disk[LATD_NAME_MAX];
	unsigned int major, minor;
	char path[512]; /* what the reads open */
	int fd;
	off_t size;
};

static int read_dev(const char *disk, unsigned int *major, unsigned int *minor)
{
	char p[128];
	FILE *f;
	int n;

	snprintf(p, sizeof(p), "/sys/block/%s/dev", disk);
	f = fopen(p, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%u:%u", major, minor);
	fclose(f);
	return n == 2 ? 0 : -EINVAL;
}

/* The whole disk whose dev_t is @dev (itself, or a partition's parent). */
static int disk_of_dev(dev_t dev, char *disk, size_t len)
{
	char p[128], link[256], *base;
	ssize_t n;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	n = readlink(p, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/partition", major(dev),
		 minor(dev));
	if (!access(p, F_OK))
		*strrchr(link, '/') = '\0';
	base = strrchr(link, '/');
	snprintf(disk, len, "%s", base ? base + 1 : link);
	return 0;
}

/* A file that surely is on disk and unchanged: the C library. */
static const char *libc_path(void)
{
	Dl_info info;

	if (!dladdr((void *)fclose, &info) || !info.dli_fname)
		return NULL;
	return info.dli_fname;
}

/* Pick the disk and what to read; false (with @why) if nothing fits. */
static bool find_target(struct target *t, const char *want, char *why,
			size_t len)
{
	const char *lib = libc_path();
	char libdisk[LATD_NAME_MAX] = "";
	struct stat st;

	if (lib && !stat(lib, &st))
		disk_of_dev(st.st_dev, libdisk, sizeof(libdisk));
	if (want)
		snprintf(t->disk, sizeof(t->disk), "%s", want);
	else if (!access("/sys/block/vda", F_OK))
		snprintf(t->disk, sizeof(t->disk), "vda");
	else
		snprintf(t->disk, sizeof(t->disk), "%s", libdisk);
	if (!t->disk[0] || read_dev(t->disk, &t->major, &t->minor)) {
		snprintf(why, len, "no disk to read: /sys/block/%s/dev",
			 t->disk[0] ? t->disk : "vda");
		return false;
	}
	snprintf(t->path, sizeof(t->path), "/dev/%s", t->disk);
	t->fd = open(t->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (t->fd < 0 && lib && !strcmp(libdisk, t->disk)) {
		snprintf(t->path, sizeof(t->path), "%s", lib);
		t->fd = open(t->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	}
	if (t->fd < 0) {
		snprintf(why, len,
			 "cannot open /dev/%s read-only (%s) and no file on "
			 "it to read",
			 t->disk, strerror(errno));
		return false;
	}
	t->size = lseek(t->fd, 0, SEEK_END);
	if (t->size < NREADS * BLK) {
		snprintf(why, len, "%s is too small to read %d blocks", t->path,
			 NREADS);
		close(t->fd);
		return false;
	}
	return true;
}

/* @n read-only O_DIRECT 4 KiB reads at spread-out offsets. */
static void do_reads(const struct target *t, void *buf, int n)
{
	off_t blocks = t->size / BLK;
	int i;

	for (i = 0; i < n; i++) {
		off_t off = (off_t)(blocks / n) * i * BLK;

		CHECK_EQ(pread(t->fd, buf, BLK, off), BLK);
	}
}

struct events {
	int mine; /* for (SLOT, the test's CPU) */
	int others;
	int cpu;
};

static void on_event(void *arg, int slot, int cpu)
{
	struct events *e = arg;

	if (slot == SLOT && cpu == e->cpu)
		e->mine++;
	else
		e->others++;
}

/* Drain until one event for our (slot, CPU) came or the hang guard. */
static void wait_event(struct latd_bpf *b, struct events *e)
{
	struct pollfd p = { .fd = latd_bpf_fd(b), .events = POLLIN };
	int before = e->mine, tries;

	for (tries = 0; tries < 100 && e->mine == before; tries++) {
		CHECK(poll(&p, 1, 100) >= 0);
		CHECK(latd_bpf_drain(b, on_event, e) >= 0);
	}
}

static int pin_self(void)
{
	cpu_set_t set;
	int cpu;

	CHECK_OK(sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			break;
	CHECK(cpu < CPU_SETSIZE);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_OK(sched_setaffinity(0, sizeof(set), &set));
	return cpu;
}

static struct latd_bpf *open_or_skip(void)
{
	struct latd_bpf *b;
	char err[256];
	int ret;

	ret = latd_bpf_open(&b, err, sizeof(err));
	if (ret == -ENOSYS || ret == -EPERM || ret == -EOPNOTSUPP ||
	    ret == -ENOENT)
		SKIP("BPF activity source unavailable: %s", err);
	if (ret)
		fprintf(stderr, "latd_bpf_open: %s\n", err);
	CHECK_EQ(ret, 0);
	return b;
}

static void test_api_errors(struct latd_bpf *b, const struct target *t)
{
	CHECK_EQ(latd_bpf_watch(b, -1, 1, 1), -EINVAL);
	CHECK_EQ(latd_bpf_watch(b, LATD_MAX_DISKS, 1, 1), -EINVAL);
	CHECK_EQ(latd_bpf_watch(b, 0, 1u << 12, 0), -EINVAL);
	CHECK_EQ(latd_bpf_watch(b, 0, 1, 1u << 20), -EINVAL);
	CHECK_EQ(latd_bpf_unwatch(b, SLOT), -ENOENT);
	CHECK_EQ(latd_bpf_unwatch(b, LATD_MAX_DISKS), -EINVAL);
	CHECK(latd_bpf_counter(b, LATD_MAX_DISKS, 0) == NULL);
	CHECK(latd_bpf_counter(b, 0, latd_bpf_nr_cpus(b)) == NULL);
	CHECK(latd_bpf_idle(b, -1, 0) == NULL);
	CHECK(latd_bpf_idle(b, 0, -1) == NULL);

	CHECK_OK(latd_bpf_watch(b, SLOT, t->major, t->minor));
	CHECK_EQ(latd_bpf_watch(b, SLOT, 1, 1), -EBUSY);
	CHECK_EQ(latd_bpf_watch(b, SLOT + 1, t->major, t->minor), -EEXIST);
	CHECK_OK(latd_bpf_unwatch(b, SLOT));
	CHECK_EQ(latd_bpf_unwatch(b, SLOT), -ENOENT);
}

static void test_activity(struct latd_bpf *b, const struct target *t, int cpu)
{
	struct events e = { .cpu = cpu };
	const uint64_t *count;
	uint8_t *idle;
	uint64_t c0, c1, c2;
	void *buf;
	int i;

	CHECK_OK(posix_memalign(&buf, BLK, BLK));
	count = latd_bpf_counter(b, SLOT, cpu);
	idle = latd_bpf_idle(b, SLOT, cpu);
	CHECK(count && idle);
	/* Anything a previous owner of the slot left. */
	CHECK(latd_bpf_drain(b, NULL, NULL) >= 0);

	CHECK_OK(latd_bpf_watch(b, SLOT, t->major, t->minor));
	for (i = 0; i < latd_bpf_nr_cpus(b); i++)
		CHECK_EQ(*latd_bpf_idle(b, SLOT, i), 1);

	/* The first issue reports, the other reads only count. */
	c0 = __atomic_load_n(count, __ATOMIC_ACQUIRE);
	do_reads(t, buf, NREADS);
	c1 = __atomic_load_n(count, __ATOMIC_ACQUIRE);
	printf("%s (%u:%u) via %s, CPU %d: %d reads, counter %llu -> %llu\n",
	       t->disk, t->major, t->minor, t->path, cpu, NREADS,
	       (unsigned long long)c0, (unsigned long long)c1);
	CHECK(c1 - c0 >= NREADS);
	CHECK_EQ(__atomic_load_n(idle, __ATOMIC_ACQUIRE), 0);
	wait_event(b, &e);
	CHECK_EQ(e.mine, 1);
	/* Nothing more for this pair while its flag stays claimed. */
	CHECK(latd_bpf_drain(b, on_event, &e) >= 0);
	CHECK_EQ(e.mine, 1);

	/* Re-armed: exactly one more. */
	__atomic_store_n(idle, 1, __ATOMIC_RELEASE);
	do_reads(t, buf, NREADS);
	c2 = __atomic_load_n(count, __ATOMIC_ACQUIRE);
	CHECK(c2 - c1 >= NREADS);
	CHECK_EQ(__atomic_load_n(idle, __ATOMIC_ACQUIRE), 0);
	wait_event(b, &e);
	CHECK_EQ(e.mine, 2);
	CHECK(latd_bpf_drain(b, on_event, &e) >= 0);
	CHECK_EQ(e.mine, 2);

	/* Unwatched: the counter stops, no event even when armed. */
	CHECK_OK(latd_bpf_unwatch(b, SLOT));
	__atomic_store_n(idle, 1, __ATOMIC_RELEASE);
	c1 = __atomic_load_n(count, __ATOMIC_ACQUIRE);
	do_reads(t, buf, NREADS);
	c2 = __atomic_load_n(count, __ATOMIC_ACQUIRE);
	CHECK_EQ(c2, c1);
	CHECK_EQ(__atomic_load_n(idle, __ATOMIC_ACQUIRE), 1);
	CHECK(latd_bpf_drain(b, on_event, &e) >= 0);
	CHECK_EQ(e.mine, 2);
	free(buf);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* --hold DISK SECONDS: the program attached and DISK watched, as the
 * daemon would run it (events drained, flags left claimed: the steady
 * state under continuous I/O). */
static int hold(const char *disk, const char *secs)
{
	struct timespec end, now;
	unsigned int major, minor;
	struct latd_bpf *b;
	unsigned long long sum = 0;
	char err[256], *e;
	long s;
	int ret, i;

	s = strtol(secs, &e, 10);
	if (*e || s <= 0) {
		fprintf(stderr, "--hold: SECONDS must be a positive number\n");
		return 2;
	}
	ret = read_dev(disk, &major, &minor);
	if (ret) {
		fprintf(stderr, "--hold: no disk %s (/sys/block/%s/dev: %s)\n",
			disk, disk, strerror(-ret));
		return 1;
	}
	ret = latd_bpf_open(&b, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "--hold: %s\n", err);
		return 1;
	}
	ret = latd_bpf_watch(b, 0, major, minor);
	if (ret) {
		fprintf(stderr, "--hold: watching %s: %s\n", disk,
			strerror(-ret));
		latd_bpf_close(b);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("holding %s (%u:%u) for %ld s\n", disk, major, minor, s);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += s;
	do {
		struct pollfd p = { .fd = latd_bpf_fd(b), .events = POLLIN };

		poll(&p, 1, 200);
		latd_bpf_drain(b, NULL, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!stop &&
		 (now.tv_sec < end.tv_sec ||
		  (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec)));
	for (i = 0; i < latd_bpf_nr_cpus(b); i++)
		sum += *latd_bpf_counter(b, 0, i);
	printf("requests counted: %llu\n", sum);
	latd_bpf_close(b);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: test-latd-bpf            run the test\n"
		"       test-latd-bpf --hold DISK SECONDS\n"
		"  --hold  keep the BPF program attached with DISK (e.g. vda)\n"
		"          watched for SECONDS, then print the requests it\n"
		"          counted (scripts/latd-bpf-cost.sh)\n"
		"environment: NVQ_LATD_TEST_DISK  the disk the test reads\n"
		"             NVQ_LATD_BPF_DEBUG  show libbpf's messages\n");
}

int main(int argc, char **argv)
{
	struct latd_bpf *b;
	struct target t;
	char why[512];
	int cpu;

	if (argc > 1 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--hold")) {
		if (argc != 4) {
			usage(stderr);
			return 2;
		}
		return hold(argv[2], argv[3]);
	}
	if (argc > 1) {
		fprintf(stderr, "test-latd-bpf: unknown argument %s\n",
			argv[1]);
		usage(stderr);
		return 2;
	}

	b = open_or_skip();
	if (!find_target(&t, getenv("NVQ_LATD_TEST_DISK"), why, sizeof(why))) {
		latd_bpf_close(b);
		SKIP("%s", why);
	}
	cpu = pin_self();
	CHECK(cpu < latd_bpf_nr_cpus(b));
	test_api_errors(b, &t);
	test_activity(b, &t, cpu);
	latd_bpf_close(b);
	close(t.fd);
	return 0;
}
