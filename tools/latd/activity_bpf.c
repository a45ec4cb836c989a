// SPDX-License-Identifier: MIT
/*
 * nvq-latd's BPF activity source: loads bpf/latd.bpf.c (through its libbpf
 * skeleton), attaches it to block:block_rq_issue, and hands the daemon
 * pointers into the memory-mapped per-CPU counter array and the ring
 * buffer that carries the idle -> active events.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latd.h"
#include "bpf/latd_shared.h"
#include "latd.skel.h"

_Static_assert(LATD_BPF_SLOTS == LATD_MAX_DISKS,
	       "bpf/latd_shared.h and latd.h disagree on the slot count");
_Static_assert(sizeof(struct latd_area) % 64 == 0,
	       "one CPU's counters must fill whole cache lines");

#define MAX_MAJOR ((1u << 12) - 1)
#define MAX_MINOR ((1u << 20) - 1)

struct latd_bpf {
	struct latd_skel *skel;
	struct ring_buffer *rb;
	struct latd_area *area; /* nr_cpus elements, mmap()ed */
	size_t area_len;
	int nr_cpus;
	bool watched[LATD_MAX_DISKS];
	uint32_t dev[LATD_MAX_DISKS];
	/* the current latd_bpf_drain() call */
	void (*fn)(void *arg, int slot, int cpu);
	void *fn_arg;
	int drained;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (!getenv("NVQ_LATD_BPF_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int fail(char *err, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* Why loading or attaching failed, in words a user can act on. */
static int load_error(char *err, size_t len, const char *what, int ret)
{
	switch (ret) {
	case -EPERM:
	case -EACCES:
		return fail(err, len, -EPERM,
			    "%s the BPF program: not permitted (needs "
			    "CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN; "
			    "kernel lockdown also forbids it)",
			    what);
	case -ESRCH:
	case -ENOENT:
		return fail(err, len, -ENOENT,
			    "%s the BPF program: the kernel has no "
			    "block:block_rq_issue tracepoint in its BTF",
			    what);
	case -EINVAL:
		return fail(err, len, -EINVAL,
			    "%s the BPF program: the kernel rejected it "
			    "(kernel before 5.15, or a block layer it does "
			    "not know; NVQ_LATD_BPF_DEBUG=1 shows libbpf's "
			    "log)",
			    what);
	default:
		return fail(err, len, ret,
			    "%s the BPF program: %s (NVQ_LATD_BPF_DEBUG=1 "
			    "shows libbpf's log)",
			    what, strerror(-ret));
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct latd_bpf *b = ctx;
	const struct latd_event *ev = data;

	if (size < sizeof(*ev) || ev->slot >= LATD_MAX_DISKS ||
	    ev->cpu >= (unsigned int)b->nr_cpus)
		return 0;
	b->drained++;
	if (b->fn)
		b->fn(b->fn_arg, (int)ev->slot, (int)ev->cpu);
	return 0;
}

static size_t pow2_at_least(size_t n)
{
	size_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

int latd_bpf_open(struct latd_bpf **bp, char *err, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct latd_bpf *b;
	size_t rb_size;
	int ret, fd;

	*bp = NULL;
	libbpf_set_print(libbpf_print);
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return fail(err, len, -EOPNOTSUPP,
			    "the kernel has no BTF (/sys/kernel/btf/vmlinux: "
			    "%s; needs CONFIG_DEBUG_INFO_BTF)",
			    strerror(errno));

	b = calloc(1, sizeof(*b));
	if (!b)
		return fail(err, len, -ENOMEM, "out of memory");
	ret = libbpf_num_possible_cpus();
	if (ret <= 0) {
		ret = fail(err, len, ret < 0 ? ret : -EINVAL,
			   "cannot read the possible CPUs: %s",
			   strerror(ret < 0 ? -ret : EINVAL));
		goto out;
	}
	b->nr_cpus = ret;

	b->skel = latd_skel__open();
	if (!b->skel) {
		ret = load_error(err, len, "opening", -errno);
		goto out;
	}
	/*
	 * Every (slot, CPU) can have one event outstanding until the daemon
	 * re-arms its flag: size the ring for all of them (8-byte record
	 * header + the event each).
	 */
	rb_size = pow2_at_least((size_t)b->nr_cpus * LATD_MAX_DISKS *
				(8 + sizeof(struct latd_event)));
	if (rb_size < page)
		rb_size = page;
	ret = bpf_map__set_max_entries(b->skel->maps.area,
				       (uint32_t)b->nr_cpus);
	if (!ret)
		ret = bpf_map__set_max_entries(b->skel->maps.events,
					       (uint32_t)rb_size);
	if (ret) {
		ret = load_error(err, len, "sizing the maps of", ret);
		goto out;
	}
	ret = latd_skel__load(b->skel);
	if (ret) {
		ret = load_error(err, len, "loading", ret);
		goto out;
	}

	b->area_len = sizeof(struct latd_area) * (size_t)b->nr_cpus;
	b->area_len = (b->area_len + page - 1) / page * page;
	fd = bpf_map__fd(b->skel->maps.area);
	b->area = mmap(NULL, b->area_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	if (b->area == MAP_FAILED) {
		b->area = NULL;
		ret = fail(err, len, -errno,
			   "cannot map the BPF counter array: %s",
			   strerror(errno));
		goto out;
	}

	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_event, b,
				 NULL);
	if (!b->rb) {
		ret = fail(err, len, -errno,
			   "cannot set up the BPF ring buffer: %s",
			   strerror(errno));
		goto out;
	}

	ret = latd_skel__attach(b->skel);
	if (ret) {
		ret = load_error(err, len, "attaching", ret);
		goto out;
	}
	*bp = b;
	return 0;
out:
	latd_bpf_close(b);
	return ret;
}

void latd_bpf_close(struct latd_bpf *b)
{
	if (!b)
		return;
	if (b->rb)
		ring_buffer__free(b->rb);
	if (b->area)
		munmap(b->area, b->area_len);
	/* detaches the program and frees the maps */
	latd_skel__destroy(b->skel);
	free(b);
}

int latd_bpf_nr_cpus(const struct latd_bpf *b)
{
	return b->nr_cpus;
}

static uint32_t *idle_word(struct latd_bpf *b, int slot, int cpu)
{
	return &b->area[cpu].slot[slot].idle;
}

int latd_bpf_watch(struct latd_bpf *b, int slot, unsigned int major,
		   unsigned int minor)
{
	uint32_t dev = (uint32_t)major << 20 | minor;
	uint32_t s = (uint32_t)slot;
	int cpu, i;

	if (slot < 0 || slot >= LATD_MAX_DISKS || major > MAX_MAJOR ||
	    minor > MAX_MINOR)
		return -EINVAL;
	if (b->watched[slot])
		return -EBUSY;
	for (i = 0; i < LATD_MAX_DISKS; i++)
		if (b->watched[i] && b->dev[i] == dev)
			return -EEXIST;
	/* Armed before the program can see the disk: its first issue on
	 * each CPU reports. */
	for (cpu = 0; cpu < b->nr_cpus; cpu++)
		__atomic_store_n(idle_word(b, slot, cpu), 1, __ATOMIC_RELEASE);
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.slots), &dev, &s,
				BPF_NOEXIST))
		return -errno;
	b->watched[slot] = true;
	b->dev[slot] = dev;
	return 0;
}

int latd_bpf_unwatch(struct latd_bpf *b, int slot)
{
	if (slot < 0 || slot >= LATD_MAX_DISKS)
		return -EINVAL;
	if (!b->watched[slot])
		return -ENOENT;
	if (bpf_map_delete_elem(bpf_map__fd(b->skel->maps.slots),
				&b->dev[slot]))
		return -errno;
	b->watched[slot] = false;
	return 0;
}

const uint64_t *latd_bpf_counter(struct latd_bpf *b, int slot, int cpu)
{
	if (slot < 0 || slot >= LATD_MAX_DISKS || cpu < 0 || cpu >= b->nr_cpus)
		return NULL;
	return (const uint64_t *)&b->area[cpu].slot[slot].count;
}

uint8_t *latd_bpf_idle(struct latd_bpf *b, int slot, int cpu)
{
	uint8_t *w;

	if (slot < 0 || slot >= LATD_MAX_DISKS || cpu < 0 || cpu >= b->nr_cpus)
		return NULL;
	/* The word's least significant byte: see bpf/latd_shared.h. */
	w = (uint8_t *)idle_word(b, slot, cpu);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w += sizeof(uint32_t) - 1;
#endif
	return w;
}

int latd_bpf_fd(const struct latd_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int latd_bpf_drain(struct latd_bpf *b, void (*fn)(void *arg, int slot, int cpu),
		   void *arg)
{
	int ret;

	b->fn = fn;
	b->fn_arg = arg;
	b->drained = 0;
	ret = ring_buffer__consume(b->rb);
	b->fn = NULL;
	b->fn_arg = NULL;
	return ret < 0 ? ret : b->drained;
}
