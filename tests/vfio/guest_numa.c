// SPDX-License-Identifier: MIT
/*
 * NUMA placement of the PRP list pools, checked where there are NUMA
 * nodes: run inside the QEMU guest of scripts/qemu/numa-test.sh (4 CPUs,
 * 0-1 on node 0 and 2-3 on node 1), on the emulated controller and on
 * QEMU's NVMe device through vfio-pci. For each pool variant
 * (NVQ_PRP_POOLS) and queue count, every queue must use the node of its
 * CPUs, or, where they span both nodes, the node of its interrupt CPU
 * (nvq_queue_info() says which, and this program works it out again from
 * sysfs); and the kernel must say (get_mempolicy(MPOL_F_NODE |
 * MPOL_F_ADDR)) that the pools' chunks, the pool structures and the
 * queue's cache live on that node - after 32 KiB reads from a thread on
 * each queue's CPU, so that chunks grown under I/O count too. With
 * NVQ_PRP_POOLS=device every queue uses the device's node instead.
 *
 * usage: nvq-numa-guest URI [--nodes N] [--device-node N]
 * Exit 0 on success; prints one line per queue, and the numa_maps lines
 * of the pool memory of the first controller it opens.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "ctrl.h"
#include "dmapool.h"

#define MPOL_F_NODE_ (1 << 0)
#define MPOL_F_ADDR_ (1 << 1)
#define BS 32768u
#define IOS 64u
#define QD 8u

static const char *uri;
static int want_nodes = 2, device_node = -1;
static unsigned int checked;
static bool maps_shown;

/* The node of the page at @p as the kernel placed it, or -1. */
static int page_node(const void *p)
{
	int node = -1;

	if (syscall(SYS_get_mempolicy, &node, NULL, 0UL, p,
		    MPOL_F_NODE_ | MPOL_F_ADDR_))
		return -1;
	return node;
}

/* The node of @cpu from sysfs, independently of the library. */
static int sysfs_cpu_node(int cpu)
{
	char path[96];
	int n;

	for (n = 0; n < 64; n++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/cpu%d", n, cpu);
		if (!access(path, F_OK))
			return n;
	}
	return 0;
}

static void expect_on(const char *what, const void *p, int node,
		      const struct nvq_queue_info *qi)
{
	int got = page_node(p);

	if (got != node) {
		fprintf(stderr,
			"nvq-numa-guest: %s: queue %u: %s at %p is on node "
			"%d, not %d\n",
			uri, qi->qid, what, p, got, node);
		exit(T_EXIT_FAIL);
	}
	checked++;
}

/* Every chunk of @pool, and the pool structure itself, on @node. */
static void expect_pool(const char *what, struct nvq_dmapool *pool, int node,
			const struct nvq_queue_info *qi)
{
	unsigned int i;
	void *va;

	expect_on(what, pool, node, qi);
	for (i = 0; (va = nvq_dmapool_chunk(pool, i)); i++)
		expect_on(what, va, node, qi);
}

struct cnt {
	unsigned int done;
	int err;
};

static void on_done(void *arg, const struct nvq_cpl *cpl)
{
	struct cnt *c = arg;

	if (cpl->err)
		c->err = cpl->err;
	c->done++;
}

struct job {
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	int cpu;
	uint32_t lba_size;
};

/* 32 KiB reads at QD8 on the job's queue, from its CPU. */
static void *job_main(void *arg)
{
	struct job *j = arg;
	char *buf = nvq_dma_alloc(j->c, QD * BS + 4096, -1);
	struct cnt cnt = { 0 };
	unsigned int sent = 0;
	cpu_set_t set;

	CHECK(buf);
	if (j->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(j->cpu, &set);
		CHECK_OK(pthread_setaffinity_np(pthread_self(), sizeof(set),
						&set));
	}
	while (cnt.done < IOS) {
		while (sent < IOS && sent - cnt.done < QD) {
			/* At an offset into the page: a 9-page list. */
			CHECK_OK(nvq_read(j->q, 1, buf + (sent % QD) * BS + 512,
					  (uint64_t)sent * (BS / j->lba_size),
					  BS / j->lba_size, 0, on_done, &cnt));
			sent++;
		}
		CHECK(nvq_poll(j->q, 0) >= 0);
	}
	CHECK_EQ(cnt.err, 0);
	nvq_dma_free(j->c, buf);
	return NULL;
}

/* The start of the mapping that holds @p, from /proc/self/maps. */
static unsigned long vma_start(const void *p)
{
	unsigned long a = (unsigned long)p, lo, hi, found = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
			found = lo;
	fclose(f);
	return found;
}

/* The numa_maps line of the mapping that holds @p. */
static void show_map(const char *what, int node, const void *p)
{
	unsigned long start = vma_start(p), lo;
	char line[1024];
	FILE *f;

	f = fopen("/proc/self/numa_maps", "re");
	if (!f || !start) {
		if (f)
			fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx", &lo) == 1 && lo == start) {
			printf("guest:   node %d %s %p: %s", node, what, p,
			       line);
			break;
		}
	fclose(f);
}

static void show_maps(struct nvq_ctrl *c)
{
	int i;

	printf("guest: numa_maps of the first chunk of each pool:\n");
	for (i = 0; i < c->nr_nodes; i++) {
		if (c->pools[i].borrowed)
			continue;
		show_map("small", i, nvq_dmapool_chunk(c->pools[i].small, 0));
		show_map("page", i, nvq_dmapool_chunk(c->pools[i].page, 0));
	}
}

static void run(const char *mode, unsigned int queues)
{
	struct job jobs[16];
	pthread_t tid[16];
	struct nvq_ns_info ni;
	struct nvq_ctrl *c;
	struct nvq_opts o;
	unsigned int i, n;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);

	CHECK_OK(setenv("NVQ_PRP_POOLS", mode, 1));
	nvq_opts_init(&o);
	o.nr_queues = queues;
	o.mode = NVQ_MODE_POLL;
	if (nvq_open(uri, &o, &c)) {
		fprintf(stderr, "nvq-numa-guest: %s: %s\n", uri, nvq_errmsg());
		exit(T_EXIT_FAIL);
	}
	unsetenv("NVQ_PRP_POOLS");
	CHECK_OK(nvq_ns_info(c, 1, &ni));
	CHECK_EQ(c->nr_nodes, want_nodes);
	if (device_node >= 0)
		CHECK_EQ(c->node, device_node);
	n = nvq_ctrl_queue_count(c);
	CHECK(n >= 1 && n <= 16);
	for (i = 0; i < n; i++) {
		jobs[i].c = c;
		jobs[i].q = nvq_ctrl_queue(c, i);
		jobs[i].lba_size = ni.lba_size;
		jobs[i].cpu = (int)i < ncpu ? (int)i : -1;
		CHECK_OK(pthread_create(&tid[i], NULL, job_main, &jobs[i]));
	}
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);

	for (i = 0; i < n; i++) {
		struct nvq_queue *q = nvq_ctrl_queue(c, i);
		struct nvq_pool_stats ps;
		struct nvq_queue_info qi;
		int first = -1, want, cpu;
		bool spans = false;

		CHECK_OK(nvq_queue_info(q, &qi));
		CHECK_OK(nvq_queue_pool_stats(q, &ps));
		for (cpu = (int)i; cpu < ncpu; cpu += (int)n) {
			int node = sysfs_cpu_node(cpu);

			if (first < 0)
				first = node;
			else if (node != first)
				spans = true;
		}
		CHECK_EQ(qi.spans, spans);
		if (!strcmp(mode, "device"))
			want = c->node;
		else if ((spans || first < 0) && qi.irq_cpu >= 0)
			want = sysfs_cpu_node(qi.irq_cpu);
		else if (first < 0) /* more queues than CPUs */
			want = sysfs_cpu_node((int)i % ncpu);
		else
			want = first;
		CHECK_EQ(qi.node, want);
		CHECK_EQ(ps.node, want);
		expect_pool("small pool", q->qpools.small, want, &qi);
		expect_pool("page pool", q->qpools.page, want, &qi);
		if (!strcmp(mode, "cache")) {
			CHECK(q->qpools.cache != NULL);
			expect_on("cache", q->qpools.cache, want, &qi);
			CHECK(ps.cache_hits > 0);
		} else {
			CHECK(q->qpools.cache == NULL);
		}
		printf("guest: %s NVQ_PRP_POOLS=%s queues=%u: queue %u cpus "
		       "%u from %d%s irq_cpu %d -> pools on node %d (chunks, "
		       "pool structs%s checked); locks %llu contended %llu "
		       "hits %llu\n",
		       uri, mode, n, qi.qid, qi.nr_cpus, qi.first_cpu,
		       qi.spans ? " (span nodes)" : "", qi.irq_cpu, qi.node,
		       q->qpools.cache ? ", cache" : "",
		       (unsigned long long)ps.pool_locks,
		       (unsigned long long)ps.pool_contended,
		       (unsigned long long)ps.cache_hits);
	}
	if (!maps_shown) {
		show_maps(c);
		maps_shown = true;
	}
	nvq_close(c);
}

int main(int argc, char **argv)
{
	static const char *modes[] = { "node", "cache", "device" };
	unsigned int m;
	int a;

	if (argc < 2) {
		fprintf(stderr, "usage: nvq-numa-guest URI [--nodes N] "
				"[--device-node N]\n");
		return 2;
	}
	uri = argv[1];
	for (a = 2; a + 1 < argc; a += 2) {
		if (!strcmp(argv[a], "--nodes"))
			want_nodes = atoi(argv[a + 1]);
		else if (!strcmp(argv[a], "--device-node"))
			device_node = atoi(argv[a + 1]);
		else {
			fprintf(stderr, "nvq-numa-guest: unknown %s\n",
				argv[a]);
			return 2;
		}
	}
	if (nvq_numa_nodes() != want_nodes) {
		fprintf(stderr, "nvq-numa-guest: %d NUMA node(s), want %d\n",
			nvq_numa_nodes(), want_nodes);
		return T_EXIT_FAIL;
	}
	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		/* A queue per CPU, then two queues whose CPUs span nodes. */
		run(modes[m], 4);
		run(modes[m], 2);
	}
	printf("guest: nvq-numa-guest: %s: %u placements checked: ok\n", uri,
	       checked);
	return 0;
}
