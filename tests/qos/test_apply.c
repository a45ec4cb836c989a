// SPDX-License-Identifier: MIT
/*
 * Limits land on exactly the queue's CPUs, the strictest request on a CPU
 * wins, references keep a CPU's limit while any queue holds it, and the
 * file's previous text comes back with the last request (0 <-> "n/a").
 * Also: the cpu_dma_latency backend's binary s32, the per-CPU fallback to
 * it, and the parsers.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qos_helpers.h"

static char *root;
static char dma_file[256];

static void cleanup(void)
{
	fake_remove(root);
	root = NULL;
	if (dma_file[0])
		unlink(dma_file);
}

static void use_root(int ncpus, const char *initial)
{
	fake_remove(root);
	root = fake_root(ncpus, initial);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
}

static struct nvq_qos_ctrl *ctrl(int limit)
{
	struct nvq_qos_ctrl *qc;

	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	/* Long enough that the timer never releases during a case. */
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, limit), 0);
	return qc;
}

static const int cpus0[] = { 0, -1 }, cpus1[] = { 1, -1 };
static const int cpus2[] = { 2, -1 };
static const int cpus01[] = { 0, 1, -1 }, cpus12[] = { 1, 2, -1 };
static const int cpus23[] = { 2, 3, -1 }, cpus012[] = { 0, 1, 2, -1 };

static void test_right_cpus_strictest_refcount(void)
{
	struct fake_queue q1, q2, q3;
	struct nvq_qos_ctrl *a, *b;
	struct nvq_qos_record rec;
	struct nvq_qos_stats st;
	unsigned int i;

	use_root(4, "0");
	a = ctrl(50);
	b = ctrl(10);
	fq_init(&q1, a, cpus12);
	fq_init(&q2, b, cpus23);
	fq_init(&q3, a, cpus1);
	CHECK_EQ(q1.qos_idle, 1);
	nvq_qos_record_reset();

	fq_submit(&q1);
	CHECK_EQ(q1.qos_idle, 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	CHECK_STREQ(fake_cpu_value(root, 1), "50");
	CHECK_STREQ(fake_cpu_value(root, 2), "50");
	CHECK_STREQ(fake_cpu_value(root, 3), "0");
	CHECK_EQ(nvq_qos_record_count(), 2);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(nvq_qos_record_get(i, &rec), 0);
		CHECK(rec.cpu == 1 || rec.cpu == 2);
		CHECK_EQ(rec.value, 50);
	}
	/* Active: further batches change nothing. */
	fq_submit(&q1);
	fq_submit(&q1);
	CHECK_EQ(nvq_qos_record_count(), 2);

	/* The stricter queue wins where they overlap. */
	fq_submit(&q2);
	CHECK_STREQ(fake_cpu_value(root, 1), "50");
	CHECK_STREQ(fake_cpu_value(root, 2), "10");
	CHECK_STREQ(fake_cpu_value(root, 3), "10");
	CHECK_EQ(nvq_qos_record_current(2), 10);

	/* Same value on cpu1 again: a reference, no write. */
	i = nvq_qos_record_count();
	fq_submit(&q3);
	CHECK_EQ(nvq_qos_record_count(), i);

	/* q2 goes: cpu2 falls back to q1's 50, cpu3 to its old text. */
	CHECK_EQ(nvq_qos_set_limit(b, NVQ_QOS_OFF), 0);
	CHECK_EQ(q2.qos_idle, 0);
	CHECK_STREQ(fake_cpu_value(root, 2), "50");
	CHECK_STREQ(fake_cpu_value(root, 3), "0");
	CHECK_EQ(nvq_qos_record_current(3), NVQ_QOS_NONE);

	nvq_qos_queue_stats(q1.qos, &st);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 0);
	CHECK(st.active);
	usleep(1000);

	/* q1 goes: q3 still holds cpu1. */
	fq_destroy(&q1);
	CHECK_STREQ(fake_cpu_value(root, 1), "50");
	CHECK_STREQ(fake_cpu_value(root, 2), "0");
	fq_destroy(&q3);
	CHECK_STREQ(fake_cpu_value(root, 1), "0");
	for (i = 0; i < 4; i++)
		CHECK_EQ(nvq_qos_record_current(i), NVQ_QOS_NONE);

	nvq_qos_queue_stats(q2.qos, &st);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 1);
	CHECK(!st.active);
	CHECK(st.held_ns > 0);
	fq_destroy(&q2);
	nvq_qos_ctrl_destroy(a);
	nvq_qos_ctrl_destroy(b);
}

/* Never loosen what the file said; put exactly its text back. */
static void test_previous_values(void)
{
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;

	use_root(3, "0");
	fake_write(root,
		   "devices/system/cpu/cpu0/power/pm_qos_resume_latency_us",
		   "25\n");
	fake_write(root,
		   "devices/system/cpu/cpu1/power/pm_qos_resume_latency_us",
		   "n/a\n");
	qc = ctrl(50);
	fq_init(&q, qc, cpus012);
	fq_submit(&q);
	CHECK_STREQ(fake_cpu_value(root, 0), "25");
	CHECK_STREQ(fake_cpu_value(root, 1), "n/a");
	CHECK_STREQ(fake_cpu_value(root, 2), "50");

	CHECK_EQ(nvq_qos_set_limit(qc, 10), 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "10");
	CHECK_STREQ(fake_cpu_value(root, 1), "n/a");
	CHECK_STREQ(fake_cpu_value(root, 2), "10");

	/* A limit of 0 is written "n/a"; "0" in the file is no limit. */
	CHECK_EQ(nvq_qos_set_limit(qc, 0), 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");
	CHECK_STREQ(fake_cpu_value(root, 2), "n/a");

	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_OFF), 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "25");
	CHECK_STREQ(fake_cpu_value(root, 1), "n/a");
	CHECK_STREQ(fake_cpu_value(root, 2), "0");
	fq_destroy(&q);
	nvq_qos_ctrl_destroy(qc);
}

static void test_close_restores(void)
{
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;
	struct nvq_qos_stats st;

	use_root(2, "0");
	qc = ctrl(0);
	fq_init(&q, qc, cpus01);
	fq_submit(&q);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");
	CHECK_STREQ(fake_cpu_value(root, 1), "n/a");
	nvq_qos_ctrl_destroy(qc);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	CHECK_STREQ(fake_cpu_value(root, 1), "0");
	nvq_qos_queue_stats(q.qos, &st);
	CHECK_EQ(st.releases, 1);
	/* A queue outliving its controller is inert. */
	fq_submit(&q);
	CHECK_EQ(q.qos_idle, 0);
	fq_destroy(&q);
}

static void test_cpu_changes(void)
{
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;
	cpu_set_t set;

	use_root(4, "0");
	qc = ctrl(20);
	fq_init(&q, qc, cpus0);
	fq_submit(&q);
	CHECK_STREQ(fake_cpu_value(root, 0), "20");

	CPU_ZERO(&set);
	CPU_SET(1, &set);
	CHECK_EQ(nvq_qos_queue_set_cpus(q.qos, &set), 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	CHECK_STREQ(fake_cpu_value(root, 1), "20");

	/* A waiter on cpu3 adds itself, once. */
	nvq_qos_note_cpu(q.qos, 3);
	CHECK_STREQ(fake_cpu_value(root, 3), "20");
	nvq_qos_record_reset();
	nvq_qos_note_cpu(q.qos, 3);
	CHECK_EQ(nvq_qos_record_count(), 0);

	/* After a release the waiter's CPU is forgotten. */
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_OFF), 0);
	CHECK_STREQ(fake_cpu_value(root, 1), "0");
	CHECK_STREQ(fake_cpu_value(root, 3), "0");
	CHECK_EQ(nvq_qos_set_limit(qc, 20), 0);
	fq_submit(&q);
	CHECK_STREQ(fake_cpu_value(root, 1), "20");
	CHECK_STREQ(fake_cpu_value(root, 3), "0");

	/* Noted while idle: applied with the next activation. */
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_OFF), 0);
	nvq_qos_note_cpu(q.qos, 2);
	CHECK_STREQ(fake_cpu_value(root, 2), "0");
	CHECK_EQ(nvq_qos_set_limit(qc, 20), 0);
	fq_submit(&q);
	CHECK_STREQ(fake_cpu_value(root, 2), "20");

	/* Out-of-range CPUs are ignored. */
	nvq_qos_note_cpu(q.qos, -1);
	nvq_qos_note_cpu(q.qos, NVQ_QOS_MAX_CPUS);
	CHECK_EQ(nvq_qos_queue_add_cpu(q.qos, -1), -EINVAL);

	fq_destroy(&q);
	CHECK_STREQ(fake_cpu_value(root, 1), "0");
	CHECK_STREQ(fake_cpu_value(root, 2), "0");
	nvq_qos_ctrl_destroy(qc);
}

static void test_no_cpus(void)
{
	struct nvq_qos_ctrl *qc;
	struct nvq_qos_stats st;
	struct fake_queue q;

	use_root(1, "0");
	qc = ctrl(5);
	fq_init(&q, qc, NULL);
	nvq_qos_record_reset();
	fq_submit(&q);
	CHECK_EQ(q.qos_idle, 0);
	CHECK_EQ(nvq_qos_record_count(), 0);
	nvq_qos_queue_stats(q.qos, &st);
	CHECK_EQ(st.applies, 0);
	CHECK(!st.active);
	fq_destroy(&q);
	nvq_qos_ctrl_destroy(qc);
}

static void test_busy_config(void)
{
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;

	use_root(1, "0");
	qc = ctrl(5);
	fq_init(&q, qc, cpus0);
	fq_submit(&q);
	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_SYSFS), -EBUSY);
	CHECK_EQ(nvq_qos_set_sysfs_root("/tmp"), -EBUSY);
	CHECK(strstr(nvq_errmsg(), "held"));
	fq_destroy(&q);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
	nvq_qos_ctrl_destroy(qc);
}

/* The last 4 bytes written to the fake device, and how many were. */
static int32_t dma_last(off_t *size)
{
	struct stat sb;
	int32_t v = -12345;
	int fd;

	fd = open(dma_file, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(!fstat(fd, &sb));
	*size = sb.st_size;
	if (sb.st_size >= 4)
		CHECK_EQ(pread(fd, &v, 4, sb.st_size - 4), 4);
	close(fd);
	return v;
}

static void test_dma_latency(void)
{
	struct fake_queue q1, q2;
	struct nvq_qos_ctrl *a, *b;
	off_t size;
	int fd;

	fd = test_tmpfile(dma_file, sizeof(dma_file), "qos-dma");
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_DMA_LATENCY), 0);
	CHECK_EQ(nvq_qos_set_dma_latency_path(dma_file), 0);

	a = ctrl(50);
	b = ctrl(0);
	fq_init(&q1, a, cpus01);
	fq_init(&q2, b, cpus1);
	fq_submit(&q1);
	CHECK(nvq_qos_dma_latency_open());
	/* A binary s32, not text. */
	CHECK_EQ(dma_last(&size), 50);
	CHECK_EQ(size, 4);
	fq_submit(&q2);
	CHECK_EQ(dma_last(&size), 0);
	CHECK_EQ(size, 8);
	fq_destroy(&q2);
	CHECK_EQ(dma_last(&size), 50);
	CHECK_EQ(size, 12);
	CHECK(nvq_qos_dma_latency_open());
	/* Closing the device is what drops the request. */
	fq_destroy(&q1);
	CHECK(!nvq_qos_dma_latency_open());
	CHECK_EQ(size, 12);
	nvq_qos_ctrl_destroy(a);
	nvq_qos_ctrl_destroy(b);

	/* sysfs with a CPU that has no file: that CPU goes global. */
	CHECK(!truncate(dma_file, 0));
	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_SYSFS), 0);
	use_root(1, "0");
	fake_write(root, "devices/system/cpu/cpu1/online", "1\n");
	a = ctrl(30);
	fq_init(&q1, a, cpus01);
	fq_submit(&q1);
	CHECK_STREQ(fake_cpu_value(root, 0), "30");
	CHECK(nvq_qos_dma_latency_open());
	CHECK_EQ(dma_last(&size), 30);
	CHECK_EQ(size, 4);
	fq_destroy(&q1);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	CHECK(!nvq_qos_dma_latency_open());

	/* A CPU that does not exist is an error, not a global limit. */
	CHECK(!truncate(dma_file, 0));
	fq_init(&q1, a, cpus2);
	fq_submit(&q1);
	CHECK(!nvq_qos_dma_latency_open());
	CHECK_EQ(dma_last(&size), -12345);
	CHECK_EQ(size, 0);
	{
		struct nvq_qos_info info;

		nvq_qos_info(a, &info);
		CHECK(strstr(info.status, "cpu2"));
	}
	fq_destroy(&q1);
	nvq_qos_ctrl_destroy(a);

	/* Under a fake root without a fake device: never the real one. */
	CHECK_EQ(nvq_qos_set_dma_latency_path(NULL), 0);
	a = ctrl(30);
	fq_init(&q1, a, cpus01);
	fq_submit(&q1);
	CHECK_STREQ(fake_cpu_value(root, 0), "30");
	CHECK(!nvq_qos_dma_latency_open());
	{
		struct nvq_qos_info info;

		nvq_qos_info(a, &info);
		CHECK(strstr(info.status, "cpu1"));
		CHECK_STREQ(info.backend, "sysfs");
	}
	fq_destroy(&q1);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	nvq_qos_ctrl_destroy(a);
	CHECK_EQ(nvq_qos_test_set_backend(NVQ_QOS_BACKEND_RECORD), 0);
	unlink(dma_file);
	dma_file[0] = '\0';
}

static void test_parsers(void)
{
	cpu_set_t set;
	bool cut;
	int v;

	CHECK_EQ(nvq_qos_parse_limit("off", &v), 0);
	CHECK_EQ(v, NVQ_QOS_OFF);
	CHECK_EQ(nvq_qos_parse_limit("-1", &v), 0);
	CHECK_EQ(v, NVQ_QOS_OFF);
	CHECK_EQ(nvq_qos_parse_limit("auto", &v), 0);
	CHECK_EQ(v, NVQ_QOS_AUTO);
	CHECK_EQ(nvq_qos_parse_limit("n/a", &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(nvq_qos_parse_limit("0", &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(nvq_qos_parse_limit("25", &v), 0);
	CHECK_EQ(v, 25);
	CHECK_EQ(nvq_qos_parse_limit("-5", &v), -EINVAL);
	CHECK(strstr(nvq_errmsg(), "-5"));
	CHECK_EQ(nvq_qos_parse_limit("12x", &v), -EINVAL);
	CHECK_EQ(nvq_qos_parse_limit("", &v), -EINVAL);
	CHECK_EQ(nvq_qos_parse_limit("1000001", &v), -EINVAL);

	CHECK_EQ(nvq_qos_parse_cpulist("0-3,8,10-11\n", &set), 0);
	CHECK_EQ(CPU_COUNT(&set), 7);
	CHECK(CPU_ISSET(0, &set) && CPU_ISSET(3, &set) && CPU_ISSET(8, &set));
	CHECK(CPU_ISSET(11, &set) && !CPU_ISSET(9, &set));
	CHECK_EQ(nvq_qos_parse_cpulist("\n", &set), 0);
	CHECK_EQ(CPU_COUNT(&set), 0);
	CHECK_EQ(nvq_qos_parse_cpulist("3-1", &set), -EINVAL);
	CHECK_EQ(nvq_qos_parse_cpulist("1,", &set), -EINVAL);
	CHECK_EQ(nvq_qos_parse_cpulist("x", &set), -EINVAL);
	CHECK_EQ(nvq_qos_parse_cpulist("5000", &set), -EINVAL);

	/* blk-mq's mq/N/cpu_list: blanks after (and before) the commas */
	CHECK_EQ(nvq_qos_parse_cpulist("0, 1, 2\n", &set), 0);
	CHECK_EQ(CPU_COUNT(&set), 3);
	CHECK(CPU_ISSET(0, &set) && CPU_ISSET(1, &set) && CPU_ISSET(2, &set));
	CHECK_EQ(nvq_qos_parse_cpulist(" 4 ,\t6-7 \n", &set), 0);
	CHECK_EQ(CPU_COUNT(&set), 3);
	CHECK(CPU_ISSET(4, &set) && CPU_ISSET(6, &set) && CPU_ISSET(7, &set));
	CHECK_EQ(nvq_qos_parse_cpulist("0, ", &set), -EINVAL);
	CHECK_EQ(CPU_COUNT(&set), 0);
	CHECK_EQ(nvq_qos_parse_cpulist("0, , 1", &set), -EINVAL);
	CHECK_EQ(nvq_qos_parse_cpulist("0 1", &set), -EINVAL);
	CHECK_EQ(nvq_qos_parse_cpulist("0- 1", &set), -EINVAL);
	CHECK_EQ(nvq_qos_parse_cpulist("99999999999999999999999", &set),
		 -EINVAL);
	CHECK_EQ(nvq_qos_parse_cpulist("", &set), 0);
	CHECK_EQ(CPU_COUNT(&set), 0);

	/* the _cut variant drops CPUs a cpu_set_t cannot hold */
	cut = false;
	CHECK_EQ(nvq_qos_parse_cpulist_cut("0, 5000, 1020-1030\n", &set, &cut),
		 0);
	CHECK(cut);
	CHECK_EQ(CPU_COUNT(&set), 1 + CPU_SETSIZE - 1020);
	CHECK(CPU_ISSET(0, &set) && CPU_ISSET(CPU_SETSIZE - 1, &set));
	cut = false;
	CHECK_EQ(nvq_qos_parse_cpulist_cut("0-3,8", &set, &cut), 0);
	CHECK(!cut);
	CHECK_EQ(CPU_COUNT(&set), 5);
	CHECK_EQ(nvq_qos_parse_cpulist_cut("3-1", &set, &cut), -EINVAL);
}

static void test_bad_args(void)
{
	struct nvq_qos_ctrl *qc;

	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, -3), -EINVAL);
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_LIMIT_MAX + 1), -EINVAL);
	CHECK_EQ(nvq_qos_set_timeout(qc, 0), -EINVAL);
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX + 1), -EINVAL);
	CHECK_EQ(nvq_qos_set_limit(NULL, 5), -EINVAL);
	CHECK_EQ(nvq_qos_set_backend((enum nvq_qos_backend)7), -EINVAL);
	nvq_qos_ctrl_destroy(qc);
	nvq_qos_ctrl_destroy(NULL);
	nvq_qos_queue_destroy(NULL);
}

int main(void)
{
	check_cleanup = cleanup;
	CHECK_EQ(nvq_qos_test_set_backend(NVQ_QOS_BACKEND_RECORD), 0);
	test_parsers();
	test_bad_args();
	test_right_cpus_strictest_refcount();
	test_previous_values();
	test_close_restores();
	test_cpu_changes();
	test_no_cpus();
	test_busy_config();
	test_dma_latency();
	cleanup();
	return 0;
}
