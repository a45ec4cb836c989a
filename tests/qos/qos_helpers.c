// SPDX-License-Identifier: MIT
/* Helpers of the QoS tests, see qos_helpers.h. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qos_helpers.h"

static void mkdirs(const char *path)
{
	char buf[512], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST) {
			fprintf(stderr, "mkdir %s: %s\n", buf, strerror(errno));
			check_exit_fail();
		}
		*p = '/';
	}
}

void fake_write(const char *root, const char *rel, const char *text)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdirs(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		fprintf(stderr, "write %s: %s\n", path, strerror(errno));
		check_exit_fail();
	}
	close(fd);
}

char *fake_root(int ncpus, const char *initial)
{
	char tmpl[] = "/tmp/nvq-qos-XXXXXX", rel[128], text[32];
	char *root;
	int cpu;

	root = mkdtemp(tmpl);
	if (!root) {
		perror("mkdtemp");
		check_exit_fail();
	}
	/* Other users (the permission test) must be able to look inside. */
	chmod(root, 0755);
	snprintf(text, sizeof(text), "%s\n", initial);
	for (cpu = 0; cpu < ncpus; cpu++) {
		snprintf(
			rel, sizeof(rel),
			"devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us",
			cpu);
		fake_write(root, rel, text);
	}
	return strdup(root);
}

const char *fake_cpu_value(const char *root, int cpu)
{
	static __thread char buf[64];
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path),
		 "%s/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us",
		 root, cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", path, strerror(errno));
		check_exit_fail();
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	remove(path);
	return 0;
}

void fake_remove(char *root)
{
	if (!root)
		return;
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
}

void fq_init(struct fake_queue *fq, struct nvq_qos_ctrl *qc, const int *cpus)
{
	cpu_set_t set;

	memset(fq, 0, sizeof(*fq));
	CHECK_EQ(nvq_qos_queue_create(qc, &fq->submitted, &fq->qos_idle, NULL,
				      &fq->qos),
		 0);
	CPU_ZERO(&set);
	for (; cpus && *cpus >= 0; cpus++)
		CPU_SET(*cpus, &set);
	CHECK_EQ(nvq_qos_queue_set_cpus(fq->qos, &set), 0);
}

void fq_submit(struct fake_queue *fq)
{
	/* What lib/queue.c does under sq_lock, then after the doorbell. */
	WRITE_ONCE(fq->submitted, fq->submitted + 1);
	if (unlikely(READ_ONCE(fq->qos_idle)))
		nvq_qos_activate(fq->qos);
}

void fq_destroy(struct fake_queue *fq)
{
	nvq_qos_queue_destroy(fq->qos);
	fq->qos = NULL;
}
